/* tests/db/store_test.c - db/store.c and db/run.c against the real SQLite:
 * migrations (fresh, upgrade from an older file, refusal of a newer one,
 * another program's file refused untouched, an empty one left to db init,
 * a reader that cannot write),
 * WAL and foreign keys, chunk storage with CRC, and `check` catching a
 * flipped byte, a missing chunk and a run whose count disagrees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/migrations.h"
#include "db/run.h"
#include "db/sqlite_private.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *dir;
    char *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("store");
    f->db = tu_path(f->dir, "t.db");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

static pl_store *open_ok(const char *path, unsigned flags)
{
    pl_store *s = NULL;
    pl_err err = {0};
    pl_status st = pl_store_open(&s, path, flags, &err);
    if (st != PL_OK)
        fail_msg("open: %s", err.msg);
    return s;
}

static long long scalar(pl_store *s, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    assert_int_equal(sqlite3_prepare_v2(pl_store_db(s), sql, -1, &st, NULL),
                     SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void text_of(pl_store *s, const char *sql, char *out, size_t n)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(pl_store_db(s), sql, -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

static void fresh_database_is_wal_at_latest_version(void **state)
{
    fixture *f = *state;
    char mode[16];
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);

    assert_int_equal(pl_store_schema_version(s), pl_migration_count);
    assert_int_equal(pl_store_latest_version(), pl_migration_count);
    text_of(s, "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "wal");
    assert_int_equal(scalar(s, "PRAGMA foreign_keys"), 1);
    assert_int_equal(scalar(s, "SELECT count(*) FROM sqlite_master WHERE "
                               "type = 'table' AND name = 'chunk'"), 1);
    pl_store_close(s);
}

static void missing_file_without_create_is_not_found(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_ENOTFOUND);
    assert_null(s);
    assert_non_null(strstr(err.msg, "prismlab db init"));
}

static void not_a_database_is_refused(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};
    assert_int_equal(tu_write_file(f->db, "this is a CSV, not SQLite\n"
                                          "a,b,c\n1,2,3\n"), 0);
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_EDB);
    assert_non_null(strstr(err.msg, f->db));
}

static void newer_schema_is_refused_and_left_alone(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    char sql[64];
    int future = pl_store_latest_version() + 5;

    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", future);
    assert_int_equal(pl_store_exec(s, sql, &err), PL_OK);
    pl_store_close(s);

    s = NULL;
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_ESCHEMA);
    assert_null(s);
    assert_non_null(strstr(err.msg, "newer"));

    /* Still the future version: refusing must not touch the file. */
    {
        sqlite3 *db;
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
        sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), future);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
}

/* The bytes of a file, for "left untouched" (at most 1 MiB). */
static size_t slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap, f);
        fclose(f);
    }
    return n;
}

/* Another program's SQLite file (a table, user_version 0; or a version
 * but none of prismlab's tables) is refused, by readers and writers and
 * by `db init` alike, and not one byte of it changes. */
static void foreign_database_is_refused_untouched(void **state)
{
    fixture *f = *state;
    static char before[1 << 20], after[1 << 20];
    const char *setups[] = {
        "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('keep me');",
        "CREATE TABLE notes (t TEXT); PRAGMA user_version = 1;"};
    const unsigned flags[] = {0, PL_STORE_READONLY, PL_STORE_CREATE};

    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < 3; i++) {
            sqlite3 *db;
            pl_store *s = NULL;
            pl_err err = {0};
            size_t n0, n1;
            char wal[4096];

            remove(f->db);
            assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
            assert_int_equal(sqlite3_exec(db, setups[k], NULL, NULL, NULL),
                             SQLITE_OK);
            sqlite3_close(db);
            n0 = slurp(f->db, before, sizeof before);
            assert_int_equal(pl_store_open(&s, f->db, flags[i], &err), PL_EDB);
            assert_null(s);
            assert_non_null(strstr(err.msg, "not a prismlab store"));
            n1 = slurp(f->db, after, sizeof after);
            assert_int_equal(n0, n1);
            assert_memory_equal(before, after, n0);
            snprintf(wal, sizeof wal, "%s-wal", f->db);
            assert_int_not_equal(access(wal, F_OK), 0);
        }
}

/* An empty database (what sqlite3 leaves for a mistyped name, or a
 * zero-byte file) is initialised only by `db init`. */
static void empty_database_needs_db_init(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};

    assert_int_equal(tu_write_file(f->db, ""), 0);
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, "prismlab db init"));
    assert_int_equal(pl_store_open(&s, f->db, PL_STORE_READONLY, &err),
                     PL_ENOTFOUND);
    s = open_ok(f->db, PL_STORE_CREATE);
    assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
    pl_store_close(s);
}

/* A reader on a writable file: query_only refuses every write, and the
 * -wal and -shm go when it closes. */
static void reader_cannot_write(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    char wal[4096];
    pl_store_close(s);

    s = open_ok(f->db, PL_STORE_READONLY);
    assert_true(pl_store_is_readonly(s));
    assert_int_equal(scalar(s, "SELECT count(*) FROM run"), 0);
    assert_int_equal(pl_store_exec(s, "INSERT INTO experiment (name, "
                                      "created_utc) VALUES ('x', 'now')", &err),
                     PL_EDB);
    pl_store_close(s);
    snprintf(wal, sizeof wal, "%s-wal", f->db);
    assert_int_not_equal(access(wal, F_OK), 0);
}

/* A database made by every earlier prismlab version: the first k
 * migrations applied by hand, user_version k, one row of data; opening
 * migrates it to the latest and keeps the row.  With a single migration
 * only k = 0 exists; each new schemas/NNN file adds a case. */
static void every_older_version_upgrades(void **state)
{
    fixture *f = *state;
    for (int k = 0; k < pl_migration_count; k++) {
        sqlite3 *db;
        pl_store *s;
        char sql[64];

        remove(f->db);
        assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
        for (int i = 0; i < k; i++)
            assert_int_equal(sqlite3_exec(db, pl_migrations[i].sql, NULL, NULL,
                                          NULL), SQLITE_OK);
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", k);
        assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        if (k >= 1)
            assert_int_equal(sqlite3_exec(db,
                "INSERT INTO ramp (name, material, beta_rad, mu_s) "
                "VALUES ('old', 'glass', 0.007, 0.12)", NULL, NULL, NULL),
                SQLITE_OK);
        sqlite3_close(db);
        /* version 0 is an empty file: only `db init` (CREATE) takes it */
        s = open_ok(f->db, k == 0 ? PL_STORE_CREATE : 0);
        assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
        assert_int_equal(scalar(s, "SELECT count(*) FROM ramp"), k >= 1);
        pl_store_close(s);
    }
}

/* A failing migration must leave the file at its old version: here a
 * version-1 store whose user made a table 'impact_note' and, in the way
 * of migration 002, a column 'impact.t_sd_s' of their own. */
static void failed_migration_rolls_back(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    pl_store *s = NULL;
    pl_err err = {0};

    if (pl_migration_count < 2)
        skip();
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, pl_migrations[0].sql, NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "ALTER TABLE impact ADD COLUMN t_sd_s "
                                      "TEXT; PRAGMA user_version = 1;",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_EDB);
    assert_non_null(strstr(err.msg, pl_migrations[1].name));

    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    {
        sqlite3_stmt *st;
        sqlite3_prepare_v2(db, "SELECT (SELECT user_version FROM "
                               "pragma_user_version), (SELECT count(*) FROM "
                               "pragma_table_info('processing') WHERE name = "
                               "'n_expected')", -1, &st, NULL);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), 1);
        assert_int_equal(sqlite3_column_int(st, 1), 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

static void two_channels(pl_channel ch[2])
{
    memset(ch, 0, 2 * sizeof *ch);
    for (int i = 0; i < 2; i++) {
        ch[i].beam_height_m = i ? 0.0112 : 0.0199;
        ch[i].beam_sign = i ? -1 : 1;
        ch[i].ldv_scale_mps_per_v = 0.025;
        ch[i].cal_kind = PL_CAL_LINEAR;
        ch[i].cal_order = 1;
        ch[i].cal_coef[0] = -10.0;
        ch[i].cal_coef[1] = 20.0 / 65535.0;
        ch[i].range_min_v = -10;
        ch[i].range_max_v = 10;
        ch[i].maxdata = 65535;
    }
}

/* Stores 3 chunks of 1000 frames of a ramp of u16 codes. */
static long long store_run(pl_store *s)
{
    pl_run_info info;
    pl_channel ch[2];
    pl_err err = {0};
    uint16_t buf[2000];

    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    info.format = PL_FMT_U16;
    snprintf(info.source_kind, sizeof info.source_kind, "comedi");
    two_channels(ch);
    assert_int_equal(pl_run_create(s, &info, ch, &err), PL_OK);
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < 1000; i++) {
            buf[2 * i] = (uint16_t)(c * 1000 + i);
            buf[2 * i + 1] = (uint16_t)(65535 - (c * 1000 + i));
        }
        if (pl_run_append_chunk(s, info.id, c * 1000, 1000, buf, sizeof buf,
                                &err) != PL_OK)
            fail_msg("append: %s", err.msg);
    }
    return info.id;
}

/* A new store has 16 KiB pages (docs/data-model.md, "The file"), an
 * empty file that `db init` takes too; a store made with SQLite's 4 KiB
 * keeps them through its migrations and still takes and gives chunks. */
static void new_store_has_16k_pages_older_keeps_its_own(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    pl_err err = {0};
    uint16_t raw[2 * 500];
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    assert_int_equal(scalar(s, "PRAGMA page_size"), 16384);
    pl_store_close(s);

    remove(f->db);
    assert_int_equal(tu_write_file(f->db, ""), 0);
    s = open_ok(f->db, PL_STORE_CREATE);
    assert_int_equal(scalar(s, "PRAGMA page_size"), 16384);
    pl_store_close(s);

    remove(f->db);
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA page_size = 4096", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, pl_migrations[0].sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    s = open_ok(f->db, 0);
    assert_int_equal(scalar(s, "PRAGMA page_size"), 4096);
    assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
    long long id = store_run(s);
    assert_int_equal(pl_run_read_raw(s, id, 800, 500, raw, sizeof raw, &err), PL_OK);
    for (int i = 0; i < 500; i++)
        assert_int_equal(raw[2 * i + 1], 65535 - (800 + i));
    pl_store_close(s);
}

static void chunks_round_trip_and_convert(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    long long id = store_run(s);
    uint16_t raw[2 * 500];
    double volts[2 * 500];
    pl_run_info info;

    assert_int_equal(pl_run_get(s, id, &info, &err), PL_OK);
    assert_int_equal(info.n_frames, 3000);
    assert_int_equal(info.format, PL_FMT_U16);
    /* A window that straddles two chunks. */
    assert_int_equal(pl_run_read_raw(s, id, 800, 500, raw, sizeof raw, &err),
                     PL_OK);
    for (int i = 0; i < 500; i++) {
        assert_int_equal(raw[2 * i], 800 + i);
        assert_int_equal(raw[2 * i + 1], 65535 - (800 + i));
    }
    assert_int_equal(pl_run_read_volts(s, id, 800, 500, volts, &err), PL_OK);
    tu_assert_close(volts[0], -10.0 + 20.0 * 800 / 65535.0, 1e-12);
    tu_assert_close(volts[1], -10.0 + 20.0 * (65535 - 800) / 65535.0,
                        1e-12);
    /* Past the end is an error naming the range, not a short read. */
    assert_int_equal(pl_run_read_raw(s, id, 2900, 200, raw, sizeof raw, &err),
                     PL_EINVAL);
    pl_store_close(s);
}

/* Both readers give each channel's calibration polynomial of the stored
 * code, bit for bit, de-interleaved or not: through the polynomial for a
 * short read, through the 16-bit table past 65536 frames (a run of 70 000
 * frames of every code); the scaled reader that times a factor. */
static void channels_read_as_volts(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    pl_run_info info;
    pl_channel ch[2];
    enum { N = 70000 };
    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    info.format = PL_FMT_S16;
    snprintf(info.source_kind, sizeof info.source_kind, "comedi");
    two_channels(ch);
    ch[1].cal_order = 2;                    /* a curved calibration */
    ch[1].cal_coef[2] = 1e-9;
    assert_int_equal(pl_run_create(s, &info, ch, &err), PL_OK);
    static int16_t buf[2 * N];
    for (int i = 0; i < N; i++) {
        buf[2 * i] = (int16_t)(i % 65536 - 32768);
        buf[2 * i + 1] = (int16_t)(32767 - i % 65536);
    }
    assert_int_equal(pl_run_append_chunk(s, info.id, 0, N, buf, sizeof buf, &err), PL_OK);
    static double volts[2 * N], c0[N], c1[N];
    double *out[2] = {c0, c1};
    assert_int_equal(pl_run_read_volts(s, info.id, 0, N, volts, &err), PL_OK);
    assert_int_equal(pl_run_read_channels(s, info.id, 0, N, out, 2, &err), PL_OK);
    for (int i = 0; i < N; i++) {
        double v0 = pl_channel_volts(&ch[0], buf[2 * i]);
        double v1 = pl_channel_volts(&ch[1], buf[2 * i + 1]);
        assert_true(c0[i] == v0 && volts[2 * i] == v0);
        assert_true(c1[i] == v1 && volts[2 * i + 1] == v1);
    }
    /* short reads, not from the start */
    assert_int_equal(pl_run_read_channels(s, info.id, 1000, 500, out, 2, &err), PL_OK);
    assert_int_equal(pl_run_read_volts(s, info.id, 1000, 500, volts, &err), PL_OK);
    for (int i = 0; i < 500; i++) {
        double v1 = pl_channel_volts(&ch[1], buf[2 * (1000 + i) + 1]);
        assert_true(c1[i] == v1 && volts[2 * i + 1] == v1);
    }
    assert_int_equal(pl_run_read_channels(s, info.id, 0, 10, out, 1, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "2 channels"));
    /* scaled (a beam's sign times its m/s per volt): the product of the
     * volts and the factor, bit for bit, through the table and through
     * the polynomial */
    const double scale[2] = {0.025, -0.0125};
    for (int len = N; len >= 500; len = len == N ? 500 : 0) {
        assert_int_equal(pl_run_read_scaled(s, info.id, 0, len, out, scale, 2, &err), PL_OK);
        for (int i = 0; i < len; i++) {
            double v0 = pl_channel_volts(&ch[0], buf[2 * i]) * scale[0];
            double v1 = pl_channel_volts(&ch[1], buf[2 * i + 1]) * scale[1];
            if (c0[i] != v0 || c1[i] != v1)
                fail_msg("%d frames: frame %d reads %.17g, %.17g, not %.17g, %.17g", len, i,
                         c0[i], c1[i], v0, v1);
        }
    }
    assert_int_equal(pl_run_read_scaled(s, info.id, 0, 10, out, scale, 1, &err), PL_EINVAL);
    pl_store_close(s);
}

static void chunk_must_continue_the_run(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    long long id = store_run(s);
    uint16_t buf[20] = {0};

    assert_int_equal(pl_run_append_chunk(s, id, 5000, 10, buf, sizeof buf, &err),
                     PL_ESTATE);
    assert_int_equal(pl_run_append_chunk(s, id, 3000, 10, buf, sizeof buf, &err),
                     PL_OK);
    pl_store_close(s);
}

typedef struct {
    int count;
    long long run, chunk;
    char last[512];
} problems_seen;

static void collect(void *ctx, long long run, long long chunk, const char *what)
{
    problems_seen *p = ctx;
    p->count++;
    p->run = run;
    p->chunk = chunk;
    snprintf(p->last, sizeof p->last, "%s", what);
}

static void check_is_clean_on_good_data(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    problems_seen seen = {0};
    long long n = -1;

    store_run(s);
    assert_int_equal(pl_store_check(s, collect, &seen, &n, &err), PL_OK);
    assert_int_equal(n, 0);
    assert_int_equal(seen.count, 0);
    pl_store_close(s);
}

static void flip_bit(pl_store *s, long long first_frame, int offset)
{
    sqlite3_stmt *st;
    unsigned char *copy;
    int n;

    assert_int_equal(sqlite3_prepare_v2(pl_store_db(s),
        "SELECT data FROM chunk WHERE first_frame = ?", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, first_frame);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    n = sqlite3_column_bytes(st, 0);
    copy = malloc((size_t)n);
    memcpy(copy, sqlite3_column_blob(st, 0), (size_t)n);
    sqlite3_finalize(st);
    copy[offset] ^= 0x04;
    assert_int_equal(sqlite3_prepare_v2(pl_store_db(s),
        "UPDATE chunk SET data = ? WHERE first_frame = ?", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_blob(st, 1, copy, n, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, first_frame);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    free(copy);
}

static void check_catches_a_flipped_byte(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    problems_seen seen = {0};
    long long n = -1, id = store_run(s), chunk;
    uint16_t raw[2];

    chunk = scalar(s, "SELECT id FROM chunk WHERE first_frame = 1000");
    /* Flip one bit in the middle of the second chunk's BLOB, as a bad
     * sector or a stray write would. */
    flip_bit(s, 1000, 1999);
    assert_int_equal(pl_store_check(s, collect, &seen, &n, &err), PL_OK);
    assert_true(n >= 1);
    assert_int_equal(seen.run, id);
    assert_int_equal(seen.chunk, chunk);
    assert_non_null(strstr(seen.last, "CRC"));
    /* Reading through the damage is refused, naming the chunk. */
    assert_int_equal(pl_run_read_raw(s, id, 1500, 1, raw, sizeof raw, &err),
                     PL_ECORRUPT);
    assert_non_null(strstr(err.msg, "CRC"));
    /* Frames of an intact chunk still read. */
    assert_int_equal(pl_run_read_raw(s, id, 10, 1, raw, sizeof raw, &err), PL_OK);
    pl_store_close(s);
}

static void check_catches_a_missing_chunk(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    problems_seen seen = {0};
    long long n = -1;

    store_run(s);
    assert_int_equal(pl_store_exec(s, "DELETE FROM chunk WHERE first_frame = 1000",
                                   &err), PL_OK);
    assert_int_equal(pl_store_check(s, collect, &seen, &n, &err), PL_OK);
    assert_true(n >= 1);
    assert_non_null(strstr(seen.last, "frames missing"));
    pl_store_close(s);
}

static void check_catches_a_run_without_chunks(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    problems_seen seen = {0};
    long long n = -1, id = store_run(s);
    char sql[96];

    snprintf(sql, sizeof sql, "DELETE FROM chunk WHERE run_id = %lld", id);
    assert_int_equal(pl_store_exec(s, sql, &err), PL_OK);
    assert_int_equal(pl_store_check(s, collect, &seen, &n, &err), PL_OK);
    assert_int_equal(n, 1);
    assert_non_null(strstr(seen.last, "says 3000 frames but has no chunks"));
    pl_store_close(s);
}

static void interrupted_runs_are_marked(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    long long id = store_run(s), count = -1;
    pl_run_info info;

    assert_int_equal(pl_run_mark_interrupted(s, &count, &err), PL_OK);
    assert_int_equal(count, 1);
    assert_int_equal(pl_run_get(s, id, &info, &err), PL_OK);
    assert_int_equal(info.state, PL_RUN_INTERRUPTED);
    assert_int_equal(info.n_frames, 3000); /* data kept */
    assert_int_equal(pl_run_mark_interrupted(s, &count, &err), PL_OK);
    assert_int_equal(count, 0);
    pl_store_close(s);
}

/* A run imported from a file with this SHA-256, of n frames of zeros
 * (n at most 1000). */
static long long store_file_run(pl_store *s, const char *sha256, int n)
{
    pl_run_info info;
    pl_channel ch[2];
    pl_err err = {0};
    static int16_t zeros[2 * 1000];

    assert_true(n >= 0 && n <= 1000);
    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    info.state = PL_RUN_IMPORTED;
    snprintf(info.source_kind, sizeof info.source_kind, "wav");
    snprintf(info.source_sha256, sizeof info.source_sha256, "%s", sha256);
    two_channels(ch);
    assert_int_equal(pl_run_create(s, &info, ch, &err), PL_OK);
    assert_int_equal(pl_run_append_chunk(s, info.id, 0, n, zeros,
                                         (size_t)n * 2 * sizeof zeros[0], &err),
                     PL_OK);
    return info.id;
}

static void runs_found_by_sha256_and_deleted(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    char a[65], b[65];
    long long id = -1, frames = -1, rows = -1;

    memset(a, 'a', 64);
    memset(b, 'b', 64);
    a[64] = b[64] = '\0';
    long long first = store_file_run(s, a, 100);
    long long other = store_file_run(s, b, 40);
    long long again = store_file_run(s, a, 10);   /* imported with --force */
    assert_true(first < other && other < again);

    assert_int_equal(pl_run_find_by_sha256(s, a, &id, &err), PL_OK);
    assert_int_equal(id, first);                  /* the oldest */
    assert_int_equal(pl_run_find_by_sha256(s, b, &id, &err), PL_OK);
    assert_int_equal(id, other);
    b[0] = 'c';
    assert_int_equal(pl_run_find_by_sha256(s, b, &id, &err), PL_OK);
    assert_int_equal(id, 0);
    /* a partial run an older build's killed import left does not count */
    long long partial = store_file_run(s, b, 1);
    assert_int_equal(pl_run_set_state(s, partial, PL_RUN_RECORDING, -1, &err), PL_OK);
    assert_int_equal(pl_run_find_by_sha256(s, b, &id, &err), PL_OK);
    assert_int_equal(id, 0);
    assert_int_equal(pl_run_delete(s, partial, &err), PL_OK);
    assert_int_equal(pl_run_total_frames(s, &frames, &err), PL_OK);
    assert_int_equal(frames, 150);

    assert_int_equal(pl_run_delete(s, first, &err), PL_OK);
    assert_int_equal(pl_run_find_by_sha256(s, a, &id, &err), PL_OK);
    assert_int_equal(id, again);
    assert_int_equal(pl_run_total_frames(s, &frames, &err), PL_OK);
    assert_int_equal(frames, 50);
    /* its channels and chunks went with it */
    assert_int_equal(pl_store_count_rows(s, "run", &rows, &err), PL_OK);
    assert_int_equal(rows, 2);
    assert_int_equal(pl_store_count_rows(s, "channel", &rows, &err), PL_OK);
    assert_int_equal(rows, 4);
    assert_int_equal(pl_store_count_rows(s, "chunk", &rows, &err), PL_OK);
    assert_int_equal(rows, 2);
    assert_int_equal(pl_run_delete(s, first, &err), PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, f->db));
    pl_store_close(s);
}

/* A run's gaps (schema 10) read back in frame order, a gap outside a
 * recording refused, and the rows go with their run. */
static void gaps_round_trip_and_go_with_their_run(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    char a[65];
    memset(a, 'a', 64);
    a[64] = '\0';
    long long id = store_file_run(s, a, 1000), other = store_file_run(s, a, 10);
    pl_run_gap g1 = {700, 12}, g0 = {300, 256}, bad = {0, 5};
    assert_int_equal(pl_run_add_gap(s, id, &g1, &err), PL_OK);
    assert_int_equal(pl_run_add_gap(s, id, &g0, &err), PL_OK);
    assert_int_equal(pl_run_add_gap(s, id, &bad, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "a gap of 5 frames at frame 0 lies outside a recording"));
    pl_run_gap *gaps = NULL;
    size_t n = 9;
    assert_int_equal(pl_run_gaps(s, id, &gaps, &n, &err), PL_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gaps[0].first_frame, 300);
    assert_int_equal(gaps[0].n_frames, 256);
    assert_int_equal(gaps[1].first_frame, 700);
    assert_int_equal(gaps[1].n_frames, 12);
    free(gaps);
    assert_int_equal(pl_run_gaps(s, other, &gaps, &n, &err), PL_OK);
    assert_int_equal(n, 0);
    assert_null(gaps);
    assert_int_equal(pl_run_delete(s, id, &err), PL_OK);
    assert_int_equal(scalar(s, "SELECT count(*) FROM run_gap"), 0);
    pl_store_close(s);
}

static void count_rows_takes_only_table_names(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    long long rows = -1;

    assert_int_equal(pl_store_count_rows(s, "prism", &rows, &err), PL_OK);
    assert_int_equal(rows, 0);
    assert_int_equal(pl_store_count_rows(s, "run; DROP TABLE run", &rows, &err),
                     PL_EINVAL);
    assert_non_null(strstr(err.msg, "run; DROP TABLE run"));
    assert_int_equal(pl_store_count_rows(s, "", &rows, &err), PL_EINVAL);
    assert_int_equal(pl_store_count_rows(s, "no_such_table", &rows, &err), PL_EDB);
    assert_non_null(strstr(err.msg, "no_such_table"));
    assert_int_equal(pl_store_count_rows(s, "run", &rows, &err), PL_OK);
    assert_int_equal(rows, 0);
    pl_store_close(s);
}

static void polynomial_calibration_matches_horner(void **state)
{
    pl_channel ch = {0};
    (void)state;
    ch.cal_order = 3;
    ch.cal_origin = 32768;
    ch.cal_coef[0] = 0.01;
    ch.cal_coef[1] = 3.05e-4;
    ch.cal_coef[2] = 1e-12;
    ch.cal_coef[3] = -2e-16;
    {
        double x = 40000 - 32768.0;
        double want = 0.01 + 3.05e-4 * x + 1e-12 * x * x - 2e-16 * x * x * x;
        tu_assert_close(pl_channel_volts(&ch, 40000), want, 1e-15);
    }
}

/* Issue 30: deleting the newest run and storing another gave the new one
 * the deleted run's id.  Ids are never handed out twice (migration 006). */
static void run_ids_are_never_reused(void **state)
{
    fixture *f = *state;
    pl_store *s = open_ok(f->db, PL_STORE_CREATE);
    pl_err err = {0};
    char a[65];

    memset(a, 'a', 64);
    a[64] = '\0';
    long long first = store_file_run(s, a, 10);
    long long second = store_file_run(s, a, 10);
    assert_int_equal(pl_run_delete(s, second, &err), PL_OK);
    long long third = store_file_run(s, a, 10);
    assert_true(third > second);
    assert_true(first < second);
    pl_store_close(s);
    /* and across opening the file again */
    s = open_ok(f->db, 0);
    assert_int_equal(pl_run_delete(s, third, &err), PL_OK);
    assert_true(store_file_run(s, a, 10) > third);
    pl_store_close(s);
}

/* The channel table's columns before 008 (which added decoder_delay_s). */
static const char channel_005_columns[] =
    "run_id, idx, name, source_channel, beam_height_m, beam_sign, "
    "ldv_scale_mps_per_v, cal_kind, cal_origin, cal_order, cal_c0, cal_c1, "
    "cal_c2, cal_c3, range_min_v, range_max_v, maxdata";
/* The run table's columns before 011 added the samples' hash and times. */
static const char run_005_columns[] =
    "id, prism_id, ramp_id, experiment_id, started_utc, sample_rate_hz, "
    "n_channels, sample_format, byte_order, state, overrun_frame, source_kind, "
    "source_detail, source_sha256, synthetic, lambda0_rad, pretrigger_frames, "
    "n_frames, ended_utc, notes";

/* A store made by the schema before 006 (user_version 5, written by hand
 * with the old files): two runs with channels, chunks and a correction.
 * Opening migrates it; every row stays, with its id; a deleted newest id
 * is not given again afterwards. */
static void version_5_store_keeps_its_runs_through_006(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    pl_store *s;
    pl_err err = {0};
    char a[65], sql[64];

    if (pl_migration_count < 6)
        skip();
    memset(a, 'a', 64);
    a[64] = '\0';
    /* the runs stored through today's code, then the file rewritten with
     * migrations 001-005 only and the rows copied over */
    s = open_ok(f->db, PL_STORE_CREATE);
    long long r1 = store_file_run(s, a, 100);
    long long r2 = store_file_run(s, a, 40);
    assert_int_equal(pl_store_exec(s, "INSERT INTO run_change (run_id, "
        "changed_utc, field, old_value, new_value, version) VALUES (2, 'now', "
        "'notes', '', 'x', 'test')", &err), PL_OK);
    pl_store_close(s);

    char old[1200];
    snprintf(old, sizeof old, "%s.old", f->db);
    assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(sqlite3_exec(db, pl_migrations[i].sql, NULL, NULL,
                                      NULL), SQLITE_OK);
    snprintf(sql, sizeof sql, "PRAGMA user_version = 5");
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    char attach[1400];
    snprintf(attach, sizeof attach, "ATTACH '%s' AS n; INSERT INTO run SELECT "
             "%s FROM n.run; INSERT INTO channel SELECT %s FROM n.channel; "
             "INSERT INTO chunk SELECT * FROM n.chunk; INSERT INTO run_change "
             "SELECT * FROM n.run_change; DETACH n;", f->db, run_005_columns,
             channel_005_columns);
    assert_int_equal(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    remove(f->db);
    char wal[1300];
    snprintf(wal, sizeof wal, "%s-wal", f->db);
    remove(wal);
    assert_int_equal(rename(old, f->db), 0);

    s = open_ok(f->db, 0);
    assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
    assert_int_equal(scalar(s, "SELECT count(*) FROM run"), 2);
    assert_int_equal(scalar(s, "SELECT count(*) FROM channel"), 4);
    assert_int_equal(scalar(s, "SELECT count(*) FROM chunk"), 2);
    assert_int_equal(scalar(s, "SELECT count(*) FROM run_change"), 1);
    assert_int_equal(scalar(s, "SELECT sum(n_frames) FROM run"), 140);
    assert_int_equal(scalar(s, "SELECT max(id) FROM run"), r2);
    /* 011 hashed the samples of both runs as it migrated */
    assert_int_equal(scalar(s, "SELECT count(*) FROM run WHERE "
                               "length(samples_sha256) = 64"), 2);
    assert_int_equal(scalar(s, "SELECT count(*) FROM sqlite_master WHERE "
                               "name = 'run' AND sql LIKE '%AUTOINCREMENT%'"), 1);
    /* foreign keys are on again: a delete takes the children with it */
    assert_int_equal(pl_run_delete(s, r2, &err), PL_OK);
    assert_int_equal(scalar(s, "SELECT count(*) FROM run_change"), 0);
    assert_int_equal(scalar(s, "SELECT count(*) FROM channel"), 2);
    assert_true(store_file_run(s, a, 5) > r2);
    assert_int_equal(scalar(s, "SELECT count(*) FROM run WHERE id = 1"), r1 == 1);
    pl_store_close(s);
}

/* Issue 33: a store of schema 7 (before the channels had a decoder delay)
 * with a run: opening it adds channel.decoder_delay_s, NULL in the old
 * rows (read back as 0, not known); a run stored after keeps the delays
 * its channels were given, each its own; a delay out of (0, 0.1] s is
 * refused by the column's CHECK. */
static void version_7_store_gains_decoder_delay_null(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    pl_err err = {0};
    char a[65];

    assert_true(pl_migration_count >= 8);
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    for (int i = 0; i < 7; i++)
        assert_int_equal(sqlite3_exec(db, pl_migrations[i].sql, NULL, NULL,
                                      NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "PRAGMA user_version = 7;"
        "INSERT INTO run (id, started_utc, sample_rate_hz, n_channels, "
        " sample_format, byte_order, state, source_kind) VALUES "
        " (1, '2026-11-27T00:00:00Z', 10000, 2, 's16', 'le', 'imported', 'wav');"
        "INSERT INTO channel (run_id, idx, name, beam_height_m, beam_sign, "
        " ldv_scale_mps_per_v, cal_kind, cal_order, cal_c1) VALUES "
        " (1, 0, 'ldv1', 0.02, 1, 0.025, 'linear', 1, 1e-3),"
        " (1, 1, 'ldv2', 0.01, -1, 0.025, 'linear', 1, 1e-3);",
        NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    pl_store *s = open_ok(f->db, 0);
    assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
    assert_int_equal(scalar(s, "SELECT count(*) FROM pragma_table_info('channel') "
                               "WHERE name = 'decoder_delay_s' AND type = 'REAL'"), 1);
    assert_int_equal(scalar(s, "SELECT count(*) FROM channel WHERE run_id = 1 "
                               "AND decoder_delay_s IS NULL"), 2);
    pl_channel ch[2];
    assert_int_equal(pl_run_channels(s, 1, ch, 2, &err), PL_OK);
    assert_true(ch[0].decoder_delay_s == 0 && ch[1].decoder_delay_s == 0);
    assert_string_equal(ch[1].name, "ldv2");

    /* a new run keeps each channel's delay, to the bit */
    pl_run_info info;
    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    info.state = PL_RUN_IMPORTED;
    snprintf(info.source_kind, sizeof info.source_kind, "wav");
    memset(a, 'c', 64);
    a[64] = '\0';
    snprintf(info.source_sha256, sizeof info.source_sha256, "%s", a);
    two_channels(ch);
    ch[0].decoder_delay_s = 1 / (2 * M_PI * 1500);
    ch[1].decoder_delay_s = 53e-6;
    assert_int_equal(pl_run_create(s, &info, ch, &err), PL_OK);
    pl_channel back[2];
    assert_int_equal(pl_run_channels(s, info.id, back, 2, &err), PL_OK);
    assert_true(back[0].decoder_delay_s == 1 / (2 * M_PI * 1500));
    assert_true(back[1].decoder_delay_s == 53e-6);
    assert_int_equal(scalar(s, "SELECT count(*) FROM channel WHERE "
                               "decoder_delay_s IS NOT NULL"), 2);
    /* the column's range is the store's own, whoever writes */
    assert_int_not_equal(sqlite3_exec(pl_store_db(s), "UPDATE channel SET "
                                      "decoder_delay_s = 0.2 WHERE run_id = 1",
                                      NULL, NULL, NULL), SQLITE_OK);
    pl_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fresh_database_is_wal_at_latest_version, setup, teardown),
        cmocka_unit_test_setup_teardown(new_store_has_16k_pages_older_keeps_its_own, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_file_without_create_is_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(not_a_database_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(newer_schema_is_refused_and_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(foreign_database_is_refused_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_database_needs_db_init, setup, teardown),
        cmocka_unit_test_setup_teardown(reader_cannot_write, setup, teardown),
        cmocka_unit_test_setup_teardown(every_older_version_upgrades, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_migration_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(check_catches_a_run_without_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(chunks_round_trip_and_convert, setup, teardown),
        cmocka_unit_test_setup_teardown(channels_read_as_volts, setup, teardown),
        cmocka_unit_test_setup_teardown(chunk_must_continue_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(check_is_clean_on_good_data, setup, teardown),
        cmocka_unit_test_setup_teardown(check_catches_a_flipped_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(check_catches_a_missing_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(interrupted_runs_are_marked, setup, teardown),
        cmocka_unit_test_setup_teardown(runs_found_by_sha256_and_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(gaps_round_trip_and_go_with_their_run, setup, teardown),
        cmocka_unit_test_setup_teardown(count_rows_takes_only_table_names, setup, teardown),
        cmocka_unit_test_setup_teardown(run_ids_are_never_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(version_5_store_keeps_its_runs_through_006, setup, teardown),
        cmocka_unit_test_setup_teardown(version_7_store_gains_decoder_delay_null, setup, teardown),
        cmocka_unit_test(polynomial_calibration_matches_horner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
