/* process/window.c - the release and the end of valid data.  See
 * window.h and docs/process.md section 2. */
#include "process/window.h"

#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

/* omega by (4.1) at sample i: from the two velocities before omega is
 * stored, from the array x once it is. */
typedef struct {
    const double *v1, *v2;
    double dh;
    const double *x;
} omega_src;

static double omega_at(const omega_src *s, size_t i)
{
    return s->x ? s->x[i] : (s->v1[i] - s->v2[i]) / s->dh;
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
    omega_src src = {v1, v2, dh, NULL};
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
    if (slope > 0) {
        double z = -t0 / slope;
        w->release = z < 0 ? 0 : z > (double)k1 ? k1 : (size_t)llround(z);
    }
    w->end = w->seen = n;
    return PL_OK;
}

void pl_window_end(const double *om, size_t n, double rate, pl_window *w)
{
    omega_src whole = {NULL, NULL, 1, om};
    size_t h = (size_t)(0.005 * rate);
    smoother *sm = malloc(sizeof *sm);
    size_t last = n - 1, release = w->release;
    if (sm) {
        smoother_init(sm, &whole, n, h);
        while (last > release && !(smooth_at(sm, last) > w->threshold))
            last--;
        free(sm);
    }
    size_t end = last + 1;
    if (last + 1 < n) {
        size_t a = last > 2 * h ? last - 2 * h : release + 1,
               b = last + 2 * h < n ? last + 2 * h : n - 1;
        double best = 0;
        for (size_t i = a + 1; i <= b; i++)
            if (om[i - 1] - om[i] > best) {
                best = om[i - 1] - om[i];
                end = i;
            }
    }
    /* A run that ends while the prism still rolls (the recording was
     * stopped) is valid to its last sample; a drop needs a guard, since
     * the beams lose the prism over a sample or two. */
    size_t guard = end < n ? (size_t)ceil(0.002 * rate) : 0;
    w->end = end > release + guard ? end - guard : release + 1;
    w->seen = end;
}
