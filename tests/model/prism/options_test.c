/* tests/model/prism/options_test.c - the prism model's options shared by
 * simulate and sim: what is missing without a catalogue (all named at
 * once), --prism and --ramp together, and numbers overriding what the catalogue filled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/prism/options.h"

#include <math.h>
#include <string.h>

/* Parses argv (NULL-terminated, the command's name first) into o. */
static pl_status parse(pl_model_options *o, char **argv, pl_err *err)
{
    pl_opt t[] = {PL_OPT_MODEL_PARAMS(o), PL_OPT_END()};
    int argc = 0, nargs, help;
    while (argv[argc])
        argc++;
    pl_model_options_init(o);
    if (pl_opt_parse(t, argc, argv, &nargs, &help, err) != PL_OK)
        return err->code;
    return pl_model_options_check(o, err);
}

#define ARGS(...) ((char *[]){"simulate", __VA_ARGS__, NULL})

static void numbers_or_a_catalogue(void **state)
{
    (void)state;
    pl_model_options o;
    pl_err err = {0};
    assert_int_equal(parse(&o, ARGS("--lambda0-deg", "5", "--h1", "0.02", "--h2",
                                    "0.01", "--N", "22", "--a0", "0.015"), &err),
                     PL_EINVAL);
    assert_string_equal(err.msg, "missing options --beta-deg, --mu-s (or give --prism and --ramp)");
    assert_int_equal(parse(&o, ARGS("--lambda0-deg", "5", "--h1", "0.02", "--h2",
                                    "0.01", "--prism", "steel-22"), &err), PL_EINVAL);
    assert_string_equal(err.msg, "--prism and --ramp go together");
    assert_int_equal(parse(&o, ARGS("--prism", "steel-22", "--ramp", "glass"), &err),
                     PL_EINVAL);
    assert_string_equal(err.msg, "missing options --lambda0-deg, --h1, --h2");
    /* all at once, the catalogue's numbers with the way round them */
    assert_int_equal(parse(&o, ARGS("--a0", "0.015"), &err), PL_EINVAL);
    assert_string_equal(err.msg, "missing options --N, --beta-deg, --mu-s (or "
                        "give --prism and --ramp), --lambda0-deg, --h1, --h2");
    assert_int_equal(parse(&o, ARGS("--prism", "steel-22", "--ramp", "glass",
                                    "--lambda0-deg", "5", "--h2", "0.01"), &err),
                     PL_EINVAL);
    assert_string_equal(err.msg, "missing option --h1");
    assert_int_equal(parse(&o, ARGS("--lambda0-deg", "5", "--h1", "0.02", "--h2",
                                    "-0.01", "--prism", "p", "--ramp", "r"), &err),
                     PL_EINVAL);
    assert_string_equal(err.msg, "option '--h2': expected a value in [0, 10], got -0.01");
}

static void numbers_override_the_catalogue(void **state)
{
    (void)state;
    pl_model_options o;
    pl_model_params p;
    pl_err err = {0};
    assert_int_equal(parse(&o, ARGS("--prism", "p", "--ramp", "r", "--lambda0-deg",
                                    "5.5", "--h1", "0.02", "--h2", "0.01",
                                    "--beta-deg", "0.5", "--law", "plastic"), &err),
                     PL_OK);
    pl_model_params_default(&p);
    p.mu = 0.3;     /* as a catalogue would have filled it */
    p.N = 30;
    pl_model_options_apply(&o, &p);
    assert_int_equal(p.N, 30);
    assert_true(p.beta == 0.5 * (M_PI / 180.0));
    assert_true(p.lambda0 == 5.5 * (M_PI / 180.0));
    assert_true(p.mu == 0.3);
    assert_true(p.h1 == 0.02 && p.h2 == 0.01);
    assert_int_equal(p.law, PL_LAW_PLASTIC);
    /* without a catalogue the slip coefficient follows mu-s */
    assert_int_equal(parse(&o, ARGS("--N", "6", "--a0", "0.02", "--beta-deg", "10",
                                    "--mu-s", "0.5", "--lambda0-deg", "20", "--h1",
                                    "0.01", "--h2", "0.02", "--ramp-length", "0.5"), &err),
                     PL_OK);
    pl_model_params_default(&p);
    pl_model_options_apply(&o, &p);
    assert_int_equal(p.N, 6);
    assert_true(p.a0 == 0.02 && p.mu_s == 0.5 && p.ramp_length == 0.5);
    assert_true(isnan(p.mu));
    assert_int_equal(p.law, PL_LAW_LINE);
    assert_int_equal(pl_model_params_check(&p, &err), PL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers_or_a_catalogue),
        cmocka_unit_test(numbers_override_the_catalogue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
