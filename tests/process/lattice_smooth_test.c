/* tests/process/lattice_smooth_test.c - the slots' angles smoothed
 * along the lattice (process/lattice_smooth.h): on a lattice with a slow
 * drift and alternating errors the smoothed angles lie on the line, an
 * angle 50 times its error off is dropped and placed by its neighbours,
 * a slot never measured is placed too; two neighbours' smoothed angles
 * correlate as their lines' shared slots make them (their mean's
 * variance nearly one angle's); the bend of a lattice that the lines
 * do not follow is stated beside them; and a ringing onset a period off
 * snaps back to the lattice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/lattice_smooth.h"
#include "tests/util/testutil.h"

#include <math.h>

enum { M = 100 };
static const double DELTA = 2 * M_PI / 30, E = 1e-4, G = 1e-6;

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
    pl_lat_smooth_phase(v, M, 15, DELTA, th, var, NULL);
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

/* Independent white errors of sd E on every slot: the stated rho_next
 * of two interior neighbours matches their smoothed angles' correlation
 * over 2000 draws, and the variance of their mean is
 * (v + v' + 2 rho sqrt(v v')) / 4, not (v + v') / 4.  With rho left out
 * (0) the measured correlation, about 0.9 for lines of 17 slots, fails
 * the first check; the half-width the smoothing takes is its own. */
static void neighbours_correlate_as_their_lines_share_slots(void **state)
{
    (void)state;
    enum { DRAWS = 2000, A = 50 };
    unsigned long st = 12345;
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, rho_sum = 0, var_mean = 0;
    slot v[M];
    double th[M], var[M], rho[M];
    for (int d = 0; d < DRAWS; d++) {
        for (long k = 0; k < M; k++)
            v[k] = (slot){.k = k, .theta = truth(k) + E * tu_gauss(&st), .var_theta = E * E,
                          .measured = 1, .confirmed = 1};
        pl_lat_smooth_phase_corr(v, M, 15, DELTA, th, var, rho, NULL);
        double a = th[A] - truth(A), b = th[A + 1] - truth(A + 1);
        sa += a;
        sb += b;
        saa += a * a;
        sbb += b * b;
        sab += a * b;
        rho_sum += rho[A];
        var_mean += 0.25 * (var[A] + var[A + 1] + 2 * rho[A] * sqrt(var[A] * var[A + 1]));
    }
    double n = DRAWS, ca = saa / n - sa * sa / (n * n), cb = sbb / n - sb * sb / (n * n),
           cab = sab / n - sa * sb / (n * n);
    double measured = cab / sqrt(ca * cb), stated = rho_sum / n;
    print_message("neighbours' correlation: stated %.3f, measured %.3f\n", stated, measured);
    assert_true(stated > 0.5 && stated < 1);
    tu_assert_close(stated, measured, 0.05);
    /* the mean of the two: its measured variance against the stated one */
    double vm = 0.25 * (ca + cb + 2 * cab);
    tu_assert_close(var_mean / n / vm, 1, 0.15);
}

/* Theta bent between the slots as slow noise integrated into it bends
 * it (the twice-summed white steps, sd G a slot, of an integrated random
 * walk) under white errors of sd E: the lines miss the bend, which
 * their own variances leave out (they hold under 80 % of the mean
 * square miss), and the bend variance stated beside them is what the
 * miss adds to them (their sum is the mean square miss within 25 %).  On a straight lattice under the same errors the stated
 * bend stays below a twentieth of one angle's variance. */
static void the_bend_the_line_misses_is_stated(void **state)
{
    (void)state;
    enum { N = 2000 };
    unsigned long st = 777;
    static slot v[N];
    static double th[N], var[N], bent[N];
    double miss2 = 0, own = 0, bend = -1, slope = 0, walk = 0;
    for (long k = 0; k < N; k++) {
        slope += G * tu_gauss(&st);
        walk += slope;
        bent[k] = truth(k) + walk;
        v[k] = (slot){.k = k, .theta = bent[k] + E * tu_gauss(&st), .var_theta = E * E,
                      .measured = 1, .confirmed = 1};
    }
    pl_lat_smooth_phase(v, N, 15, DELTA, th, var, &bend);
    size_t n = 0;
    for (long k = 20; k < N - 20; k++, n++) {
        miss2 += (th[k] - bent[k]) * (th[k] - bent[k]);
        own += var[k];
    }
    miss2 /= (double)n;
    own /= (double)n;
    print_message("bent lattice: stated bend %.3g rad, the lines' miss %.3g rad, their own sd %.3g\n",
                  sqrt(bend), sqrt(miss2), sqrt(own));
    assert_true(own < 0.8 * miss2);
    tu_assert_close((own + bend) / miss2, 1, 0.25);
    for (long k = 0; k < N; k++)
        v[k] = (slot){.k = k, .theta = truth(k) + E * tu_gauss(&st), .var_theta = E * E,
                      .measured = 1, .confirmed = 1};
    pl_lat_smooth_phase(v, N, 15, DELTA, th, var, &bend);
    print_message("straight lattice: stated bend %.3g rad\n", sqrt(bend));
    assert_true(bend >= 0 && bend < 0.05 * E * E);
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
        cmocka_unit_test(neighbours_correlate_as_their_lines_share_slots),
        cmocka_unit_test(the_bend_the_line_misses_is_stated),
        cmocka_unit_test(snap_moves_an_onset_by_whole_periods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
