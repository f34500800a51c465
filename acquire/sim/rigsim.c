/* acquire/sim/rigsim.c - the rig simulator's signal chain (see rigsim.h).
 *
 * The chain works per channel on one double buffer: velocity (m/s) with
 * impact shape and ringing, the decoder's tracking filter, white and 1/f
 * noise and drop-outs, then volts with spikes, offset and hum, then codes.
 * The original chain's draws (white noise, then spikes; channel 0 whole,
 * then channel 1) come from the seed's own generator in a fixed order,
 * which is what makes a seed reproduce a file byte for byte; the later
 * artefacts draw from streams of their own (substream_seed), so they
 * leave those draws untouched.
 */
#include "acquire/sim/rigsim.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <complex.h>
#include <math.h>
#include <stdint.h>
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
    /* Off by default (the fixture runs predate them); typical levels. */
    c->track_cutoff_hz = 3000.0;
    c->pink_rms_mps = 2e-4;
    c->pink_lo_hz = 0.5;
    c->pink_hi_hz = 2000.0;
    c->dropout_rate_hz = 1.0;
    c->dropout_min_s = 0.3e-3;
    c->dropout_max_s = 3e-3;
    /* The faults: off, typical levels. */
    c->vib_n = 1;
    c->vib_freq_hz[0] = 23.0;
    c->vib_amp_mps[0] = 1.5e-3;
    c->beam_loss_start_s = -1.0;
    c->beam_loss_frac = 0.5;
    c->beam_loss_len_s = 0.2;
    c->beam_loss_edge_mps = 0.03;
    c->tail_garbage_s = 0.8;
    c->tail_garbage_mps = 0.03;
    c->clip_frac = 0.7;
    c->seed = 1;
}

void pl_rigsim_config_ideal(pl_rigsim_config *c)
{
    c->impact_shape = c->ringing = c->noise = c->speckle = 0;
    c->offset = c->hum = 0;
    c->track = c->pink = c->dropout = 0;
    c->vibration = c->beam_loss = c->tail_garbage = c->clip = 0;
}

/* The checks of the faults (vibration, beam loss, tail garbage, clip). */
static pl_status validate_faults(const pl_rigsim_config *c, pl_err *err)
{
    if (c->vibration) {
        if (c->vib_n < 1 || c->vib_n > PL_RIGSIM_VIB_MAX)
            return pl_err_set(err, PL_EINVAL, "rig simulator: vibration "
                              "needs 1..%d sinusoids", PL_RIGSIM_VIB_MAX);
        for (int i = 0; i < c->vib_n; i++)
            if (!(c->vib_freq_hz[i] > 0 && c->vib_freq_hz[i] <= 1e6 &&
                  c->vib_amp_mps[i] >= 0 && c->vib_amp_mps[i] <= 10 &&
                  isfinite(c->vib_phase_rad[i])))
                return pl_err_set(err, PL_EINVAL, "rig simulator: vibration "
                                  "%d needs a frequency in (0, 1e6] Hz, an "
                                  "amplitude in [0, 10] m/s and a finite "
                                  "phase", i + 1);
    }
    if (c->beam_loss &&
        !((c->beam_loss_channel == 0 || c->beam_loss_channel == 1) &&
          isfinite(c->beam_loss_start_s) && c->beam_loss_start_s <= 1e5 &&
          c->beam_loss_frac >= 0 && c->beam_loss_frac <= 1 &&
          c->beam_loss_len_s > 0 && c->beam_loss_len_s <= 600 &&
          c->beam_loss_edge_s >= 0 && c->beam_loss_edge_s <= 600 &&
          c->beam_loss_edge_mps >= 0 && c->beam_loss_edge_mps <= 10))
        return pl_err_set(err, PL_EINVAL, "rig simulator: beam loss needs "
                          "channel 1 or 2, a finite start (or a fraction in "
                          "[0, 1] of the motion), a length in (0, 600] s and "
                          "edges >= 0 s of 0..10 m/s");
    if (c->tail_garbage && !(c->tail_garbage_s >= 0 && c->tail_garbage_s <= 600 &&
                             c->tail_garbage_mps >= 0 && c->tail_garbage_mps <= 10))
        return pl_err_set(err, PL_EINVAL, "rig simulator: tail garbage needs "
                          "0..600 s of 0..10 m/s RMS");
    if (c->clip && !((c->clip_channel == 0 || c->clip_channel == 1) &&
                     c->clip_frac > 0 && c->clip_frac <= 10))
        return pl_err_set(err, PL_EINVAL, "rig simulator: clipping needs "
                          "channel 1 or 2 and a range of (0, 10] x its peak");
    return PL_OK;
}

/* The checks of the decoder's artefacts (filter, 1/f noise, drop-outs)
 * and the hum's harmonics. */
static pl_status validate_ldv_chain(const pl_rigsim_config *c, pl_err *err)
{
    if (c->track && !(c->track_cutoff_hz >= 1 && c->track_cutoff_hz <= 1e7))
        return pl_err_set(err, PL_EINVAL, "rig simulator: tracking filter "
                          "cut-off %g Hz outside [1, 1e7]", c->track_cutoff_hz);
    if (c->pink && !(c->pink_rms_mps >= 0 && c->pink_lo_hz > 0 &&
                     c->pink_hi_hz > c->pink_lo_hz && c->pink_hi_hz <= 1e7 &&
                     c->pink_hi_hz / c->pink_lo_hz <= 1e12))
        return pl_err_set(err, PL_EINVAL, "rig simulator: 1/f noise needs "
                          "RMS >= 0 and a band 0 < lo < hi <= 1e7 Hz of at "
                          "most 12 decades (got %g .. %g Hz)", c->pink_lo_hz,
                          c->pink_hi_hz);
    if (c->dropout && !(c->dropout_rate_hz >= 0 && c->dropout_min_s > 0 &&
                        c->dropout_max_s >= c->dropout_min_s &&
                        c->dropout_max_s <= 1.0))
        return pl_err_set(err, PL_EINVAL, "rig simulator: drop-outs need a "
                          "rate >= 0 and lengths 0 < min <= max <= 1 s (got "
                          "%g .. %g s)", c->dropout_min_s, c->dropout_max_s);
    for (int h = 0; c->hum && h < PL_RIGSIM_HUM_HARMONICS; h++)
        if (!(c->hum_harmonic_v[h] >= 0) || !isfinite(c->hum_harmonic_phase[h]) ||
            !isfinite(c->hum_phase_rad))
            return pl_err_set(err, PL_EINVAL, "rig simulator: hum harmonic "
                              "%d needs an amplitude >= 0 and a finite phase",
                              h + 2);
    return validate_faults(c, err);
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
    return validate_ldv_chain(c, err);
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
            /* Spread the step over [ti - d/2, ti + d/2): the surface takes
             * the impact's duration to reach its new velocity, and the
             * model's instant (the impulsive limit d -> 0) is its middle,
             * so that the arcs either side, met there, keep the model's
             * ratio to O(beta d). */
            double d = c->impact_duration_s, t0 = ti - 0.5 * d;
            size_t k0 = t0 > 0 ? (size_t)ceil(t0 * t->rate_hz - 1e-9) : 0;
            for (size_t k = k0; k < t->leave_index && k * dt < t0 + d; k++) {
                double w = 0.5 * (1.0 - cos(M_PI * (k * dt - t0) / d));
                if (k < j)
                    out[k] += step * w;
                else
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

/* --- the decoder's tracking filter ------------------------------------ */

/* -3 dB frequency of the delay-normalised 2nd-order Bessel low-pass
 * 3 / (s^2 + 3 s + 3): the root of w^4 + 3 w^2 - 9 = 0. */
#define BESSEL2_W3DB 1.3616541287161306

double pl_rigsim_track_delay(const pl_rigsim_config *c)
{
    return c->track ? BESSEL2_W3DB / (2.0 * M_PI * c->track_cutoff_hz) : 0.0;
}

/* The analogue filter H(s) = 3 w0^2 / (s^2 + 3 w0 s + 3 w0^2) in state
 * form, x = (y, y'): x' = A x + B u with A = [0 1; a10 a11], B = (0, b1),
 * poles sg +- i wd; and its sampled recursion (track_design). */
typedef struct {
    double w0, a10, a11, b1, sg, wd;
    double phi[2][2], g0[2], g1[2];
} bessel2;

/* exp(A tau) = e^(sg tau) (cos(wd tau) I + sin(wd tau)/wd (A - sg I)),
 * Cayley-Hamilton for a 2 x 2 matrix with complex poles. */
static void bessel2_expA(const bessel2 *f, double tau, double E[2][2])
{
    double e = exp(f->sg * tau), cs = cos(f->wd * tau);
    double sn = sin(f->wd * tau) / f->wd;
    E[0][0] = e * (cs - sn * f->sg);
    E[0][1] = e * sn;
    E[1][0] = e * sn * f->a10;
    E[1][1] = e * (cs + sn * (f->a11 - f->sg));
}

/* The filter sampled exactly for an input linear between samples
 * ("ramp-invariant", the first-order-hold equivalent):
 *   x[k+1] = phi x[k] + g0 u[k] + g1 (u[k+1] - u[k]).
 * Why not the bilinear transform: prewarped, it puts the -3 dB point right
 * but shrinks the delay (to 0.69 of it at 3 kHz on a 10 kHz card), and it
 * cannot express a cut-off above the card's Nyquist frequency (a 20 kHz
 * decoder on a 5 kHz card).  This recursion keeps the analogue filter's
 * output exactly at every sample, for any cut-off, whenever the input is
 * linear between samples: the arc is, to 1e-9 of its size; what is not
 * (each impact's shaped step and its ringing) goes through the filter's
 * closed-form response instead (impact_through_filter). */
static void track_design(double cutoff_hz, double rate_hz, bessel2 *f)
{
    double T = 1.0 / rate_hz;
    f->w0 = 2.0 * M_PI * cutoff_hz / BESSEL2_W3DB; /* 1 / DC delay */
    f->a10 = -3.0 * f->w0 * f->w0;
    f->a11 = -3.0 * f->w0;
    f->b1 = 3.0 * f->w0 * f->w0;
    f->sg = -1.5 * f->w0;
    f->wd = 0.5 * sqrt(3.0) * f->w0;
    bessel2_expA(f, T, f->phi);
    /* inv(A) = [a11 -1; -a10 0] / det, det = -a10.  With q = inv(A) (phi -
     * I) B and r = inv(A) q: g0 = q, g1 = r / T - inv(A) B. */
    double det = -f->a10;
    double pb[2] = {f->phi[0][1] * f->b1, (f->phi[1][1] - 1.0) * f->b1};
    double q[2] = {(f->a11 * pb[0] - pb[1]) / det, (-f->a10 * pb[0]) / det};
    double r[2] = {(f->a11 * q[0] - q[1]) / det, (-f->a10 * q[0]) / det};
    f->g0[0] = q[0];
    f->g0[1] = q[1];
    f->g1[0] = r[0] / T + f->b1 / det;
    f->g1[1] = r[1] / T;
}

/* Filters x[0..n) in place, starting at rest at x[0]'s level. */
static void track_filter(const bessel2 *f, double *x, size_t n)
{
    if (n == 0)
        return;
    double s0 = x[0], s1 = 0.0, u = x[0];
    for (size_t k = 0; k + 1 < n; k++) {
        double un = x[k + 1], du = un - u;
        double n0 = f->phi[0][0] * s0 + f->phi[0][1] * s1 + f->g0[0] * u +
                    f->g1[0] * du;
        double n1 = f->phi[1][0] * s0 + f->phi[1][1] * s1 + f->g0[1] * u +
                    f->g1[1] * du;
        x[k] = s0;
        s0 = n0;
        s1 = n1;
        u = un;
    }
    x[n - 1] = s0;
}

/* Responses at tau after the input starts (0 before), from rest: to the
 * unit step, 1 - E00; to the unit ramp, tau - 1/w0 + E00/w0 - E01; to
 * e^(s tau), H(s) e^(s tau) - C exp(A tau) (sI - A)^-1 B. */
static double resp_step(const bessel2 *f, double tau)
{
    double E[2][2];
    if (tau <= 0)
        return 0.0;
    bessel2_expA(f, tau, E);
    return 1.0 - E[0][0];
}

static double resp_ramp(const bessel2 *f, double tau)
{
    double E[2][2];
    if (tau <= 0)
        return 0.0;
    bessel2_expA(f, tau, E);
    return tau - 1.0 / f->w0 + E[0][0] / f->w0 - E[0][1];
}

static double complex resp_exp(const bessel2 *f, double complex s, double tau)
{
    double E[2][2];
    if (tau <= 0)
        return 0.0;
    bessel2_expA(f, tau, E);
    double complex h = f->b1 / (s * s - f->a11 * s - f->a10); /* H(s) */
    return h * cexp(s * tau) - (E[0][0] + E[0][1] * s) * h;
}

/* The impact's shape S(tau), 0 before and 1 after, through the filter:
 * the raised cosine 1/2 (1 - cos(pi tau / d)) on [0, d) is
 * 1/2 U(tau) + 1/2 U(tau - d) - 1/2 C(tau) - 1/2 C(tau - d) with U the
 * unit step and C the cosine cos(pi tau / d) switched on at 0. */
static double shape_response(const pl_rigsim_config *c, const bessel2 *f,
                             double tau)
{
    if (!c->impact_shape)
        return resp_step(f, tau);
    double d = c->impact_duration_s;
    double complex s = I * M_PI / d;
    return 0.5 * (resp_step(f, tau) + resp_step(f, tau - d) -
                  creal(resp_exp(f, s, tau)) - creal(resp_exp(f, s, tau - d)));
}

/* One impact through the filter, added to out (which holds the filtered
 * raw samples, where the step is a ramp from sample j - 1 to j): the
 * shaped step at its true instant replaces that ramp, and the ringing
 * A e^(-tau/decay) sin(2 pi f tau) = A Im e^(s tau) is added.  Past the
 * filter's settling (20 / w0: its modes down by e^-30) only the ringing's
 * forced part H(s) e^(s tau) is left, advanced by one factor a sample. */
static void impact_through_filter(const pl_rigsim_config *c, const bessel2 *f,
                                  const pl_rigsim_truth *t, double ti,
                                  size_t j, double step, double *out)
{
    double T = 1.0 / t->rate_hz, settle = 20.0 / f->w0;
    double ta = (j - 1.0) * T, tb = j * T;
    /* the shaped step is centred on the model's instant (see
     * shape_and_ring()) */
    double half = c->impact_shape ? 0.5 * c->impact_duration_s : 0, t0 = ti - half;
    double shaped_end = fmax(tb, ti + half);
    size_t k0 = t0 > ta ? j : (t0 > 0 ? (size_t)ceil(t0 / T - 1e-9) : 0);
    for (size_t k = k0; k < t->leave_index && k * T < shaped_end + settle; k++)
        out[k] += step * (shape_response(c, f, k * T - t0) -
                          (resp_ramp(f, k * T - ta) - resp_ramp(f, k * T - tb)) / T);
    if (!c->ringing)
        return;
    double amp = c->ring_rel_amp * fabs(step);
    double complex s = -1.0 / c->ring_decay_s + I * 2.0 * M_PI * c->ring_freq_hz;
    double complex h = f->b1 / (s * s - f->a11 * s - f->a10), z = 0, q = cexp(s * T);
    size_t end = j + (size_t)((10.0 * c->ring_decay_s + settle) * t->rate_hz);
    for (size_t k = j; k < t->n && k < end && k < t->leave_index; k++) {
        double tau = k * T - ti;
        if (tau < settle) {
            out[k] += amp * cimag(resp_exp(f, s, tau));
            z = h * cexp(s * (tau + T));
        } else {
            out[k] += amp * cimag(z);
            z *= q;
        }
    }
}

/* The decoder's tracking filter over a channel's velocity buf (the raw
 * samples, steps unshaped): the recursion, then every impact's shaped
 * step and ringing through the filter's closed forms. */
static void track_channel(const pl_rigsim_config *c, const pl_rigsim_truth *t,
                          const double *v, double *buf)
{
    bessel2 f;
    track_design(c->track_cutoff_hz, t->rate_hz, &f);
    track_filter(&f, buf, t->n);
    for (size_t i = 0; i < t->n_impacts; i++) {
        double ti = t->impact_t_s[i];
        size_t j = (size_t)ceil(ti * t->rate_hz - 1e-9);
        if (j < 2 || j >= t->leave_index || j >= t->n)
            continue;
        impact_through_filter(c, &f, t, ti, j, step_at(v, t->n, j), buf);
    }
}

/* --- the artefacts' own random streams --------------------------------- */

enum { STREAM_PINK = 1, STREAM_DROPOUT = 2, STREAM_CONFIG = 3, STREAM_FAULT = 4,
       STREAM_FAULT_CONFIG = 5 };

/* A generator seed for one artefact and channel, derived from the chain's
 * seed by the splitmix64 finaliser, so that neighbouring seeds and
 * channels give unrelated streams. */
static unsigned long substream_seed(unsigned long seed, int stream, int ch)
{
    uint64_t z = (uint64_t)seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(4 * stream + ch + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (unsigned long)(z & 0xffffffffUL); /* mt19937 takes 32 bits */
}

/* 1/f noise as a sum of K Ornstein-Uhlenbeck processes of equal variance
 * whose corner frequencies are spaced two a decade over [lo, hi]: each
 * has a Lorentzian spectrum var / fc / (1 + (f/fc)^2), and their sum over
 * log-spaced corners goes as 1/f between the band's ends (ripple under
 * 0.2 dB), flat below lo and as 1/f^2 above hi.  Each process is
 * discretised exactly (AR(1) with a = exp(-2 pi fc / rate)) and starts
 * from its stationary law, so the RMS is pink_rms at any rate and from
 * the first sample. */
static void add_pink(const pl_rigsim_config *c, double rate_hz, gsl_rng *rng,
                     double *x, size_t n)
{
    double decades = log10(c->pink_hi_hz / c->pink_lo_hz);
    int K = (int)ceil(2.0 * decades) + 1;
    double sd = c->pink_rms_mps / sqrt((double)K);
    for (int i = 0; i < K; i++) {
        double fc = c->pink_lo_hz * pow(10.0, decades * i / (K - 1));
        double a = exp(-2.0 * M_PI * fc / rate_hz);
        double b = sd * sqrt(1.0 - a * a);
        double s = gsl_ran_gaussian_ziggurat(rng, sd);
        for (size_t k = 0; k < n; k++) {
            x[k] += s;
            s = a * s + gsl_ran_gaussian_ziggurat(rng, b);
        }
    }
}

/* Speckle fades: the decoder outputs zero velocity from a Poisson instant
 * for a length uniform in [min, max]; sample k is inside [t, t + len) when
 * t <= k / rate < t + len.  Fades may overlap (they merge). */
static void add_dropouts(const pl_rigsim_config *c, double rate_hz,
                         gsl_rng *rng, double *x, size_t n)
{
    double duration = n / rate_hz;
    if (!(c->dropout_rate_hz > 0))
        return;
    double mean_gap = 1.0 / c->dropout_rate_hz;
    for (double at = gsl_ran_exponential(rng, mean_gap); at < duration;
         at += gsl_ran_exponential(rng, mean_gap)) {
        double len = gsl_ran_flat(rng, c->dropout_min_s, c->dropout_max_s);
        double k1 = ceil((at + len) * rate_hz);
        for (size_t k = (size_t)ceil(at * rate_hz); k < n && k < k1; k++)
            x[k] = 0.0;
    }
}

/* Runs one artefact that draws from its own stream. */
static pl_status with_stream(const pl_rigsim_config *c, int stream, int ch,
                             double rate_hz, double *x, size_t n,
                             void (*add)(const pl_rigsim_config *, double,
                                         gsl_rng *, double *, size_t),
                             pl_err *err)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return pl_err_set(err, PL_ENOMEM, "rig simulator: out of memory for "
                          "a random generator");
    gsl_rng_set(rng, substream_seed(c->seed, stream, ch));
    add(c, rate_hz, rng, x, n);
    gsl_rng_free(rng);
    return PL_OK;
}

/* --- a lab's faults ----------------------------------------------------- */

/* The ramp's vibration u(t) at sample k, m/s. */
static double vibration_at(const pl_rigsim_config *c, size_t k, double rate_hz)
{
    double u = 0.0;
    for (int i = 0; i < c->vib_n; i++)
        u += c->vib_amp_mps[i] *
             sin(2.0 * M_PI * c->vib_freq_hz[i] * k / rate_hz + c->vib_phase_rad[i]);
    return u;
}

void pl_rigsim_beam_loss_span(const pl_rigsim_config *c,
                              const pl_rigsim_truth *t, size_t *k0, size_t *k1)
{
    *k0 = *k1 = 0;
    if (!c->beam_loss || !(t->rate_hz > 0))
        return;
    size_t end = t->leave_index < t->n ? t->leave_index : t->n;
    double from = c->beam_loss_start_s >= 0
                      ? c->beam_loss_start_s * t->rate_hz
                      : t->release_index +
                            c->beam_loss_frac * ((double)end - (double)t->release_index);
    double to = from + c->beam_loss_len_s * t->rate_hz;
    from = ceil(from - 1e-9);
    to = ceil(to - 1e-9);
    if (!(from < (double)end) || !(to > 0))
        return;
    *k0 = from > 0 ? (size_t)from : 0;
    *k1 = to < (double)end ? (size_t)to : end;
    if (*k1 <= *k0)
        *k0 = *k1 = 0;
}

/* Speckle garbage over x[k0..k1): the decoder tracking nothing, a
 * random-walk velocity (an Ornstein-Uhlenbeck process of RMS rms and a
 * 30 Hz corner, from its stationary law) with spikes, 30 a second on
 * average, each 0.2..1 ms at a level uniform in +-4 rms.  Replaces what
 * x held there. */
static void garbage(gsl_rng *rng, double rate_hz, double rms, double *x,
                    size_t k0, size_t k1)
{
    double a = exp(-2.0 * M_PI * 30.0 / rate_hz), b = rms * sqrt(1.0 - a * a);
    double s = gsl_ran_gaussian_ziggurat(rng, rms);
    for (size_t k = k0; k < k1; k++) {
        x[k] = s;
        s = a * s + gsl_ran_gaussian_ziggurat(rng, b);
    }
    double span = (k1 - k0) / rate_hz;
    for (double at = gsl_ran_exponential(rng, 1.0 / 30.0); at < span;
         at += gsl_ran_exponential(rng, 1.0 / 30.0)) {
        double len = gsl_ran_flat(rng, 0.2e-3, 1e-3);
        double level = gsl_ran_flat(rng, -4.0 * rms, 4.0 * rms);
        size_t j0 = k0 + (size_t)(at * rate_hz), j1 = k0 + (size_t)ceil((at + len) * rate_hz);
        for (size_t k = j0; k < j1 && k < k1; k++)
            x[k] = level;
    }
}

/* The decoder's faults on channel ch's velocity (after its tracking
 * filter, before the noise): the beam loss (0 m/s, garbage at its edges)
 * and the tail's garbage after leaving, from a stream of their own. */
static pl_status decoder_faults(const pl_rigsim_config *c,
                                const pl_rigsim_truth *t, int ch, double *buf,
                                pl_err *err)
{
    size_t k0, k1;
    pl_rigsim_beam_loss_span(c, t, &k0, &k1);
    int lose = c->beam_loss && c->beam_loss_channel == ch && k1 > k0;
    int tail = c->tail_garbage && t->leave_index < t->n && c->tail_garbage_s > 0;
    if (!lose && !tail)
        return PL_OK;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return pl_err_set(err, PL_ENOMEM, "rig simulator: out of memory for "
                          "a random generator");
    gsl_rng_set(rng, substream_seed(c->seed, STREAM_FAULT, ch));
    if (lose) {
        for (size_t k = k0; k < k1; k++)
            buf[k] = 0.0;
        size_t edge = (size_t)ceil(c->beam_loss_edge_s * t->rate_hz - 1e-9);
        if (edge > 0) {
            if (2 * edge > k1 - k0)
                edge = (k1 - k0 + 1) / 2;
            garbage(rng, t->rate_hz, c->beam_loss_edge_mps, buf, k0, k0 + edge);
            garbage(rng, t->rate_hz, c->beam_loss_edge_mps, buf, k1 - edge, k1);
        }
    }
    if (tail) {
        double end = t->leave_index + ceil(c->tail_garbage_s * t->rate_hz - 1e-9);
        size_t k_end = end < (double)t->n ? (size_t)end : t->n;
        garbage(rng, t->rate_hz, c->tail_garbage_mps, buf, t->leave_index, k_end);
    }
    gsl_rng_free(rng);
    return PL_OK;
}

void pl_rigsim_fit_clip(pl_rigsim_config *c, const pl_rigsim_truth *t)
{
    if (!c->clip)
        return;
    double peak[2] = {0.0, 0.0}, vib = 0.0;
    size_t end = t->leave_index < t->n ? t->leave_index : t->n;
    for (int ch = 0; ch < 2; ch++)
        for (size_t k = t->release_index; k < end; k++)
            peak[ch] = fmax(peak[ch], fabs(t->v[ch][k]) / c->ldv_scale_mps_per_v[ch]);
    for (int i = 0; c->vibration && i < c->vib_n; i++)
        vib += c->vib_amp_mps[i];
    int a = c->clip_channel, b = 1 - a;
    double sb = c->ldv_scale_mps_per_v[b];
    double need = 1.3 * (peak[b] + vib / sb);
    if (c->offset)
        need += fabs(c->offset_v[b]);
    if (c->hum) {
        need += c->hum_amp_v;
        for (int h = 0; h < PL_RIGSIM_HUM_HARMONICS; h++)
            need += c->hum_harmonic_v[h];
    }
    if (c->noise)
        need += 6.0 * c->noise_rms_mps / sb;
    if (c->pink)
        need += 6.0 * c->pink_rms_mps / sb;
    double r = fmax(fmax(c->clip_frac * peak[a], need), 0.05);
    c->adc_min_v = -r;
    c->adc_max_v = r;
}

/* Mains hum at sample k: the fundamental (written as the original chain
 * computed it, so its files keep their bytes) and the harmonics. */
static double hum_at(const pl_rigsim_config *c, size_t k, double rate_hz)
{
    double v = c->hum_amp_v * sin(2.0 * M_PI * c->hum_freq_hz * k / rate_hz +
                                  c->hum_phase_rad);
    for (int h = 0; h < PL_RIGSIM_HUM_HARMONICS; h++)
        if (c->hum_harmonic_v[h] > 0)
            v += c->hum_harmonic_v[h] *
                 sin(2.0 * M_PI * (h + 2) * c->hum_freq_hz * k / rate_hz +
                     c->hum_harmonic_phase[h]);
    return v;
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

/* The decoder's part of one channel, in m/s: its tracking filter, its
 * faults (beam loss, tail garbage), the noise (white from the chain's generator, 1/f from a stream of its own)
 * and the drop-outs to zero. */
static pl_status decoder(const pl_rigsim_config *c, const pl_rigsim_truth *t,
                         int ch, gsl_rng *rng, double *buf, pl_err *err)
{
    if (c->track)
        track_channel(c, t, t->v[ch], buf);
    if (decoder_faults(c, t, ch, buf, err) != PL_OK)
        return err->code;
    if (c->noise)
        for (size_t k = 0; k < t->n; k++)
            buf[k] += gsl_ran_gaussian_ziggurat(rng, c->noise_rms_mps);
    if (c->pink && with_stream(c, STREAM_PINK, ch, t->rate_hz, buf, t->n,
                               add_pink, err) != PL_OK)
        return err->code;
    if (c->dropout && with_stream(c, STREAM_DROPOUT, ch, t->rate_hz, buf, t->n,
                                  add_dropouts, err) != PL_OK)
        return err->code;
    return PL_OK;
}

/* One channel from the true velocity (plus the ramp's vibration, in the
 * same downhill sense on both beams: the sign comes after) to codes
 * (stride 2 from ch). */
static pl_status render_channel(const pl_rigsim_config *c,
                                const pl_rigsim_truth *t, int ch, gsl_rng *rng,
                                double *buf, uint16_t *codes, double *volts_out,
                                size_t *nclip, pl_err *err)
{
    double scale = c->ldv_scale_mps_per_v[ch];
    int sign = c->beam_sign[ch];
    for (size_t k = 0; k < t->n; k++)
        buf[k] = (k >= t->release_index && k < t->leave_index) ? t->v[ch][k] : 0.0;
    if (c->vibration) /* the ramp's motion, seen while the prism is in view */
        for (size_t k = 0; k < t->leave_index && k < t->n; k++)
            buf[k] += vibration_at(c, k, t->rate_hz);
    if (!c->track) /* else the filter takes the impacts in its closed form */
        shape_and_ring(c, t, t->v[ch], buf);
    if (decoder(c, t, ch, rng, buf, err) != PL_OK)
        return err->code;
    for (size_t k = 0; k < t->n; k++)
        buf[k] = sign * buf[k] / scale;
    if (c->speckle)
        add_speckle(c, t, rng, buf);
    for (size_t k = 0; k < t->n; k++) {
        double v = buf[k];
        if (c->offset)
            v += c->offset_v[ch];
        if (c->hum)
            v += hum_at(c, k, t->rate_hz);
        if (volts_out)
            volts_out[2 * k + ch] = v;
        codes[2 * k + ch] = quantise(c, v, nclip);
    }
    return PL_OK;
}

pl_status pl_rigsim_render(const pl_rigsim_config *c,
                           const pl_rigsim_truth *t, uint16_t *codes,
                           double *volts_out, size_t *clipped, pl_err *err)
{
    double *buf;
    gsl_rng *rng;
    size_t nclip = 0;
    pl_status st = PL_OK;

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
    for (int ch = 0; ch < 2 && st == PL_OK; ch++)
        st = render_channel(c, t, ch, rng, buf, codes, volts_out, &nclip, err);
    if (clipped)
        *clipped = nclip;
    free(buf);
    gsl_rng_free(rng);
    return st;
}

/* --- random chains ------------------------------------------------------ */

static double log_uniform(gsl_rng *r, double lo, double hi)
{
    return exp(gsl_ran_flat(r, log(lo), log(hi)));
}

static int chance(gsl_rng *r, double p) { return gsl_rng_uniform(r) < p; }

/* The impact and the decoder: shape, ringing, filter, noise, drop-outs,
 * spikes (the ranges docs/rig.md states). */
static void random_decoder(pl_rigsim_config *c, gsl_rng *r)
{
    c->impact_shape = 1;
    c->impact_duration_s = gsl_ran_flat(r, 0.1e-3, 0.5e-3);
    c->ringing = chance(r, 0.8);
    c->ring_freq_hz = gsl_ran_flat(r, 1200.0, 5000.0);
    c->ring_decay_s = log_uniform(r, 0.5e-3, 5e-3);
    c->ring_rel_amp = gsl_ran_flat(r, 0.05, 1.5);
    c->track = 1;
    c->track_cutoff_hz = log_uniform(r, 1200.0, 25000.0);
    c->noise = 1;
    c->noise_rms_mps = log_uniform(r, 10e-6, 500e-6);
    c->pink = chance(r, 0.6);
    c->pink_rms_mps = log_uniform(r, 20e-6, 600e-6);
    c->dropout = chance(r, 0.5);
    c->dropout_rate_hz = log_uniform(r, 0.2, 4.0);
    c->speckle = chance(r, 0.3);
    c->speckle_rate_hz = log_uniform(r, 0.05, 0.5);
    c->speckle_len_s = gsl_ran_flat(r, 0.2e-3, 1e-3);
}

/* The wiring and the card's input: scale, signs, offsets, hum. */
static void random_wiring(pl_rigsim_config *c, gsl_rng *r)
{
    double scale = chance(r, 0.5) ? 0.025 : 0.05;
    for (int i = 0; i < 2; i++) {
        c->ldv_scale_mps_per_v[i] = scale;
        c->beam_sign[i] = chance(r, 0.5) ? 1 : -1;
        c->offset_v[i] = (chance(r, 0.5) ? 1 : -1) * log_uniform(r, 0.1e-3, 80e-3);
    }
    c->offset = 1;
    c->hum = 1;
    c->hum_freq_hz = chance(r, 0.5) ? 50.0 : 60.0;
    c->hum_amp_v = log_uniform(r, 0.1e-3, 20e-3);
    c->hum_phase_rad = gsl_ran_flat(r, 0.0, 2.0 * M_PI);
    for (int h = 0; h < PL_RIGSIM_HUM_HARMONICS; h++) {
        c->hum_harmonic_v[h] = c->hum_amp_v * gsl_ran_flat(r, 0.0, 0.5);
        c->hum_harmonic_phase[h] = gsl_ran_flat(r, 0.0, 2.0 * M_PI);
    }
}

void pl_rigsim_config_random(pl_rigsim_config *c, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    pl_rigsim_config_default(c);
    if (!r) /* no generator, no draws: the default chain, never garbage */
        return;
    gsl_rng_set(r, substream_seed(seed, STREAM_CONFIG, 0));
    random_decoder(c, r);
    random_wiring(c, r);
    c->seed = seed;
    gsl_rng_free(r);
}

void pl_rigsim_config_random_faults(pl_rigsim_config *c, unsigned long seed)
{
    pl_rigsim_config_random(c, seed);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) /* no generator: the chain without faults */
        return;
    gsl_rng_set(r, substream_seed(seed, STREAM_FAULT_CONFIG, 0));
    /* Every level is drawn whether its fault is on or not, so that one
     * switch never moves another fault's draws. */
    c->vibration = chance(r, 0.35);
    c->vib_n = 1 + (int)gsl_rng_uniform_int(r, PL_RIGSIM_VIB_MAX);
    for (int i = 0; i < PL_RIGSIM_VIB_MAX; i++) {
        c->vib_freq_hz[i] = gsl_ran_flat(r, 5.0, 40.0);
        c->vib_amp_mps[i] = log_uniform(r, 0.2e-3, 2e-3);
        c->vib_phase_rad[i] = gsl_ran_flat(r, 0.0, 2.0 * M_PI);
    }
    c->beam_loss = chance(r, 0.35);
    c->beam_loss_channel = chance(r, 0.5) ? 0 : 1;
    c->beam_loss_start_s = -1.0;
    c->beam_loss_frac = gsl_ran_flat(r, 0.15, 0.75);
    c->beam_loss_len_s = gsl_ran_flat(r, 0.05, 0.4);
    int edges = chance(r, 0.5);
    double edge_s = gsl_ran_flat(r, 2e-3, 10e-3);
    c->beam_loss_edge_s = edges ? edge_s : 0.0;
    c->beam_loss_edge_mps = log_uniform(r, 0.01, 0.05);
    c->tail_garbage = chance(r, 0.5);
    c->tail_garbage_s = gsl_ran_flat(r, 0.3, 1.5);
    c->tail_garbage_mps = log_uniform(r, 0.01, 0.05);
    c->clip = chance(r, 0.3);
    c->clip_channel = 0; /* the higher beam, the faster one */
    c->clip_frac = gsl_ran_flat(r, 0.6, 0.9);
    gsl_rng_free(r);
}
