/* model/seeds/body.c - rigid bodies on a rough plane (seed 003, sections 2-6).
 * See body.h and docs/models.md. */
#include "model/seeds/body.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- the body's shape ------------------------------------------------- */

/* Point masses relative to the centre of mass (pair, particles). */
static size_t point_masses(const pl_body *b, double *m, double *rx, double *ry)
{
    if (b->kind == PL_BODY_PAIR) {
        /* m1 L1 = m2 L2 with L1 + L2 = L: the first moments vanish */
        double M = b->m[0] + b->m[1];
        m[0] = b->m[0];
        m[1] = b->m[1];
        rx[0] = b->m[1] / M * b->length;
        rx[1] = -b->m[0] / M * b->length;
        ry[0] = ry[1] = 0;
        return 2;
    }
    if (b->kind != PL_BODY_PARTICLES)
        return 0;
    double M = 0, cx = 0, cy = 0;
    for (size_t i = 0; i < b->n; i++) {
        M += b->m[i];
        cx += b->m[i] * b->px[i];
        cy += b->m[i] * b->py[i];
    }
    for (size_t i = 0; i < b->n; i++) {
        m[i] = b->m[i];
        rx[i] = b->px[i] - cx / M;
        ry[i] = b->py[i] - cy / M;
    }
    return b->n;
}

pl_status pl_body_check(const pl_body *b, pl_err *err)
{
    switch (b->kind) {
    case PL_BODY_PAIR:
    case PL_BODY_PARTICLES: {
        size_t n = b->kind == PL_BODY_PAIR ? 2 : b->n;
        if (n < 2 || n > PL_BODY_MAX_PARTICLES)
            return pl_err_set(err, PL_EINVAL, "particles: %zu given, 2 to %d "
                              "are needed", n, PL_BODY_MAX_PARTICLES);
        for (size_t i = 0; i < n; i++)
            if (!(b->m[i] > 0) || !isfinite(b->m[i]))
                return pl_err_set(err, PL_EINVAL, "particle %zu: mass %g kg "
                                  "must be > 0", i + 1, b->m[i]);
        if (b->kind == PL_BODY_PAIR && !(b->length > 0 && isfinite(b->length)))
            return pl_err_set(err, PL_EINVAL, "pair: distance %g m must be > 0",
                              b->length);
        if (b->kind == PL_BODY_PARTICLES) {
            double m[PL_BODY_MAX_PARTICLES], rx[PL_BODY_MAX_PARTICLES], ry[PL_BODY_MAX_PARTICLES];
            point_masses(b, m, rx, ry);
            double i2 = 0;
            for (size_t i = 0; i < n; i++) {
                if (!isfinite(b->px[i]) || !isfinite(b->py[i]))
                    return pl_err_set(err, PL_EINVAL, "particle %zu: position "
                                      "must be finite", i + 1);
                i2 += m[i] * (rx[i] * rx[i] + ry[i] * ry[i]);
            }
            if (!(i2 > 0))
                return pl_err_set(err, PL_EINVAL, "particles: all on one point "
                                  "(no moment of inertia)");
        }
        return PL_OK;
    }
    case PL_BODY_ROD:
        if (!(b->mass > 0) || !(b->length > 0) || !isfinite(b->mass) || !isfinite(b->length))
            return pl_err_set(err, PL_EINVAL, "rod: mass %g kg and length %g m "
                              "must be > 0", b->mass, b->length);
        return PL_OK;
    case PL_BODY_BOARD:
    case PL_BODY_BOX:
        if (!(b->mass > 0) || !(b->length > 0) || !(b->width > 0) ||
            !isfinite(b->mass) || !isfinite(b->length) || !isfinite(b->width))
            return pl_err_set(err, PL_EINVAL, "%s: mass %g kg, length %g m and "
                              "width %g m must be > 0",
                              b->kind == PL_BODY_BOX ? "box" : "board",
                              b->mass, b->length, b->width);
        if (b->kind == PL_BODY_BOX && !(b->height > 0 && isfinite(b->height)))
            return pl_err_set(err, PL_EINVAL, "box: height %g m must be > 0",
                              b->height);
        return PL_OK;
    }
    return pl_err_set(err, PL_EINVAL, "unknown body kind %d", (int)b->kind);
}

void pl_body_moments(const pl_body *b, double *mu0, double *mu2)
{
    double m[PL_BODY_MAX_PARTICLES], rx[PL_BODY_MAX_PARTICLES], ry[PL_BODY_MAX_PARTICLES];
    size_t n = point_masses(b, m, rx, ry);
    *mu0 = *mu2 = 0;
    for (size_t i = 0; i < n; i++) {
        *mu0 += m[i];
        *mu2 += m[i] * (rx[i] * rx[i] + ry[i] * ry[i]);
    }
    if (b->kind == PL_BODY_ROD) {
        *mu0 = b->mass;
        *mu2 = b->mass * b->length * b->length / 12;
    } else if (b->kind == PL_BODY_BOARD || b->kind == PL_BODY_BOX) {
        *mu0 = b->mass;
        *mu2 = b->mass * (b->length * b->length + b->width * b->width) / 12;
    }
}

/* The integral of sqrt(a^2 + b^2) over |a| <= a0, |b| <= b0.  Sec. 5
 * prints a0^3 / 2 and b0^3 / 2 before the logarithms; the integral has
 * a0^3 / 3 and b0^3 / 3 (4 x the quarter's (2 a b d + a^3 ln((b + d)/a) +
 * b^3 ln((a + d)/b)) / 6, and ln((d + b)/(d - b)) = 2 ln((d + b)/a)):
 * tests/model/seeds/body_test.c checks both against a quadrature. */
static double rect_radial(double a0, double b0)
{
    double r = hypot(a0, b0);
    return 4.0 / 3.0 * a0 * b0 * r + a0 * a0 * a0 / 3 * log((r + b0) / (r - b0)) +
           b0 * b0 * b0 / 3 * log((r + a0) / (r - a0));
}

double pl_body_first_radial_moment(const pl_body *b)
{
    double m[PL_BODY_MAX_PARTICLES], rx[PL_BODY_MAX_PARTICLES], ry[PL_BODY_MAX_PARTICLES];
    size_t n = point_masses(b, m, rx, ry);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += m[i] * hypot(rx[i], ry[i]);
    if (b->kind == PL_BODY_ROD)
        s = b->mass * b->length / 4;    /* delta0 2 (L/2)^2 / 2 */
    else if (b->kind == PL_BODY_BOARD || b->kind == PL_BODY_BOX)
        s = b->mass / (b->length * b->width) * rect_radial(b->length / 2, b->width / 2);
    return s;
}

/* --- the friction integrals ---------------------------------------------
 *
 * A straight piece of the base through c (body-frame offset rotated to the
 * plane, from the centre of mass) along e = (cos theta, sin theta), its
 * points c + s e for s in [s0, s1]: with e' = (-sin theta, cos theta) and
 * V_c the velocity of the point c, a point moves with
 *   v(s) = lambda1 e + (lambda2 + s omega) e',
 * lambda1 = V_c . e, lambda2 = V_c . e' (the document's lambda1, lambda2 of
 * sec. 4).  Per unit density and unit mu g cos(phi), friction on the piece
 * is -(A e + B e') with
 *   A = int lambda1 / |v| ds,  B = int (lambda2 + s omega) / |v| ds,
 * and its torque about the centre of mass -(lambda1 (c x e) I0 + (c . e) B
 * + C), C = int s (lambda2 + s omega) / |v| ds.  These three combinations,
 * not the document's I0, I1, I2, are what the forces need, and they stay
 * finite where I0 does not (lambda1 = 0 with the instantaneous centre on
 * the piece). */

typedef struct {
    double l1, l2, om;
    int which;          /* 0: A, 1: B, 2: C */
} seg_par;

static double seg_integrand(double s, void *p)
{
    const seg_par *q = p;
    double u = q->l2 + s * q->om, r = hypot(q->l1, u);
    if (r == 0)
        return 0;       /* a point at rest: no friction (the document's v = 0) */
    return q->which == 0 ? q->l1 / r : q->which == 1 ? u / r : s * u / r;
}

typedef struct {
    gsl_integration_workspace *ws, *ws2;
    gsl_integration_glfixed_table *gl;
    const pl_body *b;
    double vx, vw, om, ct, st;     /* the state: velocity, spin, cos/sin theta */
    int which;                     /* outer integrand: 0 A, 1 B, 2 torque */
    pl_status st_code;
    char why[160];
} quad;

/* A, B, C of a piece in closed form (the antiderivatives of sec. 4's J0,
 * J1, J2 in u = lambda2 + s omega), or by an 8-point Gauss-Legendre rule
 * when the spin hardly changes the velocity along the piece (the closed
 * form divides by omega^2 there; the integrand is then smooth). */
static void seg_closed(const quad *q, double l1, double l2, double om,
                       double s0, double s1, double out[3])
{
    double vmag = hypot(l1, l2);
    if (vmag == 0 && om == 0) {
        out[0] = out[1] = out[2] = 0;
        return;
    }
    if (fabs(om) * (s1 - s0) < 1e-3 * vmag) {
        for (int k = 0; k < 3; k++) {
            seg_par p = {l1, l2, om, k};
            gsl_function F = {seg_integrand, &p};
            out[k] = gsl_integration_glfixed(&F, s0, s1, q->gl);
        }
        return;
    }
    double u0 = l2 + om * s0, u1 = l2 + om * s1;
    double r0 = hypot(l1, u0), r1 = hypot(l1, u1), al = fabs(l1);
    double ash0 = al > 0 ? asinh(u0 / al) : 0, ash1 = al > 0 ? asinh(u1 / al) : 0;
    out[0] = al > 0 ? l1 / om * (ash1 - ash0) : 0;
    out[1] = (r1 - r0) / om;
    /* int u^2 / R du = u R / 2 - l1^2 asinh(u / |l1|) / 2 (-> u |u| / 2) */
    double g0 = 0.5 * u0 * r0 - 0.5 * l1 * l1 * ash0 - l2 * r0;
    double g1 = 0.5 * u1 * r1 - 0.5 * l1 * l1 * ash1 - l2 * r1;
    out[2] = (g1 - g0) / (om * om);
}

/* The same three by GSL's adaptive quadrature (QAGP), split where the
 * piece's speed is least: the instantaneous centre's foot. */
static int seg_quad(quad *q, double l1, double l2, double om, double s0,
                    double s1, double out[3])
{
    double pts[3] = {s0, 0, s1};
    size_t np = 2;
    if (om != 0) {
        double sc = -l2 / om;
        if (sc > s0 && sc < s1) {
            pts[1] = sc;
            pts[2] = s1;
            np = 3;
        } else {
            pts[1] = s1;
        }
    } else {
        pts[1] = s1;
    }
    for (int k = 0; k < 3; k++) {
        seg_par p = {l1, l2, om, k};
        gsl_function F = {seg_integrand, &p};
        double abserr;
        int rc = gsl_integration_qagp(&F, pts, np, 1e-13 * (s1 - s0), 1e-10,
                                      q->ws->limit, q->ws, &out[k], &abserr);
        if (rc != GSL_SUCCESS && rc != GSL_EROUND) {
            q->st_code = PL_ENUMERIC;
            snprintf(q->why, sizeof q->why, "quadrature of the rod's friction: %s",
                     gsl_strerror(rc));
            return -1;
        }
    }
    return 0;
}

/* The board's integrand in beta (across the body): the piece at offset
 * beta e' with its A, B in closed form, weighted for the wanted sum. */
static double board_line(double beta, void *p)
{
    quad *q = p;
    double ex = q->ct, ey = q->st;
    /* V_c = V + omega (c rotated by +90 deg) = V - omega beta e */
    double l1 = q->vx * ex + q->vw * ey - q->om * beta;
    double l2 = -q->vx * ey + q->vw * ex;
    double r[3];
    seg_closed(q, l1, l2, q->om, -q->b->length / 2, q->b->length / 2, r);
    /* torque: lambda1 (c x e) I0 + (c . e) B + C with c x e = -beta,
     * c . e = 0, and lambda1 I0 = A */
    return q->which == 0 ? r[0] : q->which == 1 ? r[1] : -beta * r[0] + r[2];
}

static int board_quad(quad *q, double out[3])
{
    double hb = q->b->width / 2, pts[3] = {-hb, 0, hb};
    size_t np = 2;
    pts[1] = hb;
    if (q->om != 0) {
        /* where lambda1 changes sign: the instantaneous centre's line */
        double bc = (q->vx * q->ct + q->vw * q->st) / q->om;
        if (bc > -hb && bc < hb) {
            pts[1] = bc;
            pts[2] = hb;
            np = 3;
        }
    }
    for (int k = 0; k < 3; k++) {
        q->which = k;
        gsl_function F = {board_line, q};
        double abserr;
        int rc = gsl_integration_qagp(&F, pts, np, 1e-13 * q->b->width *
                                      q->b->length, 1e-10, q->ws2->limit,
                                      q->ws2, &out[k], &abserr);
        if (rc != GSL_SUCCESS && rc != GSL_EROUND) {
            q->st_code = PL_ENUMERIC;
            snprintf(q->why, sizeof q->why, "quadrature of the board's "
                     "friction: %s", gsl_strerror(rc));
            return -1;
        }
    }
    return 0;
}

static void quad_free(quad *q)
{
    if (q->ws)
        gsl_integration_workspace_free(q->ws);
    if (q->ws2)
        gsl_integration_workspace_free(q->ws2);
    if (q->gl)
        gsl_integration_glfixed_table_free(q->gl);
}

static int quad_init(quad *q, const pl_body *b)
{
    memset(q, 0, sizeof *q);
    q->b = b;
    q->ws = gsl_integration_workspace_alloc(200);
    q->ws2 = gsl_integration_workspace_alloc(200);
    q->gl = gsl_integration_glfixed_table_alloc(8);
    return q->ws && q->ws2 && q->gl ? 0 : -1;
}

/* Rough friction's generalized forces per unit mu g cos(phi). */
static int rough_forces(quad *q, const pl_body *b, const pl_body_state *s,
                        double f[3])
{
    double ct = cos(s->theta), st = sin(s->theta);
    f[0] = f[1] = f[2] = 0;
    if (b->kind == PL_BODY_PAIR || b->kind == PL_BODY_PARTICLES) {
        double m[PL_BODY_MAX_PARTICLES], rx[PL_BODY_MAX_PARTICLES], ry[PL_BODY_MAX_PARTICLES];
        size_t n = point_masses(b, m, rx, ry);
        for (size_t i = 0; i < n; i++) {
            double dx = ct * rx[i] - st * ry[i], dy = st * rx[i] + ct * ry[i];
            double vx = s->vx - s->omega * dy, vy = s->vw + s->omega * dx;
            double v = hypot(vx, vy);
            if (v == 0)
                continue;
            f[0] -= m[i] * vx / v;
            f[1] -= m[i] * vy / v;
            f[2] -= m[i] * (dx * vy - dy * vx) / v;
        }
        return 0;
    }
    q->vx = s->vx;
    q->vw = s->vw;
    q->om = s->omega;
    q->ct = ct;
    q->st = st;
    double r[3], dens;
    if (b->kind == PL_BODY_ROD) {
        double l1 = s->vx * ct + s->vw * st, l2 = -s->vx * st + s->vw * ct;
        if (seg_quad(q, l1, l2, s->omega, -b->length / 2, b->length / 2, r) != 0)
            return -1;
        dens = b->mass / b->length;
    } else {
        if (board_quad(q, r) != 0)
            return -1;
        dens = b->mass / (b->length * b->width);
    }
    /* -(A e + B e'), torque -(...) */
    f[0] = -dens * (r[0] * ct - r[1] * st);
    f[1] = -dens * (r[0] * st + r[1] * ct);
    f[2] = -dens * r[2];
    return 0;
}

pl_status pl_body_friction(const pl_body *b, const pl_plane *pl,
                           const pl_body_state *s, double f[3], pl_err *err)
{
    if (pl_body_check(b, err) != PL_OK)
        return err->code;
    double mu0, mu2;
    pl_body_moments(b, &mu0, &mu2);
    if (pl->friction == PL_FRICTION_VISCOUS) {
        /* linear: the first moments vanish, leaving -alpha mu0 V and
         * -alpha mu2 omega for every body (sec. 2, 3) */
        f[0] = -pl->mu * mu0 * s->vx;
        f[1] = -pl->mu * mu0 * s->vw;
        f[2] = -pl->mu * mu2 * s->omega;
        return PL_OK;
    }
    quad q;
    if (quad_init(&q, b) != 0) {
        quad_free(&q);
        return pl_err_set(err, PL_ENOMEM, "rough plane: out of memory");
    }
    int rc = rough_forces(&q, b, s, f);
    quad_free(&q);
    if (rc != 0)
        return pl_err_set(err, q.st_code, "%s", q.why);
    double k = pl->mu * pl->g * cos(pl->phi);
    for (int i = 0; i < 3; i++)
        f[i] *= k;
    return PL_OK;
}

/* --- the motion ---------------------------------------------------------- */

typedef struct {
    const pl_body *b;
    const pl_plane *pl;
    quad q;
    double mu0, mu2, k, gs;       /* k = mu g cos phi (rough), gs = g sin phi */
    /* point-mass bodies: the masses about the centre of mass, and the one
     * that sticks (pivot >= 0) while the body turns about it */
    size_t np;
    double pm[PL_BODY_MAX_PARTICLES], rx[PL_BODY_MAX_PARTICLES], ry[PL_BODY_MAX_PARTICLES];
    int pivot;
} motion;

/* Particle i's offset from the centre of mass in the plane at theta. */
static void offset(const motion *m, size_t i, double th, double *dx, double *dy)
{
    double c = cos(th), s = sin(th);
    *dx = c * m->rx[i] - s * m->ry[i];
    *dy = s * m->rx[i] + c * m->ry[i];
}

/* Turning about a stuck particle j (a Coulomb contact at rest holds what
 * it can: the document's "F = 0 at V = 0" is only its first instant).
 * The others slide on circles about it; friction's torque about it has
 * the constant size k sum m_i |r_i - r_j|, gravity's depends on theta.
 * Returns the angular acceleration; *rx, *ry the reaction the stuck
 * particle needs (Newton for the centre of mass). */
static double pivot_dynamics(const motion *m, const double y[6], double *rx,
                             double *ry)
{
    size_t j = (size_t)m->pivot;
    double th = y[2], w = y[5], djx, djy;
    offset(m, j, th, &djx, &djy);
    double qx = -djx, qy = -djy;          /* the centre of mass from the pivot */
    double ip = m->mu2 + m->mu0 * (qx * qx + qy * qy);
    double sg = w > 0 ? 1 : w < 0 ? -1 : 0, tau = 0, fx = 0, fy = 0;
    for (size_t i = 0; i < m->np; i++) {
        if (i == j)
            continue;
        double dx, dy;
        offset(m, i, th, &dx, &dy);
        double ax = dx - djx, ay = dy - djy, r = hypot(ax, ay);
        if (r == 0 || sg == 0)
            continue;
        /* v_i = w (-ay, ax): friction -k m_i sign(w) (-ay, ax) / r */
        fx += m->k * m->pm[i] * sg * ay / r;
        fy -= m->k * m->pm[i] * sg * ax / r;
        tau -= m->k * m->pm[i] * sg * r;
    }
    tau += -qx * m->mu0 * m->gs;          /* gravity (0, -mu0 g sin phi) at q */
    double alpha = tau / ip;
    double ax = -alpha * qy - w * w * qx, ay = alpha * qx - w * w * qy;
    *rx = m->mu0 * ax - fx;
    *ry = m->mu0 * ay - fy + m->mu0 * m->gs;
    return alpha;
}

/* y = (x, w, theta, vx, vw, omega) */
static int rhs(double t, const double y[], double dy[], void *p)
{
    (void)t;
    motion *m = p;
    pl_body_state s = {y[0], y[1], y[2], y[3], y[4], y[5]};
    double f[3];
    dy[0] = y[3];
    dy[1] = y[4];
    dy[2] = y[5];
    if (m->pl->friction == PL_FRICTION_VISCOUS) {
        dy[3] = -m->pl->mu * y[3];
        dy[4] = -m->pl->mu * y[4] - m->gs;
        dy[5] = -m->pl->mu * y[5];
        return GSL_SUCCESS;
    }
    if (m->pivot >= 0) {
        double rx, ry, djx, djy;
        double alpha = pivot_dynamics(m, y, &rx, &ry);
        offset(m, (size_t)m->pivot, y[2], &djx, &djy);
        double qx = -djx, qy = -djy, w = y[5];
        dy[0] = -w * qy;
        dy[1] = w * qx;
        dy[3] = -alpha * qy - w * w * qx;
        dy[4] = alpha * qx - w * w * qy;
        dy[5] = alpha;
        return GSL_SUCCESS;
    }
    if (y[3] == 0 && y[4] == 0 && y[5] == 0) {
        /* From rest: held by static friction when it can, else sliding
         * down-slope with kinetic friction against it (as the particle). */
        dy[3] = dy[5] = 0;
        dy[4] = m->k >= m->gs ? 0 : m->k - m->gs;
        return GSL_SUCCESS;
    }
    if (rough_forces(&m->q, m->b, &s, f) != 0)
        return GSL_EBADFUNC;
    dy[3] = m->k * f[0] / m->mu0;
    dy[4] = m->k * f[1] / m->mu0 - m->gs;
    dy[5] = m->k * f[2] / m->mu2;
    return GSL_SUCCESS;
}

/* Point-mass bodies: a particle whose velocity runs to zero sticks if its
 * friction can hold it (|reaction| <= k m_j), and the body turns about it
 * until it stops or the reaction outgrows the friction.  This limits the
 * next step to a quarter of the time any particle needs to stop, so that
 * the instant is approached rather than stepped across (as for the whole
 * body), switches into and out of the pivot, and returns the step's end
 * (at most t1). */
static double point_mass_events(motion *m, double y[6], double t, double t1,
                                double scale)
{
    double dy[6], rx, ry;
    if (m->pivot >= 0) {
        double alpha = pivot_dynamics(m, y, &rx, &ry);
        if (hypot(rx, ry) > m->k * m->pm[m->pivot] * (1 + 1e-9)) {
            m->pivot = -1;              /* friction cannot hold it: it slips */
            return t1;
        }
        if (y[5] * alpha < 0) {
            double tw = fabs(y[5] / alpha);
            if (t + 0.25 * tw < t1)
                t1 = t + 0.25 * tw;
        }
        return t1;
    }
    rhs(t, y, dy, m);
    for (size_t i = 0; i < m->np; i++) {
        double dx, dyy;
        offset(m, i, y[2], &dx, &dyy);
        double w = y[5], vx = y[3] - w * dyy, vy = y[4] + w * dx, sp = hypot(vx, vy);
        double ax = dy[3] - dy[5] * dyy - w * w * dx, ay = dy[4] + dy[5] * dx - w * w * dyy;
        if (sp <= 1e-12 * scale) {
            m->pivot = (int)i;
            pivot_dynamics(m, y, &rx, &ry);
            if (hypot(rx, ry) <= m->k * m->pm[i] * (1 + 1e-9)) {
                /* stuck: the velocities made exactly those of turning
                 * about it */
                double qx = -dx, qy = -dyy;
                y[3] = -w * qy;
                y[4] = w * qx;
                return t1;
            }
            m->pivot = -1;              /* it passes through: no limit */
            continue;
        }
        double rate = (vx * ax + vy * ay) / sp;
        if (rate < 0 && t + 0.25 * sp / -rate < t1)
            t1 = t + 0.25 * sp / -rate;
    }
    return t1;
}

static double speed_eq(const motion *m, const double y[6])
{
    return sqrt(y[3] * y[3] + y[4] * y[4] + m->mu2 / m->mu0 * y[5] * y[5]);
}

static pl_body_state state_of(const double y[6])
{
    pl_body_state s = {y[0], y[1], y[2], y[3], y[4], y[5]};
    return s;
}

/* The decoupled model (secs. 4-6): the centre of mass slides as the
 * particle of section 1 (its own integration, with its stops), the spin
 * decays at the constant rate K = mu g cos(phi) int |r| dm / mu2 and stops
 * at |omega0| / K, in closed form. */
static pl_status hack_motion(const pl_body *b, const pl_plane *pl,
                             const pl_body_state *s0, double duration,
                             size_t n, double *tt, pl_body_state *path,
                             pl_body_end *end, pl_err *err)
{
    double mu0, mu2;
    pl_body_moments(b, &mu0, &mu2);
    double K = pl->mu * pl->g * cos(pl->phi) * pl_body_first_radial_moment(b) / mu2;
    double w0 = s0->omega, sg = w0 > 0 ? 1 : w0 < 0 ? -1 : 0;
    double t_spin = w0 == 0 ? 0 : K > 0 ? fabs(w0) / K : INFINITY;
    pl_particle_sample *sm = n ? malloc(n * sizeof *sm) : NULL;
    if (n && !sm)
        return pl_err_set(err, PL_ENOMEM, "rough plane: out of memory");
    pl_particle_end pe;
    if (pl_roughplane_particle(pl, s0->vx, s0->vw, duration, 0, n, sm, &pe, err) != PL_OK) {
        free(sm);
        return err->code;
    }
    for (size_t i = 0; i < n; i++) {
        double t = fmin(sm[i].t, t_spin);
        if (tt)
            tt[i] = sm[i].t;
        if (path)
            path[i] = (pl_body_state){s0->x + sm[i].x, s0->w + sm[i].w,
                                      s0->theta + w0 * t - 0.5 * sg * K * t * t,
                                      sm[i].vx, sm[i].vw,
                                      sm[i].t < t_spin ? w0 - sg * K * sm[i].t : 0};
    }
    free(sm);
    double te = fmin(duration, t_spin);
    end->at_rest = pe.at_rest && t_spin <= duration;
    end->t_stop = end->at_rest ? fmax(pe.t_stop, t_spin) : INFINITY;
    end->end = (pl_body_state){s0->x + pe.x, s0->w + pe.w,
                               s0->theta + w0 * te - 0.5 * sg * K * te * te,
                               pe.vx, pe.vw, duration < t_spin ? w0 - sg * K * duration : 0};
    return PL_OK;
}

/* A body's motion being integrated: the equations, GSL's adaptive
 * stepper, the state y at t, the next step h. */
typedef struct {
    motion m;
    gsl_odeiv2_system sys;
    gsl_odeiv2_step *st;
    gsl_odeiv2_control *con;
    gsl_odeiv2_evolve *ev;
    double y[6], t, h;
    double scale;                 /* the speeds' scale: below 1e-12 of it is rest */
    double eps;                   /* viscous: at rest below this speed */
    int rough, holds;             /* Coulomb friction; it holds the body at rest */
    size_t guard;
} integration;

static void integration_close(integration *g)
{
    if (g->ev)
        gsl_odeiv2_evolve_free(g->ev);
    if (g->con)
        gsl_odeiv2_control_free(g->con);
    if (g->st)
        gsl_odeiv2_step_free(g->st);
    quad_free(&g->m.q);
}

/* Sets up the integration of body b on the plane from s0 (eps: see
 * pl_roughplane_body). */
static pl_status integration_open(integration *g, const pl_body *b,
                                  const pl_plane *pl, const pl_body_state *s0,
                                  double duration, double eps, pl_err *err)
{
    memset(g, 0, sizeof *g);
    motion *m = &g->m;
    g->rough = pl->friction == PL_FRICTION_ROUGH;
    *m = (motion){.b = b, .pl = pl, .pivot = -1};
    m->np = point_masses(b, m->pm, m->rx, m->ry);
    pl_body_moments(b, &m->mu0, &m->mu2);
    m->gs = pl->g * sin(pl->phi);
    m->k = g->rough ? pl->mu * pl->g * cos(pl->phi) : 0;
    g->holds = g->rough && m->k >= m->gs;
    if (quad_init(&m->q, b) != 0) {
        quad_free(&m->q);
        return pl_err_set(err, PL_ENOMEM, "rough plane: out of memory");
    }
    g->sys = (gsl_odeiv2_system){rhs, NULL, 6, m};
    g->st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, 6);
    g->con = gsl_odeiv2_control_standard_new(1e-12, 1e-10, 1, 0);
    g->ev = gsl_odeiv2_evolve_alloc(6);
    if (!g->st || !g->con || !g->ev) {
        integration_close(g);
        return pl_err_set(err, PL_ENOMEM, "rough plane: out of memory");
    }
    double y[6] = {s0->x, s0->w, s0->theta, s0->vx, s0->vw, s0->omega};
    memcpy(g->y, y, sizeof y);
    g->h = duration * 1e-4;
    g->scale = speed_eq(m, g->y) + m->gs * duration;
    g->eps = eps;
    return PL_OK;
}

/* Where the next step may end (*t1, at most where it was), with v the
 * current speed: short of the instants the friction forces jump.  Returns
 * 1 when no step is to be taken: the body came to rest (end says so) or
 * to a turning point, where it starts again from rest. */
static int step_limit(integration *g, double v, double *t1, pl_body_end *end)
{
    motion *m = &g->m;
    if (g->rough && v > 0) {
        /* Coulomb friction slows the body at about mu g cos(phi): steps of
         * a quarter of the time left to rest approach the stop
         * geometrically instead of stepping across it, where the forces'
         * directions jump. */
        double tau = v / (m->k + m->gs);
        if (g->t + 0.25 * tau < *t1)
            *t1 = g->t + 0.25 * tau;
        if (v <= 1e-12 * g->scale) {
            g->y[3] = g->y[4] = g->y[5] = 0;
            m->pivot = -1;
            if (g->holds) {
                end->at_rest = 1;
                end->t_stop = g->t;
            }
            return 1;   /* else a turning point: it slides back down */
        }
    } else if (!g->rough && g->eps > 0 && m->gs == 0) {
        /* every speed decays as exp(-alpha t): the instant it reaches eps
         * is known, and is stepped to exactly */
        if (v <= g->eps) {
            end->at_rest = 1;
            end->t_stop = g->t;
            return 1;
        }
        double tc = g->t + log(v / g->eps) / m->pl->mu;
        if (tc < *t1)
            *t1 = tc;
    }
    if (g->rough && m->np > 0 && v > 1e-12 * g->scale) {
        int was = m->pivot;
        *t1 = point_mass_events(m, g->y, g->t, *t1, g->scale);
        if (m->pivot != was) {
            gsl_odeiv2_evolve_reset(g->ev);
            gsl_odeiv2_step_reset(g->st);
        }
    }
    return 0;
}

/* Integrates up to ts or until the body is at rest for good. */
static pl_status advance_to(integration *g, double ts, pl_body_end *end,
                            pl_err *err)
{
    motion *m = &g->m;
    while (!end->at_rest && g->t < ts) {
        if (++g->guard > 20000000)
            return pl_err_set(err, PL_ENUMERIC, "rough plane: no progress "
                              "at t = %g s", g->t);
        double t1 = ts;
        if (step_limit(g, speed_eq(m, g->y), &t1, end))
            continue;
        if (g->h > t1 - g->t)
            g->h = t1 - g->t;
        int rc = gsl_odeiv2_evolve_apply(g->ev, g->con, g->st, &g->sys, &g->t, t1,
                                         &g->h, g->y);
        if (rc != GSL_SUCCESS)
            return m->q.st_code ? pl_err_set(err, m->q.st_code, "%s", m->q.why)
                                : pl_err_set(err, PL_ENUMERIC, "rough plane: the "
                                             "integration failed at t = %g s (%s)",
                                             g->t, gsl_strerror(rc));
        if (!g->rough && g->eps > 0 && m->gs == 0 &&
            speed_eq(m, g->y) <= g->eps * (1 + 1e-12)) {
            end->at_rest = 1;
            end->t_stop = g->t;
        }
    }
    return PL_OK;
}

pl_status pl_roughplane_body(const pl_body *b, const pl_plane *pl,
                             const pl_body_state *s0, int hack,
                             double duration, double eps, size_t n,
                             double *tt, pl_body_state *path, pl_body_end *end,
                             pl_err *err)
{
    if (pl_body_check(b, err) != PL_OK)
        return err->code;
    if (!(pl->mu >= 0) || !(pl->phi >= 0 && pl->phi < M_PI / 2) || !(pl->g > 0))
        return pl_err_set(err, PL_EINVAL, "rough plane: mu %g must be >= 0, "
                          "the slope %g rad in [0, pi/2), g %g > 0", pl->mu,
                          pl->phi, pl->g);
    if (!(duration > 0) || !isfinite(s0->vx) || !isfinite(s0->vw) ||
        !isfinite(s0->omega) || !isfinite(s0->theta))
        return pl_err_set(err, PL_EINVAL, "rough plane: the duration %g s must "
                          "be > 0 and the initial state finite", duration);
    if (hack && pl->friction == PL_FRICTION_ROUGH)
        return hack_motion(b, pl, s0, duration, n, tt, path, end, err);
    integration g;
    if (integration_open(&g, b, pl, s0, duration, eps, err) != PL_OK)
        return err->code;
    end->t_stop = INFINITY;
    end->at_rest = 0;
    if (g.holds && speed_eq(&g.m, g.y) == 0) {
        end->t_stop = 0;
        end->at_rest = 1;
    }
    pl_status status = PL_OK;
    size_t steps = n > 1 ? n - 1 : 1;
    for (size_t i = 0; i <= steps && status == PL_OK; i++) {
        double ts = n > 1 ? duration * (double)i / (double)steps : duration;
        if (i == steps)
            ts = duration;   /* exactly, whatever the rounding */
        status = advance_to(&g, ts, end, err);
        if (n > 0 && i < n) {
            if (tt)
                tt[i] = ts;
            if (path)
                path[i] = state_of(g.y);
        }
    }
    integration_close(&g);
    end->end = state_of(g.y);
    return status;
}
