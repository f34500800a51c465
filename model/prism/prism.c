/* model/prism/prism.c - contact phase (2.1), line impact (section 3), plastic law,
 * gauge velocities (4.3) and L_p (4.2).  Units SI; frame and signs in
 * model/prism/prism.h.  The contact phase is integrated on the output grid with
 * the classical fourth-order Runge-Kutta step (local error ~ (h w)^5/120,
 * about 1e-16 at 10 kHz for the pendulum frequency w ~ 20 rad/s); events
 * (face contact, rock-back, ramp end) are located by Newton iteration on a
 * partial step.  A handle owns no buffers: runs write into caller arrays.
 */
#include "model/prism/prism.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G_ACC 9.80665

struct pl_model {
    pl_model_params p;
    double alpha, b, J_over_m, JA_over_m, K; /* K = g a0 / (J_A/m) */
    double sb, cb;                           /* sin, cos beta */
    double spsi0;                            /* sin(alpha - lambda0) */
    double ratio_line, ratio_plastic;
    int line_slipped, line_mode_mask, line_end_at_b;
};

const char *pl_model_end_name(pl_model_end e)
{
    switch (e) {
    case PL_END_DURATION: return "end";
    case PL_END_STOPPED: return "stopped";
    case PL_END_LEFT_RAMP: return "left_ramp";
    case PL_END_SLIP: return "slip";
    case PL_END_DETACHED: return "detached";
    }
    return "unknown";
}

void pl_model_params_default(pl_model_params *p)
{
    memset(p, 0, sizeof *p);
    p->N = 22;
    p->a0 = 0.015;
    p->beta = 0.4079 * M_PI / 180.0;
    p->lambda0 = 5.322 * M_PI / 180.0;
    p->mu_s = 0.12;
    p->mu = 0.12;
    p->h1 = 0.0199;
    p->h2 = 0.0112;
    p->duration = 7.0;
    p->rate = 10000.0;
    p->law = PL_LAW_LINE;
    p->ramp_length = 0.0;
    p->mass = 0.2;
}

pl_status pl_model_params_check(const pl_model_params *p, pl_err *err)
{
    if (p->N < 3 || p->N > 100000)
        return pl_err_set(err, PL_EINVAL, "N = %d: the prism needs N in [3, 100000] edges", p->N);
    double alpha = M_PI / p->N;
    if (!(p->a0 > 0 && isfinite(p->a0)))
        return pl_err_set(err, PL_EINVAL, "a0 = %g m: must be > 0", p->a0);
    if (!(p->beta > 0 && p->beta < alpha))
        return pl_err_set(err, PL_EINVAL,
                          "beta = %g deg: must lie in (0, alpha) = (0, %g) deg for N = %d",
                          p->beta * 180 / M_PI, alpha * 180 / M_PI, p->N);
    if (!(p->lambda0 > 0 && p->lambda0 < alpha + p->beta))
        return pl_err_set(err, PL_EINVAL,
                          "lambda0 = %g deg: must lie in (0, alpha + beta) = (0, %g) deg",
                          p->lambda0 * 180 / M_PI, (alpha + p->beta) * 180 / M_PI);
    if (!(p->mu_s >= 0 && isfinite(p->mu_s)))
        return pl_err_set(err, PL_EINVAL, "mu_s = %g: must be >= 0", p->mu_s);
    if (!(isnan(p->mu) || (p->mu >= 0 && isfinite(p->mu))))
        return pl_err_set(err, PL_EINVAL, "mu = %g: must be >= 0", p->mu);
    if (!(p->h1 >= 0 && isfinite(p->h1)))
        return pl_err_set(err, PL_EINVAL, "h1 = %g m: must be >= 0", p->h1);
    if (!(p->h2 >= 0 && isfinite(p->h2)))
        return pl_err_set(err, PL_EINVAL, "h2 = %g m: must be >= 0", p->h2);
    if (p->h1 == p->h2)
        return pl_err_set(err, PL_EINVAL, "h1 = h2 = %g m: the beam heights must differ for (4.1)", p->h1);
    if (!(p->duration > 0 && p->duration <= 1e5))
        return pl_err_set(err, PL_EINVAL, "duration = %g s: must lie in (0, 1e5]", p->duration);
    if (!(p->rate > 0 && p->rate <= 1e7))
        return pl_err_set(err, PL_EINVAL, "rate = %g Hz: must lie in (0, 1e7]", p->rate);
    if (p->law != PL_LAW_LINE && p->law != PL_LAW_PLASTIC)
        return pl_err_set(err, PL_EINVAL, "law = %d: must be line or plastic", (int)p->law);
    if (!(p->ramp_length >= 0 && isfinite(p->ramp_length)))
        return pl_err_set(err, PL_EINVAL, "ramp_length = %g m: must be >= 0 (0 = unlimited)", p->ramp_length);
    if (!(p->mass > 0 && isfinite(p->mass)))
        return pl_err_set(err, PL_EINVAL, "mass = %g kg: must be > 0", p->mass);
    return PL_OK;
}

/* --- geometry and the g-functions ------------------------------------- */

double pl_g1(int mode, double s, double b)
{
    switch (mode) {
    case 1: return 0.5 * (b - s);
    case 2: return 0.5 * s;
    case 3: return 0.5 * (b - 2 * s) / (b - s) * b;
    case 4: return b / (2 * s) * (2 * s - b);
    }
    return NAN;
}

double pl_g2(int mode, double s, double b)
{
    switch (mode) {
    case 1: return (b * b + b * s - 2 * s * s) / 12.0;
    case 2: return (2 * s - 3 * b) * s / 12.0;
    case 3: return b * b * b / (12.0 * (b - s));
    case 4: return -b * b * b / (12.0 * s);
    }
    return NAN;
}

double pl_plastic_ratio(int N)
{
    double c2 = cos(2 * M_PI / N);
    /* (J + m a0^2 cos 2a) / J_A with J = m a0^2 (cos 2a + 2)/6 */
    return ((c2 + 2) / 6 + c2) / ((c2 + 2) / 6 + 1);
}

static double ja_over_m(int N, double a0)
{
    return a0 * a0 * ((cos(2 * M_PI / N) + 2) / 6 + 1);
}

void pl_contact_forces(int N, double a0, double mass, double beta, double psi,
                       double omega, double *fn, double *ft)
{
    double K = G_ACC * a0 / ja_over_m(N, a0);
    double wdot = K * sin(psi + beta);
    /* Newton for the centre, r_C - r_A = a0 (sin psi, cos psi) */
    *ft = mass * a0 * (wdot * cos(psi) - omega * omega * sin(psi)) - mass * G_ACC * sin(beta);
    *fn = mass * G_ACC * cos(beta) - mass * a0 * (wdot * sin(psi) + omega * omega * cos(psi));
}

double pl_contact_energy(int N, double a0, double mass, double beta,
                         double psi, double omega)
{
    return 0.5 * mass * ja_over_m(N, a0) * omega * omega +
           mass * G_ACC * a0 * cos(psi + beta);
}

/* --- line impact ------------------------------------------------------ */

/* Impact state: centre velocity (vu, vw), forward speed om, and the signed
 * root energies SA, SB at A (xi = 0) and B (xi = b): sigma(xi)/sqrt(k) =
 * max(0, S(xi)) with S linear in xi (docs/model.md). */
typedef struct {
    double b, a0c, m, J, mu_s, mu;
} imp_ctx;

typedef struct { double vu, vw, om, SA, SB, W; } imp_state; /* W: friction work */

/* g1, g2 from the two end values; returns the mode (1..4) or 0 with no
 * contact. */
static int g_from_S(double SA, double SB, double b, double *g1, double *g2)
{
    if (SA > 0 && SB > 0) {
        double Ss = SA > SB ? SA : SB;
        *g1 = 0.5 * b * (SA + SB) / Ss;
        *g2 = b * b * (SB - SA) / (12 * Ss);
        return SB >= SA ? 3 : 4;
    }
    if (SB > 0) {           /* SA <= 0: triangle [s, b] */
        double s = b * SA / (SA - SB);
        *g1 = 0.5 * (b - s);
        *g2 = (b * b + b * s - 2 * s * s) / 12.0;
        return 1;
    }
    if (SA > 0) {           /* SB <= 0: triangle [0, s] */
        double s = b * SA / (SA - SB);
        *g1 = 0.5 * s;
        *g2 = (2 * s - 3 * b) * s / 12.0;
        return 2;
    }
    *g1 = *g2 = 0;
    return 0;
}

/* d/dtau of the state with p* = tau^2; `slip` (0 stick, else the sign of
 * the slip velocity) is fixed over a step. */
static int imp_deriv(const imp_ctx *c, double tau, const imp_state *z,
                     int slip, imp_state *d, int *mode)
{
    double g1, g2;
    *mode = g_from_S(z->SA, z->SB, c->b, &g1, &g2);
    if (*mode == 0)
        return -1;
    double Ss = z->SA > z->SB ? z->SA : z->SB;
    double g3 = slip ? -c->mu * slip * g1
                     : -c->m * c->a0c * g2 / (c->J + c->m * c->a0c * c->a0c);
    double vnA = z->vw + z->om * c->b / 2, vnB = z->vw - z->om * c->b / 2;
    double f = 2 * tau;
    d->vu = f * g3 / c->m;
    d->vw = f * g1 / c->m;
    d->om = -f * (g2 + c->a0c * g3) / c->J;
    d->SA = -f * vnA / Ss;
    d->SB = -f * vnB / Ss;
    d->W = -f * g3 * (z->vu - z->om * c->a0c);
    return 0;
}

static void axpy(imp_state *o, const imp_state *z, double h, const imp_state *d)
{
    o->vu = z->vu + h * d->vu; o->vw = z->vw + h * d->vw; o->om = z->om + h * d->om;
    o->SA = z->SA + h * d->SA; o->SB = z->SB + h * d->SB; o->W = z->W + h * d->W;
}

static int imp_rk4(const imp_ctx *c, double tau, const imp_state *z, double h,
                   int slip, imp_state *out, int *mode)
{
    imp_state k1, k2, k3, k4, t;
    int md;
    if (imp_deriv(c, tau, z, slip, &k1, mode)) return -1;
    axpy(&t, z, h / 2, &k1);
    if (imp_deriv(c, tau + h / 2, &t, slip, &k2, &md)) return -1;
    axpy(&t, z, h / 2, &k2);
    if (imp_deriv(c, tau + h / 2, &t, slip, &k3, &md)) return -1;
    axpy(&t, z, h, &k3);
    if (imp_deriv(c, tau + h, &t, slip, &k4, &md)) return -1;
    out->vu = z->vu + h / 6 * (k1.vu + 2 * k2.vu + 2 * k3.vu + k4.vu);
    out->vw = z->vw + h / 6 * (k1.vw + 2 * k2.vw + 2 * k3.vw + k4.vw);
    out->om = z->om + h / 6 * (k1.om + 2 * k2.om + 2 * k3.om + k4.om);
    out->SA = z->SA + h / 6 * (k1.SA + 2 * k2.SA + 2 * k3.SA + k4.SA);
    out->SB = z->SB + h / 6 * (k1.SB + 2 * k2.SB + 2 * k3.SB + k4.SB);
    out->W = z->W + h / 6 * (k1.W + 2 * k2.W + 2 * k3.W + k4.W);
    return 0;
}

/* (3.29): the impact ends when v^n >= 0 over the whole face; v^n is linear
 * in xi, so the smaller end value decides. */
static double term_fn(const imp_ctx *c, const imp_state *z)
{
    double vnA = z->vw + z->om * c->b / 2, vnB = z->vw - z->om * c->b / 2;
    return vnA < vnB ? vnA : vnB;
}

static double layer_energy(const imp_ctx *c, const imp_state *z)
{
    /* integral over [0, b] of max(0, S)^2 / 2, S linear */
    double SA = z->SA, SB = z->SB, b = c->b;
    if (SA >= 0 && SB >= 0)
        return b * (SA * SA + SA * SB + SB * SB) / 6;
    if (SA <= 0 && SB <= 0)
        return 0;
    double pos = SA > 0 ? SA : SB;
    double len = b * pos / fabs(SA - SB);
    return len * pos * pos / 6;
}

/* The friction state of the next impact step (3.20) from the current
 * one (slip: 0 stick, else the sign of the slip's opposing friction), the
 * layer's resultants g1, g2: a slip whose velocity reversed sticks again,
 * a stick whose friction would leave the cone slips. */
static int friction_mode(const imp_ctx *c, const imp_state *z, double g1,
                         double g2, int slip)
{
    double vt = z->vu - z->om * c->a0c;
    if (slip) {
        if (vt * slip <= 0) slip = 0;  /* slip velocity reversed: stick again */
    }
    if (!slip) {
        double g3s = -c->m * c->a0c * g2 / (c->J + c->m * c->a0c * c->a0c);
        if (fabs(g3s) > c->mu_s * g1) {
            slip = g3s > 0 ? -1 : 1;  /* friction opposes the slip */
        }
    }
    return slip;
}

/* The terminal instant (3.29) within the step h from z, where term_fn
 * goes from f0 < 0 to f1 >= 0: secant on the partial step.  nz receives
 * the state there and *hb the partial step; 1 when contact is lost. */
static int terminal_step(const imp_ctx *c, double tau, const imp_state *z,
                         double h, double f0, double f1, int slip,
                         double omega_minus, imp_state *nz, double *hb,
                         int *mode)
{
    double ha = 0, fa = f0, fb = f1;
    *hb = h;
    for (int it = 0; it < 60; it++) {
        double hm = ha - fa * (*hb - ha) / (fb - fa);
        if (!(hm > ha && hm < *hb)) hm = 0.5 * (ha + *hb);
        imp_state tz;
        if (imp_rk4(c, tau, z, hm, slip, &tz, mode))
            return 1;
        double fm = term_fn(c, &tz);
        if (fm < 0) { ha = hm; fa = fm; } else { *hb = hm; fb = fm; *nz = tz; }
        if (fabs(fm) <= 1e-15 * omega_minus * c->b || *hb - ha < 1e-14 * h) {
            *nz = tz;
            *hb = hm;
            break;
        }
    }
    return 0;
}

pl_status pl_line_impact_solve(int N, double a0, double mass, double mu_s,
                               double mu, double omega_minus, int steps,
                               pl_impact_detail *out, pl_err *err)
{
    if (N < 3)
        return pl_err_set(err, PL_EINVAL, "N = %d: must be >= 3", N);
    if (!(a0 > 0 && mass > 0 && omega_minus > 0))
        return pl_err_set(err, PL_EINVAL, "a0, mass and omega- must be > 0");
    if (steps < 10)
        return pl_err_set(err, PL_EINVAL, "steps = %d: must be >= 10", steps);
    if (isnan(mu))
        mu = mu_s;
    double alpha = M_PI / N;
    imp_ctx c = {2 * a0 * sin(alpha), a0 * cos(alpha), mass,
                 mass * a0 * a0 * (cos(2 * alpha) + 2) / 6, mu_s, mu};
    memset(out, 0, sizeof *out);
    /* pre-impact: rotation about A, v^tau = 0, v^n(xi) = -omega xi */
    imp_state z = {omega_minus * c.a0c, -omega_minus * c.b / 2, omega_minus, 0, 0, 0};
    out->ke_before = 0.5 * mass * (z.vu * z.vu + z.vw * z.vw) + 0.5 * c.J * z.om * z.om;
    /* Scale of the terminal impulse: stopping B's approach with the
     * DS-I(s=0) resultant b/2 takes about p* = 2 m omega-. */
    double tau_scale = sqrt(2 * mass * omega_minus);
    double h = tau_scale / steps;
    /* Singular start (all energies zero): the first part of the impact is
     * DS-I with s = 0, S_B = sqrt(2 omega- b p*), S_A = O(p*^1.5). */
    double tau = h * 1e-3, p0 = tau * tau;
    z.vu += p0 * (-mass * c.a0c * (c.b * c.b / 12) / (c.J + mass * c.a0c * c.a0c)) / mass;
    z.vw += p0 * (c.b / 2) / mass;
    z.om -= p0 * (c.b * c.b / 12 - c.a0c * mass * c.a0c * (c.b * c.b / 12) /
                  (c.J + mass * c.a0c * c.a0c)) / c.J;
    z.SB = sqrt(2 * omega_minus * c.b * p0);
    int slip = 0, mode = 1, n = 0;
    out->mode_mask = 1;
    for (;;) {
        if (n > 200 * steps)
            return pl_err_set(err, PL_ENUMERIC, "line impact: no termination after %d steps", n);
        /* friction state for this step (3.20) */
        double g1, g2;
        if (!g_from_S(z.SA, z.SB, c.b, &g1, &g2))
            return pl_err_set(err, PL_ENUMERIC, "line impact: contact lost before (3.29)");
        slip = friction_mode(&c, &z, g1, g2, slip);
        out->slipped |= slip != 0;
        imp_state nz;
        if (imp_rk4(&c, tau, &z, h, slip, &nz, &mode))
            return pl_err_set(err, PL_ENUMERIC, "line impact: contact lost before (3.29)");
        out->mode_mask |= 1 << (mode - 1);
        double f0 = term_fn(&c, &z), f1 = term_fn(&c, &nz);
        if (f1 >= 0 && f0 < 0) {
            double hb;
            if (terminal_step(&c, tau, &z, h, f0, f1, slip, omega_minus, &nz, &hb, &mode))
                return pl_err_set(err, PL_ENUMERIC, "line impact: contact lost");
            z = nz;
            tau += hb;
            n++;
            break;
        }
        z = nz;
        tau += h;
        n++;
    }
    double vnA = z.vw + z.om * c.b / 2, vnB = z.vw - z.om * c.b / 2;
    out->ratio = z.om / omega_minus;
    out->vu = z.vu;
    out->vw = z.vw;
    out->ke_after = 0.5 * mass * (z.vu * z.vu + z.vw * z.vw) + 0.5 * c.J * z.om * z.om;
    out->layer_energy = layer_energy(&c, &z);
    out->friction_work = z.W;
    out->p_end = tau * tau;
    out->steps = n;
    out->end_at_b = fabs(vnB) <= fabs(vnA);
    return PL_OK;
}

/* --- the handle ------------------------------------------------------- */

static pl_status solve_ratios(pl_model *m, pl_err *err)
{
    pl_impact_detail d;
    pl_status st = pl_line_impact_solve(m->p.N, 1.0, 1.0, m->p.mu_s, m->p.mu,
                                        1.0, 400, &d, err);
    if (st != PL_OK)
        return st;
    m->ratio_line = d.ratio;
    m->line_slipped = d.slipped;
    m->line_mode_mask = d.mode_mask;
    m->line_end_at_b = d.end_at_b;
    m->ratio_plastic = pl_plastic_ratio(m->p.N);
    return PL_OK;
}

static void set_geometry(pl_model *m)
{
    m->alpha = M_PI / m->p.N;
    m->b = 2 * m->p.a0 * sin(m->alpha);
    m->J_over_m = m->p.a0 * m->p.a0 * (cos(2 * m->alpha) + 2) / 6;
    m->JA_over_m = m->J_over_m + m->p.a0 * m->p.a0;
    m->K = G_ACC * m->p.a0 / m->JA_over_m;
    m->sb = sin(m->p.beta);
    m->cb = cos(m->p.beta);
    m->spsi0 = sin(m->alpha - m->p.lambda0);
}

pl_status pl_model_create(pl_model **out, const pl_model_params *p, pl_err *err)
{
    *out = NULL;
    pl_status st = pl_model_params_check(p, err);
    if (st != PL_OK)
        return st;
    pl_model *m = calloc(1, sizeof *m);
    if (!m)
        return pl_err_set(err, PL_ENOMEM, "out of memory for the model handle");
    m->p = *p;
    if (isnan(m->p.mu))
        m->p.mu = m->p.mu_s;
    set_geometry(m);
    if ((st = solve_ratios(m, err)) != PL_OK) {
        free(m);
        return st;
    }
    *out = m;
    return PL_OK;
}

pl_status pl_model_set_params(pl_model *m, const pl_model_params *p, pl_err *err)
{
    pl_status st = pl_model_params_check(p, err);
    if (st != PL_OK)
        return st;
    double mu = isnan(p->mu) ? p->mu_s : p->mu;
    int resolve = p->N != m->p.N || p->mu_s != m->p.mu_s || mu != m->p.mu;
    m->p = *p;
    m->p.mu = mu;
    set_geometry(m);
    return resolve ? solve_ratios(m, err) : PL_OK;
}

void pl_model_destroy(pl_model *m)
{
    free(m);
}

double pl_model_impact_ratio(const pl_model *m)
{
    return m->p.law == PL_LAW_LINE ? m->ratio_line : m->ratio_plastic;
}

/* --- contact phase engine --------------------------------------------- */

typedef struct {
    double t, psi, om;
    long k;          /* impacts so far */
    int done;
    pl_model_end end;
    double fn, ft;
} eng;

static void rk4_pend(const pl_model *m, double psi, double om, double h,
                     double *psi1, double *om1)
{
    double K = m->K, be = m->p.beta;
    double k1p = om, k1w = K * sin(psi + be);
    double k2p = om + h / 2 * k1w, k2w = K * sin(psi + h / 2 * k1p + be);
    double k3p = om + h / 2 * k2w, k3w = K * sin(psi + h / 2 * k2p + be);
    double k4p = om + h * k3w, k4w = K * sin(psi + h * k3p + be);
    *psi1 = psi + h / 6 * (k1p + 2 * k2p + 2 * k3p + k4p);
    *om1 = om + h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
}

static double psi0_of(const pl_model *m) { return m->alpha - m->p.lambda0; }

static double x_of(const pl_model *m, const eng *e)
{
    return e->k * m->b + m->p.a0 * (sin(e->psi) - m->spsi0);
}

/* (2.2) on the rolling edge; sets the end status when violated. */
static int check_22(const pl_model *m, eng *e)
{
    /* pl_contact_forces() with the handle's constants (hot path) */
    double sp = sin(e->psi), cp = cos(e->psi), a0 = m->p.a0, ms = m->p.mass;
    double wdot = m->K * (sp * m->cb + cp * m->sb), w2 = e->om * e->om;
    double ft = ms * a0 * (wdot * cp - w2 * sp) - ms * G_ACC * m->sb;
    double fn = ms * G_ACC * m->cb - ms * a0 * (wdot * sp + w2 * cp);
    if (fn <= 0) {
        e->end = PL_END_DETACHED;
    } else if (fabs(ft) > m->p.mu_s * fn) {
        e->end = PL_END_SLIP;
    } else {
        return 0;
    }
    e->fn = fn;
    e->ft = ft;
    e->done = 1;
    return 1;
}

/* Newton on a partial step from (psi, om): the h in [0, hmax] where
 * fn(psi(h), om(h)) = 0; which = 0 psi = alpha, 1 om = 0, 2 x = target. */
static double find_event(const pl_model *m, const eng *e, double hmax, int which,
                         double target)
{
    double h = hmax * 0.5, lo = 0, hi = hmax;
    for (int it = 0; it < 50; it++) {
        double ps, w;
        rk4_pend(m, e->psi, e->om, h, &ps, &w);
        double f, df;
        if (which == 0) { f = ps - m->alpha; df = w; }
        else if (which == 1) { f = w; df = m->K * sin(ps + m->p.beta); }
        else { f = m->p.a0 * sin(ps) - target; df = m->p.a0 * cos(ps) * w; }
        if (f < 0) lo = h; else hi = h;
        double hn = df != 0 ? h - f / df : 0.5 * (lo + hi);
        if (which == 1) { /* om decreasing: f > 0 means before the event */
            if (f > 0) { lo = h; } else { hi = h; }
        }
        if (!(hn > lo && hn < hi)) hn = 0.5 * (lo + hi);
        if (fabs(hn - h) < 1e-15 * (hmax + e->t)) { h = hn; break; }
        h = hn;
    }
    return h;
}

/* Advances e to time t1 (or to an early end), recording impacts. */
static void advance(const pl_model *m, eng *e, double t1, pl_model_result *res)
{
    double r = pl_model_impact_ratio(m);
    double hmax = 1.0 / m->p.rate;
    while (!e->done && e->t < t1) {
        double h = t1 - e->t, ps, w;
        double tstop = t1;
        if (h > hmax * (1 + 1e-9)) { h = hmax; tstop = e->t + h; }
        rk4_pend(m, e->psi, e->om, h, &ps, &w);
        /* which event comes first within h */
        double hev = h;
        int ev = -1;
        if (ps >= m->alpha) { hev = find_event(m, e, h, 0, 0); ev = 0; }
        if (w <= 0 && e->om > 0) {
            double hs = find_event(m, e, h, 1, 0);
            if (ev < 0 || hs < hev) { hev = hs; ev = 1; }
        }
        if (m->p.ramp_length > 0) {
            eng tmp = *e;
            tmp.psi = ps;
            if (x_of(m, &tmp) >= m->p.ramp_length) {
                double target = m->p.ramp_length - e->k * m->b + m->p.a0 * sin(psi0_of(m));
                double hx = (target >= m->p.a0 * sin(m->alpha)) ? h
                            : find_event(m, e, h, 2, target);
                if (ev < 0 || hx < hev) { hev = hx; ev = 2; }
            }
        }
        if (ev < 0) {
            e->psi = ps; e->om = w; e->t = tstop;
            if (check_22(m, e)) break;
            continue;
        }
        rk4_pend(m, e->psi, e->om, hev, &e->psi, &e->om);
        e->t += hev;
        if (ev == 1) { e->om = 0; e->done = 1; e->end = PL_END_STOPPED; break; }
        if (ev == 2) { e->done = 1; e->end = PL_END_LEFT_RAMP; break; }
        /* impact at lambda = 0 */
        e->psi = m->alpha;
        if (check_22(m, e)) break;
        double wm = e->om, wp = r * wm;
        if (res && res->impacts && e->k < (long)res->cap_impacts) {
            pl_model_impact *im = &res->impacts[e->k];
            im->t = e->t;
            im->omega_minus = wm;
            im->omega_plus = wp;
            im->ratio = r;
            im->slipped = m->p.law == PL_LAW_LINE ? m->line_slipped : 0;
            im->mode_mask = m->p.law == PL_LAW_LINE ? m->line_mode_mask : 0;
        }
        e->k++;
        e->psi = -m->alpha;
        e->om = wp;
        if (m->p.law == PL_LAW_LINE && m->line_slipped) {
            e->done = 1; e->end = PL_END_SLIP; e->fn = e->ft = NAN; break;
        }
        if (wp <= 0 || (m->p.law == PL_LAW_LINE && !m->line_end_at_b)) {
            e->done = 1; e->end = PL_END_STOPPED; break;
        }
        if (check_22(m, e)) break;
    }
}

static void eng_init(const pl_model *m, eng *e)
{
    memset(e, 0, sizeof *e);
    e->psi = psi0_of(m);
    e->end = PL_END_DURATION;
}

pl_status pl_model_run(pl_model *m, pl_model_result *res, pl_err *err)
{
    if (!m || !res)
        return pl_err_set(err, PL_EINVAL, "pl_model_run: NULL handle or result");
    const pl_model_params *p = &m->p;
    eng e;
    eng_init(m, &e);
    res->n_samples = 0;
    size_t nmax = (size_t)floor(p->duration * p->rate + 1e-9) + 1;
    if (res->cap_samples < nmax)
        nmax = res->cap_samples;
    double psi0 = psi0_of(m);
    for (size_t i = 0; i < nmax; i++) {
        double t = (double)i / p->rate;
        if (i > 0) {
            advance(m, &e, t, res);
            if (e.done && e.t < t)
                break;
        } else {
            check_22(m, &e);
        }
        double om = e.om, c = cos(e.psi), a0 = p->a0;
        double vu = a0 * om * c, theta = e.k * 2 * m->alpha + e.psi - psi0;
        if (res->t) res->t[i] = t;
        if (res->x) res->x[i] = x_of(m, &e);
        if (res->y) res->y[i] = a0 * c;
        if (res->theta) res->theta[i] = theta;
        if (res->omega) res->omega[i] = om;
        if (res->vp1) res->vp1[i] = vu + om * (p->h1 - a0 * c);
        if (res->vp2) res->vp2[i] = vu + om * (p->h2 - a0 * c);
        if (res->lp) res->lp[i] = p->N * theta / (2 * M_PI);
        res->n_samples = i + 1;
        if (e.done)
            break;
    }
    if (!e.done && res->n_samples < (size_t)floor(p->duration * p->rate + 1e-9) + 1)
        advance(m, &e, p->duration, res);   /* cap reached: finish the run */
    res->n_impacts = (size_t)e.k;
    res->end = e.end;
    res->t_end = e.done ? e.t : p->duration;
    res->theta_end = e.k * 2 * m->alpha + e.psi - psi0;
    res->lp_end = p->N * res->theta_end / (2 * M_PI);
    res->x_end = x_of(m, &e);
    res->omega_end = e.om;
    res->fail_fn = e.fn;
    res->fail_ft = e.ft;
    return PL_OK;
}

pl_status pl_model_lp_grid(pl_model *m, const double *t, double *lp, size_t n,
                           pl_model_end *end, pl_err *err)
{
    if (!m || (!t && n) || (!lp && n))
        return pl_err_set(err, PL_EINVAL, "pl_model_lp_grid: NULL argument");
    eng e;
    eng_init(m, &e);
    double psi0 = psi0_of(m), prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] >= prev))
            return pl_err_set(err, PL_EINVAL, "time grid: t[%zu] = %g is not >= %g", i, t[i], prev);
        prev = t[i];
        advance(m, &e, t[i], NULL);
        lp[i] = m->p.N * (e.k * 2 * m->alpha + e.psi - psi0) / (2 * M_PI);
    }
    if (end)
        *end = e.end;
    return PL_OK;
}
