/* process/process_private.h - what process.c (the phases), process_store.c
 * (the stored run, read and written) and process_long.c (a long run in
 * segments) share.  Internal to them; process/process.h is the
 * interface. */
#ifndef PL_PROCESS_PRIVATE_H
#define PL_PROCESS_PRIVATE_H

#include "db/catalog.h"
#include "db/derived.h"
#include "db/run.h"
#include "process/process.h"

#include <pthread.h>
#include <stddef.h>

/* The whole-length arrays of one processing: the two velocities and the
 * three that processing writes (omega by (4.1), theta, the front end's
 * combined omega), n doubles each. */
typedef struct {
    double *v[2], *omega, *theta, *omc;
    size_t n;
    int touched;   /* omega, theta and omc are faulted in already */
    int summary;   /* no omega or theta of its own (the caller keeps no
                      full-rate series): omega takes vp1's memory once the
                      velocities' spectra and 1 kHz series are taken
                      (velocities_out()), theta omega's once omega is
                      filtered and written */
} run_arrays;

/* A long run's segment (pl_proc_long()): its splice (frontend.h), and
 * the first segment's lead-in and release, which a later one keeps (its
 * own would be found where the spliced motion jumps in), or (the first)
 * receives, with the length of its window's warnings. */
typedef struct {
    pl_frontend_splice fs;
    size_t lead, quiet, release;
    size_t window_warned;
} seg_io;

/* The raw velocities' extremes over every PL_DERIVED_RAW_BUCKET frames
 * (db/derived.h), stored for viewers; taken before processing touches
 * the samples (despiking and bridging work in place). */
typedef struct {
    size_t n;             /* buckets */
    double *v;            /* 4 n: vp1 min, vp1 max, vp2 min, vp2 max */
} raw_extremes;

/* The run's derived data goes into the store in two parts of one
 * transaction (db/derived.h's writer): first omega and the velocities,
 * final once omega is filtered (the impact search reads the combined
 * omega and writes theta only); then theta, L_p, the spectra, the record
 * and the impacts.  With a thread to spare the first part is written on
 * one of its own while this one searches for the impacts (a ten-minute
 * run's 14 MB of its 28), at the price of the store's write lock held
 * through the search (0.25 s more on that run; other writers wait for
 * it, up to the busy timeout).
 * The series are at 1 kHz: every 10th sample of the filtered series,
 * enough for every plot and for matching, a tenth of the bytes (the
 * full-rate series are recomputed exactly from the raw chunks and the
 * stored parameters, since processing is deterministic). */
typedef struct writer {
    pl_store *store;
    long long run_id;
    const pl_process_result *r;
    size_t nd;                 /* samples of a series at 1 kHz */
    double *dec;               /* 3 * nd: omega, vp1, vp2 */
    int velocities_in;         /* vp1 and vp2 are in dec already */
    pl_derived_writer *w;
    int first_done;            /* the first part is in the transaction */
    pl_status st;
    pl_err err;
    pthread_t tid;
    int running;
} writer;

/* The recording's gaps bridged in r (the lattice across each). */
pl_status pl_proc_bridge_gaps(pl_process_result *r, const pl_run_gap *gaps, size_t n_gaps,
        const double *omc, int N, pl_err *err);

/* The decoder delay c takes from the channels; where it came from. */
const char *pl_proc_decoder_delay(pl_process_config *c, const pl_channel ch[2]);

/* The raw velocities' extremes for the stored series. */
pl_status pl_proc_raw_extremes_of(double *const v[2], size_t n, raw_extremes *rx,
        pl_err *err);

/* A run's description, channels, prism and gaps. */
pl_status pl_proc_read_meta(pl_store *store, long long run_id, pl_run_info *info,
        pl_channel ch[2], pl_prism *prism, pl_run_gap **gaps,
        size_t *n_gaps, pl_err *err);

/* A run's two velocities, whole, from the store's chunks. */
pl_status pl_proc_read_velocities(pl_store *store, long long run_id, const pl_run_info *info,
        const pl_channel ch[2], int threads, int summary,
        run_arrays *a, pl_err *err);

/* The result's second part, then the transaction's commit. */
pl_status pl_proc_write_rest(writer *wr, const pl_process_config *cfg, int N,
        const pl_channel ch[2], const raw_extremes *rx, double *scratch,
        pl_err *err);

/* The writer rolled back (it reads r's arrays: done with them first). */
void pl_proc_writer_abort(writer *wr);

/* The result's first part begins, on a thread of its own when threads
 * allows. */
void pl_proc_writer_start(writer *wr, const pl_process_result *r, int threads);

/* Room for the 1 kHz series the writer keeps; NULL when out of memory. */
double *pl_proc_writer_velocities(writer *wr, size_t n);

/* The processing record of r, as stored. */
void pl_proc_make_record(long long run_id, const pl_process_config *cfg,
        const pl_process_result *r, int N, const pl_channel ch[2],
        pl_processing *rec);

/* A series to store, as db/derived.h takes it. */
pl_series pl_proc_series(const char *name, const char *unit, int dec,
        double t0, double rate, size_t n, const double *v);

/* The whole-length arrays of one processing (n doubles each; a summary
 * keeps no omega or theta of its own); -1 when out of memory. */
int pl_proc_arrays_alloc(run_arrays *a, size_t n, int summary);

/* Frees what pl_proc_arrays_alloc() took. */
void pl_proc_arrays_free(run_arrays *a);

/* Every k-th of full into out[0..nd) (the 1 kHz series). */
void pl_proc_decimate(const double *full, size_t nd, double k, double *out);

/* A fault of r's data (db/quality.h's text), with its warning. */
void pl_proc_fault(pl_process_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* r's totals from its impacts: counts, the ratio's mean and spread. */
void pl_proc_summarise(pl_process_result *r);

/* A warning of r's, one line. */
void pl_proc_warn(pl_process_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* r's quality word from its faults: good, degraded or suspect. */
void pl_proc_assess_quality(pl_process_result *r);

/* The impacts counted against L_p's whole slots (N edges). */
void pl_proc_check_count(pl_process_result *r, int N);

/* The processing proper on a run's arrays (see its definition). */
pl_status pl_proc_process_owned(run_arrays *a, const double *src1, const double *src2,
        double rate, double h1, double h2, int N,
        const pl_process_config *cfg,
        pl_process_result *r, writer *wr,
        seg_io *io, pl_err *err);

/* Each impact's ratio error scaled by the run's own scatter; -1 when
 * out of memory. */
int pl_proc_scale_ratio_errors(pl_process_result *r);

/* A long run in segments (process_long.c); *whole set when it must go
 * the whole path instead, why saying so. */
pl_status pl_proc_long(pl_store *store, long long run_id, const pl_run_info *info,
        const pl_channel ch[2], int N, const pl_process_config *c,
        const char *delay_from, pl_process_result *out, int *whole,
        char *why, size_t why_n, pl_err *err);

#endif
