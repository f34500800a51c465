/* tests/acquire/sim/rigsim_test.c - the rig simulator's signal chain: with
 * every imperfection off the codes are exactly the converted, quantised
 * truth; with each one on, it is there at its configured level, measured
 * (RMS, mean, FFT peak, Welch slope, run lengths) rather than assumed; the
 * tracking filter against the analogue Bessel filter integrated by RK4;
 * seeds reproduce bytes; random chains stay inside their stated ranges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/rigsim.h"
#include "acquire/sim/simrun.h"
#include "process/spectral.h"
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
    c.impact_duration_s = 0.5e-3; /* 5 samples, centred on the instant */
    render(&c, tr, codes, volts);
    /* 3 samples before the impact: the pre-impact arc; 3 after: the post-
     * impact value; in between, strictly between the two. */
    {
        double before = volts[2 * 9997], after = volts[2 * 10003];
        double pre = 0.5 * 0.8 * 0.0199 / 0.025, post = 0.8 * pre;
        tu_assert_close(before, pre, 1e-3);
        tu_assert_close(after, post, 2e-3);
        for (int k = 9998; k < 10003; k++) {
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

/* --- the decoder's artefacts -------------------------------------------- */

/* A truth of n samples at rate with one velocity array for both beams
 * (the caller fills v), no impacts, in view throughout. */
typedef struct {
    double *v, imp[1];
    pl_rigsim_truth t;
} ltruth;

static ltruth *ltruth_new(size_t n, double rate)
{
    ltruth *l = calloc(1, sizeof *l);
    l->v = calloc(n, sizeof *l->v);
    l->t.n = n;
    l->t.rate_hz = rate;
    l->t.v[0] = l->t.v[1] = l->v;
    l->t.impact_t_s = l->imp;
    l->t.leave_index = n;
    return l;
}

static void ltruth_free(ltruth *l)
{
    free(l->v);
    free(l);
}

/* A chain with nothing but what the test switches on, reading m/s as
 * volts (scale 1, both signs +1), so volts_out is the decoder's output. */
static void bare(pl_rigsim_config *c)
{
    pl_rigsim_config_default(c);
    pl_rigsim_config_ideal(c);
    c->ldv_scale_mps_per_v[0] = c->ldv_scale_mps_per_v[1] = 1.0;
    c->beam_sign[1] = 1;
}

/* The continuous input of the filter test: the arc 0.05 + 0.1 t, the
 * step at ti spread over [ti - d/2, ti + d/2) by the raised cosine (the
 * model's instant in its middle), the ringing from ti on. */
typedef struct {
    double ti, step, d, ring_amp, ring_hz, ring_decay;
} ctin;

static double ctin_at(const ctin *in, double t)
{
    double u = 0.05 + 0.1 * t, tau = t - in->ti, s = tau + 0.5 * in->d;
    if (s >= 0)
        u += s >= in->d ? in->step : in->step * 0.5 * (1 - cos(M_PI * s / in->d));
    if (tau >= 0)
        u += in->ring_amp * exp(-tau / in->ring_decay) * sin(2 * M_PI * in->ring_hz * tau);
    return u;
}

/* y'' = 3 w0^2 (u - y) - 3 w0 y' (the 2nd-order Bessel with -3 dB at
 * fc) by RK4 with m steps a sample, from rest at u(0); y[k] at k / rate. */
static void rk4_bessel(const ctin *in, double fc, double rate, size_t n,
                       int m, double *y)
{
    double w0 = 2 * M_PI * fc / 1.3616541287161306, h = 1.0 / rate / m;
    double a = ctin_at(in, 0), b = 0;
    for (size_t k = 0; k < n; k++) {
        y[k] = a;
        for (int i = 0; i < m; i++) {
            double t = (double)k / rate + i * h;
            double u0 = ctin_at(in, t), u1 = ctin_at(in, t + h / 2), u2 = ctin_at(in, t + h);
            double k1a = b, k1b = 3 * w0 * w0 * (u0 - a) - 3 * w0 * b;
            double k2a = b + h / 2 * k1b, k2b = 3 * w0 * w0 * (u1 - a - h / 2 * k1a) - 3 * w0 * k2a;
            double k3a = b + h / 2 * k2b, k3b = 3 * w0 * w0 * (u1 - a - h / 2 * k2a) - 3 * w0 * k3a;
            double k4a = b + h * k3b, k4b = 3 * w0 * w0 * (u2 - a - h * k3a) - 3 * w0 * k4a;
            a += h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a);
            b += h / 6 * (k1b + 2 * k2b + 2 * k3b + k4b);
        }
    }
}

/* The sampled filter against the analogue one: the arc, a shaped step
 * between samples and its ringing, through a 3 kHz decoder on a 10 kHz
 * card and a 20 kHz decoder on a 5 kHz card (cut-off above Nyquist). */
static void check_filter_case(double fc, double rate, int m)
{
    size_t n = (size_t)(0.15 * rate);
    ctin in = {.ti = 0.1000437, .step = -3e-3, .d = 0.3e-3, .ring_amp = 0.8 * 3e-3,
               .ring_hz = 3100, .ring_decay = 1.5e-3};
    ltruth *l = ltruth_new(n, rate);
    for (size_t k = 0; k < n; k++)
        l->v[k] = 0.05 + 0.1 * k / rate + (k / rate >= in.ti ? in.step : 0);
    l->imp[0] = in.ti;
    l->t.n_impacts = 1;
    pl_rigsim_config c;
    bare(&c);
    c.track = 1;
    c.track_cutoff_hz = fc;
    c.impact_shape = 1;
    c.impact_duration_s = in.d;
    c.ringing = 1;
    c.ring_freq_hz = in.ring_hz;
    c.ring_decay_s = in.ring_decay;
    c.ring_rel_amp = 0.8;
    uint16_t *codes = malloc(2 * n * sizeof *codes);
    double *volts = malloc(2 * n * sizeof *volts), *y = malloc(n * sizeof *y);
    pl_err err = {0};
    assert_int_equal(pl_rigsim_render(&c, &l->t, codes, volts, NULL, &err), PL_OK);
    rk4_bessel(&in, fc, rate, n, m, y);
    double worst = 0;
    for (size_t k = 0; k < n; k++)
        worst = fmax(worst, fabs(volts[2 * k] - y[k]));
    print_message("fc %g Hz at %g Hz: worst |sampled - analogue| %.2g m/s\n", fc, rate, worst);
    /* within 1e-4 of the step's size, at every sample */
    if (worst > 3e-7)
        fail_msg("fc %g Hz at %g Hz: sampled filter off the analogue by %g m/s", fc, rate, worst);
    /* on the arc before the impact the output lags by the DC delay */
    size_t k = (size_t)(0.09 * rate);
    tu_assert_close((0.05 + 0.1 * k / rate - volts[2 * k]) / 0.1,
                    pl_rigsim_track_delay(&c), 1e-9);
    tu_assert_close(pl_rigsim_track_delay(&c), 1.3616541287161306 / (2 * M_PI * fc), 1e-15);
    free(codes);
    free(volts);
    free(y);
    ltruth_free(l);
}

static void tracking_filter_is_the_analogue_bessel(void **state)
{
    (void)state;
    check_filter_case(3000, 10000, 100);
    check_filter_case(20000, 5000, 1000);
}

/* Gain at f of the filtered sine (least squares on its last half). */
static double sine_gain(double fc, double f, double rate)
{
    size_t n = (size_t)(0.05 * rate);
    ltruth *l = ltruth_new(n, rate);
    for (size_t k = 0; k < n; k++)
        l->v[k] = 1e-3 * sin(2 * M_PI * f * k / rate);
    pl_rigsim_config c;
    bare(&c);
    c.track = 1;
    c.track_cutoff_hz = fc;
    uint16_t *codes = malloc(2 * n * sizeof *codes);
    double *volts = malloc(2 * n * sizeof *volts);
    pl_err err = {0};
    assert_int_equal(pl_rigsim_render(&c, &l->t, codes, volts, NULL, &err), PL_OK);
    double ss = 0, cc = 0, sc = 0, ys = 0, yc = 0;
    for (size_t k = n / 2; k < n; k++) {
        double sn = sin(2 * M_PI * f * k / rate), cs = cos(2 * M_PI * f * k / rate);
        ss += sn * sn; cc += cs * cs; sc += sn * cs;
        ys += volts[2 * k] * sn; yc += volts[2 * k] * cs;
    }
    double det = ss * cc - sc * sc;
    double a = (ys * cc - yc * sc) / det, b = (yc * ss - ys * sc) / det;
    free(codes);
    free(volts);
    ltruth_free(l);
    return hypot(a, b) / 1e-3;
}

/* The -3 dB point where it is set (sampled at 200 kHz, where linear
 * interpolation between samples costs 0.1 % at 3 kHz). */
static void tracking_filter_minus_3db_at_its_cutoff(void **state)
{
    (void)state;
    double g = sine_gain(3000, 3000, 200000);
    print_message("gain at the 3 kHz cut-off: %.5f (-3 dB: %.5f)\n", g, M_SQRT1_2);
    tu_assert_close(g, M_SQRT1_2, 0.003);
    assert_true(sine_gain(3000, 2850, 200000) > M_SQRT1_2);
    assert_true(sine_gain(3000, 3150, 200000) < M_SQRT1_2);
    /* and the Bessel's own gain below it, 3 / sqrt((3 - w^2)^2 + 9 w^2)
     * with w = 1.3617 f / fc */
    double w = 1.3616541287161306 * 0.1;
    tu_assert_close(sine_gain(3000, 300, 200000),
                    3.0 / sqrt((3 - w * w) * (3 - w * w) + 9 * w * w), 0.001);
}

/* 1/f noise: its RMS as set, its Welch spectrum a line of slope -1 in
 * log-log over 5 .. 500 Hz (inside the 0.5 Hz .. 2 kHz band). */
static void pink_noise_slope_and_rms(void **state)
{
    (void)state;
    size_t n = 1u << 18, seg = 1u << 14;
    double rate = 10000;
    ltruth *l = ltruth_new(n, rate);
    pl_rigsim_config c;
    bare(&c);
    c.pink = 1;
    c.pink_rms_mps = 3e-4;
    c.seed = 11;
    uint16_t *codes = malloc(2 * n * sizeof *codes);
    double *volts = malloc(2 * n * sizeof *volts), *x = malloc(n * sizeof *x);
    double *psd = malloc((seg / 2 + 1) * sizeof *psd);
    pl_err err = {0};
    size_t segs;
    assert_int_equal(pl_rigsim_render(&c, &l->t, codes, volts, NULL, &err), PL_OK);
    for (int ch = 0; ch < 2; ch++) {
        for (size_t k = 0; k < n; k++)
            x[k] = volts[2 * k + ch];
        tu_assert_close(rms_of(x, 1, 0, (int)n, NULL), 3e-4, 0.1 * 3e-4);
        assert_int_equal(pl_welch_psd(x, n, rate, seg, 0, psd, &segs, &err), PL_OK);
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int m = 0;
        for (size_t b = 1; b <= seg / 2; b++) {
            double f = b * rate / seg;
            if (f < 5 || f > 500)
                continue;
            double lx = log10(f), ly = log10(psd[b]);
            sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly; m++;
        }
        double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
        print_message("1/f noise channel %d: RMS %.5g m/s, slope %.3f over 5..500 Hz\n",
                      ch + 1, rms_of(x, 1, 0, (int)n, NULL), slope);
        tu_assert_close(slope, -1.0, 0.08);
    }
    /* the two channels are independent */
    double r = 0;
    for (size_t k = 0; k < n; k++)
        r += volts[2 * k] * volts[2 * k + 1];
    assert_true(fabs(r / n) < 0.2 * 3e-4 * 3e-4);
    free(codes);
    free(volts);
    free(x);
    free(psd);
    ltruth_free(l);
}

/* Drop-outs: runs of exactly 0 V amid the noise, counted and measured. */
static void dropouts_count_and_lengths(void **state)
{
    (void)state;
    double rate = 10000;
    size_t n = 200000; /* 20 s */
    ltruth *l = ltruth_new(n, rate);
    pl_rigsim_config c;
    bare(&c);
    c.noise = 1;
    c.noise_rms_mps = 1e-3;
    c.dropout = 1;
    c.dropout_rate_hz = 3.0;   /* 60 expected a channel */
    c.seed = 5;
    uint16_t *codes = malloc(2 * n * sizeof *codes);
    double *volts = malloc(2 * n * sizeof *volts);
    pl_err err = {0};
    assert_int_equal(pl_rigsim_render(&c, &l->t, codes, volts, NULL, &err), PL_OK);
    size_t starts[2][200], runs[2] = {0, 0};
    for (int ch = 0; ch < 2; ch++) {
        double sum = 0;
        for (size_t k = 0; k < n;) {
            if (volts[2 * k + ch] != 0.0) {
                k++;
                continue;
            }
            size_t k0 = k;
            while (k < n && volts[2 * k + ch] == 0.0)
                k++;
            double len = (k - k0) / rate;
            /* 0.3 .. 3 ms, give or take the sample a fade starts in; two
             * overlapping fades (rare at 3 / s) make one up to 6 ms */
            if (!(len >= 0.3e-3 - 1.0 / rate && len <= 6e-3 + 1.0 / rate))
                fail_msg("channel %d: a drop-out of %g ms", ch + 1, 1e3 * len);
            sum += len;
            assert_true(runs[ch] < 200);
            starts[ch][runs[ch]++] = k0;
        }
        print_message("drop-outs channel %d: %zu in 20 s, mean %.2f ms\n", ch + 1,
                      runs[ch], 1e3 * sum / runs[ch]);
        /* Poisson(60) within 4 sigma; the mean length 1.65 ms */
        assert_true(runs[ch] >= 30 && runs[ch] <= 90);
        tu_assert_close(sum / runs[ch], 1.65e-3, 0.3e-3);
    }
    /* independent channels: hardly a fade starts on both at once */
    size_t common = 0;
    for (size_t a = 0; a < runs[0]; a++)
        for (size_t b = 0; b < runs[1]; b++)
            common += starts[0][a] == starts[1][b];
    assert_true(common <= 1);
    free(codes);
    free(volts);
    ltruth_free(l);
}

/* Mains hum at 60 Hz with its harmonics, each at its amplitude. */
static void hum_harmonics_at_their_levels(void **state)
{
    (void)state;
    truth_t *tr = make_truth();
    pl_rigsim_config c;
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    double h[PL_RIGSIM_HUM_HARMONICS] = {0.5e-3, 0.3e-3, 0.2e-3, 0.1e-3};
    bare(&c);
    c.hum = 1;
    c.hum_freq_hz = 60;
    c.hum_amp_v = 2e-3;
    c.hum_phase_rad = 1.0;
    memcpy(c.hum_harmonic_v, h, sizeof h);
    for (int i = 0; i < PL_RIGSIM_HUM_HARMONICS; i++)
        c.hum_harmonic_phase[i] = 0.3 * i;
    render(&c, tr, codes, volts);
    /* The 2000-sample lead-in is twelve 60 Hz periods: harmonic m is bin 12 m. */
    double *in = fftw_alloc_real(2000);
    fftw_complex *out = fftw_alloc_complex(1001);
    fftw_plan p = fftw_plan_dft_r2c_1d(2000, in, out, FFTW_ESTIMATE);
    for (int k = 0; k < 2000; k++)
        in[k] = volts[2 * k];
    fftw_execute(p);
    tu_assert_close(2 * hypot(out[12][0], out[12][1]) / 2000, 2e-3, 1e-9);
    for (int m = 2; m <= 5; m++)
        tu_assert_close(2 * hypot(out[12 * m][0], out[12 * m][1]) / 2000, h[m - 2], 1e-9);
    fftw_destroy_plan(p);
    fftw_free(in);
    fftw_free(out);
    free(codes);
    free(volts);
    free(tr);
}

/* Random chains: the same seed the same chain; every level inside the
 * ranges docs/rig.md states; each optional artefact both on and off. */
static void random_chains_in_their_ranges(void **state)
{
    (void)state;
    pl_rigsim_config a, b;
    pl_err err = {0};
    int on[3] = {0, 0, 0};
    pl_rigsim_config_random(&a, 77);
    pl_rigsim_config_random(&b, 77);
    assert_memory_equal(&a, &b, sizeof a);
    pl_rigsim_config_random(&b, 78);
    assert_true(memcmp(&a, &b, sizeof a) != 0);
    for (unsigned long s = 1; s <= 2000; s++) {
        pl_rigsim_config_random(&a, s);
        assert_int_equal(pl_rigsim_validate(&a, &err), PL_OK);
        assert_int_equal(a.seed, s);
        assert_true(a.track && a.noise && a.offset && a.hum && a.impact_shape);
        assert_true(a.track_cutoff_hz >= 1200 && a.track_cutoff_hz <= 25000);
        assert_true(a.noise_rms_mps >= 10e-6 && a.noise_rms_mps <= 500e-6);
        assert_true(a.pink_rms_mps >= 20e-6 && a.pink_rms_mps <= 600e-6);
        assert_true(a.dropout_rate_hz >= 0.2 && a.dropout_rate_hz <= 4);
        assert_true(a.dropout_min_s == 0.3e-3 && a.dropout_max_s == 3e-3);
        assert_true(a.ring_freq_hz >= 1200 && a.ring_freq_hz <= 5000);
        assert_true(a.ring_decay_s >= 0.5e-3 && a.ring_decay_s <= 5e-3);
        assert_true(a.ring_rel_amp >= 0.05 && a.ring_rel_amp <= 1.5);
        assert_true(a.impact_duration_s >= 0.1e-3 && a.impact_duration_s <= 0.5e-3);
        assert_true(a.hum_freq_hz == 50 || a.hum_freq_hz == 60);
        assert_true(a.hum_amp_v >= 0.1e-3 && a.hum_amp_v <= 20e-3);
        for (int i = 0; i < 2; i++) {
            assert_true(fabs(a.offset_v[i]) >= 0.1e-3 && fabs(a.offset_v[i]) <= 80e-3);
            assert_true(a.ldv_scale_mps_per_v[i] == 0.025 || a.ldv_scale_mps_per_v[i] == 0.05);
        }
        on[0] += a.pink;
        on[1] += a.dropout;
        on[2] += a.ringing;
    }
    /* switched on 60 %, 50 %, 80 % of the time */
    tu_assert_close(on[0] / 2000.0, 0.6, 0.05);
    tu_assert_close(on[1] / 2000.0, 0.5, 0.05);
    tu_assert_close(on[2] / 2000.0, 0.8, 0.05);
}

/* Random recordings: reproducible, inside their ranges, and rolling to
 * the end of the file or off the ramp (no slip) for the first seeds. */
static void random_recordings_roll(void **state)
{
    (void)state;
    pl_simrun_config a, b;
    pl_simrun_config_random(&a, 9);
    pl_simrun_config_random(&b, 9);
    assert_memory_equal(&a, &b, sizeof a);
    for (unsigned long s = 1; s <= 12; s++) {
        pl_simrun_config_random(&a, s);
        assert_true(a.model.N >= 18 && a.model.N <= 40);
        assert_true(a.rate_hz >= 5000 && a.rate_hz <= 50000 && a.rate_hz == floor(a.rate_hz));
        assert_true(a.model.lambda0 < M_PI / a.model.N + a.model.beta);
        pl_simrun *sim = NULL;
        pl_err err = {0};
        assert_int_equal(pl_simrun_create(&sim, &a, &err), PL_OK);
        pl_model_end e = pl_simrun_model(sim)->end;
        assert_true(e == PL_END_DURATION || e == PL_END_LEFT_RAMP);
        assert_true(pl_simrun_model(sim)->n_impacts > 20);
        assert_int_equal(pl_simrun_clipped(sim), 0);
        pl_simrun_destroy(sim);
    }
}

/* --- a lab's faults ----------------------------------------------------- */

/* An ideal chain with white noise: the noise draws are the same with and
 * without a fault, so each fault shows as an exact difference. */
static void noisy_ideal(pl_rigsim_config *c)
{
    pl_rigsim_config_default(c);
    pl_rigsim_config_ideal(c);
    c->noise = 1;
    c->noise_rms_mps = 1e-4;
    c->seed = 5;
}

static double to_mps(const pl_rigsim_config *c, int ch, double volts)
{
    return c->beam_sign[ch] * volts * c->ldv_scale_mps_per_v[ch];
}

static void beam_loss_leaves_the_noise_floor(void **state)
{
    (void)state;
    pl_rigsim_config c, f;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *clean = malloc(2 * N * sizeof *clean), *lost = malloc(2 * N * sizeof *lost);
    noisy_ideal(&c);
    render(&c, tr, codes, clean);
    f = c;
    f.beam_loss = 1;
    f.beam_loss_channel = 1;
    f.beam_loss_start_s = 0.8;
    f.beam_loss_len_s = 0.25;
    size_t k0, k1;
    pl_rigsim_beam_loss_span(&f, &tr->t, &k0, &k1);
    assert_int_equal(k0, 8000);
    assert_int_equal(k1, 10500);
    render(&f, tr, codes, lost);
    for (size_t k = 0; k < N; k++) {
        /* the other beam keeps the prism: not a bit changed */
        assert_true(lost[2 * k] == clean[2 * k]);
        double want = to_mps(&c, 1, clean[2 * k + 1]) - (k >= k0 && k < k1 ? tr->v2[k] : 0.0);
        tu_assert_close(to_mps(&c, 1, lost[2 * k + 1]), want, 1e-12);
    }
    /* over the span: the noise floor only (mean 0, RMS the noise's) */
    double mean, rms = rms_of(lost + 1, 2, (int)k0, (int)k1, &mean);
    tu_assert_close(rms * 0.025, 1e-4, 0.1e-4);
    tu_assert_close(mean * 0.025, 0.0, 1e-5);
    /* the prism just before */
    assert_true(fabs(lost[2 * (k0 - 1) + 1]) > 0.5 * tr->v2[k0 - 1] / 0.025);

    /* At a fraction of the motion, with garbage at the edges: inside
     * the edges still the noise floor, the garbage within the edges. */
    f.beam_loss_start_s = -1;
    f.beam_loss_frac = 0.5; /* release 0.2 s, motion to 2 s: from 1.1 s */
    f.beam_loss_edge_s = 0.005;
    f.beam_loss_edge_mps = 0.03;
    pl_rigsim_beam_loss_span(&f, &tr->t, &k0, &k1);
    assert_int_equal(k0, 11000);
    assert_int_equal(k1, 13500);
    render(&f, tr, codes, lost);
    double g = 0;
    for (size_t k = 0; k < N; k++) {
        assert_true(lost[2 * k] == clean[2 * k]);
        if (k < k0 || k >= k1)
            assert_true(lost[2 * k + 1] == clean[2 * k + 1]);
        else if (k >= k0 + 50 && k < k1 - 50)
            tu_assert_close(to_mps(&c, 1, lost[2 * k + 1]),
                            to_mps(&c, 1, clean[2 * k + 1]) - tr->v2[k], 1e-12);
        else
            g = fmax(g, fabs(to_mps(&c, 1, lost[2 * k + 1])));
    }
    assert_true(g > 0.01); /* garbage at the edges, cm/s */
    free(codes);
    free(clean);
    free(lost);
    free(tr);
}

static void clipping_holds_the_rail_on_one_channel(void **state)
{
    (void)state;
    pl_rigsim_config c;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *volts = malloc(2 * N * sizeof *volts);
    size_t clipped = 0;
    pl_err err = {0};
    noisy_ideal(&c);
    c.clip = 1;
    c.clip_channel = 0;
    c.clip_frac = 0.85;
    pl_rigsim_fit_clip(&c, &tr->t);
    /* the peaks at 2 s: omega 0.8 x 0.5 x 1.8 rad/s; beam 2 needs 1.3 x
     * its peak and 6 sigma of noise */
    double peak = tr->v1[N - 1] / 0.025, need2 = 1.3 * tr->v2[N - 1] / 0.025 + 6e-4 / 0.025;
    tu_assert_close(c.adc_max_v, 0.85 * peak, 1e-9);
    tu_assert_close(c.adc_min_v, -0.85 * peak, 1e-9);
    assert_true(c.adc_max_v > need2); /* beam 2 inside */
    assert_int_equal(pl_rigsim_render(&c, &tr->t, codes, volts, &clipped, &err), PL_OK);
    size_t rail0 = 0, beyond = 0;
    for (size_t k = 0; k < N; k++) {
        int over = volts[2 * k] > c.adc_max_v;
        beyond += over;
        if (over)
            assert_int_equal(codes[2 * k], 65535); /* flat at the rail */
        rail0 += codes[2 * k] == 65535 || codes[2 * k] == 0;
        assert_true(codes[2 * k + 1] != 0 && codes[2 * k + 1] != 65535);
    }
    /* part of the run, not all of it: beam 1 beyond 0.85 of its peak
     * from about 1.73 s on */
    assert_true(beyond > 2000 && beyond < 3500);
    assert_int_equal(clipped, beyond);
    assert_true(rail0 >= beyond && rail0 < beyond + 20);
    /* a range below what beam 2 needs: beam 2 sets it */
    c.clip_frac = 0.01;
    c.adc_min_v = -10;
    c.adc_max_v = 10;
    pl_rigsim_fit_clip(&c, &tr->t);
    tu_assert_close(c.adc_max_v, need2, 1e-9);
    free(codes);
    free(volts);
    free(tr);
}

static double vib_u(const pl_rigsim_config *c, size_t k)
{
    double u = 0;
    for (int i = 0; i < c->vib_n; i++)
        u += c->vib_amp_mps[i] * sin(2 * M_PI * c->vib_freq_hz[i] * k / RATE + c->vib_phase_rad[i]);
    return u;
}

static void vibration_moves_both_beams_alike(void **state)
{
    (void)state;
    pl_rigsim_config c, f;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *clean = malloc(2 * N * sizeof *clean), *vib = malloc(2 * N * sizeof *vib);
    tr->t.leave_index = 15000;
    noisy_ideal(&c);
    c.beam_sign[0] = 1; /* opposite beams: the same physical velocity */
    c.beam_sign[1] = -1;
    c.ldv_scale_mps_per_v[1] = 0.05;
    render(&c, tr, codes, clean);
    f = c;
    f.vibration = 1;
    f.vib_n = 2;
    f.vib_freq_hz[0] = 23;
    f.vib_amp_mps[0] = 1.5e-3;
    f.vib_freq_hz[1] = 9;
    f.vib_amp_mps[1] = 0.6e-3;
    f.vib_phase_rad[1] = 1.0;
    render(&f, tr, codes, vib);
    double peak = 0;
    for (size_t k = 0; k < N; k++) {
        double u = k < 15000 ? vib_u(&f, k) : 0.0;
        double d0 = to_mps(&c, 0, vib[2 * k]) - to_mps(&c, 0, clean[2 * k]);
        double d1 = to_mps(&c, 1, vib[2 * k + 1]) - to_mps(&c, 1, clean[2 * k + 1]);
        tu_assert_close(d0, u, 1e-12);
        tu_assert_close(d1, u, 1e-12);
        peak = fmax(peak, fabs(d0));
    }
    assert_true(peak > 1.5e-3 && peak <= 2.1e-3 + 1e-12);
    free(codes);
    free(clean);
    free(vib);
    free(tr);
}

static void tail_garbage_then_nothing(void **state)
{
    (void)state;
    pl_rigsim_config c, f;
    truth_t *tr = make_truth();
    uint16_t *codes = malloc(2 * N * sizeof *codes);
    double *clean = malloc(2 * N * sizeof *clean), *tail = malloc(2 * N * sizeof *tail);
    tr->t.leave_index = 14000;
    pl_rigsim_config_default(&c);
    pl_rigsim_config_ideal(&c);
    render(&c, tr, codes, clean);
    f = c;
    f.tail_garbage = 1;
    f.tail_garbage_s = 0.3;
    f.tail_garbage_mps = 0.03;
    render(&f, tr, codes, tail);
    for (int ch = 0; ch < 2; ch++) {
        for (size_t k = 0; k < 14000; k++) /* the motion untouched */
            assert_true(tail[2 * k + ch] == clean[2 * k + ch]);
        for (size_t k = 17000; k < N; k++) /* then 0 V: no motion at all */
            assert_true(tail[2 * k + ch] == 0.0);
        double mean, rms = rms_of(tail + ch, 2, 14000, 17000, &mean);
        /* garbage of a few cm/s (the random walk's 3 cm/s and spikes) */
        assert_true(rms * 0.025 > 0.015 && rms * 0.025 < 0.08);
        size_t zeros = 0;
        for (size_t k = 14000; k < 17000; k++)
            zeros += tail[2 * k + ch] == 0.0;
        assert_true(zeros < 10);
    }
    /* the two channels' garbage is not the same */
    assert_true(tail[2 * 15000] != tail[2 * 15000 + 1]);
    free(codes);
    free(clean);
    free(tail);
    free(tr);
}

/* The faults' draw: the chain under it the chain without it; each fault
 * both on and off, at the rates and in the ranges docs/rig.md states;
 * the recording's draw keeps the plain one's prism and ramp. */
static void random_faults_on_top_of_the_chain(void **state)
{
    (void)state;
    pl_rigsim_config a, b;
    pl_err err = {0};
    int on[4] = {0, 0, 0, 0};
    size_t from = offsetof(pl_rigsim_config, vibration); /* the faults from here */
    for (unsigned long s = 1; s <= 2000; s++) {
        pl_rigsim_config_random(&b, s);
        pl_rigsim_config_random_faults(&a, s);
        assert_int_equal(pl_rigsim_validate(&a, &err), PL_OK);
        assert_memory_equal(&a, &b, from);
        assert_int_equal(a.seed, b.seed);
        assert_true(a.vib_n >= 1 && a.vib_n <= 3);
        for (int i = 0; i < 3; i++) {
            assert_true(a.vib_freq_hz[i] >= 5 && a.vib_freq_hz[i] <= 40);
            assert_true(a.vib_amp_mps[i] >= 0.2e-3 && a.vib_amp_mps[i] <= 2e-3);
        }
        assert_true(a.beam_loss_start_s < 0 && a.beam_loss_frac >= 0.15 && a.beam_loss_frac <= 0.75);
        assert_true(a.beam_loss_len_s >= 0.05 && a.beam_loss_len_s <= 0.4);
        assert_true(a.beam_loss_edge_s == 0 || (a.beam_loss_edge_s >= 2e-3 && a.beam_loss_edge_s <= 10e-3));
        assert_true(a.tail_garbage_s >= 0.3 && a.tail_garbage_s <= 1.5);
        assert_true(a.tail_garbage_mps >= 0.01 && a.tail_garbage_mps <= 0.05);
        assert_true(a.clip_channel == 0 && a.clip_frac >= 0.6 && a.clip_frac <= 0.9);
        on[0] += a.vibration;
        on[1] += a.beam_loss;
        on[2] += a.tail_garbage;
        on[3] += a.clip;
    }
    tu_assert_close(on[0] / 2000.0, 0.35, 0.05);
    tu_assert_close(on[1] / 2000.0, 0.35, 0.05);
    tu_assert_close(on[2] / 2000.0, 0.5, 0.05);
    tu_assert_close(on[3] / 2000.0, 0.3, 0.05);
    for (unsigned long s = 1; s <= 50; s++) {
        pl_simrun_config p, q;
        pl_simrun_config_random(&p, s);
        pl_simrun_config_random_faults(&q, s);
        assert_memory_equal(&p.model, &q.model, sizeof p.model);
        assert_true(p.rate_hz == q.rate_hz && p.lead_in_s == q.lead_in_s);
        if (q.rig.tail_garbage) {
            assert_true(q.model.ramp_length > 0);
            tu_assert_close(q.tail_s, q.rig.tail_garbage_s + 0.3, 1e-12);
        } else {
            assert_true(q.tail_s == p.tail_s);
        }
    }
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
        cmocka_unit_test(tracking_filter_is_the_analogue_bessel),
        cmocka_unit_test(tracking_filter_minus_3db_at_its_cutoff),
        cmocka_unit_test(pink_noise_slope_and_rms),
        cmocka_unit_test(dropouts_count_and_lengths),
        cmocka_unit_test(hum_harmonics_at_their_levels),
        cmocka_unit_test(random_chains_in_their_ranges),
        cmocka_unit_test(random_recordings_roll),
        cmocka_unit_test(beam_loss_leaves_the_noise_floor),
        cmocka_unit_test(clipping_holds_the_rail_on_one_channel),
        cmocka_unit_test(vibration_moves_both_beams_alike),
        cmocka_unit_test(tail_garbage_then_nothing),
        cmocka_unit_test(random_faults_on_top_of_the_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
