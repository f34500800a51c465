/* db/validation.h - matching simulations and their comparison with runs
 * (tables simulation and validation of schemas/001_init.sql).
 *
 * One validation row per run, law (line, plastic) and fit (recorded:
 * lambda0 as the operator recorded it, release as detected; fitted:
 * lambda0 and the release instant (and beta when asked) fitted to L_p).
 * Saving replaces the row and its simulation in one transaction; a set
 * (a run's laws and fits) is one transaction too, so a reader, a kill or a
 * full disk sees the old set or the new one, never a mixture.
 */
#ifndef PL_DB_VALIDATION_H
#define PL_DB_VALIDATION_H

#include "core/error.h"
#include "db/store.h"

typedef struct {
    long long run_id;
    char law[8];              /* "line", "plastic" */
    char fit[10];             /* "recorded", "fitted" */
    /* the simulation */
    int n_edges;
    double a0_m, beta_rad, lambda0_rad, mu_s, mu, h1_m, h2_m;
    double t0_s, duration_s, rate_hz;
    char status[12];          /* end, stopped, left_ramp, slip, detached */
    double status_t_s;
    long long n_impacts_sim;
    char params[512];         /* key=value lines: fit grid, iterations, ... */
    /* the comparison */
    double max_rel_err_lp, rms_err_lp, lp_end_meas, lp_end_sim;
    double omega_last_meas, omega_last_sim, ratio_meas, ratio_pred;
    long long n_impacts_meas;
    double lambda0_sd_rad, t0_sd_s, fit_residual;   /* sd: statistical */
    double lambda0_sys_rad, t0_sys_s;   /* systematic terms in quadrature;
                                           NaN: none worked out */
    char created_utc[32];
} pl_validation;

/* Saves (replacing) a validation and its simulation. */
pl_status pl_validation_save(pl_store *store, const pl_validation *v,
                             pl_err *err);

/* Saves (replacing) the n validations v[0..n) and their simulations in one
 * transaction, all stamped with one time: all of them are stored, or on
 * any error none (the rows before stay as they were). */
pl_status pl_validation_save_set(pl_store *store, const pl_validation *v,
                                 size_t n, pl_err *err);

/* Reads the validation of (run, law, fit); PL_ENOTFOUND when none. */
pl_status pl_validation_get(pl_store *store, long long run_id,
                            const char *law, const char *fit,
                            pl_validation *v, pl_err *err);

/* The number stored as key=value in v->params (validate's own record of
 * the fit: fit_lambda0, lp_base, ...); NaN when the key is absent (a row
 * from before it was stored). */
double pl_validation_param(const pl_validation *v, const char *key);

/* The fit validate does unless told otherwise: lambda0, the release
 * instant and beta within its stated sd (docs/validation.md, "The
 * default fit"). */
#define PL_FIT_DEFAULT "lambda0,t0,beta"

/* Parses a list of fitted parameters ("lambda0,t0,beta", any of them, in
 * any order, comma-separated) into the three flags; PL_EINVAL naming the
 * word that is none of them, or an empty list. */
pl_status pl_fit_names_parse(const char *list, int *lambda0, int *t0, int *beta,
                             pl_err *err);

#endif
