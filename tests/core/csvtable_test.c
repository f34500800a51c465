/* tests/core/csvtable_test.c - the small CSV reader: quoted fields
 * (commas, doubled quotes, line breaks inside), what is and is not a
 * delimiter, comments and blank lines, physical line numbers in every
 * error, empty and header-only files, and the typed field readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/csvtable.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *csv;
    pl_csvtable *t;
    pl_err err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("csvtable");
    f->csv = tu_path(f->dir, "in.csv");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pl_csvtable_free(f->t);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->csv);
    free(f);
    return 0;
}

/* Writes text to the fixture's file and reads it; returns the status. */
static pl_status read_text(fixture *f, const char *text)
{
    pl_csvtable_free(f->t);
    f->t = NULL;
    assert_int_equal(tu_write_file(f->csv, text), 0);
    return pl_csvtable_read(&f->t, f->csv, &f->err);
}

static void read_ok(fixture *f, const char *text)
{
    if (read_text(f, text) != PL_OK)
        fail_msg("read: %s", f->err.msg);
}

/* The text of row r, column name. */
static const char *cell(const fixture *f, int r, const char *name)
{
    return pl_csvtable_text(f->t, r, pl_csvtable_column(f->t, name));
}

/* err's message must begin with "FILE:LINE: " and contain what. */
static void assert_error_at(const fixture *f, long line, const char *what)
{
    char want[600];
    snprintf(want, sizeof want, "%s:%ld: ", f->csv, line);
    if (strncmp(f->err.msg, want, strlen(want)) != 0 || !strstr(f->err.msg, what))
        fail_msg("error '%s', expected '%s...%s'", f->err.msg, want, what);
}

static void quoted_fields(void **state)
{
    fixture *f = *state;
    read_ok(f, "name,note,value\n"
               "\"a,b\",\"say \"\"hi\"\"\",1\n"
               "plain,\"\",2\n"
               "\"two\nlines\",x,3\n"
               "last,\"#not a comment\",4\n");
    assert_int_equal(pl_csvtable_rows(f->t), 4);
    assert_string_equal(cell(f, 0, "name"), "a,b");
    assert_string_equal(cell(f, 0, "note"), "say \"hi\"");
    assert_string_equal(cell(f, 1, "note"), "");
    assert_string_equal(cell(f, 2, "name"), "two\nlines");
    assert_string_equal(cell(f, 2, "value"), "3");
    assert_string_equal(cell(f, 3, "note"), "#not a comment");
    /* physical lines; a row with a quoted line break is numbered by the
     * line it starts on */
    assert_int_equal(pl_csvtable_line(f->t, 0), 2);
    assert_int_equal(pl_csvtable_line(f->t, 1), 3);
    assert_int_equal(pl_csvtable_line(f->t, 2), 4);
    assert_int_equal(pl_csvtable_line(f->t, 3), 6);
}

/* Only the comma separates; ';' and tabs are text.  Spaces around an
 * unquoted field are trimmed, inside quotes they stay; CRLF is a line end. */
static void delimiters_and_spaces(void **state)
{
    fixture *f = *state;
    read_ok(f, "a,b\r\n"
               "x;y,1\t2\r\n"
               "  padded  ,\"  kept  \"\r\n");
    assert_int_equal(pl_csvtable_rows(f->t), 2);
    assert_string_equal(cell(f, 0, "a"), "x;y");
    assert_string_equal(cell(f, 0, "b"), "1\t2");
    assert_string_equal(cell(f, 1, "a"), "padded");
    assert_string_equal(cell(f, 1, "b"), "  kept  ");
    assert_int_equal(pl_csvtable_line(f->t, 1), 3);
}

static void comments_and_blank_lines_keep_line_numbers(void **state)
{
    fixture *f = *state;
    read_ok(f, "# the catalogue, with a quote \" in prose\n"
               "\n"
               "name,n\n"
               "# another \"comment\n"
               "p1,22\n"
               "\n"
               ",\n"
               "p2,30\n");
    assert_int_equal(pl_csvtable_rows(f->t), 2);   /* ",": a blank row */
    assert_string_equal(cell(f, 0, "name"), "p1");
    assert_int_equal(pl_csvtable_line(f->t, 0), 5);
    assert_string_equal(cell(f, 1, "name"), "p2");
    assert_int_equal(pl_csvtable_line(f->t, 1), 8);
    /* the header's line too */
    assert_int_equal(pl_csvtable_require(f->t, "mass", &f->err), PL_EFORMAT);
    assert_error_at(f, 3, "missing column 'mass'");
}

static void empty_and_header_only_files(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_text(f, ""), PL_EFORMAT);
    assert_non_null(strstr(f->err.msg, f->csv));
    assert_non_null(strstr(f->err.msg, "empty file"));
    assert_null(f->t);
    assert_int_equal(read_text(f, "# only a comment\n\n"), PL_EFORMAT);
    assert_non_null(strstr(f->err.msg, "empty file"));
    read_ok(f, "name,n\n");
    assert_int_equal(pl_csvtable_rows(f->t), 0);
    assert_int_equal(pl_csvtable_column(f->t, "n"), 1);
    read_ok(f, "name,n");                          /* no final newline */
    assert_int_equal(pl_csvtable_column(f->t, "n"), 1);
}

static void malformed_files_name_the_line(void **state)
{
    fixture *f = *state;
    assert_int_equal(read_text(f, "a,b\n1,2\n3,4,5\n"), PL_EFORMAT);
    assert_error_at(f, 3, "3 fields, the header names only 2");
    assert_int_equal(read_text(f, "a,b\n1,2\n\"open,3\n4,5\n"), PL_EFORMAT);
    assert_non_null(strstr(f->err.msg, f->csv));
    assert_int_equal(read_text(f, "a,b\n1,2\nx\"y\",3\n"), PL_EFORMAT);
    assert_error_at(f, 3, "");
    char *missing = tu_path(f->dir, "nothing.csv");
    assert_int_equal(pl_csvtable_read(&f->t, missing, &f->err), PL_EIO);
    assert_non_null(strstr(f->err.msg, missing));
    free(missing);
}

static void short_rows_and_unknown_columns(void **state)
{
    fixture *f = *state;
    static const char *const known[] = {"name", "n", "mass"};
    read_ok(f, "name,n,mass\np1\n");
    assert_string_equal(cell(f, 0, "name"), "p1");
    assert_string_equal(cell(f, 0, "mass"), "");     /* missing: "" */
    assert_string_equal(pl_csvtable_text(f->t, 0, 7), "");
    assert_string_equal(pl_csvtable_text(f->t, 5, 0), "");
    assert_int_equal(pl_csvtable_column(f->t, "Name"), -1);
    assert_int_equal(pl_csvtable_check_columns(f->t, known, 3, &f->err), PL_OK);
    read_ok(f, "name,nn\np1,2\n");
    assert_int_equal(pl_csvtable_check_columns(f->t, known, 3, &f->err), PL_EFORMAT);
    assert_error_at(f, 1, "unknown column 'nn'");
    assert_string_equal(pl_csvtable_path(f->t), f->csv);
}

static void numbers_with_ranges_and_defaults(void **state)
{
    fixture *f = *state;
    double v = 0;
    long n = 0;
    read_ok(f, "x,k\n"
               "2.5e-3,22\n"
               ",-4\n"
               "abc,2.0\n"
               "inf,99999999999999999999\n"
               "7,40\n");
    assert_int_equal(pl_csvtable_double(f->t, 0, "x", 0, 1, 0, 0, &v, &f->err), PL_OK);
    tu_assert_close(v, 2.5e-3, 0);
    assert_int_equal(pl_csvtable_long(f->t, 0, "k", 3, 100, &n, &f->err), PL_OK);
    assert_int_equal(n, 22);
    /* empty: the default when allowed, else an error on line 3 */
    assert_int_equal(pl_csvtable_double(f->t, 1, "x", 0, 1, 1, NAN, &v, &f->err), PL_OK);
    assert_true(isnan(v));
    assert_int_equal(pl_csvtable_double(f->t, 1, "x", 0, 1, 0, 0, &v, &f->err), PL_EFORMAT);
    assert_error_at(f, 3, "column 'x': expected a number, got nothing");
    assert_int_equal(pl_csvtable_long(f->t, 1, "k", 3, 100, &n, &f->err), PL_EFORMAT);
    assert_error_at(f, 3, "column 'k': expected an integer in [3, 100], got -4");
    assert_int_equal(pl_csvtable_double(f->t, 2, "x", 0, 1, 0, 0, &v, &f->err), PL_EFORMAT);
    assert_error_at(f, 4, "column 'x': expected a number, got 'abc'");
    assert_int_equal(pl_csvtable_long(f->t, 2, "k", 3, 100, &n, &f->err), PL_EFORMAT);
    assert_error_at(f, 4, "column 'k': expected an integer, got '2.0'");
    assert_int_equal(pl_csvtable_double(f->t, 3, "x", -1e300, 1e300, 0, 0, &v, &f->err), PL_EFORMAT);
    assert_error_at(f, 5, "got 'inf'");
    assert_int_equal(pl_csvtable_long(f->t, 3, "k", 0, 100, &n, &f->err), PL_EFORMAT);
    assert_error_at(f, 5, "expected an integer, got '99999999999999999999'");
    assert_int_equal(pl_csvtable_double(f->t, 4, "x", 0, 1, 0, 0, &v, &f->err), PL_EFORMAT);
    assert_error_at(f, 6, "column 'x': expected a value in [0, 1], got 7");
    assert_true(isnan(v));   /* no failure wrote it */
}

static void text_fields(void **state)
{
    fixture *f = *state;
    char out[8];
    read_ok(f, "name,material\n"
               "short,steel\n"
               "much-too-long,\n");
    assert_int_equal(pl_csvtable_string(f->t, 0, "name", 1, out, sizeof out, &f->err), PL_OK);
    assert_string_equal(out, "short");
    assert_int_equal(pl_csvtable_string(f->t, 1, "name", 1, out, sizeof out, &f->err), PL_EFORMAT);
    assert_error_at(f, 3, "column 'name': expected at most 7 characters, got 13");
    assert_int_equal(pl_csvtable_string(f->t, 1, "material", 0, out, sizeof out, &f->err), PL_OK);
    assert_string_equal(out, "");
    assert_int_equal(pl_csvtable_string(f->t, 1, "material", 1, out, sizeof out, &f->err), PL_EFORMAT);
    assert_error_at(f, 3, "column 'material': expected text, got nothing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(quoted_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(delimiters_and_spaces, setup, teardown),
        cmocka_unit_test_setup_teardown(comments_and_blank_lines_keep_line_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_and_header_only_files, setup, teardown),
        cmocka_unit_test_setup_teardown(malformed_files_name_the_line, setup, teardown),
        cmocka_unit_test_setup_teardown(short_rows_and_unknown_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(numbers_with_ranges_and_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(text_fields, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
