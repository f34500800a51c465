/* process/lattice_walk.h - the step statistic D, the seeds and the walk
 * (lattice.h steps 1 and 2, docs/process.md section 4).  D asks "is
 * there a step here?" only to seed the walk and to confirm a slot; where
 * each slot lies comes from the lattice (2 pi / N of theta on from the
 * last confirmed slot) and its instant from the arcs (lattice_arcs.h). */
#ifndef PL_PROCESS_LATTICE_WALK_H
#define PL_PROCESS_LATTICE_WALK_H

#include "process/lattice_core.h"

/* D(k), the left line fit (window [k-g-w, k-g)) minus the right one
 * ([k+g, k+g+w)) at k, for k in [from, to) into d[k - from], and the two
 * fits' residual sum of squares into rss (NULL: not wanted): symmetric
 * windows make the arcs' parabolas vanish, so only steps and kinks show.
 * The caller keeps [from-g-w, to+g+w) inside y. */
void pl_lat_step_statistic(const double *y, size_t g, size_t w, size_t from,
                           size_t to, double *d, double *rss);

/* D's noise per unit white noise of omega: what turns omega's noise into
 * the threshold a slot's step must clear. */
double pl_lat_d_noise_gain(size_t g, size_t w);

/* Sets wk->noise_om and wk->noise_d (at least 1e-12): every test of the
 * walk is in units of D's noise, and 1/f noise, which first differences
 * do not see, is measured on D itself in the lead-in. */
void pl_lat_noise(walk *wk);

/* Walks the lattice from up to four seeds (the highest D peaks that
 * measure as steps) and keeps the walk that confirms most slots, so that
 * one artefact cannot put the lattice out of phase: *sl (freed and
 * replaced), *m slots that count (the trailing ones without a step cut),
 * the seed; *tried 0 when no seed was found.  -1 when out of memory. */
int pl_lat_walk_best(const walk *wk, slots *sl, size_t *m, slot *seed, int *tried);

#endif
