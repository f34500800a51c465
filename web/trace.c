/* web/trace.c - see trace.h. */
#include "web/trace.h"

#include "db/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pl_envelope_cols_free(pl_envelope_cols *e)
{
    free(e->first);
    for (int c = 0; c < PL_TRACE_MAXCH; c++) {
        free(e->min[c]);
        free(e->max[c]);
    }
    memset(e, 0, sizeof *e);
}

static pl_status cols_alloc(pl_envelope_cols *e, int n_ch, size_t n, pl_err *err)
{
    memset(e, 0, sizeof *e);
    e->n_ch = n_ch;
    e->first = malloc((n ? n : 1) * sizeof *e->first);
    int ok = e->first != NULL;
    for (int c = 0; c < n_ch; c++) {
        e->min[c] = malloc((n ? n : 1) * sizeof(double));
        e->max[c] = malloc((n ? n : 1) * sizeof(double));
        ok = ok && e->min[c] && e->max[c];
    }
    if (!ok) {
        pl_envelope_cols_free(e);
        return pl_err_set(err, PL_ENOMEM, "envelope of %zu columns: out of memory", n);
    }
    return PL_OK;
}

/* min/max of x[a..b) without NaN: NaN, NaN when there is nothing else */
static void extremes(const double *x, size_t a, size_t b, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = a; i < b; i++) {
        double v = x[i];
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    if (mn > mx)
        mn = mx = NAN;
    *lo = mn;
    *hi = mx;
}

pl_status pl_envelope(const double *const *x, int n_ch, size_t a, size_t b,
                      size_t px, pl_envelope_cols *out, pl_err *err)
{
    if (n_ch < 1 || n_ch > PL_TRACE_MAXCH || px < 1 || b < a)
        return pl_err_set(err, PL_EINVAL, "envelope: %d channels, %zu columns, "
                          "samples %zu..%zu", n_ch, px, a, b);
    size_t n = b - a;
    int full = n <= 2 * px;
    size_t cols = full ? n : px;
    if (cols_alloc(out, n_ch, cols, err) != PL_OK)
        return err->code;
    out->full = full;
    out->n = cols;
    for (size_t i = 0; i < cols; i++) {
        size_t lo = full ? a + i : a + (size_t)((double)i * (double)n / (double)px);
        size_t hi = full ? lo + 1 : a + (size_t)((double)(i + 1) * (double)n / (double)px);
        if (i + 1 == cols)
            hi = b;
        out->first[i] = (long long)lo;
        for (int c = 0; c < n_ch; c++)
            extremes(x[c], lo, hi, &out->min[c][i], &out->max[c][i]);
    }
    return PL_OK;
}

struct pl_trace {
    pl_run_info info;
    pl_channel ch[2];
    double gain[2];           /* volts -> m/s */
    long long frames;         /* frames the level covers */
    size_t nb, cap;           /* buckets (the last may be partial) */
    double *bmin[2], *bmax[2];
};

long long pl_trace_frames(const pl_trace *tr) { return tr->frames; }
double pl_trace_rate(const pl_trace *tr) { return tr->info.sample_rate_hz; }
long long pl_trace_run(const pl_trace *tr) { return tr->info.id; }

void pl_trace_close(pl_trace *tr)
{
    if (!tr)
        return;
    for (int c = 0; c < 2; c++) {
        free(tr->bmin[c]);
        free(tr->bmax[c]);
    }
    free(tr);
}

enum { SLICE = 1 << 16 };   /* frames read at a time: 1 MiB of doubles */

/* Reads frames [first, first + n) as velocities into v[0], v[1]. */
static pl_status read_vel(pl_trace *tr, pl_store *store, long long first,
                          long long n, double *v[2], pl_err *err)
{
    int nch = tr->info.n_channels;
    double *out[16];
    double *spare = NULL;
    if (nch > 2) {
        spare = malloc((size_t)(nch - 2) * (size_t)n * sizeof *spare);
        if (!spare)
            return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", tr->info.id);
    }
    for (int c = 0; c < nch && c < 16; c++)
        out[c] = c < 2 ? v[c] : spare + (size_t)(c - 2) * (size_t)n;
    pl_status st = pl_run_read_channels(store, tr->info.id, first, n, out, nch, err);
    free(spare);
    if (st != PL_OK)
        return st;
    for (int c = 0; c < 2; c++)
        for (long long i = 0; i < n; i++)
            v[c][i] *= tr->gain[c];
    return PL_OK;
}

pl_status pl_trace_refresh(pl_trace *tr, pl_store *store, pl_err *err)
{
    pl_run_info now;
    if (pl_run_get(store, tr->info.id, &now, err) != PL_OK)
        return err->code;
    tr->info.n_frames = now.n_frames;
    tr->info.state = now.state;
    if (now.n_frames <= tr->frames)
        return PL_OK;
    size_t need = (size_t)((now.n_frames + PL_TRACE_BUCKET - 1) / PL_TRACE_BUCKET);
    if (need > tr->cap) {
        size_t cap = tr->cap ? tr->cap : 1024;
        while (cap < need)
            cap *= 2;
        for (int c = 0; c < 2; c++) {
            double *a = realloc(tr->bmin[c], cap * sizeof *a);
            if (a)
                tr->bmin[c] = a;
            double *b = realloc(tr->bmax[c], cap * sizeof *b);
            if (b)
                tr->bmax[c] = b;
            if (!a || !b)
                return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for "
                                  "%zu buckets", tr->info.id, cap);
        }
        tr->cap = cap;
    }
    /* restart at the last whole bucket: a partial one is redone */
    long long from = tr->frames / PL_TRACE_BUCKET * PL_TRACE_BUCKET;
    double *v[2] = {malloc(SLICE * sizeof(double)), malloc(SLICE * sizeof(double))};
    pl_status st = PL_OK;
    if (!v[0] || !v[1])
        st = pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", tr->info.id);
    for (long long f = from; st == PL_OK && f < now.n_frames; f += SLICE) {
        long long n = now.n_frames - f < SLICE ? now.n_frames - f : SLICE;
        if ((st = read_vel(tr, store, f, n, v, err)) != PL_OK)
            break;
        for (long long i = 0; i < n; i += PL_TRACE_BUCKET) {
            size_t k = (size_t)((f + i) / PL_TRACE_BUCKET);
            size_t e = (size_t)(i + PL_TRACE_BUCKET < n ? i + PL_TRACE_BUCKET : n);
            for (int c = 0; c < 2; c++) {
                double lo, hi;
                extremes(v[c], (size_t)i, e, &lo, &hi);
                tr->bmin[c][k] = lo;
                tr->bmax[c][k] = hi;
            }
        }
    }
    free(v[0]);
    free(v[1]);
    if (st != PL_OK)
        return st;
    tr->frames = now.n_frames;
    tr->nb = need;
    return PL_OK;
}

pl_status pl_trace_open(pl_trace **out, pl_store *store, long long run_id,
                        pl_err *err)
{
    *out = NULL;
    pl_trace *tr = calloc(1, sizeof *tr);
    if (!tr)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", run_id);
    if (pl_run_get(store, run_id, &tr->info, err) != PL_OK) {
        free(tr);
        return err->code;
    }
    if (tr->info.n_channels < 2 || tr->info.n_channels > 16) {
        int n = tr->info.n_channels;
        pl_trace_close(tr);
        return pl_err_set(err, PL_EFORMAT, "run %lld has %d channels: the plots "
                          "need the two LDVs", run_id, n);
    }
    pl_channel ch[16];
    if (pl_run_channels(store, run_id, ch, 16, err) != PL_OK) {
        pl_trace_close(tr);
        return err->code;
    }
    for (int c = 0; c < 2; c++) {
        tr->ch[c] = ch[c];
        tr->gain[c] = ch[c].beam_sign * ch[c].ldv_scale_mps_per_v;
    }
    if (pl_trace_refresh(tr, store, err) != PL_OK) {
        pl_trace_close(tr);
        return err->code;
    }
    *out = tr;
    return PL_OK;
}

pl_status pl_trace_window(pl_trace *tr, pl_store *store, long long f0,
                          long long f1, size_t px, pl_envelope_cols *out,
                          pl_err *err)
{
    memset(out, 0, sizeof *out);
    if (px < 1)
        return pl_err_set(err, PL_EINVAL, "an envelope needs at least one column");
    if (f0 < 0)
        f0 = 0;
    if (f1 > tr->frames)
        f1 = tr->frames;
    if (f1 < f0)
        f1 = f0;
    long long n = f1 - f0;
    if (n < 8LL * PL_TRACE_BUCKET * (long long)px) {
        /* narrow: exact, from the chunks */
        double *v[2] = {malloc((size_t)(n ? n : 1) * sizeof(double)),
                        malloc((size_t)(n ? n : 1) * sizeof(double))};
        pl_status st = PL_OK;
        if (!v[0] || !v[1])
            st = pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", tr->info.id);
        if (st == PL_OK && n > 0)
            st = read_vel(tr, store, f0, n, v, err);
        if (st == PL_OK)
            st = pl_envelope((const double *const *)v, 2, 0, (size_t)n, px, out, err);
        free(v[0]);
        free(v[1]);
        if (st == PL_OK)
            for (size_t i = 0; i < out->n; i++)
                out->first[i] += f0;
        return st;
    }
    /* wide: from the bucket level, column edges on bucket edges */
    size_t ka = (size_t)(f0 / PL_TRACE_BUCKET);
    size_t kb = (size_t)((f1 + PL_TRACE_BUCKET - 1) / PL_TRACE_BUCKET);
    size_t nk = kb - ka;
    if (cols_alloc(out, 2, px, err) != PL_OK)
        return err->code;
    out->n = px;
    for (size_t i = 0; i < px; i++) {
        size_t lo = ka + (size_t)((double)i * (double)nk / (double)px);
        size_t hi = i + 1 == px ? kb : ka + (size_t)((double)(i + 1) * (double)nk / (double)px);
        out->first[i] = (long long)lo * PL_TRACE_BUCKET;
        for (int c = 0; c < 2; c++) {
            double mn = INFINITY, mx = -INFINITY;
            for (size_t k = lo; k < hi; k++) {
                if (tr->bmin[c][k] < mn) mn = tr->bmin[c][k];
                if (tr->bmax[c][k] > mx) mx = tr->bmax[c][k];
            }
            out->min[c][i] = mn <= mx ? mn : NAN;
            out->max[c][i] = mn <= mx ? mx : NAN;
        }
    }
    return PL_OK;
}
