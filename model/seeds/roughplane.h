/* model/seeds/roughplane.h - a particle sliding on a rough plane (seed 003,
 * Eberly, "Rough Plane Analysis", section 1).
 *
 * The plane is inclined by phi about the x axis; w is the up-slope
 * coordinate.  Friction is rough (Coulomb, F = -c V/|V|, c = mu m g cos phi,
 * zero when V = 0, as the document's convention) or viscous (F = -c V, with
 * alpha = c/m given directly in 1/s).  Integrated with GSL's rk8pd; a
 * rough-friction particle stops in finite time: the instant is located by
 * bisection on the step, and it stays at rest when static friction can
 * hold it (mu >= tan phi), else it slides back down.  The document's
 * other bodies (two particles, N particles, rod, board, box) are in
 * model/seeds/body.h.  SI units.
 */
#ifndef PL_MODEL_ROUGHPLANE_H
#define PL_MODEL_ROUGHPLANE_H

#include "core/error.h"

#include <stddef.h>

typedef enum { PL_FRICTION_ROUGH, PL_FRICTION_VISCOUS } pl_friction;

typedef struct {
    pl_friction friction;
    double mu;          /* rough: Coulomb coefficient (>= 0); viscous: alpha = c/m, 1/s */
    double phi;         /* inclination, rad, [0, pi/2) */
    double g;           /* 9.80665 */
} pl_plane;

typedef struct {
    double t_stop;      /* s; INFINITY when it never comes to rest */
    double x, w;        /* final position, m */
    double vx, vw;      /* final velocity, m/s */
    int at_rest;
} pl_particle_end;

typedef struct {
    double t;           /* s */
    double x, w;        /* m */
    double vx, vw;      /* m/s */
} pl_particle_sample;

/* Slides a particle from (0, 0) with velocity (vx0, vw0) for at most
 * duration s (it ends earlier when it comes to rest for good).  For
 * viscous friction on a flat plane "at rest" means |V| <= eps (the
 * document's t_max = ln(|V0| / eps) / alpha); eps <= 0: never.  n samples
 * at equal steps of the duration go to samples when not NULL (held after
 * the stop). */
pl_status pl_roughplane_particle(const pl_plane *pl, double vx0, double vw0,
                                 double duration, double eps, size_t n,
                                 pl_particle_sample *samples,
                                 pl_particle_end *end, pl_err *err);

#endif
