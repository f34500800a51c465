/* acquire/writer.h - the one way frames reach the store.
 *
 * A writer owns a thread and a bounded ring of frames.  The reading side
 * (a card's read loop, a file importer) only copies frames into the ring
 * (pl_writer_push) and never waits on the disk; the writer thread drains
 * the ring into the run's chunks, one transaction per commit interval of
 * data (~100 ms), so a crash loses at most the uncommitted interval and
 * leaves every committed chunk intact (WAL; synchronous=NORMAL survives a
 * process kill, FULL also a power cut).
 *
 * If a live source outruns the disk by more than the ring holds, or a
 * commit fails (a full disk), nothing is dropped silently: the run is marked 'overrun' at the first frame that
 * could not be kept, and every frame before it is stored.  File sources
 * set block_when_full and simply wait.
 *
 * An atomic writer (imports) keeps the whole run in one transaction, from
 * its creation to its final state: a kill, a signal, a full disk or a
 * power cut before pl_writer_end_run's commit leaves no trace of it, and
 * no other connection ever sees it unfinished.  It holds the database's
 * write lock meanwhile: a live recorder's writer waits (its ring holds
 * 10 s; SQLite's busy timeout is 10 s).
 *
 * Threading: push, mark_overrun, end_run and get_stats may be called from
 * one producer thread; get_stats from any thread.
 */
#ifndef PL_ACQUIRE_WRITER_H
#define PL_ACQUIRE_WRITER_H

#include "core/error.h"
#include "db/run.h"

#include <stddef.h>

typedef struct pl_writer pl_writer;

typedef struct {
    size_t ring_frames;        /* ring capacity; 0: 10 s of data */
    double commit_interval_s;  /* data per transaction; 0: 0.1 s */
    int sync_full;             /* synchronous=FULL */
    int block_when_full;       /* 1: push waits (files); 0: overrun (live) */
    size_t ring_max_bytes;     /* 0: PL_WRITER_RING_MAX_BYTES */
    int atomic;                /* 1: the run is one transaction (imports) */
} pl_writer_config;

/* The most memory a ring may take.  A live run whose 10 s do not fit is
 * refused (naming rate and bytes); a file import gets a ring of this size,
 * since it waits for space anyway.  256 MiB holds 10 s of 8 x 1 MHz s24. */
#define PL_WRITER_RING_MAX_BYTES ((size_t)256 << 20)

typedef struct {
    long long frames_pushed, frames_committed;
    size_t ring_fill, ring_capacity, ring_peak;
    long long overruns;        /* 0 or 1: a run is overrun once */
    long long run_id;
    long long commits;
    int failed;                /* a commit failed (disk full, ...): the run
                                  is overrun from the first frame not stored */
} pl_writer_stats;

/* Opens the store (creating and migrating it when needed). */
pl_status pl_writer_create(pl_writer **out, const char *db_path,
                           const pl_writer_config *cfg, pl_err *err);

/* Creates the run (state 'recording') with its channels, sets info->id,
 * and starts the writer thread.  One run at a time per writer. */
pl_status pl_writer_begin_run(pl_writer *w, pl_run_info *info,
                              const pl_channel *ch, pl_err *err);

/* Copies n frames into the ring.  When it is full: waits (block_when_full)
 * or marks the run overrun at this frame index and returns PL_EOVERRUN;
 * later pushes are then discarded.  A failure of the writer thread (disk
 * full, ...) is returned here with its message. */
pl_status pl_writer_push(pl_writer *w, const void *frames, size_t n,
                         pl_err *err);

/* Records a loss the source reported (frames from frame_index on are
 * missing); the run will end 'overrun'. */
pl_status pl_writer_mark_overrun(pl_writer *w, long long frame_index,
                                 pl_err *err);

/* Drains the ring, commits, stops the thread, stores the SHA-256 of the
 * run's samples (the committed frames' bytes in order: schemas/011) and
 * sets the final state (final_state, or 'overrun' when frames were lost);
 * pl_run_same_samples_text() (db/run.h) then names a run whose samples
 * another run already holds.  After a failed
 * commit it returns that error and the run ends 'overrun' at the first
 * frame not stored. */
pl_status pl_writer_end_run(pl_writer *w, pl_run_state final_state,
                            pl_err *err);

/* After pl_writer_end_run failed on a live run: 1 when the run's final
 * state could not be stored (a disk still full), with the run, the state
 * and the overrun frame (-1: none) it should have, for the caller to
 * store when space allows (pl_run_set_state); 0 when it was stored. */
int pl_writer_unmarked(const pl_writer *w, long long *run_id, pl_run_state *state,
                       long long *overrun_frame);

/* Abandons the run: with cfg.atomic nothing of it was ever committed and
 * nothing is (the transaction is rolled back); otherwise what is committed
 * stays and the run ends 'interrupted'. */
pl_status pl_writer_abort_run(pl_writer *w, pl_err *err);

/* A snapshot of the counters. */
void pl_writer_get_stats(pl_writer *w, pl_writer_stats *st);

/* The writer's store, for the caller's own queries between runs. */
pl_store *pl_writer_store(pl_writer *w);

/* Ends a run still open as 'interrupted', stops the thread, closes the
 * store; NULL is a no-op. */
void pl_writer_destroy(pl_writer *w);

#endif
