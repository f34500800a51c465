/* web/trace.c - see trace.h. */
#include "web/trace.h"

#include "core/extremes.h"
#include "db/derived.h"
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
            pl_extremes(x[c] + lo, hi - lo, &out->min[c][i], &out->max[c][i]);
    }
    return PL_OK;
}

/* The two levels live in one array each, bucket k of the whole run at
 * index k, filled a slice (SLICE frames) at a time.  Per slice, how many
 * of its frames each level covers: a slice is ready for a level when that
 * is all the frames it holds now (the last slice of a recording grows). */
enum { SLICE = 1 << 16 };   /* frames read at a time: 1 MiB of doubles */
enum { FINE_PER_SLICE = SLICE / PL_TRACE_BUCKET, COARSE_PER_SLICE = SLICE / PL_TRACE_COARSE,
       FINE_PER_COARSE = PL_TRACE_COARSE / PL_TRACE_BUCKET };

_Static_assert(PL_TRACE_COARSE == PL_DERIVED_RAW_BUCKET,
               "the coarse level is the one processing stores");
_Static_assert(SLICE % PL_TRACE_COARSE == 0 && PL_TRACE_COARSE % PL_TRACE_BUCKET == 0,
               "buckets tile a slice");

typedef struct {
    double *min[2], *max[2];
    int *covered;             /* per slice: frames of it the level holds */
} level;

struct pl_trace {
    pl_run_info info;
    pl_channel ch[2];
    double gain[2];           /* volts -> m/s */
    long long frames;         /* frames the run holds (at the last refresh) */
    size_t nslices, cap;      /* slices of the run; allocated for cap */
    level fine, coarse;
    long long frames_read;    /* from the chunks, since open */
    int stored;               /* the coarse level came from the store */
};

long long pl_trace_frames(const pl_trace *tr) { return tr->frames; }
double pl_trace_rate(const pl_trace *tr) { return tr->info.sample_rate_hz; }
long long pl_trace_run(const pl_trace *tr) { return tr->info.id; }
long long pl_trace_frames_read(const pl_trace *tr) { return tr->frames_read; }
int pl_trace_stored(const pl_trace *tr) { return tr->stored; }

static void level_free(level *l)
{
    for (int c = 0; c < 2; c++) {
        free(l->min[c]);
        free(l->max[c]);
    }
    free(l->covered);
}

void pl_trace_close(pl_trace *tr)
{
    if (!tr)
        return;
    level_free(&tr->fine);
    level_free(&tr->coarse);
    free(tr);
}

/* Room for cap slices of per_slice buckets; new slices cover nothing. */
static int level_grow(level *l, size_t old, size_t cap, size_t per_slice)
{
    for (int c = 0; c < 2; c++) {
        double *a = realloc(l->min[c], cap * per_slice * sizeof *a);
        if (a)
            l->min[c] = a;
        double *b = realloc(l->max[c], cap * per_slice * sizeof *b);
        if (b)
            l->max[c] = b;
        if (!a || !b)
            return -1;
    }
    int *cov = realloc(l->covered, cap * sizeof *cov);
    if (!cov)
        return -1;
    l->covered = cov;
    memset(cov + old, 0, (cap - old) * sizeof *cov);
    return 0;
}

/* Frames slice s holds now. */
static int slice_frames(const pl_trace *tr, size_t s)
{
    long long left = tr->frames - (long long)s * SLICE;
    return left < SLICE ? (int)left : SLICE;
}

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
    tr->frames_read += n;
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
    if (now.n_frames == tr->frames && tr->cap)
        return PL_OK;
    size_t need = (size_t)((now.n_frames + SLICE - 1) / SLICE);
    if (need > tr->cap || !tr->cap) {
        size_t cap = tr->cap ? tr->cap : 16;
        while (cap < need)
            cap *= 2;
        if (level_grow(&tr->fine, tr->cap, cap, FINE_PER_SLICE) != 0 ||
            level_grow(&tr->coarse, tr->cap, cap, COARSE_PER_SLICE) != 0)
            return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for the "
                              "envelope of %lld frames", tr->info.id, now.n_frames);
        tr->cap = cap;
    }
    if (now.n_frames < tr->frames) {   /* never for a run as prismlab keeps it */
        memset(tr->fine.covered, 0, tr->cap * sizeof(int));
        memset(tr->coarse.covered, 0, tr->cap * sizeof(int));
    }
    tr->frames = now.n_frames;
    tr->nslices = need;
    return PL_OK;
}

/* Brings the fine level of slice s up to its frames from frame `from` of
 * it on (a recording's last slice grows: its last partial bucket is
 * redone), v[c] holding the velocities of those frames, and the coarse
 * level with it. */
static void fill_slice(pl_trace *tr, size_t s, int from, double *const v[2])
{
    int want = slice_frames(tr, s);
    size_t k0 = s * FINE_PER_SLICE + (size_t)from / PL_TRACE_BUCKET;
    for (int c = 0; c < 2; c++)
        pl_bucket_extremes(v[c], (size_t)(want - from), PL_TRACE_BUCKET,
                           tr->fine.min[c] + k0, tr->fine.max[c] + k0);
    tr->fine.covered[s] = want;
    /* the coarse buckets from the fine ones: the same extremes exactly */
    size_t fa = s * FINE_PER_SLICE, fb = fa + (size_t)(want + PL_TRACE_BUCKET - 1) / PL_TRACE_BUCKET;
    size_t ka = fa / FINE_PER_COARSE + (size_t)from / PL_TRACE_COARSE;
    for (size_t k = ka; k * FINE_PER_COARSE < fb; k++) {
        size_t a = k * FINE_PER_COARSE, b = a + FINE_PER_COARSE < fb ? a + FINE_PER_COARSE : fb;
        for (int c = 0; c < 2; c++) {
            double lo, hi, ignore;
            pl_extremes(tr->fine.min[c] + a, b - a, &lo, &ignore);
            pl_extremes(tr->fine.max[c] + a, b - a, &ignore, &hi);
            tr->coarse.min[c][k] = lo;
            tr->coarse.max[c][k] = hi;
        }
    }
    tr->coarse.covered[s] = want;
}

/* Slices read at once: more than one, so that the read converts 16-bit
 * codes through a table rather than a polynomial a sample (db/run.c). */
enum { BATCH = 8 };

/* Makes slices [s0, s1) ready at level l (the fine or the coarse one),
 * reading what they lack, consecutive slices together. */
static pl_status ensure(pl_trace *tr, pl_store *store, const level *l, size_t s0,
                        size_t s1, pl_err *err)
{
    double *v[2] = {NULL, NULL};
    pl_status st = PL_OK;
    if (s1 > tr->nslices)
        s1 = tr->nslices;
    for (size_t s = s0; s < s1 && st == PL_OK;) {
        if (l->covered[s] == slice_frames(tr, s)) {
            s++;
            continue;
        }
        size_t e = s + 1;
        while (e < s1 && e - s < BATCH && l->covered[e] != slice_frames(tr, e))
            e++;
        if (!v[0]) {
            v[0] = malloc(BATCH * SLICE * sizeof(double));
            v[1] = malloc(BATCH * SLICE * sizeof(double));
            if (!v[0] || !v[1]) {
                st = pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", tr->info.id);
                break;
            }
        }
        int from = tr->fine.covered[s] / PL_TRACE_BUCKET * PL_TRACE_BUCKET;
        long long f0 = (long long)s * SLICE + from;
        long long f1 = (long long)(e - 1) * SLICE + slice_frames(tr, e - 1);
        st = read_vel(tr, store, f0, f1 - f0, v, err);
        for (size_t k = s; k < e && st == PL_OK; k++) {
            size_t off = k == s ? 0 : (size_t)((long long)k * SLICE - f0);
            double *const at[2] = {v[0] + off, v[1] + off};
            fill_slice(tr, k, k == s ? from : 0, at);
        }
        s = e;
    }
    free(v[0]);
    free(v[1]);
    return st;
}

/* The coarse level from what processing stored (db/derived.h), when it
 * covers the run as it is now; otherwise it is built from the chunks as
 * windows need it. */
static void load_stored(pl_trace *tr, pl_store *store)
{
    static const char *const names[2][2] = {{"vp1_raw_min", "vp1_raw_max"},
                                            {"vp2_raw_min", "vp2_raw_max"}};
    size_t want = (size_t)((tr->frames + PL_TRACE_COARSE - 1) / PL_TRACE_COARSE);
    double *x[2][2] = {{NULL, NULL}, {NULL, NULL}};
    int ok = want > 0;
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < 2; m++) {
            size_t n = 0;
            double t0 = NAN, rate = NAN;
            pl_err ignore = {0};
            ok = ok && pl_derived_series(store, tr->info.id, names[c][m], PL_TRACE_COARSE,
                                         &x[c][m], &n, &t0, &rate, &ignore) == PL_OK &&
                 n == want && t0 == 0 &&
                 fabs(rate * PL_TRACE_COARSE - tr->info.sample_rate_hz) <=
                     1e-9 * tr->info.sample_rate_hz;
        }
    if (ok) {
        for (int c = 0; c < 2; c++) {
            memcpy(tr->coarse.min[c], x[c][0], want * sizeof(double));
            memcpy(tr->coarse.max[c], x[c][1], want * sizeof(double));
        }
        for (size_t s = 0; s < tr->nslices; s++)
            tr->coarse.covered[s] = slice_frames(tr, s);
        tr->stored = 1;
    }
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < 2; m++)
            free(x[c][m]);
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
    if (tr->info.state != PL_RUN_RECORDING)
        load_stored(tr, store);
    *out = tr;
    return PL_OK;
}

/* Window [f0, f1) from a level of bucket frames each: column edges on
 * bucket edges. */
static pl_status from_level(pl_trace *tr, pl_store *store, const level *l, int bucket,
                            long long f0, long long f1, size_t px,
                            pl_envelope_cols *out, pl_err *err)
{
    size_t ka = (size_t)(f0 / bucket);
    size_t kb = (size_t)((f1 + bucket - 1) / bucket);
    size_t nk = kb - ka;
    if (ensure(tr, store, l, (size_t)(f0 / SLICE), (size_t)((f1 + SLICE - 1) / SLICE),
               err) != PL_OK)
        return err->code;
    if (cols_alloc(out, 2, px, err) != PL_OK)
        return err->code;
    out->n = px;
    for (size_t i = 0; i < px; i++) {
        size_t lo = ka + (size_t)((double)i * (double)nk / (double)px);
        size_t hi = i + 1 == px ? kb : ka + (size_t)((double)(i + 1) * (double)nk / (double)px);
        out->first[i] = (long long)lo * bucket;
        for (int c = 0; c < 2; c++) {
            double mn, mx, ignore;
            pl_extremes(l->min[c] + lo, hi - lo, &mn, &ignore);
            pl_extremes(l->max[c] + lo, hi - lo, &ignore, &mx);
            out->min[c][i] = mn;
            out->max[c][i] = mx;
        }
    }
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
    if (n >= 8LL * PL_TRACE_COARSE * (long long)px)
        return from_level(tr, store, &tr->coarse, PL_TRACE_COARSE, f0, f1, px, out, err);
    if (n >= 8LL * PL_TRACE_BUCKET * (long long)px)
        return from_level(tr, store, &tr->fine, PL_TRACE_BUCKET, f0, f1, px, out, err);
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
