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

/* The stack binned in u (equivalent time): each bin's weighted mean
 * y = sum r dl / sum dl^2, its weight w = sum dl^2 and mean u. */
typedef struct {
    double *u, *y, *w;
    size_t nb;
} bins;

enum { GROUPS = 8, MIN_IMPACTS = 8, MAX_BINS = 400, QUAD = 6 };

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

/* The analogue model: an impact whose surface takes dur samples to reach
 * its new speed (a raised cosine, symmetric about its middle), through
 * the decoder; t from the impact's start. */
static double shaped_resp(double t, double tau, double zeta, double dur)
{
    if (dur < 0.02)
        return step_resp(t, tau, zeta);
    double acc = 0, wsum = 0;
    for (int q = 0; q < QUAD; q++) {
        double x = (q + 0.5) / QUAD, w = sin(M_PI * x);
        acc += w * step_resp(t - dur * x, tau, zeta);
        wsum += w;
    }
    return acc / wsum;
}

/* The analogue model's parameters: start s (samples from the located
 * instant), decoder delay tau, damping zeta, impact duration dur. */
typedef struct {
    double s, tau, zeta, dur;
} shape;

static double shape_misfit(const bins *b, const shape *p)
{
    double e = 0;
    for (size_t i = 0; i < b->nb; i++) {
        double d = b->y[i] - shaped_resp(b->u[i] - p->s, p->tau, p->zeta, p->dur);
        e += b->w[i] * d * d;
    }
    return e;
}

/* Golden-section search of *x in [lo, hi] for the least misfit, the
 * other parameters held. */
static void golden(const bins *b, shape *p, double *x, double lo, double hi, int logscale)
{
    const double gr = 0.5 * (sqrt(5.0) - 1);
    double a = lo, c = hi;
    for (int it = 0; it < 20; it++) {
        double c1 = c - gr * (c - a), c2 = a + gr * (c - a);
        *x = logscale ? exp(c1) : c1;
        double e1 = shape_misfit(b, p);
        *x = logscale ? exp(c2) : c2;
        double e2 = shape_misfit(b, p);
        if (e1 < e2)
            c = c2;
        else
            a = c1;
    }
    *x = logscale ? exp(0.5 * (a + c)) : 0.5 * (a + c);
}

/* Refines p from where it stands: the start, the width and the duration
 * in turn, each over a shrinking range.  Returns the misfit. */
static double refine_shape(const bins *b, shape *p, double dur_max)
{
    double hs = 0.6, hl = 0.4, hd = 0.12 * dur_max;
    for (int round = 0; round < 8; round++) {
        golden(b, p, &p->s, p->s - hs, p->s + hs, 0);
        double lt = log(p->tau);
        golden(b, p, &p->tau, lt - hl, lt + hl, 1);
        if (dur_max > 0)
            golden(b, p, &p->dur, fmax(0, p->dur - hd), fmin(dur_max, p->dur + hd), 0);
        hs *= 0.6;
        hl *= 0.6;
        hd *= 0.6;
    }
    return shape_misfit(b, p);
}

/* The best analogue shape: for each damping and each of a grid of
 * durations (dur_max samples at most) a coarse grid of start and width,
 * refined with the duration held; the best of those refined with the
 * duration free.  The duration is gridded, not only refined: a long
 * impact and a slow decoder round the step alike, and a search along all
 * three at once stays in the valley between them. */
static double fit_shape(const bins *b, double H, double dur_max, shape *best)
{
    static const double zetas[] = {0.707, 0.866, 1.2};
    enum { NT = 10, NS = 40, ND = 6 };
    double emin = INFINITY;
    for (int z = 0; z < 3; z++)
        for (int k = 0; k < ND; k++) {
            shape p = {0, 1, zetas[z], dur_max * k / (ND - 1)}, g = p;
            double eg = INFINITY;
            for (int i = 0; i < NT; i++) {
                p.tau = 0.1 * pow(0.5 * H / 0.1, i / (NT - 1.0));
                for (int j = 0; j <= NS; j++) {
                    p.s = -0.8 * H + j * (0.9 * H / NS) - 0.5 * p.dur;
                    double e = shape_misfit(b, &p);
                    if (e < eg) {
                        eg = e;
                        g = p;
                    }
                }
            }
            double e = refine_shape(b, &g, 0);
            if (e < emin) {
                emin = e;
                *best = g;
            }
        }
    if (dur_max > 0)
        emin = refine_shape(b, best, dur_max);
    return emin;
}

/* The staircase of a decoder that samples the velocity before it filters
 * (a digital loop at the card's rate): it sees the contact only at the
 * first sample after it, so every impact's output takes the same levels
 * from there whatever the sub-sample phase, and stacked against u they
 * step at the contact's place e.  Levels fitted freely, 0 before e; the
 * misfit, and the first level with its weight. */
static double stair_misfit(const bins *b, double e, double *lev, double *wt, size_t L,
                           double *first, double *first_w)
{
    for (size_t j = 0; j < L; j++)
        lev[j] = wt[j] = 0;
    for (size_t i = 0; i < b->nb; i++) {
        if (b->u[i] < e)
            continue;
        size_t j = (size_t)(b->u[i] - e);
        j = j < L ? j : L - 1;
        lev[j] += b->w[i] * b->y[i];
        wt[j] += b->w[i];
    }
    for (size_t j = 0; j < L; j++)
        lev[j] = wt[j] > 0 ? lev[j] / wt[j] : 0;
    double m = 0;
    for (size_t i = 0; i < b->nb; i++) {
        double f = 0;
        if (b->u[i] >= e) {
            size_t j = (size_t)(b->u[i] - e);
            f = lev[j < L ? j : L - 1];
        }
        m += b->w[i] * (b->y[i] - f) * (b->y[i] - f);
    }
    *first = lev[0];
    *first_w = wt[0];
    return m;
}

/* The staircase's edge near s0: the least misfit over [s0 + lo, s0 + hi]
 * with L levels (the last takes everything after), then (walk) later by
 * whole samples while the first level is not 3 standard errors above 0
 * (the output starts to move at the contact: a level of 0 before it fits
 * as well).  var: the noise of one sample (r units).  Returns the misfit;
 * *e the edge, -1 when out of memory. */
static double fit_stair(const bins *b, double s0, double lo, double hi, size_t L, double var,
                        int walk, double *e)
{
    double *lev = malloc(2 * L * sizeof *lev);
    if (!lev)
        return -1;
    double best = INFINITY, f, fw;
    *e = s0;
    for (int i = 0; i <= (int)((hi - lo) * 100); i++) {
        double ei = s0 + lo + 0.01 * i;
        double m = stair_misfit(b, ei, lev, lev + L, L, &f, &fw);
        if (m < best) {
            best = m;
            *e = ei;
        }
    }
    for (int k = 0; walk && k < 3; k++) {
        best = stair_misfit(b, *e, lev, lev + L, L, &f, &fw);
        if (fw > 0 && f > 3 * sqrt(var / fw))
            break;
        *e += 1;
    }
    best = stair_misfit(b, *e, lev, lev + L, L, &f, &fw);
    free(lev);
    return best;
}

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

/* The stack binned in u over [-H, H], leaving group skip out (-1: none);
 * *within: the points' squared scatter inside their bins. */
static void bin_stack(const stack *st, double H, int skip, bins *b, double *within)
{
    size_t nb = b->nb;
    double bw = 2 * H / (double)nb;
    double *sy = calloc(nb, sizeof *sy);
    for (size_t j = 0; j < nb; j++)
        b->u[j] = b->y[j] = b->w[j] = 0;
    for (size_t i = 0; i < st->m; i++) {
        if (st->g[i] == skip)
            continue;
        long j = (long)floor((st->u[i] + H) / bw);
        j = j < 0 ? 0 : (j >= (long)nb ? (long)nb - 1 : j);
        double w = st->dl[i] * st->dl[i];
        b->w[j] += w;
        b->y[j] += st->r[i] * st->dl[i];
        b->u[j] += w * st->u[i];
        if (sy)
            sy[j] += st->r[i] * st->r[i];
    }
    *within = 0;
    for (size_t j = 0; j < nb; j++)
        if (b->w[j] > 0) {
            b->u[j] /= b->w[j];
            *within += (sy ? sy[j] : 0) - b->y[j] * b->y[j] / b->w[j];
            b->y[j] /= b->w[j];
        }
    free(sy);
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

/* The contact (samples from the located instants) by the model that fits
 * the bins better: the staircase (its levels over three decoder widths
 * free) is charged its free parameters in noise (AIC) as the analogue
 * curve its four.  *stair whether the staircase won, *fit the analogue
 * fit. */
static double contact_of(const bins *b, double H, double dur_max, double var, int *stair,
                         shape *fit, size_t *levels)
{
    shape p = {0, 1, 1, 0};
    double ea = fit_shape(b, H, dur_max, &p), e;
    *fit = p;
    size_t L = (size_t)ceil(3 * p.tau) + 2;
    double es = fit_stair(b, p.s, -1.5, 1.0, L, var, 1, &e);
    *levels = L;
    *stair = es >= 0 && es + 2.0 * ((double)L + 1) * var < ea + 2.0 * 4 * var;
    return *stair ? e : p.s + 0.5 * p.dur;
}

/* The contact with a group left out (b), by the model the whole stack
 * chose, from where the whole stack put it (c, fit). */
static double contact_without(const bins *b, double dur_max, double var, int stair, size_t L,
                              double c, const shape *fit)
{
    if (stair) {
        double e;
        fit_stair(b, c, -0.5, 0.5, L, var, 0, &e);
        return e;
    }
    shape p = *fit;
    refine_shape(b, &p, dur_max);
    return p.s + 0.5 * p.dur;
}

int pl_lat_decoder_delay(const walk *wk, const pl_impact *imp, size_t n, pl_lat_delay *d)
{
    d->shift_s = d->shift_sd_s = d->width_s = d->zeta = 0;
    d->used = 0;
    d->sampled = 0;
    /* the transition: the gap the arcs leave out, at least 1 ms (a 1 kHz
     * decoder's step has settled there), lines over 2 ms beyond */
    size_t H = (size_t)ceil(fmax((double)wk->G, 1.0e-3 * wk->rate));
    size_t F = (size_t)ceil(2e-3 * wk->rate);
    size_t cap = n * (2 * H + 2) + 1, nb = (size_t)fmin(MAX_BINS, 20.0 * (double)H);
    stack st = {malloc(cap * sizeof *st.u), malloc(cap * sizeof *st.r),
                malloc(cap * sizeof *st.dl), malloc(cap * sizeof *st.g), 0};
    bins b = {malloc(nb * sizeof *b.u), malloc(nb * sizeof *b.y), malloc(nb * sizeof *b.w), nb};
    int ok = st.u && st.r && st.dl && st.g && b.u && b.y && b.w;
    size_t used = ok ? build_stack(wk, imp, n, H, F, &st) : 0;
    if (ok && used >= MIN_IMPACTS) {
        /* impacts last up to 0.6 ms (docs/rig.md: 0.1-0.5 ms) */
        double within, Hd = (double)H, dur_max = fmin(0.6e-3 * wk->rate, Hd);
        bin_stack(&st, Hd, -1, &b, &within);
        double var = within / (double)(st.m > nb + 1 ? st.m - nb : 1);
        int stair;
        size_t L;
        shape fit;
        double s = contact_of(&b, Hd, dur_max, var, &stair, &fit, &L);
        double sg[GROUPS], mean = 0, ss = 0;
        for (int g = 0; g < GROUPS; g++) {
            bin_stack(&st, Hd, g, &b, &within);
            sg[g] = contact_without(&b, dur_max, var, stair, L, s, &fit);
            mean += sg[g] / GROUPS;
        }
        for (int g = 0; g < GROUPS; g++)
            ss += (sg[g] - mean) * (sg[g] - mean);
        d->shift_s = s / wk->rate;
        d->shift_sd_s = sqrt((GROUPS - 1.0) / GROUPS * ss) / wk->rate;
        d->width_s = fit.tau / wk->rate;
        d->zeta = fit.zeta;
        d->sampled = stair;
        d->used = used;
    }
    free(st.u);
    free(st.r);
    free(st.dl);
    free(st.g);
    free(b.u);
    free(b.y);
    free(b.w);
    return ok ? 0 : -1;
}
