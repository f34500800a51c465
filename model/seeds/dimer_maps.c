/* model/seeds/dimer_maps.c - many dimer simulations: figure 11 and basin
 * maps.  See dimer_maps.h. */
#include "model/seeds/dimer_maps.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- the batch ------------------------------------------------------------ */

typedef struct {
    const pl_dimer_params *ps;
    pl_dimer_result *res;
    int *ok;
    size_t n;
    pthread_mutex_t lock;
    size_t next, done;          /* handed out, finished (under lock) */
} batch;

/* Takes simulations one at a time until none is left; returns after the
 * one it finished (main: only one, so that the caller can report). */
static void work(batch *b, int main_thread)
{
    for (;;) {
        pthread_mutex_lock(&b->lock);
        size_t i = b->next < b->n ? b->next++ : b->n;
        pthread_mutex_unlock(&b->lock);
        if (i >= b->n)
            return;
        pl_err err = {0};
        if (pl_dimer_run(&b->ps[i], NULL, 0, &b->res[i], &err) == PL_OK) {
            b->ok[i] = 1;
        } else {
            b->ok[i] = 0;
            memset(&b->res[i], 0, sizeof b->res[i]);
            b->res[i].mode = PL_DIMER_OTHER;
        }
        pthread_mutex_lock(&b->lock);
        b->done++;
        pthread_mutex_unlock(&b->lock);
        if (main_thread)
            return;
    }
}

static void *worker(void *arg)
{
    work(arg, 0);
    return NULL;
}

pl_status pl_dimer_batch(const pl_dimer_params *ps, size_t n, int threads,
                         pl_dimer_result *res, int *ok,
                         pl_dimer_progress progress, void *ctx, pl_err *err)
{
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    if (threads > 256)
        threads = 256;
    batch b = {.ps = ps, .res = res, .ok = ok, .n = n};
    if (pthread_mutex_init(&b.lock, NULL) != 0)
        return pl_err_set(err, PL_EIO, "dimer batch: cannot make a mutex");
    pthread_t tid[256];
    int started = 0;
    pl_status st = PL_OK;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tid[started], NULL, worker, &b) != 0) {
            st = pl_err_set(err, PL_EIO, "dimer batch: cannot start thread %d of %d",
                            t + 1, threads);
            /* the threads that run finish the work */
            break;
        }
        started++;
    }
    /* the calling thread works too, one simulation at a time, and reports */
    size_t last = (size_t)-1;
    for (;;) {
        pthread_mutex_lock(&b.lock);
        int left = b.next < b.n;
        size_t done = b.done;
        pthread_mutex_unlock(&b.lock);
        if (progress && done != last) {
            progress(done, n, ctx);
            last = done;
        }
        if (!left)
            break;
        work(&b, 1);
    }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (progress && last != n)
        progress(n, n, ctx);
    pthread_mutex_destroy(&b.lock);
    return st;
}

/* --- figure 11 ---------------------------------------------------------- */

void pl_dimer_fig11_default(pl_dimer_fig11_spec *s)
{
    static const double freqs[] = {25, 50, 75};
    static const double h0[] = {0.1e-3, 0.25e-3, 0.5e-3, 1.0e-3};
    static const double th[] = {3 * M_PI / 180, 5 * M_PI / 180, 7 * M_PI / 180,
                                9 * M_PI / 180};
    memset(s, 0, sizeof *s);
    pl_dimer_params_default(&s->base);
    s->freqs = freqs;
    s->n_freqs = 3;
    s->ar_min = 2.1;
    s->ar_step = 0.1;
    s->n_ar = 65;
    s->h0 = h0;
    s->n_h0 = 4;
    s->theta0 = th;
    s->n_theta0 = 4;
    s->cycles = 100;
}

size_t pl_dimer_fig11_size(const pl_dimer_fig11_spec *s)
{
    return s->n_freqs * s->n_ar * s->n_h0 * s->n_theta0;
}

void pl_dimer_fig11_params(const pl_dimer_fig11_spec *s, size_t i,
                           pl_dimer_params *p)
{
    size_t nt = s->n_theta0, nh = s->n_h0, na = s->n_ar;
    size_t it = i % nt, ih = i / nt % nh, ia = i / (nt * nh) % na, jf = i / (nt * nh * na);
    *p = s->base;
    p->f = s->freqs[jf];
    /* k steps from ar_min, rounded to the step's digits (2.1 + 0.1 k) */
    p->Ar = round((s->ar_min + (double)ia * s->ar_step) * 1e9) / 1e9;
    p->h0 = s->h0[ih];
    p->theta0 = s->theta0[it];
    p->duration = s->cycles / p->f;
}

double pl_dimer_drift_forward(const pl_dimer_result *r)
{
    return r->hmax[0] > r->hmax[1] ? -r->drift : r->drift;
}

double pl_dimer_scaled_drift(double drift, double f, double g)
{
    return drift * f / g * 1e2;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of the n sorted values v, by linear interpolation. */
static double quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t k = (size_t)pos;
    if (k + 1 >= n)
        return v[n - 1];
    return v[k] + (pos - (double)k) * (v[k + 1] - v[k]);
}

void pl_dimer_fig11_summarize(const pl_dimer_fig11_spec *s,
                              const pl_dimer_result *res, const int *ok,
                              pl_dimer_fig11_point *pts)
{
    size_t ns = s->n_h0 * s->n_theta0;
    double *d = malloc(2 * (ns ? ns : 1) * sizeof *d), *all = d ? d + ns : NULL;
    for (size_t jf = 0; jf < s->n_freqs; jf++)
        for (size_t ia = 0; ia < s->n_ar; ia++) {
            pl_dimer_fig11_point *pt = &pts[jf * s->n_ar + ia];
            pl_dimer_params p;
            size_t base = (jf * s->n_ar + ia) * ns;
            pl_dimer_fig11_params(s, base, &p);
            memset(pt, 0, sizeof *pt);
            pt->f = p.f;
            pt->Ar = p.Ar;
            size_t nd = 0, na = 0;
            for (size_t k = 0; k < ns; k++) {
                const pl_dimer_result *r = &res[base + k];
                if (!ok[base + k])
                    continue;
                pt->starts++;
                pt->modes[r->mode]++;
                double sd = pl_dimer_scaled_drift(pl_dimer_drift_forward(r), p.f, p.g);
                if (all)
                    all[na++] = sd;
                if (r->mode == PL_DIMER_DRIFT) {
                    pt->drift_starts++;
                    if (d)
                        d[nd++] = sd;
                }
            }
            if (!d)
                continue;
            qsort(d, nd, sizeof *d, cmp_double);
            qsort(all, na, sizeof *all, cmp_double);
            pt->med = quantile(d, nd, 0.5);
            pt->q1 = quantile(d, nd, 0.25);
            pt->q3 = quantile(d, nd, 0.75);
            pt->lo = nd ? d[0] : NAN;
            pt->hi = nd ? d[nd - 1] : NAN;
            pt->med_all = quantile(all, na, 0.5);
        }
    free(d);
}

/* --- basin maps ---------------------------------------------------------- */

void pl_dimer_basin_params(const pl_dimer_basin_spec *s, size_t ih, size_t ith,
                           pl_dimer_params *p)
{
    *p = s->base;
    double fh = s->nh > 1 ? (double)ih / (double)(s->nh - 1) : 0;
    double ft = s->nth > 1 ? (double)ith / (double)(s->nth - 1) : 0;
    p->h0 = s->h0_min + fh * (s->h0_max - s->h0_min);
    p->theta0 = s->th_min + ft * (s->th_max - s->th_min);
}

void pl_dimer_basin_summarize(const pl_dimer_basin_spec *s, const int *modes,
                              double h0_ref, double th_ref, pl_dimer_mode want,
                              pl_dimer_basin_stats *st)
{
    memset(st, 0, sizeof *st);
    st->dist = st->h0_near = st->th_near = NAN;
    size_t n = 0, count[PL_DIMER_NMODES] = {0};
    for (size_t ih = 0; ih < s->nh; ih++)
        for (size_t it = 0; it < s->nth; it++) {
            int m = modes[ih * s->nth + it];
            if (m < 0 || m >= PL_DIMER_NMODES) {
                st->failed++;
                continue;
            }
            n++;
            count[m]++;
            if (m != (int)want)
                continue;
            pl_dimer_params p;
            pl_dimer_basin_params(s, ih, it, &p);
            double dh = (p.h0 - h0_ref) / 1e-3, dt = (p.theta0 - th_ref) * 180 / M_PI;
            double dist = sqrt(dh * dh + dt * dt);
            if (isnan(st->dist) || dist < st->dist) {
                st->dist = dist;
                st->h0_near = p.h0;
                st->th_near = p.theta0;
            }
        }
    for (int m = 0; m < PL_DIMER_NMODES; m++)
        st->share[m] = n ? (double)count[m] / (double)n : NAN;
}
