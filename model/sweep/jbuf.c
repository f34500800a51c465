/* model/sweep/jbuf.c - see jbuf.h. */
#include "model/sweep/jbuf.h"

#include "core/numtext.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void pl_jbuf_add(pl_jbuf *j, const char *fmt, ...)
{
    if (j->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = *j->cap - j->len;
        int n = vsnprintf(*j->buf ? *j->buf + j->len : NULL, *j->buf ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            j->oom = 1;
            return;
        }
        if (*j->buf && (size_t)n < room) {
            j->len += (size_t)n;
            return;
        }
        size_t want = (*j->cap ? *j->cap * 2 : 256) + (size_t)n + 1;
        char *nb = realloc(*j->buf, want);
        if (!nb) {
            j->oom = 1;
            return;
        }
        *j->buf = nb;
        *j->cap = want;
    }
}

void pl_jbuf_start(pl_jbuf *j, char **buf, size_t *cap)
{
    j->buf = buf;
    j->cap = cap;
    j->len = 0;
    j->oom = 0;
    pl_jbuf_add(j, "{");
}

void pl_jbuf_key(pl_jbuf *j, const char *key)
{
    pl_jbuf_add(j, "%s\"%s\":", j->len > 1 ? "," : "", key);
}

/* Shortest text that reads back as the same double (core/numtext.h);
 * null for NaN and infinities (JSON has neither). */
void pl_jbuf_number_text(char out[32], double v)
{
    if (!isfinite(v))
        snprintf(out, 32, "null");
    else
        pl_num_text(out, 32, v);
}

void pl_jbuf_num(pl_jbuf *j, const char *key, double v)
{
    char t[32];
    pl_jbuf_number_text(t, v);
    pl_jbuf_key(j, key);
    pl_jbuf_add(j, "%s", t);
}

void pl_jbuf_int(pl_jbuf *j, const char *key, long long v)
{
    pl_jbuf_key(j, key);
    pl_jbuf_add(j, "%lld", v);
}

void pl_jbuf_quoted(pl_jbuf *j, const char *s)
{
    pl_jbuf_add(j, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            pl_jbuf_add(j, "\\%c", c);
        else if (c < 0x20)
            pl_jbuf_add(j, "\\u%04x", c);
        else
            pl_jbuf_add(j, "%c", c);
    }
    pl_jbuf_add(j, "\"");
}

void pl_jbuf_str(pl_jbuf *j, const char *key, const char *s)
{
    pl_jbuf_key(j, key);
    pl_jbuf_quoted(j, s);
}

/* A value as given: a JSON number when it reads whole as one. */
void pl_jbuf_value(pl_jbuf *j, const char *key, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end != text && !*end && !errno && isfinite(v))
        pl_jbuf_num(j, key, v);
    else
        pl_jbuf_str(j, key, text);
}


/* An array's element: a number when the text reads whole as one. */
void pl_jbuf_elem(pl_jbuf *j, int first, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!first)
        pl_jbuf_add(j, ",");
    if (end != text && !*end && !errno && isfinite(v)) {
        char t[32];
        pl_jbuf_number_text(t, v);
        pl_jbuf_add(j, "%s", t);
    } else {
        pl_jbuf_quoted(j, text);
    }
}
