/* prismlab_dimer_mpi.c - prismlab-dimer-mpi: `prismlab dimer-report` over
 * the ranks of an MPI job.  `mpirun -np K prismlab dimer-report ...` (or
 * srun) starts prismlab, whose dimer-report hands the process over to
 * this binary with the same arguments (exec), so that prismlab itself
 * never loads MPI; running this binary under mpirun directly is the same.
 *
 * Rank 0 runs the report as prismlab does (commands.h,
 * pl_cmd_dimer_report_on): it alone reads and writes files and prints.
 * Each batch of simulations (figure 11, a basin map) goes over every
 * rank: rank 0 broadcasts the batch's parameters, rank r runs the starts
 * r, r + K, r + 2K, ... (interleaved, so that every rank gets the same
 * mix of cheap and dear starts) on its threads, and rank 0 gathers the
 * results into place.  Each start is computed alone from its own
 * parameters, so the results are those of one thread, bit for bit.  The
 * other ranks only serve batches until rank 0 says the report is done.
 * Only the main thread of each rank calls MPI (MPI_THREAD_FUNNELED).
 *
 * Threads a rank: --threads N, or by default the CPUs online shared among
 * the ranks on the same node (MPI_COMM_TYPE_SHARED), at least one.
 * Progress: rank 0 counts its own share, scaled to the batch.
 */
#include "commands.h"
#include "core/cli.h"
#include "model/seeds/dimer_maps.h"

#include <gsl/gsl_errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A batch's header, broadcast by rank 0: what to do, its size, threads. */
enum { CMD_STOP = 0, CMD_BATCH = 1 };
typedef struct {
    uint64_t cmd, n;
    int64_t threads;
} header;

typedef struct {
    int rank, size, local;      /* this rank, the job's ranks, ranks on this node */
} job;

/* Starts of a batch of n that rank r runs: r, r + size, ... */
static size_t share_of(const job *j, int r, size_t n)
{
    return (size_t)r < n ? (n - (size_t)r + (size_t)j->size - 1) / (size_t)j->size : 0;
}

static int threads_of(const job *j, int64_t asked)
{
    if (asked > 0)
        return pl_dimer_threads((int)asked);
    int cpus = pl_dimer_threads(0), t = cpus / (j->local > 0 ? j->local : 1);
    return t > 0 ? t : 1;
}

/* Rank 0's progress: its share's count scaled to the batch, short of the
 * total until every rank has answered. */
typedef struct {
    pl_dimer_progress progress;
    void *ctx;
    size_t n, mine;
} scaled;

static int scale_progress(size_t done, size_t total, void *ctx)
{
    scaled *s = ctx;
    (void)total;
    size_t est = s->mine ? (size_t)((double)done / (double)s->mine * (double)s->n) : 0;
    /* a stop is not passed on: the other ranks would wait in the gather
     * for rank 0's share; the report sees its interruption after the batch */
    (void)s->progress(est < s->n ? est : s->n - 1, s->n, s->ctx);
    return 0;
}

static void die(const job *j, const char *what)
{
    fprintf(stderr, "prismlab-dimer-mpi: rank %d of %d: %s\n", j->rank, j->size, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Every rank's part of a batch whose parameters all ranks hold: its share
 * on its threads, then the results gathered into res and ok on rank 0
 * (NULL elsewhere).  A rank that fails takes the job down: the others
 * would wait for it. */
static void run_share(const job *j, const pl_dimer_params *ps, size_t n, int threads,
                      pl_dimer_result *res, int *ok, scaled *prog)
{
    size_t m = share_of(j, j->rank, n);
    pl_dimer_params *mp = malloc((m ? m : 1) * sizeof *mp);
    pl_dimer_result *mr = malloc((m ? m : 1) * sizeof *mr);
    int *mo = malloc((m ? m : 1) * sizeof *mo);
    if (!mp || !mr || !mo)
        die(j, "out of memory for its share of a batch");
    for (size_t k = 0; k < m; k++)
        mp[k] = ps[(size_t)j->rank + k * (size_t)j->size];
    pl_err err = {0};
    if (pl_dimer_batch(mp, m, threads, mr, mo, prog ? scale_progress : NULL, prog,
                       &err) != PL_OK)
        die(j, err.msg);
    /* counts and displacements in bytes and ints, rank after rank */
    int *cnt = NULL, *dsp = NULL, *icnt = NULL, *idsp = NULL;
    pl_dimer_result *all = NULL;
    int *allok = NULL;
    if (j->rank == 0) {
        cnt = malloc(4 * sizeof *cnt * (size_t)j->size);
        all = malloc(n * sizeof *all);
        allok = malloc(n * sizeof *allok);
        if (!cnt || !all || !allok)
            die(j, "out of memory for a batch's results");
        dsp = cnt + j->size;
        icnt = dsp + j->size;
        idsp = icnt + j->size;
        size_t off = 0;
        for (int r = 0; r < j->size; r++) {
            size_t mr_ = share_of(j, r, n);
            cnt[r] = (int)(mr_ * sizeof *all);
            dsp[r] = (int)(off * sizeof *all);
            icnt[r] = (int)mr_;
            idsp[r] = (int)off;
            off += mr_;
        }
    }
    MPI_Gatherv(mr, (int)(m * sizeof *mr), MPI_BYTE, all, cnt, dsp, MPI_BYTE, 0,
                MPI_COMM_WORLD);
    MPI_Gatherv(mo, (int)m, MPI_INT, allok, icnt, idsp, MPI_INT, 0, MPI_COMM_WORLD);
    if (j->rank == 0) {
        /* rank r's k-th result is start r + k size */
        for (int r = 0; r < j->size; r++)
            for (int k = 0; k < icnt[r]; k++) {
                size_t i = (size_t)r + (size_t)k * (size_t)j->size;
                res[i] = all[idsp[r] + k];
                ok[i] = allok[idsp[r] + k];
            }
    }
    free(cnt);
    free(all);
    free(allok);
    free(mp);
    free(mr);
    free(mo);
}

/* Rank 0's pl_dimer_batch_fn: the batch over every rank. */
static pl_status mpi_batch(void *runner, const pl_dimer_params *ps, size_t n, int threads,
                           pl_dimer_result *res, int *ok, pl_dimer_progress progress,
                           void *ctx, pl_err *err)
{
    const job *j = runner;
    /* MPI counts are ints: a batch's bytes must fit */
    if (n > (size_t)INT32_MAX / sizeof *ps || n > (size_t)INT32_MAX / sizeof *res)
        return pl_err_set(err, PL_EINVAL, "a batch of %zu simulations is too large to "
                          "send over MPI in one message", n);
    header h = {CMD_BATCH, n, threads};
    MPI_Bcast(&h, sizeof h, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast((void *)ps, (int)(n * sizeof *ps), MPI_BYTE, 0, MPI_COMM_WORLD);
    scaled sc = {progress, ctx, n, share_of(j, 0, n)};
    if (progress)
        progress(0, n, ctx);
    run_share(j, ps, n, threads_of(j, threads), res, ok, progress ? &sc : NULL);
    if (progress)
        progress(n, n, ctx);
    return PL_OK;
}

/* Ranks other than 0: batches until rank 0 says stop. */
static void serve(const job *j)
{
    for (;;) {
        header h;
        MPI_Bcast(&h, sizeof h, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (h.cmd != CMD_BATCH)
            return;
        pl_dimer_params *ps = malloc((h.n ? h.n : 1) * sizeof *ps);
        if (!ps)
            die(j, "out of memory for a batch's parameters");
        MPI_Bcast(ps, (int)(h.n * sizeof *ps), MPI_BYTE, 0, MPI_COMM_WORLD);
        run_share(j, ps, h.n, threads_of(j, h.threads), NULL, NULL, NULL);
        free(ps);
    }
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    setvbuf(stdout, NULL, _IOLBF, 0);
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "prismlab-dimer-mpi: MPI_Init failed\n");
        return PL_EXIT_DATA;
    }
    job j;
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, j.rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &j.local);
    MPI_Comm_free(&node);
    int rc = PL_EXIT_OK;
    if (j.rank == 0) {
        rc = pl_cmd_dimer_report_on(argc, argv, mpi_batch, &j);
        header stop = {CMD_STOP, 0, 0};
        MPI_Bcast(&stop, sizeof stop, MPI_BYTE, 0, MPI_COMM_WORLD);
    } else {
        serve(&j);
    }
    MPI_Finalize();
    return rc;
}
