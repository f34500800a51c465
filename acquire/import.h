/* acquire/import.h - stored recordings (WAV, CSV) into the store.
 *
 * An import is the same path as a live recording (source -> pump ->
 * writer), with the writer waiting instead of overrunning.  It either
 * stores the whole file as one run in state 'imported' or stores nothing:
 * the run is one transaction (an atomic writer), so a file that turns out
 * bad half-way (truncated WAV), a kill, a signal or a full disk leaves no
 * trace, and the error names the file and the frame.
 */
#ifndef PL_ACQUIRE_IMPORT_H
#define PL_ACQUIRE_IMPORT_H

#include "acquire/csv_source.h"
#include "acquire/source.h"
#include "acquire/wav_source.h"
#include "core/error.h"
#include "db/store.h"

typedef struct {
    const char *path;
    const char *format;          /* "wav", "csv"; NULL: from the extension */
    const char *prism, *ramp, *experiment;  /* NULL: the file's metadata */
    double lambda0_rad;          /* NaN: the file's metadata */
    int synthetic;               /* 1 forces the mark; 0: the file's metadata */
    int sync_full;
    int force;                   /* import even when the file's SHA-256 is stored */
    int split_releases;          /* one run per release (process/releases.h) */
    pl_source_config beams;      /* heights, signs, LDV scales; two channels */
    pl_wav_options wav;          /* a WAV's options (its path is path) */
    pl_csv_options csv;          /* a CSV's options (its path is path) */
    void (*progress)(void *ctx, long long frames, long long total);
    void *progress_ctx;
    /* What the import did that the caller should pass on (a gap in a CSV's
     * time column, imported with the gap marked: "FILE:LINE: 256 rows
     * missing at 2.400 s ..."); NULL: said to no one. */
    void (*notice)(void *ctx, const char *text);
    void *notice_ctx;
    /* With split_releases, after each cut: its run, the file's frame it
     * starts at, its frames, and stored = 1 when an earlier import holds
     * it (run_id is that run); NULL: said to no one. */
    void (*each_run)(void *ctx, long long run_id, long long first_frame,
                     long long frames, int stored);
    void *each_run_ctx;
    /* Waited for before the first write (the shape of db/store.h's gate):
     * --jobs's turn to write (core/jobs.h), so that run ids come in the
     * manifest's order; NULL: none. */
    pl_store_gate_fn gate;
    void *gate_ctx;
} pl_import_options;

/* Fills opt with defaults ("from the file" everywhere). */
void pl_import_options_init(pl_import_options *opt);

/* Imports one file into the database at db_path (created if missing);
 * *run_id receives the new run.  With opt->split_releases the file
 * becomes one run per release, each with its lead-in and tail and its
 * place in the file (docs/acquire.md, "One run per release"): each cut is
 * told to opt->each_run, the runs together to opt->notice ("FILE: split
 * into 20 runs: 3..22"); *run_id receives the last, *frames their sum.  A
 * file with no release is PL_EFORMAT naming it.  Each cut is its own
 * transaction: cuts stored already (an import cut short) are passed over,
 * and all of them stored is PL_EEXIST, unless opt->force.  A rate below what an LDV run needs
 * (1 kHz: docs/acquire.md, "The sample rate") is PL_EINVAL naming the
 * rate, where it came from and the likely mistake.  Frames a CSV's time
 * column skipped are stored as a gap (db/run.h) and named to
 * opt->notice.  The experiment is created when it does
 * not exist; the prism and ramp must be in the catalogue.  A file already
 * stored (same SHA-256) is PL_EEXIST naming its run, unless opt->force. */
pl_status pl_import_file(const char *db_path, const pl_import_options *opt,
                         long long *run_id, long long *frames, pl_err *err);

/* Imports every file a manifest lists (columns in docs/acquire.md; paths
 * relative to the manifest's folder).  A file already stored (same
 * SHA-256) is passed over unless force, so a manifest cut short is resumed
 * by running it again; force imports every file again.  Stops at the first
 * bad row or file with its FILE:LINE; runs imported before it stay.
 * *count receives the runs imported.  each(ctx, row, n_rows, run_id, path,
 * stored) is called after each file when not NULL; stored = 1 says the file
 * was passed over as run_id.  notice(notice_ctx, text), when not NULL,
 * receives each file's notices (pl_import_options.notice). */
pl_status pl_import_manifest(const char *db_path, const char *manifest,
                             int sync_full, int force,
                             void (*each)(void *ctx, int row, int rows,
                                          long long run_id, const char *path,
                                          int stored),
                             void *ctx, void (*notice)(void *ctx, const char *text),
                             void *notice_ctx, int *count, pl_err *err);

/* A manifest read, for its rows one at a time (import --manifest
 * --jobs: one worker a row).  pl_import_manifest() is these in a loop. */
typedef struct pl_manifest pl_manifest;

/* Reads and checks the manifest (its columns, the file column); the
 * handle keeps manifest, which must outlive it. */
pl_status pl_manifest_open(pl_manifest **out, const char *manifest, int sync_full,
                           int force, pl_err *err);

/* Frees the handle; NULL is a no-op. */
void pl_manifest_close(pl_manifest *m);

/* The manifest's file name, as given to pl_manifest_open(). */
const char *pl_manifest_path(const pl_manifest *m);

/* The manifest's rows (files). */
int pl_manifest_rows(const pl_manifest *m);

/* Imports row r as pl_import_manifest() does, with how's notice, gate and
 * each_run; *stored = 1 when the file was passed over as *run_id (stored
 * already); *split = 1 when the row splits its file (split_releases):
 * then each cut went to how->each_run, and *run_id and *stored say
 * nothing.  path (path_size bytes) receives the file's path before the
 * import begins (each_run may read it).  An error names the manifest's
 * FILE:LINE. */
pl_status pl_manifest_import(const pl_manifest *m, int r, const char *db_path,
                             const pl_import_options *how, long long *run_id,
                             int *stored, int *split, char *path, size_t path_size,
                             pl_err *err);
#endif
