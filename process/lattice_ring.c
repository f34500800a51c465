/* process/lattice_ring.c - the impacts' ringing: whether they ring, the
 * frequency and decay, each impact's onset and size (lattice_ring.h). */
#include "process/lattice_ring.h"

#include <fftw3.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* buf[j] = amp x the shape rg at sample k0 + j of a ringing placed at t
 * (samples), j < n: one exponential and one sine a call, the rest by
 * rotation, since these loops run over every impact several times. */
void pl_lat_ring_fill(const ringing *rg, double amp, double t, size_t k0, size_t n,
                      double *buf)
{
    double on = t + rg->onset;
    size_t j = 0;
    for (; j < n && (double)(k0 + j) < on; j++)
        buf[j] = 0;
    if (j == n || rg->w <= 0 || amp == 0) {
        for (; j < n; j++)
            buf[j] = 0;
        return;
    }
    double s0 = (double)(k0 + j) - on, e = exp(-s0 / rg->tau);
    double re = e * cos(rg->w * s0), im = e * sin(rg->w * s0);
    double q = exp(-1.0 / rg->tau), cr = q * cos(rg->w), ci = q * sin(rg->w);
    for (; j < n; j++) {
        buf[j] = amp * (rg->a * im + rg->b * re);
        double nr = re * cr - im * ci;
        im = re * ci + im * cr;
        re = nr;
    }
}

/* Adds sign x the ringing recorded in each slot to the signal. */
void pl_lat_ring_apply(walk *wk, const slot *v, size_t m, double sign)
{
    enum { CHUNK = 256 };
    double buf[CHUNK];
    for (size_t i = 0; i < m; i++) {
        if (v[i].ring_amp == 0)
            continue;
        double t0 = v[i].ring_t + wk->ring.onset;
        size_t k0 = t0 > 0 ? (size_t)ceil(t0) : 0, k1 = k0 + (size_t)(8 * wk->ring.tau) + 1;
        if (k1 > wk->end)
            k1 = wk->end;
        for (size_t a = k0; a < k1; a += CHUNK) {
            size_t n = k1 - a < CHUNK ? k1 - a : CHUNK;
            pl_lat_ring_fill(&wk->ring, v[i].ring_amp, v[i].ring_t, a, n, buf);
            for (size_t j = 0; j < n; j++)
                wk->om[a + j] += sign * buf[j];
        }
    }
}

/* The ringing slot s had taken out (shape old), at samples k0 .. k0+n-1. */
static void ring_taken_fill(const ringing *old, const slot *s, size_t k0, size_t n,
                            double *buf)
{
    pl_lat_ring_fill(old, s->ring_amp, s->ring_t, k0, n, buf);
}

/* The arcs of windows L about the sample c nearest instant tc; -1 when
 * they do not fit in the run or cannot be fitted. */
static int joint_at(const walk *wk, double tc, size_t L, arcs *J, size_t *c)
{
    *c = (size_t)llround(tc);
    if (*c < wk->release + wk->G + L + 1 || *c + wk->G + L + 2 > wk->end)
        return -1;
    return pl_lat_fit_joint(wk, *c, L, J);
}

/* One stacked slot: its arcs, where the instant lies in its centre
 * sample, and its step; -1 when it cannot be used. */
int pl_lat_stack_slot(const walk *wk, const slot *s, size_t L, arcs *J, size_t *c,
                      double *frac, double *d)
{
    if (!s->measured || joint_at(wk, s->tc, L, J, c) != 0)
        return -1;
    *frac = s->tc - (double)*c;
    *d = arc_val(J, 0, *frac) - arc_val(J, 1, *frac);
    return *d > 0 ? 0 : -1;
}

/* Where slot i's ringing is fitted: from the end of its gap to the
 * next slot's gap (at most the arcs' longest window).  -1 when that
 * leaves too little to fit. */
static int ring_window(const walk *wk, const slot *v, size_t m, size_t i, size_t *k0,
                       size_t *n)
{
    double start = ceil(v[i].tc) + (double)wk->G + 1;
    double stop = fmin(start + (double)wk->W, (double)wk->end);
    if (i + 1 < m)
        stop = fmin(stop, floor(v[i + 1].tc) - (double)wk->G);
    if (!(start > (double)wk->release) || stop - start < 12)
        return -1;
    *k0 = (size_t)start;
    *n = (size_t)(stop - start);
    return 0;
}

/* The right arc and the ringing fitted together on samples k0 .. k0+n-1
 * of the signal with the ringing taken out so far (old, slot s) put
 * back: a cubic in time plus a decaying sine and cosine (w rad/sample,
 * tau samples) from k0.  Fitting the arc alone first and the ringing to
 * what it leaves lets the arc soak up part of the ringing, which bent the
 * frequency by up to 1 % and the onsets by tens of microseconds.  ab[]
 * receives the sine's and cosine's coefficients, *se_amp (when not NULL)
 * the standard error of their amplitude.  Returns the residual sum of
 * squares, INFINITY when the fit fails.  The cubic's own block of the
 * normal equations depends on n alone (wk->powsum): it runs on every
 * impact, up to a tenth of a long run's time, and summing only the
 * columns that involve the data and the sinusoid halves it. */
enum { RJ = 6 };

double pl_lat_ring_joint(const walk *wk, const ringing *old, const slot *s, double w,
                         double tau, size_t k0, size_t n, double ab[2], double *se_amp)
{
    double *taken = wk->scratch;
    double A[RJ * RJ], r[RJ] = {0}, yy = 0;
    double ps[4] = {0}, pc[4] = {0}, ss = 0, sc = 0, cc = 0;
    ring_taken_fill(old, s, k0, n, taken);
    /* the decaying sine and cosine from k0, by rotation as in pl_lat_ring_fill() */
    double im = 0, re = 1, q = exp(-1.0 / tau), cr = q * cos(w), ci = q * sin(w);
    double inv_n = 1.0 / (double)n;
    for (size_t j = 0; j < n; j++) {
        double x = (double)j * inv_n, x2 = x * x, x3 = x2 * x;
        double y = wk->om[k0 + j] + taken[j], bs = im, bc = re;
        r[0] += y;
        r[1] += x * y;
        r[2] += x2 * y;
        r[3] += x3 * y;
        r[4] += bs * y;
        r[5] += bc * y;
        ps[0] += bs;
        ps[1] += x * bs;
        ps[2] += x2 * bs;
        ps[3] += x3 * bs;
        pc[0] += bc;
        pc[1] += x * bc;
        pc[2] += x2 * bc;
        pc[3] += x3 * bc;
        ss += bs * bs;
        sc += bs * bc;
        cc += bc * bc;
        yy += y * y;
        double nr = re * cr - im * ci;
        im = re * ci + im * cr;
        re = nr;
    }
    const double *P = wk->powsum + n * RJ_POW;
    for (int p = 0; p < 4; p++) {
        for (int k = 0; k < 4; k++)
            A[p * RJ + k] = P[p + k];
        A[p * RJ + 4] = A[4 * RJ + p] = ps[p];
        A[p * RJ + 5] = A[5 * RJ + p] = pc[p];
    }
    A[4 * RJ + 4] = ss;
    A[4 * RJ + 5] = A[5 * RJ + 4] = sc;
    A[5 * RJ + 5] = cc;
    double c[RJ];
    if (chol_factor(A, RJ) != 0)
        return INFINITY;
    chol_solve_n(A, RJ, r, c);
    double bxy = 0;
    for (int p = 0; p < RJ; p++)
        bxy += c[p] * r[p];
    double rss = fmax(0, yy - bxy);
    ab[0] = c[4];
    ab[1] = c[5];
    if (se_amp) {
        /* the amplitude's variance from the two coefficients' (their
         * covariance neglected: the sine and cosine are nearly orthogonal
         * over several cycles) */
        double s2 = rss / (double)(n > RJ ? n - RJ : 1), amp = hypot(c[4], c[5]);
        /* the last two diagonal elements of A^-1 = L^-T L^-1 from the
         * factor's corner: L^-1's last two rows are short */
        double l44 = A[4 * RJ + 4], l54 = A[5 * RJ + 4], l55 = A[5 * RJ + 5];
        double u = l54 / (l44 * l55);
        double var[2] = {s2 * (1 / (l44 * l44) + u * u), s2 / (l55 * l55)};
        *se_amp = amp > 0 ? sqrt((c[4] * c[4] * var[0] + c[5] * c[5] * var[1])) / amp
                          : sqrt(0.5 * (var[0] + var[1]));
    }
    return rss;
}

/* The ringing's frequency and decay refined from the slots themselves:
 * the sum over up to RING_REFINE_SLOTS slots (evenly spread) of
 * pl_lat_ring_joint()'s residuals, minimised over (f, log tau) by GSL's simplex
 * from the stack's estimate - each slot keeping its own arc, amplitude
 * and phase (variable projection).  The stack divides by each step and
 * fits the ringing to what the arcs leave, and its frequency came out
 * 8-33 Hz off on the foreign runs, enough to move an onset read from the
 * phase 10 ms later by 0.01-0.02 ms. */
enum { RING_REFINE_SLOTS = 100 };
#define RING_TAU_MIN_S 0.2e-3
#define RING_TAU_MAX_S 10e-3

typedef struct {
    const walk *wk;
    const ringing *old;
    const slot *v;
    size_t m, stride;
    double w0, tau0, tau_lo, tau_hi;
} refine_ctx;

static double refine_cost(const gsl_vector *x, void *p)
{
    const refine_ctx *c = p;
    double w = c->w0 * (1 + 1e-3 * gsl_vector_get(x, 0)), tau = c->tau0 * exp(0.1 * gsl_vector_get(x, 1));
    double sum = 0, ab[2];
    if (!(w > 0.9 * c->w0 && w < 1.1 * c->w0 && w < M_PI) || !(tau > c->tau_lo && tau < c->tau_hi))
        return DBL_MAX;   /* outside: the simplex needs a finite value */
    for (size_t i = 0; i < c->m; i += c->stride) {
        size_t k0, n;
        if (!c->v[i].measured || ring_window(c->wk, c->v, c->m, i, &k0, &n) != 0)
            continue;
        double r = pl_lat_ring_joint(c->wk, c->old, &c->v[i], w, tau, k0, n, ab, NULL);
        if (isfinite(r))
            sum += r;
    }
    return sum;
}

static void ring_refine(const walk *wk, const ringing *old, const slot *v, size_t m,
                        ringing *rg)
{
    refine_ctx c = {wk, old, v, m, m > RING_REFINE_SLOTS ? m / RING_REFINE_SLOTS : 1,
                    rg->w, rg->tau, RING_TAU_MIN_S * wk->rate, RING_TAU_MAX_S * wk->rate};
    c.tau0 = fmin(fmax(c.tau0, 1.05 * c.tau_lo), 0.95 * c.tau_hi);
    gsl_multimin_function fn = {refine_cost, 2, &c};
    gsl_multimin_fminimizer *s = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
    gsl_vector *x = gsl_vector_calloc(2), *step = gsl_vector_alloc(2);
    if (!s || !x || !step)
        goto out;
    /* units: a thousandth of the frequency, a tenth of e in the decay */
    gsl_vector_set(step, 0, 3.0);
    gsl_vector_set(step, 1, 1.0);
    if (gsl_multimin_fminimizer_set(s, &fn, x, step) != GSL_SUCCESS)
        goto out;
    for (int it = 0; it < 200; it++) {
        if (gsl_multimin_fminimizer_iterate(s) != GSL_SUCCESS)
            break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 0.01) == GSL_SUCCESS)
            break;
    }
    if (isfinite(s->fval)) {
        double w = c.w0 * (1 + 1e-3 * gsl_vector_get(s->x, 0)), tau = c.tau0 * exp(0.1 * gsl_vector_get(s->x, 1));
        if (w > 0 && w < M_PI && tau > 1) {
            rg->w = w;
            rg->tau = tau;
        }
    }
out:
    gsl_multimin_fminimizer_free(s);
    gsl_vector_free(x);
    gsl_vector_free(step);
}

/* The residual of a cubic in time fitted to y[0..n-1], into r; -1 when
 * it cannot be fitted. */
static int cubic_residual(const double *y, size_t n, double *r)
{
    double A[16] = {0}, b[4] = {0}, c[4];
    for (size_t j = 0; j < n; j++) {
        double x = (double)j / (double)n, bs[4] = {1, x, x * x, x * x * x};
        for (int p = 0; p < 4; p++) {
            b[p] += bs[p] * y[j];
            for (int q = 0; q < 4; q++)
                A[p * 4 + q] += bs[p] * bs[q];
        }
    }
    if (chol_factor(A, 4) != 0)
        return -1;
    chol_solve_n(A, 4, b, c);
    for (size_t j = 0; j < n; j++) {
        double x = (double)j / (double)n;
        r[j] = y[j] - (c[0] + x * (c[1] + x * (c[2] + x * c[3])));
    }
    return 0;
}

/* Decay times tried, 0.2 to 10 ms in steps of 1.55. */
enum { RING_TAUS = 10, RING_DETECT_SLOTS = 200 };

typedef struct {
    size_t nfft, nb;
    double *in, *acc;        /* acc: [2][RING_TAUS][nb], after then before */
    fftw_complex *out;
    fftw_plan plan;
} matched;

/* Adds the decaying matched filter's power of r[0..n-1] for every decay
 * time and frequency bin, per unit energy of the template, to acc. */
static void matched_add(matched *mf, const double *r, size_t n, double rate, double *acc)
{
    for (int t = 0; t < RING_TAUS; t++) {
        double tau = RING_TAU_MIN_S * pow(RING_TAU_MAX_S / RING_TAU_MIN_S, t / (RING_TAUS - 1.0)) * rate;
        double q = exp(-1.0 / tau), e = 1, norm = 0;
        for (size_t j = 0; j < n; j++) {
            mf->in[j] = r[j] * e;
            norm += e * e;
            e *= q;
        }
        memset(mf->in + n, 0, (mf->nfft - n) * sizeof *mf->in);
        fftw_execute(mf->plan);
        for (size_t b = 0; b < mf->nb; b++)
            acc[(size_t)t * mf->nb + b] +=
                (mf->out[b][0] * mf->out[b][0] + mf->out[b][1] * mf->out[b][1]) / norm;
    }
}

/* Whether the impacts ring, and how: frequency and decay into rg (rg->w = 0
 * when they do not).  Each impact may ring with its own size and phase, so
 * no alignment of the impacts is needed (an earlier version stacked them at
 * their instants and missed half the rig simulator's ringing chains, whose
 * instants the unmodelled ringing itself had scattered): the power of a
 * decaying matched filter (a zero-padded FFT of the residual times
 * e^(-t/tau)) is summed over up to 200 impacts, after each impact (the
 * residual of a cubic fitted on the arc's window) and, as the reference
 * that the same noise, hum and drift fill, before it (the same length
 * backwards from the gap).  The ringing is the frequency and decay where
 * the power after the impacts stands highest above the power before, when
 * it is more than RING_DETECT_RATIO times it: for pure noise the ratio of
 * two sums of 2 x 100 squares is 1 +- 0.14.  The frequency lies between
 * 300 Hz (and two cycles of the window) and the lower of 20 kHz and 0.45
 * rate.  ring_refine() then polishes frequency and decay on the slots, and
 * the phases of the slots' own fits give the mean onset from the instants
 * (their amplitude-weighted circular mean, within half a period). */
#define RING_DETECT_RATIO 3.0

void pl_lat_ring_estimate(const walk *wk, const slot *v, size_t m, ringing *rg)
{
    size_t stride = m > RING_DETECT_SLOTS ? m / RING_DETECT_SLOTS : 1, nmax = wk->W;
    size_t used = 0, nsum = 0, G = wk->G;
    *rg = (ringing){0};
    matched mf = {64, 0, NULL, NULL, NULL, NULL};
    while (mf.nfft < 2 * nmax || (double)mf.nfft < wk->rate / 20)
        mf.nfft *= 2;
    mf.nb = mf.nfft / 2 + 1;
    mf.in = fftw_alloc_real(mf.nfft);
    mf.out = fftw_alloc_complex(mf.nb);
    mf.acc = calloc(2 * RING_TAUS * mf.nb, sizeof *mf.acc);
    double *y = malloc(2 * nmax * sizeof *y), *r = y ? y + nmax : NULL;
    if (mf.in && mf.out)
        mf.plan = fftw_plan_dft_r2c_1d((int)mf.nfft, mf.in, mf.out, FFTW_ESTIMATE);
    if (!mf.plan || !mf.acc || !y)
        goto out;
    for (size_t i = 0; i < m; i += stride) {
        size_t k0, n;
        if (!v[i].measured || ring_window(wk, v, m, i, &k0, &n) != 0)
            continue;
        double near = floor(v[i].tc) - (double)G - 1;
        double far = i > 0 ? ceil(v[i - 1].tc) + (double)G : (double)wk->release;
        if (near - far < (double)n)
            continue;
        for (int side = 0; side < 2; side++) {
            for (size_t j = 0; j < n; j++)
                y[j] = side ? wk->om[(size_t)near - j] : wk->om[k0 + j];
            if (cubic_residual(y, n, r) != 0)
                break;
            matched_add(&mf, r, n, wk->rate, mf.acc + (size_t)side * RING_TAUS * mf.nb);
        }
        used++;
        nsum += n;
    }
    if (used < 8)
        goto out;
    double lo = fmax(300, 2 * wk->rate * (double)used / (double)nsum),
           hi = fmin(20000, 0.45 * wk->rate), best = 0, bf = 0, btau = 0;
    for (int t = 0; t < RING_TAUS; t++)
        for (size_t b = 0; b < mf.nb; b++) {
            double f = (double)b * wk->rate / (double)mf.nfft;
            double after = mf.acc[(size_t)t * mf.nb + b],
                   before = mf.acc[(size_t)(RING_TAUS + t) * mf.nb + b];
            if (f < lo || f > hi || !(after > RING_DETECT_RATIO * before) || after - before <= best)
                continue;
            best = after - before;
            bf = f;
            btau = RING_TAU_MIN_S * pow(RING_TAU_MAX_S / RING_TAU_MIN_S, t / (RING_TAUS - 1.0));
        }
    if (!(best > 0))
        goto out;
    rg->w = 2 * M_PI * bf / wk->rate;
    rg->tau = btau * wk->rate;
    ring_refine(wk, &wk->ring, v, m, rg);
    /* the mean onset from the instants: a sine from rest at k0 - phi / w */
    double sx = 0, sy = 0;
    for (size_t i = 0; i < m; i += stride) {
        size_t k0, n;
        double ab[2];
        if (!v[i].measured || ring_window(wk, v, m, i, &k0, &n) != 0 ||
            !isfinite(pl_lat_ring_joint(wk, &wk->ring, &v[i], rg->w, rg->tau, k0, n, ab, NULL)))
            continue;
        double A = hypot(ab[0], ab[1]), ang = rg->w * ((double)k0 - v[i].tc) - atan2(ab[1], ab[0]);
        sx += A * cos(ang);
        sy += A * sin(ang);
    }
    rg->onset = atan2(sy, sx) / rg->w;
    rg->a = 1;
    rg->b = 0;
out:
    if (mf.plan)
        fftw_destroy_plan(mf.plan);
    fftw_free(mf.in);
    fftw_free(mf.out);
    free(mf.acc);
    free(y);
}

/* Which cycle the ringing starts on: the phase fixes the onset only to
 * a period.  Two periods either side are tried: the step and the ringing
 * from each candidate onset (the ringing the same in the tail) against
 * the samples around them, the best fit wins.  amp is the sine's size
 * at the candidate onset. */
static double ring_cycle(const walk *wk, const arcs *J, const slot *s, const ringing *old,
                         double onset, double amp, double w, double tau)
{
    double T = 2 * M_PI / w, best = onset, best_rss = INFINITY;
    double lo = onset - 2.5 * T, hi = onset + 2.5 * T;
    if (lo < (double)wk->release + 1 || hi + 1 >= (double)wk->end)
        return onset;
    size_t k0 = (size_t)ceil(lo), n = (size_t)floor(hi) - k0 + 1;
    if (n > wk->W)
        return onset;
    double *taken = wk->scratch, *left = taken + n, *right = left + n, *ring = right + n;
    ring_taken_fill(old, s, k0, n, taken);
    for (size_t j = 0; j < n; j++) {
        double u = (double)(k0 + j) - (double)J->c;
        left[j] = arc_val(J, 0, u);
        right[j] = arc_val(J, 1, u);
    }
    ringing sine = {w, tau, 1, 0, 0};
    for (int c = -2; c <= 2; c++) {
        double t0 = onset + c * T, A = amp * exp(-(t0 - onset) / tau), rss = 0;
        pl_lat_ring_fill(&sine, A, t0, k0, n, ring);
        for (size_t j = 0; j < n; j++) {
            double model = (double)(k0 + j) < t0 ? left[j] : right[j] + ring[j];
            double r = wk->om[k0 + j] + taken[j] - model;
            rss += r * r;
        }
        if (rss < best_rss) {
            best_rss = rss;
            best = t0;
        }
    }
    return best;
}

/* Each slot's own ringing, and its instant from it.  The residual after
 * the right arc (with what was taken out before put back) is fitted by
 * the run's decaying sinusoid with its own amplitude and phase; the phase,
 * read as a sine from rest, puts the slot's onset within half a period of
 * the run's mean onset (rg->onset from the instant so far): the run's
 * stack settles which cycle, the slot's own many cycles settle where in
 * it.  Where the ringing stands five standard errors clear of the noise
 * the onset becomes the slot's instant - the gap's equal areas cannot see
 * an impact whose ringing hides its step.  The template is kept as a sine
 * from the onset (rg->onset 0, a 1, b 0). */
typedef struct {
    const ringing *old, *rg;
    slot *v;
    size_t m;
} onsets_ctx;

static void onsets_range(walk *wk, size_t a, size_t b, void *p)
{
    const onsets_ctx *x = p;
    const ringing *old = x->old, *rg = x->rg;
    slot *v = x->v;
    size_t m = x->m;
    double w = rg->w, tau = rg->tau, T = 2 * M_PI / w;
    for (size_t i = a; i < b; i++) {
        size_t c, k0, n;
        arcs J;
        double ab[2], se_a;
        v[i].next_amp = 0;
        v[i].next_t = v[i].tc;
        if (joint_at(wk, v[i].tc, wk->W, &J, &c) != 0 || ring_window(wk, v, m, i, &k0, &n) != 0 ||
            !isfinite(pl_lat_ring_joint(wk, old, &v[i], w, tau, k0, n, ab, &se_a)))
            continue;
        /* A e^(-(t-k0)/tau) sin(w (t - k0) + phi): a sine from rest at
         * k0 - phi / w, to a period; the one nearest the run's mean onset */
        double A = hypot(ab[0], ab[1]), phi = atan2(ab[1], ab[0]);
        double u0 = v[i].tc - (double)c;
        v[i].step = arc_val(&J, 0, u0) - arc_val(&J, 1, u0);
        double tref = v[i].tc + rg->onset, onset = (double)k0 - phi / w;
        onset += T * round((tref - onset) / T);
        onset = ring_cycle(wk, &J, &v[i], old, onset, A * exp(((double)k0 - onset) / tau), w, tau);
        double amp = A * exp(((double)k0 - onset) / tau);
        v[i].next_t = onset;
        v[i].next_amp = amp;
        if (A > 5 * se_a) {
            double dt = se_a / (A * w);                /* onset's, samples */
            double om = J.level;
            v[i].tc = onset;
            v[i].theta = theta_at(wk, onset);
            v[i].var_theta = dt * dt * om * om / (wk->rate * wk->rate);
            v[i].measured = 1;
        }
    }
}

void pl_lat_ring_onsets(const walk *wk, const ringing *old, slot *v, size_t m,
                        ringing *rg)
{
    onsets_ctx x = {old, rg, v, m};
    pl_lat_for_slots(wk, m, onsets_range, &x);
    rg->onset = 0;
    rg->a = 1;
    rg->b = 0;
}

double *pl_lat_ring_table(size_t W)
{
    double *powsum = malloc((W + 1) * RJ_POW * sizeof *powsum);
    if (!powsum)
        return NULL;
    for (size_t len = 0; len <= W; len++) {
        double *P = powsum + len * RJ_POW;
        for (int p = 0; p < RJ_POW; p++)
            P[p] = 0;
        for (size_t j = 0; j < len; j++) {
            double x = (double)j / (double)len, xp = 1;
            for (int p = 0; p < RJ_POW; p++, xp *= x)
                P[p] += xp;
        }
    }
    return powsum;
}
