/* acquire/daemon.c - the recording daemon.  See daemon.h. */
/* SO_PEERCRED's struct ucred and accept4 are Linux's, behind _GNU_SOURCE;
 * comedi is Linux-only anyway. */
#define _GNU_SOURCE
#include "acquire/daemon.h"
#include "acquire/live.h"
#include "acquire/pipeline.h"
#include "core/sample.h"
#include "db/daemon_run.h"
#include "db/validation.h"
#include "db/work.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A control connection.  Every socket is non-blocking and each client
 * has bounded buffers: a client that trickles, stalls or never reads can
 * delay nothing but itself, and is dropped after CLIENT_TIMEOUT_S or when
 * its line outgrows the buffer. */
/* At most MAX_STREAMS of the connections stream, so that commands (a
 * stop, say) always find a slot however many viewers are open. */
/* A client that floods the socket (connects, sends a byte, reconnects)
 * must not crowd out a command: the listen queue is deep, each pass
 * accepts what is queued (up to ACCEPT_BATCH), a new connection is served
 * the moment it is accepted (a command sent with the connect is answered
 * then), and when every slot is taken the oldest connection that has not
 * yet sent a whole line makes room. */
enum { MAX_CLIENTS = 16, MAX_STREAMS = 6, LINE_MAX_ = 128, REPLY_MAX = 512, STREAM_BUF = 65536,
       LISTEN_BACKLOG = 64, ACCEPT_BATCH = 256 };
#define CLIENT_TIMEOUT_S 2.0

typedef struct {
    int fd;                  /* -1: free slot */
    uid_t uid;               /* the peer's user (SO_PEERCRED) */
    double since;            /* accepted at (monotonic s) */
    char in[LINE_MAX_];
    size_t in_len;
    char out[REPLY_MAX];
    size_t out_len, out_off; /* a reply is queued when out_len > 0 */
    /* a stream client (command "stream"): lines queued in sbuf, never
     * waited for; what does not fit is dropped and counted */
    char *sbuf;              /* STREAM_BUF bytes; NULL: not streaming */
    size_t s_len, s_off;
    long long s_dropped;     /* lines dropped since the last "G" line */
    double s_progress;       /* when it last took bytes (monotonic s) */
} client;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What the daemon could not write when it wanted to (a full disk, a
 * writer holding the lock), tried again once a second from its loop: a
 * failed try is one statement that fails at once, never a wait. */
enum { LATE_MAX = 16, UNFINISHED_MAX = 10 };
#define LATE_RETRY_S 1.0

typedef struct {
    long long run;
    int mark;                /* 1: the run's state; 0: its entry in the book */
    pl_run_state state;      /* the mark: the state it should have ... */
    long long frame;         /* ... and its overrun frame (-1: none) */
    double since;            /* first tried (monotonic s) */
} late_write;

typedef enum { D_IDLE, D_ARMED, D_RECORDING } dstate;
static const char *const state_name[] = {"idle", "armed", "recording"};

typedef struct {
    const pl_rigconf *rc;
    const pl_source_spec *spec;
    const pl_daemon_options *opt;
    pl_recorder *rec;
    pl_record_options ro;
    const pl_source_type *type;
    void *src;
    pl_source_info info;
    dstate st;
    size_t frame_bytes, block;
    unsigned char *buf;
    unsigned char *pre;          /* pre-trigger ring */
    size_t pre_cap, pre_len, pre_head;
    double base[2];
    int have_base;
    long above, still;
    int moved;
    long long run_id, frames, max_frames, last_run;
    int quit;
    client cl[MAX_CLIENTS];
    int n_streams;               /* clients streaming */
    long long src_frames;        /* frames read since the source opened */
    struct {                     /* the stream's unfinished group */
        long long first;         /* its first frame */
        size_t n;                /* frames in it so far */
        double mn[2], mx[2];
    } sg;
    double last_status;          /* when the streams last got an S line */
    char last_error[320];        /* why the last run stopped, if it failed */
    pl_pipeline *pipe;           /* [pipeline] after_run; NULL: none */
    /* the daemon's own connection: its book of runs (db/daemon_run.h)
     * and the marks written late, apart from the writer's thread */
    pl_store *book;
    late_write late[LATE_MAX];
    int n_late;
    double late_tried;           /* when the late writes were last tried */
    long long dropped;           /* runs the full queue turned away */
    /* runs of the daemon left without processing or verdict that it will
     * not do now (found at start, or turned away): the first few named */
    long long unfinished[UNFINISHED_MAX];
    size_t n_unfinished;
    /* the impact search while recording ([live]; NULL: off): the
     * velocities of the frames recorded since the last push */
    pl_live *live;
    double *lv[2];
    size_t lv_n;
    double lv_wall;              /* when their block was read (Unix s) */
} daemon_t;

static void logf_(daemon_t *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pl_vlogf(d->opt->log, d->opt->log_ctx, fmt, ap);
    va_end(ap);
}

/* A run left without processing or verdict that this daemon will not do:
 * named in status (the first UNFINISHED_MAX), counted beyond. */
static void note_unfinished(daemon_t *d, long long run)
{
    if (d->n_unfinished < UNFINISHED_MAX)
        d->unfinished[d->n_unfinished] = run;
    d->n_unfinished++;
}

/* "overrun at frame 41000", "complete", "interrupted". */
static void mark_words(const late_write *l, char *buf, size_t size)
{
    snprintf(buf, size, "%s", pl_run_state_name(l->state));
    if (l->frame >= 0)
        snprintf(buf + strlen(buf), size - strlen(buf), " at frame %lld", l->frame);
}

/* One try at a late write; PL_OK when it is stored. */
static pl_status late_try(daemon_t *d, const late_write *l, pl_err *err)
{
    if (l->mark)
        return pl_run_set_state(d->book, l->run, l->state, l->frame, err);
    return pl_daemon_run_add(d->book, l->run, err);
}

/* Tries a write now and, when it fails, keeps it for the loop's retry
 * with one log line saying so (the retries are silent until one works). */
static void late_write_now(daemon_t *d, late_write l)
{
    pl_err err = {0};
    l.since = mono_s();
    if (late_try(d, &l, &err) == PL_OK)
        return;
    char what[64];
    mark_words(&l, what, sizeof what);
    if (d->n_late >= LATE_MAX) {
        logf_(d, "run %lld: could not be %s%s: %s; %d writes wait already, so not this one",
              l.run, l.mark ? "marked " : "entered in the daemon's book",
              l.mark ? what : "", err.msg, LATE_MAX);
        return;
    }
    d->late[d->n_late++] = l;
    if (l.mark)
        logf_(d, "run %lld: could not be marked %s: %s; will retry", l.run, what, err.msg);
    else
        logf_(d, "run %lld: could not be entered in the daemon's book: %s; will retry",
              l.run, err.msg);
}

/* The loop's retry: each waiting write tried once, at most once a
 * second; one that works is logged and leaves the list. */
static void late_retry(daemon_t *d)
{
    double now = mono_s();
    if (d->n_late == 0 || now - d->late_tried < LATE_RETRY_S)
        return;
    d->late_tried = now;
    for (int i = 0; i < d->n_late;) {
        late_write *l = &d->late[i];
        pl_err err = {0};
        if (late_try(d, l, &err) != PL_OK) {
            i++;
            continue;
        }
        char what[64];
        mark_words(l, what, sizeof what);
        if (l->mark)
            logf_(d, "run %lld: marked %s, %.0f s after the first try", l->run, what,
                  now - l->since);
        else
            logf_(d, "run %lld: entered in the daemon's book, %.0f s after the first try",
                  l->run, now - l->since);
        memmove(l, l + 1, sizeof *l * (size_t)(--d->n_late - i));
    }
}

/* The downhill velocity channel c reads in frame p (m/s). */
static double velocity(const daemon_t *d, const unsigned char *frame, int c)
{
    const pl_channel *ch = &d->info.channel[c];
    size_t ss = pl_sample_format_size(d->info.format);
    return ch->beam_sign * ch->ldv_scale_mps_per_v *
           pl_channel_volts(ch, pl_sample_code(frame + (size_t)c * ss, d->info.format, 0));
}

/* The velocities gathered for the live search, handed over. */
static void live_flush(daemon_t *d)
{
    if (d->live && d->lv_n)
        pl_live_push(d->live, d->lv[0], d->lv[1], d->lv_n, d->lv_wall);
    d->lv_n = 0;
}

/* Both channels' velocities of frame p into v (0 for a channel the
 * source lacks): read once a frame for the motion test and the live
 * search. */
static void frame_velocities(const daemon_t *d, const unsigned char *frame, double v[2])
{
    for (int c = 0; c < 2; c++)
        v[c] = c < d->info.n_channels ? velocity(d, frame, c) : 0;
}

/* A recorded frame's velocities v for the live search; handed over when
 * the block is done (live_flush()). */
static void live_take(daemon_t *d, const double v[2])
{
    if (!d->live || !d->lv[0] || d->info.n_channels < 2)
        return;
    if (d->lv_n == d->block)
        live_flush(d);
    d->lv[0][d->lv_n] = v[0];
    d->lv[1][d->lv_n++] = v[1];
}

/* The live events for the stream clients. */
static void stream_event(void *ctx, const char *line, size_t n);

/* Motion: either channel away from its resting level by more than the
 * threshold.  The resting level follows the signal slowly (1 s time
 * constant) while it is still, so a DC offset or a slow drift is not
 * taken for a release. */
static int moving(daemon_t *d, const double v[2])
{
    int m = 0;
    double a = 1.0 / d->info.sample_rate_hz;
    for (int c = 0; c < 2 && c < d->info.n_channels; c++) {
        if (!d->have_base)
            d->base[c] = v[c];
        if (fabs(v[c] - d->base[c]) > d->opt->threshold_mps)
            m = 1;
    }
    if (!m)
        for (int c = 0; c < 2 && c < d->info.n_channels; c++)
            d->base[c] += a * (v[c] - d->base[c]);
    d->have_base = 1;
    return m;
}

/* --- the live stream --------------------------------------------------- */

/* Queues a line for every stream client that has room; a client without
 * room loses it (counted, then announced by a "G n" line): acquisition
 * never waits on a viewer. */
static void stream_line(daemon_t *d, const char *line, size_t n)
{
    for (int i = 0; i < MAX_CLIENTS; i++) {
        client *c = &d->cl[i];
        if (c->fd < 0 || !c->sbuf)
            continue;
        if (c->s_off > 0 && c->s_off == c->s_len)
            c->s_off = c->s_len = 0;
        if (c->s_dropped && STREAM_BUF - c->s_len >= 32) {
            c->s_len += (size_t)snprintf(c->sbuf + c->s_len, 32, "G %lld\n", c->s_dropped);
            c->s_dropped = 0;
        }
        if (c->s_dropped || STREAM_BUF - c->s_len < n) {
            if (c->s_off > 0) {   /* room at the front: compact */
                memmove(c->sbuf, c->sbuf + c->s_off, c->s_len - c->s_off);
                c->s_len -= c->s_off;
                c->s_off = 0;
            }
            if (c->s_dropped || STREAM_BUF - c->s_len < n) {
                c->s_dropped++;
                continue;
            }
        }
        memcpy(c->sbuf + c->s_len, line, n);
        c->s_len += n;
    }
}

/* The after-run pipeline's words for status and the stream's S line. */
static void describe_pipeline(const daemon_t *d, char *buf, size_t size)
{
    if (d->pipe)
        pl_pipeline_describe(d->pipe, buf, size);
    else
        snprintf(buf, size, "pipeline=off");
}

/* A list of run ids for status: "7,9", "none", or the first ones and
 * "+N" for the rest. */
static void run_list(const long long *ids, size_t n, size_t shown, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    if (n == 0)
        snprintf(buf, size, "none");
    for (size_t i = 0; i < shown && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", ids[i]);
    if (n > shown && k < size)
        snprintf(buf + k, size - k, ",+%zu", n - shown);
}

/* The status words of the daemon's own bookkeeping: runs the full queue
 * turned away since start, runs left without processing or verdict that
 * it will not do, runs whose final state waits for space. */
static void describe_book(const daemon_t *d, char *buf, size_t size)
{
    char unfinished[96], unmarked[96];
    long long ids[LATE_MAX];
    size_t n = 0;
    for (int i = 0; i < d->n_late; i++)
        if (d->late[i].mark)
            ids[n++] = d->late[i].run;
    run_list(d->unfinished, d->n_unfinished,
             d->n_unfinished < UNFINISHED_MAX ? d->n_unfinished : UNFINISHED_MAX,
             unfinished, sizeof unfinished);
    run_list(ids, n, n < 4 ? n : 4, unmarked, sizeof unmarked);
    snprintf(buf, size, "dropped=%lld unfinished=%s unmarked=%s", d->dropped, unfinished,
             unmarked);
}

static void stream_event(void *ctx, const char *line, size_t n)
{
    daemon_t *d = ctx;
    if (d->n_streams > 0)
        stream_line(d, line, n);
}

static void stream_status(daemon_t *d)
{
    char line[512], pipe[200], live[96];
    pl_writer_stats ws;
    pl_writer_get_stats(pl_recorder_writer(d->rec), &ws);
    describe_pipeline(d, pipe, sizeof pipe);
    pl_live_describe(d->live, live, sizeof live);
    int n = snprintf(line, sizeof line, "S state=%s run=%lld frames=%lld overruns=%lld "
                     "last_run=%lld %s %s\n", state_name[d->st],
                     d->st == D_RECORDING ? d->run_id : -1LL,
                     d->st == D_RECORDING ? d->frames : 0LL, ws.overruns, d->last_run, live,
                     pipe);
    stream_line(d, line, (size_t)n);
    d->last_status = mono_s();
}

/* One "D" line for the whole groups of k frames that a block just read
 * completes: when it was read (Unix ms, for the viewer's latency), the
 * first frame of its first group since the source opened, the rate, the
 * decimation k, then for each group the min and max of v_p1 and v_p2
 * (m/s, the daemon's calibrated downhill velocity).  A source returns
 * whatever the card holds, rarely a multiple of k, so the frames of an
 * unfinished group wait in d->sg for the next block: every line then
 * covers exactly groups * k frames and starts where the one before
 * ended, which is what a viewer needs to place it on its time axis. */
static void stream_block(daemon_t *d, const unsigned char *buf, size_t got)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int k = (int)(d->info.sample_rate_hz / 1000);
    if (k < 1)
        k = 1;
    if (d->sg.n == 0)
        d->sg.first = d->src_frames;
    long long first = d->sg.first;
    size_t groups = (d->sg.n + got) / (size_t)k;
    /* 4 numbers of at most 12 bytes a group, and the head */
    size_t cap = 96 + groups * 52;
    char *line = malloc(cap);
    if (!line) {
        d->sg.n = 0;   /* the viewer sees a jump in frames, never a wrong one */
        return;
    }
    size_t n = (size_t)snprintf(line, cap, "D %.1f %lld %g %d %zu",
                                (double)now.tv_sec * 1e3 + (double)now.tv_nsec * 1e-6,
                                first, d->info.sample_rate_hz, k, groups);
    int nch = d->info.n_channels < 2 ? d->info.n_channels : 2;
    for (size_t i = 0; i < got; i++) {
        if (d->sg.n == 0)
            for (int c = 0; c < 2; c++) {
                d->sg.mn[c] = INFINITY;
                d->sg.mx[c] = -INFINITY;
            }
        for (int c = 0; c < nch; c++) {
            double v = velocity(d, buf + i * d->frame_bytes, c);
            d->sg.mn[c] = fmin(d->sg.mn[c], v);
            d->sg.mx[c] = fmax(d->sg.mx[c], v);
        }
        if (++d->sg.n < (size_t)k)
            continue;
        for (int c = 0; c < 2; c++)
            n += (size_t)snprintf(line + n, cap - n, " %.5g %.5g", c < nch ? d->sg.mn[c] : 0.0,
                                  c < nch ? d->sg.mx[c] : 0.0);
        d->sg.n = 0;
        d->sg.first = d->src_frames + (long long)i + 1;
    }
    line[n++] = '\n';
    if (groups > 0)
        stream_line(d, line, n);
    free(line);
}

static void close_source(daemon_t *d)
{
    if (d->src) {
        pl_err ignore = {0};
        d->type->stop(d->src, &ignore);
        d->type->close(d->src);
    }
    d->src = NULL;
    free(d->buf);
    free(d->pre);
    free(d->lv[0]);
    free(d->lv[1]);
    d->buf = d->pre = NULL;
    d->lv[0] = d->lv[1] = NULL;
    d->lv_n = 0;
    d->st = D_IDLE;
}

static pl_status open_source(daemon_t *d, pl_err *err)
{
    if (pl_source_open(d->spec, &d->src, &d->info, err) != PL_OK) {
        d->src = NULL;
        return err->code;
    }
    d->frame_bytes = pl_sample_format_size(d->info.format) * (size_t)d->info.n_channels;
    d->block = (size_t)(d->info.sample_rate_hz / 20) + 1;
    d->pre_cap = (size_t)(d->opt->pretrigger_s * d->info.sample_rate_hz) + 1;
    d->buf = malloc(d->block * d->frame_bytes);
    d->pre = malloc(d->pre_cap * d->frame_bytes);
    if (d->live) {
        d->lv[0] = malloc(d->block * sizeof(double));
        d->lv[1] = malloc(d->block * sizeof(double));
    }
    d->pre_len = d->pre_head = 0;
    d->src_frames = 0;
    d->sg.n = 0;
    d->have_base = 0;
    d->above = d->still = 0;
    d->moved = 0;
    if (!d->buf || !d->pre || (d->live && (!d->lv[0] || !d->lv[1]))) {
        close_source(d);
        return pl_err_set(err, PL_ENOMEM, "daemon: out of memory");
    }
    if (d->type->start(d->src, err) != PL_OK) {
        close_source(d);
        return err->code;
    }
    return PL_OK;
}

/* The live search of the run begun: with the rig's prism, ramp and
 * channels, or off saying why. */
static void live_begin(daemon_t *d)
{
    if (!d->live)
        return;
    pl_online_config oc;
    char off[256];
    pl_err err = {0};
    int on = pl_live_run_config(d->book, d->rc->prism, d->rc->ramp, &d->info, &oc, off,
                                sizeof off);
    if (pl_live_begin(d->live, d->run_id, on ? &oc : NULL, off, &err) != PL_OK)
        logf_(d, "run %lld: no live search: %s", d->run_id, err.msg);
    else if (!on)
        logf_(d, "run %lld: no live search: %s", d->run_id, off);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    d->lv_wall = (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static pl_status begin(daemon_t *d, pl_err *err)
{
    long long pre = (long long)d->pre_len;
    if (pl_recorder_begin(d->rec, &d->info, &d->ro, pre, &d->run_id, err) != PL_OK)
        return err->code;
    pl_writer *w = pl_recorder_writer(d->rec);
    live_begin(d);
    /* the pre-trigger frames, oldest first */
    size_t first = (d->pre_head + d->pre_cap - d->pre_len) % d->pre_cap;
    for (size_t i = 0; i < d->pre_len; i++) {
        size_t k = (first + i) % d->pre_cap;
        if (pl_writer_push(w, d->pre + k * d->frame_bytes, 1, err) != PL_OK)
            return err->code;
        double v[2];
        frame_velocities(d, d->pre + k * d->frame_bytes, v);
        live_take(d, v);
    }
    live_flush(d);
    d->frames = pre;
    d->pre_len = 0;
    d->last_error[0] = '\0';
    d->st = D_RECORDING;
    d->still = 0;
    d->max_frames = d->rc->duration_s > 0
        ? (long long)llround(d->rc->duration_s * d->info.sample_rate_hz) : -1;
    logf_(d, "run %lld: recording (%lld pre-trigger frames)", d->run_id, pre);
    /* in the book, so that a later daemon takes the run up when its
     * pipeline is cut short */
    late_write_now(d, (late_write){.run = d->run_id, .frame = -1});
    return PL_OK;
}

static pl_status finish(daemon_t *d, const char *why, pl_err *err)
{
    live_flush(d);
    if (d->live)
        pl_live_end(d->live, why);
    pl_writer *w = pl_recorder_writer(d->rec);
    pl_writer_stats ws;
    pl_status st = pl_writer_end_run(w, PL_RUN_COMPLETE, err);
    pl_writer_get_stats(w, &ws);
    logf_(d, "run %lld: ended (%s): %lld frames%s", d->run_id, why,
          ws.frames_committed, ws.overruns ? ", OVERRUN" : "");
    /* Its final state could not be stored (a disk still full): kept, and
     * stored as soon as space allows, the run meanwhile 'recording'. */
    late_write l = {.mark = 1};
    if (pl_writer_unmarked(w, &l.run, &l.state, &l.frame))
        late_write_now(d, l);
    char same[512];
    pl_recorder_same_samples(d->rec, d->run_id, same, sizeof same);
    if (same[0])
        logf_(d, "%s", same);
    d->last_run = d->run_id;
    d->run_id = -1;
    close_source(d);
    /* The run is stored whatever its pipeline does: a failure there is
     * logged and shown by status, never returned. */
    pl_err perr = {0};
    if (d->pipe && pl_pipeline_add(d->pipe, d->last_run, &perr) != PL_OK) {
        logf_(d, "%s", perr.msg);
        d->dropped++;
        note_unfinished(d, d->last_run);   /* and the next start finds it */
    }
    return st;
}

static void pre_push(daemon_t *d, const unsigned char *frame)
{
    memcpy(d->pre + d->pre_head * d->frame_bytes, frame, d->frame_bytes);
    d->pre_head = (d->pre_head + 1) % d->pre_cap;
    if (d->pre_len < d->pre_cap)
        d->pre_len++;
}

/* The writer could not store a chunk (a full disk, say): every frame from
 * it on is lost, so the run stops now, marked overrun where its stored
 * frames end, with one log line naming it and the cause kept for status;
 * carrying on would only throw each new block away. */
static pl_status commit_failed(daemon_t *d, const pl_err *cause)
{
    snprintf(d->last_error, sizeof d->last_error, "%.319s", cause->msg);
    logf_(d, "%s: stopping the run", cause->msg);
    pl_err ignore = {0};
    finish(d, "a commit failed", &ignore);
    return PL_OK;
}

/* Reads one block from the source and moves it on. */
static pl_status step(daemon_t *d, pl_err *err)
{
    size_t got = 0;
    pl_status st = d->type->read(d->src, d->buf, d->block, &got, err);
    pl_writer *w = pl_recorder_writer(d->rec);
    struct timespec read_at;
    clock_gettime(CLOCK_REALTIME, &read_at);
    live_flush(d);
    d->lv_wall = (double)read_at.tv_sec + (double)read_at.tv_nsec * 1e-9;
    if (st == PL_EOVERRUN) {
        logf_(d, "%s", err->msg);
        if (d->st == D_RECORDING) {
            /* the frames delivered with the loss came before it */
            pl_err ignore = {0};
            if (got > 0 && pl_writer_push(w, d->buf, got, &ignore) == PL_OK)
                d->frames += (long long)got;
            else if (got > 0 && ignore.code != PL_EOVERRUN)
                return commit_failed(d, &ignore);
            pl_writer_mark_overrun(w, d->frames, &ignore);
            return finish(d, "driver overrun", err);
        }
        close_source(d);
        return PL_OK;
    }
    if (st != PL_OK) {
        if (d->st == D_RECORDING) {
            pl_err keep = *err, ignore = {0};
            finish(d, "source error", &ignore);
            *err = keep;
        } else {
            close_source(d);
        }
        return st;
    }
    if (got == 0) {
        if (d->info.total_frames >= 0) {   /* a finite source has ended */
            if (d->st == D_RECORDING)
                return finish(d, "end of source", err);
            logf_(d, "the source ended before a release");
            close_source(d);
        }
        return PL_OK;
    }
    if (d->n_streams > 0)
        stream_block(d, d->buf, got);
    else
        d->sg.n = 0;   /* no viewer: a later one starts at a fresh group */
    d->src_frames += (long long)got;
    size_t hold = (size_t)(d->opt->still_s * d->info.sample_rate_hz);
    for (size_t i = 0; i < got; i++) {
        const unsigned char *f = d->buf + i * d->frame_bytes;
        double v[2];
        frame_velocities(d, f, v);
        int m = moving(d, v);
        if (d->st == D_ARMED) {
            pre_push(d, f);
            d->above = m ? d->above + 1 : 0;
            if (d->above * 1000 >= (long)d->info.sample_rate_hz) {   /* 1 ms */
                logf_(d, "release detected");
                if (begin(d, err) != PL_OK)
                    return err->code;
                d->moved = 1;
                d->above = 0;
            }
            continue;
        }
        if (d->st != D_RECORDING)
            break;
        st = pl_writer_push(w, f, 1, err);
        if (st == PL_EOVERRUN)
            return finish(d, "writer overrun", err);
        if (st != PL_OK)
            return commit_failed(d, err);
        d->frames++;
        live_take(d, v);
        /* Motion counts when it lasts 1 ms (a speckle drop-out of the LDV
         * is a spike, not a prism); any departure resets the stillness. */
        if (m) {
            d->above++;
            if (d->above * 1000 >= (long)d->info.sample_rate_hz)
                d->moved = 1;
            d->still = 0;
        } else {
            d->above = 0;
            if (d->moved && ++d->still >= (long)hold && hold > 0)
                return finish(d, "still after motion", err);
        }
        if (d->max_frames >= 0 && d->frames >= d->max_frames)
            return finish(d, "duration", err);
    }
    live_flush(d);
    return PL_OK;
}

static void reply(client *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->out, sizeof c->out - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof c->out - 2)
        n = (int)sizeof c->out - 2;
    c->out[n++] = '\n';
    c->out_len = (size_t)n;
    c->out_off = 0;
}

static void command(daemon_t *d, client *c, const char *cmd)
{
    pl_err err = {0};
    if (!strcmp(cmd, "status")) {
        char pipe[200];
        describe_pipeline(d, pipe, sizeof pipe);
        pl_writer_stats ws;
        pl_writer_get_stats(pl_recorder_writer(d->rec), &ws);
        /* A failed commit shows at once (overruns=1, error=...), before
         * the loop has stopped the run; the cause stays until the next. */
        const char *why = d->last_error[0] ? d->last_error
                          : ws.failed ? "a commit failed" : NULL;
        char book[240], live[96];
        describe_book(d, book, sizeof book);
        pl_live_describe(d->live, live, sizeof live);
        reply(c, "ok state=%s run=%lld frames=%lld ring=%zu/%zu overruns=%lld last_run=%lld "
              "%s %s %s%s%s", state_name[d->st], d->st == D_RECORDING ? d->run_id : -1LL,
              d->st == D_RECORDING ? ws.frames_committed : 0LL, ws.ring_fill,
              ws.ring_capacity, ws.overruns, d->last_run, live, pipe, book,
              why ? " error=" : "", why ? why : "");
    } else if (!strcmp(cmd, "arm")) {
        if (d->st != D_IDLE) {
            reply(c, "error already %s", state_name[d->st]);
            return;
        }
        if (open_source(d, &err) != PL_OK) {
            reply(c, "error %s", err.msg);
            return;
        }
        d->st = D_ARMED;
        logf_(d, "armed: waiting for the release (pre-trigger %.2f s, threshold %g m/s)",
              d->opt->pretrigger_s, d->opt->threshold_mps);
        reply(c, "ok armed");
    } else if (!strcmp(cmd, "start")) {
        if (d->st == D_RECORDING) {
            reply(c, "error already recording run %lld", d->run_id);
            return;
        }
        if (d->st == D_IDLE && open_source(d, &err) != PL_OK) {
            reply(c, "error %s", err.msg);
            return;
        }
        if (begin(d, &err) != PL_OK) {
            close_source(d);
            reply(c, "error %s", err.msg);
            return;
        }
        reply(c, "ok recording run=%lld", d->run_id);
    } else if (!strcmp(cmd, "stop")) {
        if (d->st == D_RECORDING) {
            long long id = d->run_id;
            if (finish(d, "stop", &err) != PL_OK)
                reply(c, "error %s", err.msg);
            else
                reply(c, "ok stopped run=%lld", id);
        } else {
            close_source(d);
            reply(c, "ok idle");
        }
    } else if (!strcmp(cmd, "stream")) {
        if (d->n_streams >= MAX_STREAMS) {
            reply(c, "error stream: %d viewers already stream from this daemon", MAX_STREAMS);
            return;
        }
        if (!c->sbuf && !(c->sbuf = malloc(STREAM_BUF))) {
            reply(c, "error stream: out of memory");
            return;
        }
        c->s_len = c->s_off = 0;
        c->s_progress = mono_s();
        d->n_streams++;
        static const char hello[] = "ok streaming\n";
        memcpy(c->sbuf, hello, sizeof hello - 1);
        c->s_len = sizeof hello - 1;
        stream_status(d);
    } else if (!strcmp(cmd, "quit")) {
        /* The socket's group may drive the rig; only its owner may end it. */
        if (c->uid != geteuid()) {
            reply(c, "error quit: only user %ld may stop this daemon (you are %ld)",
                  (long)geteuid(), (long)c->uid);
            return;
        }
        d->quit = 1;
        reply(c, "ok quitting");
    } else {
        reply(c, "error unknown command '%.60s' (arm, start, stop, status, stream, quit)", cmd);
    }
}

int pl_daemon_take_line(char *in, size_t *len, size_t size, const char *data,
                        size_t n, char *line, size_t line_size)
{
    if (*len + n > size)
        return -1;
    memcpy(in + *len, data, n);
    *len += n;
    char *nl = memchr(in, '\n', *len);
    if (!nl)
        return *len >= size ? -1 : 0;
    size_t k = (size_t)(nl - in);
    if (k >= line_size)
        return -1;
    memcpy(line, in, k);
    line[k] = '\0';
    line[strcspn(line, "\r")] = '\0';
    /* one command a connection: what follows the line is not kept */
    *len = 0;
    return 1;
}

/* What is at path before the daemon binds: nothing, a stale socket (which
 * it removes), or something it must not touch. */
static pl_status clear_socket_path(const char *path, const struct sockaddr_un *a,
                                   pl_err *err)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        if (errno == ENOENT)
            return PL_OK;
        return pl_err_set(err, PL_EIO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISSOCK(sb.st_mode))
        return pl_err_set(err, PL_EEXIST, "%s: exists and is not a socket (%s): "
                          "refusing to replace it; give another --socket",
                          path, S_ISLNK(sb.st_mode) ? "a symbolic link"
                                                    : S_ISDIR(sb.st_mode) ? "a folder"
                                                                          : "a file");
    /* A socket someone answers on belongs to a live daemon. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return pl_err_set(err, PL_EIO, "socket: %s", strerror(errno));
    int live = connect(fd, (const struct sockaddr *)a, sizeof *a) == 0;
    int e = errno;
    close(fd);
    if (live)
        return pl_err_set(err, PL_ESTATE, "%s: a daemon answers on this socket: "
                          "end it first with 'prismlab acquire quit --socket %s'",
                          path, path);
    if (e != ECONNREFUSED)
        return pl_err_set(err, PL_EIO, "%s: cannot tell whether the socket is "
                          "stale (%s): refusing to replace it", path, strerror(e));
    if (unlink(path) != 0)
        return pl_err_set(err, PL_EIO, "%s: removing the stale socket: %s",
                          path, strerror(errno));
    return PL_OK;
}

static int listen_on(const char *path, pl_err *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        pl_err_set(err, PL_EINVAL, "%s: socket path too long (at most %zu "
                   "bytes)", path, sizeof a.sun_path - 1);
        return -1;
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (clear_socket_path(path, &a, err) != PL_OK)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        pl_err_set(err, PL_EIO, "socket: %s", strerror(errno));
        return -1;
    }
    /* The socket is born with mode 0660 (bind applies the umask), so it is
     * never open to others, and no chmod by name (which would follow a
     * symlink put there meanwhile) is needed.  The umask is the process's:
     * nothing else runs yet (the writer thread starts with a run). */
    mode_t old = umask(0117);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    umask(old);
    if (rc != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        pl_err_set(err, PL_EIO, "%s: %s", path, strerror(rc != 0 ? e : errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void drop(daemon_t *d, client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->sbuf) {
        free(c->sbuf);
        c->sbuf = NULL;
        d->n_streams--;
    }
}

/* A stream client: what it sends is ignored; it takes what it can of its
 * queue; one that takes nothing for STREAM_STALL_S is dropped (its viewer
 * is gone or frozen). */
#define STREAM_STALL_S 10.0
static void serve_stream(daemon_t *d, client *c, double now)
{
    char got[256];
    ssize_t r = read(c->fd, got, sizeof got);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        drop(d, c);
        return;
    }
    if (c->s_off < c->s_len) {
        ssize_t w = send(c->fd, c->sbuf + c->s_off, c->s_len - c->s_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            c->s_off += (size_t)w;
            c->s_progress = now;
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            drop(d, c);
            return;
        }
    } else {
        c->s_progress = now;
    }
    if (now - c->s_progress > STREAM_STALL_S)
        drop(d, c);
}

/* Moves what one command client has sent or is owed, without waiting. */
static void serve_one(daemon_t *d, client *c, double now)
{
    if (c->sbuf) {
        serve_stream(d, c, now);
        return;
    }
    if (c->out_len == 0) {
        char got[LINE_MAX_], line[LINE_MAX_];
        ssize_t r = read(c->fd, got, sizeof got);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            drop(d, c);
            return;
        }
        int whole = pl_daemon_take_line(c->in, &c->in_len, sizeof c->in, got,
                                        r > 0 ? (size_t)r : 0, line, sizeof line);
        if (whole > 0)
            command(d, c, line);
        if (c->sbuf)
            return;   /* it asked to stream */
        else if (whole < 0)
            reply(c, "error a command is one line of at most %d bytes", LINE_MAX_ - 2);
    }
    if (c->out_len > 0) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0)
            c->out_off += (size_t)w;
        if (c->out_off >= c->out_len ||
            (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            drop(d, c);
            return;
        }
    }
    /* A whole-command deadline from accept, not an inactivity one: a
     * client trickling a byte at a time is cut off all the same. */
    if (now - c->since > CLIENT_TIMEOUT_S)
        drop(d, c);   /* too slow: a command and its reply take milliseconds */
}

/* A slot for a new connection: a free one, else the one held longest by
 * a client that has not sent a whole line (no reply owed, not
 * streaming), which is dropped.  Those that have gone away are reaped
 * first.  NULL when every slot streams or is owed a reply. */
static client *free_slot(daemon_t *d, double now)
{
    for (int pass = 0; pass < 2; pass++) {
        client *oldest = NULL;
        for (int i = 0; i < MAX_CLIENTS; i++) {
            client *c = &d->cl[i];
            if (c->fd < 0)
                return c;
            if (c->sbuf || c->out_len > 0)
                continue;
            if (pass == 0) {
                serve_one(d, c, now);   /* reaps one that closed */
                if (c->fd < 0)
                    return c;
            } else if (!oldest || c->since < oldest->since) {
                oldest = c;
            }
        }
        if (oldest) {
            drop(d, oldest);
            return oldest;
        }
    }
    return NULL;
}

static void accept_clients(daemon_t *d, int lfd)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        double now = mono_s();
        struct ucred cred;
        socklen_t len = sizeof cred;
        client *c = NULL;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
            !(c = free_slot(d, now))) {
            close(fd);   /* the client sees the connection closed */
            continue;
        }
        *c = (client){.fd = fd, .uid = cred.uid, .since = now};
        /* A command sent with the connect is answered now, before any
         * later connection may claim the slot. */
        serve_one(d, c, now);
    }
}

/* One pass over the sockets, each read and write non-blocking. */
static void serve_clients(daemon_t *d)
{
    double now = mono_s();
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (d->cl[i].fd >= 0)
            serve_one(d, &d->cl[i], now);
}

static void log_to_daemon(void *ctx, const char *line)
{
    logf_(ctx, "%s", line);
}

/* The pipeline's outcome for a run, in the book: a run with an answer
 * (done, or a step failed and the log said what to do) is never taken
 * up again; one the daemon's end cut short ("stopped") is. */
static void pipeline_ended(void *ctx, long long run, const char *how)
{
    daemon_t *d = ctx;
    pl_err err = {0};
    if (strcmp(how, "stopped") && pl_daemon_run_set_outcome(d->book, run, how, &err) != PL_OK)
        logf_(d, "run %lld: its pipeline's outcome (%s) could not be stored: %s; the next "
              "start takes the run up again", run, how, err.msg);
}

/* Runs a recorder left 'recording' (it died, or its daemon could not
 * mark them on a full disk): this daemon holds the recorder lock, so
 * none records any more; marked 'interrupted', their frames as stored.
 * On a disk too full for that, the daemon starts all the same and marks
 * them as soon as space allows. */
static pl_status mark_left_recording(daemon_t *d, pl_err *err)
{
    long long n = 0, ids[LATE_MAX];
    pl_err e = {0};
    if (pl_run_mark_interrupted(d->book, &n, &e) == PL_OK) {
        if (n)
            logf_(d, "marked %lld unfinished run%s interrupted", n, n == 1 ? "" : "s");
        return PL_OK;
    }
    size_t left = 0;
    if (pl_daemon_run_left_recording(d->book, ids, LATE_MAX, &left, err) != PL_OK)
        return err->code;
    for (size_t i = 0; i < left && i < LATE_MAX; i++)
        late_write_now(d, (late_write){.run = ids[i], .mark = 1,
                                       .state = PL_RUN_INTERRUPTED, .frame = -1});
    if (left > LATE_MAX)
        logf_(d, "%zu more runs left recording wait for the next start", left - LATE_MAX);
    return PL_OK;
}

/* The daemon's runs that an earlier daemon left without processing or
 * verdict (killed while its pipeline worked, or its queue was full):
 * queued again with [pipeline] on, oldest first, from the step they
 * lack; named in the log and status with it off.  A run a live command
 * works on is left to it. */
static void take_up_unfinished(daemon_t *d)
{
    pl_daemon_unfinished u[PL_DAEMON_RUN_LOOK_BACK];
    int validation = !d->pipe || (d->rc->after_run & PL_AFTER_VALIDATE);
    size_t n = 0;
    pl_err err = {0};
    if (pl_daemon_run_unfinished(d->book, validation, u, PL_DAEMON_RUN_LOOK_BACK, &n,
                                 &err) != PL_OK) {
        logf_(d, "cannot tell which runs an earlier daemon left unfinished: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n && i < PL_DAEMON_RUN_LOOK_BACK; i++) {
        long long run = u[i].run_id;
        const char *lacks = u[i].processed ? "validated" : "processed";
        pl_work w;
        char words[200];
        if (pl_work_get(d->book, run, &w, &err) == PL_OK) {
            pl_work_words(&w, words, sizeof words);
            logf_(d, "run %lld: never %s by the daemon, and %s: left to it", run, lacks, words);
            continue;
        }
        if (!d->pipe) {
            note_unfinished(d, run);
            logf_(d, "run %lld: recorded but never %s, and [pipeline] is off: prismlab %s %lld",
                  run, lacks, u[i].processed ? "validate" : "process", run);
            continue;
        }
        if (pl_pipeline_add_from(d->pipe, run, u[i].processed, &err) != PL_OK) {
            note_unfinished(d, run);
            logf_(d, "%s", err.msg);
            continue;
        }
        logf_(d, "run %lld: queued again: recorded but never %s (the daemon stopped before "
              "its pipeline finished)", run, lacks);
    }
}

/* [pipeline] after_run: the children that process and validate each run,
 * and one line saying what validation will take for the release angle. */
static pl_status open_pipeline(daemon_t *d, pl_err *err)
{
    const pl_rigconf *rc = d->rc;
    if (!rc->after_run)
        return PL_OK;
    if (pl_pipeline_create(&d->pipe, rc->db, rc->after_run, log_to_daemon, d, err) != PL_OK ||
        pl_pipeline_set_fit(d->pipe, rc->fit, err) != PL_OK)
        return err->code;
    pl_pipeline_set_on_end(d->pipe, pipeline_ended, d);
    const char *fit = rc->fit[0] ? rc->fit : PL_FIT_DEFAULT;
    if (!(rc->after_run & PL_AFTER_VALIDATE))
        logf_(d, "pipeline: each run processed as soon as it stops");
    else if (isnan(rc->lambda0_deg))
        logf_(d, "pipeline: each run processed and validated as soon as it stops; no "
              "[run] lambda0_deg: %s fitted from the lambda0 the source records (the "
              "simulator does), else from 90 %% of alpha + beta", fit);
    else
        logf_(d, "pipeline: each run processed and validated as soon as it stops; "
              "%s fitted from the recorded [run] lambda0_deg = %g, which is compared "
              "as well", fit, rc->lambda0_deg);
    return PL_OK;
}

/* Nothing to acquire: sleeps until a client, the pipeline or the live
 * search stirs, or 100 ms. */
static void idle_wait(daemon_t *d, int lfd)
{
    struct pollfd p[3 + MAX_CLIENTS];
    nfds_t n = 0;
    const client *cl = d->cl;
    p[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
    if (pl_pipeline_fd(d->pipe) >= 0)   /* a step's output, or its end */
        p[n++] = (struct pollfd){.fd = pl_pipeline_fd(d->pipe), .events = POLLIN};
    if (d->live)   /* a run's last look, its events */
        p[n++] = (struct pollfd){.fd = pl_live_fd(d->live), .events = POLLIN};
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (cl[i].fd >= 0)
            p[n++] = (struct pollfd){.fd = cl[i].fd,
                                     .events = cl[i].out_len ||
                                               (cl[i].sbuf && cl[i].s_off < cl[i].s_len)
                                               ? POLLOUT : POLLIN};
    poll(p, n, 100);
}

/* [live] search: the impact search's thread, or one line saying why the
 * daemon goes without it (it records all the same). */
static void open_live(daemon_t *d)
{
    if (!d->rc->live.search) {
        logf_(d, "live: off ([live] search = off): impacts appear when each run is processed");
        return;
    }
    pl_live_options lo;
    pl_err err = {0};
    pl_live_options_default(&lo);
    lo.cpu_share = d->rc->live.cpu_share;
    if (pl_live_create(&d->live, &lo, &err) != PL_OK) {
        d->live = NULL;
        logf_(d, "live: off: %s", err.msg);
        return;
    }
    logf_(d, "live: impacts searched while recording, at most %.0f %% of a core",
          100 * lo.cpu_share);
}

pl_status pl_daemon_run(const pl_rigconf *rc, const pl_source_spec *source,
                        const pl_daemon_options *opt, pl_err *err)
{
    daemon_t d = {.rc = rc, .spec = source, .type = source->type, .opt = opt,
                  .run_id = -1, .last_run = -1};
    pl_record_options_init(&d.ro);
    d.ro.prism = rc->prism[0] ? rc->prism : NULL;
    d.ro.ramp = rc->ramp[0] ? rc->ramp : NULL;
    d.ro.experiment = rc->experiment[0] ? rc->experiment : NULL;
    d.ro.lambda0_rad = isnan(rc->lambda0_deg) ? NAN : rc->lambda0_deg * M_PI / 180;
    d.ro.writer.sync_full = rc->sync_full;
    d.ro.writer.commit_interval_s = rc->commit_interval_s;
    d.ro.writer.block_when_full = 0;
    if (pl_recorder_open_unmarked(&d.rec, rc->db, &d.ro.writer, err) != PL_OK)
        return err->code;
    pl_recorder_set_daemon(d.rec, opt->socket_path);
    if (opt->notice && opt->notice[0])
        logf_(&d, "%s", opt->notice);
    int lfd = -1;
    if (pl_daemon_run_open(&d.book, rc->db, rc->sync_full ? PL_STORE_SYNC_FULL : 0,
                           err) == PL_OK &&
        mark_left_recording(&d, err) == PL_OK && open_pipeline(&d, err) == PL_OK)
        lfd = listen_on(opt->socket_path, err);
    if (lfd < 0) {
        pl_pipeline_destroy(d.pipe);
        pl_store_close(d.book);
        pl_recorder_close(d.rec);
        return err->code;
    }
    take_up_unfinished(&d);
    open_live(&d);
    struct stat mine = {0};
    lstat(opt->socket_path, &mine);
    logf_(&d, "listening on %s (source %s, database %s)", opt->socket_path,
          rc->source, rc->db);
    pl_status st = PL_OK;
    client *cl = d.cl;
    for (int i = 0; i < MAX_CLIENTS; i++)
        cl[i].fd = -1;
    while (!d.quit && !(opt->stop && *opt->stop)) {
        if (d.st == D_IDLE) {
            idle_wait(&d, lfd);
        } else if ((st = step(&d, err)) != PL_OK) {
            logf_(&d, "error: %s", err->msg);
            st = PL_OK;   /* the daemon survives a bad run; the log says why */
        }
        pl_pipeline_poll(d.pipe);
        if (d.live)
            pl_live_drain(d.live, stream_event, &d);
        late_retry(&d);
        accept_clients(&d, lfd);
        if (d.n_streams > 0 && mono_s() - d.last_status >= 0.5)
            stream_status(&d);
        serve_clients(&d);
    }
    for (int i = 0; i < MAX_CLIENTS; i++) {
        if (cl[i].fd >= 0 && cl[i].out_len)   /* "ok quitting", best effort */
            send(cl[i].fd, cl[i].out + cl[i].out_off, cl[i].out_len - cl[i].out_off,
                 MSG_NOSIGNAL | MSG_DONTWAIT);
        drop(&d, &cl[i]);
    }
    if (d.st == D_RECORDING) {
        pl_err e2 = {0};
        finish(&d, "shutdown", &e2);
    }
    close_source(&d);
    close(lfd);
    pl_live_destroy(d.live);
    pl_pipeline_destroy(d.pipe);
    /* one last try; what still fails is left to the next start (a run
     * left 'recording' is marked then, as its stored frames say) */
    d.late_tried = 0;
    late_retry(&d);
    for (int i = 0; i < d.n_late; i++)
        logf_(&d, "run %lld: %s", d.late[i].run, d.late[i].mark
              ? "its state still not stored at the daemon's end: the next start marks it "
                "interrupted, its frames as stored"
              : "still not entered in the daemon's book at its end: no later daemon takes "
                "it up");
    pl_store_close(d.book);
    /* the lock before the socket: once the socket is gone (what `acquire
     * quit` waits for), a new daemon may take the database */
    pl_recorder_close(d.rec);
    /* only the socket this daemon made: not what another put there since */
    struct stat now;
    if (lstat(opt->socket_path, &now) == 0 && S_ISSOCK(now.st_mode) &&
        now.st_ino == mine.st_ino && now.st_dev == mine.st_dev)
        unlink(opt->socket_path);
    logf_(&d, "stopped");
    return st;
}

/* A socket this user may not use: a daemon may well be there, so say
 * whose it is and what gives access rather than "no daemon answers". */
static pl_status refused_socket(const char *path, pl_err *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return pl_err_set(err, PL_EIO, "permission denied on %s: run the "
                          "command as the daemon's user", path);
    return pl_err_set(err, PL_EIO, "permission denied on %s (owner uid %ld, "
                      "group gid %ld, mode %03o): run the command as the "
                      "daemon's user or a member of its group, or start the "
                      "daemon with a --socket this user may use", path,
                      (long)sb.st_uid, (long)sb.st_gid,
                      (unsigned)(sb.st_mode & 0777));
}

pl_status pl_daemon_connect(const char *path, int *out, pl_err *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return pl_err_set(err, PL_EIO, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        if (e == EACCES || e == EPERM)
            return refused_socket(path, err);
        return pl_err_set(err, PL_EIO, "%s: no daemon answers (%s): start one "
                          "with prismlab acquire daemon --config rig.ini", path,
                          strerror(e));
    }
    *out = fd;
    return PL_OK;
}

pl_status pl_daemon_command(const char *path, const char *cmd, char *out,
                            size_t size, pl_err *err)
{
    int fd;
    if (pl_daemon_connect(path, &fd, err) != PL_OK)
        return err->code;
    char line[160];
    int n = snprintf(line, sizeof line, "%s\n", cmd);
    if (write(fd, line, (size_t)n) != n) {
        close(fd);
        return pl_err_set(err, PL_EIO, "%s: write: %s", path, strerror(errno));
    }
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < size - 1 && poll(&p, 1, 5000) > 0) {
        ssize_t r = read(fd, out + got, size - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(out, '\n', got))
            break;
    }
    close(fd);
    out[got] = '\0';
    out[strcspn(out, "\r\n")] = '\0';
    if (got == 0)
        return pl_err_set(err, PL_EIO, "%s: the daemon did not answer", path);
    return PL_OK;
}

pl_status pl_daemon_wait_gone(const char *path, double timeout_s, pl_err *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    double until = mono_s() + timeout_s;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return pl_err_set(err, PL_EIO, "socket: %s", strerror(errno));
        int live = connect(fd, (const struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (!live)
            return PL_OK;
        if (mono_s() > until)
            return pl_err_set(err, PL_ESTATE, "%s: the daemon said it quits but "
                              "still answers after %g s (it ends its run and its "
                              "pipeline first)", path, timeout_s);
        struct timespec nap = {0, 50000000L};
        nanosleep(&nap, NULL);
    }
}
