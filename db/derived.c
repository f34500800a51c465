/* db/derived.c - processing record, series and impacts.  See derived.h. */
#include "db/derived.h"

#include "core/version.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/sqlite_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Series BLOBs are little-endian whatever the host: byte-swap on the rare
 * big-endian machine. */
static void to_le(double *v, size_t n)
{
    if (pl_host_little_endian())
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned char *b = (unsigned char *)&v[i];
        for (int j = 0; j < 4; j++) {
            unsigned char t = b[j];
            b[j] = b[7 - j];
            b[7 - j] = t;
        }
    }
}

/* A series row's columns but its data (?8) into st. */
static void bind_series(sqlite3_stmt *st, long long run, const pl_series *s)
{
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_text(st, 2, s->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, s->unit, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, s->decimation);
    sqlite3_bind_double(st, 5, s->t0_s);
    sqlite3_bind_double(st, 6, s->rate_hz);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)s->n);
}

static pl_status save_series(pl_store *store, long long run, const pl_series *s,
                             pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "INSERT INTO series (run_id, name, unit, "
                         "decimation, t0_s, rate_hz, n, data) VALUES "
                         "(?, ?, ?, ?, ?, ?, ?, ?)", &st, err) != PL_OK)
        return err->code;
    double *copy = NULL;
    const void *blob = s->data;
    if (!pl_host_little_endian()) {
        copy = malloc((s->n ? s->n : 1) * sizeof *copy);
        if (!copy) {
            sqlite3_finalize(st);
            return pl_err_set(err, PL_ENOMEM, "series '%s': out of memory", s->name);
        }
        memcpy(copy, s->data, s->n * sizeof *copy);
        to_le(copy, s->n);
        blob = copy;
    }
    bind_series(st, run, s);
    sqlite3_bind_blob64(st, 8, s->n ? blob : "", s->n * sizeof(double),
                        SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    free(copy);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "saving a series", err);
    return PL_OK;
}

/* Impacts go in IMPACT_ROWS rows a statement: one statement a row spent
 * half of its time starting the statement (a ten-minute run's 37,787
 * rows took 40 ms). */
enum { IMPACT_ROWS = 64, IMPACT_COLS = 10 };

static void bind_impact(sqlite3_stmt *st, int at, long long run, size_t idx,
                        const pl_impact *m)
{
    sqlite3_bind_int64(st, at + 1, run);
    sqlite3_bind_int64(st, at + 2, (sqlite3_int64)idx);
    sqlite3_bind_double(st, at + 3, m->t_s);
    sqlite3_bind_double(st, at + 4, m->omega_minus);
    sqlite3_bind_double(st, at + 5, m->omega_plus);
    sqlite3_bind_double(st, at + 6, m->ratio);
    pl_store_bind_real(st, at + 7, m->interval_s);
    pl_store_bind_real(st, at + 8, m->t_sd_s);
    pl_store_bind_real(st, at + 9, m->ratio_se);
    if (m->confirmed >= 0)
        sqlite3_bind_int(st, at + 10, m->confirmed);
    else
        sqlite3_bind_null(st, at + 10);
}

/* An INSERT of rows impacts at once. */
static pl_status prepare_impacts(pl_store *store, int rows, sqlite3_stmt **st, pl_err *err)
{
    char sql[160 + IMPACT_ROWS * 24] = "INSERT INTO impact (run_id, idx, t_s, omega_minus, "
                                      "omega_plus, ratio, interval_s, t_sd_s, ratio_se, "
                                      "confirmed) VALUES ";
    for (int r = 0; r < rows; r++)
        strcat(sql, r ? ",(?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?)");
    return pl_store_prepare(store, sql, st, err);
}

/* Inside the caller's transaction. */
static pl_status save_impacts(pl_store *store, long long run, const pl_impact *impacts,
                              size_t n, pl_err *err)
{
    sqlite3_stmt *many = NULL, *one = NULL;
    if ((n >= IMPACT_ROWS && prepare_impacts(store, IMPACT_ROWS, &many, err) != PL_OK) ||
        (n % IMPACT_ROWS && prepare_impacts(store, 1, &one, err) != PL_OK)) {
        sqlite3_finalize(many);
        return err->code;
    }
    size_t i = 0;
    int rc = SQLITE_DONE;
    for (; rc == SQLITE_DONE && i + IMPACT_ROWS <= n; i += IMPACT_ROWS) {
        sqlite3_reset(many);
        for (int r = 0; r < IMPACT_ROWS; r++)
            bind_impact(many, r * IMPACT_COLS, run, i + r, &impacts[i + r]);
        rc = sqlite3_step(many);
    }
    for (; rc == SQLITE_DONE && i < n; i++) {
        sqlite3_reset(one);
        bind_impact(one, 0, run, i, &impacts[i]);
        rc = sqlite3_step(one);
    }
    sqlite3_finalize(many);
    sqlite3_finalize(one);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "saving an impact", err);
    return PL_OK;
}

/* Replaces run_id's quality record; quality "" leaves it without one
 * (not assessed).  Inside the caller's transaction. */
static pl_status save_quality(pl_store *store, long long run_id,
                              const char *quality, const char *faults,
                              const char *when, const char *version,
                              pl_err *err)
{
    sqlite3_stmt *st = NULL;
    char sql[96];
    snprintf(sql, sizeof sql, "DELETE FROM run_quality WHERE run_id = %lld",
             run_id);
    if (pl_store_exec(store, sql, err) != PL_OK)
        return err->code;
    if (!quality[0])
        return PL_OK;
    if (pl_store_prepare(store, "INSERT INTO run_quality (run_id, quality, "
                         "faults, recorded_utc, version) VALUES (?,?,?,?,?)",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, quality, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, faults, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, when, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, version, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "saving the quality record", err);
    return PL_OK;
}

/* Back to the store's usual place for temporary files (a large sort
 * spills to disk, not memory) once the writer's transaction is over. */
static void end_temp_store(pl_store *store)
{
    pl_err ignored = {0};
    pl_store_exec(store, "PRAGMA temp_store = DEFAULT", &ignored);
}

struct pl_derived_writer {
    pl_store *store;
    long long run_id;
};

pl_status pl_derived_begin(pl_store *store, long long run_id, pl_derived_writer **out,
                           pl_err *err)
{
    char sql[96];
    *out = NULL;
    pl_derived_writer *w = malloc(sizeof *w);
    if (!w)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", run_id);
    w->store = store;
    w->run_id = run_id;
    /* Each multi-row INSERT of impacts keeps a statement journal (to undo
     * its rows alone should one fail): the 3 or 4 pages it changes, which
     * past SQLite's 64 KiB spill limit (4 pages of 16 KiB) go to a
     * temporary file: 37 MB written for a ten-minute run's impacts.  In
     * memory they are those few pages a statement; the setting is read
     * when the transaction begins. */
    if (pl_store_exec(store, "PRAGMA temp_store = MEMORY", err) != PL_OK ||
        pl_store_begin(store, err) != PL_OK) {
        end_temp_store(store);
        free(w);
        return err->code;
    }
    /* the series may come before their processing row: the foreign key
     * is checked at the commit (the pragma ends with the transaction) */
    snprintf(sql, sizeof sql, "PRAGMA defer_foreign_keys = ON; "
             "DELETE FROM processing WHERE run_id = %lld", run_id);
    if (pl_store_exec(store, sql, err) != PL_OK) {
        pl_derived_abort(w);
        return err->code;
    }
    *out = w;
    return PL_OK;
}

pl_status pl_derived_put(pl_derived_writer *w, const pl_series *s, pl_err *err)
{
    return save_series(w->store, w->run_id, s, err);
}

struct pl_derived_part {
    pl_derived_writer *w;
    const char *name;
    size_t n;
    sqlite3_blob *blob;
};

pl_status pl_derived_part_open(pl_derived_writer *w, const pl_series *s,
                               pl_derived_part **out, pl_err *err)
{
    *out = NULL;
    pl_derived_part *p = calloc(1, sizeof *p);
    if (!p)
        return pl_err_set(err, PL_ENOMEM, "series '%s': out of memory", s->name);
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(w->store, "INSERT INTO series (run_id, name, unit, decimation, "
                         "t0_s, rate_hz, n, data) VALUES (?, ?, ?, ?, ?, ?, ?, "
                         "zeroblob(?))", &st, err) != PL_OK) {
        free(p);
        return err->code;
    }
    bind_series(st, w->run_id, s);
    sqlite3_bind_int64(st, 8, (sqlite3_int64)(s->n * sizeof(double)));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    sqlite3 *db = pl_store_db(w->store);
    if (rc != SQLITE_DONE ||
        sqlite3_blob_open(db, "main", "series", "data", sqlite3_last_insert_rowid(db), 1,
                          &p->blob) != SQLITE_OK) {
        free(p);
        return pl_store_fail(w->store, "saving a series in parts", err);
    }
    p->w = w;
    p->name = s->name;
    p->n = s->n;
    *out = p;
    return PL_OK;
}

pl_status pl_derived_part_write(pl_derived_part *p, size_t at, const double *v, size_t m,
                                pl_err *err)
{
    if (at > p->n || m > p->n - at)
        return pl_err_set(err, PL_EINVAL, "series '%s': values %zu to %zu of %zu",
                          p->name, at, at + m, p->n);
    double le[512];
    for (size_t k = 0; k < m; k += 512) {
        size_t c = m - k < 512 ? m - k : 512;
        memcpy(le, v + k, c * sizeof *le);
        to_le(le, c);
        if (sqlite3_blob_write(p->blob, le, (int)(c * sizeof *le),
                               (int)((at + k) * sizeof *le)) != SQLITE_OK)
            return pl_store_fail(p->w->store, "writing a series in parts", err);
    }
    return PL_OK;
}

void pl_derived_part_close(pl_derived_part *p)
{
    if (!p)
        return;
    sqlite3_blob_close(p->blob);
    free(p);
}

pl_status pl_derived_sync(pl_derived_writer *w, pl_err *err)
{
    sqlite3_file *wal = NULL;
    sqlite3 *db = pl_store_db(w->store);
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
        !wal || !wal->pMethods)
        return PL_OK;   /* no WAL (an in-memory store): nothing to flush */
    if (wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL | SQLITE_SYNC_DATAONLY) != SQLITE_OK)
        return pl_err_set(err, PL_EIO, "run %lld: flushing the write-ahead log of "
                          "'%s' failed", w->run_id, pl_store_path(w->store));
    return PL_OK;
}

void pl_derived_abort(pl_derived_writer *w)
{
    if (!w)
        return;
    pl_store_rollback(w->store);
    end_temp_store(w->store);
    free(w);
}

static pl_status check_quality(const pl_processing *rec, pl_err *err)
{
    if (rec->quality[0] && strcmp(rec->quality, "good") != 0 &&
        strcmp(rec->quality, "degraded") != 0 && strcmp(rec->quality, "suspect") != 0)
        return pl_err_set(err, PL_EINVAL, "run %lld: quality '%s': expected "
                          "good, degraded or suspect (a refusal has no "
                          "processing record)", rec->run_id, rec->quality);
    return PL_OK;
}

/* The processing row of rec, inside the caller's transaction. */
static pl_status save_record(pl_store *store, const pl_processing *rec, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "INSERT INTO processing (run_id, processed_utc, "
                         "prismlab_version, params, release_frame, end_frame, "
                         "release_t_s, end_t_s, n_impacts, lp_end, "
                         "omega_last_mean, ratio_mean, ratio_sd, warnings, "
                         "ratio_mean_se, n_expected, n_confirmed) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, rec->run_id);
    sqlite3_bind_text(st, 2, rec->processed_utc, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, rec->version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, rec->params, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, rec->release_frame);
    sqlite3_bind_int64(st, 6, rec->end_frame);
    pl_store_bind_real(st, 7, rec->release_t_s);
    pl_store_bind_real(st, 8, rec->end_t_s);
    sqlite3_bind_int64(st, 9, rec->n_impacts);
    pl_store_bind_real(st, 10, rec->lp_end);
    pl_store_bind_real(st, 11, rec->omega_last_mean);
    pl_store_bind_real(st, 12, rec->ratio_mean);
    pl_store_bind_real(st, 13, rec->ratio_sd);
    sqlite3_bind_text(st, 14, rec->warnings, -1, SQLITE_STATIC);
    pl_store_bind_real(st, 15, rec->ratio_mean_se);
    if (rec->n_expected >= 0) {
        sqlite3_bind_int64(st, 16, rec->n_expected);
        sqlite3_bind_int64(st, 17, rec->n_confirmed);
    } else {
        sqlite3_bind_null(st, 16);
        sqlite3_bind_null(st, 17);
    }
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "saving the processing record", err);
    return PL_OK;
}

pl_status pl_derived_finish(pl_derived_writer *w, const pl_processing *rec,
                            const pl_impact *impacts, size_t n_impacts, pl_err *err)
{
    pl_store *store = w->store;
    if (rec->run_id != w->run_id) {
        pl_err_set(err, PL_EINVAL, "the record of run %lld given to the writer of "
                   "run %lld", rec->run_id, w->run_id);
    } else if (check_quality(rec, err) == PL_OK &&
               save_record(store, rec, err) == PL_OK &&
               save_quality(store, rec->run_id, rec->quality, rec->faults,
                            rec->processed_utc, rec->version, err) == PL_OK &&
               save_impacts(store, rec->run_id, impacts, n_impacts, err) == PL_OK &&
               pl_store_commit(store, err) == PL_OK) {
        end_temp_store(store);
        free(w);
        return PL_OK;
    }
    pl_derived_abort(w);
    return err->code;
}

pl_status pl_derived_save(pl_store *store, const pl_processing *rec,
                          const pl_series *series, size_t n_series,
                          const pl_impact *impacts, size_t n_impacts,
                          pl_err *err)
{
    pl_derived_writer *w;
    if (check_quality(rec, err) != PL_OK ||
        pl_derived_begin(store, rec->run_id, &w, err) != PL_OK)
        return err->code;
    for (size_t i = 0; i < n_series; i++)
        if (pl_derived_put(w, &series[i], err) != PL_OK) {
            pl_derived_abort(w);
            return err->code;
        }
    return pl_derived_finish(w, rec, impacts, n_impacts, err);
}

pl_status pl_derived_get(pl_store *store, long long run_id, pl_processing *rec,
                         pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "SELECT processed_utc, prismlab_version, params, "
                         "release_frame, end_frame, release_t_s, end_t_s, "
                         "n_impacts, lp_end, omega_last_mean, ratio_mean, "
                         "ratio_sd, warnings, ratio_mean_se, n_expected, "
                         "n_confirmed, q.quality, q.faults FROM processing "
                         "LEFT JOIN run_quality q USING (run_id) "
                         "WHERE run_id = ?",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            return pl_err_set(err, PL_ENOTFOUND, "run %lld is not processed "
                              "(run: prismlab process %lld)", run_id, run_id);
        return pl_store_fail(store, "reading the processing record", err);
    }
    memset(rec, 0, sizeof *rec);
    rec->run_id = run_id;
    pl_store_column_text(st, 0, rec->processed_utc, sizeof rec->processed_utc);
    pl_store_column_text(st, 1, rec->version, sizeof rec->version);
    pl_store_column_text(st, 2, rec->params, sizeof rec->params);
    rec->release_frame = sqlite3_column_int64(st, 3);
    rec->end_frame = sqlite3_column_int64(st, 4);
    rec->release_t_s = pl_store_column_real(st, 5);
    rec->end_t_s = pl_store_column_real(st, 6);
    rec->n_impacts = sqlite3_column_int64(st, 7);
    rec->lp_end = pl_store_column_real(st, 8);
    rec->omega_last_mean = pl_store_column_real(st, 9);
    rec->ratio_mean = pl_store_column_real(st, 10);
    rec->ratio_sd = pl_store_column_real(st, 11);
    pl_store_column_text(st, 12, rec->warnings, sizeof rec->warnings);
    rec->ratio_mean_se = pl_store_column_real(st, 13);
    rec->n_expected = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1
                                                                 : sqlite3_column_int64(st, 14);
    rec->n_confirmed = sqlite3_column_type(st, 15) == SQLITE_NULL ? -1
                                                                  : sqlite3_column_int64(st, 15);
    /* NULL (no row: processed before schema 5) reads as "" */
    pl_store_column_text(st, 16, rec->quality, sizeof rec->quality);
    pl_store_column_text(st, 17, rec->faults, sizeof rec->faults);
    sqlite3_finalize(st);
    return PL_OK;
}

/* What an earlier processing of run_id derived: processing (series and
 * impacts go with it by cascade) and the simulations and validations
 * matched to it.  Inside the caller's transaction. */
static pl_status drop_derived(pl_store *store, long long run_id, pl_err *err)
{
    static const char *const table[] = {"validation", "simulation", "processing"};
    char sql[96];
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE run_id = %lld",
                 table[i], run_id);
        if (pl_store_exec(store, sql, err) != PL_OK)
            return err->code;
    }
    return PL_OK;
}

pl_status pl_quality_refuse(pl_store *store, long long run_id,
                            const char *reason, pl_err *err)
{
    pl_fault f;
    char faults[sizeof ((pl_quality *)0)->faults], when[32];
    pl_run_info info;

    pl_fault_init(&f, "refused");
    pl_fault_add_text(&f, "reason", reason);
    if (pl_fault_format(&f, faults, sizeof faults, err) != PL_OK)
        return err->code;
    pl_store_utc_now(when);
    if (pl_store_begin(store, err) != PL_OK)
        return err->code;
    /* under the write lock: the run may have been deleted meanwhile */
    if (pl_run_get(store, run_id, &info, err) != PL_OK ||
        drop_derived(store, run_id, err) != PL_OK ||
        save_quality(store, run_id, "refused", faults, when, pl_version(),
                     err) != PL_OK ||
        pl_store_commit(store, err) != PL_OK) {
        pl_store_rollback(store);
        return pl_err_prefix(err, "recording the refusal of run %lld: ", run_id);
    }
    return PL_OK;
}

pl_status pl_quality_get(pl_store *store, long long run_id, pl_quality *q,
                         pl_err *err)
{
    sqlite3_stmt *st = NULL;
    /* the record, else (processed before schema 5) the processing's date */
    if (pl_store_prepare(store, "SELECT quality, faults, recorded_utc, version "
                         "FROM run_quality WHERE run_id = ?1 UNION ALL "
                         "SELECT '', '', processed_utc, prismlab_version "
                         "FROM processing WHERE run_id = ?1 AND NOT EXISTS "
                         "(SELECT 1 FROM run_quality WHERE run_id = ?1)",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            return pl_err_set(err, PL_ENOTFOUND, "run %lld has no quality "
                              "record: it is not processed (run: prismlab "
                              "process %lld)", run_id, run_id);
        return pl_store_fail(store, "reading the quality record", err);
    }
    memset(q, 0, sizeof *q);
    q->run_id = run_id;
    pl_store_column_text(st, 0, q->quality, sizeof q->quality);
    pl_store_column_text(st, 1, q->faults, sizeof q->faults);
    pl_store_column_text(st, 2, q->recorded_utc, sizeof q->recorded_utc);
    pl_store_column_text(st, 3, q->version, sizeof q->version);
    sqlite3_finalize(st);
    return PL_OK;
}

pl_status pl_derived_series(pl_store *store, long long run_id,
                            const char *name, int decimation, double **data,
                            size_t *n, double *t0_s, double *rate_hz,
                            pl_err *err)
{
    sqlite3_stmt *st = NULL;
    *data = NULL;
    *n = 0;
    if (pl_store_prepare(store, "SELECT t0_s, rate_hz, n, data FROM series "
                         "WHERE run_id = ? AND name = ? AND decimation = ?",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, decimation);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            return pl_err_set(err, PL_ENOTFOUND, "run %lld has no series '%s' "
                              "at decimation %d", run_id, name, decimation);
        return pl_store_fail(store, "reading a series", err);
    }
    size_t count = (size_t)sqlite3_column_int64(st, 2);
    size_t bytes = (size_t)sqlite3_column_bytes(st, 3);
    if (bytes != count * sizeof(double)) {
        sqlite3_finalize(st);
        return pl_err_set(err, PL_ECORRUPT, "run %lld series '%s': %zu bytes "
                          "for %zu values", run_id, name, bytes, count);
    }
    double *v = malloc(count ? bytes : sizeof(double));
    if (!v) {
        sqlite3_finalize(st);
        return pl_err_set(err, PL_ENOMEM, "series '%s': out of memory", name);
    }
    if (count)
        memcpy(v, sqlite3_column_blob(st, 3), bytes);
    to_le(v, count);   /* the swap is its own inverse */
    if (t0_s)
        *t0_s = sqlite3_column_double(st, 0);
    if (rate_hz)
        *rate_hz = sqlite3_column_double(st, 1);
    sqlite3_finalize(st);
    *data = v;
    *n = count;
    return PL_OK;
}

pl_status pl_derived_impacts(pl_store *store, long long run_id,
                             pl_impact **out, size_t *n, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    *n = 0;
    if (pl_store_prepare(store, "SELECT t_s, omega_minus, omega_plus, ratio, "
                         "interval_s, t_sd_s, ratio_se, confirmed FROM impact "
                         "WHERE run_id = ? ORDER BY idx",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    size_t cap = 0;
    pl_impact *v = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            pl_impact *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                free(v);
                sqlite3_finalize(st);
                return pl_err_set(err, PL_ENOMEM, "impacts: out of memory");
            }
            v = nv;
        }
        pl_impact *m = &v[(*n)++];
        m->t_s = sqlite3_column_double(st, 0);
        m->omega_minus = sqlite3_column_double(st, 1);
        m->omega_plus = sqlite3_column_double(st, 2);
        m->ratio = sqlite3_column_double(st, 3);
        m->interval_s = pl_store_column_real(st, 4);
        m->t_sd_s = pl_store_column_real(st, 5);
        m->ratio_se = pl_store_column_real(st, 6);
        m->confirmed = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1
                                                                : sqlite3_column_int(st, 7);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        *n = 0;
        return pl_store_fail(store, "reading impacts", err);
    }
    *out = v;
    return PL_OK;
}

void pl_processing_param(const pl_processing *rec, const char *key, char *out, size_t n)
{
    size_t k = strlen(key);
    out[0] = '\0';
    for (const char *l = rec->params; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, k) && l[k] == '=') {
            snprintf(out, n, "%.*s", (int)strcspn(l + k + 1, "\n"), l + k + 1);
            return;
        }
}
