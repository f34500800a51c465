/* tests/util/corpus.c - a scored corpus of simulated recordings (see
 * corpus.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/util/corpus.h"

#include "process/process.h"
#include "process/robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void tu_corpus_range(size_t chains, size_t *first, size_t *count, int *table)
{
    const char *one = getenv("PRISMLAB_CORPUS_SEED");
    const char *from = getenv("PRISMLAB_CORPUS_FIRST");
    *first = 1;
    *count = chains;
    if (one && *one) {
        *first = strtoul(one, NULL, 10);
        *count = 1;
    } else if (from && *from) {
        *first = strtoul(from, NULL, 10);
    }
    *table = getenv("PRISMLAB_CORPUS_TABLE") != NULL;
}

/* A rolling recording from seed (or its replacement). */
static pl_simrun *draw_rolling(tu_chain *c, unsigned long seed, tu_corpus_draw draw)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        pl_simrun *sim = NULL;
        pl_err err = {0};
        c->seed = seed + 1000000UL * attempt;
        draw(&c->cfg, c->seed);
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

/* Each detected impact beside the true one nearest it (PRISMLAB_CORPUS_IMPACTS
 * set, one chain): where a chain's loss bias comes from. */
static void print_impacts(const double *tt, const double *tr, size_t nt,
                          const pl_process_result *r)
{
    print_message("       t_s   dt_ms  ratio  true   se     rel.loss.err  confirmed  omega-  omega+\n");
    for (size_t j = 0; j < r->n_impacts; j++) {
        const pl_impact *d = &r->impacts[j];
        size_t best = 0;
        for (size_t i = 1; i < nt; i++)
            if (fabs(tt[i] - d->t_s) < fabs(tt[best] - d->t_s))
                best = i;
        if (nt == 0 || fabs(tt[best] - d->t_s) >= 0.002)
            continue;
        print_message("  %8.4f %+6.3f %6.4f %6.4f %6.4f %+8.3f %d %9.5f %9.5f\n", d->t_s,
                      1e3 * (d->t_s - tt[best]), d->ratio, tr[best], d->ratio_se,
                      (tr[best] - d->ratio) / (1 - tr[best]), d->confirmed, d->omega_minus, d->omega_plus);
    }
}

/* The first frame of [from, to] where neither beam sees the prism for
 * longer than a bridge (20 ms): each beam at one of the converter's
 * extreme codes (clipped) or inside its beam loss, stretches closer than
 * 0.5 ms joined.  No instrument measured the prism there, and processing
 * ends the motion at it (docs/process.md, "A lost beam"): the truth's
 * view ends there too.  to + 1 when there is none. */
static size_t first_blind(const pl_simrun *sim, const pl_simrun_config *cfg, size_t from,
                          size_t to)
{
    const uint16_t *codes = pl_simrun_codes(sim);
    uint16_t top = (uint16_t)((1u << cfg->rig.adc_bits) - 1);
    size_t k0 = 0, k1 = 0, lost = cfg->rig.beam_loss ? (size_t)cfg->rig.beam_loss_channel : 2;
    pl_simrun_beam_loss_span(sim, &k0, &k1);
    double rate = cfg->rate_hz;
    size_t merge = (size_t)ceil(0.0005 * rate), bridge = (size_t)(0.020 * rate);
    size_t start = 0, last = 0;
    int open = 0;
    for (size_t i = from; i <= to; i++) {
        int blind = 1;
        for (size_t c = 0; c < 2; c++) {
            uint16_t x = codes[2 * i + c];
            blind &= x == 0 || x == top || (c == lost && i >= k0 && i < k1);
        }
        if (!blind)
            continue;
        if (open && i <= last + merge) {
            last = i;
            if (last + 1 - start > bridge)
                return start;
            continue;
        }
        start = last = i;
        open = 1;
    }
    return to + 1;
}

/* The truth: every impact (recording clock) and L_p at the last frame
 * the prism is in view, where the measured L_p is read as score.py reads
 * it (theta holds its last value after the processed window). */
void tu_corpus_run_chain(tu_chain *c, unsigned long seed, tu_corpus_draw draw,
                         int verbose)
{
    pl_simrun *sim = draw_rolling(c, seed, draw);
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
    size_t blind = first_blind(sim, &c->cfg, rel, k_end);
    if (blind < k_end)
        k_end = blind > rel ? blind - 1 : rel;
    double lp_true = m->lp[k_end - rel], cut = INFINITY;
    while (nt < m->n_impacts && tt[nt] <= k_end / rate - TU_CORPUS_END_MARGIN_S)
        nt++;
    if (nt < m->n_impacts)
        cut = nt ? 0.5 * (tt[nt - 1] + tt[nt]) : 0.5 * (rel / rate + tt[0]);
    pl_process_config pc;
    pl_process_config_default(&pc);
    pc.threads = 1;
    if (c->known_delay)
        pc.lattice.decoder_delay_s = pl_rigsim_track_delay(&c->cfg.rig);
    /* the slope the operator wrote down, as a stored run's ramp gives it */
    pc.lattice.beta_rad = isfinite(c->cfg.nominal_beta) ? c->cfg.nominal_beta : c->cfg.model.beta;
    pl_process_result r;
    pl_err err = {0};
    c->failed[0] = '\0';
    c->release_err_s = NAN;
    c->z_sd = c->z_med = c->tz_sd = c->tz_med = NAN;
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
        c->release_err_s = r.release_t - rel / rate;
        assert_int_equal(tu_score_run(tt, tr, nt, dt, dr, nd, lp, lp_true, &c->s), 0);
        long nz = tu_ratio_z(tt, tr, nt, r.impacts, r.n_impacts, cut, &c->z_sd, &c->z_med);
        assert_true(nz >= 0);
        if (nz < 10)
            c->z_sd = c->z_med = NAN;
        nz = tu_time_z(tt, nt, r.impacts, r.n_impacts, cut, &c->tz_sd, &c->tz_med);
        assert_true(nz >= 0);
        if (nz < 10)
            c->tz_sd = c->tz_med = NAN;
        if (verbose) {
            print_message("seed %lu: release %.4f s, processed %.4f .. %.4f s, recording ends "
                          "%.4f s, L_p %.4f (truth %.4f)\n%s", c->seed, rel / rate, r.release_t,
                          r.end_t, n / rate, lp, lp_true, r.warnings);
            print_misses(tt, nt, dt, nd);
            if (getenv("PRISMLAB_CORPUS_IMPACTS"))
                print_impacts(tt, tr, nt, &r);
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

int tu_corpus_chain_ok(const tu_chain *c) { return c->s.ok && !c->failed[0]; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The release's figures: how far the detected release lies from the
 * true one, over the chains processing ran on. */
static void release_figures(const tu_chain *cs, size_t count, tu_corpus_sum *sum)
{
    double *e = malloc((count + 1) * sizeof *e);
    assert_non_null(e);
    size_t m = 0;
    sum->rel_med = sum->rel_p90 = sum->rel_worst = NAN;
    for (size_t i = 0; i < count; i++) {
        if (isnan(cs[i].release_err_s))
            continue;
        e[m++] = fabs(cs[i].release_err_s);
        if (!(e[m - 1] <= sum->rel_worst)) {
            sum->rel_worst = e[m - 1];
            sum->rel_worst_seed = cs[i].seed;
        }
    }
    if (m) {
        qsort(e, m, sizeof *e, cmp_double);
        sum->rel_med = m % 2 ? e[m / 2] : 0.5 * (e[m / 2 - 1] + e[m / 2]);
        sum->rel_p90 = e[(size_t)ceil(0.9 * (double)m) - 1];
    }
    free(e);
}

/* The instants' z over the chains measured (tu_corpus_sum). */
static void time_z_figures(const tu_chain *cs, size_t count, tu_corpus_sum *sum)
{
    double *sd = malloc((count + 1) * sizeof *sd), *med = malloc((count + 1) * sizeof *med);
    assert_true(sd && med);
    size_t m = 0;
    sum->tz_honest = 0;
    for (size_t i = 0; i < count; i++) {
        if (isnan(cs[i].tz_sd))
            continue;
        sd[m] = cs[i].tz_sd;
        med[m++] = cs[i].tz_med;
        sum->tz_honest += cs[i].tz_sd >= 0.7 && cs[i].tz_sd <= 1.5 && fabs(cs[i].tz_med) < 1;
    }
    sum->tz_measured = m;
    sum->tz_sd_med = m ? pl_median(sd, m) : NAN;
    sum->tz_med_med = m ? pl_median(med, m) : NAN;
    free(sd);
    free(med);
}

/* The ratios' z over the chains measured (tu_corpus_sum). */
static void z_figures(const tu_chain *cs, size_t count, tu_corpus_sum *sum)
{
    double *sd = malloc((count + 1) * sizeof *sd);
    assert_non_null(sd);
    size_t m = 0;
    sum->z_honest = 0;
    for (size_t i = 0; i < count; i++) {
        if (isnan(cs[i].z_sd))
            continue;
        sd[m++] = cs[i].z_sd;
        sum->z_honest += cs[i].z_sd >= 0.7 && cs[i].z_sd <= 1.5 && fabs(cs[i].z_med) < 1;
    }
    sum->z_measured = m;
    sum->z_sd_med = sum->z_sd_p10 = sum->z_sd_p90 = NAN;
    if (m) {
        qsort(sd, m, sizeof *sd, cmp_double);
        sum->z_sd_med = m % 2 ? sd[m / 2] : 0.5 * (sd[m / 2 - 1] + sd[m / 2]);
        sum->z_sd_p10 = sd[(size_t)floor(0.1 * (double)(m - 1))];
        sum->z_sd_p90 = sd[(size_t)ceil(0.9 * (double)(m - 1))];
    }
    free(sd);
    time_z_figures(cs, count, sum);
}

void tu_corpus_run(tu_chain *cs, size_t first, size_t count, tu_corpus_draw draw,
                   tu_corpus_sum *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->count = count;
    sum->worst_rec = sum->worst_prec = 1;
    double t0 = (double)clock();
    for (size_t i = 0; i < count; i++) {
        tu_corpus_run_chain(&cs[i], first + i, draw, count == 1);
        const tu_score *s = &cs[i].s;
        sum->bad += !tu_corpus_chain_ok(&cs[i]);
        sum->why[0] += cs[i].failed[0] != '\0';
        sum->why[1] += s->recall < 0.995;
        sum->why[2] += s->precision < 0.995;
        sum->why[3] += s->dt_med_s > 0.0002;
        sum->why[4] += fabs(s->loss_bias) > s->bias_limit;
        sum->why[5] += s->lp_err > 0.001;
        sum->matched += s->n_matched;
        sum->truths += s->n_true;
        sum->dets += s->n_det;
        sum->worst_rec = fmin(sum->worst_rec, s->recall);
        sum->worst_prec = fmin(sum->worst_prec, s->precision);
        sum->worst_lp = fmax(sum->worst_lp, s->lp_err);
        sum->worst_dt = fmax(sum->worst_dt, s->dt_med_s);
    }
    sum->seconds = ((double)clock() - t0) / CLOCKS_PER_SEC;
    release_figures(cs, count, sum);
    z_figures(cs, count, sum);
}

tu_chain *tu_corpus_start(size_t chains, tu_corpus_draw draw, int known_delay,
                          size_t *count, int *table, tu_corpus_sum *sum)
{
    size_t first;
    tu_corpus_range(chains, &first, count, table);
    tu_chain *cs = calloc(*count, sizeof *cs);
    assert_non_null(cs);
    for (size_t i = 0; i < *count; i++)
        cs[i].known_delay = known_delay;
    tu_corpus_run(cs, first, *count, draw, sum);
    tu_corpus_print_sum(sum);
    return cs;
}

void tu_corpus_print_sum(const tu_corpus_sum *u)
{
    print_message("corpus: %zu chains in %.1f s, %zu failing; impacts %zu true, %zu detected, "
                  "%zu matched (recall %.4f, precision %.4f over all); worst chain: recall %.4f "
                  "precision %.4f dt_med %.3f ms Lp error %.3f %%\n",
                  u->count, u->seconds, u->bad, u->truths, u->dets, u->matched,
                  u->truths ? (double)u->matched / u->truths : 0.0,
                  u->dets ? (double)u->matched / u->dets : 0.0,
                  u->worst_rec, u->worst_prec, 1e3 * u->worst_dt, 100 * u->worst_lp);
    print_message("release: |detected - true| median %.3f ms, 90th percentile %.3f ms, "
                  "worst %.3f ms (seed %lu)\n", 1e3 * u->rel_med, 1e3 * u->rel_p90,
                  1e3 * u->rel_worst, u->rel_worst_seed);
    print_message("ratio z = (ratio - true) / ratio_se: robust spread within 0.7-1.5 and "
                  "|median| < 1 on %zu of %zu chains; spreads' median %.2f (10th %.2f, 90th "
                  "%.2f)\n", u->z_honest, u->z_measured, u->z_sd_med, u->z_sd_p10, u->z_sd_p90);
    print_message("time z = (t_s - true) / t_sd_s: robust spread within 0.7-1.5 and |median| "
                  "< 1 on %zu of %zu chains; spreads' median %.2f, medians' median %+.2f\n",
                  u->tz_honest, u->tz_measured, u->tz_sd_med, u->tz_med_med);
    if (u->bad)
        print_message("failing on: processing refused %zu, recall %zu, precision %zu, "
                      "dt_med %zu, loss bias %zu, L_p %zu\n", u->why[0], u->why[1], u->why[2],
                      u->why[3], u->why[4], u->why[5]);
}

void tu_corpus_check_z(const tu_corpus_sum *u)
{
    size_t m = u->z_measured, need = m - (size_t)ceil(0.05 * (double)m);
    if (m >= 10 && u->z_honest < need)
        fail_msg("the ratios' stated errors are honest on %zu of %zu chains, fewer than %zu "
                 "(robust spread of z within 0.7-1.5, |median| < 1)", u->z_honest, m, need);
}

void tu_corpus_print_row(const tu_chain *c, const char *extra)
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
    print_message("%8lu %2d %-7s %5.0f %5.1f %4.0f %4s %4s %-11s %4.1f %5.1f/%5.1f %4zu/%4zu %6.4f %6.4f %6.3f %+7.3f(%5.3f) %6.3f %+8.3f %5.2f %+6.2f%s%s%s\n",
                  c->seed, c->cfg.model.N, c->cfg.model.law == PL_LAW_LINE ? "line" : "plastic",
                  c->cfg.rate_hz, 1e-3 * g->track_cutoff_hz, 1e6 * g->noise_rms_mps, pink, drop,
                  ring, 1e3 * g->hum_amp_v, 1e3 * g->offset_v[0], 1e3 * g->offset_v[1], s->n_det,
                  s->n_true, s->recall, s->precision, 1e3 * s->dt_med_s, s->loss_bias,
                  s->bias_limit, 100 * s->lp_err, 1e3 * c->release_err_s, c->tz_sd, c->tz_med, extra, c->failed[0] ? "  " : "", c->failed);
}

void tu_corpus_print_header(const char *extra)
{
    print_message("    seed  N law      rate  f_kHz white pink drop ring        humV  offsets_mV  det/true recall precis dt_ms   bias(limit)   Lp_%%   rel_ms  tz_sd tz_med%s\n", extra);
}
