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

typedef struct {
    long long *ids;
    size_t n, cap;
} id_list;

static int collect(void *ctx, const pl_run_info *info)
{
    id_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        long long *v = realloc(l->ids, cap * sizeof *v);
        if (!v)
            return 1;
        l->ids = v;
        l->cap = cap;
    }
    l->ids[l->n++] = info->id;
    return 0;
}

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
    id_list ids = {0};
    if (optind < argc) {
        for (int i = optind; i < argc; i++) {
            long v;
            if (pl_parse_long("RUN", argv[i], 1, 1L << 62, &v, &err) != PL_OK) {
                pl_store_close(store);
                free(ids.ids);
                return pl_cli_fail(cmd, &err);
            }
            pl_run_info info = {.id = v};
            collect(&ids, &info);
        }
    } else if (pl_run_list(store, exp, collect, &ids, &err) != PL_OK) {
        pl_store_close(store);
        return pl_cli_fail(cmd, &err);
    }
    if (ids.n == 0 && exp) {
        fprintf(stderr, "prismlab process: experiment '%s' has no runs\n", exp);
        pl_store_close(store);
        return PL_EXIT_DATA;
    }
    int failed = 0;
    /* pl_run_list gives newest first: process in recording order */
    for (size_t k = 0; k < ids.n; k++) {
        long long id = optind < argc ? ids.ids[k] : ids.ids[ids.n - 1 - k];
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
        if (ids.n > 1)
            pl_cli_progress("process", k + 1, ids.n);
    }
    free(ids.ids);
    pl_store_close(store);
    return failed ? PL_EXIT_DATA : PL_EXIT_OK;
}
