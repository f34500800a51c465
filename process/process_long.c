/* process/process_long.c - a long run, processed in segments spliced to
 * its lead-in so that memory does not grow with the run.  See process.h
 * and docs/process.md, "Long runs". */
#include "process/process_private.h"


#include "core/extremes.h"
#include "core/pair.h"
#include "core/version.h"
#include "db/catalog.h"
#include "db/run.h"
#include "process/frontend.h"
#include "process/lattice.h"
#include "process/robust.h"
#include "process/spectral.h"
#include "process/window.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* --- long runs, in segments ------------------------------------------------ */

/* A run longer than cfg->segment_frames is processed in segments whose
 * cores, SEG_ALIGN-aligned and a quarter of segment_frames long, tile
 * it; each segment carries SEG_MARGIN_S of the run either side of its
 * core (the filter's support and the impact search's arcs, which reach a
 * slot or two across a seam) and, after the first, the run's lead-in
 * before its samples.  So every segment goes through the whole-run
 * pipeline as a run of its own: the same offsets, hum and noise from the
 * same lead-in (the hum in the run's phase: pl_frontend_splice), the
 * first segment's release, cut-off and slope, and its impacts, theta and
 * series taken from its core only.  theta is carried across each seam
 * from the segment before (anchored theta at the seam's sample, both
 * segments seeing the same impacts around it).  What the lead-in cannot
 * carry (a late start, motion common to both beams, gaps, the motion
 * ending before the last segment) is left to the whole path:
 * docs/process.md, "Long runs". */
#define SEG_MARGIN_S 2.0
/* seg_suspect(), seg_agrees() */
#define SEG_PHASE_SUSPECT 5.0
/* a multiple of the 1 kHz series' decimation and of the raw extremes'
 * bucket, so that each core's share of both starts on a value of its own */
#define SEG_ALIGN 1280

enum { PART_OMEGA, PART_VP1, PART_VP2, PART_THETA, PART_LP, PART_RAW, PARTS = PART_RAW + 4 };

/* What a long run's segments add up to. */
typedef struct {
    pl_process_result r;     /* the run's: scalars, impacts, spectra */
    size_t cap;              /* impacts' room */
    double seam_theta;       /* anchored theta at the next core's first sample */
    double raw_theta;        /* the plain integral up to the core done */
    double w_psd;            /* the spectra's weight so far (frames) */
    double beta_w, beta_wx, energy_w, energy_wx, phase_ss;
    size_t phase_n;
    seg_io io;               /* the first segment's lead-in and release */
    double phase_ref;        /* the smallest phase_sd_rad of the segments kept */
    double unconfirmed_ref;  /* the first segment's core's unconfirmed part */
    int probing;             /* the first segment's first cut: its core's
                                impacts into probe, for the next to match */
    pl_impact *probe;
    size_t n_probe;
    double probe_phase, probe_unconfirmed;   /* its phase_sd_rad, unconfirmed part */
    size_t segments;         /* kept */
    pl_derived_part *part[PARTS];
} long_run;

/* Why a long run goes the whole path instead: PL_OK with why set. */
static int seg_whole(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int seg_whole(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return 1;
}

static pl_status parts_open(pl_derived_writer *w, size_t n, double rate, long_run *L,
                            pl_err *err)
{
    size_t nd = (n + 9) / 10, nb = (n + PL_DERIVED_RAW_BUCKET - 1) / PL_DERIVED_RAW_BUCKET;
    double brate = rate / PL_DERIVED_RAW_BUCKET;
    pl_series s[PARTS] = {
        pl_proc_series("omega", "rad/s", 10, 0, rate / 10, nd, NULL),
        pl_proc_series("vp1", "m/s", 10, 0, rate / 10, nd, NULL),
        pl_proc_series("vp2", "m/s", 10, 0, rate / 10, nd, NULL),
        pl_proc_series("theta", "rad", 10, 0, rate / 10, nd, NULL),
        pl_proc_series("Lp", "1", 10, 0, rate / 10, nd, NULL),
        pl_proc_series("vp1_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
        pl_proc_series("vp1_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
        pl_proc_series("vp2_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
        pl_proc_series("vp2_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
    };
    for (int k = 0; k < PARTS; k++)
        if (pl_derived_part_open(w, &s[k], &L->part[k], err) != PL_OK)
            return err->code;
    return PL_OK;
}

static void parts_close(long_run *L)
{
    for (int k = 0; k < PARTS; k++)
        pl_derived_part_close(L->part[k]);
    memset(L->part, 0, sizeof L->part);
}

/* The raw extremes of the core [ca, cb) of a segment's velocities v
 * (before processing touches them), run frame core_a on. */
static pl_status seg_extremes(long_run *L, double *const v[2], size_t ca, size_t cb,
                              size_t core_a, pl_err *err)
{
    size_t nb = (cb - ca + PL_DERIVED_RAW_BUCKET - 1) / PL_DERIVED_RAW_BUCKET;
    double *x = malloc(2 * (nb ? nb : 1) * sizeof *x);
    pl_status st = x ? PL_OK : pl_err_set(err, PL_ENOMEM, "out of memory for %zu buckets", nb);
    for (int c = 0; c < 2 && st == PL_OK; c++) {
        pl_bucket_extremes(v[c] + ca, cb - ca, PL_DERIVED_RAW_BUCKET, x, x + nb);
        for (int e = 0; e < 2 && st == PL_OK; e++)
            st = pl_derived_part_write(L->part[PART_RAW + 2 * c + e],
                                       core_a / PL_DERIVED_RAW_BUCKET, x + e * nb, nb, err);
    }
    free(x);
    return st;
}

/* The core's 1 kHz series: every 10th sample from ca (run frame core_a,
 * a multiple of 10) below cb; theta moved by off. */
static pl_status seg_series(long_run *L, const pl_process_result *rk, size_t ca, size_t cb,
                            size_t core_a, double off, int N, pl_err *err)
{
    size_t m = (cb - ca + 9) / 10;
    double *x = malloc((m ? m : 1) * sizeof *x);
    if (!x)
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu values", m);
    const double *src[5] = {rk->omega, rk->vp1, rk->vp2, rk->theta, rk->theta};
    pl_status st = PL_OK;
    for (int k = 0; k < 5 && st == PL_OK; k++) {
        double add = k >= PART_THETA ? off : 0, mul = k == PART_LP ? N / (2 * M_PI) : 1;
        for (size_t j = 0; j < m; j++)
            x[j] = (src[k][ca + 10 * j] + add) * mul;
        st = pl_derived_part_write(L->part[k], core_a / 10, x, m, err);
    }
    free(x);
    return st;
}

/* The impacts of the core [ca, cb) (cb 0: to the end), run frame shift
 * on, into L: each with its segment's ratio error scale undone (the run's
 * is taken over all of them: pl_proc_scale_ratio_errors()). */
static pl_status seg_impacts(long_run *L, const pl_process_result *rk, size_t ca, size_t cb,
                             double shift_s, pl_err *err)
{
    pl_process_result *R = &L->r;
    for (size_t i = 0; i < rk->n_impacts; i++) {
        pl_impact p = rk->impacts[i];
        double at = (p.t_s - rk->decoder_shift_s) * rk->rate_hz;
        if (at < (double)ca || (cb && at >= (double)cb))
            continue;
        if (R->n_impacts == L->cap) {
            size_t cap = L->cap ? 2 * L->cap : 4096;
            pl_impact *q = realloc(R->impacts, cap * sizeof *q);
            if (!q)
                return pl_err_set(err, PL_ENOMEM, "out of memory for %zu impacts", cap);
            R->impacts = q;
            L->cap = cap;
        }
        p.t_s += shift_s;
        p.ratio_se /= rk->ratio_se_scale;
        R->impacts[R->n_impacts++] = p;
        R->n_confirmed += p.confirmed == 1;
    }
    return PL_OK;
}

/* A later segment's events into the run's R, its times moved by
 * shift_s: the front end's (drop-outs, clipped and lost stretches, which
 * the first segment's report lacks) and the lattice's steps. */
static void seg_events(pl_process_result *R, const pl_process_result *rk, double shift_s)
{
    pl_frontend_report *f = &R->front;
    const pl_frontend_report *g = &rk->front;
    for (int c = 0; c < 2; c++) {
        f->dropouts[c] += g->dropouts[c];
        f->dropout_s[c] += g->dropout_s[c];
        if (g->clipped[c]) {
            if (!f->clipped[c])
                f->clip_from_s[c] = g->clip_from_s[c] + shift_s;
            f->clip_to_s[c] = g->clip_to_s[c] + shift_s;
            f->clipped[c] += g->clipped[c];
            f->clip_spans[c] += g->clip_spans[c];
            if (isnan(f->sat_level_mps[c]))
                f->sat_level_mps[c] = g->sat_level_mps[c];
        }
    }
    f->both_out += g->both_out;
    for (size_t k = 0; k < g->n_lost && k < PL_FRONTEND_MAX_SPANS; k++)
        if (f->n_lost + k < PL_FRONTEND_MAX_SPANS) {
            pl_beam_span sp = g->lost[k];
            sp.from_s += shift_s;
            sp.to_s += shift_s;
            f->lost[f->n_lost + k] = sp;
        }
    f->n_lost += g->n_lost;
    f->lost_total_s += g->lost_total_s;
    R->steps.drops += rk->steps.drops;
    if (rk->steps.jumps && !(fabs(R->steps.jump_part) >= fabs(rk->steps.jump_part))) {
        R->steps.jump_at_s = rk->steps.jump_at_s + shift_s;
        R->steps.jump_part = rk->steps.jump_part;
        R->steps.jump_missing_s = rk->steps.jump_missing_s;
    }
    R->steps.jumps += rk->steps.jumps;
    R->lattice_suspect |= rk->lattice_suspect;
}

/* Adds segment rk's figures (core [ca, cb), run frame shift on, theta
 * moved by off) to L; first and last say which segment it is. */
static pl_status seg_add(long_run *L, pl_process_result *rk, const double *omc, size_t ca,
                         size_t cb, long long shift, double off, int first, int last,
                         int N, pl_err *err)
{
    pl_process_result *R = &L->r;
    double rate = rk->rate_hz, w = (double)(cb - ca), shift_s = (double)shift / rate;
    L->segments++;
    if (first) {
        pl_impact *imp = R->impacts;
        size_t n_imp = R->n_impacts;
        *R = *rk;
        /* the arrays stay the segment's; the run's spectra are made below */
        R->vp1 = R->vp2 = R->omega = R->theta = NULL;
        R->psd_vp1 = calloc(rk->psd_len, sizeof(double));
        R->psd_vp2 = calloc(rk->psd_len, sizeof(double));
        R->psd_residual = calloc(rk->psd_len, sizeof(double));
        R->impacts = imp;
        R->n_impacts = n_imp;
        R->n_confirmed = 0;
        R->drift_rad = 0;
        R->warnings[L->io.window_warned] = '\0';   /* pl_proc_check_count() and the rest: below */
        if (!R->psd_vp1 || !R->psd_vp2 || !R->psd_residual)
            return pl_err_set(err, PL_ENOMEM, "processing: out of memory");
    } else {
        if (rk->psd_len != R->psd_len)
            return pl_err_set(err, PL_ENUMERIC, "a segment's spectra have %zu bins, the "
                              "first's %zu", rk->psd_len, R->psd_len);
        seg_events(R, rk, shift_s);
    }
    for (size_t k = 0; k < R->psd_len; k++) {
        R->psd_vp1[k] += w * rk->psd_vp1[k];
        R->psd_vp2[k] += w * rk->psd_vp2[k];
        R->psd_residual[k] += w * rk->psd_residual[k];
    }
    L->w_psd += w;
    R->drift_rad = fmax(R->drift_rad, rk->drift_rad);
    if (isfinite(rk->phase_sd_rad)) {
        L->phase_ss += w * rk->phase_sd_rad * rk->phase_sd_rad;
        L->phase_n += cb - ca;
    }
    if (rk->beta_data_se_rad > 0) {
        double bw = 1 / (rk->beta_data_se_rad * rk->beta_data_se_rad);
        L->beta_w += bw;
        L->beta_wx += bw * rk->beta_data_rad;
    }
    if (rk->energy_ratio_se > 0) {
        double ew = 1 / (rk->energy_ratio_se * rk->energy_ratio_se);
        L->energy_w += ew;
        L->energy_wx += ew * rk->energy_ratio;
    }
    /* the plain integral over the core, as integrate() takes it */
    double half_dt = 0.5 / rate;
    for (size_t i = ca > 0 ? ca : 1; i < cb; i++)
        if (i > rk->release && i < rk->end)
            L->raw_theta += half_dt * (omc[i - 1] + omc[i]);
    if (!last) {
        L->seam_theta = rk->theta[cb] + off;
        return seg_impacts(L, rk, first ? 0 : ca, cb, shift_s, err);
    }
    R->end = (size_t)((long long)rk->end + shift);
    R->seen = (size_t)((long long)rk->seen + shift);
    R->end_t = (double)R->end / rate;
    R->second_release_t = rk->second_release_t + shift_s;
    R->lp_end = N * (rk->theta[rk->end - 1] + off) / (2 * M_PI);
    R->lp_end_raw = N * L->raw_theta / (2 * M_PI);
    R->omega_last_mean = rk->omega_last_mean;
    R->omega_last_41 = rk->omega_last_41;
    R->omega_last_lattice = rk->omega_last_lattice;
    R->omega_from_lattice = rk->omega_from_lattice;
    R->clock.q_last = rk->clock.q_last;
    R->clock.t_last_s = rk->clock.t_last_s + shift_s;
    R->clock.q_sd = fmax(R->clock.q_sd, rk->clock.q_sd);
    return seg_impacts(L, rk, ca, 0, shift_s, err);
}

/* The run's figures once every segment is in. */
static pl_status long_finish(long_run *L, int N, pl_err *err)
{
    pl_process_result *R = &L->r;
    for (size_t k = 0; k < R->psd_len; k++) {
        R->psd_vp1[k] /= L->w_psd;
        R->psd_vp2[k] /= L->w_psd;
        R->psd_residual[k] /= L->w_psd;
    }
    R->ring_freq_hz = pl_ring_peak(R->psd_residual, R->psd_len, R->psd_df);
    R->n_expected = R->n_impacts;
    R->phase_sd_rad = L->phase_n ? sqrt(L->phase_ss / (double)L->phase_n) : NAN;
    if (L->beta_w > 0) {
        R->beta_data_rad = L->beta_wx / L->beta_w;
        R->beta_data_se_rad = 1 / sqrt(L->beta_w);
    }
    if (L->energy_w > 0) {
        R->energy_ratio = L->energy_wx / L->energy_w;
        R->energy_ratio_se = 1 / sqrt(L->energy_w);
    }
    if (pl_proc_scale_ratio_errors(R) != 0)
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu impacts' ratio errors",
                          R->n_impacts);
    pl_proc_summarise(R);
    pl_proc_check_count(R, N);
    pl_proc_assess_quality(R);
    return PL_OK;
}

/* The impacts of a segment's core [ca, cb) (cb 0: to the end) and how
 * many of them are unconfirmed, into n[0], n[1]. */
static void core_counts(const pl_process_result *rk, size_t ca, size_t cb, size_t n[2])
{
    n[0] = n[1] = 0;
    for (size_t i = 0; i < rk->n_impacts; i++) {
        double at = (rk->impacts[i].t_s - rk->decoder_shift_s) * rk->rate_hz;
        if (at >= (double)ca && (!cb || at < (double)cb)) {
            n[0]++;
            n[1] += rk->impacts[i].confirmed != 1;
        }
    }
}

/* The first segment has no neighbour kept before it to be judged by:
 * it is cut twice (SEG_MARGIN_S and an eighth of its core), and kept
 * when the two cuts' core impacts agree (at most one more or less, and
 * SEG_AGREE of them within 0.1 ms), or when the second is plainly the
 * better (SEG_PHASE_SUSPECT times less scatter about the lattice, no
 * more unconfirmed); then the third cut the same way.  On the 80-minute
 * bench run cut in cores of 165 s the first two cuts left a third of the
 * first core's slots unconfirmed (scatter 0.04 rad) where the whole run
 * confirms every one, and the third none (3.7e-5 rad). */
#define SEG_AGREE 0.999

static int seg_probe(long_run *L, const pl_process_result *rk, size_t cb, pl_err *err)
{
    size_t c[2];
    core_counts(rk, 0, cb, c);
    L->probe_phase = rk->phase_sd_rad;
    L->probe_unconfirmed = c[0] ? (double)c[1] / (double)c[0] : 1;
    free(L->probe);
    L->n_probe = 0;
    L->probe = malloc((c[0] ? c[0] : 1) * sizeof *L->probe);
    if (!L->probe)
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu impacts", c[0]);
    for (size_t i = 0; i < rk->n_impacts; i++)
        if ((rk->impacts[i].t_s - rk->decoder_shift_s) * rk->rate_hz < (double)cb)
            L->probe[L->n_probe++] = rk->impacts[i];
    return PL_OK;
}

static int seg_agrees(const long_run *L, const pl_process_result *rk, size_t cb)
{
    size_t near = 0, m = 0, j = 0, c[2];
    core_counts(rk, 0, cb, c);
    /* or plainly the better of the two: the probe went its own way */
    if (rk->phase_sd_rad * SEG_PHASE_SUSPECT < L->probe_phase &&
        (double)c[1] <= L->probe_unconfirmed * (double)c[0])
        return 1;
    const pl_impact *p = L->probe;
    for (size_t i = 0; i < rk->n_impacts; i++) {
        double t = rk->impacts[i].t_s;
        if ((t - rk->decoder_shift_s) * rk->rate_hz >= (double)cb)
            continue;
        m++;
        while (j + 1 < L->n_probe && fabs(p[j + 1].t_s - t) <= fabs(p[j].t_s - t))
            j++;
        near += L->n_probe && fabs(p[j].t_s - t) < 1e-4;
    }
    return m + 1 >= L->n_probe && L->n_probe + 1 >= m && (double)near >= SEG_AGREE * (double)m;
}

/* A segment's impact search went its own way (a stretch of its lattice
 * out of phase, or its instants a ring cycle off the whole run's: on the
 * 80-minute bench run, 4 segments of 32 cut with 2 s margins, each at
 * 10-100 times the others' scatter of the impacts about the lattice):
 * beyond SEG_PHASE_SUSPECT times the smallest scatter of the segments
 * kept so far, or SEG_UNCONFIRMED_SUSPECT more of its core's slots
 * unconfirmed than the first segment's.  It is cut again with wider
 * margins (SEG_MARGINS_S), more of the run around it. */
#define SEG_UNCONFIRMED_SUSPECT 0.002

static int seg_suspect(const long_run *L, const pl_process_result *rk, size_t ca, size_t cb)
{
    size_t c[2];
    core_counts(rk, ca, cb, c);
    double part = c[0] ? (double)c[1] / (double)c[0] : 1;
    return part > L->unconfirmed_ref + SEG_UNCONFIRMED_SUSPECT ||
           rk->phase_sd_rad > SEG_PHASE_SUSPECT * L->phase_ref;
}

/* One segment: the run's frames [a, b) after its first pre (the lead-in),
 * core [core_a, core_b); *whole set (with why) when it shows something
 * only the whole path measures, *again when its impact search went its
 * own way (seg_suspect(): nothing but the raw extremes written). */
static pl_status long_segment(pl_store *store, long long run_id, const pl_run_info *info,
                              const pl_channel ch[2], int N, const pl_process_config *c,
                              long_run *L, size_t pre, size_t a, size_t b, size_t core_a,
                              size_t core_b, int first, int last, int *whole, int *again,
                              char *why, size_t why_n, pl_err *err)
{
    double rate = info->sample_rate_hz;
    double k[2] = {ch[0].beam_sign * ch[0].ldv_scale_mps_per_v,
                   ch[1].beam_sign * ch[1].ldv_scale_mps_per_v};
    size_t len = pre + (b - a), ca = core_a - a + pre, cb = core_b - a + pre;
    size_t half = (size_t)(0.5 * SEG_MARGIN_S * rate);
    long long shift = (long long)a - (long long)pre;
    run_arrays arr;
    if (pl_proc_arrays_alloc(&arr, len, 0) != 0)
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu frames", len);
    double *tail[2] = {arr.v[0] + pre, arr.v[1] + pre};
    pl_status st = PL_OK;
    if (pre)
        st = pl_run_read_scaled(store, run_id, 0, (long long)pre, arr.v, k, 2, err);
    if (st == PL_OK)
        st = pl_run_read_scaled(store, run_id, (long long)a, (long long)(b - a), tail, k, 2, err);
    if (st == PL_OK)
        st = seg_extremes(L, arr.v, ca, cb, core_a, err);
    pl_process_config cs = *c;
    if (!first)   /* the first segment's cut-off: one filter over the run */
        cs.cutoff_hz = L->r.cutoff_hz;
    L->io.fs = (pl_frontend_splice){pre, a, L->r.front.mains_hz, first ? 0 : ca,
                                    last ? len : cb};
    if (!first && isfinite(L->r.beta_used_rad))   /* the slope of the whole speed range */
        cs.lattice.beta_rad = L->r.beta_used_rad;
    pl_process_result rk;
    int done = 0;
    if (st == PL_OK)
        st = pl_proc_process_owned(&arr, NULL, NULL, rate, ch[0].beam_height_m, ch[1].beam_height_m,
                           N, &cs, &rk, NULL, &L->io, err);
    if (st != PL_OK) {
        pl_proc_arrays_free(&arr);
        return pl_err_prefix(err, "the segment from %.3f s: ", (double)core_a / rate);
    }
    /* what the lead-in cannot carry to the next segments */
    if (first && rk.late_omega > 0)
        *whole = seg_whole(why, why_n, "the recording starts after the release");
    else if (rk.front.n_common > 0)
        *whole = seg_whole(why, why_n, "motion common to both beams, fitted over the "
                           "whole run");
    else if (first && rk.release + 2 * half > core_b)
        *whole = seg_whole(why, why_n, "the release at %.3f s is too late in the first "
                           "segment", rk.release_t);
    else if (!first && (rk.release + half < pre || rk.release > pre + half))
        *whole = seg_whole(why, why_n, "the segment from %.3f s does not start in the "
                           "motion", (double)core_a / rate);
    else if ((!last && rk.end < cb) || (last && rk.end <= ca))
        *whole = seg_whole(why, why_n, "the motion ends at %.3f s, before the run's "
                           "last segment", (double)((long long)rk.end + shift) / rate);
    else if (!first && seg_suspect(L, &rk, ca, last ? 0 : cb))
        *again = 1;
    else if (first && L->probing)
        *again = 1, st = seg_probe(L, &rk, cb, err);
    else if (first && !seg_agrees(L, &rk, cb))
        *again = 1;
    else
        done = 1;
    if (done && first) {
        size_t cc[2];
        core_counts(&rk, 0, cb, cc);
        L->io.release = rk.release;
        L->io.quiet = rk.quiet;
        L->unconfirmed_ref = cc[0] ? (double)cc[1] / (double)cc[0] : 0;
    }
    if (done && (first || !(rk.phase_sd_rad >= L->phase_ref)))
        L->phase_ref = rk.phase_sd_rad;
    if (done) {
        double off = first ? 0 : L->seam_theta - rk.theta[ca];
        st = seg_series(L, &rk, ca, cb, core_a, off, N, err);
        if (st == PL_OK)
            st = seg_add(L, &rk, arr.omc, ca, cb, shift, off, first, last, N, err);
    }
    pl_process_result_free(&rk);
    pl_proc_arrays_free(&arr);
    return st;
}

/* The margins a segment is cut with, in turn while its impact search
 * goes its own way (seg_suspect()): SEG_MARGIN_S, then an eighth and a
 * half of the core (21 s and 82 s of the default's 165 s); past the
 * last the run goes the whole path.  On the 80-minute bench run 4 of 32
 * segments needed a second cut and 1 a third (at 20 s and 60 s); the
 * last cut's segment, twice the core, sets the bound on the memory. */
enum { SEG_CUTS = 3 };

static size_t seg_margin(size_t cut, size_t S, size_t m0)
{
    size_t m = cut == 0 ? m0 : cut == 1 ? S / 8 : S / 2;
    return m > m0 ? m : m0;
}

/* Where a later segment's samples start for core_a with margin frames
 * (never nearer the release than the first margin: the segment is
 * spliced into the motion). */
static size_t seg_start(size_t core_a, size_t margin, size_t release, size_t m0)
{
    size_t floor_at = release + m0;
    if (core_a > margin && core_a - margin >= floor_at)
        return core_a - margin;
    return core_a - m0 > floor_at ? floor_at : core_a - m0;
}

/* A core [core_a, core_b) of the run through its cuts (seg_margin()) until
 * one holds; when none does, its halves in turn (SEG_SPLITS times at
 * most: each half, another window on the run, its own cuts), and past
 * that the run goes whole.  On the 80-minute bench run one core of 165 s
 * held at none of its cuts and at its halves' first.  *cuts counts the
 * segments processed again. */
enum { SEG_SPLITS = 2 };

static pl_status long_piece(pl_store *store, long long run_id, const pl_run_info *info,
                            const pl_channel ch[2], int N, const pl_process_config *c,
                            long_run *L, size_t S, size_t M, size_t core_a, size_t core_b,
                            int depth, int *whole, size_t *cuts, char *why, size_t why_n,
                            pl_err *err)
{
    size_t n = (size_t)info->n_frames;
    int first = core_a == 0, last = core_b == n, again = 1;
    pl_status st = PL_OK;
    for (size_t cut = 0; cut < SEG_CUTS && again && st == PL_OK && !*whole; cut++) {
        /* the first core: probed at its second cut, then kept at its
         * first or third (seg_agrees()) */
        L->probing = first && cut == 0;
        size_t margin = seg_margin(!first ? cut : cut == 0 ? 1 : cut == 1 ? 0 : 2, S, M);
        size_t a = first ? 0 : seg_start(core_a, margin, L->r.release, M);
        size_t b = core_b + margin < n ? core_b + margin : n;
        again = 0;
        st = long_segment(store, run_id, info, ch, N, c, L, first ? 0 : L->r.release, a, b,
                          core_a, core_b, first, last, whole, &again, why, why_n, err);
        *cuts += again && !L->probing;
    }
    if (st != PL_OK || *whole || !again)
        return st;
    size_t half = (core_b - core_a) / 2 / SEG_ALIGN * SEG_ALIGN;
    if (depth == SEG_SPLITS || half < 2 * M + SEG_ALIGN) {
        *whole = seg_whole(why, why_n, "the impact search in the segment from %.3f s went "
                           "its own way however it was cut",
                           (double)core_a / info->sample_rate_hz);
        return PL_OK;
    }
    st = long_piece(store, run_id, info, ch, N, c, L, S, M, core_a, core_a + half, depth + 1,
                    whole, cuts, why, why_n, err);
    if (st == PL_OK && !*whole)
        st = long_piece(store, run_id, info, ch, N, c, L, S, M, core_a + half, core_b,
                        depth + 1, whole, cuts, why, why_n, err);
    return st;
}

/* A run longer than c->segment_frames, in segments (above), written as
 * it goes in the writer's transaction; *whole set (with why, nothing
 * written) when the whole path must measure it instead. */
pl_status pl_proc_long(pl_store *store, long long run_id, const pl_run_info *info,
                              const pl_channel ch[2], int N, const pl_process_config *c,
                              const char *delay_from, pl_process_result *out, int *whole,
                              char *why, size_t why_n, pl_err *err)
{
    size_t n = (size_t)info->n_frames, S = c->segment_frames / 4 / SEG_ALIGN * SEG_ALIGN;
    double rate = info->sample_rate_hz;
    size_t M = (size_t)(SEG_MARGIN_S * rate);
    if (S < 2 * M + SEG_ALIGN)
        S = (2 * M + SEG_ALIGN) / SEG_ALIGN * SEG_ALIGN + SEG_ALIGN;
    size_t K = n / S, cuts = 0;
    *whole = 0;
    if (K < 2) {
        *whole = seg_whole(why, why_n, "segments of %zu frames would not split it", S);
        return PL_OK;
    }
    long_run L;
    memset(&L, 0, sizeof L);
    pl_derived_writer *w = NULL;
    pl_status st = pl_derived_begin(store, run_id, &w, err);
    if (st == PL_OK)
        st = parts_open(w, n, rate, &L, err);
    for (size_t k = 0; k < K && st == PL_OK && !*whole; k++)
        st = long_piece(store, run_id, info, ch, N, c, &L, S, M, k * S,
                        k + 1 == K ? n : (k + 1) * S, 0, whole, &cuts, why, why_n, err);
    L.r.n = n;
    free(L.probe);
    if (st == PL_OK && !*whole)
        st = long_finish(&L, N, err);
    parts_close(&L);
    if (st != PL_OK || *whole) {
        pl_derived_abort(w);
        pl_process_result_free(&L.r);
        return st;
    }
    pl_process_result *R = &L.r;
    snprintf(R->decoder_delay_from, sizeof R->decoder_delay_from, "%s", delay_from);
    double df = R->psd_df;
    pl_series sv[3] = {
        pl_proc_series("psd_vp1", "m^2/s^2/Hz", 1, 0, 1 / df, R->psd_len, R->psd_vp1),
        pl_proc_series("psd_vp2", "m^2/s^2/Hz", 1, 0, 1 / df, R->psd_len, R->psd_vp2),
        pl_proc_series("psd_residual", "rad^2/s^2/Hz", 1, 0, 1 / df, R->psd_len, R->psd_residual),
    };
    for (int k = 0; k < 3 && st == PL_OK; k++)
        st = pl_derived_put(w, &sv[k], err);
    if (st != PL_OK) {
        pl_derived_abort(w);
        pl_process_result_free(R);
        return st;
    }
    /* the record says how it was cut: the rest of it is the whole path's */
    pl_processing rec;
    pl_proc_make_record(run_id, c, R, N, ch, &rec);
    size_t len = strlen(rec.params);
    snprintf(rec.params + len, sizeof rec.params - len,
             "segments=%zu\nsegment_frames=%zu\nsegments_recut=%zu\n", L.segments, S, cuts);
    st = pl_derived_finish(w, &rec, R->impacts, R->n_impacts, err);
    if (st == PL_OK && out)
        *out = *R;
    else
        pl_process_result_free(R);
    return st;
}
