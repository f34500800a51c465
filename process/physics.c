/* process/physics.c - checks of a run against what the physics allows.
 * See physics.h and docs/process.md, "Checked against the physics". */
#include "process/physics.h"

#include "process/lattice.h"
#include "process/robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G_MPS2 9.80665

double pl_phys_omega_max(const pl_phys_body *b)
{
    if (!(b->a0_m > 0) || !isfinite(b->beta_rad) || b->N < 3)
        return NAN;
    double len = b->ramp_length_m > 0 ? b->ramp_length_m : PL_PHYS_RAMP_MAX_M;
    double alpha = M_PI / b->N;
    /* k^2 = (J + m a0^2) / m about the rolling edge */
    double k2 = b->a0_m * b->a0_m * (1 + (cos(2 * alpha) + 2) / 6);
    double dz = len * sin(fabs(b->beta_rad)) + b->a0_m;
    return sqrt(2 * G_MPS2 * dz / k2);
}

/* The p-quantile of |x| over [from, to), from runs of SPEED_RUN samples
 * every SPEED_EVERY: a sixteenth of the samples and, read in runs of a
 * cache line, a sixteenth of the memory (every 16th sample alone touched
 * every line: 30 ms of the ten-minute run).  A selection, not a sort.
 * NaN when out of memory. */
#define SPEED_RUN 8
#define SPEED_EVERY 128

static double quantile_abs(const double *x, size_t from, size_t to, double p)
{
    size_t m = 0, cap = (to - from) / SPEED_EVERY * SPEED_RUN + SPEED_RUN;
    double *t = malloc(cap * sizeof *t);
    if (!t)
        return NAN;
    for (size_t i = from; i < to && m + SPEED_RUN <= cap; i += SPEED_EVERY)
        for (size_t k = i; k < i + SPEED_RUN && k < to; k++)
            t[m++] = fabs(x[k]);
    double q = m ? pl_select_kth(t, m, (size_t)(p * (double)(m - 1))) : 0;
    free(t);
    return q;
}

pl_status pl_phys_check_speed(const double *omega, const double *v1, const double *v2,
                              size_t from, size_t to, const double h[2],
                              const pl_phys_body *body, pl_err *err)
{
    double wmax = pl_phys_omega_max(body);
    if (isnan(wmax) || to <= from + 16)
        return PL_OK;
    double allowed = PL_PHYS_SPEED_MARGIN * wmax;
    double w98 = quantile_abs(omega, from, to, 0.98);
    const double *v[2] = {v1, v2};
    double v98[2] = {0, 0};
    for (int c = 0; c < 2 && v[c]; c++)
        v98[c] = quantile_abs(v[c], from, to, 0.98);
    if (isnan(w98) || isnan(v98[0]) || isnan(v98[1]))
        return pl_err_set(err, PL_ENOMEM, "speed check: out of memory");
    char ramp[64];
    if (body->ramp_length_m > 0)
        snprintf(ramp, sizeof ramp, "%.2f m", body->ramp_length_m);
    else
        snprintf(ramp, sizeof ramp, "at most %.1f m (the catalogue gives no length)",
                 PL_PHYS_RAMP_MAX_M);
    const char *unit = "a calibration or unit error (the LDV scale in m/s per V, a CSV "
                       "in mV read as V is 1000x, or the beam heights)";
    if (w98 > allowed)
        return pl_err_set(err, PL_ENUMERIC,
                          "omega reaches %.3g rad/s (98 %% of the motion below it), but a "
                          "prism of N = %d, a0 = %.1f mm rolling %s down a %.3f deg ramp "
                          "can reach %.3g rad/s from its fall (%.3g with a %.1fx margin): "
                          "%s, about %.2gx too fast",
                          w98, body->N, 1e3 * body->a0_m, ramp, body->beta_rad * 180 / M_PI,
                          wmax, allowed, PL_PHYS_SPEED_MARGIN, unit, w98 / wmax);
    for (int c = 0; c < 2 && v[c]; c++)
        if (v98[c] > allowed * h[c])
            return pl_err_set(err, PL_ENUMERIC,
                              "beam %d reaches %.3g m/s (98 %% of the motion below it), but "
                              "at h%d = %.1f mm a prism of N = %d, a0 = %.1f mm rolling %s "
                              "down a %.3f deg ramp moves at most %.3g m/s there (%.1fx "
                              "margin in): %s of channel %d, about %.2gx too fast",
                              c + 1, v98[c], c + 1, 1e3 * h[c], body->N, 1e3 * body->a0_m,
                              ramp, body->beta_rad * 180 / M_PI, allowed * h[c],
                              PL_PHYS_SPEED_MARGIN, unit, c + 1, v98[c] / (wmax * h[c]));
    return PL_OK;
}

/* The mean and standard error of the slots' ratios q[a..b). */
static void mean_se(const double *q, size_t a, size_t b, double *mean, double *se)
{
    double s = 0, s2 = 0;
    size_t m = b - a;
    for (size_t i = a; i < b; i++)
        s += q[i];
    *mean = m ? s / (double)m : NAN;
    for (size_t i = a; i < b; i++)
        s2 += (q[i] - *mean) * (q[i] - *mean);
    *se = m > 2 ? sqrt(s2 / (double)(m - 1) / (double)m) : NAN;
}

int pl_phys_lattice_clock(const pl_impact *imp, size_t m, const double *theta, size_t n,
                          double rate, int N, pl_phys_lattice *out)
{
    double delta = 2 * M_PI / N;
    memset(out, 0, sizeof *out);
    out->spacing_slots = out->q_first = out->q_last = NAN;
    out->q_sd = out->t_first_s = out->t_last_s = NAN;
    double *gap = malloc((m ? m : 1) * sizeof *gap), *q = malloc((m ? m : 1) * sizeof *q);
    double *tq = malloc((m ? m : 1) * sizeof *tq);
    if (!gap || !q || !tq) {
        free(gap);
        free(q);
        free(tq);
        return -1;
    }
    /* between neighbouring confirmed impacts: the turn in slots (the
     * spacing), and for those one slot apart by the lattice's count, the
     * integral over the lattice (q) */
    size_t ng = 0, nq = 0, prev = m;
    for (size_t i = 0; i < m; i++) {
        if (imp[i].confirmed != 1)
            continue;
        out->used++;
        if (prev < m) {
            double d = pl_lattice_at(theta, n, imp[i].t_s * rate) -
                       pl_lattice_at(theta, n, imp[prev].t_s * rate);
            gap[ng++] = d / delta;
            if (i == prev + 1) {
                q[nq] = d / delta;
                tq[nq++] = 0.5 * (imp[i].t_s + imp[prev].t_s);
            }
        }
        prev = i;
    }
    if (ng >= 4)
        out->spacing_slots = pl_median(gap, ng);
    /* the first and the last second of slots (at least 8 of them) */
    if (nq >= 16) {
        size_t a = 0, b = nq;
        while (a + 8 < nq && tq[a] - tq[0] < 1.0)
            a++;
        while (b > 8 && tq[nq - 1] - tq[b - 1] < 1.0)
            b--;
        double se1, se2;
        mean_se(q, 0, a, &out->q_first, &se1);
        mean_se(q, b - 1, nq, &out->q_last, &se2);
        out->q_sd = fmax(se1, se2);
        out->t_first_s = 0.5 * (tq[0] + tq[a - 1]);
        out->t_last_s = 0.5 * (tq[b - 1] + tq[nq - 1]);
    }
    free(gap);
    free(q);
    free(tq);
    return 0;
}

/* The drops are looked for in means of DROP_BLOCK_S of omega: a landing
 * is placed to a quarter of a millisecond, a hundredth of a slot at the
 * fastest, and the pass costs a fifth (10 kHz) to a twenty-fifth (50 kHz)
 * of one at full rate.  The checks are to cost at most 5 % of the
 * processing (issue 44): at full rate, with % on the rings and a sort of
 * the peaks, they took 0.133 s of 0.88 on the ten-minute run; now 0.026
 * of 0.79. */
#define DROP_BLOCK_S 0.0005

static size_t drop_block(double rate)
{
    size_t b = (size_t)(rate * DROP_BLOCK_S);
    return b ? b : 1;
}

/* The drops of om over [from, to): their offsets from from (sample
 * indices, each its block's centre) into at[] (at most drops_max());
 * how many, or -1 when out of memory. */
static long find_drops(const double *om, size_t from, size_t to, double rate, size_t *at)
{
    size_t bs = drop_block(rate), nb = (to - from) / bs;
    double brate = rate / (double)bs;
    size_t g = (size_t)ceil(0.001 * brate), w = (size_t)ceil(0.004 * brate), reach = g + w;
    if (nb <= 4 * reach + 2)
        return 0;
    size_t n = nb, span = 2 * reach + 1, ring = 1;
    while (ring < span)   /* the rings' index by a mask: a % a sample cost more than the rest */
        ring <<= 1;
    size_t mask = ring - 1;
    double *x = malloc(nb * sizeof *x);
    if (!x)
        return -1;
    for (size_t k = 0; k < nb; k++) {
        double acc = 0;
        for (size_t i = from + k * bs; i < from + (k + 1) * bs; i++)
            acc += om[i];
        x[k] = acc / (double)bs;
    }
    /* One streaming pass over the means: d at i from two running window
     * sums, and the drops - the highest d within reach either side, the
     * first of equals - from a sliding window's maximum kept in a monotone
     * queue; dv and qi are rings of span entries or more, a power of two
     * (run-long prefix sums and d took 0.47 s of 1.5 on the ten-minute
     * run, most of it the pages). */
    double *pk = malloc((n / reach + 1) * sizeof *pk), *dv = malloc(ring * sizeof *dv);
    size_t *qi = malloc(ring * sizeof *qi);
    if (!pk || !dv || !qi) {
        free(pk);
        free(dv);
        free(qi);
        free(x);
        return -1;
    }
    double a = 0, b = 0;   /* sums over [i - reach, i - g) and [i + g, i + reach) */
    for (size_t k = 0; k < w; k++) {
        a += x[k];
        b += x[reach + g + k];
    }
    size_t np = 0, qh = 0, qt = 0;
    /* d is 0 where its windows leave [0, n): j is the newest sample of
     * the maximum's window, i = j - reach its centre */
    for (size_t j = 0; j < n; j++) {
        double dj = 0;
        if (j >= reach && j + reach < n) {
            dj = (a - b) / (double)w;
            a += x[j - g] - x[j - reach];
            b += x[j + reach] - x[j + g];
        }
        /* the head leaves before j comes in: the ring holds span */
        if (qt > qh && qi[qh & mask] + span <= j)
            qh++;
        dv[j & mask] = dj;
        while (qt > qh && dv[qi[(qt - 1) & mask] & mask] < dj)
            qt--;
        qi[qt++ & mask] = j;
        if (j + 1 < span)
            continue;
        size_t i = j - reach, top = qi[qh & mask];
        if (top == i && i >= reach && i + reach < n && dv[i & mask] > 0 &&
            (np == 0 || i > at[np - 1] + reach)) {
            pk[np] = dv[i & mask];
            at[np++] = i;
        }
    }
    free(dv);
    free(qi);
    free(x);
    /* a landing stands well above the noise's own maxima: half the
     * typical height of the upper half of the peaks */
    size_t m = 0;
    double *sorted = np >= 8 ? malloc(np * sizeof *sorted) : NULL;
    if (np >= 8 && !sorted) {
        free(pk);
        return -1;
    }
    if (sorted) {
        memcpy(sorted, pk, np * sizeof *sorted);
        double thr = 0.5 * pl_select_kth(sorted, np, np - np / 4 - 1);
        for (size_t k = 0; k < np; k++)
            if (pk[k] >= thr)
                at[m++] = at[k] * bs + bs / 2;
        free(sorted);
    }
    free(pk);
    return (long)m;
}

static size_t drops_max(size_t from, size_t to, double rate)
{
    size_t bs = drop_block(rate);
    double brate = rate / (double)bs;
    return (to - from) / bs / ((size_t)ceil(0.001 * brate) + (size_t)ceil(0.004 * brate)) + 1;
}

int pl_phys_step_spacing(const double *om, const double *theta, size_t from, size_t to,
                         double rate, int N, pl_phys_steps *out)
{
    memset(out, 0, sizeof *out);
    out->spacing = out->jump_at_s = out->jump_part = out->jump_missing_s = NAN;
    size_t cap = to > from ? drops_max(from, to, rate) : 1;
    size_t *at = malloc(cap * sizeof *at);
    double *gap = malloc(2 * cap * sizeof *gap), *sorted = gap ? gap + cap : NULL;
    long m = at && gap ? find_drops(om, from, to, rate, at) : -1;
    if (m < 0) {
        free(at);
        free(gap);
        return -1;
    }
    size_t ng = 0;
    for (long k = 1; k < m; k++)
        gap[ng++] = (theta[from + at[k]] - theta[from + at[k - 1]]) / (2 * M_PI / N);
    out->drops = (size_t)m;
    if (ng >= 8) {
        memcpy(sorted, gap, ng * sizeof *sorted);
        out->spacing = pl_median(sorted, ng);
    }
    /* each turn in spacings, against whole ones; a part off whole that
     * the next turn makes up is a spurious drop between them.  The
     * integral's own error grows with a turn's duration (1/f noise over
     * the slow first slots of foreign-pink-n22 left 0.11 of a slot), so
     * the bound grows with it, and with the scatter of the parts about
     * it (8 turns either side). */
    double *part = ng ? malloc(2 * ng * sizeof *part) : NULL, *dur = part ? part + ng : NULL;
    if (ng && !part) {
        free(at);
        free(gap);
        return -1;
    }
    for (size_t k = 0; k < ng && out->spacing > 0; k++) {
        double u = gap[k] / out->spacing;
        part[k] = u - round(u);
        dur[k] = (double)(at[k + 1] - at[k]) / rate / fmax(1, round(u));
    }
    double dmed = NAN;
    if (ng >= 8 && out->spacing > 0) {
        memcpy(sorted, dur, ng * sizeof *sorted);
        dmed = pl_median(sorted, ng);
    }
    for (size_t k = 0; isfinite(dmed) && k < ng; k++) {
        double u = gap[k] / out->spacing;
        size_t lo = k > 8 ? k - 8 : 0, hi = k + 9 < ng ? k + 9 : ng, nn = 0;
        for (size_t j = lo; j < hi; j++)
            if (j != k)
                sorted[nn++] = fabs(part[j]);
        double local = nn ? 1.4826 * pl_median(sorted, nn) : 0;
        double bound = fmax(PL_PHYS_JUMP_PART * fmax(1, dur[k] / dmed), 6 * local);
        if (fabs(part[k]) <= bound)
            continue;
        /* a spurious drop (a turn under half a slot, then its rest) */
        if (k + 1 < ng) {
            double v = (gap[k] + gap[k + 1]) / out->spacing;
            if (fabs(v - round(v)) <= bound) {
                k++;
                continue;
            }
        }
        if (round(u) < 1)
            continue;
        /* a part of a slot short, or more than half a slot long, is
         * taken as time missing (a converter drops buffers; none adds
         * them): short by 0.3 or long by 0.7 read alike */
        out->jumps++;
        if (isnan(out->jump_part) || fabs(part[k]) > fabs(out->jump_part)) {
            double dt = (double)(at[k + 1] - at[k]) / rate;
            double missing = part[k] < 0 ? -part[k] : 1 - part[k];
            out->jump_part = part[k];
            out->jump_at_s = (double)(from + at[k + 1]) / rate;
            out->jump_missing_s = missing / (gap[k] / out->spacing) * dt;
        }
    }
    free(part);
    free(at);
    free(gap);
    return 0;
}

double pl_phys_moving_at_start(const double *v1, const double *v2, size_t q, double h1,
                               double h2)
{
    if (q < 16)
        return 0;
    double *t = malloc(q * sizeof *t);
    if (!t)
        return 0;
    memcpy(t, v1, q * sizeof *t);
    double m1 = pl_median(t, q);
    memcpy(t, v2, q * sizeof *t);
    double m2 = pl_median(t, q);
    free(t);
    double w1 = m1 / h1, w2 = m2 / h2, w = fmax(w1, w2);
    /* at rest each beam reads its decoder's offset, a few mm/s at most
     * (0.02 m/s / V times tens of mV): 0.3 rad/s at 2 cm is 6 mm/s */
    if (!(w1 > PL_PHYS_MOVING_OMEGA && w2 > PL_PHYS_MOVING_OMEGA) || fabs(w1 - w2) > 0.15 * w)
        return 0;
    /* and the two move together by the heights' ratio: an offset pair
     * that happens to stand in that ratio does not */
    double s11 = 0, s22 = 0, s12 = 0;
    for (size_t i = 0; i < q; i++) {
        double a = v1[i] - m1, b = v2[i] - m2;
        s11 += a * a;
        s22 += b * b;
        s12 += a * b;
    }
    double corr = s11 > 0 && s22 > 0 ? s12 / sqrt(s11 * s22) : 0;
    double slope = s11 > 0 ? s12 / s11 : 0;
    if (corr < 0.8 || fabs(slope / (h2 / h1) - 1) > 0.3)
        return 0;
    /* the speed at the first sample, not the lead-in's median (0.1 s on,
     * rising): the line through both beams' v/h over the lead-in, at 0 */
    double st = 0, sw = 0, stt = 0, stw = 0;
    for (size_t i = 0; i < q; i++) {
        double t = (double)i, w = 0.5 * (v1[i] / h1 + v2[i] / h2);
        st += t;
        sw += w;
        stt += t * t;
        stw += t * w;
    }
    double den = (double)q * stt - st * st;
    double w0 = den > 0 ? (sw - (q * stw - st * sw) / den * st) / (double)q : 0.5 * (w1 + w2);
    return w0 > 0 ? w0 : 0.5 * (w1 + w2);
}

int pl_phys_rolling(double w1, double w2)
{
    return w1 > PL_PHYS_MOVING_OMEGA && w2 > PL_PHYS_MOVING_OMEGA &&
           fabs(w1 - w2) <= 0.2 * fmax(w1, w2);
}

int pl_phys_still(double w1, double w2)
{
    return fabs(w1) < PL_PHYS_MOVING_OMEGA && fabs(w2) < PL_PHYS_MOVING_OMEGA;
}

double pl_phys_second_release(const double *v1, const double *v2, size_t from, size_t n,
                              double rate, double h1, double h2)
{
    size_t b = (size_t)ceil(PL_PHYS_BLOCK_S * rate);
    size_t need = (size_t)ceil(PL_PHYS_SECOND_S / PL_PHYS_BLOCK_S);
    size_t run = 0, start = 0;
    for (size_t i = from; b > 0 && i + b <= n; i += b) {
        double s1 = 0, s2 = 0;
        for (size_t k = i; k < i + b; k++) {
            s1 += v1[k];
            s2 += v2[k];
        }
        double w1 = s1 / (double)b / h1, w2 = s2 / (double)b / h2;
        if (!pl_phys_rolling(w1, w2)) {
            run = 0;
            continue;
        }
        if (run++ == 0)
            start = i;
        if (run >= need)
            return (double)start / rate;
    }
    return NAN;
}
