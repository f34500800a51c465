/* tests/core/numtext_test.c - core/numtext.c: the shortest text that reads
 * back as the same double, on the numbers of issue 30 (0.0199 printed as
 * 0.019900000000000001, 90 recorded as 9e+01), on numbers that need 16
 * and 17 digits, and on a hundred thousand random doubles (every text
 * reads back bit for bit, and no shorter precision of the three would). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/numtext.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void typed_numbers_read_as_typed(void **state)
{
    (void)state;
    char b[PL_NUM_TEXT_SIZE];
    static const char *const typed[] = {"0.0199", "0.0116", "90", "7.2",
        "0.025", "10000", "1e-05", "123456789012345", "-3.5", "0", "1e+300"};
    for (size_t i = 0; i < sizeof typed / sizeof *typed; i++)
        assert_string_equal(pl_num_text(b, sizeof b, strtod(typed[i], NULL)),
                            typed[i]);
}

static void long_numbers_take_the_digits_they_need(void **state)
{
    (void)state;
    char b[PL_NUM_TEXT_SIZE];
    assert_string_equal(pl_num_text(b, sizeof b, 0.1 + 0.2),
                        "0.30000000000000004");           /* 17 digits */
    assert_string_equal(pl_num_text(b, sizeof b, 1.0 / 3), "0.3333333333333333");
    assert_string_equal(pl_num_text(b, sizeof b, M_PI), "3.141592653589793");
    assert_string_equal(pl_num_text(b, sizeof b, NAN), "nan");
    assert_string_equal(pl_num_text(b, sizeof b, -INFINITY), "-inf");
}

static void degrees_read_back_to_the_stored_radians(void **state)
{
    (void)state;
    char b[PL_NUM_TEXT_SIZE];
    static const char *const typed[] = {"7.2", "5.322", "90", "4.8937", "0.5"};
    for (size_t i = 0; i < sizeof typed / sizeof *typed; i++) {
        double rad = strtod(typed[i], NULL) * M_PI / 180.0;
        assert_string_equal(pl_deg_text(b, sizeof b, rad), typed[i]);
        rad = strtod(typed[i], NULL) * (M_PI / 180.0);
        assert_string_equal(pl_deg_text(b, sizeof b, rad), typed[i]);
    }
}

/* xorshift64*: the same draws every run */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static void random_doubles_round_trip_shortest(void **state)
{
    (void)state;
    uint64_t seed = 88172645463325252ULL;
    char b[PL_NUM_TEXT_SIZE], shorter[40];
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = next(&seed);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        pl_num_text(b, sizeof b, v);
        if (strtod(b, NULL) != v)
            fail_msg("%a printed as %s", v, b);
        /* no shorter of the three precisions reads back */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(shorter, sizeof shorter, "%.*g", prec, v);
            if (strtod(shorter, NULL) == v) {
                assert_string_equal(shorter, b);
                break;
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(typed_numbers_read_as_typed),
        cmocka_unit_test(long_numbers_take_the_digits_they_need),
        cmocka_unit_test(degrees_read_back_to_the_stored_radians),
        cmocka_unit_test(random_doubles_round_trip_shortest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
