/* tests/process/lattice_tops_test.c - the arcs' tops
 * (process/lattice_tops.h): a contact phase's omega^2 in theta, the form
 * (2.1) gives it, yields its top, its least speed and curvature exactly
 * on a window lopsided about the top, and the line through consecutive
 * tops' speeds gives back the ramp's slope and the ratio a rolling
 * prism's tops were made with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_tops.h"
#include "tests/util/testutil.h"

#include <math.h>

static void a_phases_arc_gives_its_top(void **state)
{
    (void)state;
    enum { N = 500 };
    double theta[N], om[N];
    for (size_t k = 0; k < N; k++) {
        theta[k] = 0.002 * (double)k + 1e-6 * (double)k * (double)k;
        /* (2.1): omega^2 = w^2 + K (1 - cos psi), the top at 0.6, w^2 = 4,
         * K = 50 */
        om[k] = sqrt(4.0 + 50 * (1 - cos(theta[k] - 0.6)));
    }
    walk wk = {.om = om, .theta = theta, .n = N, .release = 0, .end = N};
    arc_top at;
    /* theta 0.21 to 0.96: the top 0.375 rad from the window's middle,
     * where a parabola's vertex lies 6.3e-5 rad early; beyond 0.2 rad
     * from the middle the fit's sines are libm's, below its series */
    double top = pl_lat_arc_top(&wk, 100, 400, &at);
    tu_assert_close(top, 0.6, 1e-10);
    tu_assert_close(at.raw, 0.6, 1e-10);
    tu_assert_close(at.low, 4.0, 1e-10);
    tu_assert_close(at.curv, 25, 1e-8);   /* K / 2 */
    assert_true(at.top_var >= 0 && at.top_var < 1e-20);   /* an exact fit */
    assert_true(at.curv_var >= 0 && at.curv_var < 1e-16);
    /* the top outside the window: none, though the stationary point is
     * known */
    assert_true(isnan(pl_lat_arc_top(&wk, 300, 450, &at)));
    tu_assert_close(at.raw, 0.6, 1e-8);
    /* a peak (a landing between two phases): its place, curv < 0 */
    for (size_t k = 0; k < N; k++)
        om[k] = sqrt(60.0 - 50 * (1 - cos(theta[k] - 0.6)));
    assert_true(isnan(pl_lat_arc_top(&wk, 100, 400, &at)));
    tu_assert_close(at.raw, 0.6, 1e-10);
    assert_true(at.curv < 0);
}

static void the_tops_line_gives_beta_and_r(void **state)
{
    (void)state;
    enum { M = 20 };
    const double delta = 2 * M_PI / 30, beta = 0.01, r = 0.95, K = 50;
    double a = delta / 2, r2 = r * r, top[M], low[M];
    /* w'^2 = r^2 w^2 + K [(r^2 - 1)(1 - cos a cos b) + (r^2 + 1) sin a sin b] */
    double gain = K * ((r2 - 1) * (1 - cos(a) * cos(beta)) + (r2 + 1) * sin(a) * sin(beta));
    low[0] = 1.0;
    for (size_t i = 0; i < M; i++) {
        top[i] = 0.1 + (double)i * delta;
        if (i > 0)
            low[i] = r2 * low[i - 1] + gain;
    }
    energy e;
    assert_int_equal(pl_lat_energy_fit(top, low, NULL, M, K, delta, 1.0, &e), 0);
    tu_assert_close(e.beta, beta, 1e-9);
    tu_assert_close(e.r, r, 1e-12);
    /* a calibration 1 % long: the intercept in its square, beta the same */
    for (size_t i = 0; i < M; i++)
        low[i] *= 1.01 * 1.01;
    assert_int_equal(pl_lat_energy_fit(top, low, NULL, M, K, delta, 1.01, &e), 0);
    tu_assert_close(e.beta, beta, 1e-9);
    /* fewer than 8 pairs: no line */
    for (size_t i = 0; i < M; i += 2)
        top[i] = NAN;
    assert_int_equal(pl_lat_energy_fit(top, low, NULL, M, K, delta, 1.0, &e), -1);
}

/* The line with the variances the phases' fits give: a pair bridged where
 * neither beam saw the prism (its top's speed far off, its variance as
 * small as the others') is left out, and a phase seen by one beam
 * through noise (its variance and its error a thousand times the others')
 * has next to no say; with equal weights the line is lost. */
static void the_line_leaves_out_what_no_beam_measured(void **state)
{
    (void)state;
    enum { M = 40 };
    const double delta = 2 * M_PI / 30, beta = 0.01, r = 0.98, K = 50;
    double a = delta / 2, r2 = r * r, top[M], low[M], low_var[M];
    double gain = K * ((r2 - 1) * (1 - cos(a) * cos(beta)) + (r2 + 1) * sin(a) * sin(beta));
    low[0] = 1.0;
    for (size_t i = 0; i < M; i++) {
        top[i] = 0.1 + (double)i * delta;
        if (i > 0)
            low[i] = r2 * low[i - 1] + gain;
        low_var[i] = 1e-8;
    }
    for (size_t i = 0; i < M; i++)   /* the measurement's own scatter */
        low[i] += 1e-4 * ((double)((i * 7) % 5) - 2) / 2;
    double clean[M];
    for (size_t i = 0; i < M; i++)
        clean[i] = low[i];
    low[M - 3] *= 0.6;   /* bridged: a third of the curvature, a wrong speed */
    low[M - 2] *= 0.5;
    low[20] += 3.0;      /* one beam through noise: its error its variance's */
    low_var[20] = 9.0;
    energy e, plain, truth;
    assert_int_equal(pl_lat_energy_fit(top, clean, low_var, M, K, delta, 1.0, &truth), 0);
    assert_int_equal(pl_lat_energy_fit(top, low, low_var, M, K, delta, 1.0, &e), 0);
    tu_assert_close(e.r, truth.r, 2e-5);
    tu_assert_close(e.beta, truth.beta, 1e-5);
    tu_assert_close(truth.r, r, 1e-4);
    /* without the variances the noisy phase drags the line off */
    int rc = pl_lat_energy_fit(top, low, NULL, M, K, delta, 1.0, &plain);
    assert_true(rc != 0 || fabs(plain.r - r) > 1e-3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_phases_arc_gives_its_top),
        cmocka_unit_test(the_tops_line_gives_beta_and_r),
        cmocka_unit_test(the_line_leaves_out_what_no_beam_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
