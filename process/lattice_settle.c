/* process/lattice_settle.c - after the walk: the ringing taken out or
 * the gap narrowed, and the slot past the last (lattice_settle.h). */
#include "process/lattice_settle.h"

#include "process/lattice_arcs.h"
#include "process/lattice_ring.h"
#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

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
        if (pl_lat_stack_slot(wk, &v[i], L, &J, &c, &frac, &d) != 0)
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
        if (pl_lat_locate(wk, tc[i], fmin(prev, next), &f) != 0 ||
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
    pl_lat_for_slots(wk, m, remeasure_range, &x);
    free(tc);
}

/* After the walk: the ringing's shape from the stack, then each impact's
 * own size and onset, taken out of the signal and found again on what is
 * left (the arcs come out cleaner each pass); without ringing, the gap is
 * narrowed to the transitions and the instants located again. */
void pl_lat_settle(walk *wk, slot *v, size_t m)
{
    ringing rg;
    pl_lat_ring_estimate(wk, v, m, &rg);
    for (int pass = 0; rg.w > 0 && pass < PL_RING_PASSES; pass++) {
        ringing old = wk->ring;
        if (pass > 0)
            rg.onset = 0;   /* the slots' onsets are their instants now */
        pl_lat_ring_onsets(wk, &old, v, m, &rg);
        pl_lat_ring_apply(wk, v, m, +1.0);   /* nothing taken out yet on pass 0 */
        for (size_t i = 0; i < m; i++) {
            v[i].ring_amp = v[i].next_amp;
            v[i].ring_t = v[i].next_t;
        }
        wk->ring = rg;
        pl_lat_ring_apply(wk, v, m, -1.0);
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

int pl_lat_end_slot(walk *wk, double tp, double kappa, double lag, long k, double th,
                    slot *s)
{
    size_t G = wk->G, c = (size_t)ceil(tp);
    /* as far from the end as the impact's own arcs need (pl_lat_fit_arcs_at()) */
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
         * (pl_lat_ring_onsets()): tied, D kappa from t0; free, from its phase
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
        pl_lat_ring_apply(wk, s, 1, -1.0);
    }
    return 0;
}

/* Adds the slot past the last when pl_lat_end_slot() finds it; returns the new
 * count (m or m + 1).  sl has room for one more. */
size_t pl_lat_extend_end(walk *wk, slots *sl, size_t m)
{
    enum { SPAN = 8 };
    if (m < SPAN + 1)
        return m;
    slot *v = sl->v;
    double spacing = (v[m - 1].theta - v[m - 1 - SPAN].theta) / SPAN;
    if (!(spacing > 0.5 * wk->delta && spacing < 1.5 * wk->delta))
        spacing = wk->delta;
    double th = v[m - 1].theta + spacing;
    double tp = pl_lat_time_of_theta(wk, th, (size_t)v[m - 1].tc, 1);
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
    if (pl_lat_end_slot(wk, tp, kappa, lag, v[m - 1].k + 1, th, &s) != 0)
        return m;
    if (m < sl->n)
        sl->v[m] = s;
    else if (pl_lat_push(sl, s) != 0)
        return m;
    return m + 1;
}

