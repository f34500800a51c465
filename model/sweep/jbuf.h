/* model/sweep/jbuf.h - a JSON object as growing text: the results a sweep's
 * points return (model/sweep/spec.c).  The text lives in a buffer the
 * caller owns (*buf, *cap, grown with realloc); on out of memory the
 * object stops growing and oom says so. */
#ifndef PL_SWEEP_JBUF_H
#define PL_SWEEP_JBUF_H

#include <stddef.h>

typedef struct {
    char **buf;
    size_t *cap, len;
    int oom;
} pl_jbuf;

/* Starts an object ("{") in *buf (of *cap bytes; may be NULL and 0). */
void pl_jbuf_start(pl_jbuf *j, char **buf, size_t *cap);

/* Appends printf-formatted text. */
void pl_jbuf_add(pl_jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "key": (with the comma before it after the first member). */
void pl_jbuf_key(pl_jbuf *j, const char *key);

/* The shortest text that reads back as the same double; null for NaN and
 * the infinities (JSON has neither). */
void pl_jbuf_number_text(char out[32], double v);

/* Members: a number, a whole number, a string, and a value as given (a
 * number when the text reads whole as one, else a string). */
void pl_jbuf_num(pl_jbuf *j, const char *key, double v);
void pl_jbuf_int(pl_jbuf *j, const char *key, long long v);
void pl_jbuf_str(pl_jbuf *j, const char *key, const char *s);
void pl_jbuf_value(pl_jbuf *j, const char *key, const char *text);

/* s as a JSON string, quoted and escaped. */
void pl_jbuf_quoted(pl_jbuf *j, const char *s);

/* An array's element (a comma first unless first): a number when the
 * text reads whole as one, else a string. */
void pl_jbuf_elem(pl_jbuf *j, int first, const char *text);

#endif
