/* db/work.c - marks of runs under way.  See work.h. */
#include "db/work.h"

#include "db/sqlite_private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *pl_work_step_name(pl_work_step step)
{
    return step == PL_WORK_VALIDATING ? "validating" : "processing";
}

static void host_name(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0)
        snprintf(buf, n, "?");
    buf[n - 1] = '\0';
}

pl_status pl_work_begin(pl_store *store, long long run_id, pl_work_step step,
                        pl_err *err)
{
    char host[64], now[32];
    host_name(host, sizeof host);
    pl_store_utc_now(now);
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "INSERT OR REPLACE INTO run_work (run_id, step, pid, "
                         "host, started_utc) VALUES (?, ?, ?, ?, ?)", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, pl_work_step_name(step), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (long long)getpid());
    sqlite3_bind_text(st, 4, host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, now, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "marking a run under way", err);
}

pl_status pl_work_end(pl_store *store, long long run_id, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "DELETE FROM run_work WHERE run_id = ? AND pid = ?",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, (long long)getpid());
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "clearing a run's mark", err);
}

/* Whether the process pid still runs here: kill(pid, 0) succeeds, or is
 * refused (another user's process, alive). */
static int alive(long long pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

pl_status pl_work_get(pl_store *store, long long run_id, pl_work *w, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "SELECT step, pid, host, started_utc FROM run_work "
                         "WHERE run_id = ?", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        char step[16];
        pl_store_column_text(st, 0, step, sizeof step);
        w->step = strcmp(step, "validating") ? PL_WORK_PROCESSING : PL_WORK_VALIDATING;
        w->pid = sqlite3_column_int64(st, 1);
        pl_store_column_text(st, 2, w->host, sizeof w->host);
        pl_store_column_text(st, 3, w->started_utc, sizeof w->started_utc);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return pl_err_set(err, PL_ENOTFOUND, "run %lld: no command is working on it", run_id);
    if (rc != SQLITE_ROW)
        return pl_store_fail(store, "reading a run's mark", err);
    char host[64];
    host_name(host, sizeof host);
    if (!strcmp(host, w->host) && !alive(w->pid))
        return pl_err_set(err, PL_ENOTFOUND, "run %lld: the mark of process %lld is stale "
                          "(it has ended)", run_id, w->pid);
    return PL_OK;
}

void pl_work_words(const pl_work *w, char *buf, size_t n)
{
    snprintf(buf, n, "being %s now (process %lld on %s, since %s)",
             w->step == PL_WORK_VALIDATING ? "validated" : "processed", w->pid, w->host,
             w->started_utc);
}

int pl_work_describe(pl_store *store, long long run_id, char *buf, size_t n)
{
    pl_work w;
    pl_err err = {0};
    buf[0] = '\0';
    if (pl_work_get(store, run_id, &w, &err) != PL_OK)
        return 0;
    pl_work_words(&w, buf, n);
    return 1;
}
