/* core/jobs.h - `--jobs N`: a command's runs in parallel worker processes,
 * committed and printed in the serial order (docs/layout.md, "Parallel
 * commands").
 *
 * pl_jobs_run() forks jobs worker processes, each of which takes tasks
 * (runs) one after the other, the next as it finishes one.  A worker
 * computes on its own (opening its own store: an SQLite connection must
 * not cross a fork) and waits for its turn before it writes: task k's
 * turn comes once tasks 0 .. k-1 have ended, so the store sees one
 * writer at a time, in the serial order, and row ids come out as a
 * serial run gives them.  What a task prints on stdout and stderr is
 * captured and sent to the parent with its exit status; the parent hands
 * it to emit() in task order, so the output is the serial output.  A
 * worker that dies (a signal) loses its own task only: emit() hears of
 * it, the next task gets its turn, and a new worker takes its place.
 *
 * Processes, not threads: PLplot keeps global state, and a pl_store is
 * one thread's.  Workers that live through many tasks, not a fork a
 * task: a fresh process faults in its heap and opens its caches anew,
 * which on the fixtures' 50 ms runs doubled the CPU time.  Memory: jobs
 * times one run's.
 */
#ifndef PL_CORE_JOBS_H
#define PL_CORE_JOBS_H

#include "core/error.h"

#include <stddef.h>

/* A worker's side of the turn (opaque; valid in the worker only). */
typedef struct pl_jobs_turn pl_jobs_turn;

/* Waits until this worker may write (tasks before it have ended); at
 * once after the first call.  PL_EIO when the parent went away.  Its
 * shape is db/store.h's gate's: pl_store_set_gate(store, pl_jobs_gate,
 * turn). */
pl_status pl_jobs_gate(void *turn, pl_err *err);

/* Task k, in a worker process: returns its exit status (0-125), which
 * emit() receives.  What it prints on stdout and stderr is captured. */
typedef int (*pl_jobs_work_fn)(void *ctx, size_t k, pl_jobs_turn *turn);

/* What one task left: its exit status, or the signal that killed it,
 * and what it printed (NUL-terminated). */
typedef struct {
    int code;            /* work's return; -1 when the worker ended first */
    int signal;          /* then the signal that ended it (0: none), */
    int status;          /* or its exit status */
    const char *out, *errout;  /* its stdout and stderr */
    size_t out_len, err_len;
} pl_jobs_result;

/* What a command says of a task whose worker ended without its answer:
 * "the worker died (signal 11)", "the worker ended without a result
 * (exit status 1)" (an abort, a sanitizer); NULL when it answered. */
const char *pl_jobs_death(const pl_jobs_result *r, char *buf, size_t size);

/* In the parent, once a task, in task order.  Nonzero stops the work
 * there, as a serial loop that stops at its first failure: the later
 * tasks are not emitted, and their workers are ended before their turn,
 * so they write nothing. */
typedef int (*pl_jobs_emit_fn)(void *ctx, size_t k, const pl_jobs_result *r);

/* Runs tasks 0 .. n-1 in at most jobs workers (see the file comment),
 * calling emit() for each in order; a terminal gets progress with an
 * ETA under label (NULL: none).  Errors are the pool's own (no worker could be
 * started): a task's failure is its exit status. */
pl_status pl_jobs_run(size_t n, int jobs, const char *label, pl_jobs_work_fn work,
                      pl_jobs_emit_fn emit, void *ctx, pl_err *err);

/* The CPUs online (at least 1): --jobs's default. */
int pl_jobs_cpus(void);

/* Writes a task's output to stdout and stderr (stdout first).  A JSON
 * array's objects (json set) are joined across tasks: a worker prints
 * its part as an array "[{...},\n {...}" without the ']'; *n_json counts
 * the tasks that printed so far, so that the first opens the array. */
void pl_jobs_print(const pl_jobs_result *r, int json, size_t *n_json);

#endif
