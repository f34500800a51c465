/* process/lattice_smooth.h - the slots' angles smoothed along the
 * lattice (lattice.h step 5, docs/process.md section 4): each slot's own
 * angle scatters with the noise while theta's drift is slow, so a line
 * through its neighbours' (angle - k 2 pi / N) places it better than its
 * own step does, and gives the slots the lattice demands but no step
 * showed an angle at all. */
#ifndef PL_PROCESS_LATTICE_SMOOTH_H
#define PL_PROCESS_LATTICE_SMOOTH_H

#include "process/lattice_core.h"

/* Each slot's smoothed angle and its variance into theta_s[i], var_s[i]
 * (i < n), from a line through the measured neighbours within a
 * half-width (2, 4, 8 or M, whichever predicts left-out slots best), the
 * slots that disagree by over 5 robust standard deviations dropped
 * (v[i].measured 0, dropped 1): the slots' own variances leave out what
 * the model misses, so the scatter is measured.  delta: the lattice's
 * spacing.  The tops (lattice_tops.c) use it on their own lattice.
 * *bend_var (NULL: not wanted) the variance of the lattice's bend that
 * the line does not follow, common to every var_s[i] and not in it:
 * the slots' own scatter does not show it. */
void pl_lat_smooth_phase(slot *v, size_t n, int M, double delta,
                         double *theta_s, double *var_s, double *bend_var);

/* The same, and into rho_next[i] (i < n; NULL: not wanted) the
 * correlation of slot i's smoothed angle with slot i + 1's: their lines
 * share most of their slots (0 where either is not a line's). */
void pl_lat_smooth_phase_corr(slot *v, size_t n, int M, double delta,
                              double *theta_s, double *var_s, double *rho_next,
                              double *bend_var);

/* Moves each measured ringing onset by whole periods of wk->ring to the
 * one nearest its smoothed angle ths[i]: the phase fixes an onset only
 * to a period, and the lattice knows which.  Returns how many moved (the
 * caller smooths again when any did). */
size_t pl_lat_snap_cycles(const walk *wk, slot *v, size_t m, const double *ths);

#endif
