/* tests/db/daemon_run_test.c - the daemon's book of its runs
 * (db/daemon_run.c) in the real SQLite: which of its runs a starting
 * daemon takes up again (no processing, or processing and no validation;
 * a 'refused' quality record and a stored pipeline outcome are answers;
 * a run still recording, or another recorder's, is not its to take up),
 * oldest first, among its newest PL_DAEMON_RUN_LOOK_BACK; the outcome
 * words; the runs left 'recording'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/daemon_run.h"
#include "db/sqlite_private.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <stdio.h>
#include <string.h>

typedef tu_run_fixture fixture;

static void exec_sql(pl_store *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(pl_store_db(s), sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

/* A live run in state, entered in the daemon's book when booked; its id. */
static long long add_run(fixture *f, const char *state, int booked)
{
    char sql[400];
    snprintf(sql, sizeof sql, "INSERT INTO run (started_utc, sample_rate_hz, n_channels, "
             "sample_format, byte_order, state, source_kind) VALUES "
             "('2026-11-29T10:00:00Z', 10000, 2, 's16', 'le', '%s', 'sim')", state);
    exec_sql(f->store, sql);
    long long id = sqlite3_last_insert_rowid(pl_store_db(f->store));
    pl_err err = {0};
    if (booked)
        assert_int_equal(pl_daemon_run_add(f->store, id, &err), PL_OK);
    return id;
}

static void processed(fixture *f, long long run)
{
    char sql[200];
    snprintf(sql, sizeof sql, "INSERT INTO processing (run_id, processed_utc, "
             "prismlab_version, params) VALUES (%lld, '2026-11-29T10:01:00Z', 't', '')", run);
    exec_sql(f->store, sql);
}

static void quality(fixture *f, long long run, const char *q)
{
    char sql[200];
    snprintf(sql, sizeof sql, "INSERT INTO run_quality (run_id, quality, recorded_utc, "
             "version) VALUES (%lld, '%s', '2026-11-29T10:01:00Z', 't')", run, q);
    exec_sql(f->store, sql);
}

static void validated(fixture *f, long long run)
{
    char sql[600];
    snprintf(sql, sizeof sql, "INSERT INTO simulation (run_id, law, fit, created_utc, "
             "n_edges, a0_m, beta_rad, lambda0_rad, mu_s, mu, duration_s, rate_hz, status) "
             "VALUES (%lld, 'line', 'fitted', '2026-11-29T10:02:00Z', 6, 0.01, 0.0697, "
             "0.0785, 0.4, 0.3, 2, 10000, 'end'); INSERT INTO validation (run_id, law, fit, "
             "simulation_id, created_utc) VALUES (%lld, 'line', 'fitted', "
             "last_insert_rowid(), '2026-11-29T10:02:00Z')", run, run);
    exec_sql(f->store, sql);
}

static void only_runs_without_an_answer_are_unfinished(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    long long never = add_run(f, "complete", 1);
    long long unvalidated = add_run(f, "complete", 1);
    processed(f, unvalidated);
    quality(f, unvalidated, "good");
    long long whole = add_run(f, "complete", 1);
    processed(f, whole);
    validated(f, whole);
    long long refused = add_run(f, "complete", 1);
    quality(f, refused, "refused");
    long long failed = add_run(f, "overrun", 1);
    assert_int_equal(pl_daemon_run_set_outcome(f->store, failed, "process-failed", &err), PL_OK);
    long long others = add_run(f, "complete", 0);     /* acquire record's, say */
    long long recording = add_run(f, "recording", 1);
    long long interrupted = add_run(f, "interrupted", 1);
    (void)others;
    (void)recording;

    pl_daemon_unfinished u[8];
    size_t n = 0;
    assert_int_equal(pl_daemon_run_unfinished(f->store, 1, u, 8, &n, &err), PL_OK);
    assert_int_equal(n, 3);
    assert_int_equal(u[0].run_id, never);
    assert_int_equal(u[0].processed, 0);
    assert_int_equal(u[1].run_id, unvalidated);
    assert_int_equal(u[1].processed, 1);
    assert_int_equal(u[2].run_id, interrupted);
    assert_int_equal(u[2].processed, 0);
    /* [pipeline] after_run = process: a processed run is finished */
    assert_int_equal(pl_daemon_run_unfinished(f->store, 0, u, 8, &n, &err), PL_OK);
    assert_int_equal(n, 2);
    assert_int_equal(u[0].run_id, never);
    assert_int_equal(u[1].run_id, interrupted);
    /* a validation that failed, once stored as the outcome, is an answer */
    assert_int_equal(pl_daemon_run_set_outcome(f->store, unvalidated, "validate-failed", &err),
                     PL_OK);
    assert_int_equal(pl_daemon_run_unfinished(f->store, 1, u, 1, &n, &err), PL_OK);
    assert_int_equal(n, 2);   /* all counted, one returned */
    assert_int_equal(u[0].run_id, never);
}

static void the_look_back_is_the_newest_runs(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    long long first = 0;
    for (int i = 0; i < PL_DAEMON_RUN_LOOK_BACK + 20; i++) {
        long long id = add_run(f, "complete", 1);
        if (i == 20)
            first = id;
    }
    pl_daemon_unfinished u[PL_DAEMON_RUN_LOOK_BACK];
    size_t n = 0;
    assert_int_equal(pl_daemon_run_unfinished(f->store, 1, u, PL_DAEMON_RUN_LOOK_BACK, &n, &err),
                     PL_OK);
    assert_int_equal(n, PL_DAEMON_RUN_LOOK_BACK);
    assert_int_equal(u[0].run_id, first);
    assert_int_equal(u[PL_DAEMON_RUN_LOOK_BACK - 1].run_id, first + PL_DAEMON_RUN_LOOK_BACK - 1);
}

static void outcomes_and_runs_left_recording(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    long long a = add_run(f, "recording", 0);
    long long b = add_run(f, "recording", 1);
    /* the daemon's end is no answer: never stored */
    assert_int_equal(pl_daemon_run_set_outcome(f->store, b, "stopped", &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "'stopped'"));
    /* a run the book missed gets its row with the outcome */
    assert_int_equal(pl_daemon_run_set_outcome(f->store, a, "validate-partial", &err), PL_OK);
    sqlite3_stmt *st;
    assert_int_equal(pl_store_prepare(f->store, "SELECT pipeline FROM daemon_run WHERE "
                                      "run_id = ?", &st, &err), PL_OK);
    sqlite3_bind_int64(st, 1, a);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "validate-partial");
    sqlite3_finalize(st);
    long long ids[1];
    size_t n = 0;
    assert_int_equal(pl_daemon_run_left_recording(f->store, ids, 1, &n, &err), PL_OK);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], a);
    /* a deleted run leaves the book with it */
    char sql[80];
    snprintf(sql, sizeof sql, "DELETE FROM run WHERE id = %lld", b);
    exec_sql(f->store, sql);
    long long rows = -1;
    assert_int_equal(pl_store_count_rows(f->store, "daemon_run", &rows, &err), PL_OK);
    assert_int_equal(rows, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(only_runs_without_an_answer_are_unfinished,
                                        tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(the_look_back_is_the_newest_runs,
                                        tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(outcomes_and_runs_left_recording,
                                        tu_run_fixture_setup, tu_run_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
