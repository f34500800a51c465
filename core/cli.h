/* core/cli.h - helpers shared by the cmd_*.c front ends.
 *
 * Exit status convention of every prismlab command: 0 on success, 1 on a
 * usage error (bad or missing option), 2 on a data or I/O error.  Values
 * given on the command line are parsed strictly: trailing garbage, NaN and
 * out-of-range numbers are usage errors naming the option.
 */
#ifndef PL_CORE_CLI_H
#define PL_CORE_CLI_H

#include "core/error.h"

#include <stdio.h>

enum { PL_EXIT_OK = 0, PL_EXIT_USAGE = 1, PL_EXIT_DATA = 2 };

/* Maps a library status to the command's exit status: PL_EINVAL is a
 * usage error (1), everything else a data or I/O error (2). */
int pl_cli_exit_code(pl_status code);

/* Prints "prismlab CMD: MESSAGE" on stderr and returns the exit status
 * that pl_cli_exit_code() gives for err->code. */
int pl_cli_fail(const char *cmd, const pl_err *err);

/* Prints "prismlab CMD: MESSAGE" and a hint to run --help, returns 1. */
int pl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The database path: the --db option when given, else $PRISMLAB_DB, else
 * "./prismlab.db".  Never NULL. */
const char *pl_cli_db_path(const char *option_value);

/* Parses a finite double in [lo, hi] from text for option NAME; on failure
 * returns PL_EINVAL with "option '--NAME': expected ... got '...'". */
pl_status pl_parse_double(const char *name, const char *text, double lo,
                          double hi, double *out, pl_err *err);

/* Parses a decimal integer in [lo, hi]; errors as pl_parse_double(). */
pl_status pl_parse_long(const char *name, const char *text, long lo, long hi,
                        long *out, pl_err *err);

/* Parses "A,B" (two doubles separated by a comma) for options like --v0. */
pl_status pl_parse_pair(const char *name, const char *text, double *a,
                        double *b, pl_err *err);

/* Parses a beam sign: +1 or -1 (PL_EINVAL naming the option otherwise). */
pl_status pl_parse_sign(const char *name, const char *text, int *sign,
                        pl_err *err);

/* True when the stream is a terminal, so progress bars are worth drawing. */
int pl_cli_isatty(FILE *stream);

/* Draws "LABEL [#####     ]  42%" on stderr when stderr is a terminal;
 * call with done == total to finish the line.  No-op otherwise. */
void pl_cli_progress(const char *label, unsigned long long done,
                     unsigned long long total);

#endif
