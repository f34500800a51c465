/* process/process_store.c - the stored run: reading a run's metadata and
 * samples, and writing the result (see "writing the result").  See
 * process.h and docs/process.md. */
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

/* --- the stored run ----------------------------------------------------- */

pl_series pl_proc_series(const char *name, const char *unit, int dec,
                        double t0, double rate, size_t n, const double *v)
{
    pl_series s = {name, unit, dec, t0, rate, n, v};
    return s;
}

/* Faulting in the arrays while the chunks are read.  A fresh page costs
 * the kernel about as much to map as the decoding costs to fill (a
 * ten-minute run's five arrays are 240 MB, 59,000 pages: 0.05 to 0.1 s
 * on the 2-core machine); the read is SQLite's and one thread's, so the
 * other cores map the work arrays meanwhile and then, or with four or
 * more to spare at once, the velocities ahead of the decoding too (a
 * summary has one work array, the combined omega: a single helper that
 * had only it to map sat idle for most of the read).  MADV_POPULATE_WRITE
 * (Linux 5.14) maps pages without writing to them, so it may run on the
 * arrays being decoded into; where the kernel lacks it the work arrays
 * are touched by writing zeros (nobody reads them yet) and the
 * velocities are left to the decoding. */
enum { FAULT_MAX = 5, FAULT_BLOCK = 4 << 20 };

typedef struct {
    double *p[FAULT_MAX];
    int may_write[FAULT_MAX];
    size_t count, n;
} fault_job;

/* Maps the pages of p[0..n) back to front in FAULT_BLOCK pieces (the
 * decoding goes front to back); 0 when the kernel did. */
static int populate(double *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = (uintptr_t)(p + n) & ~(page - 1);
    while (hi > lo) {
        uintptr_t from = hi - lo > FAULT_BLOCK ? hi - FAULT_BLOCK : lo;
        if (madvise((void *)from, hi - from, MADV_POPULATE_WRITE) != 0)
            return -1;
        hi = from;
    }
    return 0;
#else
    (void)p;
    (void)n;
    return -1;
#endif
}

static void *fault_worker(void *arg)
{
    fault_job *j = arg;
    for (size_t k = 0; k < j->count; k++)
        if (populate(j->p[k], j->n) != 0 && j->may_write[k])
            for (size_t i = 0; i < j->n; i += 512)
                j->p[k][i] = 0;
    return NULL;
}

typedef struct {
    fault_job job[FAULT_MAX];
    pthread_t tid[FAULT_MAX];
    int started[FAULT_MAX];
    size_t helpers;
} faulting;

/* Starts up to threads - 1 helpers (threads 0: one a CPU) on a's arrays
 * and marks the work arrays touched; none for threads 1, when
 * prepare_channels() touches them as before. */
static void fault_in_start(faulting *f, run_arrays *a, int threads)
{
    long cpus = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    memset(f, 0, sizeof *f);
    f->helpers = cpus > 1 ? (size_t)(cpus - 1 < FAULT_MAX ? cpus - 1 : FAULT_MAX) : 0;
    if (f->helpers == 0)
        return;
    double *arr[FAULT_MAX] = {a->omega, a->omc, a->theta, a->v[1], a->v[0]};
    for (size_t k = 0, used = 0; k < FAULT_MAX; k++) {
        if (!arr[k])
            continue;   /* a summary's omega and theta are in vp1's memory */
        fault_job *j = &f->job[used++ % f->helpers];
        j->n = a->n;
        j->may_write[j->count] = k < 3;
        j->p[j->count++] = arr[k];
    }
    for (size_t h = 0; h < f->helpers; h++)
        f->started[h] = pthread_create(&f->tid[h], NULL, fault_worker, &f->job[h]) == 0;
    for (size_t h = 0; h < f->helpers; h++)
        if (!f->started[h])
            fault_worker(&f->job[h]);
    a->touched = 1;
}

static void fault_in_finish(faulting *f)
{
    for (size_t h = 0; h < f->helpers; h++)
        if (f->started[h])
            pthread_join(f->tid[h], NULL);
    f->helpers = 0;
}

/* The run's description: its record, two channels, prism and the gaps
 * its recording skipped (*gaps malloc'd, the caller frees it). */
pl_status pl_proc_read_meta(pl_store *store, long long run_id, pl_run_info *info,
                           pl_channel ch[2], pl_prism *prism, pl_run_gap **gaps,
                           size_t *n_gaps, pl_err *err)
{
    *gaps = NULL;
    *n_gaps = 0;
    if (pl_run_get(store, run_id, info, err) != PL_OK)
        return err->code;
    if (info->n_channels != 2)
        return pl_err_set(err, PL_EINVAL, "run %lld has %d channels: "
                          "processing needs the two LDVs", run_id, info->n_channels);
    if (!info->prism[0])
        return pl_err_set(err, PL_EINVAL, "run %lld names no prism: its edge "
                          "count N is needed for L_p (4.2)", run_id);
    if (info->n_frames < 1)
        return pl_err_set(err, PL_ENUMERIC, "run %lld holds no frames", run_id);
    if (pl_prism_get(store, info->prism, prism, err) != PL_OK ||
        pl_run_channels(store, run_id, ch, 2, err) != PL_OK ||
        pl_run_gaps(store, run_id, gaps, n_gaps, err) != PL_OK)
        return err->code;
    return PL_OK;
}

/* The most slots of the lattice the prism may turn through in a gap of
 * the recording.  The import drew the gap as a straight line of omega
 * between its edges; the truth there is arcs and drops, which the line
 * misses by at most the drop of one impact (1 - omega+/omega-) times the
 * gap, so its integral is off by at most (1 - ratio) of a slot for each
 * slot the gap holds.  With at most one slot in it that is below half a
 * slot for any ratio above 0.5 (the paper's run from 0.6 to 0.99), so
 * anchor_theta() rounds the turn between the impacts either side to the
 * right whole number of slots and L_p after the gap is whole-slot right;
 * and at most one impact is unseen, whose time no arc or step of its own
 * places.  Past one slot a second impact would be unseen and the rounding
 * no longer sure: the run is refused. */
#define GAP_MAX_SLOTS 1.0

/* The recording's gaps (the import stored each as a line: db/run.h)
 * bridged by the impact lattice.  Nothing in a gap was measured, so no
 * impact is reported there: a slot the lattice placed inside one is
 * dropped (its time would be the lattice's guess, not a measurement) and
 * the summary taken again; L_p runs on through the gap, anchored to the
 * impacts either side.  Each gap is a fault line; one inside the motion
 * leaves the run degraded.  omc: the combined omega, whose integral is
 * theta's.  PL_ENUMERIC for a gap that spans more than GAP_MAX_SLOTS. */
pl_status pl_proc_bridge_gaps(pl_process_result *r, const pl_run_gap *gaps, size_t n_gaps,
                             const double *omc, int N, pl_err *err)
{
    double rate = r->rate_hz;
    int in_motion = 0;
    size_t dropped_all = 0;
    for (size_t g = 0; g < n_gaps; g++) {
        size_t a = (size_t)gaps[g].first_frame, b = a + (size_t)gaps[g].n_frames;
        if (a >= r->n)
            continue;
        if (b > r->n)
            b = r->n;
        double turn = 0;
        for (size_t i = a > r->release ? a : r->release; i < b && i < r->end; i++)
            turn += omc[i];
        double slots = N * turn / rate / (2 * M_PI), at_s = (double)a / rate;
        double missing_s = (double)(b - a) / rate;
        int moving = b > r->release && a < r->seen;
        if (moving && fabs(slots) > GAP_MAX_SLOTS)
            return pl_err_set(err, PL_ENUMERIC, "the recording has a gap at %.3f s "
                              "(%zu frames, %.1f ms missing) in which the prism turned "
                              "through %.2f slots of the lattice: more than %g would "
                              "leave an impact unseen beside the one the lattice "
                              "carries and L_p after it not sure to the slot: the run "
                              "cannot be measured through it (record it again, or cut "
                              "the file at the gap and import the parts)", at_s, b - a,
                              1e3 * missing_s, slots, GAP_MAX_SLOTS);
        size_t kept = 0, dropped = 0;
        for (size_t k = 0; k < r->n_impacts; k++) {
            double t = (r->impacts[k].t_s - r->decoder_shift_s) * rate;
            if (t >= (double)a && t < (double)b) {
                dropped++;
                r->n_confirmed -= r->impacts[k].confirmed && r->n_confirmed > 0;
            } else {
                r->impacts[kept++] = r->impacts[k];
            }
        }
        r->n_impacts = kept;
        r->n_expected = r->n_expected > dropped ? r->n_expected - dropped : 0;
        dropped_all += dropped;
        in_motion |= moving;
        pl_proc_fault(r, "gap at_s=%.4f frames=%zu missing_s=%.4g in_motion=%d slots=%.3f "
              "impacts_dropped=%zu", at_s, b - a, missing_s, moving, moving ? slots : 0.0,
              dropped);
        if (moving)
            pl_proc_warn(r, "the recording has a gap at %.3f s: %zu frames (%.1f ms) missing, "
                 "bridged by the impact lattice (%.2f of a slot; %s)", at_s, b - a,
                 1e3 * missing_s, slots,
                 dropped == 0 ? "no impact fell in it"
                 : dropped == 1 ? "the impact the lattice placed in it not reported"
                                : "the impacts the lattice placed in it not reported");
        else
            pl_proc_warn(r, "the recording has a gap at %.3f s: %zu frames (%.1f ms) missing, "
                 "outside the motion", at_s, b - a, 1e3 * missing_s);
    }
    if (dropped_all)
        pl_proc_summarise(r);
    if (in_motion && !strcmp(r->quality, "good"))
        snprintf(r->quality, sizeof r->quality, "degraded");
    return PL_OK;
}

/* The decoder's delay processing uses, into c->lattice.decoder_delay_s
 * (NaN: none, t_s the transitions' centres), and where it came from.
 * Given (> 0) it wins; 0 asks for the centres.  Not given, the run's
 * channels' stored delays: both beams' L_p steps make every impact (the
 * combined omega, eq. 4.1), so one beam's delay alone is not the
 * impacts', and two decoders that differ delay them by about their mean. */
const char *pl_proc_decoder_delay(pl_process_config *c, const pl_channel ch[2])
{
    double *d = &c->lattice.decoder_delay_s;
    if (*d > 0)
        return "option";
    if (*d == 0) {
        *d = NAN;
        return "option_centre";
    }
    int known = (ch[0].decoder_delay_s > 0) + (ch[1].decoder_delay_s > 0);
    if (known == 2)
        *d = 0.5 * (ch[0].decoder_delay_s + ch[1].decoder_delay_s);
    return known == 2 ? "channels" : known == 1 ? "none_one_channel" : "none";
}

/* The run's arrays with its two channels as downhill velocities (m/s)
 * in a->v[0], a->v[1], its other arrays faulted in meanwhile. */
pl_status pl_proc_read_velocities(pl_store *store, long long run_id, const pl_run_info *info,
                                 const pl_channel ch[2], int threads, int summary,
                                 run_arrays *a, pl_err *err)
{
    size_t n = (size_t)info->n_frames;
    double k[2] = {ch[0].beam_sign * ch[0].ldv_scale_mps_per_v,
                   ch[1].beam_sign * ch[1].ldv_scale_mps_per_v};
    if (pl_proc_arrays_alloc(a, n, summary) != 0)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for %zu frames",
                          run_id, n);
    faulting f;
    fault_in_start(&f, a, threads);
    pl_status st = pl_run_read_scaled(store, run_id, 0, (long long)n, a->v, k, 2, err);
    fault_in_finish(&f);
    if (st != PL_OK) {
        pl_proc_arrays_free(a);
        return pl_err_prefix(err, "run %lld: ", run_id);
    }
    return PL_OK;
}



pl_status pl_proc_raw_extremes_of(double *const v[2], size_t n, raw_extremes *rx,
                                 pl_err *err)
{
    rx->n = (n + PL_DERIVED_RAW_BUCKET - 1) / PL_DERIVED_RAW_BUCKET;
    rx->v = malloc(4 * (rx->n ? rx->n : 1) * sizeof *rx->v);
    if (!rx->v)
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu buckets", rx->n);
    for (int c = 0; c < 2; c++)
        pl_bucket_extremes(v[c], n, PL_DERIVED_RAW_BUCKET, rx->v + 2 * c * rx->n,
                           rx->v + (2 * c + 1) * rx->n);
    return PL_OK;
}

/* The processing record of r: parameters, window, counts, warnings. */
void pl_proc_make_record(long long run_id, const pl_process_config *cfg,
                        const pl_process_result *r, int N, const pl_channel ch[2],
                        pl_processing *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->run_id = run_id;
    pl_store_utc_now(rec->processed_utc);
    snprintf(rec->version, sizeof rec->version, "%s", pl_version());
    const pl_frontend_report *f = &r->front;
    snprintf(rec->params, sizeof rec->params,
             "cutoff_hz=%.6g\ncutoff_from=%s\nrelease_sigmas=%g\nquiet_s=%g\n"
             "detector=lattice\ngap_s=%g\nfit_s=%g\nconfirm_sigmas=%g\nsmooth_slots=%d\n"
             "psd_segment=%zu\npsd_max_segments=%zu\nring_freq_hz=%.6g\n"
             "noise_omega_rad_s=%.6g\nnoise_step_rad_s=%.6g\nphase_sd_rad=%.6g\n"
             "drift_rad=%.6g\nlp_end_integral=%.9g\n"
             "ring_model_hz=%.6g\nring_decay_s=%.6g\ntop_shift_s=%.6g\nbeta_rad=%.6g\n"
             "beta_data_rad=%.6g\nbeta_data_se_rad=%.3g\nbeta_used_rad=%.6g\n"
             "beta_from=%s\nenergy_ratio=%.8g\nenergy_ratio_se=%.3g\nratio_se_scale=%.3g\n"
             "impact_t=%s\ndecoder_delay_from=%s\ndecoder_shift_s=%.6g\n"
             "decoder_shift_sd_s=%.3g\n"
             "offset1_mps=%.6g\noffset2_mps=%.6g\nhum_hz=%.6g\nhum1_mps=%.6g\nhum2_mps=%.6g\n"
             "dropouts1=%zu\ndropouts2=%zu\ndropouts_both=%zu\n"
             "N=%d\nh1_m=%.9g\nh2_m=%.9g\n"
             "lattice_spacing_slots=%.6g\nlattice_q_first=%.6g\nlattice_q_last=%.6g\n"
             "lattice_q_se=%.3g\nomega_last_41=%.6g\nomega_last_lattice=%.6g\n"
             "late_start_omega=%.6g\nstep_spacing_slots=%.6g\n"
             "step_drops=%zu\nphase_jumps=%zu\n",
             r->cutoff_hz, isnan(cfg->cutoff_hz) ? "data" : "option",
             cfg->release_sigmas, cfg->quiet_s, cfg->lattice.gap_s, cfg->lattice.fit_s,
             cfg->lattice.confirm_sigmas, cfg->lattice.smooth_slots, cfg->psd_segment,
             cfg->psd_max_segments, r->ring_freq_hz, r->noise_omega, r->noise_d,
             r->phase_sd_rad, r->drift_rad, r->lp_end_raw, r->ring_model_hz, r->ring_decay_s,
             r->top_shift_s, cfg->lattice.beta_rad, r->beta_data_rad, r->beta_data_se_rad,
             r->beta_used_rad, r->beta_from_data ? "data" : isfinite(r->beta_used_rad) ? "ramp" : "-",
             r->energy_ratio, r->energy_ratio_se, r->ratio_se_scale,
             !isnan(cfg->lattice.decoder_delay_s) ? "contact_given_delay"
             : cfg->lattice.to_contact ? "contact_measured_delay" : "centre",
             r->decoder_delay_from, r->decoder_shift_s, r->decoder_shift_sd_s, f->offset_mps[0],
             f->offset_mps[1],
             f->hum_hz, f->hum_amp_mps[0], f->hum_amp_mps[1], f->dropouts[0],
             f->dropouts[1], f->both_out, N, ch[0].beam_height_m, ch[1].beam_height_m,
             r->clock.spacing_slots, r->clock.q_first, r->clock.q_last, r->clock.q_sd,
             r->omega_last_41, r->omega_last_lattice, r->late_omega,
             r->steps.spacing, r->steps.drops, r->steps.jumps);
    rec->release_frame = (long long)r->release;
    rec->end_frame = (long long)r->end;
    rec->release_t_s = r->release_t;
    rec->end_t_s = r->end_t;
    rec->n_impacts = (long long)r->n_impacts;
    rec->lp_end = r->lp_end;
    rec->omega_last_mean = r->omega_last_mean;
    rec->ratio_mean = r->ratio_mean;
    rec->ratio_sd = r->ratio_sd;
    rec->ratio_mean_se = r->ratio_mean_se;
    rec->n_expected = (long long)r->n_expected;
    rec->n_confirmed = (long long)r->n_confirmed;
    snprintf(rec->warnings, sizeof rec->warnings, "%s", r->warnings);
    snprintf(rec->quality, sizeof rec->quality, "%s", r->quality[0] ? r->quality : "good");
    snprintf(rec->faults, sizeof rec->faults, "%s", r->faults);
}

/* --- writing the result ---------------------------------------------------- */



/* omega's series is in wr->dec already (pl_proc_writer_start()), the
 * velocities' too where velocities_out() took them. */
static pl_status write_first(writer *wr, int on_thread, pl_err *err)
{
    const pl_process_result *r = wr->r;
    double rate = r->rate_hz;
    size_t nd = wr->nd;
    if (!wr->dec)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", wr->run_id);
    if (!wr->velocities_in) {
        pl_proc_decimate(r->vp1, nd, 1.0, wr->dec + nd);
        pl_proc_decimate(r->vp2, nd, 1.0, wr->dec + 2 * nd);
    }
    pl_series sv[3] = {
        pl_proc_series("omega", "rad/s", 10, 0, rate / 10, nd, wr->dec),
        pl_proc_series("vp1", "m/s", 10, 0, rate / 10, nd, wr->dec + nd),
        pl_proc_series("vp2", "m/s", 10, 0, rate / 10, nd, wr->dec + 2 * nd),
    };
    if (pl_derived_begin(wr->store, wr->run_id, &wr->w, err) != PL_OK)
        return err->code;
    for (int k = 0; k < 3; k++)
        if (pl_derived_put(wr->w, &sv[k], err) != PL_OK)
            return err->code;
    /* on a thread of its own, the search still going: the commit's sync
     * then waits for the rest only */
    if (on_thread && pl_derived_sync(wr->w, err) != PL_OK)
        return err->code;
    wr->first_done = 1;
    return PL_OK;
}

static void *write_first_thread(void *arg)
{
    writer *wr = arg;
    wr->st = write_first(wr, 1, &wr->err);
    return NULL;
}

/* Once omega is filtered (pl_proc_process_owned()): omega's series taken here
 * (theta may take omega's memory next), the rest of the first part on a
 * thread of its own unless threads is 1 (it then waits for
 * pl_proc_write_rest()). */
void pl_proc_writer_start(writer *wr, const pl_process_result *r, int threads)
{
    wr->r = r;
    wr->nd = (r->n + 9) / 10;
    wr->st = PL_OK;
    if (!wr->dec)
        wr->dec = malloc(3 * wr->nd * sizeof *wr->dec);
    if (!wr->dec)
        return;   /* write_first() says so */
    pl_proc_decimate(r->omega, wr->nd, 1.0, wr->dec);
    if (threads != 1 && pthread_create(&wr->tid, NULL, write_first_thread, wr) == 0)
        wr->running = 1;
}

/* Where a summary's vp1 and vp2 go at 1 kHz (velocities_out()), taken
 * before omega is formed: wr->dec's second and third thirds, made here;
 * NULL when out of memory. */
double *pl_proc_writer_velocities(writer *wr, size_t n)
{
    size_t nd = (n + 9) / 10;
    if (!wr->dec && !(wr->dec = malloc(3 * nd * sizeof *wr->dec)))
        return NULL;
    wr->velocities_in = 1;
    return wr->dec + nd;
}

static void writer_join(writer *wr)
{
    if (wr->running)
        pthread_join(wr->tid, NULL);
    wr->running = 0;
}

/* Rolls back whatever was written (NULL: nothing to do). */
void pl_proc_writer_abort(writer *wr)
{
    if (!wr)
        return;
    writer_join(wr);
    pl_derived_abort(wr->w);
    free(wr->dec);
    wr->w = NULL;
    wr->dec = NULL;
}

/* The second part and the commit; on failure nothing is written.
 * scratch (the combined omega's array, done with) holds theta and L_p at
 * 1 kHz: a fresh array would be 10 MB more to fault in. */
pl_status pl_proc_write_rest(writer *wr, const pl_process_config *cfg, int N,
                            const pl_channel ch[2], const raw_extremes *rx, double *scratch,
                            pl_err *err)
{
    const pl_process_result *r = wr->r;
    size_t nd = wr->nd;
    double rate = r->rate_hz, *own = NULL;
    writer_join(wr);
    pl_status st = wr->st;
    if (st != PL_OK)
        *err = wr->err;
    else if (!wr->first_done)
        st = write_first(wr, 0, err);
    if (st == PL_OK && 2 * nd > r->n && !(scratch = own = malloc(2 * nd * sizeof *own)))
        st = pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", wr->run_id);
    if (st != PL_OK) {
        pl_proc_writer_abort(wr);
        return st;
    }
    pl_proc_decimate(r->theta, nd, 1.0, scratch);
    pl_proc_decimate(r->theta, nd, N / (2 * M_PI), scratch + nd);
    double brate = rate / PL_DERIVED_RAW_BUCKET;
    pl_series sv[9] = {
        pl_proc_series("theta", "rad", 10, 0, rate / 10, nd, scratch),
        pl_proc_series("Lp", "1", 10, 0, rate / 10, nd, scratch + nd),
        pl_proc_series("psd_vp1", "m^2/s^2/Hz", 1, 0, 1 / r->psd_df, r->psd_len, r->psd_vp1),
        pl_proc_series("psd_vp2", "m^2/s^2/Hz", 1, 0, 1 / r->psd_df, r->psd_len, r->psd_vp2),
        pl_proc_series("psd_residual", "rad^2/s^2/Hz", 1, 0, 1 / r->psd_df, r->psd_len, r->psd_residual),
        pl_proc_series("vp1_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v),
        pl_proc_series("vp1_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v + rx->n),
        pl_proc_series("vp2_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v + 2 * rx->n),
        pl_proc_series("vp2_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v + 3 * rx->n),
    };
    for (int k = 0; k < 9 && st == PL_OK; k++)
        st = pl_derived_put(wr->w, &sv[k], err);
    free(own);
    if (st != PL_OK) {
        pl_proc_writer_abort(wr);
        return st;
    }
    pl_processing rec;
    pl_proc_make_record(wr->run_id, cfg, r, N, ch, &rec);
    st = pl_derived_finish(wr->w, &rec, r->impacts, r->n_impacts, err);
    wr->w = NULL;   /* finish frees it, whatever the outcome */
    free(wr->dec);
    wr->dec = NULL;
    return st;
}

