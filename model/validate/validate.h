/* model/validate/validate.h - one stored run against the model: reads the run, its
 * processing and its catalogue entries, matches a simulation
 * (model/prism/match.h) and stores the comparison (db/validation.h). */
#ifndef PL_MODEL_VALIDATE_H
#define PL_MODEL_VALIDATE_H

#include "db/store.h"
#include "db/validation.h"
#include "model/prism/match.h"

/* The same as pl_validate_run, but stores nothing: the row to store goes
 * to v (pl_validation_save_set stores a run's rows together). */
pl_status pl_validate_match(pl_store *store, long long run_id, pl_law law,
                            int fitted, const pl_fit_spec *spec,
                            pl_validation *v, pl_match_result *res, pl_err *err);

/* Validates run_id under law: fitted = 0 simulates with the recorded
 * lambda0 from the detected release; fitted = 1 fits what spec names
 * (starting from the recorded lambda0, or from 90 % of alpha + beta when
 * none was recorded).  Stores the result as (run, law, recorded|fitted)
 * and returns it in res when res is not NULL. */
pl_status pl_validate_run(pl_store *store, long long run_id, pl_law law,
                          int fitted, const pl_fit_spec *spec,
                          pl_match_result *res, pl_err *err);

/* The simulation a stored validation describes, on the times t[0..n-1]
 * (the run's clock, increasing): L_p, omega (rad/s) and the gauge-point
 * velocities v_p1, v_p2 (m/s), each may be NULL; 0 before the release.
 * Simulations are stored as their parameters, not their series: this
 * runs the model again (what the report draws and export writes). */
pl_status pl_validation_curve(const pl_validation *v, const double *t,
                              double *lp, double *om, double *v1, double *v2,
                              size_t n, pl_err *err);

#endif
