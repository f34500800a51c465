/* web/trace.h - min/max envelopes of a run's signals for plots that zoom.
 *
 * A plot of w pixels needs, for the window it shows, at most w columns,
 * each the minimum and maximum of the samples that fall into it: drawn as
 * a band, that is exactly what plotting every sample would colour.  A
 * 10-minute run has 6 M frames a channel, so the server never sends them
 * all; it sends the envelope of the window at the plot's width, and the
 * samples themselves once the window holds no more than two a column.
 *
 * The velocities v_p1, v_p2 come straight from the stored chunks
 * (calibrated volts x beam sign x LDV scale: what the LDV decoder says,
 * before processing).  So that neither the first answer nor a zoom reads
 * the whole run, a pl_trace keeps two levels of pre-computed extremes:
 *   - coarse, the min and max of every PL_TRACE_COARSE frames: what
 *     processing stored (db/derived.h, "vp1_raw_min"...), read when the
 *     run is opened (750 kB for 10 minutes); a run not processed has it
 *     built from the fine level;
 *   - fine, of every PL_TRACE_BUCKET frames, built from the chunks a
 *     slice of 65536 frames at a time, only for the slices a window
 *     covers, when it first needs them (and extended, not rebuilt, while
 *     the run records).
 * A window of at least 8 buckets a column of a level is answered from the
 * coarsest such level, its column edges moved to bucket edges (by less
 * than an eighth of a column; each column says which frame it starts at);
 * a narrower window is read from the chunks and answered exactly.
 *
 * The same envelope of an array in memory (the derived series, 1 kHz)
 * is pl_envelope().
 */
#ifndef PL_WEB_TRACE_H
#define PL_WEB_TRACE_H

#include "core/error.h"
#include "db/store.h"

#include <stddef.h>

enum { PL_TRACE_BUCKET = 16, PL_TRACE_COARSE = 256, PL_TRACE_MAXCH = 4 };

/* An answer: n columns; column i starts at sample first[i] (a frame or
 * series index) and holds min[c][i] .. max[c][i] of channel c.  full: each
 * column is one sample (min == max).  Arrays are malloc'd. */
typedef struct {
    size_t n;
    int n_ch;
    int full;
    long long *first;
    double *min[PL_TRACE_MAXCH], *max[PL_TRACE_MAXCH];
} pl_envelope_cols;

/* Frees the arrays; the struct is empty again. */
void pl_envelope_cols_free(pl_envelope_cols *e);

/* The envelope of samples [a, b) of the n_ch arrays x[c] (each at least b
 * long) in at most px columns (px >= 1): exact column edges a + floor(i
 * (b - a) / px); the samples themselves when b - a <= 2 px.  NaN samples
 * are passed over (a column of only NaN gives NaN). */
pl_status pl_envelope(const double *const *x, int n_ch, size_t a, size_t b,
                      size_t px, pl_envelope_cols *out, pl_err *err);

typedef struct pl_trace pl_trace;

/* Reads run run_id's description and channels, and the coarse level
 * processing stored when it covers the run; reads no chunk (windows read
 * what they need).  PL_ENOTFOUND for no such run. */
pl_status pl_trace_open(pl_trace **out, pl_store *store, long long run_id,
                        pl_err *err);

/* Closes the handle; NULL is a no-op. */
void pl_trace_close(pl_trace *tr);

/* Takes in the frames the run holds now (a run that records grows): the
 * levels are extended, when a window needs them, by what was added. */
pl_status pl_trace_refresh(pl_trace *tr, pl_store *store, pl_err *err);

/* Frames covered, the sample rate (Hz), the run. */
long long pl_trace_frames(const pl_trace *tr);
double pl_trace_rate(const pl_trace *tr);
long long pl_trace_run(const pl_trace *tr);

/* Frames read from the chunks since the trace was opened (what the
 * levels and the narrow windows cost: tests and the bench look). */
long long pl_trace_frames_read(const pl_trace *tr);

/* 1 when the coarse level came from what processing stored. */
int pl_trace_stored(const pl_trace *tr);

/* The envelope of v_p1 and v_p2 (m/s; n_ch = 2) over frames [f0, f1)
 * (clipped to the run) in at most px columns: from the coarsest level of
 * which the window holds at least 8 buckets a column (building what it
 * lacks of the window's slices), else from the chunks.  PL_ECORRUPT when
 * a chunk read fails its CRC. */
pl_status pl_trace_window(pl_trace *tr, pl_store *store, long long f0,
                          long long f1, size_t px, pl_envelope_cols *out,
                          pl_err *err);

#endif
