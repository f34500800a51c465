/* core/cli.c - option parsing and exit-status helpers for the commands. */
#include "core/cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pl_cli_exit_code(pl_status code)
{
    if (code == PL_OK)
        return PL_EXIT_OK;
    return code == PL_EINVAL ? PL_EXIT_USAGE : PL_EXIT_DATA;
}

int pl_cli_fail(const char *cmd, const pl_err *err)
{
    fprintf(stderr, "prismlab %s: %s\n", cmd,
            err->msg[0] ? err->msg : pl_strerror(err->code));
    return pl_cli_exit_code(err->code);
}

int pl_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "prismlab %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'prismlab %s --help')\n", cmd);
    return PL_EXIT_USAGE;
}

const char *pl_cli_db_path(const char *option_value)
{
    const char *env;
    if (option_value && *option_value)
        return option_value;
    env = getenv("PRISMLAB_DB");
    if (env && *env)
        return env;
    return "./prismlab.db";
}

pl_status pl_parse_double(const char *name, const char *text, double lo,
                          double hi, double *out, pl_err *err)
{
    char *end;
    double v;

    if (!text || !*text)
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected a number, got nothing", name);
    errno = 0;
    v = strtod(text, &end);
    /* strtod's ERANGE also flags an underflow (1e-320 is a number, the
     * range decides); an overflow (1e999) is +-inf and fails the range
     * below; "inf" and "nan" are no measurements. */
    if (end == text || *end || (!isfinite(v) && errno != ERANGE))
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected a number, got '%s'", name,
                          text);
    if (!(v >= lo && v <= hi))
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected a value in [%g, %g], got %s",
                          name, lo, hi, text);
    *out = v;
    return PL_OK;
}

pl_status pl_parse_long(const char *name, const char *text, long lo, long hi,
                        long *out, pl_err *err)
{
    char *end;
    long v;

    if (!text || !*text)
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected an integer, got nothing",
                          name);
    errno = 0;
    v = strtol(text, &end, 10);
    if (*end || errno == ERANGE)
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected an integer, got '%s'", name,
                          text);
    if (v < lo || v > hi)
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected an integer in [%ld, %ld], "
                          "got %ld", name, lo, hi, v);
    *out = v;
    return PL_OK;
}

pl_status pl_parse_pair(const char *name, const char *text, double *a,
                        double *b, pl_err *err)
{
    char buf[128];
    char *comma;

    if (!text || strlen(text) >= sizeof buf || !(comma = strchr(text, ',')))
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected two numbers 'A,B', got '%s'",
                          name, text ? text : "");
    memcpy(buf, text, strlen(text) + 1);
    buf[comma - text] = '\0';
    if (pl_parse_double(name, buf, -HUGE_VAL, HUGE_VAL, a, err) != PL_OK ||
        pl_parse_double(name, buf + (comma - text) + 1, -HUGE_VAL, HUGE_VAL,
                        b, err) != PL_OK)
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected two numbers 'A,B', got '%s'",
                          name, text);
    return PL_OK;
}

FILE *pl_cli_result_stream(const char *a, const char *b, const char *c)
{
    const char *paths[] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (paths[i] && !strcmp(paths[i], "-"))
            return stderr;
    return stdout;
}

int pl_cli_isatty(FILE *stream)
{
    return isatty(fileno(stream));
}

void pl_cli_on_stop(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void pl_cli_progress_clear(void)
{
    if (pl_cli_isatty(stderr)) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

/* "\rLABEL [#####     ]  42%" into the stream, without a newline. */
static void draw_bar(FILE *f, const char *label, unsigned long long done,
                     unsigned long long total)
{
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    unsigned fill = (unsigned)(done >= total ? WIDTH : done * WIDTH / total);
    memset(bar, '#', fill);
    memset(bar + fill, ' ', WIDTH - fill);
    bar[WIDTH] = '\0';
    fprintf(f, "\r%s [%s] %3u%%", label, bar,
            (unsigned)(done >= total ? 100 : done * 100 / total));
}

void pl_cli_progress(const char *label, unsigned long long done,
                     unsigned long long total)
{
    if (!pl_cli_isatty(stderr) || total == 0)
        return;
    draw_bar(stderr, label, done, total);
    if (done >= total)
        fputc('\n', stderr);
    fflush(stderr);
}

static double mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A duration as 12s, 3m05s or 1h02m. */
static void duration_text(char *buf, size_t size, double s)
{
    long long r = (long long)(s + 0.5);
    if (r < 60)
        snprintf(buf, size, "%llds", r);
    else if (r < 3600)
        snprintf(buf, size, "%lldm%02llds", r / 60, r % 60);
    else
        snprintf(buf, size, "%lldh%02lldm", r / 3600, r % 3600 / 60);
}

void pl_cli_meter_text(char *buf, size_t size, const char *unit,
                       unsigned long long done, unsigned long long total,
                       double elapsed)
{
    char left[32];
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    if (done >= total) {
        duration_text(left, sizeof left, elapsed);
        snprintf(buf, size, "%llu/%llu %s  %.1f %s/s  in %s", done, total, unit, rate,
                 unit, left);
        return;
    }
    /* a rate from less than a second, or from nothing, says nothing */
    if (done == 0 || elapsed < 1) {
        snprintf(buf, size, "%llu/%llu %s  ETA ?", done, total, unit);
        return;
    }
    duration_text(left, sizeof left, (double)(total - done) / rate);
    snprintf(buf, size, "%llu/%llu %s  %.1f %s/s  ETA %s", done, total, unit, rate, unit,
             left);
}

void pl_cli_meter_start(pl_cli_meter *m, const char *label, const char *unit)
{
    m->label = label;
    m->unit = unit;
    m->t0 = mono_now();
    m->shown = m->t0;
    m->tty = pl_cli_isatty(stderr);
    m->drawn = 0;
}

void pl_cli_meter_update(pl_cli_meter *m, unsigned long long done,
                         unsigned long long total)
{
    double t = mono_now();
    int end = done >= total;
    /* a terminal is redrawn often, a log gets a line now and then */
    double every = m->tty ? 0.2 : PL_CLI_METER_EVERY_S;
    if (m->drawn && !end && t - m->shown < every)
        return;
    char text[160];
    pl_cli_meter_text(text, sizeof text, m->unit, done, total, t - m->t0);
    if (m->tty) {
        draw_bar(stderr, m->label, done, total ? total : 1);
        fprintf(stderr, "  %s\033[K%s", text, end ? "\n" : "");
    } else {
        fprintf(stderr, "%s: %s\n", m->label, text);
    }
    fflush(stderr);
    m->shown = t;
    m->drawn = 1;
}

void pl_cli_progress_eta(pl_cli_meter *m, unsigned long long done,
                         unsigned long long total)
{
    if (m->tty && total > 0)
        pl_cli_meter_update(m, done, total);
}

pl_status pl_parse_sign(const char *name, const char *text, int *sign,
                        pl_err *err)
{
    long v;
    if (pl_parse_long(name, text, -1, 1, &v, err) != PL_OK)
        return err->code;
    if (v == 0)
        return pl_err_set(err, PL_EINVAL, "option '--%s': expected +1 or -1, "
                          "got 0", name);
    *sign = (int)v;
    return PL_OK;
}

/* --- option tables ------------------------------------------------------ */

static int takes_value(const pl_opt *o)
{
    return o->kind != PL_OPTK_FLAG &&
           !(o->kind == PL_OPTK_CALLBACK && (o->flags & PL_OPT_NOARG));
}

static pl_status parse_choice(const pl_opt *o, const char *text, pl_err *err)
{
    char names[256] = "";
    size_t n = 0, len = 0;

    for (const pl_opt_choice *c = o->choices; c->name; c++, n++)
        if (!strcmp(text, c->name)) {
            *(int *)o->dest = c->value;
            return PL_OK;
        }
    /* "a, b or c", as the messages written by hand used to say */
    for (size_t i = 0; i < n && len < sizeof names; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                i == 0 ? "" : i + 1 < n ? ", " : " or ",
                                o->choices[i].name);
    return pl_err_set(err, PL_EINVAL, "option '--%s': expected %s, got '%s'",
                      o->name, names, text);
}

/* Stores one occurrence's value (NULL for an option that takes none). */
static pl_status set_value(pl_opt *o, const char *text, pl_err *err)
{
    double v;
    switch (o->kind) {
    case PL_OPTK_FLAG: *(int *)o->dest = o->value; return PL_OK;
    case PL_OPTK_STRING: *(const char **)o->dest = text; return PL_OK;
    case PL_OPTK_TEXT:
        snprintf(o->dest, o->size, "%s", text);
        return PL_OK;
    case PL_OPTK_CHAR:
        if (strlen(text) != 1)
            return pl_err_set(err, PL_EINVAL, "option '--%s': expected one "
                              "character, got '%s'", o->name, text);
        *(char *)o->dest = text[0];
        return PL_OK;
    case PL_OPTK_INT:
        return pl_parse_long(o->name, text, (long)o->lo, (long)o->hi, o->dest,
                             err);
    case PL_OPTK_DOUBLE:
        if (pl_parse_double(o->name, text, o->lo, o->hi, &v, err) != PL_OK)
            return err->code;
        *(double *)o->dest = o->scale != 0 ? v * o->scale : v;
        return PL_OK;
    case PL_OPTK_SIGN: return pl_parse_sign(o->name, text, o->dest, err);
    case PL_OPTK_PAIR: return pl_parse_pair(o->name, text, o->dest, o->dest2, err);
    case PL_OPTK_CHOICE: return parse_choice(o, text, err);
    case PL_OPTK_CALLBACK: return o->fn(o, text, err);
    case PL_OPTK_END:
    case PL_OPTK_GROUP:
        break;
    }
    return pl_err_set(err, PL_EINVAL, "option '--%s': not an option", o->name);
}

/* The row named by the first len characters of name: an exact match, else
 * the one option that begins so (getopt_long's abbreviations). */
static pl_opt *find_long(pl_opt *opts, const char *name, size_t len,
                         pl_err *err)
{
    pl_opt *found = NULL;
    char also[256] = "";
    size_t n = 0, used = 0;

    for (pl_opt *o = opts; o->kind != PL_OPTK_END; o++) {
        if (!o->name || strncmp(o->name, name, len))
            continue;
        if (o->name[len] == '\0')
            return o;
        if (used < sizeof also)
            used += (size_t)snprintf(also + used, sizeof also - used, "%s--%s",
                                     n ? ", " : "", o->name);
        found = o;
        n++;
    }
    if (n == 1)
        return found;
    if (n > 1)
        pl_err_set(err, PL_EINVAL, "option '--%.*s' is ambiguous (%s)",
                   (int)len, name, also);
    else
        pl_err_set(err, PL_EINVAL, "unknown option '--%.*s'", (int)len, name);
    return NULL;
}

static pl_opt *find_short(pl_opt *opts, char c, pl_err *err)
{
    for (pl_opt *o = opts; o->kind != PL_OPTK_END; o++)
        if (o->short_name && o->short_name == c)
            return o;
    pl_err_set(err, PL_EINVAL, "unknown option '-%c'", c);
    return NULL;
}

/* One option at argv[*i] (a "--name[=value]" or "-x[value]"); a value
 * not attached is the next argument, whatever it looks like. */
static pl_status parse_one(pl_opt *opts, int argc, char **argv, int *i,
                           pl_err *err)
{
    const char *arg = argv[*i], *value = NULL;
    pl_opt *o;

    if (arg[1] == '-') {
        const char *eq = strchr(arg + 2, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (!(o = find_long(opts, arg + 2, len, err)))
            return err->code;
        if (eq && !takes_value(o))
            return pl_err_set(err, PL_EINVAL, "option '--%s' takes no value",
                              o->name);
        value = eq ? eq + 1 : NULL;
    } else {
        if (!(o = find_short(opts, arg[1], err)))
            return err->code;
        if (arg[2] && !takes_value(o))
            return pl_err_set(err, PL_EINVAL, "option '-%c' takes no value",
                              arg[1]);
        value = arg[2] ? arg + 2 : NULL;
    }
    if (!value && takes_value(o)) {
        if (*i + 1 >= argc)
            return pl_err_set(err, PL_EINVAL, "option '--%s' needs a value",
                              o->name);
        value = argv[++*i];
    }
    o->seen++;
    return set_value(o, value, err);
}

static pl_status check_required(const pl_opt *opts, pl_err *err)
{
    for (const pl_opt *o = opts; o->kind != PL_OPTK_END; o++)
        if ((o->flags & PL_OPT_REQUIRED) && !o->seen)
            return pl_err_set(err, PL_EINVAL, "missing option --%s", o->name);
    return PL_OK;
}

pl_status pl_opt_parse(pl_opt *opts, int argc, char **argv, int *nargs,
                       int *help, pl_err *err)
{
    int out = 1, options = 1;

    *nargs = 0;
    *help = 0;
    for (pl_opt *o = opts; o->kind != PL_OPTK_END; o++)
        o->seen = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options || arg[0] != '-' || arg[1] == '\0') {
            argv[out++] = argv[i];       /* out <= i: nothing unread is lost */
            continue;
        }
        if (!strcmp(arg, "--")) {
            options = 0;
            continue;
        }
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            *help = 1;
            return PL_OK;
        }
        if (parse_one(opts, argc, argv, &i, err) != PL_OK)
            return err->code;
    }
    *nargs = out - 1;
    return check_required(opts, err);
}

/* "  -o, --output DIR" */
static int option_names(const pl_opt *o, FILE *out)
{
    int w = fprintf(out, "  ");
    if (o->short_name)
        w += fprintf(out, "-%c, ", o->short_name);
    w += fprintf(out, "--%s", o->name);
    if (o->argh && takes_value(o))
        w += fprintf(out, " %s", o->argh);
    return w;
}

void pl_cli_help(const pl_cli_command *cmd, const pl_opt *opts, FILE *out)
{
    enum { COLUMN = 24 };
    int listed = 0;

    fputs(cmd->usage, out);
    if (cmd->about)
        fprintf(out, "\n%s", cmd->about);
    for (const pl_opt *o = opts; o->kind != PL_OPTK_END; o++) {
        if (!o->help)
            continue;
        if (!listed++)
            fputc('\n', out);
        if (o->kind == PL_OPTK_GROUP) {
            fprintf(out, "%s\n", o->help);
            continue;
        }
        int w = option_names(o, out);
        /* the help's lines, each starting in COLUMN */
        for (const char *h = o->help;; h++) {
            size_t len = strcspn(h, "\n");
            if (w >= COLUMN - 1) {
                fputc('\n', out);
                w = 0;
            }
            fprintf(out, "%*s%.*s\n", COLUMN - w, "", (int)len, h);
            w = 0;
            if (h[len] != '\n')
                break;
            h += len;
        }
    }
    if (cmd->footer)
        fprintf(out, "\n%s", cmd->footer);
}

int pl_cli_parse(const pl_cli_command *cmd, pl_opt *opts, int argc,
                 char **argv, int *nargs)
{
    pl_err err = {0};
    int help, none;

    if (!nargs)
        nargs = &none;
    if (pl_opt_parse(opts, argc, argv, nargs, &help, &err) != PL_OK)
        return pl_cli_usage_error(cmd->name, "%s", err.msg);
    if (help) {
        pl_cli_help(cmd, opts, stdout);
        return PL_EXIT_OK;
    }
    if (cmd->max_args != PL_CLI_ANY_ARGS && *nargs > cmd->max_args)
        return pl_cli_usage_error(cmd->name, "unexpected argument '%s'",
                                  argv[1 + cmd->max_args]);
    return PL_CLI_CONTINUE;
}
