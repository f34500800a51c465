/* process/process.c - velocities to omega, theta, L_p, impacts, spectra.
 * See process.h and docs/process.md. */
#include "process/process.h"

#include "core/version.h"
#include "db/catalog.h"
#include "db/run.h"
#include "process/spectral.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

void pl_process_config_default(pl_process_config *cfg)
{
    cfg->cutoff_hz = NAN;
    cfg->despike_jump_mps = 3e-3;
    cfg->release_sigmas = 8.0;
    cfg->impact_sigmas = 5.0;
    cfg->gap_s = 0.002;
    cfg->fit_s = 0.006;
    cfg->quiet_s = 0.2;
    cfg->impact_half_s = 0.00015;
    cfg->psd_segment = 4096;
    cfg->psd_max_segments = 512;
    cfg->threads = 0;
}

void pl_process_result_free(pl_process_result *r)
{
    free(r->vp1);
    free(r->vp2);
    free(r->omega);
    free(r->theta);
    free(r->impacts);
    free(r->psd_vp1);
    free(r->psd_vp2);
    free(r->psd_residual);
    memset(r, 0, sizeof *r);
}

static void warn(pl_process_result *r, const char *fmt, ...)
{
    size_t len = strlen(r->warnings);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings + len, sizeof r->warnings - len, fmt, ap);
    va_end(ap);
    len = strlen(r->warnings);
    if (len + 1 < sizeof r->warnings) {
        r->warnings[len] = '\n';
        r->warnings[len + 1] = '\0';
    }
}

/* Speckle drop-outs: the decoder jumps to a random level for a few
 * samples and comes back.  A jump larger than any motion or ringing gives
 * in one sample, followed within max_len by a return to the level before
 * it, is bridged by a straight line.  A jump that does not return (the
 * prism leaving the beams) is left alone. */
static size_t despike(double *v, size_t n, double jump, size_t max_len)
{
    size_t count = 0;
    for (size_t k = 1; k < n; k++) {
        if (fabs(v[k] - v[k - 1]) <= jump)
            continue;
        double base = v[k - 1];
        size_t j = k + 1;
        while (j < n && j <= k + max_len && fabs(v[j] - base) > 0.5 * jump)
            j++;
        if (j >= n || j > k + max_len)
            continue;
        for (size_t i = k; i < j; i++)
            v[i] = base + (v[j] - base) * (double)(i - k + 1) / (double)(j - k + 1);
        count++;
        k = j;
    }
    return count;
}

static double mean_of(const double *v, size_t a, size_t b)
{
    double s = 0;
    for (size_t i = a; i < b; i++)
        s += v[i];
    return b > a ? s / (double)(b - a) : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Robust standard deviation: 1.4826 x the median absolute deviation. */
static double robust_sd(const double *v, size_t a, size_t b)
{
    size_t m = b - a;
    if (m < 8)
        return NAN;
    double *t = malloc(m * sizeof *t);
    if (!t)
        return NAN;
    memcpy(t, v + a, m * sizeof *t);
    qsort(t, m, sizeof *t, cmp_double);
    double med = t[m / 2];
    for (size_t i = 0; i < m; i++)
        t[i] = fabs(t[i] - med);
    qsort(t, m, sizeof *t, cmp_double);
    double mad = t[m / 2];
    free(t);
    return 1.4826 * mad;
}

/* omega by (4.1) at sample i: from the two velocities and their offsets
 * before omega is stored, from the array x once it is. */
typedef struct {
    const double *v1, *v2;
    double o1, o2, dh;
    const double *x;
} omega_src;

static double omega_at(const omega_src *s, size_t i)
{
    return s->x ? s->x[i] : ((s->v1[i] - s->o1) - (s->v2[i] - s->o2)) / s->dh;
}

/* Centred moving average of half-width h of omega over [0, n) (the window
 * shrinks at the ends), for i in [a, b) into y[0..b-a): a sliding sum. */
static void boxcar_range(const omega_src *x, size_t n, size_t h, size_t a,
                         size_t b, double *y)
{
    size_t lo = a > h ? a - h : 0, hi = lo;   /* the sum covers [lo, hi) */
    double sum = 0;
    for (size_t i = a; i < b; i++) {
        size_t na = i > h ? i - h : 0, nb = i + h + 1 < n ? i + h + 1 : n;
        for (; hi < nb; hi++)
            sum += omega_at(x, hi);
        for (; lo < na; lo++)
            sum -= omega_at(x, lo);
        y[i - a] = sum / (double)(nb - na);
    }
}

/* The moving average at any sample, computed a block at a time around
 * the samples asked for: the release and end searches scan it forwards
 * and backwards, and need no array as long as the run.  A block's sum
 * starts afresh, so rounding cannot build up. */
enum { SMOOTH_BLOCK = 4096 };
typedef struct {
    omega_src x;
    size_t n, h, a, b;          /* buf holds the average over [a, b) */
    double buf[SMOOTH_BLOCK];
} smoother;

static void smoother_init(smoother *s, const omega_src *x, size_t n, size_t h)
{
    s->x = *x;
    s->n = n;
    s->h = h;
    s->a = s->b = 0;
}

static double smooth_at(smoother *s, size_t i)
{
    if (i < s->a || i >= s->b) {
        s->a = i > SMOOTH_BLOCK / 2 ? i - SMOOTH_BLOCK / 2 : 0;
        s->b = s->a + SMOOTH_BLOCK < s->n ? s->a + SMOOTH_BLOCK : s->n;
        boxcar_range(&s->x, s->n, s->h, s->a, s->b, s->buf);
    }
    return s->buf[i - s->a];
}

/* Least-squares line through (j - at, y[j]) for j in [a, b), evaluated at
 * offset x0 from `at`. */
static double line_at(const double *y, size_t a, size_t b, double at,
                      double x0)
{
    double s0 = 0, st = 0, stt = 0, sy = 0, sty = 0;
    for (size_t j = a; j < b; j++) {
        double t = (double)j - at;
        s0 += 1;
        st += t;
        stt += t * t;
        sy += y[j];
        sty += t * y[j];
    }
    double det = s0 * stt - st * st;
    if (det == 0)
        return s0 > 0 ? sy / s0 : NAN;
    double slope = (s0 * sty - st * sy) / det;
    double icpt = (sy - slope * st) / s0;
    return icpt + slope * x0;
}

/* The step statistic D(k) for k in [from, to) into d[k - from]: the left
 * line fit (window [k-g-w, k-g)) minus the right one ([k+g, k+g+w)), both
 * evaluated at k.  Symmetric windows make a parabola's D vanish, so the
 * concave arcs between impacts do not count; a downward step of size s
 * gives D = s.  Sliding sums, resynced every 1024 samples so rounding
 * cannot build up. */
static void step_statistic(const double *y, size_t g, size_t w,
                           size_t from, size_t to, double *d)
{
    /* t runs over the window as 0..w-1; the fit value at the window's
     * offset x0 is icpt + slope x0. */
    double s0 = (double)w, st = 0, stt = 0;
    for (size_t t = 0; t < w; t++) {
        st += (double)t;
        stt += (double)t * t;
    }
    double idet = 1.0 / (s0 * stt - st * st), is0 = 1.0 / s0;
    double syL = 0, styL = 0, syR = 0, styR = 0;
    for (size_t k = from, resync = 0; k < to; k++, resync--) {
        size_t aL = k - g - w, aR = k + g;
        if (resync == 0) {
            resync = 1024;
            syL = styL = syR = styR = 0;
            for (size_t t = 0; t < w; t++) {
                syL += y[aL + t];
                styL += (double)t * y[aL + t];
                syR += y[aR + t];
                styR += (double)t * y[aR + t];
            }
        } else {
            /* shift both windows by one: t of every old sample drops by 1 */
            double outL = y[aL - 1], inL = y[aL + w - 1];
            styL = styL - syL + outL + (double)(w - 1) * inL;
            syL += inL - outL;
            double outR = y[aR - 1], inR = y[aR + w - 1];
            styR = styR - syR + outR + (double)(w - 1) * inR;
            syR += inR - outR;
        }
        double slL = (s0 * styL - st * syL) * idet, icL = (syL - slL * st) * is0;
        double slR = (s0 * styR - st * syR) * idet, icR = (syR - slR * st) * is0;
        double left = icL + slL * (double)(g + w);       /* t of k in L */
        double right = icR - slR * (double)g;            /* t of k in R */
        d[k - from] = left - right;
    }
}

/* D(k) for k running forward over [from, to), a block at a time. */
typedef struct {
    const double *y;
    size_t g, w, to, a, b;      /* buf holds D over [a, b) */
    double buf[SMOOTH_BLOCK];
} dstream;

static void dstream_init(dstream *s, const double *y, size_t g, size_t w,
                         size_t from, size_t to)
{
    s->y = y;
    s->g = g;
    s->w = w;
    s->to = to;
    s->a = s->b = from;
}

/* k must not go back before the block last computed. */
static double d_at(dstream *s, size_t k)
{
    if (k >= s->b) {
        s->a = k;
        s->b = k + SMOOTH_BLOCK < s->to ? k + SMOOTH_BLOCK : s->to;
        step_statistic(s->y, s->g, s->w, s->a, s->b, s->buf);
    }
    return s->buf[k - s->a];
}

/* One least-squares fit over both windows of centre c (before:
 * [c-g-w, c-g), after: [c+g, c+g+w)) with its own level and slope on each
 * side and a common curvature, in time from c in units of 10 samples:
 * coef = {level before, slope before, level after, slope after,
 * curvature}.  Between impacts omega'' = (m g a0 / J_A) omega cos psi (the
 * derivative of (2.1)) is nearly the same on both sides, so sharing it
 * removes the bias a straight line has when it is extrapolated across the
 * gap of a curved arc, at the price of one parameter for both sides.
 *
 * The design depends only on g and w, so its normal matrix is inverted
 * once (GSL's Cholesky) and each fit costs a pass over the windows and a
 * 5 x 5 product: there are tens of thousands of impacts in a long run. */
typedef struct {
    size_t g, w;
    double inv[5][5];          /* (X'X)^-1 */
} step_fitter;

static int fitter_init(step_fitter *f, size_t g, size_t w)
{
    f->g = g;
    f->w = w;
    gsl_matrix *m = gsl_matrix_calloc(5, 5);
    if (!m)
        return -1;
    for (size_t i = 0; i < 2 * w; i++) {
        double t = (i < w ? -(double)(g + w) + (double)i : (double)(g + i - w)) * 0.1;
        int right = i >= w;
        double x[5] = {right ? 0 : 1, right ? 0 : t, right ? 1 : 0, right ? t : 0, t * t};
        for (int r = 0; r < 5; r++)
            for (int c = 0; c < 5; c++)
                *gsl_matrix_ptr(m, r, c) += x[r] * x[c];
    }
    int ok = gsl_linalg_cholesky_decomp1(m) == GSL_SUCCESS &&
             gsl_linalg_cholesky_invert(m) == GSL_SUCCESS;
    for (int r = 0; ok && r < 5; r++)
        for (int c = 0; c < 5; c++)
            f->inv[r][c] = gsl_matrix_get(m, r, c);
    gsl_matrix_free(m);
    return ok ? 0 : -1;
}

static int joint_fit(const step_fitter *f, const double *om, size_t c,
                     double coef[5], double *chisq)
{
    size_t g = f->g, w = f->w;
    double s[5] = {0}, yy = 0;
    for (size_t i = 0; i < w; i++) {
        double t = (-(double)(g + w) + (double)i) * 0.1, y = om[c - g - w + i];
        s[0] += y;
        s[1] += t * y;
        s[4] += t * t * y;
        yy += y * y;
        double t2 = (double)(g + i) * 0.1, y2 = om[c + g + i];
        s[2] += y2;
        s[3] += t2 * y2;
        s[4] += t2 * t2 * y2;
        yy += y2 * y2;
    }
    /* The normal matrix is small, fixed and well conditioned (time in
     * units of 10 samples): its inverse, formed once from GSL's Cholesky
     * factor, turns every fit into a 5 x 5 product. */
    double bxy = 0;
    for (int k = 0; k < 5; k++) {
        double v = 0;
        for (int j = 0; j < 5; j++)
            v += f->inv[k][j] * s[j];
        coef[k] = v;
        bxy += v * s[k];
    }
    *chisq = fmax(0, yy - bxy);   /* least squares: y'y - b'X'y */
    return 0;
}

static double curve(const double coef[5], int after, double t0, double j)
{
    double t = (j - t0) * 0.1;
    return after ? coef[2] + coef[3] * t + coef[4] * t * t
                 : coef[0] + coef[1] * t + coef[4] * t * t;
}

/* The change point of a step near sample c: for each split tau in
 * [c - g, c + g], omega is compared with the curve fitted before the gap
 * up to tau and with the one after it from tau on; the split with the
 * least squared misfit is the step, refined between samples by a parabola
 * through the misfits.  The curves carry the slopes on each side, so the
 * kink of the arc at the impact (speeding up before, slowing down after)
 * does not move the instant.  *t receives it, in samples; *misfit the
 * squared misfit of the whole model (both windows and the gap), which is
 * small only when neither window straddles the step; *wm, *wp the curves
 * at *t; *kink the bend (below) and *slope_min the smaller of the two
 * slopes' sizes (a bend into a flat arc is no impact). */
static int locate_step(step_fitter *f, const double *om, size_t c,
                       double rate, double *t, double *misfit, double *wm,
                       double *wp, double *kink, double *slope_min)
{
    enum { MAXG = 64 };
    size_t g = f->g;
    if (g > MAXG)
        return -1;
    size_t lo = c - g, hi = c + g;
    double coef[5], chisq, at = (double)c;
    if (joint_fit(f, om, c, coef, &chisq) != 0)
        return -1;
    /* cost(tau) = sum_{i<tau} eL^2 + sum_{i>=tau} eR^2 by running sums */
    double cl[2 * MAXG + 1], cr[2 * MAXG + 1], cost[2 * MAXG + 1];
    cl[0] = cr[0] = 0;
    for (size_t i = lo; i < hi; i++) {
        double el = om[i] - curve(coef, 0, at, (double)i);
        double er = om[i] - curve(coef, 1, at, (double)i);
        cl[i - lo + 1] = cl[i - lo] + el * el;
        cr[i - lo + 1] = cr[i - lo] + er * er;
    }
    size_t kbest = lo;
    double best = INFINITY;
    for (size_t tau = lo; tau <= hi; tau++) {
        cost[tau - lo] = cl[tau - lo] + (cr[hi - lo] - cr[tau - lo]);
        if (cost[tau - lo] < best) {
            best = cost[tau - lo];
            kbest = tau;
        }
    }
    if (kbest == lo || kbest == hi)
        return -1;   /* the step is not inside this gap */
    /* the step lies between samples kbest - 1 and kbest */
    double tk = (double)kbest - 0.5;
    double c0 = cost[kbest - 1 - lo], c1 = cost[kbest - lo], c2 = cost[kbest + 1 - lo];
    double den = c0 - 2 * c1 + c2;
    if (den > 0)
        tk += 0.5 * (c0 - c2) / den;
    *t = tk;
    *misfit = best + chisq;
    *wm = curve(coef, 0, at, tk);
    *wp = curve(coef, 1, at, tk);
    /* The bend of a line impact: speeding up before (the centre ahead of
     * the rolling edge), slowing down after (behind the new one); in
     * rad/s^2, NaN when the slopes do not have those signs. */
    double to_s = 0.1 * rate;   /* coef's time unit is 10 samples */
    *kink = coef[1] > 0 && coef[3] < 0 ? (coef[1] - coef[3]) * to_s : NAN;
    *slope_min = fmin(coef[1], -coef[3]) * to_s;
    return 0;
}

static pl_status fail(pl_process_result *r, pl_status code, pl_err *err,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pl_process_result_free(r);
    return pl_err_set(err, code, "%s", msg);
}

/* The ringing's frequency: the most prominent peak of the smoothed
 * spectrum above 500 Hz, measured against the lowest level between half
 * its frequency and itself.  The steps' own spectrum falls steadily and
 * white noise is flat, so neither makes a prominent peak; a resonance
 * does.  NaN when no peak stands 4 times above its valley. */
static double ring_peak(const double *psd, size_t len, double df)
{
    enum { H = 16 };
    size_t a = (size_t)ceil(500.0 / df);
    if (a < 2 * H || a + 2 * H >= len)
        return NAN;
    double *sm = malloc(len * sizeof *sm);
    if (!sm)
        return NAN;
    for (size_t k = 0; k < len; k++) {
        size_t lo = k > H ? k - H : 0, hi = k + H < len ? k + H : len - 1;
        double acc = 0;
        for (size_t j = lo; j <= hi; j++)
            acc += psd[j];
        sm[k] = acc / (double)(hi - lo + 1);
    }
    double best_prom = 0;
    size_t best = 0;
    for (size_t k = a; k + 2 * H < len; k++) {
        int is_max = 1;
        for (size_t j = k - 2 * H; j <= k + 2 * H && is_max; j++)
            is_max = sm[j] <= sm[k];
        if (!is_max)
            continue;
        double valley = sm[k];
        for (size_t j = k / 2; j < k; j++)
            valley = sm[j] < valley ? sm[j] : valley;
        double prom = valley > 0 ? sm[k] / valley : 0;
        if (prom > best_prom) {
            best_prom = prom;
            best = k;
        }
    }
    free(sm);
    if (!(best_prom > 4))
        return NAN;
    double y0 = psd[best - 1], y1 = psd[best], y2 = psd[best + 1];
    double den = y0 - 2 * y1 + y2, off = den != 0 ? 0.5 * (y0 - y2) / den : 0;
    if (fabs(off) > 1)
        off = 0;
    return ((double)best + off) * df;
}

static pl_status check_geometry(size_t n, double rate, double h1, double h2,
                                int N, pl_err *err)
{
    if (!(fabs(h1 - h2) > 1e-6))
        return pl_err_set(err, PL_EINVAL, "beam heights h1 = %g m and h2 = %g m "
                          "must differ: (4.1) divides by h1 - h2", h1, h2);
    if (N < 3)
        return pl_err_set(err, PL_EINVAL, "N = %d: a prism has at least 3 edges", N);
    if (!(rate > 0) || n < (size_t)(0.5 * rate))
        return pl_err_set(err, PL_ENUMERIC, "%zu samples at %g Hz: at least "
                          "0.5 s are needed", n, rate);
    return PL_OK;
}

/* The fraction of v's samples at its lowest or highest value, from every
 * stride-th sample: a clipped channel sits there in most of any regular
 * subsample, and a long run need not be read in full for it. */
static double at_extremes(const double *v, size_t n, size_t stride)
{
    double lo = v[0], hi = v[0];
    size_t n_lo = 0, n_hi = 0, m = 0;
    for (size_t i = 0; i < n; i += stride, m++) {
        double x = v[i];
        if (x < lo) {
            lo = x;
            n_lo = 0;
        }
        if (x > hi) {
            hi = x;
            n_hi = 0;
        }
        n_lo += x == lo;
        n_hi += x == hi;
    }
    return hi > lo && m ? (double)(n_lo + n_hi) / (double)m : 0.0;
}

/* --- line impacts ------------------------------------------------------- */

/* A stretch where the step statistic exceeds its threshold, widened by a
 * gap each side: the centres [ra, rb] tried for the impact in it. */
typedef struct {
    size_t ra, rb;
} plateau;

/* One share of the impact search for one thread: the plateaus that start
 * in [a, b).  D exists on [from, to); a plateau that starts in a share
 * belongs to it wherever it ends, so each is found exactly once and the
 * result does not depend on how the run is shared. */
typedef struct {
    const double *om;
    size_t n;
    double rate, dthr, kthr, half;   /* half: impact_half_s in samples */
    size_t g, w, from, to, a, b;
    pl_impact *out;                  /* n_out found, in time order */
    size_t n_out;
    int failed;                      /* out of memory */
} impact_job;

/* The impact in plateau p, if any, into *m: the centre whose two windows
 * fit best among those that see a drop or the bend of an impact, then a
 * last pass centred on the step found (see the comments in
 * locate_step()).  Returns 1 when found. */
static int locate_impact(step_fitter *f, const impact_job *j, plateau p,
                         pl_impact *m)
{
    size_t g = j->g;
    double dthr = j->dthr, kthr = j->kthr;
    /* A stride of g puts some centre within g/2 of the step, well inside
     * that centre's gap; the last pass re-centres anyway. */
    size_t stride = g ? g : 1;
    double tk = NAN, best_fit = INFINITY, wm, wp, kink, smin, t2, fit;
    for (size_t c = p.ra; c <= p.rb; c += stride) {
        double a1, a2;
        /* Windows on one side of the impact fit well too, but find
         * neither a step nor a bend between them: a line impact drops the
         * speed and turns the arc from speeding up to slowing down (the
         * centre passes from ahead of the old edge to behind the new
         * one). */
        if (locate_step(f, j->om, c, j->rate, &t2, &fit, &a1, &a2, &kink, &smin) == 0 &&
            a1 > a2 && (a1 - a2 > 0.5 * dthr || (kink > kthr && smin > 0.5 * kthr)) &&
            fit < best_fit) {
            best_fit = fit;
            tk = t2;
        }
    }
    if (isnan(tk))
        return 0;
    /* centred on the step, the windows are symmetric about it */
    if (locate_step(f, j->om, (size_t)llround(tk), j->rate, &t2, &fit, &wm, &wp,
                    &kink, &smin) != 0)
        return 0;
    tk = t2;
    if (!(wm > wp && (wm - wp > 0.5 * dthr || (kink > kthr && smin > 0.5 * kthr))))
        return 0;
    /* the contact instant: half an impact before the step's middle,
     * omega- and omega+ the two arcs there */
    double coef[5], chi;
    size_t c = (size_t)llround(tk);
    tk -= j->half;
    if (joint_fit(f, j->om, c, coef, &chi) != 0)
        return 0;
    wm = curve(coef, 0, (double)c, tk);
    wp = curve(coef, 1, (double)c, tk);
    m->t_s = tk / j->rate;
    m->omega_minus = wm;
    m->omega_plus = wp;
    m->ratio = wp / wm;
    m->interval_s = NAN;
    return 1;
}

static void *impact_worker(void *arg)
{
    impact_job *j = arg;
    size_t g = j->g, w = j->w, cap = 0;
    step_fitter f;
    dstream *ds = malloc(sizeof *ds);
    if (!ds || fitter_init(&f, g, w) != 0) {
        free(ds);
        j->failed = 1;
        return NULL;
    }
    size_t k = j->a;
    dstream_init(ds, j->om, g, w, k > j->from ? k - 1 : k, j->to);
    if (k > j->from && d_at(ds, k - 1) > j->dthr)
        while (k < j->to && d_at(ds, k) > j->dthr)
            k++;   /* the previous share's plateau */
    for (; k < j->b; k++) {
        if (!(d_at(ds, k) > j->dthr))
            continue;
        size_t start = k;
        while (k < j->to && d_at(ds, k) > j->dthr)
            k++;
        /* D grows across its plateau (the arc's slope changes sign at an
         * impact), so its maximum is no good centre: every centre from a
         * gap before the plateau to a gap after it is tried. */
        size_t ra = start > g ? start - g : 0, rb = k + g;
        if (ra < 2 * (g + w) || rb + 2 * (g + w) >= j->n)
            continue;
        pl_impact m;
        if (!locate_impact(&f, j, (plateau){ra, rb}, &m))
            continue;
        if (j->n_out == cap) {
            size_t nc = cap ? 2 * cap : 256;
            pl_impact *nv = realloc(j->out, nc * sizeof *nv);
            if (!nv) {
                j->failed = 1;
                break;
            }
            j->out = nv;
            cap = nc;
        }
        j->out[j->n_out++] = m;
    }
    free(ds);
    return NULL;
}

/* The impact search over [from, to) on up to `threads` threads (0: one
 * per CPU): the step statistic and the fits are most of the work in a
 * long run and share nothing but the read-only omega.  The impacts go to
 * r in time order.  Returns 0, or -1 when out of memory. */
static int find_impacts(const impact_job *tmpl, int threads,
                        pl_process_result *r)
{
    enum { MAXT = 8, MIN_SHARE = 100000 };
    size_t span = tmpl->to > tmpl->from ? tmpl->to - tmpl->from : 0;
    int t = threads;
    if (t <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = cpus > 0 ? (int)cpus : 1;
    }
    if (t > MAXT)
        t = MAXT;
    if ((size_t)t > span / MIN_SHARE)
        t = (int)(span / MIN_SHARE);
    if (t < 1)
        t = 1;
    impact_job job[MAXT];
    pthread_t tid[MAXT];
    int started[MAXT] = {0};
    for (int i = 0; i < t; i++) {
        job[i] = *tmpl;
        job[i].a = tmpl->from + span * (size_t)i / (size_t)t;
        job[i].b = tmpl->from + span * (size_t)(i + 1) / (size_t)t;
        job[i].out = NULL;
        job[i].n_out = 0;
        job[i].failed = 0;
    }
    for (int i = 1; i < t; i++)
        started[i] = pthread_create(&tid[i], NULL, impact_worker, &job[i]) == 0;
    impact_worker(&job[0]);
    size_t total = 0;
    int failed = 0;
    for (int i = 0; i < t; i++) {
        if (i > 0 && started[i])
            pthread_join(tid[i], NULL);
        else if (i > 0)
            impact_worker(&job[i]);   /* no thread to be had: do it here */
        failed |= job[i].failed;
        total += job[i].n_out;
    }
    r->impacts = failed ? NULL : malloc((total ? total : 1) * sizeof *r->impacts);
    for (int i = 0; i < t; i++) {
        if (r->impacts && job[i].n_out) {
            memcpy(r->impacts + r->n_impacts, job[i].out, job[i].n_out * sizeof *job[i].out);
            r->n_impacts += job[i].n_out;
        }
        free(job[i].out);
    }
    return r->impacts ? 0 : -1;
}

/* Copies a channel (when src is not NULL), measures how clipped it is and
 * bridges its speckle drop-outs: one channel per thread. */
typedef struct {
    const double *src;
    double *v;
    size_t n, max_spike, spikes;
    double jump, at_edge;
} chan_job;

static void *chan_worker(void *arg)
{
    chan_job *j = arg;
    if (j->src)
        memcpy(j->v, j->src, j->n * sizeof *j->v);
    /* past a million samples every 97th (a prime: no beat with a periodic
     * signal) still leaves ten thousand */
    j->at_edge = at_extremes(j->v, j->n, j->n > 1000000 ? 97 : 1);
    j->spikes = despike(j->v, j->n, j->jump, j->max_spike);
    return NULL;
}

/* The two velocities' spectra, on their own thread. */
typedef struct {
    pl_welch *w[2];
    const double *x[2];
    size_t n;
    double rate;
    size_t max_segments;
    double *psd[2];
    pl_status st;
    pl_err err;
} psd_job;

static void *psd_worker(void *arg)
{
    psd_job *j = arg;
    for (int k = 0; k < 2 && j->st == PL_OK; k++)
        j->st = pl_welch_run(j->w[k], j->x[k], j->n, j->rate, j->max_segments,
                             j->psd[k], NULL, &j->err);
    return NULL;
}

/* The processing proper.  It takes the velocity arrays vp1, vp2 over as
 * r->vp1, r->vp2 and works on them in place: a long run is copied at most
 * once, from src1, src2 when they are not NULL.
 * omega is first the unfiltered (4.1) and is then low-passed in place.
 * On failure r holds nothing and the arrays are freed. */
static pl_status process_owned(double *vp1, double *vp2, const double *src1,
                               const double *src2, size_t n,
                               double rate, double h1, double h2, int N,
                               const pl_process_config *cfg,
                               pl_process_result *r, pl_err *err)
{
    memset(r, 0, sizeof *r);
    r->ring_freq_hz = NAN;
    r->vp1 = vp1;
    r->vp2 = vp2;
    if (check_geometry(n, rate, h1, h2, N, err) != PL_OK) {
        pl_process_result_free(r);
        return err->code;
    }
    r->n = n;
    r->rate_hz = rate;
    r->omega = malloc(sizeof(double) * n);
    r->theta = malloc(sizeof(double) * n);
    smoother *sm = malloc(sizeof *sm);
    double *om = r->omega;
    if (!r->omega || !r->theta || !sm) {
        free(sm);
        return fail(r, PL_ENOMEM, err, "processing: out of memory for %zu samples", n);
    }
    pl_welch *welch[3] = {NULL, NULL, NULL};
    pl_lowpass *lp = NULL;
    pthread_t psd_thread;
    int psd_running = 0;
    /* one way out: the spectra's thread joined before anything it reads
     * is freed */
#define CLEANUP() do { \
        if (psd_running) \
            pthread_join(psd_thread, NULL); \
        psd_running = 0; \
        for (int k_ = 0; k_ < 3; k_++) \
            pl_welch_destroy(welch[k_]); \
        pl_lowpass_destroy(lp); \
        free(sm); \
    } while (0)
#define FAIL(code, ...) do { CLEANUP(); return fail(r, code, err, __VA_ARGS__); } while (0)

    /* The channels one per thread: copied in when src1, src2 are given,
     * checked for clipping (a converter pinned at one end gives the same
     * value for most samples) and despiked. */
    size_t max_spike = (size_t)ceil(0.005 * rate);
    chan_job cj[2] = {{src1, vp1, n, max_spike, 0, cfg->despike_jump_mps, 0},
                      {src2, vp2, n, max_spike, 0, cfg->despike_jump_mps, 0}};
    pthread_t ct;
    int c_started = cfg->threads != 1 && pthread_create(&ct, NULL, chan_worker, &cj[1]) == 0;
    chan_worker(&cj[0]);
    if (c_started)
        pthread_join(ct, NULL);
    else
        chan_worker(&cj[1]);
    for (int c = 0; c < 2; c++)
        if (cj[c].at_edge > 0.5)
            FAIL(PL_ENUMERIC, "channel %d sits at its extreme values in %.0f %% "
                 "of the samples: clipped (widen the LDV's velocity range or "
                 "the DAQ's input range)", c + 1, 100.0 * cj[c].at_edge);
    r->spikes = cj[0].spikes + cj[1].spikes;

    /* Offsets from the quiet lead-in; refined below once the release is
     * known.  Until then omega is computed only where it is looked at. */
    size_t q = (size_t)(cfg->quiet_s * rate);
    if (q < 16)
        q = 16;
    double dh = h1 - h2;
    omega_src src = {vp1, vp2, mean_of(vp1, 0, q), mean_of(vp2, 0, q), dh, NULL};

    /* Release: the 10 ms moving average of omega leaves the noise for
     * good (50 ms in a row above the threshold). */
    size_t h = (size_t)(0.005 * rate);
    smoother_init(sm, &src, n, h);
    double sd_s = NAN;
    {
        size_t qa = h, qb = q > 2 * h ? q - h : q, m = qb > qa ? qb - qa : 0;
        double *tmp = malloc((m > q ? m : q) * sizeof *tmp);
        if (!tmp)
            FAIL(PL_ENOMEM, "processing: out of memory");
        boxcar_range(&src, n, h, qa, qb, tmp);
        sd_s = robust_sd(tmp, 0, m);
        for (size_t i = 0; i < q; i++)
            tmp[i] = omega_at(&src, i);
        r->noise_omega = robust_sd(tmp, 0, q);
        free(tmp);
    }
    double thr = cfg->release_sigmas * (sd_s > 0 ? sd_s : 1e-9);
    size_t hold = (size_t)(0.05 * rate), run = 0, cross = n;
    for (size_t i = q; i < n; i++) {
        run = smooth_at(sm, i) > thr ? run + 1 : 0;
        if (run >= hold) {
            cross = i + 1 - hold;
            break;
        }
    }
    if (cross == n)
        FAIL(PL_ENUMERIC, "no motion: the rotary speed never exceeds %.3g rad/s "
             "(%g noise standard deviations) for 50 ms", thr, cfg->release_sigmas);
    /* From rest the speed grows linearly at first: extrapolate the line
     * through the first rise back to zero. */
    size_t k2 = cross;
    while (k2 < n && smooth_at(sm, k2) < 4 * thr && k2 < cross + (size_t)(0.3 * rate))
        k2++;
    /* The moving average leads the motion by its half-width: fit the
     * unsmoothed speed from there on, over at least 20 ms. */
    size_t k1 = cross + h < n ? cross + h : cross;
    if (k2 < k1 + (size_t)(0.02 * rate))
        k2 = k1 + (size_t)(0.02 * rate);
    if (k2 >= n)
        k2 = n - 1;
    for (size_t i = k1; i <= k2; i++)
        om[i] = omega_at(&src, i);
    double t0 = line_at(om, k1, k2 + 1, 0.0, 0.0);
    double slope = line_at(om, k1, k2 + 1, 0.0, 1.0) - t0;
    size_t release = cross;
    if (slope > 0) {
        double z = -t0 / slope;
        release = z < 0 ? 0 : z > (double)k1 ? k1 : (size_t)llround(z);
    }

    /* Refined offsets over the whole lead-in (less a margin), then omega
     * (4.1) everywhere, unfiltered for now. */
    size_t lead = release > (size_t)(0.02 * rate) ? release - (size_t)(0.02 * rate) : 0;
    double o1 = src.o1, o2 = src.o2;
    if (lead >= q) {
        o1 = mean_of(vp1, 0, lead);
        o2 = mean_of(vp2, 0, lead);
    } else {
        warn(r, "lead-in before the release is only %.3f s: offsets from %.3f s",
             lead / rate, q / rate);
    }
    for (size_t i = 0; i < n; i++) {
        vp1[i] -= o1;
        vp2[i] -= o2;
        om[i] = (vp1[i] - vp2[i]) / dh;
    }
    omega_src whole = {NULL, NULL, 0, 0, 1, om};
    smoother_init(sm, &whole, n, h);

    /* End of valid data: the last time the averaged speed is above the
     * threshold, refined to the largest one-sample drop near it (the
     * beams lose the prism at once). */
    size_t last = n - 1;
    while (last > release && !(smooth_at(sm, last) > thr))
        last--;
    size_t end = last + 1;
    if (last + 1 < n) {
        size_t a = last > 2 * h ? last - 2 * h : release + 1, b = last + 2 * h < n ? last + 2 * h : n - 1;
        double best = 0;
        for (size_t i = a + 1; i <= b; i++)
            if (om[i - 1] - om[i] > best) {
                best = om[i - 1] - om[i];
                end = i;
            }
    }
    size_t guard = (size_t)ceil(0.002 * rate);
    end = end > release + guard ? end - guard : release + 1;
    r->release = release;
    r->end = end;
    r->release_t = release / rate;
    r->end_t = end / rate;

    /* The spectrum of the unfiltered omega: the ringing, for the cut-off,
     * and (times |1 - H|^2) the residual's. */
    size_t seg = cfg->psd_segment;
    while (seg > 256 && seg > end - release)
        seg /= 2;
    if (end - release < seg)
        FAIL(PL_ENUMERIC, "the motion lasts %.3f s: too short to process (at "
             "least %.3f s)", (end - release) / rate, seg / rate);
    r->psd_len = seg / 2 + 1;
    r->psd_df = rate / seg;
    r->psd_vp1 = malloc(r->psd_len * sizeof(double));
    r->psd_vp2 = malloc(r->psd_len * sizeof(double));
    r->psd_residual = malloc(r->psd_len * sizeof(double));
    if (!r->psd_vp1 || !r->psd_vp2 || !r->psd_residual)
        FAIL(PL_ENOMEM, "processing: out of memory");
    for (int k = 0; k < 3; k++)
        if (pl_welch_create(&welch[k], seg, err) != PL_OK)
            FAIL(err->code, "%s", err->msg);
    pl_status st = pl_welch_run(welch[0], om + release, end - release, rate,
                                cfg->psd_max_segments, r->psd_residual, NULL, err);
    if (st != PL_OK)
        FAIL(st, "%s", err->msg);

    /* Low-pass: the cut-off from the ringing when the data show one. */
    double fc = cfg->cutoff_hz;
    if (isnan(fc)) {
        double f_ring = ring_peak(r->psd_residual, r->psd_len, r->psd_df);
        fc = isnan(f_ring) ? 1000.0 : 0.4 * f_ring;
        if (fc > 0.4 * rate)
            fc = 0.4 * rate;
        if (fc < 100.0)
            fc = 100.0;
    }
    r->cutoff_hz = fc;
    if (fc > 0) {
        if ((st = pl_lowpass_create(&lp, fc, rate, err)) != PL_OK)
            FAIL(st, "%s", err->msg);
        /* What the filter removes, ringing and noise, has the spectrum of
         * omega times |1 - H|^2: H is smooth over many bins, so this is
         * the Welch estimate of the residual up to the window's leakage,
         * without a pass over the run to form it. */
        for (size_t k = 0; k < r->psd_len; k++) {
            double rest = 1 - pl_lowpass_gain(lp, k * r->psd_df);
            r->psd_residual[k] *= rest * rest;
        }
    } else {
        memset(r->psd_residual, 0, r->psd_len * sizeof(double));
    }
    r->ring_freq_hz = ring_peak(r->psd_residual, r->psd_len, r->psd_df);

    /* Every plan is made: the velocities' spectra (final now) on a second
     * thread while this one filters, integrates and searches. */
    psd_job pj = {{welch[1], welch[2]}, {vp1 + release, vp2 + release},
                  end - release, rate, cfg->psd_max_segments,
                  {r->psd_vp1, r->psd_vp2}, PL_OK, {0}};
    if (cfg->threads != 1 && pthread_create(&psd_thread, NULL, psd_worker, &pj) == 0)
        psd_running = 1;
    else
        psd_worker(&pj);

    if (lp && (st = pl_lowpass_apply(lp, om, om, n, err)) != PL_OK)
        FAIL(st, "%s", err->msg);

    /* theta by the trapezoid rule from the release (4.2); L_p = N theta /
     * 2 pi.  The same pass sums |omega| over the impact search's range
     * for the detection floor below. */
    size_t g = (size_t)llround(cfg->gap_s * rate), w = (size_t)llround(cfg->fit_s * rate);
    if (w < 4)
        w = 4;
    size_t from = release + g + w, to = end > g + w ? end - g - w : 0;
    double *th = r->theta, th_i = 0, level = 0, half_dt = 0.5 / rate;
    for (size_t i = 0; i < n; i++) {
        if (i > release && i < end)
            th_i += half_dt * (om[i - 1] + om[i]);
        th[i] = th_i;
        if (i >= from && i < to)
            level += fabs(om[i]);
    }
    level = to > from ? level / (double)(to - from) : 0;
    r->lp_end = N * th[end - 1] / (2 * M_PI);
    size_t last_s = (size_t)rate < end - release ? end - (size_t)rate : release;
    r->omega_last_mean = mean_of(om, last_s, end);

    /* Line impacts: peaks of the step statistic D above its noise.  The
     * noise of D from the lead-in when it is long enough, else over the
     * window (impacts are rare enough not to move the median much). */
    double sd_d = NAN;
    {
        size_t a = from, b = to;
        if (release > 2 * (g + w) + (size_t)(0.1 * rate)) {
            a = g + w;
            b = release - g - w;
        }
        double *tmp = b > a + 1 ? malloc((b - a) * sizeof *tmp) : NULL;
        if (b > a + 1 && !tmp)
            FAIL(PL_ENOMEM, "processing: out of memory");
        if (tmp) {
            step_statistic(om, g, w, a, b, tmp);
            sd_d = robust_sd(tmp, 0, b - a);
            free(tmp);
        }
    }
    /* A floor for noise-free signals (a noise estimate of zero): steps
     * below 1e-4 of the mean speed are not impacts a rig can resolve. */
    double dthr = fmax(cfg->impact_sigmas * sd_d, 1e-4 * level);
    /* the same noise, as a change of slope across the fit windows */
    double kthr = dthr / cfg->fit_s;

    impact_job job = {om, n, rate, dthr, kthr, cfg->impact_half_s * rate,
                      g, w, from, to, from, to, NULL, 0, 0};
    if (find_impacts(&job, cfg->threads, r) != 0)
        FAIL(PL_ENOMEM, "processing: out of memory");
    CLEANUP();
    if (pj.st != PL_OK)
        return fail(r, pj.st, err, "%s", pj.err.msg);
#undef FAIL
#undef CLEANUP
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < r->n_impacts; i++) {
        if (i + 1 < r->n_impacts)
            r->impacts[i].interval_s = r->impacts[i + 1].t_s - r->impacts[i].t_s;
        sum += r->impacts[i].ratio;
        sum2 += r->impacts[i].ratio * r->impacts[i].ratio;
    }
    if (r->n_impacts == 0)
        return fail(r, PL_ENUMERIC, err, "no line impact between the release "
                    "at %.3f s and the end at %.3f s (L_p grows by %.2f): the "
                    "run is shorter than one impact", r->release_t, r->end_t,
                    r->lp_end);
    r->ratio_mean = sum / r->n_impacts;
    r->ratio_sd = r->n_impacts > 1
        ? sqrt(fmax(0, (sum2 - sum * sum / r->n_impacts) / (r->n_impacts - 1))) : NAN;
    /* Cross-check: one impact per unit of L_p (4.2): from the first
     * detected impact on, L_p grows by one between impacts. */
    size_t kf = (size_t)llround(r->impacts[0].t_s * rate);
    double l1 = N * r->theta[kf < n ? kf : n - 1] / (2 * M_PI);
    double expect = floor(r->lp_end - l1 + 1e-9) + 1;
    double diff = (double)r->n_impacts - expect;
    if (diff > 1.0 || diff < -1.0)
        warn(r, "%zu impacts detected but L_p grows by %.2f from the first "
             "one (%.0f expected): %s", r->n_impacts, r->lp_end - l1, expect,
             diff > 0 ? "spurious detections?" : "missed impacts?");
    if (r->spikes > 0)
        warn(r, "%zu speckle drop-outs bridged", r->spikes);
    return PL_OK;
}

pl_status pl_process_signals(const double *v1, const double *v2, size_t n,
                             double rate, double h1, double h2, int N,
                             const pl_process_config *cfg,
                             pl_process_result *r, pl_err *err)
{
    memset(r, 0, sizeof *r);
    if (check_geometry(n, rate, h1, h2, N, err) != PL_OK)
        return err->code;
    double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
    if (!a || !b) {
        free(a);
        free(b);
        return pl_err_set(err, PL_ENOMEM, "processing: out of memory for %zu samples", n);
    }
    return process_owned(a, b, v1, v2, n, rate, h1, h2, N, cfg, r, err);
}

/* --- the stored run ----------------------------------------------------- */

static pl_series series(const char *name, const char *unit, int dec,
                        double t0, double rate, size_t n, const double *v)
{
    pl_series s = {name, unit, dec, t0, rate, n, v};
    return s;
}

pl_status pl_process_run(pl_store *store, long long run_id,
                         const pl_process_config *cfg, pl_process_result *out,
                         pl_err *err)
{
    pl_run_info info;
    pl_channel ch[2];
    if (pl_run_get(store, run_id, &info, err) != PL_OK)
        return err->code;
    if (info.n_channels != 2)
        return pl_err_set(err, PL_EINVAL, "run %lld has %d channels: "
                          "processing needs the two LDVs", run_id, info.n_channels);
    if (!info.prism[0])
        return pl_err_set(err, PL_EINVAL, "run %lld names no prism: its edge "
                          "count N is needed for L_p (4.2)", run_id);
    if (info.n_frames < 1)
        return pl_err_set(err, PL_ENUMERIC, "run %lld holds no frames", run_id);
    pl_prism prism;
    if (pl_prism_get(store, info.prism, &prism, err) != PL_OK ||
        pl_run_channels(store, run_id, ch, 2, err) != PL_OK)
        return err->code;
    size_t n = (size_t)info.n_frames;
    double *v[2] = {malloc(sizeof(double) * n), malloc(sizeof(double) * n)};
    if (!v[0] || !v[1]) {
        free(v[0]);
        free(v[1]);
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for %zu frames",
                          run_id, n);
    }
    pl_status st = pl_run_read_channels(store, run_id, 0, (long long)n, v, 2, err);
    if (st != PL_OK) {
        free(v[0]);
        free(v[1]);
        pl_err_prefix(err, "run %lld: ", run_id);
        return st;
    }
    for (int c = 0; c < 2; c++) {
        double k = ch[c].beam_sign * ch[c].ldv_scale_mps_per_v;
        for (size_t i = 0; i < n; i++)
            v[c][i] *= k;
    }
    pl_process_result r;
    st = process_owned(v[0], v[1], NULL, NULL, n, info.sample_rate_hz, ch[0].beam_height_m,
                       ch[1].beam_height_m, prism.n_edges, cfg, &r, err);
    if (st != PL_OK) {
        pl_err_prefix(err, "run %lld: ", run_id);
        return st;
    }

    /* Decimated copies for plots: every 10th sample of the filtered
     * series (omega is low-passed well below the new Nyquist). */
    size_t nd = (n + 9) / 10;
    double *dec = malloc(5 * nd * sizeof *dec);
    if (!dec) {
        pl_process_result_free(&r);
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", run_id);
    }
    const double *full[5] = {r.omega, r.theta, r.theta, r.vp1, r.vp2};
    double lp_per_rad = prism.n_edges / (2 * M_PI);
    for (int s = 0; s < 5; s++)
        for (size_t i = 0; i < nd; i++)
            dec[s * nd + i] = full[s][10 * i] * (s == 2 ? lp_per_rad : 1.0);
    double rate = info.sample_rate_hz;
    /* Stored at 1 kHz (every 10th sample of the filtered series): enough
     * for every plot and for matching, a tenth of the bytes.  The
     * full-rate series are recomputed exactly from the raw chunks and the
     * stored parameters by pl_process_run(): processing is deterministic. */
    pl_series sv[8] = {
        series("omega", "rad/s", 10, 0, rate / 10, nd, dec),
        series("theta", "rad", 10, 0, rate / 10, nd, dec + nd),
        series("Lp", "1", 10, 0, rate / 10, nd, dec + 2 * nd),
        series("vp1", "m/s", 10, 0, rate / 10, nd, dec + 3 * nd),
        series("vp2", "m/s", 10, 0, rate / 10, nd, dec + 4 * nd),
        series("psd_vp1", "m^2/s^2/Hz", 1, 0, 1 / r.psd_df, r.psd_len, r.psd_vp1),
        series("psd_vp2", "m^2/s^2/Hz", 1, 0, 1 / r.psd_df, r.psd_len, r.psd_vp2),
        series("psd_residual", "rad^2/s^2/Hz", 1, 0, 1 / r.psd_df, r.psd_len, r.psd_residual),
    };
    pl_processing rec;
    memset(&rec, 0, sizeof rec);
    rec.run_id = run_id;
    pl_store_utc_now(rec.processed_utc);
    snprintf(rec.version, sizeof rec.version, "%s", pl_version());
    snprintf(rec.params, sizeof rec.params,
             "cutoff_hz=%.6g\ncutoff_from=%s\ndespike_jump_mps=%g\n"
             "release_sigmas=%g\nimpact_sigmas=%g\ngap_s=%g\nfit_s=%g\n"
             "quiet_s=%g\nimpact_half_s=%g\npsd_segment=%zu\npsd_max_segments=%zu\n"
             "ring_freq_hz=%.6g\n"
             "noise_omega_rad_s=%.6g\nspikes=%zu\nN=%d\nh1_m=%.9g\nh2_m=%.9g\n",
             r.cutoff_hz, isnan(cfg->cutoff_hz) ? "data" : "option",
             cfg->despike_jump_mps, cfg->release_sigmas, cfg->impact_sigmas,
             cfg->gap_s, cfg->fit_s, cfg->quiet_s, cfg->impact_half_s, cfg->psd_segment,
             cfg->psd_max_segments,
             r.ring_freq_hz, r.noise_omega, r.spikes, prism.n_edges,
             ch[0].beam_height_m, ch[1].beam_height_m);
    rec.release_frame = (long long)r.release;
    rec.end_frame = (long long)r.end;
    rec.release_t_s = r.release_t;
    rec.end_t_s = r.end_t;
    rec.n_impacts = (long long)r.n_impacts;
    rec.lp_end = r.lp_end;
    rec.omega_last_mean = r.omega_last_mean;
    rec.ratio_mean = r.ratio_mean;
    rec.ratio_sd = r.ratio_sd;
    snprintf(rec.warnings, sizeof rec.warnings, "%s", r.warnings);
    st = pl_derived_save(store, &rec, sv, 8, r.impacts, r.n_impacts, err);
    free(dec);
    if (out && st == PL_OK)
        *out = r;
    else
        pl_process_result_free(&r);
    return st;
}
