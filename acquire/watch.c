/* acquire/watch.c - the stream client of `acquire watch` and its lines
 * (acquire/watch.h). */
#include "acquire/watch.h"

#include "acquire/daemon.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A line longer than this is not the daemon's (its stream queue is
 * 64 KiB a client): refused rather than grown without end. */
#define LINE_MAX_BYTES (1 << 20)

struct pl_watch {
    int fd;
    char path[1024];
    char *buf;               /* bytes read, not yet handed on */
    size_t len, off, cap;
};

static int fill(pl_watch *w, double wait_s, pl_err *err);
static char *take_line(pl_watch *w);
static double mono_s(void);

/* The daemon's answer to "stream", at most 5 s away (it serves a command
 * between source reads of at most ~100 ms). */
static pl_status greeting(pl_watch *w, pl_err *err)
{
    double until = mono_s() + 5;
    char *line;
    while (!(line = take_line(w))) {
        double left = until - mono_s();
        if (left <= 0)
            return pl_err_set(err, PL_EIO, "%s: the daemon did not answer", w->path);
        if (fill(w, left, err) < 0)
            return err->code;
    }
    if (strncmp(line, "ok", 2))
        return pl_err_set(err, PL_ESTATE, "%s: the daemon refused the stream: %s",
                          w->path, line);
    return PL_OK;
}

pl_status pl_watch_open(pl_watch **out, const char *path, pl_err *err)
{
    *out = NULL;
    pl_watch *w = calloc(1, sizeof *w);
    if (!w || !(w->buf = malloc(w->cap = 65536))) {
        free(w);
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    }
    snprintf(w->path, sizeof w->path, "%s", path);
    if (pl_daemon_connect(path, &w->fd, err) != PL_OK) {
        free(w->buf);
        free(w);
        return err->code;
    }
    static const char cmd[] = "stream\n";
    pl_status st = write(w->fd, cmd, sizeof cmd - 1) != (ssize_t)(sizeof cmd - 1)
                       ? pl_err_set(err, PL_EIO, "%s: write: %s", path, strerror(errno))
                       : greeting(w, err);
    if (st != PL_OK) {
        pl_watch_close(w);
        return st;
    }
    *out = w;
    return PL_OK;
}

void pl_watch_close(pl_watch *w)
{
    if (!w)
        return;
    close(w->fd);
    free(w->buf);
    free(w);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* More bytes from the daemon, waiting at most wait_s: 1 read, 0 none yet,
 * -1 closed or failed (err says which). */
static int fill(pl_watch *w, double wait_s, pl_err *err)
{
    if (w->off > 0) {   /* what was handed on makes room */
        memmove(w->buf, w->buf + w->off, w->len - w->off);
        w->len -= w->off;
        w->off = 0;
    }
    if (w->len == w->cap) {
        if (w->cap >= LINE_MAX_BYTES) {
            pl_err_set(err, PL_EFORMAT, "%s: a stream line longer than %d bytes: "
                       "not a prismlab daemon?", w->path, LINE_MAX_BYTES);
            return -1;
        }
        char *b = realloc(w->buf, 2 * w->cap);
        if (!b) {
            pl_err_set(err, PL_ENOMEM, "out of memory");
            return -1;
        }
        w->buf = b;
        w->cap *= 2;
    }
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    int r = poll(&p, 1, (int)ceil(wait_s * 1e3));
    if (r == 0 || (r < 0 && errno == EINTR))
        return 0;
    ssize_t n = r < 0 ? -1 : read(w->fd, w->buf + w->len, w->cap - w->len);
    if (n > 0) {
        w->len += (size_t)n;
        return 1;
    }
    if (n < 0 && errno == EINTR)
        return 0;
    if (n == 0)
        pl_err_set(err, PL_EIO, "%s: the daemon closed the stream (it quit, or it "
                   "dropped this viewer after 10 s without reading)", w->path);
    else
        pl_err_set(err, PL_EIO, "%s: read: %s", w->path, strerror(errno));
    return -1;
}

/* One whole line taken from the buffer (its newline made a NUL), or NULL. */
static char *take_line(pl_watch *w)
{
    char *s = w->buf + w->off, *nl = memchr(s, '\n', w->len - w->off);
    if (!nl)
        return NULL;
    *nl = '\0';
    if (nl > s && nl[-1] == '\r')
        nl[-1] = '\0';
    w->off = (size_t)(nl + 1 - w->buf);
    return s;
}

pl_status pl_watch_next(pl_watch *w, double timeout_s, volatile sig_atomic_t *stop,
                        const char **json, long long *lost, pl_err *err)
{
    *json = NULL;
    *lost = 0;
    double until = mono_s() + timeout_s;
    for (;;) {
        char *line;
        while ((line = take_line(w))) {
            if (line[0] == 'G' && line[1] == ' ') {
                *lost += strtoll(line + 2, NULL, 10);
            } else if (line[0] == 'E' && line[1] == ' ') {
                *json = line + 2;
                return PL_OK;
            }
        }
        if (stop && *stop)
            return PL_OK;
        /* a slice at a time, so that a signal's flag is seen soon */
        double left = timeout_s > 0 ? until - mono_s() : 0.25;
        if (left <= 0)
            return pl_err_set(err, PL_ESTATE, "%s: no event for %g s", w->path, timeout_s);
        if (fill(w, fmin(left, 0.25), err) < 0)
            return err->code;
    }
}

/* --- the events' fields -------------------------------------------------- */

/* Past the JSON value at p (string, number, word, array or object). */
static const char *skip_value(const char *p)
{
    int depth = 0, in_str = 0;
    for (; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
            else
                continue;
            if (!in_str && depth == 0)
                return p + 1;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (*p == ',' && depth == 0) {
            return p;
        }
    }
    return p;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The value of the object's own member key (not one nested), or NULL. */
static const char *field(const char *json, const char *key)
{
    const char *p = skip_space(json);
    if (*p++ != '{')
        return NULL;
    size_t klen = strlen(key);
    for (;;) {
        p = skip_space(p);
        if (*p != '"')
            return NULL;
        const char *k = p + 1, *q = skip_value(p);
        int match = (size_t)(q - k) == klen + 1 && !strncmp(k, key, klen);
        p = skip_space(q);
        if (*p++ != ':')
            return NULL;
        p = skip_space(p);
        if (match)
            return p;
        p = skip_space(skip_value(p));
        if (*p++ != ',')
            return NULL;
    }
}

/* A number member; NaN when absent or null. */
static double num(const char *json, const char *key)
{
    const char *v = field(json, key);
    char *end;
    double x = v ? strtod(v, &end) : NAN;
    return v && end != v ? x : NAN;
}

/* A string member, unescaped (\uXXXX beyond ASCII as '?'), into s; "" when
 * absent. */
static const char *str(const char *json, const char *key, char *s, size_t size)
{
    const char *v = field(json, key);
    size_t n = 0;
    if (v && *v == '"') {
        for (v++; *v && *v != '"' && n + 1 < size; v++) {
            char c = *v;
            if (c == '\\' && v[1]) {
                c = *++v;
                if (c == 'n' || c == 't')
                    c = ' ';
                else if (c == 'u') {
                    unsigned u = 0;
                    if (sscanf(v + 1, "%4x", &u) == 1 && strlen(v + 1) >= 4)
                        v += 4;
                    c = u >= 0x20 && u < 0x7f ? (char)u : '?';
                }
            }
            s[n++] = c;
        }
    }
    s[n] = '\0';
    return s;
}

static int flag(const char *json, const char *key)
{
    const char *v = field(json, key);
    return v && !strncmp(v, "true", 4);
}

int pl_watch_kind(const char *json, char *kind, size_t size)
{
    return str(json, "event", kind, size)[0] != '\0';
}

/* --- the lines ----------------------------------------------------------- */

static void start_line(const char *j, char *line, size_t size, const char *head)
{
    char why[400];
    if (flag(j, "live"))
        snprintf(line, size, "%s start: %.0f Hz, N = %.0f, live search on (at most "
                 "%.0f %% of a core)", head, num(j, "rate_hz"), num(j, "N"),
                 100 * num(j, "cpu_share"));
    else
        snprintf(line, size, "%s start: live search off: %s", head,
                 str(j, "why", why, sizeof why));
}

static void impact_line(const char *j, char *line, size_t size, const char *head)
{
    snprintf(line, size, "%s impact t=%.4f s L_p=%.2f omega %.4f -> %.4f rad/s "
             "ratio %.6f +- %.2g latency %.3f s%s", head, num(j, "t_s"), num(j, "lp"),
             num(j, "omega_minus"), num(j, "omega_plus"), num(j, "ratio"),
             num(j, "ratio_se"), num(j, "latency_s"),
             num(j, "confirmed") == 0 ? " (unconfirmed: placed by the lattice)" : "");
}

static void stop_line(const char *j, char *line, size_t size, const char *head)
{
    char why[200], lost[96] = "";
    double n_lost = num(j, "events_lost");
    if (n_lost > 0)
        snprintf(lost, sizeof lost, "; %.0f event%s lost (the daemon's loop stalled)", n_lost,
                 n_lost == 1 ? "" : "s");
    snprintf(line, size, "%s stop (%s): %.0f impacts, L_p=%.2f, ratio %.6f sd %.2g, "
             "median latency %.3f s, %.0f looks, %.2f s CPU, %.0f frames%s%s", head,
             str(j, "why", why, sizeof why), num(j, "impacts"), num(j, "lp"),
             num(j, "ratio_mean"), num(j, "ratio_sd"), num(j, "latency_median_s"),
             num(j, "looks"), num(j, "cpu_s"), num(j, "frames"),
             flag(j, "paused") ? "; the search paused: the stored run is processed whole" : "",
             lost);
}

int pl_watch_format(const char *j, char *line, size_t size)
{
    char kind[16], head[48], text[400];
    if (!pl_watch_kind(j, kind, sizeof kind))
        return 0;
    snprintf(head, sizeof head, "run %.0f:", num(j, "run"));
    if (!strcmp(kind, "start"))
        start_line(j, line, size, head);
    else if (!strcmp(kind, "release"))
        snprintf(line, size, "%s release at t=%.4f s", head, num(j, "t_s"));
    else if (!strcmp(kind, "impact"))
        impact_line(j, line, size, head);
    else if (!strcmp(kind, "finding"))
        snprintf(line, size, "%s finding: %s", head, str(j, "text", text, sizeof text));
    else if (!strcmp(kind, "pace"))
        snprintf(line, size, "%s pace: a look every %.2f s (%s)", head, num(j, "look_s"),
                 str(j, "why", text, sizeof text));
    else if (!strcmp(kind, "paused"))
        snprintf(line, size, "%s paused, %.1f s behind: %s", head, num(j, "behind_s"),
                 str(j, "why", text, sizeof text));
    else if (!strcmp(kind, "stop"))
        stop_line(j, line, size, head);
    else
        return 0;
    return 1;
}
