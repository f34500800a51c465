/* model/validate/cmd_validate.c - `prismlab validate`: matching simulations for
 * processed runs, both impact laws, as recorded and fitted.  Only this
 * file prints. */
#include "commands.h"
#include "core/cli.h"
#include "db/run.h"
#include "model/validate/validate.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: prismlab validate (RUN... | --experiment E | --all)\n"
    "                         [--fit lambda0,t0[,beta] | --no-fit]\n"
    "                         [--law line|plastic|both] [--db FILE]\n\n"
    "For each processed run, simulates the same prism on the same ramp from\n"
    "the detected release (seed 000 sections 2-4) and compares L_p(t) (4.2):\n"
    "once with the release angle as recorded, once with the parameters named\n"
    "by --fit fitted to the measured L_p by least squares (default\n"
    "lambda0,t0; beta stays within 3 standard deviations of the ramp's\n"
    "inclination).  Both results are stored (docs/validation.md).\n\n"
    "  --law L     line (the paper's line-impact model), plastic, or both\n"
    "              (default)\n"
    "  --no-fit    only the recorded release angle\n\n"
    "Prints a line a run and law: run=<id> law=<law> fit=<recorded|fitted>\n"
    "lambda0=<deg>[+-sd] max_rel_err=<%> rms=<impacts> status=<...>\n";

enum { O_FIT = 1000, O_NOFIT, O_LAW, O_EXP, O_ALL, O_DB, O_HELP };

int pl_cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"fit", required_argument, 0, O_FIT}, {"no-fit", no_argument, 0, O_NOFIT},
        {"law", required_argument, 0, O_LAW},
        {"experiment", required_argument, 0, O_EXP},
        {"all", no_argument, 0, O_ALL}, {"db", required_argument, 0, O_DB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    const char *cmd = "validate";
    pl_err err = {0};
    pl_fit_spec spec = {.lambda0 = 1, .t0 = 1, .beta = 0, .beta_sd = NAN};
    int do_fit = 1, laws = 3, all = 0;
    const char *db = NULL, *exp = NULL;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_FIT: {
            spec.lambda0 = spec.t0 = spec.beta = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            char *save = NULL;
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (!strcmp(tok, "lambda0")) spec.lambda0 = 1;
                else if (!strcmp(tok, "t0")) spec.t0 = 1;
                else if (!strcmp(tok, "beta")) spec.beta = 1;
                else
                    return pl_cli_usage_error(cmd, "option '--fit': '%s' is not lambda0, t0 or beta", tok);
            }
            break;
        }
        case O_NOFIT: do_fit = 0; break;
        case O_LAW:
            if (!strcmp(optarg, "line")) laws = 1;
            else if (!strcmp(optarg, "plastic")) laws = 2;
            else if (!strcmp(optarg, "both")) laws = 3;
            else return pl_cli_usage_error(cmd, "option '--law': expected line, plastic or both, got '%s'", optarg);
            break;
        case O_EXP: exp = optarg; break;
        case O_ALL: all = 1; break;
        case O_DB: db = optarg; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
    }
    if ((optind < argc) + (exp != NULL) + all != 1)
        return pl_cli_usage_error(cmd, "give RUN ids, --experiment E or --all (one of them)");
    pl_store *store = NULL;
    if (pl_store_open(&store, pl_cli_db_path(db), 0, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    long long *ids = NULL;
    size_t nids = 0;
    if (pl_run_select(store, argv + optind, argc - optind, exp, &ids, &nids, &err) != PL_OK) {
        pl_store_close(store);
        return pl_cli_fail(cmd, &err);
    }
    int failed = 0;
    size_t total = nids * (laws == 3 ? 2 : 1) * (do_fit ? 2 : 1), done = 0;
    for (size_t k = 0; k < nids; k++) {
        long long id = ids[k];
        for (int law = 0; law < 2; law++) {
            if (!(laws & (1 << law)))
                continue;
            for (int fitted = 0; fitted <= do_fit; fitted++) {
                pl_match_result r;
                pl_status st = pl_validate_run(store, id, law ? PL_LAW_PLASTIC : PL_LAW_LINE,
                                               fitted, &spec, &r, &err);
                done++;
                if (st != PL_OK) {
                    pl_cli_fail(cmd, &err);
                    failed++;
                    continue;
                }
                char sd[32] = "";
                if (isfinite(r.lambda0_sd))
                    snprintf(sd, sizeof sd, "+-%.4f", r.lambda0_sd * 180 / M_PI);
                printf("run=%lld law=%s fit=%s lambda0=%.4f%s max_rel_err=%.3f%% "
                       "rms=%.3f Lp_end=%.3f/%.3f status=%s\n", id,
                       law ? "plastic" : "line", fitted ? "fitted" : "recorded",
                       r.params.lambda0 * 180 / M_PI, sd, 100 * r.max_rel_err,
                       r.rms_err, r.lp_end_meas, r.lp_end_sim,
                       pl_model_end_name(r.status));
                pl_cli_progress("validate", done, total);
            }
        }
    }
    free(ids);
    pl_store_close(store);
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}
