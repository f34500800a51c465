/* db/select.h - the runs a command works on: RUN ids, --experiment E or
 * --all, exactly one of them, in the store named by --db (prismlab
 * process, prismlab validate).
 *
 * The command puts PL_OPT_RUN_SELECTION() in its option table and passes
 * its positional arguments, the ids, to pl_run_selection_open(), which
 * checks the choice, opens the store and lists the runs.
 */
#ifndef PL_DB_SELECT_H
#define PL_DB_SELECT_H

#include "core/cli.h"
#include "db/store.h"

#include <stddef.h>

typedef struct {
    /* what the options give */
    const char *experiment;   /* --experiment E; NULL when not given */
    int all;                  /* --all */
    const char *db;           /* --db FILE; NULL: pl_cli_db_path()'s default */
    /* what pl_run_selection_open() fills */
    pl_store *store;
    long long *ids;           /* oldest first, or as given */
    size_t n;
} pl_run_selection;

/* The option table's rows for --experiment E, --all and --db FILE. */
#define PL_OPT_RUN_SELECTION(sel)                                           \
    PL_OPT_STRING("experiment", &(sel)->experiment, "E",                   \
                  "every run of experiment E"),                            \
    PL_OPT_FLAG("all", &(sel)->all, "every run"),                          \
    PL_OPT_DB(&(sel)->db)

/* Checks that exactly one of the ids args[0..nargs-1], --experiment and
 * --all is given (PL_EINVAL "give RUN ids, --experiment E or --all (one of
 * them)" before anything is opened), opens the existing store and lists
 * the runs: the ids as given, else the experiment's or every run, oldest
 * first (pl_run_select()).  On failure nothing is left open. */
pl_status pl_run_selection_open(pl_run_selection *sel, char *const *args,
                                int nargs, pl_err *err);

/* Closes the store and leaves its path in *path (the caller frees it):
 * before the fork of --jobs's workers (core/jobs.h), which open their
 * own, so that none inherits SQLite's state of this connection.  The ids
 * stay.  PL_ENOMEM (the store closed all the same). */
pl_status pl_run_selection_detach(pl_run_selection *sel, char **path, pl_err *err);

/* Closes the store and frees the ids; safe after a failed open. */
void pl_run_selection_close(pl_run_selection *sel);

#endif
