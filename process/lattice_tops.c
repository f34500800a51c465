/* process/lattice_tops.c - the arcs' tops: where the contact phases
 * place the impacts, the ramp's slope and the ratio from the tops alone
 * (lattice_tops.h). */
#include "process/lattice_tops.h"

#include "process/lattice_smooth.h"
#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

void pl_lat_tops_free(tops *t)
{
    free(t->top);
    free(t->top_var);
    free(t->low);
    free(t->low_var);
    free(t->curv);
    free(t->curv_var);
}

/* sin u and 1 - cos u for the arcs' angles from their middle.  A phase
 * of a prism of 18 edges or more turns at most 0.35 rad, so |u| stays
 * below 0.18 but where top_between() re-centres a window; below 0.2 rad
 * the series' first terms left out, u^9 / 9! and u^10 / 10!, are 2e-12
 * and 4e-13 of the leading ones (the terms before them left the least
 * speed 2.6e-10 off on a noise-free arc), far below the quartic a
 * parabola leaves out (u^2 / 12 of its square term), which moved the
 * vertices 0.1-2.3 us.  Beyond 0.2 rad, libm: its sin and cos on every
 * sample took the ten-minute bench from 0.33 to 0.39 s (the series cost
 * 0.01 s over the parabola's powers). */
static inline void sin_versine(double u, double *s, double *v)
{
    double u2 = u * u;
    if (u2 > 0.2 * 0.2) {
        *s = sin(u);
        *v = 2 * sin(0.5 * u) * sin(0.5 * u);   /* 1 - cos u without the cancellation */
        return;
    }
    *s = u * (1 - u2 * (1.0 / 6) * (1 - u2 * (1.0 / 20) * (1 - u2 * (1.0 / 42))));
    *v = u2 * (0.5 - u2 * (1.0 / 24) * (1 - u2 * (1.0 / 30) * (1 - u2 * (1.0 / 56))));
}

/* The angle at which omega^2(theta) over samples [a, b) is least: the
 * contact phase's top, where the centre passes over the pivot.  (2.1)
 * makes omega^2 = C - 2 K cos psi exactly, so that form is fitted, on
 * the whole interval between two gaps, linear in its three coefficients:
 * omega^2 = p0 + p1 sin u + p2 (1 - cos u), u = theta - the interval's
 * middle, whose least is at u = atan(-p1 / p2), its curvature there
 * R / 2 with R = hypot(p1, p2).  A parabola, which this was, is the same
 * to a part in a thousand, but the window is not symmetric about the top
 * (a phase turns pi/N - beta before it and pi/N + beta after), and the
 * quartic it leaves out moved every top the same way: 0.1 us at 38
 * edges, 0.6 at 22, 2.3 at 18 turning slowly (docs/process.md step 6),
 * all of it in every instant.  NAN when it cannot be fitted or has no
 * minimum inside. */
double pl_lat_arc_top(const walk *wk, size_t a, size_t b, arc_top *out)
{
    *out = (arc_top){.top_var = NAN, .low = NAN, .low_var = NAN, .curv = NAN,
                     .curv_var = NAN, .raw = NAN};
    if (b <= a + 8 || b > wk->end)
        return NAN;
    double tm = 0.5 * (wk->theta[a] + wk->theta[b - 1]), G[6] = {0}, Y[3] = {0}, p[3], yy = 0;
    for (size_t k = a; k < b; k++) {
        double s, v, y = wk->om[k] * wk->om[k];
        sin_versine(wk->theta[k] - tm, &s, &v);
        G[0] += 1;
        G[1] += s;
        G[2] += v;
        G[3] += s * s;
        G[4] += s * v;
        G[5] += v * v;
        Y[0] += y;
        Y[1] += y * s;
        Y[2] += y * v;
        yy += y * y;
    }
    double A[9] = {G[0], G[1], G[2], G[1], G[3], G[4], G[2], G[4], G[5]};
    if (chol_factor(A, 3) != 0)
        return NAN;
    chol_solve_n(A, 3, Y, p);
    double R = hypot(p[1], p[2]);
    if (!(R > 0))
        return NAN;
    /* raw: the stationary point nearest the middle, a peak where p2 < 0,
     * its sign in curv (top_between() reads a peak as the landing it
     * straddles) */
    double sg = p[2] > 0 ? 1 : -1, u = p[2] != 0 ? atan(-p[1] / p[2]) : NAN;
    out->curv = sg * 0.5 * R;
    out->raw = tm + u;
    double rss = fmax(0, yy - (p[0] * Y[0] + p[1] * Y[1] + p[2] * Y[2])), s2 = rss / (G[0] - 3);
    double gc[3] = {0, sg * p[1] / (2 * R), sg * p[2] / (2 * R)};
    out->curv_var = s2 * chol_quad(A, 3, gc);
    if (!(p[2] > 0))
        return NAN;
    double top = tm + u;
    out->low = p[0] + p[2] - R;
    /* the variances through the gradients, times the residual variance
     * of omega^2 */
    double g[3] = {1, -p[1] / R, 1 - p[2] / R};
    out->low_var = s2 * chol_quad(A, 3, g);
    double gt[3] = {0, -p[2] / (R * R), p[1] / (R * R)};
    out->top_var = s2 * chol_quad(A, 3, gt);
    return top > wk->theta[a] && top < wk->theta[b - 1] ? top : NAN;
}

/* How much a measurement of a constant of the run counts, from its
 * variance var and the median variance med: fully up to the median, by
 * its inverse variance beyond.  A phase seen by one beam through a
 * shaking floor or 1/f noise has a residual thousands of times a clean
 * one's and next to no say.  Below the median the variances differ by the
 * phases' lengths and speeds and understate every phase's error alike
 * (1/f noise tilts whole arcs, lattice_tops.c's smooth_tops()), and
 * weighting those by them cost a clean corpus chain its median instant
 * (seed 65, 0.207 ms); weights capped at 4 or 25 times the median lost
 * 3 and 6 faulted chains of 400 that this won. */
static double const_weight(double var, double med)
{
    if (!(var > 0) || !isfinite(var))
        return 0;
    return var <= med ? 1.0 : med / var;
}

/* The median of x[0..n) that are finite and positive (z[] scratch); NAN
 * for none. */
static double median_var(const double *x, size_t n, double *z)
{
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (x[k] > 0 && isfinite(x[k]))
            z[m++] = x[k];
    return m ? pl_median(z, m) : NAN;
}

/* 4 times the median of |d_k| / sqrt(var_k) over the k with w[k] > 0
 * (over 0.6745, at least 1): where a measurement lies farther from the
 * run's constant than its own error allows.  INFINITY for fewer than 8
 * (z[] scratch). */
static double outlier_limit(const double *d, const double *var, const double *w, size_t n,
                            double *z)
{
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (w[k] > 0)
            z[m++] = fabs(d[k]) / sqrt(var[k]);
    return m >= 8 ? 4 * fmax(1, pl_median(z, m) / 0.6745) : INFINITY;
}

/* Zeroes the weights w[k] of the measurements whose distances d[k] from
 * the run's constant exceed outlier_limit() in their own errors (z[]
 * scratch). */
static void drop_outliers(const double *d, const double *var, double *w, size_t n, double *z)
{
    double lim = outlier_limit(d, var, w, n, z);
    for (size_t k = 0; k < n; k++)
        if (w[k] > 0 && fabs(d[k]) / sqrt(var[k]) > lim)
            w[k] = 0;
}

/* The line low[i] = ic + sl low[i - 1] through the pairs i = 1..m-1
 * weighted by w[i] (0: left out), with the variances of sl and ic and
 * their covariance from its residuals (the weights are relative).
 * Returns the pairs used; 0 for fewer than 8 or no spread. */
typedef struct {
    double sl, ic, v_sl, v_ic, c_si, mx;
} eline;

static size_t energy_line(const double *low, const double *w, size_t m, eline *L)
{
    double n = 0, sw = 0, mx = 0, my = 0;
    for (size_t i = 1; i < m; i++)
        if (w[i] > 0) {
            n += 1;
            sw += w[i];
            mx += w[i] * low[i - 1];
            my += w[i] * low[i];
        }
    if (n < 8)
        return 0;
    mx /= sw;
    my /= sw;
    double sxx = 0, sxy = 0;
    for (size_t i = 1; i < m; i++)
        if (w[i] > 0) {
            sxx += w[i] * (low[i - 1] - mx) * (low[i - 1] - mx);
            sxy += w[i] * (low[i - 1] - mx) * (low[i] - my);
        }
    if (!(sxx > 0))
        return 0;
    double sl = sxy / sxx, ic = my - sl * mx, rss = 0;
    for (size_t i = 1; i < m; i++)
        if (w[i] > 0) {
            double d = low[i] - ic - sl * low[i - 1];
            rss += w[i] * d * d;
        }
    double s2 = rss / (n - 2);
    *L = (eline){sl, ic, s2 / sxx, s2 * (1 / sw + mx * mx / sxx), -mx * s2 / sxx, mx};
    return (size_t)n;
}

/* The pairs' weights for energy_line(): const_weight() of each pair's
 * variance through the line of slope sl (1 each without variances), 0
 * where a top is missing; the variances into var[], the distances from
 * the line (sl, ic) into d[]. */
static void pair_weights(const double *top, const double *low, const double *low_var,
                         size_t m, double sl, double ic, double *w, double *var, double *d,
                         double *z)
{
    for (size_t i = 1; i < m; i++) {
        int there = !isnan(top[i - 1]) && !isnan(top[i]);
        var[i] = !there ? NAN : low_var ? low_var[i] + sl * sl * low_var[i - 1] : 1.0;
        d[i] = low[i] - ic - sl * low[i - 1];
    }
    w[0] = var[0] = d[0] = 0;
    double med = median_var(var + 1, m - 1, z);
    for (size_t i = 1; i < m; i++)
        w[i] = const_weight(var[i], med);
}

/* The ramp's slope and the run's ratio from the tops alone, without any
 * instant.  Over a contact phase omega^2 = w^2 + K (1 - cos psi), psi the
 * angle from the top (2.1); an impact at psi = pi/N + beta multiplies
 * omega by r and the next phase starts at psi = -(pi/N - beta), so the
 * tops' squared speeds follow
 *   w'^2 = r^2 w^2 + K [(r^2 - 1)(1 - cos(pi/N) cos beta)
 *                       + (r^2 + 1) sin(pi/N) sin beta]:
 * a line through the pairs of consecutive tops gives r^2 as its slope and
 * beta from its intercept, K from the fits' curvature (c = K / 2 in
 * the measured angle whatever the calibration's scale; the intercept is
 * in the scale's square).  The line needs r the same at every impact,
 * which both of the paper's laws give, and tops spread over a range of
 * speeds, which the run's acceleration gives.  The pairs count by
 * const_weight(), and a second and a third pass leave out those farther
 * from the line than outlier_limit(): where neither beam saw the prism
 * the phases are bridged by lines, whose tops lie far off the run's line
 * with small variances, and three such pairs at a run's end moved r by
 * 2.7 of its standard errors (faulted corpus seed 85).  Returns 0 with
 * *beta, its standard error and r, or -1 when fewer than 8 pairs, no
 * spread, no root or no memory. */
int pl_lat_energy_fit(const double *top, const double *low, const double *low_var, size_t m,
                      double K, double delta, double scale, energy *e)
{
    if (m < 2)
        return -1;
    double *buf = malloc(4 * m * sizeof *buf);
    if (!buf)
        return -1;
    double *w = buf, *var = buf + m, *d = buf + 2 * m, *z = buf + 3 * m;
    eline L = {0};
    pair_weights(top, low, low_var, m, 1.0, 0.0, w, var, d, z);
    size_t used = energy_line(low, w, m, &L);
    for (int pass = 0; used && pass < 2; pass++) {
        pair_weights(top, low, low_var, m, L.sl, L.ic, w, var, d, z);
        drop_outliers(d + 1, var + 1, w + 1, m - 1, z);
        eline next;
        if (energy_line(low, w, m, &next) == 0)
            break;
        L = next;
    }
    free(buf);
    if (!used)
        return -1;
    double sl = L.sl, ic = L.ic, v_sl = L.v_sl, v_ic = L.v_ic, c_si = L.c_si, mx = L.mx;
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

/* The widest half-width smooth_tops() tries (pl_lat_smooth_phase() tries 2, 4
 * and 8 and keeps the best predictor). */
enum { TOPS_SMOOTH = 8 };

static double top_between(const walk *wk, const slot *v, size_t m, size_t i, arc_top *at)
{
    double lo = ceil(v[i].tc) + (double)wk->G + 1,
           hi = i + 1 < m ? floor(v[i + 1].tc) - (double)wk->G : 0;
    if (!(i + 1 < m && v[i + 1].k == v[i].k + 1 && lo > 0 && hi > lo))
        return NAN;
    double top = pl_lat_arc_top(wk, (size_t)lo, (size_t)hi, at), raw = at->raw;
    double mid = 0.5 * (wk->theta[(size_t)lo] + wk->theta[(size_t)hi - 1]), d = wk->delta;
    if (!isnan(top) && fabs(top - mid) <= 0.15 * d)
        return top;
    if (isfinite(raw) && at->curv < 0)
        raw += raw > mid ? -0.5 * d : 0.5 * d;   /* from the landing to its phase's top */
    for (int it = 0; it < TOP_RECENTRE && isfinite(raw) && fabs(raw - mid) < 0.5 * d; it++) {
        double a = pl_lat_time_of_theta(wk, raw - 0.4 * d, (size_t)lo > wk->W ? (size_t)lo - wk->W
                                                                       : wk->release, 1);
        double b = a > 0 ? pl_lat_time_of_theta(wk, raw + 0.4 * d, (size_t)a, 1) : NAN;
        if (isnan(a) || isnan(b))
            return NAN;
        double prev = raw;
        top = pl_lat_arc_top(wk, (size_t)ceil(a), (size_t)floor(b) + 1, at);
        raw = at->raw;
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
    for (size_t i = a; i < b; i++) {
        arc_top at;
        tp->top[i] = top_between(wk, x->v, x->m, i, &at);
        tp->top_var[i] = at.top_var;
        tp->low[i] = at.low;
        tp->low_var[i] = at.low_var;
        tp->curv[i] = at.curv;
        tp->curv_var[i] = at.curv_var;
    }
}

/* The tops smoothed along their own lattice: the top after slot i lies
 * at k_i delta plus the run's phase in the true angle, as the impacts do,
 * and theta's drift bends that line only slowly, so each top joins its
 * neighbours' line through pl_lat_smooth_phase() (the half-width by how well the
 * line predicts the tops it leaves out, the outliers dropped, the
 * variances from the measured scatter).  Unlike the impacts' angles from
 * two tops each, which share one top with each neighbour, the tops' errors
 * are independent from phase to phase: what 1/f noise does to one arc's
 * tilt it does not do to the next.  On corpus seed 52 (195 um/s of 1/f
 * noise) the tops' leave-one-out scatter was 1.4e-3 rad with one
 * neighbour each side and 1.3e-3 with two, which is 1.2e-3 of noise in
 * every top and no bend: three times what their fits' residuals said.
 * Into st and sv (NAN and INFINITY where no top), the bend of the tops'
 * lattice that their lines do not follow into *bend (0 when not known);
 * the tops unsmoothed, their variances times inflate, when memory runs
 * out. */
static void smooth_tops(const walk *wk, const slot *v, size_t m, const tops *tp,
                        double inflate, double *st, double *sv, double *rho, double *bend)
{
    slot *tv = malloc((m ? m : 1) * sizeof *tv);
    *bend = 0;
    for (size_t i = 0; i < m; i++) {
        double vt = inflate * tp->top_var[i];
        int ok = !isnan(tp->top[i]) && vt > 0 && isfinite(vt);
        st[i] = ok ? tp->top[i] : NAN;
        sv[i] = ok ? vt : INFINITY;
        if (rho)
            rho[i] = 0;
        if (tv) {
            tv[i] = v[i];
            tv[i].measured = ok;
            tv[i].theta = st[i];
            tv[i].var_theta = sv[i];
        }
    }
    if (!tv)
        return;
    pl_lat_smooth_phase_corr(tv, m, TOPS_SMOOTH, wk->delta, st, sv, rho, bend);
    for (size_t i = 0; i < m; i++)
        if (isnan(tp->top[i])) {
            st[i] = NAN;   /* no arc there: no top to stand for the impacts beside it */
            sv[i] = INFINITY;
            if (rho) {
                rho[i] = 0;
                if (i > 0)
                    rho[i - 1] = 0;
            }
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

/* Allocates tp's arrays for m slots, A and B NAN; -1 when any is
 * missing (the caller frees what was got). */
static int tops_alloc(tops *tp, size_t m)
{
    size_t sz = (m ? m : 1) * sizeof(double);
    tp->top = malloc(sz);
    tp->low = malloc(sz);
    tp->low_var = malloc(sz);
    tp->curv = malloc(sz);
    tp->curv_var = malloc(sz);
    tp->top_var = malloc(sz);
    tp->A = tp->B = NAN;
    return tp->top && tp->low && tp->low_var && tp->curv && tp->curv_var && tp->top_var ? 0 : -1;
}

/* A constant of the run from its measurements x[0..n) and their
 * variances: their mean weighted by const_weight(), less, in a second
 * and a third pass, those beyond outlier_limit() of it.  w[], d[], z[]
 * scratch.  NAN when none counts. */
static double robust_wmean(const double *x, const double *var, size_t n, double *w, double *d,
                           double *z)
{
    double med = median_var(var, n, z), mean = NAN;
    for (int pass = 0; pass < 3; pass++) {
        for (size_t k = 0; k < n; k++) {
            w[k] = isfinite(x[k]) ? const_weight(var[k], med) : 0;
            d[k] = x[k] - mean;
        }
        if (pass > 0)
            drop_outliers(d, var, w, n, z);
        double s = 0, sw = 0;
        for (size_t k = 0; k < n; k++)
            if (w[k] > 0) {
                s += w[k] * x[k];
                sw += w[k];
            }
        if (!(sw > 0))
            break;
        mean = s / sw;
    }
    return mean;
}

/* The tops of every interval into tp, the calibration's scale from their
 * spacing and K from their curvature (NAN when no two tops are
 * neighbours).  theta is measured in the calibration's units: a scale off
 * by a per cent stretches the lattice and beta alike, and the tops'
 * spacing (2 pi / N in truth) says by how much.  Both are constants of
 * the run: a phase counts less where its fit's variance stands far above
 * the others', and not at all far outside its own error
 * (robust_wmean()).  In the plain mean, phases measured by one beam through a shaking floor moved K
 * by 23 % and the scale by 1 % (faulted corpus seed 39, every ratio's
 * loss 38 % off), and phases bridged by lines where neither beam saw the
 * prism, with a third of the true curvature and a small residual, moved
 * K by 3 % (seed 85). */
static void tops_fit(const walk *wk, const slot *v, size_t m, tops *tp, double *scale,
                     double *K_out)
{
    const double *top = tp->top;
    tops_ctx tc = {v, m, tp};
    pl_lat_for_slots(wk, m, tops_range, &tc);
    *scale = 1.0;
    *K_out = NAN;
    size_t sz = (m ? m : 1) * sizeof(double), ns = 0, nc = 0;
    double *sp = malloc(sz), *spv = malloc(sz), *cu = malloc(2 * sz), *cuv = malloc(2 * sz),
           *z = malloc(6 * sz);
    if (sp && spv && cu && cuv && z) {
        for (size_t i = 1; i < m; i++) {
            if (isnan(top[i - 1]) || isnan(top[i]))
                continue;
            sp[ns] = top[i] - top[i - 1];
            spv[ns++] = tp->top_var[i - 1] + tp->top_var[i];
            /* each pair's two tops (as the plain mean of the pairs had it) */
            for (size_t j = i - 1; j <= i; j++) {
                cu[nc] = tp->curv[j];
                cuv[nc++] = tp->curv_var[j];
            }
        }
        size_t mm = 2 * (m ? m : 1);
        double s = robust_wmean(sp, spv, ns, z, z + mm, z + 2 * mm);
        double c = robust_wmean(cu, cuv, nc, z, z + mm, z + 2 * mm);
        if (s > 0)
            *scale = s / wk->delta;
        *K_out = 2 * c;   /* omega^2 = ... + K x^2 / 2 in either unit */
    }
    free(sp);
    free(spv);
    free(cu);
    free(cuv);
    free(z);
}

/* The slope that places the impacts, from the ramp's (beta, NaN when
 * unknown) and the run's own line (pl_lat_energy_fit(), its figures into st).
 * Choice: the ramp's slope from the run itself, whenever the line
 * fixes the ratio's loss to a tenth (its slope's error below
 * 0.1 (1 - r)); else the ramp's.  With the run's own beta the impacts'
 * ratios (tops_ratio()) average to the line's slope whatever beta's
 * own error, so their mean's error is the slope's (energy_ratio_se);
 * with the ramp's, an error of 0.002 deg in it (what a lab's ramp is
 * known to) moves every ratio by 4e-5-9e-5 on the paper's prisms, and
 * on the corpus the ramp's true slope left 6 chains with loss biases
 * of 3-5 %, the run's own none.  A run near its terminal speed, whose
 * tops barely change, keeps the ramp's. */
static double tops_beta(const walk *wk, const tops *tp, size_t m, double K, double scale,
                        double beta, int fixed, pl_lattice_stats *st)
{
    energy e;
    if (pl_lat_energy_fit(tp->top, tp->low, tp->low_var, m, K, wk->delta, scale, &e) == 0) {
        st->beta_data_rad = e.beta;
        st->beta_data_se_rad = e.beta_se;
        st->energy_ratio = e.r;
        st->energy_ratio_se = e.r_se;
        if (!isfinite(beta) || (!fixed && e.r_se < 0.1 * (1 - e.r))) {
            beta = e.beta;
            st->beta_from_data = 1;
        }
    }
    st->beta_used_rad = beta;
    return beta;
}

/* Each slot's lag (samples) from its smoothed angle ths[i] to where its
 * tops put it, into lag[]; returns how many slots have tops both sides. */
static size_t tops_lags(const walk *wk, const slot *v, size_t m, const tops *tp, double scale,
                        double beta, const double *ths, double *lag)
{
    const double *top = tp->top;
    size_t n = 0;
    for (size_t i = 1; i < m; i++) {
        size_t c = (size_t)llround(v[i].tc);
        if (isnan(top[i - 1]) || isnan(top[i]) || c < wk->G || c + wk->G >= wk->n)
            continue;
        double rate = (wk->theta[c + wk->G] - wk->theta[c - wk->G]) / (double)(2 * wk->G);
        if (rate > 0)
            lag[n++] = (0.5 * (top[i - 1] + top[i]) + scale * beta - ths[i]) / rate;
    }
    return n;
}

/* Moves every smoothed angle by omega times shift (samples). */
static void shift_angles(const walk *wk, const slot *v, size_t m, double shift, double *ths)
{
    for (size_t i = 0; i < m; i++) {
        size_t c = (size_t)llround(v[i].tc);
        if (c < wk->G || c + wk->G >= wk->n)
            continue;
        ths[i] += shift * (wk->theta[c + wk->G] - wk->theta[c - wk->G]) / (double)(2 * wk->G);
    }
}

/* How much the tops' own variances understate the scatter of their
 * angles about the lattice's (excess_scatter(), r2 the scratch).  A top's
 * variance from its fit's residuals holds for white noise only; 1/f noise
 * bends the arc as a whole, so the variances are first scaled to the
 * scatter of the two angles about each other (the median of the squared
 * differences over their summed variances, which is 0.455 for a
 * consistent pair). */
static double tops_inflate(size_t m, const tops *tp, double scale, double beta,
                           const double *ths, const double *vars, double *r2)
{
    const double *top = tp->top;
    size_t nr = 0;
    for (size_t i = 1; i < m; i++) {
        double vt = 0.25 * (tp->top_var[i - 1] + tp->top_var[i]);
        if (isnan(top[i - 1]) || isnan(top[i]) || !(vt > 0) || !isfinite(vt) ||
            !(vars[i] > 0) || !isfinite(vars[i]))
            continue;
        double d = 0.5 * (top[i - 1] + top[i]) + scale * beta - ths[i];
        r2[nr++] = d * d / (vt + vars[i]);
    }
    return excess_scatter(r2, nr);
}

/* Each impact's angle from its tops into tt[i] and its variance into
 * vt[i] (tt NAN where none): the mean of the tops either side plus beta,
 * from the smoothed tops (s_top, s_var; s_var NULL: none) where both
 * sides have them, from the raw tops' variances times inflate where
 * only those are, from one smoothed top where one side has none.  cv[i]
 * what the two smoothed tops' covariance adds to vt[i] (s_rho, their
 * correlation; NULL: none; cv NULL: not wanted): the angle's variance
 * is vt + cv, while vt alone weighs it against the lattice's
 * (join_angles()). */
static void tops_angles(const walk *wk, size_t m, const tops *tp, double scale, double beta,
                        double inflate, const double *s_top, const double *s_var,
                        const double *s_rho, double *tt, double *vt, double *cv)
{
    const double *top = tp->top;
    double half = 0.5 * wk->delta;
    for (size_t i = 0; i < m; i++) {
        int left = i > 0 && !isnan(top[i - 1]), right = !isnan(top[i]);
        int sl = s_var && i > 0 && isfinite(s_top[i - 1]) && isfinite(s_var[i - 1]),
            sr = s_var && isfinite(s_top[i]) && isfinite(s_var[i]);
        tt[i] = NAN;
        if (cv)
            cv[i] = 0;
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
                tt[i] = s_top[i] - scale * (half - beta);
                vt[i] = s_var[i];
            } else if (left && sl) {
                tt[i] = s_top[i - 1] + scale * (half + beta);
                vt[i] = s_var[i - 1];
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
            /* The two smoothed tops share most of their neighbours, so
             * their errors move together (s_rho: from the lines' weights)
             * and their mean has nearly one top's variance: a quarter of
             * the summed variances alone left the instants' t_sd_s 1.8
             * times short of their scatter on the foreign 5 kHz run.
             * The covariance goes into the variance only (cv), not into
             * the weights: weighted by it, the lattice's line took over
             * where the tops had placed the impacts (faulted corpus seed
             * 237 lost one inside a lost beam's stretch, 2.1 ms off). */
            double rho = s_rho ? s_rho[i - 1] : 0;
            tt[i] = 0.5 * (s_top[i - 1] + s_top[i]) + scale * beta;
            vt[i] = 0.25 * (s_var[i - 1] + s_var[i]);
            if (cv)
                cv[i] = 0.5 * rho * sqrt(s_var[i - 1] * s_var[i]);
        }
    }
}

/* The lattice's angles (ths, vars) and the tops' (tt, vt, cv) joined by
 * their variances.  bend_l and bend_t: the variances of theta's bend
 * that the lattice's line and the tops' lines do not follow
 * (pl_lat_smooth_phase()).  Both lines miss the same bend of the same
 * theta, so their misses add as one (fully correlated): the joined
 * angle misses the bend by the weighted mean of the two misses.  The
 * bends, like the covariance of the two smoothed tops (cv,
 * tops_angles()), enter the variance only, not the weights: weighted by
 * them, the lattice's line took over wherever the tops' bend stood out,
 * and placed the instants worse (the foreign 1/f run's error 40 -> 45
 * us; faulted corpus seed 741's median instant 0.190 -> 0.201 ms, past
 * its limit).
 * The two angles' disagreement does not scale the result (a Birge
 * ratio): the slow error that neighbouring tops share is the bend,
 * measured for each line, and the disagreement cannot tell whose error
 * it is (on the foreign clipped run the lattice line's steps lag by a
 * drifting amount, and their disagreement took the honest tops'
 * variance up 2.8 times). */
static void join_angles(size_t m, const double *tt, const double *vt, const double *cv,
                        double bend_l, double bend_t, double *ths, double *vars)
{
    double bl = sqrt(bend_l), bt = sqrt(bend_t);
    for (size_t i = 0; i < m; i++) {
        double c = cv ? cv[i] : 0;
        if (isnan(tt[i])) {
            vars[i] += bend_l;
            continue;
        }
        if (!(vars[i] > 0) || !isfinite(vars[i])) {
            ths[i] = tt[i];
            vars[i] = vt[i] + c + bend_t;
            continue;
        }
        double w1 = 1 / vars[i], w2 = 1 / vt[i], w = w1 + w2;
        double b = (w1 * bl + w2 * bt) / w;
        ths[i] = (w1 * ths[i] + w2 * tt[i]) / w;
        vars[i] = (w1 * w1 * vars[i] + w2 * w2 * (vt[i] + c)) / (w * w) + b * b;
    }
}

/* Then each impact's own angle from its two tops joins the lattice's by
 * their variances.  The lattice's line rests on the slots' steps, which
 * at the start of a run (slow, small steps in the noise) are few and
 * extrapolated from one side: there it was 0.006 rad off (2.6 ms) where
 * the tops, each from a whole contact phase, were within 0.002.  bend:
 * the lattice's line's (join_angles()).  lag is m doubles of scratch.
 * Returns 0 when out of memory (nothing joined). */
static int join_tops(const walk *wk, const slot *v, size_t m, const tops *tp, double scale,
                     double beta, double *ths, double *vars, double bend, double *lag)
{
    size_t sz = (m ? m : 1) * sizeof(double);
    double inflate = tops_inflate(m, tp, scale, beta, ths, vars, lag);
    /* the tops smoothed along their lattice (smooth_tops()), in lag[]
     * and a second array */
    double *sv = malloc(sz), *s_top = lag, *tt = malloc(sz), *vt = malloc(sz);
    double *rho = malloc(sz), *cv = malloc(sz), bend_t = 0;
    if (sv && tt && vt)
        smooth_tops(wk, v, m, tp, inflate, s_top, sv, rho, &bend_t);
    if (tt && vt) {
        tops_angles(wk, m, tp, scale, beta, inflate, s_top, sv, rho, tt, vt, cv);
        join_angles(m, tt, vt, cv, bend, bend_t, ths, vars);
    }
    free(tt);
    free(vt);
    free(sv);
    free(rho);
    free(cv);
    return tt && vt;
}

/* The lattice's bend (pl_lat_smooth_phase()) into every smoothed angle's
 * variance vars[0..m-1] where no tops join them (join_angles() does it
 * where they do). */
static void add_bend(double *vars, size_t m, double bend)
{
    for (size_t i = 0; i < m; i++)
        vars[i] += bend;
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
double pl_lat_top_shift(const walk *wk, const slot *v, size_t m, double *ths, double *vars,
                        double bend, double beta, int beta_fixed, tops *tp,
                        pl_lattice_stats *st)
{
    size_t sz = (m ? m : 1) * sizeof(double);
    double *lag = malloc(sz), shift = 0, scale, K;
    int joined = 0;
    if (tops_alloc(tp, m) != 0 || !lag) {
        free(lag);
        pl_lat_tops_free(tp);
        *tp = (tops){.A = NAN, .B = NAN};
        add_bend(vars, m, bend);
        return 0;
    }
    tops_fit(wk, v, m, tp, &scale, &K);
    beta = tops_beta(wk, tp, m, K, scale, beta, beta_fixed, st);
    if (isfinite(beta) && K > 0) {
        double al = wk->delta / 2;
        tp->A = scale * scale * K * (1 - cos(al + beta));
        tp->B = scale * scale * K * (1 - cos(al - beta));
        size_t n = tops_lags(wk, v, m, tp, scale, beta, ths, lag);
        if (n >= 8) {
            shift = pl_median(lag, n);
            shift_angles(wk, v, m, shift, ths);
            joined = join_tops(wk, v, m, tp, scale, beta, ths, vars, bend, lag);
        }
    }
    if (!joined)
        add_bend(vars, m, bend);
    free(lag);
    return shift;
}
