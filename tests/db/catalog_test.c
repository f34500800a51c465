/* tests/db/catalog_test.c - the catalogue and its CSV import: the bundled
 * files, columns in any order, and every kind of bad row rejected with
 * FILE:LINE and the column named, importing nothing from that file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/catalog.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *db, *csv;
    pl_store *store;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    pl_err err = {0};
    f->dir = tu_tmpdir("catalog");
    f->db = tu_path(f->dir, "t.db");
    f->csv = tu_path(f->dir, "in.csv");
    if (pl_store_open(&f->store, f->db, PL_STORE_CREATE, &err) != PL_OK)
        fail_msg("%s", err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pl_store_close(f->store);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f->csv);
    free(f);
    return 0;
}

static int count_prisms(pl_store *s)
{
    long long n = -1;
    pl_err err = {0};
    if (pl_store_count_rows(s, "prism", &n, &err) != PL_OK)
        fail_msg("%s", err.msg);
    return (int)n;
}

static void bundled_catalogue_imports(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    int n = 0;
    pl_prism p;
    pl_ramp r;
    char path[512];

    snprintf(path, sizeof path, "%s/fixtures/catalog/prisms.csv",
             getenv("PRISMLAB_SRC") ? getenv("PRISMLAB_SRC") : ".");
    if (pl_prism_import_csv(f->store, path, &n, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 9);
    snprintf(path, sizeof path, "%s/fixtures/catalog/ramps.csv",
             getenv("PRISMLAB_SRC") ? getenv("PRISMLAB_SRC") : ".");
    if (pl_ramp_import_csv(f->store, path, &n, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 3);

    assert_int_equal(pl_prism_get(f->store, "steel-30", &p, &err), PL_OK);
    assert_int_equal(p.n_edges, 30);
    tu_assert_close(p.a0_m, 0.015, 0);
    tu_assert_close(p.length_m, 0.050, 0);
    /* 7850 kg/m^3 x (N/2 a0^2 sin(2 pi/N)) x l */
    tu_assert_close(pl_prism_mass(&p),
                    7850 * 15.0 * 0.015 * 0.015 * sin(2 * M_PI / 30) * 0.05,
                    1e-12);
    assert_int_equal(pl_ramp_get(f->store, "glass-0.4079", &r, &err), PL_OK);
    tu_assert_close(r.beta_rad, 0.4079 * M_PI / 180, 1e-15);
    tu_assert_close(r.mu_s, 0.12, 0);
    assert_true(isnan(r.mu));
    tu_assert_close(r.length_m, 0.65, 0);
}

static void columns_in_any_order(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    int n = 0;
    pl_prism p;

    tu_write_file(f->csv, "material,mass_kg,name,length_m,a0_m,n_edges\n"
                          "brass,0.31,b-7,0.04,0.02,7\n");
    assert_int_equal(pl_prism_import_csv(f->store, f->csv, &n, &err), PL_OK);
    assert_int_equal(n, 1);
    assert_int_equal(pl_prism_get(f->store, "b-7", &p, &err), PL_OK);
    assert_int_equal(p.n_edges, 7);
    tu_assert_close(p.mass_kg, 0.31, 0);
    assert_string_equal(p.material, "brass");
}

/* Each bad file: the exact message prefix and nothing imported, although
 * the first row of each file is good. */
static void bad_rows_are_rejected_whole(void **state)
{
    static const struct {
        const char *csv, *expect;
    } cases[] = {
        {"name,n_edges,a0_m,length_m,density_kg_m3,material\n"
         "ok,22,0.015,0.05,7850,steel\n"
         "bad,twenty,0.015,0.05,7850,steel\n",
         ":3: column 'n_edges': expected an integer, got 'twenty'"},
        {"name,n_edges,a0_m,length_m,density_kg_m3,material\n"
         "ok,22,0.015,0.05,7850,steel\n"
         "\n"
         "bad,22,-1,0.05,7850,steel\n",
         ":4: column 'a0_m': expected a value in"},
        {"name,n_edges,a0_m,length_m,density_kg_m3,material\n"
         "ok,22,0.015,0.05,7850,steel\n"
         "bad,2,0.015,0.05,7850,steel\n",
         ":3: column 'n_edges': expected an integer in [3, 10000], got 2"},
        {"name,n_edges,a0_m,length_m,material\n"
         "ok,22,0.015,0.05,steel\n",
         ":2: columns 'mass_kg', 'density_kg_m3': expected at least one"},
        {"name,n_edges,a0_m,length_m,density_kg_m3,material,colour\n"
         "ok,22,0.015,0.05,7850,steel,grey\n",
         ":1: unknown column 'colour'"},
        {"name,n_edges,a0_m,length_m,density_kg_m3,material\n"
         "ok,22,0.015,0.05,7850,steel\n"
         "ok,24,0.015,0.05,7850,steel\n",
         ":3: a prism named 'ok' already exists"},
        {"name,n_edges,a0_m,length_m,density_kg_m3,material\n"
         "ok,22,0.015,0.05,7850,steel\n"
         "\"unterminated,22,0.015,0.05,7850,steel\n",
         ":3: "},
        {"name,n_edges,a0_m,length_m,density_kg_m3,material\n"
         "ok,22,0.015,0.05,7850,steel,extra\n",
         ":2: 7 fields, the header names only 6"},
        {"", ": empty file"},
    };
    fixture *f = *state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pl_err err = {0};
        int n = -1;
        char want[512];
        tu_write_file(f->csv, cases[i].csv);
        assert_int_not_equal(pl_prism_import_csv(f->store, f->csv, &n, &err),
                             PL_OK);
        snprintf(want, sizeof want, "%s%s", f->csv, cases[i].expect);
        if (strncmp(err.msg, want, strlen(want)) != 0)
            fail_msg("case %zu: got '%s', expected a message starting '%s'",
                     i, err.msg, want);
        assert_int_equal(n, 0);
        assert_int_equal(count_prisms(f->store), 0);
    }
}

static void ramp_needs_exactly_one_angle(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    int n;
    tu_write_file(f->csv, "name,material,beta_deg,beta_rad,mu_s\n"
                          "g,glass,0.4,0.007,0.12\n");
    assert_int_equal(pl_ramp_import_csv(f->store, f->csv, &n, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, ":2: columns 'beta_deg', 'beta_rad': "
                                    "expected exactly one, got both"));
    tu_write_file(f->csv, "name,material,beta_rad,mu_s\ng,glass,0.007,0.12\n");
    assert_int_equal(pl_ramp_import_csv(f->store, f->csv, &n, &err), PL_OK);
    assert_int_equal(n, 1);
}

static void duplicate_add_is_an_error(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_ramp r;
    pl_ramp_init(&r);
    snprintf(r.name, sizeof r.name, "glass");
    snprintf(r.material, sizeof r.material, "glass");
    r.beta_rad = 0.007;
    r.mu_s = 0.12;
    assert_int_equal(pl_ramp_add(f->store, &r, &err), PL_OK);
    r.beta_rad = 0.008;
    assert_int_equal(pl_ramp_add(f->store, &r, &err), PL_EEXIST);
    assert_int_equal(pl_ramp_get(f->store, "glass", &r, &err), PL_OK);
    tu_assert_close(r.beta_rad, 0.007, 0); /* not overwritten */
}

static void validation_names_the_field(void **state)
{
    pl_err err = {0};
    pl_ramp r;
    (void)state;
    pl_ramp_init(&r);
    snprintf(r.name, sizeof r.name, "steep");
    snprintf(r.material, sizeof r.material, "glass");
    r.beta_rad = 1.0; /* 57 deg: surely degrees typed as radians */
    r.mu_s = 0.1;
    assert_int_equal(pl_ramp_validate(&r, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "beta must be in (0, 45) deg"));
    r.beta_rad = 0.007;
    r.mu = 0.2; /* slip above stick */
    assert_int_equal(pl_ramp_validate(&r, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "mu (slip)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(bundled_catalogue_imports, setup, teardown),
        cmocka_unit_test_setup_teardown(columns_in_any_order, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_rows_are_rejected_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(ramp_needs_exactly_one_angle, setup, teardown),
        cmocka_unit_test_setup_teardown(duplicate_add_is_an_error, setup, teardown),
        cmocka_unit_test(validation_names_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
