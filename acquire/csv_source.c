/* acquire/csv_source.c - a stored recording in a CSV file.
 *
 * Layout (docs/acquire.md): '#' comment lines, the first of which may be
 * the prismlab metadata line; a header row; then one row a frame; lines
 * end at LF, CRLF or a lone CR, mixed or not.  Our own
 * files have an optional time column `t_s` and one column per channel in
 * volts named `<anything>_V`; another logger's file is read as it is: the
 * field separator is found from the header, the decimal mark from the
 * numbers, the time column and its unit from its name, columns that are
 * not LDVs (a trigger) are passed over, and each of these can be stated
 * instead (pl_csv_options).  Samples are stored as f64, volts with
 * identity calibration (or m/s with the calibration that gives volts).
 *
 * The whole file is parsed and checked at open(), before a run exists, so
 * a bad cell on line 90000 leaves nothing half-imported; the error names
 * FILE:LINE, the column and what was expected.  Cost: 8 bytes a sample
 * held in memory (96 MB for ten minutes of two channels at 10 kHz).
 * Fields are split by libcsv, which handles quoting, and read by strtod;
 * a row of plain numbers takes fast_row() instead (strtod's values bit for
 * bit, see core/fastfloat.h), and any row it does not vouch for goes the
 * libcsv way, which finds and words every error (docs/acquire.md).
 */
#include "acquire/csv_source.h"
#include "core/fastfloat.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void pl_csv_options_init(pl_csv_options *o)
{
    memset(o, 0, sizeof *o);
    o->rate_hz = NAN;
    o->volts_per_unit = NAN;
}

pl_status pl_csv_units(const char *name, pl_csv_options *o, pl_err *err)
{
    int mv = !strcmp(name, "mV");
    if (strcmp(name, "volts") && strcmp(name, "V") && !mv && strcmp(name, "mps"))
        return pl_err_set(err, PL_EINVAL, "units '%.40s': expected volts, mV or mps", name);
    if (!isnan(o->volts_per_unit) && strcmp(name, "volts") && strcmp(name, "V"))
        return pl_err_set(err, PL_EINVAL, "units '%s' and a volts-per-unit of %g: "
                          "give one of them", name, o->volts_per_unit);
    o->mps = !strcmp(name, "mps");
    if (mv)
        o->volts_per_unit = 1e-3;
    return PL_OK;
}

pl_source_spec pl_csv_spec(const pl_csv_options *o, const pl_source_config *cfg)
{
    return (pl_source_spec){.type = &pl_source_csv, .options = o, .cfg = *cfg};
}

pl_status pl_csv_time_unit(const char *name, double *seconds, pl_err *err)
{
    static const struct {
        const char *name;
        double s;
    } units[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(name, units[i].name)) {
            *seconds = units[i].s;
            return PL_OK;
        }
    return pl_err_set(err, PL_EINVAL, "time unit '%s': expected s, ms or us",
                      name);
}

typedef struct {
    double *v;                /* frames x channels */
    size_t frames, cap;
    size_t next;
    int nch;
    pl_source_gap *gaps;      /* where the time column skipped frames */
    size_t n_gaps;
} csv_source;

/* A gap in the time column is bridged (docs/acquire.md, "Gaps in the time
 * column") when the frames after it lie on the recording's clock: the
 * jump within GAP_ON_CLOCK of a period from a whole number of them, so
 * that each row after it is unambiguously one frame (the regular rows
 * are held to half a period, the nearest frame; a jump must be clearly
 * on a frame, not half-way between two).  A gap longer than GAP_MAX_S is
 * refused here: a logger's dropped buffer is milliseconds (256 rows,
 * 21 ms, on the foreign logger), and the impact lattice carries a gap
 * only while the prism turns through at most one slot in it, which
 * processing checks with the prism's N and speed; slots last 0.1 s only
 * in the first few after the release (the N = 26 run's: 127 and 149 ms,
 * under 100 ms from its fourth), so a longer gap is a paused recording,
 * two runs in one file, not one with a buffer lost.  More than
 * GAPS_MAX gaps is a logger that cannot keep up, whose file no bridge
 * makes a recording: each gap is a line of the run's quality record. */
#define GAP_ON_CLOCK 0.25
#define GAP_MAX_S 0.1
enum { GAPS_MAX = 16 };

enum { MAX_FIELDS = 64, FIELD_CHARS = 64 };

/* Fields of one line, collected by libcsv's callback; fields past
 * MAX_FIELDS are counted, not kept. */
typedef struct {
    char field[MAX_FIELDS][FIELD_CHARS];
    unsigned char cut[MAX_FIELDS];   /* longer than FIELD_CHARS - 1 */
    int n;
} csv_line;

/* What the header row settles about the file. */
typedef struct {
    const char *path;
    char delimiter;
    char decimal;             /* 0: not known yet; the first number with a
                                 mark decides */
    int ncols;                /* fields a row must have */
    int tcol;                 /* the time column, -1: none */
    char tname[FIELD_CHARS];
    char tunit[4];            /* "s", "ms", "us" */
    double tscale;            /* seconds per unit of the time column */
    int col[PL_SOURCE_MAX_CHANNELS];   /* the LDV columns, in order */
    int nch;
    int fast;                 /* rows may take fast_row() */
    char tguess[FIELD_CHARS]; /* no time column found: one passed over
                                 whose name says time, for the hint */
    unsigned char need[MAX_FIELDS];    /* the time and LDV columns */
} csv_layout;

/* The time column's regular spacing, checked row by row against the
 * period of all rows so far (not just the first two: loggers round their
 * time stamps, and 0.3333 ms steps must not drift out of the check).
 * n counts frames, the rows and the frames a gap skipped: the clock runs
 * on through a gap. */
typedef struct {
    double t0, last;
    long long n;
} csv_clock;

static void on_field(void *data, size_t len, void *ctx)
{
    csv_line *l = ctx;
    if (l->n < MAX_FIELDS) {
        l->cut[l->n] = len >= FIELD_CHARS;
        if (len >= FIELD_CHARS)
            len = FIELD_CHARS - 1;
        memcpy(l->field[l->n], data, len);
        l->field[l->n][len] = '\0';
    }
    l->n++;
}

static pl_status split(struct csv_parser *p, const char *text, csv_line *l,
                       const char *path, long line, pl_err *err)
{
    l->n = 0;
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
    free(s->gaps);
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

/* The separator a header uses: of ',', ';' and tab, the one that splits
 * it into the most fields (outside quotes); ',' when none does.  Header
 * names hold no separators, while numbers with decimal commas do: the
 * header is the line to ask. */
static char sniff_delimiter(const char *header)
{
    static const char cand[] = {',', ';', '\t'};
    int count[3] = {0}, quoted = 0;
    for (const char *p = header; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        for (int i = 0; i < 3 && !quoted; i++)
            count[i] += *p == cand[i];
    }
    int best = 0;
    for (int i = 1; i < 3; i++)
        if (count[i] > count[best])
            best = i;
    return count[best] ? cand[best] : ',';
}

/* The unit a column's name states: <name>_s, _ms, _us; NULL when none. */
static const char *unit_of_name(const char *name)
{
    static const char *const units[] = {"ms", "us", "s"};
    size_t n = strlen(name);
    for (size_t i = 0; i < 3; i++) {
        size_t u = strlen(units[i]);
        if (n > u + 1 && name[n - u - 1] == '_' && !strcmp(name + n - u, units[i]))
            return units[i];
    }
    return NULL;
}

/* A column by header name, else by index from 0; -1 when neither, -2 when
 * an index is out of range. */
static int find_column(const csv_line *l, const char *want)
{
    int n = l->n < MAX_FIELDS ? l->n : MAX_FIELDS;
    for (int i = 0; i < n; i++)
        if (!strcmp(l->field[i], want))
            return i;
    char *end;
    long v = strtol(want, &end, 10);
    if (!*want || *end)
        return -1;
    return v >= 0 && v < n ? (int)v : -2;
}

/* The time column and its unit.  Stated: by name or index ("none": no
 * time column).  Else t_s when present, else the first column whose name
 * ends in _s, _ms or _us.  The unit: stated, else the name's, else s. */
static pl_status pick_time(const csv_line *l, const pl_csv_options *o,
                           csv_layout *lay, long line, pl_err *err)
{
    const char *want = o->time_column;
    lay->tcol = -1;
    if (!strcmp(want, "none"))
        return PL_OK;
    if (want[0]) {
        lay->tcol = find_column(l, want);
        if (lay->tcol < 0)
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: no time column '%s' "
                              "in the header", lay->path, line, want);
    } else {
        lay->tcol = find_column(l, "t_s");
        int n = l->n < MAX_FIELDS ? l->n : MAX_FIELDS;
        for (int i = 0; i < n && lay->tcol < 0; i++)
            if (unit_of_name(l->field[i]))
                lay->tcol = i;
        if (lay->tcol < 0)
            return PL_OK;
    }
    snprintf(lay->tname, sizeof lay->tname, "%s", l->field[lay->tcol]);
    const char *unit = o->time_unit[0] ? o->time_unit : unit_of_name(lay->tname);
    snprintf(lay->tunit, sizeof lay->tunit, "%s", unit ? unit : "s");
    return pl_csv_time_unit(lay->tunit, &lay->tscale, err);
}

/* A trigger or sync channel recorded beside the LDVs: trig* in any case. */
static int is_trigger(const char *name)
{
    return !strncasecmp(name, "trig", 4);
}

/* The LDV columns, in order.  Stated: by header name or index.  Else every
 * column named <name>_V that is neither time nor a trigger; columns of
 * other names are passed over. */
static pl_status pick_ldv(const csv_line *l, const pl_csv_options *o,
                          csv_layout *lay, long line, pl_err *err)
{
    lay->nch = 0;
    if (o->columns[0]) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", o->columns);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (lay->nch >= PL_SOURCE_MAX_CHANNELS)
                return pl_err_set(err, PL_EINVAL, "--columns: at most %d",
                                  PL_SOURCE_MAX_CHANNELS);
            int idx = find_column(l, t);
            if (idx < 0)
                return pl_err_set(err, PL_EFORMAT, "%s:%ld: no column '%s' in "
                                  "the header (%d columns)", lay->path, line, t, l->n);
            lay->col[lay->nch++] = idx;
        }
        return PL_OK;
    }
    int n = l->n < MAX_FIELDS ? l->n : MAX_FIELDS;
    for (int i = 0; i < n; i++) {
        size_t fl = strlen(l->field[i]);
        if (i == lay->tcol || is_trigger(l->field[i]) || fl <= 2 ||
            strcmp(l->field[i] + fl - 2, "_V"))
            continue;
        if (lay->nch >= PL_SOURCE_MAX_CHANNELS)
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: more than %d voltage "
                              "columns (pick the LDVs with --columns)",
                              lay->path, line, PL_SOURCE_MAX_CHANNELS);
        lay->col[lay->nch++] = i;
    }
    if (lay->nch == 0)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: no voltage column (<name>_V) "
                          "in the header (or pick columns with --columns)",
                          lay->path, line);
    return PL_OK;
}

/* Whether a column's name says time in a way pick_time() does not take:
 * t, time, timestamp, Time [s], zeit, sec, seconds, ... */
static int sounds_like_time(const char *name)
{
    static const char *const words[] = {"time", "zeit", "sec", "stamp"};
    char low[FIELD_CHARS];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(name[n] >= 'A' && name[n] <= 'Z' ? name[n] - 'A' + 'a' : name[n]);
    low[n] = '\0';
    if (!strcmp(low, "t") || !strncmp(low, "t ", 2) || !strncmp(low, "t[", 2) ||
        !strncmp(low, "t(", 2) || !strncmp(low, "t_", 2))
        return 1;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(low, words[i]))
            return 1;
    return 0;
}

/* No time column stated or found: the first column passed over whose
 * name says time, so the rate's error can point at --time-column. */
static void guess_time(const csv_line *l, const pl_csv_options *o,
                       csv_layout *lay)
{
    lay->tguess[0] = '\0';
    if (lay->tcol >= 0 || o->time_column[0])
        return;
    int n = l->n < MAX_FIELDS ? l->n : MAX_FIELDS;
    for (int i = 0; i < n; i++) {
        int ldv = 0;
        for (int c = 0; c < lay->nch; c++)
            ldv |= lay->col[c] == i;
        if (!ldv && sounds_like_time(l->field[i])) {
            snprintf(lay->tguess, sizeof lay->tguess, "%s", l->field[i]);
            return;
        }
    }
}

/* Whether rows may take fast_row(): not when a separator could be part
 * of a number or of a line's end, nor when a column to read lies past
 * what csv_line keeps (the slow path's error says so). */
static void plan_fast(csv_layout *lay)
{
    memset(lay->need, 0, sizeof lay->need);
    lay->fast = !strchr("0123456789+-eE\"\r\n", lay->delimiter);
    if (lay->tcol >= MAX_FIELDS)
        lay->fast = 0;
    else if (lay->tcol >= 0)
        lay->need[lay->tcol] = 1;
    for (int c = 0; c < lay->nch; c++) {
        if (lay->col[c] >= MAX_FIELDS)
            lay->fast = 0;
        else
            lay->need[lay->col[c]] = 1;
    }
}

/* The header row: the separator (stated or sniffed), then the columns. */
static pl_status settle_layout(struct csv_parser *p, const char *text,
                               csv_line *l, const pl_csv_options *o,
                               csv_layout *lay, long line, pl_err *err)
{
    lay->delimiter = o->delimiter ? o->delimiter : sniff_delimiter(text);
    csv_set_delim(p, (unsigned char)lay->delimiter);
    lay->decimal = o->decimal ? o->decimal : lay->delimiter == ',' ? '.' : 0;
    pl_status st = split(p, text, l, lay->path, line, err);
    if (st == PL_OK)
        st = pick_time(l, o, lay, line, err);
    if (st == PL_OK)
        st = pick_ldv(l, o, lay, line, err);
    lay->ncols = l->n;
    if (st == PL_OK) {
        plan_fast(lay);
        guess_time(l, o, lay);
    }
    return st;
}

/* One cell as a number, with the file's decimal mark (settled here by
 * the first number that has one, when it was not stated); the other mark
 * makes it not a number. */
static int number(csv_layout *lay, const char *text, int cut, double *out)
{
    if (!lay->decimal) {
        const char *m = strpbrk(text, ".,");
        if (m)
            lay->decimal = *m;
    }
    char buf[FIELD_CHARS];
    snprintf(buf, sizeof buf, "%s", text);
    if (lay->decimal && lay->decimal != '.') {
        for (char *q = buf; *q; q++) {
            if (*q == lay->decimal)
                *q = '.';
            else if (*q == '.')
                *q = lay->decimal;
        }
    }
    char *end;
    errno = 0;
    *out = strtod(buf, &end);
    return !(end == buf || *end || errno || !isfinite(*out) || cut);
}

/* Row n of the time column: the spacing of the rows before it predicts
 * it within half a period, or it lies a whole number of periods further
 * on (GAP_ON_CLOCK), the frames between missing: *missing receives how
 * many (0 for a regular row).  Going backwards, or on to no frame, is
 * refused. */
static pl_status tick(csv_clock *c, const csv_layout *lay, double t, long line,
                      long long *missing, pl_err *err)
{
    *missing = 0;
    if (c->n == 0) {
        c->t0 = t;
    } else if (!(t > c->last)) {
        if (t == c->last)
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: %s = %.9g does not follow "
                              "%.9g: the time column must increase", lay->path,
                              line, lay->tname, t, c->last);
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: %s = %.9g goes back %.6g %s from "
                          "the row before (%.9g): the time column must increase: "
                          "the rows are not one recording in time order (two files "
                          "joined, or rows sorted by another column?): import each "
                          "recording on its own", lay->path, line, lay->tname, t,
                          c->last - t, lay->tunit, c->last);
    } else if (c->n >= 2) {
        double period = (c->last - c->t0) / (double)(c->n - 1);
        double want = c->t0 + (double)c->n * period;
        double k = (t - want) / period, whole = round(k);
        if (fabs(k) > 0.5 && (whole < 1 || fabs(k - whole) > GAP_ON_CLOCK))
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: %s = %.9g breaks the "
                              "regular spacing of %.9g %s (expected %.9g): it "
                              "jumps %.2f periods from the row before, not a whole "
                              "number, so the rows after it are on no frame of the "
                              "recording's clock (a logger restarted, or its rate "
                              "changed): cut the file there and import the parts",
                              lay->path, line, lay->tname, t, period, lay->tunit,
                              want, (t - c->last) / period);
        if (fabs(k) > 0.5) {
            double gap_s = whole * period * lay->tscale;
            if (gap_s > GAP_MAX_S || whole > (double)(1LL << 30))
                return pl_err_set(err, PL_EFORMAT, "%s:%ld: %s jumps from %.9g to "
                                  "%.9g %s: %.0f rows (%.3g s at one row each %.4g "
                                  "ms) missing, longer than the %g s a gap may be "
                                  "bridged (docs/acquire.md): this is two "
                                  "recordings, not one with a buffer lost: cut the "
                                  "file there and import the parts", lay->path,
                                  line, lay->tname, c->last, t, lay->tunit, whole,
                                  gap_s, 1e3 * period * lay->tscale, GAP_MAX_S);
            *missing = (long long)whole;
        }
    }
    c->last = t;
    c->n += 1 + *missing;
    return PL_OK;
}

/* The rows the time column skipped before `line`: `missing` frames,
 * recorded and held (their values drawn by fill_gaps() once the rate is
 * known). */
static pl_status skip_frames(csv_source *s, const csv_layout *lay, long long missing,
                             long line, pl_err *err)
{
    if (s->n_gaps == GAPS_MAX)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: the time column jumps for the "
                          "%dth time: a logger that drops this many buffers made no "
                          "recording to measure: record the run again (slower rate, "
                          "faster disk)", lay->path, line, GAPS_MAX + 1);
    if (!s->gaps && !(s->gaps = malloc(GAPS_MAX * sizeof *s->gaps)))
        return pl_err_set(err, PL_ENOMEM, "csv: out of memory");
    s->gaps[s->n_gaps++] = (pl_source_gap){(long long)s->frames, missing, line};
    for (long long k = 0; k < missing; k++) {
        pl_status st = grow(s, lay->nch, err);
        if (st != PL_OK)
            return st;
        double *frame = s->v + s->frames * (size_t)lay->nch;
        for (int c = 0; c < lay->nch; c++)
            frame[c] = NAN;
        s->frames++;
    }
    return PL_OK;
}

/* Each gap's frames, channel by channel, on the straight line between the
 * means of the millisecond either side: the line the front end draws
 * across a drop-out of both beams (process/frontend_mend.c, both_line()),
 * in the file's own volts, with each mean placed at the centre of its
 * millisecond so that a steady slope (the prism accelerating) is carried
 * exactly rather than short by half a millisecond of it at each edge.
 * Where the beams see the prism, v_i = omega h_i at both edges, so the
 * two lines are h_i times one line of omega, as the front end's is.  The
 * gaps in frame order: an earlier one is drawn when a later one's edge
 * reads it. */
static void fill_gaps(csv_source *s, double rate)
{
    size_t r = (size_t)ceil(0.001 * rate), nch = (size_t)s->nch;
    if (r < 1)
        r = 1;
    for (size_t g = 0; g < s->n_gaps; g++) {
        size_t a = (size_t)s->gaps[g].first_frame, b = a + (size_t)s->gaps[g].n_frames;
        size_t a0 = a > r ? a - r : 0, b1 = b + r < s->frames ? b + r : s->frames;
        /* the centres of [a0, a) and [b, b1) */
        double ca = 0.5 * (double)(a0 + a - 1), cb = 0.5 * (double)(b + b1 - 1);
        for (size_t c = 0; c < nch; c++) {
            double la = 0, lb = 0;
            for (size_t i = a0; i < a; i++)
                la += s->v[i * nch + c];
            for (size_t i = b; i < b1; i++)
                lb += s->v[i * nch + c];
            la /= (double)(a - a0);   /* a >= 1: a gap follows a row */
            lb = b1 > b ? lb / (double)(b1 - b) : la;
            double slope = b1 > b ? (lb - la) / (cb - ca) : 0;
            for (size_t i = a; i < b; i++)
                s->v[i * nch + c] = la + slope * ((double)i - ca);
        }
    }
}

/* A row the slow way would read without a complaint, read without libcsv
 * or strtod into val[] (by column): 1 when done, 0 when the row holds
 * anything the fast way does not vouch for, which then goes the slow way
 * and gets its error there.  libcsv splits a row free of quotes, CR and
 * NUL at each separator, trimming spaces and tabs (which only an unread
 * column may hold here); a column to read must be a number
 * pl_fastfloat() vouches for, ending at the separator, as short as
 * csv_line keeps; the mark is the settled one (none yet: no mark). */
static int fast_row(const csv_layout *lay, const char *text, size_t len,
                    double *val)
{
    char mark = lay->decimal, delim = lay->delimiter;
    if (!lay->fast || mark == delim || (mark && mark != '.' && mark != ','))
        return 0;
    const char *p = text, *end = text + len;
    for (int i = 0; i < lay->ncols; i++) {
        const char *q = p;
        if (i < MAX_FIELDS && lay->need[i]) {
            q = pl_fastfloat(p, end, mark, &val[i]);
            if (!q || q - p >= FIELD_CHARS)
                return 0;
        } else {
            for (; q < end && *q != delim; q++)
                if (*q == '"' || *q == '\r' || *q == '\0')
                    return 0;
        }
        if (q == end)
            return i + 1 == lay->ncols;
        if (*q != delim)
            return 0;
        p = q + 1;
    }
    return 0;   /* more fields than the header's */
}

/* A row fast_row() read into the next frame, in parse_row()'s order:
 * room, the time column's tick (whose errors depend only on the value),
 * the LDVs. */
static pl_status take_row(csv_source *s, const csv_layout *lay,
                          csv_clock *clock, const double *val, long line,
                          pl_err *err)
{
    long long missing = 0;
    pl_status st = PL_OK;
    if (lay->tcol >= 0)
        st = tick(clock, lay, val[lay->tcol], line, &missing, err);
    if (st == PL_OK && missing > 0)
        st = skip_frames(s, lay, missing, line, err);
    if (st == PL_OK)
        st = grow(s, lay->nch, err);
    if (st != PL_OK)
        return st;
    double *frame = s->v + s->frames * (size_t)lay->nch;
    for (int c = 0; c < lay->nch; c++)
        frame[c] = val[lay->col[c]];
    s->frames++;
    return PL_OK;
}

/* One data row into the next frame, the slow way: every error is found
 * and worded here. */
static pl_status parse_row(csv_source *s, csv_line *l, csv_layout *lay,
                           csv_clock *clock, long line, pl_err *err)
{
    if (l->n != lay->ncols)
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: expected %d fields as in "
                          "the header, got %d", lay->path, line, lay->ncols, l->n);
    pl_status st;
    double v;
    if (lay->tcol >= 0) {
        long long missing = 0;
        if (!number(lay, l->field[lay->tcol], l->cut[lay->tcol], &v))
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: column %d (from 0, as --columns "
                              "counts): expected a number, got '%s'", lay->path, line, lay->tcol,
                              l->field[lay->tcol]);
        if ((st = tick(clock, lay, v, line, &missing, err)) != PL_OK)
            return st;
        if (missing > 0 && (st = skip_frames(s, lay, missing, line, err)) != PL_OK)
            return st;
    }
    if ((st = grow(s, lay->nch, err)) != PL_OK)
        return st;
    double *frame = s->v + s->frames * (size_t)lay->nch;
    for (int c = 0; c < lay->nch; c++) {
        int i = lay->col[c];
        if (i >= MAX_FIELDS || !number(lay, l->field[i], l->cut[i], &frame[c]))
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: column %d (from 0, as --columns "
                              "counts): expected a number, got '%s'", lay->path, line, i,
                              i < MAX_FIELDS ? l->field[i] : "");
    }
    s->frames++;
    return PL_OK;
}

/* The rate: the option, else the metadata, else the time column's mean
 * spacing; a time column that disagrees with a stated rate is an error. */
static pl_status settle_rate(const csv_clock *clock, const csv_layout *lay,
                             const pl_csv_options *o, pl_source_info *info,
                             pl_err *err)
{
    double rate = clock->n >= 2
        ? (double)(clock->n - 1) / ((clock->last - clock->t0) * lay->tscale) : NAN;
    if (!isnan(o->rate_hz)) {
        info->sample_rate_hz = o->rate_hz;
        snprintf(info->rate_from, sizeof info->rate_from, "--rate");
    } else if (info->sample_rate_hz > 0) {
        snprintf(info->rate_from, sizeof info->rate_from, "the metadata's rate_hz=");
    } else {
        info->sample_rate_hz = rate;
        snprintf(info->rate_from, sizeof info->rate_from,
                 "the time column '%.40s' (in %s)", lay->tname, lay->tunit);
    }
    if (isfinite(rate) && fabs(rate - info->sample_rate_hz) > 1e-6 * rate)
        return pl_err_set(err, PL_EFORMAT, "%s: the time column's spacing "
                          "gives %.9g Hz but the rate is %.9g Hz", lay->path,
                          rate, info->sample_rate_hz);
    if ((!(info->sample_rate_hz > 0) || !isfinite(info->sample_rate_hz)) &&
        lay->tguess[0])
        return pl_err_set(err, PL_EINVAL, "%s: the sample rate is not known: "
                          "column '%s' looks like the time but only t_s or a "
                          "name ending in _s, _ms or _us is taken unasked: "
                          "give --time-column '%s' (with --time-unit ms or us "
                          "unless it is in seconds), or --rate HZ",
                          lay->path, lay->tguess, lay->tguess);
    if (!(info->sample_rate_hz > 0) || !isfinite(info->sample_rate_hz))
        return pl_err_set(err, PL_EINVAL, "%s: the sample rate is not known: "
                          "give --rate HZ, --time-column NAME (no column "
                          "named t_s or <name>_s, _ms, _us) or rate_hz= "
                          "metadata", lay->path);
    return PL_OK;
}

/* A '#' line: the metadata, when it is that. */
static pl_status comment(const char *text, const csv_layout *lay,
                         pl_source_info *info, long line, pl_err *err)
{
    const char *m = text + 1;
    while (*m == ' ')
        m++;
    double fs;
    pl_status st = pl_source_apply_metadata(m, info, &fs, err);
    if (st != PL_OK)
        pl_err_prefix(err, "%s:%ld: ", lay->path, line);
    return st;
}

/* The file in big blocks, cut into lines (NULs and all) each ended by a
 * '\0' in place of its line end: no copy of each line, as getline()
 * makes.  A line ends at LF, CRLF or a lone CR (old Mac loggers, and files
 * pasted together from both), so that a CR-only file is not one line. */
typedef struct {
    FILE *f;
    char *buf;
    size_t cap, start, fill;    /* unread: buf[start, fill) */
    size_t lf, cr;            /* where the next '\n' and '\r' are known to
                                 be (see next_of()) */
    int eof;
} line_reader;

enum { READ_BLOCK = 1 << 20 };

/* The next c at or after start, NULL when none is read yet.  *at keeps
 * what the last search found: buf[start, *at) holds no c, and buf[*at]
 * is the next c when it is one (not when *at was the end of what was
 * read then).  So an LF file looks for its CRs once a block, not once a
 * line (3 % of the parse when it did), and a CR file for its LFs. */
static char *next_of(line_reader *r, size_t *at, char c)
{
    if (*at >= r->fill)
        return NULL;   /* searched to the end of what is read */
    if (*at >= r->start && r->buf[*at] == c)
        return r->buf + *at;
    size_t from = *at > r->start ? *at : r->start;
    char *p = memchr(r->buf + from, c, r->fill - from);
    *at = p ? (size_t)(p - r->buf) : r->fill;
    return p;
}

/* The next line: 1 with *text and *len, 0 at the end of the file or on a
 * read error (ferror() tells), -1 out of memory. */
static int next_line(line_reader *r, char **text, size_t *len)
{
    for (;;) {
        char *from = r->buf + r->start, *end = r->buf + r->fill;
        char *nl = next_of(r, &r->lf, '\n'), *cr = next_of(r, &r->cr, '\r');
        /* a CR before the LF (or with no LF read yet) ends the line; one
         * last in the block waits for the next byte, which may be its LF */
        if (cr && (!nl || cr < nl) && (cr + 1 < end || r->eof))
            nl = cr;
        if (nl || (r->eof && r->start < r->fill)) {
            if (!nl)
                nl = end;                 /* the last line, unended */
            size_t skip = nl < end && *nl == '\r' && nl + 1 < end && nl[1] == '\n'
                ? 2 : nl < end;
            *nl = '\0';
            *text = from;
            *len = (size_t)(nl - from);
            r->start = (size_t)(nl - r->buf) + skip;
            return 1;
        }
        if (r->eof)
            return 0;
        /* no LF in what moves, and a CR only as its last byte */
        r->cr = cr ? (size_t)(cr - from) : r->fill - r->start;
        memmove(r->buf, from, r->fill - r->start);
        r->fill -= r->start;
        r->lf = r->fill;
        r->start = 0;
        if (r->fill > (r->cap - 1) / 2) {   /* a line longer than half the buffer */
            char *b = realloc(r->buf, 2 * r->cap);
            if (!b)
                return -1;
            r->buf = b;
            r->cap *= 2;
        }
        /* one byte kept for the last line's '\0' */
        size_t n = fread(r->buf + r->fill, 1, r->cap - 1 - r->fill, r->f);
        if (n == 0 && ferror(r->f))
            return 0;
        r->fill += n;
        r->eof = n == 0;
    }
}

static pl_status read_lines(csv_source *s, line_reader *rd, struct csv_parser *p,
                            csv_layout *lay, const pl_csv_options *o,
                            pl_source_info *info, csv_clock *clock, pl_err *err)
{
    char *text = NULL;
    size_t len;
    int got;
    long line = 0;
    int header = 0;
    pl_status st = PL_OK;
    double val[MAX_FIELDS];
    csv_line *l = malloc(sizeof *l);
    if (!l)
        return pl_err_set(err, PL_ENOMEM, "csv: out of memory");
    while (st == PL_OK && (got = next_line(rd, &text, &len)) > 0) {
        line++;
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            text[--len] = '\0';
        if (len == 0)
            continue;
        if (text[0] == '#')
            st = comment(text, lay, info, line, err);
        else if (!header++)
            st = settle_layout(p, text, l, o, lay, line, err);
        else if (fast_row(lay, text, (size_t)len, val))
            st = take_row(s, lay, clock, val, line, err);
        else if ((st = split(p, text, l, lay->path, line, err)) == PL_OK)
            st = parse_row(s, l, lay, clock, line, err);
    }
    free(l);
    if (st == PL_OK && got < 0)
        st = pl_err_set(err, PL_ENOMEM, "csv: out of memory at line %ld", line + 1);
    if (st == PL_OK && ferror(rd->f))
        st = pl_err_set(err, PL_EIO, "%s: read error", lay->path);
    if (st == PL_OK && !header)
        st = pl_err_set(err, PL_EFORMAT, "%s: no header row", lay->path);
    if (st == PL_OK && s->frames == 0)
        st = pl_err_set(err, PL_EFORMAT, "%s: no data rows", lay->path);
    return st;
}

static pl_status parse_file(csv_source *s, FILE *f, const char *path,
                            const pl_csv_options *o, pl_source_info *info,
                            pl_err *err)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0)
        return pl_err_set(err, PL_ENOMEM, "csv: cannot set up the parser");
    csv_layout lay = {.path = path, .tcol = -1};
    csv_clock clock = {0};
    line_reader rd = {.f = f, .cap = READ_BLOCK + 1};
    pl_status st = (rd.buf = malloc(rd.cap))
        ? read_lines(s, &rd, &p, &lay, o, info, &clock, err)
        : pl_err_set(err, PL_ENOMEM, "csv: out of memory");
    csv_free(&p);
    free(rd.buf);
    if (st != PL_OK)
        return st;
    info->n_channels = s->nch = lay.nch;
    st = settle_rate(&clock, &lay, o, info, err);
    if (st == PL_OK && s->n_gaps) {
        fill_gaps(s, info->sample_rate_hz);
        info->gaps = s->gaps;
        info->n_gaps = s->n_gaps;
    }
    return st;
}

/* The file's SHA-256, for the run's provenance.  It was a tenth of a
 * CSV import's time, so it is computed on a second thread while the
 * parse runs (the file read twice, the second time from the page cache). */
typedef struct {
    const char *path;
    char hex[65];
    pl_status st;
    pl_err err;
} hash_job;

static void *hash_file(void *arg)
{
    hash_job *j = arg;
    j->st = pl_source_file_sha256(j->path, j->hex, &j->err);
    return NULL;
}

/* The parse, with the hash of job->path beside it; after it, as before,
 * when no thread can be had or the file is not a regular one (a second
 * reader of a pipe would take the parse's bytes).  The parse's status. */
static pl_status parse_and_hash(csv_source *s, FILE *f, const pl_csv_options *o,
                                pl_source_info *info, hash_job *job, pl_err *err)
{
    struct stat sb;
    pthread_t th;
    int threaded = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
                   pthread_create(&th, NULL, hash_file, job) == 0;
    pl_status st = parse_file(s, f, job->path, o, info, err);
    if (threaded)
        pthread_join(th, NULL);
    else if (st == PL_OK)
        hash_file(job);
    return st;
}

/* The hash into info, or its error: where the hash used to be taken, so
 * that errors come in the order they did. */
static pl_status hash_result(const hash_job *job, pl_source_info *info,
                             pl_err *err)
{
    if (job->st != PL_OK) {
        *err = job->err;
        return job->st;
    }
    memcpy(info->sha256, job->hex, sizeof job->hex);
    return PL_OK;
}

static pl_status csv_open(void **self, const void *options,
                          const pl_source_config *cfg, pl_source_info *info,
                          pl_err *err)
{
    const pl_csv_options *o = options;
    const char *path = o->path;
    if (o->mps && !isnan(o->volts_per_unit))
        return pl_err_set(err, PL_EINVAL, "%s: values in m/s take no volts per "
                          "unit: give one of them", path);
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
    hash_job job = {.path = path};
    pl_status st = parse_and_hash(s, f, o, info, &job, err);
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
        /* values in m/s, or in a unit other than the volt (a logger's
         * mV): stored as they are, with the calibration that turns them
         * into the volts the LDV gave */
        int scaled = o->mps || (!isnan(o->volts_per_unit) && o->volts_per_unit != 1);
        for (int i = 0; st == PL_OK && scaled && i < info->n_channels; i++) {
            pl_channel *ch = &info->channel[i];
            ch->cal_kind = PL_CAL_FILE;
            ch->cal_coef[1] = o->mps ? 1.0 / ch->ldv_scale_mps_per_v : o->volts_per_unit;
        }
    }
    if (st == PL_OK)
        st = hash_result(&job, info, err);
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
