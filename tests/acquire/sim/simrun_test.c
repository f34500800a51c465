/* tests/acquire/sim/simrun_test.c - one simulated recording end to end: with
 * every imperfection off the codes are the model's v_p1, v_p2 converted and
 * quantised, sample for sample; the lead-in, release and drop-out land
 * where the configuration and the ramp put them; the WAV and CSV writers
 * give back exactly the codes; the truth file states what happened; the
 * same seed gives the same bytes and another seed does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/simrun.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

static void config(pl_simrun_config *c)
{
    pl_simrun_config_default(c);
    c->model.N = 30;
    c->model.a0 = 0.015;
    c->model.beta = 0.4079 * DEG;
    c->model.lambda0 = 5.322 * DEG;
    c->model.mu_s = 0.12;
    c->model.mu = NAN;
    c->model.h1 = 0.0199;
    c->model.h2 = 0.0116;
    c->model.ramp_length = 0.10;  /* short: about 2.5 s of motion */
    c->model.duration = 10.0;
    c->lead_in_s = 0.5;
    c->tail_s = 0.25;
    c->rig.seed = 7;
}

static uint16_t quantise(double v)
{
    double x = nearbyint((v + 10.0) / 20.0 * 65535.0);
    return (uint16_t)(x < 0 ? 0 : x > 65535 ? 65535 : x);
}

/* Ideal chain: code = ADC(sign * v / scale) with v the model's velocity,
 * computed here from an independent run of the model. */
static void test_ideal_is_model_quantised(void **state)
{
    (void)state;
    pl_simrun_config c;
    config(&c);
    pl_rigsim_config_ideal(&c.rig);
    pl_simrun *s = NULL;
    pl_err err = {0};
    assert_int_equal(pl_simrun_create(&s, &c, &err), PL_OK);

    pl_model_params p = c.model;
    p.rate = c.rate_hz;
    size_t ns = (size_t)(p.duration * p.rate) + 1;
    double *v1 = calloc(ns, sizeof *v1), *v2 = calloc(ns, sizeof *v2);
    pl_model_impact im[1024];
    pl_model_result r = {.vp1 = v1, .vp2 = v2, .cap_samples = ns,
                         .impacts = im, .cap_impacts = 1024};
    pl_model *m = NULL;
    assert_int_equal(pl_model_create(&m, &p, &err), PL_OK);
    assert_int_equal(pl_model_run(m, &r, &err), PL_OK);
    pl_model_destroy(m);
    assert_int_equal(r.end, PL_END_LEFT_RAMP);

    size_t rel = pl_simrun_release_index(s), n = pl_simrun_frames(s);
    assert_int_equal(rel, 5000);
    assert_int_equal(pl_simrun_leave_index(s), rel + r.n_samples);
    assert_int_equal(n, rel + r.n_samples + 2500);
    const uint16_t *codes = pl_simrun_codes(s);
    size_t mismatches = 0;
    for (size_t k = 0; k < n; k++) {
        double a = 0, b = 0;
        if (k >= rel && k < rel + r.n_samples) {
            a = v1[k - rel];
            b = v2[k - rel];
        }
        if (codes[2 * k] != quantise(+a / 0.025) ||
            codes[2 * k + 1] != quantise(-b / 0.025))
            mismatches++;
    }
    assert_int_equal(mismatches, 0);
    assert_true(r.n_impacts > 25);   /* 0.1 m / face width 3.1 mm */
    assert_int_equal(pl_simrun_model(s)->n_impacts, r.n_impacts);
    free(v1);
    free(v2);
    pl_simrun_destroy(s);
}

static size_t file_bytes(const char *path, unsigned char **data)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    *data = malloc((size_t)n + 1);
    assert_int_equal(fread(*data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

static void test_wav_holds_the_codes(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("simrun");
    char *wav = tu_path(dir, "a.wav");
    pl_simrun_config c;
    config(&c);
    snprintf(c.prism, sizeof c.prism, "steel-30");
    c.nominal_lambda0 = 5.3 * DEG;
    pl_simrun *s = NULL;
    pl_err err = {0};
    assert_int_equal(pl_simrun_create(&s, &c, &err), PL_OK);
    assert_int_equal(pl_simrun_write_wav(s, wav, &err), PL_OK);

    SF_INFO info = {0};
    SNDFILE *f = sf_open(wav, SFM_READ, &info);
    assert_non_null(f);
    assert_int_equal(info.channels, 2);
    assert_int_equal(info.samplerate, 10000);
    assert_int_equal(info.frames, (sf_count_t)pl_simrun_frames(s));
    assert_int_equal(info.format, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
    const char *comment = sf_get_string(f, SF_STR_COMMENT);
    assert_non_null(comment);
    assert_non_null(strstr(comment, "prismlab rate_hz=10000 full_scale_v=10 "));
    assert_non_null(strstr(comment, "sign=1,-1"));
    assert_non_null(strstr(comment, "synthetic=1"));
    assert_non_null(strstr(comment, "prism=steel-30"));
    assert_non_null(strstr(comment, "lambda0_deg=5.3"));
    /* numbers that read back, not %.17g's 0.025000000000000001 */
    assert_non_null(strstr(comment, "ldv_scale=0.025,0.025 "));
    size_t n = pl_simrun_frames(s);
    short *buf = malloc(2 * n * sizeof *buf);
    assert_int_equal(sf_readf_short(f, buf, (sf_count_t)n), (sf_count_t)n);
    sf_close(f);
    const uint16_t *codes = pl_simrun_codes(s);
    for (size_t i = 0; i < 2 * n; i++)
        if (buf[i] != (int)codes[i] - 32768)
            fail_msg("sample %zu: WAV %d, code %u", i, buf[i], codes[i]);
    free(buf);
    pl_simrun_destroy(s);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

static void test_csv_volts_and_truth(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("simrun");
    char *csv = tu_path(dir, "a.csv"), *truth = tu_path(dir, "a.truth.csv");
    pl_simrun_config c;
    config(&c);
    pl_simrun *s = NULL;
    pl_err err = {0};
    assert_int_equal(pl_simrun_create(&s, &c, &err), PL_OK);
    assert_int_equal(pl_simrun_write_csv(s, csv, &err), PL_OK);
    assert_int_equal(pl_simrun_write_truth(s, truth, 0.01, &err), PL_OK);

    FILE *f = fopen(csv, "r");
    char line[256];
    size_t row = 0, n = pl_simrun_frames(s);
    const uint16_t *codes = pl_simrun_codes(s);
    int header = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (!header) {
            assert_string_equal(line, "t_s,v1_V,v2_V\n");
            header = 1;
            continue;
        }
        double t, a, b;
        assert_int_equal(sscanf(line, "%lf,%lf,%lf", &t, &a, &b), 3);
        tu_assert_close(t, row / 10000.0, 1e-9);
        tu_assert_close(a, pl_simrun_code_volts(s, codes[2 * row]), 5.1e-7);
        tu_assert_close(b, pl_simrun_code_volts(s, codes[2 * row + 1]), 5.1e-7);
        row++;
    }
    fclose(f);
    assert_int_equal(row, n);

    /* The truth: its impact rows are the model's impacts on the recording
     * clock, its header the parameters and the outcome. */
    f = fopen(truth, "r");
    const pl_model_result *r = pl_simrun_model(s);
    size_t impacts = 0, samples = 0, releases = 0, leaves = 0;
    double lambda0 = NAN, release_t = NAN, lp_end = NAN, last_sample_lp = -1;
    char end[32] = "";
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "# lambda0_deg=%lf", &lambda0);
        sscanf(line, "# release_t_s=%lf", &release_t);
        sscanf(line, "# Lp_end=%lf", &lp_end);
        sscanf(line, "# end=%31s", end);
        double t, x, wm, wp, ratio;
        if (sscanf(line, "impact,%lf,,%lf,%lf,%lf,%lf", &t, &x, &wm, &wp, &ratio) == 5) {
            assert_true(impacts < r->n_impacts);
            tu_assert_close(t, 0.5 + r->impacts[impacts].t, 1e-8);
            tu_assert_close(wp / wm, ratio, 1e-8);
            impacts++;
        } else if (sscanf(line, "sample,%lf,%lf,%lf", &t, &x, &wp) == 3) {
            assert_true(wp >= last_sample_lp);   /* L_p never decreases */
            last_sample_lp = wp;
            samples++;
        } else if (!strncmp(line, "release,", 8)) {
            releases++;
        } else if (!strncmp(line, "leave,", 6)) {
            leaves++;
        }
    }
    fclose(f);
    assert_int_equal(impacts, r->n_impacts);
    assert_int_equal(releases, 1);
    assert_int_equal(leaves, 1);
    assert_int_equal(samples, (r->n_samples + 99) / 100);
    tu_assert_close(lambda0, 5.322, 1e-9);
    tu_assert_close(release_t, 0.5, 1e-12);
    tu_assert_close(lp_end, r->lp_end, 1e-8);
    assert_string_equal(end, "left_ramp");
    pl_simrun_destroy(s);
    free(csv);
    free(truth);
    tu_rmtree(dir);
    free(dir);
}

static void test_seed_reproduces_bytes(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("simrun");
    char *p[3] = {tu_path(dir, "a.wav"), tu_path(dir, "b.wav"), tu_path(dir, "c.wav")};
    unsigned long seeds[3] = {11, 11, 12};
    pl_err err = {0};
    for (int i = 0; i < 3; i++) {
        pl_simrun_config c;
        config(&c);
        c.rig.seed = seeds[i];
        pl_simrun *s = NULL;
        assert_int_equal(pl_simrun_create(&s, &c, &err), PL_OK);
        assert_int_equal(pl_simrun_write_wav(s, p[i], &err), PL_OK);
        pl_simrun_destroy(s);
    }
    unsigned char *a, *b, *d;
    size_t na = file_bytes(p[0], &a), nb = file_bytes(p[1], &b), nd = file_bytes(p[2], &d);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    assert_int_equal(na, nd);
    assert_memory_not_equal(a, d, na);
    free(a);
    free(b);
    free(d);
    for (int i = 0; i < 3; i++)
        free(p[i]);
    tu_rmtree(dir);
    free(dir);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    pl_simrun_config c;
    pl_simrun *s = NULL;
    pl_err err = {0};
    config(&c);
    c.model.lambda0 = 20 * DEG;   /* beyond alpha + beta: falls backwards */
    assert_int_equal(pl_simrun_create(&s, &c, &err), PL_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err.msg, "lambda0"));
    config(&c);
    c.rate_hz = 10;
    assert_int_equal(pl_simrun_create(&s, &c, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "rate"));
    config(&c);
    c.rig.adc_bits = 40;
    assert_int_equal(pl_simrun_create(&s, &c, &err), PL_EINVAL);
}

/* The command: refuses to run without an output, reports the outcome. */
static void test_command(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("simrun");
    char *wav = tu_path(dir, "c.wav"), *truth = tu_path(dir, "c.truth.csv");
    char out[4096], errout[4096];
    const char *none[] = {"prismlab", "sim", "--N", "30", "--a0", "0.015",
                          "--beta-deg", "0.4", "--mu-s", "0.12",
                          "--lambda0-deg", "5.3", "--h1", "0.02", "--h2",
                          "0.01", NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, none), 1);
    assert_non_null(strstr(errout, "--wav"));
    const char *ok[] = {"prismlab", "sim", "--N", "30", "--a0", "0.015",
                        "--beta-deg", "0.4", "--mu-s", "0.12",
                        "--lambda0-deg", "5.3", "--h1", "0.02", "--h2", "0.01",
                        "--ramp-length", "0.05", "--wav", wav, "--truth", truth,
                        NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, ok), 0);
    assert_non_null(strstr(out, "status=left_ramp"));
    assert_non_null(strstr(out, "release_t=1.0000"));
    const char *bad[] = {"prismlab", "sim", "--N", "30", "--a0", "0.015",
                         "--beta-deg", "0.4", "--mu-s", "0.12",
                         "--lambda0-deg", "5.3", "--h1", "0.02", "--h2", "0.01",
                         "--sign1", "0", "--wav", wav, NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, bad), 1);
    assert_non_null(strstr(errout, "sign1"));
    free(wav);
    free(truth);
    tu_rmtree(dir);
    free(dir);
}

/* The faults from the command line: each option lands in the truth file,
 * --faults goes with --random-chain only, a bad value names its option. */
static void test_command_faults(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("simfaults");
    char *csv = tu_path(dir, "f.csv"), *truth = tu_path(dir, "f.truth.csv");
    char out[4096], errout[4096];
    const char *ok[] = {"prismlab", "sim", "--N", "22", "--a0", "0.015",
                        "--beta-deg", "0.37", "--mu-s", "0.2", "--lambda0-deg", "7.2",
                        "--h1", "0.0199", "--h2", "0.0116", "--ramp-length", "0.3",
                        "--beam-loss", "2,1.5,0.2", "--vibration", "23:1.5e-3,9:0.6e-3:1",
                        "--tail-garbage", "1.2", "--clip", "1,0.7",
                        "--csv", csv, "--truth", truth, NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, ok), 0);
    assert_non_null(strstr(out, "status=left_ramp"));
    FILE *f = fopen(truth, "r");
    assert_non_null(f);
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "# beam_loss_beam=2\n# beam_loss_t_s=1.500000,1.700000\n"));
    assert_non_null(strstr(text, "# vib_hz=23,9\n# vib_amp_mps=0.0015,0.0006\n"));
    assert_non_null(strstr(text, "# tail_garbage=1\n"));
    assert_non_null(strstr(text, "# clip_beam=1\n"));
    const char *faults_alone[] = {"prismlab", "sim", "--N", "22", "--a0", "0.015",
                                  "--beta-deg", "0.37", "--mu-s", "0.2", "--lambda0-deg", "7.2",
                                  "--h1", "0.0199", "--h2", "0.0116", "--faults", "--csv", csv, NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, faults_alone), 1);
    assert_non_null(strstr(errout, "--random-chain"));
    const char *bad[] = {"prismlab", "sim", "--random-chain", "3", "--beam-loss", "3,1,0.1",
                         "--csv", csv, NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, bad), 1);
    assert_non_null(strstr(errout, "--beam-loss"));
    const char *drawn[] = {"prismlab", "sim", "--random-chain", "3", "--faults",
                           "--csv", csv, "--truth", truth, NULL};
    assert_int_equal(tu_prismlab(out, errout, sizeof out, drawn), 0);
    free(csv);
    free(truth);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ideal_is_model_quantised),
        cmocka_unit_test(test_wav_holds_the_codes),
        cmocka_unit_test(test_csv_volts_and_truth),
        cmocka_unit_test(test_seed_reproduces_bytes),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_command_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
