/* tests/process/lattice_delay_test.c - the decoder's delay measured on a
 * run's stacked steps (process/lattice_delay.h): steps at known contacts
 * through an analogue second-order decoder, located at the transitions'
 * centres (contact + the decoder's delay at DC), are moved back to the
 * contact; too few impacts leave the instants alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_delay.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>

enum { RATE = 20000, N = 22 * RATE / 10, M = 40 };

/* Unit step response of the second-order low-pass (damping zeta < 1)
 * whose delay at DC is tau, t after the step. */
static double resp(double t, double tau, double zeta)
{
    if (t <= 0)
        return 0;
    double wn = 2 * zeta / tau, q = sqrt(1 - zeta * zeta);
    return 1 - exp(-zeta * wn * t) * (cos(wn * q * t) + zeta / q * sin(wn * q * t));
}

/* omega: a slow line with M drops of 0.3 rad/s at contacts 50 ms apart
 * (sub-sample phases spread by the golden ratio), through the decoder;
 * the impacts located delay later than the contacts. */
static void steps(double *om, pl_impact *imp, double delay, double zeta)
{
    double c[M];
    for (size_t i = 0; i < M; i++) {
        c[i] = (0.1 + 0.05 * (double)i) * RATE + fmod(0.618034 * (double)i, 1.0);
        imp[i] = (pl_impact){.t_s = c[i] / RATE + delay, .t_sd_s = 1e-6, .confirmed = 1};
    }
    for (size_t k = 0; k < N; k++) {
        om[k] = 10 + 0.5 * (double)k / RATE;
        for (size_t i = 0; i < M; i++)
            om[k] -= 0.3 * resp(((double)k - c[i]) / RATE, delay, zeta);
    }
}

static void delay_of_an_analogue_decoder(void **state)
{
    (void)state;
    static double om[N], theta[N];
    static const double zetas[] = {0.866, 0.707};
    for (int z = 0; z < 2; z++) {
        pl_impact imp[M];
        steps(om, imp, 60e-6, zetas[z]);
        walk wk = {.om = om, .theta = theta, .n = N, .release = 0, .end = N, .G = 10,
                   .rate = RATE};
        pl_lat_delay d;
        assert_int_equal(pl_lat_decoder_delay(&wk, imp, M, &d), 0);
        assert_int_equal(d.used, M);
        assert_int_equal(d.sampled, 0);
        /* the contact 60 us (1.2 samples) before the located centre; the
         * impact's duration and the decoder's width trade off along a
         * valley the coordinate search does not reach the bottom of
         * (measured: 56.7 us with zeta 0.866), hence 5 us (0.1 sample) */
        tu_assert_close(d.shift_s, -60e-6, 5e-6);
        tu_assert_close(d.width_s, 60e-6, 10e-6);
        assert_true(d.shift_sd_s < 1e-6);
    }
}

/* A decoder that samples before it filters: every impact's output takes
 * the levels 0.38, 0.95, 1 from the first sample after the contact,
 * whatever the sub-sample phase; located half a sample after the contact,
 * the impacts move back by that half sample. */
static void delay_of_a_sampled_decoder(void **state)
{
    (void)state;
    static double om[N], theta[N];
    static const double lev[] = {0.38, 0.95};
    pl_impact imp[M];
    double c[M];
    for (size_t i = 0; i < M; i++) {
        c[i] = (0.1 + 0.05 * (double)i) * RATE + fmod(0.618034 * (double)i, 1.0);
        imp[i] = (pl_impact){.t_s = (c[i] + 0.5) / RATE, .t_sd_s = 1e-6, .confirmed = 1};
    }
    for (size_t k = 0; k < N; k++) {
        om[k] = 10 + 0.5 * (double)k / RATE;
        for (size_t i = 0; i < M; i++) {
            double j = (double)k - ceil(c[i]);
            om[k] -= j < 0 ? 0 : 0.3 * (j < 2 ? lev[(size_t)j] : 1.0);
        }
    }
    walk wk = {.om = om, .theta = theta, .n = N, .release = 0, .end = N, .G = 10,
               .rate = RATE};
    pl_lat_delay d;
    assert_int_equal(pl_lat_decoder_delay(&wk, imp, M, &d), 0);
    assert_int_equal(d.sampled, 1);
    tu_assert_close(d.shift_s, -0.5 / RATE, 0.06 / RATE);
}

static void too_few_impacts_leave_the_instants(void **state)
{
    (void)state;
    static double om[N], theta[N];
    pl_impact imp[M];
    steps(om, imp, 60e-6, 0.866);
    walk wk = {.om = om, .theta = theta, .n = N, .release = 0, .end = N, .G = 10,
               .rate = RATE};
    pl_lat_delay d;
    assert_int_equal(pl_lat_decoder_delay(&wk, imp, 5, &d), 0);
    assert_int_equal(d.used, 0);
    assert_true(d.shift_s == 0 && d.shift_sd_s == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delay_of_an_analogue_decoder),
        cmocka_unit_test(delay_of_a_sampled_decoder),
        cmocka_unit_test(too_few_impacts_leave_the_instants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
