/* db/store.c - opening, migrating and checking the SQLite store.
 *
 * Migration protocol: inside BEGIN IMMEDIATE (so two processes opening an
 * old file at once cannot both migrate it) read user_version, apply every
 * newer migration, set user_version, commit.  SQLite's DDL is
 * transactional, so a failure leaves the file exactly at its old version.
 */
#include "db/store.h"

#include "core/sample.h"
#include "core/version.h"
#include "db/migrations.h"
#include "db/run.h"
#include "db/sqlite_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

struct pl_store {
    sqlite3 *db;
    char *path;
    int immutable;   /* opened as an immutable snapshot (see connect()) */
    int readonly;    /* PL_STORE_READONLY: no statement may write */
    pl_store_gate_fn gate;   /* asked before each transaction (NULL: none) */
    void *gate_ctx;
};

/* Long enough to ride out the acquisition writer's commits (a few ms
 * each) and a concurrent `db check`, short enough not to hang a script. */
enum { BUSY_TIMEOUT_MS = 10000 };

/* A new store's page size in bytes (docs/data-model.md, "The file"): a
 * run's chunks and derived series are blobs of 4 kB to 5 MB, which on
 * SQLite's default 4 KiB pages are chains of overflow pages, one read or
 * WAL frame a page.  16 KiB pages quarter those calls (the 10-minute
 * run's `process` 30-60 ms faster); 64 KiB pages saved little more there
 * and cost the live writer's small commits a 64 KiB frame each. */
enum { STORE_PAGE_SIZE = 16384 };

sqlite3 *pl_store_db(pl_store *store) { return store->db; }
const char *pl_store_path(const pl_store *store) { return store->path; }


int pl_store_latest_version(void)
{
    return pl_migrations[pl_migration_count - 1].number;
}

pl_status pl_store_fail(pl_store *store, const char *what, pl_err *err)
{
    return pl_err_set(err, PL_EDB, "%s: %s (database '%s')", what,
                      sqlite3_errmsg(store->db), store->path);
}

pl_status pl_store_exec(pl_store *store, const char *sql, pl_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(store->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        pl_err_set(err, PL_EDB, "'%.40s...': %s (database '%s')", sql,
                   msg ? msg : sqlite3_errmsg(store->db), store->path);
        sqlite3_free(msg);
        return PL_EDB;
    }
    return PL_OK;
}

pl_status pl_store_prepare(pl_store *store, const char *sql,
                           sqlite3_stmt **stmt, pl_err *err)
{
    if (sqlite3_prepare_v2(store->db, sql, -1, stmt, NULL) != SQLITE_OK)
        return pl_store_fail(store, "preparing a query", err);
    return PL_OK;
}

pl_status pl_store_begin(pl_store *store, pl_err *err)
{
    if (store->gate && store->gate(store->gate_ctx, err) != PL_OK)
        return err->code;
    return pl_store_exec(store, "BEGIN IMMEDIATE", err);
}

void pl_store_set_gate(pl_store *store, pl_store_gate_fn fn, void *ctx)
{
    store->gate = fn;
    store->gate_ctx = ctx;
}

pl_status pl_store_commit(pl_store *store, pl_err *err)
{
    return pl_store_exec(store, "COMMIT", err);
}

size_t pl_name_length(const char *name)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

pl_status pl_name_check(const char *what, const char *name, pl_err *err)
{
    size_t n = name ? pl_name_length(name) : 0;
    if (n > PL_NAME_MAX || (name && strlen(name) > PL_NAME_BYTES))
        return pl_err_set(err, PL_EINVAL, "%s name '%.40s...' is %zu "
                          "characters long: at most %d", what, name, n,
                          PL_NAME_MAX);
    return PL_OK;
}

void pl_store_rollback(pl_store *store)
{
    if (!sqlite3_get_autocommit(store->db))
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
}

void pl_store_bind_real(sqlite3_stmt *st, int col, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

double pl_store_column_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL
               ? NAN : sqlite3_column_double(st, col);
}

void pl_store_column_text(sqlite3_stmt *st, int col, char *dst, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(dst, n, "%s", t ? (const char *)t : "");
}

pl_status pl_store_count_rows(pl_store *store, const char *table,
                              long long *rows, pl_err *err)
{
    char sql[96];
    sqlite3_stmt *st;
    size_t len = strlen(table);

    /* the name goes into the SQL text: only a plain identifier may */
    if (len == 0 || len > 32 || strspn(table, "abcdefghijklmnopqrstuvwxyz_") != len)
        return pl_err_set(err, PL_EINVAL, "table name '%s': expected 1 to 32 "
                          "lower-case letters or '_'", table);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    if (sqlite3_step(st) != SQLITE_ROW) {
        pl_store_fail(store, "counting rows", err);
        sqlite3_finalize(st);
        return PL_EDB;
    }
    *rows = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return PL_OK;
}

void pl_store_utc_now(char buf[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int read_user_version(sqlite3 *db)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

int pl_store_schema_version(pl_store *store)
{
    return read_user_version(store->db);
}

static pl_status refuse_newer(pl_store *store, int version, pl_err *err)
{
    return pl_err_set(err, PL_ESCHEMA,
                      "database '%s' has schema version %d, newer than this "
                      "prismlab (%s) knows (%d): use a newer prismlab",
                      store->path, version, pl_version(),
                      pl_store_latest_version());
}

static pl_status apply_migrations(pl_store *store, pl_err *err);

static pl_status migrate(pl_store *store, unsigned flags, pl_err *err)
{
    int version = read_user_version(store->db);

    if (version < 0)
        return pl_store_fail(store, "reading the schema version", err);
    if (version > pl_store_latest_version())
        return refuse_newer(store, version, err);
    if (version == pl_store_latest_version())
        return PL_OK;
    if (flags & PL_STORE_NO_MIGRATE)
        return pl_err_set(err, PL_ESCHEMA,
                          "database '%s' has schema version %d, older than %d",
                          store->path, version, pl_store_latest_version());
    if (store->immutable || sqlite3_db_readonly(store->db, "main") == 1)
        return pl_err_set(err, PL_ESCHEMA,
                          "database '%s' has schema version %d, older than "
                          "this prismlab's %d, and cannot be upgraded here "
                          "(it may not be written): run 'prismlab db init "
                          "--db %s' where it is writable", store->path,
                          version, pl_store_latest_version(), store->path);
    /* Foreign keys off while migrating: a migration that makes a table
     * anew (006) drops the old one, and with them on that DROP would
     * delete every row referring to it.  The pragma is a no-op inside a
     * transaction, so it goes before BEGIN; check_keys() runs before the
     * commit instead. */
    if (pl_store_exec(store, "PRAGMA foreign_keys = OFF", err) != PL_OK)
        return err->code;
    if (apply_migrations(store, err) != PL_OK) {
        pl_err ignored = {0};
        pl_store_exec(store, "PRAGMA foreign_keys = ON", &ignored);
        return err->code;
    }
    return pl_store_exec(store, "PRAGMA foreign_keys = ON", err);
}

/* PL_EDB when a row refers to one that does not exist. */
static pl_status check_keys(pl_store *store, pl_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if (pl_store_prepare(store, "PRAGMA foreign_key_check", &st, err) != PL_OK)
        return err->code;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        pl_err_set(err, PL_EDB, "a row of table '%s' refers to a missing "
                   "row of '%s'", (const char *)sqlite3_column_text(st, 0),
                   (const char *)sqlite3_column_text(st, 2));
        sqlite3_finalize(st);
        return err->code;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "checking foreign keys", err);
    return PL_OK;
}

/* Every migration newer than the file's, in one transaction. */
static pl_status apply_migrations(pl_store *store, pl_err *err)
{
    int version;
    char pragma[64];

    if (pl_store_begin(store, err) != PL_OK)
        return err->code;
    /* Re-read under the write lock: another process may have migrated. */
    version = read_user_version(store->db);
    if (version > pl_store_latest_version()) {
        pl_store_rollback(store);
        return refuse_newer(store, version, err);
    }
    for (int i = version; i < pl_migration_count; i++) {
        const pl_migration *m = &pl_migrations[i];
        if (pl_store_exec(store, m->sql, err) != PL_OK) {
            pl_store_rollback(store);
            return pl_err_prefix(err, "applying migration %s: ", m->name);
        }
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", m->number);
        if (pl_store_exec(store, pragma, err) != PL_OK) {
            pl_store_rollback(store);
            return err->code;
        }
        /* SQL cannot hash: the runs stored before 011 get their samples'
         * SHA-256 here, in the migration's transaction, so that a store
         * holding identical runs names them from its first open on. */
        long long hashed;
        if (m->number == 11 && pl_run_fill_samples_sha256(store, &hashed, err) != PL_OK) {
            pl_store_rollback(store);
            return pl_err_prefix(err, "applying migration %s: ", m->name);
        }
    }
    if (check_keys(store, err) != PL_OK) {
        pl_store_rollback(store);
        return pl_err_prefix(err, "after migrating: ");
    }
    return pl_store_commit(store, err);
}

/* The tables every prismlab store has had since its first migration: a
 * file with a schema version but without them belongs to another
 * program. */
static const char *const core_tables[] = {"prism", "ramp", "experiment",
                                          "run", "channel", "chunk"};

/* A connection that could not be set up; on a full disk, what to do. */
static pl_status open_failed(pl_store *store, pl_err *err)
{
    if (!pl_store_disk_full(store))
        return pl_store_fail(store, "opening", err);
    return pl_err_set(err, PL_EDB, "opening: %s (database '%s'): the disk is "
                      "full (or a file size limit is set), and SQLite needs room beside the database for "
                      "its -wal and -shm files (some 100 kB) even to delete: "
                      "free that much on that disk (move or remove another "
                      "file) and try again", sqlite3_errmsg(store->db),
                      store->path);
}

/* PL_OK when a file with tables is a prismlab store: a schema version
 * and every core table (bit i of ours: core_tables[i] is there); else the
 * refusal says what is missing, naming only what is missing. */
static pl_status foreign(pl_store *store, int version, unsigned ours,
                         pl_err *err)
{
    const size_t n = sizeof core_tables / sizeof *core_tables;
    char missing[128] = "", why[256];
    size_t len = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (!(ours & (1u << i)) && len < sizeof missing)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%s",
                                    k++ ? ", " : "", core_tables[i]);
    if (version != 0 && k == 0)
        return PL_OK;
    if (version == 0 && k == 0)
        snprintf(why, sizeof why, "it has prismlab's tables but no schema "
                 "version (user_version 0)");
    else if (version == 0)
        snprintf(why, sizeof why, "it has no prismlab schema version "
                 "(user_version 0) and no table%s %s", k > 1 ? "s" : "", missing);
    else
        snprintf(why, sizeof why, "its user_version is %d, but it has no "
                 "table%s %s", version, k > 1 ? "s" : "", missing);
    return pl_err_set(err, PL_EDB, "'%s' is an SQLite database but not a "
                      "prismlab store (%s): refused, nothing written to it",
                      store->path, why);
}

/* Decides from what the file holds, before anything is written to it,
 * whether it is a prismlab store (PL_OK), an empty database that only
 * `db init` (PL_STORE_CREATE) may initialise, or another program's file
 * (refused untouched).  Reading sqlite_master also tells whether the file
 * is a database at all: SQLite opens anything lazily and fails on the
 * first read.  *empty: the file holds nothing yet (a new store). */
static pl_status recognise(pl_store *store, unsigned flags, int *empty,
                           pl_err *err)
{
    sqlite3_stmt *st;
    int tables = 0, version, rc;
    unsigned ours = 0;            /* bit i: core_tables[i] is there */

    if (sqlite3_prepare_v2(store->db, "SELECT name FROM sqlite_master "
                           "WHERE type = 'table'", -1, &st, NULL) != SQLITE_OK)
        return open_failed(store, err);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        tables++;
        for (size_t i = 0; name && i < sizeof core_tables / sizeof *core_tables; i++)
            if (strcmp(name, core_tables[i]) == 0)
                ours |= 1u << i;
    }
    if (rc != SQLITE_DONE) {
        sqlite3_finalize(st);
        return open_failed(store, err);
    }
    sqlite3_finalize(st);
    if ((version = read_user_version(store->db)) < 0)
        return pl_store_fail(store, "reading the schema version", err);
    if (version == 0 && tables == 0) {
        *empty = 1;
        if (flags & PL_STORE_CREATE)
            return PL_OK;
        return pl_err_set(err, PL_ENOTFOUND, "database '%s' is empty, not a "
                          "prismlab store yet (create it with 'prismlab db "
                          "init --db %s')", store->path, store->path);
    }
    return foreign(store, version, ours, err);
}

/* A new store's page size, set before its first table and before WAL
 * mode, which fixes it; an existing store keeps its own (only a VACUUM
 * out of WAL mode changes it). */
static pl_status set_page_size(pl_store *store, pl_err *err)
{
    char sql[48];
    snprintf(sql, sizeof sql, "PRAGMA page_size = %d", STORE_PAGE_SIZE);
    return pl_store_exec(store, sql, err);
}

/* The settings of a connection that may write: WAL (a file must be in it),
 * foreign keys, the durability asked for. */
static pl_status configure(pl_store *store, unsigned flags, pl_err *err)
{
    sqlite3_stmt *st;
    int wal = 0;

    if (sqlite3_prepare_v2(store->db, "PRAGMA journal_mode = WAL", -1, &st,
                           NULL) != SQLITE_OK)
        return open_failed(store, err);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *mode = sqlite3_column_text(st, 0);
        wal = mode && strcmp((const char *)mode, "wal") == 0;
    }
    sqlite3_finalize(st);
    if (sqlite3_errcode(store->db) != SQLITE_OK &&
        sqlite3_errcode(store->db) != SQLITE_DONE &&
        sqlite3_errcode(store->db) != SQLITE_ROW)
        return open_failed(store, err);
    /* An in-memory database (tests) cannot be WAL; a file must be. */
    if (!wal && strcmp(store->path, ":memory:") != 0)
        return pl_err_set(err, PL_EDB,
                          "database '%s' could not be switched to WAL mode",
                          store->path);
    if (pl_store_exec(store, "PRAGMA foreign_keys = ON", err) != PL_OK)
        return err->code;
    /* Debian builds SQLite with SECURE_DELETE: every page a delete frees
     * is overwritten with zeros, through the WAL, so deleting a 100 MB run
     * needed 100 MB of free disk first and `run delete` could not free a
     * full disk.  FAST still clears what is left in the pages it writes
     * anyway, but writes no page only to clear it: a delete then needs a
     * few pages of WAL a run (docs/data-model.md, "Deleting"). */
    if (pl_store_exec(store, "PRAGMA secure_delete = FAST", err) != PL_OK)
        return err->code;
    /* Test only: a disk that fills, without a mount (docs/acquire.md,
     * "Disk full").  PRISMLAB_TEST_MAX_PAGE_COUNT=N caps the file at N
     * pages, so a write past them fails as a full disk does (SQLITE_FULL). */
    const char *cap = getenv("PRISMLAB_TEST_MAX_PAGE_COUNT");
    if (cap && *cap) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA max_page_count = %ld", strtol(cap, NULL, 10));
        if (pl_store_exec(store, sql, err) != PL_OK)
            return err->code;
    }
    return pl_store_exec(store,
                         (flags & PL_STORE_SYNC_FULL)
                             ? "PRAGMA synchronous = FULL"
                             : "PRAGMA synchronous = NORMAL",
                         err);
}

/* The folder holding path ("." for a bare name), into buf. */
static void folder_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, n, ".");
    else if (slash == path)
        snprintf(buf, n, "/");
    else
        snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

int pl_store_disk_full(pl_store *store)
{
    int rc = sqlite3_extended_errcode(store->db), e = sqlite3_system_errno(store->db);
    if (rc == SQLITE_FULL)
        return 1;
    if ((rc & 0xff) != SQLITE_IOERR)
        return 0;
    if (e == ENOSPC || e == EFBIG || e == EDQUOT)
        return 1;
    /* SQLite says FULL for ENOSPC on its main writes only; a full -shm or
     * a file size limit come back as I/O errors, often without the errno:
     * ask the disk and the limit, so that a failing disk is not called
     * full */
    char dir[4096];
    struct statvfs fs;
    struct rlimit lim;
    folder_of(store->path, dir, sizeof dir);
    if (statvfs(dir, &fs) == 0 && (double)fs.f_bavail * fs.f_frsize < 1 << 20)
        return 1;
    return getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
}

/* Whether this process may write the file and create its -wal and -shm
 * beside it (a read-only disk answers EROFS, a folder of another user
 * EACCES). */
static int writable_here(const char *path, const char **why)
{
    char dir[4096];
    folder_of(path, dir, sizeof dir);
    if (access(path, W_OK) != 0) {
        *why = errno == EROFS ? "it is on a read-only disk"
                              : "the file is not writable";
        return 0;
    }
    if (access(dir, W_OK) != 0) {
        *why = errno == EROFS ? "it is on a read-only disk"
                              : "its folder is not writable (SQLite keeps "
                                "its -wal and -shm files beside it)";
        return 0;
    }
    return 1;
}

/* A WAL file with content beside path: an immutable open would not see
 * what it holds. */
static int has_wal(const char *path)
{
    char wal[4096];
    struct stat sb;
    snprintf(wal, sizeof wal, "%s-wal", path);
    return stat(wal, &sb) == 0 && sb.st_size > 0;
}

/* "file:PATH?mode=ro&immutable=1" with the characters a URI gives a
 * meaning ('?', '#', '%') escaped; sqlite3_free() it. */
static char *immutable_uri(const char *path)
{
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, "file:");
    for (const char *p = path; *p; p++)
        if (*p == '?' || *p == '#' || *p == '%')
            sqlite3_str_appendf(s, "%%%02X", (unsigned char)*p);
        else
            sqlite3_str_appendchar(s, 1, *p);
    sqlite3_str_appendall(s, "?mode=ro&immutable=1");
    return sqlite3_str_finish(s);
}

/* Opens the connection the flags ask for: read-write (creating the file
 * when it does not exist), or for a reader that may not write here a
 * read-only one, as an immutable snapshot when no WAL holds changes
 * (store->immutable). */
static pl_status connect(pl_store *store, unsigned flags, int exists,
                         pl_err *err)
{
    const char *why = NULL;
    int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI;
    char *uri = NULL;
    int rc;

    if (!exists)
        oflags |= SQLITE_OPEN_CREATE;
    else if (strcmp(store->path, ":memory:") != 0 &&
             !writable_here(store->path, &why)) {
        if (!(flags & PL_STORE_READONLY))
            return pl_err_set(err, PL_EIO, "database '%s' cannot be written "
                              "here: %s (commands that only read it, such as "
                              "'run list', 'export' and 'report', work)",
                              store->path, why);
        /* Nothing may be written beside it.  Without changes waiting in a
         * WAL, the file is the whole database and SQLite can read it as an
         * immutable snapshot, taking no locks and creating no -shm; with
         * them, a plain read-only open reads through the existing -shm. */
        oflags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
        if (!has_wal(store->path)) {
            uri = immutable_uri(store->path);
            if (!uri)
                return pl_err_set(err, PL_ENOMEM, "opening '%s': out of "
                                  "memory", store->path);
            store->immutable = 1;
        }
    }
    /* A file name goes through a URI only when asked: a name containing
     * '?' or '%' must stay a plain name. */
    if (!uri)
        oflags &= ~SQLITE_OPEN_URI;
    rc = sqlite3_open_v2(uri ? uri : store->path, &store->db, oflags, NULL);
    sqlite3_free(uri);
    if (rc != SQLITE_OK)
        return pl_store_fail(store, "opening", err);
    sqlite3_busy_timeout(store->db, BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(store->db, 1);
    /* SQLite falls back to read-only when the file cannot be written
     * (permissions changed between the check and the open). */
    if (!store->immutable && !(flags & PL_STORE_READONLY) &&
        sqlite3_db_readonly(store->db, "main") == 1)
        return pl_err_set(err, PL_EIO, "database '%s' cannot be written: the "
                          "file is read-only", store->path);
    return PL_OK;
}

/* A run of an imported file ('wav', 'csv') left 'recording' or
 * 'interrupted' is an import a killed or failed prismlab of before issue 21
 * left half done (an import is now one transaction: unfinished, it is
 * never committed).  It holds a part of a file the user still has, and its
 * SHA-256 once blocked re-importing the file; process would take it for
 * the whole.  Each is deleted (with its channels and chunks, by the
 * schema's cascade) by whichever command opens the store next to write,
 * saying so on stderr; a reader (read-only) names them and leaves them.
 * Failing to delete (a full disk) is said too, and the open goes on.
 * Live runs ('comedi', 'sim') are the recorder's (record.h). */
/* Removes up to 64 of them; returns how many were found (-1: a removal
 * failed). */
static int remove_some_imports(pl_store *store)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db, "SELECT id, state, n_frames, source_kind, "
                           "source_detail FROM run WHERE source_kind IN ('wav', "
                           "'csv') AND state IN ('recording', 'interrupted') "
                           "ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;   /* no run table yet: nothing to remove */
    }
    long long ids[64];
    char line[64][400];
    int n = 0;
    while (n < 64 && sqlite3_step(st) == SQLITE_ROW) {
        ids[n] = sqlite3_column_int64(st, 0);
        snprintf(line[n], sizeof line[n], "run %lld (%s of %s '%.250s', %lld "
                 "frames stored)", ids[n], (const char *)sqlite3_column_text(st, 1),
                 (const char *)sqlite3_column_text(st, 3),
                 (const char *)sqlite3_column_text(st, 4),
                 (long long)sqlite3_column_int64(st, 2));
        n++;
    }
    sqlite3_finalize(st);
    if (store->readonly) {   /* a reader says so; the next writer removes them */
        for (int i = 0; i < n; i++)
            fprintf(stderr, "prismlab: database '%s': %s is an import left "
                    "unfinished by a killed or failed prismlab: the next "
                    "command that writes to the database removes it\n",
                    store->path, line[i]);
        return 0;
    }
    int found = n;
    for (int i = 0; i < n; i++) {
        char sql[96];
        char *msg = NULL;
        snprintf(sql, sizeof sql, "DELETE FROM run WHERE id = %lld", ids[i]);
        if (sqlite3_exec(store->db, sql, NULL, NULL, &msg) == SQLITE_OK)
            fprintf(stderr, "prismlab: database '%s': removed %s: an import "
                    "left unfinished by a killed or failed prismlab\n",
                    store->path, line[i]);
        else {
            fprintf(stderr, "prismlab: database '%s': could not remove %s, an "
                    "unfinished import: %s\n", store->path, line[i],
                    msg ? msg : sqlite3_errmsg(store->db));
            found = -1;
        }
        sqlite3_free(msg);
    }
    return found;
}

static void remove_unfinished_imports(pl_store *store)
{
    int n = 64;
    while (n == 64 && (n = remove_some_imports(store)) > 0) {
    }
}

pl_status pl_store_open(pl_store **out, const char *path, unsigned flags,
                        pl_err *err)
{
    pl_store *store;
    struct stat sb;
    int exists = 1;

    *out = NULL;
    if (strcmp(path, ":memory:") != 0 && stat(path, &sb) != 0) {
        if (errno != ENOENT)   /* a symlink loop, a folder we may not enter */
            return pl_err_set(err, PL_EIO, "database '%s': %s", path,
                              strerror(errno));
        if (!(flags & PL_STORE_CREATE))
            return pl_err_set(err, PL_ENOTFOUND,
                              "database '%s' does not exist (create it with "
                              "'prismlab db init --db %s')", path, path);
        exists = 0;
    } else if (strcmp(path, ":memory:") != 0 && S_ISDIR(sb.st_mode)) {
        return pl_err_set(err, PL_EINVAL, "database '%s' is a folder: a file "
                          "name is needed", path);
    } else if (strcmp(path, ":memory:") != 0 && !S_ISREG(sb.st_mode)) {
        /* SQLite would open /dev/null and leave /dev/null-journal beside
         * it: a store is a regular file, or a new one */
        return pl_err_set(err, PL_EINVAL, "database '%s' is not a regular "
                          "file (a device, a pipe or a socket): name a file, "
                          "or a new one for 'db init'", path);
    }
    store = calloc(1, sizeof *store);
    if (!store || !(store->path = strdup(path))) {
        free(store);
        return pl_err_set(err, PL_ENOMEM, "opening '%s': out of memory", path);
    }
    store->readonly = (flags & PL_STORE_READONLY) != 0;
    int empty = 0;
    if (connect(store, flags, exists, err) != PL_OK ||
        recognise(store, flags, &empty, err) != PL_OK ||
        (empty && set_page_size(store, err) != PL_OK) ||
        (!store->immutable && configure(store, flags, err) != PL_OK) ||
        migrate(store, flags, err) != PL_OK ||
        ((flags & PL_STORE_READONLY) && !store->immutable &&
         pl_store_exec(store, "PRAGMA query_only = ON", err) != PL_OK)) {
        pl_status code = err ? err->code : PL_EDB;
        pl_store_close(store);
        return code;
    }
    remove_unfinished_imports(store);
    *out = store;
    return PL_OK;
}

int pl_store_is_readonly(const pl_store *store)
{
    return store->readonly;
}

void pl_store_close(pl_store *store)
{
    if (!store)
        return;
    sqlite3_close(store->db);
    free(store->path);
    free(store);
}

/* --- pl_store_check ----------------------------------------------------- */

static void problem(pl_store_problem_fn fn, void *ctx, long long *count,
                    long long run, long long chunk, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void problem(pl_store_problem_fn fn, void *ctx, long long *count,
                    long long run, long long chunk, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ++*count;
    if (fn)
        fn(ctx, run, chunk, msg);
}

static pl_status check_sqlite(pl_store *store, pl_store_problem_fn fn,
                              void *ctx, long long *count, pl_err *err)
{
    sqlite3_stmt *st;

    if (pl_store_prepare(store, "PRAGMA integrity_check", &st, err) != PL_OK)
        return err->code;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *row = (const char *)sqlite3_column_text(st, 0);
        if (row && strcmp(row, "ok") != 0)
            problem(fn, ctx, count, 0, 0, "sqlite integrity: %s", row);
    }
    sqlite3_finalize(st);
    if (pl_store_prepare(store, "PRAGMA foreign_key_check", &st, err) != PL_OK)
        return err->code;
    while (sqlite3_step(st) == SQLITE_ROW)
        problem(fn, ctx, count, 0, 0,
                "foreign key: row %lld of table '%s' names a missing '%s'",
                (long long)sqlite3_column_int64(st, 1),
                (const char *)sqlite3_column_text(st, 0),
                (const char *)sqlite3_column_text(st, 2));
    sqlite3_finalize(st);
    return PL_OK;
}

/* Walks the chunks ordered by run and first frame, so that tiling is a
 * comparison with the previous chunk's end. */
static pl_status check_chunks(pl_store *store, pl_store_problem_fn fn,
                              void *ctx, long long *count, pl_err *err)
{
    static const char sql[] =
        "SELECT c.run_id, c.id, c.first_frame, c.n_frames, c.crc32, c.data,"
        "       r.n_channels, r.sample_format, r.n_frames"
        "  FROM chunk c JOIN run r ON r.id = c.run_id"
        " ORDER BY c.run_id, c.first_frame";
    sqlite3_stmt *st;
    long long run = -1, next = 0, declared = 0;
    int rc;

    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long r = sqlite3_column_int64(st, 0);
        long long id = sqlite3_column_int64(st, 1);
        long long first = sqlite3_column_int64(st, 2);
        long long n = sqlite3_column_int64(st, 3);
        uint32_t crc_stored = (uint32_t)sqlite3_column_int64(st, 4);
        const void *data = sqlite3_column_blob(st, 5);
        long long bytes = sqlite3_column_bytes(st, 5);
        int nch = sqlite3_column_int(st, 6);
        pl_sample_format fmt;
        uint32_t crc;

        if (r != run) {
            if (run >= 0 && next != declared)
                problem(fn, ctx, count, run, 0,
                        "run %lld: chunks hold %lld frames, run says %lld",
                        run, next, declared);
            run = r;
            next = 0;
            declared = sqlite3_column_int64(st, 8);
        }
        crc = (uint32_t)crc32(0L, data, (uInt)bytes);
        if (crc != crc_stored)
            problem(fn, ctx, count, r, id,
                    "run %lld chunk %lld (frames %lld..%lld): CRC-32 is "
                    "%08x, stored %08x: the samples are corrupt",
                    r, id, first, first + n - 1, crc, crc_stored);
        if (pl_sample_format_parse((const char *)sqlite3_column_text(st, 7),
                                   &fmt) == PL_OK &&
            bytes != n * nch * (long long)pl_sample_format_size(fmt))
            problem(fn, ctx, count, r, id,
                    "run %lld chunk %lld: %lld bytes, expected %lld frames x "
                    "%d channels x %zu bytes",
                    r, id, bytes, n, nch, pl_sample_format_size(fmt));
        if (first != next)
            problem(fn, ctx, count, r, id,
                    "run %lld chunk %lld: starts at frame %lld, expected %lld "
                    "(%s)", r, id, first, next,
                    first > next ? "frames missing" : "frames overlap");
        next = first + n;
    }
    if (run >= 0 && next != declared)
        problem(fn, ctx, count, run, 0,
                "run %lld: chunks hold %lld frames, run says %lld", run, next,
                declared);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "reading chunks", err);
    return PL_OK;
}

/* A run that claims frames but has no chunk at all never shows up in the
 * chunk walk; ask for those separately. */
static pl_status check_empty_runs(pl_store *store, pl_store_problem_fn fn,
                                  void *ctx, long long *count, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store,
                         "SELECT id, n_frames FROM run r WHERE n_frames > 0 "
                         "AND NOT EXISTS (SELECT 1 FROM chunk c "
                         "WHERE c.run_id = r.id)", &st, err) != PL_OK)
        return err->code;
    while (sqlite3_step(st) == SQLITE_ROW)
        problem(fn, ctx, count, sqlite3_column_int64(st, 0), 0,
                "run %lld: says %lld frames but has no chunks",
                (long long)sqlite3_column_int64(st, 0),
                (long long)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    return PL_OK;
}

pl_status pl_store_check(pl_store *store, pl_store_problem_fn fn, void *ctx,
                         long long *problems, pl_err *err)
{
    long long count = 0;
    pl_status s = check_sqlite(store, fn, ctx, &count, err);
    if (s == PL_OK)
        s = check_chunks(store, fn, ctx, &count, err);
    if (s == PL_OK)
        s = check_empty_runs(store, fn, ctx, &count, err);
    *problems = count;
    return s;
}
