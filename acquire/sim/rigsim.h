/* acquire/sim/rigsim.h - what the rig's LDVs and DAQ card make of a motion.
 *
 * The rig simulator's signal chain: it takes the true downhill velocities
 * v_p1(t), v_p2(t) of the two gauge points (seed 000 eq. 4.3, from the
 * model) and the true line-impact times, and produces the codes a DAQ card
 * would deliver, with the bench's imperfections, each switchable.  Per
 * channel, in the order a real chain applies them:
 *
 *   lead-in       quiet signal (noise only) before the release;
 *   impact shape  the model's instantaneous velocity step spread over a
 *                 finite impact duration (raised cosine);
 *   ringing       impact-agitated vibration: a damped sinusoid after each
 *                 impact whose amplitude is a fraction of that beam's step;
 *   leaving       after the prism leaves the beams the LDVs see nothing:
 *                 noise only;
 *   tracking      the LDV decoder's causal tracking filter, a 2nd-order
 *                 Bessel low-pass: it delays and rounds every step;
 *   LDV noise     white, Gaussian, given in m/s RMS;
 *   1/f noise     pink noise of a given RMS over a band (a sum of
 *                 Ornstein-Uhlenbeck processes, two corners a decade);
 *   drop-outs     speckle fades: the decoder outputs 0 V for 0.3-3 ms,
 *                 at random instants, independently on each channel;
 *   speckle       rare garbage spikes (a few samples at a random level);
 *   offset, hum   a DC offset and mains hum with harmonics at the
 *                 converter input (V);
 *   ADC           8-16 bits over the card's range, rounding and clipping,
 *                 at any rate (the truth's).
 *
 * And a lab's faults (issue 28), each off by default and drawn only by
 * pl_rigsim_config_random_faults():
 *
 *   vibration     the ramp shakes: both beams see the same translational
 *                 velocity u(t), a sum of sinusoids, added to the true
 *                 downhill velocities (m/s, before the sign) while the
 *                 prism is in view, ahead of the decoder;
 *   beam loss     one beam loses the prism for a stretch (tens to hundreds
 *                 of ms): that decoder outputs 0 m/s there (plus the noise
 *                 floor), optionally with garbage at the edges; the other
 *                 beam is untouched;
 *   tail garbage  after the prism leaves the beams the decoders output
 *                 garbage (a random-walk velocity and spikes) for a while,
 *                 then 0 V plus noise;
 *   clipping      the card's range set below one channel's peak:
 *                 pl_rigsim_fit_clip() sets the range from the truth so
 *                 that channel clips for part of the run and the other
 *                 stays inside.
 *
 * Volts at the converter: V_i = beam_sign_i * v_i / ldv_scale_i (+ the
 * imperfections).  Processing inverts this with the channel's calibration,
 * ldv_scale and beam_sign.  All randomness comes from GSL mt19937
 * generators seeded by the config: the white noise and the spikes from
 * the seed itself (the draws of the original chain, so its files keep
 * their bytes), the 1/f noise and the drop-outs each from a stream of
 * their own per channel derived from the seed, so switching one artefact
 * never changes another's realisation.  The same seed gives the same
 * codes on every machine.  Codes are offset binary (0..2^bits - 1,
 * 2^(bits-1) = 0 V), the form comedi delivers (sampl_t).
 */
#ifndef PL_ACQUIRE_RIGSIM_H
#define PL_ACQUIRE_RIGSIM_H

#include "core/error.h"
#include "db/run.h"

#include <stddef.h>
#include <stdint.h>

#define PL_RIGSIM_HUM_HARMONICS 4  /* mains harmonics 2..5 */
#define PL_RIGSIM_VIB_MAX 3        /* vibration: up to 3 sinusoids */

typedef struct {
    double ldv_scale_mps_per_v[2]; /* LDV decoder scale, e.g. 0.025 */
    int beam_sign[2];              /* +1 / -1: seed 000 fig. 5 has +1, -1 */
    double adc_min_v, adc_max_v;   /* converter range, -10 .. +10 */
    int adc_bits;                  /* 16 */

    int impact_shape;              /* switches: 1 on, 0 off */
    double impact_duration_s;      /* the step's rise time, e.g. 0.3 ms */
    int ringing;
    double ring_freq_hz;           /* e.g. 2800 Hz */
    double ring_decay_s;           /* e-folding time, e.g. 1.5 ms */
    double ring_rel_amp;           /* amplitude / |velocity step|, e.g. 0.4 */
    int track;                     /* the decoder's tracking filter */
    double track_cutoff_hz;        /* its -3 dB point, e.g. 3000 Hz */
    int noise;
    double noise_rms_mps;          /* LDV noise floor, e.g. 2e-5 m/s */
    int pink;
    double pink_rms_mps;           /* 1/f noise RMS (all of it), m/s */
    double pink_lo_hz, pink_hi_hz; /* band where the spectrum goes as 1/f,
                                      e.g. 0.5 .. 2000 Hz */
    int dropout;
    double dropout_rate_hz;        /* mean drop-outs per second, a channel */
    double dropout_min_s, dropout_max_s; /* length uniform, e.g. 0.3 .. 3 ms */
    int speckle;
    double speckle_rate_hz;        /* mean spikes per second, e.g. 0.3 */
    double speckle_len_s;          /* spike length, e.g. 0.5 ms */
    int offset;
    double offset_v[2];            /* e.g. +3 mV, -2 mV */
    int hum;
    double hum_freq_hz;            /* 50 or 60 */
    double hum_amp_v;              /* fundamental, e.g. 1 mV */
    double hum_phase_rad;          /* its phase at sample 0 */
    double hum_harmonic_v[PL_RIGSIM_HUM_HARMONICS];     /* 2nd, 3rd, ... */
    double hum_harmonic_phase[PL_RIGSIM_HUM_HARMONICS]; /* rad */
    /* A lab's faults (issue 28): all off by default. */
    int vibration;                 /* common motion of the ramp */
    int vib_n;                     /* sinusoids, 1..PL_RIGSIM_VIB_MAX */
    double vib_freq_hz[PL_RIGSIM_VIB_MAX];  /* e.g. 23, 9 Hz */
    double vib_amp_mps[PL_RIGSIM_VIB_MAX];  /* e.g. 1.5e-3, 0.6e-3 m/s */
    double vib_phase_rad[PL_RIGSIM_VIB_MAX];
    int beam_loss;
    int beam_loss_channel;         /* 0 or 1: the beam that loses it */
    double beam_loss_start_s;      /* recording clock; < 0: at
                                      beam_loss_frac of the motion */
    double beam_loss_frac;         /* 0..1 of [release, leave) */
    double beam_loss_len_s;        /* e.g. 0.2 s */
    double beam_loss_edge_s;       /* garbage at each edge, inside the
                                      loss; 0: clean edges */
    double beam_loss_edge_mps;     /* its RMS velocity, e.g. 0.03 m/s */
    int tail_garbage;
    double tail_garbage_s;         /* garbage after leaving, e.g. 0.8 s */
    double tail_garbage_mps;       /* its RMS velocity, e.g. 0.03 m/s */
    int clip;                      /* pl_rigsim_fit_clip() sets the range */
    int clip_channel;              /* 0 or 1: the channel that clips */
    double clip_frac;              /* the range / that channel's peak |V| */
    unsigned long seed;
} pl_rigsim_config;

/* Defaults for a bench like seed 000's: the original chain (impact shape,
 * ringing, white noise, spikes, offset, 50 Hz hum) on with the values
 * above; the tracking filter, 1/f noise, drop-outs to zero and the hum's
 * harmonics off (their levels set to typical values: 3 kHz, 0.2 mm/s
 * over 0.5 Hz .. 2 kHz, 1 per second of 0.3 .. 3 ms), so the fixture
 * runs keep their bytes. */
void pl_rigsim_config_default(pl_rigsim_config *cfg);

/* Turns every imperfection off (ADC quantisation stays: it is the card). */
void pl_rigsim_config_ideal(pl_rigsim_config *cfg);

/* Draws a whole signal chain at random, deterministically in seed: every
 * artefact's switch and level, the LDV scale (25 or 50 mm/s per volt) and
 * the beam signs, within ranges that span a benign bench to a hard but
 * realistic one (docs/rig.md, "Random signal chains", states them).  The
 * card stays 16 bits over +-10 V; cfg->seed becomes seed. */
void pl_rigsim_config_random(pl_rigsim_config *cfg, unsigned long seed);

/* pl_rigsim_config_random(cfg, seed), then a lab's faults drawn on top
 * from a stream of their own (so the chain without them is the same
 * chain): vibration, beam loss, tail garbage and clipping, each with its
 * own probability and random levels (docs/rig.md, "Faults").  The tail
 * garbage only shows where the prism leaves the beams (the recording must
 * run on past it: pl_simrun_config_random_faults() sees to that). */
void pl_rigsim_config_random_faults(pl_rigsim_config *cfg, unsigned long seed);

/* The tracking filter's delay at low frequencies (its group delay at DC),
 * s: 1.3617 / (2 pi cutoff) for the 2nd-order Bessel; 0 when it is off. */
double pl_rigsim_track_delay(const pl_rigsim_config *cfg);

/* Checks ranges; PL_EINVAL names the field. */
pl_status pl_rigsim_validate(const pl_rigsim_config *cfg, pl_err *err);

/* The truth the chain is driven by: n samples at rate_hz, sample k at
 * k / rate_hz on the recording's clock.  v[0], v[1] are the true downhill
 * velocities at the beams (m/s) for every sample (0 before the release).
 * Impacts are at impact_t_s[0..n_impacts-1] (recording clock).  Samples at
 * or after leave_index carry no velocity (the prism has left the beams);
 * leave_index = n when it never leaves. */
typedef struct {
    size_t n;
    double rate_hz;
    const double *v[2];
    const double *impact_t_s;
    size_t n_impacts;
    size_t release_index;
    size_t leave_index;
} pl_rigsim_truth;

/* The clipping fault: sets the card's range to +-R with R = clip_frac x
 * the peak |volts| of channel clip_channel's true velocity in view, but
 * never below what keeps the other channel inside (1.3 x its peak plus
 * the vibration, its offset, the hum and 6 sigma of white noise).  Does
 * nothing when cfg->clip is 0.  pl_simrun_create() calls it before
 * rendering; the range it sets is then the card's, in the channel
 * descriptions and the files. */
void pl_rigsim_fit_clip(pl_rigsim_config *cfg, const pl_rigsim_truth *t);

/* The beam loss's samples [*k0, *k1) on the recording's clock, clipped to
 * the prism's time in view; *k0 = *k1 = 0 when it is off or empty. */
void pl_rigsim_beam_loss_span(const pl_rigsim_config *cfg,
                              const pl_rigsim_truth *t, size_t *k0, size_t *k1);

/* Writes n frames of 2 interleaved offset-binary codes into codes[2n] and,
 * when volts is not NULL, the analogue voltages before the ADC into
 * volts[2n].  clipped (may be NULL) receives the number of samples the
 * ADC clipped.  Deterministic in cfg->seed. */
pl_status pl_rigsim_render(const pl_rigsim_config *cfg,
                           const pl_rigsim_truth *truth, uint16_t *codes,
                           double *volts, size_t *clipped, pl_err *err);

/* The channel descriptions matching cfg (linear calibration of the ADC,
 * LDV scale, beam sign; heights h[0], h[1] in m). */
void pl_rigsim_channels(const pl_rigsim_config *cfg, const double h[2],
                        pl_channel ch[2]);

#endif
