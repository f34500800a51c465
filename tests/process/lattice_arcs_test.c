/* tests/process/lattice_arcs_test.c - one slot's step
 * (process/lattice_arcs.h) on arcs built exactly of the model, omega^2 a
 * quadratic in theta each side with one curvature: the fit recovers the
 * arcs, the equal areas put the instant at the sample boundary where the
 * step is, and locate() reaches it from 5 samples off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_arcs.h"
#include "tests/util/testutil.h"

#include <math.h>

enum { N = 1000, STEP = 500 };   /* the right arc from sample 501 on */

static double theta[N], om[N];

/* omega^2 = a + b x + c x^2, x = theta - theta[STEP] */
static const double AL = 100, BL = 40, AR = 81, BR = 30, C = -20;

static double arc(int side, double th)
{
    double x = th - 0.001 * STEP - 1e-7 * STEP * STEP;
    return sqrt((side ? AR : AL) + (side ? BR : BL) * x + C * x * x);
}

static walk model_walk(void)
{
    for (size_t k = 0; k < N; k++) {
        theta[k] = 0.001 * (double)k + 1e-7 * (double)k * (double)k;
        om[k] = arc(k > STEP, theta[k]);
    }
    return (walk){.om = om, .theta = theta, .n = N, .release = 0, .end = N, .G = 10, .W = 60};
}

static void equal_areas_find_the_step_between_its_samples(void **state)
{
    (void)state;
    walk wk = model_walk();
    step_fit f;
    assert_int_equal(pl_lat_fit_arcs(&wk, STEP, 60, NULL, &f), 0);
    /* sample 500 stands for [499.5, 500.5): the left arc's last */
    tu_assert_close(f.tc, STEP + 0.5, 1e-6);
    double th = theta[STEP] + 0.5 * (theta[STEP + 1] - theta[STEP]);
    tu_assert_close(f.wm, arc(0, th), 1e-9);
    tu_assert_close(f.wp, arc(1, th), 1e-9);
    assert_true(f.var_wm < 1e-9);   /* an exact fit: rounding only */
}

static void locate_settles_on_the_step(void **state)
{
    (void)state;
    walk wk = model_walk();
    step_fit f;
    assert_int_equal(pl_lat_locate(&wk, STEP - 5, 200, &f), 0);
    tu_assert_close(f.tc, STEP + 0.5, 1e-6);
    /* no step within a third of an interval: it wanders off */
    assert_int_equal(pl_lat_locate(&wk, 250, 200, &f), -1);
}

static void fit_arcs_at_cuts_the_window_at_the_ends(void **state)
{
    (void)state;
    walk wk = model_walk();
    arcs J;
    /* 500 samples each side are there: 60 used; the right arc exact */
    assert_int_equal(pl_lat_fit_arcs_at(&wk, STEP, 60, NULL, &J), 0);
    assert_int_equal(J.m, 120);
    tu_assert_close(J.p[2], AR, 1e-8);
    tu_assert_close(J.p[3], BR, 1e-6);
    tu_assert_close(J.p[4], C, 1e-4);
    /* 20 samples before the end: the right side keeps 9 */
    assert_int_equal(pl_lat_fit_arcs_at(&wk, N - 20, 60, NULL, &J), 0);
    assert_int_equal(J.m, 69);
    assert_int_equal(pl_lat_fit_arcs_at(&wk, N - 14, 60, NULL, &J), -1);
}

static void arc_window_keeps_the_neighbours_out(void **state)
{
    (void)state;
    walk wk = model_walk();
    assert_int_equal(pl_lat_arc_window(&wk, 200), 60);   /* the longest */
    assert_int_equal(pl_lat_arc_window(&wk, 60), 38);    /* 60 - 2 G - 2 */
    assert_int_equal(pl_lat_arc_window(&wk, 20), 4);     /* at least 4 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_areas_find_the_step_between_its_samples),
        cmocka_unit_test(locate_settles_on_the_step),
        cmocka_unit_test(fit_arcs_at_cuts_the_window_at_the_ends),
        cmocka_unit_test(arc_window_keeps_the_neighbours_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
