/* tests/process/physics_test.c - the checks against the physics
 * (process/physics.h) on hand-built signals whose answer is known: the
 * speed bound against its closed form, a speed 10 times too large
 * refused with the factor, a prism whose landings come every 2 pi/22 read
 * as N = 22 and refused as N = 30, the same run with 150 samples cut out
 * found as about 15 ms missing, the impacts' clock against an integral
 * off by 3 %, a recording that starts rolling, and a second release. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/physics.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RATE 10000.0

/* A prism of N_TRUE edges from 2 rad/s, rising 1 rad/s^2 between
 * landings and losing 2 % at each, every 2 pi / N_TRUE of theta, for n
 * samples: omega into *omp, the plain integral into *thp (both malloc'd,
 * n; the caller frees them), the landings' times into land (at most
 * cap; their count returned). */
#define N_TRUE 22
static size_t roll(size_t n, double **omp, double **thp, double *land, size_t cap)
{
    double *om = *omp = malloc(n * sizeof *om), *th = *thp = malloc(n * sizeof *th);
    assert_non_null(om);
    assert_non_null(th);
    double w = 2, theta = 0, next = 2 * M_PI / N_TRUE;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        om[i] = w;
        th[i] = theta;
        theta += w / RATE;
        w += 1.0 / RATE;
        if (theta >= next) {
            w *= 0.98;
            next += 2 * M_PI / N_TRUE;
            if (m < cap)
                land[m] = (double)i / RATE;
            m++;
        }
    }
    return m;
}

static void speed_bound_is_the_fall(void **state)
{
    (void)state;
    pl_phys_body b = {22, 0.015, 0.3702 * M_PI / 180, 0.65};
    /* (J + m a0^2) w^2 / 2 = m g (L sin beta + a0), J = m a0^2 (cos 2a + 2) / 6 */
    assert_true(fabs(pl_phys_omega_max(&b) - 33.4785) < 1e-3);
    pl_phys_body no_length = b;
    no_length.ramp_length_m = NAN;
    assert_true(pl_phys_omega_max(&no_length) > pl_phys_omega_max(&b));
    pl_phys_body no_a0 = b;
    no_a0.a0_m = NAN;
    assert_true(isnan(pl_phys_omega_max(&no_a0)));

    size_t n = 20000;
    double *om = malloc(n * sizeof *om), *v1 = malloc(n * sizeof *v1),
           *v2 = malloc(n * sizeof *v2), h[2] = {0.0199, 0.0116};
    pl_err err = {0};
    for (size_t i = 0; i < n; i++) {
        om[i] = 2 + 8.0 * (double)i / (double)n;   /* up to 10 rad/s: possible */
        v1[i] = om[i] * h[0];
        v2[i] = om[i] * h[1];
    }
    assert_int_equal(pl_phys_check_speed(om, v1, v2, 0, n, h, &b, &err), PL_OK);
    for (size_t i = 0; i < n; i++) {   /* the LDV scale 10 times too large */
        om[i] *= 10;
        v1[i] *= 10;
        v2[i] *= 10;
    }
    assert_int_equal(pl_phys_check_speed(om, v1, v2, 0, n, h, &b, &err), PL_ENUMERIC);
    assert_non_null(strstr(err.msg, "omega reaches 98"));
    assert_non_null(strstr(err.msg, "about 2.9x too fast"));
    /* one channel alone 10 times too large: named */
    for (size_t i = 0; i < n; i++) {
        om[i] /= 10;
        v2[i] /= 10;
    }
    assert_int_equal(pl_phys_check_speed(om, v1, v2, 0, n, h, &b, &err), PL_ENUMERIC);
    assert_non_null(strstr(err.msg, "beam 1 reaches"));
    free(om);
    free(v1);
    free(v2);
}

static void landings_give_their_n(void **state)
{
    (void)state;
    size_t n = 60000;
    double *om, *th, land[512];
    size_t m = roll(n, &om, &th, land, 512);
    pl_phys_steps s;
    assert_int_equal(pl_phys_step_spacing(om, th, 0, n, RATE, 22, &s), 0);
    print_message("%zu landings, %zu drops, spacing %.4f slots\n", m, s.drops, s.spacing);
    assert_true(s.drops + 1 >= m && s.drops <= m);
    assert_true(fabs(s.spacing - 1) < 0.005);
    assert_int_equal(s.jumps, 0);
    /* the notebook says 30 edges: the same landings are 30/22 slots apart */
    assert_int_equal(pl_phys_step_spacing(om, th, 0, n, RATE, 30, &s), 0);
    assert_true(fabs(s.spacing - 30.0 / 22) < 0.01);
    free(om);
    free(th);
}

static void samples_cut_out_jump_the_phase(void **state)
{
    (void)state;
    size_t n = 60000, cut = 150, at = 30000;
    double *om, *th, land[512];
    roll(n, &om, &th, land, 512);
    /* 15 ms gone from a file with no time column: the integral runs on */
    memmove(om + at, om + at + cut, (n - at - cut) * sizeof *om);
    size_t m = n - cut;
    th[0] = 0;
    for (size_t i = 1; i < m; i++)
        th[i] = th[i - 1] + om[i - 1] / RATE;
    pl_phys_steps s;
    assert_int_equal(pl_phys_step_spacing(om, th, 0, m, RATE, 22, &s), 0);
    print_message("jumps %zu at %.4f s, part %.3f, missing %.4f s\n", s.jumps, s.jump_at_s,
                  s.jump_part, s.jump_missing_s);
    assert_int_equal(s.jumps, 1);
    assert_true(s.jump_at_s > 3.0 && s.jump_at_s < 3.2);
    assert_true(fabs(s.jump_missing_s - 0.015) < 0.001);
    free(om);
    free(th);
}

static void clock_against_the_integral(void **state)
{
    (void)state;
    size_t n = 60000;
    double *om, *th, land[512];
    size_t m = roll(n, &om, &th, land, 512);
    pl_impact *imp = calloc(m, sizeof *imp);
    for (size_t k = 0; k < m; k++) {
        imp[k].t_s = land[k];
        imp[k].confirmed = 1;
    }
    pl_phys_lattice c;
    assert_int_equal(pl_phys_lattice_clock(imp, m, th, n, RATE, 22, &c), 0);
    assert_int_equal(c.used, m);
    assert_true(fabs(c.q_first - 1) < 0.002 && fabs(c.q_last - 1) < 0.002);
    assert_true(fabs(c.spacing_slots - 1) < 0.002);
    for (size_t i = 0; i < n; i++)   /* an integral 3 % fast: a scale, or an offset */
        th[i] *= 1.03;
    assert_int_equal(pl_phys_lattice_clock(imp, m, th, n, RATE, 22, &c), 0);
    assert_true(fabs(c.q_first - 1.03) < 0.002 && fabs(c.q_last - 1.03) < 0.002);
    free(imp);
    free(om);
    free(th);
}

static void a_recording_that_starts_rolling(void **state)
{
    (void)state;
    size_t q = 2000;
    double v1[2000], v2[2000], h1 = 0.0223, h2 = 0.0119;
    unsigned long rnd = 7;
    for (size_t i = 0; i < q; i++) {
        double w = 2.2 + 0.8 * (double)i / RATE;
        v1[i] = w * h1 + 2e-4 * tu_gauss(&rnd);
        v2[i] = w * h2 + 2e-4 * tu_gauss(&rnd);
    }
    double w0 = pl_phys_moving_at_start(v1, v2, q, h1, h2);
    assert_true(fabs(w0 - 2.2) < 0.02);
    /* at rest: the decoders' offsets and their noise */
    for (size_t i = 0; i < q; i++) {
        v1[i] = 0.0008 + 2e-4 * tu_gauss(&rnd);
        v2[i] = -0.0003 + 2e-4 * tu_gauss(&rnd);
    }
    assert_true(pl_phys_moving_at_start(v1, v2, q, h1, h2) == 0);
    /* a shaking floor moves both alike, not by the heights' ratio */
    for (size_t i = 0; i < q; i++) {
        double u = 0.02 + 0.01 * sin(2 * M_PI * 23 * (double)i / RATE);
        v1[i] = u;
        v2[i] = u;
    }
    assert_true(pl_phys_moving_at_start(v1, v2, q, h1, h2) == 0);
}

static void a_second_release(void **state)
{
    (void)state;
    size_t n = 40000;
    double *v1 = calloc(n, sizeof *v1), *v2 = calloc(n, sizeof *v2), h1 = 0.02, h2 = 0.012;
    unsigned long rnd = 3;
    for (size_t i = 0; i < n; i++) {
        double w = i >= 25000 ? 0.5 + 2.0 * (double)(i - 25000) / RATE : 0;
        v1[i] = w * h1 + 1e-4 * tu_gauss(&rnd);
        v2[i] = w * h2 + 1e-4 * tu_gauss(&rnd);
    }
    double t = pl_phys_second_release(v1, v2, 10000, n, RATE, h1, h2);
    assert_true(fabs(t - 2.5) < 0.03);
    /* garbage in one beam alone is no release */
    for (size_t i = 25000; i < n; i++)
        v2[i] = 1e-4 * tu_gauss(&rnd);
    assert_true(isnan(pl_phys_second_release(v1, v2, 10000, n, RATE, h1, h2)));
    free(v1);
    free(v2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(speed_bound_is_the_fall),
        cmocka_unit_test(landings_give_their_n),
        cmocka_unit_test(samples_cut_out_jump_the_phase),
        cmocka_unit_test(clock_against_the_integral),
        cmocka_unit_test(a_recording_that_starts_rolling),
        cmocka_unit_test(a_second_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
