/* tests/db/select_test.c - RUN... | --experiment E | --all resolved by
 * pl_run_selection_open() against a real store: exactly one choice, ids
 * as given, an experiment's runs and every run oldest first, and nothing
 * left open (or created) when it fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/catalog.h"
#include "db/run.h"
#include "db/select.h"
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Two channels as a 16-bit card records them. */
#define CHANNEL(h, sign)                                                    \
    {.beam_height_m = (h), .beam_sign = (sign), .ldv_scale_mps_per_v = 0.025, \
     .cal_kind = PL_CAL_LINEAR, .cal_order = 1,                            \
     .cal_coef = {0, 20.0 / 65536.0}, .range_min_v = -10, .range_max_v = 10, \
     .maxdata = 65535}

/* The state is the test's folder; its store is t.db there, with runs 1
 * and 3 in experiment "fig8" and run 2 in none. */
static int setup(void **state)
{
    const pl_channel ch[2] = {CHANNEL(0.0199, 1), CHANNEL(0.0112, -1)};
    char *dir = tu_tmpdir("select"), *db = tu_path(dir, "t.db");
    pl_store *s = NULL;
    pl_err err = {0};
    pl_experiment e = {.name = "fig8"};
    assert_int_equal(pl_store_open(&s, db, PL_STORE_CREATE, &err), PL_OK);
    assert_int_equal(pl_experiment_add(s, &e, &err), PL_OK);
    for (int i = 0; i < 3; i++) {
        pl_run_info info;
        pl_run_info_init(&info);
        info.sample_rate_hz = 10000;
        info.state = PL_RUN_IMPORTED;   /* a 'wav' run left 'recording' is an
                                           unfinished import: the next open
                                           removes it (store.h) */
        snprintf(info.source_kind, sizeof info.source_kind, "wav");
        snprintf(info.experiment, sizeof info.experiment, "%s", i == 1 ? "" : "fig8");
        if (pl_run_create(s, &info, ch, &err) != PL_OK)
            fail_msg("run %d: %s", i, err.msg);
    }
    pl_store_close(s);
    free(db);
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    tu_rmtree(*state);
    free(*state);
    return 0;
}

/* Selects and compares with want[0..nwant-1]. */
static void expect_ids(const char *db, pl_run_selection sel, char **args,
                       int nargs, const long long *want, size_t nwant)
{
    pl_err err = {0};
    sel.db = db;
    if (pl_run_selection_open(&sel, args, nargs, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_non_null(sel.store);
    assert_int_equal(sel.n, nwant);
    for (size_t i = 0; i < sel.n; i++)
        assert_int_equal(sel.ids[i], want[i]);
    pl_run_selection_close(&sel);
    assert_null(sel.store);
    assert_null(sel.ids);
}

static void each_choice_names_its_runs(void **state)
{
    char *db = tu_path(*state, "t.db");
    char *args[] = {"3", "1"};
    expect_ids(db, (pl_run_selection){0}, args, 2, (long long[]){3, 1}, 2);
    expect_ids(db, (pl_run_selection){.experiment = "fig8"}, NULL, 0,
               (long long[]){1, 3}, 2);
    expect_ids(db, (pl_run_selection){.all = 1}, NULL, 0,
               (long long[]){1, 2, 3}, 3);
    free(db);
}

static void exactly_one_choice(void **state)
{
    char *db = tu_path(*state, "t.db");
    char *args[] = {"1"};
    const pl_run_selection cases[] = {{0}, {.all = 1}, {.experiment = "fig8"},
                                      {.experiment = "fig8", .all = 1}};
    const int nargs[] = {0, 1, 1, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pl_run_selection sel = cases[i];
        pl_err err = {0};
        sel.db = db;
        sel.n = 7;
        assert_int_equal(pl_run_selection_open(&sel, args, nargs[i], &err), PL_EINVAL);
        assert_string_equal(err.msg, "give RUN ids, --experiment E or --all (one of them)");
        assert_null(sel.store);
        assert_null(sel.ids);
        assert_int_equal(sel.n, 0);
        pl_run_selection_close(&sel);   /* harmless after a failure */
    }
    free(db);
}

static void failures_leave_nothing_open(void **state)
{
    char *db = tu_path(*state, "t.db");
    char *bad[] = {"x"};
    pl_err err = {0};
    pl_run_selection none = {.db = db}, all = {.all = 1};
    all.db = tu_path(*state, "missing.db");
    assert_int_equal(pl_run_selection_open(&none, bad, 1, &err), PL_EINVAL);
    assert_string_equal(err.msg, "'x' is not a run id (a number)");
    assert_null(none.store);
    assert_int_not_equal(pl_run_selection_open(&all, NULL, 0, &err), PL_OK);
    assert_null(all.store);
    assert_int_not_equal(access(all.db, F_OK), 0);   /* not created */
    free((char *)all.db);
    free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(each_choice_names_its_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(exactly_one_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(failures_leave_nothing_open, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
