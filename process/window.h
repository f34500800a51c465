/* process/window.h - where the motion starts and where the data stop
 * being valid, from the rotary speed (4.1).
 *
 * Release: the 10 ms moving average of omega leaves the lead-in's noise
 * (release_sigmas of its standard deviation) for 50 ms in a row; from
 * rest the speed first grows linearly, so the line through the first rise
 * is extrapolated back to zero.  End: the last time the moving average is
 * above the same threshold, refined to the largest one-sample drop near it
 * (the beams lose the prism at once), less a 2 ms guard.
 *
 * Threading: no shared state. */
#ifndef PL_PROCESS_WINDOW_H
#define PL_PROCESS_WINDOW_H

#include "core/error.h"

#include <stddef.h>

typedef struct {
    size_t release, end;   /* samples */
    size_t quiet;          /* the lead-in the noise is measured in ends
                              here: the line's release (see above) */
    size_t cross;          /* where the moving average first stays above
                              the threshold for 50 ms */
    size_t seen;           /* where the beams lost the prism (the end
                              before its guard); n when they did not */
    double threshold;      /* rad/s, on the 10 ms average */
    double noise_omega;    /* rad/s, per sample in the lead-in */
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

/* The end of valid data in om[0..n-1] after w->release (w->threshold as
 * found by pl_window_release()): sets w->end. */
void pl_window_end(const double *om, size_t n, double rate, pl_window *w);

#endif
