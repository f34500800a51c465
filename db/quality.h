/* db/quality.h - the words of a run's data-quality record and its fault
 * lines (table run_quality of schemas/005_quality.sql, docs/data-model.md,
 * "Data quality").  Plain text work, no SQL: the commands, the report and
 * the web server all read faults through here.
 *
 * A fault line is "<kind> key=value key=value ...": kind and keys are
 * [a-z0-9_]; a value is a number ("2.345", "2e-5"), a list of numbers
 * ("23.0,9.0") or a double-quoted string ("\"" and "\\" escaped inside).
 * One space or more separates the parts.  Kinds and keys only grow: a
 * reader skips what it does not know, and shows a kind it does not know
 * as its line.
 */
#ifndef PL_DB_QUALITY_H
#define PL_DB_QUALITY_H

#include "core/error.h"

#include <stddef.h>

enum {
    PL_FAULT_FIELDS_MAX = 12,  /* fields kept of one line; more are skipped */
    PL_FAULT_NAME_MAX = 32,    /* kind and key, NUL included */
    PL_FAULT_TEXT_MAX = 512    /* a value's text, NUL included */
};

typedef enum {
    PL_FAULT_NUMBER,    /* number holds it; text as written */
    PL_FAULT_NUMBERS,   /* text holds "a,b,..." (pl_fault_numbers reads it) */
    PL_FAULT_STRING     /* text holds it, unquoted and unescaped */
} pl_fault_value;

typedef struct {
    char key[PL_FAULT_NAME_MAX];
    pl_fault_value type;
    double number;
    char text[PL_FAULT_TEXT_MAX];
} pl_fault_field;

typedef struct {
    char kind[PL_FAULT_NAME_MAX];
    int n;
    pl_fault_field field[PL_FAULT_FIELDS_MAX];
} pl_fault;

/* Parses one fault line (len bytes of line, no newline) into f.
 * PL_EFORMAT naming the cause for a line that is not "<kind> key=value ...". */
pl_status pl_fault_parse(const char *line, size_t len, pl_fault *f, pl_err *err);

/* Writes f as one line into buf (n bytes); PL_EINVAL when it does not fit
 * or a name is not [a-z0-9_]. */
pl_status pl_fault_format(const pl_fault *f, char *buf, size_t n, pl_err *err);

/* Starts fault f of the given kind, with no fields. */
void pl_fault_init(pl_fault *f, const char *kind);

/* Adds a number field (written %.10g) or a string field to f; a field
 * past PL_FAULT_FIELDS_MAX is dropped. */
void pl_fault_add_number(pl_fault *f, const char *key, double v);
void pl_fault_add_text(pl_fault *f, const char *key, const char *text);

/* The field named key, or NULL. */
const pl_fault_field *pl_fault_get(const pl_fault *f, const char *key);

/* The numbers of a NUMBER or NUMBERS field into out[0..max-1]; returns
 * how many it holds (0 for a string). */
size_t pl_fault_numbers(const pl_fault_field *fld, double *out, size_t max);

/* The fault in plain words for a person ("beam 1 lost the prism from
 * 2.345 s to 2.545 s (measured on beam 2 alone)"); a kind this prismlab
 * does not know is shown as its line. */
void pl_fault_describe(const pl_fault *f, char *buf, size_t n);

/* Calls fn for each non-empty line of faults in order, with the line
 * parsed (f) or f NULL when it is malformed, and the line itself (len
 * bytes, not NUL-terminated).  Stops at the first nonzero return of fn
 * and returns it; 0 when all were seen. */
int pl_faults_each(const char *faults,
                   int (*fn)(void *ctx, const pl_fault *f, const char *line,
                             size_t len),
                   void *ctx);

/* The record's word for a person: "good", "degraded (measured through a
 * fault)", "suspect (a check failed: do not trust the numbers; see the
 * faults)", "refused", and for "" (processed before schema 5) "not
 * assessed (processed before prismlab recorded data quality)". */
const char *pl_quality_words(const char *quality);

#endif
