/* process/spectral.c - zero-phase low-pass by overlap-save, Welch PSD.
 * See spectral.h. */
#include "process/spectral.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 4096 };

struct pl_lowpass {
    double fc, rate;
    size_t pad;               /* samples of context each side of a block */
    double *buf;              /* BLOCK real samples */
    fftw_complex *spec;       /* BLOCK / 2 + 1 bins */
    double *gain;             /* H at each bin, divided by BLOCK */
    fftw_plan fwd, inv;
};

double pl_lowpass_gain(const pl_lowpass *lp, double f)
{
    double r = f / lp->fc;
    return exp2(-r * r);
}

pl_status pl_lowpass_create(pl_lowpass **out, double fc, double rate,
                            pl_err *err)
{
    *out = NULL;
    if (!(rate > 0) || !(fc > 0) || !(fc < rate / 2))
        return pl_err_set(err, PL_EINVAL, "low-pass: cut-off %g Hz must lie "
                          "in (0, %g) Hz (half the sample rate)", fc, rate / 2);
    /* The impulse response must fit in the context: 8 standard deviations
     * each side leave less than 1e-14 of it outside. */
    double sigma = sqrt(2 * log(2.0)) / (2 * M_PI * fc) * rate;
    size_t pad = (size_t)ceil(8 * sigma) + 1;
    if (2 * pad >= BLOCK / 2)
        return pl_err_set(err, PL_EINVAL, "low-pass: cut-off %g Hz too low "
                          "for the sample rate %g Hz (at least %g Hz)", fc,
                          rate, fc * (2.0 * pad) / (BLOCK / 2.0) * 1.01);
    pl_lowpass *lp = calloc(1, sizeof *lp);
    if (!lp)
        return pl_err_set(err, PL_ENOMEM, "low-pass: out of memory");
    lp->fc = fc;
    lp->rate = rate;
    lp->pad = pad;
    lp->buf = fftw_alloc_real(BLOCK);
    lp->spec = fftw_alloc_complex(BLOCK / 2 + 1);
    lp->gain = malloc((BLOCK / 2 + 1) * sizeof *lp->gain);
    if (!lp->buf || !lp->spec || !lp->gain) {
        pl_lowpass_destroy(lp);
        return pl_err_set(err, PL_ENOMEM, "low-pass: out of memory");
    }
    lp->fwd = fftw_plan_dft_r2c_1d(BLOCK, lp->buf, lp->spec, FFTW_ESTIMATE);
    lp->inv = fftw_plan_dft_c2r_1d(BLOCK, lp->spec, lp->buf, FFTW_ESTIMATE);
    if (!lp->fwd || !lp->inv) {
        pl_lowpass_destroy(lp);
        return pl_err_set(err, PL_ENOMEM, "low-pass: FFTW could not plan");
    }
    for (size_t k = 0; k <= BLOCK / 2; k++)
        lp->gain[k] = pl_lowpass_gain(lp, k * rate / BLOCK) / BLOCK;
    *out = lp;
    return PL_OK;
}

void pl_lowpass_destroy(pl_lowpass *lp)
{
    if (!lp)
        return;
    if (lp->fwd)
        fftw_destroy_plan(lp->fwd);
    if (lp->inv)
        fftw_destroy_plan(lp->inv);
    fftw_free(lp->buf);
    fftw_free(lp->spec);
    free(lp->gain);
    free(lp);
}

/* x at index i, reflected about the ends (i may lie outside 0..n-1). */
static double reflected(const double *x, size_t n, long long i)
{
    if (n == 1)
        return x[0];
    long long period = 2 * ((long long)n - 1);
    i %= period;
    if (i < 0)
        i += period;
    if (i >= (long long)n)
        i = period - i;
    return x[i];
}

pl_status pl_lowpass_apply(pl_lowpass *lp, const double *x, double *y,
                           size_t n, pl_err *err)
{
    (void)err;
    if (n == 0)
        return PL_OK;
    size_t step = BLOCK - 2 * lp->pad;
    /* y may be x: keep the input of the next block's context safe by
     * writing each block's output only after its input was read, and
     * holding back the pad samples the next block still needs. */
    double *hold = malloc(step * sizeof *hold);
    if (!hold)
        return pl_err_set(err, PL_ENOMEM, "low-pass: out of memory");
    size_t pending = 0, pending_at = 0;
    for (size_t at = 0; at < n; at += step) {
        long long first = (long long)at - (long long)lp->pad;
        if (first >= 0 && (size_t)first + BLOCK <= n) {
            memcpy(lp->buf, x + first, BLOCK * sizeof *lp->buf);
        } else {
            /* the ends: reflected about the first and last sample */
            for (size_t k = 0; k < BLOCK; k++)
                lp->buf[k] = reflected(x, n, first + (long long)k);
        }
        if (pending) {
            memcpy(y + pending_at, hold, pending * sizeof *hold);
            pending = 0;
        }
        fftw_execute(lp->fwd);
        for (size_t k = 0; k <= BLOCK / 2; k++) {
            lp->spec[k][0] *= lp->gain[k];
            lp->spec[k][1] *= lp->gain[k];
        }
        fftw_execute(lp->inv);
        size_t m = n - at < step ? n - at : step;
        memcpy(hold, lp->buf + lp->pad, m * sizeof *hold);
        pending = m;
        pending_at = at;
    }
    memcpy(y + pending_at, hold, pending * sizeof *hold);
    free(hold);
    return PL_OK;
}

struct pl_welch {
    size_t seg;
    double *buf, *win, wss;
    fftw_complex *spec;
    fftw_plan plan;
};

pl_status pl_welch_create(pl_welch **out, size_t seg, pl_err *err)
{
    *out = NULL;
    if (seg < 16 || (seg & (seg - 1)))
        return pl_err_set(err, PL_EINVAL, "Welch PSD: segment %zu must be a "
                          "power of two >= 16", seg);
    pl_welch *w = calloc(1, sizeof *w);
    if (!w)
        return pl_err_set(err, PL_ENOMEM, "Welch PSD: out of memory");
    w->seg = seg;
    w->buf = fftw_alloc_real(seg);
    w->spec = fftw_alloc_complex(seg / 2 + 1);
    w->win = malloc(seg * sizeof *w->win);
    if (!w->buf || !w->spec || !w->win ||
        !(w->plan = fftw_plan_dft_r2c_1d((int)seg, w->buf, w->spec, FFTW_ESTIMATE))) {
        pl_welch_destroy(w);
        return pl_err_set(err, PL_ENOMEM, "Welch PSD: out of memory");
    }
    for (size_t k = 0; k < seg; k++) {
        w->win[k] = 0.5 - 0.5 * cos(2 * M_PI * k / seg);
        w->wss += w->win[k] * w->win[k];
    }
    *out = w;
    return PL_OK;
}

void pl_welch_destroy(pl_welch *w)
{
    if (!w)
        return;
    if (w->plan)
        fftw_destroy_plan(w->plan);
    fftw_free(w->buf);
    fftw_free(w->spec);
    free(w->win);
    free(w);
}

pl_status pl_welch_run(pl_welch *w, const double *x, size_t n, double rate,
                       size_t max_segments, double *psd, size_t *segments,
                       pl_err *err)
{
    size_t seg = w->seg;
    double *buf = w->buf, *win = w->win;
    fftw_complex *spec = w->spec;
    if (n < seg)
        return pl_err_set(err, PL_EINVAL, "Welch PSD: segment %zu is longer "
                          "than the %zu samples", seg, n);
    memset(psd, 0, (seg / 2 + 1) * sizeof *psd);
    size_t total = (n - seg) / (seg / 2) + 1;
    size_t want = max_segments && total > max_segments ? max_segments : total;
    size_t count = 0;
    for (size_t i = 0; i < want; i++) {
        /* 50 % overlap, or evenly spread when capped */
        size_t at = want == total ? i * (seg / 2)
                  : want == 1 ? 0
                  : (size_t)((double)i * (double)(n - seg) / (double)(want - 1) + 0.5);
        /* (x - mean) w = x w - mean w, in one pass; four partial sums
         * keep the adder busy instead of waiting on one chain */
        double m4[4] = {0, 0, 0, 0};
        const double *xa = x + at;
        for (size_t k = 0; k < seg; k += 4) {
            for (int j = 0; j < 4; j++) {
                m4[j] += xa[k + j];
                buf[k + j] = xa[k + j] * win[k + j];
            }
        }
        double mean = (m4[0] + m4[1] + m4[2] + m4[3]) / seg;
        for (size_t k = 0; k < seg; k++)
            buf[k] -= mean * win[k];
        fftw_execute(w->plan);
        for (size_t k = 0; k <= seg / 2; k++)
            psd[k] += spec[k][0] * spec[k][0] + spec[k][1] * spec[k][1];
        count++;
    }
    /* One-sided density: |X|^2 / (rate * sum w^2), doubled except at DC and
     * Nyquist, so that its integral over frequency is the variance. */
    for (size_t k = 0; k <= seg / 2; k++) {
        psd[k] /= count * rate * w->wss;
        if (k > 0 && k < seg / 2)
            psd[k] *= 2;
    }
    if (segments)
        *segments = count;
    return PL_OK;
}

pl_status pl_welch_psd(const double *x, size_t n, double rate, size_t seg,
                       size_t max_segments, double *psd, size_t *segments,
                       pl_err *err)
{
    pl_welch *w = NULL;
    if (pl_welch_create(&w, seg, err) != PL_OK)
        return err->code;
    pl_status st = pl_welch_run(w, x, n, rate, max_segments, psd, segments, err);
    pl_welch_destroy(w);
    return st;
}

/* The ringing's frequency: the most prominent peak of the smoothed
 * spectrum above 500 Hz, measured against the lowest level between half
 * its frequency and itself.  The steps' own spectrum falls steadily and
 * white noise is flat, so neither makes a prominent peak; a resonance
 * does.  NaN when no peak stands 4 times above its valley. */
double pl_ring_peak(const double *psd, size_t len, double df)
{
    enum { H = 16 };
    size_t a = (size_t)ceil(500.0 / df);
    if (a < 2 * H || a + 2 * H >= len)
        return NAN;
    double *sm = malloc(len * sizeof *sm);
    if (!sm)
        return NAN;
    for (size_t k = 0; k < len; k++) {
        size_t lo = k > H ? k - H : 0, hi = k + H < len ? k + H : len - 1;
        double acc = 0;
        for (size_t j = lo; j <= hi; j++)
            acc += psd[j];
        sm[k] = acc / (double)(hi - lo + 1);
    }
    double best_prom = 0;
    size_t best = 0;
    for (size_t k = a; k + 2 * H < len; k++) {
        int is_max = 1;
        for (size_t j = k - 2 * H; j <= k + 2 * H && is_max; j++)
            is_max = sm[j] <= sm[k];
        if (!is_max)
            continue;
        double valley = sm[k];
        for (size_t j = k / 2; j < k; j++)
            valley = sm[j] < valley ? sm[j] : valley;
        double prom = valley > 0 ? sm[k] / valley : 0;
        if (prom > best_prom) {
            best_prom = prom;
            best = k;
        }
    }
    free(sm);
    if (!(best_prom > 4))
        return NAN;
    double y0 = psd[best - 1], y1 = psd[best], y2 = psd[best + 1];
    double den = y0 - 2 * y1 + y2, off = den != 0 ? 0.5 * (y0 - y2) / den : 0;
    if (fabs(off) > 1)
        off = 0;
    return ((double)best + off) * df;
}
