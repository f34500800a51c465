/* tests/acquire/csv_test.c - the CSV source on real files: a foreign
 * logger's layout (';', decimal commas, a time column in ms, a trigger
 * column) read unaided and the same file read with every option stated;
 * the time column's unit from its name or the option; time stamps rounded
 * by the logger accepted; a jump of whole frames (a dropped buffer) read
 * as a gap, its frames on the line between the millisecond either side;
 * backward steps, jumps off the frame clock and gaps too long refused
 * with FILE:LINE;
 * a number with the other decimal mark refused; a time column that
 * disagrees with a stated rate refused; tab separators; columns by index;
 * cells spelt every way stored as strtod's bits and faults among the fast
 * rows worded as before (issue 29: these pass against the reader before
 * the fast rows too); lines longer than the reader's blocks; LF, CRLF,
 * CR and mixed line ends, also cut by the blocks; the hint at
 * --time-column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/csv_source.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *csv;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("csv");
    f->csv = tu_path(f->dir, "in.csv");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->csv);
    free(f);
    return 0;
}

/* Beams for two channels, so that open() can succeed. */
static pl_source_config beams(void)
{
    pl_source_config cfg;
    pl_source_config_init(&cfg);
    for (int i = 0; i < 2; i++) {
        cfg.beam_height_m[i] = 0.02 - 0.01 * i;
        cfg.beam_sign[i] = i ? -1 : 1;
        cfg.ldv_scale_mps_per_v[i] = 0.025;
    }
    return cfg;
}

/* Opens f->csv with o; on success reads every frame into v (2 a frame,
 * at most max frames) and returns the frame count; -1 on an error (err
 * holds it). */
static long long load(fixture *f, pl_csv_options *o, pl_source_info *info,
                      double *v, size_t max, pl_err *err)
{
    o->path = f->csv;
    pl_source_config cfg = beams();
    pl_source_spec spec = pl_csv_spec(o, &cfg);
    void *src = NULL;
    if (pl_source_open(&spec, &src, info, err) != PL_OK)
        return -1;
    size_t got = 0;
    assert_int_equal(pl_source_csv.read(src, v, max, &got, err), PL_OK);
    pl_source_csv.close(src);
    return (long long)got;
}

/* load() that must succeed: the frame count (the test fails with the
 * error otherwise). */
static size_t load_ok(fixture *f, pl_csv_options *o, pl_source_info *info, double *v,
                      size_t max)
{
    pl_err err = {0};
    long long n = load(f, o, info, v, max, &err);
    if (n < 0)
        fail_msg("%s", err.msg);
    return (size_t)n;
}

/* The foreign logger's export: 2000 rows at 10 kHz, time in ms. */
static void write_foreign(const char *path, double step_ms, int rows)
{
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs("zeit_ms;ldv_oben_V;ldv_unten_V;trigger_V\n", out);
    for (int k = 0; k < rows; k++) {
        char line[128];
        snprintf(line, sizeof line, "%.4f;%.6f;%.6f;%.1f\n", k * step_ms,
                 0.001 * k, -0.002 * k, k < 100 ? 0.0 : 5.0);
        for (char *p = line; *p; p++)
            if (*p == '.')
                *p = ',';
        fputs(line, out);
    }
    fclose(out);
}

static void test_foreign_unaided(void **state)
{
    fixture *f = *state;
    write_foreign(f->csv, 0.1, 2000);
    pl_csv_options o;
    pl_csv_options_init(&o);
    pl_source_info info;
    double v[2 * 2000];
    size_t n = load_ok(f, &o, &info, v, 2000);
    assert_int_equal(n, 2000);
    assert_int_equal(info.n_channels, 2);
    tu_assert_close(info.sample_rate_hz, 10000, 1e-6);
    tu_assert_close(v[2 * 1234], 1.234, 1e-12);
    tu_assert_close(v[2 * 1234 + 1], -2.468, 1e-12);
    assert_string_equal(info.kind, "csv");
    assert_int_equal(info.format, PL_FMT_F64);
}

/* The same with every option stated gives the same; index columns too. */
static void test_foreign_stated(void **state)
{
    fixture *f = *state;
    write_foreign(f->csv, 0.1, 500);
    pl_csv_options o;
    pl_csv_options_init(&o);
    o.delimiter = ';';
    o.decimal = ',';
    snprintf(o.columns, sizeof o.columns, "ldv_oben_V,2");
    snprintf(o.time_column, sizeof o.time_column, "0");
    snprintf(o.time_unit, sizeof o.time_unit, "ms");
    o.rate_hz = 10000;
    pl_source_info info;
    pl_err err = {0};
    double v[2 * 500];
    assert_int_equal(load(f, &o, &info, v, 500, &err), 500);
    tu_assert_close(v[2 * 321 + 1], -0.642, 1e-12);

    /* the score script's way: no time column, the rate given */
    pl_csv_options_init(&o);
    o.delimiter = ';';
    o.decimal = ',';
    snprintf(o.columns, sizeof o.columns, "1,2");
    snprintf(o.time_column, sizeof o.time_column, "none");
    o.rate_hz = 10000;
    assert_int_equal(load(f, &o, &info, v, 500, &err), 500);
    tu_assert_close(v[2 * 321], 0.321, 1e-12);

    /* a unit stated against the name's: ms read as s is a 10 Hz file, which
     * disagrees with the stated rate */
    pl_csv_options_init(&o);
    snprintf(o.time_unit, sizeof o.time_unit, "s");
    o.rate_hz = 10000;
    assert_int_equal(load(f, &o, &info, v, 500, &err), -1);
    assert_non_null(strstr(err.msg, "the time column's spacing gives 10 Hz but "
                                    "the rate is 10000 Hz"));
}

/* 3 kHz in ms to four decimals: 0.3333 ms steps, rounded; the rate comes
 * from the whole column, not the first step (which says 3000.3 Hz). */
static void test_rounded_stamps(void **state)
{
    fixture *f = *state;
    write_foreign(f->csv, 1.0 / 3.0, 30000);
    pl_csv_options o;
    pl_csv_options_init(&o);
    pl_source_info info;
    double *v = malloc(2 * 30000 * sizeof *v);
    size_t n = load_ok(f, &o, &info, v, 30000);
    assert_int_equal(n, 30000);
    tu_assert_close(info.sample_rate_hz, 3000, 3000 * 1e-7);
    free(v);
}

/* Reads text as the file and expects the message "<file>:<want>". */
static void expect_error(fixture *f, const char *text, pl_csv_options *o,
                         const char *want)
{
    assert_int_equal(tu_write_file(f->csv, text), 0);
    pl_source_info info;
    pl_err err = {0};
    double v[64];
    assert_int_equal(load(f, o, &info, v, 32, &err), -1);
    char full[1400];
    snprintf(full, sizeof full, "%s:%s", f->csv, want);
    if (strcmp(err.msg, full))
        fail_msg("got '%s', expected '%s'", err.msg, full);
}

static void test_refusals(void **state)
{
    fixture *f = *state;
    pl_csv_options o;
    pl_csv_options_init(&o);
    /* 4 would be one frame missing (test_gap); 4.5 is on no frame */
    expect_error(f, "t_ms;a_V;b_V\n0;1;2\n1;1;2\n2;1;2\n4.5;1;2\n", &o,
                 "5: t_ms = 4.5 breaks the regular spacing of 1 ms (expected 3): it "
                 "jumps 2.50 periods from the row before, not a whole number, so the "
                 "rows after it are on no frame of the recording's clock (a logger "
                 "restarted, or its rate changed): cut the file there and import the "
                 "parts");
    expect_error(f, "t_ms;a_V;b_V\n0;1;2\n1;1;2\n1;1;2\n", &o,
                 "4: t_ms = 1 does not follow 1: the time column must increase");
    expect_error(f, "t_ms;a_V;b_V\n0;1;2\n1;1;2\n2;1;2\n0.5;1;2\n", &o,
                 "5: t_ms = 0.5 goes back 1.5 ms from the row before (2): the time "
                 "column must increase: the rows are not one recording in time order "
                 "(two files joined, or rows sorted by another column?): import each "
                 "recording on its own");
    /* 101 ms missing: past the 0.1 s a gap may be bridged */
    expect_error(f, "t_ms;a_V;b_V\n0;1;2\n1;1;2\n2;1;2\n104;1;2\n", &o,
                 "5: t_ms jumps from 2 to 104 ms: 101 rows (0.101 s at one row each 1 "
                 "ms) missing, longer than the 0.1 s a gap may be bridged "
                 "(docs/acquire.md): this is two recordings, not one with a buffer "
                 "lost: cut the file there and import the parts");
    expect_error(f, "t_s;a_V;b_V\n0,0;1,5;2\n0,1;1.5;2\n", &o,
                 "3: column 1 (from 0, as --columns counts): expected a number, got '1.5'");
    expect_error(f, "t_s,a_V,b_V\n0,1,2\n0.1,1,5,2\n", &o,
                 "3: expected 3 fields as in the header, got 4");
    expect_error(f, "when,a_mV,b_mV\n0,1,2\n", &o,
                 "1: no voltage column (<name>_V) in the header (or pick "
                 "columns with --columns)");
    snprintf(o.time_column, sizeof o.time_column, "time");
    expect_error(f, "t_s,a_V,b_V\n0,1,2\n", &o,
                 "1: no time column 'time' in the header");
    pl_csv_options_init(&o);
    snprintf(o.columns, sizeof o.columns, "a_V,7");
    expect_error(f, "t_s,a_V,b_V\n0,1,2\n", &o,
                 "1: no column '7' in the header (3 columns)");
}

/* A logger that dropped a buffer: 10 kHz in ms, rows 0-49, then the time
 * column jumps 0.6 ms (frames 50-54 missing), rows 55-119.  The frames
 * keep their times (120 frames at 10 kHz, not 115 at 9583 Hz); the gap
 * is one record of where it is, how long and the line after it; its
 * frames lie on the straight line through the means of the millisecond
 * either side (10 frames each, at their centres), which for a channel
 * that rises steadily is the channel itself.  Both paths (fast rows and
 * libcsv's) read it alike, and a second gap later is recorded too. */
static void test_gap(void **state)
{
    fixture *f = *state;
    for (int quoted = 0; quoted < 2; quoted++) {
        char text[8192];
        size_t m = (size_t)snprintf(text, sizeof text, "t_ms,a_V,b_V\n");
        for (int k = 0; k < 150; k++)
            if ((k < 50 || k >= 55) && (k < 130 || k >= 131))
                m += (size_t)snprintf(text + m, sizeof text - m,
                                      quoted ? "\"%.1f\",%.3f,%.3f\n" : "%.1f,%.3f,%.3f\n",
                                      0.1 * k, 0.25 * k, 1.0 - 0.125 * k);
        assert_int_equal(tu_write_file(f->csv, text), 0);
        pl_csv_options o;
        pl_csv_options_init(&o);
        o.path = f->csv;
        pl_source_config cfg = beams();
        pl_source_spec spec = pl_csv_spec(&o, &cfg);
        pl_source_info info;
        pl_err err = {0};
        void *src = NULL;
        double v[2 * 200];
        size_t n = 0;
        if (pl_source_open(&spec, &src, &info, &err) != PL_OK)
            fail_msg("%s", err.msg);
        assert_int_equal(pl_source_csv.read(src, v, 200, &n, &err), PL_OK);
        assert_int_equal(n, 150);
        tu_assert_close(info.sample_rate_hz, 10000, 1e-6);
        assert_int_equal(info.n_gaps, 2);
        assert_int_equal(info.gaps[0].first_frame, 50);
        assert_int_equal(info.gaps[0].n_frames, 5);
        assert_int_equal(info.gaps[0].line, 52);   /* header, rows 0-49, then the jump */
        assert_int_equal(info.gaps[1].first_frame, 130);
        assert_int_equal(info.gaps[1].n_frames, 1);
        assert_int_equal(info.gaps[1].line, 127);
        for (size_t k = 0; k < n; k++) {
            tu_assert_close(v[2 * k], 0.25 * (double)k, 1e-9);
            tu_assert_close(v[2 * k + 1], 1.0 - 0.125 * (double)k, 1e-9);
        }
        assert_string_equal(info.rate_from, "the time column 't_ms' (in ms)");
        pl_source_csv.close(src);   /* info.gaps are the source's */
    }
}

/* Tab separators; a time column in us; columns that are neither LDV nor
 * time passed over; a trigger column whatever its case. */
static void test_tabs_and_us(void **state)
{
    fixture *f = *state;
    assert_int_equal(tu_write_file(f->csv,
        "# a logger\n"
        "Trig_V\ttime_us\ttemp_C\tv1_V\tv2_V\n"
        "0\t0\t21.5\t0.5\t-0.5\n"
        "0\t50\t21.5\t0.6\t-0.6\n"
        "5\t100\t21.6\t0.7\t-0.7\n"), 0);
    pl_csv_options o;
    pl_csv_options_init(&o);
    pl_source_info info;
    double v[6];
    size_t n = load_ok(f, &o, &info, v, 3);
    assert_int_equal(n, 3);
    tu_assert_close(info.sample_rate_hz, 20000, 1e-6);
    tu_assert_close(v[4], 0.7, 1e-12);
    tu_assert_close(v[5], -0.7, 1e-12);
}

/* Cells spelt every way the slow path reads (what the fast path takes and
 * what it hands back): each stored value is strtod()'s of the cell as
 * libcsv gives it (unquoted, trimmed; the file's mark read as '.'), bit
 * for bit; CRLF rows among LF ones. */
static const char *const spellings[] = {
    "1.5e-3", "-2E+2", "+0.5", "-0", "0", ".5", "5.", "+.25e1", "1e22",
    "-1e-22", "7e22", "1e-30", "0.12345678901234567890", "123456789012345678",
    "9007199254740993", "0x1p3", "\"0.75\"", " 0.5", "0.5 ", "  -3.25",
    "6.637522", "-3.734951", "0000012.5", "4.9e-3", "2.2250738585072014e-8",
};
enum { NSPELL = sizeof spellings / sizeof spellings[0] };

/* strtod() of a cell as libcsv hands it over: quotes and spaces gone,
 * mark read as '.'. */
static double cell_value(const char *cell, char mark)
{
    char buf[64];
    size_t n = 0;
    for (const char *p = cell; *p && n < sizeof buf - 1; p++)
        if (*p != '"' && *p != ' ' && *p != '\t')
            buf[n++] = *p == mark ? '.' : *p;
    buf[n] = '\0';
    return strtod(buf, NULL);
}

static void check_spellings(fixture *f, char delim, char mark, int stated)
{
    FILE *out = fopen(f->csv, "w");
    assert_non_null(out);
    fprintf(out, "t_s%ca_V%cb_V\n", delim, delim);
    for (int k = 0; k < NSPELL; k++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "%s", spellings[k]);
        snprintf(b, sizeof b, "%s", spellings[NSPELL - 1 - k]);
        for (char *p = a; mark != '.' && *p; p++)
            *p = *p == '.' ? mark : *p;
        for (char *p = b; mark != '.' && *p; p++)
            *p = *p == '.' ? mark : *p;
        fprintf(out, "%d%c%s%c%s%s", k, delim, a, delim, b, k % 2 ? "\r\n" : "\n");
    }
    fclose(out);
    pl_csv_options o;
    pl_csv_options_init(&o);
    o.decimal = stated ? mark : 0;
    pl_source_info info;
    double v[2 * NSPELL];
    size_t n = load_ok(f, &o, &info, v, NSPELL);
    assert_int_equal(n, NSPELL);
    for (int k = 0; k < NSPELL; k++) {
        double a = cell_value(spellings[k], '.');
        double b = cell_value(spellings[NSPELL - 1 - k], '.');
        if (memcmp(&v[2 * k], &a, sizeof a) || memcmp(&v[2 * k + 1], &b, sizeof b))
            fail_msg("row %d ('%s', '%s'): %.17g %.17g, strtod %.17g %.17g", k,
                     spellings[k], spellings[NSPELL - 1 - k], v[2 * k],
                     v[2 * k + 1], a, b);
    }
    assert_true(signbit(v[2 * 3]));   /* "-0" */
}

static void test_spellings(void **state)
{
    fixture *f = *state;
    check_spellings(f, ',', '.', 0);
    check_spellings(f, ';', ',', 1);
    check_spellings(f, ';', ',', 0);   /* the mark settled by row 1 */
    check_spellings(f, '\t', '.', 0);
}

/* Rows with a fault among good ones, where the fast path reads the rows
 * around them: the slow path's message, FILE:LINE and all. */
static void expect_row_error(fixture *f, const char *sep, const char *bad,
                             int crlf, const char *want)
{
    /* the good rows: 0.0k,0.5,-0.5 */
    char full[8192];
    size_t m = (size_t)snprintf(full, sizeof full, "t_s%sa_V%sb_V%s", sep, sep,
                                crlf ? "\r\n" : "\n");
    for (int k = 0; k < 50; k++) {
        char good[64];
        snprintf(good, sizeof good, "0.%04d%s0.5%s-0.5", k, sep, sep);
        m += (size_t)snprintf(full + m, sizeof full - m, "%s%s",
                              k == 40 ? bad : good, crlf ? "\r\n" : "\n");
    }
    pl_csv_options o;
    pl_csv_options_init(&o);
    expect_error(f, full, &o, want);
}

static void test_fast_refusals(void **state)
{
    fixture *f = *state;
    /* row 40 is line 42 */
    expect_row_error(f, ",", "0.0040,0.01O3,-0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '0.01O3'");
    expect_row_error(f, ",", "0.0040,0.01O3,-0.5", 1,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '0.01O3'");
    expect_row_error(f, ",", "0.0040,0.5,-0.5,", 0,
                     "42: expected 3 fields as in the header, got 4");
    expect_row_error(f, ",", "0.0040,0.5", 1,
                     "42: expected 3 fields as in the header, got 2");
    expect_row_error(f, ",", "0.0040,,-0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got ''");
    expect_row_error(f, ",", "0.0040,nan,-0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got 'nan'");
    expect_row_error(f, ",", "0.0040,0.5,inf", 0,
                     "42: column 2 (from 0, as --columns counts): expected a number, got 'inf'");
    expect_row_error(f, ",", "0.0040,-Infinity,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '-Infinity'");
    expect_row_error(f, ",", "0.0040,1e400,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '1e400'");
    expect_row_error(f, ",", "0.0040,1e-320,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '1e-320'");
    expect_row_error(f, ",", "0.0040,1e,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '1e'");
    expect_row_error(f, ",", "0.0040,+-1,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '+-1'");
    expect_row_error(f, ",", "0.0040,\"0.5x\",0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '0.5x'");
    expect_row_error(f, ",", "0.0040,0.5 x,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '0.5 x'");
    /* an unended quote runs to the end of the line */
    expect_row_error(f, ",", "0.0040,\"0.5,0.5", 0,
                     "42: expected 3 fields as in the header, got 2");
    /* a lone CR ends a line (old Mac loggers): the row is cut short */
    expect_row_error(f, ",", "0.0040,0.5\r0.5,0.5", 0,
                     "42: expected 3 fields as in the header, got 2");
    expect_row_error(f, ",", "0.0040,0.1234567890123456789012345678901234567890"
                     "1234567890123456789012345,0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got "
                     "'0.1234567890123456789012345678901234567890123456789012345678901'");
    expect_row_error(f, ",", "0.00435,0.5,0.5", 0,
                     "42: t_s = 0.00435 breaks the regular spacing of 0.0001 s (expected "
                     "0.004): it jumps 4.50 periods from the row before, not a whole "
                     "number, so the rows after it are on no frame of the recording's "
                     "clock (a logger restarted, or its rate changed): cut the file "
                     "there and import the parts");
    expect_row_error(f, ";", "0.0040;0,5;0.5", 0,
                     "42: column 1 (from 0, as --columns counts): expected a number, got '0,5'");
    /* rows without a mark leave it unsettled; the first mark settles it
     * and the other is refused */
    static const char *const unsettled[][2] = {
        {"0,5", "1.5"},
        {"0.5", "1,5"},
    };
    for (size_t i = 0; i < 2; i++) {
        char text[128], want[128];
        snprintf(text, sizeof text, "t_s;a_V;b_V\n0;1;2\n1;1;2\n2;%s;2\n3;%s;2\n",
                 unsettled[i][0], unsettled[i][1]);
        snprintf(want, sizeof want, "5: column 1 (from 0, as --columns counts): "
                 "expected a number, got '%s'", unsettled[i][1]);
        pl_csv_options o;
        pl_csv_options_init(&o);
        expect_error(f, text, &o, want);
    }
}

/* Lines longer than the reader's 1 MB blocks (a 3 MB comment, a 1.5 MB
 * cell in a column not read) and a last line without its newline. */
static void test_long_lines(void **state)
{
    fixture *f = *state;
    FILE *out = fopen(f->csv, "w");
    assert_non_null(out);
    fputs("t_s,note,a_V,b_V\n0,x,0.5,-0.5\n#", out);
    for (int i = 0; i < 3000000; i++)
        fputc('c', out);
    fputs("\n0.001,", out);
    for (int i = 0; i < 1500000; i++)
        fputc('n', out);
    fputs(",0.25,-0.25\n0.002,y,0.125,-0.125", out);
    fclose(out);
    pl_csv_options o;
    pl_csv_options_init(&o);
    pl_source_info info;
    double v[6];
    size_t n = load_ok(f, &o, &info, v, 3);
    assert_int_equal(n, 3);
    assert_true(v[2] == 0.25 && v[3] == -0.25 && v[4] == 0.125 && v[5] == -0.125);
    tu_assert_close(info.sample_rate_hz, 1000, 1e-6);
}

/* Writes header and rows (t = k ms, a = k/8, b = -k/8) with each line's
 * end from ends[] in turn ("\n", "\r\n", "\r"); with pad_to > 0, a
 * comment line first that puts row 0's line end at byte pad_to (the
 * reader's 1 MB block ends there). */
static void write_ends(const char *path, int rows, const char *const *ends,
                       int n_ends, long pad_to)
{
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    fputs("t_s,a_V,b_V", out);
    fputs(ends[0], out);
    if (pad_to > 0) {
        /* "# ", the padding, the line end, then row 0 */
        long pad = pad_to - ftell(out) - 2 - (long)strlen(ends[0]) -
                   (long)strlen("0.000,0,0");
        fputs("# ", out);
        for (long i = 0; i < pad; i++)
            fputc('p', out);
        fputs(ends[0], out);
    }
    for (int k = 0; k < rows; k++) {
        fprintf(out, "%.3f,%g,%g", k * 1e-3, k / 8.0, -k / 8.0);
        if (k == 0 && pad_to > 0)
            assert_int_equal(ftell(out), pad_to);
        fputs(ends[k % n_ends], out);
    }
    fclose(out);
}

/* Loads what write_ends() wrote and checks every frame and the rate. */
static void check_ends(fixture *f, int rows)
{
    pl_csv_options o;
    pl_csv_options_init(&o);
    pl_source_info info;
    double *v = malloc(2 * (size_t)rows * sizeof *v);
    size_t n = load_ok(f, &o, &info, v, (size_t)rows);
    assert_int_equal(n, rows);
    for (int k = 0; k < rows; k++)
        if (v[2 * k] != k / 8.0 || v[2 * k + 1] != -k / 8.0)
            fail_msg("frame %d: %g, %g", k, v[2 * k], v[2 * k + 1]);
    tu_assert_close(info.sample_rate_hz, 1000, 1e-6);
    free(v);
}

/* LF, CRLF, CR alone and all three mixed in one file (issue 31 D9: a CR
 * file was one line, "no data rows"; a mixed one "expected 3 fields, got
 * 6"); a CRLF and a lone CR cut by the reader's block; errors in a CR file
 * name the right line. */
static void test_line_ends(void **state)
{
    fixture *f = *state;
    static const char *const lf[] = {"\n"}, *const crlf[] = {"\r\n"},
                             *const cr[] = {"\r"}, *const mixed[] = {"\n", "\r\n", "\r"};
    const char *const *sets[] = {lf, crlf, cr, mixed};
    const int n_sets[] = {1, 1, 1, 3};
    for (int i = 0; i < 4; i++) {
        write_ends(f->csv, 3001, sets[i], n_sets[i], 0);
        check_ends(f, 3001);
        /* the first block's last byte is row 0's CR; then its LF, or row 1 */
        write_ends(f->csv, 50, sets[i], n_sets[i], 1L << 20);
        check_ends(f, 50);
        write_ends(f->csv, 50, sets[i], n_sets[i], (1L << 20) - 1);
        check_ends(f, 50);
    }
    pl_csv_options o;
    pl_csv_options_init(&o);
    expect_error(f, "t_s,a_V,b_V\r0,1,2\r0.001,x,2\r", &o,
                 "3: column 1 (from 0, as --columns counts): expected a number, got 'x'");
    expect_error(f, "t_s,a_V,b_V\r\n0,1,2\r0.001,1,2\n0.002,1,2,3\r\n", &o,
                 "4: expected 3 fields as in the header, got 4");
}

/* A time column under a name the reader does not take unasked: the
 * rate's error names it and --time-column; with that, it reads. */
static void test_time_hint(void **state)
{
    fixture *f = *state;
    static const char *const names[] = {"time", "t", "seconds", "Zeit [s]", "timestamp"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char text[256], want[512];
        snprintf(text, sizeof text, "%s,a_V,b_V\n0,1,2\n0.5,1,2\n1,1,2\n", names[i]);
        snprintf(want, sizeof want, " the sample rate is not known: column '%s' "
                 "looks like the time but only t_s or a name ending in _s, _ms "
                 "or _us is taken unasked: give --time-column '%s' (with "
                 "--time-unit ms or us unless it is in seconds), or --rate HZ",
                 names[i], names[i]);
        pl_csv_options o;
        pl_csv_options_init(&o);
        expect_error(f, text, &o, want);
        snprintf(o.time_column, sizeof o.time_column, "%s", names[i]);
        pl_source_info info;
        double v[6];
        assert_int_equal(load_ok(f, &o, &info, v, 3), 3);
        tu_assert_close(info.sample_rate_hz, 2, 1e-12);
    }
    pl_csv_options o;
    pl_csv_options_init(&o);
    expect_error(f, "x,a_V,b_V\n0,1,2\n", &o,
                 " the sample rate is not known: give --rate HZ, --time-column "
                 "NAME (no column named t_s or <name>_s, _ms, _us) or rate_hz= "
                 "metadata");
}

static void test_time_unit_names(void **state)
{
    (void)state;
    double s = 0;
    pl_err err = {0};
    assert_int_equal(pl_csv_time_unit("ms", &s, &err), PL_OK);
    tu_assert_close(s, 1e-3, 0);
    assert_int_equal(pl_csv_time_unit("us", &s, &err), PL_OK);
    tu_assert_close(s, 1e-6, 0);
    assert_int_equal(pl_csv_time_unit("min", &s, &err), PL_EINVAL);
    assert_string_equal(err.msg, "time unit 'min': expected s, ms or us");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_foreign_unaided, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_stated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rounded_stamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tabs_and_us, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spellings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fast_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_hint, setup, teardown),
        cmocka_unit_test(test_time_unit_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
