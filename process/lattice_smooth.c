/* process/lattice_smooth.c - the slots' angles smoothed along the
 * lattice (lattice_smooth.h). */
#include "process/lattice_smooth.h"

#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

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

/* The line at slot i, a slot pl_lat_smooth_phase() dropped, when its window of
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

/* The correlation of the lines at slots i and i + 1 (half-width M, the
 * measured slots only), from their hat weights: both rest on nearly the
 * same neighbours, so their errors move together (0.94 for two lines of
 * 17 tops), and a mean of the two has nearly one line's variance, not
 * half of it.  0 where either line is not at hand. */
static double line_corr(const slot *v, size_t n, size_t i, int M, double delta)
{
    if (i + 1 >= n)
        return 0;
    psum a = {0}, b = {0};
    size_t lo = i > (size_t)M ? i - (size_t)M : 0;
    size_t hi = i + 1 + (size_t)M + 1 < n ? i + 1 + (size_t)M + 1 : n;
    for (size_t j = lo; j < hi; j++) {
        if (j + (size_t)M >= i && j <= i + (size_t)M)
            psum_add(&a, &v[j], v[i].k, delta, 1);
        if (j + (size_t)M >= i + 1 && j <= i + 1 + (size_t)M)
            psum_add(&b, &v[j], v[i + 1].k, delta, 1);
    }
    double da = a.sw * a.skk - a.sk * a.sk, db = b.sw * b.skk - b.sk * b.sk;
    if (a.sw < 1.5 || b.sw < 1.5 || !(da > 1e-12 * a.sw * a.skk) || !(db > 1e-12 * b.sw * b.skk))
        return 0;
    /* the weight of slot j in the line's value at k: (skk - sk (k_j - k)) / det */
    double sab = 0, saa = 0, sbb = 0;
    for (size_t j = lo; j < hi; j++) {
        if (!phase_used(&v[j]))
            continue;
        int ina = j + (size_t)M >= i && j <= i + (size_t)M;
        int inb = j + (size_t)M >= i + 1 && j <= i + 1 + (size_t)M;
        double wa = ina ? (a.skk - a.sk * (double)(v[j].k - v[i].k)) / da : 0;
        double wb = inb ? (b.skk - b.sk * (double)(v[j].k - v[i + 1].k)) / db : 0;
        sab += wa * wb;
        saa += wa * wa;
        sbb += wb * wb;
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

/* The bend of the lattice that a line of half-width M does not follow
 * (rad^2, a variance common to every smoothed angle), ps holding the
 * sums of half-width M; r, h and ps2 scratch of n.  The slots sample
 * theta less k delta, and theta is the integral of omega with its noise:
 * the noise's slow part (1/f noise, a floor or hum left in, a drift)
 * bends theta between the slots, and a line through them misses the bend
 * at its centre by the local curvature times the window's mean squared
 * offset, M (M + 1) / 3 slots^2.  The slots' scatter about their lines
 * is what the lines' variances come from, and it does not hold that miss
 * as the line's own error: the miss is alike for neighbouring lines.
 * The line of half-width M / 2 misses the same bend by M/2 (M/2 + 1) / 3,
 * so the two lines differ by the share c = 1 - the ratio of the two of
 * the wider one's miss, plus their white errors, whose variance is the
 * narrower line's scatter s2 (from its left-out slots, less their own
 * prediction variance) times h(M/2) - h(M), the two hat values'
 * difference (the narrower window lies inside the wider one).  The
 * bend's variance is (the difference's mean square - that white part) /
 * c^2, from the run's own slots.  The white part's variance takes the
 * slots' errors as independent, which a line of 3 slots cannot afford:
 * neighbouring tops' errors correlate (-0.26 two apart on the foreign
 * 1/f run), and there it read 0.35 mrad of bend for the truth's 0.16;
 * so a line of half-width 2 or less states none (its own scatter, from
 * 5 slots, holds what it misses).  On the foreign runs, against the bend
 * their truth shows for the tops' lines: 0.14 mrad for 0.15 (1/f noise,
 * one beam dead), 0.26 for 0.23 (hum and 1/f noise), 0.053 for 0.052 (a
 * drift); the lines' variances had left it out. */
static double lattice_bend(const slot *v, size_t n, int M, double delta, const psum *ps,
                           psum *ps2, double *r, double *h)
{
    int ms = M / 2;
    if (ms < 2)
        return 0;
    phase_sums(v, n, ms, delta, ps2);
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        double phi, var, own;
        if (v[i].measured && phase_fit(ps2, v, i, delta, 1, &phi, &var, &own) == 0) {
            r[c] = v[i].theta - (double)v[i].k * delta - phi;
            h[c++] = var / fmax(own, 1e-300);
        }
    }
    if (c < 8)
        return 0;
    double sd = pl_robust_sd(r, c), s2 = sd * sd / (1 + pl_median(h, c));
    c = 0;
    for (size_t i = 0; i < n; i++) {
        double pw, vw, ow, pn, vn, on;
        if (v[i].measured && phase_fit(ps, v, i, delta, 0, &pw, &vw, &ow) == 0 &&
            phase_fit(ps2, v, i, delta, 0, &pn, &vn, &on) == 0) {
            r[c] = (pw - pn) * (pw - pn);
            h[c++] = vn / fmax(on, 1e-300) - vw / fmax(ow, 1e-300);
        }
    }
    if (c < 8)
        return 0;
    double cw = M * (M + 1) / 3.0, cn = ms * (ms + 1) / 3.0, share = 1 - cn / cw;
    double excess = pl_median(r, c) / 0.455 - s2 * pl_median(h, c);
    return excess > 0 ? excess / (share * share) : 0;
}

/* Smooths every slot's angle through its neighbours' and drops the
 * measurements that disagree with theirs by more than 5 robust standard
 * deviations of all the slots' disagreements (a step located on a spike,
 * a ringing's onset a period off), three times over: the slots' own error
 * estimates leave out what the model misses, so the scatter is measured. */
void pl_lat_smooth_phase(slot *v, size_t n, int M, double delta,
                         double *theta_s, double *var_s, double *bend_var)
{
    pl_lat_smooth_phase_corr(v, n, M, delta, theta_s, var_s, NULL, bend_var);
}

void pl_lat_smooth_phase_corr(slot *v, size_t n, int M, double delta,
                              double *theta_s, double *var_s, double *rho_next,
                              double *bend_var)
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
    if (ps)
        phase_sums(v, n, M, delta, ps);
    if (bend_var) {
        psum *ps2 = malloc((n ? n : 1) * sizeof *ps2);
        *bend_var = ps && ps2 && r && tmp ? lattice_bend(v, n, M, delta, ps, ps2, r, tmp) : 0;
        free(ps2);
    }
    free(r);
    free(tmp);
    free(rb);
    for (size_t i = 0; i < n; i++) {
        double phi, var, own;
        if (rho_next)
            rho_next[i] = 0;
        if (ps && phase_fit(ps, v, i, delta, 0, &phi, &var, &own) == 0) {
            if (rho_next)
                rho_next[i] = line_corr(v, n, i, M, delta);
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

/* A ringing's onset is known to a period from its phase; which period
 * was chosen slot by slot from the fit around it, and noise can tip that
 * choice.  The lattice knows better: each measured onset moves by whole
 * periods to the one nearest its neighbours' line.  Returns how many
 * moved. */
size_t pl_lat_snap_cycles(const walk *wk, slot *v, size_t m, const double *ths)
{
    double T = 2 * M_PI / wk->ring.w;
    size_t moved = 0;
    for (size_t i = 0; i < m; i++) {
        if (!v[i].measured && !v[i].dropped)
            continue;
        double from = v[i].tc - 4 * T;
        double t = pl_lat_time_of_theta(wk, ths[i], from > 0 ? (size_t)from : 0, 1);
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

