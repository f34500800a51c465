/* process/lattice_delay.h - the decoder's delay, measured on the run's own
 * steps, and the impacts' instants moved back to the contact by it
 * (docs/process.md section 4, "The contact instant").
 *
 * An LDV decoder is a causal low-pass (tracking) filter: its output starts
 * to move at the contact and its transition's centre, which the lattice
 * locates, comes later by about the filter's delay.  All impacts of a run
 * pass through the same filter, so their transitions, each scaled by its
 * own step and aligned at its located instant, stack into one shape seen
 * at many sub-sample phases.  A causal second-order low-pass step response
 * S((u - s) / tau) is fitted to the stack, for a few dampings (kinds of
 * decoder), over its width tau and its start s: the contact lies s from
 * the located instants.  A jackknife over groups of impacts gives the
 * uncertainty of s, common to all impacts of the run. */
#ifndef PL_PROCESS_LATTICE_DELAY_H
#define PL_PROCESS_LATTICE_DELAY_H

#include "db/derived.h"
#include "process/lattice_core.h"

#include <stddef.h>

typedef struct {
    double shift_s;   /* contact - located instant (s, <= 0 for a causal
                         decoder); 0 when not measured */
    double shift_sd_s;/* its standard uncertainty, common to all impacts */
    double width_s;   /* the fitted decoder's delay at DC (s) */
    double zeta;      /* the fitted damping */
    int sampled;      /* 1: the steps stack as a staircase (a decoder that
                         samples before it filters), 0: as a curve */
    size_t used;      /* impacts stacked; 0: not measured */
} pl_lat_delay;

/* Measures the decoder's delay on the impacts imp[0..n) (t_s located on
 * wk->om, the ringing already subtracted) into *d.  Impacts whose
 * neighbours come too close, or unconfirmed ones, are not stacked; fewer
 * than 8 stacked leave d->used 0 and the shift 0.  -1 when out of
 * memory. */
int pl_lat_decoder_delay(const walk *wk, const pl_impact *imp, size_t n, pl_lat_delay *d);

#endif
