/* tests/process/corpus_test.c - processing on a random corpus of signal
 * chains (issue 16): at least 200 recordings drawn by
 * pl_simrun_config_random() (prism N = 18..40, ramp, release, beams,
 * line or plastic law, card rate 5..50 kHz, and every artefact of a real
 * LDV chain at a random level: docs/rig.md, "Random signal chains"),
 * simulated, converted to m/s with each channel's stored calibration,
 * processed by pl_process_signals() and scored as score.py scores the
 * foreign runs (tests/util/score.h) against issue 16's numbers: recall
 * and precision >= 0.995, median impact-time error <= 0.2 ms, |loss bias|
 * <= max(3 %, 2.5 standard errors), L_p at the end within 0.1 %, on
 * every chain.  A failure prints a table of the failing chains with
 * their seeds and levels; `prismlab sim --random-chain SEED --wav F
 * --truth T` writes any one of them to a file.
 * PRISMLAB_CORPUS_SEED=SEED runs only that chain here,
 * PRISMLAB_CORPUS_FIRST=SEED runs the chains from SEED on (201 gives a
 * corpus nobody tuned on), and PRISMLAB_CORPUS_TABLE=1 prints every
 * chain's row.
 *
 * The truth counts an impact when the recording shows at least 5 ms of
 * the prism after it (END_MARGIN_S: its ratio is measured from the arc
 * after it; the foreign runs' last impacts lie 9.8..34 ms before their
 * ends); detections are scored up to halfway between the last counted
 * impact and the first uncounted one, so no match straddles the cut.
 * L_p is scored at the last frame in view, as score.py scores it at the
 * truth's t_end.
 *
 * Seeds 1..200 (20 under AddressSanitizer, which runs ten times slower);
 * a seed whose model slips or stops is replaced by seed + 1000000 (none
 * of the first 400 does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/simrun.h"
#include "process/process.h"
#include "tests/util/score.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
enum { CHAINS = 20 };
#else
enum { CHAINS = 200 };
#endif

#define END_MARGIN_S 0.005

typedef struct {
    unsigned long seed;       /* what pl_simrun_config_random() was given */
    pl_simrun_config cfg;
    tu_score s;
    char failed[200];         /* why processing refused, "" when it ran */
} chain;

/* A rolling recording from seed (or its replacement). */
static pl_simrun *draw(chain *c, unsigned long seed)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        pl_simrun *sim = NULL;
        pl_err err = {0};
        c->seed = seed + 1000000UL * attempt;
        pl_simrun_config_random(&c->cfg, c->seed);
        if (pl_simrun_create(&sim, &c->cfg, &err) != PL_OK)
            fail_msg("seed %lu: %s", c->seed, err.msg);
        pl_model_end e = pl_simrun_model(sim)->end;
        if (e == PL_END_DURATION || e == PL_END_LEFT_RAMP)
            return sim;
        pl_simrun_destroy(sim);
    }
    fail_msg("seed %lu: no rolling recording in 4 draws", seed);
    return NULL;
}

/* The codes in m/s, as processing reads a stored run: each channel's
 * calibration, LDV scale and beam sign. */
static void to_velocity(const pl_simrun *sim, double *v1, double *v2)
{
    pl_channel ch[2];
    const uint16_t *codes = pl_simrun_codes(sim);
    pl_simrun_channels(sim, ch);
    for (size_t i = 0; i < pl_simrun_frames(sim); i++) {
        v1[i] = ch[0].beam_sign * ch[0].ldv_scale_mps_per_v * pl_channel_volts(&ch[0], codes[2 * i]);
        v2[i] = ch[1].beam_sign * ch[1].ldv_scale_mps_per_v * pl_channel_volts(&ch[1], codes[2 * i + 1]);
    }
}

/* For one chain run alone: the true impacts with no detection within
 * 2 ms and the detections with no true impact within 2 ms. */
static void print_misses(const double *tt, size_t nt, const double *dt, size_t nd)
{
    for (int pass = 0; pass < 2; pass++) {
        const double *a = pass ? dt : tt, *b = pass ? tt : dt;
        size_t na = pass ? nd : nt, nb = pass ? nt : nd;
        for (size_t i = 0; i < na; i++) {
            double best = INFINITY;
            for (size_t j = 0; j < nb; j++)
                best = fmin(best, fabs(b[j] - a[i]));
            if (!(best < 0.002))
                print_message("  %s at %.5f s (nearest %s %.2f ms away)\n",
                              pass ? "false alarm" : "missed impact", a[i],
                              pass ? "true impact" : "detection", 1e3 * best);
        }
    }
}

/* Simulates, processes and scores one chain.  The truth: every impact
 * (recording clock) and L_p at the last frame the prism is in view,
 * where the measured L_p is read as score.py reads it (theta holds its
 * last value after the processed window). */
static void run_chain(chain *c, unsigned long seed, int verbose)
{
    pl_simrun *sim = draw(c, seed);
    const pl_model_result *m = pl_simrun_model(sim);
    size_t n = pl_simrun_frames(sim), rel = pl_simrun_release_index(sim);
    double rate = c->cfg.rate_hz;
    double *v1 = malloc(n * sizeof *v1), *v2 = malloc(n * sizeof *v2);
    double *tt = malloc((m->n_impacts + 1) * sizeof *tt), *tr = malloc((m->n_impacts + 1) * sizeof *tr);
    assert_true(v1 && v2 && tt && tr);
    to_velocity(sim, v1, v2);
    for (size_t i = 0; i < m->n_impacts; i++) {
        tt[i] = rel / rate + m->impacts[i].t;
        tr[i] = m->impacts[i].ratio;
    }
    size_t k_end = rel + m->n_samples - 1, nt = 0;
    double lp_true = m->lp[m->n_samples - 1], cut = INFINITY;
    while (nt < m->n_impacts && tt[nt] <= k_end / rate - END_MARGIN_S)
        nt++;
    if (nt < m->n_impacts)
        cut = nt ? 0.5 * (tt[nt - 1] + tt[nt]) : 0.5 * (rel / rate + tt[0]);
    pl_process_config pc;
    pl_process_config_default(&pc);
    pc.threads = 1;
    /* the slope the operator wrote down, as a stored run's ramp gives it */
    pc.lattice.beta_rad = isfinite(c->cfg.nominal_beta) ? c->cfg.nominal_beta : c->cfg.model.beta;
    pl_process_result r;
    pl_err err = {0};
    c->failed[0] = '\0';
    if (pl_process_signals(v1, v2, n, rate, c->cfg.model.h1, c->cfg.model.h2, c->cfg.model.N,
                           &pc, &r, &err) != PL_OK) {
        snprintf(c->failed, sizeof c->failed, "%.199s", err.msg);
        assert_int_equal(tu_score_run(tt, tr, nt, NULL, NULL, 0, 0.0, lp_true, &c->s), 0);
    } else {
        double *dt = malloc((r.n_impacts + 1) * sizeof *dt), *dr = malloc((r.n_impacts + 1) * sizeof *dr);
        assert_true(dt && dr);
        size_t nd = 0;
        for (size_t j = 0; j < r.n_impacts; j++)
            if (r.impacts[j].t_s < cut) {
                dt[nd] = r.impacts[j].t_s;
                dr[nd++] = r.impacts[j].ratio;
            }
        double lp = c->cfg.model.N * r.theta[k_end] / (2 * M_PI);
        assert_int_equal(tu_score_run(tt, tr, nt, dt, dr, nd, lp, lp_true, &c->s), 0);
        if (verbose) {
            print_message("seed %lu: release %.4f s, processed %.4f .. %.4f s, recording ends "
                          "%.4f s, L_p %.4f (truth %.4f)\n%s", c->seed, rel / rate, r.release_t,
                          r.end_t, n / rate, lp, lp_true, r.warnings);
            print_misses(tt, nt, dt, nd);
        }
        free(dt);
        free(dr);
        pl_process_result_free(&r);
    }
    free(v1);
    free(v2);
    free(tt);
    free(tr);
    pl_simrun_destroy(sim);
}

/* One row of the failure table: enough to recognise the chain. */
static void print_row(const chain *c)
{
    const pl_rigsim_config *g = &c->cfg.rig;
    const tu_score *s = &c->s;
    char pink[16] = "-", drop[16] = "-", ring[24] = "-";
    if (g->pink)
        snprintf(pink, sizeof pink, "%.0f", 1e6 * g->pink_rms_mps);
    if (g->dropout)
        snprintf(drop, sizeof drop, "%.1f", g->dropout_rate_hz);
    if (g->ringing)
        snprintf(ring, sizeof ring, "%.1fk x%.2f", 1e-3 * g->ring_freq_hz, g->ring_rel_amp);
    print_message("%8lu %2d %-7s %5.0f %5.1f %4.0f %4s %4s %-11s %4.1f %5.1f/%5.1f %4zu/%4zu %6.4f %6.4f %6.3f %+7.3f(%5.3f) %6.3f%s%s\n",
                  c->seed, c->cfg.model.N, c->cfg.model.law == PL_LAW_LINE ? "line" : "plastic",
                  c->cfg.rate_hz, 1e-3 * g->track_cutoff_hz, 1e6 * g->noise_rms_mps, pink, drop,
                  ring, 1e3 * g->hum_amp_v, 1e3 * g->offset_v[0], 1e3 * g->offset_v[1], s->n_det,
                  s->n_true, s->recall, s->precision, 1e3 * s->dt_med_s, s->loss_bias,
                  s->bias_limit, 100 * s->lp_err, c->failed[0] ? "  " : "", c->failed);
}

static void print_header(void)
{
    print_message("    seed  N law      rate  f_kHz white pink drop ring        humV  offsets_mV  det/true recall precis dt_ms   bias(limit)   Lp_%%\n");
}

static void corpus_reaches_issue_16s_numbers(void **state)
{
    (void)state;
    const char *one = getenv("PRISMLAB_CORPUS_SEED");
    size_t first = 1, count = CHAINS, bad = 0, matched = 0, truths = 0, dets = 0;
    size_t why[6] = {0}; /* refused, recall, precision, dt, bias, L_p */
    const char *from = getenv("PRISMLAB_CORPUS_FIRST");
    if (one && *one) {
        first = strtoul(one, NULL, 10);
        count = 1;
    } else if (from && *from) {
        first = strtoul(from, NULL, 10);
    }
    int table = getenv("PRISMLAB_CORPUS_TABLE") != NULL;
    chain *cs = calloc(count, sizeof *cs);
    double worst_rec = 1, worst_prec = 1, worst_lp = 0, worst_dt = 0, t0 = (double)clock();
    for (size_t i = 0; i < count; i++) {
        run_chain(&cs[i], first + i, count == 1);
        const tu_score *s = &cs[i].s;
        bad += !s->ok || cs[i].failed[0];
        why[0] += cs[i].failed[0] != '\0';
        why[1] += s->recall < 0.995;
        why[2] += s->precision < 0.995;
        why[3] += s->dt_med_s > 0.0002;
        why[4] += fabs(s->loss_bias) > s->bias_limit;
        why[5] += s->lp_err > 0.001;
        matched += s->n_matched;
        truths += s->n_true;
        dets += s->n_det;
        worst_rec = fmin(worst_rec, s->recall);
        worst_prec = fmin(worst_prec, s->precision);
        worst_lp = fmax(worst_lp, s->lp_err);
        worst_dt = fmax(worst_dt, s->dt_med_s);
    }
    print_message("corpus: %zu chains in %.1f s, %zu failing; impacts %zu true, %zu detected, "
                  "%zu matched (recall %.4f, precision %.4f over all); worst chain: recall %.4f "
                  "precision %.4f dt_med %.3f ms Lp error %.3f %%\n",
                  count, ((double)clock() - t0) / CLOCKS_PER_SEC, bad, truths, dets, matched,
                  truths ? (double)matched / truths : 0.0, dets ? (double)matched / dets : 0.0,
                  worst_rec, worst_prec, 1e3 * worst_dt, 100 * worst_lp);
    if (bad)
        print_message("failing on: processing refused %zu, recall %zu, precision %zu, "
                      "dt_med %zu, loss bias %zu, L_p %zu\n", why[0], why[1], why[2],
                      why[3], why[4], why[5]);
    if (bad || count == 1 || table) {
        print_header();
        for (size_t i = 0; i < count; i++)
            if (!cs[i].s.ok || cs[i].failed[0] || count == 1 || table)
                print_row(&cs[i]);
    }
    free(cs);
    /* Issue 16 asks every chain to meet its numbers, and every chain of
     * seeds 1..200 does (the closest, seed 52: 0.182 ms of median time
     * error).  A single chain (PRISMLAB_CORPUS_SEED) only prints its row. */
    size_t allowed = count == 1 ? 1 : 0;
    if (bad)
        print_message("%zu of %zu chains miss issue 16's numbers (table above)\n", bad, count);
    assert_int_equal(why[0], 0);
    assert_true(truths == 0 || (double)matched / truths >= 0.995);
    assert_true(dets == 0 || (double)matched / dets >= 0.995);
    if (bad > allowed)
        fail_msg("%zu of %zu chains miss issue 16's numbers", bad, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus_reaches_issue_16s_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
