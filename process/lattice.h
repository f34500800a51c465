/* process/lattice.h - line impacts found on the lattice of L_p.
 *
 * Two facts hold on every rig whatever its noise (seed 000 sections 2 and
 * 4): between two line impacts the prism turns through exactly 2 pi / N,
 * so the impacts sit on a lattice of rotation angle, L_p (4.2) growing by
 * one from each to the next; and between impacts omega follows the
 * contact-phase arc (2.1), smooth, with a kink and a drop at each impact.
 * The search therefore does not ask "is there a step here?" with a
 * threshold tuned to one noise level: it walks the lattice slot by slot,
 * asks "where exactly is the step of this slot?", and measures it.
 *
 *   1. The step statistic D (two line fits either side of a gap) seeds
 *      the walk at its highest peaks that measure as a step; up to four
 *      seeds are walked and the walk that confirms most slots is kept.
 *   2. From the seed the walk goes forwards and backwards: the next slot
 *      lies 2 pi / N further in theta (the integral of omega), which the
 *      measured theta turns into a predicted time; D's peak within 15 % of
 *      an interval of it confirms the slot when it stands confirm_sigmas
 *      above D's noise.  Every slot between the release and the last
 *      confirmed one is an impact, confirmed or not.
 *   3. Each slot's instant is located by equal areas: the sum of omega
 *      across the transition equals that of the two arcs fitted outside it
 *      (the pendulum's omega^2 in the angle), joined at the instant.  A
 *      linear decoder filter with unit gain at DC delays the arcs and the
 *      transition alike, so instant and arcs stay consistent whatever the
 *      filter's shape.
 *   4. Whether the impacts ring comes from a decaying matched filter's
 *      power summed over the impacts, after each against before; the
 *      frequency and decay are refined on the slots with each slot's arc
 *      and ringing fitted together; each impact's ringing onset (a sine
 *      from rest) becomes its instant, and the ringing is subtracted from
 *      the signal.  With a known ramp slope the instants then move by
 *      the one lag that puts them where the contact phase's geometry
 *      does: half-way between the tops of omega^2 in theta either side,
 *      plus beta (a ringing that dies inside the gap, or a slow decoder's
 *      rounding of the kink, moves the equal areas but not the tops).
 *   5. The slots' own angles scatter with the noise while theta's drift is
 *      slow: a line through the neighbours' (angle - k 2 pi / N), its
 *      half-width the one that predicts left-out slots best, gives each
 *      slot a smoothed angle, hence its time with an uncertainty; omega-,
 *      omega+ and the ratio with its standard error are the two arcs
 *      evaluated there.
 *
 * docs/process.md section 4 gives the reasons and the figures.
 *
 * Units: SI (s, rad, rad/s).  Threading: no shared state; a call shares
 * its per-impact passes between threads itself (threads). */
#ifndef PL_PROCESS_LATTICE_H
#define PL_PROCESS_LATTICE_H

#include "core/error.h"
#include "db/derived.h"

#include <stddef.h>

typedef struct {
    double gap_s;          /* transition left out of the arc fits, each side
                              of the instant (1 ms) */
    double fit_s;          /* longest arc-fit window each side (10 ms) */
    double confirm_sigmas; /* a slot is confirmed when its D peak stands this
                              many noise standard deviations high (5) */
    int smooth_slots;      /* neighbours each side in the phase fit (15) */
    int threads;           /* for the passes after the walk; 0: one per CPU;
                              the result does not depend on it */
    double beta_rad;       /* the ramp's slope: the arcs' tops place the
                              impacts (top_shift()); NaN: unknown */
    int beta_fixed;        /* 1: beta_rad places the impacts and gives their
                              ratios even where the run's own tops fix the
                              slope better (the run's own line is still
                              measured and reported): a window of a run
                              that a longer stretch measured the slope on
                              (process/online.h's spliced looks); 0
                              (default): the run's own when it fixes the
                              loss to a tenth */
    int end_seen;          /* 1: the window's end is where the prism left
                              the beams, seen in the data, so theta up to it
                              is measured and every slot it turns through
                              is an impact; 0 (default): the end may be the
                              recording's, and a slot after the last step
                              needs evidence of its own */
    int to_contact;        /* 1: move the instants back to the contact by the
                              decoder's delay measured on the run's steps
                              (lattice_delay.h; experimental, issue 33:
                              docs/process.md section 4, "The contact
                              instant"); 0 (default): t_s is the
                              transition's centre, unless decoder_delay_s */
    double decoder_delay_s;/* the decoder's delay at DC when known (its
                              data sheet, the simulator's truth): the
                              instants move back by it, with no uncertainty
                              of their own added; NaN (default): unknown */
} pl_lattice_config;

/* The defaults above. */
void pl_lattice_config_default(pl_lattice_config *cfg);

typedef struct {
    size_t expected;       /* slots of the lattice inside the window */
    size_t confirmed;      /* of them, with a step above the noise */
    size_t edge_dropped;   /* unconfirmed slots dropped at either end */
    double noise_omega;    /* rad/s, white noise of omega per sample */
    double noise_d;        /* rad/s, noise standard deviation of D */
    double phase_sd_rad;   /* scatter of the slots' angles about the fit */
    double drift_rad;      /* largest |phase - phase of the seed|: how far
                              the integral of omega drifted */
    double ring_hz;        /* the impacts' ringing, modelled; 0: none */
    double ring_decay_s;   /* its e-folding time */
    double gap_s;          /* the gap used, narrowed to the transitions */
    double top_shift_s;    /* how far the arcs' tops moved the instants
                              (s); 0: not applied */
    double beta_data_rad;  /* the ramp's slope from the tops' speeds, its
                              standard error, and the ratio r from the same
                              line (energy_fit()); NaN: not determined */
    double beta_data_se_rad, energy_ratio, energy_ratio_se;
    double beta_used_rad;  /* the slope that placed the impacts and gave
                              their ratios: the run's own when the line fixes
                              the loss to a tenth (beta_from_data = 1), else
                              the ramp's; NaN: none */
    int beta_from_data;
    double decoder_shift_s;    /* contact - transition centre (s; 0: neither
                                  known nor measured): the decoder's delay
                                  given (decoder_delay_s) or measured on the
                                  run's stacked steps (to_contact); the
                                  impacts' t_s stay the centres */
    double decoder_shift_sd_s; /* its standard uncertainty (s) */
    double decoder_delay_s;    /* the fitted decoder's delay at DC (s) */
    double decoder_zeta;       /* and its damping */
    size_t decoder_impacts;    /* impacts stacked; 0: not measured */
} pl_lattice_stats;

/* Finds the line impacts of a prism with N edges in om[0..n-1] (rad/s, at
 * rate Hz, the detection signal: the ringing found is subtracted from it
 * in place) whose integral from the release is
 * theta[0..n-1], between samples release and end; the lead-in [0, quiet)
 * gives the noise of the step statistic.  *out receives a
 * malloc'd array of *n_out impacts in time order (the caller frees it);
 * t_s is the located instant (the decoded transition's centre: the contact
 * is decoder_shift_s from it when stats has it), t_sd_s its standard
 * uncertainty, ratio_se
 * the ratio's standard error and confirmed 0 for a slot the lattice
 * demands but whose step is below the noise (its time then comes from the
 * neighbours' phase).  PL_ENUMERIC when the window holds no confirmed
 * step; PL_ENOMEM. */
pl_status pl_lattice_find(double *om, const double *theta, size_t n,
                          double rate, size_t release, size_t quiet, size_t end, int N,
                          const pl_lattice_config *cfg, pl_impact **out,
                          size_t *n_out, pl_lattice_stats *stats, pl_err *err);

/* x[0..n-1] at the fractional sample i, linearly, held at either end:
 * theta at an impact's instant (i = t_s * rate) for those who read the
 * impacts against theta (the anchoring of L_p, the checks of
 * process/physics.h). */
static inline double pl_lattice_at(const double *x, size_t n, double i)
{
    if (i <= 0)
        return x[0];
    size_t k = (size_t)i;
    if (k + 1 >= n)
        return x[n - 1];
    return x[k] + (i - (double)k) * (x[k + 1] - x[k]);
}

#endif
