/* tests/acquire/rigconf_test.c - the rig's INI file, read from real files:
 * the defaults, every key of every section, values read over what is set
 * already, and each kind of mistake refused with FILE:LINE, the section,
 * the key and what was expected (the first bad line when there are
 * several). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/rigconf.h"
#include "tests/util/testutil.h"

#include <comedilib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *ini;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("rigconf");
    f->ini = tu_path(f->dir, "rig.ini");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->ini);
    free(f);
    return 0;
}

static void test_defaults(void **state)
{
    (void)state;
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    assert_string_equal(rc.source, "comedi");
    assert_string_equal(rc.comedi.device, "/dev/comedi0");
    assert_int_equal(rc.comedi.subdevice, -1);
    assert_int_equal(rc.comedi.n_channels, 2);
    assert_int_equal(rc.comedi.channels[0], 0);
    assert_int_equal(rc.comedi.channels[1], 1);
    assert_int_equal(rc.comedi.aref, AREF_GROUND);
    tu_assert_close(rc.comedi.rate_hz, 10000, 0);
    assert_int_equal(rc.beams.beam_sign[0], 1);
    assert_int_equal(rc.beams.beam_sign[1], -1);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[1], 0.025, 0);
    assert_true(isnan(rc.beams.beam_height_m[0]));
    assert_string_equal(rc.db, "prismlab.db");
    assert_int_equal(rc.sync_full, 0);
    tu_assert_close(rc.commit_interval_s, 0.1, 0);
    assert_true(isnan(rc.lambda0_deg));
    assert_true(isnan(rc.sim.lambda0_deg));
    assert_true(isnan(rc.sim.ramp_length_m));
    assert_true(isnan(rc.sim.motion_s));
    tu_assert_close(rc.duration_s, 0, 0);
    /* the decoders' delay: not known unless the lab says */
    assert_true(rc.beams.decoder_delay_s[0] == 0 && rc.beams.decoder_delay_s[1] == 0);
}

/* [beams] decoder_delay_s (issue 33): one value for both beams' decoders,
 * or one each; either way read to the bit, and the last line wins. */
static void test_decoder_delay(void **state)
{
    fixture *f = *state;
    pl_rigconf rc;
    pl_err err = {0};
    pl_rigconf_init(&rc);
    assert_int_equal(tu_write_file(f->ini, "[beams]\ndecoder_delay_s = 1.061e-4\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_true(rc.beams.decoder_delay_s[0] == 1.061e-4);
    assert_true(rc.beams.decoder_delay_s[1] == 1.061e-4);
    assert_true(rc.beams.decoder_delay_s[2] == 1.061e-4);
    pl_rigconf_init(&rc);
    assert_int_equal(tu_write_file(f->ini, "[beams]\nh1_m = 0.0199\n"
                                   "decoder_delay_s = 53e-6, 0.000106\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_true(rc.beams.decoder_delay_s[0] == 53e-6);
    assert_true(rc.beams.decoder_delay_s[1] == 0.000106);
    assert_true(rc.beams.decoder_delay_s[2] == 0);
    assert_true(rc.beams.beam_height_m[0] == 0.0199);
    /* the largest taken */
    assert_int_equal(tu_write_file(f->ini, "[beams]\ndecoder_delay_s = 0.1\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_true(rc.beams.decoder_delay_s[1] == 0.1);
}

/* docs/acquire.md's example, every key. */
static void test_every_key(void **state)
{
    fixture *f = *state;
    assert_int_equal(tu_write_file(f->ini,
        "; rig.ini\n"
        "[daq]\n"
        "source = sim\n"
        "device = /dev/comedi3\n"
        "subdevice = 4\n"
        "channels = 2, 5,7\n"
        "range = 1\n"
        "aref = diff\n"
        "rate_hz = 20000\n"
        "buffer_bytes = 1048576\n"
        "[beams]\n"
        "h1_m = 0.0199\n"
        "h2_m = 0.0116\n"
        "sign1 = -1\n"
        "sign2 = 1\n"
        "ldv_scale_mps_per_v = 0.05\n"
        "[store]\n"
        "db = lab.db\n"
        "sync = full\n"
        "commit_interval_s = 0.25\n"
        "[run]\n"
        "prism = steel-22\n"
        "ramp = glass-0.4079\n"
        "experiment = fig6-repeat\n"
        "lambda0_deg = 7.2\n"
        "duration_s = 12\n"
        "[sim]\n"
        "prism = steel-30\n"
        "ramp = steel-0.3792\n"
        "lambda0_deg = 5.3\n"
        "seed = 4\n"
        "paced = 1\n"
        "ramp_length_m = 0\n"
        "motion_s = 30\n"
        "[pipeline]\n"
        "after_run = process, validate\n"), 0);
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    pl_err err = {0};
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_string_equal(rc.source, "sim");
    assert_string_equal(rc.comedi.device, "/dev/comedi3");
    assert_int_equal(rc.comedi.subdevice, 4);
    assert_int_equal(rc.comedi.n_channels, 3);
    assert_int_equal(rc.comedi.channels[0], 2);
    assert_int_equal(rc.comedi.channels[1], 5);
    assert_int_equal(rc.comedi.channels[2], 7);
    assert_int_equal(rc.comedi.range, 1);
    assert_int_equal(rc.comedi.aref, AREF_DIFF);
    tu_assert_close(rc.comedi.rate_hz, 20000, 0);
    assert_int_equal(rc.comedi.buffer_bytes, 1048576);
    tu_assert_close(rc.beams.beam_height_m[0], 0.0199, 0);
    tu_assert_close(rc.beams.beam_height_m[1], 0.0116, 0);
    assert_int_equal(rc.beams.beam_sign[0], -1);
    assert_int_equal(rc.beams.beam_sign[1], 1);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[0], 0.05, 0);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[1], 0.05, 0);
    assert_string_equal(rc.db, "lab.db");
    assert_int_equal(rc.sync_full, 1);
    tu_assert_close(rc.commit_interval_s, 0.25, 0);
    assert_string_equal(rc.prism, "steel-22");
    assert_string_equal(rc.ramp, "glass-0.4079");
    assert_string_equal(rc.experiment, "fig6-repeat");
    tu_assert_close(rc.lambda0_deg, 7.2, 0);
    tu_assert_close(rc.duration_s, 12, 0);
    assert_string_equal(rc.sim.prism, "steel-30");
    assert_string_equal(rc.sim.ramp, "steel-0.3792");
    tu_assert_close(rc.sim.lambda0_deg, 5.3, 0);
    assert_int_equal(rc.sim.seed, 4);
    assert_int_equal(rc.sim.paced, 1);
    tu_assert_close(rc.sim.ramp_length_m, 0, 0);
    tu_assert_close(rc.sim.motion_s, 30, 0);
    assert_int_equal(rc.after_run, PL_AFTER_PROCESS | PL_AFTER_VALIDATE);
}

/* [pipeline] after_run: off by default, process alone, none. */
static void test_after_run(void **state)
{
    fixture *f = *state;
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    assert_int_equal(rc.after_run, 0);
    pl_err err = {0};
    assert_int_equal(tu_write_file(f->ini, "[pipeline]\nafter_run = process\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_int_equal(rc.after_run, PL_AFTER_PROCESS);
    assert_int_equal(tu_write_file(f->ini, "[pipeline]\nafter_run = process,validate\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_int_equal(rc.after_run, PL_AFTER_PROCESS | PL_AFTER_VALIDATE);
    assert_int_equal(tu_write_file(f->ini, "[pipeline]\nafter_run = none\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_int_equal(rc.after_run, 0);
    /* the fit: validate's default unless named */
    assert_string_equal(rc.fit, "");
    assert_int_equal(tu_write_file(f->ini, "[pipeline]\nfit = lambda0,t0\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_string_equal(rc.fit, "lambda0,t0");
}

/* Two vibrometers: [beams] ldv_scale_mps_per_v = beam 1's, beam 2's;
 * one value is both beams'. */
static void test_two_scales(void **state)
{
    fixture *f = *state;
    pl_rigconf rc;
    pl_err err = {0};
    pl_rigconf_init(&rc);
    assert_int_equal(tu_write_file(f->ini, "[beams]\nldv_scale_mps_per_v = 0.025, 0.05\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[0], 0.025, 0);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[1], 0.05, 0);
    assert_int_equal(tu_write_file(f->ini, "[beams]\nldv_scale_mps_per_v = 0.1\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[0], 0.1, 0);
    tu_assert_close(rc.beams.ldv_scale_mps_per_v[1], 0.1, 0);
}

/* A file sets only what it names: the rest keeps what was there. */
static void test_read_over(void **state)
{
    fixture *f = *state;
    assert_int_equal(tu_write_file(f->ini, "[beams]\nh1_m = 0.02\n"), 0);
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    rc.comedi.rate_hz = 5000;
    snprintf(rc.db, sizeof rc.db, "other.db");
    pl_err err = {0};
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    tu_assert_close(rc.beams.beam_height_m[0], 0.02, 0);
    assert_true(isnan(rc.beams.beam_height_m[1]));
    tu_assert_close(rc.comedi.rate_hz, 5000, 0);
    assert_string_equal(rc.db, "other.db");
}

/* Reads text as the file and expects the message "<file>:<want>". */
static void expect_error(fixture *f, const char *text, const char *want)
{
    assert_int_equal(tu_write_file(f->ini, text), 0);
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    pl_err err = {0};
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_EFORMAT);
    char full[1400];
    snprintf(full, sizeof full, "%s:%s", f->ini, want);
    if (strcmp(err.msg, full))
        fail_msg("got '%s', expected '%s'", err.msg, full);
}

/* [live]: the search on by default at a fifth of a core; off; bad values
 * named. */
static void test_live(void **state)
{
    fixture *f = *state;
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    assert_int_equal(rc.live.search, 1);
    assert_true(rc.live.cpu_share == 0.2);
    pl_err err = {0};
    assert_int_equal(tu_write_file(f->ini, "[live]\nsearch = off\ncpu_share = 0.5\n"), 0);
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_OK);
    assert_int_equal(rc.live.search, 0);
    assert_true(rc.live.cpu_share == 0.5);
    expect_error(f, "[live]\nsearch = maybe\n",
                 "2: [live] search: expected on or off, got 'maybe'");
    expect_error(f, "[live]\ncpu_share = 2\n",
                 "2: [live] cpu_share: expected a number in [0.01, 1], got '2'");
    expect_error(f, "[live]\nshare = 0.1\n", "2: [live] share: unknown key");
}

static void test_mistakes(void **state)
{
    fixture *f = *state;
    expect_error(f, "[daq]\nrate_hz = 10000\n; comment\nchanels = 0,1\n",
                 "4: [daq] chanels: unknown key");
    expect_error(f, "[dac]\nrate_hz = 1\n",
                 "2: unknown section [dac] (expected daq, beams, store, run, sim, pipeline or live)");
    expect_error(f, "[pipeline]\nafter_run = process, report\n",
                 "2: [pipeline] after_run: expected process, validate or none, got 'report'");
    expect_error(f, "[pipeline]\nafter_run = validate\n",
                 "2: [pipeline] after_run: validate needs the processed run: "
                 "write 'process, validate'");
    expect_error(f, "[pipeline]\nafter_run = validate, process\n",
                 "2: [pipeline] after_run: process comes before validate");
    expect_error(f, "[pipeline]\nafter_run = none, process\n",
                 "2: [pipeline] after_run: none with steps ('none, process')");
    expect_error(f, "[pipeline]\nbefore_run = process\n", "2: [pipeline] before_run: unknown key");
    expect_error(f, "[daq]\nsource = ni\n",
                 "2: [daq] source: expected comedi or sim, got 'ni'");
    expect_error(f, "[daq]\nrate_hz = fast\n",
                 "2: [daq] rate_hz: expected a number in [1, 1e+07], got 'fast'");
    expect_error(f, "[daq]\nsubdevice = 3.5x\n",
                 "2: [daq] subdevice: expected a number in [-1, 255], got '3.5x'");
    expect_error(f, "[daq]\naref = floating\n",
                 "2: [daq] aref: expected ground, common, diff or other, got 'floating'");
    expect_error(f, "[daq]\nchannels = 0,300\n",
                 "2: [daq] channels: expected a number in [0, 255], got '300'");
    expect_error(f, "[daq]\nchannels = 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n",
                 "2: [daq] channels: at most 16");
    expect_error(f, "[beams]\nh1_m = 11\n",
                 "2: [beams] h1_m: expected a number in [0, 10], got '11'");
    expect_error(f, "[beams]\nsign2 = 0\n",
                 "2: [beams] sign2: expected +1 or -1, got '0'");
    expect_error(f, "[beams]\nldv_scale_mps_per_v = 0\n",
                 "2: [beams] ldv_scale_mps_per_v: '0': value 1 is 0 m/s/V, expected a "
                 "scale in (0, 1000] m/s/V");
    expect_error(f, "[pipeline]\nfit = lambda0, gamma\n",
                 "2: [pipeline] fit: 'gamma' is not lambda0, t0 or beta");
    expect_error(f, "[beams]\nh1_m = 0.02\n\ndecoder_delay_s = 0\n",
                 "4: [beams] decoder_delay_s: '0': value 1 is 0 s, expected a "
                 "delay in (0, 0.1] s");
    expect_error(f, "[beams]\ndecoder_delay_s = 1e-4, -2e-5\n",
                 "2: [beams] decoder_delay_s: '1e-4, -2e-5': value 2 is -2e-05 s, "
                 "expected a delay in (0, 0.1] s");
    expect_error(f, "[beams]\ndecoder_delay_s = 0.2\n",
                 "2: [beams] decoder_delay_s: '0.2': value 1 is 0.2 s, expected a "
                 "delay in (0, 0.1] s");
    expect_error(f, "[beams]\ndecoder_delay_s = 106us\n",
                 "2: [beams] decoder_delay_s: expected S or S1,S2 (seconds), got '106us'");
    expect_error(f, "[beams]\ndecoder_delay_s = 1e-4,\n",
                 "2: [beams] decoder_delay_s: expected S or S1,S2 (seconds), got '1e-4,'");
    expect_error(f, "[store]\nsync = sometimes\n",
                 "2: [store] sync: expected normal or full, got 'sometimes'");
    expect_error(f, "[run]\nlambda0_deg = 95\n",
                 "2: [run] lambda0_deg: expected a number in [0, 90], got '95'");
    expect_error(f, "[run]\nprism = "
                 "a-name-much-longer-than-the-sixty-three-characters-a-prism-name-may-have\n",
                 "2: [run] prism: longer than 63 characters");
    expect_error(f, "[sim]\npaced = 2\n",
                 "2: [sim] paced: expected a number in [0, 1], got '2'");
    expect_error(f, "[sim]\nspeed = 2\n", "2: [sim] speed: unknown key");
    expect_error(f, "[daq]\nthis line has no equals sign\n",
                 "2: not an INI line (key = value or [section])");
    /* the first bad line, not the last */
    expect_error(f, "[beams]\nsign1 = 2\nsign2 = 3\n[nope]\n",
                 "2: [beams] sign1: expected +1 or -1, got '2'");
}

/* Names count characters, as the store counts them (issue 30): 40
 * u-umlauts are 80 bytes and a name the store takes. */
static void test_names_in_characters(void **state)
{
    fixture *f = *state;
    char text[256] = "[run]\nprism = ";
    for (int i = 0; i < 40; i++)
        strcat(text, "\xc3\xbc");
    strcat(text, "\n");
    assert_int_equal(tu_write_file(f->ini, text), 0);
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    pl_err err = {0};
    if (pl_rigconf_read(&rc, f->ini, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(strlen(rc.prism), 80);
}

static void test_missing_file(void **state)
{
    fixture *f = *state;
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    pl_err err = {0};
    assert_int_equal(pl_rigconf_read(&rc, f->ini, &err), PL_EIO);
    char want[1200];
    snprintf(want, sizeof want, "%s: No such file or directory", f->ini);
    assert_string_equal(err.msg, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test_setup_teardown(test_every_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decoder_delay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_scales, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mistakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_names_in_characters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
