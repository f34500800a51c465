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
#include "process/frontend_report.h"

#include <stddef.h>

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
