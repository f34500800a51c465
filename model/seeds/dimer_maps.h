/* model/seeds/dimer_maps.h - many dimer simulations at once: seed 002's
 * figure 11 (the scaled drift against the aspect ratio at three
 * frequencies, over a set of starts) and basin maps (the persistent mode
 * reached from a grid of starts around one).
 *
 * The simulations run on worker threads (one simulation a task; each
 * reads only its own parameters and writes only its own result), so the
 * results do not depend on the number of threads.  docs/dimer.md says
 * what each map shows and where the paper's modes live.
 */
#ifndef PL_MODEL_DIMER_MAPS_H
#define PL_MODEL_DIMER_MAPS_H

#include "core/error.h"
#include "model/seeds/dimer.h"

#include <stddef.h>

/* Called from the calling thread with the simulations done: 0 at the
 * start, then about ten times a second, total at the end (not when
 * stopped).  Returns non-zero to stop the batch (an interrupted report):
 * the simulations not yet started are not run. */
typedef int (*pl_dimer_progress)(size_t done, size_t total, void *ctx);

enum { PL_DIMER_MAX_THREADS = 256 };

/* The workers a batch asked for threads runs on: threads itself (at most
 * PL_DIMER_MAX_THREADS), or when threads <= 0 the CPUs online
 * (sysconf(_SC_NPROCESSORS_ONLN)). */
int pl_dimer_threads(int threads);

/* Runs the n simulations ps on threads workers (<= 0: the CPUs online).
 * res[i] receives simulation i's result and ok[i] 1, or ok[i] 0 and
 * res[i] zeroed when the model refused it (a Painleve configuration):
 * that is a result, not an error.  PL_ENOMEM or PL_EIO (a thread could not
 * start) are errors; PL_ESTATE: progress asked to stop, the results are
 * incomplete. */
pl_status pl_dimer_batch(const pl_dimer_params *ps, size_t n, int threads,
                         pl_dimer_result *res, int *ok,
                         pl_dimer_progress progress, void *ctx, pl_err *err);

/* Another way to run a batch, with pl_dimer_batch()'s contract and
 * arguments (what threads means is the runner's business): the report's
 * batches over the ranks of an MPI job (prismlab_dimer_mpi.c). */
typedef pl_status (*pl_dimer_batch_fn)(void *runner, const pl_dimer_params *ps, size_t n,
                                       int threads, pl_dimer_result *res, int *ok,
                                       pl_dimer_progress progress, void *ctx, pl_err *err);

/* --- figure 11 ---------------------------------------------------------- */

typedef struct {
    pl_dimer_params base;       /* everything but f, Ar, h0, theta0, duration */
    const double *freqs;        /* Hz */
    size_t n_freqs;
    double ar_min, ar_step;     /* Ar = ar_min + k ar_step, k < n_ar */
    size_t n_ar;
    const double *h0;           /* the starts: every h0 with every theta0, m */
    size_t n_h0;
    const double *theta0;       /* rad */
    size_t n_theta0;
    double cycles;              /* plate cycles simulated (the drift: the last ten) */
} pl_dimer_fig11_spec;

/* The paper's figure 11: f 25, 50, 75 Hz; Ar 2.1 to 8.5 by 0.1; Gamma 0.9,
 * e_s 0.65, mu_s 0.24, mu_c 0.12, mu_i 0.08; 16 starts, h0 0.1, 0.25, 0.5,
 * 1 mm with theta0 3, 5, 7, 9 deg (the paper's is 0.25 mm, 5 deg); 100
 * cycles. */
void pl_dimer_fig11_default(pl_dimer_fig11_spec *s);

/* One point of figure 11: a frequency and aspect ratio over the starts. */
typedef struct {
    double f, Ar;
    size_t starts;              /* simulations (ok) */
    size_t drift_starts;        /* of which reached the drift mode */
    size_t modes[PL_DIMER_NMODES];            /* how many reached each pl_dimer_mode */
    double med, q1, q3;         /* the scaled drift <u> f / g 10^2 of the
                                   drift-mode starts: median, quartiles
                                   (NAN when none) */
    double lo, hi;              /* their least and greatest */
    double med_all;             /* the median over every start */
} pl_dimer_fig11_point;

/* The number of simulations of spec. */
size_t pl_dimer_fig11_size(const pl_dimer_fig11_spec *s);

/* The parameters of simulation i (frequency slowest, then Ar, then h0,
 * then theta0). */
void pl_dimer_fig11_params(const pl_dimer_fig11_spec *s, size_t i,
                           pl_dimer_params *p);

/* Summarizes the results of the pl_dimer_fig11_size(s) simulations into
 * pts (n_freqs x n_ar, frequency slowest). */
void pl_dimer_fig11_summarize(const pl_dimer_fig11_spec *s,
                              const pl_dimer_result *res, const int *ok,
                              pl_dimer_fig11_point *pts);

/* The drift towards the bouncing end (the sphere that rises higher over
 * the last ten cycles; the right one when they tie), the sign of figure 11
 * and of section 5: the same motion mirrored, the left sphere bouncing,
 * has the same forward drift. */
double pl_dimer_drift_forward(const pl_dimer_result *r);

/* The scaled drift <u> f / g 10^2 of figure 11. */
double pl_dimer_scaled_drift(double drift, double f, double g);

/* A statement's verdict.  PL_DIMER_UNCHECKED: the sweep did not simulate
 * the frequencies and aspect ratios the statement needs (a smaller sweep,
 * as dimer-report --quick's), so it says nothing either way. */
typedef enum {
    PL_DIMER_FAILS = 0,         /* checked, does not hold */
    PL_DIMER_HOLDS = 1,         /* checked, holds */
    PL_DIMER_UNCHECKED = 2,     /* not checked */
    PL_DIMER_NOT_RUN = 3        /* not run: the report was interrupted */
} pl_dimer_verdict;

/* A statement of the paper checked against prismlab's figure. */
typedef struct {
    const char *paper;          /* the paper's words */
    const char *criterion;      /* what is measured, with its thresholds */
    char finding[1024];         /* what prismlab finds, in numbers, or
                                   what was not simulated */
    pl_dimer_verdict verdict;
} pl_dimer_statement;

enum { PL_DIMER_FIG11_STATEMENTS = 10 };

/* Checks figure 11's statements (section 5) on pts (of spec s; the
 * paper's spans 25, 50 and 75 Hz and A_r 2.1 to 8.5 by 0.1) and low, the
 * points at f 2.5 Hz (n_low of them, any A_r).  out receives
 * PL_DIMER_FIG11_STATEMENTS statements.  A statement about "each f" is
 * checked at the frequencies whose A_r range it needs s simulated, and
 * says which it left out; one that compares the frequencies, or has none
 * of its frequencies simulated, is PL_DIMER_UNCHECKED. */
void pl_dimer_fig11_check(const pl_dimer_fig11_spec *s,
                          const pl_dimer_fig11_point *pts,
                          const pl_dimer_fig11_point *low, size_t n_low,
                          pl_dimer_statement *out);

/* The point of pts (n of them) at f and Ar, or NULL. */
const pl_dimer_fig11_point *pl_dimer_fig11_at(const pl_dimer_fig11_point *pts,
                                              size_t n, double f, double Ar);

/* --- the paper's single runs ----------------------------------------------- */

/* A run of the paper from its stated start: figures 12, 13, 15-18 and 20
 * (figure 19 is figure 18 zoomed).  Every other parameter is section 5's
 * (mu_s 0.24, mu_c 0.12, mu_i 0.08). */
typedef struct {
    const char *name;           /* "fig13" */
    const char *figure;         /* "Figure 13" */
    const char *statement;      /* what the paper says it shows */
    double Ar, f, Gamma, es;
    double h0, theta0_deg;      /* m, degrees */
    pl_dimer_mode mode;         /* the paper's mode */
    int bouncer;                /* drift-like modes: the sphere that bounces
                                   (0 left, 1 right), -1 either */
    int zero_drift;             /* the paper says its mean drift is zero */
} pl_dimer_case;

/* The paper's runs; *n receives their number. */
const pl_dimer_case *pl_dimer_cases(size_t *n);

/* The parameters of case c, simulated for cycles plate cycles. */
void pl_dimer_case_params(const pl_dimer_case *c, double cycles, pl_dimer_params *p);

/* Whether result r is the paper's mode of c (its mode, bouncing sphere and
 * zero drift where the paper says so). */
int pl_dimer_case_holds(const pl_dimer_case *c, const pl_dimer_result *r);

/* What the paper's figure of case c shows against run r (from c's start),
 * part by part - the mode, the sphere that swings where the paper names
 * it, the zero drift where it says so - into st: the paper's words, the
 * criterion, the finding, and pl_dimer_case_holds' verdict.  Where the
 * other sphere swings the finding says why: each sphere's fate as a lone
 * sphere released from its height (pl_dimer_lone_sphere), the tips'
 * coupling (pl_dimer_tip_coupling) and the run from the mirror start
 * (theta0 negated, 100 cycles), simulated here.  A simulation's failure
 * is returned with its reason. */
pl_status pl_dimer_case_check(const pl_dimer_case *c, const pl_dimer_result *r,
                              pl_dimer_statement *st, pl_err *err);

/* --- basin maps ---------------------------------------------------------- */

typedef struct {
    pl_dimer_params base;       /* everything but h0 and theta0 */
    double h0_min, h0_max;      /* m */
    double th_min, th_max;      /* rad */
    size_t nh, nth;             /* grid points (ends included) */
} pl_dimer_basin_spec;

/* The map of n x n starts around case c's: h0 over 8 mm from 4 mm below
 * (0 at least), theta0 over 8 degrees from 4 below (0.5 at least); the
 * Gamma 1.4 cases (figures 16-18) share one map, h0 0-8 mm, theta0 1-13
 * deg.  2 s: 100 cycles at 50 Hz, 50 at 25 Hz (the modes settle within
 * 40). */
void pl_dimer_case_basin(const pl_dimer_case *c, size_t n, pl_dimer_basin_spec *s);

/* Start (ih, ith) of the grid into p. */
void pl_dimer_basin_params(const pl_dimer_basin_spec *s, size_t ih, size_t ith,
                           pl_dimer_params *p);

typedef struct {
    double share[PL_DIMER_NMODES];            /* of the ok starts, the share reaching
                                   each pl_dimer_mode */
    size_t failed;              /* starts the model refused */
    /* the start nearest (h0_ref, th_ref) that reaches want, in the metric
     * (dh0 / 1 mm)^2 + (dtheta / 1 deg)^2; dist NAN when none does */
    double dist, h0_near, th_near;
} pl_dimer_basin_stats;

/* The run of every start of the map (h0 slowest): modes (-1 when the
 * model refused the start), forward drifts (m/s) and energy measures. */
pl_status pl_dimer_basin_run(const pl_dimer_basin_spec *s, int threads,
                             int *modes, double *drift, double *energy,
                             pl_dimer_progress progress, void *ctx, pl_err *err);

/* pl_dimer_basin_run() with its batch run by fn(runner, ..., threads, ...)
 * instead of pl_dimer_batch(); fn NULL: pl_dimer_batch(). */
pl_status pl_dimer_basin_run_on(const pl_dimer_basin_spec *s, pl_dimer_batch_fn fn,
                                void *runner, int threads, int *modes, double *drift,
                                double *energy, pl_dimer_progress progress, void *ctx,
                                pl_err *err);

/* Whether the map s2 is every k-th start of the map s (the same base,
 * ends and (nh - 1) = k (nh2 - 1) on both axes): its starts are then the
 * same numbers, bit for bit (i / (n2 - 1) and k i / (n - 1) round to the
 * same double), so its modes can be read off s's.  *k receives the step. */
int pl_dimer_basin_is_subgrid(const pl_dimer_basin_spec *s, const pl_dimer_basin_spec *s2,
                              size_t *k);

/* The first line of a map's file: every parameter the map depends on, so
 * that a stored map is reused only for the same map. */
void pl_dimer_basin_key(const pl_dimer_basin_spec *s, const char *name,
                        char *buf, size_t size);

/* Writes the map to path (the key line, a header, a row a start: h0 in
 * mm, theta0 in degrees, mode name, drift in mm/s, energy), whole or not
 * at all. */
pl_status pl_dimer_basin_save(const char *path, const char *key,
                              const pl_dimer_basin_spec *s, const int *modes,
                              const double *drift, const double *energy,
                              pl_err *err);

/* Reads a map written by pl_dimer_basin_save.  Returns PL_ENOTFOUND when
 * there is no file or its key differs (the map is to be computed),
 * PL_EFORMAT naming the line when it is damaged. */
pl_status pl_dimer_basin_load(const char *path, const char *key,
                              const pl_dimer_basin_spec *s, int *modes,
                              double *drift, double *energy, pl_err *err);

/* The statistics of a map of modes (nh x nth, h0 slowest; -1: failed). */
void pl_dimer_basin_summarize(const pl_dimer_basin_spec *s, const int *modes,
                              double h0_ref, double th_ref, pl_dimer_mode want,
                              pl_dimer_basin_stats *st);

#endif
