/* process/lattice_eval.h - the impacts of the smoothed slots: each
 * slot's instant from its smoothed angle, omega- and omega+ from the
 * tops either side when the ramp's slope is known (lattice_tops.h), else
 * from the arcs at the instant, and the ratio with its standard error
 * (lattice.h step 5, docs/process.md section 4). */
#ifndef PL_PROCESS_LATTICE_EVAL_H
#define PL_PROCESS_LATTICE_EVAL_H

#include "db/derived.h"
#include "process/lattice.h"
#include "process/lattice_core.h"
#include "process/lattice_tops.h"

/* The impacts of slots v[0..m-1] at their smoothed angles ths (variances
 * vars) into imp[0..k-1] (room for m), their intervals set, and the
 * walk's figures into st (confirmed, expected, drift from the seed's
 * phase, the angles' scatter): the slots that cannot be evaluated are
 * left out, so the count k is returned.  0 when out of memory. */
size_t pl_lat_collect(const walk *wk, const slot *v, size_t m, const double *ths,
                      const double *vars, const slot *seed, const tops *tp, pl_impact *imp,
                      pl_lattice_stats *st);

#endif
