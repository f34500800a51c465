/* tests/model/sweep/spec_test.c - the sweep file and one point: the order
 * of the points, ranges, fractions, repeats and their perturbations, what
 * the model refuses, and the file's mistakes by line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/seeds/dimer.h"
#include "model/seeds/slide.h"
#include "model/sweep/spec.h"
#include "tests/util/testutil.h"

#include <gsl/gsl_errno.h>
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

/* The number after "key": in a JSON object. */
static double json_num(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    if (!p)
        fail_msg("'%s' has no %s", json, key);
    return strtod(p + strlen(pat), NULL);
}

#define RP "[sweep]\nname = r\nmodel = roughplane\n"

/* A roughplane point is the library's run of the body the file names:
 * the tuples, a component on an axis, the flag. */
static void roughplane_points(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok(RP "[fixed]\nbody = particles\nparticle = 0.1, 0, 0\n"
                                "particle = 0.2,0.05,0 / 0.1,0.02,0.03\nmu = 0.3\n"
                                "v0 = 1, 0.5\nduration = 2\n"
                                "[axis particle.2.x]\nlinear = 0.02, 0.1, 3\n"
                                "[axis omega0]\nvalues = 0, 5\n[axis hack]\nvalues = no, yes\n");
    assert_int_equal(pl_sweep_spec_points(s), 12);
    assert_string_equal(pl_sweep_spec_columns(s), "t_stop,x,y,theta");
    assert_string_equal(pl_sweep_spec_axes(s), "particle.2.x,omega0,hack");
    pl_sweep_out o = {0};
    pl_err err = {0};
    /* idx 2*4 + 1*2 + 1: x2 = 0.1, omega0 5, the decoupled model */
    assert_int_equal(pl_sweep_compute(s, 11, &o, &err), PL_OK);
    assert_true(o.ok);
    assert_string_equal(o.params, "{\"body\":\"particles\",\"particle\":[[0.1,0,0],"
                        "[0.2,0.1,0],[0.1,0.02,0.03]],\"mu\":0.3,\"v0\":[1,0.5],"
                        "\"duration\":2,\"particle.2.x\":0.1,\"omega0\":5,\"hack\":\"yes\"}");
    pl_slide sl;
    pl_slide_init(&sl);
    sl.body = PL_BODY_PARTICLES;
    sl.b.n = 3;
    double m[] = {0.1, 0.2, 0.1}, x[] = {0, 0.1, 0.02}, y[] = {0, 0, 0.03};
    for (int i = 0; i < 3; i++) {
        sl.b.m[i] = m[i];
        sl.b.px[i] = x[i];
        sl.b.py[i] = y[i];
    }
    sl.plane.mu = 0.3;
    sl.vx = 1;
    sl.vy = 0.5;
    sl.dur = 2;
    sl.w0 = 5;
    sl.hack = 1;
    assert_int_equal(pl_slide_check(&sl, &err), PL_OK);
    pl_body_end e;
    assert_int_equal(pl_slide_run(&sl, 0, NULL, NULL, &e, &err), PL_OK);
    assert_true(isfinite(e.t_stop) && e.end.theta > 0.1);
    assert_true(json_num(o.result, "t_stop") == e.t_stop);
    assert_true(json_num(o.result, "x") == e.end.x);
    assert_true(json_num(o.result, "y") == e.end.w);
    assert_true(json_num(o.result, "theta") == e.end.theta);
    /* the full equations (hack no) give another spin-down */
    assert_int_equal(pl_sweep_compute(s, 10, &o, &err), PL_OK);
    assert_true(json_num(o.result, "theta") != e.end.theta);
    pl_sweep_spec_destroy(s);

    /* a pair from its components, an axis over whole values, a slide
     * that never stops (null) */
    s = parse_ok(RP "[fixed]\nbody = pair\nmasses.m1 = 1\nmasses.m2 = 2\nlength = 0.3\n"
                 "friction = viscous\nmu = 0.5\neps = 0\nduration = 1\n"
                 "[axis v0]\nvalues = 1,0 | 0, 2\n");
    assert_int_equal(pl_sweep_compute(s, 1, &o, &err), PL_OK);
    assert_true(o.ok);
    assert_non_null(strstr(o.params, "\"v0\":[0,2],\"masses\":[1,2]}"));
    assert_non_null(strstr(o.result, "\"t_stop\":null"));
    tu_assert_close(json_num(o.result, "y"), 2 * (1 - exp(-0.5)) / 0.5, 1e-9);
    pl_sweep_spec_destroy(s);

    /* a value the command refuses at a later point is that point's row */
    s = parse_ok(RP "[fixed]\nv0 = 1,0\n[axis mu]\nvalues = 0.3, -1\n");
    assert_int_equal(pl_sweep_compute(s, 1, &o, &err), PL_OK);
    assert_false(o.ok);
    assert_non_null(strstr(o.result, "option '--mu'"));
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
}

/* The dimer's and the roughplane's series: n = duration x rate + 1
 * samples at equal steps, the library's own samples, and the dimer's
 * summary the same with series as without. */
static void series_of_the_seeds(void **state)
{
    (void)state;
    pl_sweep_spec *s = parse_ok("[sweep]\nname = d\nmodel = dimer\nseries = t, y1, theta\n"
                                "series-rate = 200\n[fixed]\nduration = 0.5\n");
    pl_sweep_spec *s0 = parse_ok("[sweep]\nname = d\nmodel = dimer\n[fixed]\nduration = 0.5\n");
    pl_sweep_out o = {0}, o0 = {0};
    pl_err err = {0};
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    assert_int_equal(pl_sweep_compute(s0, 0, &o0, &err), PL_OK);
    assert_string_equal(o.result, o0.result);
    assert_int_equal(o0.series_n, 0);
    assert_int_equal(o.series_n, 3 * 101);
    pl_dimer_params p;
    pl_dimer_params_default(&p);
    p.duration = 0.5;
    pl_dimer_sample sm[101];
    pl_dimer_result r;
    assert_int_equal(pl_dimer_run(&p, sm, 101, &r, &err), PL_OK);
    for (int k = 0; k < 101; k++) {
        assert_true(o.series[k] == sm[k].t);
        assert_true(o.series[101 + k] == sm[k].y1);
        assert_true(o.series[202 + k] == sm[k].theta);
    }
    tu_assert_close(o.series[100], 0.5, 1e-12);
    assert_true(sm[50].y1 != sm[0].y1);   /* it moves */
    pl_sweep_spec_destroy(s);
    pl_sweep_spec_destroy(s0);

    s = parse_ok(RP "series = t, x, vx, omega\nseries-rate = 10\n[fixed]\nbody = rod\n"
                 "mass = 1\nlength = 0.5\nmu = 0.3\nv0 = 1, 0.5\nomega0 = 3\nduration = 1.5\n");
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    assert_true(o.ok);
    assert_int_equal(o.series_n, 4 * 16);
    tu_assert_close(o.series[1], 0.1, 1e-12);
    tu_assert_close(o.series[15], 1.5, 1e-12);
    assert_true(o.series[16] == 0 && o.series[17] > 0.05);    /* x moves off */
    assert_true(o.series[32] == 1 && o.series[47] == 0);      /* vx: 1, then at rest */
    assert_true(o.series[48] == 3 && o.series[63] == 0);      /* the spin likewise */
    /* the last sample is the summary's end */
    tu_assert_close(o.series[31], json_num(o.result, "x"), 1e-15);
    pl_sweep_out_free(&o);
    pl_sweep_out_free(&o0);
    pl_sweep_spec_destroy(s);
}

static void roughplane_mistakes_by_line(void **state)
{
    (void)state;
    const char *fx = RP "[fixed]\nbody = particles\nmu = 0.3\nv0 = 1,0\n"
                     "particle = 0.1,0,0 / 0.2,0,0\n";   /* 8 lines */
    char t[1024];
    snprintf(t, sizeof t, "%sparticle = 0.1,0,0 ; 0.2,0,0\n", fx);
    parse_fails(t, "t.ini:9: particle: ';' starts a comment here; separate tuples by '/'");
    snprintf(t, sizeof t, "%s[axis particle.3.x]\nvalues = 1\n", fx);
    parse_fails(t, "t.ini:10: 'particle.3.x': particle has 2 tuples, not 3");
    snprintf(t, sizeof t, "%shack = 1\n", fx);
    parse_fails(t, "t.ini:9: hack: a flag, yes or no; got '1'");
    snprintf(t, sizeof t, "%sv0.vz = 3\n", fx);
    parse_fails(t, "t.ini:9: 'v0.vz': the components of v0 are v0.vx, v0.vy");
    snprintf(t, sizeof t, "%sparticle.01.x = 3\n", fx);
    parse_fails(t, "t.ini:9: 'particle.01.x': a component of particle is particle.K.m, "
                "particle.K.x, particle.K.y, K from 1 to 64");
    snprintf(t, sizeof t, "%smu.x = 3\n", fx);
    parse_fails(t, "t.ini:9: 'mu.x': mu takes one value, no components");
    snprintf(t, sizeof t, "%s[axis v0]\nvalues = 1,0, 2,0\n", fx);
    parse_fails(t, "'v0' is given twice");
    parse_fails(RP "[fixed]\nmu = 1\n[axis v0]\nvalues = 1,0, 2,0\n",
                "t.ini:7: v0: VX,VY expected, got '1,0, 2,0'");
    parse_fails(RP "[fixed]\nmu = 1\nmasses.m2 = 1\n", "t.ini:6: 'masses.m2': give masses "
                "too, or every component (masses.m1, masses.m2)");
    parse_fails(RP "[fixed]\nmu = 1\nparticle.1.m = 1\n", "t.ini:6: 'particle.1.m': give "
                "particle too");
    parse_fails(RP "[fixed]\nmu = 1\nv0 = 1,0\n[axis hack]\nlinear = 0, 1, 2\n",
                "t.ini:8: [axis hack] takes values = yes, no, not linear");
    /* and what the command refuses, by its words */
    parse_fails(RP "[fixed]\nmu = 1\n", "t.ini: give --mu MU and --v0 VX,VY");
    parse_fails(RP "[fixed]\nmu = 1\nv0 = 1,0\nomega0 = 2\n",
                "t.ini: a particle has no spin: --omega0 and --hack are for the other bodies");
    parse_fails(RP "[fixed]\nmu = 1\nv0 = 1,0\nbody = sphere\n", "t.ini: option '--body': "
                "expected particle, pair, particles, rod, board or box, got 'sphere'");
    /* inih reads 200 bytes a line and would cut a longer one in two */
    size_t len = (size_t)snprintf(t, sizeof t, "%sparticle = 0.1,0,0", fx);
    for (int i = 0; i < 20; i++)
        len += (size_t)snprintf(t + len, sizeof t - len, " / 0.1,0.001,0.002");
    snprintf(t + len, sizeof t - len, "\n");
    parse_fails(t, "t.ini:9: a line longer than the INI reader's 198 characters");
}

/* A prism and a ramp of the catalogue: the spec waits for their numbers;
 * with them ([catalogue], as prismlab sweep appends it) the file's own
 * numbers override them, a fraction its degrees too. */
static void catalogue_numbers(void **state)
{
    (void)state;
    const char *head = "[sweep]\nname = t\nmodel = simulate\n[fixed]\nprism = steel-22\n"
                       "ramp = glass\nh1 = 0.0199\nh2 = 0.0112\nduration = 0.5\nmu-s = 10\n"
                       "[axis lambda0-frac]\nvalues = 0.5\n";
    pl_sweep_spec *s = parse_ok(head);
    const char *pn, *rn;
    assert_true(pl_sweep_spec_unresolved(s, &pn, &rn));
    assert_string_equal(pn, "steel-22");
    assert_string_equal(rn, "glass");
    pl_sweep_out o = {0};
    pl_err err = {0};
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_ESTATE);
    pl_sweep_spec_destroy(s);

    char text[1024];
    snprintf(text, sizeof text, "%s[catalogue]\nN = 10\na0 = 0.015\nbeta-deg = 1\nmu-s = 0.6\n"
             "mu = 0.4\n", head);
    s = parse_ok(text);
    assert_false(pl_sweep_spec_unresolved(s, NULL, NULL));
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    assert_true(o.ok);
    /* mu-s = 10 is the file's; lambda0 = (18 + 1) / 2 from the catalogue's beta */
    assert_string_equal(o.params, "{\"prism\":\"steel-22\",\"ramp\":\"glass\",\"h1\":0.0199,"
                        "\"h2\":0.0112,\"duration\":0.5,\"mu-s\":10,\"N\":10,\"a0\":0.015,"
                        "\"beta-deg\":1,\"mu\":0.4,\"lambda0-frac\":0.5,\"lambda0-deg\":9.5}");
    pl_sweep_spec_destroy(s);
    /* a beta-frac axis gives beta: the catalogue's beta-deg is not used */
    snprintf(text, sizeof text, "%s[axis beta-frac]\nvalues = 0.25\n[catalogue]\nN = 10\n"
             "a0 = 0.015\nbeta-deg = 1\nmu-s = 0.6\n", head);
    s = parse_ok(text);
    assert_int_equal(pl_sweep_compute(s, 0, &o, &err), PL_OK);
    assert_non_null(strstr(o.params, "\"mu-s\":10,\"N\":10,\"a0\":0.015,\"lambda0-frac\":0.5,"
                           "\"beta-frac\":0.25,\"lambda0-deg\":11.25,\"beta-deg\":4.5}"));
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
    parse_fails(HEAD "prism = steel-22\n", "t.ini: --prism and --ramp go together");
    parse_fails(HEAD "prism = steel-22\nramp = glass\n[axis N]\nvalues = 6\n[axis ramp]\n"
                "values = glass\n", "t.ini:15: 'ramp': a catalogue name goes in [fixed]");
    parse_fails(HEAD "N = 6\n[catalogue]\nbeta-deg = 1\n", "t.ini: [catalogue] holds the "
                "numbers of the prism and ramp that [fixed] names; this file names none");
    parse_fails(HEAD "prism = p\nramp = r\n[catalogue]\nN = 6\nN = 7\n",
                "t.ini:14: 'N' is given twice");
    parse_fails(HEAD "N = 6\nbeta-deg = 1\nlambda0-deg = 3\n[repeat]\nperturb = N 1\n",
                "perturb needs count");
    parse_fails("[sweep]\nname = x\nmodel = simulate\nseries = speed\n" FIXED,
                "t.ini:4: series 'speed': the simulate model stores t,omega,theta,Lp,x,vp1,vp2");
    parse_fails("[sweep]\nname = x\nmodel = dimer\nseries-rate = 50\nseries = t, y1, omega\n",
                "t.ini:5: series 'omega': the dimer model stores t,x1,y1,x2,y2,yp,vx1,theta");
    parse_fails(RP "series = t, Lp\n[fixed]\nmu = 1\nv0 = 1,0\n",
                "t.ini:4: series 'Lp': the roughplane model stores t,x,y,theta,vx,vy,omega");
    parse_fails(HEAD "N = 6\nbeta-deg = 1\nlambda0-deg = 3\nlaw = elastic\n",
                "t.ini: option '--law'");
    parse_fails("[sweep]\nname = x\nmodel = simulate\nthis is no ini line\n",
                "t.ini:4: not an INI line");
}

int main(void)
{
    gsl_set_error_handler_off();   /* as prismlab's main: the library checks GSL's codes */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(points_in_mixed_radix),
        cmocka_unit_test(fractions_become_degrees),
        cmocka_unit_test(refused_points_are_rows),
        cmocka_unit_test(repeats_are_reproducible),
        cmocka_unit_test(series_are_decimated),
        cmocka_unit_test(dimer_points),
        cmocka_unit_test(mistakes_by_line),
        cmocka_unit_test(catalogue_numbers),
        cmocka_unit_test(roughplane_points),
        cmocka_unit_test(series_of_the_seeds),
        cmocka_unit_test(roughplane_mistakes_by_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
