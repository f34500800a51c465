/* tests/model/sweep/spec_test.c - the sweep file and one point: the order
 * of the points, ranges, fractions, repeats and their perturbations, what
 * the model refuses, and the file's mistakes by line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/sweep/spec.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXED "[fixed]\na0 = 0.015\nmu-s = 1\nh1 = 0.0199\nh2 = 0.0112\nduration = 0.5\n"
#define HEAD "[sweep]\nname = t\nmodel = simulate\n" FIXED

static pl_sweep_spec *parse_ok(const char *text)
{
    pl_sweep_spec *s = NULL;
    pl_err err = {0};
    if (pl_sweep_spec_parse(&s, text, "t.ini", &err) != PL_OK)
        fail_msg("%s", err.msg);
    return s;
}

static void parse_fails(const char *text, const char *want)
{
    pl_sweep_spec *s = NULL;
    pl_err err = {0};
    assert_int_not_equal(pl_sweep_spec_parse(&s, text, "t.ini", &err), PL_OK);
    assert_null(s);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' lacks '%s'", err.msg, want);
}

static void points_in_mixed_radix(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok(HEAD "[axis N]\nvalues = 6, 8, 10\n"
                                "[axis beta-deg]\nlinear = 1, 2, 5\n"
                                "[axis lambda0-deg]\nlog = 1, 4, 3\n");
    assert_int_equal(pl_sweep_spec_points(s), 3 * 5 * 3);
    assert_string_equal(pl_sweep_spec_axes(s), "N,beta-deg,lambda0-deg");
    pl_sweep_out o = {0};
    pl_err err = {0};
    /* idx 0: the first of each; the last axis fastest */
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    assert_non_null(strstr(o.params, "\"N\":6,\"beta-deg\":1,\"lambda0-deg\":1}"));
    assert_int_equal(pl_sweep_compute(s, 1, &o, &err), PL_OK);
    assert_non_null(strstr(o.params, "\"N\":6,\"beta-deg\":1,\"lambda0-deg\":2}"));
    /* idx 3 * 5 * 3 - 1: the last of each, exact ends */
    assert_int_equal(pl_sweep_compute(s, 44, &o, &err), PL_OK);
    assert_non_null(strstr(o.params, "\"N\":10,\"beta-deg\":2,\"lambda0-deg\":4}"));
    /* idx 1*15 + 2*3 + 0 = 21: N 8, beta 1.5 */
    assert_int_equal(pl_sweep_compute(s, 21, &o, &err), PL_OK);
    assert_non_null(strstr(o.params, "\"N\":8,\"beta-deg\":1.5,\"lambda0-deg\":1}"));
    assert_true(o.ok);
    assert_non_null(strstr(o.result, "\"law\":\"line\""));
    assert_non_null(strstr(o.result, "\"status\":"));
    assert_int_equal(pl_sweep_compute(s, 45, &o, &err), PL_EINVAL);
    assert_int_equal(pl_sweep_compute(s, -1, &o, &err), PL_EINVAL);
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

static void fractions_become_degrees(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok(HEAD "[axis N]\nvalues = 10\n[axis beta-frac]\nvalues = 0.5\n"
                                "[axis lambda0-frac]\nvalues = 0.25\n");
    pl_sweep_out o = {0};
    pl_err err = {0};
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    /* alpha = 18 deg: beta = 9 deg, lambda0 = (18 + 9) / 4 */
    assert_non_null(strstr(o.params, "\"beta-frac\":0.5,\"lambda0-frac\":0.25,"
                                     "\"beta-deg\":9,\"lambda0-deg\":6.75}"));
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

static void refused_points_are_rows(void **state)
{
    (void)state;
    /* lambda0 beyond alpha + beta for N = 60: the model refuses that point */
    pl_sweep_spec *s = parse_ok(HEAD "[axis N]\nvalues = 6, 60\n[axis beta-deg]\nvalues = 1\n"
                                "[axis lambda0-deg]\nvalues = 10\n");
    pl_sweep_out o = {0};
    pl_err err = {0};
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    assert_true(o.ok);
    assert_int_equal(pl_sweep_compute(s, 1, &o, &err), PL_OK);
    assert_false(o.ok);
    assert_non_null(strstr(o.result, "{\"error\":\""));
    assert_non_null(strstr(o.result, "lambda0"));
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

static void repeats_are_reproducible(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok(HEAD "N = 10\nbeta-deg = 1\nlambda0-deg = 5\n"
                                "[repeat]\ncount = 50\nseed = 7\nperturb = lambda0-deg 0.5\n");
    assert_int_equal(pl_sweep_spec_points(s), 50);
    assert_string_equal(pl_sweep_spec_axes(s), "repeat");
    pl_sweep_out o = {0};
    pl_err err = {0};
    char first[512];
    double lo = 99, hi = -99;
    for (int i = 0; i < 50; i++) {
        assert_int_equal(pl_sweep_compute(s, i, &o, &err), PL_OK);
        const char *p = strstr(o.params, "\"lambda0-deg\":");
        assert_non_null(p);
        double v = strtod(p + 14, NULL);
        lo = fmin(lo, v);
        hi = fmax(hi, v);
        if (i == 3)
            snprintf(first, sizeof first, "%s", o.params);
    }
    assert_true(lo >= 4.5 && hi <= 5.5 && hi - lo > 0.5);   /* spread, within the width */
    assert_int_equal(pl_sweep_compute(s, 3, &o, &err), PL_OK);
    assert_string_equal(o.params, first);                    /* the same draw again */
    assert_non_null(strstr(first, "\"repeat\":3,\"seed\":10}"));
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

static void series_are_decimated(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok("[sweep]\nname = t\nmodel = simulate\nseries = t, omega\n"
                                "series-rate = 100\n" FIXED "N = 22\nbeta-deg = 0.4\n"
                                "lambda0-deg = 7.5\n");
    pl_sweep_out o = {0};
    pl_err err = {0};
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    /* 0.5 s at 10 kHz, every 100th sample: 51 times, then 51 omegas */
    assert_int_equal(o.series_n, 2 * 51);
    tu_assert_close(o.series[1], 0.01, 1e-12);
    tu_assert_close(o.series[50], 0.5, 1e-12);
    assert_true(o.series[51] == 0 && o.series[101] > 1);
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

static void dimer_points(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok("[sweep]\nname = d\nmodel = dimer\n[fixed]\nduration = 0.4\n"
                                "[axis Gamma]\nvalues = 0.5, 0.9\n");
    pl_sweep_out o = {0};
    pl_err err = {0};
    assert_int_equal(pl_sweep_compute(s, 1, &o, &err), PL_OK);
    assert_true(o.ok);
    assert_non_null(strstr(o.params, "{\"duration\":0.4,\"Gamma\":0.9}"));
    assert_non_null(strstr(o.result, "\"mode\":\""));
    assert_string_equal(pl_sweep_spec_columns(s), "impacts,doubles,sticks,hits1,hits2,"
                        "hmax1_m,hmax2_m,energy,drift,mode,x1_end");
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

static void mistakes_by_line(void **state)
{
    (void)state;
    parse_fails("[sweep]\nname = x\nmodel = pendulum\n", "t.ini:3: model: expected simulate, dimer or roughplane");
    parse_fails("[sweep]\nname = x\n", "t.ini: [sweep] needs name and model");
    parse_fails("[sweep]\nname = x\nmodel = simulate\n[axes]\nN = 3\n", "t.ini:5: unknown section [axes]");
    parse_fails(HEAD "[axis N]\nvalues = 6\n[axis a0]\nvalues = 1\n", "t.ini:13: 'a0' is given twice");
    parse_fails(HEAD "[axis N]\nlinear = 3, 10\n", "t.ini:11: linear = FROM, TO, COUNT expected");
    parse_fails(HEAD "[axis N]\nlog = 0, 10, 4\n", "log: FROM and TO must be > 0");
    parse_fails(HEAD "[axis N]\nlinear = 3, 10, 2.5\n", "COUNT must be a whole number");
    parse_fails(HEAD "[axis N]\nvalues = 6\nlinear = 1, 2, 3\n", "[axis N] takes one of values");
    parse_fails(HEAD "prism = steel-22\n", "catalogue names are not taken");
    parse_fails(HEAD "N = 6\nbeta-deg = 1\nlambda0-deg = 3\n[repeat]\nperturb = N 1\n",
                "perturb needs count");
    parse_fails("[sweep]\nname = x\nmodel = simulate\nseries = speed\n" FIXED,
                "series 'speed': the simulate model stores t,omega,theta,Lp,x,vp1,vp2");
    parse_fails(HEAD "N = 6\nbeta-deg = 1\nlambda0-deg = 3\nlaw = elastic\n",
                "t.ini: option '--law'");
    parse_fails("[sweep]\nname = x\nmodel = simulate\nthis is no ini line\n",
                "t.ini:4: not an INI line");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(points_in_mixed_radix),
        cmocka_unit_test(fractions_become_degrees),
        cmocka_unit_test(refused_points_are_rows),
        cmocka_unit_test(repeats_are_reproducible),
        cmocka_unit_test(series_are_decimated),
        cmocka_unit_test(dimer_points),
        cmocka_unit_test(mistakes_by_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
