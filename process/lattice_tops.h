/* process/lattice_tops.h - the arcs' tops (lattice.h step 4,
 * docs/process.md section 4): over a contact phase omega^2 is
 * C - 2 K cos psi in theta (2.1), whose minimum, the top, lies where the
 * centre passes over the pivot, pi/N - beta after the landing before and
 * pi/N + beta before the landing after.  The tops need no instant, so neither the
 * decoder's rounding of the kink nor a ringing inside the gap moves
 * them: they place the impacts (the one shift, then each impact's own
 * tops) and give omega- and omega+ (lattice_eval.c), and the line
 * through consecutive tops' speeds gives the ramp's slope and the ratio
 * from the run alone. */
#ifndef PL_PROCESS_LATTICE_TOPS_H
#define PL_PROCESS_LATTICE_TOPS_H

#include "process/lattice.h"
#include "process/lattice_core.h"

/* The contact phases between consecutive slots, as the tops see them:
 * top[i], low[i] (omega^2 there) and its variance for the interval after
 * slot i (NAN where slots i and i + 1 are not neighbours), and what
 * omega^2 gains from a top to the landing after it (A) and to the
 * landing before it (B) in the measured units, once beta is known. */
typedef struct {
    double *top, *top_var, *low, *low_var, *curv, *curv_var;
    double A, B;     /* NAN: no beta */
} tops;

/* One phase's fit of omega^2 in theta (pl_lat_arc_top()). */
typedef struct {
    double top_var;          /* the top's variance, rad^2 */
    double low, low_var;     /* the least omega^2 and its variance */
    double curv, curv_var;   /* the curvature (K / 2 in the measured angle)
                                and its variance */
    double raw;              /* the stationary point whichever way the fit
                                opens (a peak marks a landing); NAN: none */
} arc_top;


/* The top of the contact phase over samples [a, b): the angle where
 * omega^2 = p0 + p1 sin u + p2 (1 - cos u), (2.1)'s form fitted in theta
 * there, is least, with the rest of the fit's figures in *out.
 * Symmetric about the top, so all of a phase's samples fix it.  NAN
 * when it cannot be fitted or has no minimum inside (out->raw may still
 * hold the stationary point). */
double pl_lat_arc_top(const walk *wk, size_t a, size_t b, arc_top *out);

/* What the line through consecutive tops' squared speeds says. */
typedef struct {
    double beta, beta_se, r, r_se;
    double w2;      /* mean omega^2 at the tops */
} energy;

/* The ramp's slope beta and the ratio r from the tops' squared speeds
 * low[i] (top[i] NAN: none) alone, each pair weighted by its variances
 * low_var[] (NULL: equal weights) and the outliers left out, K from
 * their curvature, delta the lattice's spacing and scale the
 * calibration's (lattice_tops.c gives the line): no instant enters, so
 * what moves the instants does not move them.  -1 with fewer than 8
 * pairs, no spread of speeds, or no root. */
int pl_lat_energy_fit(const double *top, const double *low, const double *low_var, size_t m,
                      double K, double delta, double scale, energy *e);

/* Frees tp's arrays (NULL ones too); the struct itself is the caller's. */
void pl_lat_tops_free(tops *t);

/* Fits the tops of every contact phase between neighbouring slots into
 * *tp (freed by pl_lat_tops_free(), also after a failure), picks the
 * slope (beta, the ramp's, NaN when unknown; or the run's own from the
 * tops' speeds: st's beta_* and energy_* figures; beta whatever they say
 * when beta_fixed and beta is known), moves every smoothed
 * angle ths by the one lag that puts the impacts where the tops do, then
 * joins each impact's own tops' angle to ths and vars.  The instants so
 * far lag the impacts by what no model of the transition knows; the tops
 * do not.  bend: the variance of the lattice's bend that ths's line does
 * not follow (pl_lat_smooth_phase()); it goes into every vars[i], joined
 * as one with the tops' own.  Returns the shift in samples (0 when not
 * applied). */
double pl_lat_top_shift(const walk *wk, const slot *v, size_t m, double *ths, double *vars,
                        double bend, double beta, int beta_fixed, tops *tp,
                        pl_lattice_stats *st);

#endif
