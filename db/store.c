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
#include "db/sqlite_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

struct pl_store {
    sqlite3 *db;
    char *path;
};

/* Long enough to ride out the acquisition writer's commits (a few ms
 * each) and a concurrent `db check`, short enough not to hang a script. */
enum { BUSY_TIMEOUT_MS = 10000 };

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
    return pl_store_exec(store, "BEGIN IMMEDIATE", err);
}

pl_status pl_store_commit(pl_store *store, pl_err *err)
{
    return pl_store_exec(store, "COMMIT", err);
}

pl_status pl_name_check(const char *what, const char *name, pl_err *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n > PL_NAME_MAX)
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

static pl_status migrate(pl_store *store, unsigned flags, pl_err *err)
{
    int version = read_user_version(store->db);
    char pragma[64];

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
    }
    return pl_store_commit(store, err);
}

static pl_status configure(pl_store *store, unsigned flags, pl_err *err)
{
    sqlite3_stmt *st;
    int wal = 0;

    sqlite3_busy_timeout(store->db, BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(store->db, 1);
    /* Reading the journal mode also tells us the file is a database at
     * all: SQLite opens anything lazily and fails on the first read. */
    if (sqlite3_prepare_v2(store->db, "PRAGMA journal_mode = WAL", -1, &st,
                           NULL) != SQLITE_OK)
        return pl_store_fail(store, "opening", err);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *mode = sqlite3_column_text(st, 0);
        wal = mode && strcmp((const char *)mode, "wal") == 0;
    }
    sqlite3_finalize(st);
    if (sqlite3_errcode(store->db) != SQLITE_OK &&
        sqlite3_errcode(store->db) != SQLITE_DONE &&
        sqlite3_errcode(store->db) != SQLITE_ROW)
        return pl_store_fail(store, "opening", err);
    /* An in-memory database (tests) cannot be WAL; a file must be. */
    if (!wal && strcmp(store->path, ":memory:") != 0)
        return pl_err_set(err, PL_EDB,
                          "database '%s' could not be switched to WAL mode",
                          store->path);
    if (pl_store_exec(store, "PRAGMA foreign_keys = ON", err) != PL_OK)
        return err->code;
    return pl_store_exec(store,
                         (flags & PL_STORE_SYNC_FULL)
                             ? "PRAGMA synchronous = FULL"
                             : "PRAGMA synchronous = NORMAL",
                         err);
}

pl_status pl_store_open(pl_store **out, const char *path, unsigned flags,
                        pl_err *err)
{
    pl_store *store;
    struct stat sb;
    int oflags = SQLITE_OPEN_READWRITE;

    *out = NULL;
    if (strcmp(path, ":memory:") != 0 && stat(path, &sb) != 0) {
        if (errno != ENOENT)   /* a symlink loop, a folder we may not enter */
            return pl_err_set(err, PL_EIO, "database '%s': %s", path,
                              strerror(errno));
        if (!(flags & PL_STORE_CREATE))
            return pl_err_set(err, PL_ENOTFOUND,
                              "database '%s' does not exist (create it with "
                              "'prismlab db init')", path);
        oflags |= SQLITE_OPEN_CREATE;
    }
    store = calloc(1, sizeof *store);
    if (!store || !(store->path = strdup(path))) {
        free(store);
        return pl_err_set(err, PL_ENOMEM, "opening '%s': out of memory", path);
    }
    if (sqlite3_open_v2(path, &store->db, oflags, NULL) != SQLITE_OK) {
        pl_store_fail(store, "opening", err);
        pl_store_close(store);
        return PL_EDB;
    }
    if (configure(store, flags, err) != PL_OK ||
        migrate(store, flags, err) != PL_OK) {
        pl_status code = err ? err->code : PL_EDB;
        pl_store_close(store);
        return code;
    }
    *out = store;
    return PL_OK;
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
