/* tests/model/seeds/body_test.c - seed 003 sections 2-6: rigid bodies on a rough
 * plane against the document's closed forms (its I0, I1, I2 and J0, J1, J2
 * for the rod, its integral of sqrt(a^2 + b^2) for the board, the
 * decoupled model's stops, the viscous solutions) and against the
 * reductions it derives (no spin: one particle; a still centre: a constant
 * spin-down; a particle at rest: a pivot). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/seeds/body.h"
#include "model/seeds/roughplane.h"
#include "tests/util/testutil.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G 9.80665

static pl_body rod(double mass, double len)
{
    pl_body b;
    memset(&b, 0, sizeof b);
    b.kind = PL_BODY_ROD;
    b.mass = mass;
    b.length = len;
    return b;
}

static pl_body board(double mass, double len, double wid)
{
    pl_body b;
    memset(&b, 0, sizeof b);
    b.kind = PL_BODY_BOARD;
    b.mass = mass;
    b.length = len;
    b.width = wid;
    return b;
}

static pl_body pair(double m1, double m2, double len)
{
    pl_body b;
    memset(&b, 0, sizeof b);
    b.kind = PL_BODY_PAIR;
    b.n = 2;
    b.m[0] = m1;
    b.m[1] = m2;
    b.length = len;
    return b;
}

/* The document's closed forms for the rod (sec. 4), written as it gives
 * them (with F_y's sin theta read as cos theta: v_y = y' + L theta'
 * cos theta), for lambda1 != 0 and theta' != 0. */
static void rod_doc(double c, double L1, double L2, double xd, double yd,
                    double th, double thd, double f[3])
{
    double l1 = xd * cos(th) + yd * sin(th), l2 = -xd * sin(th) + yd * cos(th);
    double z0 = (l2 - L2 * thd) / l1, z1 = (l2 + L1 * thd) / l1;
    double J0 = asinh(z1) - asinh(z0);
    double J1 = sqrt(1 + z1 * z1) - sqrt(1 + z0 * z0);
    double J2 = 0.5 * z1 * sqrt(1 + z1 * z1) - 0.5 * asinh(z1) -
                0.5 * z0 * sqrt(1 + z0 * z0) + 0.5 * asinh(z0);
    double sgn = l1 / fabs(l1);
    double I0 = sgn / thd * J0;
    double I1 = sgn / (thd * thd) * (l1 * J1 - l2 * J0);
    double I2 = sgn / (thd * thd * thd) * (l1 * l1 * J2 - 2 * l1 * l2 * J1 + l2 * l2 * J0);
    f[0] = -c * (xd * I0 - thd * sin(th) * I1);
    f[1] = -c * (yd * I0 + thd * cos(th) * I1);
    f[2] = -c * (l2 * I1 + thd * I2);
}

static void test_rod_forces(void **state)
{
    (void)state;
    gsl_set_error_handler_off();
    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 0, G};
    pl_body b = rod(2.0, 0.6);
    double c = 0.3 * G * 2.0 / 0.6;
    /* generic states, the instantaneous centre on the rod or off it */
    pl_body_state st[] = {{0, 0, 0.3, 1.0, 0.5, 2.0}, {0, 0, -1.2, -0.2, 0.7, 9.0},
                          {0, 0, 2.0, 0.05, -0.02, -4.0}, {0, 0, 0.0, 0.3, 0.0, 0.5}};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        double f[3], d[3];
        pl_err err = {0};
        assert_int_equal(pl_body_friction(&b, &pl, &st[i], f, &err), PL_OK);
        rod_doc(c, 0.3, 0.3, st[i].vx, st[i].vw, st[i].theta, st[i].omega, d);
        for (int k = 0; k < 3; k++)
            tu_assert_close(f[k], d[k], 1e-9 * (1 + fabs(d[k])));
    }
    /* no linear velocity: no force on the centre, the torque
     * -mu g sign(w) int delta0 |L| dL = -c L^2 / 4 */
    pl_body_state spin = {0, 0, 0.7, 0, 0, -3.0};
    double f[3];
    pl_err err = {0};
    assert_int_equal(pl_body_friction(&b, &pl, &spin, f, &err), PL_OK);
    tu_assert_close(f[0], 0, 1e-12);
    tu_assert_close(f[1], 0, 1e-12);
    tu_assert_close(f[2], c * 0.36 / 4, 1e-12);
    /* no spin: the centre's equation is the particle's, no torque */
    pl_body_state slide = {0, 0, 0.7, 0.6, -0.8, 0};
    assert_int_equal(pl_body_friction(&b, &pl, &slide, f, &err), PL_OK);
    tu_assert_close(f[0], -0.3 * G * 2.0 * 0.6, 1e-12);
    tu_assert_close(f[1], 0.3 * G * 2.0 * 0.8, 1e-12);
    tu_assert_close(f[2], 0, 1e-12);
}

/* The closed form of the integral of sqrt(a^2 + b^2) over the rectangle
 * |a| <= a0, |b| <= b0 as sec. 5 prints it (k = 1/2) and as it is
 * (k = 1/3). */
static double doc_rect_k(double a0, double b0, double k)
{
    double r = sqrt(a0 * a0 + b0 * b0);
    return 4.0 / 3.0 * a0 * b0 * r + k * a0 * a0 * a0 * log((r + b0) / (r - b0)) +
           k * b0 * b0 * b0 * log((r + a0) / (r - a0));
}

static double doc_rect(double a0, double b0)
{
    return doc_rect_k(a0, b0, 1.0 / 3.0);
}

static double radial(double x, void *p)
{
    double b = *(const double *)p;
    return hypot(x, b);
}

static double radial_outer(double b, void *p)
{
    const double *a0 = p;
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(100);
    gsl_function F = {radial, &b};
    double r, e;
    gsl_integration_qags(&F, -*a0, *a0, 0, 1e-12, 100, ws, &r, &e);
    gsl_integration_workspace_free(ws);
    return r;
}

/* The board's integral by GSL's quadrature (nested QAGS) against the
 * closed form: as printed, sec. 5's is 18 % high for this board; with
 * 1/3 for the document's 1/2 it agrees to 1e-10. */
static void test_board_closed_form_integral(void **state)
{
    (void)state;
    double dims[][2] = {{0.2, 0.08}, {0.5, 0.5}, {1.0, 0.01}};
    for (size_t i = 0; i < 3; i++) {
        double a0 = dims[i][0], b0 = dims[i][1], q, e;
        gsl_integration_workspace *ws = gsl_integration_workspace_alloc(100);
        gsl_function F = {radial_outer, &a0};
        assert_int_equal(gsl_integration_qags(&F, -b0, b0, 0, 1e-12, 100, ws, &q, &e), GSL_SUCCESS);
        gsl_integration_workspace_free(ws);
        tu_assert_close(doc_rect(a0, b0), q, 1e-10 * q);
        assert_true(doc_rect_k(a0, b0, 0.5) > 1.05 * q);
    }
}

/* The board's generalized forces by a plain midpoint sum of the
 * document's double integrals (sec. 5). */
static void board_sum(double k, double sigma, double a0, double b0,
                      const pl_body_state *s, int n, double f[3])
{
    double ha = 2 * a0 / n, hb = 2 * b0 / n, ct = cos(s->theta), st = sin(s->theta);
    f[0] = f[1] = f[2] = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double a = -a0 + (i + 0.5) * ha, b = -b0 + (j + 0.5) * hb;
            double vx = s->vx - s->omega * (a * st + b * ct);
            double vy = s->vw + s->omega * (a * ct - b * st);
            double v = hypot(vx, vy);
            if (v == 0)
                continue;
            f[0] -= vx / v;
            f[1] -= vy / v;
            f[2] -= (-s->vx * (a * st + b * ct) + s->vw * (a * ct - b * st) +
                     s->omega * (a * a + b * b)) / v;
        }
    for (int k2 = 0; k2 < 3; k2++)
        f[k2] *= k * sigma * ha * hb;
}

static void test_board_forces(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.25, 0, G};
    pl_body b = board(1.5, 0.4, 0.16);
    double k = 0.25 * G, sigma = 1.5 / (0.4 * 0.16);
    pl_err err = {0};
    double f[3], d[3];
    /* spinning in place: no force on the centre, the closed-form torque */
    pl_body_state spin = {0, 0, 0.4, 0, 0, 2.5};
    assert_int_equal(pl_body_friction(&b, &pl, &spin, f, &err), PL_OK);
    tu_assert_close(f[0], 0, 1e-10);
    tu_assert_close(f[1], 0, 1e-10);
    tu_assert_close(f[2], -k * sigma * doc_rect(0.2, 0.08), 1e-9);
    tu_assert_close(pl_body_first_radial_moment(&b), sigma * doc_rect(0.2, 0.08), 1e-12);
    /* generic states: the instantaneous centre off the board, then on it */
    pl_body_state st[] = {{0, 0, 0.3, 0.8, -0.3, 1.5}, {0, 0, -0.9, 0.05, 0.02, 3.0}};
    double tol[] = {1e-6, 2e-4};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pl_body_friction(&b, &pl, &st[i], f, &err), PL_OK);
        board_sum(k, sigma, 0.2, 0.08, &st[i], 1200, d);
        double scale = fabs(d[0]) + fabs(d[1]) + fabs(d[2]) / 0.1;
        for (int j = 0; j < 3; j++)
            tu_assert_close(f[j], d[j], tol[i] * scale);
    }
}

/* Sec. 2, NO ANGULAR SPEED: two particles with no spin are one particle. */
static void test_pair_without_spin_is_a_particle(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.4, 12 * M_PI / 180, G};
    pl_body b = pair(1.0, 3.0, 0.25);
    pl_body_state s0 = {0, 0, 0.6, 0.7, 0.9, 0};
    pl_body_end e;
    pl_particle_end pe;
    pl_err err = {0};
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, 3, 0, 0, NULL, NULL, &e, &err), PL_OK);
    assert_int_equal(pl_roughplane_particle(&pl, 0.7, 0.9, 3, 0, 0, NULL, &pe, &err), PL_OK);
    assert_true(e.at_rest && pe.at_rest);
    tu_assert_close(e.t_stop, pe.t_stop, 1e-8);
    tu_assert_close(e.end.x, pe.x, 1e-9);
    tu_assert_close(e.end.w, pe.w, 1e-9);
    tu_assert_close(e.end.theta, 0.6, 1e-12);
}

/* Sec. 2, NO LINEAR VELOCITY with equal masses: the centre stays, the spin
 * stops at |w0| mu2 / (mu g sum m_i L_i) = |w0| L / (2 mu g). */
static void test_equal_pair_spins_down(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 0, G};
    pl_body b = pair(0.5, 0.5, 0.2);
    pl_body_state s0 = {0.1, -0.2, 0.3, 0, 0, 6.0};
    pl_body_end e;
    pl_err err = {0};
    double k = 0.3 * G;
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, 2, 0, 0, NULL, NULL, &e, &err), PL_OK);
    assert_true(e.at_rest);
    tu_assert_close(e.t_stop, 6.0 * 0.2 / (2 * k), 1e-8);
    tu_assert_close(e.end.x, 0.1, 1e-10);
    tu_assert_close(e.end.w, -0.2, 1e-10);
    tu_assert_close(e.end.theta, 0.3 + 36.0 * 0.2 / (4 * k), 1e-8);
}

/* A particle at rest sticks when its friction can hold the rest: started
 * turning about particle 1 slowly enough (w0^2 L <= mu g for equal masses),
 * the pair pivots about it, w falls at mu g / L and it stops at w0 L / (mu
 * g) having turned w0^2 L / (2 mu g). */
static void test_pair_pivots_on_a_stuck_particle(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 0, G};
    double L = 0.2, w0 = 3.0, k = 0.3 * G, th0 = 0.5;
    pl_body b = pair(1.0, 1.0, L);
    /* particle 1 at the centre + (L/2)(cos th0, sin th0) and at rest:
     * V = -w0 z x d1 */
    double d1x = L / 2 * cos(th0), d1y = L / 2 * sin(th0);
    pl_body_state s0 = {0, 0, th0, w0 * d1y, -w0 * d1x, w0};
    enum { N = 201 };
    double t[N];
    pl_body_state path[N];
    pl_body_end e;
    pl_err err = {0};
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, 0.5, 0, N, t, path, &e, &err), PL_OK);
    assert_true(e.at_rest);
    tu_assert_close(e.t_stop, w0 * L / k, 1e-8);
    tu_assert_close(e.end.theta, th0 + w0 * w0 * L / (2 * k), 1e-8);
    for (int i = 0; i < N; i++) {
        /* particle 1 does not move */
        double px = path[i].x + L / 2 * cos(path[i].theta);
        double py = path[i].w + L / 2 * sin(path[i].theta);
        tu_assert_close(px, d1x, 1e-9);
        tu_assert_close(py, d1y, 1e-9);
    }
}

/* Secs. 2-3: N particles placed as a pair are the pair. */
static void test_particles_as_a_pair(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 5 * M_PI / 180, G};
    pl_body p = pair(1.0, 3.0, 0.2), q;
    memset(&q, 0, sizeof q);
    q.kind = PL_BODY_PARTICLES;
    q.n = 2;
    q.m[0] = 1.0;
    q.m[1] = 3.0;
    q.px[0] = 0.4;           /* any origin: particle 1 on the +x side */
    q.py[0] = -0.1;
    q.px[1] = 0.2;
    q.py[1] = -0.1;
    pl_body_state s0 = {0, 0, 0.0, 0.8, 0.3, 7.0};
    pl_body_end a, c;
    pl_err err = {0};
    assert_int_equal(pl_roughplane_body(&p, &pl, &s0, 0, 2, 0, 0, NULL, NULL, &a, &err), PL_OK);
    assert_int_equal(pl_roughplane_body(&q, &pl, &s0, 0, 2, 0, 0, NULL, NULL, &c, &err), PL_OK);
    assert_true(a.at_rest && c.at_rest);
    tu_assert_close(c.t_stop, a.t_stop, 1e-12);
    tu_assert_close(c.end.x, a.end.x, 1e-12);
    tu_assert_close(c.end.theta, a.end.theta, 1e-12);
    /* three particles stop too, and the energy only falls */
    pl_body r = q;
    r.n = 3;
    r.m[2] = 2.0;
    r.px[2] = 0.3;
    r.py[2] = 0.1;
    enum { N = 101 };
    double t[N];
    pl_body_state path[N];
    assert_int_equal(pl_roughplane_body(&r, &pl, &s0, 0, 2, 0, N, t, path, &c, &err), PL_OK);
    assert_true(c.at_rest);
    double mu0, mu2, last = INFINITY;
    pl_body_moments(&r, &mu0, &mu2);
    for (int i = 0; i < N; i++) {
        double e = 0.5 * mu0 * (path[i].vx * path[i].vx + path[i].vw * path[i].vw) +
                   0.5 * mu2 * path[i].omega * path[i].omega + mu0 * G * sin(pl.phi) * path[i].w;
        assert_true(e <= last + 1e-12);
        last = e;
    }
}

/* The physics hack of secs. 4-6 in closed form: the centre stops at
 * |V0| / (mu g) after |V0|^2 / (2 mu g), the spin at |w0| / K after turning
 * w0^2 / (2 K), K = (3 mu g / 2)(L1^2 + L2^2) / (L1^3 + L2^3) = 3 mu g / L
 * for the rod and mu g (int sqrt) / (int r^2) for the board. */
static void test_hack_closed_forms(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.2, 0, G};
    double k = 0.2 * G;
    pl_body bodies[2] = {rod(1.0, 0.5), board(2.0, 0.3, 0.1)};
    double K[2] = {3 * k / 0.5,
                   k * doc_rect(0.15, 0.05) / (4.0 / 3.0 * 0.15 * 0.05 * (0.15 * 0.15 + 0.05 * 0.05))};
    for (int i = 0; i < 2; i++) {
        pl_body_state s0 = {0.1, 0.2, 0.3, 1.2, -0.5, -4.0};
        pl_body_end e;
        pl_err err = {0};
        enum { N = 51 };
        double t[N];
        pl_body_state path[N];
        assert_int_equal(pl_roughplane_body(&bodies[i], &pl, &s0, 1, 3, 0, N, t, path, &e, &err), PL_OK);
        double v0 = hypot(1.2, 0.5), tc = v0 / k, tw = 4.0 / K[i];
        assert_true(e.at_rest);
        tu_assert_close(e.t_stop, fmax(tc, tw), 1e-9);
        tu_assert_close(hypot(e.end.x - 0.1, e.end.w - 0.2), v0 * v0 / (2 * k), 1e-9);
        tu_assert_close(e.end.theta, 0.3 - 16.0 / (2 * K[i]), 1e-9);
        for (int j = 0; j < N; j++)
            if (t[j] < tw)
                tu_assert_close(path[j].omega, -4.0 + K[i] * t[j], 1e-9);
    }
}

/* Full equations, board spinning in place: the centre stays (the
 * rectangle is symmetric), the torque is constant, the spin stops at
 * |w0| / K as in the hack. */
static void test_board_spins_down(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.2, 0, G};
    pl_body b = board(2.0, 0.3, 0.1);
    double k = 0.2 * G;
    double K = k * doc_rect(0.15, 0.05) / (4.0 / 3.0 * 0.15 * 0.05 * (0.15 * 0.15 + 0.05 * 0.05));
    pl_body_state s0 = {0, 0, 0.2, 0, 0, 5.0};
    pl_body_end e;
    pl_err err = {0};
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, 3, 0, 0, NULL, NULL, &e, &err), PL_OK);
    assert_true(e.at_rest);
    tu_assert_close(e.t_stop, 5.0 / K, 1e-8);
    tu_assert_close(e.end.x, 0, 1e-10);
    tu_assert_close(e.end.w, 0, 1e-10);
    tu_assert_close(e.end.theta, 0.2 + 25.0 / (2 * K), 1e-8);
}

/* Viscous friction (secs. 2, 3): x = x0 + x0'/alpha (1 - exp(-alpha t)),
 * the same for theta, whatever the body; at rest once the speed is eps. */
static void test_viscous_closed_forms(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_VISCOUS, 1.5, 0, G};
    pl_body bodies[3] = {pair(1.0, 2.0, 0.3), rod(1.0, 0.4), board(1.0, 0.3, 0.2)};
    for (int i = 0; i < 3; i++) {
        pl_body_state s0 = {0.0, 0.0, 0.1, 0.6, -0.4, 3.0};
        enum { N = 41 };
        double t[N], mu0, mu2;
        pl_body_state path[N];
        pl_body_end e;
        pl_err err = {0};
        assert_int_equal(pl_roughplane_body(&bodies[i], &pl, &s0, 0, 20, 1e-3, N, t, path, &e, &err), PL_OK);
        pl_body_moments(&bodies[i], &mu0, &mu2);
        double sp0 = sqrt(0.36 + 0.16 + mu2 / mu0 * 9.0);
        assert_true(e.at_rest);
        tu_assert_close(e.t_stop, log(sp0 / 1e-3) / 1.5, 1e-9);
        for (int j = 0; j < N && t[j] < e.t_stop; j++) {
            double d = (1 - exp(-1.5 * t[j])) / 1.5;
            tu_assert_close(path[j].x, 0.6 * d, 1e-9);
            tu_assert_close(path[j].w, -0.4 * d, 1e-9);
            tu_assert_close(path[j].theta, 0.1 + 3.0 * d, 1e-9);
        }
        /* the hack is the same thing for viscous friction */
        pl_body_end h;
        assert_int_equal(pl_roughplane_body(&bodies[i], &pl, &s0, 1, 20, 1e-3, 0, NULL, NULL, &h, &err), PL_OK);
        tu_assert_close(h.t_stop, e.t_stop, 1e-10);
    }
}

/* Sec. 6: a box on an incline steeper than its friction angle comes back
 * down and keeps sliding, at g (sin phi - mu cos phi). */
static void test_box_slides_back(void **state)
{
    (void)state;
    double phi = 20 * M_PI / 180, mu = 0.2;
    pl_plane pl = {PL_FRICTION_ROUGH, mu, phi, G};
    pl_body b = board(3.0, 0.3, 0.2);
    b.kind = PL_BODY_BOX;
    b.height = 0.1;
    pl_body_state s0 = {0, 0, 0.4, 0, 1.0, 0};
    pl_body_end e;
    pl_err err = {0};
    double T = 2.0;
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, T, 0, 0, NULL, NULL, &e, &err), PL_OK);
    assert_false(e.at_rest);
    double up = G * sin(phi) + mu * G * cos(phi), down = G * sin(phi) - mu * G * cos(phi);
    double tturn = 1.0 / up;
    tu_assert_close(e.end.vw, -down * (T - tturn), 1e-7);
    tu_assert_close(e.end.w, 1.0 / (2 * up) - down * (T - tturn) * (T - tturn) / 2, 1e-7);
    tu_assert_close(e.end.theta, 0.4, 1e-12);
    /* and stays when mu >= tan(phi) */
    pl.mu = 0.5;
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, T, 0, 0, NULL, NULL, &e, &err), PL_OK);
    assert_true(e.at_rest);
}

static void test_invalid_bodies(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 0, G};
    pl_body_state s0 = {0, 0, 0, 1, 0, 0};
    pl_body_end e;
    pl_err err = {0};
    pl_body b = rod(-1, 0.3);
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, 1, 0, 0, NULL, NULL, &e, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "rod"));
    b = board(1, 0.3, 0);
    assert_int_equal(pl_body_check(&b, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "width"));
    b = pair(1, 0, 0.2);
    assert_int_equal(pl_body_check(&b, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "particle 2"));
    memset(&b, 0, sizeof b);
    b.kind = PL_BODY_PARTICLES;
    b.n = 3;
    b.m[0] = b.m[1] = b.m[2] = 1;
    assert_int_equal(pl_body_check(&b, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "one point"));
    b.n = 1;
    assert_int_equal(pl_body_check(&b, &err), PL_EINVAL);
    b = board(1, 0.3, 0.2);
    b.kind = PL_BODY_BOX;
    assert_int_equal(pl_body_check(&b, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "height"));
    b = rod(1, 0.3);
    pl.phi = M_PI / 2;
    assert_int_equal(pl_roughplane_body(&b, &pl, &s0, 0, 1, 0, 0, NULL, NULL, &e, &err), PL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rod_forces),
        cmocka_unit_test(test_board_closed_form_integral),
        cmocka_unit_test(test_board_forces),
        cmocka_unit_test(test_pair_without_spin_is_a_particle),
        cmocka_unit_test(test_equal_pair_spins_down),
        cmocka_unit_test(test_pair_pivots_on_a_stuck_particle),
        cmocka_unit_test(test_particles_as_a_pair),
        cmocka_unit_test(test_hack_closed_forms),
        cmocka_unit_test(test_board_spins_down),
        cmocka_unit_test(test_viscous_closed_forms),
        cmocka_unit_test(test_box_slides_back),
        cmocka_unit_test(test_invalid_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
