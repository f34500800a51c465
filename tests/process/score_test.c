/* tests/process/score_test.c - the C scorer (tests/util/score.c) gives
 * what ../shared/foreign-runs/score.py gives: an example with a double
 * detection, a true impact whose nearest detection is taken, one just
 * over 2 ms and a false alarm, checked against numpy's figures for the
 * same numbers; and the pass rule at its edges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/util/score.h"
#include "tests/util/testutil.h"

#include <math.h>

/* The numbers below went through score.py's matching loop with numpy
 * 1.24: matched detections [0, 1, 2, 4, 6, 7], recall 0.6666666666666666,
 * precision 0.6666666666666666, median dt 0.00029999999999998084, bias
 * 0.04138888888888769, sd 0.08934129663235708, limit 0.09118357904496166. */
static void matches_like_score_py(void **state)
{
    (void)state;
    const double tt[] = {0.100, 0.200, 0.2015, 0.300, 0.400, 0.500, 0.600, 0.6005, 0.700};
    const double tr[] = {0.99, 0.98, 0.985, 0.99, 0.97, 0.99, 0.98, 0.98, 0.99};
    const double dt[] = {0.1001, 0.2003, 0.2004, 0.3020, 0.3995, 0.45, 0.50001, 0.6003, 0.7021};
    const double dr[] = {0.9905, 0.979, 0.982, 0.99, 0.972, 0.9, 0.9891, 0.9795, 0.99};
    tu_score s;
    assert_int_equal(tu_score_run(tt, tr, 9, dt, dr, 9, 100.05, 100.0, &s), 0);
    assert_int_equal(s.n_matched, 6);
    tu_assert_close(s.recall, 0.6666666666666666, 1e-15);
    tu_assert_close(s.precision, 0.6666666666666666, 1e-15);
    tu_assert_close(s.dt_med_s, 0.00029999999999998084, 1e-15);
    tu_assert_close(s.loss_bias, 0.04138888888888769, 1e-13);
    tu_assert_close(s.loss_sd, 0.08934129663235708, 1e-13);
    tu_assert_close(s.bias_limit, 0.09118357904496166, 1e-13);
    tu_assert_close(s.lp_err, 5e-4, 1e-12);
    assert_false(s.ok_py);
    assert_false(s.ok);
}

/* The pass rule: a perfect run passes; a bias of 4 % fails at small
 * spread and passes when 2.5 standard errors exceed it; L_p off by more
 * than 0.1 % fails; a median time error over 0.2 ms fails ok only. */
static void pass_rule_at_its_edges(void **state)
{
    (void)state;
    enum { M = 400 };
    static double tt[M], tr[M], dt[M], dr[M];
    tu_score s;
    for (int i = 0; i < M; i++) {
        tt[i] = dt[i] = 0.5 + 0.05 * i;
        tr[i] = dr[i] = 0.99;
    }
    assert_int_equal(tu_score_run(tt, tr, M, dt, dr, M, 200.0, 200.0, &s), 0);
    assert_true(s.ok && s.ok_py && s.recall == 1 && s.precision == 1);
    assert_int_equal(tu_score_run(tt, tr, M, dt, dr, M, 200.3, 200.0, &s), 0);
    assert_false(s.ok_py);
    for (int i = 0; i < M; i++)
        dr[i] = 1 - 0.01 * 1.04;             /* loss 4 % high everywhere */
    assert_int_equal(tu_score_run(tt, tr, M, dt, dr, M, 200.0, 200.0, &s), 0);
    tu_assert_close(s.loss_bias, 0.04, 1e-9);
    assert_false(s.ok_py);
    for (int i = 0; i < M; i++)              /* +-100 % spread: se 0.05 */
        dr[i] = 1 - 0.01 * (1.04 + (i % 2 ? 1.0 : -1.0));
    assert_int_equal(tu_score_run(tt, tr, M, dt, dr, M, 200.0, 200.0, &s), 0);
    tu_assert_close(s.loss_sd, 1.0, 1e-9);
    tu_assert_close(s.bias_limit, 2.5 / sqrt(M), 1e-12);
    assert_true(s.ok_py && s.ok);
    for (int i = 0; i < M; i++) {
        dt[i] = tt[i] + 0.00025;
        dr[i] = tr[i];
    }
    assert_int_equal(tu_score_run(tt, tr, M, dt, dr, M, 200.0, 200.0, &s), 0);
    assert_true(s.ok_py);
    assert_false(s.ok);
}

/* No detections: score.py's placeholders, and a fail. */
static void nothing_detected(void **state)
{
    (void)state;
    const double tt[] = {1.0, 2.0}, tr[] = {0.99, 0.99};
    tu_score s;
    assert_int_equal(tu_score_run(tt, tr, 2, NULL, NULL, 0, 10.0, 20.0, &s), 0);
    assert_true(s.recall == 0 && s.precision == 0 && s.n_matched == 0);
    tu_assert_close(s.dt_med_s, 0.099, 0);
    tu_assert_close(s.loss_bias, 9.9, 0);
    tu_assert_close(s.lp_err, 0.5, 1e-15);
    assert_false(s.ok_py);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_like_score_py),
        cmocka_unit_test(pass_rule_at_its_edges),
        cmocka_unit_test(nothing_detected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
