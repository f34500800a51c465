/* commands/cmd_validate.c - `prismlab validate`: matching simulations for
 * processed runs, both impact laws, as recorded and fitted.  Only this
 * file prints. */
#include "commands.h"
#include "core/cli.h"
#include "core/jobs.h"
#include "core/json.h"
#include "db/select.h"
#include "db/work.h"
#include "model/validate/answer.h"
#include "model/validate/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "validate",
    .usage =
    "usage: prismlab validate (RUN... | --experiment E | --all)\n"
    "                         [--fit lambda0,t0[,beta] | --no-fit]\n"
    "                         [--law line|plastic|both] [--g-sd M_S2]\n"
    "                         [--jobs N] [--json] [--db FILE]\n",
    .about =
    "For each processed run, simulates the same prism on the same ramp from\n"
    "the detected release (seed 000 sections 2-4) and compares L_p(t) (4.2):\n"
    "once with the release angle as recorded, once with the parameters named\n"
    "by --fit fitted to the measured L_p by least squares.  The default,\n"
    "lambda0,t0,beta, fits the ramp's inclination too, within 3 standard\n"
    "deviations of the catalogue's: a fixed beta off by its stated 0.005 deg\n"
    "moves lambda0 by about a degree, and the run's own speed determines\n"
    "beta (docs/validation.md, \"The default fit\").  Both results are\n"
    "stored.\n",
    .footer =
    "Prints a line a run and law: run=<id> law=<law> fit=<recorded|fitted>\n"
    "lambda0=<deg>[+-<sd> (1 sd)] [(at its bound) | (undetermined)]\n"
    "max_rel_err=<%> rms=<impacts> status=<...> [stat=<sd> sys=<sd>]; +- is\n"
    "one standard deviation, as everywhere in prismlab: the total, stat the\n"
    "fit's statistical part, sys the systematic terms' (the local g, beta\n"
    "where not fitted, the model's step: docs/validation.md, \"Systematic\n"
    "terms\").  A fitted lambda0 held at an end of its range, or whose 95 %\n"
    "interval spans the whole range, has no +- but the flag\n"
    "(docs/validation.md, \"Flags\").\n",
    .max_args = PL_CLI_ANY_ARGS};

/* The bits of the laws to run: 1 line, 2 plastic. */
static const pl_opt_choice law_names[] = {{"line", 1}, {"plastic", 2}, {"both", 3},
                                     {NULL, 0}};

/* --fit lambda0,t0[,beta]: the parameters fitted, replacing the default. */
static pl_status parse_fit(const pl_opt *opt, const char *value, pl_err *err)
{
    pl_fit_spec *spec = opt->dest;
    if (pl_fit_names_parse(value, &spec->lambda0, &spec->t0, &spec->beta, err) != PL_OK)
        return pl_err_prefix(err, "option '--fit': ");
    return PL_OK;
}

/* How results print: json 1 for a JSON array; n counts the objects. */
typedef struct {
    int json;
    size_t n;
} out_ctx;

/* One result as a JSON object, the members of the text line. */
/* The flag of a result's lambda0: none unless it was fitted. */
static pl_fit_flag match_flag(int fitted, const pl_fit_spec *spec,
                              const pl_match_result *r)
{
    return fitted && spec->lambda0 ? pl_fit_flag_of(r->params.lambda0,
                                   pl_fit_total_sd(r->lambda0_sd, r->sys.lambda0_sd),
                                   r->params.N, r->params.beta)
                  : PL_FIT_FLAG_NONE;
}

static void print_match_json(out_ctx *o, long long id, int law, int fitted,
                             const pl_fit_spec *spec, const pl_match_result *r)
{
    /* lambda0_sd_deg: the total (what the text's +- says), then its parts */
    static const char *const keys[] = {"lambda0_sd_deg", "lambda0_stat_sd_deg",
        "lambda0_sys_sd_deg", "lambda0_sys_g_deg", "lambda0_sys_beta_deg",
        "lambda0_sys_step_deg", "max_rel_err", "rms_impacts", "lp_end_measured",
        "lp_end_simulated"};
    double v[] = {pl_fit_total_sd(r->lambda0_sd, r->sys.lambda0_sd) * 180 / M_PI,
                  r->lambda0_sd * 180 / M_PI, r->sys.lambda0_sd * 180 / M_PI,
                  r->sys.lambda0[PL_SYS_G] * 180 / M_PI,
                  r->sys.lambda0[PL_SYS_BETA] * 180 / M_PI,
                  r->sys.lambda0[PL_SYS_STEP] * 180 / M_PI, r->max_rel_err, r->rms_err,
                  r->lp_end_meas, r->lp_end_sim};
    fputs(o->n++ ? ",\n " : "[", stdout);
    printf("{\"run\": %lld, \"law\": \"%s\", \"fit\": \"%s\"", id,
           law ? "plastic" : "line", fitted ? "fitted" : "recorded");
    pl_json_key(stdout, ", ", "lambda0_deg");
    pl_json_degrees(stdout, r->params.lambda0);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        pl_json_key(stdout, ", ", keys[i]);
        pl_json_number(stdout, v[i]);
    }
    pl_json_key(stdout, ", ", "status");
    pl_json_string(stdout, pl_model_end_name(r->status));
    pl_fit_flag flag = match_flag(fitted, spec, r);
    pl_json_key(stdout, ", ", "lambda0_flag");
    if (flag == PL_FIT_FLAG_NONE)
        fputs("null", stdout);
    else
        pl_json_string(stdout, pl_fit_flag_words(flag));
    fputc('}', stdout);
}

static void print_match(out_ctx *o, long long id, int law, int fitted,
                        const pl_fit_spec *spec, const pl_match_result *r)
{
    if (o->json) {
        print_match_json(o, id, law, fitted, spec, r);
        return;
    }
    char sd[48] = "", parts[64] = "";
    double total = pl_fit_total_sd(r->lambda0_sd, r->sys.lambda0_sd);
    pl_fit_flag flag = match_flag(fitted, spec, r);
    /* +-: one sd, the total; none where the flag says the fit has no
     * interval to give (scripts parse lambda0=X+-Y as it was) */
    if (isfinite(total) && flag == PL_FIT_FLAG_NONE)
        snprintf(sd, sizeof sd, "+-%.4f (1 sd)", total * 180 / M_PI);
    if (isfinite(total))
        snprintf(parts, sizeof parts, " stat=%.4f sys=%.4f", r->lambda0_sd * 180 / M_PI,
                 r->sys.lambda0_sd * 180 / M_PI);
    char rel[32] = "none";   /* the measured L_p never reached one impact */
    if (isfinite(r->max_rel_err))
        snprintf(rel, sizeof rel, "%.3f%%", 100 * r->max_rel_err);
    printf("run=%lld law=%s fit=%s lambda0=%.4f%s%s%s%s max_rel_err=%s "
           "rms=%.3f Lp_end=%.3f/%.3f status=%s%s\n", id,
           law ? "plastic" : "line", fitted ? "fitted" : "recorded",
           r->params.lambda0 * 180 / M_PI, sd, flag ? " (" : "", pl_fit_flag_words(flag),
           flag ? ")" : "", rel,
           r->rms_err, r->lp_end_meas, r->lp_end_sim,
           pl_model_end_name(r->status), parts);
}

/* Every law and fit asked for of one run, stored together (one
 * transaction: a kill leaves the run's earlier set or the new one, never
 * a mixture); a law or fit that fails is said and left out.  Returns how
 * many failed; *done counts them for the progress line. */
static int validate_one(pl_store *store, long long id, int laws, int do_fit,
                        const pl_fit_spec *spec, pl_cli_meter *meter, size_t *done,
                        size_t total, out_ctx *o)
{
    pl_err err = {0};
    pl_validation v[4];
    pl_match_result r[4];
    int law_of[4], fit_of[4], n = 0, failed = 0;
    /* A fault of the run itself (no such run, not processed, a release
     * angle outside the prism's range) fails every law and fit alike:
     * said once, not four times. */
    char said[sizeof err.msg] = "";
    /* the mark is advice for readers (run show, the run page): a store
     * that cannot take it still gets the results */
    pl_err ignore = {0};
    pl_work_begin(store, id, PL_WORK_VALIDATING, &ignore);
    for (int law = 0; law < 2; law++) {
        if (!(laws & (1 << law)))
            continue;
        for (int fitted = 0; fitted <= do_fit; fitted++) {
            pl_status st = pl_validate_match(store, id,
                                             law ? PL_LAW_PLASTIC : PL_LAW_LINE,
                                             fitted, spec, &v[n], &r[n], &err);
            ++*done;
            pl_cli_progress_eta(meter, *done, total);
            if (st != PL_OK) {
                if (strcmp(said, err.msg))
                    pl_cli_fail(command.name, &err);
                snprintf(said, sizeof said, "%s", err.msg);
                failed++;
                continue;
            }
            law_of[n] = law;
            fit_of[n++] = fitted;
        }
    }
    pl_status saved = n > 0 ? pl_validation_save_set(store, v, (size_t)n, &err) : PL_OK;
    pl_work_end(store, id, &ignore);
    if (saved != PL_OK) {
        pl_err_prefix(&err, "run %lld: storing its %d validations: ", id, n);
        pl_cli_fail(command.name, &err);
        return failed + n;
    }
    for (int i = 0; i < n; i++)
        print_match(o, id, law_of[i], fit_of[i], spec, &r[i]);
    return failed;
}

/* What every run is validated with; sel->store is the serial path's,
 * db the workers' (they open their own). */
typedef struct {
    const pl_run_selection *sel;
    const char *db;
    int laws, do_fit;
    const pl_fit_spec *spec;
    out_ctx *o;
    int failed;
} job;

/* Every run, law and fit asked for, one after the other; returns how
 * many failed. */
static int validate_all(job *j)
{
    int failed = 0;
    size_t total = j->sel->n * (j->laws == 3 ? 2 : 1) * (j->do_fit ? 2 : 1), done = 0;
    pl_cli_meter meter;
    pl_cli_meter_start(&meter, "validate", "fits");
    for (size_t k = 0; k < j->sel->n; k++)
        failed += validate_one(j->sel->store, j->sel->ids[k], j->laws, j->do_fit,
                               j->spec, &meter, &done, total, j->o);
    return failed;
}

/* --jobs: run k in a worker, on a store of its own whose transactions
 * wait for the turn (core/jobs.h); its JSON objects are a part of the
 * array (pl_jobs_print()). */
static int validate_job(void *arg, size_t k, pl_jobs_turn *turn)
{
    job *j = arg;
    pl_store *store = NULL;
    pl_err err = {0};
    out_ctx o = {j->o->json, 0};
    size_t done = 0;
    pl_cli_meter quiet;   /* total 0: the parent draws the progress */
    pl_cli_meter_start(&quiet, "validate", "fits");
    if (pl_store_open(&store, j->db, 0, &err) != PL_OK) {
        pl_err_prefix(&err, "run %lld: ", j->sel->ids[k]);
        pl_cli_fail(command.name, &err);
        return PL_EXIT_DATA;
    }
    pl_store_set_gate(store, pl_jobs_gate, turn);
    int failed = validate_one(store, j->sel->ids[k], j->laws, j->do_fit, j->spec,
                              &quiet, &done, 0, &o);
    pl_store_close(store);
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}

static int validate_emit(void *arg, size_t k, const pl_jobs_result *r)
{
    job *j = arg;
    pl_jobs_print(r, j->o->json, &j->o->n);
    char why[96];
    if (pl_jobs_death(r, why, sizeof why))
        fprintf(stderr, "prismlab validate: run %lld: %s\n", j->sel->ids[k], why);
    j->failed += r->code != PL_EXIT_OK;
    return 0;
}

int pl_cmd_validate(int argc, char **argv)
{
    pl_fit_spec spec = {.beta_sd = NAN};
    pl_err err = {0};
    pl_fit_names_parse(PL_FIT_DEFAULT, &spec.lambda0, &spec.t0, &spec.beta, &err);
    int do_fit = 1, laws = 3;
    pl_run_selection sel = {0};
    out_ctx out = {0, 0};
    long jobs = 0;
    pl_opt opts[] = {
        PL_OPT_CALLBACK("fit", &spec, parse_fit, "lambda0,t0[,beta]",
                        "the parameters fitted (default " PL_FIT_DEFAULT ")"),
        PL_OPT_SET_INT("no-fit", &do_fit, 0, "only the recorded release angle"),
        PL_OPT_CHOICE("law", &laws, law_names, "line|plastic|both",
                      "the paper's line-impact model, the plastic one, or\n"
                      "both (default)"),
        PL_OPT_DOUBLE("g-sd", &spec.g_sd, 1e-6, 1.0, "M_S2",
                      "how far the lab's local g may lie from the model's\n"
                      "standard gravity 9.80665, one sd (default 0.015: the\n"
                      "spread from equator to pole; a systematic term)"),
        PL_OPT_FLAG("json", &out.json, "print a JSON array, an object a run,\n"
                    "law and fit (errors still on stderr)"),
        PL_OPT_INT("jobs", &jobs, 0, 4096, "N",
                   "runs validated at once, each in a process of its own\n"
                   "(0, the default: one per CPU; 1: one after the\n"
                   "other); the store and the output are the same on any\n"
                   "count; memory: N times one run's"),
        PL_OPT_RUN_SELECTION(&sel),
        PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (pl_run_selection_open(&sel, argv + 1, nargs, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    job j = {.sel = &sel, .laws = laws, .do_fit = do_fit, .spec = &spec, .o = &out};
    if (jobs == 0)
        jobs = pl_jobs_cpus();
    int failed;
    if (jobs > 1 && sel.n > 1) {
        char *db = NULL;
        if (pl_run_selection_detach(&sel, &db, &err) != PL_OK) {
            pl_run_selection_close(&sel);
            return pl_cli_fail(command.name, &err);
        }
        j.db = db;
        if (pl_jobs_run(sel.n, (int)(jobs < (long)sel.n ? jobs : (long)sel.n), "validate",
                        validate_job, validate_emit, &j, &err) != PL_OK)
            j.failed += pl_cli_fail(command.name, &err) != 0;
        failed = j.failed;
        free(db);
    } else {
        failed = validate_all(&j);
    }
    pl_run_selection_close(&sel);
    if (out.json)
        puts(out.n ? "]" : "[]");
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}
