/* tests/db/sweep_test.c - the sweep tables: create once, batches whole or
 * not at all, the stored set for resume, sessions, export by name, delete
 * cascading to the points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "db/sqlite_private.h"
#include "db/store.h"
#include "db/sweep.h"
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *db;
    pl_store *s;
    long long id;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    pl_err err = {0};
    f->dir = tu_tmpdir("dbsweep");
    f->db = tu_path(f->dir, "s.db");
    assert_int_equal(pl_store_open(&f->s, f->db, PL_STORE_CREATE, &err), PL_OK);
    pl_sweep_info in = {0};
    strcpy(in.name, "m");
    strcpy(in.model, "simulate");
    strcpy(in.spec_sha256, "ab");
    in.n_points = 5;
    strcpy(in.axes, "N");
    strcpy(in.columns, "status,impacts");
    assert_int_equal(pl_sweep_create(f->s, &in, "[sweep]\n", &f->id, &err), PL_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    pl_store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

static int collect(void *ctx, const pl_sweep_point *p, const pl_sweep_cell *c, size_t n)
{
    char *out = ctx;
    char t[128];
    snprintf(t, sizeof t, "%lld:%d:%s:%g:%s;", p->idx, p->ok,
             c[0].kind == PL_SWEEP_TEXT ? c[0].text : "-", c[1].kind == PL_SWEEP_NUM ? c[1].num : -1,
             n > 2 && c[2].kind == PL_SWEEP_NULL ? "null" : "?");
    strcat(out, t);
    return 0;
}

static void batches_and_resume(void **state)
{
    fx *f = *state;
    pl_err err = {0};
    pl_sweep_info in = {0};
    strcpy(in.name, "m");
    long long id2;
    assert_int_equal(pl_sweep_create(f->s, &in, "", &id2, &err), PL_EEXIST);
    long long ses;
    assert_int_equal(pl_sweep_session_begin(f->s, f->id, 2, "local", 0, &ses, &err), PL_OK);
    double series[3] = {1, 2, 3};
    pl_sweep_point pts[] = {
        {3, "{\"N\":6}", "{\"status\":\"end\",\"impacts\":12}", 1, series, sizeof series},
        {0, "{\"N\":3}", "{\"error\":\"no\"}", 0, NULL, 0}};
    assert_int_equal(pl_sweep_put(f->s, f->id, pts, 2, ses, 1.5, 0.25, 4, &err), PL_OK);
    /* a batch with a stored point is refused whole */
    pl_sweep_point again[] = {{4, "{\"N\":7}", "{}", 1, NULL, 0},
                              {3, "{\"N\":6}", "{}", 1, NULL, 0}};
    assert_int_equal(pl_sweep_put(f->s, f->id, again, 2, ses, 2, 0.1, 5, &err), PL_ESTATE);
    assert_non_null(strstr(err.msg, "point 3 is stored already"));
    unsigned char st[5];
    assert_int_equal(pl_sweep_stored(f->s, f->id, st, 5, &err), PL_OK);
    assert_memory_equal(st, ((unsigned char[]){1, 0, 0, 1, 0}), 5);
    pl_sweep_info info;
    assert_int_equal(pl_sweep_find(f->s, "m", &info, &err), PL_OK);
    assert_int_equal(info.n_stored, 2);
    assert_int_equal(info.n_failed, 1);
    assert_int_equal(pl_sweep_session_end(f->s, ses, &err), PL_OK);
    sqlite3_stmt *q;
    assert_int_equal(pl_store_prepare(f->s, "SELECT points_done, compute_s, wall_s, "
                     "finished_utc IS NOT NULL, points_handed FROM sweep_session", &q, &err), PL_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 2);
    tu_assert_close(sqlite3_column_double(q, 1), 0.25, 1e-15);
    tu_assert_close(sqlite3_column_double(q, 2), 1.5, 1e-15);
    assert_int_equal(sqlite3_column_int(q, 3), 1);
    assert_int_equal(sqlite3_column_int(q, 4), 4);
    sqlite3_finalize(q);
    /* export by name: params then result, NULL when absent */
    const char *names[] = {"status", "N", "nothing"};
    char out[512] = "";
    assert_int_equal(pl_sweep_points(f->s, f->id, names, 3, collect, out, &err), PL_OK);
    assert_string_equal(out, "0:0:-:3:null;3:1:end:6:null;");
    const char *bad[] = {"x') --"};
    assert_int_equal(pl_sweep_points(f->s, f->id, bad, 1, collect, out, &err), PL_EINVAL);
    /* delete takes the points and sessions along */
    assert_int_equal(pl_sweep_delete(f->s, "m", &err), PL_OK);
    long long rows;
    assert_int_equal(pl_store_count_rows(f->s, "sweep_point", &rows, &err), PL_OK);
    assert_int_equal(rows, 0);
    assert_int_equal(pl_store_count_rows(f->s, "sweep_session", &rows, &err), PL_OK);
    assert_int_equal(rows, 0);
    assert_int_equal(pl_sweep_delete(f->s, "m", &err), PL_ENOTFOUND);
    assert_int_equal(pl_sweep_find(f->s, "m", &info, &err), PL_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(batches_and_resume, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
