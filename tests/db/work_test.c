/* tests/db/work_test.c - marks of runs under way (db/work.c) in the real
 * SQLite: a mark reads back with its step, pid and host; a mark whose
 * process has ended reads as none (a child that exited, reaped); a
 * process clears only its own mark; a run deleted takes its mark with
 * it; pl_work_describe() words it; fit lists parse (db/validation.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/run.h"
#include "db/sqlite_private.h"
#include "db/store.h"
#include "db/validation.h"
#include "db/work.h"
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef tu_run_fixture fixture;

static void exec_sql(pl_store *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(pl_store_db(s), sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

static void mark_reads_back_and_clears(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_work w;
    char words[256];
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_ENOTFOUND);
    assert_int_equal(pl_work_describe(f->store, f->run, words, sizeof words), 0);
    assert_string_equal(words, "");
    assert_int_equal(pl_work_begin(f->store, f->run, PL_WORK_VALIDATING, &err), PL_OK);
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_OK);
    assert_int_equal(w.step, PL_WORK_VALIDATING);
    assert_int_equal(w.pid, (long long)getpid());
    assert_int_equal(strlen(w.started_utc), 20);
    assert_int_equal(pl_work_describe(f->store, f->run, words, sizeof words), 1);
    char want[64];
    snprintf(want, sizeof want, "being validated now (process %lld on ", (long long)getpid());
    assert_memory_equal(words, want, strlen(want));
    /* processing replaces validating: one mark a run */
    assert_int_equal(pl_work_begin(f->store, f->run, PL_WORK_PROCESSING, &err), PL_OK);
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_OK);
    assert_int_equal(w.step, PL_WORK_PROCESSING);
    assert_int_equal(pl_work_end(f->store, f->run, &err), PL_OK);
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_ENOTFOUND);
}

static void a_mark_of_an_ended_process_is_stale(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_work w;
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    assert_true(child > 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    char host[64], sql[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(sql, sizeof sql, "INSERT INTO run_work VALUES (%lld, 'validating', %d, '%s', "
             "'2026-11-29T10:00:00Z')", f->run, (int)child, host);
    exec_sql(f->store, sql);
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, "stale"));
    /* another host's mark cannot be checked: taken as live */
    exec_sql(f->store, "UPDATE run_work SET host = 'another-host-of-the-lab'");
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_OK);
    /* nor is it this process's to clear */
    assert_int_equal(pl_work_end(f->store, f->run, &err), PL_OK);
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_OK);
    /* the run deleted, its mark goes with it */
    exec_sql(f->store, "PRAGMA foreign_keys = ON");
    char del[64];
    snprintf(del, sizeof del, "DELETE FROM run WHERE id = %lld", f->run);
    exec_sql(f->store, del);
    assert_int_equal(pl_work_get(f->store, f->run, &w, &err), PL_ENOTFOUND);
}

static void fit_lists_parse(void **state)
{
    (void)state;
    int l, t, b;
    pl_err err = {0};
    assert_int_equal(pl_fit_names_parse(PL_FIT_DEFAULT, &l, &t, &b, &err), PL_OK);
    assert_true(l && t && b);
    assert_int_equal(pl_fit_names_parse("beta", &l, &t, &b, &err), PL_OK);
    assert_true(!l && !t && b);
    assert_int_equal(pl_fit_names_parse("t0, lambda0", &l, &t, &b, &err), PL_OK);
    assert_true(l && t && !b);
    assert_int_equal(pl_fit_names_parse("lambda0,gamma", &l, &t, &b, &err), PL_EINVAL);
    assert_string_equal(err.msg, "'gamma' is not lambda0, t0 or beta");
    assert_int_equal(pl_fit_names_parse(" , ", &l, &t, &b, &err), PL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(mark_reads_back_and_clears, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_mark_of_an_ended_process_is_stale, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test(fit_lists_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
