/* model/validate/report.h - the validation report of an experiment: what the lab
 * publishes, read like seed 000's section 5.
 *
 * pl_report_write() reads the experiment's runs, their processing and
 * validations from the store and writes into a folder: index.html (opens
 * from disk, no network: figures are SVG files beside it), summary.md,
 * metrics.csv and the figures (core/plot.h).  docs/validation.md describes
 * every table column and figure.
 */
#ifndef PL_MODEL_REPORT_H
#define PL_MODEL_REPORT_H

#include "core/error.h"
#include "db/store.h"

#include <stddef.h>

typedef struct {
    int runs;                 /* runs in the report */
    int validated;            /* runs with a fitted line-law validation */
    int figures;              /* SVG files written */
} pl_report_stats;

/* Writes the report of experiment into dir (created if missing; files of
 * an earlier report are replaced).  PL_ENOTFOUND when the experiment does
 * not exist or has no runs. */
pl_status pl_report_write(pl_store *store, const char *experiment,
                          const char *dir, pl_report_stats *stats,
                          pl_err *err);

/* pl_report_write() with the figures drawn by jobs worker processes
 * (core/jobs.h; 1: in this one, as pl_report_write()).  It forks: not
 * from a process with threads of its own (the web server draws with 1). */
pl_status pl_report_write_jobs(pl_store *store, const char *experiment,
                               const char *dir, int jobs, pl_report_stats *stats,
                               pl_err *err);

#endif
