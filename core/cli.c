/* core/cli.c - option parsing and exit-status helpers for the commands. */
#include "core/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
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
    if (*end || errno == ERANGE || !isfinite(v))
        return pl_err_set(err, PL_EINVAL,
                          "option '--%s': expected a number, got '%s'", name,
                          text);
    if (v < lo || v > hi)
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

int pl_cli_isatty(FILE *stream)
{
    return isatty(fileno(stream));
}

void pl_cli_progress(const char *label, unsigned long long done,
                     unsigned long long total)
{
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    unsigned fill;

    if (!pl_cli_isatty(stderr) || total == 0)
        return;
    fill = (unsigned)(done >= total ? WIDTH : done * WIDTH / total);
    memset(bar, '#', fill);
    memset(bar + fill, ' ', WIDTH - fill);
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %3u%%", label, bar,
            (unsigned)(done >= total ? 100 : done * 100 / total));
    if (done >= total)
        fputc('\n', stderr);
    fflush(stderr);
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
