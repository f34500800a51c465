/* process/process.h - from two LDV velocity signals to the quantities of
 * seed 000 section 4: rotary speed (4.1), theta and L_p (4.2), the line
 * impacts and the spectra.  docs/process.md explains every step and
 * threshold.
 *
 * pl_process_signals() works on arrays (m/s, already calibrated), so that
 * it can be tested on hand-built signals; pl_process_run() reads a stored
 * run, calls it and writes the result back (db/derived.h).
 *
 * Units: SI throughout (s, m/s, rad, rad/s).  Threading: the functions
 * may be called from several threads on different data; a long run is
 * processed on up to one thread per CPU (pl_process_config.threads) with
 * results that do not depend on the count.
 */
#ifndef PL_PROCESS_PROCESS_H
#define PL_PROCESS_PROCESS_H

#include "core/error.h"
#include "core/sample.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/store.h"
#include "process/beams.h"
#include "process/frontend.h"
#include "process/lattice.h"
#include "process/physics.h"

#include <stddef.h>

typedef struct {
    double cutoff_hz;        /* low-pass cut-off of the stored omega; NaN:
                                from the data; 0: none */
    double release_sigmas;   /* motion when omega exceeds this many noise
                                standard deviations (default 8) */
    double quiet_s;          /* lead-in assumed quiet before the release is
                                known (0.2 s) */
    pl_lattice_config lattice; /* the impact search (process/lattice.h) */
    size_t psd_segment;      /* Welch segment, samples (4096) */
    size_t psd_max_segments; /* Welch averages at most (512; 0: all) */
    int threads;             /* channels and spectra; 0: one per CPU */
    double a0_m;             /* the prism's centre-to-edge distance and the */
    double ramp_length_m;    /* ramp's length, for the speed check
                                (process/physics.h); NaN: unknown (a0: no
                                check; length: the longest lab ramp) */
    size_t segment_frames;   /* a stored run of up to this many frames is
                                processed whole; a longer one in segments
                                of a quarter of it, each with its own
                                arrays, so that the peak memory does not
                                grow with the run (docs/process.md, "Long
                                runs"); 0: always whole.  Default
                                PL_PROCESS_SEGMENT_FRAMES */
} pl_process_config;

/* 11 minutes at 10 kHz: the whole path keeps the benches' ten-minute runs
 * (6,000,001 frames; 158 MB at its peak), and a segment, twice a core of
 * 165 s at most, stays within 200 MB. */
#define PL_PROCESS_SEGMENT_FRAMES 6600000

/* The defaults above. */
void pl_process_config_default(pl_process_config *cfg);

typedef struct {
    /* window */
    size_t release, end;     /* samples: motion starts; valid data ends */
    size_t quiet;            /* the lead-in the noise is measured in ends
                                here (docs/process.md section 2) */
    size_t seen;             /* the prism in view up to here (end plus the
                                guard before a drop; n if none) */
    double release_t, end_t; /* s */
    double cutoff_hz;        /* used (0 when not filtered) */
    /* full-rate series over the whole recording (caller frees with
     * pl_process_result_free); theta is 0 before the release and holds
     * its last value after the end.  L_p = N theta / (2 pi) (4.2) is not
     * kept at full rate: a ten-minute run would spend another 48 MB on a
     * scale factor. */
    size_t n;
    double rate_hz;
    double *vp1, *vp2, *omega, *theta;
    /* impacts (process/lattice.h): n_expected slots of the lattice in the
     * window, n_confirmed of them with a step above the noise */
    pl_impact *impacts;
    size_t n_impacts, n_expected, n_confirmed;
    double lp_end, omega_last_mean, ratio_mean, ratio_sd, ratio_mean_se;
    double lp_end_raw;       /* L_p of the plain integral of omega, before it
                                is anchored to the lattice */
    double noise_d;          /* rad/s, noise of the step statistic */
    double phase_sd_rad;     /* scatter of the impacts' angles about the
                                lattice */
    double drift_rad;        /* drift of the integral from the lattice */
    double ring_model_hz;    /* the ringing modelled by the impact search
                                (0: none), its e-folding time, and how far
                                the arcs' tops moved the instants (s) */
    double ring_decay_s, top_shift_s;
    double beta_data_rad;    /* the ramp's slope from the run's own tops, its
                                standard error, the slope that placed the
                                impacts, and the ratio from the tops' speeds
                                alone (process/lattice.h); NaN: not found */
    double beta_data_se_rad, beta_used_rad, energy_ratio, energy_ratio_se;
    int beta_from_data;
    double decoder_shift_s;  /* every impact's t_s was moved by this from the
                                decoded transition's centre to the contact
                                (issue 33: the decoder's delay, given or
                                measured); 0: t_s is the centre */
    double decoder_shift_sd_s; /* its uncertainty, in every t_sd_s */
    char decoder_delay_from[24]; /* a stored run's: where the delay came
                                from, as the processing record says it
                                (decoder_delay_from=): "option", "channels",
                                "option_centre" (--decoder-delay 0),
                                "none_one_channel" (one channel's only),
                                "none"; "" for pl_process_signals() */
    double ratio_se_scale;   /* every impact's ratio_se was multiplied by
                                this (>= 1): the ratios' scatter about
                                their neighbours over their stated errors */
    /* spectra: psd_len bins, bin k at k * psd_df Hz */
    size_t psd_len;
    double psd_df;
    double *psd_vp1, *psd_vp2, *psd_residual;
    double ring_freq_hz;     /* peak of the residual above 500 Hz; NaN */
    pl_frontend_report front;/* offsets, hum, drop-outs (process/frontend.h) */
    double late_omega;       /* rad/s at the first sample when the recording
                                starts after the release (L_p counts from
                                there); 0: it starts at rest */
    double second_release_t; /* s: the prism rolling again after the motion
                                measured (a second release); NaN: none */
    pl_phys_lattice clock;   /* the impacts' spacing against the integral of
                                omega (process/physics.h) */
    double omega_last_41;    /* omega (4.1)'s own mean over the last second,
                                where omega_last_mean is the lattice's
                                (a drift of the integral measured through);
                                else equal to it */
    double omega_last_lattice; /* the same second's mean from theta anchored
                                to the impacts (NaN: too short) */
    pl_phys_steps steps;     /* the drops of omega found without the
                                lattice: their spacing and phase jumps */
    int omega_from_lattice;  /* 1: omega_last_mean is omega_last_lattice */
    int lattice_suspect;     /* 1: a second of slots where the integral and
                                the impacts disagree (quality suspect) */
    pl_beams_report beams;   /* the beams against each other, before the
                                release (process/beams.h) */
    double noise_omega;      /* rad/s, std of omega (4.1) in the lead-in */
    char warnings[2048];
    char quality[16];        /* "good", "degraded" or "suspect" (db/derived.h) */
    char faults[2048];       /* one fault a line, as in db/derived.h */
} pl_process_result;

/* Processes v1, v2 (m/s, downhill positive, beams at h1 > h2 or h1 < h2,
 * n samples at rate_hz) of a prism with N edges.  PL_EINVAL for h1 == h2;
 * PL_ENUMERIC naming the cause for a run with no motion, one shorter than
 * one impact, or all clipped.  res is filled only on success. */
pl_status pl_process_signals(const double *v1, const double *v2, size_t n,
                             double rate_hz, double h1, double h2, int N,
                             const pl_process_config *cfg,
                             pl_process_result *res, pl_err *err);

/* Frees the arrays of a result. */
void pl_process_result_free(pl_process_result *res);

/* Completes c for a run of prism on ramp ramp_name (a name in store's
 * catalogue; NULL or "": none) recorded through channels ch, as
 * pl_process_run() does: the ramp's slope and length and the prism's a0
 * where c leaves them NaN, and the decoders' delay (c's when given, else
 * the channels' mean when both state one).  Returns where the delay came
 * from, as the processing record says it (decoder_delay_from=). */
const char *pl_process_config_for_run(pl_process_config *c, pl_store *store,
                                      const pl_prism *prism, const char *ramp_name,
                                      const pl_channel ch[2]);

/* Processes stored run run_id and replaces its derived data (processing
 * record, series omega/theta/Lp/vp1/vp2 at 1 kHz (decimation 10: the
 * full-rate series are recomputed exactly by processing again), spectra,
 * impacts) in one transaction.  The LDV decoders' delay: cfg's
 * lattice.decoder_delay_s when given (> 0; 0 asks for the transitions'
 * centres, the stored delays left aside), else (NaN) the mean of the
 * two channels' stored delays when both have one, else none.  out, when
 * not NULL, receives the full-rate result (free it with
 * pl_process_result_free).  A run longer than cfg's segment_frames is
 * processed in segments (docs/process.md, "Long runs") when out is NULL,
 * whole otherwise (the full-rate series asked for).  On error nothing is
 * written. */
pl_status pl_process_run(pl_store *store, long long run_id,
                         const pl_process_config *cfg, pl_process_result *out,
                         pl_err *err);

/* The same for a caller that wants the figures alone (the command): out
 * receives the result without its full-rate series (vp1, vp2, omega and
 * theta NULL, n still the run's frames).  Omega takes vp1's memory once
 * the velocities' spectra and 1 kHz series are taken, and theta omega's
 * once omega is filtered and written: 96 MB of a ten-minute run that the
 * kernel need not map.  What is stored is the same to the bit.  A run
 * longer than cfg's segment_frames is processed in segments, in memory
 * that does not grow with it but for its impacts (docs/process.md, "Long
 * runs"): its n is the run's frames, its spectra the segments' mean. */
pl_status pl_process_run_summary(pl_store *store, long long run_id,
                                 const pl_process_config *cfg,
                                 pl_process_result *out, pl_err *err);

#endif
