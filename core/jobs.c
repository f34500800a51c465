/* core/jobs.c - parallel runs in worker processes.  See jobs.h.
 *
 * Each worker has one socket pair with the parent (a socket, not a pipe:
 * the parent's send() to a worker that died fails with EPIPE instead of
 * raising SIGPIPE).  The parent sends 'T' and a task number, and 'G'
 * (your turn) for the worker's task once every task before it has ended;
 * a worker answers each task with a frame: task, exit status, and what
 * it printed.
 */
#include "core/jobs.h"

#include "core/cli.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct pl_jobs_turn {
    int fd;        /* the worker's socket */
    int granted;
};

/* A worker's answer to a task, before the text it printed. */
typedef struct {
    uint64_t task, out_len, err_len;
    int32_t code;
} frame;

enum { IDLE, RUNNING, ENDED };

typedef struct {
    int state;
    int granted;
    size_t worker;
    pl_jobs_result r;
    char *out, *errout;   /* r's text, owned */
} task;

typedef struct {
    pid_t pid;      /* 0: none (not started, or ended); -1: could not start */
    int fd;         /* the parent's end of the socket pair */
    long task;      /* the task it works on; -1: none */
} worker;

/* Whether any worker is running. */
static int alive(const worker *ws, size_t n_workers)
{
    for (size_t i = 0; i < n_workers; i++)
        if (ws[i].pid > 0)
            return 1;
    return 0;
}

/* Reads exactly len bytes: 1, or 0 at the end of the stream or an error. */
static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t got = read(fd, p, len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        p += got;
        len -= (size_t)got;
    }
    return 1;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t put = send(fd, p, len, MSG_NOSIGNAL);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return 0;
        p += put;
        len -= (size_t)put;
    }
    return 1;
}

pl_status pl_jobs_gate(void *arg, pl_err *err)
{
    pl_jobs_turn *t = arg;
    char c;
    if (t->granted)
        return PL_OK;
    if (!read_all(t->fd, &c, 1) || c != 'G')
        return pl_err_set(err, PL_EIO, "waiting for the turn to write: the "
                          "parent process went away");
    t->granted = 1;
    return PL_OK;
}

int pl_jobs_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

/* What the task wrote to fd (a file of the worker's), from its start. */
static char *captured(int fd, size_t *len)
{
    struct stat sb;
    char *buf = NULL;
    *len = 0;
    if (fstat(fd, &sb) == 0 && sb.st_size > 0 && (buf = malloc((size_t)sb.st_size))) {
        ssize_t got = pread(fd, buf, (size_t)sb.st_size, 0);
        *len = got > 0 ? (size_t)got : 0;
    }
    return buf;
}

/* Empties stream (a worker's stdout or stderr, a file) for the next task. */
static void restart(FILE *stream)
{
    fflush(stream);
    if (ftruncate(fileno(stream), 0) != 0)
        return;   /* then the last task's text comes again: seen, not lost */
    rewind(stream);
}

/* A worker's life: tasks until the parent closes its end. */
static void work_loop(int fd, pl_jobs_work_fn work, void *ctx)
{
    FILE *out = tmpfile(), *err = tmpfile();
    if (!out || !err || dup2(fileno(out), STDOUT_FILENO) < 0 ||
        dup2(fileno(err), STDERR_FILENO) < 0)
        _exit(126);
    fclose(out);
    fclose(err);
    for (;;) {
        char c;
        uint64_t k;
        if (!read_all(fd, &c, 1))
            _exit(0);
        if (c == 'G')   /* the turn of a task that did not ask for it */
            continue;
        if (c != 'T' || !read_all(fd, &k, sizeof k))
            _exit(126);
        restart(stdout);
        restart(stderr);
        pl_jobs_turn turn = {.fd = fd, .granted = 0};
        int code = work(ctx, (size_t)k, &turn);
        fflush(stdout);
        fflush(stderr);
        size_t ol, el;
        char *o = captured(STDOUT_FILENO, &ol), *e = captured(STDERR_FILENO, &el);
        frame f = {.task = k, .out_len = ol, .err_len = el,
                   .code = code < 0 || code > 125 ? 125 : code};
        if (!write_all(fd, &f, sizeof f) || !write_all(fd, o, ol) || !write_all(fd, e, el))
            _exit(126);
        free(o);
        free(e);
    }
}

static pl_status spawn(worker *ws, size_t n_workers, size_t i, pl_jobs_work_fn work,
                       void *ctx, pl_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return pl_err_set(err, PL_EIO, "starting a worker: %s", strerror(errno));
    /* what the parent has buffered is printed once, by the parent */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return pl_err_set(err, PL_EIO, "starting a worker: fork: %s", strerror(e));
    }
    if (pid == 0) {
        /* the other workers' sockets: held here, a worker would not see
         * the parent go */
        for (size_t j = 0; j < n_workers; j++)
            if (ws[j].pid > 0)
                close(ws[j].fd);
        close(sv[0]);
        work_loop(sv[1], work, ctx);
    }
    close(sv[1]);
    ws[i] = (worker){.pid = pid, .fd = sv[0], .task = -1};
    return PL_OK;
}

/* The worker ended (its socket closed or broke): its task, if any, ends
 * with the signal or status it died of. */
static void bury(worker *w, task *tasks)
{
    int status = 0;
    close(w->fd);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (w->task >= 0) {
        task *t = &tasks[w->task];
        t->state = ENDED;
        t->r = (pl_jobs_result){.code = -1, .out = "", .errout = ""};
        if (WIFSIGNALED(status))
            t->r.signal = WTERMSIG(status);
        else if (WIFEXITED(status))
            t->r.status = WEXITSTATUS(status);
    }
    *w = (worker){.pid = 0, .fd = -1, .task = -1};
}

/* A frame from worker w, or its end. */
static void hear(worker *w, task *tasks, size_t n)
{
    frame f;
    if (!read_all(w->fd, &f, sizeof f) || f.task != (uint64_t)w->task || f.task >= n) {
        bury(w, tasks);
        return;
    }
    task *t = &tasks[f.task];
    t->out = malloc(f.out_len + 1);
    t->errout = malloc(f.err_len + 1);
    if (!t->out || !t->errout || !read_all(w->fd, t->out, f.out_len) ||
        !read_all(w->fd, t->errout, f.err_len)) {
        free(t->out);
        free(t->errout);
        t->out = t->errout = NULL;
        bury(w, tasks);
        return;
    }
    t->out[f.out_len] = t->errout[f.err_len] = '\0';
    t->r = (pl_jobs_result){.code = f.code, .out = t->out, .errout = t->errout,
                            .out_len = f.out_len, .err_len = f.err_len};
    t->state = ENDED;
    w->task = -1;
}

static void grant(task *tasks, worker *ws, size_t k)
{
    task *t = &tasks[k];
    if (t->state != RUNNING || t->granted)
        return;
    t->granted = 1;
    /* a worker gone is heard of by poll() */
    write_all(ws[t->worker].fd, "G", 1);
}

static int emit_task(task *t, size_t k, pl_jobs_emit_fn emit, void *ctx)
{
    int stop = emit(ctx, k, &t->r);
    free(t->out);
    free(t->errout);
    t->out = t->errout = NULL;
    return stop;
}

/* Waits for a word from the busy workers and takes it. */
static pl_status listen_all(worker *ws, size_t n_workers, task *tasks, size_t n,
                            pl_err *err)
{
    struct pollfd pf[n_workers];
    size_t who[n_workers], m = 0;
    for (size_t i = 0; i < n_workers; i++)
        if (ws[i].pid > 0 && ws[i].task >= 0) {
            pf[m] = (struct pollfd){.fd = ws[i].fd, .events = POLLIN};
            who[m++] = i;
        }
    if (m == 0)
        return pl_err_set(err, PL_EIO, "no worker is running");
    int got = poll(pf, m, -1);
    if (got < 0 && errno != EINTR)
        return pl_err_set(err, PL_EIO, "waiting for the workers: %s", strerror(errno));
    for (size_t j = 0; got > 0 && j < m; j++)
        if (pf[j].revents)
            hear(&ws[who[j]], tasks, n);
    return PL_OK;
}

pl_status pl_jobs_run(size_t n, int jobs, const char *label, pl_jobs_work_fn work,
                      pl_jobs_emit_fn emit, void *ctx, pl_err *err)
{
    size_t n_workers = jobs < 1 ? 1 : (size_t)jobs;
    if (n_workers > n)
        n_workers = n ? n : 1;
    task *tasks = calloc(n ? n : 1, sizeof *tasks);
    worker *ws = calloc(n_workers, sizeof *ws);
    if (!tasks || !ws) {
        free(tasks);
        free(ws);
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu tasks", n);
    }
    for (size_t i = 0; i < n_workers; i++)
        ws[i] = (worker){.pid = 0, .fd = -1, .task = -1};
    /* results ahead of the first unprinted task wait in memory: a window
     * bounds them */
    size_t window = 4 * n_workers, next = 0, done = 0;
    pl_cli_meter meter;
    pl_cli_meter_start(&meter, label, "runs");
    meter.tty = meter.tty && label;
    pl_status st = PL_OK;
    int stop = 0;
    while (done < n && st == PL_OK && !stop) {
        for (size_t i = 0; i < n_workers && next < n && next - done < window; i++) {
            if (ws[i].pid < 0)
                continue;
            if (ws[i].pid == 0 && spawn(ws, n_workers, i, work, ctx, err) != PL_OK) {
                /* out of processes or files: the others carry on */
                ws[i].pid = -1;
                if (!alive(ws, n_workers)) {
                    st = err->code;
                    break;
                }
                continue;
            }
            if (ws[i].task >= 0)
                continue;
            uint64_t k = next;
            char msg[1 + sizeof k];
            msg[0] = 'T';
            memcpy(msg + 1, &k, sizeof k);
            ws[i].task = (long)next;
            tasks[next] = (task){.state = RUNNING, .worker = i};
            next++;
            write_all(ws[i].fd, msg, sizeof msg);
        }
        if (done < next)
            grant(tasks, ws, done);
        size_t was = done;
        while (!stop && done < next && tasks[done].state == ENDED) {
            if (meter.tty)
                pl_cli_progress_clear();
            stop = emit_task(&tasks[done], done, emit, ctx);
            done++;
            pl_cli_progress_eta(&meter, done, n);
            if (done < next && !stop)
                grant(tasks, ws, done);
        }
        /* tasks printed make room in the window: give them out first */
        if (done < n && st == PL_OK && !stop && done == was)
            st = listen_all(ws, n_workers, tasks, n, err);
    }
    /* closing a worker's socket ends it; one still busy (an error above,
     * or a stop) is ended: it never had its turn */
    for (size_t i = 0; i < n_workers; i++)
        if (ws[i].pid > 0) {
            if (ws[i].task >= 0)
                kill(ws[i].pid, SIGTERM);
            ws[i].task = -1;
            bury(&ws[i], tasks);
        }
    for (size_t k = done; k < n; k++) {
        free(tasks[k].out);
        free(tasks[k].errout);
    }
    free(tasks);
    free(ws);
    return st;
}

const char *pl_jobs_death(const pl_jobs_result *r, char *buf, size_t size)
{
    if (r->code >= 0)
        return NULL;
    if (r->signal)
        snprintf(buf, size, "the worker died (signal %d)", r->signal);
    else
        snprintf(buf, size, "the worker ended without a result (exit status %d)",
                 r->status);
    return buf;
}

void pl_jobs_print(const pl_jobs_result *r, int json, size_t *n_json)
{
    const char *out = r->out;
    size_t len = r->out_len;
    if (json && len > 0 && out[0] == '[') {
        fputs((*n_json)++ ? ",\n " : "[", stdout);
        out++;
        len--;
    }
    fwrite(out, 1, len, stdout);
    fflush(stdout);
    fwrite(r->errout, 1, r->err_len, stderr);
    fflush(stderr);
}
