/* acquire/csv_source.c - a stored recording in a CSV file of volts.
 *
 * Layout (docs/acquire.md): '#' comment lines, the first of which may be
 * the prismlab metadata line; a header row; then one row a frame.  Columns:
 * an optional time column `t_s` (seconds) and one column per channel in
 * volts, named `<anything>_V`, in channel order.  Samples are stored as f64
 * volts with identity calibration.
 *
 * The whole file is parsed and checked at open(), before a run exists, so
 * a bad cell on line 90000 leaves nothing half-imported; the error names
 * FILE:LINE, the column and what was expected.  Cost: 8 bytes a sample
 * held in memory (96 MB for ten minutes of two channels at 10 kHz).
 * Fields are split by libcsv, which handles quoting.
 */
#include "acquire/csv_source.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_csv_options_init(pl_csv_options *o)
{
    memset(o, 0, sizeof *o);
    o->rate_hz = NAN;
}

pl_source_spec pl_csv_spec(const pl_csv_options *o, const pl_source_config *cfg)
{
    return (pl_source_spec){.type = &pl_source_csv, .options = o, .cfg = *cfg};
}

typedef struct {
    double *v;                /* frames x channels */
    size_t frames, cap;
    size_t next;
    int nch;
} csv_source;

/* Fields of one line, collected by libcsv's callback. */
typedef struct {
    char field[PL_SOURCE_MAX_CHANNELS + 2][64];
    int n;
    int too_long;
} csv_line;

static void on_field(void *data, size_t len, void *ctx)
{
    csv_line *l = ctx;
    if (l->n < PL_SOURCE_MAX_CHANNELS + 2) {
        if (len >= sizeof l->field[0]) {
            len = sizeof l->field[0] - 1;
            l->too_long = 1;
        }
        memcpy(l->field[l->n], data, len);
        l->field[l->n][len] = '\0';
    }
    l->n++;
}

static pl_status split(struct csv_parser *p, const char *text, csv_line *l,
                       const char *path, long line, pl_err *err)
{
    memset(l, 0, sizeof *l);
    size_t len = strlen(text);
    if (csv_parse(p, text, len, on_field, NULL, l) != len ||
        csv_fini(p, on_field, NULL, l) != 0)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: %s", path, line,
                          csv_strerror(csv_error(p)));
    return PL_OK;
}

static void csv_close(void *self)
{
    csv_source *s = self;
    if (!s)
        return;
    free(s->v);
    free(s);
}

static pl_status grow(csv_source *s, int nch, pl_err *err)
{
    if (s->frames < s->cap)
        return PL_OK;
    size_t cap = s->cap ? 2 * s->cap : 65536;
    double *v = realloc(s->v, cap * (size_t)nch * sizeof *v);
    if (!v)
        return pl_err_set(err, PL_ENOMEM, "csv: out of memory at %zu frames",
                          s->frames);
    s->v = v;
    s->cap = cap;
    return PL_OK;
}

/* Which columns are the LDVs (in order) and which is time.  By default:
 * t_s (when present) and every column named <name>_V, nothing else; with
 * o->columns: those, by header name or index from 0. */
static pl_status pick_columns(const csv_line *l, const pl_csv_options *o,
                              const char *path, long line, int *col, int *nch,
                              int *tcol, pl_err *err)
{
    const char *tname = o->time_column;
    int no_time = !strcmp(tname, "none");
    if (!tname[0])
        tname = "t_s";
    int n = l->n < PL_SOURCE_MAX_CHANNELS + 2 ? l->n : PL_SOURCE_MAX_CHANNELS + 2;
    *tcol = -1;
    *nch = 0;
    for (int i = 0; i < n && !no_time; i++)
        if (!strcmp(l->field[i], tname))
            *tcol = i;
    if (o->time_column[0] && !no_time && *tcol < 0)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: no time column '%s' in the "
                          "header", path, line, tname);
    if (o->columns[0]) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", o->columns);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (*nch >= PL_SOURCE_MAX_CHANNELS)
                return pl_err_set(err, PL_EINVAL, "--columns: at most %d", PL_SOURCE_MAX_CHANNELS);
            int idx = -1;
            char *end;
            long v = strtol(t, &end, 10);
            if (*t && !*end)
                idx = v >= 0 && v < n ? (int)v : -2;
            for (int i = 0; i < n && idx == -1; i++)
                if (!strcmp(l->field[i], t))
                    idx = i;
            if (idx < 0)
                return pl_err_set(err, PL_EFORMAT, "%s:%ld: no column '%s' in "
                                  "the header (%d columns)", path, line, t, l->n);
            col[(*nch)++] = idx;
        }
        return PL_OK;
    }
    for (int i = 0; i < n; i++) {
        size_t fl = strlen(l->field[i]);
        if (i == *tcol)
            continue;
        if (fl > 2 && !strcmp(l->field[i] + fl - 2, "_V") && *nch < PL_SOURCE_MAX_CHANNELS)
            col[(*nch)++] = i;
        else
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: column '%s': expected "
                              "%s or a voltage column named <name>_V (or pick "
                              "columns with --columns)", path, line,
                              l->field[i], tname);
    }
    if (*nch == 0)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: no voltage column (<name>_V) "
                          "in the header", path, line);
    return PL_OK;
}

static pl_status parse_file(csv_source *s, FILE *f, const char *path,
                            const pl_csv_options *o, pl_source_info *info,
                            pl_err *err)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0)
        return pl_err_set(err, PL_ENOMEM, "csv: cannot set up the parser");
    if (o->delimiter)
        csv_set_delim(&p, (unsigned char)o->delimiter);
    char *text = NULL;
    size_t textcap = 0;
    ssize_t len;
    long line = 0;
    int header = 0, tcol = -1, nch = 0, ncols = 0, col[PL_SOURCE_MAX_CHANNELS];
    char dec = o->decimal ? o->decimal : '.';
    const char *tname = o->time_column[0] && strcmp(o->time_column, "none")
                      ? o->time_column : "t_s";
    double t0 = NAN, rate = NAN;
    pl_status st = PL_OK;
    csv_line l;
    while ((len = getline(&text, &textcap, f)) >= 0) {
        line++;
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            text[--len] = '\0';
        if (len == 0)
            continue;
        if (text[0] == '#') {
            const char *m = text + 1;
            while (*m == ' ')
                m++;
            double fs;
            if ((st = pl_source_apply_metadata(m, info, &fs, err)) != PL_OK) {
                pl_err_prefix(err, "%s:%ld: ", path, line);
                break;
            }
            continue;
        }
        if ((st = split(&p, text, &l, path, line, err)) != PL_OK)
            break;
        if (!header) {
            ncols = l.n;
            if ((st = pick_columns(&l, o, path, line, col, &nch, &tcol, err)) != PL_OK)
                break;
            header = 1;
            info->n_channels = nch;
            s->nch = nch;
            continue;
        }
        if (l.n != ncols) {
            st = pl_err_set(err, PL_EFORMAT, "%s:%ld: expected %d fields as "
                            "in the header, got %d", path, line, ncols, l.n);
            break;
        }
        if ((st = grow(s, nch, err)) != PL_OK)
            break;
        double row[PL_SOURCE_MAX_CHANNELS + 2];
        for (int i = 0; i < l.n && st == PL_OK; i++) {
            int used = i == tcol;
            for (int c = 0; c < nch && !used; c++)
                used = col[c] == i;
            if (!used)
                continue;       /* columns not asked for are not checked */
            if (dec != '.')
                for (char *q = l.field[i]; *q; q++)
                    if (*q == dec)
                        *q = '.';
            char *end;
            errno = 0;
            double v = strtod(l.field[i], &end);
            if (end == l.field[i] || *end || errno || !isfinite(v) || l.too_long)
                st = pl_err_set(err, PL_EFORMAT, "%s:%ld: column %d: expected "
                                "a number, got '%s'", path, line, i + 1,
                                l.field[i]);
            else if (i == tcol) {
                if (s->frames == 0)
                    t0 = v;
                else if (s->frames == 1 && isnan(rate))
                    rate = 1.0 / (v - t0);
                else if (isfinite(rate) &&
                         fabs(v - t0 - s->frames / rate) > 0.5 / rate)
                    st = pl_err_set(err, PL_EFORMAT, "%s:%ld: %s = %.9g "
                                    "breaks the regular spacing of %.9g s "
                                    "(expected %.9g)", path, line, tname, v,
                                    1.0 / rate, t0 + s->frames / rate);
            }
            if (i < PL_SOURCE_MAX_CHANNELS + 2)
                row[i] = v;
        }
        if (st != PL_OK)
            break;
        for (int c = 0; c < nch; c++)
            s->v[s->frames * (size_t)nch + (size_t)c] = row[col[c]];
        s->frames++;
    }
    if (st == PL_OK && ferror(f))
        st = pl_err_set(err, PL_EIO, "%s: read error", path);
    if (st == PL_OK && !header)
        st = pl_err_set(err, PL_EFORMAT, "%s: no header row", path);
    if (st == PL_OK && s->frames == 0)
        st = pl_err_set(err, PL_EFORMAT, "%s: no data rows", path);
    free(text);
    csv_free(&p);
    if (st != PL_OK)
        return st;
    /* The rate: the option, else the metadata, else the time column. */
    if (!isnan(o->rate_hz))
        info->sample_rate_hz = o->rate_hz;
    else if (!(info->sample_rate_hz > 0))
        info->sample_rate_hz = rate;
    if (isfinite(rate) && fabs(rate - info->sample_rate_hz) > 1e-6 * rate)
        return pl_err_set(err, PL_EFORMAT, "%s: the time column's spacing "
                          "gives %.9g Hz but the rate is %.9g Hz", path, rate,
                          info->sample_rate_hz);
    if (!(info->sample_rate_hz > 0) || !isfinite(info->sample_rate_hz))
        return pl_err_set(err, PL_EINVAL, "%s: the sample rate is not known: "
                          "give --rate HZ, a t_s column or rate_hz= metadata",
                          path);
    return PL_OK;
}

static pl_status csv_open(void **self, const void *options,
                          const pl_source_config *cfg, pl_source_info *info,
                          pl_err *err)
{
    const pl_csv_options *o = options;
    const char *path = o->path;
    memset(info, 0, sizeof *info);
    info->lambda0_rad = NAN;
    for (int i = 0; i < PL_SOURCE_MAX_CHANNELS; i++)
        info->channel[i].beam_height_m = NAN;
    FILE *f = fopen(path, "r");
    if (!f)
        return pl_err_set(err, PL_EIO, "%s: %s", path, strerror(errno));
    csv_source *s = calloc(1, sizeof *s);
    if (!s) {
        fclose(f);
        return pl_err_set(err, PL_ENOMEM, "csv: out of memory");
    }
    snprintf(info->kind, sizeof info->kind, "csv");
    snprintf(info->detail, sizeof info->detail, "%.255s", path);
    pl_status st = parse_file(s, f, path, o, info, err);
    fclose(f);
    if (st == PL_OK) {
        info->format = PL_FMT_F64;
        info->little_endian = pl_host_little_endian();
        info->total_frames = (long long)s->frames;
        for (int i = 0; i < info->n_channels; i++) {
            pl_channel *ch = &info->channel[i];
            snprintf(ch->name, sizeof ch->name, "ldv%d", i + 1);
            ch->source_channel = i;
            ch->cal_kind = PL_CAL_IDENTITY;
            ch->cal_order = 1;
            ch->cal_coef[1] = 1.0;
            ch->range_min_v = ch->range_max_v = NAN;
        }
        st = pl_source_apply_config(cfg, info, err);
        /* values in m/s: stored as they are, with the calibration that
         * turns them into the volts the LDV would have given */
        for (int i = 0; st == PL_OK && o->mps && i < info->n_channels; i++) {
            pl_channel *ch = &info->channel[i];
            ch->cal_kind = PL_CAL_FILE;
            ch->cal_coef[1] = 1.0 / ch->ldv_scale_mps_per_v;
        }
    }
    if (st == PL_OK)
        st = pl_source_file_sha256(path, info->sha256, err);
    if (st != PL_OK) {
        csv_close(s);
        return st;
    }
    *self = s;
    return PL_OK;
}

static pl_status csv_start(void *self, pl_err *err)
{
    (void)self;
    (void)err;
    return PL_OK;
}

static pl_status csv_read(void *self, void *buf, size_t max_frames,
                          size_t *got, pl_err *err)
{
    (void)err;
    csv_source *s = self;
    size_t n = s->frames - s->next;
    if (n > max_frames)
        n = max_frames;
    memcpy(buf, s->v + s->next * (size_t)s->nch, n * (size_t)s->nch * sizeof(double));
    s->next += n;
    *got = n;
    return PL_OK;
}

static pl_status csv_stop(void *self, pl_err *err)
{
    (void)self;
    (void)err;
    return PL_OK;
}

const pl_source_type pl_source_csv = {
    .name = "csv",
    .open = csv_open,
    .start = csv_start,
    .read = csv_read,
    .stop = csv_stop,
    .close = csv_close,
};
