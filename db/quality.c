/* db/quality.c - fault lines: parse, format, plain words.  See quality.h. */
#include "db/quality.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether s is a name: 1 to PL_FAULT_NAME_MAX - 1 of [a-z0-9_]. */
static int is_name(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i]))
            return 0;
    return n > 0 && n < PL_FAULT_NAME_MAX;
}

/* Whether text[0..len-1] is one finite number, written whole; into *v. */
static int one_number(const char *text, size_t len, double *v)
{
    char buf[64], *end;
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, text, len);
    buf[len] = '\0';
    *v = strtod(buf, &end);
    return *end == '\0' && isfinite(*v);
}

/* A bare value: a number, numbers separated by commas, else a word kept
 * as a string (a later prismlab may write one). */
static void classify(pl_fault_field *fld)
{
    const char *t = fld->text;
    double v;
    if (one_number(t, strlen(t), &fld->number)) {
        fld->type = PL_FAULT_NUMBER;
        return;
    }
    fld->type = PL_FAULT_STRING;
    fld->number = NAN;
    if (!strchr(t, ','))
        return;
    for (const char *p = t;; ) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!one_number(p, len, &v))
            return;
        if (!comma)
            break;
        p = comma + 1;
    }
    fld->type = PL_FAULT_NUMBERS;
}

/* Reads a name at *p (up to end) into out; returns its length, 0 when
 * there is none or it is too long. */
static size_t read_name(const char **p, const char *end, char *out)
{
    size_t n = 0;
    while (*p + n < end && name_char((*p)[n]))
        n++;
    if (n == 0 || n >= PL_FAULT_NAME_MAX)
        return 0;
    memcpy(out, *p, n);
    out[n] = '\0';
    *p += n;
    return n;
}

/* A value at *p: quoted (escapes undone) or bare, up to the next space. */
static pl_status read_value(const char **p, const char *end, pl_fault_field *fld,
                            pl_err *err)
{
    size_t k = 0;
    if (*p < end && **p == '"') {
        const char *q = *p + 1;
        for (; q < end && *q != '"'; q++) {
            if (*q == '\\' && q + 1 < end)
                q++;
            if (k + 1 < PL_FAULT_TEXT_MAX)
                fld->text[k++] = *q;
        }
        fld->text[k] = '\0';
        if (q >= end)
            return pl_err_set(err, PL_EFORMAT, "value of '%s': no closing '\"'",
                              fld->key);
        *p = q + 1;
        if (*p < end && **p != ' ')
            return pl_err_set(err, PL_EFORMAT, "value of '%s': '%c' after the "
                              "closing '\"'", fld->key, **p);
        fld->type = PL_FAULT_STRING;
        fld->number = NAN;
        return PL_OK;
    }
    for (; *p < end && **p != ' '; (*p)++)
        if (k + 1 < PL_FAULT_TEXT_MAX)
            fld->text[k++] = **p;
    fld->text[k] = '\0';
    if (k == 0)
        return pl_err_set(err, PL_EFORMAT, "'%s=' has no value", fld->key);
    classify(fld);
    return PL_OK;
}

pl_status pl_fault_parse(const char *line, size_t len, pl_fault *f, pl_err *err)
{
    const char *p = line, *end = line + len;
    memset(f, 0, sizeof *f);
    while (p < end && *p == ' ')
        p++;
    if (!read_name(&p, end, f->kind) || (p < end && *p != ' '))
        return pl_err_set(err, PL_EFORMAT, "fault '%.*s': expected a kind of "
                          "[a-z0-9_] first", (int)len, line);
    for (;;) {
        pl_fault_field scratch, *fld;
        while (p < end && *p == ' ')
            p++;
        if (p == end)
            return PL_OK;
        /* fields past the last slot are read and skipped */
        fld = f->n < PL_FAULT_FIELDS_MAX ? &f->field[f->n] : &scratch;
        memset(fld, 0, sizeof *fld);
        if (!read_name(&p, end, fld->key) || p == end || *p != '=')
            return pl_err_set(err, PL_EFORMAT, "fault '%.*s': expected "
                              "key=value at '%.*s'", (int)len, line,
                              (int)(end - p), p);
        p++;
        if (read_value(&p, end, fld, err) != PL_OK)
            return pl_err_prefix(err, "fault '%.*s': ", (int)len, line);
        if (fld != &scratch)
            f->n++;
    }
}

/* Appends printf-style text at buf[*at], counting what did not fit. */
static void add(char *buf, size_t n, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t n, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*at < n ? buf + *at : NULL, *at < n ? n - *at : 0, fmt, ap);
    va_end(ap);
    if (w > 0)
        *at += (size_t)w;
}

pl_status pl_fault_format(const pl_fault *f, char *buf, size_t n, pl_err *err)
{
    size_t at = 0;
    if (!is_name(f->kind))
        return pl_err_set(err, PL_EINVAL, "fault kind '%s' is not 1 to %d of "
                          "[a-z0-9_]", f->kind, PL_FAULT_NAME_MAX - 1);
    add(buf, n, &at, "%s", f->kind);
    for (int i = 0; i < f->n; i++) {
        const pl_fault_field *fld = &f->field[i];
        if (!is_name(fld->key))
            return pl_err_set(err, PL_EINVAL, "fault '%s': key '%s' is not 1 "
                              "to %d of [a-z0-9_]", f->kind, fld->key,
                              PL_FAULT_NAME_MAX - 1);
        add(buf, n, &at, " %s=", fld->key);
        if (fld->type == PL_FAULT_STRING) {
            /* a fault is one line: a newline in the text becomes a space */
            add(buf, n, &at, "\"");
            for (const char *c = fld->text; *c; c++) {
                if (*c == '"' || *c == '\\')
                    add(buf, n, &at, "\\");
                add(buf, n, &at, "%c", *c == '\n' || *c == '\r' ? ' ' : *c);
            }
            add(buf, n, &at, "\"");
        } else if (fld->text[0])
            add(buf, n, &at, "%s", fld->text);
        else
            add(buf, n, &at, "%.10g", fld->number);
    }
    if (at >= n)
        return pl_err_set(err, PL_EINVAL, "fault '%s' needs %zu bytes, %zu "
                          "given", f->kind, at + 1, n);
    return PL_OK;
}

void pl_fault_init(pl_fault *f, const char *kind)
{
    memset(f, 0, sizeof *f);
    snprintf(f->kind, sizeof f->kind, "%s", kind);
}

static pl_fault_field *new_field(pl_fault *f, const char *key)
{
    if (f->n >= PL_FAULT_FIELDS_MAX)
        return NULL;
    pl_fault_field *fld = &f->field[f->n++];
    memset(fld, 0, sizeof *fld);
    snprintf(fld->key, sizeof fld->key, "%s", key);
    return fld;
}

void pl_fault_add_number(pl_fault *f, const char *key, double v)
{
    pl_fault_field *fld = new_field(f, key);
    if (!fld)
        return;
    fld->type = PL_FAULT_NUMBER;
    fld->number = v;
    snprintf(fld->text, sizeof fld->text, "%.10g", v);
}

void pl_fault_add_text(pl_fault *f, const char *key, const char *text)
{
    pl_fault_field *fld = new_field(f, key);
    if (!fld)
        return;
    fld->type = PL_FAULT_STRING;
    fld->number = NAN;
    snprintf(fld->text, sizeof fld->text, "%s", text);
}

const pl_fault_field *pl_fault_get(const pl_fault *f, const char *key)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->field[i].key, key) == 0)
            return &f->field[i];
    return NULL;
}

size_t pl_fault_numbers(const pl_fault_field *fld, double *out, size_t max)
{
    size_t k = 0;
    if (fld->type == PL_FAULT_STRING)
        return 0;
    if (!fld->text[0]) {    /* made by pl_fault_add_number's caller by hand */
        if (max > 0)
            out[k++] = fld->number;
        return k;
    }
    for (const char *p = fld->text; *p && k < max; p++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            break;
        out[k++] = v;
        if (*end != ',')
            break;
        p = end;
    }
    return k;
}

/* A field's value as written, for the words; "?" when it is missing. */
static const char *val(const pl_fault *f, const char *key)
{
    const pl_fault_field *fld = pl_fault_get(f, key);
    return fld && fld->text[0] ? fld->text : "?";
}

/* A speed field (m/s) in mm/s for a reader, into out; "?" when missing. */
static const char *mm_s(const pl_fault *f, const char *key, char *out, size_t n)
{
    const pl_fault_field *fld = pl_fault_get(f, key);
    if (fld && fld->type == PL_FAULT_NUMBER && isfinite(fld->number))
        snprintf(out, n, "%.3g mm/s", 1e3 * fld->number);
    else
        snprintf(out, n, "?");
    return out;
}

/* The other of two beams, as a phrase. */
static const char *other_beam(const pl_fault *f)
{
    const char *c = val(f, "channel");
    return strcmp(c, "1") == 0 ? "beam 2" : strcmp(c, "2") == 0 ? "beam 1"
                                                                 : "the other beam";
}

/* "23.0,9.0" as "23.0, 9.0" for a reader. */
static void spaced_list(const char *list, char *out, size_t n)
{
    size_t at = 0;
    for (const char *c = list; *c && at + 3 < n; c++) {
        out[at++] = *c;
        if (*c == ',')
            out[at++] = ' ';
    }
    out[at] = '\0';
}

/* A hum line in words.  No drift_hz is a drift not measured (the hum too
 * weak beside the noise to follow, or a record older than the
 * measurement), which a reader must not take for a steady mains. */
static void hum_words(const pl_fault *f, char *buf, size_t n)
{
    char a1[32], a2[32], drift[2 * PL_FAULT_TEXT_MAX + 64] = "its drift not measured";
    if (pl_fault_get(f, "drift_hz") && pl_fault_get(f, "drift_se_hz"))
        snprintf(drift, sizeof drift, "drifting %s Hz over the run, +- %s Hz at 1 sd",
                 val(f, "drift_hz"), val(f, "drift_se_hz"));
    else if (pl_fault_get(f, "drift_hz"))
        snprintf(drift, sizeof drift, "drifting %s Hz over the run", val(f, "drift_hz"));
    snprintf(buf, n, "mains hum at %s Hz (%s) removed: %s on beam 1, %s on beam 2",
             val(f, "freq_hz"), drift, mm_s(f, "amp1_mps", a1, sizeof a1),
             mm_s(f, "amp2_mps", a2, sizeof a2));
}

/* A number field as %.*f, or "?" when missing. */
static const char *fixed(const pl_fault *f, const char *key, double scale, int digits,
                         char *out, size_t n)
{
    const pl_fault_field *fld = pl_fault_get(f, key);
    if (fld && fld->type == PL_FAULT_NUMBER && isfinite(fld->number))
        snprintf(out, n, "%.*f", digits, scale * fld->number);
    else
        snprintf(out, n, "?");
    return out;
}

/* An instant (s) as the warnings and the tables write it, to the
 * millisecond: a record holds a tenth of it more, which printed beside
 * them read as another number ("3.0998 s" next to "3.100 s"). */
static const char *instant(const pl_fault *f, const char *key, char *out, size_t n)
{
    return fixed(f, key, 1, 3, out, n);
}

/* A gap line in words: where, how long, and what processing did with it
 * (process/process.c, bridge_gaps()). */
static void gap_words(const pl_fault *f, char *buf, size_t n)
{
    char at[32], ms[32], slots[32];
    const pl_fault_field *moving = pl_fault_get(f, "in_motion");
    instant(f, "at_s", at, sizeof at);
    fixed(f, "missing_s", 1e3, 1, ms, sizeof ms);
    if (moving && moving->number == 0)
        snprintf(buf, n, "the recording has a gap: %s frames (%s ms) missing at %s s, "
                 "outside the motion", val(f, "frames"), ms, at);
    else
        snprintf(buf, n, "the recording has a gap: %s frames (%s ms) missing at %s s, "
                 "bridged by the impact lattice (%s of a slot turned in it; no impact "
                 "reported there)", val(f, "frames"), ms, at,
                 fixed(f, "slots", 1, 2, slots, sizeof slots));
}

void pl_fault_describe(const pl_fault *f, char *buf, size_t n)
{
    const char *k = f->kind;
    char t0[32], t1[32];
    if (strcmp(k, "beam_lost") == 0)
        snprintf(buf, n, "beam %s lost the prism from %s s to %s s (measured "
                 "on %s alone)", val(f, "channel"), instant(f, "from_s", t0, sizeof t0),
                 instant(f, "to_s", t1, sizeof t1), other_beam(f));
    else if (strcmp(k, "beam_dead") == 0)
        snprintf(buf, n, "beam %s never saw the prism: it followed %s in a share "
                 "of %s of the motion's %s blocks of 10 ms, so the whole run was "
                 "measured on %s alone; check that beam's alignment and decoder",
                 val(f, "channel"), other_beam(f), val(f, "agree"), val(f, "blocks"),
                 other_beam(f));
    else if (strcmp(k, "saturated") == 0)
        snprintf(buf, n, "beam %s saturated: flat at %s m/s from %s s to %s s (%s "
                 "samples in %s spans) while %s turned on, inside the converter's range "
                 "(a decoder past its velocity range: widen it); measured on %s there",
                 val(f, "channel"), val(f, "level_mps"), instant(f, "from_s", t0, sizeof t0),
                 instant(f, "to_s", t1, sizeof t1), val(f, "samples"), val(f, "spans"),
                 other_beam(f), other_beam(f));
    else if (strcmp(k, "clipped") == 0)
        snprintf(buf, n, "beam %s clipped at the converter's range: %s samples "
                 "in %s spans between %s s and %s s", val(f, "channel"),
                 val(f, "samples"), val(f, "spans"), instant(f, "from_s", t0, sizeof t0),
                 instant(f, "to_s", t1, sizeof t1));
    else if (strcmp(k, "common_motion") == 0) {
        char freqs[PL_FAULT_TEXT_MAX * 2], lvl[32];
        spaced_list(val(f, "freqs_hz"), freqs, sizeof freqs);
        snprintf(buf, n, "the ramp shook: both beams saw the same %s RMS at %s Hz, "
                 "removed (not the prism's rotation)", mm_s(f, "level_mps", lvl, sizeof lvl),
                 freqs);
    }
    else if (strcmp(k, "hum") == 0)
        hum_words(f, buf, n);
    else if (strcmp(k, "dropouts") == 0)
        snprintf(buf, n, "beam %s dropped out %s time%s, %s s in all",
                 val(f, "channel"), val(f, "count"),
                 strcmp(val(f, "count"), "1") == 0 ? "" : "s", val(f, "total_s"));
    else if (strcmp(k, "tail_cut") == 0)
        snprintf(buf, n, "the prism left the beams at %s s; the recording ran on "
                 "past it (not used)", instant(f, "at_s", t0, sizeof t0));
    else if (strcmp(k, "gap") == 0)
        gap_words(f, buf, n);
    else if (strcmp(k, "refused") == 0)
        snprintf(buf, n, "processing refused the run: %s", val(f, "reason"));
    else if (strcmp(k, "late_start") == 0)
        snprintf(buf, n, "the recording starts after the release: the prism already "
                 "turned at %s rad/s at the first sample; L_p counts from there, and "
                 "the decoders' offsets were taken as 0 (no lead-in at rest)",
                 val(f, "omega_rad_s"));
    else if (strcmp(k, "omega_drift") == 0)
        snprintf(buf, n, "omega (4.1) over the last second (%s rad/s) is off the "
                 "impacts' own clock (%s rad/s, part %s): the decoders' offsets drifted, "
                 "or the LDV scale or the heights' difference is off by that much; the "
                 "mean speeds are the lattice's, the stored omega series keeps the error",
                 val(f, "omega41_rad_s"), val(f, "lattice_rad_s"), val(f, "part"));
    else if (strcmp(k, "second_release") == 0)
        snprintf(buf, n, "the prism rolls again from %s s, after the motion measured here "
                 "ended at %s s: a second release in one file; only the first is measured "
                 "(import the rest as a run of its own)", instant(f, "at_s", t0, sizeof t0),
                 instant(f, "first_end_s", t1, sizeof t1));
    else if (strcmp(k, "time_jump") == 0)
        snprintf(buf, n, "the impacts' lattice jumps by %s of a slot before %s s (%s jump%s "
                 "in all): about %s s of samples missing from the file there, with no "
                 "time column to say so (a dropped buffer?); the impacts after it are "
                 "early by that much, L_p counts whole slots across it",
                 val(f, "slot_part"), instant(f, "at_s", t0, sizeof t0), val(f, "count"),
                 strcmp(val(f, "count"), "1") == 0 ? "" : "s", val(f, "missing_s"));
    else if (strcmp(k, "lattice_mismatch") == 0)
        snprintf(buf, n, "the integral of omega turns %s slots per impact around %s s "
                 "and %s around %s s, not 1 (+- %s, 1 sd), and omega (4.1) over the last "
                 "second is %s rad/s where the impacts' clock gives %s: omega or the "
                 "impacts are wrong there (a beam saturated or blind?); do not trust "
                 "this run's numbers", val(f, "q_first"), instant(f, "t_first_s", t0, sizeof t0),
                 val(f, "q_last"), instant(f, "t_last_s", t1, sizeof t1), val(f, "q_se"),
                 val(f, "omega41_rad_s"), val(f, "lattice_rad_s"));
    else {
        pl_err ignored;
        if (pl_fault_format(f, buf, n, &ignored) != PL_OK)
            snprintf(buf, n, "%s", f->kind);
    }
}

int pl_faults_each(const char *faults,
                   int (*fn)(void *ctx, const pl_fault *f, const char *line,
                             size_t len),
                   void *ctx)
{
    pl_fault f;
    for (const char *p = faults; p && *p; ) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        pl_err ignored;
        int rc = 0;
        if (len > 0 && strspn(p, " \r") < len) {
            /* a CR of a file edited elsewhere is not part of the line */
            size_t l = len > 0 && p[len - 1] == '\r' ? len - 1 : len;
            rc = fn(ctx, pl_fault_parse(p, l, &f, &ignored) == PL_OK ? &f : NULL,
                    p, l);
        }
        if (rc)
            return rc;
        p = nl ? nl + 1 : p + len;
    }
    return 0;
}

const char *pl_quality_words(const char *quality)
{
    if (!quality || !quality[0])
        return "not assessed (processed before prismlab recorded data quality)";
    if (strcmp(quality, "degraded") == 0)
        return "degraded (measured through a fault)";
    if (strcmp(quality, "suspect") == 0)
        return "suspect (a check failed: do not trust the numbers; see the faults)";
    if (strcmp(quality, "refused") == 0)
        return "refused";
    return quality;
}
