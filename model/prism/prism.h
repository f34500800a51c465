/* model/prism/prism.h - the rolling-prism simulator of Zhao, Liu & Ma (2014),
 * seed paper sections 2-4: fixed-axis rotation about an edge (2.1) between
 * line impacts (section 3) or the classical plastic (rimless-wheel) law.
 *
 * Units: SI (m, s, rad, kg).  Frame (the project's one sign convention,
 * see docs/model.md):
 *   - u: along the ramp, positive DOWNHILL ("forward");
 *   - w: normal to the ramp, positive away from it (w = centre height);
 *   - omega: rotary speed, positive when the prism rolls forward
 *     (clockwise when downhill is drawn to the right).  The paper's
 *     theta-dot (counter-clockwise) is -omega; theta here is the forward
 *     angle rolled since release, so L_p = N theta / (2 pi) (4.2) grows;
 *   - v_p1, v_p2: (4.3) velocity along +u (downhill) of the prism's
 *     material point at height h_i above the ramp; both are positive for
 *     forward rolling, and omega = (v_p1 - v_p2)/(h1 - h2) (4.1).
 *   - A rig beam sees PL_BEAM1_SIGN * v_p1 and PL_BEAM2_SIGN * v_p2: beam 1
 *     points against the motion, beam 2 along it (seed section 5a: v_p1
 *     reads positive, v_p2 negative).
 *   - x (distance travelled): downhill displacement of the centre of mass
 *     since release, along the ramp.
 *
 * Invariants: N >= 3, 0 < beta < alpha = pi/N, 0 < lambda0 < alpha + beta.
 * The line-impact outcome omega+/omega- depends only on N, mu_s and mu (it
 * is homogeneous of degree one in the pre-impact velocity and free of m,
 * a0 and beta), so a handle computes it once and every impact reuses it.
 *
 * Threading: a handle is used by one thread at a time; separate handles
 * are independent.  No global state; pl_model_run() neither allocates nor
 * does I/O.
 */
#ifndef PL_MODEL_PRISM_H
#define PL_MODEL_PRISM_H

#include "core/error.h"

#include <stddef.h>

#define PL_BEAM1_SIGN (+1.0)
#define PL_BEAM2_SIGN (-1.0)

typedef enum { PL_LAW_LINE = 0, PL_LAW_PLASTIC = 1 } pl_law;

typedef enum {
    PL_END_DURATION = 0,  /* "end": ran for the whole duration */
    PL_END_STOPPED,       /* rocked back: too little energy for the next edge */
    PL_END_LEFT_RAMP,     /* the centre rolled ramp_length downhill */
    PL_END_SLIP,          /* (2.2) friction bound violated, or an impact slid */
    PL_END_DETACHED       /* (2.2) F_n <= 0: the edge leaves the ramp */
} pl_model_end;

typedef struct {
    int N;               /* number of edges, >= 3 */
    double a0;           /* centre of mass to edge, m, > 0 */
    double beta;         /* ramp inclination, rad, (0, pi/N) */
    double lambda0;      /* release angle of the leading face, rad, (0, alpha+beta) */
    double mu_s;         /* static friction coefficient, >= 0 */
    double mu;           /* slip friction coefficient, >= 0 (NaN: mu_s) */
    double h1, h2;       /* beam heights above the ramp, m, >= 0, h1 != h2 */
    double duration;     /* s, > 0 */
    double rate;         /* output samples per second, > 0 (10 kHz like the rig) */
    pl_law law;
    double ramp_length;  /* m of downhill travel before status left_ramp; 0 = unlimited */
    double mass;         /* kg, > 0; the motion must not depend on it */
} pl_model_params;

/* One line impact (or plastic impact). */
typedef struct {
    double t;            /* s, instant of face contact (lambda = 0) */
    double omega_minus;  /* rad/s before */
    double omega_plus;   /* rad/s after */
    double ratio;        /* omega_plus / omega_minus */
    int slipped;         /* 0: stick throughout; 1: slip occurred */
    int mode_mask;       /* bit k set: mode DS-(k+1) occurred (line law only) */
} pl_model_impact;

/* Caller-owned result arrays.  Any series pointer may be NULL (not wanted).
 * Series have room for cap_samples entries; impacts for cap_impacts. */
typedef struct {
    double *t, *x, *y, *theta, *omega, *vp1, *vp2, *lp;
    size_t cap_samples;
    pl_model_impact *impacts;
    size_t cap_impacts;
    /* filled by pl_model_run(): */
    size_t n_samples;        /* samples written (t_k = k / rate) */
    size_t n_impacts;        /* impacts that happened (may exceed cap_impacts;
                                only the first cap_impacts are stored) */
    pl_model_end end;
    double t_end;            /* s, when the run ended */
    double lp_end, theta_end, x_end, omega_end;
    /* when end is SLIP or DETACHED: the reaction on the rolling edge */
    double fail_fn, fail_ft; /* N, normal (into the prism) and tangential (+downhill) */
} pl_model_result;

/* Detailed outcome of one line impact (for tests and docs), scaled to
 * omega- = 1 rad/s. */
typedef struct {
    double ratio;           /* omega+ / omega- */
    double vu, vw;          /* centre velocity after, m/s (ramp frame) */
    double ke_before, ke_after;
    double layer_energy;    /* energy left in the boundary layer, discarded (3.29) */
    double friction_work;   /* energy lost to slip (>= 0) */
    double p_end;           /* terminal p* (N s / m) */
    int slipped, mode_mask, steps;
    int end_at_b;           /* 1: terminated by v^n(b) = 0, 0: by v^n(0) = 0 */
} pl_impact_detail;

typedef struct pl_model pl_model;

/* Fills p with the paper's N = 22 glass-ramp case (seed 000 section 5a). */
void pl_model_params_default(pl_model_params *p);

/* Checks every parameter; PL_EINVAL names the first bad one and its range. */
pl_status pl_model_params_check(const pl_model_params *p, pl_err *err);

/* Creates a handle: checks p and solves the line impact once. */
pl_status pl_model_create(pl_model **out, const pl_model_params *p,
                          pl_err *err);

/* Replaces the parameters (re-solves the impact only when N, mu_s or mu
 * changed); for fits that call the simulator thousands of times. */
pl_status pl_model_set_params(pl_model *m, const pl_model_params *p,
                              pl_err *err);

/* Frees the handle; NULL is a no-op. */
void pl_model_destroy(pl_model *m);

/* omega+/omega- of the handle's law. */
double pl_model_impact_ratio(const pl_model *m);

/* Runs the simulation into res (caller-owned arrays, see pl_model_result).
 * Sampling stops when cap_samples is reached, the duration passes or the
 * run ends early (res->end says why).  Never allocates. */
pl_status pl_model_run(pl_model *m, pl_model_result *res, pl_err *err);

/* L_p(t) only, on n grid times t[] (increasing, >= 0) into lp[]; samples
 * after an early end hold the last value.  Never allocates. */
pl_status pl_model_lp_grid(pl_model *m, const double *t, double *lp, size_t n,
                           pl_model_end *end, pl_err *err);

/* Solves one line impact (section 3) for N, mu_s, mu with p* step count
 * `steps` (>= 10, the integration resolution); mass and a0 only scale. */
pl_status pl_line_impact_solve(int N, double a0, double mass, double mu_s,
                               double mu, double omega_minus, int steps,
                               pl_impact_detail *out, pl_err *err);

/* Plastic (rimless-wheel) law: omega+/omega- = (J + m a0^2 cos 2alpha)/J_A. */
double pl_plastic_ratio(int N);

/* Geometry and the paper's (3.7) and (3.9) in s for mode 1..4 (DS-I..IV),
 * per unit length l = 1; b = 2 a0 sin(pi/N).  NaN for a bad mode. */
double pl_g1(int mode, double s, double b);
double pl_g2(int mode, double s, double b);

/* Reaction of the ramp on the rolling edge during the contact phase, my
 * derivation (docs/model.md): fn along +w, ft along +u (downhill), for
 * psi = alpha - lambda and forward speed omega. */
void pl_contact_forces(int N, double a0, double mass, double beta, double psi,
                       double omega, double *fn, double *ft);

/* Contact-phase mechanical energy (J): 1/2 J_A omega^2 + m g a0 cos(psi+beta). */
double pl_contact_energy(int N, double a0, double mass, double beta,
                         double psi, double omega);

/* The one-word name of an end status: end, stopped, left_ramp, slip, detached. */
const char *pl_model_end_name(pl_model_end e);

#endif
