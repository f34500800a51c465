/* model/sweep/engine_private.h - the hand-out, the finished queue and the
 * writer, shared by engine.c (threads on one machine) and engine_mpi.c
 * (ranks of an MPI job); no other file includes it.
 *
 * Why two files: engine_mpi.c is the only file that includes mpi.h, and
 * only the program prismlab-sweep-mpi links it, so that no other command
 * loads Open MPI's libraries (docs/layout.md, "Start-up").
 *
 * Threading: the shared state's fields are guarded by its mutex mu, except
 * spec, todo and ntodo, fixed before any worker starts; functions marked
 * "mu held" expect the caller to hold it.
 */
#ifndef PL_MODEL_SWEEP_ENGINE_PRIVATE_H
#define PL_MODEL_SWEEP_ENGINE_PRIVATE_H

#include "core/error.h"
#include "db/store.h"
#include "db/sweep.h"
#include "model/sweep/engine.h"
#include "model/sweep/spec.h"

#include <pthread.h>
#include <stddef.h>

/* The largest chunk, in points. */
enum { PL_SWEEP_MAX_CHUNK = 128 };

/* Batches of at least PL_SWEEP_BATCH_S of results: one transaction per
 * point would cost the writer more than the cheapest points cost to
 * compute, and a kill loses at most this much of finished work besides
 * the points in flight. */
#define PL_SWEEP_BATCH_S 0.02

/* CLOCK_MONOTONIC in seconds. */
double pl_sweep_now_s(void);

/* One finished point, in the queue to the writer. */
typedef struct pl_sweep_item {
    struct pl_sweep_item *next;
    long long idx;
    int ok;
    double cost_s;
    char *params, *result;
    double *series;
    size_t series_n;
} pl_sweep_item;

/* Frees an item (NULL: no-op). */
void pl_sweep_item_free(pl_sweep_item *it);

/* The shared state: hand-out and finished queue. */
typedef struct {
    const pl_sweep_spec *spec;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long long *todo;          /* indices without a row, ascending */
    long long ntodo, next;    /* handed out: todo[0 .. next-1] */
    int workers;              /* all workers, threads and ranks */
    long long chunks;
    double cost_sum;          /* model time of the points seen so far */
    long long cost_n;
    pl_sweep_item *head, **tail;   /* finished, not yet stored */
    double min_cost;          /* the cheapest point so far */
    int running;              /* local threads still running */
    pl_err err;               /* the first failure of a worker thread */
    int failed;
    double sched_s;
} pl_sweep_shared;

/* Sets sh up for spec and workers (threads and ranks); 0 when a mutex
 * or condition cannot be made. */
int pl_sweep_shared_init(pl_sweep_shared *sh, const pl_sweep_spec *spec, int workers);

/* Frees the queue, todo, the mutex and the condition. */
void pl_sweep_shared_destroy(pl_sweep_shared *sh);

/* The next chunk: a share of what is left (guided self-scheduling), at
 * most about 0.2 s of work at the mean cost so far (one point until a
 * cost is known) and at most PL_SWEEP_MAX_CHUNK points, so that a kill
 * loses little; its first index into todo in *first, 0 when nothing is
 * left.  mu held. */
long long pl_sweep_take_chunk(pl_sweep_shared *sh, long long *first);

/* Appends a finished point to the queue and counts its cost.  mu held. */
void pl_sweep_push_locked(pl_sweep_shared *sh, pl_sweep_item *it);

/* Takes the whole finished queue.  mu held. */
pl_sweep_item *pl_sweep_take_queue(pl_sweep_shared *sh);

/* Starts n worker threads computing chunks into the queue; on a failure
 * joins those started and names the thread. */
pl_status pl_sweep_start_threads(pl_sweep_shared *sh, pthread_t *th, int n, pl_err *err);

/* The one writer. */
typedef struct {
    pl_store *store;
    long long sweep_id, session_id;
    const pl_sweep_opts *opts;
    pl_sweep_stats *stats;
    double t0;
    pl_sweep_point *batch;
    size_t batch_cap;
    double last_put;          /* when the last batch was stored */
} pl_sweep_writer;

/* Opens the store, creates or checks the sweep, lists the missing points
 * into sh->todo and starts a session (mode "local" or "mpi"). */
pl_status pl_sweep_writer_open(pl_sweep_writer *w, pl_sweep_shared *sh, const char *db_path,
                               int workers, const char *mode, pl_err *err);

/* Stores a list of finished points in one transaction and frees them. */
pl_status pl_sweep_writer_put(pl_sweep_writer *w, pl_sweep_item *list, long long handed,
                              pl_err *err);

/* Ends the session when finished, closes the store. */
void pl_sweep_writer_close(pl_sweep_writer *w, int finished);

#endif
