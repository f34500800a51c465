/* tests/util/livestream.c - see livestream.h. */
#include "tests/util/livestream.h"

#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A connection to sock that has sent cmd and its newline, or -1. */
static int connect_once(const char *sock, const char *cmd)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof a.sun_path)
        return -1;
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    char line[160];
    int n = snprintf(line, sizeof line, "%s\n", cmd);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        send(fd, line, (size_t)n, MSG_NOSIGNAL) == n)
        return fd;
    if (fd >= 0)
        close(fd);
    return -1;
}

int tu_stream_open(const char *sock, double wait_s)
{
    double t0 = mono_s();
    int fd;
    while ((fd = connect_once(sock, "stream")) < 0 && mono_s() - t0 < wait_s)
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    return fd;
}

int tu_daemon_ask(const char *sock, const char *cmd, char *reply, size_t size, double wait_s)
{
    int fd = connect_once(sock, cmd);
    size_t got = 0;
    double t0 = mono_s();
    while (fd >= 0 && got + 1 < size && !memchr(reply, '\n', got) && mono_s() - t0 < wait_s) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t k = read(fd, reply + got, size - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (fd >= 0)
        close(fd);
    reply[got] = 0;
    char *nl = strchr(reply, '\n');
    if (!nl)
        return -1;
    *nl = 0;
    return 0;
}

int tu_stream_read(int fd, double limit_s, int (*fn)(void *ctx, const char *line), void *ctx)
{
    /* a track event of a long look is tens of kB; 4 MB holds any line */
    const size_t cap = (size_t)1 << 22;
    char *buf = malloc(cap);
    size_t n = 0;
    int rc = 0;
    double t0 = mono_s();
    while (buf && rc == 0 && mono_s() - t0 < limit_s) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k <= 0)
            break;
        n += (size_t)k;
        buf[n] = 0;
        char *line = buf, *nl;
        while (rc == 0 && (nl = strchr(line, '\n'))) {
            *nl = 0;
            rc = fn(ctx, line);
            line = nl + 1;
        }
        n -= (size_t)(line - buf);
        memmove(buf, line, n);
        if (n == cap - 1)
            n = 0;   /* a line longer than the buffer: not one of ours */
    }
    free(buf);
    return rc;
}

double tu_json_num(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(line, k);
    if (!p)
        return NAN;
    char *end;
    double v = strtod(p + strlen(k), &end);
    return end == p + strlen(k) ? NAN : v;
}

int tu_is_event(const char *line, const char *kind)
{
    char k[64];
    snprintf(k, sizeof k, "E {\"event\":\"%s\"", kind);
    return strncmp(line, k, strlen(k)) == 0;
}
