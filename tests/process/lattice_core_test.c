/* tests/process/lattice_core_test.c - what every room of the impact
 * search shares (process/lattice_core.h): time from theta both ways, the
 * angle between samples, the small Cholesky solves, the slots' array,
 * and the per-impact passes shared between threads visiting every slot
 * once, each range with a scratch buffer of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_core.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000 };

/* theta = 0.01 per sample from 0: every crossing is known */
static walk linear_walk(double *theta)
{
    for (size_t i = 0; i < N; i++)
        theta[i] = 0.01 * (double)i;
    return (walk){.theta = theta, .n = N, .release = 10, .end = 900, .W = 16};
}

static void time_of_theta_finds_the_crossing_both_ways(void **state)
{
    (void)state;
    double theta[N];
    walk wk = linear_walk(theta);
    tu_assert_close(pl_lat_time_of_theta(&wk, 2.555, 100, 1), 255.5, 1e-9);
    tu_assert_close(pl_lat_time_of_theta(&wk, 2.555, 800, -1), 255.5, 1e-9);
    /* from past the crossing forwards, or before the release: none */
    assert_true(isnan(pl_lat_time_of_theta(&wk, 2.555, 300, 1)));
    assert_true(isnan(pl_lat_time_of_theta(&wk, 0.05, 500, -1)));
    /* beyond the window's end */
    assert_true(isnan(pl_lat_time_of_theta(&wk, 9.5, 100, 1)));
}

static void theta_at_interpolates_and_holds_the_ends(void **state)
{
    (void)state;
    double theta[N];
    walk wk = linear_walk(theta);
    tu_assert_close(theta_at(&wk, 123.25), 1.2325, 1e-12);
    tu_assert_close(theta_at(&wk, -3), 0, 0);
    tu_assert_close(theta_at(&wk, 5000), theta[N - 1], 0);
}

static void cholesky_solves_a_known_system(void **state)
{
    (void)state;
    /* A = [4 2 0; 2 5 1; 0 1 3], x = (1, -2, 3): b = A x */
    double A[9] = {4, 2, 0, 2, 5, 1, 0, 1, 3}, b[3] = {0, -5, 7}, x[3];
    assert_int_equal(chol_factor(A, 3), 0);
    chol_solve_n(A, 3, b, x);
    tu_assert_close(x[0], 1, 1e-12);
    tu_assert_close(x[1], -2, 1e-12);
    tu_assert_close(x[2], 3, 1e-12);
    /* x' A^-1 x with A x = b: b' A^-1 b = b' x = 0 + 10 + 21 */
    tu_assert_close(chol_quad(A, 3, b), 31, 1e-10);
    double bad[4] = {1, 2, 2, 1};   /* eigenvalues 3 and -1 */
    assert_int_equal(chol_factor(bad, 2), -1);
}

static void push_keeps_every_slot_in_order(void **state)
{
    (void)state;
    slots s = {0};
    for (long k = 0; k < 1000; k++)
        assert_int_equal(pl_lat_push(&s, (slot){.k = k, .tc = 2.0 * k}), 0);
    assert_int_equal(s.n, 1000);
    for (long k = 0; k < 1000; k++) {
        assert_int_equal(s.v[k].k, k);
        tu_assert_close(s.v[k].tc, 2.0 * k, 0);
    }
    free(s.v);
}

typedef struct {
    int *seen;
    double *own[8];
} marks;

static void mark(walk *wk, size_t a, size_t b, void *p)
{
    marks *x = p;
    assert_non_null(wk->scratch);
    /* the whole scratch is this range's: 4 W + 64 doubles */
    for (size_t j = 0; j < 4 * wk->W + 64; j++)
        wk->scratch[j] = (double)a;
    for (size_t i = a; i < b; i++)
        x->seen[i]++;
    x->own[a * 8 / 4096] = wk->scratch;
}

static void for_slots_visits_every_slot_once_on_any_count(void **state)
{
    (void)state;
    enum { M = 4096 };
    double theta[N];
    walk wk = linear_walk(theta);
    wk.scratch = malloc((4 * wk.W + 64) * sizeof *wk.scratch);
    assert_non_null(wk.scratch);
    for (int threads = 0; threads <= 8; threads++) {
        marks x = {calloc(M, sizeof(int)), {0}};
        assert_non_null(x.seen);
        wk.threads = threads;
        pl_lat_for_slots(&wk, M, mark, &x);
        for (size_t i = 0; i < M; i++)
            assert_int_equal(x.seen[i], 1);
        /* the caller's buffer went to the first range only */
        assert_true(x.own[0] == wk.scratch);
        for (int i = 1; i < 8; i++)
            assert_true(x.own[i] != wk.scratch);
        free(x.seen);
    }
    free(wk.scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(time_of_theta_finds_the_crossing_both_ways),
        cmocka_unit_test(theta_at_interpolates_and_holds_the_ends),
        cmocka_unit_test(cholesky_solves_a_known_system),
        cmocka_unit_test(push_keeps_every_slot_in_order),
        cmocka_unit_test(for_slots_visits_every_slot_once_on_any_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
