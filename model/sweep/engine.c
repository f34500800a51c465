/* model/sweep/engine.c - hand-out, workers, the one writer; threads on one
 * machine, ranks under MPI.  See engine.h and docs/sweep.md. */
#include "model/sweep/engine.h"

#include "db/catalog.h"
#include "db/store.h"
#include "db/sweep.h"

#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The largest chunk, in points. */
enum { MAX_CHUNK = 128 };

/* --- one finished point ------------------------------------------------ */

typedef struct item {
    struct item *next;
    long long idx;
    int ok;
    double cost_s;
    char *params, *result;
    double *series;
    size_t series_n;
} item;

static void item_free(item *it)
{
    if (!it)
        return;
    free(it->params);
    free(it->result);
    free(it->series);
    free(it);
}

static item *item_from(long long idx, const pl_sweep_out *o)
{
    item *it = calloc(1, sizeof *it);
    if (!it)
        return NULL;
    it->idx = idx;
    it->ok = o->ok;
    it->cost_s = o->cost_s;
    it->params = strdup(o->params);
    it->result = strdup(o->result);
    it->series_n = o->series_n;
    if (o->series_n) {
        it->series = malloc(o->series_n * sizeof *it->series);
        if (it->series)
            memcpy(it->series, o->series, o->series_n * sizeof *it->series);
    }
    if (!it->params || !it->result || (o->series_n && !it->series)) {
        item_free(it);
        return NULL;
    }
    return it;
}

/* --- the shared state: hand-out and finished queue ---------------------- */

typedef struct {
    const pl_sweep_spec *spec;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long long *todo;          /* indices without a row, ascending */
    long long ntodo, next;    /* handed out: todo[0 .. next-1] */
    int workers;              /* all workers, threads and ranks */
    long long chunks;
    double cost_sum;          /* model time of the points seen so far */
    long long cost_n;
    item *head, **tail;       /* finished, not yet stored */
    double min_cost;          /* the cheapest point so far */
    int running;              /* local threads still running */
    pl_err err;               /* the first failure of a worker thread */
    int failed;
    double sched_s;
} shared;

/* The next chunk: a share of what is left (guided self-scheduling), at
 * most about 0.2 s of work at the mean cost so far (one point until a
 * cost is known) and at most MAX_CHUNK points, so that a kill loses
 * little; 0 when nothing is left.  Called with mu held. */
static long long take_chunk(shared *sh, long long *first)
{
    long long left = sh->ntodo - sh->next;
    if (left <= 0 || sh->failed)
        return 0;
    long long k = (left + 2 * sh->workers - 1) / (2 * sh->workers);
    double mean = sh->cost_n ? sh->cost_sum / (double)sh->cost_n : 0;
    long long cap = sh->cost_n == 0 ? 1 : mean > 0 ? (long long)(0.2 / mean) : MAX_CHUNK;
    if (cap < 1)
        cap = 1;
    if (cap > MAX_CHUNK)
        cap = MAX_CHUNK;
    if (k > cap)
        k = cap;
    *first = sh->next;
    sh->next += k;
    sh->chunks++;
    return k;
}

static void push_locked(shared *sh, item *it)
{
    it->next = NULL;
    *sh->tail = it;
    sh->tail = &it->next;
    sh->cost_sum += it->cost_s;
    sh->cost_n++;
    if (sh->cost_n == 1 || it->cost_s < sh->min_cost)
        sh->min_cost = it->cost_s;
}

static void *worker_thread(void *arg)
{
    shared *sh = arg;
    pl_sweep_out out = {0};
    pl_err err = {0};
    double wait = 0;
    for (;;) {
        long long first, k;
        double t0 = now_s();
        pthread_mutex_lock(&sh->mu);
        k = take_chunk(sh, &first);
        pthread_mutex_unlock(&sh->mu);
        wait += now_s() - t0;
        if (!k)
            break;
        for (long long i = 0; i < k; i++) {
            long long idx = sh->todo[first + i];
            item *it = NULL;
            if (pl_sweep_compute(sh->spec, idx, &out, &err) != PL_OK ||
                !(it = item_from(idx, &out))) {
                if (err.code == PL_OK)
                    pl_err_set(&err, PL_ENOMEM, "out of memory for point %lld", idx);
                pthread_mutex_lock(&sh->mu);
                if (!sh->failed) {
                    sh->failed = 1;
                    sh->err = err;
                }
                pthread_cond_signal(&sh->cv);
                pthread_mutex_unlock(&sh->mu);
                goto done;
            }
            pthread_mutex_lock(&sh->mu);
            push_locked(sh, it);
            pthread_cond_signal(&sh->cv);
            pthread_mutex_unlock(&sh->mu);
        }
    }
done:
    pl_sweep_out_free(&out);
    pthread_mutex_lock(&sh->mu);
    sh->sched_s += wait;
    sh->running--;
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

/* --- the writer ---------------------------------------------------------- */

typedef struct {
    pl_store *store;
    long long sweep_id, session_id;
    const pl_sweep_opts *opts;
    pl_sweep_stats *stats;
    double t0;
    pl_sweep_point *batch;
    size_t batch_cap;
    double last_put;          /* when the last batch was stored */
} writer;

/* Opens the store, creates or checks the sweep, lists the missing points
 * into sh->todo and starts a session. */
static pl_status writer_open(writer *w, shared *sh, const char *db_path,
                             int workers, const char *mode, pl_err *err)
{
    const pl_sweep_spec *spec = sh->spec;
    pl_sweep_info info;
    unsigned char *stored = NULL;
    const char *pn = "";
    if (pl_sweep_spec_unresolved(spec, NULL, NULL))
        return pl_err_set(err, PL_ESTATE, "sweep '%s': its prism and ramp have no numbers "
                          "yet (pl_sweep_text_resolve)", pl_sweep_spec_name(spec));
    if (pl_store_open(&w->store, db_path, 0, err) != PL_OK)
        return err->code;
    pl_status st = pl_sweep_find(w->store, pl_sweep_spec_name(spec), &info, err);
    if (st == PL_OK) {
        if (!w->opts->resume)
            return pl_err_set(err, PL_EEXIST, "sweep '%s' is already in %s (%lld of "
                              "%lld points stored): --resume goes on with it",
                              info.name, db_path, info.n_stored, info.n_points);
        if (strcmp(info.spec_sha256, pl_sweep_spec_sha256(spec)) ||
            info.n_points != pl_sweep_spec_points(spec))
            return pl_err_set(err, PL_ESTATE, "sweep '%s' in %s was made from another "
                              "file (SHA-256 %.12s..., this one %.12s...): resume takes "
                              "the same file%s", info.name, db_path, info.spec_sha256,
                              pl_sweep_spec_sha256(spec),
                              pl_sweep_spec_unresolved(spec, &pn, NULL) || !*pn ? "" :
                              ", and the same catalogue numbers for its prism and ramp "
                              "('sweep show' has those it started with)");
    } else if (st == PL_ENOTFOUND) {
        memset(&info, 0, sizeof info);
        snprintf(info.name, sizeof info.name, "%s", pl_sweep_spec_name(spec));
        snprintf(info.model, sizeof info.model, "%s", pl_sweep_spec_model(spec));
        snprintf(info.spec_sha256, sizeof info.spec_sha256, "%s", pl_sweep_spec_sha256(spec));
        info.n_points = pl_sweep_spec_points(spec);
        snprintf(info.axes, sizeof info.axes, "%s", pl_sweep_spec_axes(spec));
        snprintf(info.columns, sizeof info.columns, "%s", pl_sweep_spec_columns(spec));
        snprintf(info.series, sizeof info.series, "%s", pl_sweep_spec_series(spec));
        if (pl_sweep_create(w->store, &info, pl_sweep_spec_text(spec), &info.sweep_id,
                            err) != PL_OK)
            return err->code;
    } else {
        return st;
    }
    w->sweep_id = info.sweep_id;
    long long n = info.n_points;
    stored = malloc((size_t)n);
    sh->todo = malloc((size_t)n * sizeof *sh->todo);
    if (!stored || !sh->todo) {
        free(stored);
        return pl_err_set(err, PL_ENOMEM, "out of memory for %lld points", n);
    }
    if (pl_sweep_stored(w->store, w->sweep_id, stored, n, err) != PL_OK) {
        free(stored);
        return err->code;
    }
    sh->ntodo = 0;
    for (long long i = 0; i < n; i++)
        if (!stored[i])
            sh->todo[sh->ntodo++] = i;
    free(stored);
    w->stats->total = n;
    snprintf(w->stats->name, sizeof w->stats->name, "%s", pl_sweep_spec_name(spec));
    w->stats->before = n - sh->ntodo;
    w->stats->workers = workers;
    if (pl_sweep_session_begin(w->store, w->sweep_id, workers, mode, w->stats->before,
                               &w->session_id, err) != PL_OK)
        return err->code;
    w->t0 = now_s();
    return PL_OK;
}

/* Stores a list of finished points in one transaction and frees them. */
/* Batches of at least BATCH_S of results: one transaction per point would
 * cost the writer more than the cheapest points cost to compute, and a
 * kill loses at most this much of finished work besides the points in
 * flight. */
#define BATCH_S 0.02

static pl_status writer_put(writer *w, item *list, long long handed, pl_err *err)
{
    double t_in = now_s();
    w->last_put = t_in;
    size_t n = 0;
    double cost = 0;
    for (item *it = list; it; it = it->next)
        n++;
    if (!n)
        return PL_OK;
    if (n > w->batch_cap) {
        pl_sweep_point *nb = realloc(w->batch, n * sizeof *nb);
        if (!nb) {
            while (list) {
                item *nx = list->next;
                item_free(list);
                list = nx;
            }
            return pl_err_set(err, PL_ENOMEM, "out of memory for a batch of %zu points", n);
        }
        w->batch = nb;
        w->batch_cap = n;
    }
    size_t i = 0;
    long long failed = 0;
    for (item *it = list; it; it = it->next, i++) {
        w->batch[i] = (pl_sweep_point){it->idx, it->params, it->result, it->ok,
                                       it->series, it->series_n * sizeof(double)};
        cost += it->cost_s;
        failed += !it->ok;
    }
    double wall = now_s() - w->t0;
    pl_status st = pl_sweep_put(w->store, w->sweep_id, w->batch, n, w->session_id, wall,
                                cost, handed, err);
    while (list) {
        item *nx = list->next;
        item_free(list);
        list = nx;
    }
    if (st != PL_OK)
        return st;
    w->stats->computed += (long long)n;
    w->stats->failed += failed;
    w->stats->compute_s += cost;
    w->stats->wall_s = wall;
    w->stats->write_s += now_s() - t_in;
    if (w->opts->progress)
        w->opts->progress(w->opts->progress_ctx, w->stats->before + w->stats->computed,
                          w->stats->total, wall);
    return PL_OK;
}

static void writer_close(writer *w, int finished)
{
    pl_err e = {0};
    if (w->store && w->session_id && finished)
        pl_sweep_session_end(w->store, w->session_id, &e);
    pl_store_close(w->store);
    free(w->batch);
}

static int shared_init(shared *sh, const pl_sweep_spec *spec, int workers)
{
    memset(sh, 0, sizeof *sh);
    sh->spec = spec;
    sh->workers = workers;
    sh->tail = &sh->head;
    if (pthread_mutex_init(&sh->mu, NULL))
        return 0;
    if (pthread_cond_init(&sh->cv, NULL)) {
        pthread_mutex_destroy(&sh->mu);
        return 0;
    }
    return 1;
}

static void shared_destroy(shared *sh)
{
    while (sh->head) {
        item *nx = sh->head->next;
        item_free(sh->head);
        sh->head = nx;
    }
    free(sh->todo);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
}

/* Takes the finished queue (mu held). */
static item *take_queue(shared *sh)
{
    item *l = sh->head;
    sh->head = NULL;
    sh->tail = &sh->head;
    return l;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static pl_status start_threads(shared *sh, pthread_t *th, int n, pl_err *err)
{
    for (int i = 0; i < n; i++) {
        if (pthread_create(&th[i], NULL, worker_thread, sh)) {
            pthread_mutex_lock(&sh->mu);
            sh->failed = 1;
            pthread_mutex_unlock(&sh->mu);
            for (int j = 0; j < i; j++)
                pthread_join(th[j], NULL);
            return pl_err_set(err, PL_ENOMEM, "cannot start worker thread %d", i + 1);
        }
        sh->running++;
    }
    return PL_OK;
}

pl_status pl_sweep_run_local(const pl_sweep_spec *spec, const char *db_path,
                             const pl_sweep_opts *opts, pl_sweep_stats *stats,
                             pl_err *err)
{
    memset(stats, 0, sizeof *stats);
    int n = opts->workers > 0 ? opts->workers : cpu_count();
    if (n > 256)
        n = 256;
    shared sh;
    if (!shared_init(&sh, spec, n))
        return pl_err_set(err, PL_ENOMEM, "cannot create a mutex");
    writer w = {.opts = opts, .stats = stats};
    pthread_t th[256];
    pl_status st = writer_open(&w, &sh, db_path, n, "local", err);
    if (st == PL_OK)
        st = start_threads(&sh, th, n, err);
    if (st != PL_OK) {
        writer_close(&w, 0);
        shared_destroy(&sh);
        return st;
    }
    pthread_mutex_lock(&sh.mu);
    for (;;) {
        while (!sh.head && sh.running > 0)
            pthread_cond_wait(&sh.cv, &sh.mu);
        double wait = w.last_put + BATCH_S - now_s();
        if (sh.running > 0 && wait > 0) {   /* let the batch grow */
            pthread_mutex_unlock(&sh.mu);
            struct timespec ts = {0, (long)(wait * 1e9)};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&sh.mu);
        }
        item *l = take_queue(&sh);
        int more = sh.running > 0;
        long long handed = sh.next;
        pthread_mutex_unlock(&sh.mu);
        if (l && st == PL_OK)
            st = writer_put(&w, l, handed, err);
        else
            for (item *nx; l; l = nx) {
                nx = l->next;
                item_free(l);
            }
        pthread_mutex_lock(&sh.mu);
        if (st != PL_OK)
            sh.failed = 1;   /* the workers stop at their next chunk */
        if (!more && !sh.head)
            break;
    }
    pthread_mutex_unlock(&sh.mu);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    if (st == PL_OK && sh.failed) {
        *err = sh.err;
        st = err->code;
    }
    stats->sched_s = sh.sched_s;
    stats->chunks = sh.chunks;
    stats->min_cost_s = sh.min_cost;
    writer_close(&w, st == PL_OK);
    shared_destroy(&sh);
    return st;
}

/* --- MPI ----------------------------------------------------------------- */

enum { TAG_STATUS = 1, TAG_RESULTS = 2, TAG_CHUNK = 3 };

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
static pl_status unpack_items(shared *sh, const unsigned char *b, size_t len,
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
        item *it = calloc(1, sizeof *it);
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
            item_free(it);
            return pl_err_set(err, PL_EFORMAT, "sweep: a malformed message from a rank");
        }
        it->idx = idx;
        it->ok = ok;
        it->cost_s = cost;
        it->series_n = ns;
        push_locked(sh, it);
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
    long long (*chunk)[MAX_CHUNK] = malloc(2 * sizeof *chunk);
    int fifo[2], nf = 0, more = 1, ps = 0;
    pl_status st = PL_OK;
    double t_idle = 0;
    unsigned char hdr[HEADER] = {0};
    if (!chunk)
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    for (int b = 0; b < 2; b++) {
        put(&p[b], hdr, HEADER);
        MPI_Irecv(chunk[b], MAX_CHUNK, MPI_LONG_LONG, 0, TAG_CHUNK, MPI_COMM_WORLD, &rreq[b]);
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
            double t0 = now_s();
            MPI_Wait(&rreq[b], &ms);
            t_idle += now_s() - t0;
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
            MPI_Irecv(chunk[b], MAX_CHUNK, MPI_LONG_LONG, 0, TAG_CHUNK, MPI_COMM_WORLD,
                      &rreq[b]);
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

/* Rank 0: one compute thread, and this thread answering the ranks and
 * writing. */
static pl_status rank_zero(shared *sh, writer *w, int size, pl_err *err)
{
    pthread_t th[1];
    pl_status st = start_threads(sh, th, 1, err);
    if (st != PL_OK)
        return st;
    int active = size - 1;          /* ranks that have not said they are done */
    double *idle = calloc((size_t)size, sizeof *idle);   /* each rank's wait */
    if (!idle) {
        pthread_mutex_lock(&sh->mu);
        sh->failed = 1;
        pthread_mutex_unlock(&sh->mu);
        pthread_join(th[0], NULL);
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    }
    unsigned char *buf = NULL;
    size_t bufcap = 0;
    /* two answers in flight per rank at most (a rank has two requests
     * out): each its own buffer, sent without waiting for the rank */
    long long (*out)[2][MAX_CHUNK] = malloc((size_t)size * sizeof *out);
    MPI_Request *oreq = malloc((size_t)size * 2 * sizeof *oreq);
    if (!out || !oreq) {
        free(out);
        free(oreq);
        free(idle);
        pthread_mutex_lock(&sh->mu);
        sh->failed = 1;
        pthread_mutex_unlock(&sh->mu);
        pthread_join(th[0], NULL);
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    }
    for (int i = 0; i < 2 * size; i++)
        oreq[i] = MPI_REQUEST_NULL;
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        int running = sh->running, pending = sh->head != NULL;
        pthread_mutex_unlock(&sh->mu);
        if (active == 0 && !running && !pending)
            break;
        int busy = 0;
        if (active > 0) {
            int flag = 0;
            MPI_Status ms;
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULTS, MPI_COMM_WORLD, &flag, &ms);
            if (flag) {
                int len;
                MPI_Get_count(&ms, MPI_BYTE, &len);
                if ((size_t)len > bufcap) {
                    unsigned char *nb = realloc(buf, (size_t)len);
                    if (!nb) {
                        st = pl_err_set(err, PL_ENOMEM, "out of memory for a message");
                        break;
                    }
                    buf = nb;
                    bufcap = (size_t)len;
                }
                MPI_Recv(buf, len, MPI_BYTE, ms.MPI_SOURCE, TAG_RESULTS, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                long long got, first = 0, k = 0;
                uint32_t want, done;
                pthread_mutex_lock(&sh->mu);
                pl_status us = unpack_items(sh, buf, (size_t)len, &got,
                                            &idle[ms.MPI_SOURCE], &want, &done, err);
                if (us != PL_OK)
                    sh->failed = 1;
                if (us == PL_OK && want)
                    k = take_chunk(sh, &first);
                pthread_mutex_unlock(&sh->mu);
                /* answer first, then write: the rank computes meanwhile */
                if (us != PL_OK || want) {
                    int r = ms.MPI_SOURCE, slot = 0, free0 = 0;
                    MPI_Test(&oreq[2 * r], &free0, MPI_STATUS_IGNORE);
                    if (!free0) {
                        slot = 1;
                        MPI_Wait(&oreq[2 * r + 1], MPI_STATUS_IGNORE);
                    }
                    for (long long i = 0; i < k; i++)
                        out[r][slot][i] = sh->todo[first + i];
                    MPI_Isend(out[r][slot], (int)k, MPI_LONG_LONG, r, TAG_CHUNK,
                              MPI_COMM_WORLD, &oreq[2 * r + slot]);
                }
                if (us != PL_OK || done)
                    active--;
                if (us != PL_OK && st == PL_OK)
                    st = us;
                busy = 1;
            }
        }
        item *l = NULL;
        long long handed = 0;
        int last = active == 0 && !running;
        if (last || now_s() >= w->last_put + BATCH_S) {
            pthread_mutex_lock(&sh->mu);
            l = take_queue(sh);
            handed = sh->next;
            pthread_mutex_unlock(&sh->mu);
        }
        if (l) {
            busy = 1;
            if (st == PL_OK)
                st = writer_put(w, l, handed, err);
            else
                for (item *nx; l; l = nx) {
                    nx = l->next;
                    item_free(l);
                }
            if (st != PL_OK) {
                pthread_mutex_lock(&sh->mu);
                sh->failed = 1;
                pthread_mutex_unlock(&sh->mu);
            }
        }
        if (!busy) {
            /* poll rather than block: a blocking receive spins a core */
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    pthread_join(th[0], NULL);
    MPI_Waitall(2 * size, oreq, MPI_STATUSES_IGNORE);
    free(out);
    free(oreq);
    for (int r = 1; r < size; r++)
        sh->sched_s += idle[r];
    free(idle);
    free(buf);
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
pl_status pl_sweep_text_resolve(char **text, const char *path, const char *db_path,
                                pl_err *err)
{
    pl_sweep_spec *spec;
    const char *pn, *rn;
    if (pl_sweep_spec_parse(&spec, *text, path, err) != PL_OK)
        return err->code;
    if (!pl_sweep_spec_unresolved(spec, &pn, &rn)) {
        pl_sweep_spec_destroy(spec);
        return PL_OK;
    }
    pl_store *store = NULL;
    pl_prism pr;
    pl_ramp rp;
    pl_status st = pl_store_open(&store, db_path, PL_STORE_READONLY, err);
    if (st == PL_OK)
        st = pl_prism_get(store, pn, &pr, err);
    if (st == PL_OK)
        st = pl_ramp_get(store, rn, &rp, err);
    pl_store_close(store);
    if (st != PL_OK) {
        pl_sweep_spec_destroy(spec);
        return pl_err_prefix(err, "%s: ", path);
    }
    /* as pl_model_params_from_catalog() (model/validate/setup.c) fills a
     * run of `prismlab simulate --prism --ramp`, in the options' words:
     * the mass and the ramp's length when the catalogue knows them, the
     * slip coefficient unless it is unknown (then mu-s) */
    char block[1024], v[7][32];
    double mass = pl_prism_mass(&pr);
    pl_sweep_number_text(v[0], pr.a0_m);
    pl_sweep_number_text(v[1], mass);
    pl_sweep_number_text(v[2], rp.beta_rad * 180 / M_PI);
    pl_sweep_number_text(v[3], rp.mu_s);
    pl_sweep_number_text(v[4], rp.mu);
    pl_sweep_number_text(v[5], rp.length_m);
    size_t len = (size_t)snprintf(block, sizeof block, "%s\n[catalogue]\n; prism '%s' "
                                  "and ramp '%s' as the store had them when the sweep "
                                  "started\nN = %d\na0 = %s\n",
                                  (*text)[0] && (*text)[strlen(*text) - 1] != '\n' ? "\n" : "",
                                  pn, rn, pr.n_edges, v[0]);
    if (isfinite(mass) && mass > 0)
        len += (size_t)snprintf(block + len, sizeof block - len, "mass = %s\n", v[1]);
    len += (size_t)snprintf(block + len, sizeof block - len, "beta-deg = %s\nmu-s = %s\n",
                            v[2], v[3]);
    if (isfinite(rp.mu))
        len += (size_t)snprintf(block + len, sizeof block - len, "mu = %s\n", v[4]);
    if (isfinite(rp.length_m) && rp.length_m > 0)
        snprintf(block + len, sizeof block - len, "ramp-length = %s\n", v[5]);
    pl_sweep_spec_destroy(spec);
    size_t a = strlen(*text), b = strlen(block);
    char *nt = malloc(a + b + 1);
    if (!nt)
        return pl_err_set(err, PL_ENOMEM, "out of memory for the sweep file");
    memcpy(nt, *text, a);
    memcpy(nt + a, block, b + 1);
    /* the numbers go through the parser and point 0's check as the file's */
    if (pl_sweep_spec_parse(&spec, nt, path, err) != PL_OK) {
        free(nt);
        return err->code;
    }
    pl_sweep_spec_destroy(spec);
    free(*text);
    *text = nt;
    return PL_OK;
}

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
        shared sh;
        writer w = {.opts = opts, .stats = stats};
        int inited = st == PL_OK && shared_init(&sh, spec, size);
        if (st == PL_OK && !inited)
            st = pl_err_set(err, PL_ENOMEM, "cannot create a mutex");
        if (st == PL_OK)
            st = writer_open(&w, &sh, db_path, size, "mpi", err);
        st = agree(st, 0, err);
        if (st == PL_OK) {
            st = rank_zero(&sh, &w, size, err);
            *alone = st != PL_OK;
            stats->sched_s = sh.sched_s;
            stats->chunks = sh.chunks;
            stats->min_cost_s = sh.min_cost;
        }
        writer_close(&w, st == PL_OK);
        if (inited)
            shared_destroy(&sh);
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
