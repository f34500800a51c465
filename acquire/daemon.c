/* acquire/daemon.c - the recording daemon.  See daemon.h. */
#include "acquire/daemon.h"

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
#include <unistd.h>

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
} daemon_t;

static void logf_(daemon_t *d, const char *fmt, ...)
{
    if (!d->opt->log)
        return;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    d->opt->log(d->opt->log_ctx, line);
}

/* One raw sample as a number, whatever the stored format. */
static double raw_at(const unsigned char *p, pl_sample_format f)
{
    switch (f) {
    case PL_FMT_S16: { int16_t v; memcpy(&v, p, 2); return v; }
    case PL_FMT_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case PL_FMT_S24_32:
    case PL_FMT_S32: { int32_t v; memcpy(&v, p, 4); return v; }
    case PL_FMT_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case PL_FMT_F32: { float v; memcpy(&v, p, 4); return v; }
    case PL_FMT_F64: { double v; memcpy(&v, p, 8); return v; }
    default: return 0;
    }
}

/* The downhill velocity channel c reads in frame p (m/s). */
static double velocity(const daemon_t *d, const unsigned char *frame, int c)
{
    const pl_channel *ch = &d->info.channel[c];
    size_t ss = pl_sample_format_size(d->info.format);
    return ch->beam_sign * ch->ldv_scale_mps_per_v *
           pl_channel_volts(ch, raw_at(frame + (size_t)c * ss, d->info.format));
}

/* Motion: either channel away from its resting level by more than the
 * threshold.  The resting level follows the signal slowly (1 s time
 * constant) while it is still, so a DC offset or a slow drift is not
 * taken for a release. */
static int moving(daemon_t *d, const unsigned char *frame)
{
    int m = 0;
    double a = 1.0 / d->info.sample_rate_hz;
    for (int c = 0; c < 2 && c < d->info.n_channels; c++) {
        double v = velocity(d, frame, c);
        if (!d->have_base)
            d->base[c] = v;
        if (fabs(v - d->base[c]) > d->opt->threshold_mps)
            m = 1;
    }
    if (!m)
        for (int c = 0; c < 2 && c < d->info.n_channels; c++)
            d->base[c] += a * (velocity(d, frame, c) - d->base[c]);
    d->have_base = 1;
    return m;
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
    d->buf = d->pre = NULL;
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
    d->pre_len = d->pre_head = 0;
    d->have_base = 0;
    d->above = d->still = 0;
    d->moved = 0;
    if (!d->buf || !d->pre) {
        close_source(d);
        return pl_err_set(err, PL_ENOMEM, "daemon: out of memory");
    }
    if (d->type->start(d->src, err) != PL_OK) {
        close_source(d);
        return err->code;
    }
    return PL_OK;
}

static pl_status begin(daemon_t *d, pl_err *err)
{
    long long pre = (long long)d->pre_len;
    if (pl_recorder_begin(d->rec, &d->info, &d->ro, pre, &d->run_id, err) != PL_OK)
        return err->code;
    pl_writer *w = pl_recorder_writer(d->rec);
    /* the pre-trigger frames, oldest first */
    size_t first = (d->pre_head + d->pre_cap - d->pre_len) % d->pre_cap;
    for (size_t i = 0; i < d->pre_len; i++) {
        size_t k = (first + i) % d->pre_cap;
        if (pl_writer_push(w, d->pre + k * d->frame_bytes, 1, err) != PL_OK)
            return err->code;
    }
    d->frames = pre;
    d->pre_len = 0;
    d->st = D_RECORDING;
    d->still = 0;
    d->max_frames = d->rc->duration_s > 0
        ? (long long)llround(d->rc->duration_s * d->info.sample_rate_hz) : -1;
    logf_(d, "run %lld: recording (%lld pre-trigger frames)", d->run_id, pre);
    return PL_OK;
}

static pl_status finish(daemon_t *d, const char *why, pl_err *err)
{
    pl_writer *w = pl_recorder_writer(d->rec);
    pl_writer_stats ws;
    pl_status st = pl_writer_end_run(w, PL_RUN_COMPLETE, err);
    pl_writer_get_stats(w, &ws);
    logf_(d, "run %lld: ended (%s): %lld frames%s", d->run_id, why,
          ws.frames_committed, ws.overruns ? ", OVERRUN" : "");
    d->last_run = d->run_id;
    d->run_id = -1;
    close_source(d);
    return st;
}

static void pre_push(daemon_t *d, const unsigned char *frame)
{
    memcpy(d->pre + d->pre_head * d->frame_bytes, frame, d->frame_bytes);
    d->pre_head = (d->pre_head + 1) % d->pre_cap;
    if (d->pre_len < d->pre_cap)
        d->pre_len++;
}

/* Reads one block from the source and moves it on. */
static pl_status step(daemon_t *d, pl_err *err)
{
    size_t got = 0;
    pl_status st = d->type->read(d->src, d->buf, d->block, &got, err);
    pl_writer *w = pl_recorder_writer(d->rec);
    if (st == PL_EOVERRUN) {
        logf_(d, "%s", err->msg);
        if (d->st == D_RECORDING) {
            /* the frames delivered with the loss came before it */
            pl_err ignore = {0};
            if (got > 0 && pl_writer_push(w, d->buf, got, &ignore) == PL_OK)
                d->frames += (long long)got;
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
    size_t hold = (size_t)(d->opt->still_s * d->info.sample_rate_hz);
    for (size_t i = 0; i < got; i++) {
        const unsigned char *f = d->buf + i * d->frame_bytes;
        int m = moving(d, f);
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
            return st;
        d->frames++;
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
    return PL_OK;
}

static void reply(int fd, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
}

static void command(daemon_t *d, int fd, const char *cmd)
{
    pl_err err = {0};
    if (!strcmp(cmd, "status")) {
        pl_writer_stats ws;
        pl_writer_get_stats(pl_recorder_writer(d->rec), &ws);
        reply(fd, "ok state=%s run=%lld frames=%lld ring=%zu/%zu overruns=%lld last_run=%lld",
              state_name[d->st], d->st == D_RECORDING ? d->run_id : -1LL,
              d->st == D_RECORDING ? ws.frames_committed : 0LL, ws.ring_fill,
              ws.ring_capacity, ws.overruns, d->last_run);
    } else if (!strcmp(cmd, "arm")) {
        if (d->st != D_IDLE) {
            reply(fd, "error already %s", state_name[d->st]);
            return;
        }
        if (open_source(d, &err) != PL_OK) {
            reply(fd, "error %s", err.msg);
            return;
        }
        d->st = D_ARMED;
        logf_(d, "armed: waiting for the release (pre-trigger %.2f s, threshold %g m/s)",
              d->opt->pretrigger_s, d->opt->threshold_mps);
        reply(fd, "ok armed");
    } else if (!strcmp(cmd, "start")) {
        if (d->st == D_RECORDING) {
            reply(fd, "error already recording run %lld", d->run_id);
            return;
        }
        if (d->st == D_IDLE && open_source(d, &err) != PL_OK) {
            reply(fd, "error %s", err.msg);
            return;
        }
        if (begin(d, &err) != PL_OK) {
            close_source(d);
            reply(fd, "error %s", err.msg);
            return;
        }
        reply(fd, "ok recording run=%lld", d->run_id);
    } else if (!strcmp(cmd, "stop")) {
        if (d->st == D_RECORDING) {
            long long id = d->run_id;
            if (finish(d, "stop", &err) != PL_OK)
                reply(fd, "error %s", err.msg);
            else
                reply(fd, "ok stopped run=%lld", id);
        } else {
            close_source(d);
            reply(fd, "ok idle");
        }
    } else if (!strcmp(cmd, "quit")) {
        d->quit = 1;
        reply(fd, "ok quitting");
    } else {
        reply(fd, "error unknown command '%s' (arm, start, stop, status, quit)", cmd);
    }
}

static int listen_on(const char *path, pl_err *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        pl_err_set(err, PL_EINVAL, "%s: socket path too long", path);
        return -1;
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        pl_err_set(err, PL_EIO, "socket: %s", strerror(errno));
        return -1;
    }
    unlink(path);   /* we hold the recorder lock: a leftover socket is stale */
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || chmod(path, 0660) != 0 ||
        listen(fd, 8) != 0) {
        pl_err_set(err, PL_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void serve(daemon_t *d, int lfd)
{
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
            return;
        char line[128];
        size_t n = 0;
        struct pollfd p = {.fd = c, .events = POLLIN};
        /* a client sends one short line at once; wait briefly for it */
        while (n < sizeof line - 1 && poll(&p, 1, 200) > 0) {
            ssize_t r = read(c, line + n, sizeof line - 1 - n);
            if (r <= 0)
                break;
            n += (size_t)r;
            if (memchr(line, '\n', n))
                break;
        }
        line[n] = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        command(d, c, line);
        close(c);
    }
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
    long long interrupted = 0;
    if (pl_recorder_open(&d.rec, rc->db, &d.ro.writer, &interrupted, err) != PL_OK)
        return err->code;
    if (interrupted)
        logf_(&d, "marked %lld unfinished run%s interrupted", interrupted,
              interrupted == 1 ? "" : "s");
    int lfd = listen_on(opt->socket_path, err);
    if (lfd < 0) {
        pl_recorder_close(d.rec);
        return err->code;
    }
    logf_(&d, "listening on %s (source %s, database %s)", opt->socket_path,
          rc->source, rc->db);
    pl_status st = PL_OK;
    while (!d.quit && !(opt->stop && *opt->stop)) {
        if (d.st == D_IDLE) {
            struct pollfd p = {.fd = lfd, .events = POLLIN};
            poll(&p, 1, 100);
        } else if ((st = step(&d, err)) != PL_OK) {
            logf_(&d, "error: %s", err->msg);
            st = PL_OK;   /* the daemon survives a bad run; the log says why */
        }
        serve(&d, lfd);
    }
    if (d.st == D_RECORDING) {
        pl_err e2 = {0};
        finish(&d, "shutdown", &e2);
    }
    close_source(&d);
    close(lfd);
    unlink(opt->socket_path);
    pl_recorder_close(d.rec);
    logf_(&d, "stopped");
    return st;
}

pl_status pl_daemon_command(const char *path, const char *cmd, char *out,
                            size_t size, pl_err *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return pl_err_set(err, PL_EIO, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        return pl_err_set(err, PL_EIO, "%s: no daemon answers (%s): start one "
                          "with prismlab acquire daemon --config rig.ini", path,
                          strerror(e));
    }
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
