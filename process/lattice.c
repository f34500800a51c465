/* process/lattice.c - line impacts walked along the lattice of L_p.
 * The method and its reasons are in lattice.h and docs/process.md. */
#include "process/lattice.h"

#include "process/robust.h"

#include <fftw3.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pl_lattice_config_default(pl_lattice_config *cfg)
{
    cfg->gap_s = 0.001;
    cfg->fit_s = 0.010;
    cfg->confirm_sigmas = 5.0;
    cfg->smooth_slots = 15;
    cfg->threads = 0;
    cfg->beta_rad = NAN;
}

/* The step statistic's own windows: a 1 ms gap and 5 ms fits each side
 * resolve a step of a fraction of the noise and keep neighbours apart at
 * the fastest rolling of the paper's prisms (an impact every 20 ms). */
enum { D_GAP_US = 1000, D_FIT_US = 5000 };

enum { PMAX = 7 };

/* Powers of the ringing fit's cubic whose sums ring_joint() takes from a
 * table: x^0 .. x^6. */
enum { RJ_POW = 7 };

/* The run's ringing: a decaying sinusoid after each impact, its shape
 * the same for every impact (from the stack, in units of the step), its
 * size each impact's own. */
typedef struct {
    double w, tau;           /* rad/sample, samples; w = 0: none */
    double a, b;             /* sin, cos coefficients from the onset */
    double onset;            /* samples from the instant */
} ringing;

typedef struct {
    double *om;                     /* the detection signal; ringing found is
                                       subtracted from it in place */
    const double *theta;
    size_t n, release, end, g, w;   /* g, w: D's gap and window, samples */
    size_t G, W;                    /* arc fits: gap and longest window */
    double rate, delta, conf, noise_d, noise_om;
    ringing ring;
    double *scratch;                /* 4 W + 64 doubles for the ringing's loops */
    int threads;                    /* for the per-impact passes; 0: one per CPU */
    const double *powsum;           /* [n * RJ_POW + p]: sum_{j<n} (j/n)^p, n <= W */
} walk;

/* A per-impact pass over slots [a, b) on a copy of the walk with its own
 * scratch buffer: the passes after the walk (ringing, re-location,
 * evaluation) treat each impact on its own, so they are shared between
 * threads in contiguous ranges and give the same result on any count. */
typedef void (*slot_pass)(walk *wk, size_t a, size_t b, void *ctx);

typedef struct {
    walk wk;
    size_t a, b;
    slot_pass fn;
    void *ctx;
} share;

static void *share_run(void *p)
{
    share *s = p;
    s->fn(&s->wk, s->a, s->b, s->ctx);
    return NULL;
}

static void for_slots(const walk *wk, size_t m, slot_pass fn, void *ctx)
{
    enum { MAXT = 8, MIN_SHARE = 256 };
    int t = wk->threads;
    if (t <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = cpus > 0 ? (int)cpus : 1;
    }
    if (t > MAXT)
        t = MAXT;
    if ((size_t)t > m / MIN_SHARE)
        t = (int)(m / MIN_SHARE);
    if (t < 1)
        t = 1;
    share sh[MAXT];
    pthread_t tid[MAXT];
    int started[MAXT] = {0};
    for (int i = 0; i < t; i++) {
        sh[i] = (share){*wk, m * (size_t)i / (size_t)t, m * (size_t)(i + 1) / (size_t)t, fn, ctx};
        if (i > 0)
            sh[i].wk.scratch = malloc((4 * wk->W + 64) * sizeof(double));
        if (i > 0 && sh[i].wk.scratch)
            started[i] = pthread_create(&tid[i], NULL, share_run, &sh[i]) == 0;
    }
    share_run(&sh[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else {
            /* no thread or no buffer: this one does the share */
            sh[i].wk.scratch = sh[i].wk.scratch ? sh[i].wk.scratch : wk->scratch;
            share_run(&sh[i]);
            if (sh[i].wk.scratch == wk->scratch)
                sh[i].wk.scratch = NULL;
        }
        free(sh[i].wk.scratch);
    }
}

/* One lattice slot. */
typedef struct {
    long k;                  /* index from the seed */
    double tc;               /* instant, samples (fractional) */
    double theta, var_theta; /* measured angle there and its variance */
    double z;                /* D peak / its noise */
    int confirmed, measured;
    double ring_amp, ring_t; /* ringing subtracted: size, start (samples) */
    double next_amp, next_t; /* the same, found for the next pass */
    double step;             /* the step measured, rad/s */
    int dropped;             /* measured, then dropped by smooth_phase() */
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

/* The two arcs either side of a gap, fitted together.  Between impacts
 * (2.1) is a pendulum: omega^2 = C - 2 K cos psi with psi advancing as
 * theta does, so in the angle x = theta - theta(centre) each arc is
 *   omega^2 = a + b x + c x^2  (+ K sin(psi) x^3 / 3 ...),
 * with c = K cos psi the same on both sides to a part in a thousand and
 * the cubic a part in a thousand of the rest over a window.  In time the
 * same arcs need cubic and higher terms of opposite sign each side (the
 * third derivative is K sin psi (K cos psi - omega^2)), which a shared
 * quadratic in time cannot follow: their misfit inside the gap moved the
 * equal-area instant by up to 0.3 ms on a 39-edge prism. */
typedef struct {
    const walk *wk;
    size_t c;
    double th_c;             /* theta at the centre */
    double p[5];             /* aL, bL, aR, bR, c */
    double chol[25];         /* Cholesky factor of X'X, lower, row-major */
    double rss;              /* in omega^2 */
    double level;            /* mean omega over the windows */
    size_t m;                /* samples fitted */
} arcs;

/* The small normal equations of the arcs, the ringing and the tops (3 to
 * 6 unknowns, one system per impact and pass) are factored here rather
 * than by GSL's Cholesky: GSL reports a matrix that is not positive
 * definite through its error handler, one for the whole process, which
 * the per-impact threads can neither rely on being off nor switch off and
 * on; and at this size its general driver costs more than the sums. */
enum { CHOL_MAX = 8 };

/* The lower Cholesky factor of the n x n symmetric A (row-major, n <=
 * CHOL_MAX; the lower triangle read) in place; -1 at a pivot that is not
 * positive. */
static int chol_factor(double *A, int n)
{
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int k = 0; k < j; k++)
            d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0))
            return -1;
        d = sqrt(d);
        A[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (int k = 0; k < j; k++)
                s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / d;
        }
    }
    return 0;
}

/* x = A^-1 b for A = L L' with L the lower triangle of l (n x n). */
static void chol_solve_n(const double *l, int n, const double *b, double *x)
{
    double y[CHOL_MAX];
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int j = 0; j < i; j++)
            s -= l[i * n + j] * y[j];
        y[i] = s / l[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = y[i];
        for (int j = i + 1; j < n; j++)
            s -= l[j * n + i] * x[j];
        x[i] = s / l[i * n + i];
    }
}

static void chol_solve(const double *l, const double *b, double *x)
{
    chol_solve_n(l, 5, b, x);
}

/* x' A^-1 x for A = L L' (n x n): |L^-1 x|^2, the forward half of a
 * solve (a variance of a fitted value, asked for on every slot). */
static double chol_quad(const double *l, int n, const double *x)
{
    double y[CHOL_MAX], q = 0;
    for (int i = 0; i < n; i++) {
        double s = x[i];
        for (int j = 0; j < i; j++)
            s -= l[i * n + j] * y[j];
        y[i] = s / l[i * n + i];
        q += y[i] * y[i];
    }
    return q;
}

/* The sums the arcs' normal equations need, per side: x^0..x^4 and
 * omega^2 x^0..x^2, x = theta - ref; with omega^4 and omega over both.
 * Kept between the re-centrings of one instant (locate()): the windows
 * then move by a few samples, which are added and taken away, and the
 * sums are moved to the new centre's angle by the binomial expansion,
 * instead of every sample being summed again. */
typedef struct {
    size_t a[2], b[2];       /* each side's samples [a, b) */
    double ref;              /* the angle x is measured from */
    double s[2][5], t[2][3], yy, lv;
    int valid;
} moments;

/* Adds sign x the sums over samples [a, b) to side's.  The sums are kept
 * in locals: through mo the compiler must store each one back per sample
 * (mo might alias the signal), which made this loop a tenth of a long
 * run's time. */
static void moments_add(const walk *wk, moments *mo, int side, size_t a, size_t b, double sign)
{
    if (a >= b)
        return;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, t0 = 0, t1 = 0, t2 = 0, yy = 0, lv = 0;
    const double *th = wk->theta, *om = wk->om, ref = mo->ref;
    for (size_t k = a; k < b; k++) {
        double x = th[k] - ref, o = om[k], v = o * o, x2 = x * x;
        s1 += x;
        s2 += x2;
        s3 += x2 * x;
        s4 += x2 * x2;
        t0 += v;
        t1 += v * x;
        t2 += v * x2;
        yy += v * v;
        lv += o;
    }
    s0 = (double)(b - a);
    double *sx = mo->s[side], *sy = mo->t[side];
    sx[0] += sign * s0;
    sx[1] += sign * s1;
    sx[2] += sign * s2;
    sx[3] += sign * s3;
    sx[4] += sign * s4;
    sy[0] += sign * t0;
    sy[1] += sign * t1;
    sy[2] += sign * t2;
    mo->yy += sign * yy;
    mo->lv += sign * lv;
}

/* The sums over the windows [aL, bL) and [aR, bR): moved from those kept
 * when the windows overlap them, summed afresh (about ref) otherwise. */
static void moments_at(const walk *wk, moments *mo, size_t aL, size_t bL, size_t aR,
                       size_t bR, double ref)
{
    size_t a[2] = {aL, aR}, b[2] = {bL, bR};
    int reuse = mo->valid;
    for (int side = 0; reuse && side < 2; side++)
        reuse = a[side] < mo->b[side] && mo->a[side] < b[side] &&
                (a[side] > mo->a[side] ? a[side] - mo->a[side] : mo->a[side] - a[side]) +
                        (b[side] > mo->b[side] ? b[side] - mo->b[side] : mo->b[side] - b[side]) <
                    (b[side] - a[side]) / 2;
    if (!reuse) {
        memset(mo, 0, sizeof *mo);
        mo->ref = ref;
        for (int side = 0; side < 2; side++) {
            moments_add(wk, mo, side, a[side], b[side], 1);
            mo->a[side] = a[side];
            mo->b[side] = b[side];
        }
        mo->valid = 1;
        return;
    }
    for (int side = 0; side < 2; side++) {
        moments_add(wk, mo, side, mo->a[side], a[side], -1);
        moments_add(wk, mo, side, a[side], mo->a[side], 1);
        moments_add(wk, mo, side, b[side], mo->b[side], -1);
        moments_add(wk, mo, side, mo->b[side], b[side], 1);
        mo->a[side] = a[side];
        mo->b[side] = b[side];
    }
}

/* Fits the arcs over [c-G-WL, c-G) and (c+G, c+G+WR] by least squares in
 * omega^2: the normal equations from the moments of x = theta - theta(c)
 * on each side (kept in *mo, or summed here when mo is NULL), solved by
 * chol_factor() on the stack. */
static int fit_joint2(const walk *wk, size_t c, size_t WL, size_t WR, moments *mo, arcs *f)
{
    size_t G = wk->G;
    *f = (arcs){.wk = wk, .c = c, .th_c = wk->theta[c], .m = WL + WR};
    moments own;
    if (!mo) {
        own.valid = 0;
        mo = &own;
    }
    moments_at(wk, mo, c - G - WL, c - G, c + G + 1, c + G + 1 + WR, f->th_c);
    /* the sums about theta(c): x' = x - d */
    double d = f->th_c - mo->ref, d2 = d * d, sx[2][5], sy[2][3];
    for (int side = 0; side < 2; side++) {
        const double *S = mo->s[side], *T = mo->t[side];
        sx[side][0] = S[0];
        sx[side][1] = S[1] - d * S[0];
        sx[side][2] = S[2] - 2 * d * S[1] + d2 * S[0];
        sx[side][3] = S[3] - 3 * d * S[2] + 3 * d2 * S[1] - d2 * d * S[0];
        sx[side][4] = S[4] - 4 * d * S[3] + 6 * d2 * S[2] - 4 * d2 * d * S[1] + d2 * d2 * S[0];
        sy[side][0] = T[0];
        sy[side][1] = T[1] - d * T[0];
        sy[side][2] = T[2] - 2 * d * T[1] + d2 * T[0];
    }
    double yy = mo->yy;
    f->level = mo->lv / (double)(WL + WR);
    /* columns: 1_L, x_L, 1_R, x_R, x^2 */
    double A[25] = {
        sx[0][0], sx[0][1], 0, 0, sx[0][2],
        sx[0][1], sx[0][2], 0, 0, sx[0][3],
        0, 0, sx[1][0], sx[1][1], sx[1][2],
        0, 0, sx[1][1], sx[1][2], sx[1][3],
        sx[0][2], sx[0][3], sx[1][2], sx[1][3], sx[0][4] + sx[1][4]};
    double rhs[5] = {sy[0][0], sy[0][1], sy[1][0], sy[1][1], sy[0][2] + sy[1][2]};
    /* the Cholesky factor (in place, lower triangle), then the two
     * triangular solves: the inverse is needed only for the variances at
     * the end (arc_var(), from the factor kept in f->chol) */
    if (chol_factor(A, 5) != 0)
        return -1;
    memcpy(f->chol, A, sizeof f->chol);
    chol_solve(f->chol, rhs, f->p);
    double bxy = 0;
    for (int r = 0; r < 5; r++)
        bxy += f->p[r] * rhs[r];
    f->rss = fmax(0, yy - bxy);   /* least squares: y'y - b'X'y */
    return 0;
}

static int fit_joint(const walk *wk, size_t c, size_t W, arcs *f)
{
    return fit_joint2(wk, c, W, W, NULL, f);
}

/* The arcs (the velocities either side) at u samples from the centre:
 * omega, and the variance of omega^2 there per unit noise variance of
 * omega^2. */
static double arc_val(const arcs *f, int side, double u)
{
    double t = theta_at(f->wk, (double)f->c + u) - f->th_c;
    double y = f->p[side ? 2 : 0] + f->p[side ? 3 : 1] * t + f->p[4] * t * t;
    return y > 0 ? sqrt(y) : 0;
}

static double arc_var(const arcs *f, int side, double u)
{
    double t = theta_at(f->wk, (double)f->c + u) - f->th_c, x[5];
    x[0] = side ? 0 : 1;
    x[1] = side ? 0 : t;
    x[2] = side ? 1 : 0;
    x[3] = side ? t : 0;
    x[4] = t * t;
    return chol_quad(f->chol, 5, x);   /* x' (X'X)^-1 x */
}

/* The arcs either side of an instant near sample c, the instant by equal
 * areas, and what is known of them. */
typedef struct {
    double tc;              /* samples */
    double wm, wp;          /* the arcs at tc */
    double var_wm, var_wp;  /* their variances */
    double var_tc;          /* samples^2 */
    double sigma2;          /* noise variance of omega per sample near the slot */
    double slope_m, slope_p;/* the arcs' slopes at tc, per sample */
} step_fit;

/* The arcs around sample c on windows of up to W samples, each side cut
 * where the data end: near the ends of the window the long side then
 * fixes the shared curvature that a short one cannot (a last impact 5 ms
 * before the end, fitted on 4 ms either side, was placed 0.3 ms early
 * and its step lost). */
static int fit_arcs_at(const walk *wk, size_t c, size_t W, moments *mo, arcs *J)
{
    size_t G = wk->G;
    if (c < wk->release + G + 4 || c + G + 5 > wk->end)
        return -1;
    size_t WL = c - wk->release - G, WR = wk->end - c - G - 1;
    return fit_joint2(wk, c, WL < W ? WL : W, WR < W ? WR : W, mo, J);
}

/* What is known of the arcs J (centred on sample c) at u samples from c. */
static void arcs_eval(const arcs *J, size_t G, double u, step_fit *f)
{
    f->tc = (double)J->c + u;
    f->wm = arc_val(J, 0, u);
    f->wp = arc_val(J, 1, u);
    /* the noise of omega^2 is 2 omega that of omega */
    double s2y = J->rss / (double)(J->m > 5 ? J->m - 5 : 1);
    double lv2 = 4 * J->level * J->level > 0 ? 4 * J->level * J->level : 1;
    f->sigma2 = s2y / lv2;
    f->var_wm = f->wm > 0 ? s2y * arc_var(J, 0, u) / (4 * f->wm * f->wm) : INFINITY;
    f->var_wp = f->wp > 0 ? s2y * arc_var(J, 1, u) / (4 * f->wp * f->wp) : INFINITY;
    double step = f->wm - f->wp;
    f->var_tc = step > 0 ? f->sigma2 * (double)(2 * G + 2) / (step * step) : INFINITY;
    double h = 0.5;
    f->slope_m = (arc_val(J, 0, u + h) - arc_val(J, 0, u - h)) / (2 * h);
    f->slope_p = (arc_val(J, 1, u + h) - arc_val(J, 1, u - h)) / (2 * h);
}

/* Fits the arcs around sample c and finds the instant u (samples from c)
 * by equal areas over the gap's samples (each standing for its sample
 * interval):
 *   sum of omega = sum of the left arc before the instant + of the right
 *                  arc after it.
 * The right-hand side is piecewise linear in u; of its crossings the one
 * where the left arc lies above the right is the step.  Returns 0, or -1
 * when the windows leave the data or no crossing has the arcs that way. */
static int fit_arcs(const walk *wk, size_t c, size_t W, moments *mo, step_fit *f)
{
    enum { GMAX = 512 };
    size_t G = wk->G;
    arcs J;
    if (G > GMAX || fit_arcs_at(wk, c, W, mo, &J) != 0)
        return -1;
    double D[2 * GMAX + 1], rest = 0;   /* D: left minus right arc a sample */
    for (size_t i = 0; i <= 2 * G; i++) {
        size_t k = c - G + i;
        double u = (double)i - (double)G, l = arc_val(&J, 0, u), r = arc_val(&J, 1, u);
        D[i] = l - r;
        rest += wk->om[k] - r;
    }
    /* The left arc covers the samples' intervals up to the instant:
     * rest = sum over [A, u] of D, A = -G - 1/2.  Where noise leaves no
     * exact solution among the samples where the left arc lies above the
     * right (a small step beside the kink), the nearest one is taken: a
     * slot dropped there would leave only the slots whose noise moved them
     * one way, and bias the rest. */
    double acc = 0, best = NAN, best_miss = INFINITY;
    for (size_t i = 0; i <= 2 * G; i++) {
        if (D[i] > 0) {
            double frac = (rest - acc) / D[i], miss = 0;
            if (frac < 0) {
                miss = acc - rest;
                frac = 0;
            } else if (frac > 1) {
                miss = rest - acc - D[i];
                frac = 1;
            }
            double u = (double)i - (double)G - 0.5 + frac;
            if (miss < best_miss - 1e-15 ||
                (fabs(miss - best_miss) <= 1e-15 && fabs(u) < fabs(best))) {
                best_miss = miss;
                best = u;
            }
        }
        acc += D[i];
    }
    if (isnan(best))
        return -1;
    arcs_eval(&J, G, best, f);
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

/* Locates the step near sample c: re-centred on each estimate until the
 * estimate stops moving (a fifth of a sample) while lying within a tenth
 * of the gap (at least a sample) of the centre: the arcs' windows then lie
 * symmetric about the step, and the ringing, when modelled, starts at the
 * instant itself (its first half-cycle carries most of its area). */
static int locate(const walk *wk, double c, double interval, step_fit *f)
{
    size_t W = arc_window(wk, interval);   /* fit_arcs_at() cuts it at the data's ends */
    double tol = fmax(1.0, 0.1 * (double)wk->G), still = fmax(0.2, 0.05 * (double)wk->G),
           prev = NAN;
    moments mo = {.valid = 0};
    for (int it = 0; it < 12; it++) {
        if (!(c > 0))
            return -1;
        size_t ci = (size_t)llround(c);
        if (fit_arcs(wk, ci, W, &mo, f) != 0)
            return -1;
        int near = fabs(f->tc - (double)ci) <= tol;
        if (near && fabs(f->tc - c) <= still)
            return 0;
        if (fabs(f->tc - c) > interval * 0.3)
            return -1;   /* wandered off: no step near c */
        /* noise can make the estimate hop between two centres: then the
         * middle of the two is the answer */
        if (near && !isnan(prev) && fabs(f->tc - prev) <= still) {
            double mid = 0.5 * (f->tc + c);
            return fit_arcs(wk, (size_t)llround(mid), W, &mo, f);
        }
        prev = c;
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
    /* D needs its gap and window either side of the step */
    double reach = (double)(2 * wk->g + wk->w) + 2;
    int has_d = tp - reach > (double)wk->release && tp + reach < (double)wk->end &&
                d_peak(wk, tp - half, tp + half + 1, &z, &centre) == 0;
    if (has_d) {
        s->z = z;
        s->confirmed = z >= wk->conf;
        if (s->confirmed)
            s->tc = centre;   /* until the instant is located */
    }
    step_fit f;
    int found = locate(wk, s->confirmed ? centre : tp, interval, &f) == 0;
    /* Near the ends, before the ringing is taken out, re-centring can keep
     * hopping within the gap where the shortened window leaves it nothing
     * to settle on: one fit at the prediction then says whether a step is
     * there (the passes after the ringing locate it again). */
    if (!found && !has_d)
        found = fit_arcs(wk, (size_t)llround(tp), arc_window(wk, interval), NULL, &f) == 0;
    if (!found || fabs(f.tc - tp) > half + (double)wk->G)
        return;
    if (!has_d) {
        /* Within D's 6 ms of either end of the window D cannot be formed,
         * yet the arcs can (down to 4 samples past the gap): a recording
         * that stops 5 ms after a landing still shows it.  There the step
         * of the arcs against its own standard error stands in for D. */
        double se = sqrt(f.var_wm + f.var_wp);
        s->z = se > 0 && isfinite(se) ? (f.wm - f.wp) / se : 0;
        s->confirmed = s->z >= wk->conf;
    }
    s->measured = 1;
    s->tc = f.tc;
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

/* The seeds: the highest D peaks of the window that measure as steps.
 * Each block of the window offers its highest peak; the peaks are tried
 * from the highest down, so that one artefact (a spike the front end
 * left, the prism leaving the beams) cannot stop the search. */
typedef struct {
    double d;
    size_t at;
} peak;

typedef struct {
    peak *pk;       /* the blocks' peaks, highest first */
    size_t n;       /* how many */
    size_t next;    /* the first not yet tried */
} seeds;

static int cmp_peak(const void *a, const void *b)
{
    double x = ((const peak *)a)->d, y = ((const peak *)b)->d;
    return x > y ? -1 : x < y;
}

/* Ranks the blocks' peaks into sd (sd->n 0 when the window is too short
 * to hold a step); -1 when out of memory.  At most SEED_BLOCKS blocks,
 * evenly spread, are searched: a seed needs only a clear step, and only
 * the first few peaks are ever tried (seeds_next()), so a long run need
 * not have D formed over all of it (a sixth of a ten-minute run's time,
 * on one thread); a run up to 64 blocks (105 s at 10 kHz) is searched
 * whole. */
enum { SEED_BLOCK = 16384, SEED_BLOCKS = 64 };

static int seeds_rank(const walk *wk, seeds *sd)
{
    size_t ext = wk->g + wk->w, lo = wk->release + 2 * ext + wk->G + wk->W,
           hi = wk->end > 2 * ext + wk->G + wk->W ? wk->end - 2 * ext - wk->G - wk->W : 0;
    *sd = (seeds){NULL, 0, 0};
    if (hi <= lo)
        return 0;
    size_t all = (hi - lo + SEED_BLOCK - 1) / SEED_BLOCK;
    size_t nb = all < SEED_BLOCKS ? all : SEED_BLOCKS;
    double *d = malloc(SEED_BLOCK * sizeof *d);
    peak *pk = malloc(nb * sizeof *pk);
    if (!d || !pk) {
        free(d);
        free(pk);
        return -1;
    }
    for (size_t i = 0; i < nb; i++) {
        size_t a = lo + i * all / nb * SEED_BLOCK, b = a + SEED_BLOCK < hi ? a + SEED_BLOCK : hi;
        step_statistic(wk->om, wk->g, wk->w, a, b, d, NULL);
        pk[i] = (peak){-INFINITY, a};
        for (size_t k = a; k < b; k++)
            if (d[k - a] > pk[i].d)
                pk[i] = (peak){d[k - a], k};
    }
    free(d);
    qsort(pk, nb, sizeof *pk, cmp_peak);
    /* Of the peaks within a fifth of the highest, the one nearest the
     * window's middle is tried first: the walk's two ways from the seed
     * run on two threads, and a run that rolls at a steady speed has its
     * highest peak anywhere (on the bench's ten minutes, 64 % of the way
     * through: the longer way then took two thirds of the walk).  A run
     * that speeds up keeps its highest, late peak. */
    size_t mid = lo + (hi - lo) / 2, pick = 0;
    for (size_t i = 1; i < nb && pk[i].d >= 0.8 * pk[0].d; i++)
        if ((pk[i].at > mid ? pk[i].at - mid : mid - pk[i].at) <
            (pk[pick].at > mid ? pk[pick].at - mid : mid - pk[pick].at))
            pick = i;
    peak first = pk[pick];
    memmove(pk + 1, pk, pick * sizeof *pk);
    pk[0] = first;
    *sd = (seeds){pk, nb, 0};
    return 0;
}

/* The next seed, from the peaks after the last one taken; -1 when none
 * is left. */
static int seeds_next(const walk *wk, seeds *sd, slot *seed)
{
    enum { TRIES = 32 };
    for (size_t i = sd->next; i < sd->n && i < TRIES; i++) {
        size_t at = sd->pk[i].at;
        double interval = wk->delta / fmax(fabs(wk->om[at]), 1e-3) * wk->rate;
        slot s = {.k = 0};
        measure_slot(wk, (double)at - (double)wk->g, interval, &s);
        if (s.confirmed && (s.measured || i + 1 == sd->n || i + 1 == TRIES)) {
            /* the last resort: D's centre of a clear step, located again
             * once the ringing is known */
            if (!s.measured)
                s.theta = theta_at(wk, s.tc);
            *seed = s;
            sd->next = i + 1;
            return 0;
        }
    }
    sd->next = sd->n;
    return -1;
}

/* --- the phase fit -------------------------------------------------------- */

/* For slot i, a line through (k_j, theta_j - k_j delta) of the measured
 * slots within smooth_slots of it: its value at k_i, that value's
 * variance, and the mean of the slots' own variances it rests on.  Equal
 * weights: an angle's variance, sigma^2 (2G+2) omega^2 / d^2 with
 * d = (1 - r) omega, does not depend on the speed, and a weight from the
 * slot's own measured step would favour the slots whose noise happened to
 * lengthen it (and delay them).
 *
 * The sums of every slot's window come from one sliding pass
 * (phase_sums()): summing each window afresh, for every half-width tried
 * and every outlier pass, cost a tenth of a long run's time, on one
 * thread.  They are kept about the window's own centre k_i (so the
 * numbers stay small) and summed afresh every PHASE_RESYNC slots so that
 * rounding cannot build up. */
typedef struct {
    double sw, sk, sp, skk, skp, svar;
} psum;

enum { PHASE_RESYNC = 128 };

static int phase_used(const slot *s)
{
    return s->measured && s->var_theta > 0 && isfinite(s->var_theta);
}

static void psum_add(psum *q, const slot *s, long kc, double delta, double sign)
{
    if (!phase_used(s))
        return;
    double k = (double)(s->k - kc), p = s->theta - (double)s->k * delta;
    q->sw += sign;
    q->sk += sign * k;
    q->sp += sign * p;
    q->skk += sign * k * k;
    q->skp += sign * k * p;
    q->svar += sign * s->var_theta;
}

/* out[i]: the sums over slots [i - M, i + M] about k_i. */
static void phase_sums(const slot *v, size_t n, int M, double delta, psum *out)
{
    psum q = {0};
    size_t lo = 0, hi = 0;   /* the window [lo, hi) in q */
    for (size_t i = 0; i < n; i++) {
        size_t l = i > (size_t)M ? i - (size_t)M : 0;
        size_t h = i + (size_t)M + 1 < n ? i + (size_t)M + 1 : n;
        if (i % PHASE_RESYNC == 0) {
            q = (psum){0};
            for (size_t j = l; j < h; j++)
                psum_add(&q, &v[j], v[i].k, delta, 1);
        } else {
            /* move the origin from k_(i-1) to k_i, then the window */
            double d = (double)(v[i].k - v[i - 1].k);
            q.skk += -2 * d * q.sk + d * d * q.sw;
            q.sk -= d * q.sw;
            q.skp -= d * q.sp;
            for (size_t j = lo; j < l; j++)
                psum_add(&q, &v[j], v[i].k, delta, -1);
            for (size_t j = hi; j < h; j++)
                psum_add(&q, &v[j], v[i].k, delta, 1);
        }
        lo = l;
        hi = h;
        out[i] = q;
    }
}

/* The line at slot i from its window's sums; skip leaves slot i itself
 * out (for the outlier test).  -1 when fewer than two slots are at
 * hand. */
static int phase_fit(const psum *ps, const slot *v, size_t i, double delta, int skip,
                     double *phi, double *var, double *own)
{
    psum q = ps[i];
    if (skip)
        psum_add(&q, &v[i], v[i].k, delta, -1);
    if (q.sw < 1.5)
        return -1;
    double s2 = q.svar / q.sw;   /* one angle's variance, typically */
    if (own)
        *own = s2;
    double det = q.sw * q.skk - q.sk * q.sk;
    if (!(det > 1e-12 * q.sw * q.skk)) {
        *phi = q.sp / q.sw;
        *var = s2 / q.sw;
        return 0;
    }
    *phi = (q.skk * q.sp - q.sk * q.skp) / det;   /* the line's value at k_i */
    *var = s2 * q.skk / det;
    return 0;
}

enum { LOO_SAMPLE = 8192 };

/* The robust spread of the slots' leave-one-out disagreements with
 * their neighbours' line of half-width M (into r[i], NaN where none). */
static double loo_spread(const slot *v, size_t n, int M, double delta, double *r, double *tmp,
                         psum *ps)
{
    size_t cnt = 0;
    phase_sums(v, n, M, delta, ps);
    for (size_t i = 0; i < n; i++) {
        double phi, var;
        r[i] = NAN;
        if (v[i].measured && phase_fit(ps, v, i, delta, 1, &phi, &var, NULL) == 0)
            tmp[cnt++] = r[i] = v[i].theta - (double)v[i].k * delta - phi;
    }
    /* On a long run the spread from every k-th (k odd) of at most about
     * LOO_SAMPLE disagreements: its error, about 1.3 % there, is below what
     * tells one half-width from another, and the selections over all
     * 40 000 slots of a ten-minute run, eight a smoothing, were a
     * fiftieth of its processing. */
    if (cnt > 2 * LOO_SAMPLE) {
        size_t k = cnt / LOO_SAMPLE | 1, j = 0;
        for (size_t i = 0; i < cnt; i += k)
            tmp[j++] = tmp[i];
        cnt = j;
    }
    return pl_robust_sd(tmp, cnt);
}

/* The line at slot i, a slot smooth_phase() dropped, when its window of
 * half-width M holds fewer than two measured slots: the window widened
 * (2M, 4M, ...) until it holds two.  Without it the slot kept the angle
 * just dropped (on the 50 kHz foreign run the first impact, a ringing's
 * onset placed two periods late, 0.65 ms, beside three dropped
 * neighbours).  A slot never measured keeps the walk's angle instead: on
 * a slow stretch under 1/f noise the integral of omega it follows is
 * closer than a line from measured slots far off (three corpus chains
 * lost an impact to the line). */
static int phase_fit_wide(const slot *v, size_t n, size_t i, int M, double delta,
                          double *phi, double *var, double *own)
{
    for (size_t w = 2 * (size_t)(M > 0 ? M : 1); w < 2 * n; w *= 2) {
        psum q = {0};
        size_t lo = i > w ? i - w : 0, hi = i + w + 1 < n ? i + w + 1 : n;
        for (size_t j = lo; j < hi; j++)
            psum_add(&q, &v[j], v[i].k, delta, 1);
        if (q.sw >= 1.5)
            return phase_fit(&q, v, 0, delta, 0, phi, var, own);
    }
    return -1;
}

/* Smooths every slot's angle through its neighbours' and drops the
 * measurements that disagree with theirs by more than 5 robust standard
 * deviations of all the slots' disagreements (a step located on a spike,
 * a ringing's onset a period off), three times over: the slots' own error
 * estimates leave out what the model misses, so the scatter is measured. */
static void smooth_phase(slot *v, size_t n, int M, double delta,
                         double *theta_s, double *var_s)
{
    double *r = malloc((n ? n : 1) * sizeof *r), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    double *rb = malloc((n ? n : 1) * sizeof *rb);
    psum *ps = malloc((n ? n : 1) * sizeof *ps);
    double s2 = NAN;
    /* How far to smooth: the neighbours' line must follow theta's drift
     * (1/f noise bends it within a second) yet average the slots' own
     * errors.  Of half-widths 2, 4, 8 and M the one whose line predicts
     * the slots it leaves out best is used; its disagreements stay in rb
     * for the first outlier pass, which would compute them again. */
    int best_m = M, last = 0;
    double best_sd = INFINITY;
    static const int tries[] = {2, 4, 8};
    for (size_t t = 0; r && tmp && rb && ps && t <= sizeof tries / sizeof *tries; t++) {
        int mm = t < sizeof tries / sizeof *tries ? tries[t] : M;
        if (mm > M || mm == last)
            continue;
        last = mm;
        double sd = loo_spread(v, n, mm, delta, r, tmp, ps);
        if (sd < best_sd) {
            double *x = rb;
            rb = r;
            r = x;
            best_sd = sd;
            best_m = mm;
        }
    }
    M = best_m;
    /* pass 0 starts from the best trial's disagreements, in rb */
    double sd = isfinite(best_sd) ? best_sd : NAN;
    for (int pass = 0; r && tmp && rb && ps && pass < 3; pass++) {
        size_t dropped = 0;
        if (pass > 0)
            sd = loo_spread(v, n, M, delta, rb, tmp, ps);
        if (!(sd > 0))
            break;
        s2 = sd * sd;
        for (size_t i = 0; i < n; i++)
            if (!isnan(rb[i]) && fabs(rb[i]) > 5 * sd) {
                v[i].measured = 0;
                v[i].dropped = 1;
                dropped++;
            }
        if (!dropped)
            break;
    }
    free(r);
    free(tmp);
    free(rb);
    if (ps)
        phase_sums(v, n, M, delta, ps);
    for (size_t i = 0; i < n; i++) {
        double phi, var, own;
        if (ps && phase_fit(ps, v, i, delta, 0, &phi, &var, &own) == 0) {
            theta_s[i] = phi + (double)v[i].k * delta;
            /* the line's variance from the measured scatter when known */
            var_s[i] = isnan(s2) ? var : var * s2 / fmax(own, 1e-300);
        } else if (v[i].dropped && phase_fit_wide(v, n, i, M, delta, &phi, &var, &own) == 0) {
            theta_s[i] = phi + (double)v[i].k * delta;
            var_s[i] = isnan(s2) ? var : var * s2 / fmax(own, 1e-300);
        } else {
            theta_s[i] = v[i].theta;
            var_s[i] = v[i].measured ? v[i].var_theta : INFINITY;
        }
    }
    free(ps);
}

/* --- putting it together ------------------------------------------------- */

static int cmp_slot(const void *a, const void *b)
{
    long x = ((const slot *)a)->k, y = ((const slot *)b)->k;
    return x < y ? -1 : x > y;
}

/* The contact phases between consecutive slots, as the tops see them:
 * top[i], low[i] (omega^2 there) and its variance for the interval after
 * slot i (NAN where slots i and i + 1 are not neighbours), and what
 * omega^2 gains from a top to the landing after it (A) and to the
 * landing before it (B) in the measured units, once beta is known. */
typedef struct {
    double *top, *top_var, *low, *low_var, *curv;
    double A, B;     /* NAN: no beta */
} tops;

static void tops_free(tops *t)
{
    free(t->top);
    free(t->top_var);
    free(t->low);
    free(t->low_var);
    free(t->curv);
}

/* The ratio of impact i from the tops either side (top_shift()): energy
 * along each contact phase (2.1) takes omega^2 from the top before to the
 * landing, omega^2 = low + A, and from the landing to the top after,
 * low' + B, so omega- and omega+ need no instant at all: neither the
 * decoder's rounding, nor a ringing inside the gap, nor the x^4 of the
 * arcs moves them.  Each interval's tops come from all its samples. */
static int tops_ratio(const tops *tp, size_t i, pl_impact *m)
{
    if (i == 0 || !tp->top || !isfinite(tp->A) || isnan(tp->top[i - 1]) || isnan(tp->top[i]))
        return 0;
    double wm2 = tp->low[i - 1] + tp->A, wp2 = tp->low[i] + tp->B;
    if (!(wm2 > 0) || !(wp2 > 0) || !isfinite(tp->low_var[i - 1]) ||
        !isfinite(tp->low_var[i]))
        return 0;
    m->omega_minus = sqrt(wm2);
    m->omega_plus = sqrt(wp2);
    m->ratio = m->omega_plus / m->omega_minus;
    m->ratio_se = 0.5 * m->ratio *
                  sqrt(tp->low_var[i] / (wp2 * wp2) + tp->low_var[i - 1] / (wm2 * wm2));
    return 1;
}

/* The impact of slot i at its smoothed angle: the arcs there, the ratio
 * and its standard error (the arcs' own and the instant's share through
 * the kink). */
static int evaluate(const walk *wk, const slot *s, double th, double var_th,
                    double interval, const tops *tp, size_t i, pl_impact *m)
{
    double from = s->tc - interval;
    double tc = time_of_theta(wk, th, from > 0 ? (size_t)from : 0, 1);
    if (isnan(tc))
        return -1;
    m->confirmed = s->confirmed;
    m->interval_s = NAN;
    if (tops_ratio(tp, i, m)) {
        /* the time's variance through the mean speed of the tops' arcs */
        double om = 0.5 * (m->omega_minus + m->omega_plus);   /* rad/s */
        m->t_s = tc / wk->rate;
        m->t_sd_s = sqrt(var_th / (om * om));
        return 0;
    }
    step_fit f;
    arcs J;
    size_t W = arc_window(wk, interval), c = (size_t)llround(tc);
    if (fit_arcs_at(wk, c, W, NULL, &J) != 0)
        return -1;
    arcs_eval(&J, wk->G, tc - (double)c, &f);
    double wm = f.wm, wp = f.wp;
    /* omega in rad per sample: var_tc in samples^2, as dr_du wants */
    double om = fabs(0.5 * (wm + wp)) > 0 ? 0.5 * (wm + wp) / wk->rate : 1e-12;
    double var_tc = var_th / (om * om);
    m->t_s = tc / wk->rate;
    m->t_sd_s = sqrt(var_tc) / wk->rate;
    m->omega_minus = wm;
    m->omega_plus = wp;
    m->ratio = wp / wm;
    double dr_du = (f.slope_p - m->ratio * f.slope_m) / wm;
    m->ratio_se = sqrt((f.var_wp + m->ratio * m->ratio * f.var_wm) / (wm * wm) +
                       dr_du * dr_du * var_tc);
    return 0;
}

static size_t samples(double s, double rate, size_t min)
{
    size_t k = (size_t)llround(s * rate);
    return k < min ? min : k;
}

/* --- ringing -------------------------------------------------------------- */

/* The run's ringing, if it rings.  The residuals after every measured
 * impact (up to 4000, evenly spread) about its right arc, with the ringing
 * already taken out put back, divided by the impact's step and stacked on
 * a grid aligned at the instants, are fitted by a decaying sinusoid over a
 * grid of frequencies (300 Hz to the lower of 20 kHz and 0.45 of the rate)
 * and decay times (0.2 to 10 ms), coarse then fine.  It is kept when it
 * explains 30 times the stack's noise (from the same stack before the
 * impacts).  Then each impact's own ringing gives its onset and size
 * (ring_onsets()), and the ringing is subtracted from the detection
 * signal in place. */
enum { RING_MAX_SLOTS = 4000, PL_RING_PASSES = 1 };

/* buf[j] = amp x the shape rg at sample k0 + j of a ringing placed at t
 * (samples), j < n: one exponential and one sine a call, the rest by
 * rotation, since these loops run over every impact several times. */
static void ring_fill(const ringing *rg, double amp, double t, size_t k0, size_t n,
                      double *buf)
{
    double on = t + rg->onset;
    size_t j = 0;
    for (; j < n && (double)(k0 + j) < on; j++)
        buf[j] = 0;
    if (j == n || rg->w <= 0 || amp == 0) {
        for (; j < n; j++)
            buf[j] = 0;
        return;
    }
    double s0 = (double)(k0 + j) - on, e = exp(-s0 / rg->tau);
    double re = e * cos(rg->w * s0), im = e * sin(rg->w * s0);
    double q = exp(-1.0 / rg->tau), cr = q * cos(rg->w), ci = q * sin(rg->w);
    for (; j < n; j++) {
        buf[j] = amp * (rg->a * im + rg->b * re);
        double nr = re * cr - im * ci;
        im = re * ci + im * cr;
        re = nr;
    }
}

/* Adds sign x the ringing recorded in each slot to the signal. */
static void ring_apply(walk *wk, const slot *v, size_t m, double sign)
{
    enum { CHUNK = 256 };
    double buf[CHUNK];
    for (size_t i = 0; i < m; i++) {
        if (v[i].ring_amp == 0)
            continue;
        double t0 = v[i].ring_t + wk->ring.onset;
        size_t k0 = t0 > 0 ? (size_t)ceil(t0) : 0, k1 = k0 + (size_t)(8 * wk->ring.tau) + 1;
        if (k1 > wk->end)
            k1 = wk->end;
        for (size_t a = k0; a < k1; a += CHUNK) {
            size_t n = k1 - a < CHUNK ? k1 - a : CHUNK;
            ring_fill(&wk->ring, v[i].ring_amp, v[i].ring_t, a, n, buf);
            for (size_t j = 0; j < n; j++)
                wk->om[a + j] += sign * buf[j];
        }
    }
}

/* The ringing slot s had taken out (shape old), at samples k0 .. k0+n-1. */
static void ring_taken_fill(const ringing *old, const slot *s, size_t k0, size_t n,
                            double *buf)
{
    ring_fill(old, s->ring_amp, s->ring_t, k0, n, buf);
}

/* The arcs of windows L about the sample c nearest instant tc; -1 when
 * they do not fit in the run or cannot be fitted. */
static int joint_at(const walk *wk, double tc, size_t L, arcs *J, size_t *c)
{
    *c = (size_t)llround(tc);
    if (*c < wk->release + wk->G + L + 1 || *c + wk->G + L + 2 > wk->end)
        return -1;
    return fit_joint(wk, *c, L, J);
}

/* One stacked slot: its arcs, where the instant lies in its centre
 * sample, and its step; -1 when it cannot be used. */
static int stack_slot(const walk *wk, const slot *s, size_t L, arcs *J, size_t *c,
                      double *frac, double *d)
{
    if (!s->measured || joint_at(wk, s->tc, L, J, c) != 0)
        return -1;
    *frac = s->tc - (double)*c;
    *d = arc_val(J, 0, *frac) - arc_val(J, 1, *frac);
    return *d > 0 ? 0 : -1;
}

/* Where slot i's ringing is fitted: from the end of its gap to the
 * next slot's gap (at most the arcs' longest window).  -1 when that
 * leaves too little to fit. */
static int ring_window(const walk *wk, const slot *v, size_t m, size_t i, size_t *k0,
                       size_t *n)
{
    double start = ceil(v[i].tc) + (double)wk->G + 1;
    double stop = fmin(start + (double)wk->W, (double)wk->end);
    if (i + 1 < m)
        stop = fmin(stop, floor(v[i + 1].tc) - (double)wk->G);
    if (!(start > (double)wk->release) || stop - start < 12)
        return -1;
    *k0 = (size_t)start;
    *n = (size_t)(stop - start);
    return 0;
}

/* The right arc and the ringing fitted together on samples k0 .. k0+n-1
 * of the signal with the ringing taken out so far (old, slot s) put
 * back: a cubic in time plus a decaying sine and cosine (w rad/sample,
 * tau samples) from k0.  Fitting the arc alone first and the ringing to
 * what it leaves lets the arc soak up part of the ringing, which bent the
 * frequency by up to 1 % and the onsets by tens of microseconds.  ab[]
 * receives the sine's and cosine's coefficients, *se_amp (when not NULL)
 * the standard error of their amplitude.  Returns the residual sum of
 * squares, INFINITY when the fit fails.  The cubic's own block of the
 * normal equations depends on n alone (wk->powsum): it runs on every
 * impact, up to a tenth of a long run's time, and summing only the
 * columns that involve the data and the sinusoid halves it. */
enum { RJ = 6 };

static double ring_joint(const walk *wk, const ringing *old, const slot *s, double w,
                         double tau, size_t k0, size_t n, double ab[2], double *se_amp)
{
    double *taken = wk->scratch;
    double A[RJ * RJ], r[RJ] = {0}, yy = 0;
    double ps[4] = {0}, pc[4] = {0}, ss = 0, sc = 0, cc = 0;
    ring_taken_fill(old, s, k0, n, taken);
    /* the decaying sine and cosine from k0, by rotation as in ring_fill() */
    double im = 0, re = 1, q = exp(-1.0 / tau), cr = q * cos(w), ci = q * sin(w);
    double inv_n = 1.0 / (double)n;
    for (size_t j = 0; j < n; j++) {
        double x = (double)j * inv_n, x2 = x * x, x3 = x2 * x;
        double y = wk->om[k0 + j] + taken[j], bs = im, bc = re;
        r[0] += y;
        r[1] += x * y;
        r[2] += x2 * y;
        r[3] += x3 * y;
        r[4] += bs * y;
        r[5] += bc * y;
        ps[0] += bs;
        ps[1] += x * bs;
        ps[2] += x2 * bs;
        ps[3] += x3 * bs;
        pc[0] += bc;
        pc[1] += x * bc;
        pc[2] += x2 * bc;
        pc[3] += x3 * bc;
        ss += bs * bs;
        sc += bs * bc;
        cc += bc * bc;
        yy += y * y;
        double nr = re * cr - im * ci;
        im = re * ci + im * cr;
        re = nr;
    }
    const double *P = wk->powsum + n * RJ_POW;
    for (int p = 0; p < 4; p++) {
        for (int k = 0; k < 4; k++)
            A[p * RJ + k] = P[p + k];
        A[p * RJ + 4] = A[4 * RJ + p] = ps[p];
        A[p * RJ + 5] = A[5 * RJ + p] = pc[p];
    }
    A[4 * RJ + 4] = ss;
    A[4 * RJ + 5] = A[5 * RJ + 4] = sc;
    A[5 * RJ + 5] = cc;
    double c[RJ];
    if (chol_factor(A, RJ) != 0)
        return INFINITY;
    chol_solve_n(A, RJ, r, c);
    double bxy = 0;
    for (int p = 0; p < RJ; p++)
        bxy += c[p] * r[p];
    double rss = fmax(0, yy - bxy);
    ab[0] = c[4];
    ab[1] = c[5];
    if (se_amp) {
        /* the amplitude's variance from the two coefficients' (their
         * covariance neglected: the sine and cosine are nearly orthogonal
         * over several cycles) */
        double s2 = rss / (double)(n > RJ ? n - RJ : 1), amp = hypot(c[4], c[5]);
        /* the last two diagonal elements of A^-1 = L^-T L^-1 from the
         * factor's corner: L^-1's last two rows are short */
        double l44 = A[4 * RJ + 4], l54 = A[5 * RJ + 4], l55 = A[5 * RJ + 5];
        double u = l54 / (l44 * l55);
        double var[2] = {s2 * (1 / (l44 * l44) + u * u), s2 / (l55 * l55)};
        *se_amp = amp > 0 ? sqrt((c[4] * c[4] * var[0] + c[5] * c[5] * var[1])) / amp
                          : sqrt(0.5 * (var[0] + var[1]));
    }
    return rss;
}

/* The ringing's frequency and decay refined from the slots themselves:
 * the sum over up to RING_REFINE_SLOTS slots (evenly spread) of
 * ring_joint()'s residuals, minimised over (f, log tau) by GSL's simplex
 * from the stack's estimate - each slot keeping its own arc, amplitude
 * and phase (variable projection).  The stack divides by each step and
 * fits the ringing to what the arcs leave, and its frequency came out
 * 8-33 Hz off on the foreign runs, enough to move an onset read from the
 * phase 10 ms later by 0.01-0.02 ms. */
enum { RING_REFINE_SLOTS = 100 };
#define RING_TAU_MIN_S 0.2e-3
#define RING_TAU_MAX_S 10e-3

typedef struct {
    const walk *wk;
    const ringing *old;
    const slot *v;
    size_t m, stride;
    double w0, tau0, tau_lo, tau_hi;
} refine_ctx;

static double refine_cost(const gsl_vector *x, void *p)
{
    const refine_ctx *c = p;
    double w = c->w0 * (1 + 1e-3 * gsl_vector_get(x, 0)), tau = c->tau0 * exp(0.1 * gsl_vector_get(x, 1));
    double sum = 0, ab[2];
    if (!(w > 0.9 * c->w0 && w < 1.1 * c->w0 && w < M_PI) || !(tau > c->tau_lo && tau < c->tau_hi))
        return DBL_MAX;   /* outside: the simplex needs a finite value */
    for (size_t i = 0; i < c->m; i += c->stride) {
        size_t k0, n;
        if (!c->v[i].measured || ring_window(c->wk, c->v, c->m, i, &k0, &n) != 0)
            continue;
        double r = ring_joint(c->wk, c->old, &c->v[i], w, tau, k0, n, ab, NULL);
        if (isfinite(r))
            sum += r;
    }
    return sum;
}

static void ring_refine(const walk *wk, const ringing *old, const slot *v, size_t m,
                        ringing *rg)
{
    refine_ctx c = {wk, old, v, m, m > RING_REFINE_SLOTS ? m / RING_REFINE_SLOTS : 1,
                    rg->w, rg->tau, RING_TAU_MIN_S * wk->rate, RING_TAU_MAX_S * wk->rate};
    c.tau0 = fmin(fmax(c.tau0, 1.05 * c.tau_lo), 0.95 * c.tau_hi);
    gsl_multimin_function fn = {refine_cost, 2, &c};
    gsl_multimin_fminimizer *s = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
    gsl_vector *x = gsl_vector_calloc(2), *step = gsl_vector_alloc(2);
    if (!s || !x || !step)
        goto out;
    /* units: a thousandth of the frequency, a tenth of e in the decay */
    gsl_vector_set(step, 0, 3.0);
    gsl_vector_set(step, 1, 1.0);
    if (gsl_multimin_fminimizer_set(s, &fn, x, step) != GSL_SUCCESS)
        goto out;
    for (int it = 0; it < 200; it++) {
        if (gsl_multimin_fminimizer_iterate(s) != GSL_SUCCESS)
            break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 0.01) == GSL_SUCCESS)
            break;
    }
    if (isfinite(s->fval)) {
        double w = c.w0 * (1 + 1e-3 * gsl_vector_get(s->x, 0)), tau = c.tau0 * exp(0.1 * gsl_vector_get(s->x, 1));
        if (w > 0 && w < M_PI && tau > 1) {
            rg->w = w;
            rg->tau = tau;
        }
    }
out:
    gsl_multimin_fminimizer_free(s);
    gsl_vector_free(x);
    gsl_vector_free(step);
}

/* The residual of a cubic in time fitted to y[0..n-1], into r; -1 when
 * it cannot be fitted. */
static int cubic_residual(const double *y, size_t n, double *r)
{
    double A[16] = {0}, b[4] = {0}, c[4];
    for (size_t j = 0; j < n; j++) {
        double x = (double)j / (double)n, bs[4] = {1, x, x * x, x * x * x};
        for (int p = 0; p < 4; p++) {
            b[p] += bs[p] * y[j];
            for (int q = 0; q < 4; q++)
                A[p * 4 + q] += bs[p] * bs[q];
        }
    }
    if (chol_factor(A, 4) != 0)
        return -1;
    chol_solve_n(A, 4, b, c);
    for (size_t j = 0; j < n; j++) {
        double x = (double)j / (double)n;
        r[j] = y[j] - (c[0] + x * (c[1] + x * (c[2] + x * c[3])));
    }
    return 0;
}

/* Decay times tried, 0.2 to 10 ms in steps of 1.55. */
enum { RING_TAUS = 10, RING_DETECT_SLOTS = 200 };

typedef struct {
    size_t nfft, nb;
    double *in, *acc;        /* acc: [2][RING_TAUS][nb], after then before */
    fftw_complex *out;
    fftw_plan plan;
} matched;

/* Adds the decaying matched filter's power of r[0..n-1] for every decay
 * time and frequency bin, per unit energy of the template, to acc. */
static void matched_add(matched *mf, const double *r, size_t n, double rate, double *acc)
{
    for (int t = 0; t < RING_TAUS; t++) {
        double tau = RING_TAU_MIN_S * pow(RING_TAU_MAX_S / RING_TAU_MIN_S, t / (RING_TAUS - 1.0)) * rate;
        double q = exp(-1.0 / tau), e = 1, norm = 0;
        for (size_t j = 0; j < n; j++) {
            mf->in[j] = r[j] * e;
            norm += e * e;
            e *= q;
        }
        memset(mf->in + n, 0, (mf->nfft - n) * sizeof *mf->in);
        fftw_execute(mf->plan);
        for (size_t b = 0; b < mf->nb; b++)
            acc[(size_t)t * mf->nb + b] +=
                (mf->out[b][0] * mf->out[b][0] + mf->out[b][1] * mf->out[b][1]) / norm;
    }
}

/* Whether the impacts ring, and how: frequency and decay into rg (rg->w = 0
 * when they do not).  Each impact may ring with its own size and phase, so
 * no alignment of the impacts is needed (an earlier version stacked them at
 * their instants and missed half the rig simulator's ringing chains, whose
 * instants the unmodelled ringing itself had scattered): the power of a
 * decaying matched filter (a zero-padded FFT of the residual times
 * e^(-t/tau)) is summed over up to 200 impacts, after each impact (the
 * residual of a cubic fitted on the arc's window) and, as the reference
 * that the same noise, hum and drift fill, before it (the same length
 * backwards from the gap).  The ringing is the frequency and decay where
 * the power after the impacts stands highest above the power before, when
 * it is more than RING_DETECT_RATIO times it: for pure noise the ratio of
 * two sums of 2 x 100 squares is 1 +- 0.14.  The frequency lies between
 * 300 Hz (and two cycles of the window) and the lower of 20 kHz and 0.45
 * rate.  ring_refine() then polishes frequency and decay on the slots, and
 * the phases of the slots' own fits give the mean onset from the instants
 * (their amplitude-weighted circular mean, within half a period). */
#define RING_DETECT_RATIO 3.0

static void ring_estimate(const walk *wk, const slot *v, size_t m, ringing *rg)
{
    size_t stride = m > RING_DETECT_SLOTS ? m / RING_DETECT_SLOTS : 1, nmax = wk->W;
    size_t used = 0, nsum = 0, G = wk->G;
    *rg = (ringing){0};
    matched mf = {64, 0, NULL, NULL, NULL, NULL};
    while (mf.nfft < 2 * nmax || (double)mf.nfft < wk->rate / 20)
        mf.nfft *= 2;
    mf.nb = mf.nfft / 2 + 1;
    mf.in = fftw_alloc_real(mf.nfft);
    mf.out = fftw_alloc_complex(mf.nb);
    mf.acc = calloc(2 * RING_TAUS * mf.nb, sizeof *mf.acc);
    double *y = malloc(2 * nmax * sizeof *y), *r = y ? y + nmax : NULL;
    if (mf.in && mf.out)
        mf.plan = fftw_plan_dft_r2c_1d((int)mf.nfft, mf.in, mf.out, FFTW_ESTIMATE);
    if (!mf.plan || !mf.acc || !y)
        goto out;
    for (size_t i = 0; i < m; i += stride) {
        size_t k0, n;
        if (!v[i].measured || ring_window(wk, v, m, i, &k0, &n) != 0)
            continue;
        double near = floor(v[i].tc) - (double)G - 1;
        double far = i > 0 ? ceil(v[i - 1].tc) + (double)G : (double)wk->release;
        if (near - far < (double)n)
            continue;
        for (int side = 0; side < 2; side++) {
            for (size_t j = 0; j < n; j++)
                y[j] = side ? wk->om[(size_t)near - j] : wk->om[k0 + j];
            if (cubic_residual(y, n, r) != 0)
                break;
            matched_add(&mf, r, n, wk->rate, mf.acc + (size_t)side * RING_TAUS * mf.nb);
        }
        used++;
        nsum += n;
    }
    if (used < 8)
        goto out;
    double lo = fmax(300, 2 * wk->rate * (double)used / (double)nsum),
           hi = fmin(20000, 0.45 * wk->rate), best = 0, bf = 0, btau = 0;
    for (int t = 0; t < RING_TAUS; t++)
        for (size_t b = 0; b < mf.nb; b++) {
            double f = (double)b * wk->rate / (double)mf.nfft;
            double after = mf.acc[(size_t)t * mf.nb + b],
                   before = mf.acc[(size_t)(RING_TAUS + t) * mf.nb + b];
            if (f < lo || f > hi || !(after > RING_DETECT_RATIO * before) || after - before <= best)
                continue;
            best = after - before;
            bf = f;
            btau = RING_TAU_MIN_S * pow(RING_TAU_MAX_S / RING_TAU_MIN_S, t / (RING_TAUS - 1.0));
        }
    if (!(best > 0))
        goto out;
    rg->w = 2 * M_PI * bf / wk->rate;
    rg->tau = btau * wk->rate;
    ring_refine(wk, &wk->ring, v, m, rg);
    /* the mean onset from the instants: a sine from rest at k0 - phi / w */
    double sx = 0, sy = 0;
    for (size_t i = 0; i < m; i += stride) {
        size_t k0, n;
        double ab[2];
        if (!v[i].measured || ring_window(wk, v, m, i, &k0, &n) != 0 ||
            !isfinite(ring_joint(wk, &wk->ring, &v[i], rg->w, rg->tau, k0, n, ab, NULL)))
            continue;
        double A = hypot(ab[0], ab[1]), ang = rg->w * ((double)k0 - v[i].tc) - atan2(ab[1], ab[0]);
        sx += A * cos(ang);
        sy += A * sin(ang);
    }
    rg->onset = atan2(sy, sx) / rg->w;
    rg->a = 1;
    rg->b = 0;
out:
    if (mf.plan)
        fftw_destroy_plan(mf.plan);
    fftw_free(mf.in);
    fftw_free(mf.out);
    free(mf.acc);
    free(y);
}

/* Which cycle the ringing starts on: the phase fixes the onset only to
 * a period.  Two periods either side are tried: the step and the ringing
 * from each candidate onset (the ringing the same in the tail) against
 * the samples around them, the best fit wins.  amp is the sine's size
 * at the candidate onset. */
static double ring_cycle(const walk *wk, const arcs *J, const slot *s, const ringing *old,
                         double onset, double amp, double w, double tau)
{
    double T = 2 * M_PI / w, best = onset, best_rss = INFINITY;
    double lo = onset - 2.5 * T, hi = onset + 2.5 * T;
    if (lo < (double)wk->release + 1 || hi + 1 >= (double)wk->end)
        return onset;
    size_t k0 = (size_t)ceil(lo), n = (size_t)floor(hi) - k0 + 1;
    if (n > wk->W)
        return onset;
    double *taken = wk->scratch, *left = taken + n, *right = left + n, *ring = right + n;
    ring_taken_fill(old, s, k0, n, taken);
    for (size_t j = 0; j < n; j++) {
        double u = (double)(k0 + j) - (double)J->c;
        left[j] = arc_val(J, 0, u);
        right[j] = arc_val(J, 1, u);
    }
    ringing sine = {w, tau, 1, 0, 0};
    for (int c = -2; c <= 2; c++) {
        double t0 = onset + c * T, A = amp * exp(-(t0 - onset) / tau), rss = 0;
        ring_fill(&sine, A, t0, k0, n, ring);
        for (size_t j = 0; j < n; j++) {
            double model = (double)(k0 + j) < t0 ? left[j] : right[j] + ring[j];
            double r = wk->om[k0 + j] + taken[j] - model;
            rss += r * r;
        }
        if (rss < best_rss) {
            best_rss = rss;
            best = t0;
        }
    }
    return best;
}

/* Each slot's own ringing, and its instant from it.  The residual after
 * the right arc (with what was taken out before put back) is fitted by
 * the run's decaying sinusoid with its own amplitude and phase; the phase,
 * read as a sine from rest, puts the slot's onset within half a period of
 * the run's mean onset (rg->onset from the instant so far): the run's
 * stack settles which cycle, the slot's own many cycles settle where in
 * it.  Where the ringing stands five standard errors clear of the noise
 * the onset becomes the slot's instant - the gap's equal areas cannot see
 * an impact whose ringing hides its step.  The template is kept as a sine
 * from the onset (rg->onset 0, a 1, b 0). */
typedef struct {
    const ringing *old, *rg;
    slot *v;
    size_t m;
} onsets_ctx;

static void onsets_range(walk *wk, size_t a, size_t b, void *p)
{
    const onsets_ctx *x = p;
    const ringing *old = x->old, *rg = x->rg;
    slot *v = x->v;
    size_t m = x->m;
    double w = rg->w, tau = rg->tau, T = 2 * M_PI / w;
    for (size_t i = a; i < b; i++) {
        size_t c, k0, n;
        arcs J;
        double ab[2], se_a;
        v[i].next_amp = 0;
        v[i].next_t = v[i].tc;
        if (joint_at(wk, v[i].tc, wk->W, &J, &c) != 0 || ring_window(wk, v, m, i, &k0, &n) != 0 ||
            !isfinite(ring_joint(wk, old, &v[i], w, tau, k0, n, ab, &se_a)))
            continue;
        /* A e^(-(t-k0)/tau) sin(w (t - k0) + phi): a sine from rest at
         * k0 - phi / w, to a period; the one nearest the run's mean onset */
        double A = hypot(ab[0], ab[1]), phi = atan2(ab[1], ab[0]);
        double u0 = v[i].tc - (double)c;
        v[i].step = arc_val(&J, 0, u0) - arc_val(&J, 1, u0);
        double tref = v[i].tc + rg->onset, onset = (double)k0 - phi / w;
        onset += T * round((tref - onset) / T);
        onset = ring_cycle(wk, &J, &v[i], old, onset, A * exp(((double)k0 - onset) / tau), w, tau);
        double amp = A * exp(((double)k0 - onset) / tau);
        v[i].next_t = onset;
        v[i].next_amp = amp;
        if (A > 5 * se_a) {
            double dt = se_a / (A * w);                /* onset's, samples */
            double om = J.level;
            v[i].tc = onset;
            v[i].theta = theta_at(wk, onset);
            v[i].var_theta = dt * dt * om * om / (wk->rate * wk->rate);
            v[i].measured = 1;
        }
    }
}

static void ring_onsets(const walk *wk, const ringing *old, slot *v, size_t m,
                        ringing *rg)
{
    onsets_ctx x = {old, rg, v, m};
    for_slots(wk, m, onsets_range, &x);
    rg->onset = 0;
    rg->a = 1;
    rg->b = 0;
}

/* How wide the transition really is.  The gap left out of the arc fits
 * must hold an impact's transition (the decoder's response, the impact's
 * own duration), but every sample more in it costs precision, and with
 * ringing the first cycles - most of its area - are then unseen and must
 * be extrapolated.  The residuals about the step model (left arc before
 * the instant, right arc after, the ringing taken out), divided by the step and
 * stacked about the instants, show the transition as the stretch where
 * they stand out of the stack's own noise (from the arcs' windows): the
 * gap becomes that half-width plus two samples, at least three, at most
 * the configured one.  Returns the new gap in samples. */
static size_t transition_gap(const walk *wk, const slot *v, size_t m)
{
    enum { GMAX = 512 };
    size_t G = wk->G, L = wk->W, stride = m > RING_MAX_SLOTS ? m / RING_MAX_SLOTS : 1, cnt = 0;
    if (G > GMAX)
        return G;
    double e[2 * GMAX + 2] = {0}, pre = 0, pre2 = 0;
    size_t npre = 0;
    for (size_t i = 0; i < m; i += stride) {
        arcs J;
        size_t c;
        double frac, d;
        if (stack_slot(wk, &v[i], L, &J, &c, &frac, &d) != 0)
            continue;
        for (size_t j = 0; j <= 2 * G; j++) {
            size_t k = c - G + j;
            double t = (double)j - (double)G, u = t - frac;
            double model = u < 0 ? arc_val(&J, 0, t) : arc_val(&J, 1, t);
            double x = u + (double)G, r = (wk->om[k] - model) / d;
            if (!(x >= 0))   /* before the cast: a negative double to size_t is UB */
                continue;
            size_t b = (size_t)floor(x);
            double w = x - (double)b;
            if (b + 1 <= 2 * G + 1) {
                e[b] += (1 - w) * r;
                e[b + 1] += w * r;
            }
        }
        for (size_t j = 0; j < L / 2; j++) {
            double t = -(double)(G + L / 2) + (double)j;
            double r = (wk->om[c - G - L / 2 + j] - arc_val(&J, 0, t)) / d;
            pre += r;
            pre2 += r * r;
            npre++;
        }
        cnt++;
    }
    if (cnt < 16 || npre < 2)
        return G;
    /* the stack's noise: one residual's spread over the count stacked */
    double mean = pre / (double)npre, sd = sqrt(fmax(0, pre2 / (double)npre - mean * mean));
    double thr = fmax(0.08, 4 * sd / sqrt((double)cnt));
    size_t width = 0;
    for (size_t b = 0; b <= 2 * G + 1; b++)
        if (fabs(e[b] / (double)cnt) > thr) {
            size_t off = b > G ? b - G : G - b;
            width = off > width ? off : width;
        }
    size_t g = width + 2;
    return g < 3 ? 3 : g > G ? G : g;
}

/* Locates every measured slot again (after the ringing is known), from
 * its instant so far. */
typedef struct {
    slot *v;
    const double *tc;   /* the instants before the pass: neighbours read these */
    size_t m;
} remeasure_ctx;

static void remeasure_range(walk *wk, size_t a, size_t b, void *p)
{
    const remeasure_ctx *x = p;
    slot *v = x->v;
    const double *tc = x->tc;
    size_t m = x->m;
    for (size_t i = a; i < b; i++) {
        if (!v[i].measured)
            continue;
        double prev = i > 0 ? tc[i] - tc[i - 1] : (i + 1 < m ? tc[i + 1] - tc[i] : wk->W);
        double next = i + 1 < m ? tc[i + 1] - tc[i] : prev;
        step_fit f;
        if (locate(wk, tc[i], fmin(prev, next), &f) != 0 ||
            fabs(f.tc - tc[i]) > 2.0 * (double)wk->G) {
            v[i].measured = 0;
            continue;
        }
        double om = 0.5 * (f.wm + f.wp);
        v[i].tc = f.tc;
        v[i].theta = theta_at(wk, f.tc);
        v[i].var_theta = f.var_tc * om * om;
    }
}

static void remeasure(const walk *wk, slot *v, size_t m)
{
    double *tc = malloc((m ? m : 1) * sizeof *tc);
    if (!tc)
        return;   /* the instants stay as they are */
    for (size_t i = 0; i < m; i++)
        tc[i] = v[i].tc;
    remeasure_ctx x = {v, tc, m};
    for_slots(wk, m, remeasure_range, &x);
    free(tc);
}

/* --- putting it together ------------------------------------------------- */

/* The slots from the seed both ways, in order, less the trailing ones
 * that show no step: every slot between the release and the last
 * confirmed one is an impact (the prism turned through it); after the
 * last confirmed slot the data may have ended (the prism left the beams,
 * the run was cut), so a slot there needs some evidence of its own. */
typedef struct {
    const walk *wk;
    const slot *seed;
    slots out;
    int rc;
} half_walk;

static void *walk_up(void *p)
{
    half_walk *h = p;
    h->rc = walk_dir(h->wk, h->seed, 1, &h->out);
    return NULL;
}

/* The walk both ways from the seed.  Each way depends only on the seed
 * and the signal, so with more than one thread the way up runs beside
 * the way down (the same slots on any count). */
static int walk_all(const walk *wk, const slot *seed, double conf, slots *sl,
                    size_t *m)
{
    half_walk up = {wk, seed, {0}, 0};
    pthread_t tid;
    int par = wk->threads != 1 && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
              pthread_create(&tid, NULL, walk_up, &up) == 0;
    int rc = push(sl, *seed) != 0 || walk_dir(wk, seed, -1, sl) != 0;
    if (par)
        pthread_join(tid, NULL);
    else
        walk_up(&up);
    for (size_t i = 0; rc == 0 && up.rc == 0 && i < up.out.n; i++)
        rc = push(sl, up.out.v[i]);
    free(up.out.v);
    if (rc != 0 || up.rc != 0)
        return -1;
    qsort(sl->v, sl->n, sizeof *sl->v, cmp_slot);
    size_t b = sl->n;
    while (b > 0 && !sl->v[b - 1].confirmed &&
           !(sl->v[b - 1].measured && sl->v[b - 1].z >= 0.5 * conf))
        b--;
    *m = b;
    return 0;
}

/* The impacts of the smoothed slots, and the figures of the walk. */
typedef struct {
    const slot *v;
    size_t m;
    const double *ths, *vars;
    const tops *tp;
    pl_impact *imp;     /* imp[i] for slot i */
    char *ok;
} collect_ctx;

static void evaluate_range(walk *wk, size_t a, size_t b, void *p)
{
    const collect_ctx *x = p;
    const slot *v = x->v;
    size_t m = x->m;
    for (size_t i = a; i < b; i++) {
        double prev = i > 0 ? v[i].tc - v[i - 1].tc : (i + 1 < m ? v[i + 1].tc - v[i].tc : wk->W);
        double next = i + 1 < m ? v[i + 1].tc - v[i].tc : prev;
        x->ok[i] = evaluate(wk, &v[i], x->ths[i], x->vars[i], fmin(prev, next), x->tp, i,
                            &x->imp[i]) == 0;
    }
}

static size_t collect(const walk *wk, const slot *v, size_t m, const double *ths,
                      const double *vars, const slot *seed, const tops *tp, pl_impact *imp,
                      pl_lattice_stats *st)
{
    size_t k = 0, nss = 0;
    double ss = 0, phase0 = seed->theta - (double)seed->k * wk->delta;
    char *ok = calloc(m ? m : 1, 1);
    if (!ok)
        return 0;
    collect_ctx x = {v, m, ths, vars, tp, imp, ok};
    for_slots(wk, m, evaluate_range, &x);
    for (size_t i = 0; i < m; i++) {
        st->confirmed += v[i].confirmed;
        st->drift_rad = fmax(st->drift_rad, fabs(ths[i] - (double)v[i].k * wk->delta - phase0));
        if (v[i].measured) {
            ss += (v[i].theta - ths[i]) * (v[i].theta - ths[i]);
            nss++;
        }
        if (ok[i])
            imp[k++] = imp[i];
    }
    free(ok);
    st->expected = m;
    st->phase_sd_rad = nss > 1 ? sqrt(ss / (double)(nss - 1)) : NAN;
    for (size_t i = 0; i + 1 < k; i++)
        imp[i].interval_s = imp[i + 1].t_s - imp[i].t_s;
    return k;
}

/* A ringing's onset is known to a period from its phase; which period
 * was chosen slot by slot from the fit around it, and noise can tip that
 * choice.  The lattice knows better: each measured onset moves by whole
 * periods to the one nearest its neighbours' line.  Returns how many
 * moved. */
static size_t snap_cycles(const walk *wk, slot *v, size_t m, const double *ths)
{
    double T = 2 * M_PI / wk->ring.w;
    size_t moved = 0;
    for (size_t i = 0; i < m; i++) {
        if (!v[i].measured && !v[i].dropped)
            continue;
        double from = v[i].tc - 4 * T;
        double t = time_of_theta(wk, ths[i], from > 0 ? (size_t)from : 0, 1);
        if (isnan(t))
            continue;
        double k = round((t - v[i].tc) / T);
        if (k != 0) {
            v[i].tc += k * T;
            v[i].theta = theta_at(wk, v[i].tc);
            moved++;
            /* a slot dropped for lying whole periods off is measured
             * again once snapped; the smoothing that follows drops it
             * once more if it still disagrees */
            if (v[i].dropped) {
                v[i].measured = 1;
                v[i].dropped = 0;
            }
        }
    }
    return moved;
}


/* --- the arcs' tops ------------------------------------------------------ */

/* The angle at which omega^2(theta) over samples [a, b) is least: the
 * contact phase's top, where the centre passes over the pivot.  (2.1)
 * makes omega^2 = C - 2 K cos psi, a parabola in theta to a part in a
 * thousand and symmetric about the top whatever is left; fitted on the
 * whole interval between two gaps.  NAN when it cannot be fitted or has
 * no minimum inside. */
static double arc_top(const walk *wk, size_t a, size_t b, double *top_var, double *low,
                      double *low_var, double *curv, double *raw)
{
    *raw = NAN;
    if (b <= a + 8 || b > wk->end)
        return NAN;
    double tm = 0.5 * (wk->theta[a] + wk->theta[b - 1]), S[5] = {0}, Y[3] = {0}, c[3], yy = 0;
    for (size_t k = a; k < b; k++) {
        double x = wk->theta[k] - tm, y = wk->om[k] * wk->om[k], x2 = x * x;
        S[0] += 1;
        S[1] += x;
        S[2] += x2;
        S[3] += x2 * x;
        S[4] += x2 * x2;
        Y[0] += y;
        Y[1] += y * x;
        Y[2] += y * x2;
        yy += y * y;
    }
    double A[9] = {S[0], S[1], S[2], S[1], S[2], S[3], S[2], S[3], S[4]};
    if (chol_factor(A, 3) != 0)
        return NAN;
    chol_solve_n(A, 3, Y, c);
    /* *raw: the vertex whichever way the parabola opens, its sign in
     * *curv (top_between() reads a peak as the landing it straddles) */
    *curv = c[2];
    if (c[2] != 0)
        *raw = tm - c[1] / (2 * c[2]);
    if (!(c[2] > 0))
        return NAN;
    double top = tm - c[1] / (2 * c[2]);
    *low = c[0] - c[1] * c[1] / (4 * c[2]);
    *curv = c[2];
    /* the minimum's variance: its gradient through (X'X)^-1, times the
     * residual variance of omega^2 */
    double g[3] = {1, -c[1] / (2 * c[2]), c[1] * c[1] / (4 * c[2] * c[2])};
    double rss = fmax(0, yy - (c[0] * Y[0] + c[1] * Y[1] + c[2] * Y[2])), s2 = rss / (S[0] - 3);
    *low_var = s2 * chol_quad(A, 3, g);
    double gt[3] = {0, -1 / (2 * c[2]), c[1] / (2 * c[2] * c[2])};   /* the top's */
    *top_var = s2 * chol_quad(A, 3, gt);
    return top > wk->theta[a] && top < wk->theta[b - 1] ? top : NAN;
}

/* The ramp's slope and the run's ratio from the tops alone, without any
 * instant.  Over a contact phase omega^2 = w^2 + K (1 - cos psi), psi the
 * angle from the top (2.1); an impact at psi = pi/N + beta multiplies
 * omega by r and the next phase starts at psi = -(pi/N - beta), so the
 * tops' squared speeds follow
 *   w'^2 = r^2 w^2 + K [(r^2 - 1)(1 - cos(pi/N) cos beta)
 *                       + (r^2 + 1) sin(pi/N) sin beta]:
 * a line through the pairs of consecutive tops gives r^2 as its slope and
 * beta from its intercept, K from the parabolas' curvature (c = K / 2 in
 * the measured angle whatever the calibration's scale; the intercept is
 * in the scale's square).  The line needs r the same at every impact,
 * which both of the paper's laws give, and tops spread over a range of
 * speeds, which the run's acceleration gives.  Returns 0 with *beta, its
 * standard error and r, or -1 when fewer than 8 pairs or no spread. */
typedef struct {
    double beta, beta_se, r, r_se;
    double w2;      /* mean omega^2 at the tops */
} energy;

static int energy_fit(const double *top, const double *low, size_t m, double K,
                      double delta, double scale, energy *e)
{
    double n = 0, mx = 0, my = 0;
    for (size_t i = 1; i < m; i++)
        if (!isnan(top[i - 1]) && !isnan(top[i])) {
            n += 1;
            mx += low[i - 1];
            my += low[i];
        }
    if (n < 8)
        return -1;
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0;
    for (size_t i = 1; i < m; i++)
        if (!isnan(top[i - 1]) && !isnan(top[i])) {
            sxx += (low[i - 1] - mx) * (low[i - 1] - mx);
            sxy += (low[i - 1] - mx) * (low[i] - my);
        }
    if (!(sxx > 0))
        return -1;
    double sl = sxy / sxx, ic = my - sl * mx, rss = 0;
    for (size_t i = 1; i < m; i++)
        if (!isnan(top[i - 1]) && !isnan(top[i])) {
            double d = low[i] - ic - sl * low[i - 1];
            rss += d * d;
        }
    double s2 = rss / (n - 2), v_sl = s2 / sxx, v_ic = s2 * (1 / n + mx * mx / sxx),
           c_si = -mx * s2 / sxx;
    double a = delta / 2, c = ic / (scale * scale), b = 0, f = 0, fb = 1;
    if (!(K > 0) || !(sl > 0))
        return -1;
    for (int it = 0; it < 8; it++) {   /* Newton from a level ramp */
        f = K * ((sl - 1) * (1 - cos(a) * cos(b)) + (sl + 1) * sin(a) * sin(b)) - c;
        fb = K * ((sl - 1) * cos(a) * sin(b) + (sl + 1) * sin(a) * cos(b));
        b -= f / fb;
    }
    double fs = K * ((1 - cos(a) * cos(b)) + sin(a) * sin(b)), sc2 = scale * scale;
    /* b moves with the slope (fs) and the intercept (1 / scale^2) */
    double vb = (fs * fs * v_sl + v_ic / (sc2 * sc2) - 2 * fs * c_si / sc2) / (fb * fb);
    if (!isfinite(b) || !(vb >= 0) || fabs(b) > 0.5 * a)
        return -1;
    e->beta = b;
    e->beta_se = sqrt(vb);
    e->r = sqrt(sl);
    e->r_se = sqrt(v_sl) / (2 * e->r);
    e->w2 = mx;
    return 0;
}

/* Where the impacts lie by the contact phase's geometry, and the one
 * shift of every instant that puts them there.  Between two impacts the
 * prism turns pi/N - beta from the landing to the top and pi/N + beta
 * from the top to the next landing (seed 000 section 2), so an impact
 * lies at the mean of the tops either side plus beta, in the angle that
 * the decoder delays exactly as it delays the arcs.  The instants found
 * so far lag the impact by what the transition holds besides the rigid
 * body: a ringing's onset by its phase through the decoder and the
 * structure, which no model of the ringing knows (on the foreign runs
 * 0.55-0.87 of the decoder's delay, on the rig simulator all of it); the
 * equal areas by a ringing that dies inside the gap and by a slow
 * decoder's rounding of the kink.  The median over the slots of
 * (top-mean + beta - instant) / omega is that lag, and it moves every
 * smoothed angle (ths) by omega times it.  Returns the shift in samples
 * (0 when fewer than 8 slots have tops both sides). */
typedef struct {
    const slot *v;
    size_t m;
    tops *tp;
} tops_ctx;

/* The top of the contact phase between slots i and i + 1.  The interval
 * between their gaps holds it when the slots are in place.  Where they are
 * not - an unconfirmed stretch placed by theta, whose 1/f noise drifted
 * up to half a slot over a slow start - the interval holds a landing: the
 * top lies off its middle, or omega^2 peaks there instead (the landing
 * between two phases).  Then the window moves to centre on the top (from
 * a peak, half a slot back when the peak lies in the interval's second
 * half, which makes it slot i + 1's landing, half a slot on otherwise),
 * 0.4 of a slot either side (a phase reaches 0.5 - beta/delta of a slot
 * before its landing), until the top stops moving.  The speed's minimum
 * over a whole phase is the steadiest mark a slow run has. */
enum { TOP_RECENTRE = 4 };

/* The widest half-width smooth_tops() tries (smooth_phase() tries 2, 4
 * and 8 and keeps the best predictor). */
enum { TOPS_SMOOTH = 8 };

static double top_between(const walk *wk, const slot *v, size_t m, size_t i, double *top_var,
                          double *low, double *low_var, double *curv)
{
    double lo = ceil(v[i].tc) + (double)wk->G + 1,
           hi = i + 1 < m ? floor(v[i + 1].tc) - (double)wk->G : 0, raw = NAN;
    if (!(i + 1 < m && v[i + 1].k == v[i].k + 1 && lo > 0 && hi > lo))
        return NAN;
    double top = arc_top(wk, (size_t)lo, (size_t)hi, top_var, low, low_var, curv, &raw);
    double mid = 0.5 * (wk->theta[(size_t)lo] + wk->theta[(size_t)hi - 1]), d = wk->delta;
    if (!isnan(top) && fabs(top - mid) <= 0.15 * d)
        return top;
    if (isfinite(raw) && *curv < 0)
        raw += raw > mid ? -0.5 * d : 0.5 * d;   /* from the landing to its phase's top */
    for (int it = 0; it < TOP_RECENTRE && isfinite(raw) && fabs(raw - mid) < 0.5 * d; it++) {
        double a = time_of_theta(wk, raw - 0.4 * d, (size_t)lo > wk->W ? (size_t)lo - wk->W
                                                                       : wk->release, 1);
        double b = a > 0 ? time_of_theta(wk, raw + 0.4 * d, (size_t)a, 1) : NAN;
        if (isnan(a) || isnan(b))
            return NAN;
        double prev = raw;
        top = arc_top(wk, (size_t)ceil(a), (size_t)floor(b) + 1, top_var, low, low_var, curv,
                      &raw);
        if (isnan(top))
            return NAN;
        if (fabs(top - prev) < 0.01 * d)
            return fabs(top - mid) < 0.5 * d ? top : NAN;
    }
    return NAN;
}

/* The tops of the intervals after slots [a, b). */
static void tops_range(walk *wk, size_t a, size_t b, void *p)
{
    const tops_ctx *x = p;
    tops *tp = x->tp;
    for (size_t i = a; i < b; i++)
        tp->top[i] = top_between(wk, x->v, x->m, i, &tp->top_var[i], &tp->low[i],
                                 &tp->low_var[i], &tp->curv[i]);
}

/* The tops smoothed along their own lattice: the top after slot i lies
 * at k_i delta plus the run's phase in the true angle, as the impacts do,
 * and theta's drift bends that line only slowly, so each top joins its
 * neighbours' line through smooth_phase() (the half-width by how well the
 * line predicts the tops it leaves out, the outliers dropped, the
 * variances from the measured scatter).  Unlike the impacts' angles from
 * two tops each, which share one top with each neighbour, the tops' errors
 * are independent from phase to phase: what 1/f noise does to one arc's
 * tilt it does not do to the next.  On corpus seed 52 (195 um/s of 1/f
 * noise) the tops' leave-one-out scatter was 1.4e-3 rad with one
 * neighbour each side and 1.3e-3 with two, which is 1.2e-3 of noise in
 * every top and no bend: three times what their fits' residuals said.
 * Into st and sv (NAN and INFINITY where no top); the tops unsmoothed,
 * their variances times inflate, when memory runs out. */
static void smooth_tops(const walk *wk, const slot *v, size_t m, const tops *tp,
                        double inflate, double *st, double *sv)
{
    slot *tv = malloc((m ? m : 1) * sizeof *tv);
    for (size_t i = 0; i < m; i++) {
        double vt = inflate * tp->top_var[i];
        int ok = !isnan(tp->top[i]) && vt > 0 && isfinite(vt);
        st[i] = ok ? tp->top[i] : NAN;
        sv[i] = ok ? vt : INFINITY;
        if (tv) {
            tv[i] = v[i];
            tv[i].measured = ok;
            tv[i].theta = st[i];
            tv[i].var_theta = sv[i];
        }
    }
    if (!tv)
        return;
    smooth_phase(tv, m, TOPS_SMOOTH, wk->delta, st, sv);
    for (size_t i = 0; i < m; i++)
        if (isnan(tp->top[i])) {
            st[i] = NAN;   /* no arc there: no top to stand for the impacts beside it */
            sv[i] = INFINITY;
        }
    free(tv);
}

/* How much wider two estimates of the same angle scatter about each
 * other than their variances say: r2[0..n-1] holds d^2 / (var_a + var_b)
 * for each pair (reordered here), whose median is 0.455 (that of chi^2
 * with one degree of freedom) when the variances are right.  The median
 * over 0.455, at least 1; 1 for fewer than 8 pairs. */
static double excess_scatter(double *r2, size_t n)
{
    return n >= 8 ? fmax(1, pl_median(r2, n) / 0.455) : 1;
}

static double top_shift(const walk *wk, const slot *v, size_t m, double *ths, double *vars,
                        double beta, tops *tp, pl_lattice_stats *st)
{
    size_t sz = (m ? m : 1) * sizeof(double), n = 0;
    double *lag = malloc(sz), shift = 0;
    tp->top = malloc(sz);
    tp->low = malloc(sz);
    tp->low_var = malloc(sz);
    tp->curv = malloc(sz);
    tp->top_var = malloc(sz);
    tp->A = tp->B = NAN;
    if (!lag || !tp->top || !tp->low || !tp->low_var || !tp->curv || !tp->top_var) {
        free(lag);
        tops_free(tp);
        *tp = (tops){.A = NAN, .B = NAN};
        return 0;
    }
    double *top = tp->top;
    tops_ctx tc = {v, m, tp};
    for_slots(wk, m, tops_range, &tc);
    /* theta is measured in the calibration's units: a scale off by a per
     * cent stretches the lattice and beta alike, and the tops' spacing
     * (2 pi / N in truth) says by how much */
    double span = 0, K = 0, pairs = 0;
    for (size_t i = 1; i < m; i++)
        if (!isnan(top[i - 1]) && !isnan(top[i])) {
            span += top[i] - top[i - 1];
            K += tp->curv[i - 1] + tp->curv[i];
            pairs += 1;
        }
    double scale = pairs > 0 && span > 0 ? span / (pairs * wk->delta) : 1.0;
    K = pairs > 0 ? K / pairs : NAN;   /* omega^2 = ... + K x^2 / 2 in either unit */
    /* Choice: the ramp's slope from the run itself, whenever the line
     * fixes the ratio's loss to a tenth (its slope's error below
     * 0.1 (1 - r)); else the ramp's.  With the run's own beta the impacts'
     * ratios (tops_ratio()) average to the line's slope whatever beta's
     * own error, so their mean's error is the slope's (energy_ratio_se);
     * with the ramp's, an error of 0.002 deg in it (what a lab's ramp is
     * known to) moves every ratio by 4e-5-9e-5 on the paper's prisms, and
     * on the corpus the ramp's true slope left 6 chains with loss biases
     * of 3-5 %, the run's own none.  A run near its terminal speed, whose
     * tops barely change, keeps the ramp's. */
    energy e;
    if (energy_fit(top, tp->low, m, K, wk->delta, scale, &e) == 0) {
        st->beta_data_rad = e.beta;
        st->beta_data_se_rad = e.beta_se;
        st->energy_ratio = e.r;
        st->energy_ratio_se = e.r_se;
        if (!isfinite(beta) || e.r_se < 0.1 * (1 - e.r)) {
            beta = e.beta;
            st->beta_from_data = 1;
        }
    }
    st->beta_used_rad = beta;
    if (!isfinite(beta) || !(K > 0))
        goto out;
    double al = wk->delta / 2;
    tp->A = scale * scale * K * (1 - cos(al + beta));
    tp->B = scale * scale * K * (1 - cos(al - beta));
    for (size_t i = 1; i < m; i++) {
        size_t c = (size_t)llround(v[i].tc);
        if (isnan(top[i - 1]) || isnan(top[i]) || c < wk->G || c + wk->G >= wk->n)
            continue;
        double rate = (wk->theta[c + wk->G] - wk->theta[c - wk->G]) / (double)(2 * wk->G);
        if (rate > 0)
            lag[n++] = (0.5 * (top[i - 1] + top[i]) + scale * beta - ths[i]) / rate;
    }
    if (n >= 8) {
        shift = pl_median(lag, n);
        for (size_t i = 0; i < m; i++) {
            size_t c = (size_t)llround(v[i].tc);
            if (c < wk->G || c + wk->G >= wk->n)
                continue;
            ths[i] += shift * (wk->theta[c + wk->G] - wk->theta[c - wk->G]) / (double)(2 * wk->G);
        }
        /* Then each impact's own angle from its two tops joins the
         * lattice's by their variances.  The lattice's line rests on the
         * slots' steps, which at the start of a run (slow, small steps in
         * the noise) are few and extrapolated from one side: there it
         * was 0.006 rad off (2.6 ms) where the tops, each from a whole
         * contact phase, were within 0.002.  A top's variance from its
         * fit's residuals holds for white noise only; 1/f noise bends the
         * arc as a whole, so the variances are first scaled to the
         * scatter of the two angles about each other (the median of the
         * squared differences over their summed variances, which is
         * 0.455 for a consistent pair). */
        size_t nr = 0;
        for (size_t i = 1; i < m; i++) {
            double vt = 0.25 * (tp->top_var[i - 1] + tp->top_var[i]);
            if (isnan(top[i - 1]) || isnan(top[i]) || !(vt > 0) || !isfinite(vt) ||
                !(vars[i] > 0) || !isfinite(vars[i]))
                continue;
            double d = 0.5 * (top[i - 1] + top[i]) + scale * beta - ths[i];
            lag[nr++] = d * d / (vt + vars[i]);
        }
        double inflate = excess_scatter(lag, nr);
        /* the tops smoothed along their lattice (smooth_tops()), in lag[]
         * and a second array */
        double *sv = malloc(sz), *st = lag, *tt = malloc(sz), *vt = malloc(sz);
        if (sv && tt && vt)
            smooth_tops(wk, v, m, tp, inflate, st, sv);
        double half = 0.5 * wk->delta;
        for (size_t i = 0; tt && vt && i < m; i++) {
            int left = i > 0 && !isnan(top[i - 1]), right = !isnan(top[i]);
            int sl = sv && i > 0 && isfinite(st[i - 1]) && isfinite(sv[i - 1]),
                sr = sv && isfinite(st[i]) && isfinite(sv[i]);
            tt[i] = NAN;
            if (!(left && right)) {
                /* An impact with a top on one side only - the first, whose
                 * phase before starts from rest, and the last, whose phase
                 * after the data cut - lies pi/N - beta before the top
                 * after it or pi/N + beta after the top before it.  On
                 * second-corpus seed 325 (535 um/s of 1/f noise) the first
                 * impact had been placed by the lattice's line alone,
                 * 0.0039 rad (2.3 ms) early, where its top said 0.0005-0.001
                 * early; joined, 1.9 ms.  From the smoothed tops only: a
                 * lone top is no better than the line. */
                if (right && sr) {
                    tt[i] = st[i] - scale * (half - beta);
                    vt[i] = sv[i];
                } else if (left && sl) {
                    tt[i] = st[i - 1] + scale * (half + beta);
                    vt[i] = sv[i - 1];
                }
                continue;
            }
            vt[i] = 0.25 * inflate * (tp->top_var[i - 1] + tp->top_var[i]);
            tt[i] = 0.5 * (top[i - 1] + top[i]) + scale * beta;
            if (!(vt[i] > 0) || !isfinite(vt[i])) {
                tt[i] = NAN;
                continue;
            }
            if (sl && sr) {
                /* (the two smoothed tops share neighbours: their errors
                 * correlate, which a quarter of the summed variances
                 * leaves out) */
                tt[i] = 0.5 * (st[i - 1] + st[i]) + scale * beta;
                vt[i] = 0.25 * (sv[i - 1] + sv[i]);
            }
        }
        /* The two angles' variances each come from a scatter that misses
         * what neighbours share: 1/f noise slow enough to tilt several
         * phases' arcs alike moves their smoothed tops together, where it
         * leaves the steps (a few milliseconds wide) alone.  Their
         * disagreement measures it, so the combined variance is scaled by
         * it (the Birge ratio: the median of d^2 over the summed variances,
         * against 0.455 for a consistent pair).  On corpus chains with
         * 1/f noise the stated time errors were 1.2-4.4 times too small
         * without it and are 1.2-3.0 with it: the slowest noise moves both
         * angles alike, which no disagreement shows (docs/process.md,
         * step 7). */
        size_t nb = 0;
        for (size_t i = 0; tt && vt && i < m; i++)
            if (isfinite(tt[i]) && vars[i] > 0 && isfinite(vars[i])) {
                double d = tt[i] - ths[i];
                lag[nb++] = d * d / (vt[i] + vars[i]);   /* st[] is done with */
            }
        double birge = excess_scatter(lag, nb);
        for (size_t i = 0; tt && vt && i < m; i++) {
            if (isnan(tt[i]))
                continue;
            if (!(vars[i] > 0) || !isfinite(vars[i])) {
                ths[i] = tt[i];
                vars[i] = vt[i];
                continue;
            }
            double w1 = 1 / vars[i], w2 = 1 / vt[i];
            ths[i] = (w1 * ths[i] + w2 * tt[i]) / (w1 + w2);
            vars[i] = birge / (w1 + w2);
        }
        free(tt);
        free(vt);
        free(sv);
    }
out:
    free(lag);
    return shift;
}

/* After the walk: the ringing's shape from the stack, then each impact's
 * own size and onset, taken out of the signal and found again on what is
 * left (the arcs come out cleaner each pass); without ringing, the gap is
 * narrowed to the transitions and the instants located again. */
static void settle(walk *wk, slot *v, size_t m)
{
    ringing rg;
    ring_estimate(wk, v, m, &rg);
    for (int pass = 0; rg.w > 0 && pass < PL_RING_PASSES; pass++) {
        ringing old = wk->ring;
        if (pass > 0)
            rg.onset = 0;   /* the slots' onsets are their instants now */
        ring_onsets(wk, &old, v, m, &rg);
        ring_apply(wk, v, m, +1.0);   /* nothing taken out yet on pass 0 */
        for (size_t i = 0; i < m; i++) {
            v[i].ring_amp = v[i].next_amp;
            v[i].ring_t = v[i].next_t;
        }
        wk->ring = rg;
        ring_apply(wk, v, m, -1.0);
    }
    if (rg.w <= 0) {
        size_t g = transition_gap(wk, v, m);
        if (g != wk->G) {
            wk->G = g;
            remeasure(wk, v, m);
        }
    }
}

/* The slot the lattice puts past the last one found, when the data end
 * within D's reach after it.  The walk could not confirm it: D needs 6 ms
 * after a step, and the arcs' step on the few samples left was swamped by
 * the impact's own ringing (1.4 times the step on two corpus chains,
 * whose last impacts 3 and 6 ms before the prism left the ramp were
 * lost).  Omega around the predicted instant tp (samples) is fitted in
 * one piece: a line each side with a shared curvature, the step D between
 * them at tp, and on the right the ringing.  The ringing is the impact's
 * own signature: every impact of the run rang with the same shape and,
 * to its noise, the same size per unit step (kappa, the median over the
 * slots), so it enters as D kappa times the shape from tp + lag (the
 * slots' median onset less instant), and D is told by the step and the
 * ringing together; without kappa, by a free sine and cosine.  The
 * evidence is D against its standard error: one test at one place the
 * lattice names, not a search, so at 2.5 (a chance of 0.6 % that noise
 * alone passes) where the walk's search over positions asks 5.  On
 * success s holds the slot (placed at tp, its ringing recorded and taken
 * out of the signal). */
enum { END_P = 7 };   /* L0, L1, D, R1, Q and, when free, the sine and cosine */
#define END_CONF 2.5

static int end_slot(walk *wk, double tp, double kappa, double lag, long k, double th,
                    slot *s)
{
    size_t G = wk->G, c = (size_t)ceil(tp);
    /* as far from the end as the impact's own arcs need (fit_arcs_at()) */
    if (c < wk->release + G + 8 || c + G + 6 > wk->end)
        return -1;
    size_t WL = c - G - wk->release < wk->W ? c - G - wk->release : wk->W;
    size_t a = c - G - WL, r0 = (size_t)floor(tp) + G + 1;
    int rings = wk->ring.w > 0, tied = rings && isfinite(kappa);
    int P = rings && !tied ? END_P : 5;
    if (wk->end <= r0 || wk->end - r0 < (size_t)P - 2)
        return -1;   /* the right side needs more samples than its unknowns */
    double w = wk->ring.w, tau = wk->ring.tau, scale = 1.0 / (double)wk->W;
    double A[END_P * END_P] = {0}, b[END_P] = {0}, yy = 0, t0 = tp + (tied ? lag : 0);
    size_t used = 0;
    for (size_t i = a; i < wk->end; i++) {
        int right = i >= r0;
        if (!right && i >= c - G)
            continue;   /* the transition */
        double u = ((double)i - tp) * scale, sr = (double)i - t0, rs = 0, rc = 0;
        if (right && rings && sr >= 0) {
            double e = exp(-sr / tau);
            rs = e * sin(w * sr);
            rc = e * cos(w * sr);
        }
        /* left: L0 + L1 u + Q u^2; right: L0 - D + R1 u + Q u^2 + ringing */
        double x[END_P] = {1, right ? 0 : u, right ? -1 + (tied ? kappa * rs : 0) : 0,
                           right ? u : 0, u * u, right ? rs : 0, right ? rc : 0};
        double y = wk->om[i];
        for (int p = 0; p < P; p++) {
            b[p] += x[p] * y;
            for (int q = 0; q <= p; q++)
                A[p * P + q] += x[p] * x[q];
        }
        yy += y * y;
        used++;
    }
    double coef[END_P];
    if (used <= (size_t)P || chol_factor(A, P) != 0)
        return -1;
    chol_solve_n(A, P, b, coef);
    double bxy = 0;
    for (int p = 0; p < P; p++)
        bxy += coef[p] * b[p];
    double s2 = fmax(0, yy - bxy) / (double)(used - (size_t)P);
    double g[END_P] = {0, 0, 1, 0, 0, 0, 0}, D = coef[2];
    double se = sqrt(s2 * chol_quad(A, P, g));
    *s = (slot){.k = k, .tc = tp, .theta = th, .var_theta = INFINITY, .step = D};
    s->z = se > 0 ? D / se : 0;
    s->confirmed = s->z >= END_CONF;
    if (!s->confirmed)
        return -1;
    if (rings) {
        /* the fitted ringing as a sine from rest, in the template's terms
         * (ring_onsets()): tied, D kappa from t0; free, from its phase
         * within half a period of tp */
        double amp = D * kappa, onset = t0;
        if (!tied) {
            double T = 2 * M_PI / w, phi = atan2(coef[6], coef[5]);
            onset = tp - phi / w;
            onset += T * round((tp - onset) / T);
            amp = hypot(coef[5], coef[6]) * exp((tp - onset) / tau);
        }
        s->ring_amp = amp;
        s->ring_t = onset;
        ring_apply(wk, s, 1, -1.0);
    }
    return 0;
}

/* Adds the slot past the last when end_slot() finds it; returns the new
 * count (m or m + 1).  sl has room for one more. */
static size_t extend_end(walk *wk, slots *sl, size_t m)
{
    enum { SPAN = 8 };
    if (m < SPAN + 1)
        return m;
    slot *v = sl->v;
    double spacing = (v[m - 1].theta - v[m - 1 - SPAN].theta) / SPAN;
    if (!(spacing > 0.5 * wk->delta && spacing < 1.5 * wk->delta))
        spacing = wk->delta;
    double th = v[m - 1].theta + spacing;
    double tp = time_of_theta(wk, th, (size_t)v[m - 1].tc, 1);
    if (isnan(tp))
        return m;
    /* the ringing per unit step and its onset less the instant, over the
     * slots whose ringing was measured */
    double kappa = NAN, lag = 0, *tmp = malloc(2 * m * sizeof *tmp);
    size_t nk = 0;
    for (size_t i = 0; tmp && wk->ring.w > 0 && i < m; i++)
        if (v[i].ring_amp > 0 && v[i].step > 0) {
            tmp[nk] = v[i].ring_amp / v[i].step;
            tmp[m + nk] = v[i].ring_t - v[i].tc;
            nk++;
        }
    if (nk >= 8) {
        kappa = pl_median(tmp, nk);
        lag = pl_median(tmp + m, nk);
    }
    free(tmp);
    slot s;
    if (end_slot(wk, tp, kappa, lag, v[m - 1].k + 1, th, &s) != 0)
        return m;
    if (m < sl->n)
        sl->v[m] = s;
    else if (push(sl, s) != 0)
        return m;
    return m + 1;
}

/* D's noise measured on D itself over the lead-in, where the prism is
 * at rest and only the LDV chain speaks: 1.4826 x its median absolute
 * deviation (0 when the lead-in is too short).  The white noise from
 * first differences (white_noise()) does not see 1/f noise, which moves
 * the two lines D compares as a whole: on a chain with 14 um/s of white
 * and 195 um/s of 1/f noise every bend of the 1/f noise stood 100-300
 * such noise units high and was taken for a step, up to 10 ms from the
 * impact it stood in for. */
static double lead_in_d_noise(const walk *wk)
{
    size_t ext = wk->g + wk->w, from = ext + 1, to = wk->release > ext + 1 ? wk->release - ext - 1 : 0;
    if (to <= from + 64)
        return 0;
    double *d = malloc((to - from) * sizeof *d);
    if (!d)
        return 0;
    step_statistic(wk->om, wk->g, wk->w, from, to, d, NULL);
    double sd = pl_robust_sd(d, to - from);
    free(d);
    return sd > 0 ? sd : 0;
}

pl_status pl_lattice_find(double *om, const double *theta, size_t n,
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
               rate, 2 * M_PI / N, cfg->confirm_sigmas, 0, 0, {0, 0, 0, 0, 0}, NULL, cfg->threads, NULL};
    wk.scratch = malloc((4 * wk.W + 64) * sizeof *wk.scratch);
    double *powsum = malloc((wk.W + 1) * RJ_POW * sizeof *powsum);
    if (!wk.scratch || !powsum) {
        free(wk.scratch);
        free(powsum);
        return pl_err_set(err, PL_ENOMEM, "impact search: out of memory");
    }
    for (size_t len = 0; len <= wk.W; len++) {
        double *P = powsum + len * RJ_POW;
        for (int p = 0; p < RJ_POW; p++)
            P[p] = 0;
        for (size_t j = 0; j < len; j++) {
            double x = (double)j / (double)len, xp = 1;
            for (int p = 0; p < RJ_POW; p++, xp *= x)
                P[p] += xp;
        }
    }
    wk.powsum = powsum;
    wk.noise_om = white_noise(om, release, wk.end);
    wk.noise_d = fmax(wk.noise_om * d_noise_gain(wk.g, wk.w), lead_in_d_noise(&wk));
    if (!(wk.noise_d > 0))
        wk.noise_d = 1e-12;   /* a noise-free signal: every step stands out */
    st->noise_omega = wk.noise_om;
    st->noise_d = wk.noise_d;
    /* An artefact can pass for the strongest step and put the lattice
     * out of phase: then few of its slots show a step.  Up to four seeds
     * are tried, and the walk that confirms most is kept. */
    slot seed = {0};
    slots sl = {0};
    size_t m = 0, best_conf = 0;
    seeds ranked;
    int ok = seeds_rank(&wk, &ranked) == 0, tried = 0;
    for (int attempt = 0; ok && attempt < 4; attempt++) {
        slot sd;
        if (seeds_next(&wk, &ranked, &sd) != 0)
            break;
        slots cand = {0};
        size_t mc = 0, conf = 0;
        ok = walk_all(&wk, &sd, cfg->confirm_sigmas, &cand, &mc) == 0;
        for (size_t i = 0; ok && i < mc; i++)
            conf += cand.v[i].confirmed;
        if (ok && (!tried || conf > best_conf)) {
            free(sl.v);
            sl = cand;
            m = mc;
            seed = sd;
            best_conf = conf;
        } else {
            free(cand.v);
        }
        tried = 1;
        if (2 * best_conf >= m)
            break;
    }
    free(ranked.pk);
    if (ok && !tried) {
        free(wk.scratch);
        free(powsum);
        return pl_err_set(err, PL_ENUMERIC, "no line impact stands %g noise "
                          "standard deviations (%.3g rad/s) above the noise between "
                          "the release at %.3f s and the end at %.3f s",
                          cfg->confirm_sigmas, wk.noise_d, release / rate, wk.end / rate);
    }
    /* room for the slot extend_end() may add */
    double *ths = ok ? malloc((m + 1) * sizeof *ths) : NULL;
    double *vars = ok ? malloc((m + 1) * sizeof *vars) : NULL;
    pl_impact *imp = ok ? malloc((m + 1) * sizeof *imp) : NULL;
    if (!ths || !vars || !imp) {
        free(sl.v);
        free(ths);
        free(vars);
        free(imp);
        free(wk.scratch);
        free(powsum);
        return pl_err_set(err, PL_ENOMEM, "impact search: out of memory");
    }
    settle(&wk, sl.v, m);
    m = extend_end(&wk, &sl, m);
    st->gap_s = (double)wk.G / rate;
    st->ring_hz = wk.ring.w * rate / (2 * M_PI);
    st->ring_decay_s = wk.ring.tau / rate;
    smooth_phase(sl.v, m, cfg->smooth_slots, wk.delta, ths, vars);
    if (wk.ring.w > 0 && snap_cycles(&wk, sl.v, m, ths))
        smooth_phase(sl.v, m, cfg->smooth_slots, wk.delta, ths, vars);
    st->beta_data_rad = st->beta_data_se_rad = st->energy_ratio = st->beta_used_rad = NAN;
    st->energy_ratio_se = NAN;
    st->beta_from_data = 0;
    tops tp;
    /* The tops' intervals are cut at the slots' instants; once the tops
     * have moved the instants (top_shift()), they are fitted again on the
     * intervals cut there, from the lattice's own angles (the first
     * pass's tops are not counted twice).  On 200 further corpus chains a
     * second pass brought a chain with 1/f noise from 0.212 to 0.193 ms
     * of median time error; a third changed no figure. */
    enum { TOP_PASSES = 2 };
    double *ths0 = malloc((m + 1) * sizeof *ths0), *vars0 = malloc((m + 1) * sizeof *vars0);
    int passes = ths0 && vars0 ? TOP_PASSES : 1;
    if (passes > 1) {
        memcpy(ths0, ths, m * sizeof *ths);
        memcpy(vars0, vars, m * sizeof *vars);
    }
    for (int pass = 0; pass < passes; pass++) {
        if (pass > 0) {
            for (size_t i = 0; i < m; i++) {
                double t = time_of_theta(&wk, ths[i], i > 0 ? (size_t)sl.v[i - 1].tc : wk.release,
                                         1);
                if (!isnan(t))
                    sl.v[i].tc = t;
            }
            memcpy(ths, ths0, m * sizeof *ths);
            memcpy(vars, vars0, m * sizeof *vars);
            tops_free(&tp);
        }
        st->top_shift_s = top_shift(&wk, sl.v, m, ths, vars, cfg->beta_rad, &tp, st) / rate;
    }
    free(ths0);
    free(vars0);
    *n_out = collect(&wk, sl.v, m, ths, vars, &seed, &tp, imp, st);
    tops_free(&tp);
    *out = imp;
    free(sl.v);
    free(ths);
    free(vars);
    free(wk.scratch);
    free(powsum);
    return PL_OK;
}
