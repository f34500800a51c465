/* db/derived.h - what processing derives from a run: the processing
 * record, uniformly sampled series and the line impacts (tables
 * processing, series, impact of schemas/001_init.sql).
 *
 * A run's derived data is replaced as a whole: pl_derived_save() deletes
 * the previous record (its series and impacts go with it by cascade) and
 * writes the new one inside one transaction, so a reader sees either the
 * old result or the new one, never a mixture.
 *
 * The run's data-quality record (table run_quality, schema 5) goes with
 * it: saved and replaced in the same transaction, read back into
 * pl_processing.quality/faults.  A run that processing refuses has no
 * processing record but still a quality record ("refused", written by
 * pl_quality_refuse()); pl_quality_get() reads the record of any run.
 *
 * Series hold little-endian IEEE-754 doubles.  For time series sample k is
 * at t0_s + k / rate_hz; for spectra (names starting "psd_") bin k is at
 * frequency k / rate_hz, i.e. rate_hz holds 1 / bin width and t0_s = 0.
 *
 * Processing also stores, for viewers, the extremes of the raw velocities
 * (calibrated volts x beam sign x LDV scale, before any processing) over
 * every PL_DERIVED_RAW_BUCKET frames: series "vp1_raw_min", "vp1_raw_max",
 * "vp2_raw_min", "vp2_raw_max" at decimation PL_DERIVED_RAW_BUCKET, value k
 * the extreme of frames [k B, (k + 1) B) (the last bucket what is left),
 * t0_s 0, rate_hz the run's rate / B (core/extremes.h computes them).  So
 * the web view draws a whole 10-minute run from 750 kB instead of a pass
 * over its 24 MB of chunks (docs/web.md).  They go with the processing
 * record: `run set`, which may change a sign or a scale, drops them too.
 */
#ifndef PL_DB_DERIVED_H
#define PL_DB_DERIVED_H

#include "core/error.h"
#include "db/store.h"

#include <stddef.h>

/* Frames a stored raw-velocity extreme covers (above); 65536, the web
 * view's read slice, is a multiple of it. */
#define PL_DERIVED_RAW_BUCKET 256

typedef struct {
    long long run_id;
    char processed_utc[32];
    char version[64];
    char params[2048];        /* key=value lines */
    long long release_frame, end_frame;
    double release_t_s, end_t_s;
    long long n_impacts;
    double lp_end;
    double omega_last_mean;   /* rad/s, over the last second of the window */
    double ratio_mean, ratio_sd;
    double ratio_mean_se;     /* standard error of ratio_mean; NaN: unknown */
    long long n_expected;     /* impacts the lattice of L_p expects; -1: unknown */
    long long n_confirmed;    /* of them, with a step above the noise */
    char warnings[2048];      /* one per line; "" when none */
    /* The data-quality record (docs/process.md, "Faults"): one word,
     * "good" (every check passed), "degraded" (measured through a fault),
     * "suspect" (a check against the physics failed and nothing was
     * measured through it: the numbers are stored but not to be trusted)
     * or "refused", and one fault a line, each "<kind> key=value ...":
     *   beam_lost channel=C from_s=A to_s=B
     *   clipped channel=C samples=K spans=S from_s=A to_s=B
     *   common_motion level_mps=X freqs_hz=F1,F2,...
     *   hum freq_hz=F drift_hz=D drift_se_hz=S amp1_mps=X amp2_mps=Y
     *       (drift_hz, drift_se_hz absent: the drift not measured)
     *   dropouts channel=C count=K total_s=X
     *   tail_cut at_s=A
     *   refused reason="..."
     * Kinds and keys only grow; readers skip what they do not know. */
    char quality[16];
    char faults[2048];
} pl_processing;

typedef struct {
    const char *name;         /* omega, theta, Lp, vp1, vp2, psd_vp1, ... */
    const char *unit;
    int decimation;           /* 1: full rate */
    double t0_s, rate_hz;
    size_t n;
    const double *data;
} pl_series;

typedef struct {
    double t_s;               /* on the run's clock */
    double t_sd_s;            /* standard uncertainty of t_s; NaN: unknown */
    double omega_minus, omega_plus, ratio;
    double ratio_se;          /* standard error of ratio; NaN: unknown */
    double interval_s;        /* to the next impact; NaN for the last */
    int confirmed;            /* 1: step above the noise; 0: placed by the
                                 lattice of L_p; -1: unknown (older rows) */
} pl_impact;

/* The quality record of one run, processed or refused. */
typedef struct {
    long long run_id;
    char quality[16];         /* good, degraded, suspect, refused; "": processed
                                 before prismlab recorded data quality */
    char faults[2048];        /* as pl_processing.faults */
    char recorded_utc[32];    /* when it was assessed (for "": processed) */
    char version[64];         /* the prismlab that assessed it */
} pl_quality;

/* Replaces the run's derived data with rec, series[0..n_series-1] and
 * impacts[0..n_impacts-1], atomically, and its quality record with
 * rec->quality and rec->faults ("good", "degraded" or "suspect"; "" stores none, the
 * run then reads as not assessed).  PL_EINVAL for another word: a
 * refusal is pl_quality_refuse()'s. */
pl_status pl_derived_save(pl_store *store, const pl_processing *rec,
                          const pl_series *series, size_t n_series,
                          const pl_impact *impacts, size_t n_impacts,
                          pl_err *err);

/* The same in steps, for a caller that has some series before the rest
 * (processing writes the velocities and omega while it still looks for
 * the impacts):
 *   pl_derived_begin()  takes the store's write lock and drops the run's
 *                       derived data, inside a transaction;
 *   pl_derived_put()    adds a series;
 *   pl_derived_finish() adds the record, its quality and the impacts and
 *                       commits; pl_derived_abort() rolls back instead.
 * Both free the writer, whatever the outcome.  Other writers of the store
 * wait (up to its busy timeout) from begin to finish or abort, and the
 * connection is the writer's meanwhile: one thread at a time uses it,
 * which need not be the one that began. */
typedef struct pl_derived_writer pl_derived_writer;

pl_status pl_derived_begin(pl_store *store, long long run_id,
                           pl_derived_writer **out, pl_err *err);
pl_status pl_derived_put(pl_derived_writer *w, const pl_series *series,
                         pl_err *err);
pl_status pl_derived_finish(pl_derived_writer *w, const pl_processing *rec,
                            const pl_impact *impacts, size_t n_impacts,
                            pl_err *err);
void      pl_derived_abort(pl_derived_writer *w);   /* NULL: no-op */

/* A series too long to hold whole (a long run's 1 kHz series, processed
 * in segments: process/process.h): pl_derived_part_open() adds series s
 * of s->n zero values (s->data is not read), pl_derived_part_write()
 * writes values [at, at + m) of it from v, in any order, and
 * pl_derived_part_close() ends the writing (before the writer's finish or
 * abort; NULL: no-op).  The values stay the writer's transaction's. */
typedef struct pl_derived_part pl_derived_part;

pl_status pl_derived_part_open(pl_derived_writer *w, const pl_series *s,
                               pl_derived_part **out, pl_err *err);
pl_status pl_derived_part_write(pl_derived_part *p, size_t at, const double *v, size_t m,
                                pl_err *err);
void      pl_derived_part_close(pl_derived_part *p);

/* Sends what the writer has put so far to the disk (fdatasync of the
 * write-ahead log) while the transaction stays open: the commit's own
 * sync then has only the rest to wait for.  Nothing becomes visible or
 * durable as a result by this: a log without its commit is ignored. */
pl_status pl_derived_sync(pl_derived_writer *w, pl_err *err);

/* Reads the processing record with its quality and faults (quality ""
 * when the run was processed before schema 5); PL_ENOTFOUND when the run
 * is not processed. */
pl_status pl_derived_get(pl_store *store, long long run_id, pl_processing *rec,
                         pl_err *err);

/* The value of "key=" in rec's params into out[0..n) ("" when the record
 * has no such line: one written before prismlab wrote the key). */
void pl_processing_param(const pl_processing *rec, const char *key, char *out, size_t n);

/* Reads a series into a malloc'd array (*data, *n; the caller frees),
 * with its start and rate; PL_ENOTFOUND when there is none. */
pl_status pl_derived_series(pl_store *store, long long run_id,
                            const char *name, int decimation, double **data,
                            size_t *n, double *t0_s, double *rate_hz,
                            pl_err *err);

/* Reads the impacts into a malloc'd array (*out, *n; the caller frees). */
pl_status pl_derived_impacts(pl_store *store, long long run_id,
                             pl_impact **out, size_t *n, pl_err *err);

/* Records that processing refused the run, for reason (one line; a
 * newline becomes a space): quality "refused", faults the one line
 * 'refused reason="..."'.  In the same transaction it drops what an
 * earlier processing derived (processing, series, impacts, and the
 * simulations and validations matched to it), which no longer stand for
 * what processing makes of the run now.  PL_ENOTFOUND when the run does
 * not exist. */
pl_status pl_quality_refuse(pl_store *store, long long run_id,
                            const char *reason, pl_err *err);

/* Reads the quality record of run_id: a processed or refused run's, or
 * quality "" for a run processed before schema 5 (recorded_utc and
 * version then its processing's).  PL_ENOTFOUND when the run was neither
 * processed nor refused (or does not exist). */
pl_status pl_quality_get(pl_store *store, long long run_id, pl_quality *q,
                         pl_err *err);

#endif
