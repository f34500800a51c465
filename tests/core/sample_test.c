/* tests/core/sample_test.c - the recording vocabulary: format and
 * calibration names round-trip with the schema's spelling, sizes match the
 * C types, and a channel's polynomial is evaluated about its origin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/sample.h"
#include "tests/util/testutil.h"

#include <stdint.h>
#include <string.h>

static void formats_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < PL_NFMT; i++) {
        pl_sample_format f = PL_NFMT;
        assert_int_equal(pl_sample_format_parse(pl_sample_format_name(i), &f),
                         PL_OK);
        assert_int_equal(f, i);
    }
    assert_string_equal(pl_sample_format_name(PL_FMT_S24_32), "s24_32");
    assert_string_equal(pl_sample_format_name(PL_FMT_U16), "u16");
}

static void format_sizes_match_the_c_types(void **state)
{
    (void)state;
    assert_int_equal(pl_sample_format_size(PL_FMT_S16), sizeof(int16_t));
    assert_int_equal(pl_sample_format_size(PL_FMT_U16), sizeof(uint16_t));
    assert_int_equal(pl_sample_format_size(PL_FMT_S24_32), sizeof(int32_t));
    assert_int_equal(pl_sample_format_size(PL_FMT_S32), sizeof(int32_t));
    assert_int_equal(pl_sample_format_size(PL_FMT_U32), sizeof(uint32_t));
    assert_int_equal(pl_sample_format_size(PL_FMT_F32), sizeof(float));
    assert_int_equal(pl_sample_format_size(PL_FMT_F64), sizeof(double));
}

static void unknown_names_are_refused(void **state)
{
    pl_sample_format f = PL_FMT_F64;
    pl_cal_kind k = PL_CAL_FILE;
    (void)state;
    assert_int_equal(pl_sample_format_parse("s8", &f), PL_EINVAL);
    assert_int_equal(pl_sample_format_parse("S16", &f), PL_EINVAL);
    assert_int_equal(pl_sample_format_parse(NULL, &f), PL_EINVAL);
    assert_int_equal(f, PL_FMT_F64); /* untouched on failure */
    assert_int_equal(pl_cal_kind_parse("softcal ", &k), PL_EINVAL);
    assert_int_equal(pl_cal_kind_parse(NULL, &k), PL_EINVAL);
    assert_int_equal(k, PL_CAL_FILE);
}

static void cal_kinds_round_trip(void **state)
{
    static const char *const names[PL_NCAL] = {"softcal", "hardcal", "linear",
                                               "file", "identity"};
    (void)state;
    for (int i = 0; i < PL_NCAL; i++) {
        pl_cal_kind k = PL_NCAL;
        assert_string_equal(pl_cal_kind_name(i), names[i]);
        assert_int_equal(pl_cal_kind_parse(names[i], &k), PL_OK);
        assert_int_equal(k, i);
    }
}

static void host_byte_order(void **state)
{
    const uint32_t word = 0x01020304u;
    unsigned char first;
    (void)state;
    memcpy(&first, &word, 1);
    assert_int_equal(pl_host_little_endian(), first == 0x04);
}

static void channel_polynomial_about_origin(void **state)
{
    pl_channel ch = {0};
    (void)state;
    /* a 16-bit bipolar +-10 V range: V = -10 + code * 20 / 65535 */
    ch.cal_order = 1;
    ch.cal_origin = 0.0;
    ch.cal_coef[0] = -10.0;
    ch.cal_coef[1] = 20.0 / 65535.0;
    tu_assert_close(pl_channel_volts(&ch, 0.0), -10.0, 1e-12);
    tu_assert_close(pl_channel_volts(&ch, 65535.0), 10.0, 1e-12);
    /* cubic about origin 100: 1 + 2x + 3x^2 + 4x^3 at x = 2 is 49 */
    ch.cal_order = 3;
    ch.cal_origin = 100.0;
    ch.cal_coef[0] = 1.0;
    ch.cal_coef[1] = 2.0;
    ch.cal_coef[2] = 3.0;
    ch.cal_coef[3] = 4.0;
    tu_assert_close(pl_channel_volts(&ch, 102.0), 49.0, 1e-12);
    /* order 0 ignores the code */
    ch.cal_order = 0;
    tu_assert_close(pl_channel_volts(&ch, 1e6), 1.0, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formats_round_trip),
        cmocka_unit_test(format_sizes_match_the_c_types),
        cmocka_unit_test(unknown_names_are_refused),
        cmocka_unit_test(cal_kinds_round_trip),
        cmocka_unit_test(host_byte_order),
        cmocka_unit_test(channel_polynomial_about_origin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
