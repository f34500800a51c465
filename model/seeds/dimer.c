/* model/seeds/dimer.c - the bouncing dimer (seed 002).  See dimer.h and
 * docs/dimer.md.  The impacts themselves are dimer_impact.c's. */
#include "model/seeds/dimer.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pl_dimer_params_default(pl_dimer_params *p)
{
    memset(p, 0, sizeof *p);
    p->Ar = 3.9;
    p->r = 27.55e-3 / (2 * (3.9 - 1));   /* l = 2 (Ar - 1) r = 27.55 mm */
    p->rho_steel = 7.8e3;
    p->rho_glass = 1.0e3;
    p->rod_d = 0;
    p->mu_st_ref = 0.24;
    p->f = 25;
    p->Gamma = 0.9;
    p->es = 0.65;
    p->mu_s = 0.24;
    p->mu_c = 0.12;
    p->mu_i = 0.08;
    p->h0 = 0.25e-3;
    p->theta0 = 5 * M_PI / 180;
    p->g = 9.81;
    p->dist_exp = 0.6;
    p->v_rest = 1e-3;
    p->duration = 4;
    p->dt = 5e-4;
    p->tol = 1e-10;
}

const char *pl_dimer_mode_name(pl_dimer_mode m)
{
    static const char *const names[] = {"rest", "drift", "jump", "flutter", "other",
                                        "mixed", "hop", "alternate"};
    return (unsigned)m < sizeof names / sizeof names[0] ? names[m] : "other";
}

/* J / M of a dimer of sphere mass mb, radius r, centre distance l and rod
 * mass mr. */
static double inertia(double mb, double mr, double r, double l)
{
    double lr = l - 2 * r;
    return 2 * 0.4 * mb * r * r + 2 * mb * (l / 2) * (l / 2) + mr * lr * lr / 12;
}

pl_status pl_dimer_geometry_of(const pl_dimer_params *p, pl_dimer_geometry *g,
                               pl_err *err)
{
#define NEED(cond, ...) do { if (!(cond)) return pl_err_set(err, PL_EINVAL, __VA_ARGS__); } while (0)
    NEED(p->Ar >= 2 && p->Ar <= 20, "dimer: aspect ratio %g must lie in [2, 20] "
         "(below 2 the spheres overlap)", p->Ar);
    NEED(p->r > 0 && isfinite(p->r), "dimer: radius %g m must be > 0", p->r);
    NEED(p->rho_steel > 0 && p->rho_glass > 0, "dimer: densities must be > 0");
    NEED(p->f > 0 && isfinite(p->f), "dimer: frequency %g Hz must be > 0", p->f);
    NEED(p->Gamma >= 0 && p->Gamma < 20, "dimer: Gamma %g must lie in [0, 20)", p->Gamma);
    NEED(p->es >= 0 && p->es <= 1, "dimer: e_s %g must lie in [0, 1]", p->es);
    NEED(p->mu_c >= 0 && p->mu_i >= 0, "dimer: slip coefficients must be >= 0");
    NEED(p->mu_s >= p->mu_c && p->mu_s >= p->mu_i, "dimer: mu_s %g must be at "
         "least the slip coefficients (%g, %g)", p->mu_s, p->mu_c, p->mu_i);
    NEED(p->h0 >= 0 && p->h0 < 1, "dimer: h0 %g m must lie in [0, 1)", p->h0);
    NEED(fabs(p->theta0) < M_PI / 2, "dimer: theta0 must lie within +-90 deg");
    NEED(p->g > 0, "dimer: g must be > 0");
    NEED(p->dist_exp > 0 && p->dist_exp < 1, "dimer: distributing exponent %g "
         "must lie in (0, 1): eta/(eta + 1) for a contact force ~ deformation^eta "
         "(3/5 for Hertz; the paper's printed 5/3 is its reciprocal)", p->dist_exp);
    NEED(p->v_rest >= 0, "dimer: v_rest must be >= 0");
    NEED(p->duration > 0 && p->dt > 0 && p->dt <= 1e-2, "dimer: duration and "
         "the longest step (<= 10 ms) must be > 0");
    NEED(p->tol >= 1e-14 && p->tol <= 1e-4, "dimer: the integrator's tolerance "
         "%g must lie in [1e-14, 1e-4]", p->tol);
#undef NEED
    g->r = p->r;
    g->l = 2 * (p->Ar - 1) * p->r;
    g->mb = p->rho_steel * 4.0 / 3.0 * M_PI * p->r * p->r * p->r;
    double d = p->rod_d;
    if (!(d > 0)) {
        /* mu_st(Ar = 5, theta = 0) = r l / (2 J/M + 2 r^2) (3.3) set to
         * mu_st_ref: the J/M that needs, then the rod mass and diameter */
        double l5 = 8 * p->r, lr5 = 6 * p->r, r2 = p->r * p->r;
        if (!(p->mu_st_ref > 0))
            return pl_err_set(err, PL_EINVAL, "dimer: mu_st_ref must be > 0");
        double jm = (p->r * l5 / p->mu_st_ref - 2 * r2) / 2;
        double mr = g->mb * (2 * jm - 0.8 * r2 - l5 * l5 / 2) / (lr5 * lr5 / 12 - jm);
        if (!(mr > 0))
            return pl_err_set(err, PL_EINVAL, "dimer: no rod mass gives mu_st(5, 0) "
                              "= %g (a massless rod gives %g)", p->mu_st_ref,
                              p->r * l5 / (2 * inertia(g->mb, 0, p->r, l5) / (2 * g->mb) + 2 * r2));
        d = sqrt(4 * mr / (p->rho_glass * lr5 * M_PI));
    }
    g->rod_d = d;
    g->mr = p->rho_glass * M_PI * d * d / 4 * (g->l - 2 * p->r);
    g->M = 2 * g->mb + g->mr;
    g->J = inertia(g->mb, g->mr, p->r, g->l);
    g->omega = 2 * M_PI * p->f;
    g->A = p->Gamma * p->g / (g->omega * g->omega);
    return PL_OK;
}

double pl_dimer_mu_st(const pl_dimer_geometry *g, double th)
{
    double beta = 2 * g->J, l = g->l, r = g->r;
    double b1 = beta / g->M;
    double b4 = (g->mb + 0.5 * g->mr) * l * l * sin(th) * sin(th) / g->M;
    double b5 = 2 * r * l * sin(th) + 2 * r * r;
    double b6 = (0.5 * l * l * sin(th) + r * l) * cos(th);
    return b6 / (b1 + b4 + b5);
}

double pl_dimer_f_br(double mu, double br)
{
    return mu * br * br - 2 * br + 5.6 * mu;
}

int pl_dimer_br_roots(double mu, double *br1, double *br2)
{
    double disc = 1 - 5.6 * mu * mu;
    if (!(mu > 0) || disc < 0)
        return 0;
    *br1 = (1 - sqrt(disc)) / mu;
    *br2 = (1 + sqrt(disc)) / mu;
    return disc == 0 ? 1 : 2;
}

static double sgn(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/* --- local dynamics ------------------------------------------------------ */

/* The arms from the centre of mass to the tips (lowest points). */
static void arms(const pl_dimer_geometry *g, double th, double a[2][2])
{
    double c = cos(th), s = sin(th), h = g->l / 2;
    a[0][0] = -h * c;
    a[0][1] = -h * s - g->r;
    a[1][0] = h * c;
    a[1][1] = h * s - g->r;
}

/* K: rows n1, n2, t1, t2 on (x', y', theta').  The normal velocity of a
 * tip is its sphere centre's; the tangential one is the material point's
 * at the contact, which adds the sphere's spin r theta'. */
static void kmat(const pl_dimer_geometry *g, double th, double k[4][3])
{
    double a[2][2];
    arms(g, th, a);
    for (int i = 0; i < 2; i++) {
        k[i][0] = 0;
        k[i][1] = 1;
        k[i][2] = a[i][0];
        k[2 + i][0] = 1;
        k[2 + i][1] = 0;
        k[2 + i][2] = -a[i][1];
    }
}

void pl_dimer_local_matrix(const pl_dimer_geometry *g, double th, double w[4][4])
{
    double k[4][3], mi[3] = {1 / g->M, 1 / g->M, 1 / g->J};
    kmat(g, th, k);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            w[i][j] = 0;
            for (int c = 0; c < 3; c++)
                w[i][j] += k[i][c] * mi[c] * k[j][c];
        }
}

/* --- a lone sphere on the plate ------------------------------------------ */

double pl_dimer_tip_coupling(const pl_dimer_geometry *g, double th)
{
    double mh = g->M * (g->l / 2) * (g->l / 2) * cos(th) * cos(th);
    return (g->J - mh) / (g->J + mh);
}

/* The gap over the plate at t of a sphere that left height y0 at t0 with
 * velocity v0 (its lowest point; free flight). */
static double ball_gap(const pl_dimer_geometry *g, double gacc, double t0,
                       double y0, double v0, double t)
{
    double d = t - t0;
    return y0 + v0 * d - 0.5 * gacc * d * d + g->A * sin(g->omega * t);
}

pl_status pl_dimer_lone_sphere(const pl_dimer_params *p, double h,
                               pl_dimer_ball *out, pl_err *err)
{
    pl_dimer_geometry g;
    if (pl_dimer_geometry_of(p, &g, err) != PL_OK)
        return err->code;
    if (!(p->Gamma < 1))
        return pl_err_set(err, PL_EINVAL, "lone sphere: Gamma < 1 required (at %g a "
                          "captured sphere would leave the plate again)", p->Gamma);
    if (!(h >= 0))
        return pl_err_set(err, PL_EINVAL, "lone sphere: h >= 0 required, got %g m", h);
    memset(out, 0, sizeof *out);
    out->t_capture = NAN;
    double T = 1 / p->f, t_win = p->duration - 10 * T, gacc = p->g;
    /* the relative acceleration is at most g (1 + Gamma): a bounce that
     * dips under the plate between two marching steps of T/2000 and comes
     * back sinks at most g (1 + Gamma) dt^2 / 8, 2 nm at 25 Hz */
    double dt = T / 2000, t0 = 0, y0 = h, v0 = 0;
    for (;;) {
        double a = t0, b = t0 + dt;
        while (b <= p->duration && ball_gap(&g, gacc, t0, y0, v0, b) > 0) {
            a = b;
            b += dt;
        }
        if (b > p->duration)
            return PL_OK;
        for (int it = 0; it < 60; it++) {
            double c = 0.5 * (a + b);
            if (ball_gap(&g, gacc, t0, y0, v0, c) > 0)
                a = c;
            else
                b = c;
        }
        double vp = -g.A * g.omega * cos(g.omega * b);
        double rel = v0 - gacc * (b - t0) - vp;
        if (-rel < p->v_rest) {
            out->t_capture = b;
            return PL_OK;
        }
        out->impacts++;
        if (b >= t_win)
            out->hits++;
        t0 = b;
        y0 = -g.A * sin(g.omega * b);
        v0 = vp - p->es * rel;
    }
}

/* --- the simulation ------------------------------------------------------- */

typedef struct {
    const pl_dimer_params *p;
    pl_dimer_geometry g;
    double q[3], v[3], t;        /* centre of mass (x, y), theta; velocities */
    int closed[2];               /* the tip touches the plate */
    int stick[2];                /* a closed tip sticks */
    double slip[2];              /* a closed, sliding tip's direction */
} sim;

static double plate_y(const sim *s, double t) { return -s->g.A * sin(s->g.omega * t); }
static double plate_v(const sim *s, double t) { return -s->g.A * s->g.omega * cos(s->g.omega * t); }
static double plate_a(const sim *s, double t)
{
    return s->g.A * s->g.omega * s->g.omega * sin(s->g.omega * t);
}

static double gap(const sim *s, const double q[3], double t, int i)
{
    double a[2][2];
    arms(&s->g, q[2], a);
    return q[1] + a[i][1] - plate_y(s, t);
}

/* Relative velocities n1, n2 (to the plate), t1, t2. */
static void rel_vel(const sim *s, const double q[3], const double v[3],
                    double t, double u[4])
{
    double k[4][3];
    kmat(&s->g, q[2], k);
    for (int i = 0; i < 4; i++)
        u[i] = k[i][0] * v[0] + k[i][1] * v[1] + k[i][2] * v[2];
    u[0] -= plate_v(s, t);
    u[1] -= plate_v(s, t);
}

/* Solves a small dense system in place (Gaussian elimination with partial
 * pivoting); returns 0, or -1 when it is singular. */
static int solve(int n, double a[4][4], double b[4])
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c]))
                piv = r;
        double scale = 0;
        for (int r = 0; r < n; r++)
            scale = fmax(scale, fabs(a[r][c]));
        if (!(fabs(a[piv][c]) > 1e-12 * scale) || scale == 0)
            return -1;
        if (piv != c) {
            for (int k = 0; k < n; k++) {
                double tmp = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = tmp;
            }
            double tmp = b[c];
            b[c] = b[piv];
            b[piv] = tmp;
        }
        for (int r = c + 1; r < n; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < n; k++)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        for (int k = c + 1; k < n; k++)
            b[c] -= a[c][k] * b[k];
        b[c] /= a[c][c];
    }
    return 0;
}

/* The unknowns of a contact case into un: the normal forces of the tips
 * in act, then the tangential forces of those that stick; *nn receives
 * the normal ones' count and *combined 1 when both stick on a flat plate,
 * where the tangential rows are one (superstatic) and one unknown stands
 * for their sum.  Returns the count. */
static int case_unknowns(const double W[4][4], const int act[2],
                         const int stick[2], int un[4], int *nn, int *combined)
{
    int n = 0;
    *combined = 0;
    for (int i = 0; i < 2; i++)
        if (act[i])
            un[n++] = i;
    *nn = n;
    for (int i = 0; i < 2; i++)
        if (act[i] && stick[i])
            un[n++] = 2 + i;
    if (act[0] && act[1] && stick[0] && stick[1]) {
        double d = W[2][2] * W[3][3] - W[2][3] * W[3][2];
        if (fabs(d) < 1e-9 * W[2][2] * W[3][3]) {
            *combined = 1;
            n = 3;
            un[2] = 2;
        }
    }
    return n;
}

/* The contact forces Fc (n1, n2, t1, t2) when exactly the tips in act
 * push, with the modes stick and slip (H: the accelerations of the four
 * rows without contact forces, ypa the plate's), whatever their signs.
 * Returns 1 when the system has a solution. */
static int case_forces(const sim *s, const double W[4][4], const double H[4],
                       double ypa, const int act[2], const int stick[2],
                       const double slip[2], double Fc[4])
{
    const pl_dimer_params *p = s->p;
    int un[4], nn, combined;
    int n = case_unknowns(W, act, stick, un, &nn, &combined);
    double A[4][4], b[4];
    for (int e = 0; e < n; e++) {
        int row = un[e];            /* the equation of this unknown's contact */
        for (int f = 0; f < n; f++) {
            int col = un[f];
            A[e][f] = W[row][col];
            if (combined && col == 2)
                A[e][f] = 0.5 * (W[row][2] + W[row][3]);
            /* a sliding tip's friction rides on its normal force */
            if (col < 2 && !stick[col])
                A[e][f] += W[row][2 + col] * (-p->mu_c * slip[col]);
        }
        b[e] = -(H[row] - (row < 2 ? ypa : 0));
    }
    if (n > 0 && solve(n, A, b) != 0)
        return 0;
    for (int i = 0; i < 4; i++)
        Fc[i] = 0;
    for (int e = 0; e < n; e++) {
        if (combined && un[e] == 2) {
            Fc[2] = Fc[3] = 0.5 * b[e];
        } else {
            Fc[un[e]] = b[e];
        }
    }
    for (int i = 0; i < 2; i++)
        if (act[i] && !stick[i])
            Fc[2 + i] = -p->mu_c * slip[i] * Fc[i];
    return 1;
}

/* case_forces when the case holds: it has a solution, every pushing tip
 * pushes and no closed tip that does not push sinks. */
static int contact_case(const sim *s, const double W[4][4], const double H[4],
                        double ypa, const int act[2], const int stick[2],
                        const double slip[2], double Fc[4])
{
    const pl_dimer_params *p = s->p;
    if (!case_forces(s, W, H, ypa, act, stick, slip, Fc))
        return 0;
    for (int i = 0; i < 2; i++)
        if (act[i] && Fc[i] < 0)
            return 0;
    /* a closed tip that does not push must not sink */
    for (int i = 0; i < 2; i++)
        if (s->closed[i] && !act[i]) {
            double a = H[i] - ypa;
            for (int j = 0; j < 4; j++)
                a += W[i][j] * Fc[j];
            if (a < -1e-9 * p->g)
                return 0;
        }
    return 1;
}

/* The terms of the local dynamics at (t, q, v): H the accelerations of
 * the rows n1, n2, t1, t2 without contact forces, W = K M^-1 K^T, K, and
 * the plate's acceleration. */
static void local_terms(const sim *s, double t, const double q[3],
                        const double v[3], double H[4], double W[4][4],
                        double k[4][3], double *ypa)
{
    double th = q[2], w = v[2], h = s->g.l / 2;
    double sn = sin(th), cs = cos(th), g = s->p->g;
    H[0] = -g + h * sn * w * w;
    H[1] = -g - h * sn * w * w;
    H[2] = h * cs * w * w;
    H[3] = -h * cs * w * w;
    kmat(&s->g, th, k);
    double mi[3] = {1 / s->g.M, 1 / s->g.M, 1 / s->g.J};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            W[i][j] = k[i][0] * mi[0] * k[j][0] + k[i][1] * mi[1] * k[j][1] +
                      k[i][2] * mi[2] * k[j][2];
    *ypa = plate_a(s, t);
}

/* The generalized accelerations under the contact forces F. */
static void accel_of(const sim *s, const double k[4][3], const double F[4],
                     double acc[3])
{
    double mi[3] = {1 / s->g.M, 1 / s->g.M, 1 / s->g.J};
    for (int c = 0; c < 3; c++) {
        double gen = 0;
        for (int i = 0; i < 4; i++)
            gen += k[i][c] * F[i];
        acc[c] = gen * mi[c];
    }
    acc[1] -= s->p->g;
}

/* The friction cones of the sticking tips under the forces F: a tip whose
 * cone does not hold slides the way it is pushed (both together when
 * they share one tangential force).  Returns 1 when a mode changed. */
static int cones_slip(const pl_dimer_params *p, const int push[2],
                      const double F[4], int stick[2], double slip[2])
{
    int changed = 0;
    if (push[0] && push[1] && stick[0] && stick[1] &&
        fabs(F[2] - F[3]) < 1e-12 * (fabs(F[2]) + 1e-300)) {
        if (fabs(F[2] + F[3]) > p->mu_s * (F[0] + F[1])) {
            stick[0] = stick[1] = 0;
            slip[0] = slip[1] = -sgn(F[2] + F[3]);
            changed = 1;
        }
    } else {
        for (int i = 0; i < 2; i++)
            if (push[i] && stick[i] && fabs(F[2 + i]) > p->mu_s * F[i]) {
                stick[i] = 0;
                slip[i] = -sgn(F[2 + i]);
                changed = 1;
            }
    }
    return changed;
}

/* The contact forces of the closed tips: the normal complementarity
 * (2.4) solved by trying which tips push (at most two: every case), with
 * Coulomb's law (2.5): a sliding tip's friction is -mu_c sign(v_t) F_n, a
 * sticking tip's whatever keeps its tangential acceleration zero if that
 * lies inside mu_s F_n (the correlative coefficient (3.1)), else it
 * slides the way it is pushed.  acc receives the generalized
 * accelerations and F_out (when not NULL) the forces; stick and slip are
 * updated to the modes the cones settled on, and push says which tips
 * push (closed tips that do not are lifting off). */
static void contact_accel(const sim *s, double t, const double q[3],
                          const double v[3], int stick[2], double slip[2],
                          int push[2], double acc[3], double F_out[4])
{
    const pl_dimer_params *p = s->p;
    double H[4], W[4][4], k[4][3], F[4] = {0, 0, 0, 0}, ypa;
    local_terms(s, t, q, v, H, W, k, &ypa);
    push[0] = push[1] = 0;
    int nc = s->closed[0] + s->closed[1];
    for (int attempt = 0; nc > 0 && attempt < 8; attempt++) {
        int found = 0;
        /* which tips push: both, each alone, none */
        static const int sets[4][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}};
        for (int c = 0; c < 4 && !found; c++) {
            int act[2] = {sets[c][0] && s->closed[0], sets[c][1] && s->closed[1]};
            double Fc[4];
            if (sets[c][0] != act[0] || sets[c][1] != act[1] ||
                !contact_case(s, W, H, ypa, act, stick, slip, Fc))
                continue;
            found = 1;
            memcpy(F, Fc, sizeof F);
            push[0] = act[0];
            push[1] = act[1];
        }
        if (!found || !cones_slip(p, push, F, stick, slip))
            break;
    }
    accel_of(s, k, F, acc);
    if (F_out)
        memcpy(F_out, F, sizeof F);
}

/* Holds the closed tips on the plate: positions (one tip: the height;
 * both: the height and theta = 0 on a flat plate) and velocities (the
 * least change in the mass metric): the normal velocities of the closed
 * tips and the tangential ones of the sticking tips - a stuck tip is at
 * rest on the plate, and a bounce ended by v_rest must not set it
 * sliding through the normal row's coupling to the tangential one (two
 * sticking tips on the flat plate share one tangential row). */
static void project(sim *s)
{
    int nc = s->closed[0] + s->closed[1];
    if (nc == 0)
        return;
    if (nc == 2) {
        s->q[2] = 0;
        s->q[1] = plate_y(s, s->t) + s->g.r;
    } else {
        int i = s->closed[0] ? 0 : 1;
        s->q[1] -= gap(s, s->q, s->t, i);
    }
    double u[4], k[4][3], mi[3] = {1 / s->g.M, 1 / s->g.M, 1 / s->g.J};
    rel_vel(s, s->q, s->v, s->t, u);
    kmat(&s->g, s->q[2], k);
    double W[4][4];
    pl_dimer_local_matrix(&s->g, s->q[2], W);
    double A[4][4], b[4], lam[4] = {0, 0, 0, 0};
    int idx[4], n = 0;
    for (int i = 0; i < 2; i++)
        if (s->closed[i])
            idx[n++] = i;
    for (int i = 0; i < 2; i++)
        if (s->closed[i] && s->stick[i] &&
            !(i == 1 && nc == 2 && s->stick[0] && pl_dimer_shared_rows((const double (*)[4])W)))
            idx[n++] = 2 + i;
    for (int e = 0; e < n; e++) {
        for (int f = 0; f < n; f++)
            A[e][f] = W[idx[e]][idx[f]];
        b[e] = -u[idx[e]];
    }
    if (solve(n, A, b) != 0)
        return;
    for (int e = 0; e < n; e++)
        lam[idx[e]] = b[e];
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 4; i++)
            s->v[c] += mi[c] * k[i][c] * lam[i];
}

/* Applies the impulses of an impact to the generalized velocities. */
static void apply_impulse(sim *s, const pl_dimer_impact *im)
{
    double k[4][3], mi[3] = {1 / s->g.M, 1 / s->g.M, 1 / s->g.J};
    double P[4] = {im->pn[0], im->pn[1], im->pt[0], im->pt[1]};
    kmat(&s->g, s->q[2], k);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 4; i++)
            s->v[c] += mi[c] * k[i][c] * P[i];
}

static void left_tip(const sim *s, double *x, double *y)
{
    double a[2][2];
    arms(&s->g, s->q[2], a);
    *x = s->q[0] + a[0][0];
    *y = s->q[1] + a[0][1];
}

static void sample(const sim *s, pl_dimer_sample *sm)
{
    double a[2][2], u[4];
    arms(&s->g, s->q[2], a);
    rel_vel(s, s->q, s->v, s->t, u);
    sm->t = s->t;
    sm->x1 = s->q[0] + a[0][0];
    sm->y1 = s->q[1] + a[0][1];
    sm->x2 = s->q[0] + a[1][0];
    sm->y2 = s->q[1] + a[1][1];
    sm->yp = plate_y(s, s->t);
    sm->vx1 = u[2];
    sm->theta = s->q[2];
}

/* Released at rest, the lower (left) tip h0 above the plate's mean. */
static void release(sim *s)
{
    const pl_dimer_params *p = s->p;
    double h = s->g.l / 2;
    s->q[2] = p->theta0;
    s->q[0] = h * cos(p->theta0);
    s->q[1] = p->h0 + s->g.r + h * sin(fabs(p->theta0));
}

/* An impact of the tips in (u: the relative velocities before it, after
 * it on return), hit the tip that arrived; counted says whether it counts
 * among the last cycles' hits.  The tips that come out slower than v_rest
 * stay closed. */
static pl_status bounce(sim *s, double u[4], const int in[2], int hit,
                        int counted, pl_dimer_result *res, pl_err *err)
{
    const pl_dimer_params *p = s->p;
    double W[4][4], uu[4], es = p->es;
    pl_dimer_local_matrix(&s->g, s->q[2], W);
    pl_dimer_impact im;
    /* the collisional singularity: bounces too small to resolve end the
     * bouncing (a plastic impact) */
    if (!(in[0] && in[1]) && -u[hit] < p->v_rest)
        es = 0;
    memcpy(uu, u, sizeof uu);
    pl_status st = pl_dimer_impact_solve((const double (*)[4])W, uu, in, es,
                                         p->mu_i, p->mu_s, p->dist_exp, &im, err);
    if (st != PL_OK) {
        pl_err_prefix(err, "t = %.6f s: ", s->t);
        return st;
    }
    apply_impulse(s, &im);
    /* a double impact when both tips took impulse (a resting tip may be
     * lifted instead of pressed) */
    if (im.pn[0] > 0 && im.pn[1] > 0)
        res->doubles++;
    else
        res->impacts++;
    if (counted)
        res->hits[hit]++;
    rel_vel(s, s->q, s->v, s->t, u);
    for (int i = 0; i < 2; i++) {
        if (!in[i])
            continue;
        if (u[i] < p->v_rest) {
            s->closed[i] = 1;
            s->stick[i] = im.stuck[i] || u[2 + i] == 0;
            s->slip[i] = sgn(u[2 + i]);
            if (im.stuck[i])
                res->stick_events++;
        } else {
            s->closed[i] = 0;
            s->stick[i] = 0;
        }
    }
    project(s);
    return PL_OK;
}

/* Tip hit reached the plate: an impact of it and of every tip touching
 * and approaching, or, when it does not approach, it closes.  in_window:
 * the last ten cycles, where impacts faster than v_sig count as hits. */
static pl_status arrive(sim *s, int hit, int in_window, double v_sig,
                        pl_dimer_result *res, pl_err *err)
{
    double u[4];
    rel_vel(s, s->q, s->v, s->t, u);
    int in[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (i == hit || s->closed[i] ||
            (gap(s, s->q, s->t, i) < 1e-9 && u[i] < 0))
            in[i] = 1;
    double speed = -u[hit];
    if (speed > 0)
        return bounce(s, u, in, hit, in_window && speed > v_sig, res, err);
    s->closed[hit] = 1;
    s->stick[hit] = u[2 + hit] == 0;
    s->slip[hit] = sgn(u[2 + hit]);
    project(s);
    return PL_OK;
}

/* --- the smooth phases: adaptive steps between located events ------------ */

/* Between two events the contact modes are held: the closed tips push,
 * the sticking ones stick, the sliding ones slide their way.  The motion
 * is then smooth and GSL's Runge-Kutta-Prince-Dormand 8(9) takes steps as
 * long as its error control allows (up to max_step); an event - a tip
 * reaching the plate, a closed tip's normal force or a sticking tip's
 * friction margin or a sliding tip's velocity through zero - is found by
 * the sign of its function at the step's end and located inside the step
 * by the Illinois method on the step's length. */
typedef struct {
    sim *s;
    gsl_odeiv2_system sys;
    gsl_odeiv2_step *st;
    gsl_odeiv2_control *con;
    gsl_odeiv2_evolve *ev;
    double h;                   /* the next step the control proposes */
    double max_step;
    double cap;                 /* the next step's limit after an impact */
    pl_dimer_sample *samples;   /* the caller's samples (NULL: none) */
    size_t n_samples, next;     /* their count, the next to take */
} integ;

/* The forces with the modes held, whatever their signs (F), and the
 * generalized accelerations (H and W: the local terms, local_terms).  A case without a solution (a degenerate
 * configuration) takes the modes the complementarity settles on. */
static void held_forces(const sim *s, double t, const double q[3],
                        const double v[3], double F[4], double acc[3],
                        double H[4], double W[4][4])
{
    double k[4][3], ypa;
    local_terms(s, t, q, v, H, W, k, &ypa);
    if (case_forces(s, W, H, ypa, s->closed, s->stick, s->slip, F)) {
        accel_of(s, k, F, acc);
        return;
    }
    int stick[2] = {s->stick[0], s->stick[1]}, push[2];
    double slip[2] = {s->slip[0], s->slip[1]};
    contact_accel(s, t, q, v, stick, slip, push, acc, F);
}

static int rhs(double t, const double y[], double dydt[], void *par)
{
    const sim *s = par;
    double F[4], H[4], W[4][4];
    memcpy(dydt, y + 3, 3 * sizeof *y);
    held_forces(s, t, y, y + 3, F, dydt + 3, H, W);
    return GSL_SUCCESS;
}

/* The event functions at (t, y), positive while the modes hold: ev[i]
 * tip i's gap when open, its normal force when closed; ev[2 + i] a
 * closed sliding tip's velocity along its sliding direction, a closed
 * sticking tip's friction margin mu_s F_n - |F_t| (of the sums when both
 * share one tangential force), else 1.  rate[k]: the time derivative
 * of a gap or of a sliding velocity, NAN for the others. */
static void event_values(const sim *s, double t, const double y[6], double ev[4],
                         double rate[4])
{
    double F[4], acc[3], u[4], H[4], W[4][4];
    held_forces(s, t, y, y + 3, F, acc, H, W);
    rel_vel(s, y, y + 3, t, u);
    int shared = s->closed[0] && s->closed[1] && s->stick[0] && s->stick[1] &&
                 fabs(F[2] - F[3]) < 1e-12 * (fabs(F[2]) + 1e-300);
    for (int i = 0; i < 2; i++) {
        if (!s->closed[i]) {
            /* under the plate by rounding but leaving it: no event */
            ev[i] = gap(s, y, t, i);
            if (ev[i] < 0 && u[i] >= 0)
                ev[i] = 0;
            ev[2 + i] = 1;
            rate[i] = u[i];
            rate[2 + i] = NAN;
            continue;
        }
        ev[i] = F[i];
        rate[i] = rate[2 + i] = NAN;
        if (!s->stick[i]) {
            double at = H[2 + i];
            for (int j = 0; j < 4; j++)
                at += W[2 + i][j] * F[j];
            ev[2 + i] = s->slip[i] * u[2 + i];
            rate[2 + i] = s->slip[i] * at;
        } else if (shared)
            ev[2 + i] = s->p->mu_s * (F[0] + F[1]) - fabs(F[2] + F[3]);
        else
            ev[2 + i] = s->p->mu_s * F[i] - fabs(F[2 + i]);
    }
}

/* Whether event k happened between values a (start) and b (end): it
 * ends negative, from a non-negative start or deeper than it began. */
static int fired(double a, double b)
{
    return b < 0 && (a >= 0 || b < a);
}

/* y0 at t0 stepped by tau with the modes held, into y; its events into ev. */
static void step_by(integ *g, double t0, const double y0[6], double tau,
                    double y[6], double ev[4])
{
    double yerr[6], rate[4];
    memcpy(y, y0, 6 * sizeof *y);
    gsl_odeiv2_step_apply(g->st, t0, tau, y, yerr, NULL, NULL, &g->sys);
    event_values(g->s, t0 + tau, y, ev, rate);
}

/* The first event of the step of length *h from (t0, y0) (e0 its events
 * there; y and e1 the state and events at its end): each event that fired
 * is located by the Illinois method to 1e-13 s and the earliest kept;
 * *h, y and e1 are moved just past it. */
static void locate(integ *g, double t0, const double y0[6], const double e0[4],
                   double *h, double y[6], double e1[4])
{
    for (int changed = 1, pass = 0; changed && pass < 8; pass++) {
        changed = 0;
        for (int k = 0; k < 4; k++) {
            if (!fired(e0[k], e1[k]))
                continue;
            if (e0[k] < 0) {
                /* already deepening from the start: it is now */
                *h = 0;
                memcpy(y, y0, 6 * sizeof *y);
                memcpy(e1, e0, 4 * sizeof *e1);
                return;
            }
            double a = 0, fa = e0[k], b = *h, fb = e1[k];
            double yb[6], eb[4], yc[6], ec[4];
            memcpy(yb, y, sizeof yb);
            memcpy(eb, e1, sizeof eb);
            int side = 0;
            for (int it = 0; it < 100 && b - a > 1e-13; it++) {
                double c = (a * fb - b * fa) / (fb - fa);
                if (!(c > a && c < b))
                    c = 0.5 * (a + b);
                step_by(g, t0, y0, c, yc, ec);
                if (ec[k] < 0) {
                    b = c;
                    fb = ec[k];
                    memcpy(yb, yc, sizeof yb);
                    memcpy(eb, ec, sizeof eb);
                    if (side == -1)
                        fa *= 0.5;
                    side = -1;
                } else {
                    a = c;
                    fa = ec[k];
                    if (side == 1)
                        fb *= 0.5;
                    side = 1;
                }
            }
            if (b < *h) {
                *h = b;
                memcpy(y, yb, sizeof yb);
                memcpy(e1, eb, sizeof eb);
                changed = 1;
            }
        }
    }
}

/* Settles the contact modes at the current state: the complementarity
 * with the cones decides which closed tips push (those that do not lift
 * off) and which stick; trial[i]: tip i's sliding velocity just reached
 * zero, so it tries to stick (counted when it does). */
static void settle(sim *s, const int trial[2], pl_dimer_result *res)
{
    if (!s->closed[0] && !s->closed[1])
        return;
    int stick[2] = {s->stick[0] || trial[0], s->stick[1] || trial[1]}, push[2];
    double slip[2] = {s->slip[0], s->slip[1]}, acc[3];
    contact_accel(s, s->t, s->q, s->v, stick, slip, push, acc, NULL);
    for (int i = 0; i < 2; i++) {
        if (!s->closed[i])
            continue;
        s->stick[i] = stick[i];
        s->slip[i] = slip[i];
        if (trial[i] && stick[i])
            res->stick_events++;
        if (!push[i]) {
            s->closed[i] = 0;       /* lifts off */
            s->stick[i] = 0;
        }
    }
}

/* The cubic through values g0, g1 and rates d0, d1 at the ends of a step
 * of length d (a tip's gap, a sliding velocity), at x in [0, 1]. */
static double gap_cubic(double g0, double d0, double g1, double d1, double d, double x)
{
    double x2 = x * x, x3 = x2 * x;
    return (2 * x3 - 3 * x2 + 1) * g0 + (x3 - 2 * x2 + x) * d * d0 +
           (-2 * x3 + 3 * x2) * g1 + (x3 - x2) * d * d1;
}

/* The highest gap of each tip over the step from (t0, y0) to (t1, y1),
 * from the cubic through the gaps and their rates at both ends, into the
 * window's maximum and its cycle's (even or odd: cycles counted from
 * t_win, T long). */
static void track_heights(const sim *s, double t0, const double y0[6], double t1,
                          const double y1[6], double t_win, double T,
                          pl_dimer_result *res)
{
    double u0[4], u1[4], d = t1 - t0;
    rel_vel(s, y0, y0 + 3, t0, u0);
    rel_vel(s, y1, y1 + 3, t1, u1);
    for (int i = 0; i < 2; i++) {
        double g0 = gap(s, y0, t0, i), g1 = gap(s, y1, t1, i);
        for (int j = 0; j <= 16; j++) {
            double x = j / 16.0, h = j == 0 ? g0 : j == 16 ? g1
                                   : gap_cubic(g0, u0[i], g1, u1[i], d, x);
            long cyc = (long)floor((t0 + x * d - t_win) / T);
            int par = cyc < 0 ? 0 : (int)(cyc % 2);
            res->hmax[i] = fmax(res->hmax[i], h);
            res->hcycle[i][par] = fmax(res->hcycle[i][par], h);
        }
    }
}

/* A whole bounce can fit inside a long step, the tip above the plate at
 * both ends, and a sliding velocity can pass zero and come back: where the
 * cubic through a gap's or a sliding velocity's values and rates at the
 * step's ends (e0, r0, e1, r1) dips below zero, the step is taken again
 * to there, and if that shorter step ends in an event, *h, y and e1 are
 * moved there.  Returns 1 then. */
static int dip(integ *g, double t0, const double y0[6], const double e0[4],
               const double r0[4], const double r1[4], double *h, double y[6],
               double e1[4])
{
    double d = *h, xmin = 1;
    for (int k = 0; k < 4; k++) {
        if (isnan(r0[k]) || isnan(r1[k]))
            continue;
        for (int j = 1; j < 32; j++) {
            double x = j / 32.0;
            if (x < xmin && gap_cubic(e0[k], r0[k], e1[k], r1[k], d, x) < 0) {
                xmin = x;
                break;
            }
        }
    }
    if (xmin >= 1)
        return 0;
    double yc[6], ec[4];
    step_by(g, t0, y0, xmin * d, yc, ec);
    for (int k = 0; k < 4; k++)
        if (fired(e0[k], ec[k])) {
            *h = xmin * d;
            memcpy(y, yc, sizeof yc);
            memcpy(e1, ec, sizeof ec);
            return 1;
        }
    return 0;
}

/* The instant of sample k of n over the duration. */
static double sample_time(const integ *g, size_t k)
{
    size_t n = g->n_samples;
    return g->s->p->duration * (double)k / (double)(n > 1 ? n - 1 : 1);
}

/* The samples whose instants lie in (t0, t1], the step from y0 to y1,
 * from cubics through the positions and velocities at its ends (the
 * velocities linear): the steps are not cut for them, so that a run
 * with samples is the run without. */
static void take_samples(integ *g, double t0, const double y0[6], double t1,
                         const double y1[6])
{
    double d = t1 - t0, ts;
    while (g->next < g->n_samples && (ts = sample_time(g, g->next)) <= t1) {
        sim c = *g->s;
        double x = d > 0 ? (ts - t0) / d : 1;
        for (int i = 0; i < 3; i++) {
            c.q[i] = gap_cubic(y0[i], y0[3 + i], y1[i], y1[3 + i], d, x);
            c.v[i] = y0[3 + i] + x * (y1[3 + i] - y0[3 + i]);
        }
        c.t = ts;
        sample(&c, &g->samples[g->next++]);
    }
}

/* Advances s by one adaptive step, or to the first event inside it, but
 * not beyond t1 (in the window from t_win, of cycles T, the heights are
 * kept); *hit receives the open tip that reached the plate (-1:
 * none) and trial the sliding tips whose velocity reached zero.  Returns
 * 1 when an event ended the step. */
static int advance(integ *g, double t1, int in_window, double t_win, double T,
                   pl_dimer_result *res, int *hit, int trial[2])
{
    sim *s = g->s;
    double y0[6], y[6], e0[4], e1[4], r0[4], r1[4], t0 = s->t, t = s->t;
    memcpy(y0, s->q, 3 * sizeof *y0);
    memcpy(y0 + 3, s->v, 3 * sizeof *y0);
    memcpy(y, y0, sizeof y);
    event_values(s, t0, y0, e0, r0);
    g->h = fmin(g->h, g->max_step);
    double hcap = fmin(fmin(g->max_step, g->cap), t1 - t0);
    g->cap = INFINITY;
    /* evolve_apply never steps past its end point: the cap is one */
    gsl_odeiv2_evolve_apply(g->ev, g->con, g->st, &g->sys, &t, t0 + hcap, &g->h, y);
    event_values(s, t, y, e1, r1);
    int any = 0;
    for (int k = 0; k < 4; k++)
        any |= fired(e0[k], e1[k]);
    double h = t - t0;
    if (!any)
        any = dip(g, t0, y0, e0, r0, r1, &h, y, e1);
    if (any) {
        locate(g, t0, y0, e0, &h, y, e1);
        t = t0 + h;
        gsl_odeiv2_evolve_reset(g->ev);
        gsl_odeiv2_step_reset(g->st);
    }
    if (in_window)
        track_heights(s, t0, y0, t, y, t_win, T, res);
    if (g->samples)
        take_samples(g, t0, y0, t, y);
    s->t = t;
    memcpy(s->q, y, 3 * sizeof *y);
    memcpy(s->v, y + 3, 3 * sizeof *y);
    *hit = -1;
    trial[0] = trial[1] = 0;
    if (!any)
        return 0;
    for (int i = 0; i < 2; i++) {
        if (!s->closed[i] && e1[i] < 0 && (*hit < 0 || e1[i] < e1[*hit]))
            *hit = i;
        if (s->closed[i] && !s->stick[i] && e1[2 + i] < 0)
            trial[i] = 1;
    }
    return 1;
}

/* A step after an impact that lets the tips leaving the plate get clear
 * of it: a fifth of the time one takes to come back under the highest
 * relative acceleration g (1 + Gamma), so that the next step starts with
 * it above the plate (a whole bounce inside a step is found by dip). */
static double rise_time(const sim *s)
{
    double u[4], cap = INFINITY, a = s->p->g * (1 + s->p->Gamma);
    rel_vel(s, s->q, s->v, s->t, u);
    for (int i = 0; i < 2; i++)
        if (!s->closed[i] && u[i] > 0 && gap(s, s->q, s->t, i) < 1e-9)
            cap = fmin(cap, fmax(0.4 * u[i] / a, 1e-8));
    return cap;
}

/* The persistent mode of the last ten cycles from their hits and heights
 * (docs/dimer.md, Modes). */
static pl_dimer_mode persistent_mode(const pl_dimer_result *res, double g, double T)
{
    size_t a = res->hits[0], b = res->hits[1];
    double h0m = res->hmax[0], h1m = res->hmax[1];
    if (a == 0 && b == 0 && h0m < 1e-5 && h1m < 1e-5)
        return PL_DIMER_REST;
    /* both tips together, a little over the plate every cycle: the flat
     * dimer carried off the plate each time it accelerates down faster
     * than g (Gamma > 1) */
    if (h0m >= 1e-5 && h1m >= 1e-5 && fabs(h0m - h1m) < 0.1 * fmax(h0m, h1m) &&
        (h0m + h1m) / (g * T * T) < 0.06)
        return PL_DIMER_HOP;
    /* one sphere once a cycle, the other low: the resting sphere may
     * chatter (small aspect ratios), its bounces count, their height not;
     * the bouncing one rising alternately high and low (its odd and even
     * cycles' heights a factor 1.5 apart) is the alternate mode */
    for (int k = 0; k < 2; k++) {
        size_t hk = k ? b : a;
        double hm = k ? h1m : h0m, other = k ? h0m : h1m;
        if (hk >= 8 && hk <= 12 && other < 0.3 * hm) {
            double e = res->hcycle[k][0], o = res->hcycle[k][1];
            if (fmax(e, o) > 1.5 * fmin(e, o))
                return PL_DIMER_ALTERNATE;
            return PL_DIMER_DRIFT;
        }
    }
    if (a >= 8 && a <= 12 && b >= 8 && b <= 12 && h0m < 2 * h1m && h1m < 2 * h0m)
        return PL_DIMER_JUMP;
    if (a >= 4 && a <= 6 && b >= 4 && b <= 6)
        return PL_DIMER_FLUTTER;
    if ((a >= 8 && a <= 12 && b >= 4 && b <= 6) || (b >= 8 && b <= 12 && a >= 4 && a <= 6))
        return PL_DIMER_MIXED;
    return PL_DIMER_OTHER;
}

static void integ_close(integ *g)
{
    if (g->ev)
        gsl_odeiv2_evolve_free(g->ev);
    if (g->con)
        gsl_odeiv2_control_free(g->con);
    if (g->st)
        gsl_odeiv2_step_free(g->st);
}

/* The run after the release: steps, events, impacts. */
static pl_status simulate(integ *g, pl_dimer_result *res, pl_err *err)
{
    sim *s = g->s;
    const pl_dimer_params *p = s->p;
    double T = 1 / p->f;
    double window = 10 * T, t_win = p->duration - window;
    int in_window = 0;
    double x_win = 0, y;
    double v_sig = 0.1 * p->g * T / 2;
    /* a step either reaches its cap or an event: a few per cap of time,
     * plus the events of a Zeno-like settling */
    size_t guard = 0, max_steps = (size_t)(20 * p->duration / g->max_step) + 1000000;
    while (s->t < p->duration) {
        if (++guard > max_steps)
            return pl_err_set(err, PL_ENUMERIC, "dimer: no progress at t = %g s", s->t);
        if (!in_window && s->t >= t_win) {
            in_window = 1;
            left_tip(s, &x_win, &y);
        }
        /* the first sample, at the release */
        while (g->samples && g->next < g->n_samples && sample_time(g, g->next) <= s->t)
            sample(s, &g->samples[g->next++]);
        /* a step ends at the window's start */
        double t1 = p->duration;
        if (!in_window && t_win > s->t)
            t1 = fmin(t1, t_win);
        int hit, trial[2];
        if (!advance(g, t1, in_window, t_win, T, res, &hit, trial))
            continue;
        if (hit >= 0) {
            pl_status st = arrive(s, hit, in_window, v_sig, res, err);
            if (st != PL_OK)
                return st;
            g->cap = rise_time(s);
        }
        settle(s, trial, res);
        project(s);
    }
    while (g->samples && g->next < g->n_samples)
        sample(s, &g->samples[g->next++]);   /* the last, at the end */
    left_tip(s, &res->x1_end, &y);
    res->drift = (res->x1_end - x_win) / window;
    res->energy = (res->hmax[0] + res->hmax[1]) / (p->g * T * T);
    res->mode = persistent_mode(res, p->g, T);
    return PL_OK;
}

pl_status pl_dimer_run(const pl_dimer_params *p, pl_dimer_sample *samples,
                       size_t n, pl_dimer_result *res, pl_err *err)
{
    sim s;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    s.p = p;
    if (pl_dimer_geometry_of(p, &s.g, err) != PL_OK)
        return err->code;
    release(&s);
    integ g;
    memset(&g, 0, sizeof g);
    g.s = &s;
    g.sys = (gsl_odeiv2_system){rhs, NULL, 6, &s};
    g.st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, 6);
    g.con = gsl_odeiv2_control_standard_new(p->tol * 1e-3 * s.g.r, p->tol, 1, 0);
    g.ev = gsl_odeiv2_evolve_alloc(6);
    if (!g.st || !g.con || !g.ev) {
        integ_close(&g);
        return pl_err_set(err, PL_ENOMEM, "dimer: out of memory for the integrator");
    }
    g.max_step = p->dt;
    g.h = p->dt;
    g.cap = INFINITY;
    g.samples = samples;
    g.n_samples = samples ? n : 0;
    pl_status st = simulate(&g, res, err);
    integ_close(&g);
    return st;
}
