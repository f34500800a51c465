/* tests/core/plot_map_test.c - a category map drawn into PNG by PLplot's
 * cairo driver: a real PNG of the asked size (its header read back); a
 * map without cells refused; an unwritable path named.  (The dimer
 * report's test shows the maps in Chromium.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PLplot's cairo driver leaves fontconfig's caches (process-wide, freed
 * at no exit) behind: LeakSanitizer's suppressions for that library
 * alone, so that a leak of ours still fails the sanitizer run. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}

static unsigned be32(const unsigned char *p)
{
    return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

static void test_map_png(void **state)
{
    (void)state;
    /* two categories in halves, one cell without a category */
    int cell[4 * 3] = {0, 0, 1, 1,
                       0, 0, 1, 1,
                       0, -1, 1, 1};
    static const char *const names[2] = {"rest", "jump"};
    double mx[1] = {0.5}, my[1] = {1.0};
    pl_plot_map m = {"a map", "theta0 (deg)", "h0 (mm)", 0, 3, 0, 2, 4, 3, cell,
                     names, 2, mx, my, 1};
    char dir[] = "/tmp/plot_map_testXXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/map.png", dir);
    pl_err err = {0};
    assert_int_equal(pl_plot_map_png(path, 640, 480, &m, &err), PL_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char head[24];
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
    assert_memory_equal(head + 12, "IHDR", 4);
    assert_int_equal(be32(head + 16), 640);
    assert_int_equal(be32(head + 20), 480);
    assert_true(size > 2000);
    unlink(path);

    m.nx = 0;
    assert_int_equal(pl_plot_map_png(path, 640, 480, &m, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "cells"));
    m.nx = 4;
    snprintf(path, sizeof path, "%s/no/such/dir/map.png", dir);
    assert_int_not_equal(pl_plot_map_png(path, 640, 480, &m, &err), PL_OK);
    assert_non_null(strstr(err.msg, "no/such/dir"));
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_map_png)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
