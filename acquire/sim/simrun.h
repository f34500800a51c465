/* acquire/sim/simrun.h - one simulated recording of the rig, with its truth.
 *
 * Joins the prism model (model/prism/prism.h) and the rig's signal chain
 * (acquire/sim/rigsim.h) into what one run on the bench would give: a quiet
 * lead-in, the release, the rolling motion with its line impacts, the
 * drop-out when the prism leaves the beams at the end of the ramp, and a
 * tail of nothing.  The result is the DAQ card's 16-bit offset-binary codes
 * (two interleaved channels) plus the ground truth the codes were made
 * from.  Writers put it in the file formats the importer reads (WAV with
 * prismlab metadata, CSV in volts) and the truth beside it.
 *
 * Clock: sample k of the recording is at k / rate_hz.  The release is at
 * lead_in_s (rounded to a sample); the model's own clock starts there.
 *
 * Memory: the whole recording is held (2 codes and 7 doubles a frame,
 * about 6 MB for 10 s at 10 kHz); a run is at most max_motion_s + lead-in +
 * tail long.  Threading: a handle is used by one thread at a time.
 */
#ifndef PL_ACQUIRE_SIMRUN_H
#define PL_ACQUIRE_SIMRUN_H

#include "acquire/sim/rigsim.h"
#include "core/error.h"
#include "db/run.h"
#include "model/prism/prism.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    pl_model_params model;   /* the TRUE parameters; model.duration caps the
                                motion (the ramp's end usually comes first);
                                model.rate is ignored (rate_hz is used) */
    double rate_hz;          /* DAQ rate per channel, 10 kHz on the rig */
    double lead_in_s;        /* quiet recording before the release, >= 0 */
    double tail_s;           /* recording after the prism left the beams */
    pl_rigsim_config rig;    /* the bench's imperfections */
    /* What the operator would have written down (may differ from the
     * truth by measurement error); only reported, never simulated. */
    double nominal_lambda0;  /* rad, NaN: unknown */
    double nominal_beta;     /* rad, NaN: unknown */
    char prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE];/* catalogue names, "" when given as numbers */
} pl_simrun_config;

typedef struct pl_simrun pl_simrun;

/* Defaults: seed 000's N = 22 case, 10 kHz, 1 s lead-in, 0.5 s tail,
 * 30 s motion cap, every imperfection on (pl_rigsim_config_default). */
void pl_simrun_config_default(pl_simrun_config *cfg);

/* Draws one whole recording at random, deterministically in seed: a prism
 * of N = 18..40 faces (a0 = 15 mm), beta 0.30..0.45 deg, lambda0 at
 * 0.80..0.95 of alpha + beta, mu_s from max(0.10, 2.3 / N) to 0.05 more
 * (less slips for few faces), beams at h1 = 18..24 mm and
 * h2 = 9..14 mm, the line-impact law or (one run in four) the plastic
 * law, a card at 5..50 kHz (log-uniform, whole Hz), a lead-in of
 * 0.3..1 s, and either 3..6 s of motion with the recording ending while
 * the prism still rolls (as a logger stopped by hand) or a ramp of
 * 0.20..0.45 m that the prism rolls off, followed by 0.2..0.5 s of tail;
 * the signal chain from pl_rigsim_config_random(seed).  The nominal
 * values are the true ones.  Should a draw still end in slip, detachment
 * or a stop, pl_simrun_create() says so in the model's end status, and a
 * caller wanting a rolling run draws again from another seed. */
void pl_simrun_config_random(pl_simrun_config *cfg, unsigned long seed);

/* The same recording as pl_simrun_config_random(cfg, seed) (prism, ramp,
 * beams, rate, chain), with a lab's faults drawn on top by
 * pl_rigsim_config_random_faults(): vibration, beam loss, clipping, and,
 * on the runs that roll off the ramp, tail garbage, for which the tail
 * grows to the garbage's length plus 0.3 s of 0 V.  (On the runs that end
 * while rolling the prism never leaves the beams: the tail garbage is
 * switched off there.)  pl_simrun_config_random() itself never draws a
 * fault, so the corpus of chains without faults keeps its bytes. */
void pl_simrun_config_random_faults(pl_simrun_config *cfg, unsigned long seed);

/* Runs the model and the signal chain; with the clipping fault on
 * (cfg->rig.clip) the card's range is first fitted to the true velocities
 * (pl_rigsim_fit_clip()) and the handle's configuration holds that range.
 * PL_EINVAL names a bad parameter;
 * PL_ENUMERIC when the model ends in slip or detachment before leaving the
 * ramp is NOT an error: the truth records it. */
pl_status pl_simrun_create(pl_simrun **out, const pl_simrun_config *cfg,
                           pl_err *err);

/* Frees the handle; NULL is a no-op. */
void pl_simrun_destroy(pl_simrun *s);

/* Frames in the recording. */
size_t pl_simrun_frames(const pl_simrun *s);

/* The 2 * frames interleaved offset-binary codes (32768 = 0 V). */
const uint16_t *pl_simrun_codes(const pl_simrun *s);

/* Voltage of a code as the card's linear range gives it. */
double pl_simrun_code_volts(const pl_simrun *s, uint16_t code);

/* The channels' descriptions (calibration, LDV scale, sign, heights). */
void pl_simrun_channels(const pl_simrun *s, pl_channel ch[2]);

/* The model's result (impacts, end status, L_p at the end); its series
 * are on the model's clock (release = 0). */
const pl_model_result *pl_simrun_model(const pl_simrun *s);

/* Release sample index and the index where the prism left the beams
 * (frames when it never left). */
size_t pl_simrun_release_index(const pl_simrun *s);
size_t pl_simrun_leave_index(const pl_simrun *s);

/* Samples the ADC clipped. */
size_t pl_simrun_clipped(const pl_simrun *s);

/* The beam loss's frames [*k0, *k1) (both 0 when there is none). */
void pl_simrun_beam_loss_span(const pl_simrun *s, size_t *k0, size_t *k1);

/* The configuration the run was made with. */
const pl_simrun_config *pl_simrun_get_config(const pl_simrun *s);

/* The `prismlab key=value ...` metadata line that the WAV comment and the
 * CSV header carry (rate, full scale, LDV scales, signs, heights, names,
 * the nominal lambda0, synthetic=1). */
void pl_simrun_metadata(const pl_simrun *s, char *buf, size_t size);

/* Writes a 16-bit PCM WAV (sample = code - 32768, full scale = the ADC's
 * +-10 V) with the metadata as its comment string. */
pl_status pl_simrun_write_wav(const pl_simrun *s, const char *path,
                              pl_err *err);

/* Writes a CSV in volts: '#' metadata lines, header t_s,v1_V,v2_V, one row
 * a frame with the card's reconstructed voltage (exact to 1 uV) and its
 * time exact (the fewest decimals the rate needs, else the shortest text
 * that reads back the same). */
pl_status pl_simrun_write_csv(const pl_simrun *s, const char *path,
                              pl_err *err);

/* Writes the ground truth: '#' key=value lines with every parameter used
 * (true and nominal) and the outcome, then a table
 * kind,t_s,omega_rad_s,Lp,omega_minus,omega_plus,ratio with one row for the
 * release, one per impact (Lp: at the first sample after it), one for
 * leaving the beams and a sample row every
 * truth_step_s (0: 0.01 s) of the true rotary speed and L_p.  All times on
 * the recording's clock.  The faults, when on, get '#' lines of their own
 * (beam_loss_t_s, vib_hz, tail_garbage_t_s, clipped_per_channel, ...). */
pl_status pl_simrun_write_truth(const pl_simrun *s, const char *path,
                                double truth_step_s, pl_err *err);

#endif
