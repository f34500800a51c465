/* commands/cmd_process.c - `prismlab process`: stored runs to omega, theta,
 * L_p, impacts and spectra (process/process.h).  Only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "core/jobs.h"
#include "core/json.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/select.h"
#include "db/work.h"
#include "process/process.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "process",
    .usage =
    "usage: prismlab process (RUN... | --experiment E | --all) [--cutoff HZ]\n"
    "                        [--no-filter] [--threads N] [--jobs N] [--json]\n"
    "                        [--db FILE]\n",
    .about =
    "Derives from each run's two LDV channels the rotary speed by (4.1), theta\n"
    "and L_p = N theta / 2 pi by (4.2), the line impacts (time, omega-, omega+,\n"
    "ratio) and the spectra, and stores them, replacing an earlier result\n"
    "(docs/process.md).\n",
    .footer =
    "Prints a line a run: run=<id> release=<s> end=<s> impacts=<n>\n"
    "Lp_end=<value> omega_last=<rad/s> ratio=<mean>+-<sd> cutoff=<Hz>\n"
    "lattice=<slots> confirmed=<n> ratio_se=<standard error of the mean>\n"
    "(+- is one standard deviation, as everywhere in prismlab: here the\n"
    "spread of one impact's ratio; ratio_se the mean's)\n"
    "quality=<good|degraded|suspect>, and its warnings.  Every run is checked\n"
    "against the physics (docs/process.md section 9): a speed the prism cannot\n"
    "reach on its ramp, impacts spaced other than 2 pi/N, a prism turning\n"
    "backwards or beams that contradict their heights are refused with the fix\n"
    "the data support; a late start, a drift of omega from the impacts' clock,\n"
    "a jump of their phase (samples missing) or a second release is named and\n"
    "measured through (degraded); a disagreement nothing explains leaves the\n"
    "run suspect.  A run the data do not let it measure (no motion, clipped,\n"
    "too short, ...) is recorded as refused, with the reason, in place of its\n"
    "earlier result ('prismlab run show').  --json: the same as a JSON array,\n"
    "an object a run processed (errors and warnings still on stderr).  Exit\n"
    "status 2 when any run failed (the others are stored).\n",
    .max_args = PL_CLI_ANY_ARGS};

/* --no-filter: a cut-off of 0; a later --cutoff still overrides it. */
static pl_status no_filter(const pl_opt *opt, const char *value, pl_err *err)
{
    (void)value;
    (void)err;
    *(double *)opt->dest = 0;
    return PL_OK;
}

/* One run's result as a JSON object (the members of the text line; the
 * warnings as an array). */
static void print_result_json(long long id, const pl_process_result *r,
                              size_t *n)
{
    static const char *const keys[] = {"release_s", "end_s", "lp_end",
        "omega_last_rad_s", "ratio_mean", "ratio_sd", "cutoff_hz", "ratio_se"};
    double v[] = {r->release_t, r->end_t, r->lp_end, r->omega_last_mean,
                  r->ratio_mean, r->ratio_sd, r->cutoff_hz, r->ratio_mean_se};
    fputs((*n)++ ? ",\n " : "[", stdout);
    printf("{\"run\": %lld, \"impacts\": %zu, \"lattice\": %zu, "
           "\"confirmed\": %zu", id, r->n_impacts, r->n_expected, r->n_confirmed);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        pl_json_key(stdout, ", ", keys[i]);
        pl_json_number(stdout, v[i]);
    }
    pl_json_key(stdout, ", ", "quality");
    pl_json_string(stdout, r->quality[0] ? r->quality : "good");
    fputs(", \"warnings\": [", stdout);
    const char *l = r->warnings;
    for (int k = 0; *l; k++) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        fputs(k ? ", " : "", stdout);
        pl_json_string(stdout, line);
        l += len + (nl != NULL);
    }
    fputs("]}", stdout);
}

static void print_result(long long id, pl_process_result *r, int json,
                         size_t *n)
{
    if (json)
        print_result_json(id, r, n);
    else
        printf("run=%lld release=%.4f end=%.4f impacts=%zu Lp_end=%.3f "
               "omega_last=%.4f ratio=%.5f+-%.5f cutoff=%.0f lattice=%zu "
               "confirmed=%zu ratio_se=%.2g quality=%s\n", id, r->release_t,
               r->end_t, r->n_impacts, r->lp_end, r->omega_last_mean,
               r->ratio_mean, r->ratio_sd, r->cutoff_hz, r->n_expected,
               r->n_confirmed, r->ratio_mean_se,
               r->quality[0] ? r->quality : "good");
    if (r->warnings[0]) {   /* on stderr with --json too: what a person sees */
        char *save = NULL;
        for (char *l = strtok_r(r->warnings, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            fprintf(stderr, "prismlab process: run %lld: warning: %s\n", id, l);
    }
}

/* The notebook's mistakes the data show, as the commands that correct
 * them.  The beams say it (process/beams.h): their ratio v1/v2 during
 * the motion is h1/h2, so a refusal names heights (or wires) swapped
 * when it finds 1 / (h1/h2), and each beam's own sense names a sign
 * that makes it move uphill.  Nothing else is suggested: h1 below h2 is
 * no mistake where the ratio agrees with it (a rig may wire its lower
 * beam to channel 1), and a run refused as "no motion" while both beams
 * move downhill has no sign at fault (a beam that never saw the prism
 * was told to swap both signs, and following that stored L_p -26.9). */
static void diagnose(pl_store *store, long long id, const pl_process_result *r,
                     const pl_err *failure)
{
    pl_channel ch[64];
    pl_run_info info;
    pl_err err = {0};

    if (pl_run_get(store, id, &info, &err) != PL_OK ||
        pl_run_channels(store, id, ch, 64, &err) != PL_OK || info.n_channels < 2)
        return;
    const char *msg = r ? "" : failure->msg;
    int both = strstr(msg, "both beams move uphill") != NULL, flip[2];
    for (int c = 0; c < 2; c++) {
        char one[32];
        snprintf(one, sizeof one, "beam %d moves uphill", c + 1);
        flip[c] = r ? r->beams.sense[c] < 0 : both || strstr(msg, one) != NULL;
    }
    if (strstr(msg, "the heights are swapped"))
        fprintf(stderr, "prismlab process: run %lld: the heights look swapped; fix with "
                "'prismlab run set %lld --h1 %g --h2 %g' and process it again\n", id, id,
                ch[1].beam_height_m, ch[0].beam_height_m);
    if (flip[0] && flip[1])
        fprintf(stderr, "prismlab process: run %lld: the beam signs look swapped (both "
                "beams move uphill; each sign makes its beam's downhill velocity "
                "positive); fix with 'prismlab run set %lld --sign1 %+d --sign2 %+d' and "
                "process it again\n", id, id, -ch[0].beam_sign, -ch[1].beam_sign);
    else if (flip[0] || flip[1]) {
        int c = flip[0] ? 0 : 1;
        fprintf(stderr, "prismlab process: run %lld: beam %d's sign looks swapped (it "
                "moves uphill while the other moves downhill); fix with 'prismlab run "
                "set %lld --sign%d %+d' and process it again\n", id, c + 1, id, c + 1,
                -ch[c].beam_sign);
    }
}

/* Puts "run ID: " before a failure that does not name the run yet (the
 * store's own errors, a full disk), so that a log of --all says which. */
static void name_run(long long id, pl_err *err)
{
    char prefix[48];
    snprintf(prefix, sizeof prefix, "run %lld: ", id);
    if (strncmp(err->msg, prefix, strlen(prefix)) != 0)
        pl_err_prefix(err, "%s", prefix);
}

/* A run the data do not let processing measure (PL_ENUMERIC: no motion,
 * clipped, too short) gets a quality record "refused" with the failure as
 * its reason, replacing the result of an earlier processing that no
 * longer stands.  Other failures (the store, metadata, memory) say
 * nothing about the data and leave the run as it was. */
static void record_refusal(pl_store *store, long long id, const pl_err *failure)
{
    char prefix[48];
    const char *reason = failure->msg;
    pl_err err = {0};

    if (failure->code != PL_ENUMERIC)
        return;
    /* pl_process_run_summary names the run first; the record is the run's own */
    snprintf(prefix, sizeof prefix, "run %lld: ", id);
    if (strncmp(reason, prefix, strlen(prefix)) == 0)
        reason += strlen(prefix);
    if (pl_quality_refuse(store, id, reason, &err) != PL_OK)
        pl_cli_fail(command.name, &err);
}

/* One run: processed, printed, refused or diagnosed.  turn (a worker of
 * --jobs) is waited for once the run is computed: what follows writes
 * (the refusal, the mark's end) in the serial order.  Returns 1 when the
 * run failed. */
static int process_one(pl_store *store, long long id, const pl_process_config *cfg,
                       int json, size_t *printed, pl_jobs_turn *turn)
{
    pl_process_result r;
    pl_err err = {0};
    /* the mark is advice for readers (run show, the run page): a
     * store that cannot take it still gets the results */
    pl_err ignore = {0};
    pl_work_begin(store, id, PL_WORK_PROCESSING, &ignore);
    pl_status st = pl_process_run_summary(store, id, cfg, &r, &err);
    if (turn)
        pl_jobs_gate(turn, &ignore);
    pl_work_end(store, id, &ignore);
    if (st != PL_OK) {
        name_run(id, &err);
        pl_cli_fail(command.name, &err);
        record_refusal(store, id, &err);
        diagnose(store, id, NULL, &err);
        return 1;
    }
    print_result(id, &r, json, printed);
    diagnose(store, id, &r, &err);
    pl_process_result_free(&r);
    return 0;
}

/* --jobs: what the workers share (copied into each by the fork). */
typedef struct {
    const pl_run_selection *sel;
    const char *db;              /* the store's path */
    const pl_process_config *cfg;
    int json, failed;
    size_t printed;
} jobs_ctx;

/* Run k in a worker, on a store of its own whose transactions wait for
 * the turn (core/jobs.h). */
static int process_job(void *arg, size_t k, pl_jobs_turn *turn)
{
    jobs_ctx *j = arg;
    pl_store *store = NULL;
    pl_err err = {0};
    size_t printed = 0;
    if (pl_store_open(&store, j->db, 0, &err) != PL_OK) {
        name_run(j->sel->ids[k], &err);
        pl_cli_fail(command.name, &err);
        return PL_EXIT_DATA;
    }
    pl_store_set_gate(store, pl_jobs_gate, turn);
    int failed = process_one(store, j->sel->ids[k], j->cfg, j->json, &printed, turn);
    pl_store_close(store);
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}

static int process_emit(void *arg, size_t k, const pl_jobs_result *r)
{
    jobs_ctx *j = arg;
    pl_jobs_print(r, j->json, &j->printed);
    char why[96];
    if (pl_jobs_death(r, why, sizeof why))
        fprintf(stderr, "prismlab process: run %lld: %s\n", j->sel->ids[k], why);
    j->failed += r->code != PL_EXIT_OK;
    return 0;
}

int pl_cmd_process(int argc, char **argv)
{
    pl_process_config cfg;
    pl_process_config_default(&cfg);
    pl_run_selection sel = {0};
    int json = 0;
    long threads = 0, jobs = 0;
    size_t printed = 0;
    pl_opt opts[] = {
        PL_OPT_DOUBLE("cutoff", &cfg.cutoff_hz, 1e-3, 1e9, "HZ",
                      "zero-phase low-pass cut-off (H = 1/2 there); default:\n"
                      "0.4 x the impact ringing's frequency found in the data,\n"
                      "1000 Hz when none shows"),
        PL_OPT_CALLBACK_NOARG("no-filter", &cfg.cutoff_hz, no_filter, "no low-pass"),
        PL_OPT_DOUBLE("decoder-delay", &cfg.lattice.decoder_delay_s, 0, 0.1, "S",
                      "the LDV decoder's delay at DC: the impacts' t_s become\n"
                      "the contact instants (default: the run's own, the mean\n"
                      "of its two channels' stored delays (rig.ini [beams]\n"
                      "decoder_delay_s, import --decoder-delay-s) when both\n"
                      "have one, else none); 0: none, t_s is the centre of the\n"
                      "decoded step, later than the contact by that delay"),
        PL_OPT_INT("threads", &threads, 0, 256, "N",
                   "threads for a run (0, the default: one per CPU, shared\n"
                   "out among the --jobs); the result is the same to the\n"
                   "bit on any count"),
        PL_OPT_INT("jobs", &jobs, 0, 4096, "N",
                   "runs processed at once, each in a process of its own\n"
                   "(0, the default: one per CPU; 1: one after the\n"
                   "other); the store and the output are the same on any\n"
                   "count; memory: N times one run's"),
        PL_OPT_FLAG("json", &json, "print a JSON array, an object a run processed"),
        PL_OPT_RUN_SELECTION(&sel),
        PL_OPT_END()};
    pl_err err = {0};
    int nargs, rc = pl_cli_parse(&command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    cfg.threads = (int)threads;
    if (pl_run_selection_open(&sel, argv + 1, nargs, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    int failed = 0;
    if (jobs == 0)
        jobs = pl_jobs_cpus();
    if ((size_t)jobs > sel.n)
        jobs = (long)sel.n;
    if (jobs > 1) {
        /* the CPUs shared out: N runs of cpus/N threads each */
        if (threads == 0) {
            int per = pl_jobs_cpus() / (int)jobs;
            cfg.threads = per > 1 ? per : 1;
        }
        char *db = NULL;
        if (pl_run_selection_detach(&sel, &db, &err) != PL_OK) {
            pl_run_selection_close(&sel);
            return pl_cli_fail(command.name, &err);
        }
        jobs_ctx j = {.sel = &sel, .db = db, .cfg = &cfg, .json = json};
        if (pl_jobs_run(sel.n, (int)jobs, "process", process_job, process_emit, &j,
                        &err) != PL_OK)
            failed += pl_cli_fail(command.name, &err) != 0;
        failed += j.failed;
        printed = j.printed;
        free(db);
    } else {
        pl_cli_meter meter;
        pl_cli_meter_start(&meter, "process", "runs");
        for (size_t k = 0; k < sel.n; k++) {
            if (sel.n > 1)
                pl_cli_progress_clear();
            failed += process_one(sel.store, sel.ids[k], &cfg, json, &printed, NULL);
            if (sel.n > 1)
                pl_cli_progress_eta(&meter, k + 1, sel.n);
        }
    }
    pl_run_selection_close(&sel);
    if (json)
        puts(printed ? "]" : "[]");
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}
