/* tests/process/lattice_settle_test.c - the slot past the last
 * (process/lattice_settle.h): a step 24 samples before the data end is
 * measured to its noise and confirmed, where the walk's D could not be
 * formed; without a step there is none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_settle.h"
#include "tests/util/testutil.h"

#include <math.h>

enum { N = 600, G = 5, W = 60 };
static const double TP = 570.4, SD = 1e-3;

/* a line each side of TP with one curvature, a step D down at TP */
static walk end_walk(double *om, double D)
{
    unsigned long rnd = 11;
    for (size_t i = 0; i < N; i++) {
        double u = ((double)i - TP) / W;
        om[i] = (i < TP ? 10 + 0.5 * u : 10 - D + 0.3 * u) + 0.2 * u * u + SD * tu_gauss(&rnd);
    }
    return (walk){.om = om, .n = N, .release = 0, .end = N, .G = G, .W = W};
}

static void the_last_step_is_measured_to_its_noise(void **state)
{
    (void)state;
    double om[N];
    walk wk = end_walk(om, 0.05);
    slot s;
    assert_int_equal(pl_lat_end_slot(&wk, TP, NAN, 0, 42, 7.5, &s), 0);
    assert_int_equal(s.confirmed, 1);
    assert_int_equal(s.k, 42);
    tu_assert_close(s.tc, TP, 0);
    tu_assert_close(s.theta, 7.5, 0);
    assert_true(isinf(s.var_theta));   /* placed by the lattice */
    /* 60 samples before, 24 after: D's error about 3e-4 */
    tu_assert_close(s.step, 0.05, 1.5e-3);
    assert_true(s.z > 50);
    assert_true(s.ring_amp == 0);      /* no ringing in the run */
}

static void no_step_no_slot(void **state)
{
    (void)state;
    double om[N];
    walk wk = end_walk(om, 0);
    slot s;
    assert_int_equal(pl_lat_end_slot(&wk, TP, NAN, 0, 42, 7.5, &s), -1);
    assert_true(s.z < 2.5);
    /* too near the end for the arcs: not tried */
    assert_int_equal(pl_lat_end_slot(&wk, N - 8, NAN, 0, 42, 7.5, &s), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_last_step_is_measured_to_its_noise),
        cmocka_unit_test(no_step_no_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
