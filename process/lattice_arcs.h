/* process/lattice_arcs.h - one slot's step: the two arcs of omega^2 in
 * theta either side of a gap, fitted together, and the instant between
 * them by equal areas (lattice.h step 3, docs/process.md section 4).
 * Every later room measures a slot through these: the walk confirms and
 * places it, the passes after the ringing place it again, the impacts'
 * speeds are the arcs evaluated at the smoothed instant. */
#ifndef PL_PROCESS_LATTICE_ARCS_H
#define PL_PROCESS_LATTICE_ARCS_H

#include "process/lattice_core.h"

/* The two arcs either side of a gap, fitted together.  Between impacts
 * (2.1) is a pendulum: omega^2 = C - 2 K cos psi with psi advancing as
 * theta does, so in the angle x = theta - theta(centre) each arc is
 *   omega^2 = a + b x + c x^2  (+ K sin(psi) x^3 / 3 ...),
 * with c = K cos psi the same on both sides to a part in a thousand and
 * the cubic a part in a thousand of the rest over a window.  In time the
 * same arcs need cubic and higher terms of opposite sign each side (the
 * third derivative is K sin psi (K cos psi - omega^2)), which a shared
 * quadratic in time cannot follow: their misfit inside the gap moved the
 * equal-area instant by up to 0.3 ms on a 39-edge prism. */
typedef struct {
    const walk *wk;
    size_t c;
    double th_c;             /* theta at the centre */
    double p[5];             /* aL, bL, aR, bR, c */
    double chol[25];         /* Cholesky factor of X'X, lower, row-major */
    double rss;              /* in omega^2 */
    double level;            /* mean omega over the windows */
    size_t m;                /* samples fitted */
} arcs;

/* The arcs either side of an instant near sample c, the instant by equal
 * areas, and what is known of them. */
typedef struct {
    double tc;              /* samples */
    double wm, wp;          /* the arcs at tc */
    double var_wm, var_wp;  /* their variances */
    double var_tc;          /* samples^2 */
    double sigma2;          /* noise variance of omega per sample near the slot */
    double slope_m, slope_p;/* the arcs' slopes at tc, per sample */
} step_fit;

/* The arcs (the velocities either side) at u samples from the centre:
 * omega (arc_var(), in lattice_arcs.c, gives the variance of omega^2 there
 * per unit noise variance of omega^2).  Inline: the ringing's and the
 * transition's stacks evaluate it on every sample. */
static inline double arc_val(const arcs *f, int side, double u)
{
    double t = theta_at(f->wk, (double)f->c + u) - f->th_c;
    double y = f->p[side ? 2 : 0] + f->p[side ? 3 : 1] * t + f->p[4] * t * t;
    return y > 0 ? sqrt(y) : 0;
}

/* The sums the arcs' normal equations need, per side: x^0..x^4 and
 * omega^2 x^0..x^2, x = theta - ref; with omega^4 and omega over both.
 * Kept between the re-centrings of one instant (pl_lat_locate()): the windows
 * then move by a few samples, which are added and taken away, and the
 * sums are moved to the new centre's angle by the binomial expansion,
 * instead of every sample being summed again. */
typedef struct {
    size_t a[2], b[2];       /* each side's samples [a, b) */
    double ref;              /* the angle x is measured from */
    double s[2][5], t[2][3], yy, lv;
    int valid;
} moments;

/* The arcs over windows of W samples each side of sample c, the sums
 * made afresh: the ringing's stacks want fixed windows about each
 * instant, not the ones cut at the data's ends.  -1 when the normal
 * equations are singular. */
int pl_lat_fit_joint(const walk *wk, size_t c, size_t W, arcs *f);

/* The arcs around sample c, each side cut at the data's ends (mo: the
 * sums kept between re-centrings, or NULL): the long side fixes the
 * curvature a short one cannot.  -1 when too near an end. */
int pl_lat_fit_arcs_at(const walk *wk, size_t c, size_t W, moments *mo, arcs *J);

/* What the arcs J say at u samples from their centre: the speeds either
 * side, their variances, the instant's variance and the slopes, which
 * the ratio's standard error needs through the instant. */
void pl_lat_arcs_eval(const arcs *J, size_t G, double u, step_fit *f);

/* The arcs around sample c and the instant by equal areas: the one
 * estimate of a step's time that a linear decoder delays as it delays
 * the arcs.  -1 when the windows leave the data or no crossing has the
 * left arc above the right. */
int pl_lat_fit_arcs(const walk *wk, size_t c, size_t W, moments *mo, step_fit *f);

/* The longest arc window (samples) that keeps both neighbours'
 * transitions out at this spacing of slots (interval samples). */
size_t pl_lat_arc_window(const walk *wk, double interval);

/* Locates the step near sample c by re-centring the arcs on each
 * estimate until it settles: only then do the windows lie symmetric about
 * the step.  -1 when it wanders off (no step near c) or does not settle. */
int pl_lat_locate(const walk *wk, double c, double interval, step_fit *f);

#endif
