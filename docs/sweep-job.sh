#!/bin/sh
# docs/sweep-job.sh - the prism's phase map on a Slurm cluster (docs/sweep.md).
# Make the database once (`prismlab db init --db ~/phase.db`), then submit
# with `sbatch docs/sweep-job.sh`.  Every task of the array resumes
# the sweep: the first starts it, a task cut off by its time limit (or a
# lost node) leaves its stored points, the next goes on, the ones after
# the end store nothing.  Rank 0 is the only writer of the one database.
#SBATCH --job-name=prism-phase
#SBATCH --ntasks=64
#SBATCH --time=04:00:00
#SBATCH --array=0-9%1
#SBATCH --output=prism-phase-%A_%a.out
srun --mpi=pmix --kill-on-bad-exit=1 \
    prismlab sweep fixtures/sweeps/prism-phase.ini --db "$HOME/phase.db" --resume
