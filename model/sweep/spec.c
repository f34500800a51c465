/* model/sweep/spec.c - the sweep file and its points: parsing, each point's
 * arguments, one point's run through its model (spec_models.c).  See
 * spec.h and docs/sweep.md. */
#include "model/sweep/spec_private.h"

#include "core/cli.h"
#include "core/numtext.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_rng.h>
#include <ini.h>
#include <math.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int sl_push(strlist *l, const char *t)
{
    size_t k = strlen(t) + 1;
    if (l->len + k > l->cap) {
        size_t want = (l->cap ? l->cap * 2 : 256) + k;
        char *nb = realloc(l->buf, want);
        if (!nb)
            return 0;
        l->buf = nb;
        l->cap = want;
    }
    if (l->n == l->ncap) {
        size_t want = l->ncap ? l->ncap * 2 : 16;
        size_t *no = realloc(l->off, want * sizeof *no);
        if (!no)
            return 0;
        l->off = no;
        l->ncap = want;
    }
    memcpy(l->buf + l->len, t, k);
    l->off[l->n++] = l->len;
    l->len += k;
    return 1;
}

static const char *sl_at(const strlist *l, size_t i) { return l->buf + l->off[i]; }

static void sl_free(strlist *l)
{
    free(l->buf);
    free(l->off);
    memset(l, 0, sizeof *l);
}

int pl_sweep_find_name(const char *list, const char *name)
{
    size_t n = strlen(name);
    int i = 0;
    for (const char *p = list; *p; i++) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && !strncmp(p, name, n))
            return i;
        if (!e)
            break;
        p = e + 1;
    }
    return -1;
}

/* --- parsing ------------------------------------------------------------ */

static int fail(pl_sweep_spec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(pl_sweep_spec *s, const char *fmt, ...)
{
    if (!s->msg[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->msg, sizeof s->msg, fmt, ap);
        va_end(ap);
    }
    return 0;
}

static char *trim(char *t)
{
    while (*t == ' ' || *t == '\t')
        t++;
    char *e = t + strlen(t);
    while (e > t && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = 0;
    return t;
}

static int copy_name(pl_sweep_spec *s, char dst[NAME_LEN], const char *src)
{
    size_t n = strlen(src);
    if (n == 0 || n >= NAME_LEN)
        return fail(s, "a parameter name of 1 to %d characters, got '%s'",
                    NAME_LEN - 1, src);
    memcpy(dst, src, n + 1);
    return 1;
}

/* "a, b, c" (split at sep) into l, each item trimmed and checked by
 * item(); returns the count, or -1 after fail(). */
typedef int (*item_fn)(pl_sweep_spec *s, const pname *pn, const char *text, char *canon);

static long split_list(pl_sweep_spec *s, const char *value, char sep, const pname *pn,
                       item_fn item, strlist *l)
{
    char *copy = strdup(value), *canon = malloc(TEXT_LEN);
    long n = 0;
    if (!copy || !canon) {
        free(copy);
        free(canon);
        fail(s, "out of memory");
        return -1;
    }
    char seps[2] = {sep, 0}, *save = NULL;
    for (char *t = strtok_r(copy, seps, &save); t; t = strtok_r(NULL, seps, &save)) {
        t = trim(t);
        if (!*t || strlen(t) >= (pn && pn->ncomp && pn->comp < 0 ? TEXT_LEN : VALUE_LEN)) {
            n = -1;
            fail(s, "list items of 1 to %d characters, got '%s'",
                 (pn && pn->ncomp && pn->comp < 0 ? TEXT_LEN : VALUE_LEN) - 1, t);
            break;
        }
        if (item && !item(s, pn, t, canon)) {
            n = -1;
            break;
        }
        if (!sl_push(l, item ? canon : t)) {
            n = -1;
            fail(s, "out of memory");
            break;
        }
        n++;
    }
    free(copy);
    free(canon);
    return n;
}

static int parse_num(pl_sweep_spec *s, const char *key, const char *t, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(t, &end);
    if (end == t || *trim(end) || errno || !isfinite(*v))
        return fail(s, "%s: expected a number, got '%s'", key, t);
    return 1;
}

/* linear/log = FROM, TO, COUNT */
static int parse_range(pl_sweep_spec *s, axis *a, const char *key, const char *value)
{
    strlist it = {0};
    long n = split_list(s, value, ',', NULL, NULL, &it);
    if (n < 0) {
        sl_free(&it);
        return 0;
    }
    double from, to, cnt;
    int ok = n == 3 && parse_num(s, key, sl_at(&it, 0), &from) &&
             parse_num(s, key, sl_at(&it, 1), &to) && parse_num(s, key, sl_at(&it, 2), &cnt);
    sl_free(&it);
    if (!ok)
        return fail(s, "%s = FROM, TO, COUNT expected, got '%s'", key, value);
    int lg = !strcmp(key, "log");
    if (cnt != floor(cnt) || cnt < 1 || cnt > MAX_AXIS_VALUES)
        return fail(s, "%s: COUNT must be a whole number in 1..%d, got %s", key,
                    MAX_AXIS_VALUES, value);
    if (lg && !(from > 0 && to > 0))
        return fail(s, "log: FROM and TO must be > 0, got '%s'", value);
    if (cnt == 1 && from != to)
        return fail(s, "%s: COUNT 1 needs FROM = TO, got '%s'", key, value);
    size_t k = (size_t)cnt;
    for (size_t i = 0; i < k; i++) {
        double f = k > 1 ? (double)i / (double)(k - 1) : 0, v;
        if (i == 0)
            v = from;
        else if (i == k - 1)
            v = to;
        else
            v = lg ? exp(log(from) + (log(to) - log(from)) * f) : from + (to - from) * f;
        char t[32];
        pl_jbuf_number_text(t, v);
        if (!sl_push(&a->vals, t))
            return fail(s, "out of memory");
    }
    return 1;
}

/* The components' names for messages: "vx, vy". */
static void comp_list(const pname *pn, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < pn->ncomp && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s.%s%s", i ? ", " : "",
                                pn->base, pn->repeated ? "K." : "", pn->comps[i]);
}

/* Reads a parameter's name: an option of the model, or a component of a
 * compound one (v0.vx, particle.2.x). */
static int parse_name(pl_sweep_spec *s, const char *name, pname *pn)
{
    memset(pn, 0, sizeof *pn);
    pn->comp = -1;
    if (!s->m)
        return fail(s, "[sweep] model must come before the parameters");
    char buf[NAME_LEN];
    if (!copy_name(s, buf, name))
        return 0;
    char *dot = strchr(buf, '.');
    if (dot)
        *dot = 0;
    pl_opt row;
    if (!s->m->option(buf, &row))
        return fail(s, "'%s' is not a parameter of prismlab %s", buf, s->m->name);
    memcpy(pn->base, buf, strlen(buf) + 1);
    pn->kind = (int)row.kind;
    if (row.kind == PL_OPTK_PAIR || (row.kind == PL_OPTK_CALLBACK && row.argh &&
                                     strchr(row.argh, ','))) {
        const char *a = row.argh;
        while (*a && pn->ncomp < MAX_COMP) {
            size_t l = strcspn(a, ",");
            char *c = pn->comps[pn->ncomp++];
            for (size_t i = 0; i < l && i < NAME_LEN - 1; i++)
                c[i] = (char)tolower((unsigned char)a[i]);
            c[l < NAME_LEN - 1 ? l : NAME_LEN - 1] = 0;
            a += l + (a[l] == ',');
        }
        pn->repeated = pl_sweep_find_name(s->m->repeated, buf) >= 0;
        snprintf(pn->argh, sizeof pn->argh, "%s", row.argh);
    }
    if (!dot)
        return 1;
    char comps[256];
    comp_list(pn, comps, sizeof comps);
    if (!pn->ncomp)
        return fail(s, "'%s': %s takes one value, no components", name, pn->base);
    char *rest = dot + 1;
    if (pn->repeated) {
        char *end;
        long k = strtol(rest, &end, 10);
        char again[16];
        snprintf(again, sizeof again, "%ld", k);
        if (*end != '.' || k < 1 || k > MAX_ITEMS || strncmp(rest, again, strlen(again)) ||
            (size_t)(end - rest) != strlen(again))
            return fail(s, "'%s': a component of %s is %s, K from 1 to %d", name,
                        pn->base, comps, MAX_ITEMS);
        pn->item = (int)k;
        rest = end + 1;
    }
    for (int i = 0; i < pn->ncomp; i++)
        if (!strcmp(rest, pn->comps[i]))
            pn->comp = i;
    if (pn->comp < 0)
        return fail(s, "'%s': the components of %s are %s", name, pn->base, comps);
    return 1;
}

/* One value of a parameter, checked and made canonical into canon: a
 * flag takes yes or no; a compound value is tuples of its fields,
 * "M,X,Y / M,X,Y", written back without blanks. */
static int check_value(pl_sweep_spec *s, const pname *pn, const char *text, char *canon)
{
    if (pn->kind == PL_OPTK_FLAG) {
        if (strcmp(text, "yes") && strcmp(text, "no"))
            return fail(s, "%s: a flag, yes or no; got '%s'", pn->base, text);
    } else if (pn->ncomp && pn->comp < 0) {
        size_t len = 0;
        int tuples = 0, fields = 0;
        canon[0] = 0;
        for (const char *p = text;; p++) {
            if (*p == ' ' || *p == '\t')
                continue;
            if (*p == ',' || *p == '/' || !*p) {
                if (len == 0 || canon[len - 1] == ',' || canon[len - 1] == '/')
                    break;           /* an empty field: refused below */
                fields++;
                if (*p != ',') {
                    if (fields != pn->ncomp)
                        break;
                    tuples++;
                    fields = 0;
                }
                if (!*p) {
                    if (pn->repeated ? tuples <= MAX_ITEMS : tuples == 1)
                        return 1;
                    break;
                }
            }
            if (len + 2 >= TEXT_LEN)
                break;
            canon[len++] = *p;
            canon[len] = 0;
        }
        if (pn->repeated)
            return fail(s, "%s: 1 to %d tuples %s separated by '/' expected, got '%s'",
                        pn->base, MAX_ITEMS, pn->argh, text);
        return fail(s, "%s: %s expected, got '%s'", pn->base, pn->argh, text);
    }
    snprintf(canon, TEXT_LEN, "%s", text);
    return 1;
}

/* The number of tuples of a canonical compound value. */
static int tuples_of(const char *v)
{
    int n = 1;
    for (; *v; v++)
        n += *v == '/';
    return n;
}

static int known_name(pl_sweep_spec *s, const char *name, pname *pn)
{
    if (!parse_name(s, name, pn))
        return 0;
    if ((!strcmp(name, "prism") || !strcmp(name, "ramp")) && s->sec != SEC_FIXED)
        return fail(s, "'%s': a catalogue name goes in [fixed] (it is looked up once, "
                    "when the sweep starts); an axis or [catalogue] takes numbers", name);
    if (s->sec == SEC_CATALOGUE)   /* the file's own numbers override these */
        return 1;
    for (size_t i = 0; i < s->nfixed; i++)
        if (!strcmp(s->fixed[i].name, name))
            return fail(s, "'%s' is given twice", name);
    for (size_t i = 0; i < s->naxes; i++)
        if (!strcmp(s->axes[i].name, name))
            return fail(s, "'%s' is given twice", name);
    return 1;
}

/* A compound value's raw line must not hold ';': INI takes " ;" for a
 * comment and would cut the tuples off there without a word. */
static int no_semicolon(pl_sweep_spec *s, const pname *pn)
{
    const char *eq = strchr(s->raw, '=');
    if (pn->ncomp && pn->comp < 0 && eq && strchr(eq, ';'))
        return fail(s, "%s: ';' starts a comment here; separate tuples by '/'%s",
                    pn->base, s->sec == SEC_AXIS ? " and values by '|'" : "");
    return 1;
}

/* Appends name = canon (read on the current line) to the n entries of
 * list, which the caller has checked have room.  1, or 0 with the spec's
 * error when out of memory. */
static int kv_add(pl_sweep_spec *s, kv *list, size_t *n, const char *name, const pname *pn,
                  const char *canon)
{
    kv *e = &list[*n];
    memcpy(e->name, name, strlen(name) + 1);
    e->pn = *pn;
    e->line = s->line;
    if (!(e->value = strdup(canon)))
        return fail(s, "out of memory");
    (*n)++;
    return 1;
}

/* [sweep]'s keys (handler()): 1 when taken, 0 with s->msg set. */
static int sec_sweep(pl_sweep_spec *s, const char *name, const char *value)
{
    s->sec = SEC_SWEEP;
    if (!strcmp(name, "name")) {
        if (!*value || strlen(value) > SWEEP_NAME_CAP - 1)
            return fail(s, "name: 1 to %d characters, got '%s'", SWEEP_NAME_CAP - 1, value);
        memcpy(s->name, value, strlen(value) + 1);
    } else if (!strcmp(name, "model")) {
        for (size_t i = 0; i < pl_sweep_n_models; i++)
            if (!strcmp(pl_sweep_models[i].name, value))
                s->m = &pl_sweep_models[i];
        if (!s->m)
            return fail(s, "model: expected simulate, dimer or roughplane, got '%s'",
                        value);
    } else if (!strcmp(name, "series")) {
        if (strlen(value) >= sizeof s->series_text)
            return fail(s, "series: too long");
        memcpy(s->series_text, value, strlen(value) + 1);
        s->series_line = s->line;
    } else if (!strcmp(name, "series-rate")) {
        if (!parse_num(s, name, value, &s->series_rate) || !(s->series_rate > 0))
            return fail(s, "series-rate: expected a rate > 0 Hz, got '%s'", value);
    } else {
        return fail(s, "[sweep] takes name, model, series, series-rate; got '%s'", name);
    }
    return 1;
}

/* [fixed]'s parameters (handler()); a repeated option's lines add
 * tuples. */
static int sec_fixed(pl_sweep_spec *s, const char *name, const char *value)
{
    s->sec = SEC_FIXED;
    pname pn;
    if (!parse_name(s, name, &pn) || !no_semicolon(s, &pn))
        return 0;
    char canon[TEXT_LEN];
    if (!*value || strlen(value) >= (pn.ncomp && pn.comp < 0 ? TEXT_LEN : VALUE_LEN))
        return fail(s, "%s: a value of 1 to %d characters", name,
                    (pn.ncomp && pn.comp < 0 ? TEXT_LEN : VALUE_LEN) - 1);
    if (!check_value(s, &pn, value, canon))
        return 0;
    /* a repeated option's lines add tuples, as the command's options */
    kv *f = s->nfixed ? &s->fixed[s->nfixed - 1] : NULL;
    if (pn.repeated && pn.comp < 0 && f && !strcmp(f->name, name)) {
        size_t a = strlen(f->value), b = strlen(canon);
        if (tuples_of(f->value) + tuples_of(canon) > MAX_ITEMS || a + b + 2 > TEXT_LEN)
            return fail(s, "%s: at most %d", name, MAX_ITEMS);
        char *nv = realloc(f->value, a + b + 2);
        if (!nv)
            return fail(s, "out of memory");
        nv[a] = '/';
        memcpy(nv + a + 1, canon, b + 1);
        f->value = nv;
        return 1;
    }
    if (s->nfixed == MAX_FIXED)
        return fail(s, "more than %d fixed parameters", MAX_FIXED);
    if (!known_name(s, name, &pn))
        return 0;
    if (!strcmp(name, "prism") || !strcmp(name, "ramp"))
        snprintf(!strcmp(name, "prism") ? s->prism : s->ramp, VALUE_LEN, "%s", canon);
    return kv_add(s, s->fixed, &s->nfixed, name, &pn, canon);
}

/* [axis NAME]'s keys (handler()): the section's first key opens the axis. */
static int sec_axis(pl_sweep_spec *s, const char *section, const char *name,
                    const char *value)
{
    s->sec = SEC_AXIS;
    char buf[NAME_LEN + 8];
    snprintf(buf, sizeof buf, "%s", section + 5);
    const char *an = trim(buf);
    axis *a = s->naxes ? &s->axes[s->naxes - 1] : NULL;
    if (!a || strcmp(a->name, an)) {   /* the section's first key */
        if (s->naxes == MAX_AXES)
            return fail(s, "more than %d axes", MAX_AXES);
        pname pn;
        if (!known_name(s, an, &pn))
            return 0;
        a = &s->axes[s->naxes];
        memset(a, 0, sizeof *a);
        memcpy(a->name, an, strlen(an) + 1);
        a->pn = pn;
        a->line = s->line;
        s->naxes++;
    } else if (a->vals.n && !(a->vals.n && !strcmp(name, "values") && a->pn.ncomp &&
                              a->pn.comp < 0)) {
        return fail(s, "[axis %s] takes one of values, linear, log", an);
    }
    int whole = a->pn.ncomp && a->pn.comp < 0;
    if (!strcmp(name, "values")) {
        /* compound values hold ',': they are separated by '|', and
         * may go on on the next lines */
        if (!no_semicolon(s, &a->pn))
            return 0;
        long n = split_list(s, value, whole ? '|' : ',', &a->pn, check_value, &a->vals);
        if (n <= 0)
            return fail(s, "values: a list separated by '%c'", whole ? '|' : ',');
        return 1;
    }
    if (!strcmp(name, "linear") || !strcmp(name, "log")) {
        if (whole || a->pn.kind == PL_OPTK_FLAG)
            return fail(s, "[axis %s] takes values = %s, not %s", an,
                        whole ? "A,B | C,D ..." : "yes, no", name);
        return parse_range(s, a, name, value);
    }
    return fail(s, "[axis %s] takes values, linear or log; got '%s'", an, name);
}

/* [catalogue]'s numbers (handler()). */
static int sec_catalogue(pl_sweep_spec *s, const char *name, const char *value)
{
    /* the numbers of [fixed]'s prism and ramp, as prismlab sweep looked
     * them up when the sweep started (it writes this section) */
    s->sec = SEC_CATALOGUE;
    s->cat_section = 1;
    pname pn;
    char canon[TEXT_LEN];
    if (!parse_name(s, name, &pn) || !known_name(s, name, &pn))
        return 0;
    for (size_t i = 0; i < s->ncat; i++)
        if (!strcmp(s->cat[i].name, name))
            return fail(s, "'%s' is given twice", name);
    if (s->ncat == MAX_FIXED || pn.ncomp || !*value || strlen(value) >= VALUE_LEN ||
        !check_value(s, &pn, value, canon))
        return fail(s, "[catalogue] takes numbers, got %s = '%s'", name, value);
    return kv_add(s, s->cat, &s->ncat, name, &pn, canon);
}

/* [repeat]'s perturb = NAME WIDTH, ... (sec_repeat()). */
static int sec_repeat_perturb(pl_sweep_spec *s, const char *value)
{
    strlist it = {0};
    long n = split_list(s, value, ',', NULL, NULL, &it);
    for (long i = 0; i < n; i++) {
        char pn[VALUE_LEN], pw[VALUE_LEN];
        pname nm;
        if (s->nperturb == MAX_PERTURB ||
            sscanf(sl_at(&it, (size_t)i), "%63s %63s", pn, pw) != 2 ||
            !copy_name(s, s->perturb[s->nperturb].name, pn) ||
            !parse_num(s, "perturb", pw, &s->perturb_w[s->nperturb]) ||
            !(s->perturb_w[s->nperturb] > 0)) {
            sl_free(&it);
            return fail(s, "perturb: NAME WIDTH, ... (at most %d, widths > 0), "
                        "got '%s'", MAX_PERTURB, value);
        }
        if (!parse_name(s, pn, &nm)) {
            sl_free(&it);
            s->msg[0] = 0;
            return fail(s, "perturb: '%s' is not a parameter of the model", pn);
        }
        if (nm.kind == PL_OPTK_FLAG || nm.kind == PL_OPTK_CHOICE ||
            (nm.ncomp && nm.comp < 0)) {
            sl_free(&it);
            return fail(s, "perturb: '%s' is no number%s", pn, nm.ncomp ?
                        ": perturb a component" : "");
        }
        s->nperturb++;
    }
    sl_free(&it);
    return n > 0;
}

/* [repeat]'s keys (handler()). */
static int sec_repeat(pl_sweep_spec *s, const char *name, const char *value)
{
    s->sec = SEC_REPEAT;
    double v;
    if (!strcmp(name, "count")) {
        if (!parse_num(s, name, value, &v) || v != floor(v) || v < 1 || v > 1e6)
            return fail(s, "count: a whole number in 1..1000000, got '%s'", value);
        s->repeats = (long)v;
    } else if (!strcmp(name, "seed")) {
        if (!parse_num(s, name, value, &v) || v != floor(v) || v < 0 || v > 4e9)
            return fail(s, "seed: a whole number in 0..4e9, got '%s'", value);
        s->seed = (unsigned long)v;
    } else if (!strcmp(name, "perturb")) {
        return sec_repeat_perturb(s, value);
    } else {
        return fail(s, "[repeat] takes count, seed, perturb; got '%s'", name);
    }
    return 1;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
    pl_sweep_spec *s = user;
    if (s->msg[0])
        return 0;
    if (s->long_line == s->line)
        return fail(s, "a line longer than the INI reader's %d characters: give a "
                    "repeated option on several lines, axis values on several "
                    "'values =' lines", INI_MAX_LINE - 2);
    if (!strcmp(section, "sweep"))
        return sec_sweep(s, name, value);
    if (!strcmp(section, "fixed"))
        return sec_fixed(s, name, value);
    if (!strncmp(section, "axis ", 5))
        return sec_axis(s, section, name, value);
    if (!strcmp(section, "catalogue"))
        return sec_catalogue(s, name, value);
    if (!strcmp(section, "repeat"))
        return sec_repeat(s, name, value);
    return fail(s, "unknown section [%s] (sweep, fixed, axis NAME, repeat, catalogue)",
                section);
}

/* inih's reader over the text, counting lines for the messages that come
 * after the parse, and marking a line longer than inih's buffer (which it
 * would cut into two lines without a word). */
static char *read_line(char *str, int num, void *user)
{
    pl_sweep_spec *s = user;
    if (!*s->next)
        return NULL;
    size_t want = strcspn(s->next, "\n"), k = want;
    int whole = 1;
    if (k + 1 >= (size_t)num) {
        k = (size_t)num - 2;
        whole = 0;
    }
    memcpy(str, s->next, k);
    str[k] = '\n';
    str[k + 1] = 0;
    snprintf(s->raw, sizeof s->raw, "%.*s", (int)k, s->next);
    s->next += k + (whole && s->next[k] == '\n');
    if (!whole)
        s->next += want - k + (s->next[want - k] == '\n');   /* the rest of it */
    s->line++;
    if (!whole)
        s->long_line = s->line;
    return str;
}

static void sha256_hex(const char *text, char hex[65])
{
    struct sha256_ctx ctx;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, strlen(text), (const uint8_t *)text);
    sha256_digest(&ctx, sizeof d, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* A component names a tuple every value of its option has, and an option
 * given by components only (no v0, only v0.vx and v0.vy) gets them all:
 * checked once for the whole file, naming the component's line. */
static pl_status check_components(const pl_sweep_spec *s, pl_err *err)
{
    size_t n = s->nfixed + s->naxes;
    for (size_t i = 0; i < n; i++) {
        const pname *pn = i < s->nfixed ? &s->fixed[i].pn : &s->axes[i - s->nfixed].pn;
        const char *name = i < s->nfixed ? s->fixed[i].name : s->axes[i - s->nfixed].name;
        int line = i < s->nfixed ? s->fixed[i].line : s->axes[i - s->nfixed].line;
        if (pn->comp < 0)
            continue;
        int wholes = 0, have = 0, fewest = MAX_ITEMS + 1;
        for (size_t j = 0; j < n; j++) {
            const pname *q = j < s->nfixed ? &s->fixed[j].pn : &s->axes[j - s->nfixed].pn;
            if (strcmp(q->base, pn->base))
                continue;
            if (q->comp >= 0) {
                have |= 1 << q->comp;
                continue;
            }
            wholes++;
            if (j < s->nfixed) {
                int t = tuples_of(s->fixed[j].value);
                fewest = t < fewest ? t : fewest;
            } else {
                const axis *a = &s->axes[j - s->nfixed];
                for (size_t k = 0; k < a->vals.n; k++) {
                    int t = tuples_of(sl_at(&a->vals, k));
                    fewest = t < fewest ? t : fewest;
                }
            }
        }
        char comps[256];
        comp_list(pn, comps, sizeof comps);
        if (pn->repeated && !wholes)
            return pl_err_set(err, PL_EINVAL, "%s:%d: '%s': give %s too (%s = %s / ...)",
                              s->path, line, name, pn->base, pn->base, "M,X,Y");
        if (pn->repeated && pn->item > fewest)
            return pl_err_set(err, PL_EINVAL, "%s:%d: '%s': %s has %d tuples, not %d",
                              s->path, line, name, pn->base, fewest, pn->item);
        if (!wholes && have != (1 << pn->ncomp) - 1)
            return pl_err_set(err, PL_EINVAL, "%s:%d: '%s': give %s too, or every "
                              "component (%s)", s->path, line, name, pn->base, comps);
    }
    return PL_OK;
}

/* The point's parameters as the command's arguments (argv[0] the model),
 * their texts in an arena. */
typedef struct {
    int argc;
    char *argv[2 * (MAX_FIXED + MAX_AXES + MAX_ITEMS) + 8];
    char arena[16384];
    size_t used;
} point_args;

static char *arena_put(point_args *pa, const char *prefix, const char *text)
{
    size_t a = strlen(prefix), b = strlen(text);
    if (pa->used + a + b + 1 > sizeof pa->arena)
        return NULL;
    char *p = pa->arena + pa->used;
    memcpy(p, prefix, a);
    memcpy(p + a, text, b + 1);
    pa->used += a + b + 1;
    return p;
}

/* One of the point's parameters: its name and value as the file gives
 * them (a perturbed one as drawn). */
typedef struct {
    const char *name, *value;
    const pname *pn;
} pv;

static const char *find_value(const pv *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i].name, name))
            return list[i].value;
    return NULL;
}

/* A compound option's tuples for the point: its whole value (or empty
 * fields) with the point's components put in. */
typedef struct {
    int n;
    const char *f[MAX_ITEMS][MAX_COMP];
    char buf[TEXT_LEN];
} tuples;

static void compose(const pv *all, size_t n, const char *base, const pname *pn, tuples *t)
{
    const char *whole = NULL;
    for (size_t i = 0; i < n; i++)
        if (all[i].pn->comp < 0 && !strcmp(all[i].pn->base, base))
            whole = all[i].value;
    snprintf(t->buf, sizeof t->buf, "%s", whole ? whole : "");
    t->n = whole ? 0 : 1;
    for (int c = 0; c < MAX_COMP; c++)
        t->f[0][c] = "";
    char *save = NULL;
    for (char *tu = whole ? strtok_r(t->buf, "/", &save) : NULL; tu && t->n < MAX_ITEMS;
         tu = strtok_r(NULL, "/", &save)) {
        char *s2 = NULL;
        int c = 0;
        for (char *f = strtok_r(tu, ",", &s2); f && c < MAX_COMP; f = strtok_r(NULL, ",", &s2))
            t->f[t->n][c++] = f;
        t->n++;
    }
    for (size_t i = 0; i < n; i++) {
        const pname *q = all[i].pn;
        if (q->comp >= 0 && !strcmp(q->base, base)) {
            int k = pn->repeated ? q->item - 1 : 0;
            if (k < t->n)
                t->f[k][q->comp] = all[i].value;
        }
    }
}

/* The tuple k as the command's value "a,b,c". */
static void tuple_text(const tuples *t, int k, int ncomp, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (int c = 0; c < ncomp && len < cap; c++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", c ? "," : "", t->f[k][c]);
}

/* Puts a compound option into argv (once a tuple when repeated) and into
 * the params as an array (of arrays when repeated). */
static int put_compound(point_args *pa, pl_jbuf *pj, const pv *all, size_t n, const pname *pn)
{
    tuples t;
    compose(all, n, pn->base, pn, &t);
    char opt[NAME_LEN + 2], text[TEXT_LEN];
    snprintf(opt, sizeof opt, "--%s", pn->base);
    pl_jbuf_key(pj, pn->base);
    pl_jbuf_add(pj, "[");
    for (int k = 0; k < t.n; k++) {
        tuple_text(&t, k, pn->ncomp, text, sizeof text);
        if ((size_t)pa->argc + 3 > sizeof pa->argv / sizeof pa->argv[0] ||
            !(pa->argv[pa->argc] = arena_put(pa, opt, "")) ||
            !(pa->argv[pa->argc + 1] = arena_put(pa, "", text)))
            return 0;
        pa->argc += 2;
        if (pn->repeated)
            pl_jbuf_add(pj, "%s[", k ? "," : "");
        for (int c = 0; c < pn->ncomp; c++)
            pl_jbuf_elem(pj, c == 0, t.f[k][c]);
        if (pn->repeated)
            pl_jbuf_add(pj, "]");
    }
    pl_jbuf_add(pj, "]");
    return 1;
}

/* Whether the file's [fixed] or an axis gives the parameter (a fraction
 * gives its degrees), so that [catalogue]'s number for it is not used. */
static int file_gives(const pl_sweep_spec *s, const char *name)
{
    const char *frac = !strcmp(name, "beta-deg") ? "beta-frac"
                     : !strcmp(name, "lambda0-deg") ? "lambda0-frac" : name;
    for (size_t i = 0; i < s->nfixed; i++)
        if (!strcmp(s->fixed[i].name, name) || !strcmp(s->fixed[i].name, frac))
            return 1;
    for (size_t i = 0; i < s->naxes; i++)
        if (!strcmp(s->axes[i].name, name) || !strcmp(s->axes[i].name, frac))
            return 1;
    return 0;
}

/* A point's values into all[]: [fixed]'s, [catalogue]'s where the file
 * gives none, then each axis's at the point's position (the last axis
 * varies fastest, after the repeats); its repeat into *rep.  Returns how
 * many. */
static size_t point_values(const pl_sweep_spec *s, long long idx, pv *all, long long *rep)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nfixed; i++)
        all[n++] = (pv){s->fixed[i].name, s->fixed[i].value, &s->fixed[i].pn};
    for (size_t i = 0; i < s->ncat; i++)
        if (!file_gives(s, s->cat[i].name))
            all[n++] = (pv){s->cat[i].name, s->cat[i].value, &s->cat[i].pn};
    long long rest = idx;
    *rep = 0;
    if (s->repeats) {
        *rep = rest % s->repeats;
        rest /= s->repeats;
    }
    size_t pos[MAX_AXES];
    for (size_t i = s->naxes; i-- > 0;) {
        pos[i] = (size_t)(rest % (long long)s->axes[i].vals.n);
        rest /= (long long)s->axes[i].vals.n;
    }
    for (size_t i = 0; i < s->naxes; i++)
        all[n++] = (pv){s->axes[i].name, sl_at(&s->axes[i].vals, pos[i]), &s->axes[i].pn};
    return n;
}

/* [repeat]'s perturbations of all[0..n) drawn from seed: each named
 * value moved by up to its width, the text into drawn[k]. */
static pl_status perturb_values(const pl_sweep_spec *s, unsigned long seed, pv *all, size_t n,
                                char drawn[][32], pl_err *err)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!g)
        return pl_err_set(err, PL_ENOMEM, "out of memory for a random generator");
    gsl_rng_set(g, seed);
    pl_status st = PL_OK;
    for (size_t k = 0; st == PL_OK && k < s->nperturb; k++) {
        double u = 2 * gsl_rng_uniform(g) - 1;
        size_t j = 0;
        while (j < n && strcmp(all[j].name, s->perturb[k].name))
            j++;
        char *end = NULL;
        double v = j < n ? strtod(all[j].value, &end) : NAN;
        if (j == n)
            st = pl_err_set(err, PL_EINVAL, "%s: perturb '%s': the parameter has "
                            "no value to perturb", s->path, s->perturb[k].name);
        else if (*end)
            st = pl_err_set(err, PL_EINVAL, "%s: perturb '%s': '%s' is no number",
                            s->path, all[j].name, all[j].value);
        else {
            pl_jbuf_number_text(drawn[k], v + u * s->perturb_w[k]);
            all[j].value = drawn[k];
        }
    }
    gsl_rng_free(g);
    return st;
}

/* beta-frac or lambda0-frac (name, value) of the simulate model as
 * degrees for the point's N into deg: beta = f 180 / N, lambda0 = f
 * (180 / N + beta).  -1 when N is not given, -2 when lambda0's beta is
 * not. */
static int frac_degrees(const pv *all, size_t n, const char *name, const char *value,
                        char deg[32])
{
    const char *nt = find_value(all, n, "N");
    double N = nt ? strtod(nt, NULL) : NAN, f = strtod(value, NULL), d;
    if (!(N >= 3))
        return -1;
    if (!strcmp(name, "beta-frac")) {
        d = f * 180 / N;
    } else {
        const char *bt = find_value(all, n, "beta-deg");
        const char *bft = find_value(all, n, "beta-frac");
        double b = bt ? strtod(bt, NULL) : bft ? strtod(bft, NULL) * 180 / N : NAN;
        if (isnan(b))
            return -2;
        d = f * (180 / N + b);
    }
    pl_jbuf_number_text(deg, d);
    return 0;
}

static pl_status build_point(const pl_sweep_spec *s, long long idx, point_args *pa,
                             pl_jbuf *pj, pl_err *err)
{
    pv all[2 * MAX_FIXED + MAX_AXES];
    char drawn[MAX_PERTURB][32];
    long long rep = 0;
    size_t n = point_values(s, idx, all, &rep);
    /* repeats: each point its own stream, seed + idx, so any rank draws
     * the same numbers for it */
    unsigned long seed = s->seed + (unsigned long)idx;
    if (s->repeats && s->nperturb && perturb_values(s, seed, all, n, drawn, err) != PL_OK)
        return err->code;
    pa->argc = 0;
    pa->used = 0;
    pa->argv[pa->argc++] = (char *)s->m->name;
    /* params: the file's names and values (fractions as given, a compound
     * option as the tuples it ran with), then what the fractions gave and
     * the options given by components only, the repeat and its seed */
    for (size_t i = 0; i < n; i++) {
        const char *name = all[i].name, *value = all[i].value;
        const pname *pn = all[i].pn;
        char opt[NAME_LEN + 2], deg[32];
        snprintf(opt, sizeof opt, "--%s", pn->base);
        if (pn->ncomp) {
            if (pn->comp >= 0)
                pl_jbuf_value(pj, name, value);
            else if (!put_compound(pa, pj, all, n, pn))
                goto full;
            continue;
        }
        pl_jbuf_value(pj, name, value);
        if (!strcmp(name, "prism") || !strcmp(name, "ramp"))
            continue;   /* recorded; the numbers they gave are the options */
        if (pn->kind == PL_OPTK_FLAG) {   /* yes: --hack; no: nothing */
            if (!strcmp(value, "yes") && !(pa->argv[pa->argc++] = arena_put(pa, opt, "")))
                goto full;
            continue;
        }
        /* the fractions of the simulate model become degrees for its N */
        int bf = !strcmp(name, "beta-frac"), lf = !strcmp(name, "lambda0-frac");
        if (bf || lf) {
            int fr = frac_degrees(all, n, name, value, deg);
            if (fr == -1)
                return pl_err_set(err, PL_EINVAL, "%s: %s needs N", s->path, name);
            if (fr == -2)
                return pl_err_set(err, PL_EINVAL, "%s: lambda0-frac needs beta-deg "
                                  "or beta-frac", s->path);
            snprintf(opt, sizeof opt, "--%s", bf ? "beta-deg" : "lambda0-deg");
            value = deg;
        }
        if (!(pa->argv[pa->argc] = arena_put(pa, opt, "")) ||
            !(pa->argv[pa->argc + 1] = arena_put(pa, "", value)))
            goto full;
        pa->argc += 2;
    }
    for (int i = 1; i + 1 < pa->argc; i++) {   /* what the fractions gave */
        const char *nm = pa->argv[i] + 2;
        if (strncmp(pa->argv[i], "--", 2))
            continue;
        if ((!strcmp(nm, "beta-deg") || !strcmp(nm, "lambda0-deg")) &&
            !find_value(all, n, nm))
            pl_jbuf_value(pj, nm, pa->argv[i + 1]);
    }
    for (size_t i = 0; i < n; i++) {   /* options given by components only */
        const pname *pn = all[i].pn;
        int first = 1, whole = 0;
        for (size_t j = 0; j < n; j++)
            if (!strcmp(all[j].pn->base, pn->base)) {
                whole |= all[j].pn->comp < 0;
                first &= j >= i;
            }
        if (pn->comp >= 0 && first && !whole && !put_compound(pa, pj, all, n, pn))
            goto full;
    }
    pa->argv[pa->argc] = NULL;
    if (s->repeats) {
        pl_jbuf_int(pj, "repeat", rep);
        pl_jbuf_int(pj, "seed", (long long)seed);
    }
    pl_jbuf_add(pj, "}");
    return PL_OK;
full:
    return pl_err_set(err, PL_EINVAL, "%s: point %lld: its parameters exceed %zu "
                      "characters", s->path, idx, sizeof pa->arena);
}


pl_status pl_sweep_compute(const pl_sweep_spec *s, long long idx,
                           pl_sweep_out *out, pl_err *err)
{
    if (idx < 0 || idx >= s->npoints)
        return pl_err_set(err, PL_EINVAL, "sweep '%s': point %lld is outside 0..%lld",
                          s->name, idx, s->npoints - 1);
    if (pl_sweep_spec_unresolved(s, NULL, NULL))
        return pl_err_set(err, PL_ESTATE, "sweep '%s': its prism and ramp have no "
                          "numbers yet (pl_sweep_text_resolve)", s->name);
    point_args pa;
    pl_jbuf pj, res;
    pl_jbuf_start(&pj, &out->params, &out->params_cap);
    pl_status st = build_point(s, idx, &pa, &pj, err);
    if (st != PL_OK)
        return st;
    out->ok = 1;
    out->series_n = 0;
    pl_jbuf_start(&res, &out->result, &out->result_cap);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pl_err perr = {0};
    s->m->run(s, pa.argc, pa.argv, out, &res, &perr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->cost_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    pl_jbuf_add(&res, "}");
    if (pj.oom || res.oom)
        return pl_err_set(err, PL_ENOMEM, "out of memory for point %lld", idx);
    return PL_OK;
}

void pl_sweep_out_free(pl_sweep_out *out)
{
    free(out->params);
    free(out->result);
    free(out->series);
    memset(out, 0, sizeof *out);
}

/* The points the axes and [repeat] make, and the axes' names as CSV. */
static pl_status count_points(pl_sweep_spec *s, const char *path, pl_err *err)
{
    s->npoints = s->repeats ? s->repeats : 1;
    size_t len = 0;
    s->axes_csv[0] = 0;
    for (size_t i = 0; i < s->naxes; i++) {
        if (!s->axes[i].vals.n)
            return pl_err_set(err, PL_EINVAL, "%s: [axis %s] has no values", path,
                              s->axes[i].name);
        if ((double)s->npoints * (double)s->axes[i].vals.n > 1e9)
            return pl_err_set(err, PL_EINVAL, "%s: more than 1e9 points", path);
        s->npoints *= (long long)s->axes[i].vals.n;
        len += (size_t)snprintf(s->axes_csv + len, sizeof s->axes_csv - len, "%s%s",
                                i ? "," : "", s->axes[i].name);
    }
    if (s->repeats)
        snprintf(s->axes_csv + len, sizeof s->axes_csv - len, "%srepeat", len ? "," : "");
    if (s->nperturb && !s->repeats)
        return pl_err_set(err, PL_EINVAL, "%s: [repeat] perturb needs count", path);
    return PL_OK;
}

/* [sweep] series = ...: each one the model stores. */
static pl_status parse_series(pl_sweep_spec *s, const char *path, pl_err *err)
{
    size_t len = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", s->series_text);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        t = trim(t);
        int k = pl_sweep_find_name(s->m->series, t);
        if (k < 0 || s->nseries == MAX_SERIES)
            return pl_err_set(err, PL_EINVAL, "%s:%d: series '%s': the %s model stores %s",
                              path, s->series_line, t, s->m->name, s->m->series);
        s->series[s->nseries++] = k;
        len += (size_t)snprintf(s->series_csv + len, sizeof s->series_csv - len, "%s%s",
                                len ? "," : "", t);
    }
    return PL_OK;
}

/* Point 0 through the command's own option table: a misspelt value is
 * the file's error, not a thousand failed points. */
static pl_status check_point_zero(const pl_sweep_spec *s, const char *path, pl_err *err)
{
    point_args *pa = malloc(sizeof *pa);
    char *pbuf = NULL;
    size_t pcap = 0;
    pl_jbuf pj;
    pl_jbuf_start(&pj, &pbuf, &pcap);
    pl_status st = pa ? build_point(s, 0, pa, &pj, err)
                      : pl_err_set(err, PL_ENOMEM, "out of memory for a sweep file");
    free(pbuf);
    if (st == PL_OK && s->m->check(pa->argc, pa->argv, err) != PL_OK)
        st = pl_err_prefix(err, "%s: ", path);
    free(pa);
    return st;
}

/* Everything read from the file that must agree, in the order a person
 * fixes them. */
static pl_status check_spec(pl_sweep_spec *s, const char *text, const char *path,
                            pl_err *err)
{
    if (!s->name[0] || !s->m)
        return pl_err_set(err, PL_EINVAL, "%s: [sweep] needs name and model", path);
    pl_status st = count_points(s, path, err);
    if (st == PL_OK)
        st = parse_series(s, path, err);
    if (st != PL_OK)
        return st;
    sha256_hex(text, s->sha256);
    if ((st = check_components(s, err)) != PL_OK)
        return st;
    if (!s->prism[0] != !s->ramp[0])
        return pl_err_set(err, PL_EINVAL, "%s: --prism and --ramp go together", path);
    if (s->cat_section && !s->prism[0])
        return pl_err_set(err, PL_EINVAL, "%s: [catalogue] holds the numbers of the prism "
                          "and ramp that [fixed] names; this file names none", path);
    if (pl_sweep_spec_unresolved(s, NULL, NULL))
        return PL_OK;   /* checked when its numbers are in */
    return check_point_zero(s, path, err);
}

pl_status pl_sweep_spec_parse(pl_sweep_spec **out, const char *text,
                              const char *path, pl_err *err)
{
    *out = NULL;
    pl_sweep_spec *s = calloc(1, sizeof *s);
    if (!s || !(s->text = strdup(text))) {
        free(s);
        return pl_err_set(err, PL_ENOMEM, "out of memory for a sweep file");
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    s->series_rate = 100;
    s->next = s->text;
    int line = ini_parse_stream(read_line, s, handler, s);
    pl_status st = line != 0
        ? pl_err_set(err, s->msg[0] ? PL_EINVAL : PL_EFORMAT, "%s:%d: %s", path, line,
                     s->msg[0] ? s->msg : "not an INI line (key = value or [section])")
        : check_spec(s, text, path, err);
    if (st != PL_OK) {
        pl_sweep_spec_destroy(s);
        return st;
    }
    *out = s;
    return PL_OK;
}

void pl_sweep_spec_destroy(pl_sweep_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->naxes; i++)
        sl_free(&s->axes[i].vals);
    for (size_t i = 0; i < s->nfixed; i++)
        free(s->fixed[i].value);
    for (size_t i = 0; i < s->ncat; i++)
        free(s->cat[i].value);
    free(s->text);
    free(s);
}

const char *pl_sweep_spec_name(const pl_sweep_spec *s) { return s->name; }
const char *pl_sweep_spec_model(const pl_sweep_spec *s) { return s->m->name; }
const char *pl_sweep_spec_sha256(const pl_sweep_spec *s) { return s->sha256; }
const char *pl_sweep_spec_text(const pl_sweep_spec *s) { return s->text; }
long long pl_sweep_spec_points(const pl_sweep_spec *s) { return s->npoints; }
const char *pl_sweep_spec_axes(const pl_sweep_spec *s) { return s->axes_csv; }
const char *pl_sweep_spec_columns(const pl_sweep_spec *s) { return s->m->columns; }
const char *pl_sweep_spec_series(const pl_sweep_spec *s) { return s->series_csv; }


int pl_sweep_spec_unresolved(const pl_sweep_spec *s, const char **prism, const char **ramp)
{
    if (prism)
        *prism = s->prism;
    if (ramp)
        *ramp = s->ramp;
    return s->prism[0] && !s->cat_section;
}

void pl_sweep_number_text(char out[32], double v) { pl_jbuf_number_text(out, v); }
