/* db/validation.c - simulation and validation rows.  See validation.h. */
#include "db/validation.h"

#include "db/sqlite_private.h"

#include <math.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>

/* Replaces one validation and its simulation inside the caller's
 * transaction, stamped now. */
static pl_status save_one(pl_store *store, const pl_validation *v,
                          const char *now, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    /* the old row's simulation goes with it (validation cascades from it) */
    if (pl_store_prepare(store, "DELETE FROM simulation WHERE id IN (SELECT "
                         "simulation_id FROM validation WHERE run_id = ? AND "
                         "law = ? AND fit = ?)", &st, err) != PL_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, v->run_id);
    sqlite3_bind_text(st, 2, v->law, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, v->fit, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        pl_store_fail(store, "replacing a validation", err);
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (pl_store_prepare(store, "INSERT INTO simulation (run_id, law, fit, "
                         "created_utc, n_edges, a0_m, beta_rad, lambda0_rad, "
                         "mu_s, mu, h1_m, h2_m, t0_s, duration_s, rate_hz, "
                         "status, status_t_s, lp_end, n_impacts, params) VALUES "
                         "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st, err) != PL_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, v->run_id);
    sqlite3_bind_text(st, 2, v->law, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, v->fit, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, now, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, v->n_edges);
    pl_store_bind_real(st, 6, v->a0_m);
    pl_store_bind_real(st, 7, v->beta_rad);
    pl_store_bind_real(st, 8, v->lambda0_rad);
    pl_store_bind_real(st, 9, v->mu_s);
    pl_store_bind_real(st, 10, v->mu);
    pl_store_bind_real(st, 11, v->h1_m);
    pl_store_bind_real(st, 12, v->h2_m);
    pl_store_bind_real(st, 13, v->t0_s);
    pl_store_bind_real(st, 14, v->duration_s);
    pl_store_bind_real(st, 15, v->rate_hz);
    sqlite3_bind_text(st, 16, v->status, -1, SQLITE_STATIC);
    pl_store_bind_real(st, 17, v->status_t_s);
    pl_store_bind_real(st, 18, v->lp_end_sim);
    sqlite3_bind_int64(st, 19, v->n_impacts_sim);
    sqlite3_bind_text(st, 20, v->params, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        pl_store_fail(store, "saving a simulation", err);
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    long long sim = sqlite3_last_insert_rowid(pl_store_db(store));
    if (pl_store_prepare(store, "INSERT INTO validation (run_id, law, fit, "
                         "simulation_id, created_utc, max_rel_err_lp, "
                         "rms_err_lp, lp_end_meas, lp_end_sim, omega_last_meas, "
                         "omega_last_sim, ratio_meas, ratio_pred, n_impacts_meas, "
                         "n_impacts_sim, pure_rotation, lambda0_rad, "
                         "lambda0_sd_rad, t0_s, t0_sd_s, beta_rad, fit_residual, "
                         "lambda0_sys_rad, t0_sys_s) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         &st, err) != PL_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, v->run_id);
    sqlite3_bind_text(st, 2, v->law, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, v->fit, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, sim);
    sqlite3_bind_text(st, 5, now, -1, SQLITE_STATIC);
    pl_store_bind_real(st, 6, v->max_rel_err_lp);
    pl_store_bind_real(st, 7, v->rms_err_lp);
    pl_store_bind_real(st, 8, v->lp_end_meas);
    pl_store_bind_real(st, 9, v->lp_end_sim);
    pl_store_bind_real(st, 10, v->omega_last_meas);
    pl_store_bind_real(st, 11, v->omega_last_sim);
    pl_store_bind_real(st, 12, v->ratio_meas);
    pl_store_bind_real(st, 13, v->ratio_pred);
    sqlite3_bind_int64(st, 14, v->n_impacts_meas);
    sqlite3_bind_int64(st, 15, v->n_impacts_sim);
    sqlite3_bind_text(st, 16, v->status, -1, SQLITE_STATIC);
    pl_store_bind_real(st, 17, v->lambda0_rad);
    pl_store_bind_real(st, 18, v->lambda0_sd_rad);
    pl_store_bind_real(st, 19, v->t0_s);
    pl_store_bind_real(st, 20, v->t0_sd_s);
    pl_store_bind_real(st, 21, v->beta_rad);
    pl_store_bind_real(st, 22, v->fit_residual);
    pl_store_bind_real(st, 23, v->lambda0_sys_rad);
    pl_store_bind_real(st, 24, v->t0_sys_s);
    if (sqlite3_step(st) != SQLITE_DONE) {
        pl_store_fail(store, "saving a validation", err);
        goto fail;
    }
    sqlite3_finalize(st);
    return PL_OK;
fail:
    sqlite3_finalize(st);
    return err->code;
}

pl_status pl_validation_save_set(pl_store *store, const pl_validation *v,
                                 size_t n, pl_err *err)
{
    char now[32];
    pl_store_utc_now(now);
    if (pl_store_begin(store, err) != PL_OK)
        return err->code;
    for (size_t i = 0; i < n; i++)
        if (save_one(store, &v[i], now, err) != PL_OK) {
            pl_store_rollback(store);
            return err->code;
        }
    return pl_store_commit(store, err);
}

pl_status pl_validation_save(pl_store *store, const pl_validation *v,
                             pl_err *err)
{
    return pl_validation_save_set(store, v, 1, err);
}

pl_status pl_validation_get(pl_store *store, long long run_id,
                            const char *law, const char *fit,
                            pl_validation *v, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "SELECT s.n_edges, s.a0_m, s.beta_rad, "
                         "s.lambda0_rad, s.mu_s, s.mu, s.h1_m, s.h2_m, s.t0_s, "
                         "s.duration_s, s.rate_hz, s.status, s.status_t_s, "
                         "s.n_impacts, s.params, v.max_rel_err_lp, v.rms_err_lp, "
                         "v.lp_end_meas, v.lp_end_sim, v.omega_last_meas, "
                         "v.omega_last_sim, v.ratio_meas, v.ratio_pred, "
                         "v.n_impacts_meas, v.lambda0_sd_rad, v.t0_sd_s, "
                         "v.fit_residual, v.created_utc, v.lambda0_sys_rad, "
                         "v.t0_sys_s FROM validation v JOIN "
                         "simulation s ON s.id = v.simulation_id WHERE "
                         "v.run_id = ? AND v.law = ? AND v.fit = ?", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, law, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, fit, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            return pl_err_set(err, PL_ENOTFOUND, "run %lld has no %s/%s "
                              "validation (run: prismlab validate %lld)",
                              run_id, law, fit, run_id);
        return pl_store_fail(store, "reading a validation", err);
    }
    memset(v, 0, sizeof *v);
    v->run_id = run_id;
    snprintf(v->law, sizeof v->law, "%s", law);
    snprintf(v->fit, sizeof v->fit, "%s", fit);
    v->n_edges = sqlite3_column_int(st, 0);
    v->a0_m = pl_store_column_real(st, 1);
    v->beta_rad = pl_store_column_real(st, 2);
    v->lambda0_rad = pl_store_column_real(st, 3);
    v->mu_s = pl_store_column_real(st, 4);
    v->mu = pl_store_column_real(st, 5);
    v->h1_m = pl_store_column_real(st, 6);
    v->h2_m = pl_store_column_real(st, 7);
    v->t0_s = pl_store_column_real(st, 8);
    v->duration_s = pl_store_column_real(st, 9);
    v->rate_hz = pl_store_column_real(st, 10);
    pl_store_column_text(st, 11, v->status, sizeof v->status);
    v->status_t_s = pl_store_column_real(st, 12);
    v->n_impacts_sim = sqlite3_column_int64(st, 13);
    pl_store_column_text(st, 14, v->params, sizeof v->params);
    v->max_rel_err_lp = pl_store_column_real(st, 15);
    v->rms_err_lp = pl_store_column_real(st, 16);
    v->lp_end_meas = pl_store_column_real(st, 17);
    v->lp_end_sim = pl_store_column_real(st, 18);
    v->omega_last_meas = pl_store_column_real(st, 19);
    v->omega_last_sim = pl_store_column_real(st, 20);
    v->ratio_meas = pl_store_column_real(st, 21);
    v->ratio_pred = pl_store_column_real(st, 22);
    v->n_impacts_meas = sqlite3_column_int64(st, 23);
    v->lambda0_sd_rad = pl_store_column_real(st, 24);
    v->t0_sd_s = pl_store_column_real(st, 25);
    v->fit_residual = pl_store_column_real(st, 26);
    pl_store_column_text(st, 27, v->created_utc, sizeof v->created_utc);
    v->lambda0_sys_rad = pl_store_column_real(st, 28);
    v->t0_sys_s = pl_store_column_real(st, 29);
    sqlite3_finalize(st);
    return PL_OK;
}

double pl_validation_param(const pl_validation *v, const char *key)
{
    size_t k = strlen(key);
    for (const char *l = v->params; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
        if (!strncmp(l, key, k) && l[k] == '=')
            return strtod(l + k + 1, NULL);
    }
    return NAN;
}

pl_status pl_fit_names_parse(const char *list, int *lambda0, int *t0, int *beta,
                             pl_err *err)
{
    static const char *const names[3] = {"lambda0", "t0", "beta"};
    int *flag[3] = {lambda0, t0, beta}, any = 0;
    *lambda0 = *t0 = *beta = 0;
    for (const char *w = list; *w;) {
        size_t len = strcspn(w, ", ");
        int i = 0;
        while (i < 3 && !(len == strlen(names[i]) && !strncmp(w, names[i], len)))
            i++;
        if (len > 0 && i == 3)
            return pl_err_set(err, PL_EINVAL, "'%.*s' is not lambda0, t0 or beta",
                              (int)len, w);
        if (len > 0)
            *flag[i] = any = 1;
        w += len + (w[len] != '\0');
    }
    if (!any)
        return pl_err_set(err, PL_EINVAL, "no parameter to fit in '%s' (expected "
                          "some of lambda0, t0 and beta)", list);
    return PL_OK;
}
