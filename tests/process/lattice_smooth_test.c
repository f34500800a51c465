/* tests/process/lattice_smooth_test.c - the slots' angles smoothed
 * along the lattice (process/lattice_smooth.h): on a lattice with a slow
 * drift and alternating errors the smoothed angles lie on the line, an
 * angle 50 times its error off is dropped and placed by its neighbours,
 * a slot never measured is placed too; and a ringing onset a period off
 * snaps back to the lattice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_smooth.h"
#include "tests/util/testutil.h"

#include <math.h>

enum { M = 100 };
static const double DELTA = 2 * M_PI / 30, E = 1e-4;

/* the true angle of slot k: the lattice, a phase and a slow drift */
static double truth(long k)
{
    return 0.3 + (double)k * DELTA + 2e-6 * (double)k;
}

static void smoothing_drops_the_outlier_and_follows_the_line(void **state)
{
    (void)state;
    slot v[M];
    double th[M], var[M];
    for (long k = 0; k < M; k++)
        v[k] = (slot){.k = k, .theta = truth(k) + (k % 2 ? E : -E), .var_theta = E * E,
                      .measured = 1, .confirmed = 1};
    v[50].theta += 50 * E;            /* a step located on a spike */
    v[70].measured = 0;               /* a slot the lattice demands */
    v[70].theta = truth(70) + 0.02;   /* the walk's guess */
    v[70].var_theta = INFINITY;
    pl_lat_smooth_phase(v, M, 15, DELTA, th, var);
    assert_int_equal(v[50].dropped, 1);
    assert_int_equal(v[50].measured, 0);
    for (long k = 0; k < M; k++) {
        if (k != 50)
            assert_int_equal(v[k].dropped, 0);
        /* a line through +-E errors: within E of the truth, and its
         * variance a small part of one slot's */
        tu_assert_close(th[k], truth(k), E);
        assert_true(var[k] > 0 && var[k] < E * E);
    }
}

static void snap_moves_an_onset_by_whole_periods(void **state)
{
    (void)state;
    enum { N = 2000 };
    static double theta[N];
    for (size_t i = 0; i < N; i++)
        theta[i] = 0.001 * (double)i;
    walk wk = {.theta = theta, .n = N, .release = 0, .end = N,
               .ring = {.w = 2 * M_PI / 20}};   /* a period of 20 samples */
    slot v[3] = {{.k = 0, .tc = 500, .measured = 1},
                 {.k = 1, .tc = 1041, .measured = 1},   /* two periods late */
                 {.k = 2, .tc = 1500, .measured = 1}};
    double ths[3] = {0.5005, 1.0, 1.5};   /* the lattice says 500.5, 1000, 1500 */
    assert_int_equal(pl_lat_snap_cycles(&wk, v, 3, ths), 1);
    tu_assert_close(v[0].tc, 500, 0);   /* within half a period: stays */
    tu_assert_close(v[1].tc, 1001, 1e-9);
    tu_assert_close(v[1].theta, 1.001, 1e-12);
    tu_assert_close(v[2].tc, 1500, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(smoothing_drops_the_outlier_and_follows_the_line),
        cmocka_unit_test(snap_moves_an_onset_by_whole_periods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
