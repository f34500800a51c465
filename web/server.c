/* web/server.c - see server.h.  Starting and stopping the server, and
 * routing each request to its page (web/page_*.c) or endpoint; the
 * answers' common parts are web/respond.c's, the envelopes web/trace.c's,
 * the run data web/runcache.c's. */
#define _GNU_SOURCE   /* accept4-free, but struct ucred-free too: for getrandom */
#include "web/server_private.h"
#include "web/assets.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

const char *pl_web_url(const pl_web *w) { return w->url; }
const char *pl_web_token(const pl_web *w) { return w->token; }

/* ------------------------------------------------------------------ */
/* routing */

static enum MHD_Result static_file(struct MHD_Connection *c, const char *name)
{
    const pl_web_asset *a = pl_web_asset_find(name);
    if (!a)
        return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "no static file '%.64s'", name);
    struct MHD_Response *r = MHD_create_response_from_buffer(a->size, (void *)a->data,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", a->mime);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cache-Control", "max-age=3600");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* A page bound to loopback answers only to loopback names: a page of
 * another site cannot reach it through a name that resolves to 127.0.0.1
 * (DNS rebinding). */
static int host_ok(pl_web *w, struct MHD_Connection *c)
{
    if (!w->loopback)
        return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!h)
        return 0;
    const char *names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(h, names[i], n) && (h[n] == '\0' || h[n] == ':'))
            return 1;
    }
    return 0;
}

/* The response is done: the connection now waits for its next request,
 * which the guard times afresh. */
static void request_completed(void *cls, struct MHD_Connection *c, void **state,
                              enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)state;
    (void)code;
    pl_connguard_request_done(c);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version,
                              const char *upload, size_t *upload_size, void **state)
{
    (void)version;
    (void)upload;
    pl_web *w = cls;
    static int marker;
    if (!*state) {   /* headers only so far */
        *state = &marker;
        return MHD_YES;
    }
    if (*upload_size) {   /* a body is not used by any request: skip it */
        *upload_size = 0;
        return MHD_YES;
    }
    pl_connguard_request_whole(c);   /* headers and body are in: answer it */
    if (!host_ok(w, c))
        return pl_web_fail(c, MHD_HTTP_FORBIDDEN, "this server answers to 127.0.0.1, localhost "
                    "and [::1] only");
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    int post = !strcmp(method, "POST");
    if (!strncmp(url, "/api/control/", 13))
        return post ? pl_web_api_control(w, c, url + 13)
                    : pl_web_fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%.10s: control is POST only", method);
    if (!get)
        return pl_web_fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%.10s: only GET (and POST to "
                    "/api/control/...) are served", method);
    if (!strcmp(url, "/"))
        return pl_web_page_runs(w, c);
    if (!strcmp(url, "/favicon.ico")) {   /* browsers ask; there is none */
        pl_buf b;
        pl_buf_init(&b);
        return pl_web_send_buf(c, MHD_HTTP_NO_CONTENT, "text/plain", &b, NULL);
    }
    if (!strcmp(url, "/experiments"))
        return pl_web_page_experiments(w, c);
    if (!strcmp(url, "/live"))
        return pl_web_page_live(w, c);
    if (!strcmp(url, "/api/live"))
        return pl_web_api_live(w, c);
    if (!strcmp(url, "/api/status"))
        return pl_web_api_status(w, c);
    if (!strncmp(url, "/static/", 8))
        return static_file(c, url + 8);
    if (!strncmp(url, "/experiment/", 12)) {
        /* /experiment/NAME/FILE: the name may hold '/', the file never */
        const char *rest = url + 12, *slash = strrchr(rest, '/');
        if (!slash)
            return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "an experiment's report is at /experiment/NAME/");
        char name[PL_NAME_SIZE + 1];
        size_t n = (size_t)(slash - rest);
        if (n > PL_NAME_BYTES)
            return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "experiment name: at most %d characters", PL_NAME_MAX);
        memcpy(name, rest, n);
        name[n] = '\0';
        return pl_web_page_experiment(w, c, name, slash + 1);
    }
    long long id;
    char idtext[32], what[16];
    if (!strncmp(url, "/run/", 5)) {
        if (!pl_web_parse_id(url + 5, &id))
            return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "run id: expected a positive integer, got '%.20s'",
                        url + 5);
        return pl_web_page_run(w, c, id);
    }
    if (!strncmp(url, "/api/run/", 9)) {
        const char *rest = url + 9, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        if (!slash || n >= sizeof idtext || strlen(slash + 1) >= sizeof what)
            return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "expected /api/run/ID/meta, /api/run/ID/window "
                        "or /api/run/ID/impacts");
        memcpy(idtext, rest, n);
        idtext[n] = '\0';
        snprintf(what, sizeof what, "%s", slash + 1);
        if (!pl_web_parse_id(idtext, &id))
            return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "run id: expected a positive integer, got '%s'",
                        idtext);
        if (!strcmp(what, "meta"))
            return pl_web_api_meta(w, c, id);
        if (!strcmp(what, "window"))
            return pl_web_api_window(w, c, id);
        if (!strcmp(what, "impacts"))
            return pl_web_api_impacts(w, c, id);
        if (!strcmp(what, "ratios"))
            return pl_web_api_ratios(w, c, id);
        if (!strcmp(what, "answer"))
            return pl_web_api_answer(w, c, id);
        return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "expected /api/run/ID/meta, /api/run/ID/window, "
                    "/api/run/ID/impacts, /api/run/ID/ratios or /api/run/ID/answer");
    }
    return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "no page at this address (see / for the runs)");
}

/* ------------------------------------------------------------------ */

pl_status pl_web_parse_listen(const char *text, char *host, size_t size, int *port,
                              pl_err *err)
{
    const char *colon;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return pl_err_set(err, PL_EINVAL, "--listen '%s': expected [IPV6]:PORT", text);
        if ((size_t)(close - text - 1) >= size)
            return pl_err_set(err, PL_EINVAL, "--listen '%s': address too long", text);
        snprintf(host, size, "%.*s", (int)(close - text - 1), text + 1);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return pl_err_set(err, PL_EINVAL, "--listen '%s': expected HOST:PORT "
                              "(127.0.0.1:8080)", text);
        if ((size_t)(colon - text) >= size)
            return pl_err_set(err, PL_EINVAL, "--listen '%s': address too long", text);
        if (colon == text)
            snprintf(host, size, "127.0.0.1");
        else
            snprintf(host, size, "%.*s", (int)(colon - text), text);
    }
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || p < 0 || p > 65535)
        return pl_err_set(err, PL_EINVAL, "--listen '%s': expected a port in [0, 65535] "
                          "after the last ':'", text);
    *port = (int)p;
    return PL_OK;
}

static int bind_socket(pl_web *w, const char *host, int port, pl_err *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    int family;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        family = a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        len = sizeof *a4;
        w->loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        family = a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        len = sizeof *a6;
        w->loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
    } else {
        pl_err_set(err, PL_EINVAL, "--listen: '%s' is not an IPv4 or IPv6 address "
                   "(names other than localhost are not looked up)", host);
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
        pl_err_set(err, PL_EIO, "--listen %s:%d: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    getsockname(fd, (struct sockaddr *)&ss, &len);
    w->port = ntohs(family == AF_INET ? a4->sin_port : a6->sin6_port);
    snprintf(w->url, sizeof w->url, family == AF_INET ? "http://%s:%d/" : "http://[%s]:%d/",
             host, w->port);
    return fd;
}

/* Removes our folder: report folders of plain files, one level deep. */
static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char sub[PATH_MAX + 300];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *s2 = opendir(sub);
        struct dirent *f;
        while (s2 && (f = readdir(s2))) {
            char file[PATH_MAX + 600];
            snprintf(file, sizeof file, "%s/%s", sub, f->d_name);
            if (f->d_type != DT_DIR)
                unlink(file);
        }
        if (s2)
            closedir(s2);
        if (rmdir(sub) != 0)
            unlink(sub);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

void pl_web_stop(pl_web *w)
{
    if (!w)
        return;
    w->stopping = 1;
    if (w->mhd)
        MHD_stop_daemon(w->mhd);
    pl_connguard_destroy(w->guard);
    pl_runcache_destroy(w->cache);
    pl_store_close(w->store);
    if (w->tmp[0])
        rm_tree(w->tmp);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

pl_status pl_web_start(pl_web **out, const pl_web_options *opt, pl_err *err)
{
    *out = NULL;
    char host[64];
    int port;
    if (pl_web_parse_listen(opt->listen ? opt->listen : "127.0.0.1:8080", host,
                            sizeof host, &port, err) != PL_OK)
        return err->code;
    pl_web *w = calloc(1, sizeof *w);
    if (!w)
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    pthread_mutex_init(&w->lock, NULL);
    w->control = opt->control;
    if (opt->socket)
        snprintf(w->socket, sizeof w->socket, "%s", opt->socket);
    else if (snprintf(w->socket, sizeof w->socket, "%s.sock", opt->db) >= (int)sizeof w->socket) {
        pl_web_stop(w);
        return pl_err_set(err, PL_EINVAL, "%s.sock: socket path too long; give --socket", opt->db);
    }
    if (opt->control) {
        unsigned char r[16];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
            pl_web_stop(w);
            return pl_err_set(err, PL_EIO, "getrandom: %s", strerror(errno));
        }
        for (int i = 0; i < 16; i++)
            snprintf(w->token + 2 * i, 3, "%02x", r[i]);
    }
    if (pl_store_open(&w->store, opt->db, PL_STORE_READONLY, err) != PL_OK ||
        pl_runcache_create(&w->cache, err) != PL_OK) {
        pl_web_stop(w);
        return err->code;
    }
    const char *tmpdir = getenv("TMPDIR");
    snprintf(w->tmp, sizeof w->tmp, "%s/prismlab-serve-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(w->tmp)) {
        pl_status st = pl_err_set(err, PL_EIO, "%s: %s", w->tmp, strerror(errno));
        w->tmp[0] = '\0';
        pl_web_stop(w);
        return st;
    }
    int fd = bind_socket(w, host, port, err);
    if (fd < 0) {
        pl_web_stop(w);
        return err->code;
    }
    double deadline = opt->request_deadline_s > 0 ? opt->request_deadline_s
                                                  : PL_WEB_REQUEST_DEADLINE_S;
    if (pl_connguard_create(&w->guard, deadline, PL_WEB_MAX_WAITING, err) != PL_OK) {
        close(fd);
        pl_web_stop(w);
        return err->code;
    }
    /* Every client of a loopback server is 127.0.0.1, so a per-IP limit
     * below the total only let one slow client lock out every browser; the
     * guard keeps the room instead: at most PL_WEB_MAX_WAITING connections
     * wait for a request, each at most the deadline, and the rest of the
     * CONNECTION_LIMIT is for requests being answered (live streams). */
    w->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                              MHD_USE_POLL,
                              0, NULL, NULL, handle, w,
                              MHD_OPTION_LISTEN_SOCKET, fd,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)PL_WEB_MAX_CONNECTIONS,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PL_WEB_MAX_CONNECTIONS,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
                              MHD_OPTION_NOTIFY_CONNECTION, pl_connguard_notify, w->guard,
                              MHD_OPTION_NOTIFY_COMPLETED, request_completed, w,
                              MHD_OPTION_END);
    if (!w->mhd) {
        close(fd);
        pl_web_stop(w);
        return pl_err_set(err, PL_EIO, "libmicrohttpd would not start on %s:%d", host, port);
    }
    *out = w;
    return PL_OK;
}
