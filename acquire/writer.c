/* acquire/writer.c - ring buffer and writer thread.  See writer.h.
 *
 * The ring is single-producer, single-consumer, guarded by one mutex and
 * two condition variables.  The lock covers only the counters: the
 * producer copies into the free part and the consumer out of the filled
 * part outside the lock, which is safe because the two parts never
 * overlap.  A mutex rather than C11 atomics: the writer wakes ten times a
 * second, so the lock costs nothing measurable and the waiting (for data,
 * for space) needs condition variables anyway.
 */
#include "acquire/writer.h"

#include "core/sha256.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct pl_writer {
    pl_store *store;
    pl_writer_config cfg;

    /* run */
    long long run_id;
    int running;              /* thread started */
    size_t frame_bytes;
    size_t commit_frames;

    /* ring: frames [tail, head) are filled; counters only grow */
    unsigned char *ring;
    size_t cap;               /* frames */
    long long head, tail;
    unsigned char *stage;     /* one commit's frames, contiguous */

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t data, space;
    int ending;
    long long overrun_frame;  /* -1: none */
    int failed;               /* the thread stopped on an error */
    pl_err thread_err;
    /* the last run's final state, when storing it failed (pl_writer_unmarked) */
    int unmarked;
    pl_run_state unmarked_state;
    long long unmarked_frame;

    long long pushed, committed, commits;
    size_t peak;

    /* the committed frames' SHA-256, in frame order: the writer thread's
     * until it is joined */
    pl_sha256 samples;
};

pl_status pl_writer_create(pl_writer **out, const char *db_path,
                           const pl_writer_config *cfg, pl_err *err)
{
    *out = NULL;
    pl_writer *w = calloc(1, sizeof *w);
    if (!w)
        return pl_err_set(err, PL_ENOMEM, "writer: out of memory");
    w->cfg = *cfg;
    if (pl_store_open(&w->store, db_path,
                      cfg->sync_full ? PL_STORE_SYNC_FULL : 0,
                      err) != PL_OK) {
        free(w);
        return err->code;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->data, NULL);
    pthread_cond_init(&w->space, NULL);
    w->overrun_frame = -1;
    *out = w;
    return PL_OK;
}

pl_store *pl_writer_store(pl_writer *w) { return w->store; }

/* Copies frames [from, from + n) of the ring into dst. */
static void ring_read(const pl_writer *w, long long from, size_t n,
                      unsigned char *dst)
{
    size_t at = (size_t)(from % (long long)w->cap);
    size_t first = n < w->cap - at ? n : w->cap - at;
    memcpy(dst, w->ring + at * w->frame_bytes, first * w->frame_bytes);
    if (first < n)
        memcpy(dst + first * w->frame_bytes, w->ring, (n - first) * w->frame_bytes);
}

static void ring_write(pl_writer *w, long long to, size_t n,
                       const unsigned char *src)
{
    size_t at = (size_t)(to % (long long)w->cap);
    size_t first = n < w->cap - at ? n : w->cap - at;
    memcpy(w->ring + at * w->frame_bytes, src, first * w->frame_bytes);
    if (first < n)
        memcpy(w->ring, src + first * w->frame_bytes, (n - first) * w->frame_bytes);
}

static pl_status commit_chunk(pl_writer *w, long long first, size_t n,
                              const unsigned char *data, pl_err *err)
{
    if (w->cfg.atomic)   /* inside the run's one transaction */
        return pl_run_append_chunk(w->store, w->run_id, first, (long long)n,
                                   data, n * w->frame_bytes, err);
    if (pl_store_begin(w->store, err) != PL_OK)
        return err->code;
    if (pl_run_append_chunk(w->store, w->run_id, first, (long long)n, data,
                            n * w->frame_bytes, err) != PL_OK ||
        pl_store_commit(w->store, err) != PL_OK) {
        pl_store_rollback(w->store);
        return err->code;
    }
    return PL_OK;
}

static void *writer_main(void *arg)
{
    pl_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->ending && w->head - w->tail < (long long)w->commit_frames)
            pthread_cond_wait(&w->data, &w->mu);
        long long avail = w->head - w->tail;
        if (avail == 0 && w->ending)
            break;
        size_t n = avail < (long long)w->commit_frames ? (size_t)avail
                                                        : w->commit_frames;
        long long first = w->tail;
        pthread_mutex_unlock(&w->mu);

        /* Frames [tail, head) are the thread's until it moves tail: a chunk
         * that does not wrap goes to SQLite from the ring itself, one copy
         * of every frame fewer. */
        size_t at = (size_t)(first % (long long)w->cap);
        const unsigned char *data = w->ring + at * w->frame_bytes;
        if (at + n > w->cap) {
            ring_read(w, first, n, w->stage);
            data = w->stage;
        }
        pl_err err = {0};
        pl_status st = commit_chunk(w, first, n, data, &err);
        if (st == PL_OK)   /* outside the lock: the chunk is still ours */
            pl_sha256_update(&w->samples, data, n * w->frame_bytes);

        pthread_mutex_lock(&w->mu);
        if (st != PL_OK) {
            /* Nothing from this chunk on can be kept: the loss is marked at
             * once, so get_stats (the daemon's status) shows it the moment
             * it happens, not when the run ends. */
            w->failed = 1;
            if (!w->cfg.atomic && (w->overrun_frame < 0 || first < w->overrun_frame))
                w->overrun_frame = first;
            if (w->cfg.atomic)   /* the run goes with the transaction */
                w->thread_err = err;
            else
                pl_err_set(&w->thread_err, err.code, "run %lld: storing frames "
                           "from %lld on failed: %.400s", w->run_id, first, err.msg);
            pthread_cond_broadcast(&w->space);
            break;
        }
        w->tail += (long long)n;
        w->committed += (long long)n;
        w->commits++;
        pthread_cond_broadcast(&w->space);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

pl_status pl_writer_begin_run(pl_writer *w, pl_run_info *info,
                              const pl_channel *ch, pl_err *err)
{
    if (w->running)
        return pl_err_set(err, PL_ESTATE, "writer: run %lld is still open",
                          w->run_id);
    if (!(info->sample_rate_hz > 0) || info->n_channels < 1)
        return pl_err_set(err, PL_EINVAL, "writer: a run needs a positive "
                          "rate and at least one channel");
    double interval = w->cfg.commit_interval_s > 0 ? w->cfg.commit_interval_s : 0.1;
    size_t frame_bytes = pl_sample_format_size(info->format) * (size_t)info->n_channels;
    size_t max_bytes = w->cfg.ring_max_bytes ? w->cfg.ring_max_bytes : PL_WRITER_RING_MAX_BYTES;
    size_t max_frames = max_bytes / frame_bytes;
    double want = w->cfg.ring_frames ? (double)w->cfg.ring_frames
                                     : ceil(10.0 * info->sample_rate_hz);
    size_t cap;
    if (want <= (double)max_frames)
        cap = (size_t)want;
    else if (w->cfg.block_when_full && !w->cfg.ring_frames)
        /* A file waits for space, so a smaller ring costs it nothing. */
        cap = max_frames;
    else
        return pl_err_set(err, PL_EINVAL, "writer: a ring of %.0f frames at "
                          "%g Hz x %d channels needs %.0f bytes, over the limit "
                          "of %zu bytes (%zu frames)", want, info->sample_rate_hz,
                          info->n_channels, want * (double)frame_bytes,
                          max_bytes, max_frames);
    if (cap < 2)
        cap = 2;
    /* A chunk of at most half the ring: the thread then always finds a
     * whole chunk once the producer can no longer fit its next piece
     * (pl_writer_push), whatever the rate, so neither waits on the other. */
    double cf = ceil(interval * info->sample_rate_hz);
    w->commit_frames = cf < 1 ? 1 : cf > (double)(cap / 2) ? cap / 2 : (size_t)cf;
    w->frame_bytes = frame_bytes;
    free(w->ring);
    free(w->stage);
    w->cap = cap;
    w->ring = malloc(cap * frame_bytes);
    w->stage = malloc(w->commit_frames * frame_bytes);
    if (!w->ring || !w->stage)
        return pl_err_set(err, PL_ENOMEM, "writer: out of memory for a ring "
                          "of %zu frames (%zu bytes)", cap, cap * frame_bytes);

    info->state = PL_RUN_RECORDING;
    info->overrun_frame = -1;
    info->n_frames = 0;
    if (pl_store_begin(w->store, err) != PL_OK)
        return err->code;
    if (pl_run_create(w->store, info, ch, err) != PL_OK ||
        (!w->cfg.atomic && pl_store_commit(w->store, err) != PL_OK)) {
        pl_store_rollback(w->store);
        return err->code;
    }
    w->run_id = info->id;
    w->head = w->tail = 0;
    w->pushed = w->committed = w->commits = 0;
    w->peak = 0;
    w->ending = 0;
    w->failed = 0;
    w->overrun_frame = -1;
    w->unmarked = 0;
    pl_sha256_init(&w->samples);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        if (w->cfg.atomic)
            pl_store_rollback(w->store);
        return pl_err_set(err, PL_ENOMEM, "writer: cannot start its thread");
    }
    w->running = 1;
    return PL_OK;
}

pl_status pl_writer_push(pl_writer *w, const void *frames, size_t n,
                         pl_err *err)
{
    const unsigned char *src = frames;
    if (!w->running)
        return pl_err_set(err, PL_ESTATE, "writer: push without a run");
    while (n > 0) {
        /* A piece that does not fit leaves fewer than `piece` frames free,
         * i.e. at least cap - piece + 1 >= commit_frames filled: the
         * thread has a whole chunk to commit and makes room. */
        size_t most = w->cap - w->commit_frames + 1;
        size_t piece = n < most ? n : most;
        pthread_mutex_lock(&w->mu);
        if (w->failed) {   /* its own message: the cause, not only the loss */
            *err = w->thread_err;
            pthread_mutex_unlock(&w->mu);
            return err->code;
        }
        if (w->overrun_frame >= 0) {
            pthread_mutex_unlock(&w->mu);
            return pl_err_set(err, PL_EOVERRUN, "run %lld: overrun at frame "
                              "%lld: frames from there on are not stored",
                              w->run_id, w->overrun_frame);
        }
        while (!w->failed && w->cap - (size_t)(w->head - w->tail) < piece) {
            if (!w->cfg.block_when_full) {
                w->overrun_frame = w->pushed;
                pthread_mutex_unlock(&w->mu);
                return pl_err_set(err, PL_EOVERRUN, "run %lld: the writer "
                                  "fell %zu frames behind (the ring holds "
                                  "%zu): overrun at frame %lld", w->run_id,
                                  (size_t)(w->head - w->tail), w->cap,
                                  w->overrun_frame);
            }
            pthread_cond_wait(&w->space, &w->mu);
        }
        if (w->failed) {
            *err = w->thread_err;
            pthread_mutex_unlock(&w->mu);
            return err->code;
        }
        long long at = w->head;
        pthread_mutex_unlock(&w->mu);

        ring_write(w, at, piece, src);

        pthread_mutex_lock(&w->mu);
        w->head += (long long)piece;
        w->pushed += (long long)piece;
        size_t fill = (size_t)(w->head - w->tail);
        if (fill > w->peak)
            w->peak = fill;
        if (fill >= w->commit_frames)
            pthread_cond_signal(&w->data);
        pthread_mutex_unlock(&w->mu);
        src += piece * w->frame_bytes;
        n -= piece;
    }
    return PL_OK;
}

pl_status pl_writer_mark_overrun(pl_writer *w, long long frame_index,
                                 pl_err *err)
{
    if (!w->running)
        return pl_err_set(err, PL_ESTATE, "writer: no run to mark");
    pthread_mutex_lock(&w->mu);
    if (w->overrun_frame < 0 || frame_index < w->overrun_frame)
        w->overrun_frame = frame_index;
    pthread_mutex_unlock(&w->mu);
    return PL_OK;
}

/* Drains the ring and stops the thread. */
static void stop_thread(pl_writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->ending = 1;
    pthread_cond_signal(&w->data);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    w->running = 0;
}

/* The samples' SHA-256 stored with the run: every import, recording and
 * daemon run goes through here, so none escapes the check of which runs
 * hold the same samples (db/run.h).  A run without frames is left
 * unchecked (every empty run would match).  Only an atomic run
 * fails on it (its transaction goes whole or not at all); a live run
 * whose hash could not be stored stays unchecked rather than unfinished. */
static pl_status store_samples_hash(pl_writer *w, pl_err *err)
{
    char hex[65];
    pl_err e = {0};
    if (w->committed == 0)
        return PL_OK;
    pl_sha256_hex(&w->samples, hex);
    if (pl_run_set_samples_sha256(w->store, w->run_id, hex, &e) != PL_OK) {
        if (!w->cfg.atomic)
            return PL_OK;
        *err = e;
        return e.code;
    }
    return PL_OK;
}

static void set_unmarked(pl_writer *w, pl_run_state state, long long frame)
{
    w->unmarked = 1;
    w->unmarked_state = state;
    w->unmarked_frame = frame;
}

int pl_writer_unmarked(const pl_writer *w, long long *run_id, pl_run_state *state,
                       long long *overrun_frame)
{
    if (!w->unmarked)
        return 0;
    *run_id = w->run_id;
    *state = w->unmarked_state;
    *overrun_frame = w->unmarked_frame;
    return 1;
}

pl_status pl_writer_end_run(pl_writer *w, pl_run_state final_state,
                            pl_err *err)
{
    if (!w->running)
        return pl_err_set(err, PL_ESTATE, "writer: no run to end");
    if (w->cfg.atomic && final_state == PL_RUN_INTERRUPTED)
        return pl_writer_abort_run(w, err);
    stop_thread(w);
    if (w->failed) {
        *err = w->thread_err;
        if (w->cfg.atomic) {
            pl_store_rollback(w->store);
            return err->code;
        }
        /* What is committed stays, and the run says where its frames stop:
         * 'overrun' at the first frame that could not be stored (a full
         * disk loses frames as surely as a slow one).  The mark is an
         * UPDATE, which needs room in the WAL: on a disk still full it
         * fails too, the run stays 'recording', and the caller hears of
         * both and may store the mark later (pl_writer_unmarked). */
        pl_err e2 = {0};
        if (pl_run_set_state(w->store, w->run_id, PL_RUN_OVERRUN,
                             w->overrun_frame, &e2) != PL_OK) {
            set_unmarked(w, PL_RUN_OVERRUN, w->overrun_frame);
            pl_err_set(err, err->code, "%.300s; and marking run %lld "
                       "overrun failed too: %.300s", w->thread_err.msg,
                       w->run_id, e2.msg);
        }
        return err->code;
    }
    if (w->overrun_frame >= 0)
        final_state = PL_RUN_OVERRUN;
    if (store_samples_hash(w, err) != PL_OK) {
        pl_store_rollback(w->store);
        return err->code;
    }
    if (pl_run_set_state(w->store, w->run_id, final_state,
                         final_state == PL_RUN_OVERRUN ? w->overrun_frame : -1,
                         err) != PL_OK) {
        if (w->cfg.atomic)
            pl_store_rollback(w->store);
        else
            set_unmarked(w, final_state, final_state == PL_RUN_OVERRUN ? w->overrun_frame : -1);
        return err->code;
    }
    if (w->cfg.atomic && pl_store_commit(w->store, err) != PL_OK) {
        pl_store_rollback(w->store);
        return err->code;
    }
    return PL_OK;
}

pl_status pl_writer_abort_run(pl_writer *w, pl_err *err)
{
    if (!w->running)
        return pl_err_set(err, PL_ESTATE, "writer: no run to abort");
    if (!w->cfg.atomic)
        return pl_writer_end_run(w, PL_RUN_INTERRUPTED, err);
    /* Nothing to drain: every frame of the run goes with the transaction. */
    stop_thread(w);
    pl_store_rollback(w->store);
    return PL_OK;
}

void pl_writer_get_stats(pl_writer *w, pl_writer_stats *st)
{
    pthread_mutex_lock(&w->mu);
    st->frames_pushed = w->pushed;
    st->frames_committed = w->committed;
    st->ring_fill = (size_t)(w->head - w->tail);
    st->ring_capacity = w->cap;
    st->ring_peak = w->peak;
    st->overruns = w->overrun_frame >= 0;
    st->run_id = w->run_id;
    st->commits = w->commits;
    st->failed = w->failed;
    pthread_mutex_unlock(&w->mu);
}

void pl_writer_destroy(pl_writer *w)
{
    if (!w)
        return;
    if (w->running) {
        pl_err ignore = {0};
        pl_writer_abort_run(w, &ignore);
    }
    pl_store_close(w->store);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->data);
    pthread_cond_destroy(&w->space);
    free(w->ring);
    free(w->stage);
    free(w);
}
