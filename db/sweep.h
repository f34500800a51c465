/* db/sweep.h - parameter sweeps in the store (tables sweep, sweep_point
 * and sweep_session of schemas/003_sweep.sql; docs/sweep.md).
 *
 * A sweep is created once with its file's text; its points are stored by
 * one writer in transactions of any size (a point has its whole row or
 * none), and a resumed sweep asks which points are stored.  Point values
 * are JSON objects written by model/sweep/; this module only stores them
 * and, for export, reads named values back out with SQLite's JSON
 * functions.
 */
#ifndef PL_DB_SWEEP_H
#define PL_DB_SWEEP_H

#include "core/error.h"
#include "db/store.h"

#include <stddef.h>

typedef struct {
    long long sweep_id;
    char name[PL_NAME_MAX + 1];
    char model[16];
    char spec_sha256[65];
    long long n_points;
    char axes[1024];          /* axis names, comma-separated, slowest first */
    char columns[1024];       /* result names, comma-separated */
    char series[256];         /* series names, comma-separated ("" none) */
    char created_utc[32];
    char software_version[64];
    /* filled by find and list: */
    long long n_stored;       /* points with a row */
    long long n_failed;       /* of them, with ok = 0 */
} pl_sweep_info;

/* Creates the sweep row from info (all but sweep_id, created_utc,
 * software_version, n_stored, n_failed) and the file's text; sets
 * *sweep_id.  PL_EEXIST when a sweep of that name exists. */
pl_status pl_sweep_create(pl_store *store, const pl_sweep_info *info,
                          const char *spec, long long *sweep_id, pl_err *err);

/* Reads the sweep called name; PL_ENOTFOUND when there is none. */
pl_status pl_sweep_find(pl_store *store, const char *name, pl_sweep_info *out,
                        pl_err *err);

/* The sweep file's text as stored (malloc'd, the caller frees). */
pl_status pl_sweep_read_spec(pl_store *store, long long sweep_id, char **spec,
                        pl_err *err);

/* Calls fn for every sweep, by name. */
pl_status pl_sweep_list(pl_store *store,
                        void (*fn)(void *ctx, const pl_sweep_info *s),
                        void *ctx, pl_err *err);

/* Sets stored[i] = 1 for every stored point i (0 for the others);
 * stored has room for n entries (the sweep's n_points). */
pl_status pl_sweep_stored(pl_store *store, long long sweep_id,
                          unsigned char *stored, long long n, pl_err *err);

/* One computed point, as the writer stores it. */
typedef struct {
    long long idx;
    const char *params;       /* JSON object */
    const char *result;       /* JSON object */
    int ok;                   /* 0: the model refused or failed */
    const void *series;       /* NULL: none */
    size_t series_bytes;
} pl_sweep_point;

/* Starts a session row (one invocation of the sweep); *session_id. */
pl_status pl_sweep_session_begin(pl_store *store, long long sweep_id,
                                 int workers, const char *mode,
                                 long long points_before,
                                 long long *session_id, pl_err *err);

/* Stores n points in one transaction, and in it adds n to the session's
 * points_done, compute_s to its compute_s, and sets its wall_s and
 * points_handed (the points handed out so far).  A point
 * stored already is a PL_ESTATE error (nothing of the batch is kept). */
pl_status pl_sweep_put(pl_store *store, long long sweep_id,
                       const pl_sweep_point *pts, size_t n,
                       long long session_id, double wall_s, double compute_s,
                       long long handed, pl_err *err);

/* Marks the session finished (finished_utc now). */
pl_status pl_sweep_session_end(pl_store *store, long long session_id,
                               pl_err *err);

/* One exported value: a number, a text, or nothing (NULL/absent). */
typedef struct {
    enum { PL_SWEEP_NULL, PL_SWEEP_NUM, PL_SWEEP_TEXT } kind;
    double num;
    const char *text;
} pl_sweep_cell;

/* Calls fn for every stored point in index order with the values of the
 * given names (looked up in the point's params, then its result), plus the
 * raw row.  names are letters, digits, '_', '-' and '.' (v0.vx) (PL_EINVAL otherwise).
 * fn returns nonzero to stop early. */
typedef int (*pl_sweep_point_fn)(void *ctx, const pl_sweep_point *p,
                                 const pl_sweep_cell *cells, size_t ncells);
pl_status pl_sweep_points(pl_store *store, long long sweep_id,
                          const char *const *names, size_t nnames,
                          pl_sweep_point_fn fn, void *ctx, pl_err *err);

/* Deletes the sweep and all its points. PL_ENOTFOUND when none. */
pl_status pl_sweep_delete(pl_store *store, const char *name, pl_err *err);

#endif
