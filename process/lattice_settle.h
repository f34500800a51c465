/* process/lattice_settle.h - the slots after the walk (lattice.h steps
 * 3 and 4, docs/process.md section 4): the walk places them with the
 * ringing still in the signal and the configured gap; here the ringing is
 * modelled and taken out, or, without ringing, the gap narrowed to the
 * transitions, and the instants are found again on what is left.  Then
 * the slot the lattice puts past the last one found is tested on its own,
 * where the data end too soon after it for the walk to confirm it. */
#ifndef PL_PROCESS_LATTICE_SETTLE_H
#define PL_PROCESS_LATTICE_SETTLE_H

#include "process/lattice_core.h"

/* The ringing's shape from the slots, then each slot's own size and
 * onset, taken out of wk->om (wk->ring set); without ringing wk->G
 * narrowed to the transitions and the slots located again: the arcs come
 * out cleaner either way. */
void pl_lat_settle(walk *wk, slot *v, size_t m);

/* One test at the place the lattice names (tp, samples): a line each side
 * of tp with a shared curvature and a step D between them, plus on the
 * right the ringing (tied to the run's size per unit step kappa and onset
 * lag, or free when kappa is NaN).  The walk's search asks 5 noise units;
 * one test at one place may ask 2.5.  0 with *s (slot k at angle th,
 * its ringing taken out of wk->om) when D stands clear; -1 otherwise. */
int pl_lat_end_slot(walk *wk, double tp, double kappa, double lag, long k, double th,
                    slot *s);

/* Adds the slot past sl->v[m - 1] when pl_lat_end_slot() finds it (into
 * sl->v[m], pushed when sl has no room): a recording that stops a few ms
 * after a landing still shows it.  Returns the new count, m or m + 1. */
size_t pl_lat_extend_end(walk *wk, slots *sl, size_t m);

#endif
