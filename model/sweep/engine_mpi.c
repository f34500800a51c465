/* model/sweep/engine_mpi.c - the sweep over the ranks of an MPI job: rank
 * 0 hands out and writes (engine_private.h's hand-out and writer, as on
 * one machine), the other ranks compute.  See engine.h and docs/sweep.md.
 *
 * The only file that includes mpi.h.  Only the program
 * libexec/prismlab/prismlab-sweep-mpi (commands/cmd_sweep_mpi.c) links
 * it, and bin/prismlab runs that program for `sweep` only when an MPI
 * launcher started it, so no other command loads Open MPI. */
#include "model/sweep/engine_private.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_STATUS = 1, TAG_RESULTS = 2, TAG_CHUNK = 3 };

/* A results message: [count u64][the rank's time waiting for chunks so
 * far, f64][wants a chunk u32][done u32], per point [idx i64][ok i32][cost f64]
 * [params len u32, bytes][result len u32, bytes][series n u64, f64s]; the
 * same host writes and reads it (one build on one cluster). */
typedef struct {
    unsigned char *b;
    size_t len, cap;
    int oom;
} pack;

static void put(pack *p, const void *src, size_t n)
{
    if (p->oom)
        return;
    if (p->len + n > p->cap) {
        size_t c = p->cap ? p->cap * 2 : 4096;
        while (c < p->len + n)
            c *= 2;
        unsigned char *nb = realloc(p->b, c);
        if (!nb) {
            p->oom = 1;
            return;
        }
        p->b = nb;
        p->cap = c;
    }
    memcpy(p->b + p->len, src, n);
    p->len += n;
}

static void pack_out(pack *p, long long idx, const pl_sweep_out *o)
{
    int64_t i = idx;
    int32_t ok = o->ok;
    uint32_t lp = (uint32_t)strlen(o->params), lr = (uint32_t)strlen(o->result);
    uint64_t ns = o->series_n;
    put(p, &i, sizeof i);
    put(p, &ok, sizeof ok);
    put(p, &o->cost_s, sizeof o->cost_s);
    put(p, &lp, sizeof lp);
    put(p, o->params, lp);
    put(p, &lr, sizeof lr);
    put(p, o->result, lr);
    put(p, &ns, sizeof ns);
    if (ns)
        put(p, o->series, ns * sizeof(double));
}

static int get(const unsigned char *b, size_t len, size_t *at, void *dst, size_t n)
{
    if (*at + n > len)
        return 0;
    memcpy(dst, b + *at, n);
    *at += n;
    return 1;
}

/* Unpacks a results message onto the queue (mu held by the caller). */
static pl_status unpack_items(pl_sweep_shared *sh, const unsigned char *b, size_t len,
                              long long *count, double *idle, uint32_t *want,
                              uint32_t *done, pl_err *err)
{
    size_t at = 0;
    uint64_t n;
    *count = 0;
    *want = *done = 0;
    if (!get(b, len, &at, &n, sizeof n) || !get(b, len, &at, idle, sizeof *idle) ||
        !get(b, len, &at, want, sizeof *want) || !get(b, len, &at, done, sizeof *done))
        return pl_err_set(err, PL_EFORMAT, "sweep: a short message from a rank");
    for (uint64_t k = 0; k < n; k++) {
        int64_t idx;
        int32_t ok;
        double cost;
        uint32_t lp, lr;
        uint64_t ns;
        pl_sweep_item *it = calloc(1, sizeof *it);
        if (!it)
            return pl_err_set(err, PL_ENOMEM, "out of memory for a point");
        int good = get(b, len, &at, &idx, sizeof idx) && get(b, len, &at, &ok, sizeof ok) &&
                   get(b, len, &at, &cost, sizeof cost) && get(b, len, &at, &lp, sizeof lp) &&
                   (it->params = calloc(1, (size_t)lp + 1)) &&
                   get(b, len, &at, it->params, lp) && get(b, len, &at, &lr, sizeof lr) &&
                   (it->result = calloc(1, (size_t)lr + 1)) &&
                   get(b, len, &at, it->result, lr) && get(b, len, &at, &ns, sizeof ns) &&
                   ns <= len / sizeof(double) &&
                   (!ns || ((it->series = malloc(ns * sizeof(double))) &&
                            get(b, len, &at, it->series, ns * sizeof(double))));
        if (!good) {
            pl_sweep_item_free(it);
            return pl_err_set(err, PL_EFORMAT, "sweep: a malformed message from a rank");
        }
        it->idx = idx;
        it->ok = ok;
        it->cost_s = cost;
        it->series_n = ns;
        pl_sweep_push_locked(sh, it);
        (*count)++;
    }
    return PL_OK;
}

/* Starts sending a results message: the header is written into the
 * first HEADER bytes of p->b, the packed points follow.  p stays in use
 * until *req completes. */
static void send_results(pack *p, uint64_t n, double idle, uint32_t want, uint32_t done,
                         MPI_Request *req)
{
    unsigned char *h = p->b;
    memcpy(h, &n, sizeof n);
    memcpy(h + 8, &idle, sizeof idle);
    memcpy(h + 16, &want, sizeof want);
    memcpy(h + 20, &done, sizeof done);
    MPI_Isend(p->b, (int)p->len, MPI_BYTE, 0, TAG_RESULTS, MPI_COMM_WORLD, req);
}

enum { HEADER = 24 };

/* A rank other than 0.  It keeps a second chunk coming while it computes
 * one: every request has its receive posted before it is sent (two
 * buffers, answers match in order), and results go out without waiting
 * for rank 0 to take them, so the rank waits for rank 0 only at the start
 * and the end.  Its last message says it is done. */
static pl_status rank_worker(const pl_sweep_spec *spec, pl_err *err)
{
    pack p[2] = {{0}, {0}};
    MPI_Request rreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Request sreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    pl_sweep_out out = {0};
    long long (*chunk)[PL_SWEEP_MAX_CHUNK] = malloc(2 * sizeof *chunk);
    int fifo[2], nf = 0, more = 1, ps = 0;
    pl_status st = PL_OK;
    double t_idle = 0;
    unsigned char hdr[HEADER] = {0};
    if (!chunk)
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    for (int b = 0; b < 2; b++) {
        put(&p[b], hdr, HEADER);
        MPI_Irecv(chunk[b], PL_SWEEP_MAX_CHUNK, MPI_LONG_LONG, 0, TAG_CHUNK, MPI_COMM_WORLD,
                  &rreq[b]);
        fifo[nf++] = b;
        send_results(&p[b], 0, 0, 1, 0, &sreq[b]);
    }
    while (nf > 0) {
        int b = fifo[0], k;
        fifo[0] = fifo[1];
        nf--;
        MPI_Status ms;
        int flag = 0;
        MPI_Test(&rreq[b], &flag, &ms);
        if (!flag) {   /* nothing in hand: this is waiting for work */
            double t0 = pl_sweep_now_s();
            MPI_Wait(&rreq[b], &ms);
            t_idle += pl_sweep_now_s() - t0;
        }
        MPI_Get_count(&ms, MPI_LONG_LONG, &k);
        if (k <= 0) {
            more = 0;
            continue;
        }
        /* the message of two sends ago used this pack: it has gone */
        MPI_Wait(&sreq[ps], MPI_STATUS_IGNORE);
        pack *pk = &p[ps];
        pk->len = HEADER;
        for (int i = 0; i < k; i++) {
            if (pl_sweep_compute(spec, chunk[b][i], &out, err) != PL_OK) {
                st = err->code;
                break;
            }
            pack_out(pk, chunk[b][i], &out);
        }
        if (st == PL_OK && pk->oom)
            st = pl_err_set(err, PL_ENOMEM, "out of memory for a results message");
        if (st != PL_OK)
            break;
        if (more) {
            MPI_Irecv(chunk[b], PL_SWEEP_MAX_CHUNK, MPI_LONG_LONG, 0, TAG_CHUNK,
                      MPI_COMM_WORLD, &rreq[b]);
            fifo[nf++] = b;
        }
        send_results(pk, (uint64_t)k, t_idle, more, 0, &sreq[ps]);
        ps = 1 - ps;
    }
    if (st == PL_OK) {
        MPI_Wait(&sreq[ps], MPI_STATUS_IGNORE);
        p[ps].len = HEADER;
        send_results(&p[ps], 0, t_idle, 0, 1, &sreq[ps]);
        MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE);
    }
    pl_sweep_out_free(&out);
    free(chunk);
    free(p[0].b);
    free(p[1].b);
    return st;
}

/* What rank 0 keeps to answer the ranks: each rank's wait, the message
 * buffer, and two answers in flight per rank at most (a rank has two
 * requests out), each its own buffer, sent without waiting for the rank. */
typedef struct {
    int size;
    int active;                     /* ranks that have not said they are done */
    double *idle;                   /* each rank's wait */
    unsigned char *buf;
    size_t bufcap;
    long long (*out)[2][PL_SWEEP_MAX_CHUNK];
    MPI_Request *oreq;
} hub;

static void hub_free(hub *h)
{
    free(h->out);
    free(h->oreq);
    free(h->idle);
    free(h->buf);
}

/* -1 when out of memory (h then holds nothing). */
static int hub_init(hub *h, int size)
{
    memset(h, 0, sizeof *h);
    h->size = size;
    h->active = size - 1;
    h->idle = calloc((size_t)size, sizeof *h->idle);
    h->out = malloc((size_t)size * sizeof *h->out);
    h->oreq = malloc((size_t)size * 2 * sizeof *h->oreq);
    if (!h->idle || !h->out || !h->oreq) {
        hub_free(h);
        return -1;
    }
    for (int i = 0; i < 2 * size; i++)
        h->oreq[i] = MPI_REQUEST_NULL;
    return 0;
}

/* Answers one rank's results, when one has sent some: takes them in,
 * and hands the rank its next chunk when it wants one (answering first,
 * then writing: the rank computes meanwhile).  Returns 1 when there was
 * a message; *st takes the first failure. */
static int hub_serve(hub *h, pl_sweep_shared *sh, pl_status *st, pl_err *err)
{
    int flag = 0;
    MPI_Status ms;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULTS, MPI_COMM_WORLD, &flag, &ms);
    if (!flag)
        return 0;
    int len;
    MPI_Get_count(&ms, MPI_BYTE, &len);
    if ((size_t)len > h->bufcap) {
        unsigned char *nb = realloc(h->buf, (size_t)len);
        if (!nb) {
            *st = pl_err_set(err, PL_ENOMEM, "out of memory for a message");
            return -1;
        }
        h->buf = nb;
        h->bufcap = (size_t)len;
    }
    MPI_Recv(h->buf, len, MPI_BYTE, ms.MPI_SOURCE, TAG_RESULTS, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    long long got, first = 0, k = 0;
    uint32_t want, done;
    pthread_mutex_lock(&sh->mu);
    pl_status us = unpack_items(sh, h->buf, (size_t)len, &got, &h->idle[ms.MPI_SOURCE],
                                &want, &done, err);
    if (us != PL_OK)
        sh->failed = 1;
    if (us == PL_OK && want)
        k = pl_sweep_take_chunk(sh, &first);
    pthread_mutex_unlock(&sh->mu);
    if (us != PL_OK || want) {
        int r = ms.MPI_SOURCE, slot = 0, free0 = 0;
        MPI_Test(&h->oreq[2 * r], &free0, MPI_STATUS_IGNORE);
        if (!free0) {
            slot = 1;
            MPI_Wait(&h->oreq[2 * r + 1], MPI_STATUS_IGNORE);
        }
        for (long long i = 0; i < k; i++)
            h->out[r][slot][i] = sh->todo[first + i];
        MPI_Isend(h->out[r][slot], (int)k, MPI_LONG_LONG, r, TAG_CHUNK, MPI_COMM_WORLD,
                  &h->oreq[2 * r + slot]);
    }
    if (us != PL_OK || done)
        h->active--;
    if (us != PL_OK && *st == PL_OK)
        *st = us;
    return 1;
}

/* Writes the results queued so far, every PL_SWEEP_BATCH_S or when last;
 * after a failure they are dropped.  Returns 1 when there were some. */
static int write_queued(pl_sweep_shared *sh, pl_sweep_writer *w, int last,
                        pl_status *st, pl_err *err)
{
    if (!last && pl_sweep_now_s() < w->last_put + PL_SWEEP_BATCH_S)
        return 0;
    pthread_mutex_lock(&sh->mu);
    pl_sweep_item *l = pl_sweep_take_queue(sh);
    long long handed = sh->next;
    pthread_mutex_unlock(&sh->mu);
    if (!l)
        return 0;
    if (*st == PL_OK)
        *st = pl_sweep_writer_put(w, l, handed, err);
    else
        for (pl_sweep_item *nx; l; l = nx) {
            nx = l->next;
            pl_sweep_item_free(l);
        }
    if (*st != PL_OK) {
        pthread_mutex_lock(&sh->mu);
        sh->failed = 1;
        pthread_mutex_unlock(&sh->mu);
    }
    return 1;
}

/* Rank 0: one compute thread, and this thread answering the ranks and
 * writing. */
static pl_status rank_zero(pl_sweep_shared *sh, pl_sweep_writer *w, int size, pl_err *err)
{
    pthread_t th[1];
    pl_status st = pl_sweep_start_threads(sh, th, 1, err);
    if (st != PL_OK)
        return st;
    hub h;
    if (hub_init(&h, size) != 0) {
        pthread_mutex_lock(&sh->mu);
        sh->failed = 1;
        pthread_mutex_unlock(&sh->mu);
        pthread_join(th[0], NULL);
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    }
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        int running = sh->running, pending = sh->head != NULL;
        pthread_mutex_unlock(&sh->mu);
        if (h.active == 0 && !running && !pending)
            break;
        int busy = h.active > 0 ? hub_serve(&h, sh, &st, err) : 0;
        if (busy < 0)
            break;
        busy |= write_queued(sh, w, h.active == 0 && !running, &st, err);
        if (!busy) {
            /* poll rather than block: a blocking receive spins a core */
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    pthread_join(th[0], NULL);
    MPI_Waitall(2 * size, h.oreq, MPI_STATUSES_IGNORE);
    for (int r = 1; r < size; r++)
        sh->sched_s += h.idle[r];
    hub_free(&h);
    if (st == PL_OK && sh->failed) {
        *err = sh->err;
        st = err->code ? err->code : PL_EIO;
    }
    return st;
}

static pl_status read_file(const char *path, char **text, pl_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return pl_err_set(err, PL_EIO, "cannot open sweep file '%s'", path);
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    size_t n;
    while (b && (n = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!b)
        return pl_err_set(err, PL_ENOMEM, "out of memory reading '%s'", path);
    if (bad) {
        free(b);
        return pl_err_set(err, PL_EIO, "cannot read sweep file '%s'", path);
    }
    b[len] = 0;
    *text = b;
    return PL_OK;
}


/* Rank 0's status reaches every rank: all stop together. */
static pl_status agree(pl_status mine, int rank, pl_err *err)
{
    int code = mine;
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0 && code != PL_OK)
        return pl_err_set(err, (pl_status)code, "rank 0 stopped the sweep");
    return (pl_status)code;
}

pl_status pl_sweep_run_mpi(const char *path, const char *db_path,
                           const pl_sweep_opts *opts, int *rank_out, int *alone,
                           pl_sweep_stats *stats, pl_err *err)
{
    memset(stats, 0, sizeof *stats);
    *alone = 0;
    int provided = 0, rank = 0, size = 1;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return pl_err_set(err, PL_EIO, "MPI_Init failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *rank_out = rank;
    char *text = NULL;
    pl_sweep_spec *spec = NULL;
    pl_status st = PL_OK;
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    if (size == 1 && ntasks && atoi(ntasks) > 1)
        st = pl_err_set(err, PL_ESTATE, "srun started %s tasks but MPI sees one rank: each "
                        "would write alone; run srun --mpi=pmix", ntasks);
    if (provided < MPI_THREAD_FUNNELED && st == PL_OK)
        st = pl_err_set(err, PL_EIO, "this MPI cannot run a thread beside MPI calls "
                        "(MPI_THREAD_FUNNELED)");
    /* rank 0 reads the file; every rank parses the same text */
    unsigned long long len = 0;
    if (rank == 0 && st == PL_OK && read_file(path, &text, err) == PL_OK &&
        pl_sweep_text_resolve(&text, path, db_path, err) == PL_OK)
        len = strlen(text) + 1;
    else if (rank == 0 && st == PL_OK)
        st = err->code;
    st = agree(st, rank, err);
    if (st != PL_OK)
        goto out;
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0 && !(text = malloc(len))) {
        st = pl_err_set(err, PL_ENOMEM, "out of memory for the sweep file");
        *alone = 1;
        goto out;
    }
    MPI_Bcast(text, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    st = pl_sweep_spec_parse(&spec, text, path, err);
    if (rank == 0) {
        pl_sweep_shared sh;
        pl_sweep_writer w = {.opts = opts, .stats = stats};
        int inited = st == PL_OK && pl_sweep_shared_init(&sh, spec, size);
        if (st == PL_OK && !inited)
            st = pl_err_set(err, PL_ENOMEM, "cannot create a mutex");
        if (st == PL_OK)
            st = pl_sweep_writer_open(&w, &sh, db_path, size, "mpi", err);
        st = agree(st, 0, err);
        if (st == PL_OK) {
            st = rank_zero(&sh, &w, size, err);
            *alone = st != PL_OK;
            stats->sched_s = sh.sched_s;
            stats->chunks = sh.chunks;
            stats->min_cost_s = sh.min_cost;
        }
        pl_sweep_writer_close(&w, st == PL_OK);
        if (inited)
            pl_sweep_shared_destroy(&sh);
    } else {
        st = agree(st, rank, err);
        if (st == PL_OK) {
            st = rank_worker(spec, err);
            *alone = st != PL_OK;
        }
    }
out:
    pl_sweep_spec_destroy(spec);
    free(text);
    if (size == 1)
        *alone = 0;
    return st;
}

void pl_sweep_mpi_end(int alone)
{
    int inited = 0, done = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&done);
    if (!inited || done)
        return;
    if (alone)   /* the other ranks would wait for this one for ever */
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Finalize();
}

