/* model/seeds/dimer_maps.c - many dimer simulations: figure 11 and basin
 * maps.  See dimer_maps.h. */
#include "model/seeds/dimer_maps.h"

#include "core/atomicfile.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- the batch ------------------------------------------------------------ */

/* The simulations are handed out one at a time by an atomic counter: a
 * start costs 10-100 ms and some cost ten times others, so handing out
 * rows or blocks would only lengthen the tail, and a fetch-add is
 * nanoseconds.  Each worker writes only the res[i] and ok[i] of the i it
 * took, so the results are those of one thread, bit for bit.  The calling
 * thread does not simulate: it wakes PROGRESS_NS apart to report. */
enum { PROGRESS_NS = 100000000 };

typedef struct {
    const pl_dimer_params *ps;
    pl_dimer_result *res;
    int *ok;
    size_t n;
    atomic_size_t next, done;   /* handed out, finished */
    atomic_int stop;            /* progress asked to stop: take no more */
} batch;

static void run_one(batch *b, size_t i)
{
    pl_err err = {0};
    if (pl_dimer_run(&b->ps[i], NULL, 0, &b->res[i], &err) == PL_OK) {
        b->ok[i] = 1;
    } else {
        b->ok[i] = 0;
        memset(&b->res[i], 0, sizeof b->res[i]);
        b->res[i].mode = PL_DIMER_OTHER;
    }
}

static void *worker(void *arg)
{
    batch *b = arg;
    for (size_t i; !atomic_load(&b->stop) && (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
        run_one(b, i);
        atomic_fetch_add(&b->done, 1);
    }
    return NULL;
}

int pl_dimer_threads(int threads)
{
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    return threads > PL_DIMER_MAX_THREADS ? PL_DIMER_MAX_THREADS : threads;
}

pl_status pl_dimer_batch(const pl_dimer_params *ps, size_t n, int threads,
                         pl_dimer_result *res, int *ok,
                         pl_dimer_progress progress, void *ctx, pl_err *err)
{
    threads = pl_dimer_threads(threads);
    batch b = {.ps = ps, .res = res, .ok = ok, .n = n};
    atomic_init(&b.next, 0);
    atomic_init(&b.done, 0);
    atomic_init(&b.stop, 0);
    pthread_t tid[PL_DIMER_MAX_THREADS];
    int started = 0;
    pl_status st = PL_OK;
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&tid[started], NULL, worker, &b) != 0) {
            st = pl_err_set(err, PL_EIO, "dimer batch: cannot start thread %d of %d",
                            t + 1, threads);
            break;              /* the threads that run finish the work */
        }
        started++;
    }
    if (started == 0)
        worker(&b);             /* no thread at all: this one does it */
    int stop = progress && progress(0, n, ctx);
    size_t last = 0;
    while (started > 0 && !stop && (last = atomic_load(&b.done)) < n) {
        struct timespec nap = {0, PROGRESS_NS};
        nanosleep(&nap, NULL);
        size_t done = atomic_load(&b.done);
        if (progress && done < n)
            stop = progress(done, n, ctx);
    }
    /* the workers finish the simulation each holds and take no more */
    atomic_store(&b.stop, stop);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    size_t done = atomic_load(&b.done);
    if (st == PL_OK && done < n)
        return pl_err_set(err, PL_ESTATE, "dimer batch: stopped after %zu of %zu "
                          "simulations", done, n);
    if (progress)
        progress(n, n, ctx);
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

const pl_dimer_fig11_point *pl_dimer_fig11_at(const pl_dimer_fig11_point *pts,
                                              size_t n, double f, double Ar)
{
    for (size_t i = 0; i < n; i++)
        if (fabs(pts[i].f - f) < 1e-9 && fabs(pts[i].Ar - Ar) < 1e-6)
            return &pts[i];
    return NULL;
}

/* The median scaled drift of the drift-mode starts at (f, Ar); NAN when
 * none reached it or the point is not in the figure. */
static double med_at(const pl_dimer_fig11_point *pts, size_t n, double f, double Ar)
{
    const pl_dimer_fig11_point *p = pl_dimer_fig11_at(pts, n, f, Ar);
    return p ? p->med : NAN;
}

/* Appends to a statement's finding. */
static void say(pl_dimer_statement *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(pl_dimer_statement *st, const char *fmt, ...)
{
    size_t len = strlen(st->finding);
    if (len + 1 >= sizeof st->finding)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->finding + len, sizeof st->finding - len, fmt, ap);
    va_end(ap);
}

/* Whether pts holds every A_r from a10 / 10 to b10 / 10 at f: a statement
 * on that range is checked only where the sweep simulated all of it. */
static int covers(const pl_dimer_fig11_point *pts, size_t n, double f, int a10, int b10)
{
    for (int a = a10; a <= b10; a++)
        if (!pl_dimer_fig11_at(pts, n, f, a / 10.0))
            return 0;
    return 1;
}

/* The frequencies a statement needs and which of them the sweep covers
 * (A_r from a10 / 10 to b10 / 10). */
typedef struct {
    int checked, missing;
    char left_out[64];          /* "50, 75 Hz" */
    int a10, b10;
} f_cover;

static int f_covered(f_cover *c, const pl_dimer_fig11_point *pts, size_t n, double f)
{
    if (covers(pts, n, f, c->a10, c->b10)) {
        c->checked++;
        return 1;
    }
    size_t len = strlen(c->left_out);
    snprintf(c->left_out + len, sizeof c->left_out - len, "%s%g", c->missing ? ", " : "", f);
    c->missing++;
    return 0;
}

/* A statement checked at each f ends here: not checked when no f had its
 * range simulated, else it holds when it held at every f checked; the
 * finding names the frequencies left out. */
static void per_f_end(pl_dimer_statement *st, const f_cover *c, int ok)
{
    if (c->checked == 0) {
        st->verdict = PL_DIMER_UNCHECKED;
        say(st, "not checked: A_r %.1f to %.1f was not simulated in full at %s Hz", c->a10 / 10.0,
            c->b10 / 10.0, c->left_out);
        return;
    }
    st->verdict = ok ? PL_DIMER_HOLDS : PL_DIMER_FAILS;
    if (c->missing)
        say(st, "not checked at %s Hz (A_r %.1f to %.1f not simulated)", c->left_out,
            c->a10 / 10.0, c->b10 / 10.0);
}

static const double fig11_fs[3] = {25, 50, 75};

/* 1: the forward drift falls with A_r on (3.1, 5). */
static void check_falls(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "The positive drift speed decreases as A_r increases for A_r in (3.1, 5).";
    st->criterion = "at each f, the median scaled drift of the drift-mode starts is "
                    "positive at every A_r from 3.2 to 4.9 and falls from each A_r to "
                    "the next at 90 % of the steps or more";
    f_cover c = {.a10 = 32, .b10 = 49};
    int all = 1;
    for (int k = 0; k < 3; k++) {
        if (!f_covered(&c, pts, n, fig11_fs[k]))
            continue;
        int steps = 0, falls = 0, pos = 1;
        double prev = NAN;
        for (int a = 32; a <= 49; a++) {
            double m = med_at(pts, n, fig11_fs[k], a / 10.0);
            pos &= m > 0;
            if (!isnan(prev) && !isnan(m)) {
                steps++;
                falls += m < prev;
            }
            prev = m;
        }
        all &= pos && steps > 0 && falls >= 0.9 * steps;
        say(st, "%g Hz: %.2f at 3.2 to %.2f at 4.9, falling at %d of %d steps%s; ",
            fig11_fs[k], med_at(pts, n, fig11_fs[k], 3.2), med_at(pts, n, fig11_fs[k], 4.9),
            falls, steps, pos ? "" : ", not positive throughout");
    }
    per_f_end(st, &c, all);
}

/* 2: the inflexion at 3.1 at 25 Hz. */
static void check_inflexion(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "At 25 Hz an inflexion exists at A_r = 3.1: the scaled drift decreases "
                "rapidly from A_r 3.1 to 2.9 and then increases as A_r diminishes further.";
    st->criterion = "at 25 Hz the median at 2.9 is below that at 3.1 by 10 % or more, and "
                    "the largest median on [2.1, 2.8] is above that at 2.9";
    f_cover c = {.a10 = 21, .b10 = 31};
    if (!f_covered(&c, pts, n, 25)) {
        per_f_end(st, &c, 0);
        return;
    }
    double m31 = med_at(pts, n, 25, 3.1), m29 = med_at(pts, n, 25, 2.9), hi = -INFINITY;
    for (int a = 21; a <= 28; a++) {
        double m = med_at(pts, n, 25, a / 10.0);
        if (!isnan(m))
            hi = fmax(hi, m);
    }
    int ok = m29 < 0.9 * m31 && hi > m29;
    say(st, "25 Hz: %.2f at 3.1, %.2f at 3.0, %.2f at 2.9, up to %.2f on [2.1, 2.8]: ",
        m31, med_at(pts, n, 25, 3.0), m29, hi);
    say(st, ok ? "a dip below 3.1" : "no dip: the drift keeps rising as A_r falls below "
        "3.1 (where the resting sphere starts to chatter)");
    per_f_end(st, &c, ok);
}

/* 3: 50 and 75 Hz flat on (2.5, 3.1), rising below. */
static void check_flat(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "At 50 and 75 Hz the scaled drift seems constant for A_r in (2.5, 3.1) and "
                "then increases rapidly as A_r is reduced further.";
    st->criterion = "at 50 and 75 Hz the medians on [2.6, 3.0] lie within 15 % of their "
                    "mean, and the median at 2.3 is 5 % or more above that at 2.6";
    f_cover c = {.a10 = 23, .b10 = 30};
    int all = 1;
    for (int k = 1; k < 3; k++) {
        if (!f_covered(&c, pts, n, fig11_fs[k]))
            continue;
        double lo = INFINITY, hi = -INFINITY, sum = 0;
        int cnt = 0;
        for (int a = 26; a <= 30; a++) {
            double m = med_at(pts, n, fig11_fs[k], a / 10.0);
            if (isnan(m))
                continue;
            lo = fmin(lo, m);
            hi = fmax(hi, m);
            sum += m;
            cnt++;
        }
        double mean = cnt ? sum / cnt : NAN, m23 = med_at(pts, n, fig11_fs[k], 2.3);
        double m26 = med_at(pts, n, fig11_fs[k], 2.6);
        all &= cnt > 0 && hi - lo <= 0.15 * fabs(mean) && m23 >= 1.05 * m26;
        say(st, "%g Hz: %.2f to %.2f on [2.6, 3.0] (%.0f %% of the mean), %.2f at 2.3 "
            "against %.2f at 2.6; ", fig11_fs[k], lo, hi, 100 * (hi - lo) / fabs(mean), m23,
            m26);
    }
    per_f_end(st, &c, all);
}

/* 4: the sudden reversal near A_r 5. */
static void check_reversal(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "At A_r = 5 the forward drift suddenly turns into a reverse drift.";
    st->criterion = "at each f the median changes sign between two neighbouring A_r in "
                    "[4.5, 5.5], from positive to negative";
    f_cover c = {.a10 = 45, .b10 = 55};
    int all = 1;
    for (int k = 0; k < 3; k++) {
        double f = fig11_fs[k], at = NAN;
        if (!f_covered(&c, pts, n, f))
            continue;
        for (int a = 45; a < 55 && isnan(at); a++) {
            double m0 = med_at(pts, n, f, a / 10.0), m1 = med_at(pts, n, f, (a + 1) / 10.0);
            if (m0 > 0 && m1 < 0)
                at = a / 10.0;
        }
        all &= !isnan(at);
        if (isnan(at))
            say(st, "%g Hz: no change of sign in [4.5, 5.5]; ", f);
        else
            say(st, "%g Hz: %+.2f at %.1f, %+.2f at %.1f; ", f, med_at(pts, n, f, at), at,
                med_at(pts, n, f, at + 0.1), at + 0.1);
    }
    per_f_end(st, &c, all);
}

/* 5: at 25 Hz the reverse drift vanishes above 6.2. */
static void check_vanish(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "At 25 Hz the reverse drift decreases rapidly and vanishes when A_r > 6.2 "
                "(the single pendulum mode).";
    st->criterion = "at 25 Hz every median above A_r 6.2 (to 8.5) is within 0.1 of zero";
    f_cover c = {.a10 = 61, .b10 = 85};
    if (!f_covered(&c, pts, n, 25)) {
        per_f_end(st, &c, 0);
        return;
    }
    int all = 1, cnt = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int a = 63; a <= 85; a++) {
        double m = med_at(pts, n, 25, a / 10.0);
        if (isnan(m))
            continue;
        cnt++;
        all &= fabs(m) <= 0.1;
        lo = fmin(lo, m);
        hi = fmax(hi, m);
    }
    int ok = all && cnt > 0;
    say(st, "25 Hz: %+.2f at 6.1, %+.4f at 6.2; above 6.2 the medians run from %+.2f to "
        "%+.2f", med_at(pts, n, 25, 6.1), med_at(pts, n, 25, 6.2), lo, hi);
    if (!ok)
        say(st, ": the drift is forward again, not zero");
    per_f_end(st, &c, ok);
}

/* 6: f changes the scaled forward drift little; needs all three f. */
static void check_f_influence(const pl_dimer_fig11_point *pts, size_t n,
                              pl_dimer_statement *st)
{
    st->paper = "The frequency has little influence on the scaled (forward) drift.";
    st->criterion = "on A_r 3.2 to 4.9 the three frequencies' medians differ by at most "
                    "15 % of their mean at every A_r";
    f_cover c = {.a10 = 32, .b10 = 49};
    for (int k = 0; k < 3; k++)
        f_covered(&c, pts, n, fig11_fs[k]);
    if (c.missing) {    /* a comparison of the three: none without one */
        st->verdict = PL_DIMER_UNCHECKED;
        say(st, "not checked: it compares 25, 50 and 75 Hz, and A_r 3.2 to 4.9 was not "
            "simulated at %s Hz", c.left_out);
        return;
    }
    double worst = 0, where = NAN;
    for (int a = 32; a <= 49; a++) {
        double m[3], sum = 0;
        int ok = 1;
        for (int k = 0; k < 3; k++) {
            m[k] = med_at(pts, n, fig11_fs[k], a / 10.0);
            ok &= !isnan(m[k]);
            sum += m[k];
        }
        if (!ok)
            continue;
        double spread = (fmax(m[0], fmax(m[1], m[2])) - fmin(m[0], fmin(m[1], m[2]))) /
                        fabs(sum / 3);
        if (spread > worst) {
            worst = spread;
            where = a / 10.0;
        }
    }
    st->verdict = worst <= 0.15 ? PL_DIMER_HOLDS : PL_DIMER_FAILS;
    say(st, "the largest spread is %.0f %% of the mean, at A_r %.1f; at 3.9: %.2f, %.2f, "
        "%.2f at 25, 50, 75 Hz", 100 * worst, where, med_at(pts, n, 25, 3.9),
        med_at(pts, n, 50, 3.9), med_at(pts, n, 75, 3.9));
}

/* 7: the reverse branch's ends at each f. */
static void check_reverse_ends(const pl_dimer_fig11_point *pts, size_t n,
                               pl_dimer_statement *st)
{
    st->paper = "The reverse drift's magnitude falls as A_r grows and depends on f: its "
                "zero is at A_r 6.2 (25 Hz), 8.2 (50 Hz) and 7.6 (75 Hz).";
    st->criterion = "the reverse drift (negative medians from A_r 5 on) ends within 0.3 "
                    "of the paper's A_r at each f";
    static const int want10[3] = {62, 82, 76};
    f_cover c = {.a10 = 50, .b10 = 85};
    int all = 1;
    for (int k = 0; k < 3; k++) {
        /* the end is judged where the sweep reaches 0.3 past the paper's */
        c.b10 = want10[k] + 3;
        if (!f_covered(&c, pts, n, fig11_fs[k]))
            continue;
        double end = NAN;
        for (int a = 50; a <= 85; a++) {
            double m = med_at(pts, n, fig11_fs[k], a / 10.0);
            if (!(m < 0))
                break;
            end = a / 10.0;
        }
        /* the zero lies between the last negative A_r and the next */
        double zero = isnan(end) ? NAN : end + 0.1, want = want10[k] / 10.0;
        all &= !isnan(zero) && fabs(zero - want) <= 0.3 + 1e-9;
        if (isnan(zero))
            say(st, "%g Hz: no reverse drift from A_r 5; ", fig11_fs[k]);
        else
            say(st, "%g Hz: reverse from 5.0 to %.1f, forward or zero from %.1f "
                "(paper %.1f); ", fig11_fs[k], end, zero, want);
    }
    c.b10 = 85;     /* what the finding names: the paper's whole range */
    per_f_end(st, &c, all);
}

/* 8: no drift below 2.1 at 2.5 Hz. */
static void check_low(const pl_dimer_fig11_point *low, size_t n_low, pl_dimer_statement *st)
{
    st->paper = "The drift mode cannot be excited for A_r < 2.1 at f = 2.5 Hz.";
    st->criterion = "at 2.5 Hz no start at A_r 2.0 or 2.05 reaches the drift mode "
                    "(and, for the contrast the paper implies, some at 2.1 to 2.3 do)";
    size_t below = 0, below_drift = 0, above = 0, above_drift = 0;
    for (size_t i = 0; i < n_low; i++) {
        if (low[i].Ar < 2.1 - 1e-9) {
            below += low[i].starts;
            below_drift += low[i].drift_starts;
        } else {
            above += low[i].starts;
            above_drift += low[i].drift_starts;
        }
    }
    if (below == 0) {
        st->verdict = PL_DIMER_UNCHECKED;
        say(st, "not checked: no start below A_r 2.1 at 2.5 Hz was simulated");
        return;
    }
    st->verdict = below_drift == 0 ? PL_DIMER_HOLDS : PL_DIMER_FAILS;
    say(st, "2.5 Hz: %zu of %zu starts below A_r 2.1 reach the drift mode, and %zu of "
        "%zu at 2.1 to 2.3", below_drift, below, above_drift, above);
    if (st->verdict == PL_DIMER_HOLDS && above_drift == 0)
        say(st, ": it holds only in that nothing drifts at 2.5 Hz here (the dimer comes "
            "to rest), so A_r 2.1 is no threshold");
}

/* The share of the starts reaching the drift mode at f on A_r 2.1-3.1
 * (r 0) and 3.2-4.9 (r 1). */
static double drift_share(const pl_dimer_fig11_point *pts, size_t n, double f, int r)
{
    size_t tot = 0, dr = 0;
    for (int a = r ? 32 : 21; a <= (r ? 49 : 31); a++) {
        const pl_dimer_fig11_point *p = pl_dimer_fig11_at(pts, n, f, a / 10.0);
        if (p) {
            tot += p->starts;
            dr += p->drift_starts;
        }
    }
    return tot ? (double)dr / (double)tot : NAN;
}

/* 9: the sensitivity to the start at small A_r. */
static void check_small_ar(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "With a small aspect ratio the excitation of the drift mode is more "
                "sensitive to the initial conditions.";
    st->criterion = "at each f the share of the 16 starts reaching the drift mode is "
                    "lower on A_r 2.1-3.1 than on 3.2-4.9";
    f_cover c = {.a10 = 21, .b10 = 49};
    int all = 1;
    for (int k = 0; k < 3; k++) {
        if (!f_covered(&c, pts, n, fig11_fs[k]))
            continue;
        double lo = drift_share(pts, n, fig11_fs[k], 0), hi = drift_share(pts, n, fig11_fs[k], 1);
        all &= lo < hi;
        say(st, "%g Hz: %.0f %% on 2.1-3.1, %.0f %% on 3.2-4.9; ", fig11_fs[k], 100 * lo,
            100 * hi);
    }
    per_f_end(st, &c, all);
}

/* 10: the sensitivity to the start at low f; needs all three f. */
static void check_low_f(const pl_dimer_fig11_point *pts, size_t n, pl_dimer_statement *st)
{
    st->paper = "With a low plate frequency the excitation of the drift mode is more "
                "sensitive to the initial conditions.";
    st->criterion = "the share of the starts reaching the drift mode over A_r 2.1-4.9 is "
                    "lower at 25 Hz than at 50 and at 75 Hz";
    f_cover c = {.a10 = 21, .b10 = 49};
    for (int k = 0; k < 3; k++)
        f_covered(&c, pts, n, fig11_fs[k]);
    if (c.missing) {
        st->verdict = PL_DIMER_UNCHECKED;
        say(st, "not checked: it compares 25 Hz with 50 and 75 Hz, and A_r 2.1 to 4.9 was "
            "not simulated at %s Hz", c.left_out);
        return;
    }
    double all[3];
    for (int k = 0; k < 3; k++)
        all[k] = (drift_share(pts, n, fig11_fs[k], 0) * 11 +
                  drift_share(pts, n, fig11_fs[k], 1) * 18) / 29;
    st->verdict = all[0] < all[1] && all[0] < all[2] ? PL_DIMER_HOLDS : PL_DIMER_FAILS;
    say(st, "%.0f %% at 25 Hz, %.0f %% at 50 Hz, %.0f %% at 75 Hz", 100 * all[0],
        100 * all[1], 100 * all[2]);
    if (st->verdict == PL_DIMER_FAILS)
        say(st, ": here the higher frequencies are the more sensitive (more starts come "
            "to rest lying on the plate)");
}

void pl_dimer_fig11_check(const pl_dimer_fig11_spec *s,
                          const pl_dimer_fig11_point *pts,
                          const pl_dimer_fig11_point *low, size_t n_low,
                          pl_dimer_statement *out)
{
    size_t n = s->n_freqs * s->n_ar;
    memset(out, 0, PL_DIMER_FIG11_STATEMENTS * sizeof *out);
    check_falls(pts, n, &out[0]);
    check_inflexion(pts, n, &out[1]);
    check_flat(pts, n, &out[2]);
    check_reversal(pts, n, &out[3]);
    check_vanish(pts, n, &out[4]);
    check_f_influence(pts, n, &out[5]);
    check_reverse_ends(pts, n, &out[6]);
    check_low(low, n_low, &out[7]);
    check_small_ar(pts, n, &out[8]);
    check_low_f(pts, n, &out[9]);
}

/* --- the paper's single runs ----------------------------------------------- */

static const pl_dimer_case cases[] = {
    {"fig12", "Figure 12", "A_r 6.5, released from h0 2.25 mm, theta0 12 deg: "
     "the mean drift is zero while the right ball makes a small swing and hits "
     "the plate once every cycle (the single pendulum mode)",
     6.5, 25, 0.9, 0.65, 2.25e-3, 12, PL_DIMER_DRIFT, 1, 1},
    {"fig13", "Figure 13", "f 50 Hz, from h0 10.25 mm, theta0 8 deg: a jump mode, "
     "both tips hitting the plate once every cycle, with a horizontal "
     "reciprocation (figure 14)",
     3.9, 50, 0.9, 0.65, 10.25e-3, 8, PL_DIMER_JUMP, -1, 0},
    {"fig15", "Figure 15", "Gamma 0.2, from h0 0.25 mm, theta0 12 deg: the dimer "
     "quickly comes to rest on the plate",
     3.9, 25, 0.2, 0.65, 0.25e-3, 12, PL_DIMER_REST, -1, 0},
    {"fig16", "Figure 16", "Gamma 1.4, from h0 0.25 mm, theta0 10 deg: the left "
     "ball moves with the plate while the right ball hits it with a big and a "
     "small bounce in turn (an unstable mode)",
     3.9, 25, 1.4, 0.65, 0.25e-3, 10, PL_DIMER_ALTERNATE, 1, 0},
    {"fig17", "Figure 17", "Gamma 1.4, from h0 3.25 mm, theta0 10 deg: jump and "
     "flutter combined, the left ball hitting once every cycle, the right ball "
     "once every two cycles",
     3.9, 25, 1.4, 0.65, 3.25e-3, 10, PL_DIMER_MIXED, 0, 0},
    {"fig18", "Figures 18-19", "Gamma 1.4, from h0 0.25 mm, theta0 5 deg: a new "
     "stable state in which the dimer does not rest on the plate but leaves it "
     "by a small height during half of every cycle",
     3.9, 25, 1.4, 0.65, 0.25e-3, 5, PL_DIMER_HOP, -1, 0},
    {"fig20", "Figure 20", "f 50 Hz, e_s 0.8, from h0 4.9 mm, theta0 4 deg: a "
     "flutter mode, both balls hitting the plate out of phase every other cycle",
     3.9, 50, 0.9, 0.8, 4.9e-3, 4, PL_DIMER_FLUTTER, -1, 0},
};

const pl_dimer_case *pl_dimer_cases(size_t *n)
{
    *n = sizeof cases / sizeof cases[0];
    return cases;
}

void pl_dimer_case_params(const pl_dimer_case *c, double cycles, pl_dimer_params *p)
{
    pl_dimer_params_default(p);
    p->Ar = c->Ar;
    p->f = c->f;
    p->Gamma = c->Gamma;
    p->es = c->es;
    p->h0 = c->h0;
    p->theta0 = c->theta0_deg * M_PI / 180;
    p->duration = cycles / c->f;
}

int pl_dimer_case_holds(const pl_dimer_case *c, const pl_dimer_result *r)
{
    if (r->mode != c->mode)
        return 0;
    if (c->bouncer >= 0 && (c->mode == PL_DIMER_DRIFT || c->mode == PL_DIMER_ALTERNATE ||
                            c->mode == PL_DIMER_MIXED)) {
        /* the sphere that hits every cycle and rises higher (drift) or
         * hits more often (mixed) */
        int b = c->mode == PL_DIMER_MIXED ? r->hits[1] > r->hits[0]
                                          : r->hmax[1] >= r->hmax[0];
        if (b != c->bouncer)
            return 0;
    }
    if (c->zero_drift && fabs(pl_dimer_scaled_drift(r->drift, c->f, 9.81)) > 0.05)
        return 0;
    return 1;
}

/* The sphere that swings in a drift-like mode (the higher one), 0 left. */
static int swinging(const pl_dimer_result *r)
{
    return r->hmax[1] >= r->hmax[0];
}

static const char *side_name(int k)
{
    return k ? "right" : "left";
}

/* "the left sphere swinging (10 hits in the last ten cycles, 2.5 mm), the
 * right resting (0 hits, 0.0006 mm)" of r into st. */
static void say_swing(pl_dimer_statement *st, const pl_dimer_result *r)
{
    int k = swinging(r);
    say(st, "the %s sphere swinging (%zu hits in the last ten cycles, rising %.3g mm), "
        "the %s resting (%zu hits, %.2g mm)", side_name(k), r->hits[k], r->hmax[k] * 1e3,
        side_name(!k), r->hits[!k], r->hmax[!k] * 1e3);
}

static void say_ball(pl_dimer_statement *st, const pl_dimer_ball *b)
{
    if (isnan(b->t_capture))
        say(st, "keeps bouncing (%zu hits in the last ten cycles)", b->hits);
    else
        say(st, "is captured at %.3f s", b->t_capture);
}

/* Why the other sphere swings: the lone spheres, the coupling, the
 * mirror start. */
static pl_status explain_swing(const pl_dimer_case *c, pl_dimer_statement *st,
                               pl_err *err)
{
    pl_dimer_params p;
    pl_dimer_case_params(c, 100, &p);
    pl_dimer_geometry g;
    if (pl_dimer_geometry_of(&p, &g, err) != PL_OK)
        return err->code;
    /* theta0 > 0: the left sphere lower (section 5: it lands first) */
    int low = p.theta0 > 0 ? 0 : 1;
    double h[2];
    h[low] = p.h0;
    h[!low] = p.h0 + g.l * sin(fabs(p.theta0));
    pl_dimer_ball b[2];
    for (int k = 0; k < 2; k++)
        if (pl_dimer_lone_sphere(&p, h[k], &b[k], err) != PL_OK)
            return err->code;
    say(st, ".  Why: theta0 %+g deg puts the %s sphere lower (%s), %.3g mm over the "
        "plate's mean; a lone sphere released there ", c->theta0_deg, side_name(low),
        low == 0 ? "as section 5's +5 deg, where the left lands first"
                 : "the mirror of section 5's +5 deg", h[low] * 1e3);
    say_ball(st, &b[low]);
    say(st, ", released from the %s one's %.3g mm it ", side_name(!low), h[!low] * 1e3);
    say_ball(st, &b[!low]);
    say(st, "; an impact at one tip changes the other's normal velocity by %+.1f %% of "
        "its own, so each sphere goes almost as a lone one.  From the mirror start "
        "(theta0 %+g deg) prismlab gives ", 100 * pl_dimer_tip_coupling(&g, 0),
        -c->theta0_deg);
    p.theta0 = -p.theta0;
    pl_dimer_result m;
    if (pl_dimer_run(&p, NULL, 0, &m, err) != PL_OK)
        return err->code;
    say(st, "%s mode, ", pl_dimer_mode_name(m.mode));
    say_swing(st, &m);
    say(st, ", drift %+.3g mm/s", m.drift * 1e3);
    return PL_OK;
}

pl_status pl_dimer_case_check(const pl_dimer_case *c, const pl_dimer_result *r,
                              pl_dimer_statement *st, pl_err *err)
{
    memset(st, 0, sizeof *st);
    st->paper = c->statement;
    st->criterion = "the mode of the last ten of 100 cycles; where the paper names the "
                    "swinging sphere, the one that rises higher; where it says the drift "
                    "is zero, |scaled drift| below 0.05";
    st->verdict = pl_dimer_case_holds(c, r) ? PL_DIMER_HOLDS : PL_DIMER_FAILS;
    int drift_like = r->mode == PL_DIMER_DRIFT || r->mode == PL_DIMER_ALTERNATE;
    int names = c->bouncer >= 0 && (c->mode == PL_DIMER_DRIFT || c->mode == PL_DIMER_ALTERNATE);
    say(st, "the paper: %s mode", pl_dimer_mode_name(c->mode));
    if (names)
        say(st, ", the %s sphere swinging", side_name(c->bouncer));
    if (c->zero_drift)
        say(st, ", zero mean drift");
    say(st, "; here: %s mode", pl_dimer_mode_name(r->mode));
    if (drift_like) {
        say(st, ", ");
        say_swing(st, r);
    }
    double sd = pl_dimer_scaled_drift(r->drift, c->f, 9.81);
    say(st, ", drift %+.3g mm/s (scaled %+.2g)", r->drift * 1e3, sd);
    if (r->mode != c->mode) {
        say(st, ": the mode does not hold");
        return PL_OK;
    }
    int other = names && drift_like && swinging(r) != c->bouncer;
    if (!other) {
        say(st, st->verdict == PL_DIMER_HOLDS ? ": holds" : ": the drift is not zero");
        return PL_OK;
    }
    say(st, ": the mode%s hold%s, the swinging sphere is the other one",
        c->zero_drift && fabs(sd) <= 0.05 ? " and the zero drift" : "",
        c->zero_drift && fabs(sd) <= 0.05 ? "" : "s");
    return explain_swing(c, st, err);
}

void pl_dimer_case_basin(const pl_dimer_case *c, size_t n, pl_dimer_basin_spec *s)
{
    memset(s, 0, sizeof *s);
    pl_dimer_case_params(c, 2.0 * c->f, &s->base);
    s->h0_min = fmax(0, c->h0 - 4e-3);
    s->h0_max = s->h0_min + 8e-3;
    double t0 = fmax(0.5, c->theta0_deg - 4), t1 = t0 + 8;
    if (c->Gamma > 1) {
        /* figures 16-18: one map holds their three starts */
        s->h0_min = 0;
        s->h0_max = 8e-3;
        t0 = 1;
        t1 = 13;
    }
    s->th_min = t0 * M_PI / 180;
    s->th_max = t1 * M_PI / 180;
    s->nh = s->nth = n;
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

pl_status pl_dimer_basin_run(const pl_dimer_basin_spec *s, int threads,
                             int *modes, double *drift, double *energy,
                             pl_dimer_progress progress, void *ctx, pl_err *err)
{
    return pl_dimer_basin_run_on(s, NULL, NULL, threads, modes, drift, energy, progress,
                                 ctx, err);
}

pl_status pl_dimer_basin_run_on(const pl_dimer_basin_spec *s, pl_dimer_batch_fn fn,
                                void *runner, int threads, int *modes, double *drift,
                                double *energy, pl_dimer_progress progress, void *ctx,
                                pl_err *err)
{
    size_t n = s->nh * s->nth;
    pl_dimer_params *ps = malloc(n * sizeof *ps);
    pl_dimer_result *res = malloc(n * sizeof *res);
    int *ok = malloc(n * sizeof *ok);
    pl_status st = PL_OK;
    if (!ps || !res || !ok) {
        st = pl_err_set(err, PL_ENOMEM, "basin map: out of memory for %zu starts", n);
    } else {
        for (size_t ih = 0; ih < s->nh; ih++)
            for (size_t it = 0; it < s->nth; it++)
                pl_dimer_basin_params(s, ih, it, &ps[ih * s->nth + it]);
        /* a first check of the parameters, with the reason */
        pl_dimer_geometry g;
        st = n ? pl_dimer_geometry_of(&ps[0], &g, err) : PL_OK;
        if (st == PL_OK && fn)
            st = fn(runner, ps, n, threads, res, ok, progress, ctx, err);
        else if (st == PL_OK)
            st = pl_dimer_batch(ps, n, threads, res, ok, progress, ctx, err);
        for (size_t i = 0; st == PL_OK && i < n; i++) {
            modes[i] = ok[i] ? (int)res[i].mode : -1;
            drift[i] = ok[i] ? pl_dimer_drift_forward(&res[i]) : NAN;
            energy[i] = ok[i] ? res[i].energy : NAN;
        }
    }
    free(ps);
    free(res);
    free(ok);
    return st;
}

int pl_dimer_basin_is_subgrid(const pl_dimer_basin_spec *s, const pl_dimer_basin_spec *s2,
                              size_t *k)
{
    if (memcmp(&s->base, &s2->base, sizeof s->base) != 0 || s->h0_min != s2->h0_min ||
        s->h0_max != s2->h0_max || s->th_min != s2->th_min || s->th_max != s2->th_max ||
        s2->nh < 2 || s2->nth < 2 || s->nh < s2->nh || s->nth < s2->nth)
        return 0;
    size_t kh = (s->nh - 1) / (s2->nh - 1), kt = (s->nth - 1) / (s2->nth - 1);
    if (kh != kt || kh * (s2->nh - 1) != s->nh - 1 || kt * (s2->nth - 1) != s->nth - 1)
        return 0;
    *k = kh;
    return 1;
}

void pl_dimer_basin_key(const pl_dimer_basin_spec *s, const char *name,
                        char *buf, size_t size)
{
    const pl_dimer_params *p = &s->base;
    snprintf(buf, size, "# dimer basin %s: Ar %.17g f %.17g Gamma %.17g es %.17g "
             "mu_s %.17g mu_c %.17g mu_i %.17g dist_exp %.17g v_rest %.17g "
             "duration %.17g dt %.17g tol %.17g rod_d %.17g h0 %.17g..%.17g x %zu "
             "theta0 %.17g..%.17g x %zu", name, p->Ar, p->f, p->Gamma, p->es,
             p->mu_s, p->mu_c, p->mu_i, p->dist_exp, p->v_rest, p->duration, p->dt,
             p->tol, p->rod_d, s->h0_min, s->h0_max, s->nh, s->th_min, s->th_max,
             s->nth);
}

pl_status pl_dimer_basin_save(const char *path, const char *key,
                              const pl_dimer_basin_spec *s, const int *modes,
                              const double *drift, const double *energy,
                              pl_err *err)
{
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    fprintf(f, "%s\nh0_mm,theta0_deg,mode,drift_mm_s,energy\n", key);
    for (size_t ih = 0; ih < s->nh; ih++)
        for (size_t it = 0; it < s->nth; it++) {
            size_t i = ih * s->nth + it;
            pl_dimer_params p;
            pl_dimer_basin_params(s, ih, it, &p);
            fprintf(f, "%.9g,%.9g,%s,%.9g,%.9g\n", p.h0 * 1e3, p.theta0 * 180 / M_PI,
                    modes[i] < 0 ? "failed" : pl_dimer_mode_name((pl_dimer_mode)modes[i]),
                    drift[i] * 1e3, energy[i]);
        }
    return pl_atomicfile_commit(af, err);
}

pl_status pl_dimer_basin_load(const char *path, const char *key,
                              const pl_dimer_basin_spec *s, int *modes,
                              double *drift, double *energy, pl_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return pl_err_set(err, PL_ENOTFOUND, "%s: no stored map", path);
    char line[2048];
    pl_status st = PL_OK;
    if (!fgets(line, sizeof line, f) || strncmp(line, key, strlen(key)) != 0 ||
        (line[strlen(key)] != '\n' && line[strlen(key)] != 0)) {
        fclose(f);
        return pl_err_set(err, PL_ENOTFOUND, "%s: a map of other parameters", path);
    }
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        return pl_err_set(err, PL_EFORMAT, "%s:2: no header", path);
    }
    size_t n = s->nh * s->nth;
    for (size_t i = 0; i < n && st == PL_OK; i++) {
        char name[32];
        double h, t;
        if (!fgets(line, sizeof line, f) ||
            sscanf(line, "%lf,%lf,%31[a-z],%lf,%lf", &h, &t, name, &drift[i],
                   &energy[i]) != 5) {
            st = pl_err_set(err, PL_EFORMAT, "%s:%zu: expected h0,theta0,mode,drift,"
                            "energy", path, i + 3);
            break;
        }
        drift[i] *= 1e-3;
        modes[i] = -1;
        for (int m = 0; m < PL_DIMER_NMODES; m++)
            if (strcmp(name, pl_dimer_mode_name((pl_dimer_mode)m)) == 0)
                modes[i] = m;
        if (modes[i] < 0 && strcmp(name, "failed") != 0)
            st = pl_err_set(err, PL_EFORMAT, "%s:%zu: unknown mode '%s'", path, i + 3, name);
    }
    fclose(f);
    return st;
}
