/* tests/process/process_test.c - the processing stage on signals whose
 * answers are known: closed forms (constant rotation, uniform
 * acceleration, steps of known size and time, a pure tone), the malformed
 * inputs, and the scores against the rig simulator's truth on every
 * fixture run (issue 7's numbers, printed and asserted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/simrun.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"
#include "process/frontend.h"
#include "process/process.h"
#include "process/spectral.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RATE = 10000 };
static const double H1 = 0.0199, H2 = 0.0116;

/* v_p = v_c + omega h for a rolling body: build both beams from omega(t)
 * and a centre speed, so that (4.1) must give omega back. */
static void beams(const double *omega, size_t n, double *v1, double *v2)
{
    for (size_t i = 0; i < n; i++) {
        double vc = 0.015 * omega[i];
        v1[i] = vc + omega[i] * (H1 - 0.015);
        v2[i] = vc + omega[i] * (H2 - 0.015);
    }
}

/* A prism of N edges (a0 15 mm) released at rest at lambda0 on a slope
 * of beta, by the contact phase (2.1) integrated in 20 steps a sample and
 * a line impact of ratio r whenever a face lands: omega[i] is the speed at
 * sample i, truth[] the impact instants (s) and *theta_end the angle
 * turned at the last sample.  Returns the number of impacts. */
typedef struct {
    int N;
    double beta, lambda0, r, release_t;
} rolling;

static size_t roll(const rolling *p, size_t n, double *omega, double *truth, size_t cap,
                   double *theta_end)
{
    double alpha = M_PI / p->N, K = 6 * 9.81 / (0.015 * (cos(2 * alpha) + 8));
    double w = 0, lam = p->lambda0, th = 0, h = 1.0 / RATE / 20;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (int s = 0; s < 20 && (double)i / RATE >= p->release_t; s++) {
            double t = (double)i / RATE + (s + 1) * h;
            w += K * sin(alpha + p->beta - lam) * h;
            lam -= w * h;
            th += w * h;
            if (lam <= 0) {
                if (k < cap)
                    truth[k] = t;
                k++;
                w *= p->r;
                lam += 2 * alpha;
            }
        }
        omega[i] = w;
    }
    *theta_end = th;
    return k;
}

/* The truth impacts with data after them (an impact in the last 3 ms
 * of a recording leaves too little of its after-arc to be told). */
static size_t in_window(const double *truth, size_t nt, double end_t)
{
    size_t k = 0;
    while (k < nt && truth[k] < end_t - 0.003)
        k++;
    return k;
}

/* Five seconds of a rolling prism: omega, room for both beams, the
 * truth's impacts. */
enum { ROLL_S = 5, ROLL_CAP = 200 };

typedef struct {
    size_t n, nt;
    double *om, *v1, *v2, truth[ROLL_CAP], th_end;
} rolled;

static void rolled_make(rolled *x, const rolling *p)
{
    x->n = ROLL_S * RATE;
    x->om = malloc(x->n * sizeof *x->om);
    x->v1 = malloc(x->n * sizeof *x->v1);
    x->v2 = malloc(x->n * sizeof *x->v2);
    assert_non_null(x->om);
    assert_non_null(x->v1);
    assert_non_null(x->v2);
    x->nt = roll(p, x->n, x->om, x->truth, ROLL_CAP, &x->th_end);
    assert_true(x->nt > 50 && x->nt < ROLL_CAP);
}

/* rolled_make() with both beams' velocities of the rolling (beams()):
 * the start of every test that adds a fault to the beams. */
static void rolled_beams(rolled *x, const rolling *p)
{
    rolled_make(x, p);
    beams(x->om, x->n, x->v1, x->v2);
}

static void rolled_free(rolled *x)
{
    free(x->om);
    free(x->v1);
    free(x->v2);
}

static pl_process_config quiet_config(void)
{
    pl_process_config c;
    pl_process_config_default(&c);
    c.cutoff_hz = 0;   /* closed forms: no filter */
    return c;
}

/* The first n samples of x's beams through the processing with
 * quiet_config() and the ramp's slope beta (NAN: not given), which must
 * succeed. */
static void process_quiet(const rolled *x, size_t n, int N, double beta, pl_process_result *r)
{
    pl_process_config c = quiet_config();
    c.lattice.beta_rad = beta;
    pl_err err = {0};
    assert_int_equal(pl_process_signals(x->v1, x->v2, n, RATE, H1, H2, N, &c, r, &err), PL_OK);
}

/* Noise-free arcs and instantaneous impacts: every impact of the
 * lattice, each within the half sample the sampling leaves of its
 * instant (the step shows between two samples), the ratio within the
 * loss that half sample's kink allows, and L_p anchored to the lattice
 * equal to the angle turned.  The omega[i] of roll() is the speed at the
 * end of sample i's interval, so the instants are read a sample early. */
static void test_lattice_on_clean_arcs(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    const double *truth = x.truth;
    beams(x.om, x.n, x.v1, x.v2);
    pl_process_result r;
    process_quiet(&x, x.n, p.N, NAN, &r);
    tu_assert_close(r.release_t, 0.5, 2e-3);
    size_t nt = in_window(truth, x.nt, r.end_t);
    assert_int_equal(r.n_impacts, nt);
    assert_int_equal(r.n_expected, nt);
    assert_int_equal(r.n_confirmed, nt);
    double bias = 0;
    for (size_t i = 0; i < nt; i++) {
        tu_assert_close(r.impacts[i].t_s, truth[i] - 1.0 / RATE, 0.6 / RATE);
        double loss = 1 - r.impacts[i].ratio;
        tu_assert_close(loss, 1 - p.r, 0.25 * (1 - p.r));
        bias += loss / (1 - p.r) - 1;
        assert_true(r.impacts[i].confirmed == 1);
        /* noise-free arcs fit (2.1)'s form exactly: the tops' ratios
         * state errors at rounding level (0 to 2e-9), the ends' from
         * their arcs 1.5e-3 */
        assert_true(r.impacts[i].ratio_se >= 0 && r.impacts[i].ratio_se < 0.01);
    }
    /* the half-sample errors fall either way: the mean loss is right */
    tu_assert_close(bias / nt, 0, 0.02);
    tu_assert_close(r.lp_end, 22 * x.th_end / (2 * M_PI), 0.02);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A known decoder delay (process --decoder-delay) moves every instant
 * back by it and nothing else: intervals, ratios, their errors and L_p as
 * without it, the record saying so. */
static void test_known_decoder_delay(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    pl_process_result a, b;
    process_quiet(&x, x.n, p.N, NAN, &a);
    pl_process_config c = quiet_config();
    c.lattice.decoder_delay_s = 120e-6;
    pl_err err = {0};
    assert_int_equal(pl_process_signals(x.v1, x.v2, x.n, RATE, H1, H2, p.N, &c, &b, &err), PL_OK);
    assert_int_equal(a.n_impacts, b.n_impacts);
    assert_true(a.decoder_shift_s == 0);
    tu_assert_close(b.decoder_shift_s, -120e-6, 1e-15);
    for (size_t i = 0; i < a.n_impacts; i++) {
        tu_assert_close(b.impacts[i].t_s, a.impacts[i].t_s - 120e-6, 1e-12);
        assert_true(b.impacts[i].t_sd_s == a.impacts[i].t_sd_s);
        assert_true(b.impacts[i].ratio == a.impacts[i].ratio);
        assert_true(b.impacts[i].ratio_se == a.impacts[i].ratio_se);
        if (i + 1 < a.n_impacts)
            tu_assert_close(b.impacts[i].interval_s, a.impacts[i].interval_s, 1e-12);
    }
    assert_true(b.lp_end == a.lp_end);
    pl_process_result_free(&a);
    pl_process_result_free(&b);
    rolled_free(&x);
}

/* A recording that stops 4.5 ms after a landing still shows it: the step
 * statistic needs 6 ms either side and cannot be formed there, but the
 * arcs can, and their step stands in for it (the corpus's chains that end
 * on the ramp lost their last impact before).  The same on a window that
 * starts late is not needed: the release leads every first impact. */
static void test_last_impact_near_the_end(void **state)
{
    (void)state;
    rolling p = {30, 0.37 * M_PI / 180, 5.3 * M_PI / 180, 0.9933, 0.5};
    rolled x;
    rolled_make(&x, &p);
    /* cut 4.5 ms after an impact well inside the run */
    size_t last = x.nt - 5, cut = (size_t)(x.truth[last] * RATE) + 45;
    beams(x.om, cut, x.v1, x.v2);
    pl_process_result r;
    process_quiet(&x, cut, p.N, p.beta, &r);
    assert_int_equal(r.n_impacts, last + 1);
    tu_assert_close(r.impacts[last].t_s, x.truth[last] - 1.0 / RATE, 0.6 / RATE);
    tu_assert_close(1 - r.impacts[last].ratio, 1 - p.r, 0.25 * (1 - p.r));
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* The slot past the last is tested on its own (end_slot()): an impact
 * there must show.  A prism that leaves the ramp turns on in the air at
 * the speed it had, past the next slot's angle, without landing: no
 * impact may be reported there, with the beams' noise as in a real
 * chain (here 60 ms of flight, the next slot's angle passed 20 ms before
 * the data end). */
static void test_no_impact_in_flight(void **state)
{
    (void)state;
    rolling p = {30, 0.37 * M_PI / 180, 5.3 * M_PI / 180, 0.9933, 0.5};
    rolled x;
    rolled_make(&x, &p);
    size_t last = x.nt - 5, lift = (size_t)(x.truth[last] * RATE) + 30, cut = lift;
    double gap = 2 * M_PI / p.N, turned = 0, w = x.om[lift - 1];
    for (; cut < x.n && turned < gap; cut++) {   /* on in the air past the next slot */
        x.om[cut] = w;
        turned += w / RATE;
    }
    for (size_t i = cut; i < x.n && i < cut + (size_t)(0.02 * RATE); i++)
        x.om[i] = w;
    cut += (size_t)(0.02 * RATE);
    beams(x.om, cut, x.v1, x.v2);
    unsigned long rnd = 777;
    for (size_t i = 0; i < cut; i++) {
        x.v1[i] += 5e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 5e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
    }
    pl_process_result r;
    process_quiet(&x, cut, p.N, p.beta, &r);
    assert_true(r.end_t > x.truth[last] + 0.9 * gap / w);   /* the slot lies inside */
    assert_int_equal(r.n_impacts, last + 1);
    tu_assert_close(r.impacts[last].t_s, x.truth[last] - 1.0 / RATE, 3.0 / RATE);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* What a real LDV chain adds - DC offsets, 50 Hz hum, drop-outs to 0 V
 * on one beam at a time, white noise, a speckle spike in the lead-in - is
 * measured and undone: the front end reports each, and the impacts stay
 * where they are.  (The spike, 5 samples of -4.9 V on a 0.05 m/s/V
 * decoder, moved a mean offset by 6e-4 m/s and the release to the start
 * of the recording, 0.5 s early.) */
static void test_front_end_undoes_the_chain(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    size_t n = x.n, nt = x.nt;
    double *v1 = x.v1, *v2 = x.v2;
    const double *truth = x.truth;
    beams(x.om, n, v1, v2);
    unsigned long rnd = 12345;
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / RATE, u1 = tu_uniform(&rnd), u2 = tu_uniform(&rnd);
        v1[i] += 1.2e-3 + 4e-4 * sin(2 * M_PI * 50 * t + 0.3) + 5e-5 * (u1 - 0.5) * 3.46;
        v2[i] += -0.9e-3 + 4e-4 * sin(2 * M_PI * 50 * t + 0.3) + 5e-5 * (u2 - 0.5) * 3.46;
    }
    for (size_t i = 245; i < 250; i++)
        v1[i] = -4.9 * 0.05;
    /* drop-outs: the decoder at 0 V (the offset and hum remain) */
    size_t drops[] = {11000, 17400, 23050, 31333, 40010};
    for (size_t d = 0; d < 5; d++)
        for (size_t i = drops[d]; i < drops[d] + 15; i++) {
            double t = (double)i / RATE, base = 4e-4 * sin(2 * M_PI * 50 * t + 0.3);
            if (d % 2)
                v1[i] = 1.2e-3 + base;
            else
                v2[i] = -0.9e-3 + base;
        }
    pl_process_config c;
    pl_process_config_default(&c);
    pl_process_result r;
    pl_err err = {0};
    assert_int_equal(pl_process_signals(v1, v2, n, RATE, H1, H2, 22, &c, &r, &err), PL_OK);
    tu_assert_close(r.release_t, 0.5, 2e-3);
    tu_assert_close(r.front.offset_mps[0], 1.2e-3, 2e-5);
    tu_assert_close(r.front.offset_mps[1], -0.9e-3, 2e-5);
    tu_assert_close(r.front.hum_hz, 50, 0.1);
    tu_assert_close(r.front.hum_amp_mps[0], 4e-4, 2e-5);
    assert_int_equal(r.front.dropouts[0] + r.front.dropouts[1], 5);
    assert_int_equal(r.front.dropouts[0], 2);
    nt = in_window(truth, nt, r.end_t);
    assert_int_equal(r.n_impacts, nt);
    double bias = 0;
    for (size_t i = 0; i < nt; i++) {
        tu_assert_close(r.impacts[i].t_s, truth[i] - 1.0 / RATE, 0.1e-3);
        bias += (1 - r.impacts[i].ratio) / (1 - p.r) - 1;
    }
    tu_assert_close(bias / nt, 0, 0.05);
    assert_non_null(strstr(r.warnings, "drop-outs"));
    assert_non_null(strstr(r.warnings, "hum at 50"));
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A hum that hides the first rise.  The release search's line runs from
 * where the speed stands 8 noise standard deviations up; with the hum in
 * that noise the threshold comes near the first impact's speed, the line
 * then reaches over the impacts and meets zero before the recording
 * began, and the front end was left no lead-in: no offsets, no hum
 * fitted at all (faulted corpus seed 89: 19 mV of hum, 19 of 51 impacts
 * lost).  The hum enters the two channels in volts, and the beams are
 * mounted in opposite senses, so in omega (4.1) it adds up. */
static void test_hum_hides_the_first_rise(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 777;
    for (size_t i = 0; i < x.n; i++) {
        double t = (double)i / RATE, hum = 1.2e-3 * sin(2 * M_PI * 50 * t + 1.1);
        x.v1[i] += 0.5e-3 + hum + 5e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += -0.3e-3 - hum + 5e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
    }
    pl_process_config c;
    pl_process_config_default(&c);
    pl_process_result r;
    pl_err err = {0};
    assert_int_equal(pl_process_signals(x.v1, x.v2, x.n, RATE, H1, H2, 22, &c, &r, &err), PL_OK);
    tu_assert_close(r.release_t, 0.5, 2e-3);
    assert_null(strstr(r.warnings, "lead-in before the release is only"));
    tu_assert_close(r.front.hum_amp_mps[0], 1.2e-3, 5e-5);
    tu_assert_close(r.front.offset_mps[0], 0.5e-3, 2e-5);
    size_t nt = in_window(x.truth, x.nt, r.end_t);
    assert_int_equal(r.n_impacts, nt);
    for (size_t i = 0; i < nt; i++)
        tu_assert_close(r.impacts[i].t_s, x.truth[i] - 1.0 / RATE, 0.1e-3);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A bridge joins the beam it mends at both edges.  The beams carry their
 * own noise, 1/f noise most, which wanders apart by more than white noise
 * does: here beam 1 alone carries a slow 3 Hz wander of 0.4 mm/s and
 * drops to 0 V for 2 ms at the wander's crest.  The other beam's velocity
 * scaled to beam 1's height has none of it, so a bridge of that alone
 * stepped the combined omega by 0.014 rad/s at each edge (a fifth of a
 * 23-edge prism's step at this speed), where the motion moves it by
 * 1e-4 rad/s a sample. */
static void test_bridge_joins_the_beams(void **state)
{
    (void)state;
    enum { N = 20000, LEAD = 5000, A = 12500, LEN = 20 };
    double *v1 = malloc(N * sizeof *v1), *v2 = malloc(N * sizeof *v2);
    double *om = malloc(N * sizeof *om);
    assert_non_null(v1);
    assert_non_null(v2);
    assert_non_null(om);
    unsigned long rnd = 777;
    for (size_t i = 0; i < N; i++) {
        double t = (double)i / RATE, w = i < LEAD ? 0 : 2 + (t - 0.5);
        /* the crest of the wander at sample A: 3 Hz, 0.4 mm/s */
        double wander = 4e-4 * cos(2 * M_PI * 3 * (double)((long)i - A) / RATE);
        v1[i] = w * H1 + wander + 1e-6 * (tu_uniform(&rnd) - 0.5);
        v2[i] = w * H2 + 1e-6 * (tu_uniform(&rnd) - 0.5);
    }
    for (size_t i = A; i < A + LEN; i++)
        v1[i] = 0;
    double *v[2] = {v1, v2}, h[2] = {H1, H2};
    pl_frontend_report rep;
    pl_err err = {0};
    assert_int_equal(pl_frontend_run(v, N, RATE, h, LEAD, LEAD, om, 1, &rep, &err), PL_OK);
    assert_int_equal(rep.dropouts[0], 1);
    assert_int_equal(rep.dropouts[1], 0);
    double worst = 0;
    for (size_t i = A - 40; i < A + LEN + 40; i++)
        worst = fmax(worst, fabs(om[i] - om[i - 1]));
    assert_true(worst < 1e-3);
    free(v1);
    free(v2);
    free(om);
}

/* The ratios' mean loss bias over the impacts of r matched to x's
 * truth, and their spread; each detected impact within 0.2 ms of its
 * truth. */
/* x's beams through the processing with the default configuration,
 * which must succeed, for a prism of N edges. */
static void process_rolled(const rolled *x, int N, pl_process_result *r)
{
    pl_process_config c;
    pl_process_config_default(&c);
    pl_err err = {0};
    assert_int_equal(pl_process_signals(x->v1, x->v2, x->n, RATE, H1, H2, N, &c, r, &err), PL_OK);
}

static void score_rolled(const rolled *x, const pl_process_result *r, double ratio,
                         double *bias, double *sd)
{
    size_t nt = in_window(x->truth, x->nt, r->end_t);
    assert_int_equal(r->n_impacts, nt);
    double s = 0, s2 = 0;
    for (size_t i = 0; i < nt; i++) {
        if (fabs(r->impacts[i].t_s - (x->truth[i] - 1.0 / RATE)) > 0.2e-3)
            fail_msg("impact %zu at %.5f s, the truth's at %.5f s", i, r->impacts[i].t_s,
                     x->truth[i]);
        double b = (1 - r->impacts[i].ratio) / (1 - ratio) - 1;
        s += b;
        s2 += b * b;
    }
    *bias = s / (double)nt;
    *sd = sqrt(fmax(0, s2 / (double)nt - *bias * *bias));
}

/* A beam that loses the prism for 300 ms mid-run (its decoder at 0 V)
 * is carried by the other: every impact is found through it, the
 * ratios stay unbiased, L_p runs on to the end, and the record says
 * which beam was lost from when to when. */
/* A rolled run of p with white noise of sd noise on both beams (seed)
 * and beam `lost` (1 or 2) from 2.5 to 2.8 s replaced by held plus
 * white noise of sd held_noise: a beam that lost the prism. */
static void roll_lost(rolled *x, const rolling *p, double noise, unsigned long seed, int lost,
                      double held, double held_noise)
{
    rolled_beams(x, p);
    for (size_t i = 0; i < x->n; i++) {
        x->v1[i] += noise * (tu_uniform(&seed) - 0.5) * 3.46;
        x->v2[i] += noise * (tu_uniform(&seed) - 0.5) * 3.46;
    }
    double *v = lost == 1 ? x->v1 : x->v2;
    for (size_t i = 25000; i < 28000; i++)
        v[i] = held + held_noise * (tu_uniform(&seed) - 0.5) * 3.46;
}

/* Processes x with beam `lost` lost from 2.5 to 2.8 s into r: the window
 * runs to the end, the impacts are unbiased, L_p is the angle turned,
 * and the record holds that one loss. */
static void check_lost(const rolled *x, const rolling *p, int lost, pl_process_result *r)
{
    process_rolled(x, p->N, r);
    assert_true(r->end_t > 4.9);
    double bias, sd;
    score_rolled(x, r, p->r, &bias, &sd);
    tu_assert_close(bias, 0, 0.03);
    tu_assert_close(r->lp_end, p->N * x->th_end / (2 * M_PI), 0.01);
    assert_int_equal(r->front.n_lost, 1);
    assert_int_equal(r->front.lost[0].channel, lost);
    tu_assert_close(r->front.lost[0].from_s, 2.5, 0.002);
    tu_assert_close(r->front.lost[0].to_s, 2.8, 0.002);
}

static void test_lost_beam_carried(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    roll_lost(&x, &p, 2e-5, 31, 1, 0, 2e-5);
    pl_process_result r;
    check_lost(&x, &p, 1, &r);
    assert_string_equal(r.quality, "degraded");
    assert_non_null(strstr(r.faults, "beam_lost channel=1 from_s="));
    assert_non_null(strstr(r.warnings, "beam 1 lost the prism from 2.500 s"));
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A beam that never saw the prism: for the whole recording beam `dead`
 * (1 or 2) is white noise of 2e-4 m/s about 0 V with bursts of speckle
 * garbage (2 cm/s, 20-80 ms, every 0.3 s), beside a live beam with
 * 2e-5 m/s of noise.  Before the beams were checked against each other,
 * a dead beam 2 was used until the loss test found it part-way (omega
 * (4.1) read v1 / (h1 - h2), 2.4 times the speed) and a dead beam 1
 * made omega negative: "no motion", with advice to swap both signs. */
static void test_dead_beam_whole_run(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    for (int dead = 1; dead <= 2; dead++) {
        rolled x;
        rolled_beams(&x, &p);
        unsigned long seed = 77 + (unsigned long)dead;
        double *v = dead == 1 ? x.v1 : x.v2, *live = dead == 1 ? x.v2 : x.v1;
        for (size_t i = 0; i < x.n; i++) {
            live[i] += 2e-5 * (tu_uniform(&seed) - 0.5) * 3.46;
            v[i] = 2e-4 * (tu_uniform(&seed) - 0.5) * 3.46;
            size_t in = i % 3000, len = 200 + (i / 3000 % 4) * 200;
            if (in >= 1000 && in < 1000 + len)
                v[i] += 0.02 * (tu_uniform(&seed) - 0.5) * 3.46;
        }
        pl_process_result r;
        process_rolled(&x, p.N, &r);
        assert_int_equal(r.beams.dead, dead);
        assert_true(r.beams.agree < 0.05);
        assert_true(r.end_t > 4.9);
        double bias, sd;
        score_rolled(&x, &r, p.r, &bias, &sd);
        tu_assert_close(bias, 0, 0.03);
        tu_assert_close(r.lp_end, p.N * x.th_end / (2 * M_PI), 0.01);
        /* (4.1) is the live beam's v / h: the last second's mean omega */
        double om = 0;
        for (size_t i = x.n - RATE; i < x.n; i++)
            om += x.om[i] / RATE;
        tu_assert_close(r.omega_last_mean, om, 1e-3 * om);
        assert_string_equal(r.quality, "degraded");
        char want[64];
        snprintf(want, sizeof want, "beam_dead channel=%d ", dead);
        assert_non_null(strstr(r.faults, want));
        assert_int_equal(r.front.n_lost, 0);
        pl_process_result_free(&r);
        rolled_free(&x);
    }
}

/* A decoder past its velocity range: beam `sat` holds its limit (with its
 * noise on top) wherever the motion would take it beyond, well inside
 * any converter's range, while the other beam turns on.  Nothing was at a
 * rail, so nothing was clipped: (4.1) read the flat beam as a slowing
 * prism and the impact search lost the lattice. */
static void test_saturated_inside_the_range(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    for (int sat = 1; sat <= 2; sat++) {
        rolled x;
        rolled_beams(&x, &p);
        unsigned long seed = 91 + (unsigned long)sat;
        double *v = sat == 1 ? x.v1 : x.v2, limit = 4.0 * (sat == 1 ? H1 : H2);
        for (size_t i = 0; i < x.n; i++) {
            x.v1[i] += 2e-5 * (tu_uniform(&seed) - 0.5) * 3.46;
            x.v2[i] += 2e-5 * (tu_uniform(&seed) - 0.5) * 3.46;
            if (v[i] > limit)
                v[i] = limit + 2e-5 * (tu_uniform(&seed) - 0.5) * 3.46;
        }
        pl_process_result r;
        process_rolled(&x, p.N, &r);
        assert_true(r.end_t > 4.9);
        double bias, sd;
        score_rolled(&x, &r, p.r, &bias, &sd);
        tu_assert_close(bias, 0, 0.03);
        tu_assert_close(r.lp_end, p.N * x.th_end / (2 * M_PI), 0.01);
        tu_assert_close(r.front.sat_level_mps[sat - 1], limit, 1e-4);
        assert_true(isnan(r.front.sat_level_mps[2 - sat]));
        assert_string_equal(r.quality, "degraded");
        char want[64];
        snprintf(want, sizeof want, "saturated channel=%d level_mps=", sat);
        assert_non_null(strstr(r.faults, want));
        assert_null(strstr(r.faults, "clipped channel="));
        pl_process_result_free(&r);
        rolled_free(&x);
    }
}

/* The notebook against the beams' ratio v1/v2 (h1/h2 in pure rotation):
 * heights swapped, one height wrong, one sign swapped - each refused,
 * since omega's scale or sign is wrong with it, naming what the data
 * support; the right notebook passes.  Before, the swapped heights gave
 * a negative omega ("no motion") and a wrong height a wrong omega as
 * good. */
static void test_notebook_against_the_ratio(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long seed = 5;
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-5 * (tu_uniform(&seed) - 0.5) * 3.46;
        x.v2[i] += 2e-5 * (tu_uniform(&seed) - 0.5) * 3.46;
    }
    pl_process_config c;
    pl_process_config_default(&c);
    pl_process_result r;
    pl_err err = {0};
    assert_int_equal(pl_process_signals(x.v1, x.v2, x.n, RATE, H2, H1, p.N, &c, &r, &err),
                     PL_ENUMERIC);
    assert_non_null(strstr(err.msg, "v1/v2 during the motion is 1.72"));
    assert_non_null(strstr(err.msg, "the heights are swapped"));
    assert_non_null(strstr(err.msg, "--h1 0.0199 --h2 0.0116"));
    assert_null(strstr(err.msg, "sign"));
    assert_int_equal(pl_process_signals(x.v1, x.v2, x.n, RATE, H1, 0.006, p.N, &c, &r, &err),
                     PL_ENUMERIC);
    assert_non_null(strstr(err.msg, "v1/v2 during the motion is 1.72"));
    assert_non_null(strstr(err.msg, "the notebook gives 3.32"));
    assert_non_null(strstr(err.msg, "a height is wrong"));
    for (size_t i = 0; i < x.n; i++)
        x.v2[i] = -x.v2[i];
    assert_int_equal(pl_process_signals(x.v1, x.v2, x.n, RATE, H1, H2, p.N, &c, &r, &err),
                     PL_ENUMERIC);
    assert_non_null(strstr(err.msg, "one beam's sign is swapped (beam 2 moves uphill)"));
    for (size_t i = 0; i < x.n; i++)
        x.v2[i] = -x.v2[i];
    assert_int_equal(pl_process_signals(x.v1, x.v2, x.n, RATE, H1, H2, p.N, &c, &r, &err),
                     PL_OK);
    tu_assert_close(r.beams.ratio, H1 / H2, 1e-3);
    assert_int_equal(r.beams.sense[0], 1);
    assert_int_equal(r.beams.sense[1], 1);
    assert_int_equal(r.beams.dead, 0);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A lost beam that reads nothing like garbage, with white noise on the
 * beam that keeps the prism: beam `lost` (1 or 2) from 2.5 to 2.8 s is a
 * decoder at exactly 0 V (held = 0: the foreign chain drops a beam after
 * its noise, so the channel is flat) or held at a rail far above the
 * motion (held = the rail, m/s).  Each was taken for the other beam's
 * loss: the flat beam made the one that kept the prism read as rough
 * beside it, and the rail read as a clipped beam, a bound the other had
 * broken; either way both beams were lost and the window ended at 2.5 s
 * (found by injecting these losses into the foreign runs). */
static void lost_quietly(int lost, double held)
{
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    roll_lost(&x, &p, 5e-5, 57, lost, held, 0);
    pl_process_result r;
    check_lost(&x, &p, lost, &r);
    pl_process_result_free(&r);
    rolled_free(&x);
}

static void test_lost_beam_flat_or_at_a_rail(void **state)
{
    (void)state;
    lost_quietly(1, 0.0);
    lost_quietly(2, 0.0);
    lost_quietly(1, 0.25);   /* 12.6 rad/s at h1 where the motion is at 4 */
    lost_quietly(2, 0.12);
}

/* A beam lost for 270 ms whose speckle garbage, as the beam leaves and
 * finds the prism, touches its converter's rails for a few samples:
 * the rail marks the lost beam, not the bound the other one broke, so
 * the other carries it (faulted corpus seed 693: beam 2's 18 samples at
 * its rail made beam 1 the lost one, L_p 2.7 % off). */
static void test_lost_beam_garbage_at_its_rail(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 61;
    double rail = 0;   /* the converter's range: beam 2's fastest */
    for (size_t i = 0; i < x.n; i++)
        rail = fmax(rail, fabs(x.v2[i]));
    size_t at_rail = 0;
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= 25000 && i < 27700) {
            int edge = i < 25070 || i >= 27630;
            x.v2[i] = edge ? 2.4 * rail * (tu_uniform(&rnd) - 0.5) : 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            if (fabs(x.v2[i]) >= rail) {
                x.v2[i] = copysign(rail, x.v2[i]);
                at_rail++;
            }
        }
    }
    assert_true(at_rail > 2);
    pl_process_result r;
    process_rolled(&x, 22, &r);
    print_message("lost beam 2 with %zu samples at its rail: %zu lost, channel %d\n", at_rail,
                  (size_t)r.front.n_lost, r.front.n_lost ? r.front.lost[0].channel : 0);
    double bias, sd;
    score_rolled(&x, &r, p.r, &bias, &sd);
    tu_assert_close(bias, 0, 0.03);
    tu_assert_close(r.lp_end, 22 * x.th_end / (2 * M_PI), 0.01);
    assert_int_equal(r.front.n_lost, 1);
    assert_int_equal(r.front.lost[0].channel, 2);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* The last half second of the motion under noise that hides every step,
 * then the prism leaves the beams (0 V): theta up to the seen end is
 * measured, so every slot it turns through is an impact, placed by the
 * lattice, although no step after the last one found stands out.  Were
 * the end the recording's, a slot there would need evidence of its own
 * (faulted corpus seed 390: the last 28 of 169 impacts, under a floor
 * line left in, were not placed, while L_p counted them). */
static void test_slots_to_the_seen_end(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 67;
    const size_t loud = 39000, gone = 45000;
    for (size_t i = 0; i < x.n; i++) {
        double s = i >= loud && i < gone ? 5e-3 : 2e-5;
        x.v1[i] += s * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += s * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= gone)
            x.v1[i] = x.v2[i] = 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
    }
    pl_process_result r;
    process_rolled(&x, 22, &r);
    size_t nt = in_window(x.truth, x.nt, r.end_t), late = 0, matched = 0;
    for (size_t i = 0; i < r.n_impacts; i++) {
        late += r.impacts[i].t_s > (double)loud / RATE;
        for (size_t j = 0; j < nt; j++)
            matched += fabs(r.impacts[i].t_s - x.truth[j]) < 2e-3;
    }
    print_message("to the seen end (%.3f s): %zu impacts of %zu, %zu matched, %zu under the "
                  "noise\n", r.end_t, r.n_impacts, nt, matched, late);
    assert_true(r.end_t < (double)gone / RATE);
    assert_int_equal(r.n_impacts, nt);
    assert_int_equal(matched, nt);
    assert_true(late > 10);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* The higher beam clips at the converter's rail over the fastest part of
 * every arc from 2 s on: the clipped samples are that beam's lost
 * samples, carried by the other, so the impacts and their ratios come
 * out as on the unclipped run (the clipped samples, taken as data, gave
 * each arc a flat top and the impacts wrong steps). */
static void test_clipped_beam_carried(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 57;
    /* the rail: the speed of mid-run, as a 16-bit converter's code */
    double rail = round(x.om[20000] * H1 / 1e-5) * 1e-5;
    size_t clipped = 0;
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (x.v1[i] >= rail) {
            x.v1[i] = rail;
            clipped++;
        }
    }
    assert_true(clipped > 5000);
    pl_process_result r;
    process_rolled(&x, 22, &r);
    double bias, sd;
    score_rolled(&x, &r, p.r, &bias, &sd);
    tu_assert_close(bias, 0, 0.03);
    tu_assert_close(r.lp_end, 22 * x.th_end / (2 * M_PI), 0.01);
    assert_int_equal(r.front.clipped[0], clipped);
    assert_int_equal(r.front.clipped[1], 0);
    assert_string_equal(r.quality, "degraded");
    assert_non_null(strstr(r.faults, "clipped channel=1"));
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A beam lost for 300 ms (its decoder at 0 V) that comes back at its
 * rail and stays there to the end: the prism has sped past the card's
 * range meanwhile.  The carry across the clipped stretch takes the
 * beams' difference from the edge before the loss, not from the rail's
 * deficit after it, which it had carried on to the run's end (beam 1
 * 1.4 % slow over the last 1.5 s of faulted corpus seed 174, every
 * ratio's loss 5-8 % off). */
static void test_lost_beam_back_at_its_rail(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 91;
    double least = INFINITY;
    for (size_t i = 28000; i < x.n; i++)
        least = fmin(least, x.om[i]);
    double rail = round(0.97 * least * H1 / 1e-5) * 1e-5;
    /* 200 um/s of white noise: the rail's deficit, 3 %, lies within the
     * beams' agreement at the edges */
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-4 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 2e-4 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= 25000 && i < 28000)
            x.v1[i] = 2e-4 * (tu_uniform(&rnd) - 0.5) * 3.46;
        else if (x.v1[i] >= rail)
            x.v1[i] = rail;
    }
    pl_process_result r;
    process_rolled(&x, 22, &r);
    assert_true(r.end_t > 4.9);
    double bias, sd;
    score_rolled(&x, &r, p.r, &bias, &sd);
    print_message("loss bias %+.4f, spread %.4f\n", bias, sd);
    tu_assert_close(bias, 0, 0.03);
    tu_assert_close(r.lp_end, 22 * x.th_end / (2 * M_PI), 0.01);
    /* beam 1 over its clipped last 1.8 s: the prism's speed, on average,
     * as beam 2 alone gives it */
    double off = 0;
    for (size_t i = 30000; i < 48000; i++)
        off += r.vp1[i] / H1 - x.om[i - 1];   /* the chain's one sample */
    off /= 18000;
    print_message("beam 1 carried: mean v1 / h1 - omega %+.2e rad/s\n", off);
    assert_true(fabs(off) < 0.02);   /* the edges' noise: 0.006 */
    assert_int_equal(r.front.n_lost, 1);
    assert_true(r.front.clipped[0] > 20000);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* The beams of x with a floor shaking at f[0] and f[1] (1.5 and 0.6
 * mm/s) when `shake`, white noise, and from garbage_t s on the speckle
 * garbage of a prism leaving the beams (30 mm/s, each beam its own),
 * processed into r. */
static void shaken_run(rolled *x, const double f[2], int shake, double garbage_t,
                       pl_process_result *r)
{
    beams(x->om, x->n, x->v1, x->v2);
    unsigned long rnd = 99;
    for (size_t i = 0; i < x->n; i++) {
        double t = (double)i / RATE;
        double u = shake ? 1.5e-3 * sin(2 * M_PI * f[0] * t) + 6e-4 * sin(2 * M_PI * f[1] * t + 1)
                         : 0;
        x->v1[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x->v2[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (t >= garbage_t) {
            x->v1[i] = 0.03 * (tu_uniform(&rnd) - 0.5) * 3.46;
            x->v2[i] = 0.03 * (tu_uniform(&rnd) - 0.5) * 3.46;
        }
    }
    pl_process_config c;
    pl_process_config_default(&c);
    pl_err err = {0};
    assert_int_equal(pl_process_signals(x->v1, x->v2, x->n, RATE, H1, H2, 22, &c, r, &err),
                     PL_OK);
}

/* Runs x quiet and shaken at f[] (garbage from garbage_t s on both
 * times): the shaken run must name both lines within tol_hz and their
 * amplitudes, and keep the ratios' bias and spread of the quiet one. */
static void shaken_vs_quiet(rolled *x, const double f[2], double garbage_t, double tol_hz,
                            double ratio)
{
    double bias[2], sd[2];
    for (int shake = 0; shake < 2; shake++) {
        pl_process_result r;
        shaken_run(x, f, shake, garbage_t, &r);
        score_rolled(x, &r, ratio, &bias[shake], &sd[shake]);
        if (shake) {
            print_message("common motion: %zu lines, %.3f Hz %.3g mm/s, %.3f Hz %.3g mm/s\n",
                          (size_t)r.front.n_common, r.front.common_hz[0],
                          1e3 * r.front.common_amp_mps[0], r.front.common_hz[1],
                          1e3 * r.front.common_amp_mps[1]);
            assert_int_equal(r.front.n_common, 2);
            tu_assert_close(r.front.common_hz[0], f[0], tol_hz);
            tu_assert_close(r.front.common_hz[1], f[1], tol_hz);
            tu_assert_close(r.front.common_amp_mps[0], 1.5e-3, 1e-4);
            tu_assert_close(r.front.common_amp_mps[1], 6e-4, 1e-4);
            assert_string_equal(r.quality, "degraded");
            assert_non_null(strstr(r.faults, "common_motion"));
        } else {
            assert_int_equal(r.front.n_common, 0);
        }
        pl_process_result_free(&r);
    }
    print_message("ratio loss bias %+.4f quiet, %+.4f shaken; spread %.4f, %.4f\n", bias[0],
                  bias[1], sd[0], sd[1]);
    tu_assert_close(bias[1], bias[0], 0.01);
    assert_true(sd[1] < 1.5 * sd[0] + 0.005);
}

/* The prism leaves the beams at 4.2 s while beam 1 sits at its rail: from
 * there both beams hold speckle garbage (each 20 mm/s of white roughness,
 * beam 1 about 0 m/s, beam 2 about 0.8 of its speed).  Beam 1 is out by
 * its level; beam 2 holds a level the motion could have and is no
 * rougher than beam 1, and was carried as the motion (faulted corpus
 * seed 323: 32 ms, L_p +0.17 %).  It is 10 times rougher than itself
 * over the 20 ms before, so both are lost there and the window ends at
 * the leaving. */
static void test_garbage_after_a_clipped_beam(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 77;
    size_t leave = (size_t)(4.2 * RATE);
    double rail = round(x.om[(size_t)(3.0 * RATE)] * H1 / 1e-5) * 1e-5, v2_leave = x.v2[leave];
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= leave) {
            x.v1[i] = 0.02 * (tu_uniform(&rnd) - 0.5) * 3.46;
            x.v2[i] = 0.8 * v2_leave + 0.02 * H2 / H1 * (tu_uniform(&rnd) - 0.5) * 3.46;
        } else if (x.v1[i] >= rail) {
            x.v1[i] = rail;
        }
    }
    pl_process_result r;
    process_rolled(&x, 22, &r);
    print_message("window ends %.4f s (the prism left at 4.2000 s)\n", r.end_t);
    assert_true(r.end_t > 4.195 && r.end_t <= 4.2);
    double bias, sd;
    score_rolled(&x, &r, p.r, &bias, &sd);
    tu_assert_close(bias, 0, 0.03);
    assert_string_equal(r.quality, "degraded");
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* The prism leaves with beam 1 clipping: the garbage of both beams
 * follows, beam 1's at its rails now and then.  A rail inside the
 * stretch once made beam 1 the bound beam 2 broke, and beam 2's garbage
 * was carried as the motion for tens of ms with an impact placed in it
 * (faulted corpus seeds 1126 and 1163: 75 and 49 ms); both beams out
 * for longer than a bridge is the motion's end, rails or not. */
static void test_garbage_of_both_at_the_rails(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 79;
    size_t leave = (size_t)(4.2 * RATE);
    double rail = round(x.om[(size_t)(3.0 * RATE)] * H1 / 1e-5) * 1e-5;
    /* speckle garbage as a decoder gives it: 45 mm/s low-passed at 30 Hz */
    double g[2] = {0, 0}, ag = exp(-2 * M_PI * 30.0 / RATE), bg = 0.045 * sqrt(1 - ag * ag);
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= leave) {
            for (int c = 0; c < 2; c++)
                g[c] = ag * g[c] + bg * (tu_uniform(&rnd) - 0.5) * 3.46;
            x.v1[i] = g[0];
            x.v2[i] = g[1];
        }
        if (fabs(x.v1[i]) >= rail)
            x.v1[i] = copysign(rail, x.v1[i]);
    }
    pl_process_result r;
    process_rolled(&x, 22, &r);
    print_message("both out at the rails: window ends %.4f s (the prism left at 4.2000 s), "
                  "%zu impacts, the last at %.4f s\n", r.end_t, r.n_impacts,
                  r.n_impacts ? r.impacts[r.n_impacts - 1].t_s : NAN);
    assert_true(r.end_t > 4.195 && r.end_t <= 4.201);
    assert_true(r.n_impacts > 0 && r.impacts[r.n_impacts - 1].t_s < 4.2);
    double bias, sd;
    score_rolled(&x, &r, p.r, &bias, &sd);
    tu_assert_close(bias, 0, 0.03);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* Beam 2 loses the prism for 300 ms, its decoder's garbage at the edges
 * touching its rails, while beam 1 clips at its arcs' tops: both beams
 * have samples at a rail in the stretch, which was read as neither beam
 * holding the level, and the window ended at the loss (faulted corpus
 * seed 1341: 7 of 70 impacts, L_p 90 % off).  Beam 1 carries it, its
 * own clipped tops bridged. */
static void test_lost_beam_beside_a_clipped_one(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_beams(&x, &p);
    unsigned long rnd = 89;
    const size_t a = 25000, b = 28000, edge = 60;
    double top = 0, rail2 = 0;   /* beam 1 clips at the tops of the lost stretch's arcs */
    for (size_t i = 0; i < x.n; i++) {
        top = fmax(top, i >= a && i < b ? x.v1[i] : 0);
        rail2 = fmax(rail2, fabs(x.v2[i]));
    }
    double rail1 = round(0.995 * top / 1e-5) * 1e-5;
    for (size_t i = 0; i < x.n; i++) {
        x.v1[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= a && i < b) {
            int at_edge = i < a + edge || i >= b - edge;
            x.v2[i] = at_edge ? 6 * rail2 * (tu_uniform(&rnd) - 0.5)
                              : 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            if (fabs(x.v2[i]) >= rail2)
                x.v2[i] = copysign(rail2, x.v2[i]);
        }
        if (x.v1[i] >= rail1)
            x.v1[i] = rail1;
    }
    pl_process_result r;
    process_rolled(&x, 22, &r);
    print_message("beam 2 lost beside beam 1 clipped: window ends %.3f s, %zu lost (channel "
                  "%d), L_p %.3f of %.3f\n", r.end_t, (size_t)r.front.n_lost,
                  r.front.n_lost ? r.front.lost[0].channel : 0, r.lp_end,
                  22 * x.th_end / (2 * M_PI));
    assert_true(r.end_t > 4.9);
    assert_int_equal(r.front.n_lost, 1);
    assert_int_equal(r.front.lost[0].channel, 2);
    tu_assert_close(r.lp_end, 22 * x.th_end / (2 * M_PI), 0.01);
    double bias, sd;
    score_rolled(&x, &r, p.r, &bias, &sd);
    tu_assert_close(bias, 0, 0.03);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* Two lines of a shaking floor 0.9 Hz apart, closer than the spectrum's
 * Hann window resolves at 2 s segments: read as one between them, and
 * the blocks fitted at that one frequency followed the beat only from
 * block centre to block centre (faulted corpus seeds 390 and 798).  The
 * blocks' own series of coefficients beats at the offsets, which split
 * the line in two. */
static void test_floor_lines_a_hertz_apart(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    const double f[2] = {31.94, 32.86}, a[2] = {1.0e-3, 1.3e-3};
    double bias[2], sd[2];
    for (int shake = 0; shake < 2; shake++) {
        beams(x.om, x.n, x.v1, x.v2);
        unsigned long rnd = 83;
        for (size_t i = 0; i < x.n; i++) {
            double t = (double)i / RATE;
            double u = shake ? a[0] * sin(2 * M_PI * f[0] * t + 0.3) +
                                   a[1] * sin(2 * M_PI * f[1] * t + 2.1)
                             : 0;
            x.v1[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            x.v2[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
        }
        pl_process_result r;
        process_rolled(&x, 22, &r);
        score_rolled(&x, &r, p.r, &bias[shake], &sd[shake]);
        if (shake) {
            print_message("a hertz apart: %zu lines, %.3f and %.3f Hz\n",
                          (size_t)r.front.n_common, r.front.common_hz[0], r.front.common_hz[1]);
            assert_int_equal(r.front.n_common, 2);
            int lo = r.front.common_hz[0] < r.front.common_hz[1] ? 0 : 1;
            tu_assert_close(r.front.common_hz[lo], f[0], 0.05);
            tu_assert_close(r.front.common_hz[1 - lo], f[1], 0.05);
        }
        pl_process_result_free(&r);
    }
    print_message("a hertz apart: ratio loss bias %+.4f quiet, %+.4f shaken; spread %.4f, "
                  "%.4f\n", bias[0], bias[1], sd[0], sd[1]);
    tu_assert_close(bias[1], bias[0], 0.01);
    assert_true(sd[1] < 1.5 * sd[0] + 0.005);
    rolled_free(&x);
}

/* A shaking floor: both beams see the same 23 Hz and 9 Hz translation
 * (1.5 and 0.6 mm/s).  (4.1) is immune; the combined omega the impacts
 * are measured on is not, and the ratios scattered ten times as much.
 * Found in v1/h1 - v2/h2 and removed, the ratios' bias and spread are
 * those of the quiet run, and the record names both lines. */
static void test_common_motion_removed(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    const double f[2] = {23, 9};
    shaken_vs_quiet(&x, f, INFINITY, 0.1, p.r);
    pl_process_result r;
    shaken_run(&x, f, 0, INFINITY, &r);
    assert_string_equal(r.quality, "good");
    assert_string_equal(r.faults, "");
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* The same floor at frequencies between the spectrum's bins (23.37 and
 * 9.13 Hz), with the last second of the recording the speckle garbage
 * of a prism that left the beams (20 times the shaking).  The spectrum's
 * peak with the garbage among the fits' samples gave 23.352 Hz and 1.23
 * mm/s for the stronger line; refined on the blocks, each over its own
 * noise, and with the garbage left out, both lines come within 5 mHz
 * and their amplitudes as on the quiet floor. */
static void test_common_motion_off_bin_under_garbage(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    const double f[2] = {23.37, 9.13};
    shaken_vs_quiet(&x, f, 4.0, 0.005, p.r);
    rolled_free(&x);
}

/* A floor shaking at 6.4 Hz and 34 Hz (1.5 and 0.6 mm/s) while beam 1
 * clips at its rail over nearly every arc from 1.6 s to the end, as on
 * faulted corpus seed 86.  Every 2 s segment of v1/h1 - v2/h2 then holds
 * clipped gaps, and the 6.4 Hz line went unseen in their spectrum; the
 * 1.6 s before the clipping show both lines.  Beam 2 alone carries the
 * clipped stretches, so what is left of the floor there goes straight
 * into the impacts: with both lines found and removed the ratios keep
 * the bias and spread of the same clipped run on a quiet floor. */
static void test_common_motion_under_clipping(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    const double f[2] = {6.4, 34.1};
    double bias[2], sd[2];
    for (int shake = 0; shake < 2; shake++) {
        beams(x.om, x.n, x.v1, x.v2);
        double rail = round(x.om[16000] * H1 / 1e-5) * 1e-5;
        unsigned long rnd = 23;
        size_t clipped = 0;
        for (size_t i = 0; i < x.n; i++) {
            double t = (double)i / RATE;
            double u = shake ? 1.5e-3 * sin(2 * M_PI * f[0] * t) +
                                   6e-4 * sin(2 * M_PI * f[1] * t + 1)
                             : 0;
            x.v1[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            x.v2[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            if (x.v1[i] >= rail) {
                x.v1[i] = rail;
                clipped++;
            }
        }
        pl_process_result r;
        process_rolled(&x, 22, &r);
        assert_true(clipped > x.n / 2);
        score_rolled(&x, &r, p.r, &bias[shake], &sd[shake]);
        if (shake) {
            print_message("under clipping (%zu samples): %zu lines, %.3f Hz %.3g mm/s, "
                          "%.3f Hz %.3g mm/s\n", clipped, (size_t)r.front.n_common,
                          r.front.common_hz[0], 1e3 * r.front.common_amp_mps[0],
                          r.front.common_hz[1], 1e3 * r.front.common_amp_mps[1]);
            assert_int_equal(r.front.n_common, 2);
            /* either order: the two searches each give theirs */
            int lo = r.front.common_hz[0] < r.front.common_hz[1] ? 0 : 1;
            tu_assert_close(r.front.common_hz[lo], f[0], 0.05);
            tu_assert_close(r.front.common_hz[1 - lo], f[1], 0.05);
            tu_assert_close(r.front.common_amp_mps[lo], 1.5e-3, 1.5e-4);
            tu_assert_close(r.front.common_amp_mps[1 - lo], 6e-4, 1e-4);
        }
        pl_process_result_free(&r);
    }
    print_message("clipped run: ratio loss bias %+.4f quiet, %+.4f shaken; spread %.4f, "
                  "%.4f\n", bias[0], bias[1], sd[0], sd[1]);
    tu_assert_close(bias[1], bias[0], 0.01);
    assert_true(sd[1] < 1.5 * sd[0] + 0.005);
    rolled_free(&x);
}

/* One floor line between the spectrum's bins (23.59 Hz, 1 mm/s) while
 * beam 1 clips from 1.6 s to the end, and the last 0.6 s of the
 * recording with no prism in either beam (0 V and noise: the floor is
 * not seen there).  The blocks under the clipping cannot be fitted, and
 * held at the last fitted block a line found a few hundredths of a hertz
 * off turned out of phase over the clipped seconds; bridged to the blind
 * blocks past the motion, which an amplitude check read out of order had
 * let pass, the floor came back into beam 2 in full by the end (faulted
 * corpus seed 112: ratio z spread 2.2, median -1.0).  Carried by the
 * line's phasor over every fitted block, the ratios keep the bias and
 * spread of the same clipped run on a quiet floor. */
static void test_common_motion_steady_over_clipping(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    double bias[2], sd[2];
    size_t end = x.n - (size_t)(0.6 * RATE);
    for (int shake = 0; shake < 2; shake++) {
        beams(x.om, x.n, x.v1, x.v2);
        double rail = round(x.om[16000] * H1 / 1e-5) * 1e-5;
        unsigned long rnd = 29;
        for (size_t i = 0; i < x.n; i++) {
            double t = (double)i / RATE;
            double u = shake && i < end ? 1e-3 * sin(2 * M_PI * 23.59 * t + 0.4) : 0;
            if (i >= end)
                x.v1[i] = x.v2[i] = 0;
            x.v1[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            x.v2[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            if (x.v1[i] >= rail)
                x.v1[i] = rail;
        }
        pl_process_result r;
        process_rolled(&x, 22, &r);
        score_rolled(&x, &r, p.r, &bias[shake], &sd[shake]);
        if (shake) {
            assert_int_equal(r.front.n_common, 1);
            tu_assert_close(r.front.common_hz[0], 23.59, 0.05);
        }
        pl_process_result_free(&r);
    }
    print_message("clipped run, steady floor: ratio loss bias %+.4f quiet, %+.4f shaken; "
                  "spread %.4f, %.4f\n", bias[0], bias[1], sd[0], sd[1]);
    tu_assert_close(bias[1], bias[0], 0.005);
    assert_true(sd[1] < 1.2 * sd[0] + 0.002);
    rolled_free(&x);
}

/* A beam clipped from mid-run into the speckle garbage after the motion,
 * on a shaking floor: nothing past the motion's end may steer what is
 * carried before it.  The carried beam's far edge once took its offset
 * from the garbage, and the floor's blocks past the end were joined to
 * the last clean one, so the floor's lines came back in the wrong phase
 * over the clipped stretch (faulted corpus seeds 86 and 430).  Here the
 * last second is garbage (15 mm/s in both beams, beam 1 at its rails
 * there too); every impact before it must keep its ratio as on the
 * quiet run. */
static void test_clipped_into_the_tail(void **state)
{
    (void)state;
    rolling p = {22, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9875, 0.5};
    rolled x;
    rolled_make(&x, &p);
    const double f[2] = {6.4, 34.1};
    const size_t tail = x.n - RATE;
    double bias[2], sd[2];
    for (int fault = 0; fault < 2; fault++) {
        beams(x.om, x.n, x.v1, x.v2);
        double rail = round(x.om[22000] * H1 / 1e-5) * 1e-5;
        unsigned long rnd = 29;
        size_t clipped = 0;
        for (size_t i = 0; i < x.n; i++) {
            double t = (double)i / RATE;
            double u = 1.5e-3 * sin(2 * M_PI * f[0] * t) + 6e-4 * sin(2 * M_PI * f[1] * t + 1);
            x.v1[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            x.v2[i] += u + 2e-5 * (tu_uniform(&rnd) - 0.5) * 3.46;
            if (!fault)
                continue;
            if (i >= tail) {
                x.v1[i] = 0.015 * (tu_uniform(&rnd) + tu_uniform(&rnd) - 1) * 2.45;
                x.v2[i] = 0.015 * (tu_uniform(&rnd) + tu_uniform(&rnd) - 1) * 2.45;
            }
            if (fabs(x.v1[i]) >= rail) {
                x.v1[i] = copysign(rail, x.v1[i]);
                clipped++;
            }
        }
        pl_process_result r;
        process_rolled(&x, 22, &r);
        if (fault) {
            assert_true(clipped > x.n / 3);
            assert_true(r.end_t < (double)tail / RATE + 0.01);
            assert_true(r.end_t > (double)tail / RATE - 0.05);
        }
        score_rolled(&x, &r, p.r, &bias[fault], &sd[fault]);
        pl_process_result_free(&r);
    }
    print_message("clipped into the tail: ratio loss bias %+.4f shaken, %+.4f clipped and "
                  "cut by garbage; spread %.4f, %.4f\n", bias[0], bias[1], sd[0], sd[1]);
    tu_assert_close(bias[1], bias[0], 0.01);
    assert_true(sd[1] < 1.5 * sd[0] + 0.005);
    rolled_free(&x);
}

/* The floor's lines are found in the clean stretches when the rest is
 * clipped and the run ends in more than a second of speckle garbage,
 * whose segments pass e's gate and are "clean" too: their median
 * spectrum buried 5.97 and 16.76 Hz (faulted corpus seed 246).  Here
 * beam 1 clips from 1.6 s on, and the last 1.4 s are garbage. */
static void test_floor_lines_beside_garbage(void **state)
{
    (void)state;
    rolling p = {29, 0.4 * M_PI / 180, 5.3 * M_PI / 180, 0.9928, 0.3};
    rolled x;
    rolled_make(&x, &p);
    const double f[2] = {5.97, 16.76}, a[2] = {1.0e-3, 1.9e-3};
    const size_t tail = x.n - 14000;
    beams(x.om, x.n, x.v1, x.v2);
    double rail = round(x.om[16000] * H1 / 1e-5) * 1e-5;
    unsigned long rnd = 37;
    for (size_t i = 0; i < x.n; i++) {
        double t = (double)i / RATE;
        double u = a[0] * sin(2 * M_PI * f[0] * t + 4.9) + a[1] * sin(2 * M_PI * f[1] * t + 3.8);
        x.v1[i] += u + 2.7e-4 * (tu_uniform(&rnd) - 0.5) * 3.46;
        x.v2[i] += u + 2.7e-4 * (tu_uniform(&rnd) - 0.5) * 3.46;
        if (i >= tail) {
            x.v1[i] = 0.018 * (tu_uniform(&rnd) + tu_uniform(&rnd) - 1) * 2.45;
            x.v2[i] = 0.018 * (tu_uniform(&rnd) + tu_uniform(&rnd) - 1) * 2.45;
        }
        if (fabs(x.v1[i]) >= rail)
            x.v1[i] = copysign(rail, x.v1[i]);
    }
    pl_process_result r;
    process_rolled(&x, 29, &r);
    print_message("floor beside garbage: %zu lines, %.3f and %.3f Hz; window ends %.3f s\n",
                  (size_t)r.front.n_common, r.front.common_hz[0], r.front.common_hz[1], r.end_t);
    assert_int_equal(r.front.n_common, 2);
    int lo = r.front.common_hz[0] < r.front.common_hz[1] ? 0 : 1;
    tu_assert_close(r.front.common_hz[lo], f[0], 0.05);
    tu_assert_close(r.front.common_hz[1 - lo], f[1], 0.05);
    assert_true(r.end_t > (double)tail / RATE - 0.05);
    pl_process_result_free(&r);
    rolled_free(&x);
}

/* A mains off its nominal frequency is found to a thousandth of a hertz,
 * from the whole recording and not the lead-in alone.  The lead-in here is
 * 0.3 s, the mains 50.013 Hz, under a slow wander (0.7-3.3 Hz, 0.3 mm/s)
 * on each beam: the lead-in's grid gave 50.00 Hz, whose phase walks off by
 * 0.4 rad over the 5 s run. */
static void test_mains_off_nominal(void **state)
{
    (void)state;
    enum { N = 50000, LEAD = 3000 };
    double *v1 = malloc(N * sizeof *v1), *v2 = malloc(N * sizeof *v2);
    double *om = malloc(N * sizeof *om);
    assert_non_null(v1);
    assert_non_null(v2);
    assert_non_null(om);
    unsigned long rnd = 4242;
    for (size_t i = 0; i < N; i++) {
        double t = (double)i / RATE, w = i < LEAD ? 0 : 1 + 2 * (t - 0.3);
        double hum = sin(2 * M_PI * 50.013 * t + 0.4);
        double slow1 = 2e-4 * sin(2 * M_PI * 0.7 * t) + 1e-4 * sin(2 * M_PI * 3.3 * t + 1);
        double slow2 = 2e-4 * sin(2 * M_PI * 1.9 * t + 2) + 1e-4 * sin(2 * M_PI * 2.9 * t);
        v1[i] = w * H1 + 2e-4 * hum + slow1 + 2e-5 * (tu_uniform(&rnd) - 0.5);
        v2[i] = w * H2 + 1e-4 * hum + slow2 + 2e-5 * (tu_uniform(&rnd) - 0.5);
    }
    double *v[2] = {v1, v2}, h[2] = {H1, H2};
    pl_frontend_report rep;
    pl_err err = {0};
    assert_int_equal(pl_frontend_run(v, N, RATE, h, LEAD, LEAD, om, 1, &rep, &err), PL_OK);
    tu_assert_close(rep.hum_hz, 50.013, 0.002);
    free(v1);
    free(v2);
    free(om);
}

/* Five seconds of two beams turning at a steady acceleration after a
 * 0.3 s lead-in, with a mains hum of amp volts-as-m/s on both channels
 * whose frequency runs linearly from f0 - drift / 2 to f0 + drift / 2
 * over the recording, its third harmonic at half of it, and white noise
 * of sd sigma a sample; through the front end, whose report comes back. */
enum { HUM_N = 5 * RATE, HUM_LEAD = 3000 };

static pl_frontend_report drifting_hum_n(size_t n, double f0, double drift, double amp,
                                         double sigma, unsigned long seed)
{
    double *v1 = malloc(n * sizeof *v1), *v2 = malloc(n * sizeof *v2);
    double *om = malloc(n * sizeof *om);
    assert_non_null(v1);
    assert_non_null(v2);
    assert_non_null(om);
    double T = (double)n / RATE, rate = drift / T;
    for (size_t i = 0; i < n; i++) {
        /* (the speed levels off at 10 rad/s on long runs) */
        double t = (double)i / RATE, w = i < HUM_LEAD ? 0 : 1 + 2 * fmin(t - 0.3, 4.5);
        /* the phase of f(t) = f0 - drift / 2 + rate t */
        double ph = 2 * M_PI * ((f0 - 0.5 * drift) * t + 0.5 * rate * t * t) + 0.4;
        double hum = amp * (sin(ph) + 0.5 * sin(3 * ph + 1));
        v1[i] = w * H1 + hum + sigma * 3.46 * (tu_uniform(&seed) - 0.5);
        v2[i] = w * H2 + hum + sigma * 3.46 * (tu_uniform(&seed) - 0.5);
    }
    double *v[2] = {v1, v2}, h[2] = {H1, H2};
    pl_frontend_report rep;
    pl_err err = {0};
    assert_int_equal(pl_frontend_run(v, n, RATE, h, HUM_LEAD, HUM_LEAD, om, 1, &rep, &err),
                     PL_OK);
    free(v1);
    free(v2);
    free(om);
    return rep;
}

static pl_frontend_report drifting_hum(double f0, double drift, double amp, double sigma,
                                       unsigned long seed)
{
    return drifting_hum_n(HUM_N, f0, drift, amp, sigma, seed);
}

/* The mains' drift over the run is measured (docs/process.md, "Faults"):
 * 60 Hz drifting by 0.1 Hz over 5 s reads 0.1 within 0.01 Hz (a
 * constant-frequency estimate, 0, fails), with a standard error that
 * covers the error; a steady mains reads 0 within 0.01 Hz; and a hum the
 * lead-in finds but that does not stand above the beams' noise block by
 * block is "not measured" (NaN), not 0. */
static void test_mains_drift(void **state)
{
    (void)state;
    pl_frontend_report rep = drifting_hum(60, 0.1, 1e-4, 2e-5, 77);
    print_message("drifting 0.1 Hz: hum %.4f Hz, drift %.4f +- %.4f Hz\n", rep.hum_hz,
                  rep.hum_drift_hz, rep.hum_drift_se_hz);
    tu_assert_close(rep.hum_hz, 60, 0.01);
    tu_assert_close(rep.hum_drift_hz, 0.1, 0.01);
    assert_true(fabs(rep.hum_drift_hz - 0.1) <= 3 * rep.hum_drift_se_hz + 1e-3);

    rep = drifting_hum(60, 0, 1e-4, 2e-5, 78);
    print_message("steady: hum %.4f Hz, drift %.4f +- %.4f Hz\n", rep.hum_hz,
                  rep.hum_drift_hz, rep.hum_drift_se_hz);
    tu_assert_close(rep.hum_drift_hz, 0, 0.01);

    /* 0.4 sigma a channel: 8 standard errors over the 3000 samples of the
     * lead-in, but about 5 in a 0.2 s block of v1/h1 - v2/h2, where the
     * equal hum in both channels mostly cancels and the noise adds */
    rep = drifting_hum(60, 0.1, 8e-6, 2e-5, 79);
    print_message("weak: hum %.4f Hz (%.3g m/s), drift %.4f Hz\n", rep.hum_hz,
                  rep.hum_amp_mps[0], rep.hum_drift_hz);
    assert_true(rep.hum_hz > 0);
    assert_true(isnan(rep.hum_drift_hz) && isnan(rep.hum_drift_se_hz));

    /* four minutes: past the first 20 s only every 4th block is fitted
     * (at most HUM_DRIFT_BLOCKS of them), and the trend is the same (the
     * share of blocks that show the hum counts the fitted ones: over all
     * 1200 it read "not measured") */
    rep = drifting_hum_n(240 * RATE, 50, -0.1, 1e-4, 2e-5, 80);
    print_message("four minutes drifting -0.1 Hz: hum %.4f Hz, drift %.4f +- %.4f Hz\n",
                  rep.hum_hz, rep.hum_drift_hz, rep.hum_drift_se_hz);
    tu_assert_close(rep.hum_drift_hz, -0.1, 0.01);
}

/* Welch PSD of a pure tone: the peak at its frequency, the integral its
 * variance; the low-pass is 1/2 at its cut-off and passes DC. */
static void test_spectrum_and_filter(void **state)
{
    (void)state;
    size_t n = 1 << 16;
    double *x = malloc(n * sizeof *x), psd[2049];
    for (size_t i = 0; i < n; i++)
        x[i] = 0.3 * sin(2 * M_PI * 1250.0 * i / RATE);
    size_t segs;
    pl_err err = {0};
    assert_int_equal(pl_welch_psd(x, n, RATE, 4096, 0, psd, &segs, &err), PL_OK);
    assert_int_equal(segs, 31);
    size_t kmax = 0;
    double var = 0;
    for (size_t k = 0; k <= 2048; k++) {
        if (psd[k] > psd[kmax])
            kmax = k;
        var += psd[k] * RATE / 4096.0;
    }
    tu_assert_close(kmax * RATE / 4096.0, 1250.0, RATE / 4096.0);
    tu_assert_close(var, 0.3 * 0.3 / 2, 1e-3);
    /* capped at 8 segments spread evenly: the tone only in the second
     * half still counts for half the variance (the cap samples the whole
     * record, not its start) */
    for (size_t i = 0; i < n / 2; i++)
        x[i] = 0;
    assert_int_equal(pl_welch_psd(x, n, RATE, 4096, 8, psd, &segs, &err), PL_OK);
    assert_int_equal(segs, 8);
    var = 0;
    for (size_t k = 0; k <= 2048; k++)
        var += psd[k] * RATE / 4096.0;
    tu_assert_close(var, 0.3 * 0.3 / 4, 0.15 * 0.3 * 0.3 / 4);

    pl_lowpass *lp = NULL;
    assert_int_equal(pl_lowpass_create(&lp, 1000, RATE, &err), PL_OK);
    tu_assert_close(pl_lowpass_gain(lp, 1000), 0.5, 1e-12);
    /* filtering in place: a tone at the cut-off comes out at half amplitude
     * in phase (zero phase), a constant unchanged */
    for (size_t i = 0; i < n; i++)
        x[i] = 1.0 + sin(2 * M_PI * 1000.0 * i / RATE);
    assert_int_equal(pl_lowpass_apply(lp, x, x, n, &err), PL_OK);
    for (size_t i = 1000; i < n - 1000; i += 123)
        tu_assert_close(x[i], 1.0 + 0.5 * sin(2 * M_PI * 1000.0 * i / RATE), 1e-3);
    pl_lowpass_destroy(lp);
    assert_int_equal(pl_lowpass_create(&lp, 6000, RATE, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "cut-off 6000 Hz"));
    free(x);
}

static void test_malformed_inputs(void **state)
{
    (void)state;
    size_t n = 2 * RATE;
    double *v1 = calloc(n, sizeof *v1), *v2 = calloc(n, sizeof *v2);
    pl_process_config c;
    pl_process_config_default(&c);
    pl_process_result r;
    pl_err err = {0};
    assert_int_equal(pl_process_signals(v1, v2, n, RATE, 0.01, 0.01, 22, &c, &r, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "must differ"));
    /* no motion: noise only */
    for (size_t i = 0; i < n; i++) {
        v1[i] = 1e-5 * sin(i * 1.7);
        v2[i] = 1e-5 * cos(i * 2.3);
    }
    assert_int_equal(pl_process_signals(v1, v2, n, RATE, H1, H2, 22, &c, &r, &err), PL_ENUMERIC);
    assert_non_null(strstr(err.msg, "no motion"));
    /* motion too short for one impact */
    for (size_t i = 0; i < n; i++) {
        double om = i > RATE ? 0.3 * (double)(i - RATE) / RATE : 0;
        v1[i] = om * H1 + 1e-6 * sin(i * 1.7);
        v2[i] = om * H2 + 1e-6 * cos(i * 2.3);
    }
    assert_int_equal(pl_process_signals(v1, v2, n, RATE, H1, H2, 22, &c, &r, &err), PL_ENUMERIC);
    if (!strstr(err.msg, "no line impact"))
        fail_msg("expected 'no line impact', got: %s", err.msg);
    /* both beams at their rails together for 0.4 s: no beam saw the
     * prism there, and the refusal says where */
    for (size_t i = 0; i < n; i++) {
        double om = i > RATE / 2 ? 8.0 * (double)(i - RATE / 2) / RATE : 0;
        v1[i] = fmin(om * H1, 0.08) + 1e-6 * sin(i * 1.7);
        v2[i] = fmin(om * H2, 0.08 * H2 / H1) + 1e-6 * cos(i * 2.3);
        if (v1[i] > 0.08 - 1e-5)
            v1[i] = 0.08;
        if (v2[i] > 0.08 * H2 / H1 - 1e-5)
            v2[i] = 0.08 * H2 / H1;
    }
    assert_int_equal(pl_process_signals(v1, v2, n, RATE, H1, H2, 22, &c, &r, &err), PL_ENUMERIC);
    if (!strstr(err.msg, "both beams sit at their rails together from 1.0"))
        fail_msg("expected 'both beams sit at their rails together from 1.0...', got: %s",
                 err.msg);
    free(v1);
    free(v2);
}

/* --- scores against the rig simulator's truth ------------------------- */

typedef struct {
    double *t, *ratio;
    size_t n;
    double lp_end, release_t, leave_t, omega_end;
    int N;
} truth;

static void read_truth(const char *path, truth *tr)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    size_t cap = 512;
    tr->t = malloc(cap * sizeof *tr->t);
    tr->ratio = malloc(cap * sizeof *tr->ratio);
    tr->n = 0;
    while (fgets(line, sizeof line, f)) {
        double t, lp, wm, wp, ratio;
        if (sscanf(line, "impact,%lf,,%lf,%lf,%lf,%lf", &t, &lp, &wm, &wp, &ratio) == 5) {
            assert_true(tr->n < cap);
            tr->t[tr->n] = t;
            tr->ratio[tr->n++] = ratio;
        }
        sscanf(line, "# Lp_end=%lf", &tr->lp_end);
        sscanf(line, "# release_t_s=%lf", &tr->release_t);
        sscanf(line, "# leave_t_s=%lf", &tr->leave_t);
        sscanf(line, "# omega_end_rad_s=%lf", &tr->omega_end);
        sscanf(line, "# N=%d", &tr->N);
    }
    fclose(f);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A long simulated run (25 s: the impact search is shared between
 * threads only past 10 s a share) processed on one thread and on four:
 * the same impacts, bit for bit, and the same spectra. */
static void test_threads_agree(void **state)
{
    (void)state;
    pl_simrun_config sc;
    pl_simrun_config_default(&sc);
    sc.model.N = 38;
    sc.model.lambda0 = 4.5 * M_PI / 180;
    sc.model.ramp_length = 0;   /* endless: it rolls the whole time */
    sc.model.duration = 24;
    sc.lead_in_s = 1.0;
    sc.tail_s = 0.5;
    pl_simrun *sim = NULL;
    pl_err err = {0};
    assert_int_equal(pl_simrun_create(&sim, &sc, &err), PL_OK);
    pl_channel ch[2];
    pl_simrun_channels(sim, ch);
    size_t n = pl_simrun_frames(sim);
    const uint16_t *codes = pl_simrun_codes(sim);
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            v[k][i] = ch[k].beam_sign * ch[k].ldv_scale_mps_per_v *
                      pl_channel_volts(&ch[k], codes[2 * i + k]);
    pl_process_config c1, c4;
    pl_process_config_default(&c1);
    c1.threads = 1;
    c4 = c1;
    c4.threads = 4;
    pl_process_result r1, r4;
    assert_int_equal(pl_process_signals(v[0], v[1], n, sc.rate_hz, ch[0].beam_height_m,
                                        ch[1].beam_height_m, 38, &c1, &r1, &err), PL_OK);
    assert_int_equal(pl_process_signals(v[0], v[1], n, sc.rate_hz, ch[0].beam_height_m,
                                        ch[1].beam_height_m, 38, &c4, &r4, &err), PL_OK);
    assert_true(r1.n_impacts > 1000);
    assert_int_equal(r1.n_impacts, r4.n_impacts);
    for (size_t i = 0; i < r1.n_impacts; i++) {
        assert_true(r1.impacts[i].t_s == r4.impacts[i].t_s);
        assert_true(r1.impacts[i].ratio == r4.impacts[i].ratio);
        if (i)
            assert_true(r1.impacts[i].t_s > r1.impacts[i - 1].t_s);
    }
    assert_memory_equal(r1.psd_vp1, r4.psd_vp1, r1.psd_len * sizeof(double));
    assert_memory_equal(r1.psd_vp2, r4.psd_vp2, r1.psd_len * sizeof(double));
    assert_memory_equal(r1.theta, r4.theta, n * sizeof(double));
    pl_process_result_free(&r1);
    pl_process_result_free(&r4);
    free(v[0]);
    free(v[1]);
    pl_simrun_destroy(sim);
}

/* Processing stores, for viewers, the raw velocities' extremes of every
 * PL_DERIVED_RAW_BUCKET frames (db/derived.h): each the very minimum and
 * maximum of its frames as the chunks give them (volts x sign x scale),
 * the last bucket what is left. */
static void check_raw_extremes(pl_store *store, long long id)
{
    static const char *const names[4] = {"vp1_raw_min", "vp1_raw_max", "vp2_raw_min",
                                         "vp2_raw_max"};
    pl_run_info info;
    pl_channel ch[2];
    pl_err err = {0};
    assert_int_equal(pl_run_get(store, id, &info, &err), PL_OK);
    assert_int_equal(pl_run_channels(store, id, ch, 2, &err), PL_OK);
    size_t n = (size_t)info.n_frames, nb = (n + 255) / 256;
    assert_int_equal(PL_DERIVED_RAW_BUCKET, 256);
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    assert_int_equal(pl_run_read_channels(store, id, 0, (long long)n, v, 2, &err), PL_OK);
    for (int k = 0; k < 4; k++) {
        int c = k / 2, is_max = k % 2;
        double *x, t0, rate, gain = ch[c].beam_sign * ch[c].ldv_scale_mps_per_v;
        size_t m;
        assert_int_equal(pl_derived_series(store, id, names[k], 256, &x, &m, &t0, &rate, &err),
                         PL_OK);
        assert_int_equal(m, nb);
        assert_true(t0 == 0);
        tu_assert_close(rate, info.sample_rate_hz / 256, 1e-12);
        for (size_t b = 0; b < nb; b++) {
            double want = is_max ? -INFINITY : INFINITY;
            for (size_t i = 256 * b; i < n && i < 256 * (b + 1); i++)
                want = is_max ? fmax(want, v[c][i] * gain) : fmin(want, v[c][i] * gain);
            if (x[b] != want)
                fail_msg("run %lld %s bucket %zu: %.17g, the frames say %.17g", id,
                         names[k], b, x[b], want);
        }
        free(x);
    }
    free(v[0]);
    free(v[1]);
}

/* The stored run of a 12-second simulation (N = 38, raw 16-bit codes as
 * the simulator's card gives them) in a new store at db; its id. */
static long long stored_run(const char *db, const pl_simrun *sim, pl_store **store)
{
    pl_err err = {0};
    pl_prism pr;
    pl_prism_init(&pr);
    snprintf(pr.name, sizeof pr.name, "p38");
    pr.n_edges = 38;
    pr.a0_m = 0.015;
    pr.length_m = 0.05;
    pr.mass_kg = 0.27;
    snprintf(pr.material, sizeof pr.material, "steel");
    pl_run_info info;
    pl_run_info_init(&info);
    snprintf(info.prism, sizeof info.prism, "p38");
    info.sample_rate_hz = RATE;
    info.n_channels = 2;
    info.format = PL_FMT_U16;
    info.little_endian = pl_host_little_endian();
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    pl_channel ch[2];
    pl_simrun_channels(sim, ch);
    size_t n = pl_simrun_frames(sim);
    if (pl_store_open(store, db, PL_STORE_CREATE, &err) != PL_OK ||
        pl_prism_add(*store, &pr, &err) != PL_OK ||
        pl_run_create(*store, &info, ch, &err) != PL_OK ||
        pl_run_append_chunk(*store, info.id, 0, (long long)n, pl_simrun_codes(sim), 4 * n,
                            &err) != PL_OK)
        fail_msg("store: %s", err.msg);
    return info.id;
}

/* What a processing stored: the five series and the impacts. */
typedef struct {
    double *s[5];
    size_t n[5], n_impacts;
    pl_impact *imp;
} stored;

static const char *const series_names[5] = {"omega", "theta", "Lp", "vp1", "vp2"};

static void read_stored(pl_store *store, long long id, stored *out)
{
    pl_err err = {0};
    for (int k = 0; k < 5; k++)
        if (pl_derived_series(store, id, series_names[k], 10, &out->s[k], &out->n[k], NULL,
                              NULL, &err) != PL_OK)
            fail_msg("series %s: %s", series_names[k], err.msg);
    if (pl_derived_impacts(store, id, &out->imp, &out->n_impacts, &err) != PL_OK)
        fail_msg("impacts: %s", err.msg);
}

/* The stored spectra are r's, bit for bit. */
static void same_spectra(pl_store *store, long long id, const pl_process_result *r)
{
    static const char *const names[3] = {"psd_vp1", "psd_vp2", "psd_residual"};
    const double *want[3] = {r->psd_vp1, r->psd_vp2, r->psd_residual};
    pl_err err = {0};
    for (int k = 0; k < 3; k++) {
        double *got = NULL;
        size_t n = 0;
        if (pl_derived_series(store, id, names[k], 1, &got, &n, NULL, NULL, &err) != PL_OK)
            fail_msg("series %s: %s", names[k], err.msg);
        assert_int_equal(n, r->psd_len);
        assert_memory_equal(got, want[k], n * sizeof *got);
        free(got);
    }
}

static void free_stored(stored *s)
{
    for (int k = 0; k < 5; k++)
        free(s->s[k]);
    free(s->imp);
}

/* Each field of a[i] is b[i]'s, NaN for NaN (the struct's padding is
 * not compared). */
static int same_real(double x, double y)
{
    return x == y || (isnan(x) && isnan(y));
}

static void same_impacts(const pl_impact *a, const pl_impact *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(a[i].t_s == b[i].t_s && a[i].omega_minus == b[i].omega_minus &&
              a[i].omega_plus == b[i].omega_plus && a[i].ratio == b[i].ratio &&
              a[i].confirmed == b[i].confirmed && same_real(a[i].interval_s, b[i].interval_s) &&
              same_real(a[i].ratio_se, b[i].ratio_se) && same_real(a[i].t_sd_s, b[i].t_sd_s)))
            fail_msg("impact %zu differs: t %.17g/%.17g ratio %.17g/%.17g", i, a[i].t_s,
                     b[i].t_s, a[i].ratio, b[i].ratio);
}

/* The command's path (chunks read and scaled in one pass, its arrays
 * faulted in by helper threads meanwhile, omega and the velocities
 * written while the impacts are searched, theta in omega's memory for
 * the summary, the impacts 64 rows a statement) against the plain one:
 * processing the stored run, full or for the figures alone, on one
 * thread and on six (five helpers, the velocities' pages among theirs)
 * gives the same result, bit for bit, as pl_process_signals() on the
 * velocities scaled by hand; and what is stored is every 10th sample of
 * it, with the impacts as found, each field, the NULLs of the last
 * interval included. */
static void test_stored_run_as_signals(void **state)
{
    (void)state;
    pl_simrun_config sc;
    pl_simrun_config_default(&sc);
    sc.model.N = 38;
    sc.model.lambda0 = 4.5 * M_PI / 180;
    sc.model.ramp_length = 0;
    sc.model.duration = 11;
    pl_simrun *sim = NULL;
    pl_err err = {0};
    assert_int_equal(pl_simrun_create(&sim, &sc, &err), PL_OK);
    char *dir = tu_tmpdir("process-stored");
    char *db = tu_path(dir, "s.db");
    pl_store *store = NULL;
    long long id = stored_run(db, sim, &store);
    pl_channel ch[2];
    pl_simrun_channels(sim, ch);
    size_t n = pl_simrun_frames(sim);
    const uint16_t *codes = pl_simrun_codes(sim);
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            double volts = pl_channel_volts(&ch[k], codes[2 * i + k]);
            v[k][i] = volts * (ch[k].beam_sign * ch[k].ldv_scale_mps_per_v);
        }
    pl_process_config c;
    pl_process_config_default(&c);
    c.threads = 1;
    /* the library's call (full-rate result) and the command's (figures
     * alone: omega in vp1's memory, theta in omega's, the velocities'
     * spectra taken before omega is formed), each on one thread and on
     * six */
    enum { VARIANTS = 4 };
    pl_process_result r0, r[VARIANTS];
    stored st[VARIANTS];
    assert_int_equal(pl_process_signals(v[0], v[1], n, RATE, ch[0].beam_height_m,
                                        ch[1].beam_height_m, 38, &c, &r0, &err), PL_OK);
    for (int t = 0; t < VARIANTS; t++) {
        int summary = t >= 2;
        c.threads = t % 2 ? 6 : 1;
        if ((summary ? pl_process_run_summary : pl_process_run)(store, id, &c, &r[t], &err) !=
            PL_OK)
            fail_msg("%s, threads %d: %s", summary ? "summary" : "full", c.threads, err.msg);
        read_stored(store, id, &st[t]);
        same_spectra(store, id, &r0);
        if (summary) {
            assert_null(r[t].vp1);
            assert_null(r[t].omega);
            assert_null(r[t].theta);
        } else {
            assert_memory_equal(r[t].vp1, r0.vp1, n * sizeof(double));
            assert_memory_equal(r[t].vp2, r0.vp2, n * sizeof(double));
            assert_memory_equal(r[t].omega, r0.omega, n * sizeof(double));
            assert_memory_equal(r[t].theta, r0.theta, n * sizeof(double));
        }
        assert_true(r[t].lp_end == r0.lp_end && r[t].omega_last_mean == r0.omega_last_mean &&
                    r[t].ratio_mean == r0.ratio_mean && r[t].release == r0.release &&
                    r[t].end == r0.end);
        assert_int_equal(r[t].n_impacts, r0.n_impacts);
        same_impacts(r[t].impacts, r0.impacts, r0.n_impacts);
    }
    /* the run's impacts fill some 64-row statements and leave a rest */
    assert_true(r0.n_impacts > 256 && r0.n_impacts % 64 != 0);
    size_t nd = (n + 9) / 10;
    const double *full[5] = {r0.omega, r0.theta, r0.theta, r0.vp1, r0.vp2};
    for (int t = 0; t < VARIANTS; t++) {
        for (int k = 0; k < 5; k++) {
            assert_int_equal(st[t].n[k], nd);
            for (size_t i = 0; i < nd; i++) {
                double want = full[k][10 * i] * (k == 2 ? 38 / (2 * M_PI) : 1.0);
                if (memcmp(&st[t].s[k][i], &want, sizeof want) != 0)
                    fail_msg("variant %d: %s[%zu] = %.17g, the result's %.17g", t,
                             series_names[k], i, st[t].s[k][i], want);
            }
        }
        assert_int_equal(st[t].n_impacts, r0.n_impacts);
        same_impacts(st[t].imp, r0.impacts, r0.n_impacts);
        assert_true(isnan(st[t].imp[r0.n_impacts - 1].interval_s));
        free_stored(&st[t]);
        pl_process_result_free(&r[t]);
    }
    pl_process_result_free(&r0);
    pl_store_close(store);
    free(v[0]);
    free(v[1]);
    pl_simrun_destroy(sim);
    tu_rmtree(dir);
    free(db);
    free(dir);
}

/* A run refused by the impact search, which comes after the first part
 * of the result went into the store on its own thread: the earlier
 * result stays whole and the write lock is free again.  (The motion of
 * test_malformed_inputs too short for one impact, stored as 64-bit
 * float volts.) */
static void test_refused_after_the_writer_started(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("process-refused");
    char *db = tu_path(dir, "r.db");
    pl_store *store = NULL;
    pl_err err = {0};
    pl_prism pr;
    pl_prism_init(&pr);
    snprintf(pr.name, sizeof pr.name, "p22");
    pr.n_edges = 22;
    pr.a0_m = 0.015;
    pr.length_m = 0.05;
    pr.mass_kg = 0.2;
    snprintf(pr.material, sizeof pr.material, "steel");
    pl_run_info info;
    pl_run_info_init(&info);
    snprintf(info.prism, sizeof info.prism, "p22");
    info.sample_rate_hz = RATE;
    info.n_channels = 2;
    info.format = PL_FMT_F64;
    info.little_endian = pl_host_little_endian();
    snprintf(info.source_kind, sizeof info.source_kind, "csv");
    pl_channel ch[2];
    memset(ch, 0, sizeof ch);
    for (int k = 0; k < 2; k++) {
        ch[k].beam_height_m = k ? H2 : H1;
        ch[k].beam_sign = 1;
        ch[k].ldv_scale_mps_per_v = 1;
        ch[k].cal_kind = PL_CAL_IDENTITY;
        ch[k].cal_order = 1;
        ch[k].cal_coef[1] = 1;
    }
    size_t n = 2 * RATE;
    double *v = malloc(2 * n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double om = i > RATE ? 0.3 * (double)(i - RATE) / RATE : 0;
        v[2 * i] = om * H1 + 1e-6 * sin(i * 1.7);
        v[2 * i + 1] = om * H2 + 1e-6 * cos(i * 2.3);
    }
    if (pl_store_open(&store, db, PL_STORE_CREATE, &err) != PL_OK ||
        pl_prism_add(store, &pr, &err) != PL_OK || pl_run_create(store, &info, ch, &err) != PL_OK ||
        pl_run_append_chunk(store, info.id, 0, (long long)n, v, 2 * n * sizeof *v, &err) != PL_OK)
        fail_msg("store: %s", err.msg);
    /* an earlier result to keep */
    pl_processing rec;
    memset(&rec, 0, sizeof rec);
    rec.run_id = info.id;
    rec.n_expected = -1;
    snprintf(rec.processed_utc, sizeof rec.processed_utc, "2026-11-26T10:00:00Z");
    snprintf(rec.version, sizeof rec.version, "earlier");
    double one = 1;
    pl_series s = {"omega", "rad/s", 10, 0, 1000, 1, &one};
    assert_int_equal(pl_derived_save(store, &rec, &s, 1, NULL, 0, &err), PL_OK);
    pl_process_config c;
    pl_process_config_default(&c);
    c.threads = 4;
    pl_process_result r;
    assert_int_equal(pl_process_run(store, info.id, &c, &r, &err), PL_ENUMERIC);
    if (!strstr(err.msg, "no line impact"))
        fail_msg("expected 'no line impact', got: %s", err.msg);
    assert_int_equal(pl_process_run_summary(store, info.id, &c, &r, &err), PL_ENUMERIC);
    assert_int_equal(pl_derived_get(store, info.id, &rec, &err), PL_OK);
    assert_string_equal(rec.version, "earlier");
    double *got;
    size_t m;
    assert_int_equal(pl_derived_series(store, info.id, "omega", 10, &got, &m, NULL, NULL, &err),
                     PL_OK);
    assert_int_equal(m, 1);
    free(got);
    assert_int_equal(pl_derived_series(store, info.id, "vp1", 10, &got, &m, NULL, NULL, &err),
                     PL_ENOTFOUND);
    assert_int_equal(pl_store_begin(store, &err), PL_OK);
    assert_int_equal(pl_store_commit(store, &err), PL_OK);
    pl_store_close(store);
    free(v);
    tu_rmtree(dir);
    free(db);
    free(dir);
}

static void test_fixture_scores(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("process");
    char *db = tu_path(dir, "p.db");
    pl_store *store = NULL;
    pl_err err = {0};
    int count = 0;
    if (tu_fixture_db(db, "fixtures/runs/manifest.csv", &count, &err) != PL_OK)
        fail_msg("import: %s", err.msg);
    assert_int_equal(count, 17);
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);

    FILE *m = fopen("fixtures/runs/manifest.csv", "r");
    char line[512];
    long long id = 0;
    size_t truth_total = 0, det_total = 0, matched = 0, nerr = 0, cap = 8192;
    double *terr = malloc(cap * sizeof *terr), ratio_err_sum = 0, worst_lp = 0;
    double rel_err[64], rel_worst = 0;
    size_t runs = 0;
    while (fgets(line, sizeof line, m)) {
        if (line[0] == '#' || !strncmp(line, "file,", 5))
            continue;
        id++;
        char file[128], tpath[256];
        sscanf(line, "%127[^,]", file);
        *strrchr(file, '.') = '\0';
        snprintf(tpath, sizeof tpath, "fixtures/runs/%s.truth.csv", file);
        truth tr;
        read_truth(tpath, &tr);
        pl_process_config c;
        pl_process_config_default(&c);
        pl_process_result r;
        if (pl_process_run(store, id, &c, &r, &err) != PL_OK)
            fail_msg("run %lld (%s): %s", id, file, err.msg);
        if (id == 1)
            check_raw_extremes(store, id);
        /* truth inside the processed window */
        size_t in = 0, hit = 0, first_err = nerr;
        double tr_ratio = 0;
        for (size_t i = 0; i < tr.n; i++) {
            if (tr.t[i] < r.release_t + 0.01 || tr.t[i] > r.end_t - 0.01)
                continue;
            in++;
            tr_ratio += tr.ratio[i];
            double best = INFINITY;
            size_t bj = 0;
            for (size_t j = 0; j < r.n_impacts; j++)
                if (fabs(r.impacts[j].t_s - tr.t[i]) < fabs(best)) {
                    best = r.impacts[j].t_s - tr.t[i];
                    bj = j;
                }
            if (fabs(best) < 0.002) {
                hit++;
                terr[nerr++] = fabs(best);
                ratio_err_sum += fabs(r.impacts[bj].ratio / tr.ratio[i] - 1);
            }
        }
        size_t det_in = 0;
        for (size_t j = 0; j < r.n_impacts; j++)
            det_in += r.impacts[j].t_s >= r.release_t + 0.01 && r.impacts[j].t_s <= r.end_t - 0.01;
        truth_total += in;
        det_total += det_in;
        matched += hit;
        /* L_p at the end of the window against the truth there: the truth's
         * L_p at the leave instant, less what the 2 ms guard cuts off */
        double tr_lp = tr.lp_end - tr.N / (2 * M_PI) * tr.omega_end * (tr.leave_t - r.end_t);
        double rel = fabs(r.lp_end - tr_lp) / tr_lp;
        double tol = fmax(1e-3 * tr_lp, 0.1);
        qsort(terr + first_err, nerr - first_err, sizeof *terr, cmp_d);
        double rel_e = r.release_t - tr.release_t;
        assert_true(runs < sizeof rel_err / sizeof *rel_err);
        rel_err[runs++] = fabs(rel_e);
        rel_worst = fmax(rel_worst, fabs(rel_e));
        print_message("%-22s impacts %3zu/%3zu  Lp_end %.3f (truth %.3f, %+.3f)  "
                      "dt median %.3f ms  release %+.3f ms\n", file, hit, in, r.lp_end, tr_lp,
                      r.lp_end - tr_lp, 1e3 * terr[first_err + (nerr - first_err) / 2],
                      1e3 * rel_e);
        worst_lp = rel > worst_lp ? rel : worst_lp;
        /* issue 16: the run's mean ratio agrees with the model's (the
         * truth's) within its stated standard error; 3 of them, as 17
         * runs at 2 would miss once in three sets by chance */
        tr_ratio /= (double)in;
        double z = (r.ratio_mean - tr_ratio) / r.ratio_mean_se;
        print_message("%-22s ratio %.7f +- %.1e  truth %.7f  (%+.2f se)\n", file,
                      r.ratio_mean, r.ratio_mean_se, tr_ratio, z);
        if (!(fabs(z) <= 3))
            fail_msg("%s: mean ratio %.7f +- %.2g, truth %.7f", file, r.ratio_mean,
                     r.ratio_mean_se, tr_ratio);
        if (fabs(r.lp_end - tr_lp) > tol)
            fail_msg("%s: L_p at the end %.4f, truth %.4f", file, r.lp_end, tr_lp);
        pl_process_result_free(&r);
        free(tr.t);
        free(tr.ratio);
    }
    fclose(m);
    qsort(terr, nerr, sizeof *terr, cmp_d);
    double recall = (double)matched / truth_total, precision = (double)matched / det_total;
    double median = terr[nerr / 2], ratio_err = ratio_err_sum / nerr;
    print_message("recall %.2f %%  precision %.2f %%  time error median %.3f ms  "
                  "ratio error mean %.3f %%  worst L_p error %.3f %%\n",
                  100 * recall, 100 * precision, 1e3 * median, 100 * ratio_err,
                  100 * worst_lp);
    qsort(rel_err, runs, sizeof *rel_err, cmp_d);
    print_message("release |detected - true|: median %.3f ms, worst %.3f ms\n",
                  1e3 * rel_err[runs / 2], 1e3 * rel_worst);
    assert_true(recall >= 0.995);
    assert_true(precision >= 0.995);
    /* the lattice search's figures (issue 16): 0.001 ms and 0.002 % with
     * the ratios from the tops; 0.013 ms and 0.021 % from the arcs at the
     * instants; the old threshold detector's 0.032 ms and 0.106 % */
    assert_true(median <= 0.00001);
    assert_true(ratio_err <= 0.00005);
    free(terr);
    pl_store_close(store);
    free(db);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lattice_on_clean_arcs),
        cmocka_unit_test(test_known_decoder_delay),
        cmocka_unit_test(test_last_impact_near_the_end),
        cmocka_unit_test(test_no_impact_in_flight),
        cmocka_unit_test(test_front_end_undoes_the_chain),
        cmocka_unit_test(test_hum_hides_the_first_rise),
        cmocka_unit_test(test_bridge_joins_the_beams),
        cmocka_unit_test(test_lost_beam_carried),
        cmocka_unit_test(test_dead_beam_whole_run),
        cmocka_unit_test(test_saturated_inside_the_range),
        cmocka_unit_test(test_notebook_against_the_ratio),
        cmocka_unit_test(test_clipped_beam_carried),
        cmocka_unit_test(test_common_motion_under_clipping),
        cmocka_unit_test(test_common_motion_steady_over_clipping),
        cmocka_unit_test(test_clipped_into_the_tail),
        cmocka_unit_test(test_garbage_of_both_at_the_rails),
        cmocka_unit_test(test_lost_beam_beside_a_clipped_one),
        cmocka_unit_test(test_floor_lines_a_hertz_apart),
        cmocka_unit_test(test_slots_to_the_seen_end),
        cmocka_unit_test(test_lost_beam_garbage_at_its_rail),
        cmocka_unit_test(test_lost_beam_flat_or_at_a_rail),
        cmocka_unit_test(test_floor_lines_beside_garbage),
        cmocka_unit_test(test_lost_beam_back_at_its_rail),
        cmocka_unit_test(test_garbage_after_a_clipped_beam),
        cmocka_unit_test(test_common_motion_removed),
        cmocka_unit_test(test_common_motion_off_bin_under_garbage),
        cmocka_unit_test(test_mains_off_nominal),
        cmocka_unit_test(test_mains_drift),
        cmocka_unit_test(test_spectrum_and_filter),
        cmocka_unit_test(test_malformed_inputs),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_stored_run_as_signals),
        cmocka_unit_test(test_refused_after_the_writer_started),
        cmocka_unit_test(test_fixture_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
