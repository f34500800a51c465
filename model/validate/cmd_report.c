/* model/validate/cmd_report.c - `prismlab report`: the validation report of an
 * experiment as files a person opens in a browser.  Only this file
 * prints. */
#include "commands.h"
#include "core/cli.h"
#include "model/validate/report.h"

#include <getopt.h>
#include <stdio.h>

static const char usage[] =
    "usage: prismlab report --experiment E -o DIR [--db FILE]\n\n"
    "Writes the validation report of experiment E into DIR: index.html (open\n"
    "it in a browser; it needs no network), summary.md, metrics.csv and the\n"
    "figures as SVG (L_p(t) as seed 000 figs. 8-9, rotary speed as fig. 6,\n"
    "gauge velocities as fig. 5, L_p error, impact ratio against N).  Run\n"
    "`prismlab process` and `prismlab validate` first: a run without them is\n"
    "listed but not compared.\n";

enum { O_EXP = 1000, O_OUT, O_DB, O_HELP };

int pl_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"experiment", required_argument, 0, O_EXP},
        {"output", required_argument, 0, O_OUT}, {"db", required_argument, 0, O_DB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    const char *cmd = "report", *exp = NULL, *out = NULL, *db = NULL;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case O_EXP: exp = optarg; break;
        case 'o':
        case O_OUT: out = optarg; break;
        case O_DB: db = optarg; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
    }
    if (!exp || !out)
        return pl_cli_usage_error(cmd, "give --experiment E and -o DIR");
    if (optind < argc)
        return pl_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    pl_err err = {0};
    pl_store *store = NULL;
    if (pl_store_open(&store, pl_cli_db_path(db), 0, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    pl_report_stats st;
    pl_status rc = pl_report_write(store, exp, out, &st, &err);
    pl_store_close(store);
    if (rc != PL_OK)
        return pl_cli_fail(cmd, &err);
    printf("%s/index.html: %d runs, %d validated, %d figures\n", out, st.runs,
           st.validated, st.figures);
    return PL_EXIT_OK;
}
