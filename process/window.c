/* process/window.c - the release and the end of valid data.  See
 * window.h and docs/process.md section 2. */
#include "process/window.h"

#include "process/robust.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>

/* omega by (4.1) at sample i: from the two velocities before omega is
 * stored, from the array x once it is.  inv_dh, when not 0, is what the
 * caller multiplies by to store omega (process.c), so that the end found
 * from the velocities is the one found on the stored array, to the bit. */
typedef struct {
    const double *v1, *v2;
    double dh;
    const double *x;
    double inv_dh;
} omega_src;

static double omega_at(const omega_src *s, size_t i)
{
    if (s->x)
        return s->x[i];
    return s->inv_dh != 0 ? (s->v1[i] - s->v2[i]) * s->inv_dh : (s->v1[i] - s->v2[i]) / s->dh;
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

/* Least-squares line through (j, omega_j) for j in [a, b): intercept at
 * j = 0 and slope. */
static void line_fit(const omega_src *x, size_t a, size_t b, double *icpt,
                     double *slope)
{
    double s0 = 0, st = 0, stt = 0, sy = 0, sty = 0;
    for (size_t j = a; j < b; j++) {
        double t = (double)j, y = omega_at(x, j);
        s0 += 1;
        st += t;
        stt += t * t;
        sy += y;
        sty += t * y;
    }
    double det = s0 * stt - st * st;
    *slope = det != 0 ? (s0 * sty - st * sy) / det : 0;
    *icpt = s0 > 0 ? (sy - *slope * st) / s0 : 0;
}

/* The noise of the moving average and of omega itself in the lead-in. */
static int lead_noise(const omega_src *src, size_t n, size_t h, size_t q,
                      double *sd_smooth, double *sd_raw)
{
    size_t qa = h, qb = q > 2 * h ? q - h : q, m = qb > qa ? qb - qa : 0;
    double *tmp = malloc((m > q ? m : q) * sizeof *tmp);
    if (!tmp)
        return -1;
    boxcar_range(src, n, h, qa, qb, tmp);
    *sd_smooth = pl_robust_sd(tmp, m);
    for (size_t i = 0; i < q; i++)
        tmp[i] = omega_at(src, i);
    *sd_raw = pl_robust_sd(tmp, q);
    free(tmp);
    return 0;
}

pl_status pl_window_release(const double *v1, const double *v2, double dh,
                            size_t n, double rate, size_t q, double sigmas,
                            pl_window *w, pl_err *err)
{
    omega_src src = {v1, v2, dh, NULL, 0};
    size_t h = (size_t)(0.005 * rate);
    smoother *sm = malloc(sizeof *sm);
    double sd_s = NAN;
    if (!sm || lead_noise(&src, n, h, q, &sd_s, &w->noise_omega) != 0) {
        free(sm);
        return pl_err_set(err, PL_ENOMEM, "release search: out of memory");
    }
    smoother_init(sm, &src, n, h);
    double thr = sigmas * (sd_s > 0 ? sd_s : 1e-9);
    w->threshold = thr;
    size_t hold = (size_t)(0.05 * rate), run = 0, cross = n;
    for (size_t i = q; i < n; i++) {
        run = smooth_at(sm, i) > thr ? run + 1 : 0;
        if (run >= hold) {
            cross = i + 1 - hold;
            break;
        }
    }
    if (cross == n) {
        free(sm);
        return pl_err_set(err, PL_ENUMERIC, "no motion: the rotary speed never "
                          "exceeds %.3g rad/s (%g noise standard deviations) for "
                          "50 ms", thr, sigmas);
    }
    /* From rest the speed grows linearly at first: the line through the
     * first rise, from where the moving average no longer leads the
     * motion by its half-width, over at least 20 ms. */
    size_t k2 = cross;
    while (k2 < n && smooth_at(sm, k2) < 4 * thr && k2 < cross + (size_t)(0.3 * rate))
        k2++;
    free(sm);
    size_t k1 = cross + h < n ? cross + h : cross;
    if (k2 < k1 + (size_t)(0.02 * rate))
        k2 = k1 + (size_t)(0.02 * rate);
    if (k2 >= n)
        k2 = n - 1;
    double t0, slope;
    line_fit(&src, k1, k2 + 1, &t0, &slope);
    w->release = cross;
    w->line_fits = 0;
    if (slope > 0) {
        double z = -t0 / slope;
        w->release = z < 0 ? 0 : z > (double)k1 ? k1 : (size_t)llround(z);
        w->line_fits = z >= (double)q && z <= (double)k1;
    }
    w->quiet = w->release;
    w->cross = cross;
    w->end = w->seen = n;
    return PL_OK;
}

/* --- the release from the shape of the first rise ------------------------ */

/* From rest on its edge the prism falls away from an unstable balance:
 * phi'' = s^2 sin(phi) (docs/model.md), so omega grows as
 * A sinh(s (t - t0)) from the release t0 until the first impact, convex
 * from the start.  The line through the first rise meets zero late, by
 * more the longer the motion takes to stand above the noise.  The fit
 * is on block means of omega (1 ms, or longer on a long rise so that
 * there are at most RISE_BLOCKS), over a stretch of lead-in before the
 * crossing (its level c) and the rise up to the first impact. */
enum { RISE_BLOCKS = 300, RISE_S_GRID = 16 };
static const double RISE_LEAD_S = 0.3,   /* lead-in before the crossing */
    RISE_S_LO = 2, RISE_S_HI = 300,      /* s, 1/s: s^2 ~ g / (1.5 r), prisms
                                            of 0.1 mm to 1.6 m (corpus chains: ~20) */
    RISE_MIN_S = 0.01,                   /* rise after t0 and before the end */
    RISE_SE_MAX = 0.02;                  /* t0's standard error at most, s */

/* The data: block means y[0..m), block k centred at k dt (s). */
typedef struct {
    const double *y;
    size_t m;
    double dt;
} rise;

/* sinh(s u) / sinh(s U) for 0 < U, 0 if u <= 0: the rise's shape, 1 at
 * the fit's end, without overflow at any s U. */
static double shape_ratio(double s, double u, double U)
{
    if (!(u > 0))
        return 0;
    double den = -expm1(-2 * s * U);
    if (!(den > 0))
        return u / U;   /* s U ~ 0: sinh is its argument */
    return exp(s * (u - U)) * -expm1(-2 * s * u) / den;
}

/* Residuals of x = (c, Y, ln s, t0): c before t0, c + Y sinh(s (t -
 * t0)) / sinh(s (T - t0)) after it, Y the rise at the end T. */
static int rise_f(const gsl_vector *x, void *ctx, gsl_vector *f)
{
    const rise *d = ctx;
    double c = gsl_vector_get(x, 0), Y = gsl_vector_get(x, 1);
    double s = exp(fmin(fmax(gsl_vector_get(x, 2), -5.0), 10.0));
    double t0 = gsl_vector_get(x, 3), U = (double)(d->m - 1) * d->dt - t0;
    for (size_t k = 0; k < d->m; k++) {
        double g = U > 0 ? shape_ratio(s, (double)k * d->dt - t0, U) : 0;
        gsl_vector_set(f, k, c + Y * g - d->y[k]);
    }
    return GSL_SUCCESS;
}

/* c and the rise's scale by least squares for t0 at block j, given the
 * shape tab[d] at d blocks past t0 (its prefix sums p1, p2 of tab and
 * tab^2); the sum of squares, INFINITY when the rise is not upwards. */
static double grid_cost(const rise *d, size_t j, const double *tab, const double *p1,
                        const double *p2, double sy, double syy, double *c, double *a)
{
    size_t D = d->m - 1 - j;
    double sg = p1[D], sgg = p2[D], sgy = 0, m = (double)d->m;
    for (size_t k = j + 1; k < d->m; k++)
        sgy += d->y[k] * tab[k - j];
    double det = m * sgg - sg * sg;
    if (!(det > 1e-300 * m * sgg))
        return INFINITY;
    *a = (m * sgy - sg * sy) / det;
    *c = (sy - *a * sg) / m;
    return *a > 0 ? syy - *c * sy - *a * sgy : INFINITY;
}

/* The best t0 (at a block centre, from block 1 to RISE_MIN_S before the
 * end) and s (RISE_S_GRID values spaced by ratio) with c and the scale
 * by linear least squares: the nonlinear fit's start, as it has local
 * minima in t0 where noise bends the baseline.  x = (c, Y, ln s, t0);
 * -1 when no rise fits or out of memory. */
static int grid_start(const rise *d, double x[4])
{
    size_t m = d->m, jmax = (size_t)(RISE_MIN_S / d->dt);
    double *tab = malloc(3 * m * sizeof *tab), *p1 = tab + m, *p2 = tab + 2 * m;
    if (!tab || jmax + 2 >= m) {
        free(tab);
        return -1;
    }
    jmax = m - 1 - jmax;
    double sy = 0, syy = 0, best = INFINITY, T = (double)(m - 1) * d->dt;
    for (size_t k = 0; k < m; k++) {
        sy += d->y[k];
        syy += d->y[k] * d->y[k];
    }
    for (int i = 0; i < RISE_S_GRID; i++) {
        double s = RISE_S_LO * pow(RISE_S_HI / RISE_S_LO, i / (RISE_S_GRID - 1.0));
        p1[0] = p2[0] = tab[0] = 0;
        for (size_t k = 1; k < m; k++) {
            tab[k] = shape_ratio(s, (double)k * d->dt, T);
            p1[k] = p1[k - 1] + tab[k];
            p2[k] = p2[k - 1] + tab[k] * tab[k];
        }
        for (size_t j = 1; j <= jmax; j++) {
            double c = 0, a = 0, e = grid_cost(d, j, tab, p1, p2, sy, syy, &c, &a);
            if (e < best) {
                best = e;
                x[0] = c;
                x[1] = a * tab[m - 1 - j];
                x[2] = log(s);
                x[3] = (double)j * d->dt;
            }
        }
    }
    free(tab);
    return isfinite(best) ? 0 : -1;
}

/* The nonlinear fit from x (gsl_multifit_nlinear, trust region): x
 * refined and t0's standard error; -1 when it did not converge. */
static int rise_fit(const rise *d, double x[4], double *se_t0)
{
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *ws = gsl_multifit_nlinear_alloc(
        gsl_multifit_nlinear_trust, &fp, d->m, 4);
    gsl_matrix *cov = gsl_matrix_alloc(4, 4);
    int ok = -1, info = 0;
    if (ws && cov) {
        gsl_multifit_nlinear_fdf fdf = {.f = rise_f, .df = NULL, .fvv = NULL,
                                        .n = d->m, .p = 4, .params = (void *)d};
        gsl_vector_view x0 = gsl_vector_view_array(x, 4);
        gsl_multifit_nlinear_init(&x0.vector, &fdf, ws);
        if (gsl_multifit_nlinear_driver(50, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, ws) ==
            GSL_SUCCESS) {
            gsl_vector *xb = gsl_multifit_nlinear_position(ws), *fx = gsl_multifit_nlinear_residual(ws);
            double sse;
            gsl_blas_ddot(fx, fx, &sse);
            gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(ws), 0.0, cov);
            for (int k = 0; k < 4; k++)
                x[k] = gsl_vector_get(xb, k);
            *se_t0 = sqrt(gsl_matrix_get(cov, 3, 3) * sse / (double)(d->m - 4));
            ok = 0;
        }
    }
    gsl_matrix_free(cov);
    gsl_multifit_nlinear_free(ws);
    return ok;
}

/* The last sample of the rise: the first maximum of the 10 ms average of
 * om after the crossing that it then falls sd_s x 4 below (the first
 * impact takes speed off, and the climb over the next edge more), or
 * where the prism has turned max_turn from the line's release, less the
 * average's half-width.  w->cross when out of memory. */
static size_t rise_end(const omega_src *src, size_t n, double rate, const pl_window *w,
                       double max_turn, double sd_s)
{
    size_t h = (size_t)(0.005 * rate), lim = n - w->cross > 2 * (size_t)rate
                                                  ? w->cross + 2 * (size_t)rate : n;
    smoother *sm = malloc(sizeof *sm);
    if (!sm)
        return w->cross;
    smoother_init(sm, src, n, h);
    double top = -INFINITY, turn = 0;
    size_t im = w->cross;
    for (size_t i = w->quiet; i < w->cross; i++)
        turn += omega_at(src, i) / rate;
    for (size_t i = w->cross; i < lim && turn < max_turn; i++) {
        double a = smooth_at(sm, i);
        if (a > top) {
            top = a;
            im = i;
        } else if (a < top - 4 * sd_s) {
            break;
        }
        turn += omega_at(src, i) / rate;
    }
    free(sm);
    return im > w->cross + h ? im - h : w->cross;
}

/* The fit over omega [a, b): the release (fractional sample) into *z and its
 * standard error (s) into *se; 1 when the fit stands (t0 inside the
 * stretch, off its ends, a rising shape, s in range, t0 fixed to
 * RISE_SE_MAX), 0 when not, -1 when out of memory. */
static int fit_stretch(const omega_src *src, size_t a, size_t b, double rate, double *z,
                       double *se)
{
    size_t B = (size_t)llround(1e-3 * rate);
    if (B < 1)
        B = 1;
    if ((b - a) / B > RISE_BLOCKS)
        B = (b - a + RISE_BLOCKS - 1) / RISE_BLOCKS;
    size_t m = (b - a) / B;
    double *y = malloc((m + 1) * sizeof *y), x[4] = {0};
    if (!y)
        return -1;
    int finite = 1;
    for (size_t k = 0; k < m; k++) {
        double sum = 0;
        for (size_t i = a + k * B; i < a + (k + 1) * B; i++)
            sum += omega_at(src, i);
        y[k] = sum / (double)B;
        finite &= isfinite(y[k]) != 0;
    }
    rise d = {y, m, (double)B / rate};
    *se = INFINITY;
    int ok = finite && m > 8 && grid_start(&d, x) == 0 && rise_fit(&d, x, se) == 0;
    free(y);
    double T = (double)(m - 1) * d.dt, s = exp(x[2]);
    *z = (double)a + 0.5 * (double)(B - 1) + x[3] * rate;
    return ok && x[3] > d.dt && x[3] < T - RISE_MIN_S && x[1] > 0 &&
           s > 0.5 * RISE_S_LO && s < 2 * RISE_S_HI && *se < RISE_SE_MAX;
}

static int window_shape(const omega_src *src, size_t n, double rate, double max_turn,
                        pl_window *w)
{
    size_t h = (size_t)(0.005 * rate), margin = (size_t)(0.02 * rate);
    size_t lead = w->quiet > margin ? w->quiet - margin : 0;
    double sd_s, sd_raw;
    if (lead < 4 * h + 32)   /* a line that met zero at the start: the
                                noise up to the crossing */
        lead = w->cross > margin ? w->cross - margin : 0;
    if (lead < 4 * h + 32)
        return 0;
    if (lead_noise(src, n, h, lead, &sd_s, &sd_raw) != 0)
        return -1;
    size_t b = rise_end(src, n, rate, w, max_turn, sd_s), lead_n = (size_t)(RISE_LEAD_S * rate);
    size_t a = w->cross > lead_n ? w->cross - lead_n : 0;
    double z, se;
    int ok = fit_stretch(src, a, b, rate, &z, &se);
    if (ok != 1)
        return ok;
    w->release = z < 0 ? 0 : z > (double)(n - 1) ? n - 1 : (size_t)llround(z);
    return 1;
}

int pl_window_shape(const double *om, size_t n, double rate, double max_turn,
                    pl_window *w)
{
    omega_src src = {NULL, NULL, 1, om, 0};
    return window_shape(&src, n, rate, max_turn, w);
}

int pl_window_shape_beams(const double *v1, const double *v2, double dh, size_t n,
                          double rate, double max_turn, pl_window *w)
{
    omega_src src = {v1, v2, dh, NULL, 0};
    return window_shape(&src, n, rate, max_turn, w);
}

static void window_end(const omega_src *src, size_t n, double rate, pl_window *w)
{
    size_t h = (size_t)(0.005 * rate);
    smoother *sm = malloc(sizeof *sm);
    size_t last = n - 1, release = w->release;
    if (sm) {
        smoother_init(sm, src, n, h);
        while (last > release && !(smooth_at(sm, last) > w->threshold))
            last--;
        free(sm);
    }
    size_t end = last + 1;
    if (last + 1 < n) {
        size_t a = last > 2 * h ? last - 2 * h : release + 1,
               b = last + 2 * h < n ? last + 2 * h : n - 1;
        double best = 0, prev = omega_at(src, a);
        for (size_t i = a + 1; i <= b; i++) {
            double cur = omega_at(src, i);
            if (prev - cur > best) {
                best = prev - cur;
                end = i;
            }
            prev = cur;
        }
    }
    /* A run that ends while the prism still rolls (the recording was
     * stopped) is valid to its last sample; a drop needs a guard, since
     * the beams lose the prism over a sample or two. */
    size_t guard = end < n ? (size_t)ceil(0.002 * rate) : 0;
    w->end = end > release + guard ? end - guard : release + 1;
    w->seen = end;
}

void pl_window_end(const double *om, size_t n, double rate, pl_window *w)
{
    omega_src whole = {NULL, NULL, 1, om, 0};
    window_end(&whole, n, rate, w);
}

void pl_window_end_beams(const double *v1, const double *v2, double inv_dh, size_t n,
                         double rate, pl_window *w)
{
    omega_src beams = {v1, v2, 1, NULL, inv_dh};
    window_end(&beams, n, rate, w);
}
