/* model/prism/map.h - the closed form of the impact-to-impact map on an
 * endless ramp (docs/model.md section 10).
 *
 * Between two impacts the prism turns through 2 alpha = 2 pi / N about one
 * edge, from psi = -alpha to psi = +alpha, conserving energy, so the
 * pre-impact speed of impact k+1 follows from the post-impact speed of
 * impact k, and every impact multiplies the speed by r:
 *
 *     omega+_k = r omega-_k
 *     omega-_{k+1}^2 = omega+_k^2 + Delta,  Delta = 4 K sin(alpha) sin(beta)
 *     K = g a0 / (J_A / m) = (g / a0) 6 / (cos 2alpha + 8)
 *
 * A prism passes the top of its next rotation (psi = -beta) only when
 * omega+_k^2 > B = 2 K (1 - cos(alpha - beta)); it then settles to the
 * fixed point omega*^2 = Delta / (1 - r^2) (pre-impact; r omega* after),
 * and keeps rolling for ever only when r^2 omega*^2 > B, i.e. when
 * 2 r^2 sin(alpha) sin(beta) > (1 - r^2)(1 - cos(alpha - beta)): beta above
 * beta_c(N, r), whatever the start.  r is the law's omega+/omega-
 * (pl_model_impact_ratio()); it does not depend on beta.
 */
#ifndef PL_MODEL_PRISM_MAP_H
#define PL_MODEL_PRISM_MAP_H

#include "core/error.h"

typedef struct {
    double r;            /* omega+ / omega- */
    double K;            /* g a0 / (J_A / m), 1/s^2 */
    double delta;        /* omega-^2 gained over one rotation, rad^2/s^2 */
    double barrier;      /* B: omega+^2 needed to pass the next top */
    double omega_star;   /* fixed point, pre-impact, rad/s (NaN when r >= 1) */
    int rolls;           /* 1: the fixed point passes the top (beta > beta_c) */
} pl_map_form;

/* The map of a prism (N, a0, beta in (0, pi/N)) under a law of ratio r in
 * (0, 1).  PL_EINVAL names a parameter out of range. */
pl_status pl_map_form_of(int N, double a0, double beta, double r,
                         pl_map_form *out, pl_err *err);

/* omega- of the first impact after release at rest at lambda0 (in
 * (0, alpha + beta)): omega-_1^2 = 2 K (cos(alpha - lambda0 + beta) -
 * cos(alpha + beta)). */
double pl_map_first_omega(int N, double a0, double beta, double lambda0);

/* The impact after which a prism whose first impact comes at omega-_1 =
 * w1 rocks back (1, 2, ...), or 0 when it passes max_impacts impacts. */
long pl_map_impacts_to_stop(const pl_map_form *f, double w1, long max_impacts);

/* beta_c(N, r): the root in (0, pi/N) of 2 r^2 sin(alpha) sin(beta) =
 * (1 - r^2)(1 - cos(alpha - beta)), by GSL's Brent solver to 1e-14 rad;
 * pi/N when r <= 0 (no slope rolls). */
pl_status pl_map_beta_c(int N, double r, double *beta_c, pl_err *err);

#endif
