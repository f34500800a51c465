/* process/frontend.h - what a real LDV chain does to the two velocities,
 * measured and undone before anything is derived from them.
 *
 *   offsets    each decoder's DC offset, the mean over the quiet lead-in
 *              (whole mains periods), is removed;
 *   hum        mains hum (50 or 60 Hz, whichever the lead-in shows, its
 *              frequency refined from the beams' difference over the first
 *              20 s, and its harmonics up to the 7th) is fitted in the
 *              lead-in by least squares, kept only where it stands above
 *              the noise, and subtracted from the whole channel; the
 *              mains' drift over the recording is measured from the
 *              same blocks of the beams' difference, not followed;
 *   clipping   the samples at a channel's rails (its extreme values, far
 *              from its resting level, held for several samples) are not
 *              data: they are lost samples of that beam, carried by the
 *              other as below.  Both beams at their rails together for
 *              longer than a bridge refuses the run, naming where.
 *   saturation a beam flat at its extreme with noise on top while the
 *              other's v / h turns on beyond it (a decoder past its
 *              velocity range, inside the converter's) is clipped too,
 *              at the plateau's level.
 *   common     a shaking floor moves the ramp: both beams see the same
 *   motion     added velocity u(t), so v1/h1 - v2/h2 = u (1/h1 - 1/h2)
 *              holds u and no rotation.  Its spectrum's lines (2 to
 *              200 Hz, away from the mains') that stand far above the
 *              noise are fitted block by block and u is taken from both
 *              channels: (4.1) never saw it, the combination below would.
 *   drop-outs  in pure rotation about an edge on the ramp both beams see
 *              v_i = omega h_i (4.3), so v1/h1 = v2/h2 but for noise.  A
 *              stretch where they disagree by more than the motion allows
 *              is a drop-out of the channel that left the common level
 *              (a decoder at 0 V, or a speckle spike at any level): it is
 *              bridged with the other channel's velocity scaled by
 *              h_i / h_j and joined to the channel's own at both edges, so
 *              no impact is invented or hidden: the other beam saw it.
 *              Past 20 ms it is a beam that lost the prism (the one at
 *              0 V, or the one whose level or roughness no motion
 *              explains), carried the same way by the other for as long
 *              as it lasts and reported; only both beams lost ends the
 *              motion.
 *   omega_c    the minimum-variance estimate of omega from both beams
 *              under the same kinematics, sum w_i v_i / h_i / sum w_i
 *              with w_i = h_i^2 / noise_i^2: three to four times less
 *              noise than (4.1), which differences the two beams.  It is
 *              the signal the impact search measures.
 *
 * Threading: no shared state. */
#ifndef PL_PROCESS_FRONTEND_H
#define PL_PROCESS_FRONTEND_H

#include "core/error.h"

#include <stddef.h>

enum { PL_FRONTEND_MAX_SPANS = 8, PL_FRONTEND_MAX_LINES = 4 };

/* A stretch where one beam did not see the prism (channel 1 or 2). */
typedef struct {
    int channel;
    double from_s, to_s;
} pl_beam_span;

typedef struct {
    double offset_mps[2];      /* removed */
    double hum_hz;             /* fundamental fitted; 0: none found */
    double hum_drift_hz;       /* how far the mains moved over the
                                  recording (end less start, from the
                                  trend of the hum's phase); NaN: not
                                  measured (no hum, or too weak to tell) */
    double hum_drift_se_hz;    /* its standard error; NaN with it */
    double hum_amp_mps[2];     /* amplitude of the fundamental removed */
    double noise_mps[2];       /* white noise per sample in the lead-in */
    size_t dropouts[2];        /* stretches bridged per channel */
    double dropout_s[2];       /* their total length */
    size_t both_out;           /* stretches where both beams were out */
    double lost_t_s;           /* both beams lost the prism for good here
                                  (the motion's end); NaN */
    int lost_channel;          /* 0 when lost_t_s is set (both) */
    int lost_at_drop;          /* 1: both beams fell to 0 V there at once
                                  (the prism left them cleanly) */
    /* clipping: samples at a channel's rails, carried by the other beam */
    size_t clipped[2];         /* samples */
    size_t clip_spans[2];      /* stretches */
    double clip_from_s[2], clip_to_s[2];   /* the first and the last; NaN */
    double sat_level_mps[2];   /* the channel's clipped stretches are a
                                  plateau at this level inside the
                                  converter's range (a decoder past its
                                  velocity range), not its rail; NaN */
    /* one beam lost for longer than a bridge, carried by the other; lost[]
     * holds the first PL_FRONTEND_MAX_SPANS of n_lost */
    pl_beam_span lost[PL_FRONTEND_MAX_SPANS];
    size_t n_lost;
    double lost_total_s;
    /* motion common to both beams (a shaking floor), removed: its lines
     * and the RMS of what was removed; n_common 0: none above the noise */
    size_t n_common;
    double common_hz[PL_FRONTEND_MAX_LINES], common_amp_mps[PL_FRONTEND_MAX_LINES];
    double common_rms_mps;
    double mains_hz;           /* the mains frequency the hum was fitted at,
                                  removed or not (0: lead-in too short):
                                  what a later segment of a long run fits
                                  its hum at (pl_frontend_splice) */
    size_t count_from, count_to; /* the events above (drop-outs, clipped and
                                  lost stretches) are those that start in
                                  [count_from, count_to): [0, n), or a long
                                  run's segment's core (pl_frontend_splice) */
} pl_frontend_report;

/* A long run's segment (process/process.h, segment_frames): events are
 * counted in its core [core_from, core_to) alone, each seam's margins
 * being another segment's core.  A later segment (at > 0) is the run's
 * lead-in [0, at) with the run's samples from frame origin on after it:
 * its hum is fitted at mains_hz (the first segment's, which measured it
 * over the run's first seconds; 0: found by the lead-in alone) and
 * removed in the run's own phase on each side of the splice; its drift
 * is not measured (NaN). */
typedef struct {
    size_t at, origin;
    double mains_hz;
    size_t core_from, core_to;
} pl_frontend_splice;

/* Cleans v[0], v[1] (m/s, n samples at rate Hz) in place as above, the
 * lead-in being samples [0, lead) and the motion [from, n).  omega_c
 * (n values) receives the combined rotary speed.  threads: 1 keeps to the
 * caller's thread, else the channels' hum goes to two (the same result).
 * PL_ENUMERIC when both beams clip together for longer than a bridge
 * (naming where); else PL_ENOMEM only. */
pl_status pl_frontend_run(double *v[2], size_t n, double rate, const double h[2],
                          size_t lead, size_t from, double *omega_c, int threads,
                          pl_frontend_report *rep, pl_err *err);

/* The same on a spliced segment (splice NULL: pl_frontend_run()). */
pl_status pl_frontend_run_spliced(double *v[2], size_t n, double rate, const double h[2],
                                  size_t lead, size_t from, const pl_frontend_splice *splice,
                                  double *omega_c, int threads, pl_frontend_report *rep,
                                  pl_err *err);

#endif
