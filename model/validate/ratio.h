/* model/validate/ratio.h - the omega+/omega- each impact law predicts for
 * a run: what the run's measured ratios are set against (the run page's
 * figure of the impacts, the report's figure of each run). */
#ifndef PL_MODEL_VALIDATE_RATIO_H
#define PL_MODEL_VALIDATE_RATIO_H

#include "core/error.h"
#include "db/store.h"

/* Each law's omega+/omega- for run_id: ratio[0] the line-impact law's
 * (seed 000 section 3), ratio[1] the plastic (rimless-wheel) law's.  A
 * law's stored validation gives its ratio_pred (fitted, else recorded);
 * a run not validated under it, the law solved for the run's catalogued
 * prism (and, for the line law, its ramp's friction).  NaN for a law
 * neither gives (a run naming no prism, or one the catalogue lacks).
 * Errors reading the store are returned (PL_ENOTFOUND: no such run). */
pl_status pl_law_ratios(pl_store *store, long long run_id, double ratio[2],
                        pl_err *err);

#endif
