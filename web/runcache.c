/* web/runcache.c - see runcache.h. */
#include "web/runcache.h"

#include "db/validation.h"
#include "model/prism/match.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pl_runcache {
    pl_run_entry e[PL_RUNCACHE_SLOTS];
    unsigned long long clock;
};

static void entry_free(pl_run_entry *e)
{
    pl_trace_close(e->trace);
    for (int k = 0; k < PL_RS_N; k++)
        free(e->s[k]);
    free(e->imp);
    memset(e, 0, sizeof *e);
}

pl_status pl_runcache_create(pl_runcache **out, pl_err *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? PL_OK : pl_err_set(err, PL_ENOMEM, "run cache: out of memory");
}

void pl_runcache_destroy(pl_runcache *rc)
{
    if (!rc)
        return;
    for (int i = 0; i < PL_RUNCACHE_SLOTS; i++)
        entry_free(&rc->e[i]);
    free(rc);
}

/* The simulation the validation describes, on the derived grid over the
 * valid window; the line law (which the lab tests), fitted when there is a
 * fitted row. */
static pl_status simulate(pl_store *store, pl_run_entry *e, const double *t,
                          pl_err *err)
{
    pl_validation v;
    const char *fit = "fitted";
    pl_status st = pl_validation_get(store, e->run_id, "line", fit, &v, err);
    if (st == PL_ENOTFOUND)
        st = pl_validation_get(store, e->run_id, "line", fit = "recorded", &v, err);
    if (st == PL_ENOTFOUND) {
        pl_err_clear(err);
        return PL_OK;
    }
    if (st != PL_OK)
        return st;
    size_t a = (size_t)fmax(0, ceil((e->proc.release_t_s - e->t0) * e->rate));
    size_t b = (size_t)fmax(0, floor((e->proc.end_t_s - e->t0) * e->rate));
    if (b > e->n)
        b = e->n;
    for (int k = PL_RS_SIM_OMEGA; k <= PL_RS_SIM_LP; k++)
        for (size_t i = 0; i < e->n; i++)
            e->s[k][i] = NAN;
    if (a >= b)
        return PL_OK;
    pl_match_result m;
    memset(&m, 0, sizeof m);
    pl_model_params_default(&m.params);
    m.params.N = v.n_edges;
    m.params.a0 = v.a0_m;
    m.params.beta = v.beta_rad;
    m.params.lambda0 = v.lambda0_rad;
    m.params.mu_s = v.mu_s;
    m.params.mu = v.mu;
    m.params.h1 = v.h1_m;
    m.params.h2 = v.h2_m;
    m.params.law = PL_LAW_LINE;
    m.params.ramp_length = 0;
    m.t0 = v.t0_s;
    if (pl_match_curve(&m, t + a, e->s[PL_RS_SIM_LP] + a, e->s[PL_RS_SIM_OMEGA] + a,
                       NULL, NULL, b - a, err) != PL_OK)
        return pl_err_prefix(err, "run %lld: simulating the %s line-law validation: ",
                             e->run_id, fit);
    e->simulated = 1;
    snprintf(e->sim_label, sizeof e->sim_label, "line law, %s", fit);
    return PL_OK;
}

static pl_status load(pl_store *store, long long run_id, pl_run_entry *e,
                      pl_err *err)
{
    e->run_id = run_id;
    if (pl_trace_open(&e->trace, store, run_id, err) != PL_OK)
        return err->code;
    pl_status st = pl_derived_get(store, run_id, &e->proc, err);
    if (st == PL_ENOTFOUND) {
        pl_err_clear(err);
        return PL_OK;
    }
    if (st != PL_OK)
        return st;
    if (pl_derived_impacts(store, run_id, &e->imp, &e->n_imp, err) != PL_OK)
        return err->code;
    const char *names[2] = {"omega", "Lp"};
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        size_t m;
        if (pl_derived_series(store, run_id, names[k], 10, &e->s[k], &m, &e->t0,
                              &e->rate, err) != PL_OK)
            return err->code;
        n = k ? (m < n ? m : n) : m;
    }
    e->n = n;
    double *t = malloc((n ? n : 1) * sizeof *t);
    e->s[PL_RS_SIM_OMEGA] = malloc((n ? n : 1) * sizeof(double));
    e->s[PL_RS_SIM_LP] = malloc((n ? n : 1) * sizeof(double));
    if (!t || !e->s[PL_RS_SIM_OMEGA] || !e->s[PL_RS_SIM_LP]) {
        free(t);
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", run_id);
    }
    for (size_t i = 0; i < n; i++)
        t[i] = e->t0 + (double)i / e->rate;
    e->processed = 1;
    st = simulate(store, e, t, err);
    free(t);
    return st;
}

pl_status pl_runcache_get(pl_runcache *rc, pl_store *store, long long run_id,
                          pl_run_entry **out, pl_err *err)
{
    *out = NULL;
    pl_run_entry *slot = NULL;
    for (int i = 0; i < PL_RUNCACHE_SLOTS && !slot; i++)
        if (rc->e[i].trace && rc->e[i].run_id == run_id)
            slot = &rc->e[i];
    if (slot) {
        /* a recording grows; a run processed again is loaded again */
        pl_processing p;
        pl_err ignore = {0};
        int stale = pl_derived_get(store, run_id, &p, &ignore) == PL_OK
            ? !slot->processed || strcmp(p.processed_utc, slot->proc.processed_utc) != 0
            : slot->processed;
        if (!stale) {
            if (pl_trace_refresh(slot->trace, store, err) != PL_OK)
                return err->code;
            slot->used = ++rc->clock;
            *out = slot;
            return PL_OK;
        }
    } else {
        slot = &rc->e[0];
        for (int i = 0; i < PL_RUNCACHE_SLOTS; i++)
            if (!rc->e[i].trace || rc->e[i].used < slot->used)
                slot = &rc->e[i];
    }
    entry_free(slot);
    if (load(store, run_id, slot, err) != PL_OK) {
        entry_free(slot);
        return err->code;
    }
    slot->used = ++rc->clock;
    *out = slot;
    return PL_OK;
}
