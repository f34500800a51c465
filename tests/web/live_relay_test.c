/* tests/web/live_relay_test.c - /api/live relays the daemon's stream
 * line for line, in process over real sockets: a server on a real store
 * whose daemon socket is served by a thread of this test speaking the
 * daemon's stream (its hello, S, D and E lines, as acquire/daemon.c sends
 * them), because a real daemon cannot be made to send a line too long for
 * the relay.  Checked:
 *   - each E line (the live search's events) becomes a `physics` event
 *     whose data is the line unchanged, in the daemon's order among the
 *     D and S lines;
 *   - a long line that fits the relay's 64 KiB buffer (65 000 bytes: a
 *     track of 30 s) arrives whole; one that does not (70 000 bytes) is
 *     dropped and said as a gap ("G 1"), nothing of it relayed, and the
 *     lines after it arrive whole;
 *   - lines read together with the start of a long line are relayed (the
 *     relay used to drop its whole buffer, whole lines and all, when a
 *     read filled it);
 *   - the daemon's end of the stream ends it with a `nodaemon` event.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/util/testutil.h"
#include "web/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char impact[] =
    "E {\"event\":\"impact\",\"run\":3,\"wall_ms\":1795000000000.0,\"t_s\":1.2345,"
    "\"omega_minus\":3.349,\"omega_plus\":3.335,\"ratio\":0.99582,\"ratio_se\":2.1e-05,"
    "\"lp\":8.48,\"confirmed\":1,\"latency_s\":0.091}";
static const char track[] =
    "E {\"event\":\"track\",\"run\":3,\"wall_ms\":1795000000001.0,\"t0_s\":1.2,\"dt_s\":0.01,"
    "\"omega\":[3.3,3.31,null],\"lp\":[8.1,8.2,null]}";
static const char stop[] =
    "E {\"event\":\"stop\",\"run\":3,\"wall_ms\":1795000000002.0,\"frames\":60000,\"impacts\":1,"
    "\"why\":\"duration: \\\"done\\\"\"}";
static const char status[] = "S state=recording run=3 frames=1000";
static const char data[] = "D 1795000000000.0 0 10000 10 1 0.1 0.2 -0.1 0.0";

/* The daemon's side: listens on path, takes the server's "stream", sends
 * the lines (two of them too long), then closes. */
typedef struct {
    int lfd;
} peer;

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void send_line(int fd, const char *line)
{
    send_all(fd, line, strlen(line));
    send_all(fd, "\n", 1);
}

/* An E line of n bytes (no newline), malloc'd. */
static char *long_line(size_t n)
{
    char *s = malloc(n + 1);
    static const char head[] = "E {\"event\":\"track\",\"omega\":[";
    memcpy(s, head, sizeof head - 1);
    memset(s + sizeof head - 1, '7', n - (sizeof head - 1) - 2);
    memcpy(s + n - 2, "]}", 2);
    s[n] = '\0';
    return s;
}

static void *daemon_side(void *arg)
{
    peer *p = arg;
    int fd = accept(p->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char cmd[16] = {0};
    ssize_t got = read(fd, cmd, sizeof cmd - 1);
    if (got == 7 && !strcmp(cmd, "stream\n")) {
        send_line(fd, "ok streaming");
        send_line(fd, status);
        send_line(fd, impact);
        send_line(fd, data);
        char *a = long_line(65000), *b = long_line(70000);
        send_line(fd, a);
        send_line(fd, track);
        send_line(fd, b);
        send_line(fd, stop);
        free(a);
        free(b);
    }
    close(fd);
    return NULL;
}

/* GET /api/live over HTTP/1.0 (no chunks: the body is the events as
 * sent) until the server ends it; the body, malloc'd. */
static char *get_live(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail_msg("connect: port %d", port);
    static const char req[] = "GET /api/live HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    assert_int_equal(write(fd, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
    size_t len;
    char *buf = tu_read_all(fd, 20000, &len);
    if (!buf)
        fail_msg("/api/live: not ended within 20 s of its last bytes (%zu so far)", len);
    close(fd);
    char *b = strstr(buf, "\r\n\r\n");
    assert_non_null(b);
    char *out = strdup(b + 4);
    free(buf);
    return out;
}

/* Where event `name` with data `line` is in body; fails when it is not. */
static size_t at(const char *body, const char *name, const char *line)
{
    size_t n = strlen(name) + strlen(line) + 32;
    char *want = malloc(n);
    snprintf(want, n, "event: %s\ndata: %s\n\n", name, line);
    const char *p = strstr(body, want);
    if (!p)
        fail_msg("no \"%s\" event with data '%.80s...' in:\n%.2000s", name, line, body);
    free(want);
    return (size_t)(p - body);
}

static void test_relay(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("relay");
    char *db = tu_path(dir, "r.db");
    char *sock = tu_path(dir, "d.sock");
    assert_int_equal(tu_init_db(db), 0);
    peer p = {.lfd = socket(AF_UNIX, SOCK_STREAM, 0)};
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
    assert_int_equal(bind(p.lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p.lfd, 4), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, daemon_side, &p), 0);

    pl_web *web;
    pl_err err = {0};
    pl_web_options o = {.db = db, .listen = "127.0.0.1:0", .socket = sock};
    if (pl_web_start(&web, &o, &err) != PL_OK)
        fail_msg("%s", err.msg);
    int port = atoi(strrchr(pl_web_url(web), ':') + 1);
    char *body = get_live(port);
    pthread_join(th, NULL);
    pl_web_stop(web);
    close(p.lfd);

    size_t s = at(body, "status", status), i = at(body, "physics", impact);
    size_t d = at(body, "data", data), t = at(body, "physics", track);
    size_t e = at(body, "physics", stop), n = at(body, "nodaemon", "the daemon closed the stream");
    char *lng = long_line(65000);
    size_t l = at(body, "physics", lng);
    free(lng);
    assert_true(s < i && i < d && d < l && l < t && t < e && e < n);
    /* between the track and the stop: the gap, and nothing of the line */
    size_t after = t + strlen("event: physics\ndata: \n\n") + strlen(track);
    static const char gap[] = "event: gap\ndata: G 1\n\n";
    assert_int_equal(e - after, sizeof gap - 1);
    assert_memory_equal(body + after, gap, sizeof gap - 1);
    free(body);
    tu_rmtree(dir);
    free(dir);
    free(db);
    free(sock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
