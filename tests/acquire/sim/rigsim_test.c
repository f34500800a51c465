/* tests/acquire/sim/rigsim_test.c - the rig simulator's signal chain: with
 * every imperfection off the codes are exactly the converted, quantised
 * truth; with each one on, it is there at its configured level, measured
 * (RMS, mean, FFT peak) rather than assumed; seeds reproduce bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/rigsim.h"
#include "tests/util/testutil.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { RATE = 10000, N = 20000 };

/* A truth like a prism's: still until 0.2 s, then a pendulum-like arc
 * with one impact at 1.0 s where both velocities drop by 20 %. */
typedef struct {
    double v1[N], v2[N], impact[1];
    pl_rigsim_truth t;
} truth_t;

static truth_t *make_truth(void)
{
    truth_t *tr = calloc(1, sizeof *tr);
    for (int k = 0; k < N; k++) {
        double s = k / (double)RATE;
        double w = s < 0.2 ? 0 : 0.5 * (s - 0.2);     /* rad/s */
        if (s >= 1.0)
            w *= 0.8;
        tr->v1[k] = w * 0.0199;
        tr->v2[k] = w * 0.0112;
    }
    tr->impact[0] = 1.0;
    tr->t.n = N;
    tr->t.rate_hz = RATE;
    tr->t.v[0] = tr->v1;
    tr->t.v[1] = tr->v2;
    tr->t.impact_t_s = tr->impact;
    tr->t.n_impacts = 1;
    tr->t.release_index = 2000;
    tr->t.leave_index = N;
    return tr;
}

static void render(const pl_rigsim_config *c, const truth_t *tr,
                   uint16_t *codes, double *volts)
{
    pl_err err = {0};
    if (pl_rigsim_render(c, &tr->t, codes, volts, NULL, &err) != PL_OK)
        fail_msg("%s", err.msg);
}

static void ideal_chain_is_exact_conversion(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    pl_channel ch[2];
    double h[2] = {0.0199, 0.0112};
    (void)state;

    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    render(&c, tr, codes, NULL);
    pl_rigsim_channels(&c, h, ch);
    for (int k = 0; k < N; k++)
        for (int i = 0; i < 2; i++) {
            double v = (i ? tr->v2 : tr->v1)[k];
            double volts = c.beam_sign[i] * v / c.ldv_scale_mps_per_v[i];
            long want = lrint((volts + 10.0) / 20.0 * 65535.0);
            assert_int_equal(codes[2 * k + i], want);
            /* and the stored calibration reads it back within 1/2 LSB */
            tu_assert_close(ch[i].beam_sign * ch[i].ldv_scale_mps_per_v *
                                pl_channel_volts(&ch[i], codes[2 * k + i]),
                            v, 0.5 * 20.0 / 65535 * 0.025 + 1e-15);
        }
    free(codes);
    free(tr);
}

static double rms_of(const double *x, int stride, int from, int to, double *mean)
{
    double m = 0, s = 0;
    for (int k = from; k < to; k++)
        m += x[stride * k];
    m /= (to - from);
    for (int k = from; k < to; k++)
        s += (x[stride * k] - m) * (x[stride * k] - m);
    if (mean)
        *mean = m;
    return sqrt(s / (to - from));
}

static void noise_and_offset_at_their_levels(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    double mean, rms;
    (void)state;

    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    c.noise = 1;
    c.noise_rms_mps = 1e-3;
    c.offset = 1;
    render(&c, tr, codes, volts);
    /* In the 2000-sample lead-in: RMS = noise / scale, mean = offset. */
    rms = rms_of(volts, 2, 0, 2000, &mean);
    tu_assert_close(rms, 1e-3 / 0.025, 0.05 * 1e-3 / 0.025);
    tu_assert_close(mean, c.offset_v[0], 4 * rms / sqrt(2000));
    rms = rms_of(volts + 1, 2, 0, 2000, &mean);
    tu_assert_close(mean, c.offset_v[1], 4 * rms / sqrt(2000));
    free(codes);
    free(volts);
    free(tr);
}

/* Peak frequency and amplitude of x[0..n) (stride 2) by FFTW. */
static double peak_hz(const double *x, int n, double *amp)
{
    double *in = fftw_alloc_real((size_t)n);
    fftw_complex *out = fftw_alloc_complex((size_t)n / 2 + 1);
    fftw_plan p = fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE);
    int best = 1;
    double bestm = 0;
    for (int k = 0; k < n; k++)
        in[k] = x[2 * k];
    fftw_execute(p);
    for (int k = 1; k <= n / 2; k++) {
        double m = hypot(out[k][0], out[k][1]);
        if (m > bestm) {
            bestm = m;
            best = k;
        }
    }
    if (amp)
        *amp = 2 * bestm / n;
    fftw_destroy_plan(p);
    fftw_free(in);
    fftw_free(out);
    return best * (double)RATE / n;
}

static void ringing_at_its_frequency(void **state)
{
    pl_rigsim_config c, ideal;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    double *base = malloc(2 * N * sizeof *base);
    (void)state;

    pl_rigsim_config_default(&ideal);
    pl_rigsim_config_ideal(&ideal);
    c = ideal;
    c.ringing = 1;
    c.ring_freq_hz = 3125.0; /* on an FFT bin of 1024 samples at 10 kHz */
    render(&ideal, tr, codes, base);
    render(&c, tr, codes, volts);
    for (int k = 0; k < 2 * N; k++)
        volts[k] -= base[k];
    /* The residual after the impact at 1.0 s is the ringing alone. */
    tu_assert_close(peak_hz(volts + 2 * 10000, 1024, NULL), 3125.0, 10.0);
    /* Nothing before the impact. */
    tu_assert_close(rms_of(volts, 2, 0, 9999, NULL), 0.0, 1e-12);
    /* Its first peak is ring_rel_amp x the step (in volts), damped by
     * exp(-t/decay): check the envelope at one decay time. */
    {
        double step = 0.2 * 0.5 * 0.8 * 0.0199 / 0.025;
        double peak = 0;
        int k0 = 10000 + (int)(1.5e-3 * RATE) - 2;
        for (int k = k0; k < k0 + 4; k++)
            peak = fmax(peak, fabs(volts[2 * k]));
        assert_true(peak <= 0.4 * step * exp(-(k0 - 10000.0) / RATE / 1.5e-3) * 1.05);
        assert_true(peak >= 0.4 * step * exp(-(k0 + 4 - 10000.0) / RATE / 1.5e-3) * 0.5);
    }
    free(codes);
    free(volts);
    free(base);
    free(tr);
}

static void hum_at_mains_frequency(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    double amp;
    (void)state;

    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    c.hum = 1;
    c.hum_amp_v = 2e-3;
    render(&c, tr, codes, volts);
    /* 2000 samples = 0.2 s = ten 50 Hz periods: 50 Hz is bin 10. */
    tu_assert_close(peak_hz(volts, 2000, &amp), 50.0, 1e-9);
    tu_assert_close(amp, 2e-3, 1e-6);
    free(codes);
    free(volts);
    free(tr);
}

static void impact_shape_spreads_the_step(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    (void)state;

    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    c.impact_shape = 1;
    c.impact_duration_s = 0.5e-3; /* 5 samples */
    render(&c, tr, codes, volts);
    /* Before the impact: the pre-impact arc; 5 samples later: the post-
     * impact value; in between, strictly between the two. */
    {
        double before = volts[2 * 9999], after = volts[2 * 10005];
        double pre = 0.5 * 0.8 * 0.0199 / 0.025, post = 0.8 * pre;
        tu_assert_close(before, pre, 1e-3);
        tu_assert_close(after, post, 2e-3);
        for (int k = 10001; k < 10005; k++) {
            assert_true(volts[2 * k] < before + 1e-9);
            assert_true(volts[2 * k] > post - 1e-3);
        }
    }
    free(codes);
    free(volts);
    free(tr);
}

static void speckle_rate_and_clipping(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    pl_err err = {0};
    size_t clipped = 0;
    int spikes = 0;
    (void)state;

    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    c.speckle = 1;
    c.speckle_rate_hz = 50; /* 100 expected in 2 s on each channel */
    c.speckle_len_s = 1e-4; /* one sample */
    render(&c, tr, codes, volts);
    for (int k = 1; k < N; k++)
        spikes += fabs(volts[2 * k] - volts[2 * k - 2]) > 0.05 &&
                  fabs(volts[2 * k] - volts[2 * k + 2 < 2 * N ? 2 * k + 2 : 2 * k]) > 0.05;
    /* Poisson(100): within 4 sigma. */
    assert_true(spikes > 60 && spikes < 140);

    /* A velocity beyond the range clips, and says so. */
    pl_rigsim_config_ideal(&c);
    c.ldv_scale_mps_per_v[0] = 1e-4;
    assert_int_equal(pl_rigsim_render(&c, &tr->t, codes, NULL, &clipped, &err),
                     PL_OK);
    assert_true(clipped > 0);
    assert_int_equal(codes[2 * (N - 1)], 65535);
    free(codes);
    free(volts);
    free(tr);
}

static void same_seed_same_bytes(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *a = malloc(2 * N * sizeof *a), *b = malloc(2 * N * sizeof *b);
    (void)state;

    pl_rigsim_config_default(&c);
    c.seed = 42;
    render(&c, tr, a, NULL);
    render(&c, tr, b, NULL);
    assert_memory_equal(a, b, 2 * N * sizeof *a);
    c.seed = 43;
    render(&c, tr, b, NULL);
    assert_true(memcmp(a, b, 2 * N * sizeof *a) != 0);
    free(a);
    free(b);
    free(tr);
}

static void drop_out_after_leaving(void **state)
{
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    (void)state;

    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    tr->t.leave_index = 15000;
    render(&c, tr, codes, volts);
    assert_true(volts[2 * 14999] > 0.1);
    for (int k = 15000; k < N; k++)
        tu_assert_close(volts[2 * k], 0.0, 0.0);
    free(codes);
    free(volts);
    free(tr);
}

static void bad_config_names_the_field(void **state)
{
    pl_rigsim_config c;
    pl_err err = {0};
    (void)state;
    pl_rigsim_config_default(&c);
    c.beam_sign[1] = 0;
    assert_int_equal(pl_rigsim_validate(&c, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "beam sign 2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ideal_chain_is_exact_conversion),
        cmocka_unit_test(noise_and_offset_at_their_levels),
        cmocka_unit_test(ringing_at_its_frequency),
        cmocka_unit_test(hum_at_mains_frequency),
        cmocka_unit_test(impact_shape_spreads_the_step),
        cmocka_unit_test(speckle_rate_and_clipping),
        cmocka_unit_test(same_seed_same_bytes),
        cmocka_unit_test(drop_out_after_leaving),
        cmocka_unit_test(bad_config_names_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
