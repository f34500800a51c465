/* db/store.h - the prismlab database: one SQLite file per lab notebook.
 *
 * pl_store_open() opens the file in WAL mode with foreign keys on and a
 * busy timeout, then brings its schema up to date by applying the
 * numbered migrations of schemas/ (compiled into the binary) in order, in
 * one transaction, recording the result in PRAGMA user_version.  A database
 * written by a newer prismlab is refused with PL_ESCHEMA rather than
 * guessed at.  Then a run an unfinished import of an earlier prismlab
 * left (a 'wav' or 'csv' run still 'recording' or 'interrupted') is
 * deleted, with a line on stderr naming it: every command that opens the
 * store to write does this; a reader names it and leaves it
 * (docs/acquire.md, Durability).
 *
 * Only PL_STORE_CREATE (`prismlab db init`) creates a file or initialises
 * an empty database; without it a missing or empty file is PL_ENOTFOUND
 * with the command that makes one, so a mistyped --db leaves nothing
 * behind.  An SQLite file of another program (tables but no prismlab
 * schema version, or a version without prismlab's tables) is refused
 * before anything is written to it.
 *
 * A reader opens with PL_STORE_READONLY: where it may write the file and
 * its folder, read-write with PRAGMA query_only (so SQLite removes its
 * -wal and -shm on close as usual); where it may not (a read-only disk, a
 * shared read-only folder, a read-only file), as an immutable snapshot
 * that takes no locks and creates nothing beside the file, or, when a WAL
 * file holds changes, read-only through it.  A command that writes is
 * refused up front, naming why, where the file or its folder cannot be
 * written, rather than failing on its first statement.
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

/* The longest name of a prism, ramp or experiment, in characters (UTF-8:
 * "Prüfstand" is 9, not 10).  Longer names are refused where they enter,
 * never cut: two names cut to the same 63 characters would be one. */
#define PL_NAME_MAX 63
/* The most bytes such a name takes (4 a character), and a buffer for it. */
#define PL_NAME_BYTES (4 * PL_NAME_MAX)
#define PL_NAME_SIZE (PL_NAME_BYTES + 1)

/* The characters of UTF-8 text: the bytes that do not continue one. */
size_t pl_name_length(const char *name);

/* PL_EINVAL naming what and the length when name is longer than
 * PL_NAME_MAX characters or PL_NAME_BYTES bytes. */
pl_status pl_name_check(const char *what, const char *name, pl_err *err);

enum {
    PL_STORE_CREATE = 1 << 0,    /* create the file when it does not exist */
    PL_STORE_SYNC_FULL = 1 << 1, /* synchronous=FULL: survive a power cut */
    PL_STORE_NO_MIGRATE = 1 << 2, /* open as is; fail if the schema is old */
    PL_STORE_READONLY = 1 << 3   /* only read: works where nothing may be
                                    written (see the file comment) */
};

/* Opens the database at path; see the file comment for what happens. */
pl_status pl_store_open(pl_store **out, const char *path, unsigned flags,
                        pl_err *err);

/* Whether the store was opened with PL_STORE_READONLY. */
int pl_store_is_readonly(const pl_store *store);

/* Closes the handle; NULL is a no-op. */
void pl_store_close(pl_store *store);

/* The file name the store was opened with. */
const char *pl_store_path(const pl_store *store);

/* Whether the last statement failed for want of disk: SQLite's "database
 * or disk is full", or an I/O error with ENOSPC, EDQUOT or EFBIG, or one
 * while the database's disk has under 1 MiB free or a file size limit is
 * set (SQLite often loses the errno).  Ask before a rollback, which
 * resets it. */
int pl_store_disk_full(pl_store *store);

/* The schema version of the open database (PRAGMA user_version). */
int pl_store_schema_version(pl_store *store);

/* The newest schema version this build knows (the last migration). */
int pl_store_latest_version(void);

/* Transactions.  begin uses BEGIN IMMEDIATE so that a writer learns of a
 * competing writer at the start, not at commit. */
pl_status pl_store_begin(pl_store *store, pl_err *err);
pl_status pl_store_commit(pl_store *store, pl_err *err);
void pl_store_rollback(pl_store *store);

/* A gate pl_store_begin() passes before each transaction: fn(ctx, err)
 * may wait, and its error is begin's.  A parallel command's worker
 * (core/jobs.h) waits there for its turn to write, so that runs commit,
 * and take their row ids, in the serial order.  Statements outside
 * pl_store_begin() (autocommit) do not pass it.  NULL: no gate. */
typedef pl_status (*pl_store_gate_fn)(void *ctx, pl_err *err);
void pl_store_set_gate(pl_store *store, pl_store_gate_fn fn, void *ctx);

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
