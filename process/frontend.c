/* process/frontend.c - offsets, hum, drop-outs and the combined omega.
 * See frontend.h and docs/process.md section 1. */
#include "process/frontend.h"

#include "process/robust.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { HARMONICS = 7 };

/* Residual sum of squares of a constant plus one sinusoid at f over the
 * lead-in: the frequency search's score. */
static double rss_at(const double *v, const unsigned char *use, size_t L, double rate,
                     double f)
{
    double sc = 0, ss = 0, scc = 0, sss = 0, scs = 0, s1 = 0, sy = 0, yc = 0, ys = 0;
    double w = 2 * M_PI * f / rate, cr = cos(w), sr = sin(w), c = 1, s = 0;
    for (size_t i = 0; i < L; i++) {
        if ((i & 1023) == 0) {   /* exact every 1024 samples: no drift */
            c = cos(w * (double)i);
            s = sin(w * (double)i);
        }
        double u = use[i] ? 1 : 0, y = use[i] ? v[i] : 0;
        s1 += u;
        sc += u * c;
        ss += u * s;
        scc += u * c * c;
        sss += u * s * s;
        scs += u * c * s;
        sy += y;
        yc += y * c;
        ys += y * s;
        double nc = c * cr - s * sr;
        s = s * cr + c * sr;
        c = nc;
    }
    /* project out the mean, then solve the 2 x 2 system for cos and sin */
    double mc = sc / s1, ms = ss / s1, my = sy / s1;
    double a11 = scc - s1 * mc * mc, a22 = sss - s1 * ms * ms, a12 = scs - s1 * mc * ms;
    double b1 = yc - s1 * mc * my, b2 = ys - s1 * ms * my, det = a11 * a22 - a12 * a12;
    if (!(det > 0))
        return INFINITY;
    double x1 = (a22 * b1 - a12 * b2) / det, x2 = (a11 * b2 - a12 * b1) / det;
    return -(x1 * b1 + x2 * b2);   /* RSS less its frequency-free part */
}

/* The mains frequency that explains most of the lead-in of either
 * channel: 50 and 60 Hz, then refined within +-0.5 Hz (the grid), so
 * that a mains a little off nominal is not subtracted with a phase that
 * walks away over the run. */
static double mains_frequency(double *v[2], unsigned char *use[2], size_t L, double rate)
{
    double best = INFINITY, f_best = 0;
    for (double f0 = 50; f0 <= 60; f0 += 10)
        for (int k = -10; k <= 10; k++) {
            double f = f0 + 0.05 * k,
                   r = rss_at(v[0], use[0], L, rate, f) + rss_at(v[1], use[1], L, rate, f);
            if (r < best) {
                best = r;
                f_best = f;
            }
        }
    return f_best;
}

/* The mains frequency refined from the beams' difference over the first
 * MAINS_SPAN_S of the recording.  The lead-in alone fixes it only to a
 * few hundredths of a hertz under 1/f noise (0.03-0.04 Hz on 0.6 s with
 * 560 um/s of it, whichever way it was fitted), and the hum's phase,
 * extrapolated from the lead-in, then walks off by a radian over 5 s:
 * its removal adds as much hum as it takes away, late in the run.  In
 * pure rotation v1/h1 - v2/h2 holds no motion, but it does hold the hum
 * (the channels' hum in volts does not scale with the heights), so the
 * hum's phase can be followed over the motion too: a constant, a slope
 * and the fundamental at f are fitted to each block of whole periods
 * (about 0.2 s), and the phases of the blocks whose fundamental stands
 * 5 standard errors out fall on a line whose slope is 2 pi times the
 * frequency's error.  The samples where the beams disagree by more than
 * 8 robust standard deviations (drop-outs, spikes) are left out.  Returns
 * f refined, or f when fewer than 4 blocks or than half of them show the
 * hum, or the line says more than MAINS_REFINE_HZ off (not the same
 * mains). */
#define MAINS_SPAN_S 20.0
#define MAINS_BLOCK_S 0.2
#define MAINS_REFINE_HZ 0.1

static double mains_refine(double *v[2], const double h[2], size_t n, double rate, double f)
{
    size_t S = (size_t)fmin((double)n, MAINS_SPAN_S * rate);
    double periods = fmax(1, round(MAINS_BLOCK_S * f)), Bd = periods * rate / f;
    size_t B = (size_t)llround(Bd), nb = B > 8 ? S / B : 0;
    if (nb < 4)
        return f;
    double *e = malloc(S * sizeof *e), *t = malloc(S * sizeof *t);
    double *ph = malloc(3 * nb * sizeof *ph), *tb = ph ? ph + nb : NULL, *wb = ph ? ph + 2 * nb : NULL;
    if (!e || !t || !ph) {
        free(e);
        free(t);
        free(ph);
        return f;
    }
    for (size_t i = 0; i < S; i++)
        e[i] = v[0][i] / h[0] - v[1][i] / h[1];
    /* the level and spread from every k-th sample (k odd), at most about
     * 20 000 of them: a robust statistic needs no more, and selection over
     * 20 s of a fast card would cost more than the fit */
    size_t step = S > 20000 ? S / 20000 : 1, ns = 0;
    if (step > 1 && step % 2 == 0)
        step++;
    for (size_t i = 0; i < S; i += step)
        t[ns++] = e[i];
    /* (pl_median() only reorders t: the spread needs no fresh copy) */
    double med = pl_median(t, ns), sd = pl_robust_sd(t, ns), w = 2 * M_PI * f / rate;
    free(t);
    size_t kept = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t a = b * B;
        double A[16] = {0}, y[4] = {0}, yy = 0, x[4], mid = (double)a + 0.5 * (double)(B - 1);
        size_t m = 0;
        /* the fundamental by rotation, exact at each block's start */
        double co = cos(w * (double)a), si = sin(w * (double)a), cr = cos(w), sr = sin(w);
        for (size_t i = a; i < a + B; i++) {
            x[2] = co;
            x[3] = si;
            double nc = co * cr - si * sr;
            si = si * cr + co * sr;
            co = nc;
            if (sd > 0 && fabs(e[i] - med) > 8 * sd)
                continue;
            x[0] = 1;
            x[1] = ((double)i - mid) / (double)B;
            for (int r = 0; r < 4; r++) {
                y[r] += x[r] * e[i];
                for (int q = 0; q < 4; q++)
                    A[4 * r + q] += x[r] * x[q];
            }
            yy += e[i] * e[i];
            m++;
        }
        if (m < (size_t)(0.8 * (double)B))
            continue;
        gsl_matrix_view Av = gsl_matrix_view_array(A, 4, 4);
        gsl_vector_view yv = gsl_vector_view_array(y, 4);
        double c[4];
        gsl_vector_view cv = gsl_vector_view_array(c, 4);
        if (gsl_linalg_cholesky_decomp1(&Av.matrix) != GSL_SUCCESS ||
            gsl_linalg_cholesky_solve(&Av.matrix, &yv.vector, &cv.vector) != GSL_SUCCESS)
            continue;
        double fit = 0;
        for (int r = 0; r < 4; r++)
            fit += c[r] * y[r];
        double s2 = fmax(0, yy - fit) / (double)(m - 4), var = 2 * s2 / (double)m;
        double amp2 = c[2] * c[2] + c[3] * c[3];
        if (!(amp2 > 25 * 2 * var))
            continue;
        ph[kept] = atan2(-c[3], c[2]);   /* cos(w i + phase) */
        tb[kept] = mid / rate;
        wb[kept] = amp2 / var;           /* the phase's inverse variance, to a factor */
        if (kept > 0)   /* unwrap: the hum moves well under half a turn a block */
            ph[kept] -= 2 * M_PI * round((ph[kept] - ph[kept - 1]) / (2 * M_PI));
        kept++;
    }
    free(e);
    double refined = f;
    /* (a hum that only some blocks show is noise that happened to look
     * like one: on a chain with 0.2 mV of hum under 556 um/s of 1/f
     * noise a few blocks passed and the line said 49.87 Hz) */
    if (kept >= 4 && 2 * kept >= nb) {
        double sw = 0, st = 0, sp = 0;
        for (size_t k = 0; k < kept; k++) {
            sw += wb[k];
            st += wb[k] * tb[k];
            sp += wb[k] * ph[k];
        }
        double tm = st / sw, pm = sp / sw, stt = 0, stp = 0;
        for (size_t k = 0; k < kept; k++) {
            stt += wb[k] * (tb[k] - tm) * (tb[k] - tm);
            stp += wb[k] * (tb[k] - tm) * (ph[k] - pm);
        }
        double df = stt > 0 ? stp / stt / (2 * M_PI) : 0;
        if (fabs(df) <= MAINS_REFINE_HZ)
            refined = f + df;
    }
    free(ph);
    return refined;
}

/* Fits a constant and the harmonics of f to the lead-in of v and removes
 * the constant and every harmonic whose amplitude stands 5 standard
 * errors above zero from the whole channel.  *amp1 receives the
 * fundamental's amplitude when removed (else 0). */
static int remove_hum(double *v, const unsigned char *use, size_t n, size_t L, double rate,
                      double f, double *offset, double *amp1)
{
    int K = HARMONICS;
    while (K > 0 && K * f >= 0.45 * rate)
        K--;
    size_t P = 1 + 2 * (size_t)K;
    /* Normal equations (P <= 15 columns, sinusoids over whole periods:
     * well conditioned), solved by GSL's Cholesky: an SVD of the L x P
     * design would cost a hundred times more for the same answer. */
    gsl_matrix *A = gsl_matrix_calloc(P, P);
    double xty[2 * HARMONICS + 1] = {0}, yy = 0, x[2 * HARMONICS + 1];
    int ok = A != NULL;
    size_t used = 0;
    for (size_t i = 0; ok && i < L; i++) {
        if (!use[i])
            continue;
        used++;
        /* the harmonics from the fundamental by the angle-sum rule */
        double ph = 2 * M_PI * f * (double)i / rate, c1 = cos(ph), s1 = sin(ph);
        double ck = c1, sk = s1;
        x[0] = 1.0;
        for (int k = 1; k <= K; k++) {
            x[2 * k - 1] = ck;
            x[2 * k] = sk;
            double nc = ck * c1 - sk * s1;
            sk = sk * c1 + ck * s1;
            ck = nc;
        }
        for (size_t r = 0; r < P; r++) {
            xty[r] += x[r] * v[i];
            for (size_t q = r; q < P; q++)
                A->data[r * A->tda + q] += x[r] * x[q];
        }
        yy += v[i] * v[i];
    }
    for (size_t r = 0; ok && r < P; r++)
        for (size_t q = 0; q < r; q++)
            A->data[r * A->tda + q] = A->data[q * A->tda + r];
    ok = ok && gsl_linalg_cholesky_decomp1(A) == GSL_SUCCESS &&
         gsl_linalg_cholesky_invert(A) == GSL_SUCCESS;
    double a[2 * HARMONICS + 1] = {0}, c[2 * HARMONICS + 1] = {0}, bxy = 0;
    for (size_t r = 0; ok && r < P; r++) {
        for (size_t q = 0; q < P; q++)
            c[r] += gsl_matrix_get(A, r, q) * xty[q];
        bxy += c[r] * xty[r];
    }
    if (ok) {
        double s2 = fmax(0, yy - bxy) / (double)(used > P ? used - P : 1);   /* residual variance */
        a[0] = c[0];
        for (int k = 1; k <= K; k++) {
            double var = s2 * 0.5 * (gsl_matrix_get(A, 2 * k - 1, 2 * k - 1) +
                                     gsl_matrix_get(A, 2 * k, 2 * k));
            if (c[2 * k - 1] * c[2 * k - 1] + c[2 * k] * c[2 * k] > 25.0 * 2.0 * var) {
                a[2 * k - 1] = c[2 * k - 1];
                a[2 * k] = c[2 * k];
            }
        }
    }
    gsl_matrix_free(A);
    if (!ok)
        return -1;
    *offset = a[0];
    *amp1 = hypot(a[1], a[2]);
    /* The fundamental by rotation, its harmonics from it by the angle-sum
     * rule (as in the fit), recomputed exactly every 1024 samples so that
     * rounding cannot build up over a long run.  Four rotations, each
     * over every fourth sample, run side by side: one rotation over all
     * samples made each wait on the one before (a pass per harmonic
     * through a ten-minute run was a twentieth of its processing). */
    enum { LANES = 4, BLOCK = 1024 };
    while (K > 0 && a[2 * K - 1] == 0 && a[2 * K] == 0)
        K--;   /* up to the highest harmonic that stood out */
    if (K == 0) {
        for (size_t i = 0; i < n; i++)
            v[i] -= a[0];
        return 0;
    }
    double w = 2 * M_PI * f / rate, c4 = cos(LANES * w), s4 = sin(LANES * w);
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
        double co[LANES], si[LANES];
        for (int l = 0; l < LANES; l++) {
            co[l] = cos(w * (double)(i0 + (size_t)l));
            si[l] = sin(w * (double)(i0 + (size_t)l));
        }
        for (size_t i = i0; i < i1; i += LANES)
            for (int l = 0; l < LANES && i + (size_t)l < i1; l++) {
                double c1 = co[l], s1 = si[l], ck = c1, sk = s1, hum = a[0];
                for (int k = 1; k <= K; k++) {
                    hum += a[2 * k - 1] * ck + a[2 * k] * sk;
                    double nc = ck * c1 - sk * s1;
                    sk = sk * c1 + ck * s1;
                    ck = nc;
                }
                v[i + (size_t)l] -= hum;
                co[l] = c1 * c4 - s1 * s4;
                si[l] = s1 * c4 + c1 * s4;
            }
    }
    return 0;
}

/* The common level of the two beams (omega) around [a, b): the mean of
 * both channels' v / h over a millisecond each side, joined by a line. */
static void edge_levels(double *v[2], const double h[2], size_t n, size_t a,
                        size_t b, size_t r, double *la, double *lb)
{
    double s = 0;
    size_t m = 0;
    for (size_t i = a > r ? a - r : 0; i < a; i++, m++)
        s += 0.5 * (v[0][i] / h[0] + v[1][i] / h[1]);
    *la = m ? s / (double)m : NAN;
    s = 0;
    m = 0;
    for (size_t i = b; i < n && i < b + r; i++, m++)
        s += 0.5 * (v[0][i] / h[0] + v[1][i] / h[1]);
    *lb = m ? s / (double)m : *la;
    if (isnan(*la))
        *la = *lb;
}

/* Bridges the drop-out [a, b): the channel that left the common level
 * takes the other's velocity scaled to its height, joined to its own at
 * the edges; when both left it,
 * both follow the line between the levels at the edges. */
static void bridge(double *v[2], const double h[2], size_t n, size_t a, size_t b,
                   size_t r, double thr, double agree, pl_frontend_report *rep, double rate)
{
    double la, lb, dev[2] = {0, 0};
    edge_levels(v, h, n, a, b, r, &la, &lb);
    for (size_t i = a; i < b; i++) {
        double lvl = la + (lb - la) * (double)(i - a + 1) / (double)(b - a + 1);
        for (int c = 0; c < 2; c++)
            dev[c] += fabs(v[c][i] / h[c] - lvl);
    }
    for (int c = 0; c < 2; c++)
        dev[c] /= (double)(b - a);
    if (dev[0] > 0.5 * thr && dev[1] > 0.5 * thr) {
        for (size_t i = a; i < b; i++) {
            double lvl = la + (lb - la) * (double)(i - a + 1) / (double)(b - a + 1);
            v[0][i] = lvl * h[0];
            v[1][i] = lvl * h[1];
        }
        rep->both_out++;
        return;
    }
    int bad = dev[0] > dev[1] ? 0 : 1, good = 1 - bad;
    /* The beams differ by their own noise, 1/f noise most: the bad
     * channel's difference from the other's (scaled) at the edges is
     * carried across the stretch as a line, or the bridge would step by it
     * at both edges (about 0.02 rad/s of omega on 200 um/s of 1/f noise, a
     * quarter of a 23-edge prism's step) - a step the impact search could
     * take for the impact beside it. */
    double k = h[bad] / h[good], oa = 0, ob = 0;
    size_t ma = 0, mb = 0;
    /* (only where the beams agree: the next drop-out, not yet bridged,
     * may lie within the millisecond) */
    for (size_t i = a > r ? a - r : 0; i < a; i++)
        if (fabs(v[0][i] / h[0] - v[1][i] / h[1]) <= agree) {
            oa += v[bad][i] - k * v[good][i];
            ma++;
        }
    for (size_t i = b; i < n && i < b + r; i++)
        if (fabs(v[0][i] / h[0] - v[1][i] / h[1]) <= agree) {
            ob += v[bad][i] - k * v[good][i];
            mb++;
        }
    oa = ma ? oa / (double)ma : NAN;
    ob = mb ? ob / (double)mb : oa;
    if (isnan(oa))
        oa = isnan(ob) ? 0 : ob;
    if (isnan(ob))
        ob = oa;
    for (size_t i = a; i < b; i++)
        v[bad][i] = k * v[good][i] + oa + (ob - oa) * (double)(i - a + 1) / (double)(b - a + 1);
    rep->dropouts[bad]++;
    rep->dropout_s[bad] += (double)(b - a) / rate;
}

/* Finds and bridges the drop-outs from sample `from` on. */
static void dropouts(double *v[2], const double h[2], size_t n, size_t from,
                     double rate, pl_frontend_report *rep)
{
    double sd_e = pl_robust_spread(v[0], v[1], h[0], h[1], from, n, 0);
    if (!(sd_e > 0))
        sd_e = 0;
    size_t merge = (size_t)ceil(0.0005 * rate), pad = (size_t)ceil(0.0002 * rate);
    size_t r = (size_t)ceil(0.001 * rate), max_len = (size_t)(0.020 * rate);
    double i0 = 1.0 / h[0], i1 = 1.0 / h[1], floor_e = 10 * sd_e;
    for (size_t k = from; k < n; k++) {
        double a0 = v[0][k] * i0, a1 = v[1][k] * i1, e = fabs(a0 - a1);
        if (!(e > floor_e))
            continue;
        double lvl = fmax(fabs(a0), fabs(a1)), thr = fmax(floor_e, 0.3 * lvl);
        if (!(e > thr) || lvl == 0)
            continue;
        /* the stretch: flagged samples no more than `merge` apart */
        size_t last = k, j = k + 1;
        for (; j < n && j <= last + merge; j++) {
            double ej = v[0][j] / h[0] - v[1][j] / h[1];
            double lj = fmax(fabs(v[0][j] / h[0]), fabs(v[1][j] / h[1]));
            if (fabs(ej) > fmax(10 * sd_e, 0.3 * lj))
                last = j;
        }
        size_t a = k > from + pad ? k - pad : from, b = last + 1 + pad < n ? last + 1 + pad : n;
        if (b - a > max_len) {
            if (isnan(rep->lost_t_s)) {
                rep->lost_t_s = (double)a / rate;
                /* the beam still near zero is the one that lost the prism */
                double m0 = 0, m1 = 0;
                for (size_t i = a; i < b; i++) {
                    m0 += fabs(v[0][i] / h[0]);
                    m1 += fabs(v[1][i] / h[1]);
                }
                rep->lost_channel = m0 < m1 ? 1 : 2;
            }
            return;
        }
        bridge(v, h, n, a, b, r, thr, floor_e, rep, rate);
        k = b;
    }
}

/* Which of the lead-in's L samples the offset and hum fits use: all but
 * those more than 8 robust standard deviations from the median, and two
 * samples either side of them.  A speckle spike (a few samples of -4.9 V
 * on one fixture) would otherwise move the least-squares offset by
 * 5e-5 m/s and pull the mains frequency off 50 Hz; the hum itself stays
 * within 1.5 robust deviations of the median.  NULL when out of memory;
 * *level receives the median. */
static unsigned char *lead_mask(const double *v, size_t L, double *level)
{
    unsigned char *use = malloc(L ? L : 1);
    double *t = malloc((L ? L : 1) * sizeof *t);
    if (!use || !t) {
        free(use);
        free(t);
        return NULL;
    }
    memcpy(t, v, L * sizeof *t);
    /* (pl_median() only reorders t: the spread needs no fresh copy) */
    double med = pl_median(t, L), sd = pl_robust_sd(t, L);
    free(t);
    *level = med;
    memset(use, 1, L);
    if (!(sd > 0))
        return use;
    for (size_t i = 0; i < L; i++)
        if (fabs(v[i] - med) > 8 * sd)
            for (size_t j = i > 2 ? i - 2 : 0; j < L && j <= i + 2; j++)
                use[j] = 0;
    return use;
}

/* One channel's hum, for the channels' own threads. */
typedef struct {
    double *v;
    const unsigned char *use;
    size_t n, L;
    double rate, f, offset, amp1;
    int rc;
} hum_job;

static void *hum_run(void *p)
{
    hum_job *j = p;
    j->rc = remove_hum(j->v, j->use, j->n, j->L, j->rate, j->f, &j->offset, &j->amp1);
    return NULL;
}

pl_status pl_frontend_run(double *v[2], size_t n, double rate, const double h[2],
                          size_t lead, size_t from, double *omega_c, int threads,
                          pl_frontend_report *rep, pl_err *err)
{
    memset(rep, 0, sizeof *rep);
    rep->lost_t_s = NAN;
    if (lead > n)
        lead = n;
    unsigned char *use[2] = {NULL, NULL};
    double level[2] = {0, 0};
    for (int c = 0; lead > 0 && c < 2; c++)
        if (!(use[c] = lead_mask(v[c], lead, &level[c]))) {
            free(use[0]);
            return pl_err_set(err, PL_ENOMEM, "front end: out of memory for %zu samples",
                              lead);
        }
    /* The hum fit needs a few mains periods; a shorter lead-in gives the
     * offsets only (the medians). */
    if (lead >= (size_t)(0.1 * rate)) {
        rep->hum_hz = mains_refine(v, h, n, rate, mains_frequency(v, use, lead, rate));
        /* the channels are independent: the second on a thread of its own
         * (the whole run is swept once per harmonic) */
        hum_job job[2];
        for (int c = 0; c < 2; c++)
            job[c] = (hum_job){v[c], use[c], n, lead, rate, rep->hum_hz, 0, 0, 0};
        pthread_t tid;
        int par = threads != 1 && pthread_create(&tid, NULL, hum_run, &job[1]) == 0;
        hum_run(&job[0]);
        if (par)
            pthread_join(tid, NULL);
        else
            hum_run(&job[1]);
        free(use[0]);
        free(use[1]);
        for (int c = 0; c < 2; c++) {
            if (job[c].rc != 0)
                return pl_err_set(err, PL_ENOMEM, "hum fit: out of memory for %zu "
                                  "samples", lead);
            rep->offset_mps[c] = job[c].offset;
            rep->hum_amp_mps[c] = job[c].amp1;
        }
        if (rep->hum_amp_mps[0] == 0 && rep->hum_amp_mps[1] == 0)
            rep->hum_hz = 0;
    } else if (lead > 0) {
        free(use[0]);
        free(use[1]);
        for (int c = 0; c < 2; c++) {
            rep->offset_mps[c] = level[c];
            for (size_t i = 0; i < n; i++)
                v[c][i] -= rep->offset_mps[c];
        }
    }
    for (int c = 0; c < 2; c++) {
        rep->noise_mps[c] = lead > 16 ? pl_robust_spread(v[c], NULL, 1, 1, 0, lead, 1) : NAN;
        if (!(rep->noise_mps[c] >= 0))
            rep->noise_mps[c] = NAN;
    }
    dropouts(v, h, n, from, rate, rep);
    /* inverse-variance weights of v_i / h_i; equal noise when unknown */
    double s0 = rep->noise_mps[0], s1 = rep->noise_mps[1];
    double w0 = h[0] * h[0], w1 = h[1] * h[1];
    if (s0 > 0 && s1 > 0) {
        w0 /= s0 * s0;
        w1 /= s1 * s1;
    }
    double sw = w0 + w1;
    w0 /= sw;
    w1 /= sw;
    w0 /= h[0];
    w1 /= h[1];
    for (size_t i = 0; i < n; i++)
        omega_c[i] = w0 * v[0][i] + w1 * v[1][i];
    return PL_OK;
}
