/* process/process.c - velocities to omega, theta, L_p, impacts, spectra:
 * the phases in order (channels, release, front end, omega and the end,
 * spectra and filter, impacts, theta and L_p, summary), each a function of
 * its own; the stored run is read and written by process_store.c, a long
 * one in segments by process_long.c.  See process.h and docs/process.md. */
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

void pl_process_config_default(pl_process_config *cfg)
{
    cfg->cutoff_hz = NAN;
    cfg->release_sigmas = 8.0;
    cfg->quiet_s = 0.2;
    pl_lattice_config_default(&cfg->lattice);
    cfg->psd_segment = 4096;
    cfg->psd_max_segments = 512;
    cfg->threads = 0;
    cfg->a0_m = NAN;
    cfg->ramp_length_m = NAN;
    cfg->segment_frames = PL_PROCESS_SEGMENT_FRAMES;
}

void pl_process_result_free(pl_process_result *r)
{
    free(r->vp1);
    free(r->vp2);
    free(r->omega);
    free(r->theta);
    free(r->impacts);
    free(r->psd_vp1);
    free(r->psd_vp2);
    free(r->psd_residual);
    memset(r, 0, sizeof *r);
}

void pl_proc_warn(pl_process_result *r, const char *fmt, ...)
{
    size_t len = strlen(r->warnings);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warnings + len, sizeof r->warnings - len, fmt, ap);
    va_end(ap);
    len = strlen(r->warnings);
    if (len + 1 < sizeof r->warnings) {
        r->warnings[len] = '\n';
        r->warnings[len + 1] = '\0';
    }
}

static double mean_of(const double *v, size_t a, size_t b)
{
    double s = 0;
    for (size_t i = a; i < b; i++)
        s += v[i];
    return b > a ? s / (double)(b - a) : 0.0;
}

/* The median of v[0..q) (NaN when out of memory): the lead-in's level,
 * which a speckle spike of a few samples cannot move (a mean moved by
 * one 5-sample spike of -4.9 V biased omega by 0.06 rad/s over the whole
 * run, and the release was found where the quiet_s window ends: 0.2 s
 * into a recording released at 1 s). */
static double lead_level(const double *v, size_t q)
{
    double *t = malloc((q ? q : 1) * sizeof *t);
    if (!t)
        return NAN;
    memcpy(t, v, q * sizeof *t);
    double m = pl_median(t, q);
    free(t);
    return m;
}

static pl_status check_geometry(size_t n, double rate, double h1, double h2,
                                int N, pl_err *err)
{
    if (!(fabs(h1 - h2) > 1e-6))
        return pl_err_set(err, PL_EINVAL, "beam heights h1 = %g m and h2 = %g m "
                          "must differ: (4.1) divides by h1 - h2", h1, h2);
    if (!(h1 > 0 && h2 > 0))
        return pl_err_set(err, PL_EINVAL, "beam heights h1 = %g m and h2 = %g m "
                          "must lie above the ramp (> 0)", h1, h2);
    if (N < 3)
        return pl_err_set(err, PL_EINVAL, "N = %d: a prism has at least 3 edges", N);
    if (!(rate > 0) || n < (size_t)(0.5 * rate))
        return pl_err_set(err, PL_ENUMERIC, "%zu samples at %g Hz: at least "
                          "0.5 s are needed", n, rate);
    return PL_OK;
}

/* --- phase 1: the channels ----------------------------------------------- */



void pl_proc_arrays_free(run_arrays *a)
{
    free(a->v[0]);
    free(a->v[1]);
    free(a->omega);
    free(a->theta);
    free(a->omc);
    memset(a, 0, sizeof *a);
}

/* -1 when out of memory (a then holds nothing). */
int pl_proc_arrays_alloc(run_arrays *a, size_t n, int summary)
{
    memset(a, 0, sizeof *a);
    a->n = n;
    a->summary = summary;
    a->v[0] = malloc(sizeof(double) * n);
    a->v[1] = malloc(sizeof(double) * n);
    a->omega = summary ? NULL : malloc(sizeof(double) * n);
    a->theta = summary ? NULL : malloc(sizeof(double) * n);
    a->omc = malloc(sizeof(double) * n);
    if (a->v[0] && a->v[1] && (a->omega || summary) && (a->theta || summary) && a->omc)
        return 0;
    pl_proc_arrays_free(a);
    return -1;
}

/* Copies a channel in (when src is not NULL) and touches each page of the arrays in touch[] (writing zeros):
 * one channel per thread.  A ten-minute run's arrays are 48 MB each and
 * the kernel's first-touch faults on them cost about 20 ms an array;
 * taken here they are shared between the channels' threads instead of
 * falling, one array after another, on the single-threaded passes that
 * write omega, the combined omega and theta. */
typedef struct {
    const double *src;
    double *v;
    size_t n;
    double *touch[2];
    size_t touch_n[2];
} chan_job;

static void *chan_worker(void *arg)
{
    chan_job *j = arg;
    if (j->src)
        memcpy(j->v, j->src, j->n * sizeof *j->v);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; j->touch[t] && i < j->touch_n[t]; i += 512)
            j->touch[t][i] = 0;
    return NULL;
}

/* omc NULL: omega, theta and omc were faulted in already (while the
 * chunks were read: fault_in_start()). */
static pl_status prepare_channels(const double *src1, const double *src2, double *omc,
                                  pl_process_result *r, int threads, pl_err *err)
{
    size_t half = r->n / 2;
    chan_job cj[2] = {{src1, r->vp1, r->n, {NULL, NULL}, {0, 0}},
                      {src2, r->vp2, r->n, {NULL, NULL}, {0, 0}}};
    if (omc) {
        cj[0] = (chan_job){src1, r->vp1, r->n, {r->omega, r->theta}, {r->n, half}};
        cj[1] = (chan_job){src2, r->vp2, r->n, {omc, r->theta ? r->theta + half : NULL},
                           {r->n, r->n - half}};
    }
    pl_run_pair(chan_worker, &cj[0], &cj[1], threads);
    (void)err;   /* clipping is the front end's: carried, or refused there */
    return PL_OK;
}

/* --- phases 2 to 4: release, front end, omega and the end ----------------- */

/* How far past a long run's splice a segment's impact search starts
 * (find_window()): well past the filter's and the step statistic's
 * reach, well inside the segment's margin (SEG_MARGIN_S). */
#define SEG_SETTLE_S 0.25

/* The decoders' offsets, the lead-in's levels of the q samples before
 * anything moves, taken off both beams (into *o1, *o2).  A recording
 * that starts after the release has no lead-in at rest: its first
 * samples are the motion, not the decoders' offsets, and taking them as
 * offsets took 30 % off omega (foreign-runs-3's late start).  The
 * offsets are then left at 0 (the lattice's check of omega measures
 * what they leave, check_lattice()) and L_p counts from the first
 * sample. */
static pl_status take_offsets(pl_process_result *r, double h1, double h2, size_t q,
                              double *o1, double *o2, pl_err *err)
{
    size_t n = r->n;
    r->late_omega = pl_phys_moving_at_start(r->vp1, r->vp2, q, h1, h2);
    *o1 = *o2 = 0;
    if (r->late_omega == 0) {
        *o1 = lead_level(r->vp1, q);
        *o2 = lead_level(r->vp2, q);
    }
    if (isnan(*o1) || isnan(*o2))
        return pl_err_set(err, PL_ENOMEM, "processing: out of memory for the lead-in");
    for (size_t i = 0; i < n; i++) {
        r->vp1[i] -= *o1;
        r->vp2[i] -= *o2;
    }
    return PL_OK;
}

/* The motion's end (omega's drop, or where both beams lost the prism
 * first), a second release past it, and the window into r. */
static void take_end(pl_process_result *r, pl_window *w, double h1, double h2,
                     double rate)
{
    size_t n = r->n;
    double inv_dh = 1.0 / (h1 - h2);   /* a multiply a sample, not a divide */
    if (r->omega) {
        for (size_t i = 0; i < n; i++)
            r->omega[i] = (r->vp1[i] - r->vp2[i]) * inv_dh;
        pl_window_end(r->omega, n, rate, w);
    } else {
        pl_window_end_beams(r->vp1, r->vp2, inv_dh, n, rate, w);
    }
    if (!isnan(r->front.lost_t_s)) {
        /* Where both beams lost the prism before omega's own drop says
         * so (garbage after the prism left, which the drop's search reads
         * as motion), the window ends there; where they fell to 0 V at
         * once, with the same guard as at a drop of omega (the low-pass's
         * support).  Within 5 ms of the drop it is the same event, which
         * the drop places to the sample.  (A guard at the garbage's first
         * stretch too cut into the last impact's arc: faulted corpus seed
         * 4 lost its impact 7.6 ms before the prism left.) */
        size_t lost = (size_t)(r->front.lost_t_s * rate);
        size_t guard = r->front.lost_at_drop ? (size_t)ceil(0.002 * rate) : 0;
        if (lost + (size_t)(0.005 * rate) < w->end && lost > w->release + guard) {
            pl_proc_warn(r, "both beams lost the prism at %.3f s: the window ends there",
                 r->front.lost_t_s);
            w->end = lost - guard;
            w->seen = lost;
        }
    }
    /* past the first motion, a second one (the logger ran on through
     * another release): named, not measured */
    r->second_release_t = pl_phys_second_release(r->vp1, r->vp2, w->seen, n, rate, h1, h2);
    r->release = w->release;
    r->quiet = w->quiet;
    r->end = w->end;
    r->seen = w->seen > w->end ? w->seen : w->end;
    r->release_t = (double)w->release / rate;
    r->end_t = (double)w->end / rate;
    r->noise_omega = w->noise_omega;
}

/* The release from the lead-in's offsets, then the front end over the
 * lead-in that the release leaves (less 20 ms of margin), omega (4.1)
 * from the cleaned beams into r->omega, the combined omega into omc, and
 * the end of valid data.  Where r->omega is NULL (a summary) the end is
 * found from the beams and omega is left to velocities_out(). */
static pl_status find_window(pl_process_result *r, double h1, double h2, int N,
                             const pl_process_config *cfg, seg_io *io, double *omc,
                             pl_err *err)
{
    int spliced = io && io->fs.at > 0;
    size_t n = r->n, q = (size_t)(cfg->quiet_s * r->rate_hz);
    double rate = r->rate_hz;
    if (q < 16)
        q = 16;
    if (q > n)
        q = n;
    double o1, o2;
    pl_status st = take_offsets(r, h1, h2, q, &o1, &o2, err);
    if (st != PL_OK)
        return st;
    double hb[2] = {h1, h2}, *vb[2] = {r->vp1, r->vp2};
    if (pl_beams_check(vb, hb, n, rate, q, &r->beams) != 0)
        return pl_err_set(err, PL_ENOMEM, "beam check: out of memory");
    char why[768];
    if (pl_beams_verdict(&r->beams, hb, why, sizeof why))
        return pl_err_set(err, PL_ENUMERIC, "%s", why);
    pl_window w;
    st = pl_window_release(r->vp1, r->vp2, h1 - h2, n, rate, q,
                                     cfg->release_sigmas, &w, err);
    if (st == PL_ENUMERIC) {   /* what the beams themselves say of it */
        pl_beams_senses(&r->beams, why, sizeof why);
        if (why[0])
            return pl_err_prefix(err, "%s; ", why);
    }
    if (st != PL_OK)
        return st;
    double beta = cfg->lattice.beta_rad;
    double max_turn = M_PI / N + (beta > 0 && beta < M_PI / N ? beta : M_PI / N);
    if (r->late_omega > 0) {
        w.release = w.quiet = 0;
        w.line_fits = 1;
    }
    if (spliced) {
        w.release = io->release;
        w.quiet = io->quiet;
        w.line_fits = 1;
    }
    size_t margin = (size_t)(0.02 * rate), lead = w.release > margin ? w.release - margin : 0;
    if (!w.line_fits) {
        /* Where the threshold stands high (hum, 1/f noise) the line
         * runs on over the first impacts: it meets zero before the
         * recording began, and the front end fitted no offsets and no
         * hum at all (faulted corpus seed 89: 19 mV of hum, a 0.69 s
         * lead-in read as none, 19 of 51 impacts lost), or it falls and
         * the crossing, 35 ms into the motion, ended a lead-in whose
         * hum fit the rise then pulled 0.15 Hz off.  The rise's shape
         * on the raw beams places the release instead. */
        if (pl_window_shape_beams(r->vp1, r->vp2, h1 - h2, n, rate, max_turn, &w) < 0)
            return pl_err_set(err, PL_ENOMEM, "release: out of memory");
        w.quiet = w.release;
        lead = w.release > margin ? w.release - margin : 0;
    }
    if (r->late_omega > 0)
        pl_proc_warn(r, "the recording starts after the release: the prism turns at %.3g rad/s "
             "at the first sample; L_p counts from there, and the decoders' offsets "
             "are taken as 0", r->late_omega);
    else if (lead < q)
        pl_proc_warn(r, "lead-in before the release is only %.3f s: offsets and hum from "
             "too little quiet signal", (double)lead / rate);
    if (spliced)
        lead = io->lead;
    else if (io)
        io->lead = lead;
    double *v[2] = {r->vp1, r->vp2}, h[2] = {h1, h2};
    st = pl_frontend_run_spliced(v, n, rate, h, lead, w.release, io ? &io->fs : NULL, omc,
                                 cfg->threads, &r->front, err);
    if (st != PL_OK)
        return st;
    /* The release instant from the shape of the cleaned rise; the lead-in
     * the front end measured stays where it ended (w.quiet: the line's
     * release, or the raw rise's where the line did not fit) */
    if (r->late_omega == 0 && !spliced && pl_window_shape(omc, n, rate, max_turn, &w) < 0)
        return pl_err_set(err, PL_ENOMEM, "release: out of memory");
    /* the splice is a step of omega from rest to the run's speed, which
     * the impact search would take for the strongest impact and seed its
     * lattice there (out of phase over whole stretches of a segment):
     * it searches from past the step's filtered edge, in the margin */
    if (spliced)
        w.release += (size_t)(SEG_SETTLE_S * rate);
    r->front.offset_mps[0] += o1;
    r->front.offset_mps[1] += o2;
    take_end(r, &w, h1, h2, rate);
    return PL_OK;
}

/* --- phase 5: spectra and the filter -------------------------------------- */

/* Velocity spectra k0 <= k < k1 of the two (welch[1 + k] on vp1 or vp2
 * over the motion), on a thread of their own or this one. */
typedef struct {
    pl_welch *w[2];
    const double *x[2];
    size_t n;
    double rate;
    size_t max_segments;
    double *psd[2];
    int k0, k1;
    pl_status st;
    pl_err err;
} psd_job;

static void *psd_worker(void *arg)
{
    psd_job *j = arg;
    for (int k = j->k0; k < j->k1 && j->st == PL_OK; k++)
        j->st = pl_welch_run(j->w[k], j->x[k], j->n, j->rate, j->max_segments,
                             j->psd[k], NULL, &j->err);
    return NULL;
}

/* What phase 5 leaves running: the spectra's thread and its plans.
 * job[0] runs on the thread (both velocities beside the filter, or vp1
 * beside vp2 in job[1]: velocities_out()). */
typedef struct {
    pl_welch *welch[3];
    pl_lowpass *lp;
    pthread_t thread;
    int running;
    int velocities_done;   /* the psd jobs ran already (velocities_out()) */
    psd_job job[2];
} spectra;

static void spectra_join(spectra *s)
{
    if (s->running)
        pthread_join(s->thread, NULL);
    s->running = 0;
}

static pl_status spectra_finish(spectra *s, pl_err *err)
{
    spectra_join(s);
    for (int k = 0; k < 3; k++)
        pl_welch_destroy(s->welch[k]);
    pl_lowpass_destroy(s->lp);
    memset(s->welch, 0, sizeof s->welch);
    s->lp = NULL;
    for (int j = 0; j < 2; j++)
        if (s->job[j].st != PL_OK)
            return pl_err_set(err, s->job[j].st, "%s", s->job[j].err.msg);
    return PL_OK;
}

/* The spectra's segment, their arrays and plans (once). */
static pl_status spectra_plan(pl_process_result *r, const pl_process_config *cfg,
                              spectra *s, pl_err *err)
{
    size_t release = r->release, end = r->end, seg = cfg->psd_segment;
    double rate = r->rate_hz;
    if (s->welch[0])
        return PL_OK;
    while (seg > 256 && seg > end - release)
        seg /= 2;
    if (end - release < seg)
        return pl_err_set(err, PL_ENUMERIC, "the motion lasts %.3f s: too short to "
                          "process (at least %.3f s)", (end - release) / rate, seg / rate);
    r->psd_len = seg / 2 + 1;
    r->psd_df = rate / seg;
    r->psd_vp1 = malloc(r->psd_len * sizeof(double));
    r->psd_vp2 = malloc(r->psd_len * sizeof(double));
    r->psd_residual = malloc(r->psd_len * sizeof(double));
    if (!r->psd_vp1 || !r->psd_vp2 || !r->psd_residual)
        return pl_err_set(err, PL_ENOMEM, "processing: out of memory");
    for (int k = 0; k < 3; k++)
        if (pl_welch_create(&s->welch[k], seg, err) != PL_OK)
            return err->code;
    return PL_OK;
}

/* The velocities' spectra: job[0] (velocities k0 <= k < k1) on the
 * thread unless threads is 1, the rest of them in job[1] here. */
static void velocity_spectra(pl_process_result *r, const pl_process_config *cfg, spectra *s,
                             int k1)
{
    psd_job base = {{s->welch[1], s->welch[2]}, {r->vp1 + r->release, r->vp2 + r->release},
                    r->end - r->release, r->rate_hz, cfg->psd_max_segments,
                    {r->psd_vp1, r->psd_vp2}, 0, k1, PL_OK, {0}};
    s->job[0] = base;
    s->job[1] = base;
    s->job[1].k0 = k1;
    s->job[1].k1 = 2;
    if (cfg->threads != 1 && pthread_create(&s->thread, NULL, psd_worker, &s->job[0]) == 0)
        s->running = 1;
    else
        psd_worker(&s->job[0]);
    psd_worker(&s->job[1]);
}

/* The spectrum of the unfiltered omega gives the ringing, hence the
 * cut-off, and (times |1 - H|^2) the residual's spectrum; the velocities'
 * spectra go to a second thread while this one filters omega in place. */
static pl_status spectra_and_filter(pl_process_result *r, const pl_process_config *cfg,
                                    spectra *s, pl_err *err)
{
    size_t release = r->release, end = r->end;
    double rate = r->rate_hz;
    pl_status st = spectra_plan(r, cfg, s, err);
    if (st != PL_OK)
        return st;
    st = pl_welch_run(s->welch[0], r->omega + release, end - release, rate,
                                cfg->psd_max_segments, r->psd_residual, NULL, err);
    if (st != PL_OK)
        return st;
    double fc = cfg->cutoff_hz;
    if (isnan(fc)) {
        double f_ring = pl_ring_peak(r->psd_residual, r->psd_len, r->psd_df);
        fc = isnan(f_ring) ? 1000.0 : 0.4 * f_ring;
        fc = fmax(100.0, fmin(fc, 0.4 * rate));
    }
    r->cutoff_hz = fc;
    if (fc > 0) {
        if ((st = pl_lowpass_create(&s->lp, fc, rate, err)) != PL_OK)
            return st;
        /* What the filter removes has the spectrum of omega times
         * |1 - H|^2: H is smooth over many bins, so this is the Welch
         * estimate of the residual up to the window's leakage, without a
         * pass over the run to form it. */
        for (size_t k = 0; k < r->psd_len; k++) {
            double rest = 1 - pl_lowpass_gain(s->lp, k * r->psd_df);
            r->psd_residual[k] *= rest * rest;
        }
    } else {
        memset(r->psd_residual, 0, r->psd_len * sizeof(double));
    }
    r->ring_freq_hz = pl_ring_peak(r->psd_residual, r->psd_len, r->psd_df);
    if (!s->velocities_done)
        velocity_spectra(r, cfg, s, 2);
    if (s->lp && (st = pl_lowpass_apply(s->lp, r->omega, r->omega, r->n, err)) != PL_OK)
        return st;
    return PL_OK;
}

/* Every 10th sample of full times k into out[0..nd). */
void pl_proc_decimate(const double *full, size_t nd, double k, double *out)
{
    for (size_t i = 0; i < nd; i++)
        out[i] = full[10 * i] * k;
}

/* For a summary, whose omega has no array of its own: the velocities'
 * spectra (vp1 on a thread beside vp2) and their 1 kHz series (into
 * dec[0..nd) and dec[nd..2 nd)) are taken first; then omega (4.1) is
 * formed over vp1, and vp2 is freed.  A ten-minute run's omega was 48 MB
 * of fresh pages for the kernel to map (about 12,000 faults) and to
 * unmap at the end; the spectra no longer run beside the filter, but
 * beside each other. */
static pl_status velocities_out(pl_process_result *r, const pl_process_config *cfg,
                                double h1, double h2, spectra *s, double *dec, size_t nd,
                                pl_err *err)
{
    pl_status st = spectra_plan(r, cfg, s, err);
    if (st != PL_OK)
        return st;
    velocity_spectra(r, cfg, s, 1);
    pl_proc_decimate(r->vp2, nd, 1.0, dec + nd);
    spectra_join(s);
    pl_proc_decimate(r->vp1, nd, 1.0, dec);
    s->velocities_done = 1;
    double inv_dh = 1.0 / (h1 - h2);   /* as find_window() */
    double *om = r->vp1;
    for (size_t i = 0; i < r->n; i++)
        om[i] = (om[i] - r->vp2[i]) * inv_dh;
    r->omega = om;
    r->vp1 = NULL;
    free(r->vp2);
    r->vp2 = NULL;
    return PL_OK;
}

/* --- phases 6 and 7: impacts, theta and L_p ------------------------------- */

/* theta by the trapezoid rule from the release (0 before it, held after
 * the end) of om into th. */
static void integrate(const double *om, size_t n, size_t release, size_t end,
                      double rate, double *th)
{
    double acc = 0, half_dt = 0.5 / rate;
    for (size_t i = 0; i < n; i++) {
        if (i > release && i < end)
            acc += half_dt * (om[i - 1] + om[i]);
        th[i] = acc;
    }
}

/* theta anchored to the lattice (4.2): between two impacts the prism
 * turns through exactly 2 pi / N (times the slots between them), so each
 * interval of the integral th is scaled to that; before the first impact
 * and after the last, the integral is scaled by the run's mean ratio of
 * lattice to integral.  Drift and calibration errors of the integral
 * then cannot add up over a long run.  th is rewritten in place.
 *
 * Only every stride-th sample of [release, end) is anchored (and the two
 * that the turn through the end's guard is taken from) when the caller
 * reads no others (a summary keeps theta at 1 kHz alone): each anchored
 * value depends only on its own raw sample and on raw samples at the
 * impacts ahead of it, which stay raw as long as no two impacts come
 * within a stride of each other (otherwise every sample is done, as
 * before).  On the ten-minute run this took 14 ms of 0.5 s. */
static size_t anchor_next(size_t i, size_t stride, size_t e1, size_t e2)
{
    size_t next = stride > 1 ? (i / stride + 1) * stride : i + 1;
    if (e2 > i && e2 < next)
        next = e2;
    if (e1 > i && e1 < next)
        next = e1;
    return next;
}

static void anchor_theta(double *th, size_t n, double rate, size_t release, size_t end,
                         size_t seen, int N, const pl_impact *imp, size_t m, size_t stride)
{
    double delta = 2 * M_PI / N;
    if (m < 2)
        return;
    for (size_t k = 1; k < m && stride > 1; k++)
        if (!((imp[k].t_s - imp[k - 1].t_s) * rate > 2.0 * (double)stride + 2))
            stride = 1;
    size_t s = (size_t)(0.005 * rate);
    size_t e1 = end > 0 ? end - 1 : 0, e2 = end > s + 1 ? end - 1 - s : 0;
    double first = pl_lattice_at(th, n, imp[0].t_s * rate), last = pl_lattice_at(th, n, imp[m - 1].t_s * rate);
    double slots = round((last - first) / delta);
    double scale = slots > 0 && last > first ? slots * delta / (last - first) : 1.0;
    size_t k = 0;
    double base = first * scale, a = first, b = pl_lattice_at(th, n, imp[1].t_s * rate);
    double step = fmax(1, round((b - a) * scale / delta)) * delta;
    for (size_t i = release; i < end && i < n; i = anchor_next(i, stride, e1, e2)) {
        double t = (double)i / rate, raw = th[i];
        while (k + 1 < m && t >= imp[k + 1].t_s) {
            base += step;
            k++;
            a = b;
            if (k + 1 < m) {
                b = pl_lattice_at(th, n, imp[k + 1].t_s * rate);
                step = fmax(1, round((b - a) * scale / delta)) * delta;
            }
        }
        if (t < imp[0].t_s)
            th[i] = raw * scale;
        else if (k + 1 < m)
            th[i] = base + step * (raw - a) / (b - a);
        else
            th[i] = base + (raw - a) * scale;
    }
    /* through the guard before a drop the prism still turns, at the speed
     * it had: on to where the beams lost it, then held */
    double w = end > release + s + 1 ? (th[end - 1] - th[end - 1 - s]) / (double)s : 0;
    for (size_t i = end > release ? end : release; i < n; i++)
        th[i] = i < seen ? th[i - 1] + w : th[i - 1];
}

/* The impacts land every 2 pi / N of theta: drops of omega spaced this
 * far from one slot mean that the notebook's N, scale, heights or rate
 * are not the run's (the lattice then placed its slots where no face
 * landed: nothing measured stands). */
#define SPACING_TOLERANCE 0.05

/* theta_stride: the samples of theta the caller reads (anchor_theta()). */
static pl_status find_impacts(pl_process_result *r, int N, const pl_process_config *cfg,
                              double *omc, size_t theta_stride, const seg_io *io, pl_err *err)
{
    integrate(omc, r->n, r->release, r->end, r->rate_hz, r->theta);
    r->lp_end_raw = N * r->theta[r->end - 1] / (2 * M_PI);
    /* a long run's segment: the drops of its core alone, each seam's
     * margins being another core (and the splice no drop) */
    size_t from = r->release, to = r->end;
    if (io && io->fs.core_from > from)
        from = io->fs.core_from;
    if (io && io->fs.core_to < to)
        to = io->fs.core_to;
    if (pl_phys_step_spacing(omc, r->theta, from, to > from ? to : from, r->rate_hz, N,
                             &r->steps) != 0)
        return pl_err_set(err, PL_ENOMEM, "lattice check: out of memory");
    pl_lattice_stats ls;
    pl_lattice_config lc = cfg->lattice;
    lc.threads = cfg->threads;
    lc.end_seen = r->end + 1 < r->n;
    pl_status st = pl_lattice_find(omc, r->theta, r->n, r->rate_hz, r->release, r->quiet, r->end, N,
                                   &lc, &r->impacts, &r->n_impacts, &ls, err);
    if (st != PL_OK)
        return st;
    r->n_expected = ls.expected;
    r->n_confirmed = ls.confirmed;
    r->noise_d = ls.noise_d;
    r->phase_sd_rad = ls.phase_sd_rad;
    r->drift_rad = ls.drift_rad;
    r->ring_model_hz = ls.ring_hz;
    r->ring_decay_s = ls.ring_decay_s;
    r->top_shift_s = ls.top_shift_s;
    r->beta_data_rad = ls.beta_data_rad;
    r->beta_data_se_rad = ls.beta_data_se_rad;
    r->energy_ratio = ls.energy_ratio;
    r->beta_used_rad = ls.beta_used_rad;
    r->energy_ratio_se = ls.energy_ratio_se;
    r->beta_from_data = ls.beta_from_data;
    /* the impacts' own clock against the plain integral, before theta is
     * anchored to them (check_lattice()) */
    if (pl_phys_lattice_clock(r->impacts, r->n_impacts, r->theta, r->n, r->rate_hz, N,
                              &r->clock) != 0)
        return pl_err_set(err, PL_ENOMEM, "lattice check: out of memory");
    anchor_theta(r->theta, r->n, r->rate_hz, r->release, r->end, r->seen, N, r->impacts,
                 r->n_impacts, theta_stride);
    r->lp_end = N * r->theta[r->end - 1] / (2 * M_PI);
    /* the impacts to the contact once theta is anchored on the decoder's
     * clock (issue 33: a known or measured decoder delay); each t_sd_s
     * takes the shift's uncertainty, common to the run */
    r->decoder_shift_s = ls.decoder_shift_s;
    r->decoder_shift_sd_s = ls.decoder_shift_sd_s;
    for (size_t i = 0; i < r->n_impacts; i++) {
        r->impacts[i].t_s += ls.decoder_shift_s;
        r->impacts[i].t_sd_s = hypot(r->impacts[i].t_sd_s, ls.decoder_shift_sd_s);
    }
    return PL_OK;
}

/* --- phase 7b: checked against the physics ----------------------------------- */

/* Before the impact search, whose cost grows with the slots the integral
 * turns through (a scale 100 times too large took it to 24 GB): the
 * speeds against what the prism can reach on its ramp. */
static pl_status check_speed(const pl_process_result *r, double h1, double h2, int N,
                             const pl_process_config *cfg, pl_err *err)
{
    pl_phys_body b = {N, cfg->a0_m, cfg->lattice.beta_rad, cfg->ramp_length_m};
    double h[2] = {h1, h2};
    return pl_phys_check_speed(r->omega, r->vp1, r->vp2, r->release, r->end, h, &b, err);
}


/* omega (4.1) against the lattice over a second of slots: beyond this
 * part, and LATTICE_Q_SIGMAS of its standard error, the speeds are taken
 * from the lattice (the integral's calibration or offsets moved). */
#define LATTICE_Q_TOLERANCE 0.02
#define LATTICE_Q_SIGMAS 4.0

/* omega (4.1)'s mean over the last second against the lattice's: on the
 * eleven clean and faulted foreign runs of issues 23 and 28 they differ
 * by at most 0.52 % (1/f noise on foreign-pink-n22), on the drifting
 * decoders of foreign-runs-3 by 1.4 %.  Beyond this part the lattice's
 * stands (it needs no calibration: N alone). */
#define LATTICE_OMEGA_TOLERANCE 0.0075
/* Beyond this part no offset's drift explains it: omega (4.1) does not
 * measure the prism there (a beam blind or saturated). */
#define LATTICE_OMEGA_SUSPECT 0.05

/* A prism on a ramp turns downhill: L_p ends above half a slot with an
 * impact confirmed, and the drops' spacing matches the notebook's N.
 * PL_ENUMERIC with the figures and the fix the data support.  Then the
 * impacts' clock against omega (4.1): a drift of its mean over the last
 * second is measured through (omega_last_mean becomes the lattice's), a
 * disagreement no drift explains makes the run suspect. */
static pl_status check_lattice(pl_process_result *r, int N, size_t stride, pl_err *err)
{
    const pl_phys_lattice *c = &r->clock;
    r->omega_last_41 = r->omega_last_mean;
    /* the lattice's own mean speed over omega_last_mean's second: theta
     * anchored to the impacts, read where anchor_theta() wrote it (the
     * end's last sample, and a multiple of stride) */
    size_t rate = (size_t)r->rate_hz, i1 = r->end - 1;
    size_t i0 = rate < r->end - r->release ? r->end - rate : r->release;
    if (i0 > r->release)
        i0 = (i0 + stride - 1) / stride * stride;
    r->omega_last_lattice = i1 > i0 + 8 ? (r->theta[i1] - r->theta[i0]) * r->rate_hz /
                                              (double)(i1 - i0)
                                        : NAN;
    if (!(r->lp_end > 0.5) || r->n_confirmed == 0)
        return pl_err_set(err, PL_ENUMERIC,
                          "the prism turned %.3g slots (L_p at the end, %zu impacts "
                          "confirmed): a prism rolling down a ramp turns forwards, so "
                          "omega (4.1) has the wrong sign or no motion of the prism: a "
                          "beam's sign, the heights' order, or a beam that never saw the "
                          "prism (check each beam's trace on the run page)",
                          r->lp_end, r->n_confirmed);
    /* the drops' own spacing: the confirmed impacts' says little where
     * the lattice leaves slots unconfirmed (faulted corpus seed 990,
     * N = 40 with a lost beam and ringing: every other slot confirmed,
     * 2.003, while its 147 drops give 0.999 and the run is right) */
    double spacing = r->steps.spacing;
    if (r->steps.drops >= 8 && isfinite(spacing) && fabs(spacing - 1) > SPACING_TOLERANCE) {
        /* The spacing alone cannot tell a wrong N from a wrong scale
         * (both stretch theta between landings): a spacing that no whole
         * N gives rules the prism out, one that does leaves both */
        double na = N / spacing, whole = round(na);
        char fix[320];
        if (whole >= 3 && fabs(na - whole) < 0.02 * whole)
            snprintf(fix, sizeof fix, "is the prism %.0f-edged, not %d (run set --prism)? "
                     "If not, the LDV scale, the heights' difference or the sample rate is "
                     "off by %.3gx", whole, N, spacing);
        else
            snprintf(fix, sizeof fix, "the LDV scale, the heights' difference or the sample "
                     "rate is off by %.3gx (no whole N gives this spacing: not a wrong prism)",
                     spacing);
        return pl_err_set(err, PL_ENUMERIC,
                          "the impacts are 2 pi/%.1f apart in theta, not 2 pi/%d (the "
                          "median spacing of %zu drops of omega: %.3f slots): %s",
                          na, N, r->steps.drops, spacing, fix);
    }
    /* a stretch where the integral turns other than one slot an impact:
     * the impacts or omega are wrong there (a beam's saturation, a beam
     * used where it saw nothing), and nothing measured through it */
    for (int e = 0; e < 2; e++) {
        double q = e ? c->q_last : c->q_first;
        if (fabs(q - 1) > LATTICE_Q_TOLERANCE && fabs(q - 1) > LATTICE_Q_SIGMAS * c->q_sd)
            r->lattice_suspect = 1;
    }
    double part = r->omega_last_41 / r->omega_last_lattice - 1;
    if (isfinite(part) && fabs(part) > LATTICE_OMEGA_SUSPECT)
        r->lattice_suspect = 1;
    if (!r->lattice_suspect && isfinite(part) && fabs(part) > LATTICE_OMEGA_TOLERANCE) {
        r->omega_from_lattice = 1;
        r->omega_last_mean = r->omega_last_lattice;
    }
    return PL_OK;
}

/* --- phase 8: the summary and what to warn of ------------------------------ */

/* Each impact's ratio error comes from its arcs' residuals, which see
 * white noise and not 1/f noise: the tops move with the slow noise while
 * the residuals about them stay small, and on the foreign runs with 1/f
 * noise the ratios scattered 5-8 times their stated errors (7-8 on
 * foreign-pink-n22 and foreign-hum-offset-n22).  The ratios' own scatter
 * shows it: each confirmed impact's ratio against the median of its
 * RATIO_NEIGHBOURS confirmed neighbours either side (a law's ratio moves
 * slowly with the speed; the errors of neighbouring impacts are not
 * alike: on the pink run their correlation is -0.2 to +0.16), over its
 * stated error.  The robust spread of those, less the median's own share
 * (a median of 10 has about 0.16 of a sample's variance), scales every
 * ratio_se when above 1; never below, so that white noise's honest errors
 * stay as they are.  The weighted mean and its error are unchanged (the
 * weights keep their proportions). */
#define RATIO_NEIGHBOURS 5

/* Stated errors below this part of the ratio are an exact fit's rounding,
 * not a measurement (no LDV resolves a speed to a part in ten million):
 * noise-free arcs, which (2.1)'s form fits to 1e-9, would otherwise set
 * the scale to 5e4 from their own discretisation and carry it to the
 * ends' honest errors from their arcs (1.5e-3 became 73). */
#define RATIO_SE_ROUNDING 1e-7

int pl_proc_scale_ratio_errors(pl_process_result *r)
{
    size_t n = r->n_impacts, m = 0;
    r->ratio_se_scale = 1;
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    double *z = malloc((n ? n : 1) * sizeof *z), nb[2 * RATIO_NEIGHBOURS];
    if (!idx || !z) {
        free(idx);
        free(z);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (r->impacts[i].confirmed &&
            r->impacts[i].ratio_se > RATIO_SE_ROUNDING * fabs(r->impacts[i].ratio))
            idx[m++] = i;
    size_t nz = 0;
    for (size_t j = 0; m >= 2 * RATIO_NEIGHBOURS + 1 && j < m; j++) {
        size_t lo = j > RATIO_NEIGHBOURS ? j - RATIO_NEIGHBOURS : 0, k = 0;
        size_t hi = lo + 2 * RATIO_NEIGHBOURS + 1 <= m ? lo + 2 * RATIO_NEIGHBOURS + 1 : m;
        lo = hi - (2 * RATIO_NEIGHBOURS + 1);
        for (size_t q = lo; q < hi; q++)
            if (q != j)
                nb[k++] = r->impacts[idx[q]].ratio;
        const pl_impact *p = &r->impacts[idx[j]];
        z[nz++] = (p->ratio - pl_median(nb, k)) / p->ratio_se;
    }
    double s = nz >= 8 ? pl_robust_sd(z, nz) / sqrt(1 + 1.571 / (2 * RATIO_NEIGHBOURS)) : NAN;
    if (s > 1) {
        r->ratio_se_scale = s;
        for (size_t i = 0; i < n; i++)
            r->impacts[i].ratio_se *= s;
    }
    free(idx);
    free(z);
    return 0;
}

void pl_proc_summarise(pl_process_result *r)
{
    double sw = 0, swr = 0, sum = 0, sum2 = 0;
    size_t m = 0;
    for (size_t i = 0; i < r->n_impacts; i++) {
        const pl_impact *p = &r->impacts[i];
        sum += p->ratio;
        sum2 += p->ratio * p->ratio;
        if (!p->confirmed || !(p->ratio_se > 0))
            continue;
        double w = 1.0 / (p->ratio_se * p->ratio_se);
        sw += w;
        swr += w * p->ratio;
        m++;
    }
    size_t n = r->n_impacts;
    r->ratio_mean = sw > 0 ? swr / sw : n ? sum / n : NAN;
    r->ratio_sd = n > 1 ? sqrt(fmax(0, (sum2 - sum * sum / n) / (n - 1))) : NAN;
    /* the standard error from the scatter about the weighted mean (the
     * impacts' own errors may be optimistic) */
    double s2 = 0;
    for (size_t i = 0; i < n; i++) {
        const pl_impact *p = &r->impacts[i];
        if (p->confirmed && p->ratio_se > 0) {
            double w = 1.0 / (p->ratio_se * p->ratio_se), d = p->ratio - r->ratio_mean;
            s2 += w * w * d * d;
        }
    }
    r->ratio_mean_se = m > 1 && sw > 0 ? sqrt(s2 * m / (m - 1)) / sw : NAN;
    /* with the run's own beta the ratios average to the energy line's
     * slope (process/lattice.h), whose error then bounds the mean's */
    if (r->beta_from_data && r->energy_ratio_se > r->ratio_mean_se)
        r->ratio_mean_se = r->energy_ratio_se;
}

/* The count check: the lattice expects one impact per unit of L_p; when
 * many of its slots show no step above the noise, the likely cause is
 * named. */
void pl_proc_check_count(pl_process_result *r, int N)
{
    double delta = 2 * M_PI / N;
    const pl_frontend_report *f = &r->front;
    size_t unconf = r->n_expected - r->n_confirmed;
    double drop_s = f->dropout_s[0] + f->dropout_s[1];
    if (unconf * 20 > r->n_expected) {
        const char *cause =
            drop_s > 0.05 * (r->end_t - r->release_t)
                ? "the beams' drop-outs cover much of the run"
                : "the steps are near the noise (lower the LDV's velocity range or "
                  "its noise: see docs/process.md)";
        pl_proc_warn(r, "%zu of the %zu impacts the lattice of L_p expects show no step above "
             "%.3g rad/s (the noise of the step statistic): %s; they are placed by the "
             "lattice", unconf, r->n_expected, r->noise_d, cause);
    }
    if (r->drift_rad > 0.25 * delta)
        pl_proc_warn(r, "the integral of omega drifted %.2f of a slot (%.3f rad) from the "
             "lattice over the run: offsets, 1/f noise or a calibration off (L_p is "
             "anchored to the lattice and does not drift)", r->drift_rad / delta,
             r->drift_rad);
    for (int c = 0; c < 2; c++)
        if (f->dropouts[c])
            pl_proc_warn(r, "beam %d: %zu drop-out%s (%.1f ms in all) bridged from the other "
                 "beam", c + 1, f->dropouts[c], f->dropouts[c] == 1 ? "" : "s",
                 1e3 * f->dropout_s[c]);
    if (f->both_out)
        pl_proc_warn(r, "%zu drop-out%s of both beams at once bridged by straight lines",
             f->both_out, f->both_out == 1 ? "" : "s");
    if (f->hum_hz > 0)
        pl_proc_warn(r, "mains hum at %.2f Hz removed (%.3g and %.3g mm/s)", f->hum_hz,
             1e3 * f->hum_amp_mps[0], 1e3 * f->hum_amp_mps[1]);
}

/* --- the whole ------------------------------------------------------------ */

/* Appends one fault line to r->faults (db/derived.h's format). */
void pl_proc_fault(pl_process_result *r, const char *fmt, ...)
{
    size_t len = strlen(r->faults);
    if (len + 2 >= sizeof r->faults)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->faults + len, sizeof r->faults - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(r->faults);
    r->faults[len] = '\n';
    r->faults[len + 1] = '\0';
}

/* A recording that runs on past the motion by more than this is said to
 * have had its tail cut (docs/process.md, "Faults"). */
#define TAIL_REPORT_S 0.1
/* Bridged drop-outs are routine on an LDV (speckle); past this share of
 * the motion a channel was measured through its neighbour too often to
 * call the run good. */
#define DROPOUT_DEGRADED 0.01

/* The faults the front end and the beams found (a beam dead, lost,
 * clipped or saturated; motion common to both; hum; drop-outs) into r;
 * returns 1 when any degrades the run. */
static int frontend_faults(pl_process_result *r)
{
    const pl_frontend_report *f = &r->front;
    double motion_s = (double)(r->seen - r->release) / r->rate_hz;
    int degraded = 0;
    if (r->beams.dead) {
        int d = r->beams.dead;
        pl_proc_fault(r, "beam_dead channel=%d agree=%.3f blocks=%zu", d, r->beams.agree,
              r->beams.moving);
        pl_proc_warn(r, "beam %d never saw the prism (it follows beam %d in %.1f %% of %zu blocks "
             "of the motion): omega from beam %d alone over the whole run; check its "
             "alignment and decoder", d, 3 - d, 100 * r->beams.agree, r->beams.moving, 3 - d);
        degraded = 1;
    }
    for (size_t k = 0; k < f->n_lost && k < PL_FRONTEND_MAX_SPANS; k++) {
        const pl_beam_span *b = &f->lost[k];
        pl_proc_fault(r, "beam_lost channel=%d from_s=%.4f to_s=%.4f", b->channel, b->from_s, b->to_s);
        pl_proc_warn(r, "beam %d lost the prism from %.3f s to %.3f s: omega from beam %d alone "
             "there", b->channel, b->from_s, b->to_s, 3 - b->channel);
        degraded = 1;
    }
    if (f->n_lost > PL_FRONTEND_MAX_SPANS)
        pl_proc_warn(r, "%zu more stretches with one beam lost (%.3f s in all)",
             f->n_lost - PL_FRONTEND_MAX_SPANS, f->lost_total_s);
    for (int c = 0; c < 2; c++)
        if (f->clipped[c] > 0 && isfinite(f->sat_level_mps[c])) {
            pl_proc_fault(r, "saturated channel=%d level_mps=%.4g samples=%zu spans=%zu from_s=%.4f "
                  "to_s=%.4f", c + 1, f->sat_level_mps[c], f->clipped[c], f->clip_spans[c],
                  f->clip_from_s[c], f->clip_to_s[c]);
            pl_proc_warn(r, "beam %d flat at %.4g m/s from %.3f s to %.3f s while beam %d turned "
                 "on (its decoder's velocity limit?), carried by beam %d", c + 1,
                 f->sat_level_mps[c], f->clip_from_s[c], f->clip_to_s[c], 2 - c, 2 - c);
            degraded = 1;
        } else if (f->clipped[c] > 0) {
            pl_proc_fault(r, "clipped channel=%d samples=%zu spans=%zu from_s=%.4f to_s=%.4f", c + 1,
                  f->clipped[c], f->clip_spans[c], f->clip_from_s[c], f->clip_to_s[c]);
            pl_proc_warn(r, "beam %d clipped: %zu samples at its rails in %zu stretches from "
                 "%.3f s to %.3f s, carried by beam %d", c + 1, f->clipped[c],
                 f->clip_spans[c], f->clip_from_s[c], f->clip_to_s[c], 2 - c);
            degraded = 1;
        }
    if (f->n_common > 0) {
        char freqs[128] = "", amps[128] = "";
        for (size_t k = 0; k < f->n_common; k++) {
            size_t lf = strlen(freqs), la = strlen(amps);
            snprintf(freqs + lf, sizeof freqs - lf, "%s%.2f", k ? "," : "", f->common_hz[k]);
            snprintf(amps + la, sizeof amps - la, "%s%.3g", k ? "," : "", f->common_amp_mps[k]);
        }
        pl_proc_fault(r, "common_motion level_mps=%.3g freqs_hz=%s amps_mps=%s", f->common_rms_mps,
              freqs, amps);
        pl_proc_warn(r, "motion common to both beams removed (a shaking floor?): %s Hz, %.3g mm/s RMS",
             freqs, 1e3 * f->common_rms_mps);
        degraded = 1;
    }
    if (f->hum_hz > 0) {
        /* a drift the data could not resolve is left out, not written 0 */
        char drift[64] = "";
        if (isfinite(f->hum_drift_hz))   /* (+ 0.0: -0.0004 is written 0.000, not -0.000) */
            snprintf(drift, sizeof drift, " drift_hz=%.3f drift_se_hz=%.2g",
                     round(1e3 * f->hum_drift_hz) / 1e3 + 0.0, f->hum_drift_se_hz);
        pl_proc_fault(r, "hum freq_hz=%.3f%s amp1_mps=%.3g amp2_mps=%.3g", f->hum_hz, drift,
              f->hum_amp_mps[0], f->hum_amp_mps[1]);
    }
    for (int c = 0; c < 2; c++)
        if (f->dropouts[c] > 0) {
            pl_proc_fault(r, "dropouts channel=%d count=%zu total_s=%.4f", c + 1, f->dropouts[c],
                  f->dropout_s[c]);
            degraded |= motion_s > 0 && f->dropout_s[c] > DROPOUT_DEGRADED * motion_s;
        }
    return degraded;
}

/* The faults of the motion measured (the recording cut short, a late
 * start, omega drifting off the impacts' clock, a second release, a jump
 * of the lattice's phase) into r; returns 1 when any degrades the run. */
static int motion_faults(pl_process_result *r)
{
    int degraded = 0;
    if ((double)(r->n - r->seen) / r->rate_hz > TAIL_REPORT_S)
        pl_proc_fault(r, "tail_cut at_s=%.4f", (double)r->seen / r->rate_hz);
    if (r->late_omega > 0) {
        pl_proc_fault(r, "late_start omega_rad_s=%.4g", r->late_omega);
        degraded = 1;
    }
    if (r->omega_from_lattice) {
        /* which of the two it was, the lattice cannot say: the integral
         * it checks is the front end's combined omega, not (4.1) itself
         * (on the drift run the one is 0.1-0.3 % off the impacts, the
         * other 1.4 %) */
        double part = r->omega_last_41 / r->omega_last_lattice - 1;
        pl_proc_fault(r, "omega_drift omega41_rad_s=%.5g lattice_rad_s=%.5g part=%.4f q_first=%.5f "
              "q_last=%.5f", r->omega_last_41, r->omega_last_lattice, part, r->clock.q_first,
              r->clock.q_last);
        pl_proc_warn(r, "omega (4.1) over the last second, %.4g rad/s, is %+.2f %% off the impacts' "
             "own clock (%.4g rad/s): the decoders' offsets drifted, or the LDV scale or the "
             "heights' difference is off by that much; omega_last is the lattice's",
             r->omega_last_41, 100 * part, r->omega_last_lattice);
        degraded = 1;
    }
    if (isfinite(r->second_release_t)) {
        pl_proc_fault(r, "second_release at_s=%.4f first_end_s=%.4f", r->second_release_t,
              (double)r->seen / r->rate_hz);
        pl_proc_warn(r, "the prism rolls again from %.3f s, after the motion measured here ended "
             "at %.3f s: a second release in one file; only the first is measured (import "
             "--split-releases stores each release as a run)", r->second_release_t,
             (double)r->seen / r->rate_hz);
        degraded = 1;
    }
    if (r->steps.jumps > 0) {
        /* the impacts after it are off by the time missing: measured
         * through only as far as L_p goes (whole slots across it) */
        pl_proc_fault(r, "time_jump at_s=%.4f slot_part=%.3f missing_s=%.3g count=%zu",
              r->steps.jump_at_s, r->steps.jump_part, r->steps.jump_missing_s,
              r->steps.jumps);
        pl_proc_warn(r, "the lattice's phase jumps by %+.2f of a slot before %.3f s: about %.3g ms "
             "missing from the file there (a dropped buffer?); the impacts after it are "
             "early by that much, L_p counts whole slots across it", r->steps.jump_part,
             r->steps.jump_at_s, 1e3 * r->steps.jump_missing_s);
        degraded = 1;
    }
    return degraded;
}

/* The data-quality record: what the front end met, in db/derived.h's
 * fault lines, and one word.  A run is degraded when it was measured
 * through a fault (a beam carried by the other for longer than a bridge,
 * clipped samples, motion common to both beams removed, drop-outs over
 * DROPOUT_DEGRADED of the motion); hum, routine drop-outs and a tail
 * past the motion are reported but leave it good. */
void pl_proc_assess_quality(pl_process_result *r)
{
    r->faults[0] = '\0';
    int degraded = frontend_faults(r);
    degraded |= motion_faults(r);
    int suspect = 0;
    if (r->lattice_suspect) {
        pl_proc_fault(r, "lattice_mismatch q_first=%.4f q_last=%.4f t_first_s=%.3f t_last_s=%.3f "
              "q_se=%.2g omega41_rad_s=%.5g lattice_rad_s=%.5g", r->clock.q_first,
              r->clock.q_last, r->clock.t_first_s, r->clock.t_last_s, r->clock.q_sd,
              r->omega_last_41, r->omega_last_lattice);
        pl_proc_warn(r, "the integral of omega turns %.3f and %.3f slots per impact over the first "
             "and last second of impacts, not 1: omega or the impacts are wrong there",
             r->clock.q_first, r->clock.q_last);
        suspect = 1;
    }
    snprintf(r->quality, sizeof r->quality, "%s",
             suspect ? "suspect" : degraded ? "degraded" : "good");
}


/* The processing proper on the run's arrays: r takes over a->v[0], a->v[1]
 * (as vp1, vp2: worked on in place; copied in from src1, src2 when they
 * are not NULL), a->omega and a->theta (for a summary, omega is vp1's
 * memory once the velocities are out, theta omega's once omega is
 * filtered, and r->vp1, r->vp2, r->omega NULL; a summary needs wr);
 * a->omc, the combined omega, stays the caller's (pl_proc_write_rest() puts
 * theta and L_p at 1 kHz into it).  wr, when not NULL, starts writing
 * once omega is filtered.  On failure r holds nothing, those arrays are
 * freed and wr rolled back. */
pl_status pl_proc_process_owned(run_arrays *a, const double *src1, const double *src2,
                               double rate, double h1, double h2, int N,
                               const pl_process_config *cfg,
                               pl_process_result *r, writer *wr,
                               seg_io *io, pl_err *err)
{
    memset(r, 0, sizeof *r);
    r->ring_freq_hz = NAN;
    r->vp1 = a->v[0];
    r->vp2 = a->v[1];
    r->omega = a->omega;
    r->theta = a->theta;
    r->n = a->n;
    r->rate_hz = rate;
    a->v[0] = a->v[1] = a->omega = a->theta = NULL;
    spectra sp = {0};
    pl_status st = check_geometry(r->n, rate, h1, h2, N, err);
    if (st == PL_OK)
        st = prepare_channels(src1, src2, a->touched ? NULL : a->omc, r, cfg->threads, err);
    if (st == PL_OK)
        st = find_window(r, h1, h2, N, cfg, io, a->omc, err);
    if (io)   /* what its window said (a long run's first segment's stand) */
        io->window_warned = strlen(r->warnings);
    if (st == PL_OK && !r->omega) {
        double *dec = pl_proc_writer_velocities(wr, r->n);
        st = dec ? velocities_out(r, cfg, h1, h2, &sp, dec, (r->n + 9) / 10, err)
                 : pl_err_set(err, PL_ENOMEM, "processing: out of memory");
    }
    if (st == PL_OK)
        st = spectra_and_filter(r, cfg, &sp, err);
    if (st == PL_OK)
        st = check_speed(r, h1, h2, N, cfg, err);
    if (st == PL_OK) {
        size_t last_s = (size_t)r->rate_hz < r->end - r->release ? r->end - (size_t)r->rate_hz
                                                                 : r->release;
        r->omega_last_mean = mean_of(r->omega, last_s, r->end);
        if (wr)
            pl_proc_writer_start(wr, r, cfg->threads);
        if (a->summary) {
            /* omega's 1 kHz series is out (writer_start): theta takes its
             * memory (vp1's: velocities_out()), 48 MB of a ten-minute run
             * not faulted in */
            r->theta = r->omega;
            r->omega = NULL;
        }
    }
    if (st == PL_OK)
        st = find_impacts(r, N, cfg, a->omc, a->summary ? 10 : 1, io, err);   /* pl_proc_decimate() */
    if (st == PL_OK)
        st = check_lattice(r, N, a->summary ? 10 : 1, err);
    pl_status st2 = spectra_finish(&sp, err);
    if (st == PL_OK)
        st = st2;
    if (st == PL_OK && pl_proc_scale_ratio_errors(r) != 0)
        st = pl_err_set(err, PL_ENOMEM, "out of memory for %zu impacts' ratio errors",
                        r->n_impacts);
    if (st != PL_OK) {
        pl_proc_writer_abort(wr);   /* it reads r's arrays: done with them first */
        pl_process_result_free(r);
        return st;
    }
    pl_proc_summarise(r);
    pl_proc_check_count(r, N);
    pl_proc_assess_quality(r);
    return PL_OK;
}

pl_status pl_process_signals(const double *v1, const double *v2, size_t n,
                             double rate, double h1, double h2, int N,
                             const pl_process_config *cfg,
                             pl_process_result *r, pl_err *err)
{
    memset(r, 0, sizeof *r);
    if (check_geometry(n, rate, h1, h2, N, err) != PL_OK)
        return err->code;
    run_arrays a;
    if (pl_proc_arrays_alloc(&a, n, 0) != 0)
        return pl_err_set(err, PL_ENOMEM, "processing: out of memory for %zu samples", n);
    pl_status st = pl_proc_process_owned(&a, v1, v2, rate, h1, h2, N, cfg, r, NULL, NULL, err);
    pl_proc_arrays_free(&a);
    return st;
}


const char *pl_process_config_for_run(pl_process_config *c, pl_store *store,
                                      const pl_prism *prism, const char *ramp_name,
                                      const pl_channel ch[2])
{
    /* the ramp's slope places the impacts by the arcs' tops when they
     * ring (process/lattice.h); a run without a ramp goes without */
    pl_ramp ramp;
    pl_err ignored;
    pl_ramp_init(&ramp);
    if (ramp_name && ramp_name[0] && pl_ramp_get(store, ramp_name, &ramp, &ignored) == PL_OK) {
        if (isnan(c->lattice.beta_rad))
            c->lattice.beta_rad = ramp.beta_rad;
        if (isnan(c->ramp_length_m))
            c->ramp_length_m = ramp.length_m;
    }
    if (isnan(c->a0_m))
        c->a0_m = prism->a0_m;
    return pl_proc_decoder_delay(c, ch);
}

/* pl_process_run() and pl_process_run_summary(). */
static pl_status process_run(pl_store *store, long long run_id, const pl_process_config *cfg,
                             int summary, pl_process_result *out, pl_err *err)
{
    pl_run_info info;
    pl_channel ch[2];
    pl_prism prism;
    run_arrays a;
    pl_run_gap *gaps = NULL;
    size_t n_gaps = 0;
    pl_status st = pl_proc_read_meta(store, run_id, &info, ch, &prism, &gaps, &n_gaps, err);
    if (st != PL_OK) {
        free(gaps);
        return st;
    }
    pl_process_config c = *cfg;
    const char *delay_from = pl_process_config_for_run(&c, store, &prism, info.ramp, ch);
    /* a long run in segments, unless its caller wants the full-rate
     * series or the recording has gaps (pl_proc_bridge_gaps() is the whole's) */
    char why[256] = "";
    if (c.segment_frames > 0 && (size_t)info.n_frames > c.segment_frames &&
        (summary || !out)) {
        int whole = 1;
        if (n_gaps)
            snprintf(why, sizeof why, "the recording has gaps");
        else
            st = pl_proc_long(store, run_id, &info, ch, prism.n_edges, &c, delay_from, out,
                              &whole, why, sizeof why, err);
        if (st != PL_OK || !whole) {
            free(gaps);
            return st == PL_OK ? st : pl_err_prefix(err, "run %lld: ", run_id);
        }
    }
    if ((st = pl_proc_read_velocities(store, run_id, &info, ch, cfg->threads, summary, &a, err)) !=
        PL_OK) {
        free(gaps);
        return st;
    }
    /* the raw velocities' extremes, before processing cleans them in place */
    raw_extremes rx;
    if (pl_proc_raw_extremes_of(a.v, (size_t)info.n_frames, &rx, err) != PL_OK) {
        pl_proc_arrays_free(&a);
        free(gaps);
        return pl_err_prefix(err, "run %lld: ", run_id);
    }
    pl_process_result r;
    writer wr = {.store = store, .run_id = run_id};
    st = pl_proc_process_owned(&a, NULL, NULL, info.sample_rate_hz, ch[0].beam_height_m,
                       ch[1].beam_height_m, prism.n_edges, &c, &r, &wr, NULL, err);
    if (st == PL_OK && n_gaps &&
        (st = pl_proc_bridge_gaps(&r, gaps, n_gaps, a.omc, prism.n_edges, err)) != PL_OK) {
        pl_proc_writer_abort(&wr);
        pl_process_result_free(&r);
    }
    free(gaps);
    if (st != PL_OK) {
        pl_proc_arrays_free(&a);
        free(rx.v);
        pl_err_prefix(err, "run %lld: ", run_id);
        return st;
    }
    if (why[0])
        pl_proc_warn(&r, "%zu frames processed whole, not in segments of %zu: %s; the memory "
             "this takes grows with the run (docs/process.md, \"Long runs\")",
             (size_t)info.n_frames, c.segment_frames / 4, why);
    snprintf(r.decoder_delay_from, sizeof r.decoder_delay_from, "%s", delay_from);
    st = pl_proc_write_rest(&wr, &c, prism.n_edges, ch, &rx, a.omc, err);
    free(rx.v);
    pl_proc_arrays_free(&a);
    if (summary) {
        free(r.vp1);
        free(r.vp2);
        free(r.theta);
        r.vp1 = r.vp2 = r.theta = NULL;
    }
    if (out && st == PL_OK)
        *out = r;
    else
        pl_process_result_free(&r);
    return st;
}

pl_status pl_process_run(pl_store *store, long long run_id,
                         const pl_process_config *cfg, pl_process_result *out,
                         pl_err *err)
{
    return process_run(store, run_id, cfg, 0, out, err);
}

pl_status pl_process_run_summary(pl_store *store, long long run_id,
                                 const pl_process_config *cfg, pl_process_result *out,
                                 pl_err *err)
{
    return process_run(store, run_id, cfg, 1, out, err);
}
