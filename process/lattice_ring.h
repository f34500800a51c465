/* process/lattice_ring.h - the impacts' ringing (lattice.h step 4,
 * docs/process.md section 4).  An impact can set the prism or the
 * decoder ringing; unmodelled, the ringing bends the arcs and scatters
 * the instants, and where it hides the step its onset is the best mark
 * of the impact there is.
 */
#ifndef PL_PROCESS_LATTICE_RING_H
#define PL_PROCESS_LATTICE_RING_H

#include "process/lattice_arcs.h"
#include "process/lattice_core.h"

/* The run's ringing, if it rings.  The residuals after every measured
 * impact (up to 4000, evenly spread) about its right arc, with the ringing
 * already taken out put back, divided by the impact's step and stacked on
 * a grid aligned at the instants, are fitted by a decaying sinusoid over a
 * grid of frequencies (300 Hz to the lower of 20 kHz and 0.45 of the rate)
 * and decay times (0.2 to 10 ms), coarse then fine.  It is kept when it
 * explains 30 times the stack's noise (from the same stack before the
 * impacts).  Then each impact's own ringing gives its onset and size
 * (pl_lat_ring_onsets()), and the ringing is subtracted from the detection
 * signal in place. */
enum { RING_MAX_SLOTS = 4000, PL_RING_PASSES = 1 };

/* buf[j] = amp x the shape rg at sample k0 + j of a ringing placed at t
 * (samples), j < n: one exponential and one sine a call, the rest by
 * rotation, since these loops run over every impact several times. */
void pl_lat_ring_fill(const ringing *rg, double amp, double t, size_t k0, size_t n,
                      double *buf);

/* Adds sign x the ringing recorded in each slot (ring_amp at ring_t, the
 * shape wk->ring) to wk->om: -1 takes it out of the detection signal, +1
 * puts it back before a better shape is taken out. */
void pl_lat_ring_apply(walk *wk, const slot *v, size_t m, double sign);

/* Slot s for a stack aligned at the instants: its arcs on windows of L
 * about the sample *c nearest its instant, the instant's fraction of a
 * sample past *c, and its step *d (the stack's unit).  -1 when it is not
 * measured, the windows leave the run, or the step is not downwards. */
int pl_lat_stack_slot(const walk *wk, const slot *s, size_t L, arcs *J, size_t *c,
                      double *frac, double *d);

/* The right arc (a cubic in time) and a decaying sine and cosine (w
 * rad/sample, tau samples, from k0) fitted together on om[k0..k0+n-1]
 * with the ringing slot s had taken out (shape old) put back: fitted
 * apart, the arc soaks up part of the ringing.  ab[] receives the sine's
 * and cosine's coefficients, *se_amp (when not NULL) their amplitude's
 * standard error; returns the residual sum of squares, INFINITY when the
 * fit fails.  Needs wk->powsum (pl_lat_ring_table()) and 4 n doubles of
 * wk->scratch, n <= wk->W. */
double pl_lat_ring_joint(const walk *wk, const ringing *old, const slot *s, double w,
                         double tau, size_t k0, size_t n, double ab[2], double *se_amp);

/* The sums of (j/len)^p, j < len, for every len <= W and p < RJ_POW
 * (walk.powsum): the cubic's block of pl_lat_ring_joint()'s normal
 * equations depends on the window's length alone, so it is made once.
 * NULL when out of memory; the caller frees it. */
double *pl_lat_ring_table(size_t W);

/* Whether the slots v[0..m-1] ring, and how: frequency, decay and mean
 * onset from the instants into rg (rg->w 0 when they do not ring), from
 * the matched filter's power after the impacts against before, refined on
 * the slots themselves. */
void pl_lat_ring_estimate(const walk *wk, const slot *v, size_t m, ringing *rg);

/* Each slot's own ringing of shape rg (size next_amp, onset next_t), and
 * where it stands clear of the noise its onset as the slot's instant (old:
 * the ringing taken out so far); rg becomes a sine from the onset.  An
 * impact whose ringing hides its step is placed by the ringing. */
void pl_lat_ring_onsets(const walk *wk, const ringing *old, slot *v, size_t m,
                        ringing *rg);

#endif
