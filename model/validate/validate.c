/* model/validate/validate.c - a stored run against the model.  See validate.h. */
#include "model/validate/validate.h"

#include "db/catalog.h"
#include "db/derived.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/validation.h"
#include "model/validate/answer.h"
#include "model/validate/setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *law_name(pl_law law)
{
    return law == PL_LAW_LINE ? "line" : "plastic";
}

/* The simulation of a stored run: its prism and ramp from the catalogue,
 * its beam heights and recorded lambda0 into p; its processing into proc
 * and its ramp into ramp. */
static pl_status run_model(pl_store *store, long long run_id, pl_law law,
                           pl_model_params *p, pl_processing *proc,
                           pl_ramp *ramp, pl_err *err)
{
    pl_run_info info;
    pl_channel ch[2];
    pl_prism prism;
    if (pl_run_get(store, run_id, &info, err) != PL_OK)
        return err->code;
    if (!info.prism[0] || !info.ramp[0])
        return pl_err_set(err, PL_EINVAL, "run %lld names no %s: the "
                          "simulation needs it", run_id,
                          info.prism[0] ? "ramp" : "prism");
    /* a lab must not get a verdict from numbers a check said not to trust:
     * a suspect run is not fitted (docs/validation.md) */
    pl_quality q;
    pl_err ignore = {0};
    char why[512];
    if (pl_quality_get(store, run_id, &q, &ignore) == PL_OK &&
        pl_quality_withholds(run_id, q.quality, why, sizeof why))
        return pl_err_set(err, PL_EINVAL, "%s", why);
    if (pl_prism_get(store, info.prism, &prism, err) != PL_OK ||
        pl_ramp_get(store, info.ramp, ramp, err) != PL_OK ||
        pl_run_channels(store, run_id, ch, 2, err) != PL_OK ||
        pl_derived_get(store, run_id, proc, err) != PL_OK)
        return err->code;
    pl_model_params_default(p);
    pl_model_params_from_catalog(p, &prism, ramp);
    p->law = law;
    p->h1 = ch[0].beam_height_m;
    p->h2 = ch[1].beam_height_m;
    p->lambda0 = info.lambda0_rad;
    return PL_OK;
}

/* What a validation fits: nothing (recorded), or what spec_in names with
 * beta kept within the ramp's stated uncertainty when spec_in gives none,
 * from 90 % of alpha + beta when no lambda0 was recorded. */
static pl_status fit_of(long long run_id, int fitted, const pl_fit_spec *spec_in,
                        const pl_ramp *ramp, pl_model_params *p,
                        pl_fit_spec *spec, pl_err *err)
{
    memset(spec, 0, sizeof *spec);
    if (fitted) {
        *spec = *spec_in;
        if (isnan(spec->beta_sd) || spec->beta_sd <= 0)
            spec->beta_sd = isfinite(ramp->beta_sd_rad) ? ramp->beta_sd_rad : 0.005 * M_PI / 180;
        if (!(p->lambda0 > 0))
            p->lambda0 = 0.9 * (M_PI / p->N + p->beta);
    } else if (!(p->lambda0 > 0)) {
        return pl_err_set(err, PL_EINVAL, "run %lld has no recorded release "
                          "angle: validate it with a fit (leave out --no-fit: validate "
                          "fits " PL_FIT_DEFAULT " by default)",
                          run_id);
    }
    return PL_OK;
}

/* The stored row of a match r of run_id (processed as proc) under law,
 * fitted by spec or not. */
static void validation_of(pl_validation *v, long long run_id, pl_law law,
                          int fitted, const pl_fit_spec *spec,
                          const pl_processing *proc, const pl_match_result *r)
{
    memset(v, 0, sizeof *v);
    v->run_id = run_id;
    snprintf(v->law, sizeof v->law, "%s", law_name(law));
    snprintf(v->fit, sizeof v->fit, "%s", fitted ? "fitted" : "recorded");
    v->n_edges = r->params.N;
    v->a0_m = r->params.a0;
    v->beta_rad = r->params.beta;
    v->lambda0_rad = r->params.lambda0;
    v->mu_s = r->params.mu_s;
    v->mu = isnan(r->params.mu) ? r->params.mu_s : r->params.mu;
    v->h1_m = r->params.h1;
    v->h2_m = r->params.h2;
    v->t0_s = r->t0;
    v->duration_s = proc->end_t_s - r->t0;
    v->rate_hz = 1000;
    snprintf(v->status, sizeof v->status, "%s", pl_model_end_name(r->status));
    v->status_t_s = r->status_t;
    v->n_impacts_sim = r->n_impacts_sim;
    snprintf(v->params, sizeof v->params,
             "fit_lambda0=%d\nfit_t0=%d\nfit_beta=%d\nbeta_sd_rad=%.6g\n"
             "iterations=%d\nt_max_rel_err_s=%.4f\nbeta_sd_fit_rad=%.6g\n"
             "lp_offset=%.6g\nlp_offset_sd=%.6g\ng_sd=%.6g\n"
             "sys_lambda0_g_rad=%.3g\nsys_lambda0_beta_rad=%.3g\n"
             "sys_lambda0_step_rad=%.3g\nbeta_sys_rad=%.3g\nlp_base=%.9g\n",
             spec->lambda0, spec->t0, spec->beta, spec->beta_sd, r->iterations,
             r->t_max_rel_err, r->beta_sd, r->lp_offset, r->lp_offset_sd,
             spec->g_sd > 0 ? spec->g_sd : PL_SYS_G_SD, r->sys.lambda0[PL_SYS_G],
             r->sys.lambda0[PL_SYS_BETA], r->sys.lambda0[PL_SYS_STEP], r->sys.beta_sd,
             r->lp_base);
    v->max_rel_err_lp = r->max_rel_err;
    v->rms_err_lp = r->rms_err;
    v->lp_end_meas = r->lp_end_meas;
    v->lp_end_sim = r->lp_end_sim;
    v->omega_last_meas = r->omega_last_meas;
    v->omega_last_sim = r->omega_last_sim;
    v->ratio_meas = r->ratio_meas;
    v->ratio_pred = r->ratio_pred;
    v->n_impacts_meas = r->n_impacts_meas;
    v->lambda0_sd_rad = r->lambda0_sd;
    v->t0_sd_s = r->t0_sd;
    v->lambda0_sys_rad = r->sys.lambda0_sd;
    v->t0_sys_s = r->sys.t0_sd;
    v->fit_residual = r->fit_rms;
}

pl_status pl_validate_match(pl_store *store, long long run_id, pl_law law,
                            int fitted, const pl_fit_spec *spec_in,
                            pl_validation *v, pl_match_result *out, pl_err *err)
{
    pl_processing proc;
    pl_ramp ramp;
    pl_model_params p;
    pl_fit_spec spec;
    if (run_model(store, run_id, law, &p, &proc, &ramp, err) != PL_OK ||
        fit_of(run_id, fitted, spec_in, &ramp, &p, &spec, err) != PL_OK)
        return err->code;
    double *lp = NULL, t0s, rate;
    size_t n;
    if (pl_derived_series(store, run_id, "Lp", 10, &lp, &n, &t0s, &rate, err) != PL_OK)
        return err->code;
    /* a recording that starts after the release (processing's late_start):
     * the model is released as far back as reaches its first speed */
    char late[32];
    pl_processing_param(&proc, "late_start_omega", late, sizeof late);
    pl_match_data d = {.lp = lp, .n = n, .t_first = t0s, .rate = rate,
                       .release_t = proc.release_t_s, .end_t = proc.end_t_s,
                       .omega_last_mean = proc.omega_last_mean,
                       .ratio_mean = proc.ratio_mean, .n_impacts = proc.n_impacts,
                       .late_omega = late[0] ? strtod(late, NULL) : 0};
    pl_match_result r;
    pl_status st = pl_match_run(&p, proc.release_t_s, &d, &spec, &r, err);
    free(lp);
    if (st != PL_OK) {
        pl_err_prefix(err, "run %lld (%s law): ", run_id, law_name(law));
        return st;
    }
    validation_of(v, run_id, law, fitted, &spec, &proc, &r);
    if (out)
        *out = r;
    return PL_OK;
}

pl_status pl_validate_run(pl_store *store, long long run_id, pl_law law,
                          int fitted, const pl_fit_spec *spec,
                          pl_match_result *out, pl_err *err)
{
    pl_validation v;
    if (pl_validate_match(store, run_id, law, fitted, spec, &v, out, err) != PL_OK)
        return err->code;
    return pl_validation_save(store, &v, err);
}

pl_status pl_validation_curve(const pl_validation *v, const double *t,
                              double *lp, double *om, double *v1, double *v2,
                              size_t n, pl_err *err)
{
    pl_match_result m;
    memset(&m, 0, sizeof m);
    pl_model_params_default(&m.params);
    m.params.N = v->n_edges;
    m.params.a0 = v->a0_m;
    m.params.beta = v->beta_rad;
    m.params.lambda0 = v->lambda0_rad;
    m.params.mu_s = v->mu_s;
    m.params.mu = v->mu;
    m.params.h1 = v->h1_m;
    m.params.h2 = v->h2_m;
    m.params.law = !strcmp(v->law, "plastic") ? PL_LAW_PLASTIC : PL_LAW_LINE;
    m.params.ramp_length = 0;
    m.t0 = v->t0_s;
    /* a late start's turn before the recording (validation_of()'s lp_base;
     * absent from rows stored before it, which started at rest) */
    double base = pl_validation_param(v, "lp_base");
    if (isfinite(base))
        m.lp_base = base;
    return pl_match_curve(&m, t, lp, om, v1, v2, n, err);
}
