/* db/sweep.c - sweeps and their points.  See sweep.h. */
#include "db/sweep.h"

#include "core/version.h"
#include "db/sqlite_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pl_status pl_sweep_create(pl_store *store, const pl_sweep_info *info,
                          const char *spec, long long *sweep_id, pl_err *err)
{
    if (pl_name_check("sweep name", info->name, err) != PL_OK)
        return err->code;
    sqlite3_stmt *st = NULL;
    char now[32];
    pl_store_utc_now(now);
    if (pl_store_prepare(store, "INSERT INTO sweep (name, model, spec, spec_sha256, "
                         "n_points, axes, columns, series, created_utc, "
                         "software_version) VALUES (?,?,?,?,?,?,?,?,?,?)", &st,
                         err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, info->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, info->model, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, spec, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, info->spec_sha256, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, info->n_points);
    sqlite3_bind_text(st, 6, info->axes, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, info->columns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, info->series, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, now, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, pl_version(), -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return pl_err_set(err, PL_EEXIST, "a sweep named '%s' is already in %s",
                          info->name, pl_store_path(store));
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "creating a sweep", err);
    *sweep_id = sqlite3_last_insert_rowid(pl_store_db(store));
    return PL_OK;
}

#define INFO_COLUMNS                                                          \
    "s.sweep_id, s.name, s.model, s.spec_sha256, s.n_points, s.axes, "       \
    "s.columns, s.series, s.created_utc, s.software_version, "               \
    "(SELECT count(*) FROM sweep_point p WHERE p.sweep_id = s.sweep_id), "   \
    "(SELECT count(*) FROM sweep_point p WHERE p.sweep_id = s.sweep_id AND p.ok = 0)"

static void read_info(sqlite3_stmt *st, pl_sweep_info *s)
{
    memset(s, 0, sizeof *s);
    s->sweep_id = sqlite3_column_int64(st, 0);
    pl_store_column_text(st, 1, s->name, sizeof s->name);
    pl_store_column_text(st, 2, s->model, sizeof s->model);
    pl_store_column_text(st, 3, s->spec_sha256, sizeof s->spec_sha256);
    s->n_points = sqlite3_column_int64(st, 4);
    pl_store_column_text(st, 5, s->axes, sizeof s->axes);
    pl_store_column_text(st, 6, s->columns, sizeof s->columns);
    pl_store_column_text(st, 7, s->series, sizeof s->series);
    pl_store_column_text(st, 8, s->created_utc, sizeof s->created_utc);
    pl_store_column_text(st, 9, s->software_version, sizeof s->software_version);
    s->n_stored = sqlite3_column_int64(st, 10);
    s->n_failed = sqlite3_column_int64(st, 11);
}

pl_status pl_sweep_find(pl_store *store, const char *name, pl_sweep_info *out,
                        pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "SELECT " INFO_COLUMNS " FROM sweep s WHERE s.name = ?",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    pl_status s = PL_OK;
    if (rc == SQLITE_ROW)
        read_info(st, out);
    else if (rc == SQLITE_DONE)
        s = pl_err_set(err, PL_ENOTFOUND, "no sweep named '%s' in %s", name,
                       pl_store_path(store));
    else
        s = pl_store_fail(store, "reading a sweep", err);
    sqlite3_finalize(st);
    return s;
}

pl_status pl_sweep_read_spec(pl_store *store, long long sweep_id, char **spec,
                        pl_err *err)
{
    sqlite3_stmt *st = NULL;
    *spec = NULL;
    if (pl_store_prepare(store, "SELECT spec FROM sweep WHERE sweep_id = ?", &st,
                         err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, sweep_id);
    pl_status s = PL_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        *spec = strdup(t ? (const char *)t : "");
        if (!*spec)
            s = pl_err_set(err, PL_ENOMEM, "out of memory for a sweep file");
    } else {
        s = pl_err_set(err, PL_ENOTFOUND, "no sweep %lld", sweep_id);
    }
    sqlite3_finalize(st);
    return s;
}

pl_status pl_sweep_list(pl_store *store,
                        void (*fn)(void *ctx, const pl_sweep_info *s),
                        void *ctx, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "SELECT " INFO_COLUMNS " FROM sweep s ORDER BY s.name",
                         &st, err) != PL_OK)
        return err->code;
    int rc;
    pl_sweep_info info;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        read_info(st, &info);
        fn(ctx, &info);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "listing sweeps", err);
}

pl_status pl_sweep_stored(pl_store *store, long long sweep_id,
                          unsigned char *stored, long long n, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    memset(stored, 0, (size_t)n);
    if (pl_store_prepare(store, "SELECT idx FROM sweep_point WHERE sweep_id = ?",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, sweep_id);
    int rc;
    pl_status s = PL_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long i = sqlite3_column_int64(st, 0);
        if (i < 0 || i >= n) {
            s = pl_err_set(err, PL_ECORRUPT, "sweep %lld: stored point %lld is "
                           "outside 0..%lld", sweep_id, i, n - 1);
            break;
        }
        stored[i] = 1;
    }
    if (s == PL_OK && rc != SQLITE_DONE)
        s = pl_store_fail(store, "reading stored points", err);
    sqlite3_finalize(st);
    return s;
}

pl_status pl_sweep_session_begin(pl_store *store, long long sweep_id,
                                 int workers, const char *mode,
                                 long long points_before,
                                 long long *session_id, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    char now[32];
    pl_store_utc_now(now);
    if (pl_store_prepare(store, "INSERT INTO sweep_session (sweep_id, started_utc, "
                         "workers, mode, points_before) VALUES (?,?,?,?,?)", &st,
                         err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, sweep_id);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, workers);
    sqlite3_bind_text(st, 4, mode, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, points_before);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "starting a sweep session", err);
    *session_id = sqlite3_last_insert_rowid(pl_store_db(store));
    return PL_OK;
}

pl_status pl_sweep_put(pl_store *store, long long sweep_id,
                       const pl_sweep_point *pts, size_t n,
                       long long session_id, double wall_s, double compute_s,
                       long long handed, pl_err *err)
{
    sqlite3_stmt *st = NULL, *ses = NULL;
    if (pl_store_begin(store, err) != PL_OK)
        return err->code;
    if (pl_store_prepare(store, "INSERT INTO sweep_point (sweep_id, idx, params, "
                         "result, ok, series) VALUES (?,?,?,?,?,?)", &st, err) != PL_OK)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, sweep_id);
        sqlite3_bind_int64(st, 2, pts[i].idx);
        sqlite3_bind_text(st, 3, pts[i].params, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, pts[i].result, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, pts[i].ok ? 1 : 0);
        if (pts[i].series)
            sqlite3_bind_blob(st, 6, pts[i].series, (int)pts[i].series_bytes,
                              SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 6);
        int rc = sqlite3_step(st);
        if ((rc & 0xff) == SQLITE_CONSTRAINT) {
            pl_err_set(err, PL_ESTATE, "sweep %lld: point %lld is stored already",
                       sweep_id, pts[i].idx);
            goto fail;
        }
        if (rc != SQLITE_DONE) {
            pl_store_fail(store, "storing sweep points", err);
            goto fail;
        }
    }
    if (session_id > 0) {
        if (pl_store_prepare(store, "UPDATE sweep_session SET points_done = "
                             "points_done + ?, compute_s = coalesce(compute_s, 0) + ?, "
                             "wall_s = ?, points_handed = ? WHERE session_id = ?", &ses, err) != PL_OK)
            goto fail;
        sqlite3_bind_int64(ses, 1, (long long)n);
        pl_store_bind_real(ses, 2, compute_s);
        pl_store_bind_real(ses, 3, wall_s);
        sqlite3_bind_int64(ses, 4, handed);
        sqlite3_bind_int64(ses, 5, session_id);
        if (sqlite3_step(ses) != SQLITE_DONE) {
            pl_store_fail(store, "updating the sweep session", err);
            goto fail;
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ses);
    return pl_store_commit(store, err);
fail:
    sqlite3_finalize(st);
    sqlite3_finalize(ses);
    pl_store_rollback(store);
    return err->code;
}

pl_status pl_sweep_session_end(pl_store *store, long long session_id,
                               pl_err *err)
{
    sqlite3_stmt *st = NULL;
    char now[32];
    pl_store_utc_now(now);
    if (pl_store_prepare(store, "UPDATE sweep_session SET finished_utc = ? WHERE "
                         "session_id = ?", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, session_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "ending a sweep session", err);
}

static int name_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

pl_status pl_sweep_points(pl_store *store, long long sweep_id,
                          const char *const *names, size_t nnames,
                          pl_sweep_point_fn fn, void *ctx, pl_err *err)
{
    size_t cap = 128 + nnames * 160;
    char *sql = malloc(cap);
    pl_sweep_cell *cells = malloc((nnames ? nnames : 1) * sizeof *cells);
    sqlite3_stmt *st = NULL;
    pl_status s = PL_OK;
    if (!sql || !cells) {
        s = pl_err_set(err, PL_ENOMEM, "out of memory for an export");
        goto out;
    }
    size_t len = (size_t)snprintf(sql, cap, "SELECT idx, params, result, ok, series");
    for (size_t i = 0; i < nnames; i++) {
        if (strlen(names[i]) > 60 || !name_ok(names[i])) {
            s = pl_err_set(err, PL_EINVAL, "'%s' is not a sweep value name "
                           "(letters, digits, '_', '-' and '.')", names[i]);
            goto out;
        }
        len += (size_t)snprintf(sql + len, cap - len,
                                ", coalesce(json_extract(params, '$.\"%s\"'), "
                                "json_extract(result, '$.\"%s\"'))", names[i], names[i]);
    }
    snprintf(sql + len, cap - len, " FROM sweep_point WHERE sweep_id = ? ORDER BY idx");
    if (pl_store_prepare(store, sql, &st, err) != PL_OK) {
        s = err->code;
        goto out;
    }
    sqlite3_bind_int64(st, 1, sweep_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        pl_sweep_point p = {
            .idx = sqlite3_column_int64(st, 0),
            .params = (const char *)sqlite3_column_text(st, 1),
            .result = (const char *)sqlite3_column_text(st, 2),
            .ok = sqlite3_column_int(st, 3),
            .series = sqlite3_column_blob(st, 4),
            .series_bytes = (size_t)sqlite3_column_bytes(st, 4)};
        for (size_t i = 0; i < nnames; i++) {
            int c = 5 + (int)i;
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_INTEGER:
            case SQLITE_FLOAT:
                cells[i] = (pl_sweep_cell){PL_SWEEP_NUM, sqlite3_column_double(st, c), NULL};
                break;
            case SQLITE_TEXT:
                cells[i] = (pl_sweep_cell){PL_SWEEP_TEXT, 0,
                                           (const char *)sqlite3_column_text(st, c)};
                break;
            default:
                cells[i] = (pl_sweep_cell){PL_SWEEP_NULL, 0, NULL};
            }
        }
        if (fn(ctx, &p, cells, nnames))
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        s = pl_store_fail(store, "reading sweep points", err);
out:
    sqlite3_finalize(st);
    free(sql);
    free(cells);
    return s;
}

pl_status pl_sweep_delete(pl_store *store, const char *name, pl_err *err)
{
    sqlite3_stmt *st = NULL;
    if (pl_store_prepare(store, "DELETE FROM sweep WHERE name = ?", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "deleting a sweep", err);
    if (sqlite3_changes(pl_store_db(store)) == 0)
        return pl_err_set(err, PL_ENOTFOUND, "no sweep named '%s' in %s", name,
                          pl_store_path(store));
    return PL_OK;
}
