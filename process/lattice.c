/* process/lattice.c - line impacts walked along the lattice of L_p: the
 * rooms of the search (lattice_core.h lists them) in the order they run.
 * The method and its reasons are in lattice.h and docs/process.md. */
#include "process/lattice.h"

#include "process/lattice_core.h"
#include "process/lattice_delay.h"
#include "process/lattice_eval.h"
#include "process/lattice_ring.h"
#include "process/lattice_settle.h"
#include "process/lattice_smooth.h"
#include "process/lattice_tops.h"
#include "process/lattice_walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pl_lattice_config_default(pl_lattice_config *cfg)
{
    cfg->gap_s = 0.001;
    cfg->fit_s = 0.010;
    cfg->confirm_sigmas = 5.0;
    cfg->smooth_slots = 15;
    cfg->threads = 0;
    cfg->beta_rad = NAN;
    cfg->beta_fixed = 0;
    cfg->end_seen = 0;
    cfg->to_contact = 0;
    cfg->decoder_delay_s = NAN;
}

/* The step statistic's own windows: a 1 ms gap and 5 ms fits each side
 * resolve a step of a fraction of the noise and keep neighbours apart at
 * the fastest rolling of the paper's prisms (an impact every 20 ms). */
enum { D_GAP_US = 1000, D_FIT_US = 5000 };

static size_t samples(double s, double rate, size_t min)
{
    size_t k = (size_t)llround(s * rate);
    return k < min ? min : k;
}

/* The walk's buffers: its scratch and the ringing fit's table of powers
 * (*powsum, also in wk->powsum; the caller frees both).  -1 when out of
 * memory, nothing left allocated. */
static int walk_buffers(walk *wk, double **powsum)
{
    wk->scratch = malloc((4 * wk->W + 64) * sizeof *wk->scratch);
    *powsum = pl_lat_ring_table(wk->W);
    if (!wk->scratch || !*powsum) {
        free(wk->scratch);
        free(*powsum);
        return -1;
    }
    wk->powsum = *powsum;
    return 0;
}

/* After the walk, the slots v[0..m-1] settled (lattice_settle.h), the
 * slot past the last added when it shows (sl has room for it), and the
 * angles smoothed along the lattice into ths, vars, the lattice's bend
 * that the smoothing does not follow into *bend (pl_lat_smooth_phase());
 * returns the new count. */
static size_t settle_slots(walk *wk, slots *sl, size_t m, const pl_lattice_config *cfg,
                           double *ths, double *vars, double *bend, pl_lattice_stats *st)
{
    pl_lat_settle(wk, sl->v, m);
    m = pl_lat_extend_end(wk, sl, m);
    st->gap_s = (double)wk->G / wk->rate;
    st->ring_hz = wk->ring.w * wk->rate / (2 * M_PI);
    st->ring_decay_s = wk->ring.tau / wk->rate;
    pl_lat_smooth_phase(sl->v, m, cfg->smooth_slots, wk->delta, ths, vars, bend);
    if (wk->ring.w > 0 && pl_lat_snap_cycles(wk, sl->v, m, ths))
        pl_lat_smooth_phase(sl->v, m, cfg->smooth_slots, wk->delta, ths, vars, bend);
    return m;
}

/* The smoothed angles ths, vars of slots v[0..m-1] placed by the arcs'
 * tops (pl_lat_top_shift(); its tops into *tp, which the caller frees).
 * The tops' intervals are cut at the slots' instants; once the tops
 * have moved the instants (pl_lat_top_shift()), they are fitted again on the
 * intervals cut there, from the lattice's own angles (the first
 * pass's tops are not counted twice).  On 200 further corpus chains a
 * second pass brought a chain with 1/f noise from 0.212 to 0.193 ms
 * of median time error; a third changed no figure. */
static void place_by_tops(const walk *wk, slot *v, size_t m, double beta, int beta_fixed,
                          double *ths, double *vars, double bend, tops *tp,
                          pl_lattice_stats *st)
{
    enum { TOP_PASSES = 2 };
    st->beta_data_rad = st->beta_data_se_rad = st->energy_ratio = st->beta_used_rad = NAN;
    st->energy_ratio_se = NAN;
    st->beta_from_data = 0;
    double *ths0 = malloc((m + 1) * sizeof *ths0), *vars0 = malloc((m + 1) * sizeof *vars0);
    int passes = ths0 && vars0 ? TOP_PASSES : 1;
    if (passes > 1) {
        memcpy(ths0, ths, m * sizeof *ths);
        memcpy(vars0, vars, m * sizeof *vars);
    }
    for (int pass = 0; pass < passes; pass++) {
        if (pass > 0) {
            for (size_t i = 0; i < m; i++) {
                size_t from = i > 0 ? (size_t)v[i - 1].tc : wk->release;
                double t = pl_lat_time_of_theta(wk, ths[i], from, 1);
                if (!isnan(t))
                    v[i].tc = t;
            }
            memcpy(ths, ths0, m * sizeof *ths);
            memcpy(vars, vars0, m * sizeof *vars);
            pl_lat_tops_free(tp);
        }
        st->top_shift_s = pl_lat_top_shift(wk, v, m, ths, vars, bend, beta, beta_fixed, tp, st) / wk->rate;
    }
    free(ths0);
    free(vars0);
}

/* The shift from the transitions' centres to the contact into st: the
 * decoder's delay known_s when given (not NaN), else measured on the
 * run's steps (lattice_delay.h).  The instants are left at the centres:
 * theta is on the decoder's clock, and L_p is anchored to it there
 * (pl_process: the caller moves them after).  -1 when out of memory. */
static int to_contact(const walk *wk, double known_s, const pl_impact *imp, size_t n,
                      pl_lattice_stats *st)
{
    pl_lat_delay d = {-known_s, 0, known_s, 0, n, 0};
    if (isnan(known_s) && pl_lat_decoder_delay(wk, imp, n, &d) != 0)
        return -1;
    st->decoder_shift_s = d.shift_s;
    st->decoder_shift_sd_s = d.shift_sd_s;
    st->decoder_delay_s = d.width_s;
    st->decoder_zeta = d.zeta;
    st->decoder_impacts = d.used;
    return 0;
}

pl_status pl_lattice_find(double *om, const double *theta, size_t n,
                          double rate, size_t release, size_t quiet, size_t end, int N,
                          const pl_lattice_config *cfg, pl_impact **out,
                          size_t *n_out, pl_lattice_stats *st, pl_err *err)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    *n_out = 0;
    walk wk = {om, theta, n, release, end < n ? end : n,
               samples(D_GAP_US * 1e-6, rate, 2), samples(D_FIT_US * 1e-6, rate, 4),
               samples(cfg->gap_s, rate, 2), samples(cfg->fit_s, rate, 4),
               rate, 2 * M_PI / N, cfg->confirm_sigmas, 0, 0, {0, 0, 0, 0, 0}, NULL, cfg->threads, NULL, quiet,
               cfg->end_seen};
    double *powsum;
    if (walk_buffers(&wk, &powsum) != 0)
        return pl_err_set(err, PL_ENOMEM, "impact search: out of memory");
    pl_lat_noise(&wk);
    st->noise_omega = wk.noise_om;
    st->noise_d = wk.noise_d;
    slot seed = {0};
    slots sl = {0};
    size_t m = 0;
    int tried = 0, ok = pl_lat_walk_best(&wk, &sl, &m, &seed, &tried) == 0;
    if (ok && !tried) {
        free(wk.scratch);
        free(powsum);
        return pl_err_set(err, PL_ENUMERIC, "no line impact stands %g noise "
                          "standard deviations (%.3g rad/s) above the noise between "
                          "the release at %.3f s and the end at %.3f s",
                          cfg->confirm_sigmas, wk.noise_d, release / rate, wk.end / rate);
    }
    /* room for the slot pl_lat_extend_end() may add */
    double *ths = ok ? malloc((m + 1) * sizeof *ths) : NULL;
    double *vars = ok ? malloc((m + 1) * sizeof *vars) : NULL;
    pl_impact *imp = ok ? malloc((m + 1) * sizeof *imp) : NULL;
    if (!ths || !vars || !imp) {
        free(sl.v);
        free(ths);
        free(vars);
        free(imp);
        free(wk.scratch);
        free(powsum);
        return pl_err_set(err, PL_ENOMEM, "impact search: out of memory");
    }
    double bend = 0;
    m = settle_slots(&wk, &sl, m, cfg, ths, vars, &bend, st);
    tops tp;
    place_by_tops(&wk, sl.v, m, cfg->beta_rad, cfg->beta_fixed, ths, vars, bend, &tp, st);
    *n_out = pl_lat_collect(&wk, sl.v, m, ths, vars, &seed, &tp, imp, st);
    pl_lat_tops_free(&tp);
    if ((cfg->to_contact || !isnan(cfg->decoder_delay_s)) &&
        to_contact(&wk, cfg->decoder_delay_s, imp, *n_out, st) != 0) {
        free(imp);
        *out = NULL;
        *n_out = 0;
        imp = NULL;
    }
    *out = imp;
    free(sl.v);
    free(ths);
    free(vars);
    free(wk.scratch);
    free(powsum);
    return PL_OK;
}
