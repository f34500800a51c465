/* web/respond.c - the answers every page gives: responses, errors
 * without the server's paths, strict parameters, the common page parts. */
#include "core/version.h"
#include "web/server_private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* responses */

enum MHD_Result pl_web_send_buf(struct MHD_Connection *c, unsigned code,
                                const char *mime, pl_buf *b, const char *csp)
{
    if (b->failed) {
        pl_buf_free(b);
        pl_buf_puts(b, "out of memory building the answer\n");
        code = MHD_HTTP_INTERNAL_SERVER_ERROR;
        mime = "text/plain; charset=utf-8";
    }
    size_t len;
    char *data = pl_buf_take(b, &len);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data,
                                                             MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", mime);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", csp ? csp :
                            "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                            "img-src 'self' data:; frame-ancestors 'none'");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

/* msg without the server's paths (a store's error names its file): " in
 * '/...'" goes, any other quoted absolute path becomes "a file on the
 * server".  A visitor learns what was wrong, not where the lab keeps its
 * data. */
void pl_web_scrub_paths(char *msg)
{
    char *q;
    while ((q = strstr(msg, "'/"))) {
        char *end = strchr(q + 2, '\'');
        if (!end)
            break;
        end++;
        const char *put = "a file on the server";
        if (q - msg >= 4 && !strncmp(q - 4, " in ", 4)) {
            q -= 4;
            put = "";
        }
        size_t pl = strlen(put);
        memmove(q + pl, end, strlen(end) + 1);
        memcpy(q, put, pl);
    }
}

/* A 4xx/5xx answer saying what was wrong, without the server's paths: a
 * page for a browser's navigation (it asks for text/html), one line of
 * plain text for the API's callers (run.js shows it as it is). */
enum MHD_Result pl_web_fail(struct MHD_Connection *c, unsigned code,
                            const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pl_web_scrub_paths(msg);
    pl_buf b;
    pl_buf_init(&b);
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    if (!accept || !strstr(accept, "text/html")) {
        pl_buf_printf(&b, "%u: %s\n", code, msg);
        return pl_web_send_buf(c, code, "text/plain; charset=utf-8", &b, NULL);
    }
    const char *reason = MHD_get_reason_phrase_for(code);
    char title[80];
    snprintf(title, sizeof title, "%u %s", code, reason ? reason : "");
    pl_web_page_head(&b, title, NULL);
    pl_buf_printf(&b, "<h1 id=\"error\" data-code=\"%u\">", code);
    pl_buf_html(&b, title);
    pl_buf_puts(&b, "</h1>\n<p id=\"why\">");
    pl_buf_html(&b, msg);
    pl_buf_puts(&b, "</p>\n<p>See <a href=\"/\">the runs</a> or <a href=\"/experiments\">"
                    "the experiments</a>.</p>\n");
    pl_web_page_end(&b);
    return pl_web_send_buf(c, code, "text/html; charset=utf-8", &b, NULL);
}

unsigned pl_web_status_of(pl_status st)
{
    switch (st) {
    case PL_ENOTFOUND: return MHD_HTTP_NOT_FOUND;
    case PL_EINVAL: return MHD_HTTP_BAD_REQUEST;
    default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

/* ------------------------------------------------------------------ */
/* parameters: strict, each error names the parameter and what it expects */

int pl_web_parse_id(const char *s, long long *id)
{
    if (!s || !*s || strlen(s) > 15)
        return 0;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
    }
    *id = v;
    return v > 0;
}

/* 1: found and good; 0: absent (def kept); -1: bad (msg says why) */
int pl_web_arg_double(struct MHD_Connection *c, const char *name, double lo,
                      double hi, double *out, char *msg, size_t size)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
        snprintf(msg, size, "parameter '%s': expected a number in [%g, %g], got '%.40s'",
                 name, lo, hi, s);
        return -1;
    }
    *out = v;
    return 1;
}

/* ------------------------------------------------------------------ */
/* common page parts */

void pl_web_page_head(pl_buf *b, const char *title_a, const char *title_b)
{
    pl_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<link rel=\"icon\" href=\"data:,\">\n<title>");
    pl_buf_html(b, title_a);
    if (title_b) {
        pl_buf_puts(b, " ");
        pl_buf_html(b, title_b);
    }
    pl_buf_puts(b, " - prismlab</title>\n"
                   "<link rel=\"stylesheet\" href=\"/static/uPlot.min.css\">\n"
                   "<link rel=\"stylesheet\" href=\"/static/prismlab.css\">\n"
                   "</head><body>\n<nav><a href=\"/\">runs</a> <a href=\"/experiments\">experiments</a> "
                   "<a href=\"/live\">live</a></nav>\n");
}

void pl_web_page_end(pl_buf *b)
{
    pl_buf_printf(b, "<footer>prismlab %s</footer>\n</body></html>\n", pl_version());
}

/* percent-encodes s for a path segment or a query value */
void pl_web_url_enc(pl_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~')
            pl_buf_add(b, s, 1);
        else
            pl_buf_printf(b, "%%%02X", ch);
    }
}

void pl_web_num_cell(pl_buf *b, const char *fmt, double v)
{
    if (isfinite(v))
        pl_buf_printf(b, fmt, v);
    else
        pl_buf_puts(b, "<td class=\"na\">-</td>");
}
