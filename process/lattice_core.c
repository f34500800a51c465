/* process/lattice_core.c - the impact search's shared machinery: the
 * per-impact passes shared between threads, time from theta, the slots'
 * array (lattice_core.h). */
#include "process/lattice_core.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    walk wk;
    size_t a, b;
    slot_pass fn;
    void *ctx;
} share;

static void *share_run(void *p)
{
    share *s = p;
    s->fn(&s->wk, s->a, s->b, s->ctx);
    return NULL;
}

void pl_lat_for_slots(const walk *wk, size_t m, slot_pass fn, void *ctx)
{
    enum { MAXT = 8, MIN_SHARE = 256 };
    int t = wk->threads;
    if (t <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = cpus > 0 ? (int)cpus : 1;
    }
    if (t > MAXT)
        t = MAXT;
    if ((size_t)t > m / MIN_SHARE)
        t = (int)(m / MIN_SHARE);
    if (t < 1)
        t = 1;
    share sh[MAXT];
    pthread_t tid[MAXT];
    int started[MAXT] = {0};
    for (int i = 0; i < t; i++) {
        sh[i] = (share){*wk, m * (size_t)i / (size_t)t, m * (size_t)(i + 1) / (size_t)t, fn, ctx};
        if (i > 0)
            sh[i].wk.scratch = malloc((4 * wk->W + 64) * sizeof(double));
        if (i > 0 && sh[i].wk.scratch)
            started[i] = pthread_create(&tid[i], NULL, share_run, &sh[i]) == 0;
    }
    share_run(&sh[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else {
            /* no thread or no buffer: this one does the share */
            sh[i].wk.scratch = sh[i].wk.scratch ? sh[i].wk.scratch : wk->scratch;
            share_run(&sh[i]);
            if (sh[i].wk.scratch == wk->scratch)
                sh[i].wk.scratch = NULL;
        }
        free(sh[i].wk.scratch);
    }
}

double pl_lat_time_of_theta(const walk *wk, double th, size_t from, int dir)
{
    size_t lo = wk->release, hi = wk->end - 1;
    if (from < lo)
        from = lo;
    if (from > hi)
        from = hi;
    if (dir > 0) {
        for (size_t i = from; i < hi; i++)
            if (wk->theta[i] <= th && wk->theta[i + 1] > th)
                return (double)i + (th - wk->theta[i]) / (wk->theta[i + 1] - wk->theta[i]);
    } else {
        for (size_t i = from; i > lo; i--)
            if (wk->theta[i - 1] <= th && wk->theta[i] > th)
                return (double)(i - 1) +
                       (th - wk->theta[i - 1]) / (wk->theta[i] - wk->theta[i - 1]);
    }
    return NAN;
}

int pl_lat_push(slots *s, slot x)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        slot *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = x;
    return 0;
}
