/* process/process.c - velocities to omega, theta, L_p, impacts, spectra:
 * the phases in order (channels, release, front end, omega and the end,
 * spectra and filter, impacts, theta and L_p, summary), each a function of
 * its own, and the stored run's read and write.  See process.h and
 * docs/process.md. */
#include "process/process.h"

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

static void warn(pl_process_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void warn(pl_process_result *r, const char *fmt, ...)
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

/* The whole-length arrays of one processing: the two velocities and the
 * three that processing writes (omega by (4.1), theta, the front end's
 * combined omega), n doubles each. */
typedef struct {
    double *v[2], *omega, *theta, *omc;
    size_t n;
    int touched;   /* omega, theta and omc are faulted in already */
    int summary;   /* no omega or theta of its own (the caller keeps no
                      full-rate series): omega takes vp1's memory once the
                      velocities' spectra and 1 kHz series are taken
                      (velocities_out()), theta omega's once omega is
                      filtered and written */
} run_arrays;

static void arrays_free(run_arrays *a)
{
    free(a->v[0]);
    free(a->v[1]);
    free(a->omega);
    free(a->theta);
    free(a->omc);
    memset(a, 0, sizeof *a);
}

/* -1 when out of memory (a then holds nothing). */
static int arrays_alloc(run_arrays *a, size_t n, int summary)
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
    arrays_free(a);
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

/* A long run's segment (process_long()): its splice (frontend.h), and
 * the first segment's lead-in and release, which a later one keeps (its
 * own would be found where the spliced motion jumps in), or (the first)
 * receives, with the length of its window's warnings. */
typedef struct {
    pl_frontend_splice fs;
    size_t lead, quiet, release;
    size_t window_warned;
} seg_io;

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
    /* A recording that starts after the release has no lead-in at rest:
     * its first samples are the motion, not the decoders' offsets, and
     * taking them as offsets took 30 % off omega (foreign-runs-3's late
     * start).  The offsets are then left at 0 (the lattice's check of
     * omega measures what they leave, check_lattice()) and L_p counts
     * from the first sample. */
    r->late_omega = pl_phys_moving_at_start(r->vp1, r->vp2, q, h1, h2);
    double o1 = 0, o2 = 0;
    if (r->late_omega == 0) {
        o1 = lead_level(r->vp1, q);
        o2 = lead_level(r->vp2, q);
    }
    if (isnan(o1) || isnan(o2))
        return pl_err_set(err, PL_ENOMEM, "processing: out of memory for the lead-in");
    for (size_t i = 0; i < n; i++) {
        r->vp1[i] -= o1;
        r->vp2[i] -= o2;
    }
    double hb[2] = {h1, h2}, *vb[2] = {r->vp1, r->vp2};
    if (pl_beams_check(vb, hb, n, rate, q, &r->beams) != 0)
        return pl_err_set(err, PL_ENOMEM, "beam check: out of memory");
    char why[768];
    if (pl_beams_verdict(&r->beams, hb, why, sizeof why))
        return pl_err_set(err, PL_ENUMERIC, "%s", why);
    pl_window w;
    pl_status st = pl_window_release(r->vp1, r->vp2, h1 - h2, n, rate, q,
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
        warn(r, "the recording starts after the release: the prism turns at %.3g rad/s "
             "at the first sample; L_p counts from there, and the decoders' offsets "
             "are taken as 0", r->late_omega);
    else if (lead < q)
        warn(r, "lead-in before the release is only %.3f s: offsets and hum from "
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
    double inv_dh = 1.0 / (h1 - h2);   /* a multiply a sample, not a divide */
    if (r->omega) {
        for (size_t i = 0; i < n; i++)
            r->omega[i] = (r->vp1[i] - r->vp2[i]) * inv_dh;
        pl_window_end(r->omega, n, rate, &w);
    } else {
        pl_window_end_beams(r->vp1, r->vp2, inv_dh, n, rate, &w);
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
        if (lost + (size_t)(0.005 * rate) < w.end && lost > w.release + guard) {
            warn(r, "both beams lost the prism at %.3f s: the window ends there",
                 r->front.lost_t_s);
            w.end = lost - guard;
            w.seen = lost;
        }
    }
    /* past the first motion, a second one (the logger ran on through
     * another release): named, not measured */
    r->second_release_t = pl_phys_second_release(r->vp1, r->vp2, w.seen, n, rate, h1, h2);
    r->release = w.release;
    r->quiet = w.quiet;
    r->end = w.end;
    r->seen = w.seen > w.end ? w.seen : w.end;
    r->release_t = (double)w.release / rate;
    r->end_t = (double)w.end / rate;
    r->noise_omega = w.noise_omega;
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
static void decimate(const double *full, size_t nd, double k, double *out)
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
    decimate(r->vp2, nd, 1.0, dec + nd);
    spectra_join(s);
    decimate(r->vp1, nd, 1.0, dec);
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

static int scale_ratio_errors(pl_process_result *r)
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

static void summarise(pl_process_result *r)
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
static void check_count(pl_process_result *r, int N)
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
        warn(r, "%zu of the %zu impacts the lattice of L_p expects show no step above "
             "%.3g rad/s (the noise of the step statistic): %s; they are placed by the "
             "lattice", unconf, r->n_expected, r->noise_d, cause);
    }
    if (r->drift_rad > 0.25 * delta)
        warn(r, "the integral of omega drifted %.2f of a slot (%.3f rad) from the "
             "lattice over the run: offsets, 1/f noise or a calibration off (L_p is "
             "anchored to the lattice and does not drift)", r->drift_rad / delta,
             r->drift_rad);
    for (int c = 0; c < 2; c++)
        if (f->dropouts[c])
            warn(r, "beam %d: %zu drop-out%s (%.1f ms in all) bridged from the other "
                 "beam", c + 1, f->dropouts[c], f->dropouts[c] == 1 ? "" : "s",
                 1e3 * f->dropout_s[c]);
    if (f->both_out)
        warn(r, "%zu drop-out%s of both beams at once bridged by straight lines",
             f->both_out, f->both_out == 1 ? "" : "s");
    if (f->hum_hz > 0)
        warn(r, "mains hum at %.2f Hz removed (%.3g and %.3g mm/s)", f->hum_hz,
             1e3 * f->hum_amp_mps[0], 1e3 * f->hum_amp_mps[1]);
}

/* --- the whole ------------------------------------------------------------ */

/* The processing proper.  It takes the velocity arrays vp1, vp2 over as
 * r->vp1, r->vp2 and works on them in place: a long run is copied at most
 * once, from src1, src2 when they are not NULL.  On failure r holds
 * nothing and the arrays are freed. */
/* Appends one fault line to r->faults (db/derived.h's format). */
static void fault(pl_process_result *r, const char *fmt, ...)
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

/* The data-quality record: what the front end met, in db/derived.h's
 * fault lines, and one word.  A run is degraded when it was measured
 * through a fault (a beam carried by the other for longer than a bridge,
 * clipped samples, motion common to both beams removed, drop-outs over
 * DROPOUT_DEGRADED of the motion); hum, routine drop-outs and a tail
 * past the motion are reported but leave it good. */
static void assess_quality(pl_process_result *r)
{
    const pl_frontend_report *f = &r->front;
    double motion_s = (double)(r->seen - r->release) / r->rate_hz;
    int degraded = 0;
    r->faults[0] = '\0';
    if (r->beams.dead) {
        int d = r->beams.dead;
        fault(r, "beam_dead channel=%d agree=%.3f blocks=%zu", d, r->beams.agree,
              r->beams.moving);
        warn(r, "beam %d never saw the prism (it follows beam %d in %.1f %% of %zu blocks "
             "of the motion): omega from beam %d alone over the whole run; check its "
             "alignment and decoder", d, 3 - d, 100 * r->beams.agree, r->beams.moving, 3 - d);
        degraded = 1;
    }
    for (size_t k = 0; k < f->n_lost && k < PL_FRONTEND_MAX_SPANS; k++) {
        const pl_beam_span *b = &f->lost[k];
        fault(r, "beam_lost channel=%d from_s=%.4f to_s=%.4f", b->channel, b->from_s, b->to_s);
        warn(r, "beam %d lost the prism from %.3f s to %.3f s: omega from beam %d alone "
             "there", b->channel, b->from_s, b->to_s, 3 - b->channel);
        degraded = 1;
    }
    if (f->n_lost > PL_FRONTEND_MAX_SPANS)
        warn(r, "%zu more stretches with one beam lost (%.3f s in all)",
             f->n_lost - PL_FRONTEND_MAX_SPANS, f->lost_total_s);
    for (int c = 0; c < 2; c++)
        if (f->clipped[c] > 0 && isfinite(f->sat_level_mps[c])) {
            fault(r, "saturated channel=%d level_mps=%.4g samples=%zu spans=%zu from_s=%.4f "
                  "to_s=%.4f", c + 1, f->sat_level_mps[c], f->clipped[c], f->clip_spans[c],
                  f->clip_from_s[c], f->clip_to_s[c]);
            warn(r, "beam %d flat at %.4g m/s from %.3f s to %.3f s while beam %d turned "
                 "on (its decoder's velocity limit?), carried by beam %d", c + 1,
                 f->sat_level_mps[c], f->clip_from_s[c], f->clip_to_s[c], 2 - c, 2 - c);
            degraded = 1;
        } else if (f->clipped[c] > 0) {
            fault(r, "clipped channel=%d samples=%zu spans=%zu from_s=%.4f to_s=%.4f", c + 1,
                  f->clipped[c], f->clip_spans[c], f->clip_from_s[c], f->clip_to_s[c]);
            warn(r, "beam %d clipped: %zu samples at its rails in %zu stretches from "
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
        fault(r, "common_motion level_mps=%.3g freqs_hz=%s amps_mps=%s", f->common_rms_mps,
              freqs, amps);
        warn(r, "motion common to both beams removed (a shaking floor?): %s Hz, %.3g mm/s RMS",
             freqs, 1e3 * f->common_rms_mps);
        degraded = 1;
    }
    if (f->hum_hz > 0) {
        /* a drift the data could not resolve is left out, not written 0 */
        char drift[64] = "";
        if (isfinite(f->hum_drift_hz))   /* (+ 0.0: -0.0004 is written 0.000, not -0.000) */
            snprintf(drift, sizeof drift, " drift_hz=%.3f drift_se_hz=%.2g",
                     round(1e3 * f->hum_drift_hz) / 1e3 + 0.0, f->hum_drift_se_hz);
        fault(r, "hum freq_hz=%.3f%s amp1_mps=%.3g amp2_mps=%.3g", f->hum_hz, drift,
              f->hum_amp_mps[0], f->hum_amp_mps[1]);
    }
    for (int c = 0; c < 2; c++)
        if (f->dropouts[c] > 0) {
            fault(r, "dropouts channel=%d count=%zu total_s=%.4f", c + 1, f->dropouts[c],
                  f->dropout_s[c]);
            degraded |= motion_s > 0 && f->dropout_s[c] > DROPOUT_DEGRADED * motion_s;
        }
    if ((double)(r->n - r->seen) / r->rate_hz > TAIL_REPORT_S)
        fault(r, "tail_cut at_s=%.4f", (double)r->seen / r->rate_hz);
    if (r->late_omega > 0) {
        fault(r, "late_start omega_rad_s=%.4g", r->late_omega);
        degraded = 1;
    }
    if (r->omega_from_lattice) {
        /* which of the two it was, the lattice cannot say: the integral
         * it checks is the front end's combined omega, not (4.1) itself
         * (on the drift run the one is 0.1-0.3 % off the impacts, the
         * other 1.4 %) */
        double part = r->omega_last_41 / r->omega_last_lattice - 1;
        fault(r, "omega_drift omega41_rad_s=%.5g lattice_rad_s=%.5g part=%.4f q_first=%.5f "
              "q_last=%.5f", r->omega_last_41, r->omega_last_lattice, part, r->clock.q_first,
              r->clock.q_last);
        warn(r, "omega (4.1) over the last second, %.4g rad/s, is %+.2f %% off the impacts' "
             "own clock (%.4g rad/s): the decoders' offsets drifted, or the LDV scale or the "
             "heights' difference is off by that much; omega_last is the lattice's",
             r->omega_last_41, 100 * part, r->omega_last_lattice);
        degraded = 1;
    }
    if (isfinite(r->second_release_t)) {
        fault(r, "second_release at_s=%.4f first_end_s=%.4f", r->second_release_t,
              (double)r->seen / r->rate_hz);
        warn(r, "the prism rolls again from %.3f s, after the motion measured here ended "
             "at %.3f s: a second release in one file; only the first is measured (import "
             "--split-releases stores each release as a run)", r->second_release_t,
             (double)r->seen / r->rate_hz);
        degraded = 1;
    }
    if (r->steps.jumps > 0) {
        /* the impacts after it are off by the time missing: measured
         * through only as far as L_p goes (whole slots across it) */
        fault(r, "time_jump at_s=%.4f slot_part=%.3f missing_s=%.3g count=%zu",
              r->steps.jump_at_s, r->steps.jump_part, r->steps.jump_missing_s,
              r->steps.jumps);
        warn(r, "the lattice's phase jumps by %+.2f of a slot before %.3f s: about %.3g ms "
             "missing from the file there (a dropped buffer?); the impacts after it are "
             "early by that much, L_p counts whole slots across it", r->steps.jump_part,
             r->steps.jump_at_s, 1e3 * r->steps.jump_missing_s);
        degraded = 1;
    }
    int suspect = 0;
    if (r->lattice_suspect) {
        fault(r, "lattice_mismatch q_first=%.4f q_last=%.4f t_first_s=%.3f t_last_s=%.3f "
              "q_se=%.2g omega41_rad_s=%.5g lattice_rad_s=%.5g", r->clock.q_first,
              r->clock.q_last, r->clock.t_first_s, r->clock.t_last_s, r->clock.q_sd,
              r->omega_last_41, r->omega_last_lattice);
        warn(r, "the integral of omega turns %.3f and %.3f slots per impact over the first "
             "and last second of impacts, not 1: omega or the impacts are wrong there",
             r->clock.q_first, r->clock.q_last);
        suspect = 1;
    }
    snprintf(r->quality, sizeof r->quality, "%s",
             suspect ? "suspect" : degraded ? "degraded" : "good");
}

/* Writing the result while the impacts are searched: see "writing the
 * result" below. */
typedef struct writer writer;
static void writer_start(writer *wr, const pl_process_result *r, int threads);
static void writer_abort(writer *wr);
static double *writer_velocities(writer *wr, size_t n);

/* The processing proper on the run's arrays: r takes over a->v[0], a->v[1]
 * (as vp1, vp2: worked on in place; copied in from src1, src2 when they
 * are not NULL), a->omega and a->theta (for a summary, omega is vp1's
 * memory once the velocities are out, theta omega's once omega is
 * filtered, and r->vp1, r->vp2, r->omega NULL; a summary needs wr);
 * a->omc, the combined omega, stays the caller's (write_rest() puts
 * theta and L_p at 1 kHz into it).  wr, when not NULL, starts writing
 * once omega is filtered.  On failure r holds nothing, those arrays are
 * freed and wr rolled back. */
static pl_status process_owned(run_arrays *a, const double *src1, const double *src2,
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
        double *dec = writer_velocities(wr, r->n);
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
            writer_start(wr, r, cfg->threads);
        if (a->summary) {
            /* omega's 1 kHz series is out (writer_start): theta takes its
             * memory (vp1's: velocities_out()), 48 MB of a ten-minute run
             * not faulted in */
            r->theta = r->omega;
            r->omega = NULL;
        }
    }
    if (st == PL_OK)
        st = find_impacts(r, N, cfg, a->omc, a->summary ? 10 : 1, io, err);   /* decimate() */
    if (st == PL_OK)
        st = check_lattice(r, N, a->summary ? 10 : 1, err);
    pl_status st2 = spectra_finish(&sp, err);
    if (st == PL_OK)
        st = st2;
    if (st == PL_OK && scale_ratio_errors(r) != 0)
        st = pl_err_set(err, PL_ENOMEM, "out of memory for %zu impacts' ratio errors",
                        r->n_impacts);
    if (st != PL_OK) {
        writer_abort(wr);   /* it reads r's arrays: done with them first */
        pl_process_result_free(r);
        return st;
    }
    summarise(r);
    check_count(r, N);
    assess_quality(r);
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
    if (arrays_alloc(&a, n, 0) != 0)
        return pl_err_set(err, PL_ENOMEM, "processing: out of memory for %zu samples", n);
    pl_status st = process_owned(&a, v1, v2, rate, h1, h2, N, cfg, r, NULL, NULL, err);
    arrays_free(&a);
    return st;
}

/* --- the stored run ----------------------------------------------------- */

static pl_series series(const char *name, const char *unit, int dec,
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
static pl_status read_meta(pl_store *store, long long run_id, pl_run_info *info,
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
static pl_status bridge_gaps(pl_process_result *r, const pl_run_gap *gaps, size_t n_gaps,
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
        fault(r, "gap at_s=%.4f frames=%zu missing_s=%.4g in_motion=%d slots=%.3f "
              "impacts_dropped=%zu", at_s, b - a, missing_s, moving, moving ? slots : 0.0,
              dropped);
        if (moving)
            warn(r, "the recording has a gap at %.3f s: %zu frames (%.1f ms) missing, "
                 "bridged by the impact lattice (%.2f of a slot; %s)", at_s, b - a,
                 1e3 * missing_s, slots,
                 dropped == 0 ? "no impact fell in it"
                 : dropped == 1 ? "the impact the lattice placed in it not reported"
                                : "the impacts the lattice placed in it not reported");
        else
            warn(r, "the recording has a gap at %.3f s: %zu frames (%.1f ms) missing, "
                 "outside the motion", at_s, b - a, 1e3 * missing_s);
    }
    if (dropped_all)
        summarise(r);
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
static const char *decoder_delay(pl_process_config *c, const pl_channel ch[2])
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
static pl_status read_velocities(pl_store *store, long long run_id, const pl_run_info *info,
                                 const pl_channel ch[2], int threads, int summary,
                                 run_arrays *a, pl_err *err)
{
    size_t n = (size_t)info->n_frames;
    double k[2] = {ch[0].beam_sign * ch[0].ldv_scale_mps_per_v,
                   ch[1].beam_sign * ch[1].ldv_scale_mps_per_v};
    if (arrays_alloc(a, n, summary) != 0)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for %zu frames",
                          run_id, n);
    faulting f;
    fault_in_start(&f, a, threads);
    pl_status st = pl_run_read_scaled(store, run_id, 0, (long long)n, a->v, k, 2, err);
    fault_in_finish(&f);
    if (st != PL_OK) {
        arrays_free(a);
        return pl_err_prefix(err, "run %lld: ", run_id);
    }
    return PL_OK;
}

/* The raw velocities' extremes over every PL_DERIVED_RAW_BUCKET frames
 * (db/derived.h), stored for viewers; taken before processing touches
 * the samples (despiking and bridging work in place). */
typedef struct {
    size_t n;             /* buckets */
    double *v;            /* 4 n: vp1 min, vp1 max, vp2 min, vp2 max */
} raw_extremes;

static pl_status raw_extremes_of(double *const v[2], size_t n, raw_extremes *rx,
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
static void make_record(long long run_id, const pl_process_config *cfg,
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

/* The run's derived data goes into the store in two parts of one
 * transaction (db/derived.h's writer): first omega and the velocities,
 * final once omega is filtered (the impact search reads the combined
 * omega and writes theta only); then theta, L_p, the spectra, the record
 * and the impacts.  With a thread to spare the first part is written on
 * one of its own while this one searches for the impacts (a ten-minute
 * run's 14 MB of its 28), at the price of the store's write lock held
 * through the search (0.25 s more on that run; other writers wait for
 * it, up to the busy timeout).
 * The series are at 1 kHz: every 10th sample of the filtered series,
 * enough for every plot and for matching, a tenth of the bytes (the
 * full-rate series are recomputed exactly from the raw chunks and the
 * stored parameters, since processing is deterministic). */
struct writer {
    pl_store *store;
    long long run_id;
    const pl_process_result *r;
    size_t nd;                 /* samples of a series at 1 kHz */
    double *dec;               /* 3 * nd: omega, vp1, vp2 */
    int velocities_in;         /* vp1 and vp2 are in dec already */
    pl_derived_writer *w;
    int first_done;            /* the first part is in the transaction */
    pl_status st;
    pl_err err;
    pthread_t tid;
    int running;
};

/* omega's series is in wr->dec already (writer_start()), the
 * velocities' too where velocities_out() took them. */
static pl_status write_first(writer *wr, int on_thread, pl_err *err)
{
    const pl_process_result *r = wr->r;
    double rate = r->rate_hz;
    size_t nd = wr->nd;
    if (!wr->dec)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", wr->run_id);
    if (!wr->velocities_in) {
        decimate(r->vp1, nd, 1.0, wr->dec + nd);
        decimate(r->vp2, nd, 1.0, wr->dec + 2 * nd);
    }
    pl_series sv[3] = {
        series("omega", "rad/s", 10, 0, rate / 10, nd, wr->dec),
        series("vp1", "m/s", 10, 0, rate / 10, nd, wr->dec + nd),
        series("vp2", "m/s", 10, 0, rate / 10, nd, wr->dec + 2 * nd),
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

/* Once omega is filtered (process_owned()): omega's series taken here
 * (theta may take omega's memory next), the rest of the first part on a
 * thread of its own unless threads is 1 (it then waits for
 * write_rest()). */
static void writer_start(writer *wr, const pl_process_result *r, int threads)
{
    wr->r = r;
    wr->nd = (r->n + 9) / 10;
    wr->st = PL_OK;
    if (!wr->dec)
        wr->dec = malloc(3 * wr->nd * sizeof *wr->dec);
    if (!wr->dec)
        return;   /* write_first() says so */
    decimate(r->omega, wr->nd, 1.0, wr->dec);
    if (threads != 1 && pthread_create(&wr->tid, NULL, write_first_thread, wr) == 0)
        wr->running = 1;
}

/* Where a summary's vp1 and vp2 go at 1 kHz (velocities_out()), taken
 * before omega is formed: wr->dec's second and third thirds, made here;
 * NULL when out of memory. */
static double *writer_velocities(writer *wr, size_t n)
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
static void writer_abort(writer *wr)
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
static pl_status write_rest(writer *wr, const pl_process_config *cfg, int N,
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
        writer_abort(wr);
        return st;
    }
    decimate(r->theta, nd, 1.0, scratch);
    decimate(r->theta, nd, N / (2 * M_PI), scratch + nd);
    double brate = rate / PL_DERIVED_RAW_BUCKET;
    pl_series sv[9] = {
        series("theta", "rad", 10, 0, rate / 10, nd, scratch),
        series("Lp", "1", 10, 0, rate / 10, nd, scratch + nd),
        series("psd_vp1", "m^2/s^2/Hz", 1, 0, 1 / r->psd_df, r->psd_len, r->psd_vp1),
        series("psd_vp2", "m^2/s^2/Hz", 1, 0, 1 / r->psd_df, r->psd_len, r->psd_vp2),
        series("psd_residual", "rad^2/s^2/Hz", 1, 0, 1 / r->psd_df, r->psd_len, r->psd_residual),
        series("vp1_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v),
        series("vp1_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v + rx->n),
        series("vp2_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v + 2 * rx->n),
        series("vp2_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, rx->n, rx->v + 3 * rx->n),
    };
    for (int k = 0; k < 9 && st == PL_OK; k++)
        st = pl_derived_put(wr->w, &sv[k], err);
    free(own);
    if (st != PL_OK) {
        writer_abort(wr);
        return st;
    }
    pl_processing rec;
    make_record(wr->run_id, cfg, r, N, ch, &rec);
    st = pl_derived_finish(wr->w, &rec, r->impacts, r->n_impacts, err);
    wr->w = NULL;   /* finish frees it, whatever the outcome */
    free(wr->dec);
    wr->dec = NULL;
    return st;
}

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
        series("omega", "rad/s", 10, 0, rate / 10, nd, NULL),
        series("vp1", "m/s", 10, 0, rate / 10, nd, NULL),
        series("vp2", "m/s", 10, 0, rate / 10, nd, NULL),
        series("theta", "rad", 10, 0, rate / 10, nd, NULL),
        series("Lp", "1", 10, 0, rate / 10, nd, NULL),
        series("vp1_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
        series("vp1_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
        series("vp2_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
        series("vp2_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, brate, nb, NULL),
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
 * is taken over all of them: scale_ratio_errors()). */
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
        R->warnings[L->io.window_warned] = '\0';   /* check_count() and the rest: below */
        if (!R->psd_vp1 || !R->psd_vp2 || !R->psd_residual)
            return pl_err_set(err, PL_ENOMEM, "processing: out of memory");
    } else {
        if (rk->psd_len != R->psd_len)
            return pl_err_set(err, PL_ENUMERIC, "a segment's spectra have %zu bins, the "
                              "first's %zu", rk->psd_len, R->psd_len);
        /* the front end's events, which the first segment's report lacks */
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
    if (scale_ratio_errors(R) != 0)
        return pl_err_set(err, PL_ENOMEM, "out of memory for %zu impacts' ratio errors",
                          R->n_impacts);
    summarise(R);
    check_count(R, N);
    assess_quality(R);
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
    if (arrays_alloc(&arr, len, 0) != 0)
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
        st = process_owned(&arr, NULL, NULL, rate, ch[0].beam_height_m, ch[1].beam_height_m,
                           N, &cs, &rk, NULL, &L->io, err);
    if (st != PL_OK) {
        arrays_free(&arr);
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
    arrays_free(&arr);
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
static pl_status process_long(pl_store *store, long long run_id, const pl_run_info *info,
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
        series("psd_vp1", "m^2/s^2/Hz", 1, 0, 1 / df, R->psd_len, R->psd_vp1),
        series("psd_vp2", "m^2/s^2/Hz", 1, 0, 1 / df, R->psd_len, R->psd_vp2),
        series("psd_residual", "rad^2/s^2/Hz", 1, 0, 1 / df, R->psd_len, R->psd_residual),
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
    make_record(run_id, c, R, N, ch, &rec);
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
    pl_status st = read_meta(store, run_id, &info, ch, &prism, &gaps, &n_gaps, err);
    if (st != PL_OK) {
        free(gaps);
        return st;
    }
    /* the ramp's slope places the impacts by the arcs' tops when they
     * ring (process/lattice.h); a run without a ramp goes without */
    pl_process_config c = *cfg;
    pl_ramp ramp;
    pl_err ignored;
    pl_ramp_init(&ramp);
    if (info.ramp[0] && pl_ramp_get(store, info.ramp, &ramp, &ignored) == PL_OK) {
        if (isnan(c.lattice.beta_rad))
            c.lattice.beta_rad = ramp.beta_rad;
        if (isnan(c.ramp_length_m))
            c.ramp_length_m = ramp.length_m;
    }
    if (isnan(c.a0_m))
        c.a0_m = prism.a0_m;
    const char *delay_from = decoder_delay(&c, ch);
    /* a long run in segments, unless its caller wants the full-rate
     * series or the recording has gaps (bridge_gaps() is the whole's) */
    char why[256] = "";
    if (c.segment_frames > 0 && (size_t)info.n_frames > c.segment_frames &&
        (summary || !out)) {
        int whole = 1;
        if (n_gaps)
            snprintf(why, sizeof why, "the recording has gaps");
        else
            st = process_long(store, run_id, &info, ch, prism.n_edges, &c, delay_from, out,
                              &whole, why, sizeof why, err);
        if (st != PL_OK || !whole) {
            free(gaps);
            return st == PL_OK ? st : pl_err_prefix(err, "run %lld: ", run_id);
        }
    }
    if ((st = read_velocities(store, run_id, &info, ch, cfg->threads, summary, &a, err)) !=
        PL_OK) {
        free(gaps);
        return st;
    }
    /* the raw velocities' extremes, before processing cleans them in place */
    raw_extremes rx;
    if (raw_extremes_of(a.v, (size_t)info.n_frames, &rx, err) != PL_OK) {
        arrays_free(&a);
        free(gaps);
        return pl_err_prefix(err, "run %lld: ", run_id);
    }
    pl_process_result r;
    writer wr = {.store = store, .run_id = run_id};
    st = process_owned(&a, NULL, NULL, info.sample_rate_hz, ch[0].beam_height_m,
                       ch[1].beam_height_m, prism.n_edges, &c, &r, &wr, NULL, err);
    if (st == PL_OK && n_gaps &&
        (st = bridge_gaps(&r, gaps, n_gaps, a.omc, prism.n_edges, err)) != PL_OK) {
        writer_abort(&wr);
        pl_process_result_free(&r);
    }
    free(gaps);
    if (st != PL_OK) {
        arrays_free(&a);
        free(rx.v);
        pl_err_prefix(err, "run %lld: ", run_id);
        return st;
    }
    if (why[0])
        warn(&r, "%zu frames processed whole, not in segments of %zu: %s; the memory "
             "this takes grows with the run (docs/process.md, \"Long runs\")",
             (size_t)info.n_frames, c.segment_frames / 4, why);
    snprintf(r.decoder_delay_from, sizeof r.decoder_delay_from, "%s", delay_from);
    st = write_rest(&wr, &c, prism.n_edges, ch, &rx, a.omc, err);
    free(rx.v);
    arrays_free(&a);
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
