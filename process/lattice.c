/* process/lattice.c - line impacts walked along the lattice of L_p.
 * The method and its reasons are in lattice.h and docs/process.md. */
#include "process/lattice.h"

#include "process/robust.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_lattice_config_default(pl_lattice_config *cfg)
{
    cfg->gap_s = 0.001;
    cfg->fit_s = 0.010;
    cfg->confirm_sigmas = 5.0;
    cfg->smooth_slots = 15;
}

/* The step statistic's own windows: a 1 ms gap and 5 ms fits each side
 * resolve a step of a fraction of the noise and keep neighbours apart at
 * the fastest rolling of the paper's prisms (an impact every 20 ms). */
enum { D_GAP_US = 1000, D_FIT_US = 5000 };

/* Inverses of the arcs' normal matrix for the window lengths met. */
enum { FIT_CACHE = 8 };
typedef struct {
    size_t W[FIT_CACHE];
    double inv[FIT_CACHE][5][5];
    int n, next;
} fit_cache;

typedef struct {
    const double *om, *theta;
    size_t n, release, end, g, w;   /* g, w: D's gap and window, samples */
    size_t G, W;                    /* arc fits: gap and longest window */
    double rate, delta, conf, noise_d, noise_om;
    fit_cache *fc;                  /* the one mutable part: a memo */
} walk;

/* One lattice slot. */
typedef struct {
    long k;                  /* index from the seed */
    double tc;               /* instant, samples (fractional) */
    double theta, var_theta; /* measured angle there and its variance */
    double z;                /* D peak / its noise */
    int confirmed, measured;
} slot;

/* --- the step statistic D ------------------------------------------------ */

/* D(k) for k in [from, to) into d[k - from]: the left line fit (window
 * [k-g-w, k-g)) minus the right one ([k+g, k+g+w)), both evaluated at k.
 * Symmetric windows make a parabola's D vanish, so the arcs between
 * impacts do not count; a downward step of size s gives D about s, and
 * the kink of an impact (speeding up before, slowing down after) adds to
 * it.  Sliding sums, resynced every 1024 samples so that rounding cannot
 * build up.  The caller keeps [from-g-w, to+g+w) inside the data. */
static void step_statistic(const double *y, size_t g, size_t w, size_t from,
                           size_t to, double *d, double *rss)
{
    double s0 = (double)w, st = 0, stt = 0;
    for (size_t t = 0; t < w; t++) {
        st += (double)t;
        stt += (double)t * t;
    }
    double idet = 1.0 / (s0 * stt - st * st), is0 = 1.0 / s0;
    double syL = 0, styL = 0, syR = 0, styR = 0, yyL = 0, yyR = 0;
    for (size_t k = from, resync = 0; k < to; k++, resync--) {
        size_t aL = k - g - w, aR = k + g;
        if (resync == 0) {
            resync = 1024;
            syL = styL = syR = styR = yyL = yyR = 0;
            for (size_t t = 0; t < w; t++) {
                syL += y[aL + t];
                styL += (double)t * y[aL + t];
                yyL += y[aL + t] * y[aL + t];
                syR += y[aR + t];
                styR += (double)t * y[aR + t];
                yyR += y[aR + t] * y[aR + t];
            }
        } else {
            double outL = y[aL - 1], inL = y[aL + w - 1];
            styL = styL - syL + outL + (double)(w - 1) * inL;
            syL += inL - outL;
            yyL += inL * inL - outL * outL;
            double outR = y[aR - 1], inR = y[aR + w - 1];
            styR = styR - syR + outR + (double)(w - 1) * inR;
            syR += inR - outR;
            yyR += inR * inR - outR * outR;
        }
        double slL = (s0 * styL - st * syL) * idet, icL = (syL - slL * st) * is0;
        double slR = (s0 * styR - st * syR) * idet, icR = (syR - slR * st) * is0;
        d[k - from] = (icL + slL * (double)(g + w)) - (icR - slR * (double)g);
        /* least squares: y'y - b'X'y on each side */
        if (rss)
            rss[k - from] = (yyL - icL * syL - slL * styL) + (yyR - icR * syR - slR * styR);
    }
}

/* The noise of D per unit noise of omega: D is the difference of two
 * independent line extrapolations across the gap. */
static double d_noise_gain(size_t g, size_t w)
{
    double tbar = 0.5 * (double)(w - 1), stt = 0;
    for (size_t t = 0; t < w; t++)
        stt += ((double)t - tbar) * ((double)t - tbar);
    double x0 = (double)(g + w) - tbar;   /* from the window's mean to k */
    return sqrt(2.0 * (1.0 / (double)w + x0 * x0 / stt));
}

/* White noise of omega per sample over the window, from first
 * differences: the arcs and the rare steps hardly move their median
 * spread. */
static double white_noise(const double *om, size_t a, size_t b)
{
    return pl_robust_spread(om, NULL, 1, 1, a, b, 1);
}

/* --- theta and time ------------------------------------------------------ */

static double theta_at(const walk *wk, double t)
{
    if (t <= 0)
        return wk->theta[0];
    size_t i = (size_t)t;
    if (i + 1 >= wk->n)
        return wk->theta[wk->n - 1];
    double f = t - (double)i;
    return wk->theta[i] + f * (wk->theta[i + 1] - wk->theta[i]);
}

/* The first time (samples) theta reaches th, searched from sample `from`
 * forwards (dir > 0) or backwards; NAN when it does not within the
 * window.  Near rest noise makes theta wander, so the first crossing in
 * the walk's direction is the one meant. */
static double time_of_theta(const walk *wk, double th, size_t from, int dir)
{
    size_t lo = wk->release, hi = wk->end - 1;
    if (from < lo)
        from = lo;
    if (from > hi)
        from = hi;
    if (dir > 0) {
        for (size_t i = from; i < hi; i++)
            if (wk->theta[i] <= th && wk->theta[i + 1] > th)
                return (double)i + (th - wk->theta[i]) / (wk->theta[i + 1] - wk->theta[i]);
    } else {
        for (size_t i = from; i > lo; i--)
            if (wk->theta[i - 1] <= th && wk->theta[i] > th)
                return (double)(i - 1) +
                       (th - wk->theta[i - 1]) / (wk->theta[i] - wk->theta[i - 1]);
    }
    return NAN;
}

/* --- one slot's step ----------------------------------------------------- */

/* The two arcs either side of a gap, fitted together: a level and a slope
 * each and one curvature for both, y = a + b t + c t^2 (t in samples from
 * the centre).  omega'' = K omega cos psi by (2.1), nearly the same just
 * before and just after an impact, so the shared curvature removes the
 * bias a straight line has over a curved arc (at 10 ms a side it exceeds
 * the step itself) for one parameter more, not two. */
typedef struct {
    double p[5];             /* aL, bL, aR, bR, c */
    double inv[5][5];        /* (X'X)^-1 */
    double rss;
    size_t m;                /* samples fitted */
} arcs;

static double row(int side, double t, int j)
{
    switch (j) {
    case 0: return side ? 0 : 1;
    case 1: return side ? 0 : t;
    case 2: return side ? 1 : 0;
    case 3: return side ? t : 0;
    default: return t * t;
    }
}

/* The normal matrix of the joint fit depends only on G and W, so its
 * inverse is formed once per window length (GSL's Cholesky) and each fit
 * costs one pass over its windows and a 5 x 5 product: a ten-minute run
 * has forty thousand impacts, each fitted a few times. */
static int invert_normal(size_t G, size_t W, double inv[5][5])
{
    gsl_matrix *A = gsl_matrix_calloc(5, 5);
    if (!A)
        return -1;
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < W; i++) {
            double t = side ? (double)(G + 1 + i) : -(double)(G + W) + (double)i, x[5];
            for (int j = 0; j < 5; j++)
                x[j] = row(side, t, j);
            for (int r = 0; r < 5; r++)
                for (int q = 0; q < 5; q++)
                    A->data[r * A->tda + q] += x[r] * x[q];
        }
    int ok = gsl_linalg_cholesky_decomp1(A) == GSL_SUCCESS &&
             gsl_linalg_cholesky_invert(A) == GSL_SUCCESS;
    for (int r = 0; ok && r < 5; r++)
        for (int q = 0; q < 5; q++)
            inv[r][q] = gsl_matrix_get(A, r, q);
    gsl_matrix_free(A);
    return ok ? 0 : -1;
}

static const double (*cached_inverse(fit_cache *fc, size_t G, size_t W))[5]
{
    for (int i = 0; i < fc->n; i++)
        if (fc->W[i] == W)
            return (const double (*)[5])fc->inv[i];
    int slot = fc->n < FIT_CACHE ? fc->n++ : fc->next++ % FIT_CACHE;
    if (invert_normal(G, W, fc->inv[slot]) != 0) {
        fc->W[slot] = 0;
        return NULL;
    }
    fc->W[slot] = W;
    return (const double (*)[5])fc->inv[slot];
}

static int fit_joint(const double *y, size_t c, size_t G, size_t W, fit_cache *fc,
                     arcs *f)
{
    const double (*inv)[5] = cached_inverse(fc, G, W);
    if (!inv)
        return -1;
    double rhs[5] = {0}, yy = 0;
    const double *l = y + c - G - W, *r = y + c + G + 1;
    for (size_t i = 0; i < W; i++) {
        double tl = -(double)(G + W) + (double)i, tr = (double)(G + 1 + i);
        rhs[0] += l[i];
        rhs[1] += tl * l[i];
        rhs[2] += r[i];
        rhs[3] += tr * r[i];
        rhs[4] += tl * tl * l[i] + tr * tr * r[i];
        yy += l[i] * l[i] + r[i] * r[i];
    }
    double bxy = 0;
    for (int q = 0; q < 5; q++) {
        f->p[q] = 0;
        for (int j = 0; j < 5; j++) {
            f->inv[q][j] = inv[q][j];
            f->p[q] += inv[q][j] * rhs[j];
        }
        bxy += f->p[q] * rhs[q];
    }
    f->m = 2 * W;
    f->rss = fmax(0, yy - bxy);   /* least squares: y'y - b'X'y */
    return 0;
}

/* An arc's value at u and that value's variance per unit noise variance. */
static double arc_val(const arcs *f, int side, double u)
{
    return f->p[side ? 2 : 0] + f->p[side ? 3 : 1] * u + f->p[4] * u * u;
}

static double arc_var(const arcs *f, int side, double u)
{
    double x[5], v = 0;
    for (int j = 0; j < 5; j++)
        x[j] = row(side, u, j);
    for (int r = 0; r < 5; r++)
        for (int q = 0; q < 5; q++)
            v += x[r] * f->inv[r][q] * x[q];
    return v;
}

/* The arcs either side of an instant near sample c, the instant by equal
 * areas, and what is known of them. */
typedef struct {
    double tc;              /* samples */
    double wm, wp;          /* the arcs at tc */
    double var_wm, var_wp;  /* their variances */
    double var_tc;          /* samples^2 */
    double sigma2;          /* noise variance per sample near the slot */
    double slope_m, slope_p;/* the arcs' slopes at tc, per sample */
} step_fit;

/* The arcs over [c-G-W, c-G) and (c+G, c+G+W]; -1 when the windows
 * leave the data. */
static int fit_arcs_at(const walk *wk, size_t c, size_t W, arcs *J)
{
    size_t G = wk->G;
    if (c < wk->release + G + W || c + G + W + 1 > wk->end)
        return -1;
    return fit_joint(wk->om, c, G, W, wk->fc, J);
}

/* What is known of the arcs J (centred on sample c) at u samples from c. */
static void arcs_eval(const arcs *J, size_t c, size_t G, double u, step_fit *f)
{
    f->tc = (double)c + u;
    f->wm = arc_val(J, 0, u);
    f->wp = arc_val(J, 1, u);
    f->sigma2 = J->rss / (double)(J->m > 5 ? J->m - 5 : 1);
    f->var_wm = f->sigma2 * arc_var(J, 0, u);
    f->var_wp = f->sigma2 * arc_var(J, 1, u);
    double step = f->wm - f->wp;
    f->var_tc = step > 0 ? f->sigma2 * (double)(2 * G + 2) / (step * step) : INFINITY;
    f->slope_m = J->p[1] + 2 * J->p[4] * u;
    f->slope_p = J->p[3] + 2 * J->p[4] * u;
}

/* Fits the arcs around sample c and solves
 *   sum of omega over the gap = integral of the left arc up to the instant
 *                              + integral of the right arc after it
 * for the instant u (samples from c): a quadratic (the shared curvature
 * cancels from the difference of the arcs), of whose roots the one where
 * the left arc lies above the right is the step.  Returns 0, or -1 when
 * the windows leave the data or no root has the arcs that way. */
static int fit_arcs(const walk *wk, size_t c, size_t W, step_fit *f)
{
    size_t G = wk->G;
    arcs J;
    if (fit_arcs_at(wk, c, W, &J) != 0)
        return -1;
    double I = 0;
    for (size_t k = c - G; k <= c + G; k++)
        I += wk->om[k];
    double A = -(double)G - 0.5, B = (double)G + 0.5;
    double da = J.p[0] - J.p[2], db = J.p[1] - J.p[3];
    double rhs = I - (J.p[2] * (B - A) + 0.5 * J.p[3] * (B * B - A * A) +
                      J.p[4] * (B * B * B - A * A * A) / 3.0);
    /* int_A^u (L - R) = rhs; the shared curvature drops out of L - R */
    double qa = 0.5 * db, qb = da, qc = -da * A - 0.5 * db * A * A - rhs;
    double disc = qb * qb - 4 * qa * qc;
    if (!(disc >= 0))
        return -1;
    double den = qb + sqrt(disc);
    if (!(den > 0))
        return -1;
    arcs_eval(&J, c, G, -2 * qc / den, f);
    return 0;
}

/* The longest arc window that keeps both neighbours' transitions out:
 * an interval is interval samples long. */
static size_t arc_window(const walk *wk, double interval)
{
    double room = interval - 2.0 * (double)wk->G - 2.0;
    size_t W = room < (double)wk->W ? (size_t)(room > 4 ? room : 4) : wk->W;
    return W;
}

/* The same, shortened symmetrically where the window would leave the
 * data: the first and last impacts of a run cut short. */
static size_t arc_window_at(const walk *wk, double interval, double c)
{
    size_t W = arc_window(wk, interval);
    double before = c - (double)wk->release - (double)wk->G - 1,
           after = (double)wk->end - c - (double)wk->G - 2;
    double room = fmin(before, after);
    if (room < (double)W)
        W = room > 4 ? (size_t)room : 4;
    return W;
}

/* Locates the step near sample c: re-centred until the instant lies
 * within half a gap of the centre. */
static int locate(const walk *wk, double c, double interval, step_fit *f)
{
    size_t W = arc_window_at(wk, interval, c);
    for (int it = 0; it < 8; it++) {
        if (!(c > 0))
            return -1;
        size_t ci = (size_t)llround(c);
        if (fit_arcs(wk, ci, W, f) != 0)
            return -1;
        /* centred on the step, the arcs' windows lie symmetric about it
         * and what the shared curvature leaves of the arcs' shape cancels */
        if (fabs(f->tc - (double)ci) <= fmax(1.0, 0.1 * (double)wk->G))
            return 0;
        if (fabs(f->tc - c) > interval * 0.3)
            return -1;   /* wandered off: no step near c */
        c = f->tc;
    }
    return -1;
}

/* D's peak within [a, b) samples, and a centre for the step: among the
 * samples where D stands above half its peak, the one whose two windows
 * fit their lines best.  Neither window then holds the transition, so the
 * step lies within D's gap of it, whatever the kink does to D's shape. */
static int d_peak(const walk *wk, double a, double b, double *z, double *centre)
{
    size_t lo = a > (double)(wk->release + wk->g + wk->w) ? (size_t)a
                                                          : wk->release + wk->g + wk->w;
    size_t hi = (size_t)b;
    if (hi + wk->g + wk->w >= wk->end)
        hi = wk->end - wk->g - wk->w - 1;
    if (hi <= lo + 2)
        return -1;
    double *d = malloc(2 * (hi - lo) * sizeof *d), *rss = d ? d + (hi - lo) : NULL;
    if (!d)
        return -1;
    step_statistic(wk->om, wk->g, wk->w, lo, hi, d, rss);
    size_t best = lo;
    for (size_t k = lo; k < hi; k++)
        if (d[k - lo] > d[best - lo])
            best = k;
    double peak = d[best - lo];
    size_t at = best;
    for (size_t k = lo; k < hi; k++)
        if (d[k - lo] >= 0.5 * peak && rss[k - lo] < rss[at - lo])
            at = k;
    free(d);
    *z = peak / wk->noise_d;
    *centre = (double)at;
    return 0;
}

/* Measures the slot predicted at sample tp, the last one `interval`
 * samples away: its D peak within 15 % of an interval (at least one and a
 * half gaps) says whether the step stands above the noise (confirmed);
 * its instant is located whether it does or not, from D's centre when
 * confirmed and from the prediction when not.  Keeping the weak slots'
 * instants matters: the confirmation test and the instant share noise
 * (D's window overlaps the instant's gap), so a mean over confirmed slots
 * alone would lean late. */
static void measure_slot(const walk *wk, double tp, double interval, slot *s)
{
    double half = fmax(0.15 * interval, 1.5 * (double)wk->g);
    double z = 0, centre = tp;
    s->confirmed = s->measured = 0;
    s->tc = tp;
    s->z = 0;
    if (d_peak(wk, tp - half, tp + half + 1, &z, &centre) == 0) {
        s->z = z;
        s->confirmed = z >= wk->conf;
    }
    step_fit f;
    if (locate(wk, s->confirmed ? centre : tp, interval, &f) != 0 ||
        fabs(f.tc - tp) > half + (double)wk->G)
        return;
    s->measured = 1;
    s->tc = f.tc;
    if (getenv("PL_DEBUG_LATTICE"))
        fprintf(stderr, "slot k=%ld tp=%.5f centre=%.5f tc=%.5f z=%.1f wm=%.5f wp=%.5f\n", s->k,
                tp / wk->rate, centre / wk->rate, f.tc / wk->rate, z, f.wm, f.wp);
    double om = 0.5 * (f.wm + f.wp);
    s->theta = theta_at(wk, f.tc);
    s->var_theta = f.var_tc * om * om;
}

/* --- the walk ------------------------------------------------------------ */

typedef struct {
    slot *v;
    size_t n, cap;
} slots;

static int push(slots *s, slot x)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        slot *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = x;
    return 0;
}

/* Walks from the seed in direction dir (+1, -1), appending slots to out
 * until the lattice leaves the window.  The spacing in measured theta is
 * 2 pi / N times a scale that follows the confirmed slots: a calibration
 * off by a per cent shifts every slot's angle by that much of a slot. */
static int walk_dir(const walk *wk, const slot *seed, int dir, slots *out)
{
    slot last = *seed;
    double scale = 1.0, lost = 0;   /* lost: unconfirmed slots since last */
    size_t minw = 4 + wk->G;
    for (long k = seed->k + dir;; k += dir) {
        double th = last.theta + dir * (lost + 1) * wk->delta * scale;
        double tp = time_of_theta(wk, th, (size_t)last.tc, dir);
        /* From rest the first face lands after the prism has turned
         * through its release angle, somewhere in (0, 2 pi / N]: a slot at
         * a small positive angle is an impact, one at or below zero is
         * before the release. */
        if (th < 0.03 * wk->delta || isnan(tp) || tp < (double)(wk->release + minw) ||
            tp + (double)minw > (double)wk->end)
            break;
        double interval = fabs(tp - last.tc) / (lost + 1);
        slot s = {.k = k};
        measure_slot(wk, tp, interval, &s);
        if (!s.measured) {
            s.theta = th;
            s.var_theta = INFINITY;
        }
        if (!s.confirmed) {
            lost++;
        } else {
            double sc = (s.theta - last.theta) * dir / ((lost + 1) * wk->delta);
            if (sc > 0.9 && sc < 1.1)
                scale = 0.8 * scale + 0.2 * sc;
            last = s;
            lost = 0;
        }
        if (push(out, s) != 0)
            return -1;
    }
    return 0;
}

/* The seed: the highest D peak of the window that measures as a step.
 * Each block of the window offers its highest peak; the peaks are tried
 * from the highest down, so that one artefact (a spike the front end left,
 * the prism leaving the beams) cannot stop the search. */
typedef struct {
    double d;
    size_t at;
} peak;

static int cmp_peak(const void *a, const void *b)
{
    double x = ((const peak *)a)->d, y = ((const peak *)b)->d;
    return x > y ? -1 : x < y;
}

static int find_seed(const walk *wk, slot *seed)
{
    enum { BLOCK = 16384, TRIES = 32 };
    size_t ext = wk->g + wk->w, lo = wk->release + 2 * ext + wk->G + wk->W,
           hi = wk->end > 2 * ext + wk->G + wk->W ? wk->end - 2 * ext - wk->G - wk->W : 0;
    if (hi <= lo)
        return -1;
    size_t nb = (hi - lo + BLOCK - 1) / BLOCK;
    double *d = malloc(BLOCK * sizeof *d);
    peak *pk = malloc(nb * sizeof *pk);
    if (!d || !pk) {
        free(d);
        free(pk);
        return -1;
    }
    for (size_t i = 0; i < nb; i++) {
        size_t a = lo + i * BLOCK, b = a + BLOCK < hi ? a + BLOCK : hi;
        step_statistic(wk->om, wk->g, wk->w, a, b, d, NULL);
        pk[i] = (peak){-INFINITY, a};
        for (size_t k = a; k < b; k++)
            if (d[k - a] > pk[i].d)
                pk[i] = (peak){d[k - a], k};
    }
    free(d);
    qsort(pk, nb, sizeof *pk, cmp_peak);
    int found = -1;
    for (size_t i = 0; i < nb && i < TRIES && found != 0; i++) {
        size_t at = pk[i].at;
        double interval = wk->delta / fmax(fabs(wk->om[at]), 1e-3) * wk->rate;
        slot s = {.k = 0};
        measure_slot(wk, (double)at - (double)wk->g, interval, &s);
        if (s.confirmed && s.measured) {
            *seed = s;
            found = 0;
        }
    }
    free(pk);
    return found;
}

/* --- the phase fit -------------------------------------------------------- */

/* For slot i, a weighted line through (k_j, theta_j - k_j delta) of the
 * measured slots within smooth_slots of it: its value at k_i and that
 * value's variance.  skip excludes slot i itself (for the outlier test).
 * Returns -1 when fewer than two slots are at hand. */
static int phase_fit(const slot *v, size_t n, size_t i, int M, double delta,
                     int skip, double *phi, double *var)
{
    double sw = 0, sk = 0, sp = 0, skk = 0, skp = 0;
    size_t used = 0;
    size_t lo = i > (size_t)M ? i - (size_t)M : 0;
    size_t hi = i + (size_t)M + 1 < n ? i + (size_t)M + 1 : n;
    for (size_t j = lo; j < hi; j++) {
        if (!v[j].measured || (skip && j == i) || !(v[j].var_theta > 0) ||
            !isfinite(v[j].var_theta))
            continue;
        /* equal weights: an angle's variance, sigma^2 (2G+2) omega^2 / d^2
         * with d = (1 - r) omega, does not depend on the speed, and a
         * weight from the slot's own measured step would favour the
         * slots whose noise happened to lengthen it (and delay them) */
        double w = 1.0, k = (double)(v[j].k - v[i].k);
        double p = v[j].theta - (double)v[j].k * delta;
        sw += w;
        sk += w * k;
        sp += w * p;
        skk += w * k * k;
        skp += w * k * p;
        used++;
    }
    if (used < 2)
        return -1;
    double det = sw * skk - sk * sk;
    if (!(det > 1e-12 * sw * skk)) {
        *phi = sp / sw;
        *var = 1.0 / sw;
        return 0;
    }
    *phi = (skk * sp - sk * skp) / det;   /* the line's value at k = 0 */
    *var = skk / det;
    return 0;
}

/* Smooths every slot's angle through its neighbours' and drops the
 * measurements that disagree with them by more than 5 sigma (a step
 * located on a spike). */
static void smooth_phase(slot *v, size_t n, int M, double delta,
                         double *theta_s, double *var_s)
{
    for (size_t i = 0; i < n; i++) {
        double phi, var;
        if (!v[i].measured || phase_fit(v, n, i, M, delta, 1, &phi, &var) != 0)
            continue;
        double r = v[i].theta - (double)v[i].k * delta - phi;
        if (r * r > 25.0 * (var + v[i].var_theta))
            v[i].measured = 0;
    }
    for (size_t i = 0; i < n; i++) {
        double phi, var;
        if (phase_fit(v, n, i, M, delta, 0, &phi, &var) == 0) {
            theta_s[i] = phi + (double)v[i].k * delta;
            var_s[i] = var;
        } else {
            theta_s[i] = v[i].theta;
            var_s[i] = v[i].measured ? v[i].var_theta : INFINITY;
        }
    }
}

/* --- putting it together ------------------------------------------------- */

static int cmp_slot(const void *a, const void *b)
{
    long x = ((const slot *)a)->k, y = ((const slot *)b)->k;
    return x < y ? -1 : x > y;
}

/* The impact of slot i at its smoothed angle: the arcs there, the ratio
 * and its standard error (the arcs' own and the instant's share through
 * the kink). */
static int evaluate(const walk *wk, const slot *s, double th, double var_th,
                    double interval, pl_impact *m)
{
    double from = s->tc - interval;
    double tc = time_of_theta(wk, th, from > 0 ? (size_t)from : 0, 1);
    if (isnan(tc))
        return -1;
    step_fit f;
    arcs J;
    size_t W = arc_window_at(wk, interval, tc), c = (size_t)llround(tc);
    if (fit_arcs_at(wk, c, W, &J) != 0)
        return -1;
    arcs_eval(&J, c, wk->G, tc - (double)c, &f);
    double wm = f.wm, wp = f.wp;
    double om = fabs(0.5 * (wm + wp)) > 0 ? 0.5 * (wm + wp) : 1e-9;
    double var_tc = var_th / (om * om);
    m->t_s = tc / wk->rate;
    m->t_sd_s = sqrt(var_tc) / wk->rate;
    m->omega_minus = wm;
    m->omega_plus = wp;
    m->ratio = wp / wm;
    double dr_du = (f.slope_p - m->ratio * f.slope_m) / wm;
    m->ratio_se = sqrt((f.var_wp + m->ratio * m->ratio * f.var_wm) / (wm * wm) +
                       dr_du * dr_du * var_tc);
    m->confirmed = s->confirmed;
    m->interval_s = NAN;
    return 0;
}

static size_t samples(double s, double rate, size_t min)
{
    size_t k = (size_t)llround(s * rate);
    return k < min ? min : k;
}

pl_status pl_lattice_find(const double *om, const double *theta, size_t n,
                          double rate, size_t release, size_t end, int N,
                          const pl_lattice_config *cfg, pl_impact **out,
                          size_t *n_out, pl_lattice_stats *st, pl_err *err)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    *n_out = 0;
    walk wk = {om, theta, n, release, end < n ? end : n,
               samples(D_GAP_US * 1e-6, rate, 2), samples(D_FIT_US * 1e-6, rate, 4),
               samples(cfg->gap_s, rate, 2), samples(cfg->fit_s, rate, 4),
               rate, 2 * M_PI / N, cfg->confirm_sigmas, 0, 0, NULL};
    fit_cache fc = {0};
    wk.fc = &fc;
    wk.noise_om = white_noise(om, release, wk.end);
    wk.noise_d = wk.noise_om * d_noise_gain(wk.g, wk.w);
    if (!(wk.noise_d > 0))
        wk.noise_d = 1e-12;   /* a noise-free signal: every step stands out */
    st->noise_omega = wk.noise_om;
    st->noise_d = wk.noise_d;
    slot seed;
    if (find_seed(&wk, &seed) != 0)
        return pl_err_set(err, PL_ENUMERIC, "no line impact stands %g noise "
                          "standard deviations (%.3g rad/s) above the noise between "
                          "the release at %.3f s and the end at %.3f s",
                          cfg->confirm_sigmas, wk.noise_d, release / rate, wk.end / rate);
    slots sl = {0};
    if (push(&sl, seed) != 0 || walk_dir(&wk, &seed, 1, &sl) != 0 ||
        walk_dir(&wk, &seed, -1, &sl) != 0) {
        free(sl.v);
        return pl_err_set(err, PL_ENOMEM, "impact search: out of memory");
    }
    qsort(sl.v, sl.n, sizeof *sl.v, cmp_slot);
    /* Every slot between the release and the last confirmed one is an
     * impact: the prism turned through it.  After the last confirmed slot
     * the data may have ended (the prism left the beams, the run was cut):
     * a slot there needs some evidence of its own. */
    size_t a = 0, b = sl.n;
    while (b > a && !sl.v[b - 1].confirmed &&
           !(sl.v[b - 1].measured && sl.v[b - 1].z >= 0.5 * cfg->confirm_sigmas))
        b--;
    st->edge_dropped = sl.n - (b - a);
    slot *v = sl.v + a;
    size_t m = b - a;
    double *ths = malloc((m ? m : 1) * sizeof *ths), *vars = malloc((m ? m : 1) * sizeof *vars);
    pl_impact *imp = malloc((m ? m : 1) * sizeof *imp);
    if (!ths || !vars || !imp) {
        free(sl.v);
        free(ths);
        free(vars);
        free(imp);
        return pl_err_set(err, PL_ENOMEM, "impact search: out of memory");
    }
    smooth_phase(v, m, cfg->smooth_slots, wk.delta, ths, vars);
    size_t k = 0;
    double ss = 0, phase0 = seed.theta - (double)seed.k * wk.delta;
    size_t nss = 0;
    for (size_t i = 0; i < m; i++) {
        st->confirmed += v[i].confirmed;
        double r = ths[i] - (double)v[i].k * wk.delta - phase0;
        st->drift_rad = fmax(st->drift_rad, fabs(r));
        if (v[i].measured) {
            ss += (v[i].theta - ths[i]) * (v[i].theta - ths[i]);
            nss++;
        }
        double prev = i > 0 ? v[i].tc - v[i - 1].tc : (i + 1 < m ? v[i + 1].tc - v[i].tc : wk.W);
        double next = i + 1 < m ? v[i + 1].tc - v[i].tc : prev;
        if (evaluate(&wk, &v[i], ths[i], vars[i], fmin(prev, next), &imp[k]) == 0)
            k++;
        else if (getenv("PL_DEBUG_LATTICE"))
            fprintf(stderr, "evaluate failed: slot k=%ld tc=%.5f measured=%d confirmed=%d z=%.1f th=%.5f raw=%.5f\n",
                    v[i].k, v[i].tc / wk.rate, v[i].measured, v[i].confirmed, v[i].z, ths[i], v[i].theta);
    }
    st->expected = m;
    st->phase_sd_rad = nss > 1 ? sqrt(ss / (double)(nss - 1)) : NAN;
    for (size_t i = 0; i + 1 < k; i++)
        imp[i].interval_s = imp[i + 1].t_s - imp[i].t_s;
    free(sl.v);
    free(ths);
    free(vars);
    *out = imp;
    *n_out = k;
    return PL_OK;
}
