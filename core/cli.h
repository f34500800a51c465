/* core/cli.h - what the cmd_*.c front ends share: the option tables and
 * their one parse call, exit statuses, strict number parsing, progress.
 *
 * Exit status convention of every prismlab command: 0 on success, 1 on a
 * usage error (bad or missing option), 2 on a data or I/O error.  Values
 * given on the command line are parsed strictly: trailing garbage, NaN and
 * out-of-range numbers are usage errors naming the option.
 *
 * A command describes its options as a table (in the manner of git's
 * parse-options): each row names the option, its kind, where the value
 * goes, its valid range and its line of help.  One call, pl_cli_parse(),
 * then reads argv the way getopt_long did before it: options anywhere
 * among the positional arguments, "--name value" and "--name=value",
 * unambiguous abbreviations ("--exp" for "--experiment"), "--" ending the
 * options, and a value taken as given even when it starts with '-' (so
 * "--sign2 -1" works).  --help (or -h) prints the usage generated from the
 * same table, so help and parser cannot disagree.  The table lives on the
 * command's stack, because its destinations are the command's locals.
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

/* --- option tables ------------------------------------------------------ */

/* What an option takes and where its value goes (dest's type in brackets). */
typedef enum {
    PL_OPTK_END,       /* ends a table */
    PL_OPTK_GROUP,     /* no option: a heading in the help */
    PL_OPTK_FLAG,      /* no value: stores .value [int] */
    PL_OPTK_STRING,    /* the value as given [const char *] */
    PL_OPTK_TEXT,      /* the value copied, truncated to .size [char[]] */
    PL_OPTK_CHAR,      /* exactly one character [char] */
    PL_OPTK_INT,       /* a decimal integer in [lo, hi] [long] */
    PL_OPTK_DOUBLE,    /* a finite number in [lo, hi], times .scale [double] */
    PL_OPTK_SIGN,      /* +1 or -1 [int] */
    PL_OPTK_PAIR,      /* "A,B" into dest and dest2 [double, double] */
    PL_OPTK_CHOICE,    /* one of .choices: stores its value [int] */
    PL_OPTK_CALLBACK   /* .fn(option, value) does the work */
} pl_opt_kind;

enum {
    PL_OPT_REQUIRED = 1,   /* a usage error when not given */
    PL_OPT_NOARG = 2       /* PL_OPTK_CALLBACK: takes no value (fn gets NULL) */
};

/* One name a PL_OPTK_CHOICE option accepts; a table ends with {NULL, 0}. */
typedef struct {
    const char *name;
    int value;
} pl_opt_choice;

typedef struct pl_opt pl_opt;

/* A PL_OPTK_CALLBACK option's work: value is what the user gave (NULL with
 * PL_OPT_NOARG); on a bad value returns PL_EINVAL naming the option. */
typedef pl_status (*pl_opt_fn)(const pl_opt *opt, const char *value,
                               pl_err *err);

/* One row of a command's option table.  Fill it with the PL_OPT_* macros
 * below; the parser only writes .seen. */
struct pl_opt {
    pl_opt_kind kind;
    const char *name;     /* long name without "--"; NULL only for GROUP */
    char short_name;      /* 'o' for -o; 0: none */
    void *dest, *dest2;   /* where the value goes (see pl_opt_kind) */
    double lo, hi;        /* INT, DOUBLE: the valid range */
    double scale;         /* DOUBLE: stored = given x scale; 0 means 1 */
    int value;            /* FLAG: what it stores */
    size_t size;          /* TEXT: the size of dest */
    const pl_opt_choice *choices;   /* CHOICE */
    pl_opt_fn fn;         /* CALLBACK */
    unsigned flags;       /* PL_OPT_REQUIRED, PL_OPT_NOARG */
    const char *argh;     /* the value's name in the help ("HZ") */
    const char *help;     /* its help; '\n' continues it on the next line;
                             NULL: not listed */
    int seen;             /* how often it was given (set by the parser) */
};

/* The destination checked against the kind's type: a pointer of another
 * type is a compile error ("pointer type mismatch"), not a silent bug. */
#define PL_OPT_DEST_(d, type) (1 ? (d) : (type *)0)

#define PL_OPT_END() {.kind = PL_OPTK_END}
#define PL_OPT_GROUP(h) {.kind = PL_OPTK_GROUP, .help = (h)}
#define PL_OPT_FLAG(n, d, h) \
    {.kind = PL_OPTK_FLAG, .name = (n), .dest = PL_OPT_DEST_(d, int), \
     .value = 1, .help = (h)}
#define PL_OPT_SET_INT(n, d, v, h) \
    {.kind = PL_OPTK_FLAG, .name = (n), .dest = PL_OPT_DEST_(d, int), \
     .value = (v), .help = (h)}
#define PL_OPT_STRING(n, d, a, h) PL_OPT_STRING_F(n, 0, d, 0, a, h)
#define PL_OPT_REQUIRED_STRING(n, d, a, h) \
    PL_OPT_STRING_F(n, 0, d, PL_OPT_REQUIRED, a, h)
/* with a short name s ('o' for -o) and flags f */
#define PL_OPT_STRING_F(n, s, d, f, a, h) \
    {.kind = PL_OPTK_STRING, .name = (n), .short_name = (s), \
     .dest = (void *)PL_OPT_DEST_(d, const char *), .flags = (f), \
     .argh = (a), .help = (h)}
#define PL_OPT_TEXT(n, d, a, h) \
    {.kind = PL_OPTK_TEXT, .name = (n), .dest = PL_OPT_DEST_(d, char), \
     .size = sizeof(d), .argh = (a), .help = (h)}
#define PL_OPT_CHAR(n, d, a, h) \
    {.kind = PL_OPTK_CHAR, .name = (n), .dest = PL_OPT_DEST_(d, char), \
     .argh = (a), .help = (h)}
#define PL_OPT_INT(n, d, l, u, a, h) \
    {.kind = PL_OPTK_INT, .name = (n), .dest = PL_OPT_DEST_(d, long), \
     .lo = (l), .hi = (u), .argh = (a), .help = (h)}
#define PL_OPT_DOUBLE(n, d, l, u, a, h) \
    {.kind = PL_OPTK_DOUBLE, .name = (n), .dest = PL_OPT_DEST_(d, double), \
     .lo = (l), .hi = (u), .argh = (a), .help = (h)}
#define PL_OPT_REQUIRED_DOUBLE(n, d, l, u, a, h) \
    {.kind = PL_OPTK_DOUBLE, .name = (n), .dest = PL_OPT_DEST_(d, double), \
     .lo = (l), .hi = (u), .flags = PL_OPT_REQUIRED, .argh = (a), .help = (h)}
#define PL_OPT_SCALED(n, d, l, u, s, a, h) \
    {.kind = PL_OPTK_DOUBLE, .name = (n), .dest = PL_OPT_DEST_(d, double), \
     .lo = (l), .hi = (u), .scale = (s), .argh = (a), .help = (h)}
#define PL_OPT_SIGN(n, d, h) \
    {.kind = PL_OPTK_SIGN, .name = (n), .dest = PL_OPT_DEST_(d, int), \
     .argh = "+-1", .help = (h)}
#define PL_OPT_PAIR(n, d1, d2, a, h) \
    {.kind = PL_OPTK_PAIR, .name = (n), .dest = PL_OPT_DEST_(d1, double), \
     .dest2 = PL_OPT_DEST_(d2, double), .argh = (a), .help = (h)}
#define PL_OPT_CHOICE(n, d, c, a, h) \
    {.kind = PL_OPTK_CHOICE, .name = (n), .dest = PL_OPT_DEST_(d, int), \
     .choices = (c), .argh = (a), .help = (h)}
#define PL_OPT_CALLBACK(n, d, f, a, h) \
    {.kind = PL_OPTK_CALLBACK, .name = (n), .dest = (d), .fn = (f), \
     .argh = (a), .help = (h)}
#define PL_OPT_CALLBACK_NOARG(n, d, f, h) \
    {.kind = PL_OPTK_CALLBACK, .name = (n), .dest = (d), .fn = (f), \
     .flags = PL_OPT_NOARG, .help = (h)}
/* --db FILE, which every command that opens the store takes. */
#define PL_OPT_DB(d) \
    PL_OPT_STRING("db", d, "FILE", \
                  "the database (default $PRISMLAB_DB, else ./prismlab.db)")

/* Parses argv[1..argc-1] (argv[0] is the command's name) against opts:
 * every option's value goes to its destination in the order given, so a
 * repeated option's last value wins (a callback sees each).  The
 * positional arguments are moved, in order, to argv[1..*nargs].  Stops at
 * --help or -h and sets *help (destinations given before it are set).
 * PL_EINVAL names the option: unknown or ambiguous, a value missing or
 * given to an option that takes none, a value outside its range (worded
 * as pl_parse_double() and friends word it), or a PL_OPT_REQUIRED option
 * not given ("missing option --NAME"). */
pl_status pl_opt_parse(pl_opt *opts, int argc, char **argv, int *nargs,
                       int *help, pl_err *err);

/* A command as its --help shows it. */
typedef struct {
    const char *name;     /* "process", "acquire daemon": in its messages */
    const char *usage;    /* the synopsis, "usage: prismlab ...\n" lines */
    const char *about;    /* what it does (NULL: nothing) */
    const char *footer;   /* after the option list, e.g. what it prints */
    int max_args;         /* positional arguments allowed; PL_CLI_ANY_ARGS */
} pl_cli_command;

enum { PL_CLI_ANY_ARGS = -1, PL_CLI_CONTINUE = -1 };

/* Writes the help: usage, about, one line per listed option (its names,
 * argh and help, GROUP rows as headings), then the footer. */
void pl_cli_help(const pl_cli_command *cmd, const pl_opt *opts, FILE *out);

/* The one parse call of a command: pl_opt_parse(), then at most
 * cmd->max_args positional arguments ("unexpected argument 'X'").
 * Returns PL_CLI_CONTINUE when the command goes on, its positional
 * arguments in argv[1..*nargs] (nargs may be NULL when max_args is 0);
 * otherwise the exit status to return: 0
 * after printing the help on stdout, 1 after printing the usage error. */
int pl_cli_parse(const pl_cli_command *cmd, pl_opt *opts, int argc,
                 char **argv, int *nargs);

/* Where a command's result lines go: stdout, or stderr when one of the
 * files it writes is "-" (standard output), so that the file stays
 * clean.  Up to three paths; NULL ones are not given. */
FILE *pl_cli_result_stream(const char *a, const char *b, const char *c);

/* True when the stream is a terminal, so progress bars are worth drawing. */
int pl_cli_isatty(FILE *stream);

/* Installs handler for SIGINT and SIGTERM (no SA_RESTART: a blocking
 * call returns EINTR), so that a long command can stop cleanly. */
void pl_cli_on_stop(void (*handler)(int));

/* Erases an unfinished progress line on stderr (a terminal only), so
 * that a result line printed next starts on a clean line. */
void pl_cli_progress_clear(void);

/* Draws "LABEL [#####     ]  42%" on stderr when stderr is a terminal;
 * call with done == total to finish the line.  No-op otherwise. */
void pl_cli_progress(const char *label, unsigned long long done,
                     unsigned long long total);

/* Progress with a rate and the time left, for commands that run for
 * minutes.  On a terminal pl_cli_progress()'s bar followed by
 * "1234/3232 starts  21.3 starts/s  ETA 1m35s", redrawn in place at most
 * five times a second; otherwise (a log, a pipe) the same words without
 * the bar, one line at the start, one every PL_CLI_METER_EVERY_S seconds
 * and one at the end, so that a log says how far a long run got.  The
 * rate is the mean since pl_cli_meter_start().  Plain data, no resources:
 * one meter a stage, used from one thread. */
enum { PL_CLI_METER_EVERY_S = 5 };

typedef struct {
    const char *label, *unit;   /* "basin fig13", "starts"; not copied */
    double t0, shown;           /* CLOCK_MONOTONIC s: start, last line drawn */
    int tty, drawn;             /* stderr is a terminal; a line was drawn */
} pl_cli_meter;

/* Starts the clock of a stage. */
void pl_cli_meter_start(pl_cli_meter *m, const char *label, const char *unit);

/* Shows done of total (done == total ends the line). */
void pl_cli_meter_update(pl_cli_meter *m, unsigned long long done,
                         unsigned long long total);

/* pl_cli_progress() with the meter's rate and ETA: on a terminal what
 * pl_cli_meter_update() draws, nothing otherwise (a log or a pipe gets
 * no lines, as from pl_cli_progress()). */
void pl_cli_progress_eta(pl_cli_meter *m, unsigned long long done,
                         unsigned long long total);

/* The meter's words after elapsed seconds: "1234/3232 starts  21.3
 * starts/s  ETA 1m35s"; "0/3232 starts  ETA ?" until a second has passed
 * and something is done; "3232/3232 starts  21.4 starts/s  in 2m31s" at
 * the end.  What pl_cli_meter_update() prints. */
void pl_cli_meter_text(char *buf, size_t size, const char *unit,
                       unsigned long long done, unsigned long long total,
                       double elapsed);

#endif
