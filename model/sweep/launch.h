/* model/sweep/launch.h - what started this process: an MPI launcher
 * (mpirun, mpiexec, srun with PMI/PMIx) or Slurm without one.  Read from
 * the environment only, with no library: bin/prismlab (prismlab.c), which
 * links nothing but the C library, asks it to choose between the programs
 * prismlab-sweep and prismlab-sweep-mpi (docs/layout.md, "Start-up"). */
#ifndef PL_MODEL_SWEEP_LAUNCH_H
#define PL_MODEL_SWEEP_LAUNCH_H

#include "core/error.h"

/* True when this process was started by an MPI launcher (mpirun, mpiexec,
 * or srun with PMI/PMIx): the environment says so. */
int pl_sweep_mpi_launched(void);

/* PL_ESTATE when srun started several tasks of this step but no MPI
 * (srun --mpi=none): each would write alone. */
pl_status pl_sweep_launch_check(pl_err *err);

#endif
