/* core/error.h - status codes and error detail shared by every stage.
 *
 * Every fallible prismlab function returns a pl_status and, when it fails,
 * fills a caller-owned pl_err with a message that names the cause (which
 * file, which line, which parameter, what was expected).  Only the cmd_*.c
 * front ends print; library code never writes to stdout or stderr.
 *
 * There is no global error state: a pl_err lives on the caller's stack, so
 * threads (the acquisition writer, say) each carry their own.
 */
#ifndef PL_CORE_ERROR_H
#define PL_CORE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum {
    PL_OK = 0,      /* success */
    PL_EINVAL,      /* a parameter or option is out of its valid range */
    PL_ENOMEM,      /* an allocation failed */
    PL_EIO,         /* a file or device could not be read or written */
    PL_EFORMAT,     /* input data is malformed (bad CSV line, truncated WAV) */
    PL_EDB,         /* SQLite reported an error */
    PL_ESCHEMA,     /* the database schema is newer than this prismlab */
    PL_ECORRUPT,    /* stored data failed a consistency check (CRC, integrity) */
    PL_ENOTFOUND,   /* a named object (run, prism, ramp, ...) does not exist */
    PL_EEXIST,      /* a named object already exists */
    PL_EDAQ,        /* the DAQ driver refused a request */
    PL_EOVERRUN,    /* samples were lost: the source or the writer fell behind */
    PL_ENUMERIC,    /* a numerical method failed to converge */
    PL_ESTATE,      /* the operation does not fit the object's current state */
    PL_NSTATUS
} pl_status;

typedef struct {
    pl_status code;
    char msg[512];
} pl_err;

/* Returns a short fixed description of a status code; never NULL. */
const char *pl_strerror(pl_status code);

/* Records code and a printf-style message in err (which may be NULL) and
 * returns code, so that callers can write `return pl_err_set(err, ...)`. */
pl_status pl_err_set(pl_err *err, pl_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes err's message with a printf-style context ("reading 'x.wav': ")
 * and returns err->code; keeps the original cause at the end. */
pl_status pl_err_prefix(pl_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Resets err to PL_OK with an empty message. */
void pl_err_clear(pl_err *err);

/* A line for a log callback: formats it printf-style (from ap) and
 * hands it to log(ctx, line), when log is set.  The daemon and its
 * pipeline say what they do this way, and their callers choose where it
 * goes (stderr, syslog, a test's buffer), as library code never prints. */
void pl_vlogf(void (*log)(void *ctx, const char *line), void *ctx, const char *fmt,
              va_list ap) __attribute__((format(printf, 3, 0)));

#endif
