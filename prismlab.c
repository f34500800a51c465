/* prismlab.c - the command dispatcher: `prismlab <command> [options]`.
 *
 * main() does only what is process-wide: it turns GSL's abort-on-error
 * handler off (library code checks GSL's return codes instead), makes
 * stdout line-buffered for scripts that read progress, and dispatches.
 */
#include "commands.h"
#include "core/cli.h"
#include "core/version.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"db", pl_cmd_db, "create, check and describe the database"},
    {"prism", pl_cmd_prism, "add, list and import prisms of the catalogue"},
    {"ramp", pl_cmd_ramp, "add, list and import ramps of the catalogue"},
    {"experiment", pl_cmd_experiment, "add and list experiments"},
    {"run", pl_cmd_run, "list, show, correct and delete runs"},
    {"acquire", pl_cmd_acquire, "record a run from the rig (DAQ card or simulator)"},
    {"export", pl_cmd_export, "write a run (CSV volts, WAV raw) or a processed series"},
    {"import", pl_cmd_import, "store a recording from a WAV or CSV file (or a manifest of them)"},
    {"sim", pl_cmd_sim, "the rig simulator: write a synthetic recording and its truth"},
    {"process", pl_cmd_process, "derive omega, theta, L_p, impacts and spectra from runs"},
    {"simulate", pl_cmd_simulate, "simulate a prism rolling down a ramp"},
    {"validate", pl_cmd_validate, "match simulations to processed runs and measure the errors"},
    {"roughplane", pl_cmd_roughplane, "a particle or rigid body sliding on a rough plane (seed 003)"},
    {"sphere", pl_cmd_sphere, "rolling friction of a viscous sphere (seed 004)"},
    {"dimer", pl_cmd_dimer, "a dimer bouncing on a vibrating plate (seed 002)"},
    {"dimer-report", pl_cmd_dimer_report, "seed 002's figures 11-20 and basin maps, checked"},
    {"report", pl_cmd_report, "write the validation report of an experiment (HTML)"},
    {"serve", pl_cmd_serve, "the lab in a browser: runs, zoomable plots, reports, the live rig"},
    {"sweep", pl_cmd_sweep, "run a parameter sweep (one machine, MPI, Slurm); list, export"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: prismlab <command> [options]   (prismlab %s)\n\n"
            "Data acquisition and model validation for a prism rolling on a\n"
            "ramp (Zhao, Liu & Ma 2014).  Commands:\n\n",
            pl_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n'prismlab <command> --help' describes a command.  The database "
            "is --db FILE\n(before or after the command), else $PRISMLAB_DB, "
            "else ./prismlab.db;\nonly 'prismlab db init' creates one.  "
            "Wherever a command writes a file,\n'-' means standard output.  "
            "Exit status: 0 success, 1 usage error, 2 data\nor I/O error.  "
            "The documents named in the helps (docs/*.md) are in docs/ of\nthe "
            "source tree and, installed, in PREFIX/share/doc/prismlab/docs/ (man "
            "prismlab).\n");
}

/* Global options come before the command (`prismlab --db F run list`):
 * they are handed to the command as if given after it, at the end of its
 * arguments or before its "--", so the command's own table parses them
 * and one that takes no such option says so.  Returns the new argc, or -1
 * after a usage error. */
static int move_global_options(int argc, char **argv, char **out)
{
    int n = 0, first = 1, globals = 0;
    enum { MAX_MOVED = 16 };
    char *moved[MAX_MOVED];

    while (first < argc && argv[first][0] == '-' && strcmp(argv[first], "--") &&
           strcmp(argv[first], "--help") && strcmp(argv[first], "-h") &&
           strcmp(argv[first], "--version")) {
        const char *a = argv[first];
        if (!strcmp(a, "--db") && first + 1 < argc && globals + 2 <= MAX_MOVED) {
            moved[globals++] = argv[first];
            moved[globals++] = argv[first + 1];
            first += 2;
        } else if (!strncmp(a, "--db=", 5) && globals + 1 <= MAX_MOVED) {
            moved[globals++] = argv[first++];
        } else {
            fprintf(stderr, "prismlab: unknown option '%s' before the command "
                    "(before it: --db FILE, --help, --version; see "
                    "'prismlab --help')\n", a);
            return -1;
        }
    }
    if (first >= argc) {
        if (globals)
            fprintf(stderr, "prismlab: a command is needed after the global "
                    "options (see 'prismlab --help')\n");
        return globals ? -1 : n;
    }
    for (int i = first; i < argc && strcmp(argv[i], "--"); i++, first++)
        out[n++] = argv[i];
    for (int i = 0; i < globals; i++)
        out[n++] = moved[i];
    for (int i = first; i < argc; i++)
        out[n++] = argv[i];
    out[n] = NULL;
    return n;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && argv[1][0] == '-' && strcmp(argv[1], "--help") &&
        strcmp(argv[1], "-h") && strcmp(argv[1], "--version")) {
        /* argv's own storage holds the reordered list: same length */
        char **reordered = malloc(sizeof *reordered * (size_t)(argc + 1));
        int n;
        if (!reordered)
            return PL_EXIT_DATA;
        n = move_global_options(argc, argv, reordered + 1);
        if (n < 0) {
            free(reordered);
            return PL_EXIT_USAGE;
        }
        reordered[0] = argv[0];
        memcpy(argv, reordered, sizeof *argv * (size_t)(n + 2));
        argc = n + 1;
        free(reordered);
    }
    if (argc < 2) {
        usage(stderr);
        return PL_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return PL_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("prismlab %s\n", pl_version());
        return PL_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "prismlab: '%s' is not a prismlab command (see 'prismlab "
                    "--help')\n", argv[1]);
    return PL_EXIT_USAGE;
}
