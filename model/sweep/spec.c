/* model/sweep/spec.c - the sweep file, its points, one point's run.  See
 * spec.h and docs/sweep.md. */
#include "model/sweep/spec.h"

#include "core/cli.h"
#include "model/prism/options.h"
#include "model/prism/prism.h"
#include "model/seeds/dimer.h"

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

#define MAX_FIXED 48
#define MAX_AXES 12
#define MAX_PERTURB 8
#define MAX_SERIES 8
#define NAME_LEN 32
#define VALUE_LEN 64
#define MAX_AXIS_VALUES 1000000
#define SWEEP_NAME_CAP 64   /* as the store's names (db/store.h PL_NAME_MAX + 1) */

typedef struct {
    char name[NAME_LEN];
    char value[VALUE_LEN];
} kv;

typedef struct {
    char name[NAME_LEN];
    size_t n;
    char (*vals)[VALUE_LEN];
} axis;

/* --- growing text for the JSON objects ---------------------------------- */

typedef struct {
    char **buf;
    size_t *cap, len;
    int oom;
} jbuf;

static void jb_add(jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_add(jbuf *j, const char *fmt, ...)
{
    if (j->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = *j->cap - j->len;
        int n = vsnprintf(*j->buf ? *j->buf + j->len : NULL, *j->buf ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            j->oom = 1;
            return;
        }
        if (*j->buf && (size_t)n < room) {
            j->len += (size_t)n;
            return;
        }
        size_t want = (*j->cap ? *j->cap * 2 : 256) + (size_t)n + 1;
        char *nb = realloc(*j->buf, want);
        if (!nb) {
            j->oom = 1;
            return;
        }
        *j->buf = nb;
        *j->cap = want;
    }
}

static void jb_start(jbuf *j, char **buf, size_t *cap)
{
    j->buf = buf;
    j->cap = cap;
    j->len = 0;
    j->oom = 0;
    jb_add(j, "{");
}

static void jb_key(jbuf *j, const char *key)
{
    jb_add(j, "%s\"%s\":", j->len > 1 ? "," : "", key);
}

/* Shortest text that reads back as the same double; null for NaN and
 * infinities (JSON has neither). */
static void fmt_double(char out[32], double v)
{
    if (!isfinite(v)) {
        snprintf(out, 32, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

static void jb_num(jbuf *j, const char *key, double v)
{
    char t[32];
    fmt_double(t, v);
    jb_key(j, key);
    jb_add(j, "%s", t);
}

static void jb_int(jbuf *j, const char *key, long long v)
{
    jb_key(j, key);
    jb_add(j, "%lld", v);
}

static void jb_str(jbuf *j, const char *key, const char *s)
{
    jb_key(j, key);
    jb_add(j, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            jb_add(j, "\\%c", c);
        else if (c < 0x20)
            jb_add(j, "\\u%04x", c);
        else
            jb_add(j, "%c", c);
    }
    jb_add(j, "\"");
}

/* A value as given: a JSON number when it reads whole as one. */
static void jb_value(jbuf *j, const char *key, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end != text && !*end && !errno && isfinite(v))
        jb_num(j, key, v);
    else
        jb_str(j, key, text);
}

/* --- the models ---------------------------------------------------------- */

typedef struct model model;
typedef void (*run_fn)(const pl_sweep_spec *s, int argc, char **argv,
                       pl_sweep_out *out, jbuf *res, pl_err *err);

struct model {
    const char *name;
    const char *columns;                  /* the result's names */
    const char *series;                   /* the series it can store */
    int (*has_option)(const char *name);
    /* the option parse and the checks every point shares (not the ranges
     * of one point's numbers, which the run reports as its result) */
    pl_status (*check)(int argc, char **argv, pl_err *err);
    run_fn run;
};

struct pl_sweep_spec {
    char *text;
    char path[256];
    char name[SWEEP_NAME_CAP];
    const model *m;
    kv fixed[MAX_FIXED];
    size_t nfixed;
    axis axes[MAX_AXES];
    size_t naxes;
    long repeats;                         /* 0: no [repeat] */
    unsigned long seed;
    kv perturb[MAX_PERTURB];              /* name, width as text */
    double perturb_w[MAX_PERTURB];
    size_t nperturb;
    int series[MAX_SERIES];               /* indices into the model's series */
    size_t nseries;
    double series_rate;
    long long npoints;
    char sha256[65];
    char axes_csv[1024], series_csv[256];
    /* parse state */
    enum { SEC_NONE, SEC_SWEEP, SEC_FIXED, SEC_AXIS, SEC_REPEAT } sec;
    char msg[256];
    char series_text[256];
};

static int find_name(const char *list, const char *name)
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

static int opt_table_has(const pl_opt *o, const char *name)
{
    for (; o->kind != PL_OPTK_END; o++)
        if (o->name && !strcmp(o->name, name))
            return 1;
    return 0;
}

static void set_error(pl_sweep_out *out, jbuf *res, const char *msg)
{
    out->ok = 0;
    jb_start(res, &out->result, &out->result_cap);
    jb_str(res, "error", msg);
}

/* simulate ------------------------------------------------------------------ */

static const char sim_series[] = "t,omega,theta,Lp,x,vp1,vp2";

static int sim_has_option(const char *name)
{
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {PL_OPT_SIMULATE(&so), PL_OPT_END()};
    return opt_table_has(opts, name) || !strcmp(name, "beta-frac") ||
           !strcmp(name, "lambda0-frac");
}

/* The run of the endless-ramp verdict from the run's own last impacts
 * (docs/sweep.md, the phase map): the settled pre-impact speed from
 * omega-_{k+1}^2 = r^2 omega-_k^2 + Delta, and whether its post-impact
 * energy clears the next top. */
static void sim_settle(const pl_model_params *p, double r,
                       const pl_model_result *res, double *omega_last,
                       double *omega_settle, int *rolls)
{
    size_t k = res->n_impacts < res->cap_impacts ? res->n_impacts : res->cap_impacts;
    *omega_last = k ? res->impacts[k - 1].omega_minus : NAN;
    *omega_settle = NAN;
    *rolls = -1;
    if (res->end == PL_END_STOPPED) {
        *rolls = 0;
        return;
    }
    if (res->end == PL_END_SLIP || res->end == PL_END_DETACHED || k < 2 || !(r < 1))
        return;
    double w1 = res->impacts[k - 2].omega_minus, w2 = res->impacts[k - 1].omega_minus;
    double delta = w2 * w2 - r * r * w1 * w1;
    if (!(delta > 0))
        return;
    *omega_settle = sqrt(delta / (1 - r * r));
    double alpha = M_PI / p->N, wp = r * *omega_settle;
    double e_after = pl_contact_energy(p->N, p->a0, p->mass, p->beta, -alpha, wp);
    double e_top = pl_contact_energy(p->N, p->a0, p->mass, p->beta, -p->beta, 0);
    *rolls = e_after > e_top;
}

static pl_status sim_check(int argc, char **argv, pl_err *err)
{
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {PL_OPT_SIMULATE(&so), PL_OPT_END()};
    int nargs = 0, help = 0;
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK ||
        pl_model_options_check(&so.mo, err) != PL_OK)
        return err->code;
    if (isnan(so.duration))
        return pl_err_set(err, PL_EINVAL, "missing option --duration");
    return PL_OK;
}

static void sim_run(const pl_sweep_spec *s, int argc, char **argv,
                    pl_sweep_out *out, jbuf *res, pl_err *err)
{
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {PL_OPT_SIMULATE(&so), PL_OPT_END()};
    int nargs = 0, help = 0;
    pl_model_params p;
    pl_model_params_default(&p);
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK ||
        pl_simulate_options_params(&so, 0, &p, err) != PL_OK) {
        set_error(out, res, err->msg);
        return;
    }
    p.ramp_length = isnan(so.mo.ramp_length) ? 0 : so.mo.ramp_length;
    size_t ni = (size_t)(p.duration * 1000) + 16;   /* impacts are >= 1 ms apart */
    size_t ns = s->nseries ? (size_t)floor(p.duration * p.rate + 1e-9) + 1 : 0;
    pl_model_impact *im = malloc(ni * sizeof *im);
    double *buf = ns ? malloc(ns * s->nseries * sizeof *buf) : NULL;
    pl_model *m = NULL;
    pl_model_result r = {0};
    if (!im || (ns && !buf)) {
        set_error(out, res, "out of memory");
        goto done;
    }
    if (pl_model_create(&m, &p, err) != PL_OK) {
        set_error(out, res, err->msg);
        goto done;
    }
    double **dst[] = {&r.t, &r.omega, &r.theta, &r.lp, &r.x, &r.vp1, &r.vp2};
    for (size_t i = 0; i < s->nseries; i++)
        *dst[s->series[i]] = buf + i * ns;
    r.cap_samples = ns;
    r.impacts = im;
    r.cap_impacts = ni;
    if (pl_model_run(m, &r, err) != PL_OK) {
        set_error(out, res, err->msg);
        goto done;
    }
    double ratio = pl_model_impact_ratio(m), wl, ws;
    int rolls;
    sim_settle(&p, ratio, &r, &wl, &ws, &rolls);
    jb_str(res, "law", p.law == PL_LAW_LINE ? "line" : "plastic");
    jb_num(res, "ratio", ratio);
    jb_num(res, "t_end", r.t_end);
    jb_num(res, "x_end", r.x_end);
    jb_num(res, "omega_end", r.omega_end);
    jb_num(res, "Lp_end", r.lp_end);
    jb_int(res, "impacts", (long long)r.n_impacts);
    jb_str(res, "status", pl_model_end_name(r.end));
    jb_num(res, "omega_last", wl);
    jb_num(res, "omega_settle", ws);
    jb_key(res, "rolls");
    jb_add(res, rolls < 0 ? "null" : rolls ? "1" : "0");
    /* series: every step-th sample at the file's series rate */
    if (s->nseries) {
        size_t step = (size_t)fmax(1, floor(p.rate / s->series_rate + 0.5));
        size_t n = (r.n_samples + step - 1) / step, total = n * s->nseries;
        if (total > out->series_cap) {
            double *nb = realloc(out->series, total * sizeof *nb);
            if (!nb) {
                set_error(out, res, "out of memory for the series");
                goto done;
            }
            out->series = nb;
            out->series_cap = total;
        }
        for (size_t i = 0; i < s->nseries; i++)
            for (size_t k = 0; k < n; k++)
                out->series[i * n + k] = buf[i * ns + k * step];
        out->series_n = total;
    }
done:
    pl_model_destroy(m);
    free(im);
    free(buf);
}

/* dimer --------------------------------------------------------------------- */

static int dimer_has_option(const char *name)
{
    pl_dimer_params p;
    double th = 0;
    pl_opt opts[] = {PL_OPT_DIMER_PARAMS(&p, &th), PL_OPT_END()};
    return opt_table_has(opts, name);
}

static pl_status dimer_check(int argc, char **argv, pl_err *err)
{
    pl_dimer_params p;
    pl_dimer_params_default(&p);
    double th = 0;
    pl_opt opts[] = {PL_OPT_DIMER_PARAMS(&p, &th), PL_OPT_END()};
    int nargs = 0, help = 0;
    return pl_opt_parse(opts, argc, argv, &nargs, &help, err);
}

static void dimer_run(const pl_sweep_spec *s, int argc, char **argv,
                      pl_sweep_out *out, jbuf *res, pl_err *err)
{
    (void)s;
    pl_dimer_params p;
    pl_dimer_params_default(&p);
    double th = p.theta0 * 180 / M_PI;
    pl_opt opts[] = {PL_OPT_DIMER_PARAMS(&p, &th), PL_OPT_END()};
    int nargs = 0, help = 0;
    pl_dimer_result r;
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK) {
        set_error(out, res, err->msg);
        return;
    }
    p.theta0 = th * M_PI / 180;
    if (pl_dimer_run(&p, NULL, 0, &r, err) != PL_OK) {
        set_error(out, res, err->msg);
        return;
    }
    jb_int(res, "impacts", (long long)r.impacts);
    jb_int(res, "doubles", (long long)r.doubles);
    jb_int(res, "sticks", (long long)r.stick_events);
    jb_int(res, "hits1", (long long)r.hits[0]);
    jb_int(res, "hits2", (long long)r.hits[1]);
    jb_num(res, "hmax1_m", r.hmax[0]);
    jb_num(res, "hmax2_m", r.hmax[1]);
    jb_num(res, "energy", r.energy);
    jb_num(res, "drift", r.drift);
    jb_str(res, "mode", pl_dimer_mode_name(r.mode));
    jb_num(res, "x1_end", r.x1_end);
}

static const model models[] = {
    {"simulate", "law,ratio,t_end,x_end,omega_end,Lp_end,impacts,status,"
                 "omega_last,omega_settle,rolls", sim_series, sim_has_option, sim_check, sim_run},
    {"dimer", "impacts,doubles,sticks,hits1,hits2,hmax1_m,hmax2_m,energy,drift,"
              "mode,x1_end", "", dimer_has_option, dimer_check, dimer_run},
};

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

/* "a, b, c" into a list of at most max items; returns the count or -1. */
static long split_list(pl_sweep_spec *s, const char *value, char (**out)[VALUE_LEN])
{
    char *copy = strdup(value);
    long n = 0, cap = 8;
    char (*v)[VALUE_LEN] = malloc((size_t)cap * VALUE_LEN);
    if (!copy || !v) {
        free(copy);
        free(v);
        fail(s, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        t = trim(t);
        if (!*t || strlen(t) >= VALUE_LEN) {
            fail(s, "list items of 1 to %d characters, got '%s'", VALUE_LEN - 1, t);
            free(copy);
            free(v);
            return -1;
        }
        if (n == cap) {
            cap *= 2;
            char (*nv)[VALUE_LEN] = realloc(v, (size_t)cap * VALUE_LEN);
            if (!nv) {
                fail(s, "out of memory");
                free(copy);
                free(v);
                return -1;
            }
            v = nv;
        }
        memcpy(v[n++], t, strlen(t) + 1);
    }
    free(copy);
    *out = v;
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
    char (*it)[VALUE_LEN] = NULL;
    long n = split_list(s, value, &it);
    if (n < 0)
        return 0;
    double from, to, cnt;
    int ok = n == 3 && parse_num(s, key, it[0], &from) && parse_num(s, key, it[1], &to) &&
             parse_num(s, key, it[2], &cnt);
    free(it);
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
    a->vals = malloc(k * VALUE_LEN);
    if (!a->vals)
        return fail(s, "out of memory");
    for (size_t i = 0; i < k; i++) {
        double f = k > 1 ? (double)i / (double)(k - 1) : 0, v;
        if (i == 0)
            v = from;
        else if (i == k - 1)
            v = to;
        else
            v = lg ? exp(log(from) + (log(to) - log(from)) * f) : from + (to - from) * f;
        fmt_double(a->vals[i], v);
    }
    a->n = k;
    return 1;
}

static int known_name(pl_sweep_spec *s, const char *name)
{
    if (!s->m)
        return fail(s, "[sweep] model must come before the parameters");
    if (!s->m->has_option(name))
        return fail(s, "'%s' is not a parameter of prismlab %s", name, s->m->name);
    if (!strcmp(name, "prism") || !strcmp(name, "ramp"))
        return fail(s, "'%s': catalogue names are not taken in a sweep; give the "
                    "numbers", name);
    for (size_t i = 0; i < s->nfixed; i++)
        if (!strcmp(s->fixed[i].name, name))
            return fail(s, "'%s' is given twice", name);
    for (size_t i = 0; i < s->naxes; i++)
        if (!strcmp(s->axes[i].name, name))
            return fail(s, "'%s' is given twice", name);
    return 1;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
    pl_sweep_spec *s = user;
    if (s->msg[0])
        return 0;
    if (!strcmp(section, "sweep")) {
        if (!strcmp(name, "name")) {
            if (!*value || strlen(value) > SWEEP_NAME_CAP - 1)
                return fail(s, "name: 1 to %d characters, got '%s'", SWEEP_NAME_CAP - 1, value);
            memcpy(s->name, value, strlen(value) + 1);
        } else if (!strcmp(name, "model")) {
            for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
                if (!strcmp(models[i].name, value))
                    s->m = &models[i];
            if (!s->m)
                return fail(s, "model: expected simulate or dimer, got '%s'", value);
        } else if (!strcmp(name, "series")) {
            if (strlen(value) >= sizeof s->series_text)
                return fail(s, "series: too long");
            memcpy(s->series_text, value, strlen(value) + 1);
        } else if (!strcmp(name, "series-rate")) {
            if (!parse_num(s, name, value, &s->series_rate) || !(s->series_rate > 0))
                return fail(s, "series-rate: expected a rate > 0 Hz, got '%s'", value);
        } else {
            return fail(s, "[sweep] takes name, model, series, series-rate; got '%s'", name);
        }
        return 1;
    }
    if (!strcmp(section, "fixed")) {
        if (s->nfixed == MAX_FIXED)
            return fail(s, "more than %d fixed parameters", MAX_FIXED);
        if (!known_name(s, name))
            return 0;
        if (!*value || strlen(value) >= VALUE_LEN)
            return fail(s, "%s: a value of 1 to %d characters", name, VALUE_LEN - 1);
        kv *f = &s->fixed[s->nfixed];
        if (!copy_name(s, f->name, name))
            return 0;
        memcpy(f->value, value, strlen(value) + 1);
        s->nfixed++;
        return 1;
    }
    if (!strncmp(section, "axis ", 5)) {
        char buf[NAME_LEN + 8];
        snprintf(buf, sizeof buf, "%s", section + 5);
        const char *an = trim(buf);
        axis *a = s->naxes ? &s->axes[s->naxes - 1] : NULL;
        if (!a || strcmp(a->name, an)) {   /* the section's first key */
            if (s->naxes == MAX_AXES)
                return fail(s, "more than %d axes", MAX_AXES);
            if (!known_name(s, an))
                return 0;
            a = &s->axes[s->naxes];
            memset(a, 0, sizeof *a);
            if (!copy_name(s, a->name, an))
                return 0;
            s->naxes++;
        } else if (a->n) {
            return fail(s, "[axis %s] takes one of values, linear, log", an);
        }
        if (!strcmp(name, "values")) {
            long n = split_list(s, value, &a->vals);
            if (n <= 0)
                return fail(s, "values: a comma-separated list");
            a->n = (size_t)n;
            return 1;
        }
        if (!strcmp(name, "linear") || !strcmp(name, "log"))
            return parse_range(s, a, name, value);
        return fail(s, "[axis %s] takes values, linear or log; got '%s'", an, name);
    }
    if (!strcmp(section, "repeat")) {
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
            char (*it)[VALUE_LEN] = NULL;
            long n = split_list(s, value, &it);
            for (long i = 0; i < n; i++) {
                char pn[VALUE_LEN], pw[VALUE_LEN];
                if (s->nperturb == MAX_PERTURB ||
                    sscanf(it[i], "%63s %63s", pn, pw) != 2 ||
                    !copy_name(s, s->perturb[s->nperturb].name, pn) ||
                    !parse_num(s, "perturb", pw, &s->perturb_w[s->nperturb]) ||
                    !(s->perturb_w[s->nperturb] > 0)) {
                    free(it);
                    return fail(s, "perturb: NAME WIDTH, ... (at most %d, widths > 0), "
                                "got '%s'", MAX_PERTURB, value);
                }
                if (!s->m || !s->m->has_option(pn)) {
                    free(it);
                    return fail(s, "perturb: '%s' is not a parameter of the model", pn);
                }
                s->nperturb++;
            }
            free(it);
            if (n <= 0)
                return 0;
        } else {
            return fail(s, "[repeat] takes count, seed, perturb; got '%s'", name);
        }
        return 1;
    }
    return fail(s, "unknown section [%s] (sweep, fixed, axis NAME, repeat)", section);
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

/* The point's parameters as "--name value" pairs (argv[0] the model) and
 * its params JSON; vals holds the texts made here. */
typedef struct {
    int argc;
    char *argv[2 * (MAX_FIXED + MAX_AXES) + 8];
    char vals[MAX_FIXED + MAX_AXES + 4][VALUE_LEN];
    char names[MAX_FIXED + MAX_AXES + 4][NAME_LEN + 2];
} point_args;

static const char *find_value(const kv *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i].name, name))
            return list[i].value;
    return NULL;
}

static pl_status build_point(const pl_sweep_spec *s, long long idx, point_args *pa,
                             jbuf *pj, pl_err *err)
{
    kv all[MAX_FIXED + MAX_AXES + 2];
    size_t n = 0;
    for (size_t i = 0; i < s->nfixed; i++)
        all[n++] = s->fixed[i];
    long long rest = idx, rep = 0;
    if (s->repeats) {
        rep = rest % s->repeats;
        rest /= s->repeats;
    }
    size_t pos[MAX_AXES];
    for (size_t i = s->naxes; i-- > 0;) {
        pos[i] = (size_t)(rest % (long long)s->axes[i].n);
        rest /= (long long)s->axes[i].n;
    }
    for (size_t i = 0; i < s->naxes; i++) {
        snprintf(all[n].name, NAME_LEN, "%s", s->axes[i].name);
        snprintf(all[n].value, VALUE_LEN, "%s", s->axes[i].vals[pos[i]]);
        n++;
    }
    /* repeats: each point its own stream, seed + idx, so any rank draws
     * the same numbers for it */
    unsigned long seed = s->seed + (unsigned long)idx;
    if (s->repeats && s->nperturb) {
        gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
        if (!g)
            return pl_err_set(err, PL_ENOMEM, "out of memory for a random generator");
        gsl_rng_set(g, seed);
        for (size_t k = 0; k < s->nperturb; k++) {
            double u = 2 * gsl_rng_uniform(g) - 1;
            size_t j = 0;
            while (j < n && strcmp(all[j].name, s->perturb[k].name))
                j++;
            if (j == n) {
                gsl_rng_free(g);
                return pl_err_set(err, PL_EINVAL, "%s: perturb '%s': the parameter has "
                                  "no value to perturb", s->path, s->perturb[k].name);
            }
            char *end;
            double v = strtod(all[j].value, &end);
            if (*end) {
                gsl_rng_free(g);
                return pl_err_set(err, PL_EINVAL, "%s: perturb '%s': '%s' is no number",
                                  s->path, all[j].name, all[j].value);
            }
            fmt_double(all[j].value, v + u * s->perturb_w[k]);
        }
        gsl_rng_free(g);
    }
    (void)rep;
    pa->argc = 0;
    pa->argv[pa->argc++] = (char *)s->m->name;
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = all[i].name, *value = all[i].value;
        /* the fractions of the simulate model become degrees for its N */
        int bf = !strcmp(name, "beta-frac"), lf = !strcmp(name, "lambda0-frac");
        if (bf || lf) {
            const char *nt = find_value(all, n, "N");
            double N = nt ? strtod(nt, NULL) : NAN, f = strtod(value, NULL), deg;
            if (!(N >= 3))
                return pl_err_set(err, PL_EINVAL, "%s: %s needs N", s->path, name);
            if (bf) {
                deg = f * 180 / N;
            } else {
                const char *bt = find_value(all, n, "beta-deg");
                const char *bft = find_value(all, n, "beta-frac");
                double b = bt ? strtod(bt, NULL) : bft ? strtod(bft, NULL) * 180 / N : NAN;
                if (isnan(b))
                    return pl_err_set(err, PL_EINVAL, "%s: lambda0-frac needs beta-deg "
                                      "or beta-frac", s->path);
                deg = f * (180 / N + b);
            }
            fmt_double(pa->vals[nv], deg);
            snprintf(pa->names[nv], sizeof pa->names[nv], "--%s", bf ? "beta-deg" : "lambda0-deg");
        } else {
            snprintf(pa->vals[nv], VALUE_LEN, "%s", value);
            snprintf(pa->names[nv], sizeof pa->names[nv], "--%.31s", name);
        }
        pa->argv[pa->argc++] = pa->names[nv];
        pa->argv[pa->argc++] = pa->vals[nv];
        nv++;
    }
    pa->argv[pa->argc] = NULL;
    /* params: the file's names and values (fractions as given), then what
     * the fractions gave, the repeat and its seed */
    for (size_t i = 0; i < n; i++)
        jb_value(pj, all[i].name, all[i].value);
    for (size_t i = 0; i < nv; i++) {
        const char *nm = pa->names[i] + 2;
        if (!find_value(all, n, nm))
            jb_value(pj, nm, pa->vals[i]);
    }
    if (s->repeats) {
        jb_int(pj, "repeat", rep);
        jb_int(pj, "seed", (long long)seed);
    }
    jb_add(pj, "}");
    return PL_OK;
}

pl_status pl_sweep_compute(const pl_sweep_spec *s, long long idx,
                           pl_sweep_out *out, pl_err *err)
{
    if (idx < 0 || idx >= s->npoints)
        return pl_err_set(err, PL_EINVAL, "sweep '%s': point %lld is outside 0..%lld",
                          s->name, idx, s->npoints - 1);
    point_args pa;
    jbuf pj, res;
    jb_start(&pj, &out->params, &out->params_cap);
    pl_status st = build_point(s, idx, &pa, &pj, err);
    if (st != PL_OK)
        return st;
    out->ok = 1;
    out->series_n = 0;
    jb_start(&res, &out->result, &out->result_cap);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pl_err perr = {0};
    s->m->run(s, pa.argc, pa.argv, out, &res, &perr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->cost_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    jb_add(&res, "}");
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
    int line = ini_parse_string(text, handler, s);
    pl_status st = PL_OK;
    if (line != 0) {
        st = pl_err_set(err, s->msg[0] ? PL_EINVAL : PL_EFORMAT, "%s:%d: %s", path, line,
                        s->msg[0] ? s->msg : "not an INI line (key = value or [section])");
        goto out;
    }
    if (!s->name[0] || !s->m) {
        st = pl_err_set(err, PL_EINVAL, "%s: [sweep] needs name and model", path);
        goto out;
    }
    s->npoints = s->repeats ? s->repeats : 1;
    size_t len = 0;
    s->axes_csv[0] = 0;
    for (size_t i = 0; i < s->naxes; i++) {
        if (!s->axes[i].n) {
            st = pl_err_set(err, PL_EINVAL, "%s: [axis %s] has no values", path,
                            s->axes[i].name);
            goto out;
        }
        if ((double)s->npoints * (double)s->axes[i].n > 1e9) {
            st = pl_err_set(err, PL_EINVAL, "%s: more than 1e9 points", path);
            goto out;
        }
        s->npoints *= (long long)s->axes[i].n;
        len += (size_t)snprintf(s->axes_csv + len, sizeof s->axes_csv - len, "%s%s",
                                i ? "," : "", s->axes[i].name);
    }
    if (s->repeats)
        snprintf(s->axes_csv + len, sizeof s->axes_csv - len, "%srepeat", len ? "," : "");
    if (s->nperturb && !s->repeats) {
        st = pl_err_set(err, PL_EINVAL, "%s: [repeat] perturb needs count", path);
        goto out;
    }
    /* series */
    len = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", s->series_text);
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        t = trim(t);
        int k = find_name(s->m->series, t);
        if (k < 0 || s->nseries == MAX_SERIES) {
            st = pl_err_set(err, PL_EINVAL, "%s: series '%s': the %s model stores %s", path,
                            t, s->m->name, s->m->series[0] ? s->m->series : "no series");
            goto out;
        }
        s->series[s->nseries++] = k;
        len += (size_t)snprintf(s->series_csv + len, sizeof s->series_csv - len, "%s%s",
                                len ? "," : "", t);
    }
    sha256_hex(text, s->sha256);
    /* point 0 through the command's own option table: a misspelt value
     * is the file's error, not a thousand failed points */
    {
        point_args pa;
        char *pbuf = NULL;
        size_t pcap = 0;
        jbuf pj;
        jb_start(&pj, &pbuf, &pcap);
        st = build_point(s, 0, &pa, &pj, err);
        free(pbuf);
        if (st == PL_OK && s->m->check(pa.argc, pa.argv, err) != PL_OK)
            st = pl_err_prefix(err, "%s: ", path);
        if (st != PL_OK)
            goto out;
    }
out:
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
        free(s->axes[i].vals);
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
