/* model/validate/ratio.c - each law's predicted omega+/omega-.  See ratio.h. */
#include "model/validate/ratio.h"

#include "db/catalog.h"
#include "db/run.h"
#include "db/validation.h"
#include "model/prism/prism.h"
#include "model/validate/setup.h"

#include <math.h>

/* The ratio of a law's stored validation, fitted else recorded, into
 * *ratio (left alone when there is none). */
static pl_status stored_ratio(pl_store *store, long long run_id, const char *law,
                              double *ratio, pl_err *err)
{
    static const char *const fits[2] = {"fitted", "recorded"};
    for (int k = 0; k < 2; k++) {
        pl_validation v;
        pl_status st = pl_validation_get(store, run_id, law, fits[k], &v, err);
        if (st == PL_ENOTFOUND) {
            pl_err_clear(err);
            continue;
        }
        if (st != PL_OK)
            return st;
        if (isfinite(v.ratio_pred)) {
            *ratio = v.ratio_pred;
            return PL_OK;
        }
    }
    return PL_OK;
}

/* The laws solved for the run's catalogued prism and ramp, where the
 * validations gave none. */
static void catalog_ratios(pl_store *store, const pl_run_info *info, double ratio[2])
{
    pl_prism prism;
    pl_ramp ramp;
    pl_err ignore = {0};
    pl_prism_init(&prism);
    if (!info->prism[0] || pl_prism_get(store, info->prism, &prism, &ignore) != PL_OK ||
        prism.n_edges < 3)
        return;
    if (isnan(ratio[1]))
        ratio[1] = pl_plastic_ratio(prism.n_edges);
    if (!isnan(ratio[0]) || !info->ramp[0] ||
        pl_ramp_get(store, info->ramp, &ramp, &ignore) != PL_OK)
        return;
    pl_model_params p;
    pl_model *m = NULL;
    pl_model_params_default(&p);
    pl_model_params_from_catalog(&p, &prism, &ramp);
    p.law = PL_LAW_LINE;
    /* the impact's ratio does not depend on the release, but the model
     * checks one: the default's (N = 22's) lies past alpha for N > 25 */
    p.lambda0 = 0.5 * M_PI / prism.n_edges;
    if (pl_model_create(&m, &p, &ignore) == PL_OK)
        ratio[0] = pl_model_impact_ratio(m);
    pl_model_destroy(m);
}

pl_status pl_law_ratios(pl_store *store, long long run_id, double ratio[2],
                        pl_err *err)
{
    pl_run_info info;
    ratio[0] = ratio[1] = NAN;
    if (pl_run_get(store, run_id, &info, err) != PL_OK ||
        stored_ratio(store, run_id, "line", &ratio[0], err) != PL_OK ||
        stored_ratio(store, run_id, "plastic", &ratio[1], err) != PL_OK)
        return err->code;
    if (isnan(ratio[0]) || isnan(ratio[1]))
        catalog_ratios(store, &info, ratio);
    return PL_OK;
}
