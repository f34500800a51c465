/* model/seeds/dimer.h - the bouncing dimer with frictional multiple impacts
 * (seed 002: Zhao, Liu & Brogliato 2009, "Planar dynamics of a rigid body
 * system with frictional impacts II").
 *
 * Two steel spheres (radius r, mass m_b) joined by a light glass rod
 * (length l - 2r, mass m_r) on a plate vibrating vertically,
 * y_p = -A sin(omega t), Gamma = A omega^2 / g.  The body moves freely,
 * in contact with one or both tips (the complementarity condition (2.4)
 * solved exactly, Coulomb's law with stick and slip (2.5) and the
 * correlative coefficient test (3.1)), and through single and double
 * impacts solved in the normal impulse as Darboux-Keller shock dynamics
 * ((2.6)-(2.7)) with the energetic coefficient of restitution (2.9), the
 * distributing law (2.10) and friction with the stick test (3.3)-(3.4),
 * separate slip coefficients in contact (mu_c) and impact (mu_i) as claim
 * 5.1.  docs/dimer.md states every choice the paper leaves to its part I.
 *
 * Coordinates: the centre of mass (x, y) and the tilt theta (the right
 * sphere higher for theta > 0); the paper's (x1, y1, theta) give the same
 * local dynamics.  SI units, angles in radians.
 */
#ifndef PL_MODEL_DIMER_H
#define PL_MODEL_DIMER_H

#include "core/cli.h"
#include "core/error.h"

#include <stddef.h>

typedef struct {
    double Ar;              /* aspect ratio 1 + l / (2 r) */
    double r;               /* sphere radius, m (4.75 mm: l = 27.55 mm at Ar 3.9) */
    double rho_steel;       /* 7.8e3 kg/m^3 */
    double rho_glass;       /* 1.0e3 kg/m^3, as the paper */
    double rod_d;           /* rod diameter, m; <= 0: from mu_st(Ar 5, 0) = mu_st_ref */
    double mu_st_ref;       /* 0.24 (3.5) */
    double f, Gamma;        /* plate frequency (Hz) and Gamma = A omega^2 / g */
    double es;              /* energetic coefficient of restitution (0.65) */
    double mu_s;            /* static (stick) coefficient (0.24) */
    double mu_c, mu_i;      /* slip coefficients in contact and in impact */
    double h0, theta0;      /* release: lower tip's height over the plate's
                               mean position (m), tilt (rad); at rest */
    double g;               /* 9.81 */
    double dist_exp;        /* exponent of the distributing law (2.10) on the
                               ratio of potential energies: 3/5 for Hertz
                               contacts (the paper prints 5/3: docs/dimer.md);
                               must lie in (0, 1) */
    double v_rest;          /* approach speed below which an impact ends the
                               bouncing (collisional singularity), m/s */
    double duration;        /* s */
    double dt;              /* the longest step of the smooth phases, s */
    double tol;             /* the integrator's relative error per step */
} pl_dimer_params;

/* The paper's section 5 dimer: Ar 3.9, f 25 Hz, Gamma 0.9, e_s 0.65,
 * mu_s 0.24, mu_c 0.12, mu_i 0.08, h0 0.25 mm, theta0 5 deg, 4 s. */
void pl_dimer_params_default(pl_dimer_params *p);

typedef struct {
    double r, l;            /* sphere radius, distance of the centres */
    double mb, mr, M, J;    /* sphere, rod, total mass; inertia about the
                               centre of mass */
    double rod_d;           /* the rod's diameter used */
    double A, omega;        /* plate amplitude (m) and angular frequency */
} pl_dimer_geometry;

/* Checks p and derives the geometry; PL_EINVAL names a bad parameter. */
pl_status pl_dimer_geometry_of(const pl_dimer_params *p, pl_dimer_geometry *g,
                               pl_err *err);

/* The correlative coefficient of a single impact (3.3) at tilt theta:
 * beta6 / (beta1 + beta4 + beta5). */
double pl_dimer_mu_st(const pl_dimer_geometry *g, double theta);

/* f(B_r) = mu B_r^2 - 2 B_r + 5.6 mu (4.4). */
double pl_dimer_f_br(double mu, double br);

/* The roots B_r1 <= B_r2 of f (4.5); returns their number (0 when
 * mu > 1/sqrt(5.6)). */
int pl_dimer_br_roots(double mu, double *br1, double *br2);

/* --- impacts ------------------------------------------------------------ */

/* An impact in local coordinates.  w is K M^-1 K^T (4 x 4, rows and
 * columns n1, n2, t1, t2: the tips' normal and tangential directions);
 * u the relative velocities (normal ones approaching < 0) on entry and
 * after the impact on return.  Contacts with in[i] take part: one (a
 * single impact, solved exactly, piecewise in the normal impulse) or two
 * (the distributing law drives the secondary contact's impulse; stepped
 * in the primary impulse).  A contact whose tangential velocity vanishes
 * sticks if the correlative coefficient is inside mu_s, else slips on;
 * both contacts on the flat plate (their tangential rows of w one) stick
 * or slip together, on the summed cone (3.4).  A tangential velocity
 * within 1e-9 of the fastest normal approach counts as zero. */
typedef struct {
    double pn[2], pt[2];    /* normal and tangential impulses */
    double wc[2], wr[2];    /* work of compression (<= 0), of restitution */
    int stuck[2];           /* ended sticking */
    int steps;              /* impulse steps taken (0 for a single impact) */
} pl_dimer_impact;

pl_status pl_dimer_impact_solve(const double w[4][4], double u[4],
                                const int in[2], double es, double mu_i,
                                double mu_s, double dist_exp,
                                pl_dimer_impact *out, pl_err *err);

/* 1 when the tips' tangential rows of the local matrix w are the same
 * (the dimer lying flat, to 1e-6 relative): only the tangential
 * impulses' sum moves the body, and Coulomb's law acts on the sums. */
int pl_dimer_shared_rows(const double w[4][4]);

/* The local matrix K M^-1 K^T of the dimer at tilt theta. */
void pl_dimer_local_matrix(const pl_dimer_geometry *g, double theta,
                           double w[4][4]);

/* --- the simulation ------------------------------------------------------ */

/* The persistent modes (docs/dimer.md, Modes): section 5's drift and
 * section 6's jump and flutter; mixed (one sphere every cycle, the other
 * every other: figure 17), hop (the flat dimer leaving the plate a little
 * every cycle: figures 18-19), alternate (a drift whose bouncing sphere
 * rises high and low in turn: figure 16). */
typedef enum {
    PL_DIMER_REST, PL_DIMER_DRIFT, PL_DIMER_JUMP, PL_DIMER_FLUTTER,
    PL_DIMER_OTHER, PL_DIMER_MIXED, PL_DIMER_HOP, PL_DIMER_ALTERNATE,
    PL_DIMER_NMODES
} pl_dimer_mode;

const char *pl_dimer_mode_name(pl_dimer_mode m);

typedef struct {
    double t;
    double x1, y1, x2, y2;  /* the tips (lowest points of the spheres) */
    double yp;              /* the plate */
    double vx1;             /* horizontal velocity of the left tip */
    double theta;
} pl_dimer_sample;

typedef struct {
    double drift;           /* mean horizontal speed of the left tip over the
                               last ten plate cycles, m/s */
    pl_dimer_mode mode;     /* the persistent mode of the last ten cycles */
    size_t impacts, doubles;/* single and double impacts over the run */
    size_t hits[2];         /* impacts of each sphere in the last ten cycles
                               faster than a tenth of g T / 2 */
    double hmax[2];         /* each tip's highest point over the plate in
                               the last ten cycles, m */
    double hcycle[2][2];    /* each tip's highest point in the even and
                               the odd cycles of the last ten, m */
    double energy;          /* m_b g (hmax1 + hmax2) / (m_b g^2 T^2): the
                               energy measure of (6.1)-(6.3) */
    size_t stick_events;    /* contacts that stuck */
    double x1_end;          /* left tip's final x, m */
} pl_dimer_result;

/* Simulates the dimer released at rest; n samples at equal steps of the
 * duration go to samples when not NULL. */
pl_status pl_dimer_run(const pl_dimer_params *p, pl_dimer_sample *samples,
                       size_t n, pl_dimer_result *res, pl_err *err);

/* A lone sphere on the dimer's plate: released at rest at t = 0 with its
 * lowest point h above the plate's mean position (y_p = -A sin omega t),
 * in free flight between impacts, each impact reversing its velocity
 * relative to the plate times e_s (for a ball on a plate the energetic
 * coefficient is Newton's: section 5), captured - riding on the plate,
 * which at Gamma < 1 never throws it off - once it meets the plate slower
 * than v_rest.  Each sphere of a long dimer with a light rod moves almost
 * so (an impact at one tip changes the other's normal velocity by a few
 * per cent of its own): docs/dimer.md, figure 12. */
typedef struct {
    size_t impacts;         /* impacts over the run */
    size_t hits;            /* of them in the last ten plate cycles */
    double t_capture;       /* when it was captured, s; NAN: never */
} pl_dimer_ball;

/* Simulates a lone sphere of p (f, Gamma < 1, es, v_rest, g, duration)
 * released from h (m); PL_EINVAL names a bad parameter. */
pl_status pl_dimer_lone_sphere(const pl_dimer_params *p, double h,
                               pl_dimer_ball *out, pl_err *err);

/* The change of the other tip's normal velocity per unit change of the
 * hitting tip's in a single frictionless impact at tilt theta: (J - M
 * (l/2)^2 cos^2) / (J + M (l/2)^2 cos^2); 0 for two point masses on a
 * massless rod, whose other sphere is the hit's centre of percussion. */
double pl_dimer_tip_coupling(const pl_dimer_geometry *g, double theta);

/* The dimer's parameters as command-line options, for `prismlab dimer` and
 * for sweeps of it (model/sweep/): th receives the start angle in degrees
 * (the caller converts it into p->theta0). */
#define PL_OPT_DIMER_PARAMS(p, th) \
    PL_OPT_DOUBLE("Ar", &(p)->Ar, 2, 20, "A", \
                  "aspect ratio (default 3.9; sphere radius 4.75 mm,\n" \
                  "l = 2 (Ar - 1) r)"), \
    PL_OPT_DOUBLE("f", &(p)->f, 0.1, 1000, "HZ", "the plate's frequency (default 25)"), \
    PL_OPT_DOUBLE("Gamma", &(p)->Gamma, 0, 19.9, "G", "its acceleration in g (default 0.9)"), \
    PL_OPT_DOUBLE("es", &(p)->es, 0, 1, "E", \
                  "energetic coefficient of restitution (default 0.65)"), \
    PL_OPT_DOUBLE("mu-s", &(p)->mu_s, 0, 10, "MU", "static friction (default 0.24)"), \
    PL_OPT_DOUBLE("mu-c", &(p)->mu_c, 0, 10, "MU", "slip in contact (default 0.12)"), \
    PL_OPT_DOUBLE("mu-i", &(p)->mu_i, 0, 10, "MU", "slip in impact (default 0.08)"), \
    PL_OPT_DOUBLE("h0", &(p)->h0, 0, 0.9, "M", \
                  "the lower tip over the plate's mean (default 0.25 mm)"), \
    PL_OPT_DOUBLE("theta0-deg", (th), -89, 89, "T", "the start angle (default 5)"), \
    PL_OPT_DOUBLE("duration", &(p)->duration, 0.01, 3600, "S", "simulated time (default 4)"), \
    PL_OPT_DOUBLE("dt", &(p)->dt, 1e-7, 1e-2, "S", "the integrator's longest step (default 5e-4)"), \
    PL_OPT_DOUBLE("dist-exp", &(p)->dist_exp, 1e-3, 0.999, "X", \
                  "the distributing law's exponent on the energy ratio\n" \
                  "(3/5 for Hertz contacts)"), \
    PL_OPT_DOUBLE("v-rest", &(p)->v_rest, 0, 1, "M_S", \
                  "the approach speed below which a bounce ends\n" \
                  "(default 1 mm/s)"), \
    PL_OPT_DOUBLE("rod-d", &(p)->rod_d, 1e-5, 0.1, "M", \
                  "the rod's diameter (default: from mu_st(Ar 5, 0) = 0.24\n" \
                  "(3.5))")

#endif
