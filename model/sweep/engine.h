/* model/sweep/engine.h - running a sweep's points into the store, on one
 * machine (one worker thread per CPU) or over the ranks of an MPI job
 * (mpirun, srun); docs/sweep.md.
 *
 * One process writes: the calling process on one machine, rank 0 under
 * MPI.  It opens the store, creates the sweep (or, with resume, checks the
 * stored file's SHA-256 against this one and lists the points without a
 * row), and hands the missing points out dynamically in chunks (guided
 * self-scheduling: a chunk is a share of what is left, capped at about
 * 0.2 s of work by the mean cost so far), because points differ 100x in
 * cost.  Finished points are stored as they arrive, each in the
 * transaction of its batch: a kill loses only the points in flight.  Rank
 * 0 also computes, in a second thread; other ranks only compute.  Only
 * rank 0's main thread calls MPI (MPI_THREAD_FUNNELED).
 *
 * The rows depend only on the sweep file and the build, never on the
 * number of workers or ranks: each point's parameters come from its index.
 *
 * The MPI side (pl_sweep_run_mpi, pl_sweep_mpi_end) is engine_mpi.c, the
 * one file that includes mpi.h; only the program prismlab-sweep-mpi links
 * it (commands.h), and hands it to the command as a pl_sweep_mpi_ops.
 * Whether an MPI launcher started this process is launch.h's.
 */
#ifndef PL_MODEL_SWEEP_ENGINE_H
#define PL_MODEL_SWEEP_ENGINE_H

#include "core/error.h"
#include "model/sweep/spec.h"

typedef struct {
    int workers;            /* threads on one machine; 0: one per CPU */
    int resume;             /* go on with a stored sweep of the same file */
    /* called by the writer after each stored batch (may be NULL) */
    void (*progress)(void *ctx, long long stored, long long total, double wall_s);
    void *progress_ctx;
} pl_sweep_opts;

typedef struct {
    char name[64];          /* the sweep's name */
    long long total;        /* points of the sweep */
    long long before;       /* stored before this run */
    long long computed;     /* stored by this run */
    long long failed;       /* of them, refused or failed by the model */
    int workers;            /* threads, or ranks under MPI */
    double wall_s;          /* from the first hand-out to the last point stored */
    double compute_s;       /* sum of the points' model time */
    double sched_s;         /* scheduling: the workers' time waiting for a
                               chunk (lock, request and answer), summed */
    double write_s;         /* the writer's time storing points */
    double min_cost_s;      /* the cheapest point's model time */
    long long chunks;       /* chunks handed out */
} pl_sweep_stats;

/* The sweep file's text as it runs: when its [fixed] names a prism and a
 * ramp of the catalogue (prism = steel-22), their numbers are looked up
 * in the store at db_path (read only) and appended to *text as a
 * [catalogue] section (N, a0, mass, beta-deg, mu-s, mu, ramp-length, as
 * `prismlab simulate --prism --ramp` takes them); the file's own numbers
 * override them.  The text with the section is what every rank parses
 * and what the store keeps (its SHA-256 too), so no other rank needs the
 * store, and a resume after the catalogue changed is refused.  *text
 * unchanged when there is nothing to look up; a file the parser refuses
 * is refused here by the same words.  PL_ENOTFOUND names a missing entry. */
pl_status pl_sweep_text_resolve(char **text, const char *path, const char *db_path,
                                pl_err *err);

/* Runs the sweep's missing points on this machine into the store at
 * db_path.  PL_EEXIST when the sweep is stored and resume is not set,
 * PL_ESTATE when resume finds a different file under the name. */
pl_status pl_sweep_run_local(const pl_sweep_spec *spec, const char *db_path,
                             const pl_sweep_opts *opts, pl_sweep_stats *stats,
                             pl_err *err);

/* Runs the sweep file at path over the MPI job this process is a rank of:
 * MPI_Init, rank 0 reads the file and sends its text to every rank, rank
 * 0 writes (as pl_sweep_run_local).  *rank receives this process's rank
 * (only rank 0 should print); stats are rank 0's.  A failure every rank
 * agreed on (a bad file, a stored sweep without resume) is returned by
 * all; one this rank met alone (mid-run) sets *alone.  The caller prints,
 * then calls pl_sweep_mpi_end(). */
pl_status pl_sweep_run_mpi(const char *path, const char *db_path,
                           const pl_sweep_opts *opts, int *rank, int *alone,
                           pl_sweep_stats *stats, pl_err *err);

/* Ends MPI after pl_sweep_run_mpi(): MPI_Finalize, or with alone set
 * MPI_Abort, which takes every rank of the job down (stored points stay
 * for --resume).  A no-op when MPI was not started. */
void pl_sweep_mpi_end(int alone);

/* The two above as the command takes them: the program linked with Open
 * MPI passes {pl_sweep_run_mpi, pl_sweep_mpi_end}, the other none, so
 * that only the first refers to MPI at all. */
typedef struct pl_sweep_mpi_ops {
    pl_status (*run)(const char *path, const char *db_path, const pl_sweep_opts *opts,
                     int *rank, int *alone, pl_sweep_stats *stats, pl_err *err);
    void (*end)(int alone);
} pl_sweep_mpi_ops;

#endif
