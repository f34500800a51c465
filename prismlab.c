/* prismlab.c - the command dispatcher: `prismlab <command> [options]`.
 *
 * bin/prismlab links no library but the C library: it answers --help and
 * --version itself, moves the global options behind the command, and
 * execs the command's own program, PREFIX/libexec/prismlab/prismlab-NAME
 * (found beside this one: ../libexec/prismlab from the folder this binary
 * is in), which loads only the shared libraries that command calls.  The
 * process stays the same (same pid, same argv), so launchers, signals and
 * `pgrep -f` see one prismlab.  Loading all 48 shared objects for every
 * command cost 5-13 ms; docs/layout.md ("Start-up") has the figures.
 */
#include "core/cli.h"
#include "core/version.h"
#include "model/sweep/launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct command {
    const char *name;
    const char *summary;
    /* the program to run instead when an MPI launcher started this one */
    const char *mpi_program;
};

static const struct command commands[] = {
    {"db", "create, check and describe the database", NULL},
    {"prism", "add, list and import prisms of the catalogue", NULL},
    {"ramp", "add, list and import ramps of the catalogue", NULL},
    {"experiment", "add and list experiments", NULL},
    {"run", "list, show, correct and delete runs", NULL},
    {"acquire", "record a run from the rig (DAQ card or simulator)", NULL},
    {"export", "write a run (CSV volts, WAV raw) or a processed series", NULL},
    {"import", "store a recording from a WAV or CSV file (or a manifest of them)", NULL},
    {"sim", "the rig simulator: write a synthetic recording and its truth", NULL},
    {"process", "derive omega, theta, L_p, impacts and spectra from runs", NULL},
    {"simulate", "simulate a prism rolling down a ramp", NULL},
    {"validate", "match simulations to processed runs and measure the errors", NULL},
    {"roughplane", "a particle or rigid body sliding on a rough plane (seed 003)", NULL},
    {"sphere", "rolling friction of a viscous sphere (seed 004)", NULL},
    {"dimer", "a dimer bouncing on a vibrating plate (seed 002)", NULL},
    {"dimer-report", "seed 002's figures 11-20 and basin maps, checked", NULL},
    {"report", "write the validation report of an experiment (HTML)", NULL},
    {"serve", "the lab in a browser: runs, zoomable plots, reports, the live rig", NULL},
    {"sweep", "run a parameter sweep (one machine, MPI, Slurm); list, export", "sweep-mpi"},
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

/* Execs libexec/prismlab/prismlab-PROGRAM beside this binary with argv
 * as it is; returns only on a failure, with the exit status. */
static int run_program(const char *program, char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || (size_t)n >= sizeof self - 1) {
        fprintf(stderr, "prismlab: cannot tell where this program is (/proc/self/exe): %s\n",
                n < 0 ? strerror(errno) : "path too long");
        return PL_EXIT_DATA;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    if (snprintf(path, sizeof path, "%s/../libexec/prismlab/prismlab-%s", self, program) >=
        (int)sizeof path) {
        fprintf(stderr, "prismlab: the path of '%s' is too long\n", program);
        return PL_EXIT_DATA;
    }
    execv(path, argv);
    fprintf(stderr, "prismlab: cannot run '%s': %s (the command's program, built by make "
            "and installed by make install beside bin/prismlab)\n", path, strerror(errno));
    return PL_EXIT_DATA;
}

int main(int argc, char **argv)
{
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
            return run_program(commands[i].mpi_program && pl_sweep_mpi_launched()
                                   ? commands[i].mpi_program : commands[i].name, argv);
    fprintf(stderr, "prismlab: '%s' is not a prismlab command (see 'prismlab "
                    "--help')\n", argv[1]);
    return PL_EXIT_USAGE;
}
