/* process/lattice_delay.c - the decoder's delay from the run's stacked
 * steps (lattice_delay.h). */
#include "process/lattice_delay.h"

#include <math.h>
#include <stdlib.h>

/* The stack: every sample inside a transition, u samples from its impact's
 * located instant, r its omega less the line before, dl the step there
 * (line after - line before), g its impact's jackknife group. */
typedef struct {
    double *u, *r, *dl;
    int *g;
    size_t m;
} stack;

enum { GROUPS = 8, MIN_IMPACTS = 8 };

/* Step response of the unit-DC second-order low-pass with damping zeta
 * whose delay at DC is tau (samples), t samples after the step. */
static double step_resp(double t, double tau, double zeta)
{
    if (t <= 0)
        return 0;
    double wn = 2 * zeta / tau;
    if (zeta < 0.999) {
        double q = sqrt(1 - zeta * zeta), wd = wn * q;
        return 1 - exp(-zeta * wn * t) * (cos(wd * t) + zeta / q * sin(wd * t));
    }
    if (zeta <= 1.001)
        return 1 - exp(-wn * t) * (1 + wn * t);
    double q = sqrt(zeta * zeta - 1), p1 = wn * (zeta - q), p2 = wn * (zeta + q);
    return 1 - (p2 * exp(-p1 * t) - p1 * exp(-p2 * t)) / (p2 - p1);
}

/* The stack's squared misfit for a start s and width tau, leaving group
 * skip out (-1: none). */
static double misfit(const stack *st, double s, double tau, double zeta, int skip)
{
    double e = 0;
    for (size_t i = 0; i < st->m; i++) {
        if (st->g[i] == skip)
            continue;
        double d = st->r[i] - st->dl[i] * step_resp(st->u[i] - s, tau, zeta);
        e += d * d;
    }
    return e;
}

/* Least-squares line y = a + b x through x[0..n), y[0..n). */
static void line_fit(const double *x, const double *y, size_t n, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    double den = (double)n * sxx - sx * sx;
    *b = den != 0 ? ((double)n * sxy - sx * sy) / den : 0;
    *a = (sy - *b * sx) / (double)n;
}

/* One impact's transition onto the stack: samples within H of the
 * instant c, the lines from F samples beyond each side.  0 when it does
 * not fit inside the signal or holds a non-finite sample. */
static int push_impact(const walk *wk, double c, size_t H, size_t F, int group, stack *st,
                       double *x, double *y)
{
    double lo = c - (double)(H + F), hi = c + (double)(H + F);
    if (lo < (double)wk->release || hi >= (double)wk->end - 1)
        return 0;
    size_t k0 = (size_t)ceil(lo), kb = (size_t)ceil(c - (double)H);
    size_t ka = (size_t)floor(c + (double)H) + 1, k1 = (size_t)floor(hi) + 1;
    double ab, bb, aa, ba;
    size_t nb = 0, na = 0;
    for (size_t k = k0; k < kb; k++, nb++) {
        x[nb] = (double)k - c;
        y[nb] = wk->om[k];
    }
    line_fit(x, y, nb, &ab, &bb);
    for (size_t k = ka; k < k1; k++, na++) {
        x[na] = (double)k - c;
        y[na] = wk->om[k];
    }
    line_fit(x, y, na, &aa, &ba);
    if (nb < 2 || na < 2 || !isfinite(ab + bb + aa + ba))
        return 0;
    size_t m0 = st->m;
    for (size_t k = kb; k < ka; k++) {
        double u = (double)k - c;
        if (!isfinite(wk->om[k])) {
            st->m = m0;
            return 0;
        }
        st->u[st->m] = u;
        st->r[st->m] = wk->om[k] - (ab + bb * u);
        st->dl[st->m] = (aa + ba * u) - (ab + bb * u);
        st->g[st->m++] = group;
    }
    return 1;
}

/* The best start *s and width *tau for damping zeta, leaving group skip
 * out: a coarse grid, then alternating golden-section searches (the
 * misfit is smooth in both near its minimum).  Returns the misfit. */
static double fit_shape(const stack *st, double zeta, size_t H, int skip, double *s,
                        double *tau)
{
    double best = INFINITY, bs = 0, bt = 1;
    for (int i = 0; i < 14; i++) {
        double t = 0.05 * pow(0.5 * (double)H / 0.05, i / 13.0);
        for (int j = 0; j <= 40; j++) {
            double sj = -0.6 * (double)H + j * 0.02 * (double)H;
            double e = misfit(st, sj, t, zeta, skip);
            if (e < best) {
                best = e;
                bs = sj;
                bt = t;
            }
        }
    }
    const double gr = 0.5 * (sqrt(5.0) - 1);
    double hs = 0.03 * (double)H, lt = log(bt), hl = 0.3;
    for (int round = 0; round < 6; round++) {
        double a = bs - hs, b = bs + hs;
        for (int it = 0; it < 24; it++) {
            double c1 = b - gr * (b - a), c2 = a + gr * (b - a);
            if (misfit(st, c1, bt, zeta, skip) < misfit(st, c2, bt, zeta, skip))
                b = c2;
            else
                a = c1;
        }
        bs = 0.5 * (a + b);
        a = lt - hl;
        b = lt + hl;
        for (int it = 0; it < 24; it++) {
            double c1 = b - gr * (b - a), c2 = a + gr * (b - a);
            if (misfit(st, bs, exp(c1), zeta, skip) < misfit(st, bs, exp(c2), zeta, skip))
                b = c2;
            else
                a = c1;
        }
        lt = 0.5 * (a + b);
        bt = exp(lt);
        hs *= 0.7;
        hl *= 0.7;
    }
    *s = bs;
    *tau = bt;
    return misfit(st, bs, bt, zeta, skip);
}

/* The stack of the confirmed impacts whose neighbours leave their
 * windows alone. */
static size_t build_stack(const walk *wk, const pl_impact *imp, size_t n, size_t H, size_t F,
                          stack *st)
{
    double *x = malloc((H + F + 2) * sizeof *x), *y = malloc((H + F + 2) * sizeof *y);
    size_t used = 0;
    if (!x || !y) {
        free(x);
        free(y);
        return 0;
    }
    double reach = 2.0 * (double)(H + F) / wk->rate;
    for (size_t i = 0; i < n; i++) {
        if (!imp[i].confirmed || (i > 0 && imp[i].t_s - imp[i - 1].t_s < reach) ||
            (i + 1 < n && imp[i + 1].t_s - imp[i].t_s < reach))
            continue;
        used += push_impact(wk, imp[i].t_s * wk->rate, H, F, (int)(used % GROUPS), st, x, y);
    }
    free(x);
    free(y);
    return used;
}

int pl_lat_decoder_delay(const walk *wk, const pl_impact *imp, size_t n, pl_lat_delay *d)
{
    static const double zetas[] = {0.6, 0.707, 0.866, 1.0, 1.5};
    enum { NZ = sizeof zetas / sizeof zetas[0] };
    d->shift_s = d->shift_sd_s = d->width_s = d->zeta = 0;
    d->used = 0;
    /* the transition: the gap the arcs leave out, at least 0.6 ms (a 1 kHz
     * decoder's step is settled to a few per cent there) */
    size_t H = (size_t)ceil(fmax((double)wk->G, 1.0e-3 * wk->rate)), F = (size_t)ceil(2e-3 * wk->rate);
    size_t cap = n * (2 * H + 2) + 1;
    stack st = {malloc(cap * sizeof *st.u), malloc(cap * sizeof *st.r),
                malloc(cap * sizeof *st.dl), malloc(cap * sizeof *st.g), 0};
    if (!st.u || !st.r || !st.dl || !st.g) {
        free(st.u);
        free(st.r);
        free(st.dl);
        free(st.g);
        return -1;
    }
    size_t used = build_stack(wk, imp, n, H, F, &st);
    if (used >= MIN_IMPACTS) {
        double best = INFINITY, s = 0, tau = 1, zeta = 1;
        for (int z = 0; z < NZ; z++) {
            double sz, tz, e = fit_shape(&st, zetas[z], H, -1, &sz, &tz);
            if (e < best) {
                best = e;
                s = sz;
                tau = tz;
                zeta = zetas[z];
            }
        }
        double sg[GROUPS], mean = 0, ss = 0;
        for (int g = 0; g < GROUPS; g++) {
            double tg;
            fit_shape(&st, zeta, H, g, &sg[g], &tg);
            mean += sg[g] / GROUPS;
        }
        for (int g = 0; g < GROUPS; g++)
            ss += (sg[g] - mean) * (sg[g] - mean);
        d->shift_s = s / wk->rate;
        d->shift_sd_s = sqrt((GROUPS - 1.0) / GROUPS * ss) / wk->rate;
        d->width_s = tau / wk->rate;
        d->zeta = zeta;
        d->used = used;
    }
    free(st.u);
    free(st.r);
    free(st.dl);
    free(st.g);
    return 0;
}
