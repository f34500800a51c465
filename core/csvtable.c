/* core/csvtable.c - small CSV files read whole through libcsv.
 *
 * libcsv reports fields and row ends but no line numbers, so the file is
 * fed to it one physical line at a time; a row is numbered by the line it
 * starts on (a quoted field may carry it over further lines), which is the
 * first line fed while no row is open.
 */
#include "core/csvtable.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **field;
    int n, cap;
    long line;
} row_t;

struct pl_csvtable {
    char *path;
    row_t header;
    row_t *rows;
    int n_rows, cap_rows;
    row_t cur;        /* the row being parsed */
    long line;        /* physical line being fed */
    long row_line;    /* physical line the current row started on */
    int failed;       /* ENOMEM inside a callback */
    int row_open;     /* a field of the current row has been seen */
};

static void row_free(row_t *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->field[i]);
    free(r->field);
    memset(r, 0, sizeof *r);
}

static void on_field(void *s, size_t len, void *data)
{
    pl_csvtable *t = data;
    row_t *r = &t->cur;
    char *copy;

    t->row_open = 1;

    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        char **f = realloc(r->field, (size_t)cap * sizeof *f);
        if (!f) {
            t->failed = 1;
            return;
        }
        r->field = f;
        r->cap = cap;
    }
    if (!(copy = malloc(len + 1))) {
        t->failed = 1;
        return;
    }
    memcpy(copy, s ? s : "", len);
    copy[len] = '\0';
    r->field[r->n++] = copy;
}

static int is_comment(const row_t *r)
{
    return r->n > 0 && r->field[0][0] == '#';
}

static int is_blank(const row_t *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->field[i][0])
            return 0;
    return 1;
}

static void on_row(int c, void *data)
{
    pl_csvtable *t = data;
    row_t r = t->cur;

    (void)c;
    t->row_open = 0;
    memset(&t->cur, 0, sizeof t->cur);
    r.line = t->row_line;
    if (is_comment(&r) || is_blank(&r)) {
        row_free(&r);
        return;
    }
    if (t->header.n == 0) {
        t->header = r;
        return;
    }
    if (t->n_rows == t->cap_rows) {
        int cap = t->cap_rows ? 2 * t->cap_rows : 16;
        row_t *rows = realloc(t->rows, (size_t)cap * sizeof *rows);
        if (!rows) {
            t->failed = 1;
            row_free(&r);
            return;
        }
        t->rows = rows;
        t->cap_rows = cap;
    }
    t->rows[t->n_rows++] = r;
}

static pl_status parse_stream(pl_csvtable *t, FILE *f, pl_err *err)
{
    struct csv_parser p;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    pl_status s = PL_OK;

    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return pl_err_set(err, PL_ENOMEM, "%s: out of memory", t->path);
    while ((len = getline(&line, &cap, f)) > 0) {
        t->line++;
        /* A comment line is dropped before libcsv sees it, so that quotes
         * in prose cannot upset the strict parser; only at a row start
         * and outside a quoted field (p.quoted is public in csv.h). */
        if (!t->row_open && !p.quoted) {
            if (line[0] == '#')
                continue;
            t->row_line = t->line;
        }
        if (csv_parse(&p, line, (size_t)len, on_field, on_row, t) !=
            (size_t)len) {
            s = pl_err_set(err, PL_EFORMAT, "%s:%ld: %s", t->path, t->line,
                           csv_strerror(csv_error(&p)));
            break;
        }
    }
    if (s == PL_OK && ferror(f))
        s = pl_err_set(err, PL_EIO, "%s: read error: %s", t->path,
                       strerror(errno));
    if (s == PL_OK && csv_fini(&p, on_field, on_row, t) != 0)
        s = pl_err_set(err, PL_EFORMAT, "%s:%ld: %s", t->path, t->line,
                       csv_strerror(csv_error(&p)));
    if (s == PL_OK && t->failed)
        s = pl_err_set(err, PL_ENOMEM, "%s: out of memory", t->path);
    csv_free(&p);
    free(line);
    return s;
}

static pl_status check_widths(const pl_csvtable *t, pl_err *err)
{
    if (t->header.n == 0)
        return pl_err_set(err, PL_EFORMAT, "%s: empty file, expected a "
                          "header row naming the columns", t->path);
    for (int i = 0; i < t->n_rows; i++)
        if (t->rows[i].n > t->header.n)
            return pl_err_set(err, PL_EFORMAT,
                              "%s:%ld: %d fields, the header names only %d",
                              t->path, t->rows[i].line, t->rows[i].n,
                              t->header.n);
    return PL_OK;
}

pl_status pl_csvtable_read(pl_csvtable **out, const char *path, pl_err *err)
{
    pl_csvtable *t;
    FILE *f;
    pl_status s;

    *out = NULL;
    if (!(f = fopen(path, "r")))
        return pl_err_set(err, PL_EIO, "cannot open '%s': %s", path,
                          strerror(errno));
    if (!(t = calloc(1, sizeof *t)) || !(t->path = strdup(path))) {
        free(t);
        fclose(f);
        return pl_err_set(err, PL_ENOMEM, "%s: out of memory", path);
    }
    s = parse_stream(t, f, err);
    fclose(f);
    if (s == PL_OK)
        s = check_widths(t, err);
    if (s != PL_OK) {
        pl_csvtable_free(t);
        return s;
    }
    *out = t;
    return PL_OK;
}

void pl_csvtable_free(pl_csvtable *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n_rows; i++)
        row_free(&t->rows[i]);
    row_free(&t->header);
    row_free(&t->cur);
    free(t->rows);
    free(t->path);
    free(t);
}

int pl_csvtable_rows(const pl_csvtable *t) { return t->n_rows; }
const char *pl_csvtable_path(const pl_csvtable *t) { return t->path; }
long pl_csvtable_line(const pl_csvtable *t, int row) { return t->rows[row].line; }

int pl_csvtable_column(const pl_csvtable *t, const char *name)
{
    for (int i = 0; i < t->header.n; i++)
        if (strcmp(t->header.field[i], name) == 0)
            return i;
    return -1;
}

pl_status pl_csvtable_require(const pl_csvtable *t, const char *name,
                              pl_err *err)
{
    if (pl_csvtable_column(t, name) < 0)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: missing column '%s'",
                          t->path, t->header.line, name);
    return PL_OK;
}

pl_status pl_csvtable_check_columns(const pl_csvtable *t,
                                    const char *const *known, int n,
                                    pl_err *err)
{
    for (int i = 0; i < t->header.n; i++) {
        int found = 0;
        for (int k = 0; k < n && !found; k++)
            found = strcmp(t->header.field[i], known[k]) == 0;
        if (!found)
            return pl_err_set(err, PL_EFORMAT,
                              "%s:%ld: unknown column '%s'", t->path,
                              t->header.line, t->header.field[i]);
    }
    return PL_OK;
}

const char *pl_csvtable_text(const pl_csvtable *t, int row, int col)
{
    if (row < 0 || row >= t->n_rows || col < 0 || col >= t->rows[row].n)
        return "";
    return t->rows[row].field[col];
}

static const char *field(const pl_csvtable *t, int row, const char *name)
{
    return pl_csvtable_text(t, row, pl_csvtable_column(t, name));
}

pl_status pl_csvtable_double(const pl_csvtable *t, int row, const char *name,
                             double lo, double hi, int allow_empty,
                             double dflt, double *out, pl_err *err)
{
    const char *text = field(t, row, name);
    char *end;
    double v;

    if (!*text) {
        if (allow_empty) {
            *out = dflt;
            return PL_OK;
        }
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected a number, got nothing",
                          t->path, pl_csvtable_line(t, row), name);
    }
    errno = 0;
    v = strtod(text, &end);
    /* an underflow is a number (the range decides), an overflow is +-inf
     * and fails the range; "inf" and "nan" are no measurements */
    if (end == text || *end || (!isfinite(v) && errno != ERANGE))
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected a number, got '%s'",
                          t->path, pl_csvtable_line(t, row), name, text);
    if (!(v >= lo && v <= hi))
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected a value in [%g, %g], "
                          "got %s", t->path, pl_csvtable_line(t, row), name,
                          lo, hi, text);
    *out = v;
    return PL_OK;
}

pl_status pl_csvtable_long(const pl_csvtable *t, int row, const char *name,
                           long lo, long hi, long *out, pl_err *err)
{
    const char *text = field(t, row, name);
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (!*text || *end || errno == ERANGE)
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected an integer, got '%s'",
                          t->path, pl_csvtable_line(t, row), name, text);
    if (v < lo || v > hi)
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected an integer in "
                          "[%ld, %ld], got %ld", t->path,
                          pl_csvtable_line(t, row), name, lo, hi, v);
    *out = v;
    return PL_OK;
}

pl_status pl_csvtable_string(const pl_csvtable *t, int row, const char *name,
                             int required, char *out, size_t size,
                             pl_err *err)
{
    const char *text = field(t, row, name);
    size_t len = strlen(text);

    if (required && len == 0)
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected text, got nothing",
                          t->path, pl_csvtable_line(t, row), name);
    if (len >= size)
        return pl_err_set(err, PL_EFORMAT,
                          "%s:%ld: column '%s': expected at most %zu "
                          "characters, got %zu", t->path,
                          pl_csvtable_line(t, row), name, size - 1, len);
    memcpy(out, text, len + 1);
    return PL_OK;
}
