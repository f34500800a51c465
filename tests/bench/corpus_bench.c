/* tests/bench/corpus_bench.c - detection against noise level, for
 * docs/process.md's table and the statement of where detection stops.
 *
 * One fixed signal chain but for its noise (a 10 kHz card, the decoder's
 * tracking filter at 5 kHz, impact 0.3 ms, ringing 2.8 kHz at 0.4 of the
 * step decaying in 1.5 ms, offsets +10 / -10 mV, 2 mV of 50 Hz hum with
 * harmonics, no drop-outs or spikes), and a noise of total RMS sigma a
 * sample, half its power white and half 1/f over 0.5 Hz .. 2 kHz (white
 * and pink each sigma / sqrt 2).  At each sigma the same CHAINS prisms,
 * ramps, releases, beams and laws (pl_simrun_config_random's, seeds
 * 1..CHAINS, at 10 kHz) are simulated, processed and scored as score.py
 * scores (tests/util/score.h; impacts with 5 ms of the prism in view after
 * them).  Per sigma, `name: value unit` lines:
 *   corpus_noise_<sigma>um_recall, _precision: over all the chains' impacts;
 *   corpus_noise_<sigma>um_loss_bias: the mean over all matched impacts of
 *     the relative error of the loss 1 - ratio;
 *   corpus_noise_<sigma>um_dt_med: the median of the chains' median |dt|;
 *   corpus_noise_<sigma>um_chains_ok: chains meeting issue 16's numbers;
 * and corpus_noise_limit: the largest sigma up to which every sigma keeps
 * recall and precision >= 99.5 % (0 when even the smallest does not). */
#include "acquire/sim/simrun.h"
#include "process/process.h"
#include "tests/util/score.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { CHAINS = 12 };

static const double SIGMA_UM[] = {10, 20, 50, 100, 200, 300, 500, 700, 1000};
enum { LEVELS = sizeof SIGMA_UM / sizeof SIGMA_UM[0] };

/* The fixed chain around the noise. */
static void fixed_chain(pl_rigsim_config *g, double sigma)
{
    pl_rigsim_config_default(g);
    g->track = 1;
    g->track_cutoff_hz = 5000;
    g->speckle = 0;
    g->offset_v[0] = 10e-3;
    g->offset_v[1] = -10e-3;
    g->hum_amp_v = 2e-3;
    for (int h = 0; h < PL_RIGSIM_HUM_HARMONICS; h++)
        g->hum_harmonic_v[h] = 0.5e-3 / (h + 1);
    g->noise_rms_mps = sigma / sqrt(2.0);
    g->pink = 1;
    g->pink_rms_mps = sigma / sqrt(2.0);
}

typedef struct {
    size_t truths, dets, matched, ok;
    double bias_sum, dt_med[CHAINS];
} level;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Simulates, processes and scores one chain into lv; -1 on a setup error. */
static int run_one(unsigned long seed, double sigma, level *lv, size_t slot)
{
    pl_simrun_config c;
    pl_simrun_config_random(&c, seed);
    c.rate_hz = 10000;
    fixed_chain(&c.rig, sigma);
    c.rig.seed = seed;
    pl_simrun *sim = NULL;
    pl_err err = {0};
    if (pl_simrun_create(&sim, &c, &err) != PL_OK) {
        fprintf(stderr, "corpus_bench: seed %lu: %s\n", seed, err.msg);
        return -1;
    }
    const pl_model_result *m = pl_simrun_model(sim);
    size_t n = pl_simrun_frames(sim), rel = pl_simrun_release_index(sim), nt = 0, nd = 0;
    size_t k_end = rel + m->n_samples - 1;
    pl_channel ch[2];
    pl_simrun_channels(sim, ch);
    const uint16_t *codes = pl_simrun_codes(sim);
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    double *tt = malloc((m->n_impacts + 1) * sizeof *tt), *tr = malloc((m->n_impacts + 1) * sizeof *tr);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            v[k][i] = ch[k].beam_sign * ch[k].ldv_scale_mps_per_v * pl_channel_volts(&ch[k], codes[2 * i + k]);
    for (; nt < m->n_impacts && rel / 1e4 + m->impacts[nt].t <= k_end / 1e4 - 0.005; nt++) {
        tt[nt] = rel / 1e4 + m->impacts[nt].t;
        tr[nt] = m->impacts[nt].ratio;
    }
    double cut = nt < m->n_impacts ? 0.5 * (tt[nt ? nt - 1 : 0] + rel / 1e4 + m->impacts[nt].t) : INFINITY;
    pl_process_config pc;
    pl_process_config_default(&pc);
    pc.threads = 1;
    pc.lattice.beta_rad = isfinite(c.nominal_beta) ? c.nominal_beta : c.model.beta;
    pl_process_result r = {0};
    tu_score s;
    double *dt = NULL, *dr = NULL, lp = 0;
    if (pl_process_signals(v[0], v[1], n, 1e4, c.model.h1, c.model.h2, c.model.N, &pc, &r, &err) == PL_OK) {
        dt = malloc((r.n_impacts + 1) * sizeof *dt);
        dr = malloc((r.n_impacts + 1) * sizeof *dr);
        for (size_t j = 0; j < r.n_impacts; j++)
            if (r.impacts[j].t_s < cut) {
                dt[nd] = r.impacts[j].t_s;
                dr[nd++] = r.impacts[j].ratio;
            }
        lp = c.model.N * r.theta[k_end] / (2 * M_PI);
    }
    tu_score_run(tt, tr, nt, dt, dr, nd, lp, m->lp[m->n_samples - 1], &s);
    lv->truths += s.n_true;
    lv->dets += s.n_det;
    lv->matched += s.n_matched;
    lv->ok += s.ok;
    lv->bias_sum += s.n_matched ? s.loss_bias * s.n_matched : 0;
    lv->dt_med[slot] = s.dt_med_s;
    pl_process_result_free(&r);
    free(dt);
    free(dr);
    free(v[0]);
    free(v[1]);
    free(tt);
    free(tr);
    pl_simrun_destroy(sim);
    return 0;
}

int main(void)
{
    double limit = 0;
    int still = 1;
    for (int l = 0; l < LEVELS; l++) {
        level lv = {0};
        double sigma = SIGMA_UM[l] * 1e-6;
        for (size_t i = 0; i < CHAINS; i++)
            if (run_one(1 + i, sigma, &lv, i) != 0)
                return 1;
        double recall = lv.truths ? (double)lv.matched / lv.truths : 0;
        double precision = lv.dets ? (double)lv.matched / lv.dets : 0;
        qsort(lv.dt_med, CHAINS, sizeof lv.dt_med[0], cmp_d);
        printf("corpus_noise_%gum_recall: %.2f %%\n", SIGMA_UM[l], 100 * recall);
        printf("corpus_noise_%gum_precision: %.2f %%\n", SIGMA_UM[l], 100 * precision);
        printf("corpus_noise_%gum_loss_bias: %+.1f %%\n", SIGMA_UM[l],
               lv.matched ? 100 * lv.bias_sum / lv.matched : NAN);
        printf("corpus_noise_%gum_dt_med: %.3f ms\n", SIGMA_UM[l],
               1e3 * 0.5 * (lv.dt_med[(CHAINS - 1) / 2] + lv.dt_med[CHAINS / 2]));
        printf("corpus_noise_%gum_chains_ok: %zu of %d\n", SIGMA_UM[l], lv.ok, CHAINS);
        still = still && recall >= 0.995 && precision >= 0.995;
        if (still)
            limit = SIGMA_UM[l];
    }
    printf("corpus_noise_limit: %g um/s\n", limit);
    return 0;
}
