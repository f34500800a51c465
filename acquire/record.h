/* acquire/record.h - one live recording: a source through the writer into
 * a new run, shared by `prismlab acquire record`, `prismlab sim --store`
 * and the daemon.
 *
 * Only one recorder may write to a database at a time.  It holds an
 * advisory lock (flock) on "<db>.recorder.lock" for its lifetime; whoever
 * takes that lock knows that any run still in state 'recording' was left
 * by a recorder that died (SIGKILL, power cut), and marks it 'interrupted',
 * keeping its committed data.
 */
#ifndef PL_ACQUIRE_RECORD_H
#define PL_ACQUIRE_RECORD_H

#include "acquire/pump.h"
#include "acquire/source.h"
#include "acquire/writer.h"

typedef struct pl_recorder pl_recorder;

typedef struct {
    const char *prism, *ramp, *experiment;  /* NULL: the source's, or none */
    double lambda0_rad;                     /* NaN: the source's */
    char notes[512];
    pl_writer_config writer;
    pl_pump_options pump;
} pl_record_options;

/* Defaults: live writer (overrun, not wait), 0.1 s commits, 10 s ring. */
void pl_record_options_init(pl_record_options *opt);

/* Takes the recorder lock of db_path (PL_ESTATE naming the lock file,
 * the holder's pid and the command that ends it when another recorder
 * holds it), opens the store and marks runs left 'recording' as
 * 'interrupted'; *interrupted receives how many. */
pl_status pl_recorder_open(pl_recorder **out, const char *db_path,
                           const pl_writer_config *wc, long long *interrupted,
                           pl_err *err);

/* As pl_recorder_open, but runs left 'recording' stay as they are: the
 * daemon marks them itself, so that a disk too full for the mark does not
 * keep it from starting (it retries; docs/acquire.md). */
pl_status pl_recorder_open_unmarked(pl_recorder **out, const char *db_path,
                                    const pl_writer_config *wc, pl_err *err);

/* Records one run from an opened source: begins the run, starts the
 * source, pumps until the end, *opt->pump.stop or max_frames, stops the
 * source and ends the run 'complete' (or 'overrun' with the frame index,
 * or 'interrupted' on another error, which is returned). */
pl_status pl_recorder_run(pl_recorder *r, const pl_source_type *type,
                          void *src, const pl_source_info *info,
                          const pl_record_options *opt, long long *run_id,
                          long long *frames, pl_err *err);

/* Begins a run for a source on the recorder's writer (the experiment is
 * created when new) without reading anything: the daemon pushes the
 * frames itself.  pretrigger_frames is stored with the run. */
pl_status pl_recorder_begin(pl_recorder *r, const pl_source_info *info,
                            const pl_record_options *opt,
                            long long pretrigger_frames, long long *run_id,
                            pl_err *err);

/* Says in the lock file that the holder is a daemon answering on
 * socket_path, so that a recorder refused names the command that ends it
 * (prismlab acquire quit --socket PATH). */
void pl_recorder_set_daemon(pl_recorder *r, const char *socket_path);

/* After a run has ended: "run 7 holds the same samples as run 3 (...):
 * not independent evidence" into text (db/run.h), or "" when no other
 * run holds its samples or the lookup failed (a message, not a refusal). */
void pl_recorder_same_samples(pl_recorder *r, long long run_id, char *text,
                              size_t size);

/* The writer, for its statistics. */
pl_writer *pl_recorder_writer(pl_recorder *r);

/* Releases the lock and the store; NULL is a no-op. */
void pl_recorder_close(pl_recorder *r);

#endif
