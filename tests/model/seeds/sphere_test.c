/* tests/model/seeds/sphere_test.c - seed 004's viscous sphere: eq. (16) by hand,
 * the document's own estimate for steel, the restitution link both ways,
 * the rolling sphere against its closed forms, and bad parameters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/seeds/sphere.h"
#include "tests/util/testutil.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <string.h>

static pl_sphere steel(void)
{
    pl_sphere s = {.radius = 0.01, .young = 2e11, .poisson = 0.3,
                   .eta1 = 1e5, .eta2 = 2e5, .density = 7800};
    return s;
}

static void test_krol_by_hand(void **state)
{
    (void)state;
    pl_sphere s = steel();
    /* (1/3) (3 eta2 - eta1)^2 / (3 eta2 + 2 eta1) x (1 - nu^2)(1 - 2 nu) / (Y nu^2)
     * = (1/3) (5e5)^2 / 8e5 x 0.91 x 0.4 / (2e11 x 0.09) */
    double want = (1.0 / 3.0) * 2.5e11 / 8e5 * 0.91 * 0.4 / (2e11 * 0.09);
    tu_assert_close(pl_sphere_krol(&s), want, 1e-15 * want + 1e-22);
    /* eta1 = 3 eta2: the bracket vanishes, no rolling friction */
    s.eta1 = 3 * s.eta2;
    tu_assert_close(pl_sphere_krol(&s), 0, 1e-30);
}

/* The document: 1 - eps = 0.1 for steel particles of 10 g at 1 m/s gives
 * rho^(2/5) about 1e5 and k_rol about 1e-6 s. */
static void test_document_estimate(void **state)
{
    (void)state;
    pl_sphere s = steel();
    s.radius = cbrt(3 * 1e-2 / (4 * M_PI * 7800));   /* m = 10 g */
    double r25 = pow(pl_sphere_rho(&s), 0.4);
    assert_true(r25 > 0.5e5 && r25 < 2e5);
    double k = pl_sphere_krol_from_restitution(&s, 0.9, 1.0);
    print_message("steel, 10 g: rho^(2/5) = %.3g, k_rol = %.3g s (document: 1e5, 1e-6 s)\n", r25, k);
    assert_true(k > 0.5e-6 && k < 2e-6);
    /* and back: a sphere with that k_rol has eps = 0.9 at 1 m/s; at 8 m/s
     * 1 - eps grows as v^(1/5) */
    double eta2 = 1e5, nu = s.poisson;
    double bracket = (1 - nu * nu) * (1 - 2 * nu) / (s.young * nu * nu);
    /* with eta1 = 0: k = (1/3) 9 eta2^2 / (3 eta2) bracket = eta2 bracket */
    s.eta1 = 0;
    s.eta2 = k / bracket;
    (void)eta2;
    tu_assert_close(pl_sphere_krol(&s), k, 1e-12 * k);
    tu_assert_close(pl_sphere_restitution(&s, 1.0), 0.9, 1e-12);
    tu_assert_close(1 - pl_sphere_restitution(&s, 32.0), 0.1 * 2.0, 1e-12);
}

/* v(t) = v_t + (v0 - v_t) exp(-t / tau), x(t) its integral, with
 * tau = 7 R / (5 g k_rol cos phi) and v_t = R tan(phi) / k_rol. */
static void test_rolling_closed_forms(void **state)
{
    (void)state;
    gsl_set_error_handler_off();
    pl_sphere s = steel();
    s.eta1 = 0;
    s.eta2 = 1e9;          /* a very lossy material, tau of about a second */
    double phi = 2 * M_PI / 180, v0 = 0.3, k = pl_sphere_krol(&s);
    double tau = 7 * s.radius / (5 * 9.80665 * k * cos(phi)), vt = s.radius * tan(phi) / k;
    enum { N = 11 };
    double t[N], v[N], x[N];
    pl_sphere_roll r;
    pl_err err = {0};
    assert_int_equal(pl_sphere_roll_run(&s, phi, v0, 5 * tau, N, t, v, x, &r, &err), PL_OK);
    tu_assert_close(r.tau, tau, 1e-12 * tau);
    tu_assert_close(r.v_terminal, vt, 1e-12 * vt);
    for (int i = 0; i < N; i++) {
        double e = exp(-t[i] / tau);
        tu_assert_close(v[i], vt + (v0 - vt) * e, 1e-8 * fmax(vt, v0));
        tu_assert_close(x[i], vt * t[i] + (v0 - vt) * tau * (1 - e), 1e-8 * vt * tau);
    }
    /* flat plane: the sphere slows exponentially and rolls v0 tau in all */
    assert_int_equal(pl_sphere_roll_run(&s, 0, v0, 40 * tau, 2, NULL, NULL, NULL, &r, &err), PL_OK);
    tu_assert_close(r.v_terminal, 0, 0);
    tu_assert_close(r.x_end, v0 * r.tau, 1e-8 * v0 * r.tau);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    pl_err err = {0};
    pl_sphere s = steel();
    s.poisson = 0;
    assert_int_equal(pl_sphere_check(&s, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "Poisson"));
    s = steel();
    s.poisson = 0.5;
    assert_int_equal(pl_sphere_check(&s, &err), PL_EINVAL);
    s = steel();
    s.eta1 = -1;
    assert_int_equal(pl_sphere_check(&s, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "viscous"));
    s = steel();
    s.radius = 0;
    assert_int_equal(pl_sphere_check(&s, &err), PL_EINVAL);
    pl_sphere_roll r;
    s = steel();
    assert_int_equal(pl_sphere_roll_run(&s, 2.0, 0, 1, 0, NULL, NULL, NULL, &r, &err), PL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_krol_by_hand),
        cmocka_unit_test(test_document_estimate),
        cmocka_unit_test(test_rolling_closed_forms),
        cmocka_unit_test(test_bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
