/* process/cmd_process.c - `prismlab process`: stored runs to omega, theta,
 * L_p, impacts and spectra (process/process.h).  Only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "db/run.h"
#include "process/process.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: prismlab process (RUN... | --experiment E | --all) [--cutoff HZ]\n"
    "                        [--no-filter] [--db FILE]\n\n"
    "Derives from each run's two LDV channels the rotary speed by (4.1), theta\n"
    "and L_p = N theta / 2 pi by (4.2), the line impacts (time, omega-, omega+,\n"
    "ratio) and the spectra, and stores them, replacing an earlier result\n"
    "(docs/process.md).\n\n"
    "  --cutoff HZ     zero-phase low-pass cut-off (H = 1/2 there); default:\n"
    "                  0.4 x the impact ringing's frequency found in the data,\n"
    "                  1000 Hz when none shows\n"
    "  --no-filter     no low-pass\n"
    "  --experiment E  every run of experiment E; --all: every run\n\n"
    "Prints a line a run: run=<id> release=<s> end=<s> impacts=<n>\n"
    "Lp_end=<value> omega_last=<rad/s> ratio=<mean>+-<sd> cutoff=<Hz>, and its\n"
    "warnings.  Exit status 2 when any run failed (the others are stored).\n";

enum { O_CUTOFF = 1000, O_NOFILTER, O_EXP, O_ALL, O_DB, O_HELP };

int pl_cmd_process(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cutoff", required_argument, 0, O_CUTOFF},
        {"no-filter", no_argument, 0, O_NOFILTER},
        {"experiment", required_argument, 0, O_EXP},
        {"all", no_argument, 0, O_ALL}, {"db", required_argument, 0, O_DB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    const char *cmd = "process";
    pl_err err = {0};
    pl_process_config cfg;
    pl_process_config_default(&cfg);
    const char *db = NULL, *exp = NULL;
    int all = 0;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_CUTOFF:
            if (pl_parse_double("cutoff", optarg, 1e-3, 1e9, &cfg.cutoff_hz, &err) != PL_OK)
                return pl_cli_fail(cmd, &err);
            break;
        case O_NOFILTER: cfg.cutoff_hz = 0; break;
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
    for (size_t k = 0; k < nids; k++) {
        long long id = ids[k];
        pl_process_result r;
        if (pl_process_run(store, id, &cfg, &r, &err) != PL_OK) {
            pl_cli_fail(cmd, &err);
            failed++;
            continue;
        }
        printf("run=%lld release=%.4f end=%.4f impacts=%zu Lp_end=%.3f "
               "omega_last=%.4f ratio=%.5f+-%.5f cutoff=%.0f\n", id, r.release_t,
               r.end_t, r.n_impacts, r.lp_end, r.omega_last_mean, r.ratio_mean,
               r.ratio_sd, r.cutoff_hz);
        if (r.warnings[0]) {
            char *save = NULL;
            for (char *l = strtok_r(r.warnings, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                fprintf(stderr, "prismlab process: run %lld: warning: %s\n", id, l);
        }
        pl_process_result_free(&r);
        if (nids > 1)
            pl_cli_progress("process", k + 1, nids);
    }
    free(ids);
    pl_store_close(store);
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}
