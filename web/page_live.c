/* web/page_live.c - the live view: the daemon's stream as server-sent
 * events, its status, and control (arm, start, stop) by token. */
#include "acquire/daemon.h"
#include "web/server_private.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* live: the daemon's stream as server-sent events */

enum MHD_Result pl_web_page_live(pl_web *w, struct MHD_Connection *c)
{
    pl_buf b;
    pl_buf_init(&b);
    pl_web_page_head(&b, "live", NULL);
    pl_buf_printf(&b, "<h1>Live</h1>\n<p id=\"daemon\" data-control=\"%d\">daemon: <code>",
                  w->control);
    pl_buf_html(&b, w->socket);
    pl_buf_puts(&b, "</code> <span id=\"state\">connecting</span></p>\n"
                    "<div id=\"controls\">"
                    "<button id=\"arm\" disabled>arm</button> "
                    "<button id=\"start\" disabled>start</button> "
                    "<button id=\"stop\" disabled>stop</button> "
                    "<span id=\"reply\"></span></div>\n"
                    "<div id=\"levels\"><div class=\"level\"><span>v<sub>p1</sub></span>"
                    "<meter id=\"level1\" min=\"-0.5\" max=\"0.5\" value=\"0\"></meter>"
                    "<output id=\"value1\">-</output> m/s</div>"
                    "<div class=\"level\"><span>v<sub>p2</sub></span>"
                    "<meter id=\"level2\" min=\"-0.5\" max=\"0.5\" value=\"0\"></meter>"
                    "<output id=\"value2\">-</output> m/s</div></div>\n"
                    "<div class=\"plot\" id=\"plot-live\"></div>\n"
                    "<p class=\"hint\">The last 10 s of both channels as the daemon reads them "
                    "(min and max of each 5 ms).  <span id=\"latency\"></span></p>\n"
                    "<h2>Physics</h2>\n"
                    "<p id=\"physics-state\"></p>\n<ul id=\"notices\"></ul>\n"
                    "<div class=\"plot\" id=\"plot-physics\"></div>\n"
                    "<table id=\"impacts-live\"><thead><tr><th>t (s)</th><th>ratio &plusmn; se</th>"
                    "<th>omega before &rarr; after (rad/s)</th><th>L<sub>p</sub></th>"
                    "<th>latency (ms)</th></tr></thead><tbody></tbody></table>\n"
                    "<p id=\"summary\"></p>\n"
                    "<p class=\"hint\">The daemon's impact search while the prism rolls: a view, "
                    "from the moment this page joined; the run's stored result is processing of the "
                    "whole run after the stop.</p>\n"
                    "<script src=\"/static/uPlot.iife.min.js\"></script>\n"
                    "<script src=\"/static/physics.js\"></script>\n"
                    "<script src=\"/static/live.js\"></script>\n");
    pl_web_page_end(&b);
    return pl_web_send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

typedef struct {
    pl_web *w;
    int fd;                 /* the daemon's stream; -1: not connected */
    char in[65536];
    size_t in_len;
    int said_hello;
    int skip;               /* dropping a line too long for in[] */
    double last_sent;
} sse;

static double mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int stream_connect(const char *path, char *why, size_t size)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, size, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        write(fd, "stream\n", 7) != 7) {
        /* the socket is the store's path with .sock: not for visitors */
        snprintf(why, size, "no daemon answers on the store's socket (%s)", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Turns the daemon's lines into events, each line its event's data as
 * it came: "S ..." status, "D ..." data, "E {json}" physics (the live
 * search's events, acquire/live.h), "G n" a gap (n lines the daemon
 * could not queue for us). */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    sse *s = cls;
    size_t out = 0;
    if (!s->said_hello) {
        s->said_hello = 1;
        char why[300];
        s->fd = stream_connect(s->w->socket, why, sizeof why);
        if (s->fd < 0) {
            int n = snprintf(buf, max, "retry: 2000\nevent: nodaemon\ndata: %s\n\n", why);
            return n > 0 && (size_t)n < max ? n : MHD_CONTENT_READER_END_WITH_ERROR;
        }
        int n = snprintf(buf, max, "retry: 1000\n: prismlab live\n\n");
        s->last_sent = mono_now();
        return n;
    }
    if (s->fd < 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    for (;;) {
        if (s->w->stopping)
            return out ? (ssize_t)out : MHD_CONTENT_READER_END_OF_STREAM;
        /* whole lines already here first */
        char *nl;
        while ((nl = memchr(s->in, '\n', s->in_len))) {
            size_t k = (size_t)(nl - s->in);
            const char *ev = s->in[0] == 'D' ? "data" : s->in[0] == 'S' ? "status"
                           : s->in[0] == 'E' ? "physics" : s->in[0] == 'G' ? "gap"
                           : s->in[0] == 'e' ? "nodaemon" : "reply";
            if (out + k + 32 > max && out)
                return (ssize_t)out;
            if (k + 32 > max) {   /* never fits a block: lost, and said so */
                out += (size_t)snprintf(buf + out, max - out, "event: gap\ndata: G 1\n\n");
            } else {
                out += (size_t)snprintf(buf + out, max - out, "event: %s\ndata: ", ev);
                memcpy(buf + out, s->in, k);
                out += k;
                memcpy(buf + out, "\n\n", 2);
                out += 2;
            }
            s->in_len -= k + 1;
            memmove(s->in, nl + 1, s->in_len);
        }
        if (out) {
            s->last_sent = mono_now();
            return (ssize_t)out;
        }
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        int r = poll(&p, 1, 250);
        if (r > 0) {
            ssize_t got = read(s->fd, s->in + s->in_len, sizeof s->in - s->in_len);
            if (got <= 0) {
                close(s->fd);
                s->fd = -1;
                int n = snprintf(buf, max, "event: nodaemon\ndata: the daemon closed the stream\n\n");
                return n;
            }
            s->in_len += (size_t)got;
            if (s->skip) {   /* the rest of a line too long for the buffer */
                char *end = memchr(s->in, '\n', s->in_len);
                size_t drop = end ? (size_t)(end - s->in) + 1 : s->in_len;
                s->in_len -= drop;
                memmove(s->in, s->in + drop, s->in_len);
                s->skip = !end;
                if (end)
                    return snprintf(buf, max, "event: gap\ndata: G 1\n\n");
            }
            /* full, and not one whole line in it: a line longer than the
             * buffer (a full buffer of whole lines is read on above) */
            if (s->in_len == sizeof s->in && !memchr(s->in, '\n', s->in_len)) {
                s->in_len = 0;
                s->skip = 1;
            }
        } else if (mono_now() - s->last_sent > 5) {
            s->last_sent = mono_now();
            return snprintf(buf, max, ": keepalive\n\n");
        }
    }
}

static void sse_free(void *cls)
{
    sse *s = cls;
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}

enum MHD_Result pl_web_api_live(pl_web *w, struct MHD_Connection *c)
{
    sse *s = calloc(1, sizeof *s);
    if (!s)
        return pl_web_fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    s->w = w;
    s->fd = -1;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536,
                                                               sse_read, s, sse_free);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static int token_equal(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (strlen(a) != n)
        return 0;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

enum MHD_Result pl_web_api_control(pl_web *w, struct MHD_Connection *c, const char *cmd)
{
    if (strcmp(cmd, "arm") && strcmp(cmd, "start") && strcmp(cmd, "stop"))
        return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "no control command '%.20s' (arm, start, stop)", cmd);
    if (!w->control)
        return pl_web_fail(c, MHD_HTTP_FORBIDDEN, "read-only: start prismlab serve with --control "
                    "to arm, start and stop the daemon");
    const char *tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Prismlab-Token");
    if (!tok || !token_equal(tok, w->token))
        return pl_web_fail(c, MHD_HTTP_FORBIDDEN, "%s: the X-Prismlab-Token header must carry "
                    "the token prismlab serve printed at start-up", tok ? "wrong token" : "no token");
    char reply[512];
    pl_err err = {0};
    if (pl_daemon_command(w->socket, cmd, reply, sizeof reply, &err) != PL_OK)
        return pl_web_fail(c, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", err.msg);
    pl_buf b;
    pl_buf_init(&b);
    pl_buf_puts(&b, "{\"reply\":");
    pl_buf_json_str(&b, reply);
    pl_buf_puts(&b, "}\n");
    return pl_web_send_buf(c, strncmp(reply, "ok", 2) ? MHD_HTTP_CONFLICT : MHD_HTTP_OK,
                    "application/json", &b, NULL);
}

enum MHD_Result pl_web_api_status(pl_web *w, struct MHD_Connection *c)
{
    char reply[512];
    pl_err err = {0};
    pl_buf b;
    pl_buf_init(&b);
    if (pl_daemon_command(w->socket, "status", reply, sizeof reply, &err) != PL_OK) {
        pl_buf_puts(&b, "{\"daemon\":false,\"error\":");
        pl_buf_json_str(&b, err.msg);
    } else {
        pl_buf_puts(&b, "{\"daemon\":true,\"reply\":");
        pl_buf_json_str(&b, reply);
    }
    pl_buf_printf(&b, ",\"control\":%s}\n", w->control ? "true" : "false");
    return pl_web_send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}
