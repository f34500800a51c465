/* model/validate/setup.c - model parameters from the catalogue.  See setup.h. */
#include "model/validate/setup.h"

#include "db/store.h"

#include <math.h>

void pl_model_params_from_catalog(pl_model_params *p, const pl_prism *pr,
                                  const pl_ramp *rp)
{
    p->N = pr->n_edges;
    p->a0 = pr->a0_m;
    double mass = pl_prism_mass(pr);
    if (isfinite(mass) && mass > 0)
        p->mass = mass;
    p->beta = rp->beta_rad;
    p->mu_s = rp->mu_s;
    p->mu = rp->mu;
    if (isfinite(rp->length_m) && rp->length_m > 0)
        p->ramp_length = rp->length_m;
}

pl_status pl_model_params_lookup(pl_model_params *p, const char *db_path,
                                 const char *prism, const char *ramp,
                                 pl_err *err)
{
    pl_store *store = NULL;
    pl_prism pr;
    pl_ramp rp;
    if (pl_store_open(&store, db_path, PL_STORE_READONLY, err) != PL_OK)
        return err->code;
    pl_status st = pl_prism_get(store, prism, &pr, err);
    if (st == PL_OK)
        st = pl_ramp_get(store, ramp, &rp, err);
    pl_store_close(store);
    if (st == PL_OK)
        pl_model_params_from_catalog(p, &pr, &rp);
    return st;
}
