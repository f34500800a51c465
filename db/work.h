/* db/work.h - which run a command is working on now (table run_work of
 * schemas/012_run_work.sql), so that what a person reads about a run
 * (run show, the run page) says "being validated" rather than telling
 * them to do by hand what is already under way.
 *
 * A mark is advice, not a lock: two commands may work on one run (the
 * last mark stands), and a mark left by a command that died is stale:
 * its process is gone from its host, and pl_work_get() does not return
 * it.
 */
#ifndef PL_DB_WORK_H
#define PL_DB_WORK_H

#include "core/error.h"
#include "db/store.h"

typedef enum { PL_WORK_PROCESSING, PL_WORK_VALIDATING } pl_work_step;

typedef struct {
    pl_work_step step;
    long long pid;
    char host[64];
    char started_utc[32];
} pl_work;

/* Marks run_id as being worked on by this process, now (replacing any
 * mark).  Its own statement, outside any transaction the caller holds. */
pl_status pl_work_begin(pl_store *store, long long run_id, pl_work_step step,
                        pl_err *err);

/* Removes this process's mark of run_id (another process's stays). */
pl_status pl_work_end(pl_store *store, long long run_id, pl_err *err);

/* The live mark of run_id into *w; PL_ENOTFOUND when there is none or
 * its process is gone (a mark from another host is taken as live). */
pl_status pl_work_get(pl_store *store, long long run_id, pl_work *w, pl_err *err);

/* A mark in words into buf (n bytes): "being validated now (process 4711
 * on lab-pc, since 2026-11-29T10:31:02Z)". */
void pl_work_words(const pl_work *w, char *buf, size_t n);

/* When run_id is under way, its words into buf (n bytes): "being
 * validated now (process 4711 on lab-pc, since 2026-11-29T10:31:02Z)"; returns 1 then, 0 (buf "") when not or when the store cannot
 * tell (a store from before schema 12). */
int pl_work_describe(pl_store *store, long long run_id, char *buf, size_t n);

/* "processing", "validating". */
const char *pl_work_step_name(pl_work_step step);

#endif
