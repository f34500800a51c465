/* db/daemon_run.c - the daemon's book of its runs.  See daemon_run.h. */
#include "db/daemon_run.h"

#include "db/sqlite_private.h"

#include <string.h>

pl_status pl_daemon_run_open(pl_store **out, const char *path, unsigned flags,
                             pl_err *err)
{
    if (pl_store_open(out, path, flags, err) != PL_OK)
        return err->code;
    sqlite3_busy_timeout(pl_store_db(*out), PL_DAEMON_RUN_BUSY_MS);
    return PL_OK;
}

pl_status pl_daemon_run_add(pl_store *store, long long run_id, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "INSERT OR IGNORE INTO daemon_run (run_id) VALUES (?)",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "entering a run in the "
                                                     "daemon's book", err);
}

pl_status pl_daemon_run_set_outcome(pl_store *store, long long run_id,
                                    const char *how, pl_err *err)
{
    static const char *const words[] = {"done", "process-failed", "validate-failed",
                                        "validate-partial"};
    int known = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        known |= !strcmp(how, words[i]);
    if (!known)
        return pl_err_set(err, PL_EINVAL, "run %lld: '%s' is no pipeline outcome", run_id, how);
    char now[32];
    pl_store_utc_now(now);
    sqlite3_stmt *st;
    /* an upsert: a run the book missed (its entry failed) gets one now */
    if (pl_store_prepare(store, "INSERT INTO daemon_run (run_id, pipeline, pipeline_utc) "
                         "VALUES (?1, ?2, ?3) ON CONFLICT (run_id) DO UPDATE SET "
                         "pipeline = ?2, pipeline_utc = ?3", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, how, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "storing a run's pipeline "
                                                     "outcome", err);
}

pl_status pl_daemon_run_unfinished(pl_store *store, int want_validation,
                                   pl_daemon_unfinished *out, size_t cap,
                                   size_t *n, pl_err *err)
{
    sqlite3_stmt *st;
    *n = 0;
    if (pl_store_prepare(store,
                         "SELECT d.run_id, p.run_id IS NOT NULL FROM "
                         " (SELECT run_id, pipeline FROM daemon_run "
                         "  ORDER BY run_id DESC LIMIT ?1) d "
                         "JOIN run r ON r.id = d.run_id "
                         "LEFT JOIN processing p ON p.run_id = d.run_id "
                         "LEFT JOIN run_quality q ON q.run_id = d.run_id "
                         "WHERE d.pipeline IS NULL AND r.state <> 'recording' "
                         " AND (p.run_id IS NULL AND coalesce(q.quality, '') <> 'refused' "
                         "  OR p.run_id IS NOT NULL AND ?2 AND NOT EXISTS "
                         "   (SELECT 1 FROM validation v WHERE v.run_id = d.run_id)) "
                         "ORDER BY d.run_id", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int(st, 1, PL_DAEMON_RUN_LOOK_BACK);
    sqlite3_bind_int(st, 2, want_validation != 0);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n < cap)
            out[*n] = (pl_daemon_unfinished){.run_id = sqlite3_column_int64(st, 0),
                                             .processed = sqlite3_column_int(st, 1)};
        ++*n;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "finding the daemon's "
                                                     "unfinished runs", err);
}

pl_status pl_daemon_run_left_recording(pl_store *store, long long *ids, size_t cap,
                                       size_t *n, pl_err *err)
{
    sqlite3_stmt *st;
    *n = 0;
    if (pl_store_prepare(store, "SELECT id FROM run WHERE state = 'recording' ORDER BY id",
                         &st, err) != PL_OK)
        return err->code;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n < cap)
            ids[*n] = sqlite3_column_int64(st, 0);
        ++*n;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "finding runs left "
                                                     "recording", err);
}
