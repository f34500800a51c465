/* db/catalog.c - prisms, ramps and experiments in the store. */
#include "db/catalog.h"

#include "core/csvtable.h"
#include "core/sample.h"
#include "db/sqlite_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEG (M_PI / 180.0)

void pl_prism_init(pl_prism *p)
{
    memset(p, 0, sizeof *p);
    p->mass_kg = NAN;
    p->density_kg_m3 = NAN;
}

void pl_ramp_init(pl_ramp *r)
{
    memset(r, 0, sizeof *r);
    r->beta_sd_rad = NAN;
    r->mu = NAN;
    r->length_m = NAN;
}

double pl_prism_mass(const pl_prism *p)
{
    double alpha = M_PI / p->n_edges;
    /* N triangles of two sides a0 enclosing 2 alpha. */
    double area = 0.5 * p->n_edges * p->a0_m * p->a0_m * sin(2.0 * alpha);
    if (isfinite(p->mass_kg))
        return p->mass_kg;
    return p->density_kg_m3 * area * p->length_m;
}

pl_status pl_prism_validate(const pl_prism *p, pl_err *err)
{
    if (!p->name[0])
        return pl_err_set(err, PL_EINVAL, "prism: a name is required");
    if (pl_name_check("prism", p->name, err) != PL_OK)
        return err->code;
    if (p->n_edges < 3 || p->n_edges > 10000)
        return pl_err_set(err, PL_EINVAL,
                          "prism '%s': N must be in [3, 10000], got %d",
                          p->name, p->n_edges);
    if (!(p->a0_m > 0) || !(p->length_m > 0))
        return pl_err_set(err, PL_EINVAL,
                          "prism '%s': a0 and length must be positive metres",
                          p->name);
    if (!(p->mass_kg > 0) && !(p->density_kg_m3 > 0))
        return pl_err_set(err, PL_EINVAL,
                          "prism '%s': give a positive mass (kg) or density "
                          "(kg/m^3)", p->name);
    if (!p->material[0])
        return pl_err_set(err, PL_EINVAL, "prism '%s': a material is required",
                          p->name);
    return PL_OK;
}

pl_status pl_ramp_validate(const pl_ramp *r, pl_err *err)
{
    if (!r->name[0])
        return pl_err_set(err, PL_EINVAL, "ramp: a name is required");
    if (pl_name_check("ramp", r->name, err) != PL_OK)
        return err->code;
    /* The rolling regime of seed 000 needs a small positive angle; a ramp
     * steeper than 45 deg is surely a degrees/radians mix-up. */
    if (!(r->beta_rad > 0) || r->beta_rad >= M_PI / 4)
        return pl_err_set(err, PL_EINVAL,
                          "ramp '%s': beta must be in (0, 45) deg, got %g deg",
                          r->name, r->beta_rad / DEG);
    if (!(r->mu_s > 0) || r->mu_s > 5)
        return pl_err_set(err, PL_EINVAL,
                          "ramp '%s': mu_s must be in (0, 5], got %g", r->name,
                          r->mu_s);
    if (isfinite(r->mu) && (!(r->mu > 0) || r->mu > r->mu_s))
        return pl_err_set(err, PL_EINVAL,
                          "ramp '%s': mu (slip) must be in (0, mu_s = %g], "
                          "got %g", r->name, r->mu_s, r->mu);
    if (!r->material[0])
        return pl_err_set(err, PL_EINVAL, "ramp '%s': a material is required",
                          r->name);
    return PL_OK;
}

/* Steps an INSERT and turns a UNIQUE violation into PL_EEXIST. */
static pl_status step_insert(pl_store *store, sqlite3_stmt *st,
                             const char *what, const char *name,
                             long long *id, pl_err *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_CONSTRAINT_UNIQUE)
        return pl_err_set(err, PL_EEXIST,
                          "a %s named '%s' already exists (names are unique; "
                          "choose another)", what, name);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, what, err);
    *id = sqlite3_last_insert_rowid(pl_store_db(store));
    return PL_OK;
}

pl_status pl_prism_add(pl_store *store, pl_prism *p, pl_err *err)
{
    static const char sql[] =
        "INSERT INTO prism (name, n_edges, a0_m, length_m, mass_kg, "
        " density_kg_m3, material, source) VALUES (?,?,?,?,?,?,?,?)";
    sqlite3_stmt *st;

    if (pl_prism_validate(p, err) != PL_OK)
        return err->code;
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, p->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, p->n_edges);
    sqlite3_bind_double(st, 3, p->a0_m);
    sqlite3_bind_double(st, 4, p->length_m);
    pl_store_bind_real(st, 5, p->mass_kg);
    pl_store_bind_real(st, 6, p->density_kg_m3);
    sqlite3_bind_text(st, 7, p->material, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, p->source, -1, SQLITE_STATIC);
    return step_insert(store, st, "prism", p->name, &p->id, err);
}

pl_status pl_ramp_add(pl_store *store, pl_ramp *r, pl_err *err)
{
    static const char sql[] =
        "INSERT INTO ramp (name, material, beta_rad, beta_sd_rad, mu_s, mu, "
        " length_m, source) VALUES (?,?,?,?,?,?,?,?)";
    sqlite3_stmt *st;

    if (pl_ramp_validate(r, err) != PL_OK)
        return err->code;
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->material, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, r->beta_rad);
    pl_store_bind_real(st, 4, r->beta_sd_rad);
    sqlite3_bind_double(st, 5, r->mu_s);
    pl_store_bind_real(st, 6, r->mu);
    pl_store_bind_real(st, 7, r->length_m);
    sqlite3_bind_text(st, 8, r->source, -1, SQLITE_STATIC);
    return step_insert(store, st, "ramp", r->name, &r->id, err);
}

pl_status pl_experiment_add(pl_store *store, pl_experiment *e, pl_err *err)
{
    static const char sql[] =
        "INSERT INTO experiment (name, description, created_utc) "
        "VALUES (?,?,?)";
    sqlite3_stmt *st;

    if (!e->name[0])
        return pl_err_set(err, PL_EINVAL, "experiment: a name is required");
    if (!e->created_utc[0])
        pl_store_utc_now(e->created_utc);
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, e->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, e->description, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, e->created_utc, -1, SQLITE_STATIC);
    return step_insert(store, st, "experiment", e->name, &e->id, err);
}

/* --- reading ------------------------------------------------------------ */

#define PRISM_SELECT "SELECT id, name, n_edges, a0_m, length_m, mass_kg, " \
    "density_kg_m3, material, COALESCE(source,'') FROM prism "
#define RAMP_SELECT "SELECT id, name, material, beta_rad, beta_sd_rad, " \
    "mu_s, mu, length_m, COALESCE(source,'') FROM ramp "
#define EXPERIMENT_SELECT "SELECT id, name, description, created_utc " \
    "FROM experiment "

static void row_prism(sqlite3_stmt *st, void *item)
{
    pl_prism *p = item;
    pl_prism_init(p);
    p->id = sqlite3_column_int64(st, 0);
    pl_store_column_text(st, 1, p->name, sizeof p->name);
    p->n_edges = sqlite3_column_int(st, 2);
    p->a0_m = sqlite3_column_double(st, 3);
    p->length_m = sqlite3_column_double(st, 4);
    p->mass_kg = pl_store_column_real(st, 5);
    p->density_kg_m3 = pl_store_column_real(st, 6);
    pl_store_column_text(st, 7, p->material, sizeof p->material);
    pl_store_column_text(st, 8, p->source, sizeof p->source);
}

static void row_ramp(sqlite3_stmt *st, void *item)
{
    pl_ramp *r = item;
    pl_ramp_init(r);
    r->id = sqlite3_column_int64(st, 0);
    pl_store_column_text(st, 1, r->name, sizeof r->name);
    pl_store_column_text(st, 2, r->material, sizeof r->material);
    r->beta_rad = sqlite3_column_double(st, 3);
    r->beta_sd_rad = pl_store_column_real(st, 4);
    r->mu_s = sqlite3_column_double(st, 5);
    r->mu = pl_store_column_real(st, 6);
    r->length_m = pl_store_column_real(st, 7);
    pl_store_column_text(st, 8, r->source, sizeof r->source);
}

static void row_experiment(sqlite3_stmt *st, void *item)
{
    pl_experiment *e = item;
    memset(e, 0, sizeof *e);
    e->id = sqlite3_column_int64(st, 0);
    pl_store_column_text(st, 1, e->name, sizeof e->name);
    pl_store_column_text(st, 2, e->description, sizeof e->description);
    pl_store_column_text(st, 3, e->created_utc, sizeof e->created_utc);
}

/* One generic walk over a SELECT; row() fills the caller's struct, which
 * visit() then receives. */
static pl_status walk(pl_store *store, const char *sql, const char *name,
                      void (*row)(sqlite3_stmt *, void *), void *item,
                      int (*visit)(void *ctx, const void *item), void *ctx,
                      int *found, pl_err *err)
{
    sqlite3_stmt *st;
    int rc;

    *found = 0;
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    if (name)
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        row(st, item);
        ++*found;
        if (visit && visit(ctx, item))
            break;
        if (!visit)
            break;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return pl_store_fail(store, "reading the catalogue", err);
    return PL_OK;
}

typedef void (*row_fn)(sqlite3_stmt *, void *);

static pl_status get_one(pl_store *store, const char *sql, const char *what,
                         const char *name, row_fn row, void *item, pl_err *err)
{
    int found;
    if (walk(store, sql, name, row, item, NULL, NULL, &found, err) != PL_OK)
        return err->code;
    if (!found)
        return pl_err_set(err, PL_ENOTFOUND,
                          "no %s named '%s' in the catalogue (see 'prismlab "
                          "%s list')", what, name, what);
    return PL_OK;
}

pl_status pl_prism_get(pl_store *store, const char *name, pl_prism *p,
                       pl_err *err)
{
    return get_one(store, PRISM_SELECT "WHERE name = ?", "prism", name,
                   row_prism, p, err);
}

pl_status pl_ramp_get(pl_store *store, const char *name, pl_ramp *r,
                      pl_err *err)
{
    return get_one(store, RAMP_SELECT "WHERE name = ?", "ramp", name,
                   row_ramp, r, err);
}

pl_status pl_experiment_get(pl_store *store, const char *name,
                            pl_experiment *e, pl_err *err)
{
    return get_one(store, EXPERIMENT_SELECT "WHERE name = ?", "experiment",
                   name, row_experiment, e, err);
}

/* Typed visitors reach walk() through these adapters, so no function is
 * ever called through a pointer of another type. */
struct visit {
    int (*prism)(void *, const pl_prism *);
    int (*ramp)(void *, const pl_ramp *);
    int (*experiment)(void *, const pl_experiment *);
    void *ctx;
};

static int visit_prism(void *c, const void *item)
{
    const struct visit *v = c;
    return v->prism(v->ctx, item);
}

static int visit_ramp(void *c, const void *item)
{
    const struct visit *v = c;
    return v->ramp(v->ctx, item);
}

static int visit_experiment(void *c, const void *item)
{
    const struct visit *v = c;
    return v->experiment(v->ctx, item);
}

pl_status pl_prism_list(pl_store *store,
                        int (*fn)(void *ctx, const pl_prism *p), void *ctx,
                        pl_err *err)
{
    struct visit v = {.prism = fn, .ctx = ctx};
    pl_prism p;
    int found;
    return walk(store, PRISM_SELECT "ORDER BY name", NULL, row_prism, &p,
                visit_prism, &v, &found, err);
}

pl_status pl_ramp_list(pl_store *store, int (*fn)(void *ctx, const pl_ramp *r),
                       void *ctx, pl_err *err)
{
    struct visit v = {.ramp = fn, .ctx = ctx};
    pl_ramp r;
    int found;
    return walk(store, RAMP_SELECT "ORDER BY name", NULL, row_ramp, &r,
                visit_ramp, &v, &found, err);
}

pl_status pl_experiment_list(pl_store *store,
                             int (*fn)(void *ctx, const pl_experiment *e),
                             void *ctx, pl_err *err)
{
    struct visit v = {.experiment = fn, .ctx = ctx};
    pl_experiment e;
    int found;
    return walk(store, EXPERIMENT_SELECT "ORDER BY name", NULL,
                row_experiment, &e, visit_experiment, &v, &found, err);
}

/* --- CSV import ----------------------------------------------------------- */

static const char *const prism_columns[] = {
    "name", "n_edges", "a0_m", "length_m", "mass_kg", "density_kg_m3",
    "material", "source"};
static const char *const ramp_columns[] = {
    "name", "material", "beta_deg", "beta_rad", "beta_sd_deg", "mu_s", "mu",
    "length_m", "source"};

/* The row's name column, at most PL_NAME_MAX characters (not bytes). */
static pl_status name_from_row(const pl_csvtable *t, int i, const char *what,
                               char *out, size_t size, pl_err *err)
{
    if (pl_csvtable_string(t, i, "name", 1, out, size, err) != PL_OK)
        return err->code;
    if (pl_name_check(what, out, err) != PL_OK) {
        err->code = PL_EFORMAT;
        return pl_err_prefix(err, "%s:%ld: ", pl_csvtable_path(t),
                             pl_csvtable_line(t, i));
    }
    return PL_OK;
}

static pl_status prism_from_row(const pl_csvtable *t, int i, pl_prism *p,
                                pl_err *err)
{
    long n;
    pl_prism_init(p);
    if (name_from_row(t, i, "prism", p->name, sizeof p->name, err) ||
        pl_csvtable_long(t, i, "n_edges", 3, 10000, &n, err) ||
        pl_csvtable_double(t, i, "a0_m", 1e-6, 10, 0, 0, &p->a0_m, err) ||
        pl_csvtable_double(t, i, "length_m", 1e-6, 10, 0, 0, &p->length_m, err) ||
        pl_csvtable_double(t, i, "mass_kg", 1e-9, 1e6, 1, NAN, &p->mass_kg, err) ||
        pl_csvtable_double(t, i, "density_kg_m3", 1, 1e5, 1, NAN,
                           &p->density_kg_m3, err) ||
        pl_csvtable_string(t, i, "material", 1, p->material,
                           sizeof p->material, err) ||
        pl_csvtable_string(t, i, "source", 0, p->source, sizeof p->source, err))
        return err->code;
    p->n_edges = (int)n;
    if (!isfinite(p->mass_kg) && !isfinite(p->density_kg_m3))
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: columns 'mass_kg', 'density_kg_m3': "
                          "expected at least one, got neither",
                          pl_csvtable_path(t), pl_csvtable_line(t, i));
    return PL_OK;
}

static pl_status ramp_from_row(const pl_csvtable *t, int i, pl_ramp *r,
                               pl_err *err)
{
    double beta_deg, beta_rad, sd_deg;
    pl_ramp_init(r);
    if (name_from_row(t, i, "ramp", r->name, sizeof r->name, err) ||
        pl_csvtable_string(t, i, "material", 1, r->material,
                           sizeof r->material, err) ||
        pl_csvtable_double(t, i, "beta_deg", 1e-9, 45, 1, NAN, &beta_deg, err) ||
        pl_csvtable_double(t, i, "beta_rad", 1e-9, M_PI / 4, 1, NAN, &beta_rad,
                           err) ||
        pl_csvtable_double(t, i, "beta_sd_deg", 0, 45, 1, NAN, &sd_deg, err) ||
        pl_csvtable_double(t, i, "mu_s", 1e-6, 5, 0, 0, &r->mu_s, err) ||
        pl_csvtable_double(t, i, "mu", 1e-6, 5, 1, NAN, &r->mu, err) ||
        pl_csvtable_double(t, i, "length_m", 1e-6, 1e3, 1, NAN, &r->length_m,
                           err) ||
        pl_csvtable_string(t, i, "source", 0, r->source, sizeof r->source, err))
        return err->code;
    if (isfinite(beta_deg) == isfinite(beta_rad))
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: columns 'beta_deg', 'beta_rad': expected "
                          "exactly one, got %s", pl_csvtable_path(t),
                          pl_csvtable_line(t, i),
                          isfinite(beta_deg) ? "both" : "neither");
    r->beta_rad = isfinite(beta_deg) ? beta_deg * DEG : beta_rad;
    r->beta_sd_rad = sd_deg * DEG;
    return PL_OK;
}

/* Reads the file, then stores all rows in one transaction: any error
 * (bad field, invalid value, duplicate name) rolls the whole file back. */
static pl_status import_csv(pl_store *store, const char *path, int is_prism,
                            int *count, pl_err *err)
{
    pl_csvtable *t;
    pl_status s;

    *count = 0;
    if (pl_csvtable_read(&t, path, err) != PL_OK)
        return err->code;
    s = is_prism ? pl_csvtable_check_columns(t, prism_columns, 8, err)
                 : pl_csvtable_check_columns(t, ramp_columns, 9, err);
    if (s == PL_OK)
        s = pl_csvtable_require(t, "name", err);
    if (s == PL_OK)
        s = pl_store_begin(store, err);
    for (int i = 0; s == PL_OK && i < pl_csvtable_rows(t); i++) {
        pl_prism p;
        pl_ramp r;
        s = is_prism ? prism_from_row(t, i, &p, err)
                     : ramp_from_row(t, i, &r, err);
        if (s == PL_OK)
            s = is_prism ? pl_prism_add(store, &p, err)
                         : pl_ramp_add(store, &r, err);
        if (s != PL_OK && err && strncmp(err->msg, path, strlen(path)) != 0)
            pl_err_prefix(err, "%s:%ld: ", path, pl_csvtable_line(t, i));
        if (s == PL_OK)
            ++*count;
    }
    if (s == PL_OK)
        s = pl_store_commit(store, err);
    if (s != PL_OK) {
        pl_store_rollback(store);
        *count = 0;
    }
    pl_csvtable_free(t);
    return s;
}

pl_status pl_prism_import_csv(pl_store *store, const char *path, int *count,
                              pl_err *err)
{
    return import_csv(store, path, 1, count, err);
}

pl_status pl_ramp_import_csv(pl_store *store, const char *path, int *count,
                             pl_err *err)
{
    return import_csv(store, path, 0, count, err);
}

pl_status pl_experiment_ensure(pl_store *store, const char *name, pl_err *err)
{
    pl_experiment e;
    pl_status st = pl_experiment_get(store, name, &e, err);
    if (st != PL_ENOTFOUND)
        return st;
    if (pl_name_check("experiment", name, err) != PL_OK)
        return err->code;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "%s", name);
    return pl_experiment_add(store, &e, err);
}

pl_status pl_catalog_inputs_check(pl_store *store, const char *prism,
                                  const char *ramp, double h1_m, double h2_m,
                                  double lambda0_rad, pl_err *err)
{
    pl_prism p;
    pl_ramp r;
    char what[160];
    if (!prism[0] || pl_prism_get(store, prism, &p, err) != PL_OK) {
        pl_err_clear(err);  /* none, or the caller names the unknown one */
        return PL_OK;
    }
    r.beta_rad = NAN;
    if (ramp[0] && pl_ramp_get(store, ramp, &r, err) != PL_OK) {
        pl_err_clear(err);
        r.beta_rad = NAN;
    }
    if (isnan(r.beta_rad))
        snprintf(what, sizeof what, "prism '%.60s'", p.name);
    else
        snprintf(what, sizeof what, "prism '%.60s' on ramp '%.60s'", p.name, r.name);
    return pl_prism_inputs_check(what, p.n_edges, p.a0_m, r.beta_rad, h1_m, h2_m,
                                 lambda0_rad, err);
}
