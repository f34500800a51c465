/* web/buf.c - see buf.h. */
#include "web/buf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_buf_init(pl_buf *b)
{
    memset(b, 0, sizeof *b);
}

void pl_buf_free(pl_buf *b)
{
    free(b->data);
    pl_buf_init(b);
}

static int grow(pl_buf *b, size_t extra)
{
    if (b->failed)
        return 0;
    if (b->len + extra + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return 0;
    }
    b->data = d;
    b->cap = cap;
    return 1;
}

void pl_buf_add(pl_buf *b, const char *s, size_t n)
{
    if (!grow(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void pl_buf_puts(pl_buf *b, const char *s)
{
    pl_buf_add(b, s, strlen(s));
}

void pl_buf_printf(pl_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        pl_buf_add(b, small, (size_t)n);
        return;
    }
    if (!grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void pl_buf_html(pl_buf *b, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: continue;
        }
        pl_buf_add(b, run, (size_t)(s - run));
        pl_buf_puts(b, rep);
        run = s + 1;
    }
    pl_buf_add(b, run, (size_t)(s - run));
}

void pl_buf_json_str(pl_buf *b, const char *s)
{
    pl_buf_add(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        /* '<' too: a string that ends up inside a <script> cannot close it */
        if (c >= 0x20 && c != '"' && c != '\\' && c != '<')
            continue;
        pl_buf_add(b, run, (size_t)(s - run));
        if (c == '"')
            pl_buf_puts(b, "\\\"");
        else if (c == '\\')
            pl_buf_puts(b, "\\\\");
        else if (c == '\n')
            pl_buf_puts(b, "\\n");
        else
            pl_buf_printf(b, "\\u%04x", c);
        run = s + 1;
    }
    pl_buf_add(b, run, (size_t)(s - run));
    pl_buf_add(b, "\"", 1);
}

void pl_buf_json_num(pl_buf *b, double v, int digits)
{
    if (!isfinite(v)) {
        pl_buf_add(b, "null", 4);
        return;
    }
    char s[40];
    int n = snprintf(s, sizeof s, "%.*g", digits, v);
    pl_buf_add(b, s, (size_t)n);
}

char *pl_buf_take(pl_buf *b, size_t *len)
{
    if (!b->data)
        grow(b, 0);
    char *d = b->data;
    if (len)
        *len = b->len;
    pl_buf_init(b);
    return d;
}
