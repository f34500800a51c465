/* acquire/sim/simrun.c - the model and the rig's signal chain joined into one
 * recording with its truth.  See simrun.h. */
#include "acquire/sim/simrun.h"

#include "core/atomicfile.h"
#include "core/numtext.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pl_simrun {
    pl_simrun_config cfg;
    size_t n;                 /* frames */
    size_t release, leave;    /* indices, see simrun.h */
    uint16_t *codes;          /* 2n */
    double *v[2];             /* true downhill velocities at the beams, n */
    double *impact_t;         /* recording clock */
    double *model_buf;        /* the model's series, model clock */
    pl_model_impact *impacts;
    pl_model_result res;
    size_t clipped;
};

void pl_simrun_config_default(pl_simrun_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    pl_model_params_default(&cfg->model);
    cfg->model.duration = 30.0;
    cfg->rate_hz = 10000.0;
    cfg->lead_in_s = 1.0;
    cfg->tail_s = 0.5;
    pl_rigsim_config_default(&cfg->rig);
    cfg->nominal_lambda0 = NAN;
    cfg->nominal_beta = NAN;
}

static double log_uniform(gsl_rng *r, double lo, double hi)
{
    return exp(gsl_ran_flat(r, log(lo), log(hi)));
}

void pl_simrun_config_random(pl_simrun_config *cfg, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    pl_simrun_config_default(cfg);
    pl_rigsim_config_random(&cfg->rig, seed);
    if (!r) /* no generator: the default run, never garbage */
        return;
    gsl_rng_set(r, seed);
    pl_model_params *p = &cfg->model;
    p->N = 18 + (int)gsl_rng_uniform_int(r, 23);
    p->a0 = 0.015;
    p->beta = gsl_ran_flat(r, 0.30, 0.45) * M_PI / 180.0;
    p->lambda0 = gsl_ran_flat(r, 0.80, 0.95) * (M_PI / p->N + p->beta);
    /* Below about 2.3 / N a prism of few faces slips in contact (checked
     * for N = 18..22 at beta 0.45 deg): give those a rougher ramp. */
    double mu_lo = fmax(0.10, 2.3 / p->N);
    p->mu_s = gsl_ran_flat(r, mu_lo, mu_lo + 0.05);
    p->mu = NAN;
    p->h1 = gsl_ran_flat(r, 0.018, 0.024);
    p->h2 = gsl_ran_flat(r, 0.009, 0.014);
    p->law = gsl_rng_uniform(r) < 0.25 ? PL_LAW_PLASTIC : PL_LAW_LINE;
    cfg->rate_hz = nearbyint(log_uniform(r, 5000.0, 50000.0));
    cfg->lead_in_s = gsl_ran_flat(r, 0.3, 1.0);
    if (gsl_rng_uniform(r) < 0.5) {   /* the logger stops while it rolls */
        p->ramp_length = 0.0;
        p->duration = gsl_ran_flat(r, 3.0, 6.0);
        cfg->tail_s = 0.0;
    } else {                          /* it rolls off a short ramp */
        p->ramp_length = gsl_ran_flat(r, 0.20, 0.45);
        p->duration = 12.0;
        cfg->tail_s = gsl_ran_flat(r, 0.2, 0.5);
    }
    cfg->nominal_lambda0 = p->lambda0;
    cfg->nominal_beta = p->beta;
    gsl_rng_free(r);
}

void pl_simrun_config_random_faults(pl_simrun_config *cfg, unsigned long seed)
{
    pl_simrun_config_random(cfg, seed);
    pl_rigsim_config_random_faults(&cfg->rig, seed);
    if (cfg->rig.tail_garbage && cfg->model.ramp_length > 0)
        cfg->tail_s = cfg->rig.tail_garbage_s + 0.3;
    else
        cfg->rig.tail_garbage = 0; /* it never leaves the beams */
}

void pl_simrun_destroy(pl_simrun *s)
{
    if (!s)
        return;
    free(s->codes);
    free(s->v[0]);
    free(s->v[1]);
    free(s->impact_t);
    free(s->model_buf);
    free(s->impacts);
    free(s);
}

/* The model runs on its own clock (release at 0) at the recording's rate,
 * so model sample k is recording sample release + k: no resampling, and
 * the impact steps land on the same samples the rig would see. */
static pl_status run_model(pl_simrun *s, pl_err *err)
{
    pl_model_params p = s->cfg.model;
    pl_model *m = NULL;
    p.rate = s->cfg.rate_hz;
    if (pl_model_create(&m, &p, err) != PL_OK)
        return err->code;
    size_t ns = (size_t)floor(p.duration * p.rate + 1e-9) + 1;
    size_t ni = (size_t)(p.duration * 1000.0) + 16; /* impacts >= 1 ms apart */
    s->model_buf = malloc(ns * 5 * sizeof *s->model_buf);
    s->impacts = malloc(ni * sizeof *s->impacts);
    if (!s->model_buf || !s->impacts) {
        pl_model_destroy(m);
        return pl_err_set(err, PL_ENOMEM, "rig simulator: out of memory for "
                          "%zu model samples", ns);
    }
    pl_model_result *r = &s->res;
    memset(r, 0, sizeof *r);
    r->omega = s->model_buf;
    r->theta = s->model_buf + ns;
    r->lp = s->model_buf + 2 * ns;
    r->vp1 = s->model_buf + 3 * ns;
    r->vp2 = s->model_buf + 4 * ns;
    r->cap_samples = ns;
    r->impacts = s->impacts;
    r->cap_impacts = ni;
    pl_status st = pl_model_run(m, r, err);
    pl_model_destroy(m);
    if (st == PL_OK && r->n_impacts > r->cap_impacts)
        st = pl_err_set(err, PL_ENUMERIC, "rig simulator: %zu impacts in "
                        "%g s, more than 1 per ms", r->n_impacts, p.duration);
    return st;
}

pl_status pl_simrun_create(pl_simrun **out, const pl_simrun_config *cfg,
                           pl_err *err)
{
    *out = NULL;
    if (!(cfg->rate_hz >= 100 && cfg->rate_hz <= 1e6))
        return pl_err_set(err, PL_EINVAL, "rig simulator: rate %g Hz "
                          "outside [100, 1e6]", cfg->rate_hz);
    if (!(cfg->lead_in_s >= 0 && cfg->lead_in_s <= 600) ||
        !(cfg->tail_s >= 0 && cfg->tail_s <= 600))
        return pl_err_set(err, PL_EINVAL, "rig simulator: lead-in %g s and "
                          "tail %g s must lie in [0, 600]", cfg->lead_in_s,
                          cfg->tail_s);
    if (pl_rigsim_validate(&cfg->rig, err) != PL_OK)
        return err->code;
    pl_simrun *s = calloc(1, sizeof *s);
    if (!s)
        return pl_err_set(err, PL_ENOMEM, "rig simulator: out of memory");
    s->cfg = *cfg;
    if (run_model(s, err) != PL_OK) {
        pl_simrun_destroy(s);
        return err->code;
    }
    const pl_model_result *r = &s->res;
    size_t tail = (size_t)llround(cfg->tail_s * cfg->rate_hz);
    s->release = (size_t)llround(cfg->lead_in_s * cfg->rate_hz);
    s->n = s->release + r->n_samples + tail;
    /* Where the motion ends without leaving the beams (rocked to a stop,
     * or the duration cap) the prism stays in view; otherwise (left the
     * ramp, slip, detachment) the beams see nothing from then on. */
    int gone = r->end == PL_END_LEFT_RAMP || r->end == PL_END_SLIP ||
               r->end == PL_END_DETACHED;
    s->leave = gone ? s->release + r->n_samples : s->n;

    s->codes = malloc(2 * s->n * sizeof *s->codes);
    s->v[0] = calloc(s->n, sizeof *s->v[0]);
    s->v[1] = calloc(s->n, sizeof *s->v[1]);
    s->impact_t = malloc((r->n_impacts + 1) * sizeof *s->impact_t);
    if (!s->codes || !s->v[0] || !s->v[1] || !s->impact_t) {
        pl_simrun_destroy(s);
        return pl_err_set(err, PL_ENOMEM, "rig simulator: out of memory for "
                          "%zu frames", s->n);
    }
    for (size_t k = 0; k < r->n_samples; k++) {
        s->v[0][s->release + k] = r->vp1[k];
        s->v[1][s->release + k] = r->vp2[k];
    }
    if (!gone && r->n_samples > 0) {
        /* still in view after the model stopped: hold its last state */
        for (size_t k = s->release + r->n_samples; k < s->n; k++) {
            s->v[0][k] = r->end == PL_END_STOPPED ? 0.0 : r->vp1[r->n_samples - 1];
            s->v[1][k] = r->end == PL_END_STOPPED ? 0.0 : r->vp2[r->n_samples - 1];
        }
    }
    double t_rel = s->release / cfg->rate_hz;
    for (size_t i = 0; i < r->n_impacts; i++)
        s->impact_t[i] = t_rel + s->impacts[i].t;

    pl_rigsim_truth tr = {
        .n = s->n, .rate_hz = cfg->rate_hz, .v = {s->v[0], s->v[1]},
        .impact_t_s = s->impact_t, .n_impacts = r->n_impacts,
        .release_index = s->release, .leave_index = s->leave,
    };
    pl_rigsim_fit_clip(&s->cfg.rig, &tr);
    if (pl_rigsim_render(&s->cfg.rig, &tr, s->codes, NULL, &s->clipped, err)
        != PL_OK) {
        pl_simrun_destroy(s);
        return err->code;
    }
    *out = s;
    return PL_OK;
}

size_t pl_simrun_frames(const pl_simrun *s) { return s->n; }
const uint16_t *pl_simrun_codes(const pl_simrun *s) { return s->codes; }
const pl_model_result *pl_simrun_model(const pl_simrun *s) { return &s->res; }
size_t pl_simrun_release_index(const pl_simrun *s) { return s->release; }
size_t pl_simrun_leave_index(const pl_simrun *s) { return s->leave; }
size_t pl_simrun_clipped(const pl_simrun *s) { return s->clipped; }
const pl_simrun_config *pl_simrun_get_config(const pl_simrun *s) { return &s->cfg; }

static pl_rigsim_truth truth_of(const pl_simrun *s)
{
    pl_rigsim_truth tr = {
        .n = s->n, .rate_hz = s->cfg.rate_hz, .v = {s->v[0], s->v[1]},
        .impact_t_s = s->impact_t, .n_impacts = s->res.n_impacts,
        .release_index = s->release, .leave_index = s->leave,
    };
    return tr;
}

void pl_simrun_beam_loss_span(const pl_simrun *s, size_t *k0, size_t *k1)
{
    pl_rigsim_truth tr = truth_of(s);
    pl_rigsim_beam_loss_span(&s->cfg.rig, &tr, k0, k1);
}

void pl_simrun_channels(const pl_simrun *s, pl_channel ch[2])
{
    double h[2] = {s->cfg.model.h1, s->cfg.model.h2};
    pl_rigsim_channels(&s->cfg.rig, h, ch);
}

double pl_simrun_code_volts(const pl_simrun *s, uint16_t code)
{
    const pl_rigsim_config *c = &s->cfg.rig;
    double maxdata = (double)((1L << c->adc_bits) - 1);
    return c->adc_min_v + (c->adc_max_v - c->adc_min_v) * code / maxdata;
}

void pl_simrun_metadata(const pl_simrun *s, char *buf, size_t size)
{
    const pl_simrun_config *c = &s->cfg;
    double fs = 0.5 * (c->rig.adc_max_v - c->rig.adc_min_v);
    char t[6][PL_NUM_TEXT_SIZE];   /* numbers that read back (numtext.h) */
    int len = snprintf(buf, size,
                       "prismlab rate_hz=%s full_scale_v=%s "
                       "ldv_scale=%s,%s sign=%d,%d h=%s,%s synthetic=1",
                       pl_num_text(t[0], sizeof t[0], c->rate_hz),
                       pl_num_text(t[1], sizeof t[1], fs),
                       pl_num_text(t[2], sizeof t[2], c->rig.ldv_scale_mps_per_v[0]),
                       pl_num_text(t[3], sizeof t[3], c->rig.ldv_scale_mps_per_v[1]),
                       c->rig.beam_sign[0], c->rig.beam_sign[1],
                       pl_num_text(t[4], sizeof t[4], c->model.h1),
                       pl_num_text(t[5], sizeof t[5], c->model.h2));
    if (len < 0 || (size_t)len >= size)
        return;
    if (c->prism[0])
        len += snprintf(buf + len, size - len, " prism=%s", c->prism);
    if (c->ramp[0] && (size_t)len < size)
        len += snprintf(buf + len, size - len, " ramp=%s", c->ramp);
    if (isfinite(c->nominal_lambda0) && (size_t)len < size)
        snprintf(buf + len, size - len, " lambda0_deg=%s",
                 pl_deg_text(t[0], sizeof t[0], c->nominal_lambda0));
}

pl_status pl_simrun_write_wav(const pl_simrun *s, const char *path,
                              pl_err *err)
{
    const pl_rigsim_config *c = &s->cfg.rig;
    if (c->adc_bits != 16 || c->adc_min_v != -c->adc_max_v)
        return pl_err_set(err, PL_EINVAL, "%s: WAV holds a 16-bit bipolar "
                          "card only (this one: %d bits, %g..%g V)", path,
                          c->adc_bits, c->adc_min_v, c->adc_max_v);
    SF_INFO info = {.samplerate = (int)lround(s->cfg.rate_hz), .channels = 2,
                    .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    if (fabs(info.samplerate - s->cfg.rate_hz) > 1e-9)
        return pl_err_set(err, PL_EINVAL, "%s: WAV needs an integer rate, "
                          "not %g Hz", path, s->cfg.rate_hz);
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    SNDFILE *f = sf_open(pl_atomicfile_temp_path(af), SFM_WRITE, &info);
    if (!f) {
        pl_atomicfile_abort(af);
        return pl_err_set(err, PL_EIO, "%s: %s", path, sf_strerror(NULL));
    }
    char meta[1024];
    pl_simrun_metadata(s, meta, sizeof meta);
    sf_set_string(f, SF_STR_COMMENT, meta);
    sf_set_string(f, SF_STR_SOFTWARE, "prismlab sim");
    /* Offset binary to two's complement: code 32768 (0 V) becomes 0. */
    enum { BLOCK = 4096 };
    short buf[2 * BLOCK];
    for (size_t k = 0; k < s->n; k += BLOCK) {
        size_t m = s->n - k < BLOCK ? s->n - k : BLOCK;
        for (size_t i = 0; i < 2 * m; i++)
            buf[i] = (short)((int)s->codes[2 * k + i] - 32768);
        if (sf_writef_short(f, buf, (sf_count_t)m) != (sf_count_t)m) {
            pl_err_set(err, PL_EIO, "%s: %s", path, sf_strerror(f));
            sf_close(f);
            pl_atomicfile_abort(af);
            return err->code;
        }
    }
    if (sf_close(f) != 0) {
        pl_atomicfile_abort(af);
        return pl_err_set(err, PL_EIO, "%s: cannot finish the file", path);
    }
    return pl_atomicfile_commit(af, err);
}

/* The decimals that write every frame's time at rate_hz exactly: the
 * fewest d with 10^d / rate an integer (4 at 10 kHz, 5 at 20 kHz), -1
 * when no d up to 9 does (44.1 kHz).  A fixed 0.1 ms once made two rows
 * a step at 20 kHz, which the importer then refused. */
static int time_decimals(double rate_hz)
{
    double p = 1;
    for (int d = 0; d <= 9; d++, p *= 10) {
        double m = p / rate_hz;
        if (m >= 1 && m == nearbyint(m))
            return d;
    }
    return -1;
}

/* Frame k's time at rate_hz: with d decimals (time_decimals()), else the
 * shortest text that reads back as the same double. */
static void write_time(FILE *f, size_t k, double rate_hz, int d)
{
    double t = (double)k / rate_hz;
    if (d >= 0) {
        fprintf(f, "%.*f", d, t);
        return;
    }
    char buf[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, t);
        if (strtod(buf, NULL) == t)
            break;
    }
    fputs(buf, f);
}

pl_status pl_simrun_write_csv(const pl_simrun *s, const char *path,
                              pl_err *err)
{
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    char meta[1024];
    pl_simrun_metadata(s, meta, sizeof meta);
    fprintf(f, "# %s\n", meta);
    fprintf(f, "# rig simulator output: two LDV channels in volts as the "
               "DAQ card read them\n");
    fputs("t_s,v1_V,v2_V\n", f);
    int d = time_decimals(s->cfg.rate_hz);
    for (size_t k = 0; k < s->n; k++) {
        write_time(f, k, s->cfg.rate_hz, d);
        fprintf(f, ",%.6f,%.6f\n",
                pl_simrun_code_volts(s, s->codes[2 * k]),
                pl_simrun_code_volts(s, s->codes[2 * k + 1]));
    }
    return pl_atomicfile_commit(af, err);
}

static double deg(double rad) { return rad * 180.0 / M_PI; }

/* The decoder's artefacts and the hum's harmonics, each only when it is
 * on: the chains made before they existed keep their truth files. */
static void write_truth_decoder(FILE *f, const pl_rigsim_config *g)
{
    if (g->track)
        fprintf(f, "# track=1\n# track_cutoff_hz=%.9g\n# track_delay_s=%.9g\n",
                g->track_cutoff_hz, pl_rigsim_track_delay(g));
    if (g->pink)
        fprintf(f, "# pink=1\n# pink_rms_mps=%.9g\n# pink_band_hz=%.9g,%.9g\n",
                g->pink_rms_mps, g->pink_lo_hz, g->pink_hi_hz);
    if (g->dropout)
        fprintf(f, "# dropout=1\n# dropout_rate_hz=%.9g\n"
                   "# dropout_len_s=%.9g,%.9g\n", g->dropout_rate_hz,
                g->dropout_min_s, g->dropout_max_s);
    int harmonics = 0;
    for (int h = 0; h < PL_RIGSIM_HUM_HARMONICS; h++)
        harmonics |= g->hum_harmonic_v[h] > 0;
    if (g->hum && (harmonics || g->hum_phase_rad != 0)) {
        fprintf(f, "# hum_phase_rad=%.9g\n# hum_harmonics_v=", g->hum_phase_rad);
        for (int h = 0; h < PL_RIGSIM_HUM_HARMONICS; h++)
            fprintf(f, "%s%.9g", h ? "," : "", g->hum_harmonic_v[h]);
        fputs("\n", f);
    }
}

/* A lab's faults, each only when it is on (the older chains keep their
 * truth files): the spans on the recording's clock, beams counted from 1. */
static void write_truth_faults(FILE *f, const pl_simrun *s)
{
    const pl_rigsim_config *g = &s->cfg.rig;
    double rate = s->cfg.rate_hz;
    if (g->vibration) {
        fprintf(f, "# vibration=1\n# vib_hz=");
        for (int i = 0; i < g->vib_n; i++)
            fprintf(f, "%s%.9g", i ? "," : "", g->vib_freq_hz[i]);
        fprintf(f, "\n# vib_amp_mps=");
        for (int i = 0; i < g->vib_n; i++)
            fprintf(f, "%s%.9g", i ? "," : "", g->vib_amp_mps[i]);
        fprintf(f, "\n# vib_phase_rad=");
        for (int i = 0; i < g->vib_n; i++)
            fprintf(f, "%s%.9g", i ? "," : "", g->vib_phase_rad[i]);
        fputs("\n", f);
    }
    if (g->beam_loss) {
        size_t k0, k1;
        pl_simrun_beam_loss_span(s, &k0, &k1);
        fprintf(f, "# beam_loss=1\n# beam_loss_beam=%d\n# beam_loss_t_s=%.6f,%.6f\n"
                   "# beam_loss_edge_s=%.9g\n# beam_loss_edge_mps=%.9g\n",
                g->beam_loss_channel + 1, k0 / rate, k1 / rate, g->beam_loss_edge_s,
                g->beam_loss_edge_mps);
    }
    if (g->tail_garbage && s->leave < s->n) {
        double end = fmin((double)s->n, s->leave + ceil(g->tail_garbage_s * rate - 1e-9));
        fprintf(f, "# tail_garbage=1\n# tail_garbage_t_s=%.6f,%.6f\n"
                   "# tail_garbage_mps=%.9g\n", s->leave / rate, end / rate,
                g->tail_garbage_mps);
    }
    if (g->clip) {
        size_t n[2] = {0, 0};
        uint16_t top = (uint16_t)((1L << g->adc_bits) - 1);
        for (size_t k = 0; k < 2 * s->n; k++)
            n[k % 2] += s->codes[k] == 0 || s->codes[k] == top;
        fprintf(f, "# clip=1\n# clip_beam=%d\n# clip_frac=%.9g\n"
                   "# clipped_per_channel=%zu,%zu\n", g->clip_channel + 1,
                g->clip_frac, n[0], n[1]);
    }
}

/* One "# key=value" line of the truth file, the value as the shortest
 * text that reads back (core/numtext.h): 0.0199, not
 * 0.019900000000000001. */
static void truth_num(FILE *f, const char *key, double v)
{
    char t[PL_NUM_TEXT_SIZE];
    fprintf(f, "# %s=%s\n", key, pl_num_text(t, sizeof t, v));
}

pl_status pl_simrun_write_truth(const pl_simrun *s, const char *path,
                                double step, pl_err *err)
{
    const pl_simrun_config *c = &s->cfg;
    const pl_model_params *p = &c->model;
    const pl_model_result *r = &s->res;
    const pl_rigsim_config *g = &c->rig;
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    if (!(step > 0))
        step = 0.01;
    double rate = c->rate_hz, t_rel = s->release / rate;
    fprintf(f, "# prismlab truth v1: what the rig simulator used and what "
               "happened; times on the recording's clock\n");
    fprintf(f, "# prism=%s\n# ramp=%s\n", c->prism[0] ? c->prism : "-",
            c->ramp[0] ? c->ramp : "-");
    fprintf(f, "# law=%s\n", p->law == PL_LAW_LINE ? "line" : "plastic");
    fprintf(f, "# N=%d\n", p->N);
    truth_num(f, "a0_m", p->a0);
    truth_num(f, "mass_kg", p->mass);
    fprintf(f, "# beta_deg=%.9f\n# beta_nominal_deg=%.9f\n", deg(p->beta),
            deg(c->nominal_beta));
    fprintf(f, "# lambda0_deg=%.9f\n# lambda0_nominal_deg=%.9f\n",
            deg(p->lambda0), deg(c->nominal_lambda0));
    truth_num(f, "mu_s", p->mu_s);
    truth_num(f, "mu", isnan(p->mu) ? p->mu_s : p->mu);
    truth_num(f, "h1_m", p->h1);
    truth_num(f, "h2_m", p->h2);
    truth_num(f, "ramp_length_m", p->ramp_length);
    truth_num(f, "rate_hz", rate);
    fprintf(f, "# frames=%zu\n", s->n);
    fprintf(f, "# release_t_s=%.9f\n# release_frame=%zu\n", t_rel, s->release);
    fprintf(f, "# leave_t_s=%.9f\n# leave_frame=%zu\n", s->leave / rate, s->leave);
    fprintf(f, "# end=%s\n# end_t_s=%.9f\n", pl_model_end_name(r->end),
            t_rel + r->t_end);
    fprintf(f, "# impacts=%zu\n# Lp_end=%.9f\n# omega_end_rad_s=%.9f\n",
            r->n_impacts, r->lp_end, r->omega_end);
    fprintf(f, "# ratio=%.9f\n", r->n_impacts ? s->impacts[0].ratio : NAN);
    fprintf(f, "# seed=%lu\n# clipped=%zu\n", g->seed, s->clipped);
    char t0[PL_NUM_TEXT_SIZE], t1[PL_NUM_TEXT_SIZE];
    fprintf(f, "# ldv_scale_mps_per_v=%s,%s\n# beam_sign=%d,%d\n",
            pl_num_text(t0, sizeof t0, g->ldv_scale_mps_per_v[0]),
            pl_num_text(t1, sizeof t1, g->ldv_scale_mps_per_v[1]),
            g->beam_sign[0], g->beam_sign[1]);
    fprintf(f, "# impact_shape=%d\n# impact_duration_s=%.9g\n", g->impact_shape,
            g->impact_duration_s);
    fprintf(f, "# ringing=%d\n# ring_freq_hz=%.9g\n# ring_decay_s=%.9g\n"
               "# ring_rel_amp=%.9g\n", g->ringing, g->ring_freq_hz,
            g->ring_decay_s, g->ring_rel_amp);
    fprintf(f, "# noise=%d\n# noise_rms_mps=%.9g\n", g->noise, g->noise_rms_mps);
    fprintf(f, "# speckle=%d\n# speckle_rate_hz=%.9g\n# speckle_len_s=%.9g\n",
            g->speckle, g->speckle_rate_hz, g->speckle_len_s);
    fprintf(f, "# offset=%d\n# offset_v=%.9g,%.9g\n", g->offset, g->offset_v[0],
            g->offset_v[1]);
    fprintf(f, "# hum=%d\n# hum_freq_hz=%.9g\n# hum_amp_v=%.9g\n", g->hum,
            g->hum_freq_hz, g->hum_amp_v);
    write_truth_decoder(f, g);
    write_truth_faults(f, s);
    fprintf(f, "# adc=%d bits over %.9g..%.9g V\n", g->adc_bits, g->adc_min_v,
            g->adc_max_v);
    fputs("kind,t_s,omega_rad_s,Lp,omega_minus,omega_plus,ratio\n", f);
    fprintf(f, "release,%.6f,0,0,,,\n", t_rel);
    size_t every = (size_t)llround(step * rate);
    if (every < 1)
        every = 1;
    size_t next_imp = 0;
    for (size_t k = 0; k < r->n_samples; k++) {
        double t = k / rate;
        while (next_imp < r->n_impacts && s->impacts[next_imp].t <= t) {
            const pl_model_impact *im = &s->impacts[next_imp];
            fprintf(f, "impact,%.9f,,%.9f,%.9f,%.9f,%.9f\n", t_rel + im->t,
                    r->lp[k], im->omega_minus, im->omega_plus, im->ratio);
            next_imp++;
        }
        if (k % every == 0)
            fprintf(f, "sample,%.6f,%.9f,%.9f,,,\n", t_rel + t, r->omega[k],
                    r->lp[k]);
    }
    for (; next_imp < r->n_impacts; next_imp++) {
        const pl_model_impact *im = &s->impacts[next_imp];
        fprintf(f, "impact,%.9f,,%.9f,%.9f,%.9f,%.9f\n", t_rel + im->t,
                r->lp_end, im->omega_minus, im->omega_plus, im->ratio);
    }
    if (s->leave < s->n)
        fprintf(f, "leave,%.6f,%.9f,%.9f,,,\n", s->leave / rate, r->omega_end,
                r->lp_end);
    return pl_atomicfile_commit(af, err);
}
