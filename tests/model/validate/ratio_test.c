/* tests/model/validate/ratio_test.c - each law's omega+/omega- for a run
 * (model/validate/ratio.c), on the fixture runs imported into a real
 * store with the bundled catalogue: a run not validated gets the laws
 * solved for its prism and ramp (the line law's 0.99582315 for steel-38
 * on glass, what `validate` stored for fig8-steel-38; the plastic law's
 * closed form, worked out here), a validated one its stored ratio_pred,
 * a run naming no prism neither, and a missing run PL_ENOTFOUND. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/sqlite_private.h"
#include "db/store.h"
#include "db/validation.h"
#include "model/validate/ratio.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (J + m a0^2 cos 2 alpha) / J_A for a regular prism, J = m a0^2 (cos 2alpha + 2) / 6 */
static double plastic(int N)
{
    double c2 = cos(2 * M_PI / N), j = (c2 + 2) / 6;
    return (j + c2) / (j + 1);
}

static void laws_for_each_kind_of_run(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("ratio");
    char *db = tu_path(dir, "r.db");
    pl_store *store = NULL;
    pl_err err = {0};
    int runs = 0;
    double r[2];
    if (tu_fixture_db(db, "fixtures/runs/manifest.csv", &runs, &err) != PL_OK)
        fail_msg("fixtures: %s", err.msg);
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);

    /* run 15: fig6-steel-38 on glass-0.4079, not validated */
    assert_int_equal(pl_law_ratios(store, 15, r, &err), PL_OK);
    print_message("steel-38 on glass: line %.8f, plastic %.8f (closed form %.8f)\n", r[0], r[1],
                  plastic(38));
    assert_true(fabs(r[0] - 0.99582315) < 1e-8);
    assert_true(fabs(r[1] - plastic(38)) < 1e-12);

    /* run 1 (steel-22) with a stored line-law validation: its ratio_pred */
    pl_validation v;
    memset(&v, 0, sizeof v);
    v.run_id = 1;
    snprintf(v.law, sizeof v.law, "line");
    snprintf(v.fit, sizeof v.fit, "fitted");
    snprintf(v.status, sizeof v.status, "end");
    v.n_edges = 22;
    v.ratio_pred = 0.9876;
    v.lambda0_sys_rad = v.t0_sys_s = NAN;
    assert_int_equal(pl_validation_save(store, &v, &err), PL_OK);
    assert_int_equal(pl_law_ratios(store, 1, r, &err), PL_OK);
    assert_true(r[0] == 0.9876);
    assert_true(fabs(r[1] - plastic(22)) < 1e-12);

    /* a run naming no prism: neither law */
    assert_int_equal(pl_store_exec(store, "UPDATE run SET prism_id = NULL WHERE id = 2", &err), PL_OK);
    assert_int_equal(pl_law_ratios(store, 2, r, &err), PL_OK);
    assert_true(isnan(r[0]) && isnan(r[1]));

    assert_int_equal(pl_law_ratios(store, 999, r, &err), PL_ENOTFOUND);
    print_message("no run 999: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "999"));
    pl_store_close(store);
    tu_rmtree(dir);
    free(db);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(laws_for_each_kind_of_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
