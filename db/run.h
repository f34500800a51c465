/* db/run.h - runs, their channels and their raw sample chunks.
 *
 * A run's samples are stored frame-interleaved (one sample per channel per
 * frame) in chunk BLOBs, each with its first frame, frame count and the
 * CRC-32 of its bytes.  Samples keep the source's format and byte order;
 * nothing is converted on the way in, so an export gives back exactly what
 * came in.  Calibration (raw code -> volts) is stored per channel.
 */
#ifndef PL_DB_RUN_H
#define PL_DB_RUN_H

#include "core/error.h"
#include "core/sample.h"
#include "db/store.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    PL_RUN_RECORDING, PL_RUN_COMPLETE, PL_RUN_INTERRUPTED, PL_RUN_OVERRUN,
    PL_RUN_IMPORTED, PL_NRUNSTATE
} pl_run_state;

/* The schema's name of a run state ("recording", "complete", ...). */
const char *pl_run_state_name(pl_run_state s);

/* Parses a schema name; PL_EINVAL for an unknown one. */
pl_status pl_run_state_parse(const char *name, pl_run_state *s);

/* What a run is, apart from its samples.  Names refer to the catalogue;
 * an empty name leaves the reference NULL. */
typedef struct {
    long long id;                /* filled by pl_run_create / pl_run_get */
    char prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE], experiment[PL_NAME_SIZE];
    char started_utc[32];        /* empty: now */
    double sample_rate_hz;
    int n_channels;
    pl_sample_format format;
    int little_endian;           /* byte order of the stored samples */
    pl_run_state state;
    long long overrun_frame;     /* -1 when none */
    char source_kind[8];         /* comedi, wav, csv, sim */
    char source_detail[256];
    char source_sha256[65];      /* empty when not a file */
    int synthetic;
    double lambda0_rad;          /* NaN when not known */
    long long pretrigger_frames;
    long long n_frames;          /* frames committed */
    char ended_utc[32];
    char notes[512];
    /* SHA-256 of the raw samples as stored (the chunks' bytes in frame
     * order, schemas/011); "" when not checked.  The writer fills it. */
    char samples_sha256[65];
    /* Where started_utc comes from: "clock", "metadata", "bwf", "riff",
     * "mtime", "import" (schemas/011); "": not known (a live recorder's
     * run is stored "clock"). */
    char started_from[12];
    char imported_utc[32];       /* when an import stored it; "": not imported */
    /* Where the run's frame 0 lies in the file it was cut from (`import
     * --split-releases`: schemas/013); -1: the run is a whole recording.
     * Read by pl_run_get; stored by pl_run_set_cut, never by create. */
    long long cut_first_frame;
} pl_run_info;

/* Fills info with defaults: 2 channels, s16 host order, NaN angles. */
void pl_run_info_init(pl_run_info *info);

/* Inserts a run and its channels (ch[0..info->n_channels-1]) and sets
 * info->id.  Does not begin a transaction: the caller decides. */
pl_status pl_run_create(pl_store *store, pl_run_info *info,
                        const pl_channel *ch, pl_err *err);

/* Appends a chunk of n_frames frames (bytes = n_frames * n_channels *
 * sample size) that must start at the run's current n_frames, and advances
 * n_frames.  No transaction of its own. */
pl_status pl_run_append_chunk(pl_store *store, long long run_id,
                              long long first_frame, long long n_frames,
                              const void *data, size_t bytes, pl_err *err);

/* Sets the state (and ended_utc when the state is final, overrun_frame
 * when >= 0). */
pl_status pl_run_set_state(pl_store *store, long long run_id,
                           pl_run_state state, long long overrun_frame,
                           pl_err *err);

/* Marks the run as cut from its file (source_detail, source_sha256) at
 * the file's frame first_frame (>= 0).  No transaction of its own: the
 * import sets it inside the run's. */
pl_status pl_run_set_cut(pl_store *store, long long run_id, long long first_frame,
                         pl_err *err);

/* The imported run holding the file with this SHA-256 from its frame
 * first_frame on (a cut, schemas/013), or, with first_frame -1, the whole
 * file, into *run_id; 0 when none. */
pl_status pl_run_find_cut(pl_store *store, const char *sha256, long long first_frame,
                          long long *run_id, pl_err *err);

/* Stores the SHA-256 of the run's raw samples (hex; "" stores NULL: not
 * checked).  No transaction of its own: the writer sets it as the run
 * ends. */
pl_status pl_run_set_samples_sha256(pl_store *store, long long run_id,
                                    const char *hex, pl_err *err);

/* The oldest run before run_id (a smaller id: stored earlier) whose raw
 * samples are the same as run_id's (the same samples_sha256) into *other,
 * 0 when there is none or run_id's samples are not checked.  The first
 * of a set of identical runs is the one that counts. */
pl_status pl_run_same_samples(pl_store *store, long long run_id,
                              long long *other, pl_err *err);

/* "run 7 holds the same samples as run 3 (file.wav): not independent
 * evidence" into text (size bytes), naming the other run's file or
 * device; "" when run_id shares its samples with no other run. */
pl_status pl_run_same_samples_text(pl_store *store, long long run_id,
                                   char *text, size_t size, pl_err *err);

/* Hashes, from their chunks, the samples of every run that has frames,
 * has ended and has no samples_sha256 yet (stores older than schema 011).
 * Called by the store right after migration 011, inside its transaction;
 * *count receives how many runs were hashed. */
pl_status pl_run_fill_samples_sha256(pl_store *store, long long *count,
                                     pl_err *err);

/* Reads a run's description; PL_ENOTFOUND when there is no such run. */
pl_status pl_run_get(pl_store *store, long long run_id, pl_run_info *info,
                     pl_err *err);

/* Reads the run's channels into ch[0..info.n_channels-1] (at most max). */
pl_status pl_run_channels(pl_store *store, long long run_id, pl_channel *ch,
                          int max, pl_err *err);

/* Reads frames [first, first + n) as stored (raw bytes, frame-interleaved)
 * into buf, verifying each chunk's CRC on the way: PL_ECORRUPT names the
 * run and chunk that fails. */
pl_status pl_run_read_raw(pl_store *store, long long run_id, long long first,
                          long long n, void *buf, size_t bufsize, pl_err *err);

/* Reads frames [first, first + n) converted to volts (by each channel's
 * calibration), frame-interleaved doubles. */
pl_status pl_run_read_volts(pl_store *store, long long run_id, long long first,
                            long long n, double *out, pl_err *err);

/* Reads frames [first, first + n) in volts into one array per channel:
 * out[k][i] is channel k at frame first + i; n_out must be the run's
 * channel count.  Chunk by chunk, without a copy of the raw bytes. */
pl_status pl_run_read_channels(pl_store *store, long long run_id,
                               long long first, long long n,
                               double *const *out, int n_out, pl_err *err);

/* pl_run_read_channels() with each channel's volts times scale[k] (the
 * LDV's m/s per volt and the beam's sign, say; scale NULL: volts): to the
 * bit the product a caller would form afterwards, without a second pass
 * over the arrays. */
pl_status pl_run_read_scaled(pl_store *store, long long run_id,
                             long long first, long long n, double *const *out,
                             const double *scale, int n_out, pl_err *err);

/* Frames a recording skipped (a logger's dropped buffer: its CSV's time
 * column jumps by a whole number of frames), which the import stored as
 * a line so that the frame index keeps meaning time (schemas/010,
 * docs/acquire.md "Gaps in the time column"): frames [first_frame,
 * first_frame + n_frames) were not measured. */
typedef struct {
    long long first_frame, n_frames;
} pl_run_gap;

/* Records one gap of run_id.  No transaction of its own: the import
 * writes it in the run's.  PL_EINVAL for a gap not inside a recording
 * (first_frame < 1, n_frames < 1). */
pl_status pl_run_add_gap(pl_store *store, long long run_id, const pl_run_gap *gap,
                         pl_err *err);

/* The gaps of run_id in frame order into a malloc'd *gaps (the caller
 * frees it; NULL when there are none) and their count into *n. */
pl_status pl_run_gaps(pl_store *store, long long run_id, pl_run_gap **gaps,
                      size_t *n, pl_err *err);

/* Calls fn for each run, newest first, restricted to experiment when it is
 * not NULL; stops early when fn returns non-zero. */
typedef int (*pl_run_visit_fn)(void *ctx, const pl_run_info *info);
pl_status pl_run_list(pl_store *store, const char *experiment,
                      pl_run_visit_fn fn, void *ctx, pl_err *err);

/* The runs a command names: the ids in args[0..nargs-1] (as given), else
 * those of experiment (NULL: every run), oldest first.  *ids is malloc'd
 * (the caller frees it); PL_EINVAL names a bad id. */
pl_status pl_run_select(pl_store *store, char *const *args, int nargs,
                        const char *experiment, long long **ids, size_t *n,
                        pl_err *err);

/* The oldest whole import (state 'imported') of the file with this
 * SHA-256 (64 hex digits): *run_id receives its id, or 0 when there is
 * none.  A partial run left by an earlier prismlab's failed import does
 * not count. */
pl_status pl_run_find_by_sha256(pl_store *store, const char *sha256,
                                long long *run_id, pl_err *err);

/* Deletes a run with everything stored for it (channels, chunks,
 * processing, simulations, validations); PL_ENOTFOUND when there is no
 * such run.  No transaction of its own. */
pl_status pl_run_delete(pl_store *store, long long run_id, pl_err *err);

/* A correction of a run's metadata (`prismlab run set`): each field left
 * at its "unset" value (NULL, NaN, 0) keeps the stored one.  Heights and
 * signs are those of the first two channels (h1, h2: eq. 4.1's beams). */
typedef struct {
    const char *prism, *ramp, *experiment;  /* "" clears the reference */
    double h[2];                 /* m; NaN: keep */
    int sign[2];                 /* +1, -1; 0: keep */
    double ldv_scale_mps_per_v;  /* every channel's; NaN: keep */
    double lambda0_rad;          /* NaN: keep */
    int clear_lambda0;           /* 1: forget the recorded release angle */
    const char *notes;           /* NULL: keep */
} pl_run_edit;

/* Sets every field of e to "keep". */
void pl_run_edit_init(pl_run_edit *e);

/* Applies e to run_id in one transaction: checks the new values as an
 * import does (names in the catalogue, heights in (0, 10] m and
 * different, lambda0 in (0, 120) deg), writes one run_change row per
 * field that changes (when, field, old and new value as text, the
 * prismlab version), and drops what was derived from the old metadata
 * (processing with its series, impacts and quality record, or a
 * refusal; simulations, validations).
 * The samples are not touched.  *changed receives how many fields
 * changed (0: nothing written, nothing dropped).  PL_ENOTFOUND for an
 * unknown run, prism or ramp; PL_EINVAL for a value out of range. */
pl_status pl_run_set(pl_store *store, long long run_id, const pl_run_edit *e,
                     int *changed, pl_err *err);

/* One correction of a run, oldest first. */
typedef struct {
    char changed_utc[32];
    char field[32];
    char old_value[128], new_value[128];
    char version[64];
} pl_run_change;

/* Calls fn for each correction of run_id, oldest first; fn returns
 * non-zero to stop. */
pl_status pl_run_history(pl_store *store, long long run_id,
                         int (*fn)(void *ctx, const pl_run_change *c),
                         void *ctx, pl_err *err);

/* The frames stored over all runs. */
pl_status pl_run_total_frames(pl_store *store, long long *frames,
                              pl_err *err);

/* Marks every run still 'recording' as 'interrupted' (a recorder that died
 * left it so); *count receives how many.  Only a recorder that holds the
 * recording lock may call this. */
pl_status pl_run_mark_interrupted(pl_store *store, long long *count,
                                  pl_err *err);

#endif
