/* commands/cmd_report.c - `prismlab report`: the validation report of an
 * experiment as files a person opens in a browser.  Only this file
 * prints. */
#include "commands.h"
#include "core/cli.h"
#include "core/jobs.h"
#include "core/numtext.h"
#include "model/validate/report.h"

#include <stdio.h>

static const pl_cli_command command = {
    .name = "report",
    .usage = "usage: prismlab report --experiment E -o DIR [--jobs N] [--db FILE]\n",
    .about =
    "Writes the validation report of experiment E into DIR: index.html (open\n"
    "it in a browser; it needs no network), summary.md, metrics.csv and the\n"
    "figures as SVG (L_p(t) as seed 000 figs. 8-9, rotary speed as fig. 6,\n"
    "gauge velocities as fig. 5, L_p error, impact ratio against N, and each\n"
    "run's impact ratios against omega- beside both laws' ratios).  Run\n"
    "`prismlab process` and `prismlab validate` first: a run without them is\n"
    "listed but not compared.\n"};

int pl_cmd_report(int argc, char **argv)
{
    const char *exp = NULL, *out = NULL, *db = NULL;
    long jobs = 0;
    pl_opt opts[] = {
        PL_OPT_REQUIRED_STRING("experiment", &exp, "E", "the experiment"),
        PL_OPT_STRING_F("output", 'o', &out, PL_OPT_REQUIRED, "DIR",
                        "the folder the report goes to"),
        PL_OPT_INT("jobs", &jobs, 0, 4096, "N",
                   "figures drawn at once, each in a process of its own\n"
                   "(0, the default: one per CPU; 1: one after the\n"
                   "other); the files are the same on any count"),
        PL_OPT_DB(&db),
        PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;

    pl_err err = {0};
    pl_store *store = NULL;
    if (pl_store_open(&store, pl_cli_db_path(db), PL_STORE_READONLY, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    pl_report_stats st;
    pl_status s = pl_report_write_jobs(store, exp, out, jobs ? (int)jobs : pl_jobs_cpus(),
                                       &st, &err);
    pl_store_close(store);
    if (s != PL_OK)
        return pl_cli_fail(command.name, &err);
    printf("%s/index.html: %d run%s, %d validated, %d figure%s\n", out, st.runs,
           pl_plural_s(st.runs), st.validated, st.figures, pl_plural_s(st.figures));
    return PL_EXIT_OK;
}
