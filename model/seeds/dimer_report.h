/* model/seeds/dimer_report.h - the dimer report: seed 002's maps checked
 * statement by statement.
 *
 * pl_dimer_report_write() runs figure 11's sweep (dimer_maps.h), the
 * paper's single runs (figures 12, 13, 15-20) and the basin maps around
 * the starts that land in another mode than the paper's, and writes into
 * a folder: index.html (every statement with holds / does not hold /
 * not checked and its page), a page per figure (fig11.html, fig12.html, ...,
 * basin-NAME.html), the figures (PLplot: SVG, the maps PNG) and the
 * numbers as CSV.  The pages open from disk (no network).  Basin maps
 * are stored as basin-NAME.csv with a first line naming every parameter:
 * a later report with the same parameters reads them instead of
 * computing them again.
 */
#ifndef PL_MODEL_DIMER_REPORT_H
#define PL_MODEL_DIMER_REPORT_H

#include "core/error.h"
#include "model/seeds/dimer_maps.h"

#include <signal.h>
#include <stddef.h>

/* Progress: stage names what runs ("figure 11", "basin fig13", ...). */
typedef void (*pl_dimer_report_progress)(const char *stage, size_t done,
                                         size_t total, void *ctx);

typedef struct {
    int threads;                        /* <= 0: the machine's CPUs */
    const pl_dimer_fig11_spec *fig11;   /* NULL: the paper's (3120 runs) */
    size_t basin_n;                     /* starts a side of a basin map
                                           (201); 0: no maps */
    size_t variant_n;                   /* a side of the maps of the open
                                           choices (51: every 4th start of
                                           a 201 map); 0: none */
    pl_dimer_report_progress progress;
    void *ctx;
    /* NULL: every batch on threads (pl_dimer_batch); else each batch of
     * figure 11 and the maps by batch(runner, ..., threads, ...), e.g.
     * over MPI ranks */
    pl_dimer_batch_fn batch;
    void *runner;
    /* set (by a SIGINT or SIGTERM handler) to stop the report: the batch
     * running stops taking simulations (on threads; over MPI it runs to
     * its end), and the report writes what it has.  NULL: never */
    volatile sig_atomic_t *stop;
} pl_dimer_report_opts;

typedef struct {
    int statements;                     /* statements in the report */
    int holding;                        /* of which hold */
    int failing;                        /* do not hold */
    int unchecked;                      /* not checked: the sweep lacks
                                           what they need (--quick) */
    int not_run;                        /* not run: interrupted */
    int interrupted;                    /* 1: *stop was set */
    int pages;                          /* HTML pages written */
    int maps;                           /* basin maps in the report */
    double fig11_seconds;               /* wall time of figure 11's sweep */
    double cases_seconds;               /* of the paper's runs */
    double maps_seconds;                /* of the maps (computed, read, drawn) */
    size_t runs;                        /* simulations run (figure 11, the
                                           paper's runs, the maps' starts) */
    int maps_read;                      /* of the maps and variants, read
                                           from DIR instead of run */
    int threads;                        /* threads a batch ran on (0: the
                                           batches ran elsewhere) */
} pl_dimer_report_stats;

/* Writes the report into dir (created if missing).  PL_EIO names a file
 * that cannot be written.  Interrupted (o->stop set), it writes
 * index.html with the sections done and the rest marked "not run:
 * interrupted", stores no half-run basin map, and returns PL_ESTATE with
 * stats filled. */
pl_status pl_dimer_report_write(const char *dir, const pl_dimer_report_opts *o,
                                pl_dimer_report_stats *stats, pl_err *err);

#endif
