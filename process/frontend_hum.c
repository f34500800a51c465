/* process/frontend_hum.c - the front end's room for the offsets and the
 * mains hum: the mains frequency from the lead-in, refined and its drift
 * measured from the beams' difference over the run, the harmonics fitted
 * to each channel's lead-in and removed from the whole channel.  See
 * frontend_hum.h and docs/process.md section 1. */
#include "process/frontend_hum.h"

#include "core/pair.h"
#include "process/robust.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
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
 * 8 robust standard deviations (drop-outs, spikes) are left out.  The
 * frequency is refined when at least 4 blocks and half of them show the
 * hum and the line says less than MAINS_REFINE_HZ off (not the same
 * mains); the same blocks over the whole recording measure its drift
 * (hum_drift()). */
#define MAINS_SPAN_S 20.0
#define MAINS_BLOCK_S 0.2
#define MAINS_REFINE_HZ 0.1
#define HUM_DRIFT_BLOCKS 300   /* at most, past the first MAINS_SPAN_S */

/* The phases of the hum's fundamental at f, block by block over the
 * whole recording: ph[k] (unwrapped), at tb[k] (s), with weight wb[k]
 * (its inverse variance under white noise) for the kept blocks k <
 * kept of the `tried` fitted among nb; kept_span of them lie in the
 * first MAINS_SPAN_S (nb_span blocks, all fitted). */
typedef struct {
    double *ph, *tb, *wb;
    size_t nb, tried, kept, nb_span, kept_span;
} hum_blocks;

/* The level (median) and robust spread of e = v1/h1 - v2/h2 over [0, S)
 * from every k-th sample (k odd), at most about 20 000 of them: a robust
 * statistic needs no more, and selection over 20 s of a fast card would
 * cost more than the fit.  -1 when out of memory. */
static int diff_level(double *v[2], const double h[2], size_t S, double *med, double *sd)
{
    size_t step = S > 20000 ? S / 20000 : 1, ns = 0;
    if (step > 1 && step % 2 == 0)
        step++;
    double *t = malloc((S / step + 1) * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < S; i += step)
        t[ns++] = v[0][i] / h[0] - v[1][i] / h[1];
    /* (pl_median() only reorders t: the spread needs no fresh copy) */
    *med = pl_median(t, ns);
    *sd = pl_robust_sd(t, ns);
    free(t);
    return 0;
}



/* A constant, a slope and the fundamental (w rad a sample) fitted to e
 * over the block [a, a + B), the samples more than 8 sd from med left
 * out.  1 with the phase (of cos(w i + phase)) and its weight when the
 * fundamental stands 5 standard errors out, else 0. */
static int block_phase(double *v[2], const double h[2], size_t a, size_t B, double w,
                       double med, double sd, double *ph, double *wt)
{
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
        double e = v[0][i] / h[0] - v[1][i] / h[1];
        if (sd > 0 && fabs(e - med) > 8 * sd)
            continue;
        x[0] = 1;
        x[1] = ((double)i - mid) / (double)B;
        normal_add(A, y, x, 4, e);
        yy += e * e;
        m++;
    }
    double c[4];
    if (m < (size_t)(0.8 * (double)B) || pl_fe_normal_solve(A, y, 4, c) != 0)
        return 0;
    double fit = 0;
    for (int r = 0; r < 4; r++)
        fit += c[r] * y[r];
    double s2 = fmax(0, yy - fit) / (double)(m - 4), var = 2 * s2 / (double)m;
    double amp2 = c[2] * c[2] + c[3] * c[3];
    if (!(amp2 > 25 * 2 * var))
        return 0;
    *ph = atan2(-c[3], c[2]);
    *wt = amp2 / var;
    return 1;
}

/* The blocks of whole periods of f (about MAINS_BLOCK_S) over [0, n),
 * e's level taken over the first MAINS_SPAN_S.  -1 when out of memory
 * or there are fewer than 4 blocks in that span (hb then empty). */
static int hum_phases(double *v[2], const double h[2], size_t n, double rate, double f,
                      hum_blocks *hb)
{
    memset(hb, 0, sizeof *hb);
    size_t S = (size_t)fmin((double)n, MAINS_SPAN_S * rate);
    double periods = fmax(1, round(MAINS_BLOCK_S * f)), Bd = periods * rate / f;
    size_t B = (size_t)llround(Bd), nb_span = B > 8 ? S / B : 0;
    if (nb_span < 4)
        return -1;
    size_t nb = n / B;
    double med, sd;
    hb->ph = malloc(3 * nb * sizeof *hb->ph);
    if (!hb->ph || diff_level(v, h, S, &med, &sd) != 0) {
        free(hb->ph);
        hb->ph = NULL;
        return -1;
    }
    hb->tb = hb->ph + nb;
    hb->wb = hb->ph + 2 * nb;
    hb->nb = nb;
    hb->nb_span = nb_span;
    double w = 2 * M_PI * f / rate;
    /* past the span, every stride-th block: the drift's trend needs the
     * blocks spread over the run, not all of them (a ten-minute run has
     * 3000, and fitting each cost 0.09 s of its 0.5 s); 1.8 s apart on
     * such a run, the hum still turns well under half a turn more than f
     * between them when f is 0.1 Hz off */
    size_t stride = (nb - nb_span) / HUM_DRIFT_BLOCKS + 1, kept = 0;
    for (size_t b = 0; b < nb; b++) {
        if (b == nb_span)
            hb->kept_span = kept;
        if (b > nb_span && (b - nb_span) % stride != 0)
            continue;
        hb->tried++;
        if (!block_phase(v, h, b * B, B, w, med, sd, &hb->ph[kept], &hb->wb[kept]))
            continue;
        hb->tb[kept] = ((double)(b * B) + 0.5 * (double)(B - 1)) / rate;
        if (kept > 0)   /* unwrap: the hum moves well under half a turn a block */
            hb->ph[kept] -= 2 * M_PI * round((hb->ph[kept] - hb->ph[kept - 1]) / (2 * M_PI));
        kept++;
    }
    if (nb == nb_span)
        hb->kept_span = kept;
    hb->kept = kept;
    return 0;
}

/* f refined by the line through the first kept_span blocks' phases (see
 * above); f when they do not show the hum. */
static double mains_refine(const hum_blocks *hb, double f)
{
    size_t kept = hb->kept_span;
    /* (a hum that only some blocks show is noise that happened to look
     * like one: on a chain with 0.2 mV of hum under 556 um/s of 1/f
     * noise a few blocks passed and the line said 49.87 Hz) */
    if (kept < 4 || 2 * kept < hb->nb_span)
        return f;
    const double *ph = hb->ph, *tb = hb->tb, *wb = hb->wb;
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
    return fabs(df) <= MAINS_REFINE_HZ ? f + df : f;
}

/* A drift known no better than this says nothing a reader can use: it is
 * reported as not measured (docs/process.md, "Faults"). */
#define DRIFT_SE_MAX_HZ 0.01

/* How far the mains frequency moved over the recording (duration T),
 * into *drift with its standard error *se: a
 * parabola fitted to the blocks' phases by weighted least squares,
 * phase = c0 + c1 t + c2 t^2, is a frequency f + (c1 + 2 c2 t) / 2 pi,
 * which changes by c2 T / pi over the run.  A slope and not the spread
 * of frequencies fitted block by block: the spread (max - min) of noisy
 * estimates grows with their number and their noise, so a steady mains
 * would read as drifting; the slope is unbiased and has a standard error
 * (the weights scaled by the phases' scatter about the parabola), which
 * says when the data cannot resolve it.  A mains that wanders and comes
 * back reads as its trend.  NaN in both when not measured: fewer than 4
 * blocks or than half of them show the hum, or the standard error
 * exceeds DRIFT_SE_MAX_HZ. */
static void hum_drift(const hum_blocks *hb, double T, double *drift, double *se)
{
    size_t kept = hb->kept;
    *drift = *se = NAN;
    if (kept < 4 || 2 * kept < hb->tried)
        return;
    const double *ph = hb->ph, *tb = hb->tb, *wb = hb->wb;
    double tm = 0.5 * (tb[0] + tb[kept - 1]), ts = fmax(tb[kept - 1] - tm, 1e-9);
    double A[9] = {0}, y[3] = {0}, yy = 0, c[3];
    for (size_t k = 0; k < kept; k++) {
        double u = (tb[k] - tm) / ts, x[3] = {1, u, u * u};   /* scaled: well conditioned */
        for (int r = 0; r < 3; r++) {
            y[r] += wb[k] * x[r] * ph[k];
            for (int q = 0; q < 3; q++)
                A[3 * r + q] += wb[k] * x[r] * x[q];
        }
        yy += wb[k] * ph[k] * ph[k];
    }
    gsl_matrix_view Av = gsl_matrix_view_array(A, 3, 3);
    if (pl_fe_normal_solve(A, y, 3, c) != 0 || gsl_linalg_cholesky_invert(&Av.matrix) != GSL_SUCCESS)
        return;
    double chi2 = yy - (c[0] * y[0] + c[1] * y[1] + c[2] * y[2]);
    double scale = kept > 3 ? fmax(1, chi2 / (double)(kept - 3)) : 1;
    double to_hz = T / (M_PI * ts * ts);   /* c2 is per u^2 = per (t / ts)^2 */
    double sd = sqrt(A[8] * scale) * to_hz;
    if (sd <= DRIFT_SE_MAX_HZ) {
        *drift = c[2] * to_hz;
        *se = sd;
    }
}

/* Fits a constant and the harmonics 1..K of f to the lead-in v[0, L)
 * (the samples use[] keeps) into a[0..2K]: the constant, then each
 * harmonic's cosine and sine where its amplitude stands 5 standard
 * errors above zero, else 0.  -1 when the fit fails or memory runs out. */
static int fit_hum(const double *v, const unsigned char *use, size_t L, double rate, double f,
                   int K, double a[2 * HARMONICS + 1])
{
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
    double c[2 * HARMONICS + 1] = {0}, bxy = 0;
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
    return ok ? 0 : -1;
}

/* Removes the constant a[0] and the harmonics 1..K (a[2k-1] cos, a[2k]
 * sin) of f from v[0, n), v[0] being the recording's sample origin. */
static void subtract_hum(double *v, size_t n, size_t origin, double rate, double f, int K,
                         const double *a)
{
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
        return;
    }
    double w = 2 * M_PI * f / rate, c4 = cos(LANES * w), s4 = sin(LANES * w);
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
        double co[LANES], si[LANES];
        for (int l = 0; l < LANES; l++) {
            co[l] = cos(w * (double)(origin + i0 + (size_t)l));
            si[l] = sin(w * (double)(origin + i0 + (size_t)l));
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
}

/* Fits a constant and the harmonics of f to the lead-in of v and removes
 * the constant and every harmonic whose amplitude stands 5 standard
 * errors above zero from the whole channel.  *amp1 receives the
 * fundamental's amplitude when removed (else 0). */
static int remove_hum(double *v, const unsigned char *use, size_t n, size_t L, double rate,
                      double f, const pl_frontend_splice *sp, double *offset, double *amp1)
{
    int K = HARMONICS;
    while (K > 0 && K * f >= 0.45 * rate)
        K--;
    double a[2 * HARMONICS + 1] = {0};
    if (fit_hum(v, use, L, rate, f, K, a) != 0)
        return -1;
    *offset = a[0];
    *amp1 = hypot(a[1], a[2]);
    size_t at = sp && sp->at > 0 && sp->at < n ? sp->at : n;
    subtract_hum(v, at, 0, rate, f, K, a);
    if (at < n)   /* the run's samples after the lead-in, in their own phase */
        subtract_hum(v + at, n - at, sp->origin, rate, f, K, a);
    return 0;
}

/* One channel's hum, for the channels' own threads. */
typedef struct {
    double *v;
    const unsigned char *use;
    size_t n, L;
    double rate, f;
    const pl_frontend_splice *sp;
    double offset, amp1;
    int rc;
} hum_job;

static void *hum_run(void *p)
{
    hum_job *j = p;
    j->rc = remove_hum(j->v, j->use, j->n, j->L, j->rate, j->f, j->sp, &j->offset, &j->amp1);
    return NULL;
}

/* The offsets and the hum over the lead-in [0, lead) (use[] its masks,
 * level[] its medians; both freed here), removed from the whole channels.
 * The hum fit needs a few mains periods; a shorter lead-in gives the
 * offsets only (the medians).  -1 when out of memory. */
int pl_fe_offsets_and_hum(double *v[2], const double h[2], size_t n, double rate,
                          size_t lead, unsigned char *use[2], const double level[2],
                          const pl_frontend_splice *splice, int threads,
                          pl_frontend_report *rep)
{
    int rc = 0;
    if (lead >= (size_t)(0.1 * rate)) {
        int spliced = splice && splice->at > 0;
        double f = spliced && splice->mains_hz > 0 ? splice->mains_hz
                                                   : mains_frequency(v, use, lead, rate);
        hum_blocks hb;
        rep->hum_hz = f;
        /* across a splice the blocks' phases jump: the first segment's
         * refined frequency stands */
        if (!spliced && hum_phases(v, h, n, rate, f, &hb) == 0) {
            rep->hum_hz = mains_refine(&hb, f);
            hum_drift(&hb, (double)n / rate, &rep->hum_drift_hz, &rep->hum_drift_se_hz);
            free(hb.ph);
        }
        /* the channels are independent: the second on a thread of its own
         * (the whole run is swept once per harmonic) */
        hum_job job[2];
        for (int c = 0; c < 2; c++)
            job[c] = (hum_job){v[c], use[c], n, lead, rate, rep->hum_hz, splice, 0, 0, 0};
        rep->mains_hz = rep->hum_hz;
        pl_run_pair(hum_run, &job[0], &job[1], threads);
        for (int c = 0; c < 2; c++) {
            rc |= job[c].rc;
            rep->offset_mps[c] = job[c].offset;
            rep->hum_amp_mps[c] = job[c].amp1;
        }
        if (rep->hum_amp_mps[0] == 0 && rep->hum_amp_mps[1] == 0) {
            rep->hum_hz = 0;
            rep->hum_drift_hz = rep->hum_drift_se_hz = NAN;
        }
    } else if (lead > 0) {
        for (int c = 0; c < 2; c++) {
            rep->offset_mps[c] = level[c];
            for (size_t i = 0; i < n; i++)
                v[c][i] -= rep->offset_mps[c];
        }
    }
    free(use[0]);
    free(use[1]);
    return rc != 0 ? -1 : 0;
}
