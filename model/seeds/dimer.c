/* model/seeds/dimer.c - the bouncing dimer (seed 002).  See dimer.h and
 * docs/dimer.md. */
#include "model/seeds/dimer.h"

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
    p->dt = 1e-5;
}

const char *pl_dimer_mode_name(pl_dimer_mode m)
{
    static const char *const names[] = {"rest", "drift", "jump", "flutter", "other"};
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
    NEED(p->duration > 0 && p->dt > 0 && p->dt < 1e-2, "dimer: duration and "
         "time step (< 10 ms) must be > 0");
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

/* --- impacts -------------------------------------------------------------- */

static double sgn(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/* A single impact at contact k, exactly: with the friction mode fixed the
 * velocities are linear in the normal impulse, so the impulse runs in
 * pieces from one event (the tangential velocity vanishing, compression
 * ending, restitution ending) to the next. */
static pl_status single_impact(const double w[4][4], double u[4], int k,
                               double es, double mu, double mu_s,
                               pl_dimer_impact *out, pl_err *err)
{
    int n = k, t = 2 + k;
    double E = 0;                       /* the contact's potential energy */
    int expansion = 0, stick = 0;
    for (int guard = 0; guard < 64; guard++) {
        /* the friction mode for this piece */
        double rt;                      /* dPt / dPn */
        if (stick || u[t] == 0) {
            double need = -w[t][n] / w[t][t];
            if (fabs(need) <= mu_s) {
                stick = 1;
                rt = need;
            } else {
                stick = 0;
                rt = -mu * sgn(w[t][n]);
            }
        } else {
            rt = -mu * sgn(u[t]);
        }
        double kn = w[n][n] + w[n][t] * rt, kt = w[t][n] + w[t][t] * rt;
        if (!(kn > 0))
            return pl_err_set(err, PL_ENUMERIC, "impact at tip %d: the normal "
                              "velocity does not grow with the impulse (slope "
                              "%g): a Painleve configuration", k + 1, kn);
        double dp = INFINITY;
        int ev = 0;                     /* 1 slip ends, 2 compression ends, 3 done */
        if (!stick && kt * u[t] < 0) {
            dp = -u[t] / kt;
            ev = 1;
        }
        if (!expansion) {
            double d2 = -u[n] / kn;
            if (d2 <= dp) {
                dp = d2;
                ev = 2;
            }
        } else {
            /* E - (u dp + kn dp^2 / 2) / es^2 = 0 */
            double target = es * es * E, d3;
            if (target <= 0)
                d3 = 0;
            else
                d3 = (-u[n] + sqrt(u[n] * u[n] + 2 * kn * target)) / kn;
            if (d3 <= dp) {
                dp = d3;
                ev = 3;
            }
        }
        double work = u[n] * dp + 0.5 * kn * dp * dp;
        if (!expansion) {
            E -= work;
            out->wc[k] += work;
        } else {
            E -= work / (es * es);
            out->wr[k] += work;
        }
        for (int i = 0; i < 4; i++)
            u[i] += (w[i][n] + w[i][t] * rt) * dp;
        out->pn[k] += dp;
        out->pt[k] += rt * dp;
        if (ev == 1) {
            u[t] = 0;                   /* the stick test next piece */
        } else if (ev == 2) {
            u[n] = 0;
            expansion = 1;
            if (es == 0)
                break;
        } else {
            break;
        }
    }
    out->stuck[k] = stick;
    if (stick)
        u[t] = 0;
    return PL_OK;
}

/* The tangential impulse ratios rt[i] = dPt_i / dPn_i of the contacts
 * with dPn_i > 0, given the normal impulse ratios q (dPn_i = q_i dP).
 * Sliding contacts oppose their velocity with mu; a contact whose
 * velocity is zero sticks when the impulse that keeps it so lies inside
 * mu_s (both sticking: only the sum of the tangential impulses is
 * determined, checked against the summed cone, (3.4)), else slips the way
 * it is pushed. */
static void friction_ratios(const double w[4][4], const double u[4],
                            const double q[2], const int stick_try[2],
                            double mu, double mu_s, double rt[2], int stick[2])
{
    int ns = 0, idx[2];
    for (int i = 0; i < 2; i++) {
        stick[i] = 0;
        rt[i] = q[i] > 0 ? -mu * sgn(u[2 + i]) : 0;
        if (q[i] > 0 && stick_try[i])
            idx[ns++] = i;
    }
    if (ns == 1) {
        int i = idx[0], j = 1 - i;
        /* d u_ti = sum_c w[ti][nc] q_c + w[ti][ti] q_i rt_i + w[ti][tj] q_j rt_j = 0 */
        double rhs = -(w[2 + i][0] * q[0] + w[2 + i][1] * q[1] + w[2 + i][2 + j] * q[j] * rt[j]);
        double need = rhs / (w[2 + i][2 + i] * q[i]);
        if (fabs(need) <= mu_s) {
            rt[i] = need;
            stick[i] = 1;
        } else {
            rt[i] = mu * sgn(need);
        }
    } else if (ns == 2) {
        double a = w[2][2] * q[0], b = w[2][3] * q[1], c = w[3][2] * q[0], d = w[3][3] * q[1];
        double r0 = -(w[2][0] * q[0] + w[2][1] * q[1]), r1 = -(w[3][0] * q[0] + w[3][1] * q[1]);
        double det = a * d - b * c, scale = fabs(a * d) + fabs(b * c);
        if (fabs(det) > 1e-9 * scale) {
            double x0 = (r0 * d - b * r1) / det, x1 = (a * r1 - c * r0) / det;
            if (fabs(x0) <= mu_s && fabs(x1) <= mu_s) {
                rt[0] = x0;
                rt[1] = x1;
                stick[0] = stick[1] = 1;
                return;
            }
        } else {
            /* superstatic: one tangential unknown for both */
            double tot = r0 / (a + b) * (q[0] + q[1]);
            if (fabs(tot) <= mu_s * (q[0] + q[1])) {
                rt[0] = rt[1] = tot / (q[0] + q[1]);
                stick[0] = stick[1] = 1;
                return;
            }
        }
        /* not both: each alone, the other sliding the way it is pushed */
        for (int i = 0; i < 2; i++) {
            double rhs = -(w[2 + i][0] * q[0] + w[2 + i][1] * q[1]);
            double need = rhs / (w[2 + i][2 + i] * q[i]);
            rt[i] = mu * sgn(need);
        }
    }
}

/* The normal impulse ratios q of a double impact's step (the primary p
 * takes 1) at the step's middle, by the distributing law (2.10). */
static void impulse_ratios(const double u[4], const double E[2],
                           const int active[2], int p, double es, double gam,
                           double h, double q[2])
{
    double eta = gam / (1 - gam);
    int s = 1 - p;
    q[p] = 1;
    q[s] = 0;
    if (!active[s])
        return;
    if (E[s] > 0 && E[p] > 0) {
        /* mid-step energies, first order */
        double ip = u[p] < 0 || es == 0 ? 1 : 1 / (es * es);
        double is = u[s] < 0 || es == 0 ? 1 : 1 / (es * es);
        double ep = E[p] - u[p] * h / 2 * ip;
        double es_ = E[s] - u[s] * h / 2 * pow(E[s] / E[p], gam) * is;
        q[s] = ep > 0 && es_ > 0 ? pow(es_ / ep, gam) : pow(E[s] / E[p], gam);
    } else if (E[s] == 0 && E[p] == 0 && u[s] < 0 && u[p] < 0) {
        /* both start at once: on the Hertz clock their deformations grow
         * as their approach speeds, so the impulse ratio is
         * (u_s / u_p)^eta from the start */
        q[s] = pow(u[s] / u[p], eta);
    } else if (E[s] == 0 && u[s] < 0 && E[p] > 0) {
        /* the Hertz clock: xi_s grows from 0 over the step */
        double xip = pow((eta + 1) * E[p], 1 / (eta + 1));
        double xis = -u[s] * h / pow(xip, eta);
        q[s] = pow(xis / xip, eta) / (eta + 1);
    }
}

/* Cuts the step *hs of a double impact at its first event and returns
 * which: 2 + i a sliding tangential velocity reaching zero, 4 + i a
 * normal one changing sign, 6 + i contact i's energy running out; -1 none
 * (du: the velocity change per unit primary impulse). */
static int first_event(const double u[4], const double du[4], const double q[2],
                       const int st[2], const double E[2], double es, double *hs)
{
    int ev = -1;
    for (int i = 0; i < 2; i++) {
        if (q[i] > 0 && !st[i] && u[2 + i] != 0 && du[2 + i] * u[2 + i] < 0 &&
            -u[2 + i] / du[2 + i] < *hs) {
            *hs = -u[2 + i] / du[2 + i];
            ev = 2 + i;
        }
        if (u[i] < 0 && du[i] > 0 && -u[i] / du[i] < *hs) {
            *hs = -u[i] / du[i];
            ev = 4 + i;
        }
        if (q[i] > 0 && u[i] >= 0 && E[i] > 0) {
            /* E_i - (u_i q_i x + du_i q_i x^2 / 2) / es^2 = 0 */
            double a = du[i] * q[i] / 2, b = u[i] * q[i], c = -es * es * E[i], x;
            double disc = b * b - 4 * a * c;
            /* the smallest positive root, in the form without
             * cancellation (c < 0, b >= 0) */
            if (es == 0)
                x = 0;
            else if (disc >= 0 && b + sqrt(disc) > 0)
                x = -2 * c / (b + sqrt(disc));
            else
                x = INFINITY;
            if (x < *hs) {
                *hs = x;
                ev = 6 + i;
            }
        }
    }
    return ev;
}

/* The work and impulses of a double impact's step hs on each contact:
 * compression work while it approaches lowers its energy, restitution
 * work 1/e_s^2 of it. */
static void step_work(const double u[4], const double du[4], const double q[2],
                      const double rt[2], double hs, double es, double E[2],
                      pl_dimer_impact *out)
{
    for (int i = 0; i < 2; i++) {
        double dpn = q[i] * hs;
        if (dpn > 0) {
            double work = (u[i] + 0.5 * du[i] * hs) * dpn;
            if (u[i] < 0 || (u[i] == 0 && du[i] < 0)) {
                E[i] -= work;
                out->wc[i] += work;
            } else {
                E[i] = es > 0 ? E[i] - work / (es * es) : 0;
                out->wr[i] += work;
            }
            out->pn[i] += dpn;
            out->pt[i] += rt[i] * dpn;
        }
    }
}

/* The event ev that ended a double impact's step (first_event), then the
 * friction modes the step settled on (st) for the next. */
static void after_step(int ev, const int st[2], double es, double u[4],
                       double E[2], int stick_try[2], pl_dimer_impact *out)
{
    if (ev == 2 || ev == 3) {
        u[ev] = 0;
        stick_try[ev - 2] = 1;
    } else if (ev == 4 || ev == 5) {
        u[ev - 4] = 0;
        if (es == 0)
            E[ev - 4] = 0;   /* plastic: nothing stored is given back */
    } else if (ev == 6 || ev == 7) {
        E[ev - 6] = 0;
    }
    for (int i = 0; i < 2; i++) {
        if (st[i])
            u[2 + i] = 0;
        stick_try[i] = st[i] || u[2 + i] == 0;
        out->stuck[i] = st[i];
        if (E[i] < 0)
            E[i] = 0;
    }
}

/* A double impact: both contacts take impulse, the secondary's by the
 * distributing law dPn_s = (E_s / E_p)^gamma dPn_p, the primary p the
 * contact of greater potential energy (2.10).  Stepped in the primary's
 * impulse with the ratios at each step's middle; a contact whose energy
 * is zero while it approaches starts on the Hertz clock of the primary
 * (its deformation grows as -u dP_p / xi_p^eta, xi the deformation that
 * stores E).  Each contact's energy is kept as the work done on it
 * (compression) or 1/e_s^2 of it (restitution, (2.11)), and it leaves the
 * impact when that returns to zero: its restitution work is then e_s^2
 * times its compression work, exactly for the path taken. */
static pl_status double_impact(const double w[4][4], double u[4], double es,
                               double mu, double mu_s, double gam,
                               pl_dimer_impact *out, pl_err *err)
{
    double E[2] = {0, 0};
    int stick_try[2] = {u[2] == 0, u[3] == 0};
    double pscale = 0;
    for (int i = 0; i < 2; i++)
        if (u[i] < 0)
            pscale = fmax(pscale, -u[i] / w[i][i]);
    if (pscale == 0)
        return PL_OK;
    double h = pscale / 4000;
    for (int step = 0; step < 400000; step++) {
        int active[2];
        for (int i = 0; i < 2; i++)
            active[i] = E[i] > 0 || u[i] < 0;
        if (!active[0] && !active[1])
            break;
        int p = E[0] > E[1] ? 0 : E[1] > E[0] ? 1 : (u[0] <= u[1] ? 0 : 1);
        if (!active[p])
            p = 1 - p;
        double q[2], rt[2], du[4];
        int st[2];
        impulse_ratios(u, E, active, p, es, gam, h, q);
        friction_ratios(w, u, q, stick_try, mu, mu_s, rt, st);
        /* velocity change per unit primary impulse */
        for (int i = 0; i < 4; i++)
            du[i] = w[i][0] * q[0] + w[i][1] * q[1] + w[i][2] * q[0] * rt[0] + w[i][3] * q[1] * rt[1];
        double hs = h;
        int ev = first_event(u, du, q, st, E, es, &hs);
        step_work(u, du, q, rt, hs, es, E, out);
        for (int i = 0; i < 4; i++)
            u[i] += du[i] * hs;
        out->steps++;
        after_step(ev, st, es, u, E, stick_try, out);
    }
    if (E[0] > 0 || E[1] > 0)
        return pl_err_set(err, PL_ENUMERIC, "double impact did not end after "
                          "400000 impulse steps");
    return PL_OK;
}

pl_status pl_dimer_impact_solve(const double w[4][4], double u[4],
                                const int in[2], double es, double mu_i,
                                double mu_s, double dist_exp,
                                pl_dimer_impact *out, pl_err *err)
{
    memset(out, 0, sizeof *out);
    if (in[0] && in[1])
        return double_impact(w, u, es, mu_i, mu_s, dist_exp, out, err);
    for (int k = 0; k < 2; k++)
        if (in[k])
            return single_impact(w, u, k, es, mu_i, mu_s, out, err);
    return PL_OK;
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
 * rows without contact forces, ypa the plate's).  Returns 1 when the case
 * holds: it has a solution, every pushing tip pushes and no closed tip
 * that does not push sinks. */
static int contact_case(const sim *s, const double W[4][4], const double H[4],
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
    for (int e = 0; e < nn; e++)
        if (Fc[un[e]] < 0)
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
 * accelerations; stick and slip are updated to the modes the cones
 * settled on, and push says which tips push (closed tips that do not are
 * lifting off). */
static void contact_accel(const sim *s, double t, const double q[3],
                          const double v[3], int stick[2], double slip[2],
                          int push[2], double acc[3])
{
    const pl_dimer_params *p = s->p;
    double th = q[2], w = v[2], h = s->g.l / 2;
    double H[4] = {-p->g + h * sin(th) * w * w, -p->g - h * sin(th) * w * w,
                   h * cos(th) * w * w, -h * cos(th) * w * w};
    double W[4][4], k[4][3], F[4] = {0, 0, 0, 0};
    pl_dimer_local_matrix(&s->g, th, W);
    kmat(&s->g, th, k);
    double ypa = plate_a(s, t);
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
    double mi[3] = {1 / s->g.M, 1 / s->g.M, 1 / s->g.J};
    for (int c = 0; c < 3; c++) {
        double gen = 0;
        for (int i = 0; i < 4; i++)
            gen += k[i][c] * F[i];
        acc[c] = gen * mi[c];
    }
    acc[1] -= p->g;
}

/* One RK4 step of the smooth motion with the contact modes fixed. */
static void rk4(sim *s, double dt, int stick[2], double slip[2], int push[2])
{
    double q0[3], v0[3], kq[4][3], kv[4][3], qs[3], vs[3];
    memcpy(q0, s->q, sizeof q0);
    memcpy(v0, s->v, sizeof v0);
    static const double c[4] = {0, 0.5, 0.5, 1};
    for (int st = 0; st < 4; st++) {
        for (int i = 0; i < 3; i++) {
            qs[i] = q0[i] + (st ? c[st] * dt * kq[st - 1][i] : 0);
            vs[i] = v0[i] + (st ? c[st] * dt * kv[st - 1][i] : 0);
        }
        memcpy(kq[st], vs, sizeof vs);
        int pu[2];
        contact_accel(s, s->t + c[st] * dt, qs, vs, stick, slip, pu, kv[st]);
        if (st == 0)
            memcpy(push, pu, sizeof pu);
    }
    for (int i = 0; i < 3; i++) {
        s->q[i] = q0[i] + dt / 6 * (kq[0][i] + 2 * kq[1][i] + 2 * kq[2][i] + kq[3][i]);
        s->v[i] = v0[i] + dt / 6 * (kv[0][i] + 2 * kv[1][i] + 2 * kv[2][i] + kv[3][i]);
    }
    s->t += dt;
}

/* Holds the closed tips on the plate: positions (one tip: the height;
 * both: the height and theta = 0 on a flat plate) and normal velocities
 * (the least change in the mass metric). */
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
    double A[4][4], b[4], lam[2] = {0, 0};
    int idx[2], n = 0;
    for (int i = 0; i < 2; i++)
        if (s->closed[i])
            idx[n++] = i;
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
        s->v[c] += mi[c] * (k[0][c] * lam[0] + k[1][c] * lam[1]);
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

/* s0 stepped by dt into s with s0's contact modes; stick, slip and push
 * receive the modes the forces settled on. */
static void step_from(sim *s, const sim *s0, double dt, int stick[2],
                      double slip[2], int push[2])
{
    *s = *s0;
    stick[0] = s0->stick[0];
    stick[1] = s0->stick[1];
    slip[0] = s0->slip[0];
    slip[1] = s0->slip[1];
    rk4(s, dt, stick, slip, push);
}

/* Whether an event lies within dt of s0 (u0: its relative velocities):
 * an open tip under the plate, a sliding closed tip's tangential
 * velocity through zero. */
static int event_within(const sim *s0, const double u0[4], double dt)
{
    sim sm;
    int stick[2], push[2];
    double slip[2], um[4];
    step_from(&sm, s0, dt, stick, slip, push);
    rel_vel(&sm, sm.q, sm.v, sm.t, um);
    int ev = 0;
    for (int i = 0; i < 2; i++) {
        if (!s0->closed[i] && gap(&sm, sm.q, sm.t, i) < 0)
            ev = 1;
        if (s0->closed[i] && !s0->stick[i] && u0[2 + i] * um[2 + i] < 0)
            ev = 1;
    }
    return ev;
}

/* The events of the step from s0 to s: *hit an open tip reaching the
 * plate, *zero a sliding closed tip's tangential velocity vanishing (-1:
 * none).  When there is one, s (and stick, slip, push) is stepped again
 * to the first, found by bisection of the step. */
static void locate_event(sim *s, const sim *s0, double step, int stick[2],
                         double slip[2], int push[2], int *hit, int *zero)
{
    double u0[4], u1[4];
    rel_vel(s0, s0->q, s0->v, s0->t, u0);
    rel_vel(s, s->q, s->v, s->t, u1);
    *hit = *zero = -1;
    for (int i = 0; i < 2; i++) {
        if (!s0->closed[i] && gap(s, s->q, s->t, i) < 0)
            *hit = i;
        if (s0->closed[i] && !s0->stick[i] && push[i] && u0[2 + i] * u1[2 + i] < 0)
            *zero = i;
    }
    if (*hit < 0 && *zero < 0)
        return;
    double lo = 0, hi = step;
    for (int it = 0; it < 60 && hi - lo > 1e-13; it++) {
        double mid = 0.5 * (lo + hi);
        if (event_within(s0, u0, mid))
            hi = mid;
        else
            lo = mid;
    }
    step_from(s, s0, hi, stick, slip, push);
    rel_vel(s, s->q, s->v, s->t, u1);
    /* which event is it */
    *hit = *zero = -1;
    for (int i = 0; i < 2; i++) {
        if (!s0->closed[i] && gap(s, s->q, s->t, i) < 1e-12)
            *hit = i;
        if (s0->closed[i] && !s0->stick[i] && u0[2 + i] * u1[2 + i] <= 0)
            *zero = i;
    }
}

/* The contact modes the forces settled on; a stick tried at a zero of the
 * sliding velocity counts once the cone held it for a step.  A closed tip
 * that no longer pushes and has left the plate lifts off; a tip whose
 * sliding velocity reached zero (zero >= 0) tries to stick. */
static void settle_modes(sim *s, const int stick[2], const double slip[2],
                         const int push[2], int zero, int trial[2],
                         pl_dimer_result *res)
{
    for (int i = 0; i < 2; i++) {
        if (s->closed[i]) {
            if (trial[i] && stick[i])
                res->stick_events++;
            trial[i] = 0;
            s->stick[i] = stick[i];
            s->slip[i] = slip[i];
            if (!push[i] && gap(s, s->q, s->t, i) > 0) {
                s->closed[i] = 0;   /* lifted off */
                s->stick[i] = 0;
            }
        }
    }
    if (zero >= 0 && s->closed[zero]) {
        s->stick[zero] = 1;     /* tried; the cone decides next step */
        trial[zero] = 1;
    }
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

/* The persistent mode of the last ten cycles from their hits and heights. */
static pl_dimer_mode persistent_mode(const pl_dimer_result *res)
{
    size_t a = res->hits[0], b = res->hits[1];
    double h0m = res->hmax[0], h1m = res->hmax[1];
    if (a == 0 && b == 0 && h0m < 1e-5 && h1m < 1e-5)
        return PL_DIMER_REST;
    if (((b >= 8 && b <= 12 && a <= 3 && h0m < 0.3 * h1m) ||
         (a >= 8 && a <= 12 && b <= 3 && h1m < 0.3 * h0m)))
        return PL_DIMER_DRIFT;
    if (a >= 8 && a <= 12 && b >= 8 && b <= 12 && h0m < 2 * h1m && h1m < 2 * h0m)
        return PL_DIMER_JUMP;
    if (a >= 4 && a <= 6 && b >= 4 && b <= 6)
        return PL_DIMER_FLUTTER;
    return PL_DIMER_OTHER;
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
    double T = 1 / p->f;
    release(&s);
    size_t next = 0;
    double window = 10 * T, t_win = p->duration - window;
    int in_window = 0;
    double x_win = 0, y;
    double v_sig = 0.1 * p->g * T / 2;
    int trial[2] = {0, 0};
    size_t guard = 0, max_steps = (size_t)(20 * p->duration / p->dt) + 1000000;
    while (s.t < p->duration) {
        if (++guard > max_steps)
            return pl_err_set(err, PL_ENUMERIC, "dimer: no progress at t = %g s", s.t);
        if (!in_window && s.t >= t_win) {
            in_window = 1;
            left_tip(&s, &x_win, &y);
        }
        while (samples && next < n &&
               p->duration * (double)next / (double)(n > 1 ? n - 1 : 1) <= s.t)
            sample(&s, &samples[next++]);
        double step = fmin(p->dt, p->duration - s.t);
        if (step <= 0)
            break;
        sim s0 = s;
        int stick[2], push[2], hit, zero;
        double slip[2];
        step_from(&s, &s0, step, stick, slip, push);
        locate_event(&s, &s0, step, stick, slip, push, &hit, &zero);
        settle_modes(&s, stick, slip, push, zero, trial, res);
        project(&s);
        pl_status st = hit >= 0 ? arrive(&s, hit, in_window, v_sig, res, err) : PL_OK;
        if (st != PL_OK)
            return st;
        if (in_window)
            for (int i = 0; i < 2; i++)
                res->hmax[i] = fmax(res->hmax[i], gap(&s, s.q, s.t, i));
    }
    while (samples && next < n)
        sample(&s, &samples[next++]);   /* the last, at the end */
    left_tip(&s, &res->x1_end, &y);
    res->drift = (res->x1_end - x_win) / window;
    res->energy = (res->hmax[0] + res->hmax[1]) / (p->g * T * T);
    res->mode = persistent_mode(res);
    return PL_OK;
}
