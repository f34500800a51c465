/* tests/process/lattice_eval_test.c - the impacts of the smoothed slots
 * (process/lattice_eval.h): each at the time its smoothed angle is
 * reached, omega- and omega+ from the tops either side (lows plus what
 * omega^2 gains to the landing), the first, with no top before it, from
 * the arcs at its instant; the intervals and the walk's figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_eval.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>

enum { N = 1500, M = 10 };

static void impacts_from_the_tops_and_the_arcs(void **state)
{
    (void)state;
    static double theta[N], om[N];
    for (size_t i = 0; i < N; i++) {
        theta[i] = 0.01 * (double)i;   /* 10 rad/s at 1 kHz */
        om[i] = 10;
    }
    double *scratch = malloc(400 * sizeof *scratch);
    assert_non_null(scratch);
    walk wk = {.om = om, .theta = theta, .n = N, .release = 0, .end = N, .G = 10, .W = 60,
               .rate = 1000, .delta = 1.0, .scratch = scratch, .threads = 1};
    slot v[M];
    double ths[M], vars[M], top[M], top_var[M], low[M], low_var[M], curv[M];
    for (size_t i = 0; i < M; i++) {
        v[i] = (slot){.k = (long)i, .tc = 100 + 100 * (double)i, .measured = 1,
                      .confirmed = i != 4};
        v[i].theta = theta_at(&wk, v[i].tc);
        ths[i] = v[i].theta + 0.005;   /* half a sample on */
        vars[i] = 1e-6;
        top[i] = 1.5 + (double)i;
        top_var[i] = low_var[i] = 0.01;
        low[i] = 100 + (double)i;
        curv[i] = 1;
    }
    tops tp = {top, top_var, low, low_var, curv, .A = 5, .B = 3};
    pl_impact imp[M];
    pl_lattice_stats st = {0};
    size_t k = pl_lat_collect(&wk, v, M, ths, vars, &v[0], &tp, imp, &st);
    assert_int_equal(k, M);
    assert_int_equal(st.expected, M);
    assert_int_equal(st.confirmed, M - 1);
    tu_assert_close(st.drift_rad, 0.005, 1e-12);
    /* the first: no top before it, the arcs (a flat 10 rad/s) */
    tu_assert_close(imp[0].omega_minus, 10, 1e-9);
    tu_assert_close(imp[0].ratio, 1, 1e-9);
    for (size_t i = 0; i < M; i++) {
        tu_assert_close(imp[i].t_s, (100.5 + 100 * (double)i) / 1000, 1e-12);
        assert_int_equal(imp[i].confirmed, i != 4);
        if (i + 1 < M)
            tu_assert_close(imp[i].interval_s, 0.1, 1e-12);
        else
            assert_true(isnan(imp[i].interval_s));
        if (i == 0)
            continue;
        double wm = sqrt(low[i - 1] + 5), wp = sqrt(low[i] + 3);
        tu_assert_close(imp[i].omega_minus, wm, 1e-12);
        tu_assert_close(imp[i].omega_plus, wp, 1e-12);
        tu_assert_close(imp[i].ratio, wp / wm, 1e-12);
        /* the ratio's error from the two lows' */
        double se = 0.5 * wp / wm * sqrt(0.01 / pow(wp, 4) + 0.01 / pow(wm, 4));
        tu_assert_close(imp[i].ratio_se, se, 1e-12);
        /* the time's from the angle's through the tops' mean speed */
        tu_assert_close(imp[i].t_sd_s, 1e-3 / (0.5 * (wm + wp)), 1e-12);
    }
    free(scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(impacts_from_the_tops_and_the_arcs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
