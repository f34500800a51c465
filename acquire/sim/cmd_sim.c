/* acquire/sim/cmd_sim.c - `prismlab sim`: the rig simulator as a command.
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
#include "model/validate/setup.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

static const char usage[] =
    "usage: prismlab sim --prism NAME --ramp NAME [--db FILE] --lambda0-deg DEG\n"
    "                    --h1 M --h2 M (--wav FILE | --csv FILE | --store)\n"
    "                    [--truth FILE] [options]\n"
    "       prismlab sim --N N --a0 M --beta-deg DEG --mu-s MU --lambda0-deg DEG\n"
    "                    --h1 M --h2 M (--wav FILE | --csv FILE | --store) [options]\n"
    "       prismlab sim --random-chain SEED (--wav FILE | --csv FILE) [--truth FILE]\n\n"
    "The rig simulator: simulates the prism (seed 000 sections 2-4) and writes\n"
    "what the two LDVs and the DAQ card would have recorded, with the bench's\n"
    "imperfections (docs/rig.md), plus the ground truth.  The output files\n"
    "carry prismlab metadata and are marked synthetic; `prismlab import` reads\n"
    "them.\n\n"
    "The true parameters (what is simulated):\n"
    "  --prism NAME, --ramp NAME   catalogue entries (from --db)\n"
    "  --N N, --a0 M, --beta-deg DEG, --mu-s MU, --mu MU\n"
    "                     numbers; with --prism/--ramp they override the\n"
    "                     catalogue (e.g. the ramp's true inclination)\n"
    "  --lambda0-deg DEG  the true release angle, (0, 180/N + beta)\n"
    "  --h1 M, --h2 M     beam heights above the ramp, m\n"
    "  --law line|plastic the impact law (default line)\n"
    "  --ramp-length M    where the prism leaves the beams (default: the ramp's)\n"
    "  --max-motion S     cap on the simulated motion, s (default 30)\n"
    "What the operator wrote down (recorded in the files, not simulated):\n"
    "  --nominal-lambda0-deg DEG   default: the true value\n"
    "  --nominal-beta-deg DEG      default: the catalogue's (or true) value\n"
    "The recording:\n"
    "  --rate HZ          samples per second per channel (default 10000)\n"
    "  --lead-in S        quiet recording before the release (default 1)\n"
    "  --tail S           recording after the prism left (default 0.5)\n"
    "  --seed S           random seed of the imperfections (default 1)\n"
    "  --ldv-scale MPS_PER_V   decoder scale (default 0.025)\n"
    "  --sign1 +-1, --sign2 +-1  beam directions (default +1, -1)\n"
    "  --ideal            every imperfection off (the ADC stays)\n"
    "  --no-impact-shape, --no-ringing, --no-noise, --no-speckle,\n"
    "  --no-offset, --no-hum    one imperfection off\n"
    "  --noise-rms MPS, --ring-freq-hz HZ, --ring-decay-s S, --ring-amp REL,\n"
    "  --speckle-rate-hz HZ, --hum-amp-v V, --hum-freq-hz HZ   their levels\n"
    "  --track-hz HZ      the decoder's tracking filter (2nd-order Bessel) at\n"
    "                     this -3 dB point (default: none)\n"
    "  --pink-rms MPS     1/f noise of this RMS over 0.5 Hz .. 2 kHz (default: none)\n"
    "  --dropout-rate-hz HZ  drop-outs to 0 V of 0.3 .. 3 ms, this many a second\n"
    "                     on each channel (default: none)\n"
    "  --random-chain SEED   the whole recording drawn at random from SEED, as\n"
    "                     the corpus test draws it (prism, ramp, heights, law,\n"
    "                     rate and every artefact's level: docs/rig.md);\n"
    "                     replaces the parameters above\n"
    "Output:\n"
    "  --wav FILE         16-bit PCM, full scale = the card's 10 V\n"
    "  --csv FILE         volts, columns t_s,v1_V,v2_V\n"
    "  --store            record into the database (--db) as a live recorder\n"
    "                     would, through the writer; the run is SYNTHETIC\n"
    "  --experiment E     with --store: file the run under E (created if new)\n"
    "  --paced            with --store: deliver the frames in real time, as\n"
    "                     the card would (a rehearsal of a live recording)\n"
    "  --truth FILE       the ground truth (CSV with '#' parameter lines)\n"
    "  --truth-step S     spacing of the truth's omega/Lp samples (default 0.01)\n\n"
    "Summary: frames=<n> release_t=<s> leave_t=<s|none> impacts=<n>\n"
    "Lp_end=<value> status=<end|stopped|left_ramp|slip|detached> clipped=<n>\n";

enum { O_PRISM = 1000, O_RAMP, O_DB, O_N, O_A0, O_BETA, O_MUS, O_MU, O_LAMBDA0,
       O_H1, O_H2, O_LAW, O_RAMPLEN, O_MAXMOT, O_NLAMBDA0, O_NBETA, O_RATE,
       O_LEAD, O_TAIL, O_SEED, O_LDV, O_SIGN1, O_SIGN2, O_IDEAL, O_NOSHAPE,
       O_NORING, O_NONOISE, O_NOSPECKLE, O_NOOFFSET, O_NOHUM, O_NOISERMS,
       O_RINGF, O_RINGD, O_RINGA, O_SPECKR, O_HUMA, O_WAV, O_CSV, O_TRUTH,
       O_TSTEP, O_STORE, O_EXP, O_PACED, O_TRACK, O_PINK, O_DROPR, O_HUMF,
       O_RANDOM, O_HELP };

static const struct option opts[] = {
    {"prism", required_argument, 0, O_PRISM}, {"ramp", required_argument, 0, O_RAMP},
    {"db", required_argument, 0, O_DB}, {"N", required_argument, 0, O_N},
    {"a0", required_argument, 0, O_A0}, {"beta-deg", required_argument, 0, O_BETA},
    {"mu-s", required_argument, 0, O_MUS}, {"mu", required_argument, 0, O_MU},
    {"lambda0-deg", required_argument, 0, O_LAMBDA0},
    {"h1", required_argument, 0, O_H1}, {"h2", required_argument, 0, O_H2},
    {"law", required_argument, 0, O_LAW},
    {"ramp-length", required_argument, 0, O_RAMPLEN},
    {"max-motion", required_argument, 0, O_MAXMOT},
    {"nominal-lambda0-deg", required_argument, 0, O_NLAMBDA0},
    {"nominal-beta-deg", required_argument, 0, O_NBETA},
    {"rate", required_argument, 0, O_RATE}, {"lead-in", required_argument, 0, O_LEAD},
    {"tail", required_argument, 0, O_TAIL}, {"seed", required_argument, 0, O_SEED},
    {"ldv-scale", required_argument, 0, O_LDV},
    {"sign1", required_argument, 0, O_SIGN1}, {"sign2", required_argument, 0, O_SIGN2},
    {"ideal", no_argument, 0, O_IDEAL},
    {"no-impact-shape", no_argument, 0, O_NOSHAPE},
    {"no-ringing", no_argument, 0, O_NORING}, {"no-noise", no_argument, 0, O_NONOISE},
    {"no-speckle", no_argument, 0, O_NOSPECKLE},
    {"no-offset", no_argument, 0, O_NOOFFSET}, {"no-hum", no_argument, 0, O_NOHUM},
    {"noise-rms", required_argument, 0, O_NOISERMS},
    {"ring-freq-hz", required_argument, 0, O_RINGF},
    {"ring-decay-s", required_argument, 0, O_RINGD},
    {"ring-amp", required_argument, 0, O_RINGA},
    {"speckle-rate-hz", required_argument, 0, O_SPECKR},
    {"hum-amp-v", required_argument, 0, O_HUMA},
    {"hum-freq-hz", required_argument, 0, O_HUMF},
    {"track-hz", required_argument, 0, O_TRACK},
    {"pink-rms", required_argument, 0, O_PINK},
    {"dropout-rate-hz", required_argument, 0, O_DROPR},
    {"random-chain", required_argument, 0, O_RANDOM},
    {"wav", required_argument, 0, O_WAV}, {"csv", required_argument, 0, O_CSV},
    {"truth", required_argument, 0, O_TRUTH},
    {"truth-step", required_argument, 0, O_TSTEP},
    {"store", no_argument, 0, O_STORE}, {"experiment", required_argument, 0, O_EXP},
    {"paced", no_argument, 0, O_PACED},
    {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};

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
    sr->rig.seed = rs->seed ? rs->seed : 1;
    o->paced = rs->paced;
    if (pl_model_params_lookup(&sr->model, db_path, sp, sm, err) != PL_OK) {
        free(o);
        return err->code;
    }
    snprintf(sr->prism, sizeof sr->prism, "%s", sp);
    snprintf(sr->ramp, sizeof sr->ramp, "%s", sm);
    sr->model.lambda0 = sl * M_PI / 180;
    sr->nominal_lambda0 = sr->model.lambda0;
    if (!isnan(rs->ramp_length_m))
        sr->model.ramp_length = rs->ramp_length_m;
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
    pl_source_sim.close(src);
    pl_recorder_close(r);
    return st;
}

/* What the command line asked for, before it becomes a configuration. */
typedef struct {
    pl_simrun_config cfg;
    long n, seed, random_seed;
    double a0, beta, mus, mu, lam, h1, h2, ramplen, nlam, nbeta, tstep;
    int store, paced, random;
    int ideal, off_shape, off_ring, off_noise, off_speckle, off_offset, off_hum;
    const char *experiment, *prism, *ramp, *db, *wav, *csv, *truth;
} sim_opts;

/* The options that set the model or the recording; 1 when c was one. */
static int parse_model_opt(sim_opts *o, int c, pl_status *st, pl_err *err)
{
    pl_simrun_config *cfg = &o->cfg;
    switch (c) {
    case O_PRISM: o->prism = optarg; break;
    case O_RAMP: o->ramp = optarg; break;
    case O_DB: o->db = optarg; break;
    case O_N: *st = pl_parse_long("N", optarg, 3, 100000, &o->n, err); break;
    case O_A0: *st = pl_parse_double("a0", optarg, 1e-6, 10, &o->a0, err); break;
    case O_BETA: *st = pl_parse_double("beta-deg", optarg, -90, 90, &o->beta, err); break;
    case O_MUS: *st = pl_parse_double("mu-s", optarg, 0, 10, &o->mus, err); break;
    case O_MU: *st = pl_parse_double("mu", optarg, 0, 10, &o->mu, err); break;
    case O_LAMBDA0: *st = pl_parse_double("lambda0-deg", optarg, -180, 180, &o->lam, err); break;
    case O_H1: *st = pl_parse_double("h1", optarg, 0, 10, &o->h1, err); break;
    case O_H2: *st = pl_parse_double("h2", optarg, 0, 10, &o->h2, err); break;
    case O_RAMPLEN: *st = pl_parse_double("ramp-length", optarg, 0, 1e3, &o->ramplen, err); break;
    case O_MAXMOT: *st = pl_parse_double("max-motion", optarg, 1e-3, 3600, &cfg->model.duration, err); break;
    case O_NLAMBDA0: *st = pl_parse_double("nominal-lambda0-deg", optarg, -180, 180, &o->nlam, err); break;
    case O_NBETA: *st = pl_parse_double("nominal-beta-deg", optarg, -90, 90, &o->nbeta, err); break;
    case O_RATE: *st = pl_parse_double("rate", optarg, 100, 1e6, &cfg->rate_hz, err); break;
    case O_LEAD: *st = pl_parse_double("lead-in", optarg, 0, 600, &cfg->lead_in_s, err); break;
    case O_TAIL: *st = pl_parse_double("tail", optarg, 0, 600, &cfg->tail_s, err); break;
    case O_RANDOM:
        o->random = 1;
        *st = pl_parse_long("random-chain", optarg, 0, 2147483647L, &o->random_seed, err);
        break;
    default: return 0;
    }
    return 1;
}

/* The options that set the signal chain; 1 when c was one. */
static int parse_rig_opt(sim_opts *o, int c, pl_status *st, pl_err *err)
{
    pl_rigsim_config *rig = &o->cfg.rig;
    double v;
    switch (c) {
    case O_SEED:
        *st = pl_parse_long("seed", optarg, 0, 2147483647L, &o->seed, err);
        rig->seed = (unsigned long)o->seed;
        break;
    case O_LDV:
        *st = pl_parse_double("ldv-scale", optarg, 1e-9, 1e3, &v, err);
        rig->ldv_scale_mps_per_v[0] = rig->ldv_scale_mps_per_v[1] = v;
        break;
    case O_SIGN1: *st = pl_parse_sign("sign1", optarg, &rig->beam_sign[0], err); break;
    case O_SIGN2: *st = pl_parse_sign("sign2", optarg, &rig->beam_sign[1], err); break;
    case O_IDEAL: o->ideal = 1; break;
    case O_NOSHAPE: o->off_shape = 1; break;
    case O_NORING: o->off_ring = 1; break;
    case O_NONOISE: o->off_noise = 1; break;
    case O_NOSPECKLE: o->off_speckle = 1; break;
    case O_NOOFFSET: o->off_offset = 1; break;
    case O_NOHUM: o->off_hum = 1; break;
    case O_NOISERMS: *st = pl_parse_double("noise-rms", optarg, 0, 10, &rig->noise_rms_mps, err); break;
    case O_RINGF: *st = pl_parse_double("ring-freq-hz", optarg, 1, 1e6, &rig->ring_freq_hz, err); break;
    case O_RINGD: *st = pl_parse_double("ring-decay-s", optarg, 1e-6, 10, &rig->ring_decay_s, err); break;
    case O_RINGA: *st = pl_parse_double("ring-amp", optarg, 0, 100, &rig->ring_rel_amp, err); break;
    case O_SPECKR: *st = pl_parse_double("speckle-rate-hz", optarg, 0, 1e4, &rig->speckle_rate_hz, err); break;
    case O_HUMA: *st = pl_parse_double("hum-amp-v", optarg, 0, 10, &rig->hum_amp_v, err); break;
    case O_HUMF: *st = pl_parse_double("hum-freq-hz", optarg, 1, 1e4, &rig->hum_freq_hz, err); break;
    case O_TRACK:
        rig->track = 1;
        *st = pl_parse_double("track-hz", optarg, 1, 1e7, &rig->track_cutoff_hz, err);
        break;
    case O_PINK:
        rig->pink = 1;
        *st = pl_parse_double("pink-rms", optarg, 0, 10, &rig->pink_rms_mps, err);
        break;
    case O_DROPR:
        rig->dropout = 1;
        *st = pl_parse_double("dropout-rate-hz", optarg, 0, 1e4, &rig->dropout_rate_hz, err);
        break;
    default: return 0;
    }
    return 1;
}

/* The model's parameters from the catalogue and the numbers given. */
static int apply_model(sim_opts *o, const char *cmd, pl_err *err)
{
    pl_simrun_config *cfg = &o->cfg;
    pl_model_params *p = &cfg->model;
    if (o->prism) {
        if (pl_model_params_lookup(p, pl_cli_db_path(o->db), o->prism, o->ramp, err) != PL_OK)
            return pl_cli_fail(cmd, err);
        snprintf(cfg->prism, sizeof cfg->prism, "%s", o->prism);
        snprintf(cfg->ramp, sizeof cfg->ramp, "%s", o->ramp);
        cfg->nominal_beta = p->beta;
    } else {
        const char *miss = o->n < 0 ? "--N" : isnan(o->a0) ? "--a0" : isnan(o->beta) ? "--beta-deg"
                         : isnan(o->mus) ? "--mu-s" : NULL;
        if (miss)
            return pl_cli_usage_error(cmd, "missing option %s (or give --prism and --ramp)", miss);
        p->mu = NAN;
        p->ramp_length = 0;
    }
    const char *miss = isnan(o->lam) ? "--lambda0-deg" : isnan(o->h1) ? "--h1"
                     : isnan(o->h2) ? "--h2" : NULL;
    if (miss)
        return pl_cli_usage_error(cmd, "missing option %s", miss);
    if (o->n >= 0) p->N = (int)o->n;
    if (!isnan(o->a0)) p->a0 = o->a0;
    if (!isnan(o->beta)) p->beta = o->beta * DEG;
    if (!isnan(o->mus)) p->mu_s = o->mus;
    if (!isnan(o->mu)) p->mu = o->mu;
    if (!isnan(o->ramplen)) p->ramp_length = o->ramplen;
    p->lambda0 = o->lam * DEG;
    p->h1 = o->h1;
    p->h2 = o->h2;
    cfg->nominal_lambda0 = isnan(o->nlam) ? p->lambda0 : o->nlam * DEG;
    if (!isnan(o->nbeta))
        cfg->nominal_beta = o->nbeta * DEG;
    else if (isnan(cfg->nominal_beta))
        cfg->nominal_beta = p->beta;
    return PL_EXIT_OK;
}

/* The switches that turn imperfections off. */
static void apply_switches(sim_opts *o)
{
    pl_rigsim_config *rig = &o->cfg.rig;
    if (o->ideal) {
        unsigned long keep = rig->seed;
        double sc[2] = {rig->ldv_scale_mps_per_v[0], rig->ldv_scale_mps_per_v[1]};
        int sg[2] = {rig->beam_sign[0], rig->beam_sign[1]};
        pl_rigsim_config_ideal(rig);
        rig->seed = keep;
        memcpy(rig->ldv_scale_mps_per_v, sc, sizeof sc);
        memcpy(rig->beam_sign, sg, sizeof sg);
    }
    if (o->off_shape) rig->impact_shape = 0;
    if (o->off_ring) rig->ringing = 0;
    if (o->off_noise) rig->noise = 0;
    if (o->off_speckle) rig->speckle = 0;
    if (o->off_offset) rig->offset = 0;
    if (o->off_hum) rig->hum = 0;
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
        fprintf(stderr, "prismlab sim: warning: the ADC clipped %zu samples "
                "(a larger --ldv-scale gives fewer volts per m/s)\n",
                pl_simrun_clipped(s));
    printf("frames=%zu release_t=%.4f leave_t=%s impacts=%zu Lp_end=%.4f "
           "status=%s clipped=%zu\n", nf, pl_simrun_release_index(s) / cfg->rate_hz,
           leave_t, r->n_impacts, r->lp_end, pl_model_end_name(r->end),
           pl_simrun_clipped(s));
    if (run_id >= 0)
        printf("run=%lld SYNTHETIC\n", run_id);
    pl_simrun_destroy(s);
    return PL_EXIT_OK;
}

int pl_cmd_sim(int argc, char **argv)
{
    const char *cmd = "sim";
    pl_err err = {0};
    sim_opts o = {.n = -1, .a0 = NAN, .beta = NAN, .mus = NAN, .mu = NAN,
                  .lam = NAN, .h1 = NAN, .h2 = NAN, .ramplen = NAN,
                  .nlam = NAN, .nbeta = NAN, .tstep = 0.01};
    pl_simrun_config_default(&o.cfg);
    o.cfg.rig.seed = 1;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        if (parse_model_opt(&o, c, &st, &err) || parse_rig_opt(&o, c, &st, &err))
            ;
        else switch (c) {
        case O_LAW:
            if (!strcmp(optarg, "line")) o.cfg.model.law = PL_LAW_LINE;
            else if (!strcmp(optarg, "plastic")) o.cfg.model.law = PL_LAW_PLASTIC;
            else return pl_cli_usage_error(cmd, "option '--law': expected line or plastic, got '%s'", optarg);
            break;
        case O_WAV: o.wav = optarg; break;
        case O_CSV: o.csv = optarg; break;
        case O_TRUTH: o.truth = optarg; break;
        case O_TSTEP: st = pl_parse_double("truth-step", optarg, 1e-6, 10, &o.tstep, &err); break;
        case O_STORE: o.store = 1; break;
        case O_EXP: o.experiment = optarg; break;
        case O_PACED: o.paced = 1; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (optind < argc)
        return pl_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if ((o.prism != NULL) != (o.ramp != NULL))
        return pl_cli_usage_error(cmd, "--prism and --ramp go together");
    if (!o.wav && !o.csv && !o.store)
        return pl_cli_usage_error(cmd, "nothing to write: give --wav FILE, --csv FILE or --store");
    if ((o.paced || o.experiment) && !o.store)
        return pl_cli_usage_error(cmd, "--paced and --experiment go with --store");
    if (o.random) {
        pl_simrun_config_random(&o.cfg, (unsigned long)o.random_seed);
    } else {
        int rc = apply_model(&o, cmd, &err);
        if (rc != PL_EXIT_OK)
            return rc;
        apply_switches(&o);
    }
    const pl_model_params *p = &o.cfg.model;
    double frames_max = (o.cfg.lead_in_s + p->duration + o.cfg.tail_s) * o.cfg.rate_hz;
    if (frames_max > 1e8)
        return pl_cli_usage_error(cmd, "(lead-in + max-motion + tail) x rate = %g "
                                  "frames: at most 1e8", frames_max);
    return run_and_write(&o, cmd, &err);
}
