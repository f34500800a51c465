/* tests/process/window_test.c - the release instant (process/window.c,
 * docs/process.md section 2) on a synthetic start from rest: omega =
 * phi0 s sinh(s (t - t0)) after the release, as a prism falls away from
 * its unstable balance, up to a first impact, under white and slow
 * (1/f-like) noise.  The line through the first rise (pl_window_release())
 * meets zero 8-28 ms late on such a convex start; the shape fit
 * (pl_window_shape()) puts it within its own standard error, a few ms on
 * this much noise (median 2.5 ms).  Too short a lead-in leaves the line's release. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/window.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>

enum { RATE = 10000 };
static const double H1 = 0.02, H2 = 0.012, S = 20.0, PHI0 = 0.01, T0 = 0.8, T_IMP = 0.95;

/* The motion: rest, the sinh rise, a first impact that takes 30 % of
 * the speed, then the climb over the next edge slowing it. */
static double omega_true(double t)
{
    if (t <= T0)
        return 0;
    double tt = t < T_IMP ? t : T_IMP, w = PHI0 * S * sinh(S * (tt - T0));
    return t < T_IMP ? w : fmax(0.7 * w - 3.0 * (t - T_IMP), 0.0);
}

/* v1, v2 (m/s) of n samples: the motion at the beam heights, white noise
 * of sd_white each, and a slow wander (five low sines of random phase)
 * of sd_slow in omega. */
static void make_beams(double *v1, double *v2, double *om, size_t n, double sd_white,
                       double sd_slow, unsigned long seed)
{
    double ph[5], f[5] = {0.7, 1.9, 3.1, 5.3, 8.9};
    for (int k = 0; k < 5; k++)
        ph[k] = 2 * M_PI * tu_uniform(&seed);
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / RATE, slow = 0;
        for (int k = 0; k < 5; k++)
            slow += sd_slow * sqrt(2.0 / 5) / sqrt(f[k]) * sin(2 * M_PI * f[k] * t + ph[k]);
        double w = omega_true(t) + slow;
        v1[i] = w * H1 + sd_white * tu_gauss(&seed);
        v2[i] = w * H2 + sd_white * tu_gauss(&seed);
        om[i] = (v1[i] - v2[i]) / (H1 - H2);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Eight draws of the noise: the line's release 8-28 ms late (median 20),
 * the shape's within 7.2 ms (median 2.5: its own standard error on this
 * much noise is 1-3 ms; on the corpus chains, with less noise for the
 * speed they reach, its median error is 0.17 ms). */
static void shape_places_a_convex_start(void **state)
{
    (void)state;
    enum { DRAWS = 8 };
    size_t n = 2 * RATE;
    double *v1 = malloc(n * sizeof *v1), *v2 = malloc(n * sizeof *v2), *om = malloc(n * sizeof *om);
    double line_err[DRAWS], shape_err[DRAWS];
    assert_true(v1 && v2 && om);
    for (unsigned long seed = 1; seed <= DRAWS; seed++) {
        make_beams(v1, v2, om, n, 1e-3, 1e-3, seed);
        pl_window w;
        pl_err err = {0};
        assert_int_equal(pl_window_release(v1, v2, H1 - H2, n, RATE, RATE / 5, 8.0, &w, &err), PL_OK);
        size_t line = w.release;
        line_err[seed - 1] = (double)line / RATE - T0;
        assert_int_equal(pl_window_shape(om, n, RATE, 2 * M_PI / 30, &w), 1);
        shape_err[seed - 1] = fabs((double)w.release / RATE - T0);
        print_message("seed %lu: line %+.1f ms, shape %+.1f ms\n", seed,
                      1e3 * line_err[seed - 1], 1e3 * ((double)w.release / RATE - T0));
        assert_true(w.quiet == line);   /* the lead-in's end stays the line's */
        assert_true(line_err[seed - 1] > 0.008);
        assert_true(shape_err[seed - 1] < 0.010);
    }
    qsort(line_err, DRAWS, sizeof *line_err, cmp_d);
    qsort(shape_err, DRAWS, sizeof *shape_err, cmp_d);
    assert_true(line_err[DRAWS / 2] > 0.015);
    assert_true(shape_err[DRAWS / 2] < 0.0035);
    free(v1);
    free(v2);
    free(om);
}

/* A recording that starts moving at once: no lead-in to fit a level in,
 * and the line's release stands. */
static void no_lead_in_keeps_the_line(void **state)
{
    (void)state;
    size_t n = RATE;
    double *v1 = malloc(n * sizeof *v1), *v2 = malloc(n * sizeof *v2), *om = malloc(n * sizeof *om);
    assert_true(v1 && v2 && om);
    make_beams(v1, v2, om, n, 4e-4, 0, 7);
    pl_window w = {0};
    w.release = w.quiet = 5;
    w.cross = 20;
    w.end = w.seen = n;
    assert_int_equal(pl_window_shape(om, n, RATE, 2 * M_PI / 30, &w), 0);
    assert_int_equal(w.release, 5);
    free(v1);
    free(v2);
    free(om);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_places_a_convex_start),
        cmocka_unit_test(no_lead_in_keeps_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
