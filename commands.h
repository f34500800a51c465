/* commands.h - every `prismlab <command>` entry point.
 *
 * Each command lives in its stage's folder as cmd_<name>.c: its usage and
 * help text (a pl_cli_command), its option table and one pl_cli_parse()
 * call (core/cli.h: --help comes from the table), then a call into its
 * stage.  It returns the exit status: 0 on success, 1 on a usage error, 2
 * on a data or I/O error.
 *
 * Each line `int pl_cmd_NAME(int argc, char **argv);` below is also a
 * program: the Makefile links libexec/prismlab/prismlab-NAME (underscores
 * as dashes) from command_main.c and the library, with only the shared
 * libraries that command's code calls, and bin/prismlab (prismlab.c)
 * execs it (docs/layout.md, "Start-up").  To add a command: write the
 * file, declare it here, add a row to the table in prismlab.c, and
 * document it in docs/prismlab.1.
 */
#ifndef PL_COMMANDS_H
#define PL_COMMANDS_H

#include "model/seeds/dimer_maps.h"     /* pl_dimer_batch_fn */

/* db/ */
int pl_cmd_db(int argc, char **argv);
int pl_cmd_prism(int argc, char **argv);
int pl_cmd_ramp(int argc, char **argv);
int pl_cmd_experiment(int argc, char **argv);
int pl_cmd_run(int argc, char **argv);

/* acquire/ */
int pl_cmd_acquire(int argc, char **argv);
int pl_cmd_export(int argc, char **argv);
int pl_cmd_import(int argc, char **argv);
int pl_cmd_sim(int argc, char **argv);

/* process/ */
int pl_cmd_process(int argc, char **argv);

/* model/ */
int pl_cmd_simulate(int argc, char **argv);
int pl_cmd_validate(int argc, char **argv);
int pl_cmd_report(int argc, char **argv);
int pl_cmd_sphere(int argc, char **argv);
int pl_cmd_dimer(int argc, char **argv);
int pl_cmd_dimer_report(int argc, char **argv);
/* dimer-report with each batch run by batch(runner, ...) (NULL: on
 * threads): what prismlab-dimer-mpi's rank 0 runs.  pl_cmd_dimer_report()
 * itself, started by an MPI launcher, hands its process over to
 * prismlab-dimer-mpi (exec), so that this binary needs no MPI. */
int pl_cmd_dimer_report_on(int argc, char **argv, pl_dimer_batch_fn batch, void *runner);
int pl_cmd_roughplane(int argc, char **argv);
int pl_cmd_sweep(int argc, char **argv);
/* `sweep` linked with Open MPI (cmd_sweep_mpi.c): the program bin/prismlab
 * runs instead of prismlab-sweep when mpirun or srun started it */
int pl_cmd_sweep_mpi(int argc, char **argv);
/* both of them: mpi is the MPI run (engine.h), NULL without MPI */
struct pl_sweep_mpi_ops;
int pl_sweep_command(int argc, char **argv, const struct pl_sweep_mpi_ops *mpi);

/* web/ */
int pl_cmd_serve(int argc, char **argv);

#endif
