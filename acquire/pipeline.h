/* acquire/pipeline.h - the daemon's after-run pipeline: each run it stored
 * processed and validated as soon as it stops ([pipeline] after_run).
 *
 * Each step is a child process running the same program a person would:
 * libexec/prismlab/prismlab-process RUN --db DB, then prismlab-validate
 * RUN --db DB (validate's defaults: both laws, lambda0 and t0 fitted,
 * starting from the run's recorded lambda0 when it has one; the recorded
 * lambda0 compared as well).  A child, not a thread: a crash, a leak or a
 * hang in processing stays out of the process that owns the rig and its
 * recording, and the steps are exactly the commands' code.  A step dies
 * with the daemon (PR_SET_PDEATHSIG): killed, the daemon leaves no child
 * finishing work that nobody follows up.  The programs
 * are found beside the daemon's own (the folder of /proc/self/exe).
 *
 * Nothing here waits: the daemon calls pl_pipeline_poll() on every pass of
 * its loop; a run that stops while another is in the pipeline waits in a
 * queue.  A failed step is logged with the child's last line and ends that
 * run's pipeline; the run itself stays stored as it was.
 */
#ifndef PL_ACQUIRE_PIPELINE_H
#define PL_ACQUIRE_PIPELINE_H

#include "core/error.h"

#include <stddef.h>

typedef struct pl_pipeline pl_pipeline;

/* A pipeline running steps (PL_AFTER_* of rigconf.h) on database db, with
 * one line per event to log(log_ctx, line).  PL_ENOTFOUND naming the
 * program when a step's program is not beside this one. */
pl_status pl_pipeline_create(pl_pipeline **out, const char *db, unsigned steps,
                             void (*log)(void *ctx, const char *line),
                             void *log_ctx, pl_err *err);

/* The parameters validate fits (--fit's list, "lambda0,t0,beta"); ""
 * or NULL: validate's own default.  PL_EINVAL when too long. */
pl_status pl_pipeline_set_fit(pl_pipeline *p, const char *fit, pl_err *err);

/* Lets the step in progress finish (it is the commands' own work and
 * takes seconds), logs the runs still queued as left for a person, and
 * frees p.  NULL is accepted. */
void pl_pipeline_destroy(pl_pipeline *p);

/* Queues run for the pipeline (it stopped now).  PL_ESTATE when the queue
 * is full: the run is stored, only not processed; the caller logs it. */
pl_status pl_pipeline_add(pl_pipeline *p, long long run, pl_err *err);

/* Queues run as pl_pipeline_add does, from its validation when
 * validate_only (a run processed already: the daemon takes up a run
 * that an earlier daemon left unfinished). */
pl_status pl_pipeline_add_from(pl_pipeline *p, long long run, int validate_only,
                               pl_err *err);

/* fn(ctx, run, how) is called as each run's pipeline ends, how as in
 * pipeline_last below ("done", "process-failed", "validate-failed",
 * "validate-partial", "stopped"), so that the caller can store it. */
void pl_pipeline_set_on_end(pl_pipeline *p,
                            void (*fn)(void *ctx, long long run, const char *how),
                            void *ctx);

/* Reaps a finished step, logs the child's output, starts the next step or
 * run; never blocks. */
void pl_pipeline_poll(pl_pipeline *p);

/* The descriptor to wake on while a step runs (its output; it closes when
 * the step ends), or -1. */
int pl_pipeline_fd(const pl_pipeline *p);

/* What the pipeline does and how its last run ended, as space-separated
 * key=value words for the daemon's status line:
 *   pipeline=idle | process:RUN | validate:RUN (queued=N when runs wait)
 *   pipeline_last=RUN:done | RUN:STEP-failed | RUN:validate-partial (a
 *                     law's result stored, another's fit failed) |
 *                     RUN:stopped (by the daemon's end) | -1 (none yet)
 *   verdict_run=RUN   the last run whose validation is stored (whole or
 *                     partial), or -1
 *   pipeline_s=S      seconds from its stop to its last step's end */
void pl_pipeline_describe(const pl_pipeline *p, char *buf, size_t size);

#endif
