/* commands/cmd_sweep_mpi.c - `prismlab sweep` as the program
 * prismlab-sweep-mpi: the same command as cmd_sweep.c, given the MPI run
 * of engine_mpi.c.  The only command that refers to MPI, so the only
 * program that loads Open MPI's libraries; bin/prismlab runs it for
 * `sweep` when mpirun or srun started it (docs/sweep.md). */
#include "commands.h"
#include "model/sweep/engine.h"

int pl_cmd_sweep_mpi(int argc, char **argv)
{
    static const pl_sweep_mpi_ops mpi = {pl_sweep_run_mpi, pl_sweep_mpi_end};
    return pl_sweep_command(argc, argv, &mpi);
}
