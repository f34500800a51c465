/* acquire/pump.h - the loop that moves frames from a source into a writer,
 * shared by import, record, sim --store and the daemon. */
#ifndef PL_ACQUIRE_PUMP_H
#define PL_ACQUIRE_PUMP_H

#include "acquire/source.h"
#include "acquire/writer.h"

#include <signal.h>

typedef struct {
    long long max_frames;                  /* -1: until the end or stop */
    size_t block_frames;                   /* per read; 0: ~10 ms of data */
    volatile sig_atomic_t *stop;           /* set by a signal handler; NULL */
    void (*progress)(void *ctx, long long frames, long long total);
    void *progress_ctx;                    /* progress is called ~10 times a second of data */
} pl_pump_options;

/* Reads from an opened and started source into the writer (whose run is
 * begun) until the end of the stream, *stop, or max_frames.  *frames
 * receives the frames moved.  A source-reported loss is marked on the
 * writer and returned as PL_EOVERRUN; other errors end the loop as they
 * are.  The caller ends the run. */
pl_status pl_acquire_pump(const pl_source_type *type, void *src,
                          const pl_source_info *info, pl_writer *w,
                          const pl_pump_options *opt, long long *frames,
                          pl_err *err);

#endif
