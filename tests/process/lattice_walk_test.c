/* tests/process/lattice_walk_test.c - the step statistic D that seeds
 * and confirms the walk (process/lattice_walk.h): on a line with a step
 * D is the step wherever neither window holds it, a parabola's D is one
 * small constant (the arcs between impacts raise no peak), and on white noise D's spread
 * is the noise times pl_lat_d_noise_gain(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_walk.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>

enum { N = 4000, G = 10, W = 50, STEP_AT = 2000 };

static void d_is_the_step_where_no_window_holds_it(void **state)
{
    (void)state;
    static double y[N], d[N], rss[N];
    for (size_t t = 0; t < N; t++)
        y[t] = 1 + 0.01 * (double)t - (t >= STEP_AT ? 0.5 : 0);
    size_t from = G + W + 1, to = N - G - W - 1;
    pl_lat_step_statistic(y, G, W, from, to, d, rss);
    for (size_t k = from; k < to; k++) {
        /* the left window [k-G-W, k-G) before the step and the right one
         * [k+G, k+G+W) after it: exactly the step */
        int straddles = k + G >= STEP_AT && k < STEP_AT + G + 1;
        int apart = k + G + W <= STEP_AT || k >= STEP_AT + G + W;
        if (straddles) {
            tu_assert_close(d[k - from], 0.5, 1e-9);
            tu_assert_close(rss[k - from], 0, 1e-8);
        } else if (apart) {
            tu_assert_close(d[k - from], 0, 1e-9);
        }
    }
}

/* D of c t^2 is c times the two line fits of u^2 at u = 0, over offsets
 * -60..-11 (-1052) and 10..59 (-982): -70 c at every k.  The arcs give D
 * a constant, a part in a thousand of a step here: no peak. */
static void a_parabolas_d_is_flat(void **state)
{
    (void)state;
    static double y[N], d[N];
    for (size_t t = 0; t < N; t++)
        y[t] = 3 + 0.2 * (double)t - 1e-5 * (double)t * (double)t;
    size_t from = G + W + 1, to = N - G - W - 1;
    pl_lat_step_statistic(y, G, W, from, to, d, NULL);
    /* |y| reaches 250: rounding of the sliding sums, resynced */
    for (size_t k = from; k < to; k++)
        tu_assert_close(d[k - from], -70 * -1e-5, 1e-8);
}

static void d_noise_is_the_gain_times_the_noise(void **state)
{
    (void)state;
    enum { M = 400000 };
    double *y = malloc(M * sizeof *y), *d = malloc(M * sizeof *d);
    assert_true(y && d);
    unsigned long rnd = 7;
    for (size_t t = 0; t < M; t++)
        y[t] = 0.3 * tu_gauss(&rnd);
    size_t from = G + W + 1, to = M - G - W - 1;
    pl_lat_step_statistic(y, G, W, from, to, d, NULL);
    double s2 = 0;
    for (size_t k = from; k < to; k++)
        s2 += d[k - from] * d[k - from];
    double sd = sqrt(s2 / (double)(to - from)), gain = pl_lat_d_noise_gain(G, W);
    /* two line extrapolations over 50 samples each, 20 samples out: the
     * gain is sqrt(2 (1/w + x0^2 / S_tt)), x0 = 35.5: 0.5311 */
    tu_assert_close(gain, 0.5311, 1e-4);
    /* neighbouring D's share their windows: 400 000 of them are worth a
     * few thousand independent ones, so a few per cent */
    tu_assert_close(sd / (0.3 * gain), 1.0, 0.04);
    free(y);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(d_is_the_step_where_no_window_holds_it),
        cmocka_unit_test(a_parabolas_d_is_flat),
        cmocka_unit_test(d_noise_is_the_gain_times_the_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
