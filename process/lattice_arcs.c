/* process/lattice_arcs.c - one slot's step: the arcs either side of a
 * gap and the instant by equal areas (lattice_arcs.h). */
#include "process/lattice_arcs.h"

#include <math.h>
#include <string.h>

static void chol_solve(const double *l, const double *b, double *x)
{
    chol_solve_n(l, 5, b, x);
}

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

int pl_lat_fit_joint(const walk *wk, size_t c, size_t W, arcs *f)
{
    return fit_joint2(wk, c, W, W, NULL, f);
}

/* The variance of omega^2 on one side at u samples from the centre, per
 * unit noise variance of omega^2. */
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

/* The arcs around sample c on windows of up to W samples, each side cut
 * where the data end: near the ends of the window the long side then
 * fixes the shared curvature that a short one cannot (a last impact 5 ms
 * before the end, fitted on 4 ms either side, was placed 0.3 ms early
 * and its step lost). */
int pl_lat_fit_arcs_at(const walk *wk, size_t c, size_t W, moments *mo, arcs *J)
{
    size_t G = wk->G;
    if (c < wk->release + G + 4 || c + G + 5 > wk->end)
        return -1;
    size_t WL = c - wk->release - G, WR = wk->end - c - G - 1;
    return fit_joint2(wk, c, WL < W ? WL : W, WR < W ? WR : W, mo, J);
}

/* What is known of the arcs J (centred on sample c) at u samples from c. */
void pl_lat_arcs_eval(const arcs *J, size_t G, double u, step_fit *f)
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
int pl_lat_fit_arcs(const walk *wk, size_t c, size_t W, moments *mo, step_fit *f)
{
    enum { GMAX = 512 };
    size_t G = wk->G;
    arcs J;
    if (G > GMAX || pl_lat_fit_arcs_at(wk, c, W, mo, &J) != 0)
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
    pl_lat_arcs_eval(&J, G, best, f);
    return 0;
}

/* The longest arc window that keeps both neighbours' transitions out:
 * an interval is interval samples long. */
size_t pl_lat_arc_window(const walk *wk, double interval)
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
int pl_lat_locate(const walk *wk, double c, double interval, step_fit *f)
{
    /* pl_lat_fit_arcs_at() cuts the window at the data's ends */
    size_t W = pl_lat_arc_window(wk, interval);
    double tol = fmax(1.0, 0.1 * (double)wk->G), still = fmax(0.2, 0.05 * (double)wk->G),
           prev = NAN;
    moments mo = {.valid = 0};
    for (int it = 0; it < 12; it++) {
        if (!(c > 0))
            return -1;
        size_t ci = (size_t)llround(c);
        if (pl_lat_fit_arcs(wk, ci, W, &mo, f) != 0)
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
            return pl_lat_fit_arcs(wk, (size_t)llround(mid), W, &mo, f);
        }
        prev = c;
        c = f->tc;
    }
    return -1;
}
