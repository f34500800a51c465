/* core/error.c - status strings and the error-detail helpers. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_text[PL_NSTATUS] = {
    [PL_OK] = "success",
    [PL_EINVAL] = "invalid argument",
    [PL_ENOMEM] = "out of memory",
    [PL_EIO] = "input/output error",
    [PL_EFORMAT] = "malformed input",
    [PL_EDB] = "database error",
    [PL_ESCHEMA] = "unsupported database schema",
    [PL_ECORRUPT] = "stored data is corrupt",
    [PL_ENOTFOUND] = "not found",
    [PL_EEXIST] = "already exists",
    [PL_EDAQ] = "data-acquisition error",
    [PL_EOVERRUN] = "samples lost (overrun)",
    [PL_ENUMERIC] = "numerical method failed",
    [PL_ESTATE] = "wrong state for this operation",
};

const char *pl_strerror(pl_status code)
{
    if ((unsigned)code >= PL_NSTATUS)
        return "unknown status";
    return status_text[code];
}

pl_status pl_err_set(pl_err *err, pl_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

pl_status pl_err_prefix(pl_err *err, const char *fmt, ...)
{
    char head[sizeof err->msg];
    size_t hlen, tlen;
    va_list ap;

    if (!err)
        return PL_OK;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    /* Keep the cause (the tail) whole when the two do not fit: the
     * context is the part a reader can best do without. */
    hlen = strlen(head);
    tlen = strlen(err->msg);
    if (hlen + tlen >= sizeof err->msg)
        hlen = sizeof err->msg - 1 - tlen;
    memmove(err->msg + hlen, err->msg, tlen + 1);
    memcpy(err->msg, head, hlen);
    return err->code;
}

void pl_err_clear(pl_err *err)
{
    if (err) {
        err->code = PL_OK;
        err->msg[0] = '\0';
    }
}

void pl_vlogf(void (*log)(void *ctx, const char *line), void *ctx, const char *fmt,
              va_list ap)
{
    if (!log)
        return;
    char line[700];
    vsnprintf(line, sizeof line, fmt, ap);
    log(ctx, line);
}
