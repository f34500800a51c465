/* model/sweep/engine.c - hand-out, workers, the one writer; threads on one
 * machine.  The ranks of an MPI job are engine_mpi.c's, on the same
 * hand-out and writer (engine_private.h).  See engine.h and docs/sweep.md. */
#include "model/sweep/engine_private.h"

#include "db/catalog.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double pl_sweep_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --- one finished point ------------------------------------------------ */

void pl_sweep_item_free(pl_sweep_item *it)
{
    if (!it)
        return;
    free(it->params);
    free(it->result);
    free(it->series);
    free(it);
}

static pl_sweep_item *item_from(long long idx, const pl_sweep_out *o)
{
    pl_sweep_item *it = calloc(1, sizeof *it);
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
        pl_sweep_item_free(it);
        return NULL;
    }
    return it;
}

/* --- the shared state: hand-out and finished queue ---------------------- */

long long pl_sweep_take_chunk(pl_sweep_shared *sh, long long *first)
{
    long long left = sh->ntodo - sh->next;
    if (left <= 0 || sh->failed)
        return 0;
    long long k = (left + 2 * sh->workers - 1) / (2 * sh->workers);
    double mean = sh->cost_n ? sh->cost_sum / (double)sh->cost_n : 0;
    long long cap = sh->cost_n == 0 ? 1 : mean > 0 ? (long long)(0.2 / mean)
                                                   : PL_SWEEP_MAX_CHUNK;
    if (cap < 1)
        cap = 1;
    if (cap > PL_SWEEP_MAX_CHUNK)
        cap = PL_SWEEP_MAX_CHUNK;
    if (k > cap)
        k = cap;
    *first = sh->next;
    sh->next += k;
    sh->chunks++;
    return k;
}

void pl_sweep_push_locked(pl_sweep_shared *sh, pl_sweep_item *it)
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
    pl_sweep_shared *sh = arg;
    pl_sweep_out out = {0};
    pl_err err = {0};
    double wait = 0;
    for (;;) {
        long long first, k;
        double t0 = pl_sweep_now_s();
        pthread_mutex_lock(&sh->mu);
        k = pl_sweep_take_chunk(sh, &first);
        pthread_mutex_unlock(&sh->mu);
        wait += pl_sweep_now_s() - t0;
        if (!k)
            break;
        for (long long i = 0; i < k; i++) {
            long long idx = sh->todo[first + i];
            pl_sweep_item *it = NULL;
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
            pl_sweep_push_locked(sh, it);
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

pl_status pl_sweep_writer_open(pl_sweep_writer *w, pl_sweep_shared *sh, const char *db_path,
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
    w->t0 = pl_sweep_now_s();
    return PL_OK;
}

pl_status pl_sweep_writer_put(pl_sweep_writer *w, pl_sweep_item *list, long long handed,
                              pl_err *err)
{
    double t_in = pl_sweep_now_s();
    w->last_put = t_in;
    size_t n = 0;
    double cost = 0;
    for (pl_sweep_item *it = list; it; it = it->next)
        n++;
    if (!n)
        return PL_OK;
    if (n > w->batch_cap) {
        pl_sweep_point *nb = realloc(w->batch, n * sizeof *nb);
        if (!nb) {
            while (list) {
                pl_sweep_item *nx = list->next;
                pl_sweep_item_free(list);
                list = nx;
            }
            return pl_err_set(err, PL_ENOMEM, "out of memory for a batch of %zu points", n);
        }
        w->batch = nb;
        w->batch_cap = n;
    }
    size_t i = 0;
    long long failed = 0;
    for (pl_sweep_item *it = list; it; it = it->next, i++) {
        w->batch[i] = (pl_sweep_point){it->idx, it->params, it->result, it->ok,
                                       it->series, it->series_n * sizeof(double)};
        cost += it->cost_s;
        failed += !it->ok;
    }
    double wall = pl_sweep_now_s() - w->t0;
    pl_status st = pl_sweep_put(w->store, w->sweep_id, w->batch, n, w->session_id, wall,
                                cost, handed, err);
    while (list) {
        pl_sweep_item *nx = list->next;
        pl_sweep_item_free(list);
        list = nx;
    }
    if (st != PL_OK)
        return st;
    w->stats->computed += (long long)n;
    w->stats->failed += failed;
    w->stats->compute_s += cost;
    w->stats->wall_s = wall;
    w->stats->write_s += pl_sweep_now_s() - t_in;
    if (w->opts->progress)
        w->opts->progress(w->opts->progress_ctx, w->stats->before + w->stats->computed,
                          w->stats->total, wall);
    return PL_OK;
}

void pl_sweep_writer_close(pl_sweep_writer *w, int finished)
{
    pl_err e = {0};
    if (w->store && w->session_id && finished)
        pl_sweep_session_end(w->store, w->session_id, &e);
    pl_store_close(w->store);
    free(w->batch);
}

int pl_sweep_shared_init(pl_sweep_shared *sh, const pl_sweep_spec *spec, int workers)
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

void pl_sweep_shared_destroy(pl_sweep_shared *sh)
{
    while (sh->head) {
        pl_sweep_item *nx = sh->head->next;
        pl_sweep_item_free(sh->head);
        sh->head = nx;
    }
    free(sh->todo);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
}

pl_sweep_item *pl_sweep_take_queue(pl_sweep_shared *sh)
{
    pl_sweep_item *l = sh->head;
    sh->head = NULL;
    sh->tail = &sh->head;
    return l;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

pl_status pl_sweep_start_threads(pl_sweep_shared *sh, pthread_t *th, int n, pl_err *err)
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
    pl_sweep_shared sh;
    if (!pl_sweep_shared_init(&sh, spec, n))
        return pl_err_set(err, PL_ENOMEM, "cannot create a mutex");
    pl_sweep_writer w = {.opts = opts, .stats = stats};
    pthread_t th[256];
    pl_status st = pl_sweep_writer_open(&w, &sh, db_path, n, "local", err);
    if (st == PL_OK)
        st = pl_sweep_start_threads(&sh, th, n, err);
    if (st != PL_OK) {
        pl_sweep_writer_close(&w, 0);
        pl_sweep_shared_destroy(&sh);
        return st;
    }
    pthread_mutex_lock(&sh.mu);
    for (;;) {
        while (!sh.head && sh.running > 0)
            pthread_cond_wait(&sh.cv, &sh.mu);
        double wait = w.last_put + PL_SWEEP_BATCH_S - pl_sweep_now_s();
        if (sh.running > 0 && wait > 0) {   /* let the batch grow */
            pthread_mutex_unlock(&sh.mu);
            struct timespec ts = {0, (long)(wait * 1e9)};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&sh.mu);
        }
        pl_sweep_item *l = pl_sweep_take_queue(&sh);
        int more = sh.running > 0;
        long long handed = sh.next;
        pthread_mutex_unlock(&sh.mu);
        if (l && st == PL_OK)
            st = pl_sweep_writer_put(&w, l, handed, err);
        else
            for (pl_sweep_item *nx; l; l = nx) {
                nx = l->next;
                pl_sweep_item_free(l);
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
    pl_sweep_writer_close(&w, st == PL_OK);
    pl_sweep_shared_destroy(&sh);
    return st;
}

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
