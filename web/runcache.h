/* web/runcache.h - what the run page plots, kept between requests.
 *
 * A zoom must not reread a 10-minute run, so the server keeps, for the
 * last few runs asked for (PL_RUNCACHE_SLOTS, least recently used
 * replaced), the run's trace (web/trace.h: the levels of extremes of v_p1
 * and v_p2), its derived series at 1 kHz (omega, L_p), its impacts and the
 * matching simulation on the same times (the line law, fitted else
 * recorded; NaN outside the valid window), computed once.  A run that records is
 * extended on each request (only the new chunks are read).
 *
 * Not thread-safe: the server holds its store lock around every call.
 */
#ifndef PL_WEB_RUNCACHE_H
#define PL_WEB_RUNCACHE_H

#include "core/error.h"
#include "db/derived.h"
#include "db/store.h"
#include "web/trace.h"

#include <stddef.h>

enum { PL_RUNCACHE_SLOTS = 4 };

/* Derived series of one run on one grid: sample k at t0 + k / rate. */
typedef enum { PL_RS_OMEGA, PL_RS_LP, PL_RS_SIM_OMEGA, PL_RS_SIM_LP, PL_RS_N } pl_rs_kind;

typedef struct {
    long long run_id;
    pl_trace *trace;
    int processed;            /* 0: no derived series (only the trace) */
    pl_processing proc;
    int simulated;            /* 1: s[PL_RS_SIM_*] hold a simulation */
    char sim_label[40];       /* "line law, fitted" */
    double t0, rate;
    size_t n;
    double *s[PL_RS_N];
    pl_impact *imp;           /* the impacts, in time order */
    size_t n_imp;
    unsigned long long used;  /* LRU stamp */
} pl_run_entry;

typedef struct pl_runcache pl_runcache;

/* An empty cache. */
pl_status pl_runcache_create(pl_runcache **out, pl_err *err);

/* Frees every entry; NULL is a no-op. */
void pl_runcache_destroy(pl_runcache *rc);

/* The entry of run_id, loaded on first use (PL_ENOTFOUND: no such run).
 * Valid until the next call. */
pl_status pl_runcache_get(pl_runcache *rc, pl_store *store, long long run_id,
                          pl_run_entry **out, pl_err *err);

#endif
