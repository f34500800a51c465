/* tests/model/seeds/roughplane_test.c - seed 003 section 1, the particle, against
 * the document's closed forms: rough friction on a flat plane stops it at
 * |V0|/alpha after |V0|^2/(2 alpha); viscous friction follows
 * V0 exp(-alpha t) and "stops" (|V| = eps) at ln(|V0|/eps)/alpha; on an
 * incline, sent straight up, it stops at w0'/(alpha + g sin phi) and slides
 * back only if mu < tan(phi), with w' = (alpha - g sin phi)(t - t0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/seeds/roughplane.h"
#include "tests/util/testutil.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

#define G 9.80665

static void test_rough_flat(void **state)
{
    (void)state;
    gsl_set_error_handler_off();
    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 0, G};
    double vx = 1.2, vw = -0.5, v0 = hypot(vx, vw), alpha = 0.3 * G;
    enum { N = 101 };
    pl_particle_sample sm[N];
    pl_particle_end e;
    pl_err err = {0};
    assert_int_equal(pl_roughplane_particle(&pl, vx, vw, 1.0, 0, N, sm, &e, &err), PL_OK);
    assert_true(e.at_rest);
    tu_assert_close(e.t_stop, v0 / alpha, 1e-9);
    tu_assert_close(hypot(e.x, e.w), v0 * v0 / (2 * alpha), 1e-9);
    tu_assert_close(e.x / e.w, vx / vw, 1e-9);   /* a straight line */
    /* X(t) = (t - alpha t^2 / (2 |V0|)) V0 while it moves */
    for (int i = 0; i < N && sm[i].t < v0 / alpha; i += 5) {
        double t = sm[i].t;
        tu_assert_close(sm[i].x, (t - alpha * t * t / (2 * v0)) * vx, 1e-9);
        tu_assert_close(sm[i].vx, (1 - alpha * t / v0) * vx, 1e-9);
    }
    tu_assert_close(sm[N - 1].x, e.x, 0);
}

static void test_viscous_flat(void **state)
{
    (void)state;
    pl_plane pl = {PL_FRICTION_VISCOUS, 2.0, 0, G};   /* alpha = 2 / s */
    double vx = 0.6, vw = 0.8, eps = 1e-3;
    enum { N = 51 };
    pl_particle_sample sm[N];
    pl_particle_end e;
    pl_err err = {0};
    assert_int_equal(pl_roughplane_particle(&pl, vx, vw, 10, eps, N, sm, &e, &err), PL_OK);
    assert_true(e.at_rest);
    tu_assert_close(e.t_stop, log(1.0 / eps) / 2.0, 1e-9);
    tu_assert_close(hypot(e.x, e.w), (1.0 - eps) / 2.0, 1e-9);
    for (int i = 0; i < N && sm[i].t < e.t_stop; i++)
        tu_assert_close(sm[i].w, (1 - exp(-2.0 * sm[i].t)) / 2.0 * vw, 1e-9);
    /* eps = 0: never at rest; it travels |V0| / alpha in the limit */
    assert_int_equal(pl_roughplane_particle(&pl, vx, vw, 20, 0, 0, NULL, &e, &err), PL_OK);
    assert_false(e.at_rest);
    tu_assert_close(hypot(e.x, e.w), 0.5, 1e-9);
}

/* Straight up the slope: up to t0, then it stays (mu >= tan phi) or slides
 * back down with w' = (alpha - g sin phi)(t - t0). */
static void test_incline(void **state)
{
    (void)state;
    double phi = 20 * M_PI / 180, w0 = 2.0;
    pl_particle_end e;
    pl_err err = {0};
    /* mu = 0.5 > tan 20 deg = 0.364: it stays where it stops */
    pl_plane hold = {PL_FRICTION_ROUGH, 0.5, phi, G};
    double a = 0.5 * G * cos(phi), b = G * sin(phi), t0 = w0 / (a + b);
    assert_int_equal(pl_roughplane_particle(&hold, 0, w0, 3, 0, 0, NULL, &e, &err), PL_OK);
    assert_true(e.at_rest);
    tu_assert_close(e.t_stop, t0, 1e-9);
    tu_assert_close(e.w, w0 * t0 / 2, 1e-9);
    tu_assert_close(e.x, 0, 1e-12);
    /* mu = 0.2 < tan phi: it goes back down */
    pl_plane slide = {PL_FRICTION_ROUGH, 0.2, phi, G};
    a = 0.2 * G * cos(phi);
    t0 = w0 / (a + b);
    double T = t0 + 1.5;
    assert_int_equal(pl_roughplane_particle(&slide, 0, w0, T, 0, 0, NULL, &e, &err), PL_OK);
    assert_false(e.at_rest);
    tu_assert_close(e.vw, (a - b) * (T - t0), 1e-8);
    double wtop = w0 * t0 / 2;
    tu_assert_close(e.w, wtop + 0.5 * (a - b) * (T - t0) * (T - t0), 1e-8);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    pl_particle_end e;
    pl_err err = {0};
    pl_plane bad = {PL_FRICTION_ROUGH, -1, 0, G};
    assert_int_equal(pl_roughplane_particle(&bad, 1, 0, 1, 0, 0, NULL, &e, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "mu"));
    pl_plane steep = {PL_FRICTION_ROUGH, 0.1, M_PI / 2, G};
    assert_int_equal(pl_roughplane_particle(&steep, 1, 0, 1, 0, 0, NULL, &e, &err), PL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rough_flat),
        cmocka_unit_test(test_viscous_flat),
        cmocka_unit_test(test_incline),
        cmocka_unit_test(test_bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
