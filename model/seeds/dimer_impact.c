/* model/seeds/dimer_impact.c - the dimer's impacts (seed 002, section 3
 * and its part I): a single impact at one contact and a double impact at
 * both, with Coulomb friction, solved exactly in the normal impulse
 * (pl_dimer_impact_solve).  See dimer.h and docs/dimer.md, "Impacts". */
#include "model/seeds/dimer.h"

#include <math.h>
#include <string.h>

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

/* Whether the two tangential rows of w are one: both tips on a flat plate
 * (theta = 0 to the event location's precision), where both tips'
 * tangential velocities are x' + r theta' and only the sum of the
 * tangential impulses moves the body - part I's superstatic case.
 * Coulomb's law then acts on the sums, (3.4): one tangential velocity,
 * and the stick test on the summed cone, which the resting tip's normal
 * impulse joins however small it still is.  1e-6 relative: at theta
 * 1e-6 the tips' tangential velocities differ by theta' l theta, under
 * 1e-7 m/s. */
int pl_dimer_shared_rows(const double w[4][4])
{
    for (int k = 0; k < 4; k++)
        if (fabs(w[2][k] - w[3][k]) > 1e-6 * fabs(w[2][2]))
            return 0;
    return 1;
}

/* friction_ratios for shared rows (pl_dimer_shared_rows): the tips slide or stick
 * together.  Sticking, the summed tangential impulse that keeps the
 * common velocity zero must lie inside mu_s times the summed normal
 * impulse, else both slip the way they are pushed; sliding, both oppose
 * the common velocity u[2] with mu. */
static void friction_ratios_shared(const double w[4][4], const double u[4],
                                   const double q[2], int stick_try, double mu,
                                   double mu_s, double rt[2], int stick[2])
{
    double qs = q[0] + q[1];
    stick[0] = stick[1] = 0;
    if (stick_try) {
        double tot = -(w[2][0] * q[0] + w[2][1] * q[1]) / w[2][2];
        if (fabs(tot) <= mu_s * qs) {
            rt[0] = rt[1] = tot / qs;
            stick[0] = stick[1] = 1;
        } else {
            rt[0] = rt[1] = mu * sgn(tot);
        }
    } else {
        rt[0] = rt[1] = -mu * sgn(u[2]);
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
    int shared = pl_dimer_shared_rows(w);
    if (shared)
        u[2] = u[3] = 0.5 * (u[2] + u[3]);
    int stick_try[2] = {u[2] == 0, u[3] == 0};
    double pscale = 0;
    for (int i = 0; i < 2; i++)
        if (u[i] < 0)
            pscale = fmax(pscale, -u[i] / w[i][i]);
    if (pscale == 0)
        return PL_OK;
    double h = pscale / 500;
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
        if (shared)
            friction_ratios_shared(w, u, q, stick_try[0] || stick_try[1], mu,
                                   mu_s, rt, st);
        else
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
        if (shared) {
            /* one velocity: the rounding of the two rows kept out of it */
            int zero = stick_try[0] || stick_try[1];
            u[2] = u[3] = zero ? 0 : 0.5 * (u[2] + u[3]);
            stick_try[0] = stick_try[1] = zero;
        }
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
    /* a tangential velocity a billionth of the approach speed is the
     * rounding residue of a tip at rest (the velocities are assembled
     * from x', y', theta'), not a direction of slip: it is zero, and the
     * stick test (2.5) decides */
    double scale = 0;
    for (int i = 0; i < 2; i++)
        if (in[i])
            scale = fmax(scale, fabs(u[i]));
    for (int i = 0; i < 2; i++)
        if (in[i] && fabs(u[2 + i]) <= 1e-9 * scale)
            u[2 + i] = 0;
    if (in[0] && in[1])
        return double_impact(w, u, es, mu_i, mu_s, dist_exp, out, err);
    for (int k = 0; k < 2; k++)
        if (in[k])
            return single_impact(w, u, k, es, mu_i, mu_s, out, err);
    return PL_OK;
}
