/* db/store.h - the prismlab database: one SQLite file per lab notebook.
 *
 * pl_store_open() opens (or creates) the file in WAL mode with foreign keys
 * on and a busy timeout, then brings its schema up to date by applying the
 * numbered migrations of schemas/ (compiled into the binary) in order, in
 * one transaction, recording the result in PRAGMA user_version.  A database
 * written by a newer prismlab is refused with PL_ESCHEMA rather than
 * guessed at.
 *
 * A pl_store is used by one thread at a time; a thread that needs the
 * database concurrently (the acquisition writer) opens its own handle.
 *
 * SQLite itself stays behind this folder's headers: the connection, SQL
 * text and the statement helpers are in db/sqlite_private.h, which only
 * db/ includes.
 */
#ifndef PL_DB_STORE_H
#define PL_DB_STORE_H

#include "core/error.h"

#include <stddef.h>

typedef struct pl_store pl_store;

/* The longest name of a prism, ramp or experiment (bytes).  Longer names
 * are refused where they enter, never cut: two names cut to the same 63
 * bytes would be one. */
#define PL_NAME_MAX 63

/* PL_EINVAL naming what and the length when name is longer than
 * PL_NAME_MAX. */
pl_status pl_name_check(const char *what, const char *name, pl_err *err);

enum {
    PL_STORE_CREATE = 1 << 0,    /* create the file when it does not exist */
    PL_STORE_SYNC_FULL = 1 << 1, /* synchronous=FULL: survive a power cut */
    PL_STORE_NO_MIGRATE = 1 << 2 /* open as is; fail if the schema is old */
};

/* Opens the database at path; see the file comment for what happens. */
pl_status pl_store_open(pl_store **out, const char *path, unsigned flags,
                        pl_err *err);

/* Closes the handle; NULL is a no-op. */
void pl_store_close(pl_store *store);

/* The file name the store was opened with. */
const char *pl_store_path(const pl_store *store);

/* The schema version of the open database (PRAGMA user_version). */
int pl_store_schema_version(pl_store *store);

/* The newest schema version this build knows (the last migration). */
int pl_store_latest_version(void);

/* Transactions.  begin uses BEGIN IMMEDIATE so that a writer learns of a
 * competing writer at the start, not at commit. */
pl_status pl_store_begin(pl_store *store, pl_err *err);
pl_status pl_store_commit(pl_store *store, pl_err *err);
void pl_store_rollback(pl_store *store);

/* Counts the rows of one of the schema's tables (a name of letters and
 * underscores: PL_EINVAL otherwise; PL_EDB when there is no such table). */
pl_status pl_store_count_rows(pl_store *store, const char *table,
                              long long *rows, pl_err *err);

/* The current UTC time as ISO 8601 text ("2026-11-22T10:31:07Z"). */
void pl_store_utc_now(char buf[32]);

/* One problem found by pl_store_check(): run and chunk are 0 when the
 * problem does not belong to one. */
typedef void (*pl_store_problem_fn)(void *ctx, long long run_id,
                                    long long chunk_id, const char *what);

/* Runs SQLite's integrity and foreign-key checks, then verifies every
 * chunk: its CRC-32, its length against the run's format, and that the
 * chunks of each run tile frames 0 .. n_frames-1 without gap or overlap.
 * Each problem goes to fn; *problems receives their count.  Returns PL_OK
 * when the checks ran (whatever they found), an error when they could not. */
pl_status pl_store_check(pl_store *store, pl_store_problem_fn fn, void *ctx,
                         long long *problems, pl_err *err);

#endif
