/* model/validate/setup.h - model parameters from the catalogue.
 *
 * Every command that simulates a catalogued prism on a catalogued ramp
 * (simulate, sim, validate) fills pl_model_params the same way; this is
 * that one place.  Units: SI, angles in radians.
 */
#ifndef PL_MODEL_SETUP_H
#define PL_MODEL_SETUP_H

#include "db/catalog.h"
#include "model/prism/prism.h"

/* Sets N, a0, mass (when the catalogue knows it), beta, mu_s, mu and the
 * ramp length (when known) of p from a prism and a ramp; leaves the
 * release angle, beam heights, duration, rate and law alone. */
void pl_model_params_from_catalog(pl_model_params *p, const pl_prism *prism,
                                  const pl_ramp *ramp);

/* Opens the store at db_path (it must exist), looks up the prism and the ramp by
 * name and applies them as above.  PL_ENOTFOUND names the missing one. */
pl_status pl_model_params_lookup(pl_model_params *p, const char *db_path,
                                 const char *prism, const char *ramp,
                                 pl_err *err);

#endif
