/* tests/model/prism/prism_test.c - the prism model (model/prism/prism.c): geometry and
 * g-functions, contact-phase energy and reaction forces, the line impact
 * (convergence, homogeneity, energy balance), plastic law, mass
 * independence, rock-back stop, ramp end, bad parameters and the CLI. */
#include "model/prism/prism.h"
#include "tests/util/testutil.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define DEG (M_PI / 180.0)
#define NS 70001

static double T[NS], X[NS], Y[NS], TH[NS], OM[NS], V1[NS], V2[NS], LP[NS];
static pl_model_impact IMP[4000];

static void result_init(pl_model_result *r)
{
    memset(r, 0, sizeof *r);
    r->t = T; r->x = X; r->y = Y; r->theta = TH; r->omega = OM;
    r->vp1 = V1; r->vp2 = V2; r->lp = LP;
    r->cap_samples = NS;
    r->impacts = IMP;
    r->cap_impacts = 4000;
}

/* Direct numerical integration of the stress profile (3.6), (3.8). */
static void g_numeric(int mode, double s, double b, double *g1, double *g2)
{
    double sstar = (mode == 1 || mode == 3) ? b : 0;
    double lo = mode == 1 ? s : 0, hi = mode == 2 ? s : b;
    int n = 20000;
    *g1 = *g2 = 0;
    for (int i = 0; i < n; i++) {
        double xi = lo + (hi - lo) * (i + 0.5) / n;
        double f = (xi - s) / (sstar - s);
        *g1 += f * (hi - lo) / n;
        *g2 += f * (xi - b / 2) * (hi - lo) / n;
    }
}

static void g_functions_match_profiles(void **state)
{
    (void)state;
    double b = 2 * 0.015 * sin(M_PI / 22);
    struct { int mode; double s; } cases[] = {
        {1, 0}, {1, 0.3 * b}, {1, 0.9 * b}, {2, 0.2 * b}, {2, b},
        {3, -0.5 * b}, {3, -5 * b}, {4, 1.5 * b}, {4, 8 * b}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double n1, n2;
        g_numeric(cases[i].mode, cases[i].s, b, &n1, &n2);
        assert_true(fabs(pl_g1(cases[i].mode, cases[i].s, b) - n1) < 1e-8 * b);
        assert_true(fabs(pl_g2(cases[i].mode, cases[i].s, b) - n2) < 1e-8 * b * b);
    }
    /* modes meet continuously: DS-I at s = 0 is DS-III at s -> 0- */
    assert_true(fabs(pl_g1(1, 0, b) - pl_g1(3, -1e-12, b)) < 1e-9);
    assert_true(fabs(pl_g2(1, 0, b) - pl_g2(3, -1e-12, b)) < 1e-9 * b);
    assert_true(isnan(pl_g1(5, 0, b)));
}

static void static_equilibrium_forces(void **state)
{
    (void)state;
    double m = 0.3, beta = 0.4079 * DEG, fn, ft;
    /* balanced: centre straight above the edge, psi + beta = 0, at rest */
    pl_contact_forces(22, 0.015, m, beta, -beta, 0, &fn, &ft);
    assert_true(fabs(fn - m * 9.80665 * cos(beta)) < 1e-12);
    assert_true(fabs(ft + m * 9.80665 * sin(beta)) < 1e-12);
    /* spinning fast lightens the edge: centripetal term */
    double fn2, ft2;
    pl_contact_forces(22, 0.015, m, beta, -beta, 10, &fn2, &ft2);
    assert_true(fabs(fn2 - (fn - m * 0.015 * 100 * cos(beta))) < 1e-12);
    assert_true(fabs(ft2 - (ft + m * 0.015 * 100 * sin(beta))) < 1e-12);
    /* the printed (2.1) would give F_n = -m g sin(beta) here: not ours */
    assert_true(fn > 0);
}

static void contact_energy_conserved(void **state)
{
    (void)state;
    pl_model_params p;
    pl_model_params_default(&p);
    pl_err err = {0};
    pl_model *m;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    pl_model_result r;
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_true(r.n_impacts >= 2);
    double alpha = M_PI / p.N, psi0 = alpha - p.lambda0;
    double e0 = pl_contact_energy(p.N, p.a0, p.mass, p.beta, psi0, 0);
    size_t n = 0;
    for (size_t i = 1; i < r.n_samples && T[i] < IMP[0].t; i++, n++) {
        double e = pl_contact_energy(p.N, p.a0, p.mass, p.beta, psi0 + TH[i], OM[i]);
        assert_true(fabs(e - e0) <= 1e-9 * fabs(e0));
    }
    assert_true(n > 500);
    /* between impacts 1 and 2 as well */
    double e1 = NAN;
    for (size_t i = 1; i < r.n_samples; i++) {
        if (T[i] <= IMP[0].t || T[i] >= IMP[1].t) continue;
        double e = pl_contact_energy(p.N, p.a0, p.mass, p.beta,
                                     psi0 + TH[i] - 2 * alpha, OM[i]);
        /* the new pivot lies b sin(beta) lower than the old one */
        e -= p.mass * 9.80665 * 2 * p.a0 * sin(alpha) * sin(p.beta);
        if (isnan(e1)) e1 = e;
        assert_true(fabs(e - e1) <= 1e-9 * fabs(e1));
    }
    /* the impact removed energy: (1 - r^2) of the kinetic part */
    double ke = 0.5 * p.mass * p.a0 * p.a0 * ((cos(2 * alpha) + 2) / 6 + 1);
    double lost = ke * (1 - pow(IMP[0].ratio, 2)) * pow(IMP[0].omega_minus, 2);
    assert_true(fabs((e0 - e1) - lost) < 1e-9 * e0);
    pl_model_destroy(m);
}

static void line_impact_converges_and_is_homogeneous(void **state)
{
    (void)state;
    pl_err err = {0};
    int Ns[] = {22, 30, 38, 6};
    for (size_t k = 0; k < 4; k++) {
        pl_impact_detail a, b, c, d;
        assert_int_equal(pl_line_impact_solve(Ns[k], 0.015, 0.2, 0.12, 0.12, 3, 50, &a, &err), PL_OK);
        assert_int_equal(pl_line_impact_solve(Ns[k], 0.015, 0.2, 0.12, 0.12, 3, 3200, &b, &err), PL_OK);
        assert_true(fabs(a.ratio - b.ratio) < 1e-6 * b.ratio);
        assert_true(b.ratio > 0 && b.ratio < 1);
        assert_true(b.ratio > pl_plastic_ratio(Ns[k]) - 0.2);
        /* other speed, mass, size: same ratio */
        assert_int_equal(pl_line_impact_solve(Ns[k], 0.03, 7.9, 0.12, 0.12, 0.01, 400, &c, &err), PL_OK);
        assert_true(fabs(c.ratio - b.ratio) < 1e-6 * b.ratio);
        /* dissipated kinetic energy = layer energy discarded at (3.29) + friction */
        assert_int_equal(pl_line_impact_solve(Ns[k], 0.015, 0.2, 0.12, 0.12, 3, 400, &d, &err), PL_OK);
        double lost = d.ke_before - d.ke_after;
        assert_true(lost > 0);
        assert_true(fabs(lost - d.layer_energy - d.friction_work) < 1e-9 * lost);
        assert_true(d.end_at_b);
    }
    /* no friction at all: the impact slips and says so */
    pl_impact_detail s;
    assert_int_equal(pl_line_impact_solve(6, 0.015, 0.2, 0.0, 0.0, 3, 400, &s, &err), PL_OK);
    assert_int_equal(s.slipped, 1);
}

static void plastic_ratio_closed_form(void **state)
{
    (void)state;
    for (int N = 3; N < 60; N++) {
        double a = M_PI / N, m = 0.7, a0 = 0.02;
        double J = m * a0 * a0 * (cos(2 * a) + 2) / 6, JA = J + m * a0 * a0;
        assert_true(fabs(pl_plastic_ratio(N) - (J + m * a0 * a0 * cos(2 * a)) / JA) < 1e-14);
    }
    /* the handle applies it */
    pl_model_params p;
    pl_model_params_default(&p);
    p.law = PL_LAW_PLASTIC;
    p.N = 30;
    p.lambda0 = 0.5 * DEG;
    p.beta = 1.0 * DEG;
    pl_err err = {0};
    pl_model *m;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    pl_model_result r;
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_true(r.n_impacts >= 1);
    assert_true(fabs(IMP[0].omega_plus / IMP[0].omega_minus - pl_plastic_ratio(30)) < 1e-14);
    pl_model_destroy(m);
}

static void mass_independent(void **state)
{
    (void)state;
    pl_model_params p;
    pl_model_params_default(&p);
    p.duration = 3;
    pl_err err = {0};
    pl_model *m;
    static double lp1[NS];
    pl_model_result r;
    p.mass = 0.24;  /* steel */
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    size_t n1 = r.n_samples;
    memcpy(lp1, LP, n1 * sizeof *LP);
    p.mass = 0.24 * 2.70 / 7.85;  /* aluminium */
    assert_int_equal(pl_model_set_params(m, &p, &err), PL_OK);
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_int_equal(r.n_samples, n1);
    for (size_t i = 0; i < n1; i++)
        assert_true(fabs(LP[i] - lp1[i]) < 1e-12);
    pl_model_destroy(m);
}

static void rock_back_stops(void **state)
{
    (void)state;
    pl_model_params p;
    pl_model_params_default(&p);
    p.law = PL_LAW_PLASTIC;  /* N = 22 from 5.322 deg: too little energy */
    pl_err err = {0};
    pl_model *m;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    pl_model_result r;
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_int_equal(r.end, PL_END_STOPPED);
    assert_int_equal(r.n_impacts, 1);
    assert_true(r.t_end > IMP[0].t && r.t_end < 1);
    assert_true(fabs(r.omega_end) < 1e-9);
    /* stopped before reaching lambda = alpha + beta, behind the top */
    assert_true(r.lp_end < 1.0 && r.lp_end > p.lambda0 / (2 * M_PI / p.N));
    assert_true(r.n_samples < 10000);
    pl_model_destroy(m);
}

static void ramp_end_and_gauges(void **state)
{
    (void)state;
    pl_model_params p;
    pl_model_params_default(&p);
    p.ramp_length = 0.2;
    pl_err err = {0};
    pl_model *m;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    pl_model_result r;
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_int_equal(r.end, PL_END_LEFT_RAMP);
    assert_true(fabs(r.x_end - 0.2) < 1e-9);
    for (size_t i = 1; i < r.n_samples; i++) {
        /* (4.1) recovers omega from the two gauge velocities */
        assert_true(fabs((V1[i] - V2[i]) / (p.h1 - p.h2) - OM[i]) < 1e-9);
        assert_true(V1[i] > 0 && V2[i] > 0);
        assert_true(fabs(LP[i] - p.N * TH[i] / (2 * M_PI)) < 1e-9);
        assert_true(X[i] >= X[i - 1] - 1e-12);
    }
    /* lp_grid agrees with the run */
    double tg[3] = {0.5, 1.0, 2.0}, lg[3];
    pl_model_end e;
    p.ramp_length = 0;
    assert_int_equal(pl_model_set_params(m, &p, &err), PL_OK);
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_int_equal(pl_model_lp_grid(m, tg, lg, 3, &e, &err), PL_OK);
    for (int k = 0; k < 3; k++)
        assert_true(fabs(lg[k] - LP[(size_t)(tg[k] * 10000 + 0.5)]) < 1e-9);
    pl_model_destroy(m);
}

static void slip_reported(void **state)
{
    (void)state;
    pl_model_params p;
    pl_model_params_default(&p);
    p.mu_s = 0.001;  /* the contact phase needs |F_t|/F_n ~ tan(beta) ~ 0.007 */
    p.mu = 0.001;
    pl_err err = {0};
    pl_model *m;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    pl_model_result r;
    result_init(&r);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    assert_int_equal(r.end, PL_END_SLIP);
    assert_true(fabs(r.fail_ft) > 0.001 * r.fail_fn);
    assert_true(r.t_end < 7);
    pl_model_destroy(m);
}

static void bad_parameters(void **state)
{
    (void)state;
    pl_model_params p;
    pl_err err = {0};
    pl_model *m = (pl_model *)1;
    pl_model_params_default(&p); p.N = 2;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_EINVAL);
    assert_null(m);
    assert_non_null(strstr(err.msg, "N"));
    pl_model_params_default(&p); p.lambda0 = 20 * DEG;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "lambda0"));
    pl_model_params_default(&p); p.h2 = -0.01;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "h2"));
    pl_model_params_default(&p); p.beta = 9 * DEG;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "beta"));
    pl_model_params_default(&p); p.beta = 0;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_EINVAL);
    pl_model_destroy(NULL);
}

static void cli_simulate(void **state)
{
    (void)state;
    char out[4096], errs[4096];
    const char *argv[] = {"prismlab", "simulate", "--N", "22", "--a0", "0.015",
        "--beta-deg", "0.4079", "--lambda0-deg", "5.322", "--mu-s", "0.12",
        "--h1", "0.0199", "--h2", "0.0112", "--duration", "1", NULL};
    assert_int_equal(tu_prismlab(out, errs, sizeof out, argv), 0);
    assert_non_null(strstr(out, "Lp_end="));
    assert_non_null(strstr(out, "status=end"));
    const char *bad[] = {"prismlab", "simulate", "--N", "22", "--a0", "0.015",
        "--beta-deg", "0.4079", "--lambda0-deg", "12", "--mu-s", "0.12",
        "--h1", "0.0199", "--h2", "0.0112", "--duration", "1", NULL};
    assert_int_equal(tu_prismlab(out, errs, sizeof out, bad), 1);
    assert_non_null(strstr(errs, "lambda0"));
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(g_functions_match_profiles),
        cmocka_unit_test(static_equilibrium_forces),
        cmocka_unit_test(contact_energy_conserved),
        cmocka_unit_test(line_impact_converges_and_is_homogeneous),
        cmocka_unit_test(plastic_ratio_closed_form),
        cmocka_unit_test(mass_independent),
        cmocka_unit_test(rock_back_stops),
        cmocka_unit_test(ramp_end_and_gauges),
        cmocka_unit_test(slip_reported),
        cmocka_unit_test(bad_parameters),
        cmocka_unit_test(cli_simulate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
