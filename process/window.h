/* process/window.h - where the motion starts and where the data stop
 * being valid, from the rotary speed (4.1).
 *
 * Release, detected: the 10 ms moving average of omega leaves the
 * lead-in's noise (release_sigmas of its standard deviation) for 50 ms in
 * a row (the crossing); a line through the first rise, extrapolated back
 * to zero, gives a first instant (the line's release).  Release, placed:
 * from rest on its edge the prism falls away from an unstable balance,
 * phi'' = s^2 sin(phi), so omega grows as A sinh(s (t - t0)), convex from
 * the start, and the line meets zero late (tens of ms on noisy chains)
 * or, when the rise runs into the first impacts, anywhere.  So, once the
 * front end has cleaned the beams, omega = c before t0 and
 * c + A sinh(s (t - t0)) after it is fitted to the 1 ms means of the
 * combined omega from 0.3 s before the crossing to the first impact, and
 * its t0 is the release; the line's stands when the fit does not (too
 * little lead-in, no convergence, t0 at the stretch's ends, s out of
 * range or t0's standard error over 20 ms).  The lead-in the front end
 * and the impact search measure the noise in still ends at the line's
 * release (w->quiet), as before the fit: the release placed earlier must
 * not move those noise figures.  End: the last time the moving average
 * is above the same threshold, refined to the largest one-sample drop
 * near it (the beams lose the prism at once), less a 2 ms guard.
 *
 * Threading: no shared state. */
#ifndef PL_PROCESS_WINDOW_H
#define PL_PROCESS_WINDOW_H

#include "core/error.h"

#include <stddef.h>

typedef struct {
    size_t release, end;   /* samples */
    size_t quiet;          /* the lead-in the noise is measured in ends
                              here: the line's release (see above), or
                              the raw rise's shape's where the line
                              does not fit (find_window() in process.c) */
    size_t cross;          /* where the moving average first stays above
                              the threshold for 50 ms */
    size_t seen;           /* where the beams lost the prism (the end
                              before its guard); n when they did not */
    double threshold;      /* rad/s, on the 10 ms average */
    double noise_omega;    /* rad/s, per sample in the lead-in */
    int line_fits;         /* the line met zero after the quiet stretch
                              and by the crossing (give or take the
                              average's half-width), as a rise from
                              rest does */
} pl_window;

/* The release in omega (4.1) of the two offset-free velocities v1, v2
 * (m/s) and beam-height difference dh: the lead-in is at least the
 * first q samples.  PL_ENUMERIC "no motion ..." naming the threshold;
 * PL_ENOMEM. */
pl_status pl_window_release(const double *v1, const double *v2, double dh,
                            size_t n, double rate, size_t q, double sigmas,
                            pl_window *w, pl_err *err);

/* Places w->release (found by pl_window_release()) by the shape of the
 * first rise in om[0..n-1], the cleaned rotary speed (rad/s): the fit
 * above, over [cross - 0.3 s, the first impact), the first impact no
 * further than max_turn (rad) from the line's release.  1 when the fit
 * placed it; 0 when it kept the line's (too little rise or lead-in, no
 * convergence, a fit at its bounds); -1 when out of memory. */
int pl_window_shape(const double *om, size_t n, double rate, double max_turn,
                    pl_window *w);

/* pl_window_shape() on omega = (v1[i] - v2[i]) / dh from the offset-free
 * velocities, before the front end has cleaned them: for a release the
 * line placed too early to leave a lead-in (see find_window()). */
int pl_window_shape_beams(const double *v1, const double *v2, double dh, size_t n,
                          double rate, double max_turn, pl_window *w);

/* The end of valid data in om[0..n-1] after w->release (w->threshold as
 * found by pl_window_release()): sets w->end. */
void pl_window_end(const double *om, size_t n, double rate, pl_window *w);

/* pl_window_end() on omega = (v1[i] - v2[i]) * inv_dh, the same to the
 * bit, without omega stored: its array may then take v1's memory. */
void pl_window_end_beams(const double *v1, const double *v2, double inv_dh, size_t n,
                         double rate, pl_window *w);

#endif
