/* tests/process/robust_test.c - the median and the robust spreads every
 * noise threshold of the processing rests on, and the k-th smallest:
 * against a sort on random data of odd and even length and with ties,
 * and the spread's Gaussian scale. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/robust.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void median_equals_the_sorted_middle(void **state)
{
    (void)state;
    unsigned long rnd = 99;
    double v[1001], w[1001];
    for (size_t m = 1; m <= 1001; m += 37) {
        for (int ties = 0; ties < 2; ties++) {
            for (size_t i = 0; i < m; i++)
                v[i] = ties ? floor(8 * tu_uniform(&rnd)) : tu_uniform(&rnd) - 0.5;
            memcpy(w, v, m * sizeof *v);
            qsort(w, m, sizeof *w, cmp);
            double want = m % 2 ? w[m / 2] : 0.5 * (w[m / 2 - 1] + w[m / 2]);
            assert_true(pl_median(v, m) == want);
        }
    }
    double two[2] = {3, 1};
    assert_true(pl_median(two, 2) == 2);
    assert_true(isnan(pl_median(two, 0)));
}

/* Every rank, on random data with and without ties: the value a sort
 * puts there (the quantiles the front end takes, pl_select_kth()). */
static void kth_equals_the_sorted_kth(void **state)
{
    (void)state;
    unsigned long rnd = 7;
    double v[129], w[129];
    for (size_t m = 1; m <= 129; m += 16)
        for (int ties = 0; ties < 2; ties++)
            for (size_t k = 0; k < m; k++) {
                for (size_t i = 0; i < m; i++)
                    v[i] = ties ? floor(5 * tu_uniform(&rnd)) : tu_uniform(&rnd);
                memcpy(w, v, m * sizeof *v);
                qsort(w, m, sizeof *w, cmp);
                assert_true(pl_select_kth(v, m, k) == w[k]);
            }
}

static void robust_sd_is_the_gaussian_scale(void **state)
{
    (void)state;
    enum { M = 20001 };
    double *v = malloc(M * sizeof *v);
    unsigned long rnd = 5;
    for (size_t i = 0; i < M; i++) {
        /* Box-Muller: standard normal, sd 2, plus 1 % wild outliers */
        double u1 = tu_uniform(&rnd), u2 = tu_uniform(&rnd);
        v[i] = 2 * sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
        if (i % 100 == 0)
            v[i] = 1e6;
    }
    tu_assert_close(pl_robust_sd(v, M), 2.0, 0.06);
    assert_true(isnan(pl_robust_sd(v, 7)));
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_equals_the_sorted_middle),
        cmocka_unit_test(kth_equals_the_sorted_kth),
        cmocka_unit_test(robust_sd_is_the_gaussian_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
