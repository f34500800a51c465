/* db/catalog.h - the catalogue: prisms, ramps and experiments.
 *
 * Everything is SI: metres, kilograms, radians.  Names are unique; adding
 * a name that exists is PL_EEXIST, never an overwrite.  CSV import reads a
 * header row naming the columns in any order (libcsv) and stores the whole
 * file in one transaction or nothing of it.
 */
#ifndef PL_DB_CATALOG_H
#define PL_DB_CATALOG_H

#include "core/error.h"
#include "db/store.h"

typedef struct {
    long long id;
    char name[PL_NAME_SIZE];
    int n_edges;            /* N */
    double a0_m;            /* centre of mass to each edge (circumradius) */
    double length_m;        /* l, along the axis */
    double mass_kg;         /* NaN when given by density */
    double density_kg_m3;   /* NaN when given by mass */
    char material[32];
    char source[256];
} pl_prism;

typedef struct {
    long long id;
    char name[PL_NAME_SIZE];
    char material[32];
    double beta_rad;        /* inclination */
    double beta_sd_rad;     /* its stated uncertainty; NaN when unknown */
    double mu_s;            /* static friction coefficient */
    double mu;              /* slip friction coefficient; NaN: use mu_s */
    double length_m;        /* NaN when unknown */
    char source[256];
} pl_ramp;

typedef struct {
    long long id;
    char name[PL_NAME_SIZE];
    char description[512];
    char created_utc[32];
} pl_experiment;

/* Fills a prism/ramp with NaN for the optional numbers and zeros else. */
void pl_prism_init(pl_prism *p);
void pl_ramp_init(pl_ramp *r);

/* The prism's mass: mass_kg when known, else density times the volume of
 * a regular N-gon of circumradius a0 and length l. */
double pl_prism_mass(const pl_prism *p);

/* Checks a prism's or ramp's numbers; PL_EINVAL names the bad field and
 * its valid range. */
pl_status pl_prism_validate(const pl_prism *p, pl_err *err);
pl_status pl_ramp_validate(const pl_ramp *r, pl_err *err);

/* Inserts; sets ->id.  PL_EEXIST when the name is taken. */
pl_status pl_prism_add(pl_store *store, pl_prism *p, pl_err *err);
pl_status pl_ramp_add(pl_store *store, pl_ramp *r, pl_err *err);
pl_status pl_experiment_add(pl_store *store, pl_experiment *e, pl_err *err);

/* Creates the experiment when there is none of that name (recorders and
 * importers file runs under names an operator types). */
pl_status pl_experiment_ensure(pl_store *store, const char *name, pl_err *err);

/* Looks up by name; PL_ENOTFOUND when there is none. */
pl_status pl_prism_get(pl_store *store, const char *name, pl_prism *p,
                       pl_err *err);
pl_status pl_ramp_get(pl_store *store, const char *name, pl_ramp *r,
                      pl_err *err);
pl_status pl_experiment_get(pl_store *store, const char *name,
                            pl_experiment *e, pl_err *err);

/* A run's release angle and beam heights against the prism and ramp it
 * names (core/sample.h, pl_prism_inputs_check), the one check of import
 * (a file, a manifest's rows) and `run set`: PL_EINVAL names the value,
 * the range and the prism and ramp.  A name that is "" or not in the
 * catalogue narrows nothing (the general bounds hold); NaN values (not
 * given) pass. */
pl_status pl_catalog_inputs_check(pl_store *store, const char *prism,
                                  const char *ramp, double h1_m, double h2_m,
                                  double lambda0_rad, pl_err *err);

/* Visits every entry in name order; a non-zero return from fn stops. */
pl_status pl_prism_list(pl_store *store,
                        int (*fn)(void *ctx, const pl_prism *p), void *ctx,
                        pl_err *err);
pl_status pl_ramp_list(pl_store *store, int (*fn)(void *ctx, const pl_ramp *r),
                       void *ctx, pl_err *err);
pl_status pl_experiment_list(pl_store *store,
                             int (*fn)(void *ctx, const pl_experiment *e),
                             void *ctx, pl_err *err);

/* Imports a CSV file of prisms or ramps (columns in docs/data-model.md).
 * A bad row fails the whole file with "FILE:LINE: column 'x': expected ...
 * got ..."; *count receives the rows stored. */
pl_status pl_prism_import_csv(pl_store *store, const char *path, int *count,
                              pl_err *err);
pl_status pl_ramp_import_csv(pl_store *store, const char *path, int *count,
                             pl_err *err);

#endif
