/* model/sweep/launch.c - an MPI launcher or not, from the environment.
 * See launch.h. */
#include "model/sweep/launch.h"

#include <stdlib.h>

int pl_sweep_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") ||
           getenv("PMI_RANK") || getenv("PMI_SIZE");
}

pl_status pl_sweep_launch_check(pl_err *err)
{
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    if (!pl_sweep_mpi_launched() && ntasks && atoi(ntasks) > 1)
        return pl_err_set(err, PL_ESTATE, "srun started %s tasks without MPI (--mpi=none?): "
                          "each would run the whole sweep and write alone; run srun "
                          "--mpi=pmix", ntasks);
    return PL_OK;
}
