/* tests/model/validate/answer_test.c - the flags of a fitted lambda0
 * (model/validate/answer.h) on the numbers issue 30 met: a fit held at
 * alpha + beta (6.370179 +- 0.000003 deg on a 34-edge prism, beta chosen
 * so that alpha + beta is that value), one whose interval spans the range
 * (7.4266 +- 779.2219 deg, sd, on a 22-edge prism), a saturated one (sd
 * NaN), and well-determined fits, fixture values, that must stay
 * unflagged (sd 0.00003 deg is a clean synthetic fit, not a bound). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/validate/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double DEG = M_PI / 180;

static void test_at_bound(void **state)
{
    (void)state;
    double beta = 6.370179 * DEG - M_PI / 34;
    assert_int_equal(pl_fit_flag_of(6.370179 * DEG, 0.000003 / 2.776 * DEG, 34, beta),
                     PL_FIT_FLAG_BOUND);
    /* 0.0005 deg below the bound: held there too */
    assert_int_equal(pl_fit_flag_of(6.3697 * DEG, 0.0001 * DEG, 34, beta), PL_FIT_FLAG_BOUND);
    /* sd NaN: the fit held lambda0 fixed */
    assert_int_equal(pl_fit_flag_of(5.3 * DEG, NAN, 22, 0.4079 * DEG), PL_FIT_FLAG_BOUND);
    /* at 0 */
    assert_int_equal(pl_fit_flag_of(0.0002 * DEG, 0.01 * DEG, 22, 0.4079 * DEG), PL_FIT_FLAG_BOUND);
    assert_string_equal(pl_fit_flag_words(PL_FIT_FLAG_BOUND), "at its bound");
}

static void test_undetermined(void **state)
{
    (void)state;
    assert_int_equal(pl_fit_flag_of(7.4266 * DEG, 779.2219 * DEG, 22, 0.3702 * DEG),
                     PL_FIT_FLAG_UNDETERMINED);
    /* an interval just wider than (0, alpha + beta) = 8.59 deg: 2 x 2.776 x 1.6 */
    assert_int_equal(pl_fit_flag_of(4.0 * DEG, 1.6 * DEG, 22, 0.4079 * DEG),
                     PL_FIT_FLAG_UNDETERMINED);
    assert_string_equal(pl_fit_flag_words(PL_FIT_FLAG_UNDETERMINED), "undetermined");
}

static void test_determined(void **state)
{
    (void)state;
    assert_int_equal(pl_fit_flag_of(7.2300 * DEG, 0.0003 * DEG, 22, 0.3702 * DEG), PL_FIT_FLAG_NONE);
    assert_int_equal(pl_fit_flag_of(7.1800 * DEG, 0.00003 * DEG, 22, 0.3702 * DEG), PL_FIT_FLAG_NONE);
    /* an interval narrower than the range: 2 x 2.776 x 1.5 < 8.59 */
    assert_int_equal(pl_fit_flag_of(4.0 * DEG, 1.5 * DEG, 22, 0.4079 * DEG), PL_FIT_FLAG_NONE);
    assert_string_equal(pl_fit_flag_words(PL_FIT_FLAG_NONE), "");
    /* a validation as recorded carries no flag whatever its sd */
    pl_validation v;
    memset(&v, 0, sizeof v);
    strcpy(v.fit, "recorded");
    v.lambda0_rad = 7.2 * DEG;
    v.lambda0_sd_rad = NAN;
    v.n_edges = 22;
    v.beta_rad = 0.3702 * DEG;
    assert_int_equal(pl_fit_flag_of_validation(&v), PL_FIT_FLAG_NONE);
    strcpy(v.fit, "fitted");
    assert_int_equal(pl_fit_flag_of_validation(&v), PL_FIT_FLAG_BOUND);
}

static void test_decimals(void **state)
{
    (void)state;
    assert_int_equal(pl_fit_decimals(0.00096), 5);
    assert_int_equal(pl_fit_decimals(0.0027), 4);
    assert_int_equal(pl_fit_decimals(2188.5), 2);
    assert_int_equal(pl_fit_decimals(NAN), 4);
}

/* A fitted validation of a steel-30 prism on the 0.3702 deg ramp with the
 * given rms L_p residual and lambda0 (deg, sd 0.001 deg). */
static pl_validation fitted(const char *law, double rms, double lambda0_deg)
{
    pl_validation v;
    memset(&v, 0, sizeof v);
    v.run_id = 3;
    snprintf(v.law, sizeof v.law, "%s", law);
    snprintf(v.fit, sizeof v.fit, "fitted");
    v.n_edges = 30;
    v.beta_rad = 0.3702 * M_PI / 180;
    v.lambda0_rad = lambda0_deg * M_PI / 180;
    v.lambda0_sd_rad = 0.001 * M_PI / 180;
    v.lambda0_sys_rad = NAN;
    v.rms_err_lp = rms;
    return v;
}

/* Issue 44: a law fits within half a slot and not at its bound; the
 * verdict names only a law that fits; neither fitting withholds it with
 * both figures (the fixture run 3's with its LDV scale 10x off). */
static void test_verdict_only_where_a_law_fits(void **state)
{
    (void)state;
    pl_validation line = fitted("line", 0.267, 5.322), plastic = fitted("plastic", 20.4, 5.3);
    char why[512];
    pl_verdict v = {.law = PL_VERDICT_LINE};
    assert_true(pl_law_fits(&line));
    assert_false(pl_law_fits(&plastic));
    assert_int_equal(pl_verdict_gate(&v, &line, &plastic, why, sizeof why), 0);
    assert_int_equal(v.law, PL_VERDICT_LINE);
    assert_string_equal(why, "");
    /* the t-test may not name the law that misses */
    v.law = PL_VERDICT_PLASTIC;
    assert_int_equal(pl_verdict_gate(&v, &line, &plastic, why, sizeof why), 0);
    assert_int_equal(v.law, PL_VERDICT_UNDECIDED);
    /* just past half a slot, a NaN rms, lambda0 at its bound: no fit */
    line.rms_err_lp = 0.501;
    assert_false(pl_law_fits(&line));
    line.rms_err_lp = NAN;
    assert_false(pl_law_fits(&line));
    line = fitted("line", 0.001, 0.0);
    assert_false(pl_law_fits(&line));
    /* neither: no law, both figures */
    line = fitted("line", 985.611, 5.322);
    plastic = fitted("plastic", 1007.993, 5.322);
    v.law = PL_VERDICT_LINE;
    assert_int_equal(pl_verdict_gate(&v, &line, &plastic, why, sizeof why), 1);
    assert_int_equal(v.law, PL_VERDICT_NONE);
    assert_non_null(strstr(why, "neither law fits run 3: rms 985.6 impacts (line) and rms "
                                "1008.0 impacts (plastic) against 0.5 allowed"));
    line = fitted("line", 3.151, 0.0);
    assert_int_equal(pl_verdict_gate(&v, &line, &plastic, why, sizeof why), 1);
    assert_non_null(strstr(why, "rms 3.151 impacts, lambda0 at its bound (line)"));
    /* untrusted quality withholds it; good and degraded do not */
    assert_int_equal(pl_quality_withholds(3, "suspect", why, sizeof why), 1);
    assert_non_null(strstr(why, "run 3: its data quality is suspect"));
    assert_int_equal(pl_quality_withholds(3, "refused", why, sizeof why), 1);
    assert_int_equal(pl_quality_withholds(3, "degraded", why, sizeof why), 0);
    assert_int_equal(pl_quality_withholds(3, "good", why, sizeof why), 0);
    assert_string_equal(why, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_at_bound),
        cmocka_unit_test(test_undetermined),
        cmocka_unit_test(test_determined),
        cmocka_unit_test(test_decimals),
        cmocka_unit_test(test_verdict_only_where_a_law_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
