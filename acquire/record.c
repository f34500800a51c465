/* acquire/record.c - one live recording under the recorder lock.  See
 * record.h. */
#include "acquire/record.h"

#include "db/catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct pl_recorder {
    pl_writer *w;
    int lock_fd;
};

void pl_record_options_init(pl_record_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->lambda0_rad = NAN;
    opt->writer.commit_interval_s = 0.1;
    opt->pump.max_frames = -1;
}

/* The lock file's one line: who holds it, for the message of whoever is
 * refused ("pid=123" and, for a daemon, " daemon socket=PATH").  Best
 * effort: the lock itself is the flock, not this text. */
static void write_holder(int fd, const char *what)
{
    char line[1200];
    int n = snprintf(line, sizeof line, "pid=%ld%s%s\n", (long)getpid(),
                     what ? " " : "", what ? what : "");
    if (n > 0 && ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) != n)
        (void)ftruncate(fd, 0);
}

/* PL_ESTATE saying who holds the lock and how to end it: a daemon is
 * ended by its quit command (its stop only ends a run), a recording in
 * the foreground by Ctrl-C or SIGTERM, both closing their run cleanly. */
static pl_status refuse_held(const char *lock, const char *holder, pl_err *err)
{
    long pid = 0;
    const char *sock = strstr(holder, " daemon socket=");
    sscanf(holder, "pid=%ld", &pid);
    if (sock && pid > 0) {
        sock += strlen(" daemon socket=");
        return pl_err_set(err, PL_ESTATE, "%s: another recorder holds this "
                          "database, a daemon (pid %ld): end it first with "
                          "'prismlab acquire quit --socket %.*s' ('acquire "
                          "stop' only ends its run)",
                          lock, pid, (int)strcspn(sock, "\n"), sock);
    }
    if (pid > 0)
        return pl_err_set(err, PL_ESTATE, "%s: another recorder holds this "
                          "database, a recording (pid %ld: prismlab acquire "
                          "record or sim --store): let it end, or end it with "
                          "Ctrl-C or 'kill %ld' (its run is closed cleanly)", lock, pid, pid);
    return pl_err_set(err, PL_ESTATE, "%s: another recorder holds this database: "
                      "end a daemon with 'prismlab acquire quit --config rig.ini', "
                      "a recording in the foreground with Ctrl-C", lock);
}

void pl_recorder_set_daemon(pl_recorder *r, const char *socket_path)
{
    char what[1100];
    snprintf(what, sizeof what, "daemon socket=%s", socket_path);
    write_holder(r->lock_fd, what);
}

pl_status pl_recorder_open_unmarked(pl_recorder **out, const char *db_path,
                                    const pl_writer_config *wc, pl_err *err)
{
    *out = NULL;
    char lock[1100];
    snprintf(lock, sizeof lock, "%s.recorder.lock", db_path);
    /* Never through a symlink: one planted there would have us create or
     * lock a file of someone else's choosing. */
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0)
        return pl_err_set(err, PL_EIO, "%s: %s%s", lock, strerror(errno),
                          errno == ELOOP ? " (a symbolic link: refused)" : "");
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return pl_err_set(err, PL_EIO, "%s: not a regular file: refused as "
                          "the recorder lock", lock);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char holder[600];
        int n = (int)pread(fd, holder, sizeof holder - 1, 0);
        close(fd);
        holder[n > 0 ? n : 0] = '\0';
        return refuse_held(lock, holder, err);
    }
    write_holder(fd, NULL);
    pl_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        close(fd);
        return pl_err_set(err, PL_ENOMEM, "recorder: out of memory");
    }
    r->lock_fd = fd;
    if (pl_writer_create(&r->w, db_path, wc, err) != PL_OK) {
        pl_recorder_close(r);
        return err->code;
    }
    *out = r;
    return PL_OK;
}

pl_status pl_recorder_open(pl_recorder **out, const char *db_path,
                           const pl_writer_config *wc, long long *interrupted,
                           pl_err *err)
{
    long long n = 0;
    if (pl_recorder_open_unmarked(out, db_path, wc, err) != PL_OK)
        return err->code;
    if (pl_run_mark_interrupted(pl_writer_store((*out)->w), &n, err) != PL_OK) {
        pl_recorder_close(*out);
        *out = NULL;
        return err->code;
    }
    if (interrupted)
        *interrupted = n;
    return PL_OK;
}

pl_writer *pl_recorder_writer(pl_recorder *r) { return r->w; }

void pl_recorder_same_samples(pl_recorder *r, long long run_id, char *text,
                              size_t size)
{
    pl_err err = {0};
    if (pl_run_same_samples_text(pl_writer_store(r->w), run_id, text, size, &err) != PL_OK)
        text[0] = '\0';
}

pl_status pl_recorder_begin(pl_recorder *r, const pl_source_info *info,
                            const pl_record_options *opt,
                            long long pretrigger_frames, long long *run_id,
                            pl_err *err)
{
    pl_run_info run;
    pl_run_info_init(&run);
    if (pl_name_check("prism", opt->prism ? opt->prism : info->prism, err) != PL_OK ||
        pl_name_check("ramp", opt->ramp ? opt->ramp : info->ramp, err) != PL_OK ||
        pl_name_check("experiment", opt->experiment, err) != PL_OK ||
        pl_source_check_lambda0(!isnan(opt->lambda0_rad) ? opt->lambda0_rad
                                                         : info->lambda0_rad, err) != PL_OK)
        return err->code;
    snprintf(run.prism, sizeof run.prism, "%s", opt->prism ? opt->prism : info->prism);
    snprintf(run.ramp, sizeof run.ramp, "%s", opt->ramp ? opt->ramp : info->ramp);
    if (opt->experiment)
        snprintf(run.experiment, sizeof run.experiment, "%s", opt->experiment);
    run.sample_rate_hz = info->sample_rate_hz;
    run.n_channels = info->n_channels;
    run.format = info->format;
    run.little_endian = info->little_endian;
    snprintf(run.source_kind, sizeof run.source_kind, "%s", info->kind);
    snprintf(run.source_detail, sizeof run.source_detail, "%s", info->detail);
    run.synthetic = info->synthetic;
    run.lambda0_rad = !isnan(opt->lambda0_rad) ? opt->lambda0_rad : info->lambda0_rad;
    run.pretrigger_frames = pretrigger_frames;
    snprintf(run.notes, sizeof run.notes, "%s", opt->notes);
    if ((run.experiment[0] &&
         pl_experiment_ensure(pl_writer_store(r->w), run.experiment, err) != PL_OK) ||
        pl_writer_begin_run(r->w, &run, info->channel, err) != PL_OK)
        return err->code;
    *run_id = run.id;
    return PL_OK;
}

pl_status pl_recorder_run(pl_recorder *r, const pl_source_type *type,
                          void *src, const pl_source_info *info,
                          const pl_record_options *opt, long long *run_id,
                          long long *frames, pl_err *err)
{
    if (pl_recorder_begin(r, info, opt, 0, run_id, err) != PL_OK)
        return err->code;
    long long moved = 0;
    pl_status st = type->start(src, err);
    if (st == PL_OK)
        st = pl_acquire_pump(type, src, info, r->w, &opt->pump, &moved, err);
    pl_err stop_err = {0};
    type->stop(src, &stop_err);
    /* An overrun is an outcome, not a failure: the run keeps every frame
     * before the loss and says where it happened. */
    pl_run_state fin = st == PL_OK || st == PL_EOVERRUN ? PL_RUN_COMPLETE
                                                        : PL_RUN_INTERRUPTED;
    pl_err end_err = {0};
    pl_status est = pl_writer_end_run(r->w, fin, &end_err);
    if (st == PL_OK && est != PL_OK) {
        st = est;
        *err = end_err;
    }
    if (frames)
        *frames = moved;
    return st;
}

void pl_recorder_close(pl_recorder *r)
{
    if (!r)
        return;
    pl_writer_destroy(r->w);
    if (r->lock_fd >= 0)
        close(r->lock_fd);
    free(r);
}
