/* tests/model/validate/setup_test.c - model parameters from the catalogue:
 * every field setup fills from a real store built from the bundled
 * catalogue (and the ones it must leave alone), the defaults it keeps for
 * what the catalogue does not know, and the lookup's errors naming the
 * missing prism or ramp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/catalog.h"
#include "db/store.h"
#include "model/validate/setup.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char *dir, *db;
} fixture;

static const char *src_path(char *buf, size_t size, const char *rel)
{
    const char *src = getenv("PRISMLAB_SRC");
    snprintf(buf, size, "%s/%s", src ? src : ".", rel);
    return buf;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    pl_store *store = NULL;
    pl_err err = {0};
    char path[512];
    int n;
    f->dir = tu_tmpdir("setup");
    f->db = tu_path(f->dir, "c.db");
    if (pl_store_open(&store, f->db, PL_STORE_CREATE, &err) != PL_OK ||
        pl_prism_import_csv(store, src_path(path, sizeof path, "fixtures/catalog/prisms.csv"),
                            &n, &err) != PL_OK ||
        pl_ramp_import_csv(store, src_path(path, sizeof path, "fixtures/catalog/ramps.csv"),
                           &n, &err) != PL_OK)
        fail_msg("%s", err.msg);
    pl_store_close(store);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

/* Parameters whose every field setup must not touch hold these. */
static void sentinels(pl_model_params *p)
{
    pl_model_params_default(p);
    p->lambda0 = 0.0777;
    p->h1 = 0.0211;
    p->h2 = 0.0105;
    p->duration = 3.25;
    p->rate = 2500;
    p->law = PL_LAW_PLASTIC;
}

static void assert_sentinels_kept(const pl_model_params *p)
{
    assert_true(p->lambda0 == 0.0777);
    assert_true(p->h1 == 0.0211);
    assert_true(p->h2 == 0.0105);
    assert_true(p->duration == 3.25);
    assert_true(p->rate == 2500);
    assert_int_equal(p->law, PL_LAW_PLASTIC);
}

/* steel-24 on the steel ramp, as catalogued: N 24, a0 15 mm, 7850 kg/m^3
 * over a regular 24-gon of circumradius 15 mm and length 50 mm (274 g),
 * 0.3792 deg, mu_s 0.10, mu empty (NaN: the model takes mu_s), 650 mm. */
static void lookup_fills_from_the_catalogue(void **state)
{
    fixture *f = *state;
    pl_model_params p;
    pl_err err = {0};
    sentinels(&p);
    if (pl_model_params_lookup(&p, f->db, "steel-24", "steel-0.3792", &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(p.N, 24);
    assert_true(p.a0 == 0.015);
    double area = 24 / 2.0 * 0.015 * 0.015 * sin(2 * M_PI / 24);
    tu_assert_close(p.mass, 7850 * area * 0.050, 1e-12);
    tu_assert_close(p.mass, 0.2743, 1e-4);
    tu_assert_close(p.beta, 0.3792 * M_PI / 180, 1e-15);
    assert_true(p.mu_s == 0.10);
    assert_true(isnan(p.mu));
    assert_true(p.ramp_length == 0.650);
    assert_sentinels_kept(&p);

    /* the same through the catalogue structs: aluminium-30 on the glass
     * ramp of figs. 5 and 6 */
    pl_store *store = NULL;
    pl_prism pr;
    pl_ramp rp;
    assert_int_equal(pl_store_open(&store, f->db, 0, &err), PL_OK);
    assert_int_equal(pl_prism_get(store, "aluminium-30", &pr, &err), PL_OK);
    assert_int_equal(pl_ramp_get(store, "glass-0.4079", &rp, &err), PL_OK);
    pl_store_close(store);
    sentinels(&p);
    pl_model_params_from_catalog(&p, &pr, &rp);
    assert_int_equal(p.N, 30);
    area = 30 / 2.0 * 0.015 * 0.015 * sin(2 * M_PI / 30);
    tu_assert_close(p.mass, 2700 * area * 0.050, 1e-12);
    tu_assert_close(p.beta, 0.4079 * M_PI / 180, 1e-15);
    assert_true(p.mu_s == 0.12);
    assert_sentinels_kept(&p);
}

/* A prism given by mass, and a ramp with a slip coefficient and no
 * length, stored and read back: the mass is taken as given, mu as given,
 * and the ramp length stays what it was (unlimited). */
static void catalogue_gaps_keep_the_defaults(void **state)
{
    fixture *f = *state;
    pl_store *store = NULL;
    pl_err err = {0};
    pl_prism pr;
    pl_ramp rp;
    assert_int_equal(pl_store_open(&store, f->db, 0, &err), PL_OK);
    pl_prism_init(&pr);
    snprintf(pr.name, sizeof pr.name, "brass-8");
    pr.n_edges = 8;
    pr.a0_m = 0.02;
    pr.length_m = 0.04;
    pr.mass_kg = 0.31;
    snprintf(pr.material, sizeof pr.material, "brass");
    pl_ramp_init(&rp);
    snprintf(rp.name, sizeof rp.name, "oak-2");
    snprintf(rp.material, sizeof rp.material, "oak");
    rp.beta_rad = 2 * M_PI / 180;
    rp.mu_s = 0.4;
    rp.mu = 0.3;
    if (pl_prism_add(store, &pr, &err) != PL_OK || pl_ramp_add(store, &rp, &err) != PL_OK)
        fail_msg("%s", err.msg);
    pl_store_close(store);

    pl_model_params p;
    sentinels(&p);
    p.ramp_length = 0;
    assert_int_equal(pl_model_params_lookup(&p, f->db, "brass-8", "oak-2", &err), PL_OK);
    assert_int_equal(p.N, 8);
    assert_true(p.a0 == 0.02);
    assert_true(p.mass == 0.31);
    tu_assert_close(p.beta, 2 * M_PI / 180, 1e-15);
    assert_true(p.mu_s == 0.4);
    assert_true(p.mu == 0.3);
    assert_true(p.ramp_length == 0);
    assert_sentinels_kept(&p);

    /* a prism whose mass cannot be known leaves the default mass */
    pl_prism_init(&pr);
    pr.n_edges = 6;
    pr.a0_m = 0.01;
    sentinels(&p);
    pl_model_params_from_catalog(&p, &pr, &rp);
    assert_int_equal(p.N, 6);
    assert_true(p.mass == 0.2);
}

/* PL_ENOTFOUND names what is missing; nothing of p changes; a store that
 * does not exist is not created. */
static void lookup_errors_name_the_missing_one(void **state)
{
    fixture *f = *state;
    pl_model_params p, before;
    pl_err err = {0};
    sentinels(&p);
    before = p;
    assert_int_equal(pl_model_params_lookup(&p, f->db, "steel-23", "glass-0.4079", &err),
                     PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, "steel-23"));
    assert_memory_equal(&p, &before, sizeof p);
    memset(&err, 0, sizeof err);
    assert_int_equal(pl_model_params_lookup(&p, f->db, "steel-22", "ice-1", &err),
                     PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, "ice-1"));
    assert_memory_equal(&p, &before, sizeof p);

    char *missing = tu_path(f->dir, "none.db");
    memset(&err, 0, sizeof err);
    assert_int_not_equal(pl_model_params_lookup(&p, missing, "steel-22", "glass-0.4079", &err),
                         PL_OK);
    assert_non_null(strstr(err.msg, "none.db"));
    struct stat sb;
    assert_int_not_equal(stat(missing, &sb), 0);
    assert_memory_equal(&p, &before, sizeof p);
    free(missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lookup_fills_from_the_catalogue, setup, teardown),
        cmocka_unit_test_setup_teardown(catalogue_gaps_keep_the_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(lookup_errors_name_the_missing_one, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
