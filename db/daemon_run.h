/* db/daemon_run.h - the recording daemon's book of its runs (table
 * daemon_run of schemas/014_daemon_run.sql): which runs it stored, how
 * its after-run pipeline ended for each, and which of them a daemon that
 * starts must take up again (docs/acquire.md, "After a crash").
 *
 * The daemon keeps this book on a connection of its own, apart from its
 * writer's (whose thread holds transactions open while a run records),
 * and one that waits at most PL_DAEMON_RUN_BUSY_MS for another writer:
 * the daemon's loop must never stall on its bookkeeping.
 */
#ifndef PL_DB_DAEMON_RUN_H
#define PL_DB_DAEMON_RUN_H

#include "core/error.h"
#include "db/store.h"

#include <stddef.h>

/* How long a statement of the book waits for the write lock. */
#define PL_DAEMON_RUN_BUSY_MS 100

/* How many of the daemon's newest runs the start looks at. */
#define PL_DAEMON_RUN_LOOK_BACK 100

/* Opens the store at path (as pl_store_open, flags PL_STORE_*) with the
 * short busy wait above. */
pl_status pl_daemon_run_open(pl_store **out, const char *path, unsigned flags,
                             pl_err *err);

/* Enters run_id in the book (a run the daemon has begun). */
pl_status pl_daemon_run_add(pl_store *store, long long run_id, pl_err *err);

/* Stores how run_id's pipeline ended: "done", "process-failed",
 * "validate-failed" or "validate-partial" (PL_EINVAL for another word). */
pl_status pl_daemon_run_set_outcome(pl_store *store, long long run_id,
                                    const char *how, pl_err *err);

typedef struct {
    long long run_id;
    int processed;   /* 1: processed, only its validation is missing */
} pl_daemon_unfinished;

/* The daemon's runs, among its PL_DAEMON_RUN_LOOK_BACK newest, oldest
 * first, that are not being recorded, have no pipeline outcome, and lack
 * their processing (a 'refused' quality record counts as processing: it
 * is processing's answer) or, when want_validation, their validation.
 * At most cap go into out; *n receives how many there are in all.  The
 * caller leaves out those a live command works on (db/work.h). */
pl_status pl_daemon_run_unfinished(pl_store *store, int want_validation,
                                   pl_daemon_unfinished *out, size_t cap,
                                   size_t *n, pl_err *err);

/* The runs, of any recorder, left in state 'recording', oldest first: at
 * most cap into ids, how many in all into *n.  Whoever holds the
 * recorder lock knows that none of them records any more. */
pl_status pl_daemon_run_left_recording(pl_store *store, long long *ids, size_t cap,
                                       size_t *n, pl_err *err);

#endif
