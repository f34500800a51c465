/* tests/core/cli_test.c - the option-table parser of core/cli.c: every
 * kind of option, ranges and their messages (worded as pl_parse_double()
 * words them: tests/cli and the script tests match them), values missing
 * or attached with '=', abbreviations, unknown options, positional
 * arguments, required options and the generated --help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/cli.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The destinations of one table with one option of each kind. */
typedef struct {
    int flag, mode, sign, choice, calls;
    const char *string;
    char text[8], ch;
    long n;
    double x, deg, a, b;
} dests;

static const pl_opt_choice laws[] = {{"line", 1}, {"plastic", 2},
                                     {"both", 3}, {NULL, 0}};

/* Counts its calls and rejects "bad", as a callback naming its option must. */
static pl_status count_calls(const pl_opt *opt, const char *value, pl_err *err)
{
    dests *d = opt->dest;
    if (value && !strcmp(value, "bad"))
        return pl_err_set(err, PL_EINVAL, "option '--%s': bad", opt->name);
    d->calls++;
    return PL_OK;
}

/* Fills t (room for 20 rows) with a row of every kind writing into d. */
static void table(pl_opt *t, dests *d)
{
    memset(d, 0, sizeof *d);
    d->x = d->deg = d->a = d->b = NAN;
    d->mode = 7;
    pl_opt rows[] = {
        PL_OPT_GROUP("Numbers:"),
        PL_OPT_FLAG("flag", &d->flag, "a flag"),
        PL_OPT_SET_INT("no-mode", &d->mode, 0, "mode off"),
        PL_OPT_STRING("string", &d->string, "S", "a string"),
        PL_OPT_TEXT("text", d->text, "T", "a text of at most 7 characters"),
        PL_OPT_CHAR("char", &d->ch, "C", "one character"),
        PL_OPT_INT("n", &d->n, 3, 10000, "N", "an integer"),
        PL_OPT_DOUBLE("x", &d->x, 0, 1, "X", "a number"),
        PL_OPT_SCALED("deg", &d->deg, -90, 90, M_PI / 180, "DEG", "degrees"),
        PL_OPT_SIGN("sign", &d->sign, "a sign"),
        PL_OPT_PAIR("v0", &d->a, &d->b, "A,B", "a pair"),
        PL_OPT_CHOICE("law", &d->choice, laws, "L", "line, plastic or both"),
        PL_OPT_CALLBACK("call", d, count_calls, "V", "a callback"),
        PL_OPT_CALLBACK_NOARG("tick", d, count_calls, "a callback, no value"),
        PL_OPT_STRING("mass", &d->string, "KG", "for abbreviations"),
        PL_OPT_STRING("masses", &d->string, "M1,M2", "for abbreviations"),
        PL_OPT_STRING_F("output", 'o', &d->string, 0, "DIR",
                        "long help\nsecond line"),
        PL_OPT_STRING("hidden", &d->string, "H", NULL),
        PL_OPT_END()};
    memcpy(t, rows, sizeof rows);
}

/* The table of every kind, its destinations and what a parse returns. */
typedef struct {
    pl_opt t[20];
    dests d;
    pl_err err;
    int nargs, help;
} parser;

static void parser_init(parser *p)
{
    memset(p, 0, sizeof *p);
    table(p->t, &p->d);
}

/* Parses a NULL-terminated argument list (the command name first). */
static pl_status parse(parser *p, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return pl_opt_parse(p->t, argc, argv, &p->nargs, &p->help, &p->err);
}

#define ARGS(...) ((char *[]){"cmd", __VA_ARGS__, NULL})

/* parse() expecting PL_EINVAL with exactly msg */
static void expect_error(char **argv, const char *msg)
{
    parser p;
    parser_init(&p);
    assert_int_equal(parse(&p, argv), PL_EINVAL);
    assert_string_equal(p.err.msg, msg);
}

static void every_kind_stores_its_value(void **state)
{
    (void)state;
    parser p;
    parser_init(&p);
    assert_int_equal(parse(&p, ARGS("--flag", "--no-mode", "--string", "s1",
                                   "--text", "abcdefghij", "--char", ";",
                                   "--n", "42", "--x", "0.25", "--deg", "90",
                                   "--sign", "-1", "--v0", "1.5,-2",
                                   "--law", "plastic", "--call", "v",
                                   "--tick")), PL_OK);
    assert_int_equal(p.nargs, 0);
    assert_int_equal(p.help, 0);
    assert_int_equal(p.d.flag, 1);
    assert_int_equal(p.d.mode, 0);
    assert_string_equal(p.d.string, "s1");
    assert_string_equal(p.d.text, "abcdefg");     /* truncated to its size */
    assert_int_equal(p.d.ch, ';');
    assert_int_equal(p.d.n, 42);
    assert_true(p.d.x == 0.25);
    assert_true(p.d.deg == 90 * (M_PI / 180));    /* the same product as before */
    assert_int_equal(p.d.sign, -1);
    assert_true(p.d.a == 1.5 && p.d.b == -2);
    assert_int_equal(p.d.choice, 2);
    assert_int_equal(p.d.calls, 2);
    assert_int_equal(p.t[1].seen, 1);             /* --flag */
    assert_int_equal(p.t[8].seen, 1);             /* --deg */
}

static void equals_and_separate_values_agree(void **state)
{
    (void)state;
    parser p;
    parser_init(&p);
    /* a separate value is taken as given, even when it starts with '-' */
    assert_int_equal(parse(&p, ARGS("--x=0.5", "--sign", "-1", "--string",
                                   "--flag", "--n=7", "-o", "dir")), PL_OK);
    assert_true(p.d.x == 0.5);
    assert_int_equal(p.d.sign, -1);
    assert_int_equal(p.d.n, 7);
    assert_int_equal(p.d.flag, 0);                /* "--flag" was --string's */
    assert_string_equal(p.d.string, "dir");       /* the last value wins */
    assert_int_equal(parse(&p, ARGS("--string=", "-oout")), PL_OK);
    assert_string_equal(p.d.string, "out");
    assert_int_equal(parse(&p, ARGS("--string=")), PL_OK);
    assert_string_equal(p.d.string, "");
}

static void ranges_are_worded_as_before(void **state)
{
    (void)state;
    expect_error(ARGS("--n", "2"),
                 "option '--n': expected an integer in [3, 10000], got 2");
    expect_error(ARGS("--n", "3.5"), "option '--n': expected an integer, got '3.5'");
    expect_error(ARGS("--x", "2"), "option '--x': expected a value in [0, 1], got 2");
    expect_error(ARGS("--x", "abc"), "option '--x': expected a number, got 'abc'");
    expect_error(ARGS("--x", "nan"), "option '--x': expected a number, got 'nan'");
    expect_error(ARGS("--x="), "option '--x': expected a number, got nothing");
    expect_error(ARGS("--deg", "91"),
                 "option '--deg': expected a value in [-90, 90], got 91");
    expect_error(ARGS("--sign", "0"), "option '--sign': expected +1 or -1, got 0");
    expect_error(ARGS("--sign", "2"),
                 "option '--sign': expected an integer in [-1, 1], got 2");
    expect_error(ARGS("--v0", "1"), "option '--v0': expected two numbers 'A,B', got '1'");
    expect_error(ARGS("--law", "x"),
                 "option '--law': expected line, plastic or both, got 'x'");
    expect_error(ARGS("--char", "ab"),
                 "option '--char': expected one character, got 'ab'");
    expect_error(ARGS("--call", "bad"), "option '--call': bad");
}

static void missing_and_unwanted_values(void **state)
{
    (void)state;
    expect_error(ARGS("--x"), "option '--x' needs a value");
    expect_error(ARGS("-o"), "option '--output' needs a value");
    expect_error(ARGS("--flag=1"), "option '--flag' takes no value");
    expect_error(ARGS("--tick=1"), "option '--tick' takes no value");
}

static void unknown_and_ambiguous_options(void **state)
{
    (void)state;
    parser p;
    expect_error(ARGS("--bogus"), "unknown option '--bogus'");
    expect_error(ARGS("--bogus=3"), "unknown option '--bogus'");
    expect_error(ARGS("-q"), "unknown option '-q'");
    expect_error(ARGS("--ma", "1"), "option '--ma' is ambiguous (--mass, --masses)");
    /* an exact name wins over the longer ones it begins; a unique
     * beginning stands for its option, as getopt_long allowed */
    parser_init(&p);
    assert_int_equal(parse(&p, ARGS("--mass", "1", "--fl", "--st=q")), PL_OK);
    assert_int_equal(p.d.flag, 1);
    assert_string_equal(p.d.string, "q");
}

static void positional_arguments_keep_their_order(void **state)
{
    (void)state;
    parser p;
    char **argv = ARGS("add", "--x", "1", "name", "-", "--", "--flag", "-3");
    parser_init(&p);
    assert_int_equal(parse(&p, argv), PL_OK);
    assert_int_equal(p.nargs, 5);
    assert_string_equal(argv[1], "add");
    assert_string_equal(argv[2], "name");
    assert_string_equal(argv[3], "-");
    assert_string_equal(argv[4], "--flag");    /* after "--": an argument */
    assert_string_equal(argv[5], "-3");
    assert_int_equal(p.d.flag, 0);
    assert_true(p.d.x == 1);
}

static void required_options(void **state)
{
    (void)state;
    double x = NAN;
    const char *s = NULL;
    parser p;
    parser_init(&p);
    pl_opt rows[] = {
        PL_OPT_REQUIRED_DOUBLE("x", &x, 0, 1, "X", "required"),
        PL_OPT_STRING("s", &s, "S", "optional"),
        PL_OPT_END()};
    memcpy(p.t, rows, sizeof rows);
    assert_int_equal(parse(&p, ARGS("--s", "a")), PL_EINVAL);
    assert_string_equal(p.err.msg, "missing option --x");
    assert_int_equal(parse(&p, ARGS("--x", "1")), PL_OK);
    /* --help needs none of them */
    assert_int_equal(parse(&p, ARGS("--s", "b", "--help", "--bogus")), PL_OK);
    assert_int_equal(p.help, 1);
    assert_string_equal(s, "b");
    assert_int_equal(parse(&p, ARGS("-h")), PL_OK);
    assert_int_equal(p.help, 1);
}

static void help_is_generated_from_the_table(void **state)
{
    (void)state;
    parser p;
    char *text = NULL;
    size_t size = 0;
    const pl_cli_command cmd = {.name = "demo", .usage = "usage: prismlab demo [options]\n",
                                .about = "Does nothing.\n", .footer = "Prints: nothing\n"};
    parser_init(&p);
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    pl_cli_help(&cmd, p.t, f);
    fclose(f);
    assert_non_null(strstr(text, "usage: prismlab demo [options]\n\nDoes nothing.\n\n"
                                 "Numbers:\n  --flag                a flag\n"));
    assert_non_null(strstr(text, "\n  --n N                 an integer\n"));
    assert_non_null(strstr(text, "\n  --sign +-1            a sign\n"));
    assert_non_null(strstr(text, "\n  --tick                a callback, no value\n"));
    assert_non_null(strstr(text, "\n  -o, --output DIR      long help\n"
                                 "                        second line\n"));
    assert_null(strstr(text, "hidden"));
    assert_non_null(strstr(text, "second line\n\nPrints: nothing\n"));
    free(text);
}

static void one_call_gives_the_exit_status(void **state)
{
    (void)state;
    parser p;
    const pl_cli_command none = {.name = "demo", .usage = "usage: prismlab demo\n"};
    const pl_cli_command two = {.name = "demo", .usage = "usage: prismlab demo A B\n",
                                .max_args = 2};
    parser_init(&p);
    assert_int_equal(pl_cli_parse(&none, p.t, 3, ARGS("--x", "1"), &p.nargs),
                     PL_CLI_CONTINUE);
    assert_int_equal(pl_cli_parse(&none, p.t, 2, ARGS("extra"), &p.nargs),
                     PL_EXIT_USAGE);
    assert_int_equal(pl_cli_parse(&two, p.t, 3, ARGS("a", "b"), &p.nargs),
                     PL_CLI_CONTINUE);
    assert_int_equal(p.nargs, 2);
    assert_int_equal(pl_cli_parse(&two, p.t, 4, ARGS("a", "b", "c"), &p.nargs),
                     PL_EXIT_USAGE);
    assert_int_equal(pl_cli_parse(&two, p.t, 3, ARGS("--x", "7"), &p.nargs),
                     PL_EXIT_USAGE);
}

/* The progress meter's words: the count, the mean rate, the time left
 * from it in s, m s or h m; "?" before a second or a first result. */
static void meter_says_rate_and_time_left(void **state)
{
    (void)state;
    char b[160];
    pl_cli_meter_text(b, sizeof b, "runs", 0, 3232, 10);
    assert_string_equal(b, "0/3232 runs  ETA ?");
    pl_cli_meter_text(b, sizeof b, "runs", 5, 3232, 0.5);
    assert_string_equal(b, "5/3232 runs  ETA ?");
    pl_cli_meter_text(b, sizeof b, "runs", 100, 3232, 4);      /* 25/s: 3132 / 25 */
    assert_string_equal(b, "100/3232 runs  25.0 runs/s  ETA 2m05s");
    pl_cli_meter_text(b, sizeof b, "starts", 40, 40401, 1);   /* 40/s: 1009.025 s */
    assert_string_equal(b, "40/40401 starts  40.0 starts/s  ETA 16m49s");
    pl_cli_meter_text(b, sizeof b, "starts", 10, 40401, 1);   /* 4039.1 s */
    assert_string_equal(b, "10/40401 starts  10.0 starts/s  ETA 1h07m");
    pl_cli_meter_text(b, sizeof b, "runs", 90, 100, 9);
    assert_string_equal(b, "90/100 runs  10.0 runs/s  ETA 1s");
    pl_cli_meter_text(b, sizeof b, "runs", 3232, 3232, 151.2);
    assert_string_equal(b, "3232/3232 runs  21.4 runs/s  in 2m31s");
}

/* Where stderr is not a terminal the meter writes whole lines: one at the
 * start, none for updates within PL_CLI_METER_EVERY_S, one at the end. */
static void meter_writes_lines_to_a_log(void **state)
{
    (void)state;
    char path[] = "/tmp/cli_test_meterXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    pl_cli_meter m;
    pl_cli_meter_start(&m, "basin fig13", "starts");
    pl_cli_meter_update(&m, 0, 9);
    for (unsigned long long i = 1; i < 9; i++)
        pl_cli_meter_update(&m, i, 9);
    pl_cli_meter_update(&m, 9, 9);
    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    close(fd);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[1024] = "";
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    unlink(path);
    assert_memory_equal(text, "basin fig13: 0/9 starts  ETA ?\n", 31);
    int lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 2);
    assert_null(strchr(text, '\r'));
    const char *second = strchr(text, '\n') + 1;
    assert_memory_equal(second, "basin fig13: 9/9 starts  ", 25);
    assert_non_null(strstr(second, " starts/s  in 0s\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_stores_its_value),
        cmocka_unit_test(equals_and_separate_values_agree),
        cmocka_unit_test(ranges_are_worded_as_before),
        cmocka_unit_test(missing_and_unwanted_values),
        cmocka_unit_test(unknown_and_ambiguous_options),
        cmocka_unit_test(positional_arguments_keep_their_order),
        cmocka_unit_test(required_options),
        cmocka_unit_test(help_is_generated_from_the_table),
        cmocka_unit_test(one_call_gives_the_exit_status),
        cmocka_unit_test(meter_says_rate_and_time_left),
        cmocka_unit_test(meter_writes_lines_to_a_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
