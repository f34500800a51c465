/* acquire/pipeline.c - the daemon's after-run pipeline.  See pipeline.h. */
#define _GNU_SOURCE   /* pipe2; prctl's PR_SET_PDEATHSIG is Linux's */
#include "acquire/pipeline.h"
#include "acquire/rigconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Runs stopping faster than they are processed (a rig cannot) wait here;
 * beyond it a run is only logged as left for a person. */
enum { QUEUE = 32, OUT_LINE = 400 };
#define SHUTDOWN_WAIT_S 30.0

typedef struct {
    long long run;
    double stopped;          /* monotonic s */
    int from;                /* its first step: 0 process, 1 validate */
} job;

struct pl_pipeline {
    char db[1100];
    char prog[2][PATH_MAX];  /* prismlab-process, prismlab-validate */
    unsigned steps;
    char fit[64];            /* validate's --fit; "": its default */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
    job queue[QUEUE];
    int q_len;
    job cur;                 /* the run in the pipeline */
    int step;                /* 0 process, 1 validate; -1 none running */
    pid_t pid;
    int fd;                  /* the child's stdout and stderr */
    char line[OUT_LINE];     /* its unfinished line */
    size_t line_len;
    char last[OUT_LINE];     /* its last whole line */
    char cause[OUT_LINE];    /* its last error line ("prismlab CMD: ...") */
    int results;             /* validate's result lines ("run=N law=..."): stored */
    long long last_run, verdict_run;
    char last_how[32];       /* "done", "process-failed", ... */
    double last_s;           /* the last run: stop to its last step's end */
    int stopping;            /* the daemon is ending: no new step starts */
    void (*on_end)(void *ctx, long long run, const char *how);
    void *on_end_ctx;
};

static const char *const step_name[2] = {"process", "validate"};

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void logf_(pl_pipeline *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pl_vlogf(p->log, p->log_ctx, fmt, ap);
    va_end(ap);
}

pl_status pl_pipeline_set_fit(pl_pipeline *p, const char *fit, pl_err *err)
{
    if (fit && strlen(fit) >= sizeof p->fit)
        return pl_err_set(err, PL_EINVAL, "pipeline: fit list too long: '%s'", fit);
    snprintf(p->fit, sizeof p->fit, "%s", fit ? fit : "");
    return PL_OK;
}

pl_status pl_pipeline_create(pl_pipeline **out, const char *db, unsigned steps,
                             void (*log)(void *ctx, const char *line),
                             void *log_ctx, pl_err *err)
{
    *out = NULL;
    pl_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return pl_err_set(err, PL_ENOMEM, "pipeline: out of memory");
    if (strlen(db) >= sizeof p->db) {
        free(p);
        return pl_err_set(err, PL_EINVAL, "pipeline: database path too long");
    }
    snprintf(p->db, sizeof p->db, "%s", db);
    p->steps = steps;
    p->log = log;
    p->log_ctx = log_ctx;
    p->step = -1;
    p->pid = -1;
    p->fd = -1;
    p->last_run = p->verdict_run = -1;
    /* The commands' programs sit beside this one (docs/layout.md, "Start-up"). */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        free(p);
        return pl_err_set(err, PL_EIO, "pipeline: cannot tell where this program is "
                          "(/proc/self/exe): %s", strerror(errno));
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    for (int i = 0; i < 2; i++) {
        if (!(steps & (i ? PL_AFTER_VALIDATE : PL_AFTER_PROCESS)))
            continue;
        if (snprintf(p->prog[i], sizeof p->prog[i], "%s/prismlab-%s", self, step_name[i]) >=
                (int)sizeof p->prog[i] || access(p->prog[i], X_OK) != 0) {
            pl_err_set(err, PL_ENOTFOUND, "[pipeline] after_run: %s: %s (the command's "
                       "program, built by make beside this one)", p->prog[i], strerror(errno));
            free(p);
            return err->code;
        }
    }
    *out = p;
    return PL_OK;
}

void pl_pipeline_set_on_end(pl_pipeline *p,
                            void (*fn)(void *ctx, long long run, const char *how),
                            void *ctx)
{
    p->on_end = fn;
    p->on_end_ctx = ctx;
}

pl_status pl_pipeline_add_from(pl_pipeline *p, long long run, int validate_only,
                               pl_err *err)
{
    if (p->q_len >= QUEUE)
        return pl_err_set(err, PL_ESTATE, "run %lld: the pipeline's queue holds %d runs "
                          "already: %s it by hand (prismlab %s %lld)", run, QUEUE,
                          validate_only ? "validate" : "process",
                          validate_only ? "validate" : "process", run);
    p->queue[p->q_len++] = (job){.run = run, .stopped = mono_s(), .from = validate_only != 0};
    pl_pipeline_poll(p);
    return PL_OK;
}

pl_status pl_pipeline_add(pl_pipeline *p, long long run, pl_err *err)
{
    return pl_pipeline_add_from(p, run, 0, err);
}

/* Starts step i of p->cur as a child whose output comes back on p->fd. */
static pl_status spawn_step(pl_pipeline *p, int i, pl_err *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return pl_err_set(err, PL_EIO, "pipe: %s", strerror(errno));
    char run[32];
    snprintf(run, sizeof run, "%lld", p->cur.run);
    /* argv as bin/prismlab hands it to a command's program */
    char *argv[] = {"prismlab", (char *)step_name[i], run, "--db", p->db, NULL, NULL, NULL};
    if (i == 1 && p->fit[0]) {
        argv[5] = "--fit";
        argv[6] = p->fit;
    }
    /* fork rather than posix_spawn, for PR_SET_PDEATHSIG: a step dies
     * with the daemon.  Left alive after a kill -9 it would finish a step
     * whose outcome nobody stores and whose next step nobody starts; dead,
     * it leaves the run as its last commit did (each command stores a
     * run's results whole), and the next daemon takes the run up again
     * (docs/acquire.md, "After a crash").  Between fork and exec only
     * async-signal-safe calls: the daemon has other threads. */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);   /* the daemon is gone already */
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0)
            _exit(127);
        if (null > 2)
            close(null);
        execve(p->prog[i], argv, environ);
        _exit(127);
    }
    int e = errno;
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return pl_err_set(err, PL_EIO, "%s: %s", p->prog[i], strerror(e));
    }
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    p->pid = pid;
    p->fd = fds[0];
    p->step = i;
    p->line_len = 0;
    p->last[0] = p->cause[0] = '\0';
    p->results = 0;
    logf_(p, "run %lld: pipeline: %s started (pid %ld)", p->cur.run, step_name[i], (long)pid);
    return PL_OK;
}

/* The run's pipeline is over: how, and since its stop. */
static void run_ended(pl_pipeline *p, const char *how)
{
    p->last_run = p->cur.run;
    p->last_s = mono_s() - p->cur.stopped;
    snprintf(p->last_how, sizeof p->last_how, "%s", how);
    p->step = -1;
    if (p->on_end)
        p->on_end(p->on_end_ctx, p->cur.run, how);
}

/* Step i of the current run, or the next step it has, or none. */
static void start_from(pl_pipeline *p, int i)
{
    for (; i < 2; i++) {
        if (!p->prog[i][0])
            continue;
        if (p->stopping) {
            logf_(p, "run %lld: pipeline: %s not run (the daemon stopped): prismlab %s %lld",
                  p->cur.run, step_name[i], step_name[i], p->cur.run);
            run_ended(p, "stopped");
            return;
        }
        pl_err err = {0};
        if (spawn_step(p, i, &err) == PL_OK)
            return;
        logf_(p, "run %lld: pipeline: %s could not start: %s", p->cur.run, step_name[i], err.msg);
        char how[32];
        snprintf(how, sizeof how, "%s-failed", step_name[i]);
        run_ended(p, how);
        return;
    }
    logf_(p, "run %lld: pipeline: done %.2f s after the run stopped%s", p->cur.run,
          mono_s() - p->cur.stopped,
          p->prog[1][0] ? ": its validation is stored" : "");
    if (p->prog[1][0])
        p->verdict_run = p->cur.run;
    run_ended(p, "done");
}

/* Reads what the child wrote; each whole line goes to the log.  At the
 * end of its output the pipe is closed, so that a child that closed it
 * and runs on does not wake the daemon's idle poll without end. */
static void drain(pl_pipeline *p)
{
    char buf[4096];
    ssize_t r;
    if (p->fd < 0)
        return;
    while ((r = read(p->fd, buf, sizeof buf)) != 0) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            break;
        }
        for (ssize_t k = 0; k < r; k++) {
            char ch = buf[k];
            if (ch != '\n' && p->line_len < sizeof p->line - 1) {
                p->line[p->line_len++] = ch;
                continue;
            }
            if (ch != '\n')
                continue;   /* a line longer than the buffer: its head is kept */
            p->line[p->line_len] = '\0';
            if (p->line_len > 0) {
                logf_(p, "run %lld: %s: %s", p->cur.run, step_name[p->step], p->line);
                memcpy(p->last, p->line, p->line_len + 1);
                /* the command's own errors, not the results printed after
                 * them (stdout is line-buffered, stderr is not) */
                if (!strncmp(p->line, "prismlab ", 9))
                    memcpy(p->cause, p->line, p->line_len + 1);
                else if (!strncmp(p->line, "run=", 4))
                    p->results++;
            }
            p->line_len = 0;
        }
    }
    close(p->fd);
    p->fd = -1;
}

/* The step's child has ended with status ws. */
static void step_ended(pl_pipeline *p, int ws)
{
    drain(p);
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    p->pid = -1;
    int i = p->step;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        start_from(p, i + 1);
        return;
    }
    char why[64];
    if (WIFSIGNALED(ws))
        snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(ws));
    else
        snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(ws));
    if (p->stopping && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) {
        /* the shutdown's own kill: no answer about the run, which the
         * next daemon takes up again */
        run_ended(p, "stopped");
        return;
    }
    const char *cause = p->cause[0] ? p->cause : p->last;
    /* validate stores each law's result as it goes: one law's fit failing
     * (the plastic law's on a long line-law run, say) leaves the other's
     * verdict stored, which is worth a look, and said as partial */
    if (i == 1 && WIFEXITED(ws) && p->results > 0) {
        logf_(p, "run %lld: pipeline: validate ended with %s after storing %d result%s "
              "(partial: %s); prismlab validate %lld tries again", p->cur.run, why,
              p->results, p->results == 1 ? "" : "s", cause, p->cur.run);
        p->verdict_run = p->cur.run;
        run_ended(p, "validate-partial");
        return;
    }
    logf_(p, "run %lld: pipeline: %s failed (%s)%s%s; the run is kept as stored: "
          "prismlab %s %lld", p->cur.run, step_name[i], why, cause[0] ? ": " : "",
          cause, step_name[i], p->cur.run);
    char how[32];
    snprintf(how, sizeof how, "%s-failed", step_name[i]);
    run_ended(p, how);
}

void pl_pipeline_poll(pl_pipeline *p)
{
    if (!p)
        return;
    if (p->pid > 0) {
        int had_output = p->fd >= 0;
        drain(p);
        int ws;
        pid_t r = waitpid(p->pid, &ws, WNOHANG);
        /* Its output just ended: it is exiting, a moment from being
         * reapable; wait that moment (20 ms at most) rather than the idle
         * poll's 100 ms, which would come straight onto the verdict. */
        for (int k = 0; r == 0 && had_output && p->fd < 0 && k < 20; k++) {
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
            r = waitpid(p->pid, &ws, WNOHANG);
        }
        if (r == p->pid)
            step_ended(p, ws);
        else if (r < 0 && errno != EINTR)
            step_ended(p, 0x7f00);   /* lost: counted as a failure (exit 127) */
    }
    if (p->pid < 0 && p->step < 0 && p->q_len > 0 && !p->stopping) {
        p->cur = p->queue[0];
        memmove(p->queue, p->queue + 1, sizeof p->queue[0] * (size_t)--p->q_len);
        start_from(p, p->cur.from);
    }
}

int pl_pipeline_fd(const pl_pipeline *p)
{
    return p && p->pid > 0 ? p->fd : -1;   /* -1 too once its output ended */
}

void pl_pipeline_describe(const pl_pipeline *p, char *buf, size_t size)
{
    int n;
    if (p->step >= 0)
        n = snprintf(buf, size, "pipeline=%s:%lld", step_name[p->step], p->cur.run);
    else
        n = snprintf(buf, size, "pipeline=idle");
    if (n < 0 || (size_t)n >= size)
        return;
    if (p->q_len > 0)
        n += snprintf(buf + n, size - (size_t)n, " queued=%d", p->q_len);
    if (p->last_run >= 0)
        snprintf(buf + n, size - (size_t)n, " pipeline_last=%lld:%s pipeline_s=%.2f verdict_run=%lld",
                 p->last_run, p->last_how, p->last_s, p->verdict_run);
    else
        snprintf(buf + n, size - (size_t)n, " pipeline_last=-1 verdict_run=%lld", p->verdict_run);
}

void pl_pipeline_destroy(pl_pipeline *p)
{
    if (!p)
        return;
    /* The step in progress finishes (seconds at most); its output is read
     * meanwhile so that it never blocks on a full pipe.  No step starts. */
    p->stopping = 1;
    double until = mono_s() + SHUTDOWN_WAIT_S;
    int killed = 0;
    while (p->pid > 0) {
        struct pollfd pf = {.fd = p->fd, .events = POLLIN};
        poll(&pf, p->fd >= 0 ? 1 : 0, 100);
        pl_pipeline_poll(p);
        if (p->pid > 0 && !killed && mono_s() > until) {
            logf_(p, "run %lld: pipeline: %s still running %.0f s into the shutdown: killed",
                  p->cur.run, step_name[p->step], SHUTDOWN_WAIT_S);
            kill(p->pid, SIGKILL);
            killed = 1;
        }
    }
    for (int i = 0; i < p->q_len; i++)
        logf_(p, "run %lld: pipeline: not run (the daemon stopped): prismlab process %lld",
              p->queue[i].run, p->queue[i].run);
    free(p);
}
