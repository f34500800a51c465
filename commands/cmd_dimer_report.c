/* commands/cmd_dimer_report.c - `prismlab dimer-report`: seed 002's
 * figures 11-20 and the modes' basins, checked statement by statement.
 * Only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "model/seeds/dimer_report.h"
#include "model/sweep/engine.h"
#include "model/sweep/launch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const pl_cli_command command = {
    .name = "dimer-report",
    .usage =
    "usage: prismlab dimer-report -o DIR [--threads N] [--basin-n N]\n"
    "                             [--variant-n N] [--quick]\n"
    "       mpirun -np K prismlab dimer-report -o DIR [...]   (or srun --mpi=pmix)\n",
    .about =
    "Checks the bouncing dimer's results (seed 002, Zhao, Liu & Brogliato 2009)\n"
    "one statement at a time and writes an HTML report into DIR: figure 11 (the\n"
    "scaled drift against A_r at 25, 50 and 75 Hz over 16 starts: 3120\n"
    "simulations, and 112 at 2.5 Hz), the paper's runs of figures 12, 13 and\n"
    "15-20 from its starts, and basin maps (the mode reached from every start\n"
    "of a grid) around the starts that land in another mode, with the maps of\n"
    "the choices the paper leaves open.  index.html names every statement with\n"
    "holds / does not hold / not checked (a statement on frequencies or aspect\n"
    "ratios this run did not simulate, as with --quick) and links a page per\n"
    "figure.  Basin maps are kept in DIR as basin-NAME.csv and reused by a\n"
    "later report with the same parameters.  The simulations run on one\n"
    "thread per CPU online; started by mpirun or srun, over the job's ranks\n"
    "(prismlab-dimer-mpi, installed beside prismlab).  The files are the same\n"
    "whatever the threads or ranks.\n"
    "Progress on stderr: each stage's runs done, their rate and the time left.\n"
    "Interrupted (Ctrl-C: SIGINT, or SIGTERM), it stops the simulations, writes\n"
    "index.html with the sections done and the rest marked \"not run:\n"
    "interrupted\" (a basin map cut short is not kept; those finished are,\n"
    "and a later report reads them), and exits with status 130 (SIGINT) or\n"
    "143 (SIGTERM).  Under MPI the batch running ends first.\n"
    "See docs/dimer.md.\n",
    .footer =
    "Measured with the defaults on a quiet 2-core machine (docs/dimer.md, \"On\n"
    "every core\"): figure 11 (3232 runs) 56 s on 1 thread, 29 s on 2; the\n"
    "whole report (155,654 runs; the three basin maps of 201 x 201 and their\n"
    "open choices' maps are 96 % of the time) 32 min on 1 thread, 16 min on 2;\n"
    "under load several times that (figure 11: up to 124 s on 2).  --quick\n"
    "(figure 11 at 25 Hz, A_r 3.9 to 6.5 by 0.1, 4 starts, 40 cycles; no basin\n"
    "maps) takes 1-3 s.  The last line says what each stage took.\n"};

/* The signal that asked the report to stop (SIGINT, SIGTERM), 0: none. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* One meter a stage of the report (figure 11, the paper's runs, each map). */
typedef struct {
    char stage[96];
    pl_cli_meter meter;
} progress_ctx;

static void progress(const char *stage, size_t done, size_t total, void *ctx)
{
    progress_ctx *p = ctx;
    if (strcmp(stage, p->stage) != 0) {
        snprintf(p->stage, sizeof p->stage, "%s", stage);
        pl_cli_meter_start(&p->meter, p->stage, "runs");
    }
    pl_cli_meter_update(&p->meter, done, total);
}

/* Started by mpirun or srun: the process becomes prismlab-dimer-mpi (the
 * same arguments), which holds the MPI code; it lies beside this binary
 * (make builds both into bin/, make install into PREFIX/bin).  Returns
 * only when it cannot. */
static int exec_mpi_helper(int argc, char **argv)
{
    static const char helper[] = "prismlab-dimer-mpi";
    char path[4096];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - sizeof helper - 1);
    if (len > 0)
        path[len] = 0;
    char *slash = len > 0 ? strrchr(path, '/') : NULL;
    pl_err err = {0};
    if (!slash) {
        pl_err_set(&err, PL_EIO, "started by an MPI launcher, but cannot find this "
                   "binary's folder (/proc/self/exe) to run %s from", helper);
        return pl_cli_fail(command.name, &err);
    }
    memcpy(slash + 1, helper, sizeof helper);
    char **args = malloc(sizeof *args * (size_t)(argc + 1));
    if (!args) {
        pl_err_set(&err, PL_ENOMEM, "out of memory");
        return pl_cli_fail(command.name, &err);
    }
    args[0] = path;
    for (int i = 1; i <= argc; i++)
        args[i] = argv[i];      /* argv[argc] is NULL */
    fflush(NULL);
    execv(path, args);
    pl_err_set(&err, PL_EIO, "started by an MPI launcher, but cannot run %s: %s (make "
               "builds it beside prismlab; without it every rank would write the "
               "report alone)", path, strerror(errno));
    free(args);
    return pl_cli_fail(command.name, &err);
}

int pl_cmd_dimer_report(int argc, char **argv)
{
    /* as pl_sweep_launch_check(), in this command's words */
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    if (!pl_sweep_mpi_launched() && ntasks && atoi(ntasks) > 1) {
        pl_err err = {0};
        pl_err_set(&err, PL_ESTATE, "srun started %s tasks without MPI (--mpi=none?): each "
                   "would write the report alone; run srun --mpi=pmix", ntasks);
        return pl_cli_fail(command.name, &err);
    }
    if (pl_sweep_mpi_launched())
        return exec_mpi_helper(argc, argv);
    return pl_cmd_dimer_report_on(argc, argv, NULL, NULL);
}

int pl_cmd_dimer_report_on(int argc, char **argv, pl_dimer_batch_fn batch, void *runner)
{
    const char *dir = NULL;
    long threads = 0, basin_n = -1, variant_n = 51;
    int quick = 0;
    pl_opt opts[] = {
        PL_OPT_STRING_F("output", 'o', &dir, PL_OPT_REQUIRED, "DIR",
                        "the report's folder (created if missing)"),
        PL_OPT_INT("threads", &threads, 0, 256, "N",
                   "simulations at once (default 0: one per CPU online;\n"
                   "under MPI per rank, the node's CPUs shared by its ranks)"),
        PL_OPT_INT("basin-n", &basin_n, 0, 2001, "N",
                   "starts a side of a basin map (default 201, with\n"
                   "--quick 0; 0: no maps)"),
        PL_OPT_INT("variant-n", &variant_n, 0, 2001, "N",
                   "a side of the open choices' maps (default 51: every\n"
                   "4th start of a 201 map; 0: none)"),
        PL_OPT_FLAG("quick", &quick, "a small figure 11 (and no basin maps unless\n"
                    "--basin-n is given)"),
        PL_OPT_END()};
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    pl_dimer_fig11_spec quick_spec;
    static const double quick_f[1] = {25};
    pl_dimer_fig11_default(&quick_spec);
    if (quick) {
        quick_spec.freqs = quick_f;
        quick_spec.n_freqs = 1;
        quick_spec.ar_min = 3.9;
        quick_spec.n_ar = 27;
        quick_spec.n_h0 = 2;
        quick_spec.n_theta0 = 2;
        quick_spec.cycles = 40;
    }
    if (basin_n < 0)
        basin_n = quick ? 0 : 201;
    progress_ctx pc = {.stage = ""};
    pl_dimer_report_opts o = {.threads = (int)threads, .fig11 = quick ? &quick_spec : NULL,
                              .basin_n = (size_t)basin_n, .variant_n = (size_t)variant_n,
                              .progress = progress, .ctx = &pc, .batch = batch,
                              .runner = runner, .stop = &stop_signal};
    pl_dimer_report_stats st;
    pl_err err = {0};
    pl_cli_on_stop(on_signal);   /* the report writes what it has */
    pl_status rs = pl_dimer_report_write(dir, &o, &st, &err);
    if (rs != PL_OK && st.interrupted) {
        if (pl_cli_isatty(stderr))
            fputc('\n', stderr);       /* the meter's line was left open */
        fprintf(stderr, "prismlab %s: %s (%d of %d statements hold, %d do not, %d not "
                "checked, %d not run)\n", command.name, err.msg, st.holding, st.statements,
                st.failing, st.unchecked, st.not_run);
        return 128 + (int)stop_signal;
    }
    if (rs != PL_OK)
        return pl_cli_fail(command.name, &err);
    printf("dimer-report: %s/index.html: %d of %d statements hold, %d do not, %d not "
           "checked; %d pages, %d basin maps; figure 11 in %.1f s\n", dir, st.holding,
           st.statements, st.failing, st.unchecked, st.pages, st.maps, st.fig11_seconds);
    char where[64];
    if (st.threads > 0)
        snprintf(where, sizeof where, "on %d thread%s", st.threads, st.threads > 1 ? "s" : "");
    else
        snprintf(where, sizeof where, "over the MPI job");
    printf("dimer-report: %zu simulations %s: figure 11 %.1f s, the paper's runs %.1f s, "
           "the maps %.1f s (%d of them read from %s)\n", st.runs, where, st.fig11_seconds,
           st.cases_seconds, st.maps_seconds, st.maps_read, dir);
    return PL_EXIT_OK;
}
