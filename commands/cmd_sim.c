/* commands/cmd_sim.c - `prismlab sim`: the rig simulator as a command.
 *
 * Runs the prism model for a catalogued (or numerically given) prism and
 * ramp, passes the gauge velocities through the rig's signal chain and
 * writes what the DAQ card would have recorded (WAV or CSV) and the ground
 * truth.  Only this file prints. */
#include "acquire/record.h"
#include "acquire/sim/sim_options.h"
#include "acquire/sim/simrun.h"
#include "commands.h"
#include "core/cli.h"
#include "core/numtext.h"
#include "core/sample.h"
#include "model/prism/options.h"
#include "model/validate/setup.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

static const pl_cli_command command = {
    .name = "sim",
    .usage =
    "usage: prismlab sim --prism NAME --ramp NAME [--db FILE] --lambda0-deg DEG\n"
    "                    --h1 M --h2 M (--wav FILE | --csv FILE | --store)\n"
    "                    [--truth FILE] [options]\n"
    "       prismlab sim --N N --a0 M --beta-deg DEG --mu-s MU --lambda0-deg DEG\n"
    "                    --h1 M --h2 M (--wav FILE | --csv FILE | --store) [options]\n"
    "       prismlab sim --random-chain SEED [--faults] (--wav FILE | --csv FILE)\n"
    "                    [--truth FILE] [fault options]\n",
    .about =
    "The rig simulator: simulates the prism (seed 000 sections 2-4) and writes\n"
    "what the two LDVs and the DAQ card would have recorded, with the bench's\n"
    "imperfections (docs/rig.md), plus the ground truth.  The output files\n"
    "carry prismlab metadata and are marked synthetic; `prismlab import` reads\n"
    "them.  Numbers given with --prism and --ramp override the catalogue (e.g.\n"
    "the ramp's true inclination).  A lab's faults (ramp vibration, a beam\n"
    "losing the prism, garbage after it left, clipping at the card's range) are\n"
    "off unless asked for: --faults draws them with --random-chain, and the\n"
    "fault options set them, also on top of a random chain.\n",
    .footer =
    "Summary: frames=<n> release_t=<s> leave_t=<s|none> impacts=<n>\n"
    "Lp_end=<value> status=<end|stopped|left_ramp|slip|detached> clipped=<n>\n"};

static void progress(void *ctx, long long frames, long long total)
{
    (void)ctx;
    if (total > 0)
        pl_cli_progress("sim", (unsigned long long)frames, (unsigned long long)total);
}

/* The simulator playing the rig (prismlab acquire with [daq] source =
 * sim).  Here rather than in sim_source.c because it looks the prism and
 * ramp up in the catalogue (model/validate/setup.h), which acquire/sim's
 * library files may not include. */
pl_status pl_sim_rig_options(pl_sim_options **out, const pl_rigconf *rc,
                             const char *db_path, const char *config,
                             pl_err *err)
{
    *out = NULL;
    const pl_rig_sim *rs = &rc->sim;
    const char *sp = rs->prism[0] ? rs->prism : rc->prism;
    const char *sm = rs->ramp[0] ? rs->ramp : rc->ramp;
    double sl = !isnan(rs->lambda0_deg) ? rs->lambda0_deg : rc->lambda0_deg;
    if (!sp[0] || !sm[0] || isnan(sl))
        return pl_err_set(err, PL_EINVAL, "%s: source = sim needs [sim] (or [run]) "
                          "prism, ramp and lambda0_deg", config);
    pl_sim_options *o = malloc(sizeof *o);
    if (!o)
        return pl_err_set(err, PL_ENOMEM, "sim: out of memory");
    pl_sim_options_init(o);
    pl_simrun_config *sr = &o->run;
    sr->rig.seed = rs->seed > 0 ? (unsigned long)rs->seed : 1;
    o->draw_seed = rs->seed < 0;
    o->paced = rs->paced;
    if (pl_model_params_lookup(&sr->model, db_path, sp, sm, err) != PL_OK) {
        free(o);
        return err->code;
    }
    snprintf(sr->prism, sizeof sr->prism, "%s", sp);
    snprintf(sr->ramp, sizeof sr->ramp, "%s", sm);
    sr->model.lambda0 = sl * M_PI / 180;
    sr->nominal_lambda0 = sr->model.lambda0;
    double catalogued = sr->model.ramp_length;
    if (!isnan(rs->ramp_length_m))
        sr->model.ramp_length = rs->ramp_length_m;
    char given[400] = "";
    if (rs->ramp_length_m == 0 && catalogued > 0)
        snprintf(given, sizeof given, ", not on the %g m the catalogue gives ramp "
                 "'%.200s' (leave the key out to use those)", catalogued, sm);
    if (rs->ramp_length_m == 0)
        snprintf(o->note, sizeof o->note, "[sim] ramp_length_m = 0: the prism rolls on "
                 "an endless ramp until the recording ends%s", given);
    else if (!(sr->model.ramp_length > 0))
        snprintf(o->note, sizeof o->note, "warning: ramp '%s' has no length in the "
                 "catalogue: the prism rolls on an endless ramp until the recording "
                 "ends (give the ramp one with 'prismlab ramp add NAME ... --length M', "
                 "or [sim] ramp_length_m = M in %s)", sm, config);
    if (!isnan(rs->motion_s))
        sr->model.duration = rs->motion_s;
    sr->model.h1 = rc->beams.beam_height_m[0];
    sr->model.h2 = rc->beams.beam_height_m[1];
    for (int i = 0; i < 2; i++) {
        sr->rig.ldv_scale_mps_per_v[i] = rc->beams.ldv_scale_mps_per_v[i];
        sr->rig.beam_sign[i] = rc->beams.beam_sign[i];
    }
    sr->rate_hz = rc->comedi.rate_hz;
    *out = o;
    return PL_OK;
}

/* --store: the simulated recording goes the way a live one does, through
 * the sim source, the pump and the writer, under the recorder lock. */
static pl_status record(const char *db, const pl_simrun_config *run, int paced,
                        const char *experiment, long long *run_id, pl_err *err)
{
    pl_sim_options so = {.run = *run, .paced = paced};
    pl_source_config beams;
    pl_source_config_init(&beams);
    pl_source_spec spec = pl_sim_spec(&so, &beams);
    pl_record_options ro;
    pl_record_options_init(&ro);
    ro.experiment = experiment;
    ro.writer.block_when_full = !paced;  /* paced behaves as a live card */
    ro.pump.progress = progress;
    pl_recorder *r = NULL;
    long long interrupted = 0;
    if (pl_recorder_open(&r, pl_cli_db_path(db), &ro.writer, &interrupted, err) != PL_OK)
        return err->code;
    if (interrupted > 0)
        fprintf(stderr, "prismlab sim: marked %lld unfinished run%s interrupted\n",
                interrupted, interrupted == 1 ? "" : "s");
    void *src = NULL;
    pl_source_info info;
    pl_status st = pl_source_open(&spec, &src, &info, err);
    if (st == PL_OK)
        st = pl_recorder_run(r, &pl_source_sim, src, &info, &ro, run_id, NULL, err);
    char same[512] = "";
    if (st == PL_OK)
        pl_recorder_same_samples(r, *run_id, same, sizeof same);
    if (same[0])
        fprintf(stderr, "prismlab sim: %s\n", same);
    pl_source_sim.close(src);
    pl_recorder_close(r);
    return st;
}

/* What the command line asked for, before it becomes a configuration:
 * NaN (and -1) where it gave nothing. */
typedef struct {
    pl_simrun_config cfg;       /* the recording's and the chain's options */
    pl_rigsim_config fx;        /* the fault options' switches and levels */
    double adc_range;           /* --adc-range-v, NaN: the card's 10 V */
    int faults;                 /* --faults */
    pl_model_options model;
    long seed, random_seed;
    double nlam, nbeta, ldv, track_hz, pink_rms, dropout_hz, tstep;
    int store, paced, ideal;
    const char *experiment, *db, *wav, *csv, *truth;
} sim_opts;

static void sim_opts_init(sim_opts *o)
{
    memset(o, 0, sizeof *o);
    pl_simrun_config_default(&o->cfg);
    pl_model_options_init(&o->model);
    o->seed = 1;
    o->random_seed = -1;
    o->nlam = o->nbeta = o->ldv = NAN;
    o->track_hz = o->pink_rms = o->dropout_hz = NAN;
    o->tstep = 0.01;
    pl_rigsim_config_default(&o->fx);
    o->adc_range = NAN;
}

/* Splits text at commas into at most max numbers; returns how many, -1
 * when one is not a finite number. */
static int numbers(const char *text, char sep, double *out, int max)
{
    int n = 0;
    const char *p = text;
    while (n < max) {
        char *end;
        out[n] = strtod(p, &end);
        if (end == p || !isfinite(out[n]))
            return -1;
        n++;
        if (*end == '\0')
            return n;
        if (*end != sep)
            return -1;
        p = end + 1;
    }
    return -1;
}

static int channel_of(double x) { return x == 1 ? 0 : x == 2 ? 1 : -1; }

static pl_status opt_beam_loss(const pl_opt *opt, const char *v, pl_err *err)
{
    pl_rigsim_config *fx = opt->dest;
    double a[4];
    int n = numbers(v, ',', a, 4);
    if (n < 3 || channel_of(a[0]) < 0 || !(a[1] >= 0) || !(a[2] > 0) ||
        (n == 4 && !(a[3] >= 0)))
        return pl_err_set(err, PL_EINVAL, "option '--%s': want CH,START_S,LEN_S"
                          "[,EDGE_S] with CH 1 or 2, START_S >= 0, LEN_S > 0 "
                          "(got '%s')", opt->name, v);
    fx->beam_loss = 1;
    fx->beam_loss_channel = channel_of(a[0]);
    fx->beam_loss_start_s = a[1];
    fx->beam_loss_len_s = a[2];
    fx->beam_loss_edge_s = n == 4 ? a[3] : 0.0;
    return PL_OK;
}

static pl_status opt_vibration(const pl_opt *opt, const char *v, pl_err *err)
{
    pl_rigsim_config *fx = opt->dest;
    char buf[256];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        double a[3] = {0, 0, 0};
        int m = numbers(tok, ':', a, 3);
        if (n == PL_RIGSIM_VIB_MAX || m < 2 || !(a[0] > 0) || !(a[1] >= 0))
            return pl_err_set(err, PL_EINVAL, "option '--%s': want 1..%d of "
                              "F_HZ:A_MPS[:PHASE_RAD] separated by commas (got "
                              "'%s')", opt->name, PL_RIGSIM_VIB_MAX, v);
        fx->vib_freq_hz[n] = a[0];
        fx->vib_amp_mps[n] = a[1];
        fx->vib_phase_rad[n++] = a[2];
    }
    if (n == 0)
        return pl_err_set(err, PL_EINVAL, "option '--%s': no sinusoid", opt->name);
    fx->vibration = 1;
    fx->vib_n = n;
    return PL_OK;
}

static pl_status opt_tail_garbage(const pl_opt *opt, const char *v, pl_err *err)
{
    pl_rigsim_config *fx = opt->dest;
    double a[2];
    int n = numbers(v, ',', a, 2);
    if (n < 1 || !(a[0] >= 0 && a[0] <= 600) || (n == 2 && !(a[1] >= 0 && a[1] <= 10)))
        return pl_err_set(err, PL_EINVAL, "option '--%s': want S[,MPS] with "
                          "0 <= S <= 600 and 0 <= MPS <= 10 (got '%s')",
                          opt->name, v);
    fx->tail_garbage = 1;
    fx->tail_garbage_s = a[0];
    if (n == 2)
        fx->tail_garbage_mps = a[1];
    return PL_OK;
}

static pl_status opt_clip(const pl_opt *opt, const char *v, pl_err *err)
{
    pl_rigsim_config *fx = opt->dest;
    double a[2];
    if (numbers(v, ',', a, 2) != 2 || channel_of(a[0]) < 0 ||
        !(a[1] > 0 && a[1] <= 10))
        return pl_err_set(err, PL_EINVAL, "option '--%s': want CH,FRAC with CH "
                          "1 or 2 and 0 < FRAC <= 10 (got '%s')", opt->name, v);
    fx->clip = 1;
    fx->clip_channel = channel_of(a[0]);
    fx->clip_frac = a[1];
    return PL_OK;
}

/* The fault options on top of the chain (drawn or given): each one given
 * replaces that fault; the tail grows to hold the garbage and 0.3 s. */
static void apply_faults(sim_opts *o)
{
    pl_simrun_config *cfg = &o->cfg;
    pl_rigsim_config *rig = &cfg->rig, *fx = &o->fx;
    if (fx->vibration) {
        rig->vibration = 1;
        rig->vib_n = fx->vib_n;
        memcpy(rig->vib_freq_hz, fx->vib_freq_hz, sizeof rig->vib_freq_hz);
        memcpy(rig->vib_amp_mps, fx->vib_amp_mps, sizeof rig->vib_amp_mps);
        memcpy(rig->vib_phase_rad, fx->vib_phase_rad, sizeof rig->vib_phase_rad);
    }
    if (fx->beam_loss) {
        rig->beam_loss = 1;
        rig->beam_loss_channel = fx->beam_loss_channel;
        rig->beam_loss_start_s = fx->beam_loss_start_s;
        rig->beam_loss_len_s = fx->beam_loss_len_s;
        rig->beam_loss_edge_s = fx->beam_loss_edge_s;
        rig->beam_loss_edge_mps = fx->beam_loss_edge_mps;
    }
    if (fx->tail_garbage) {
        rig->tail_garbage = 1;
        rig->tail_garbage_s = fx->tail_garbage_s;
        rig->tail_garbage_mps = fx->tail_garbage_mps;
        if (cfg->tail_s < fx->tail_garbage_s + 0.3)
            cfg->tail_s = fx->tail_garbage_s + 0.3;
    }
    if (fx->clip) {
        rig->clip = 1;
        rig->clip_channel = fx->clip_channel;
        rig->clip_frac = fx->clip_frac;
    }
    if (!isnan(o->adc_range)) {
        rig->clip = 0; /* the range given is the range */
        rig->adc_min_v = -o->adc_range;
        rig->adc_max_v = o->adc_range;
    }
}

/* The model's parameters from the catalogue and the numbers given. */
static int apply_model(sim_opts *o, pl_err *err)
{
    pl_simrun_config *cfg = &o->cfg;
    pl_model_params *p = &cfg->model;
    if (pl_model_options_check(&o->model, err) != PL_OK)
        return pl_cli_usage_error(command.name, "%s", err->msg);
    if (o->model.prism) {
        if (pl_model_params_lookup(p, pl_cli_db_path(o->db), o->model.prism,
                                   o->model.ramp, err) != PL_OK)
            return pl_cli_fail(command.name, err);
        snprintf(cfg->prism, sizeof cfg->prism, "%s", o->model.prism);
        snprintf(cfg->ramp, sizeof cfg->ramp, "%s", o->model.ramp);
        cfg->nominal_beta = p->beta;
    }
    pl_model_options_apply(&o->model, p);
    /* A beam above the prism records nothing but clipped noise (issue
     * 30: --h1 0.05 gave 54,803 clipped samples and exit status 0), and
     * one at 0 sees no rotation: refused before simulating. */
    char what[96] = "this prism";
    if (o->model.prism)
        snprintf(what, sizeof what, "prism '%.60s'", o->model.prism);
    if (pl_prism_inputs_check(what, p->N, p->a0, p->beta, p->h1, p->h2, NAN,
                              err) != PL_OK)
        return pl_cli_usage_error(command.name, "%s", err->msg);
    cfg->nominal_lambda0 = isnan(o->nlam) ? p->lambda0 : o->nlam * DEG;
    if (!isnan(o->nbeta))
        cfg->nominal_beta = o->nbeta * DEG;
    else if (isnan(cfg->nominal_beta))
        cfg->nominal_beta = p->beta;
    return PL_EXIT_OK;
}

/* The chain's options that are more than one field: the seed, one scale
 * for both decoders, the artefacts a level switches on, then --ideal
 * (which turns every artefact off, those too). */
static void apply_chain(sim_opts *o)
{
    pl_rigsim_config *rig = &o->cfg.rig;
    rig->seed = (unsigned long)o->seed;
    if (!isnan(o->ldv))
        rig->ldv_scale_mps_per_v[0] = rig->ldv_scale_mps_per_v[1] = o->ldv;
    if (!isnan(o->track_hz)) {
        rig->track = 1;
        rig->track_cutoff_hz = o->track_hz;
    }
    if (!isnan(o->pink_rms)) {
        rig->pink = 1;
        rig->pink_rms_mps = o->pink_rms;
    }
    if (!isnan(o->dropout_hz)) {
        rig->dropout = 1;
        rig->dropout_rate_hz = o->dropout_hz;
    }
    if (o->ideal)
        pl_rigsim_config_ideal(rig);
}

/* Simulates, writes what was asked and prints the summary line. */
static int run_and_write(sim_opts *o, const char *cmd, pl_err *err)
{
    const pl_simrun_config *cfg = &o->cfg;
    pl_simrun *s = NULL;
    if (pl_simrun_create(&s, cfg, err) != PL_OK)
        return pl_cli_fail(cmd, err);
    pl_status st = PL_OK;
    if (o->wav)
        st = pl_simrun_write_wav(s, o->wav, err);
    if (st == PL_OK && o->csv)
        st = pl_simrun_write_csv(s, o->csv, err);
    if (st == PL_OK && o->truth)
        st = pl_simrun_write_truth(s, o->truth, o->tstep, err);
    long long run_id = -1;
    if (st == PL_OK && o->store)
        st = record(o->db, cfg, o->paced, o->experiment, &run_id, err);
    if (st != PL_OK) {
        pl_simrun_destroy(s);
        return pl_cli_fail(cmd, err);
    }
    const pl_model_result *r = pl_simrun_model(s);
    size_t nf = pl_simrun_frames(s), leave = pl_simrun_leave_index(s);
    char leave_t[32] = "none";
    if (leave < nf)
        snprintf(leave_t, sizeof leave_t, "%.4f", leave / cfg->rate_hz);
    if (pl_simrun_clipped(s) > 0)
        fprintf(stderr, "prismlab sim: warning: the ADC clipped %zu sample%s "
                "(a larger --ldv-scale gives fewer volts per m/s)\n",
                pl_simrun_clipped(s), pl_plural_s((long long)pl_simrun_clipped(s)));
    FILE *out = pl_cli_result_stream(o->wav, o->csv, o->truth);
    fprintf(out, "frames=%zu release_t=%.4f leave_t=%s impacts=%zu Lp_end=%.4f "
           "status=%s clipped=%zu\n", nf, pl_simrun_release_index(s) / cfg->rate_hz,
           leave_t, r->n_impacts, r->lp_end, pl_model_end_name(r->end),
           pl_simrun_clipped(s));
    if (run_id >= 0)
        fprintf(out, "run=%lld SYNTHETIC\n", run_id);
    pl_simrun_destroy(s);
    return PL_EXIT_OK;
}

/* The option table, pointing into o; t has room for cap rows. */
static void sim_table(pl_opt *t, size_t cap, sim_opts *o)
{
    pl_opt rows[] = {
        PL_OPT_GROUP("The true parameters (what is simulated):"),
        PL_OPT_MODEL_PARAMS(&o->model),
        PL_OPT_DOUBLE("max-motion", &o->cfg.model.duration, 1e-3, 3600, "S",
                      "cap on the simulated motion, s (default 30)"),
        PL_OPT_DB(&o->db),
        PL_OPT_GROUP("What the operator wrote down (recorded in the files, not simulated):"),
        PL_OPT_DOUBLE("nominal-lambda0-deg", &o->nlam, -180, 180, "DEG",
                      "default: the true value"),
        PL_OPT_DOUBLE("nominal-beta-deg", &o->nbeta, -90, 90, "DEG",
                      "default: the catalogue's (or true) value"),
        PL_OPT_GROUP("The recording:"),
        PL_OPT_DOUBLE("rate", &o->cfg.rate_hz, 100, 1e6, "HZ",
                      "samples per second per channel (default 10000)"),
        PL_OPT_DOUBLE("lead-in", &o->cfg.lead_in_s, 0, 600, "S",
                      "quiet recording before the release (default 1)"),
        PL_OPT_DOUBLE("tail", &o->cfg.tail_s, 0, 600, "S",
                      "recording after the prism left (default 0.5)"),
        PL_OPT_INT("seed", &o->seed, 0, 2147483647L, "S",
                   "random seed of the imperfections (default 1)"),
        PL_OPT_DOUBLE("ldv-scale", &o->ldv, 1e-9, 1e3, "MPS_PER_V", "decoder scale (default 0.025)"),
        PL_OPT_SIGN("sign1", &o->cfg.rig.beam_sign[0], "beam directions (default +1, -1)"),
        PL_OPT_SIGN("sign2", &o->cfg.rig.beam_sign[1], "the second beam's"),
        PL_OPT_FLAG("ideal", &o->ideal, "every imperfection off (the ADC stays)"),
        PL_OPT_SET_INT("no-impact-shape", &o->cfg.rig.impact_shape, 0, "one imperfection off"),
        PL_OPT_SET_INT("no-ringing", &o->cfg.rig.ringing, 0, "one imperfection off"),
        PL_OPT_SET_INT("no-noise", &o->cfg.rig.noise, 0, "one imperfection off"),
        PL_OPT_SET_INT("no-speckle", &o->cfg.rig.speckle, 0, "one imperfection off"),
        PL_OPT_SET_INT("no-offset", &o->cfg.rig.offset, 0, "one imperfection off"),
        PL_OPT_SET_INT("no-hum", &o->cfg.rig.hum, 0, "one imperfection off"),
        PL_OPT_DOUBLE("noise-rms", &o->cfg.rig.noise_rms_mps, 0, 10, "MPS", "white noise level"),
        PL_OPT_DOUBLE("ring-freq-hz", &o->cfg.rig.ring_freq_hz, 1, 1e6, "HZ", "impact ringing"),
        PL_OPT_DOUBLE("ring-decay-s", &o->cfg.rig.ring_decay_s, 1e-6, 10, "S", "its e-folding time"),
        PL_OPT_DOUBLE("ring-amp", &o->cfg.rig.ring_rel_amp, 0, 100, "REL",
                      "its amplitude / |velocity step|"),
        PL_OPT_DOUBLE("speckle-rate-hz", &o->cfg.rig.speckle_rate_hz, 0, 1e4, "HZ",
                      "speckle spikes a second"),
        PL_OPT_DOUBLE("hum-amp-v", &o->cfg.rig.hum_amp_v, 0, 10, "V", "mains hum"),
        PL_OPT_DOUBLE("hum-freq-hz", &o->cfg.rig.hum_freq_hz, 1, 1e4, "HZ", "its frequency"),
        PL_OPT_DOUBLE("track-hz", &o->track_hz, 1, 1e7, "HZ",
                      "the decoder's tracking filter (2nd-order Bessel) at\n"
                      "this -3 dB point (default: none)"),
        PL_OPT_DOUBLE("pink-rms", &o->pink_rms, 0, 10, "MPS",
                      "1/f noise of this RMS over 0.5 Hz .. 2 kHz (default: none)"),
        PL_OPT_DOUBLE("dropout-rate-hz", &o->dropout_hz, 0, 1e4, "HZ",
                      "drop-outs to 0 V of 0.3 .. 3 ms, this many a second\n"
                      "on each channel (default: none)"),
        PL_OPT_INT("random-chain", &o->random_seed, 0, 2147483647L, "SEED",
                   "the whole recording drawn at random from SEED, as the\n"
                   "corpus test draws it (prism, ramp, heights, law, rate and\n"
                   "every artefact's level: docs/rig.md); replaces the\n"
                   "parameters above"),
        PL_OPT_FLAG("faults", &o->faults,
                    "with --random-chain: draw a lab's faults on top of the\n"
                    "chain (vibration, beam loss, tail garbage, clipping, each\n"
                    "with its probability and levels: docs/rig.md), as the\n"
                    "faults corpus test draws them"),
        PL_OPT_GROUP("A lab's faults (off unless given; also on top of --random-chain):"),
        PL_OPT_CALLBACK("beam-loss", &o->fx, opt_beam_loss, "CH,START_S,LEN_S[,EDGE_S]",
                        "beam CH (1 or 2) loses the prism from START_S (the\n"
                        "recording's clock) for LEN_S: its decoder outputs 0 V\n"
                        "plus the noise, with EDGE_S of garbage at each edge\n"
                        "(default 0); the other beam keeps it"),
        PL_OPT_CALLBACK("vibration", &o->fx, opt_vibration, "F:A[:PH],...",
                        "the ramp shakes: 1..3 sinusoids of F Hz, A m/s\n"
                        "and phase PH rad (default 0), the same velocity added\n"
                        "to both beams while the prism is in view"),
        PL_OPT_CALLBACK("tail-garbage", &o->fx, opt_tail_garbage, "S[,MPS]",
                        "after the prism leaves the beams, S s of garbage (a\n"
                        "random walk of MPS m/s RMS, default 0.03, and spikes)\n"
                        "on both channels, then 0 V; the tail grows to S + 0.3 s"),
        PL_OPT_DOUBLE("adc-range-v", &o->adc_range, 1e-3, 1e3, "V",
                      "the card's range +-V (default 10): a channel beyond it\n"
                      "clips at the rails"),
        PL_OPT_CALLBACK("clip", &o->fx, opt_clip, "CH,FRAC",
                        "the card's range set to FRAC x channel CH's peak\n"
                        "volts (never below what keeps the other channel in):\n"
                        "CH clips flat where it is faster"),
        PL_OPT_GROUP("Output:"),
        PL_OPT_STRING("wav", &o->wav, "FILE", "16-bit PCM, full scale = the card's 10 V"),
        PL_OPT_STRING("csv", &o->csv, "FILE", "volts, columns t_s,v1_V,v2_V"),
        PL_OPT_FLAG("store", &o->store,
                    "record into the database (--db) as a live recorder\n"
                    "would, through the writer; the run is SYNTHETIC"),
        PL_OPT_STRING("experiment", &o->experiment, "E",
                      "with --store: file the run under E (created if new)"),
        PL_OPT_FLAG("paced", &o->paced,
                    "with --store: deliver the frames in real time, as the\n"
                    "card would (a rehearsal of a live recording)"),
        PL_OPT_STRING("truth", &o->truth, "FILE", "the ground truth (CSV with '#' parameter lines)"),
        PL_OPT_DOUBLE("truth-step", &o->tstep, 1e-6, 10, "S",
                      "spacing of the truth's omega/Lp samples (default 0.01)"),
        PL_OPT_END()};
    assert(sizeof rows <= cap * sizeof *t);
    memcpy(t, rows, sizeof rows);
}

int pl_cmd_sim(int argc, char **argv)
{
    const char *cmd = command.name;
    pl_err err = {0};
    sim_opts o;
    sim_opts_init(&o);
    pl_simrun_config *cfg = &o.cfg;
    pl_opt opts[80];
    sim_table(opts, sizeof opts / sizeof *opts, &o);
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (!o.wav && !o.csv && !o.store)
        return pl_cli_usage_error(cmd, "nothing to write: give --wav FILE, --csv FILE or --store");
    if ((o.paced || o.experiment) && !o.store)
        return pl_cli_usage_error(cmd, "--paced and --experiment go with --store");
    if (o.faults && o.random_seed < 0)
        return pl_cli_usage_error(cmd, "--faults goes with --random-chain");
    if (o.random_seed >= 0 && o.faults) {
        pl_simrun_config_random_faults(cfg, (unsigned long)o.random_seed);
    } else if (o.random_seed >= 0) {
        pl_simrun_config_random(cfg, (unsigned long)o.random_seed);
    } else {
        if ((rc = apply_model(&o, &err)) != PL_EXIT_OK)
            return rc;
        apply_chain(&o);
    }
    apply_faults(&o);
    double frames_max = (cfg->lead_in_s + cfg->model.duration + cfg->tail_s) * cfg->rate_hz;
    if (frames_max > 1e8)
        return pl_cli_usage_error(cmd, "(lead-in + max-motion + tail) x rate = %g "
                                  "frames: at most 1e8", frames_max);
    return run_and_write(&o, cmd, &err);
}
