/* acquire/sim/rigsim.c - the rig simulator's signal chain (see rigsim.h).
 *
 * The chain works per channel on one double buffer: velocity (m/s) with
 * impact shape and ringing, then volts with noise, speckle, offset and
 * hum, then codes.  Random draws happen in a fixed order (channel 0 whole,
 * then channel 1; noise, then speckle), which is what makes a seed
 * reproduce a file byte for byte.
 */
#include "acquire/sim/rigsim.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pl_rigsim_config_default(pl_rigsim_config *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 2; i++)
        c->ldv_scale_mps_per_v[i] = 0.025; /* 25 mm/s per volt */
    c->beam_sign[0] = 1;                   /* seed 000 fig. 5: v_p1 > 0 */
    c->beam_sign[1] = -1;                  /*                 v_p2 < 0 */
    c->adc_min_v = -10.0;
    c->adc_max_v = 10.0;
    c->adc_bits = 16;
    c->impact_shape = 1;
    c->impact_duration_s = 0.3e-3;
    c->ringing = 1;
    c->ring_freq_hz = 2800.0;
    c->ring_decay_s = 1.5e-3;
    c->ring_rel_amp = 0.4;
    c->noise = 1;
    c->noise_rms_mps = 2e-5;
    c->speckle = 1;
    c->speckle_rate_hz = 0.3;
    c->speckle_len_s = 0.5e-3;
    c->offset = 1;
    c->offset_v[0] = 3e-3;
    c->offset_v[1] = -2e-3;
    c->hum = 1;
    c->hum_freq_hz = 50.0;
    c->hum_amp_v = 1e-3;
    c->seed = 1;
}

void pl_rigsim_config_ideal(pl_rigsim_config *c)
{
    c->impact_shape = c->ringing = c->noise = c->speckle = 0;
    c->offset = c->hum = 0;
}

pl_status pl_rigsim_validate(const pl_rigsim_config *c, pl_err *err)
{
    for (int i = 0; i < 2; i++) {
        if (!(c->ldv_scale_mps_per_v[i] > 0))
            return pl_err_set(err, PL_EINVAL, "rig simulator: LDV scale %d "
                              "must be positive m/s per volt", i + 1);
        if (c->beam_sign[i] != 1 && c->beam_sign[i] != -1)
            return pl_err_set(err, PL_EINVAL, "rig simulator: beam sign %d "
                              "must be +1 or -1", i + 1);
    }
    if (!(c->adc_max_v > c->adc_min_v) || c->adc_bits < 8 || c->adc_bits > 16)
        return pl_err_set(err, PL_EINVAL, "rig simulator: the ADC needs "
                          "min < max volts and 8..16 bits");
    if (c->impact_shape && !(c->impact_duration_s > 0 &&
                             c->impact_duration_s < 0.01))
        return pl_err_set(err, PL_EINVAL, "rig simulator: impact duration "
                          "must be in (0, 10) ms");
    if (c->ringing && !(c->ring_freq_hz > 0 && c->ring_decay_s > 0 &&
                        c->ring_rel_amp >= 0))
        return pl_err_set(err, PL_EINVAL, "rig simulator: ringing needs a "
                          "positive frequency and decay and amplitude >= 0");
    if ((c->noise && !(c->noise_rms_mps >= 0)) ||
        (c->speckle && !(c->speckle_rate_hz >= 0 && c->speckle_len_s > 0)) ||
        (c->hum && !(c->hum_freq_hz > 0 && c->hum_amp_v >= 0)))
        return pl_err_set(err, PL_EINVAL, "rig simulator: noise, speckle "
                          "and hum levels must be non-negative");
    return PL_OK;
}

void pl_rigsim_channels(const pl_rigsim_config *c, const double h[2],
                        pl_channel ch[2])
{
    long long maxdata = (1LL << c->adc_bits) - 1;
    memset(ch, 0, 2 * sizeof *ch);
    for (int i = 0; i < 2; i++) {
        snprintf(ch[i].name, sizeof ch[i].name, "ldv%d", i + 1);
        ch[i].source_channel = i;
        ch[i].beam_height_m = h[i];
        ch[i].beam_sign = c->beam_sign[i];
        ch[i].ldv_scale_mps_per_v = c->ldv_scale_mps_per_v[i];
        /* comedi's linear range: V = min + (max - min) code / maxdata. */
        ch[i].cal_kind = PL_CAL_LINEAR;
        ch[i].cal_order = 1;
        ch[i].cal_coef[0] = c->adc_min_v;
        ch[i].cal_coef[1] = (c->adc_max_v - c->adc_min_v) / (double)maxdata;
        ch[i].range_min_v = c->adc_min_v;
        ch[i].range_max_v = c->adc_max_v;
        ch[i].maxdata = maxdata;
    }
}

/* The model's step at an impact, estimated from the samples around it so
 * that the smooth slope of the arc is not counted as part of the step. */
static double step_at(const double *v, size_t n, size_t j)
{
    if (j < 2 || j >= n)
        return 0.0;
    return v[j] - (2.0 * v[j - 1] - v[j - 2]);
}

static void shape_and_ring(const pl_rigsim_config *c,
                           const pl_rigsim_truth *t, const double *v,
                           double *out)
{
    double dt = 1.0 / t->rate_hz;
    for (size_t i = 0; i < t->n_impacts; i++) {
        double ti = t->impact_t_s[i];
        size_t j = (size_t)ceil(ti * t->rate_hz - 1e-9);
        double step = step_at(v, t->n, j);
        if (j >= t->leave_index)
            continue;
        if (c->impact_shape) {
            /* Spread the step over [ti, ti + d): the surface takes the
             * impact's duration to reach its new velocity. */
            for (size_t k = j; k < t->leave_index && k * dt < ti + c->impact_duration_s;
                 k++) {
                double w = 0.5 * (1.0 - cos(M_PI * (k * dt - ti) /
                                            c->impact_duration_s));
                out[k] -= step * (1.0 - w);
            }
        }
        if (c->ringing) {
            double amp = c->ring_rel_amp * fabs(step);
            size_t end = j + (size_t)(10.0 * c->ring_decay_s * t->rate_hz);
            for (size_t k = j; k < t->n && k < end && k < t->leave_index; k++) {
                double s = k * dt - ti;
                out[k] += amp * exp(-s / c->ring_decay_s) *
                          sin(2.0 * M_PI * c->ring_freq_hz * s);
            }
        }
    }
}

static void add_speckle(const pl_rigsim_config *c, const pl_rigsim_truth *t,
                        gsl_rng *rng, double *volts)
{
    double span = 0.5 * (c->adc_max_v - c->adc_min_v);
    size_t len = (size_t)ceil(c->speckle_len_s * t->rate_hz);
    double duration = t->n / t->rate_hz;
    double at = c->speckle_rate_hz > 0
                    ? gsl_ran_exponential(rng, 1.0 / c->speckle_rate_hz)
                    : duration;
    while (at < duration) {
        /* The decoder outputs a random level while the speckle has the
         * signal: anywhere within half the converter's range. */
        double level = gsl_ran_flat(rng, -0.5 * span, 0.5 * span);
        size_t k0 = (size_t)(at * t->rate_hz);
        for (size_t k = k0; k < k0 + len && k < t->n; k++)
            volts[k] = level;
        at += gsl_ran_exponential(rng, 1.0 / c->speckle_rate_hz);
    }
}

static uint16_t quantise(const pl_rigsim_config *c, double v, size_t *clipped)
{
    double maxdata = (double)((1L << c->adc_bits) - 1);
    double x = (v - c->adc_min_v) / (c->adc_max_v - c->adc_min_v) * maxdata;
    x = nearbyint(x);
    if (x < 0 || x > maxdata) {
        ++*clipped;
        x = x < 0 ? 0 : maxdata;
    }
    return (uint16_t)x;
}

pl_status pl_rigsim_render(const pl_rigsim_config *c,
                           const pl_rigsim_truth *t, uint16_t *codes,
                           double *volts_out, size_t *clipped, pl_err *err)
{
    double *buf;
    gsl_rng *rng;
    size_t nclip = 0;

    if (pl_rigsim_validate(c, err) != PL_OK)
        return err->code;
    if (!(t->rate_hz > 0) || t->leave_index > t->n || t->release_index > t->n)
        return pl_err_set(err, PL_EINVAL, "rig simulator: truth needs a "
                          "positive rate and indices within its %zu samples",
                          t->n);
    buf = malloc((t->n ? t->n : 1) * sizeof *buf);
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!buf || !rng) {
        free(buf);
        gsl_rng_free(rng);
        return pl_err_set(err, PL_ENOMEM, "rig simulator: out of memory for "
                          "%zu samples", t->n);
    }
    gsl_rng_set(rng, c->seed);
    for (int ch = 0; ch < 2; ch++) {
        double scale = c->ldv_scale_mps_per_v[ch];
        int sign = c->beam_sign[ch];
        for (size_t k = 0; k < t->n; k++)
            buf[k] = (k >= t->release_index && k < t->leave_index)
                         ? t->v[ch][k] : 0.0;
        shape_and_ring(c, t, t->v[ch], buf);
        for (size_t k = 0; k < t->n; k++) {
            double v = buf[k];
            if (c->noise)
                v += gsl_ran_gaussian_ziggurat(rng, c->noise_rms_mps);
            buf[k] = sign * v / scale;
        }
        if (c->speckle)
            add_speckle(c, t, rng, buf);
        for (size_t k = 0; k < t->n; k++) {
            double v = buf[k];
            if (c->offset)
                v += c->offset_v[ch];
            if (c->hum)
                v += c->hum_amp_v * sin(2.0 * M_PI * c->hum_freq_hz * k /
                                        t->rate_hz);
            if (volts_out)
                volts_out[2 * k + ch] = v;
            codes[2 * k + ch] = quantise(c, v, &nclip);
        }
    }
    if (clipped)
        *clipped = nclip;
    free(buf);
    gsl_rng_free(rng);
    return PL_OK;
}
