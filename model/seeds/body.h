/* model/seeds/body.h - rigid bodies sliding on a rough plane (seed 003, Eberly,
 * "Rough Plane Analysis", sections 2-6): two particles joined rigidly, N
 * particles, a thin rod, a flat board and a solid box.  The single
 * particle of section 1 is model/seeds/roughplane.h.
 *
 * Coordinates as the document's: the plane is inclined by phi about the x
 * axis, w is the up-slope coordinate; (x, w) is the centre of mass, theta
 * the body's orientation about the plane's normal.  Every point r of the
 * body (body frame, centre of mass at the origin) moves with
 * v = (x', w') + theta' (-d_w, d_x), d = R(theta) r.
 *
 * Friction as in roughplane.h: rough (Coulomb) friction
 * dF = -mu g cos(phi) dm v/|v| on every element of the base, zero where
 * v = 0; viscous dF = -alpha dm v.  The generalized forces of the full
 * equations are the integrals over the base (sections 2-6); for the rod
 * and the board they are evaluated with GSL's adaptive quadrature.  The
 * "physics hack" of sections 4-6 replaces them by a decoupled model: the
 * centre of mass slides as a particle, the spin decays at the constant
 * rate the torque has when the centre is still.  docs/models.md says
 * what was assumed where the document is silent or garbled.  SI units.
 */
#ifndef PL_MODEL_BODY_H
#define PL_MODEL_BODY_H

#include "core/error.h"
#include "model/seeds/roughplane.h"

#include <stddef.h>

enum { PL_BODY_MAX_PARTICLES = 64 };

typedef enum {
    PL_BODY_PAIR,        /* sec. 2: masses m[0], m[1] at distance length */
    PL_BODY_PARTICLES,   /* sec. 3: n masses m[] at (px[], py[]) */
    PL_BODY_ROD,         /* sec. 4: uniform, mass, length */
    PL_BODY_BOARD,       /* sec. 5: uniform rectangle, mass, sides length x width */
    PL_BODY_BOX          /* sec. 6: a board of height `height` */
} pl_body_kind;

typedef struct {
    pl_body_kind kind;
    double mass;               /* rod, board, box: kg */
    double length, width;      /* rod: length; pair: the distance; board,
                                  box: the sides along the body's x and y */
    double height;             /* box: does not enter the motion (sec. 6) */
    size_t n;                  /* pair: 2; particles: 2..64 */
    double m[PL_BODY_MAX_PARTICLES];
    double px[PL_BODY_MAX_PARTICLES], py[PL_BODY_MAX_PARTICLES];
                               /* particles: body-frame positions, any
                                  origin: the centre of mass is moved there */
} pl_body;

typedef struct {
    double x, w, theta;        /* m, m, rad */
    double vx, vw, omega;      /* m/s, m/s, rad/s */
} pl_body_state;

typedef struct {
    double t_stop;             /* s; INFINITY when it does not come to rest */
    int at_rest;
    pl_body_state end;         /* at the end of the duration or at rest */
} pl_body_end;

/* Checks the body: positive masses and sizes, at most 64 particles, not
 * all on one point.  PL_EINVAL names the first bad parameter. */
pl_status pl_body_check(const pl_body *b, pl_err *err);

/* mu0 = the mass, mu2 = the moment of inertia about the centre of mass
 * (normal to the plane), as the document's. */
void pl_body_moments(const pl_body *b, double *mu0, double *mu2);

/* The integral of |r| dm over the base: the torque per unit mu g cos(phi)
 * when the centre of mass is still and the body spins (the "no linear
 * velocity" case of each section).  Closed form for every body; the
 * board's is the document's closed form of the integral of
 * sqrt(a^2 + b^2). */
double pl_body_first_radial_moment(const pl_body *b);

/* The generalized friction forces (x, w, theta) in state s: the full
 * equations' right-hand sides before dividing by mu0, mu0, mu2 (gravity
 * not included).  PL_ENUMERIC when the quadrature fails, naming why. */
pl_status pl_body_friction(const pl_body *b, const pl_plane *pl,
                           const pl_body_state *s, double f[3], pl_err *err);

/* Slides the body from s0 for at most duration seconds (it ends earlier
 * when it comes to rest for good: rough friction, mu >= tan(phi)).  hack:
 * the decoupled model instead of the full equations (rough friction;
 * viscous friction decouples exactly, both give the same).  Viscous
 * friction counts as at rest once the speed sqrt(2 E / mu0) is <= eps
 * (eps <= 0: never).  n samples at equal steps of the duration go to t
 * and path when not NULL (held after the stop). */
pl_status pl_roughplane_body(const pl_body *b, const pl_plane *pl,
                             const pl_body_state *s0, int hack,
                             double duration, double eps, size_t n,
                             double *t, pl_body_state *path, pl_body_end *end,
                             pl_err *err);

#endif
