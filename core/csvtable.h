/* core/csvtable.h - a whole CSV file with a header row, read by libcsv.
 *
 * Used for the catalogue and the fixture manifest: small files read at
 * once.  Fields keep their text; callers convert with pl_csvtable_double()
 * and friends, whose errors carry "FILE:LINE: column 'x': expected ... got
 * ...".  Blank lines are skipped; lines whose first field starts with '#'
 * are comments.  Line numbers are the file's physical line numbers.
 */
#ifndef PL_CORE_CSVTABLE_H
#define PL_CORE_CSVTABLE_H

#include "core/error.h"

typedef struct pl_csvtable pl_csvtable;

/* Reads path; PL_EFORMAT for a malformed file (unterminated quote, a row
 * with more fields than the header), PL_EIO when it cannot be read. */
pl_status pl_csvtable_read(pl_csvtable **out, const char *path, pl_err *err);

/* Frees the table; NULL is a no-op. */
void pl_csvtable_free(pl_csvtable *t);

/* Number of data rows (the header and comments excluded). */
int pl_csvtable_rows(const pl_csvtable *t);

/* Index of the column named name (case-sensitive), or -1. */
int pl_csvtable_column(const pl_csvtable *t, const char *name);

/* PL_EFORMAT "FILE:1: missing column 'x'" when the header lacks name. */
pl_status pl_csvtable_require(const pl_csvtable *t, const char *name,
                              pl_err *err);

/* PL_EFORMAT naming the first header column not in known[0..n-1], so that
 * a misspelt column is not silently ignored. */
pl_status pl_csvtable_check_columns(const pl_csvtable *t,
                                    const char *const *known, int n,
                                    pl_err *err);

/* The text of row, column col ("" for a missing field); never NULL. */
const char *pl_csvtable_text(const pl_csvtable *t, int row, int col);

/* The physical line number of a data row, for messages. */
long pl_csvtable_line(const pl_csvtable *t, int row);

/* The file name given to pl_csvtable_read(). */
const char *pl_csvtable_path(const pl_csvtable *t);

/* Parses row/column name as a finite double in [lo, hi].  An empty field
 * gives *out = dflt when allow_empty, else an error. */
pl_status pl_csvtable_double(const pl_csvtable *t, int row, const char *name,
                             double lo, double hi, int allow_empty,
                             double dflt, double *out, pl_err *err);

/* Parses an integer field in [lo, hi]; errors as pl_csvtable_double(). */
pl_status pl_csvtable_long(const pl_csvtable *t, int row, const char *name,
                           long lo, long hi, long *out, pl_err *err);

/* Copies a text field; PL_EFORMAT when it is empty and required, or
 * longer than size - 1. */
pl_status pl_csvtable_string(const pl_csvtable *t, int row, const char *name,
                             int required, char *out, size_t size,
                             pl_err *err);

#endif
