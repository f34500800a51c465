/* web/buf.h - a growing byte buffer for the pages and JSON the server
 * writes, with the two escapings every string from the store goes
 * through: HTML text/attribute and JSON string.
 *
 * A buffer that fails to grow remembers it (pl_buf.failed) and ignores
 * further appends, so a page is built with plain calls and checked once
 * at the end.
 */
#ifndef PL_WEB_BUF_H
#define PL_WEB_BUF_H

#include <stddef.h>

typedef struct {
    char *data;     /* NUL-terminated while not failed */
    size_t len, cap;
    int failed;     /* an allocation failed: the content is incomplete */
} pl_buf;

/* An empty buffer (no allocation until the first append). */
void pl_buf_init(pl_buf *b);

/* Frees the content; the buffer is empty again. */
void pl_buf_free(pl_buf *b);

/* Appends n bytes of s. */
void pl_buf_add(pl_buf *b, const char *s, size_t n);

/* Appends a NUL-terminated string. */
void pl_buf_puts(pl_buf *b, const char *s);

/* Appends printf-style text. */
void pl_buf_printf(pl_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends s escaped for HTML text and double-quoted attributes (& < > " '). */
void pl_buf_html(pl_buf *b, const char *s);

/* Appends s as a JSON string, quotes included (control characters as
 * \u00XX; bytes >= 0x80 passed through: the store holds UTF-8). */
void pl_buf_json_str(pl_buf *b, const char *s);

/* Appends a number as JSON: shortest round-tripping form of %.*g, and
 * null for NaN or an infinity (JSON has neither). */
void pl_buf_json_num(pl_buf *b, double v, int digits);

/* Takes the content out (the caller frees it); the buffer is empty after. */
char *pl_buf_take(pl_buf *b, size_t *len);

#endif
