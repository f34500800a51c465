/* tests/process/lattice_ring_test.c - the ringing's model
 * (process/lattice_ring.h): the template by rotation against its closed
 * form, the table of powers, and the arc and ringing fitted together
 * recovering a decaying sine and cosine laid on a cubic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_ring.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>

static void ring_fill_is_the_decaying_sinusoid(void **state)
{
    (void)state;
    ringing rg = {.w = 0.3, .tau = 40, .a = 0.6, .b = 0.8, .onset = 2};
    double buf[200];
    pl_lat_ring_fill(&rg, 1.5, 10.25, 0, 200, buf);
    for (size_t j = 0; j < 200; j++) {
        double s = (double)j - 12.25;   /* from the onset, t + onset */
        double want = s < 0 ? 0 : 1.5 * exp(-s / 40) * (0.6 * sin(0.3 * s) + 0.8 * cos(0.3 * s));
        tu_assert_close(buf[j], want, 1e-12);
    }
    /* from k0 on, the same samples */
    double tail[50];
    pl_lat_ring_fill(&rg, 1.5, 10.25, 100, 50, tail);
    for (size_t j = 0; j < 50; j++)
        tu_assert_close(tail[j], buf[100 + j], 1e-12);
}

static void ring_table_holds_the_sums_of_powers(void **state)
{
    (void)state;
    double *P = pl_lat_ring_table(64);
    assert_non_null(P);
    for (size_t len = 1; len <= 64; len++) {
        const double *p = P + len * RJ_POW;
        double n = (double)len;
        tu_assert_close(p[0], n, 1e-12);
        tu_assert_close(p[1], (n - 1) / 2, 1e-12);
        tu_assert_close(p[2], (n - 1) * (2 * n - 1) / (6 * n), 1e-12);
    }
    free(P);
}

static void ring_joint_recovers_the_sine_and_cosine(void **state)
{
    (void)state;
    enum { N = 400, K0 = 100, LEN = 120, W = 150 };
    static double om[N];
    double w = 2 * M_PI / 17, tau = 30, A = 0.04, B = -0.025;
    for (size_t k = 0; k < N; k++) {
        double j = (double)k - K0, x = j / LEN;
        om[k] = 12 - 0.7 * x + 0.3 * x * x - 0.05 * x * x * x;
        if (j >= 0)
            om[k] += exp(-j / tau) * (A * sin(w * j) + B * cos(w * j));
    }
    double *scratch = malloc((4 * W + 64) * sizeof *scratch), *P = pl_lat_ring_table(W);
    assert_true(scratch && P);
    walk wk = {.om = om, .n = N, .end = N, .W = W, .scratch = scratch, .powsum = P};
    ringing none = {0};
    slot s = {.tc = K0 - 5};   /* nothing taken out before */
    double ab[2], se;
    double rss = pl_lat_ring_joint(&wk, &none, &s, w, tau, K0, LEN, ab, &se);
    tu_assert_close(ab[0], A, 1e-9);
    tu_assert_close(ab[1], B, 1e-9);
    assert_true(rss < 1e-9);   /* an exact fit: rounding of y'y - b'X'y only */
    assert_true(se < 1e-4 * hypot(A, B));
    /* a ringing taken out before is put back first: the same fit */
    for (size_t k = K0; k < N; k++)
        om[k] -= 0.5 * exp(-(double)(k - K0) / tau) * sin(w * (double)(k - K0));
    wk.ring = (ringing){.w = w, .tau = tau, .a = 1, .b = 0, .onset = 0};
    s.ring_amp = 0.5;
    s.ring_t = K0;
    rss = pl_lat_ring_joint(&wk, &wk.ring, &s, w, tau, K0, LEN, ab, NULL);
    tu_assert_close(ab[0], A, 1e-9);
    tu_assert_close(ab[1], B, 1e-9);
    /* and pl_lat_ring_apply() takes it out of the signal again */
    double before = om[K0 + 3];
    pl_lat_ring_apply(&wk, &s, 1, +1.0);
    tu_assert_close(om[K0 + 3] - before, 0.5 * exp(-3 / tau) * sin(3 * w), 1e-12);
    free(scratch);
    free(P);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_fill_is_the_decaying_sinusoid),
        cmocka_unit_test(ring_table_holds_the_sums_of_powers),
        cmocka_unit_test(ring_joint_recovers_the_sine_and_cosine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
