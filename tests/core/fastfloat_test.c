/* tests/core/fastfloat_test.c - the fast decimal parser against strtod():
 * wherever it vouches for a number, the same bits and the same end, on
 * edge cases (signs, a bare mark, 2^53, 10^22, >19 digits) and on a
 * million random decimals of up to 24 digits and exponents to +-40, with
 * '.' and ',' as the mark; everything strtod() reads that it does not
 * vouch for (inf, nan, hex, spaces, long or far numbers) returns NULL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/fastfloat.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks s against strtod with mark '.', and again with its '.' written
 * as ','; returns whether the parser vouched for it. */
static int agrees(const char *s)
{
    size_t n = strlen(s);
    double v = 0, want;
    const char *end = pl_fastfloat(s, s + n, '.', &v);
    if (!end)
        return 0;
    char *want_end;
    want = strtod(s, &want_end);
    if (memcmp(&v, &want, sizeof v) || end != want_end)
        fail_msg("'%s': %.17g (%zu chars) against strtod's %.17g (%zu)", s, v,
                 (size_t)(end - s), want, (size_t)(want_end - s));
    char comma[64];
    snprintf(comma, sizeof comma, "%s", s);
    for (char *q = comma; *q; q++)
        if (*q == '.')
            *q = ',';
    double c = 0;
    const char *cend = pl_fastfloat(comma, comma + n, ',', &c);
    assert_non_null(cend);
    assert_int_equal(cend - comma, end - s);
    assert_memory_equal(&c, &v, sizeof v);
    return 1;
}

static void edges_agree(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "0", "-0", "+0", "5.", ".5", "+1.5", "-2.25e3", "1e22", "1E-22",
        "0.002594", "-0.001678", "599.9999", "600.0000", "0.1", "0.3",
        "9007199254740992", "9007199254740992e-22", "123456789012345e7",
        "1.5.3", "1e5x", "7e+0", "0000000000000000001", "3.14159265358979",
        "-6.637522", "2.2250738585072e-8", "4.9e-3",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!agrees(ok[i]))
            fail_msg("'%s' not vouched for", ok[i]);
    /* signed zero kept */
    double v = 1;
    assert_non_null(pl_fastfloat("-0", "-0" + 2, '.', &v));
    assert_true(v == 0 && signbit(v));
}

static void others_left_to_strtod(void **state)
{
    (void)state;
    static const char *const no[] = {
        "", "+", "-", ".", "e5", "1e", "1e+", "1E-", "nan", "NAN", "inf",
        "-inf", "infinity", "0x10", "0x1p3", "0X1", "00x1", "1x", " 1", "\t1", "9007199254740993",
        "12345678901234567890", "1e23", "1e-23", "1.5e-400", "1e99999",
        "4.9406564584124654e-324", "1.7976931348623157e308", "\"1\"",
        "-.", "+e1", "0.00000000000000000001",
        "0e0046130461300", "1e99999999999999999999", "1e-00005",
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        double v = 0;
        if (pl_fastfloat(no[i], no[i] + strlen(no[i]), '.', &v))
            fail_msg("'%s' vouched for", no[i]);
    }
    /* the other mark ends the number, as it ends strtod's */
    double v = 0;
    const char *s = "1,5";
    assert_ptr_equal(pl_fastfloat(s, s + 3, '.', &v), s + 1);
    s = "1.5";
    assert_ptr_equal(pl_fastfloat(s, s + 3, ',', &v), s + 1);
    /* no mark at all when none is known */
    assert_ptr_equal(pl_fastfloat(s, s + 3, 0, &v), s + 1);
    /* end bounds the text */
    s = "12345";
    assert_ptr_equal(pl_fastfloat(s, s + 3, '.', &v), s + 3);
    assert_true(v == 123.0);
}

/* xorshift64*: the test's own generator, so runs repeat. */
static uint64_t next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * UINT64_C(2685821657736338717);
}

static void random_decimal(uint64_t *x, char *s)
{
    static const char *const signs[] = {"", "", "-", "+"};
    char *p = s + sprintf(s, "%s", signs[next(x) % 4]);
    int ni = (int)(next(x) % 13), nf = (int)(next(x) % 13);
    if (next(x) % 8 == 0)
        ni += 6;   /* past 19 digits and 2^53 now and then */
    for (int i = 0; i < ni; i++)
        *p++ = (char)('0' + next(x) % 10);
    if (nf || next(x) % 2)
        *p++ = '.';
    for (int i = 0; i < nf; i++)
        *p++ = (char)('0' + next(x) % 10);
    if (next(x) % 3 == 0)
        p += sprintf(p, "%s%s%d", next(x) % 2 ? "e" : "E",
                     signs[next(x) % 4], (int)(next(x) % 41));
    *p = '\0';
}

static void random_decimals_agree(void **state)
{
    (void)state;
    uint64_t x = UINT64_C(0x9e3779b97f4a7c15);
    long vouched = 0, n = 1000000;
    char s[80];
    for (long i = 0; i < n; i++) {
        random_decimal(&x, s);
        vouched += agrees(s);
    }
    /* most are in the fast path's reach: the test is not vacuous */
    assert_true(vouched > n / 2);
}

/* The CSV export's own numbers: %.4f and %.6f of random values. */
static void printed_values_agree(void **state)
{
    (void)state;
    uint64_t x = 42;
    char s[80];
    for (int i = 0; i < 200000; i++) {
        double v = ((double)(next(&x) >> 11) / 9007199254740992.0 - 0.5) * 20;
        snprintf(s, sizeof s, i % 2 ? "%.6f" : "%.4f", v);
        assert_true(agrees(s));
        snprintf(s, sizeof s, "%.15g", v);
        assert_true(agrees(s));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edges_agree),
        cmocka_unit_test(others_left_to_strtod),
        cmocka_unit_test(random_decimals_agree),
        cmocka_unit_test(printed_values_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
