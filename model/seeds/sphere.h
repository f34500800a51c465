/* model/seeds/sphere.h - rolling friction of a viscoelastic sphere (seed 004,
 * Brilliantov & Poschel, "Rolling friction of a viscous sphere on a hard
 * plane").
 *
 * k_rol (16) from Young's modulus Y, Poisson's ratio nu and the two
 * viscous constants eta1 (shear) and eta2 (bulk); the torque
 * M = k_rol Omega R F_N (15); the link to the normal coefficient of
 * restitution, 1 - epsilon = C1 A rho^(2/5) v^(1/5) with A = k_rol and
 * C1 = 1.15344, both ways; and a sphere rolling without slip on an
 * incline under that torque.  docs/models.md states what was assumed
 * where the document is silent.  SI units, angles in radians.
 */
#ifndef PL_MODEL_SPHERE_H
#define PL_MODEL_SPHERE_H

#include "core/error.h"

#include <stddef.h>

typedef struct {
    double radius;      /* R, m, > 0 */
    double young;       /* Y, Pa, > 0 */
    double poisson;     /* nu, (0, 0.5) */
    double eta1, eta2;  /* viscous constants, Pa s, >= 0, 3 eta2 + 2 eta1 > 0 */
    double density;     /* kg/m^3, > 0 (for the mass in rho) */
} pl_sphere;

/* Checks the parameters; PL_EINVAL names the first bad one and its range. */
pl_status pl_sphere_check(const pl_sphere *s, pl_err *err);

/* k_rol of eq. (16), in s. */
double pl_sphere_krol(const pl_sphere *s);

/* rho of the restitution law for two identical spheres colliding
 * (reference [13] of seed 004): 2 Y sqrt(R/2) / (3 (1 - nu^2) (m/2)). */
double pl_sphere_rho(const pl_sphere *s);

/* 1 - epsilon = C1 k_rol rho^(2/5) v^(1/5) at impact speed v (m/s):
 * the restitution coefficient, first order. */
double pl_sphere_restitution(const pl_sphere *s, double v);

/* The inverse estimate: k_rol from a measured restitution coefficient
 * epsilon at impact speed v, for a sphere of s's size and material
 * (s's eta are not used). */
double pl_sphere_krol_from_restitution(const pl_sphere *s, double epsilon,
                                       double v);

/* Rolling without slip on a slope phi (>= 0) from speed v0 >= 0:
 *   (7/5) m v' = m g sin(phi) - k_rol v m g cos(phi) / R
 * (M = k_rol Omega R F_N with Omega = v / R, F_N = m g cos(phi), and the
 * sphere's moment of inertia 2/5 m R^2).  Integrated with GSL's rk8pd to
 * t_end; n samples (t, v, x) at equal steps go to the arrays when not
 * NULL.  v_terminal = R tan(phi) / k_rol. */
typedef struct {
    double t_end, v_end, x_end;
    double v_terminal;   /* m/s; 0 on a flat plane */
    double tau;          /* s: the e-folding time 7 R / (5 g k_rol cos phi) */
} pl_sphere_roll;

pl_status pl_sphere_roll_run(const pl_sphere *s, double phi, double v0,
                             double t_end, size_t n, double *t, double *v,
                             double *x, pl_sphere_roll *out, pl_err *err);

#endif
