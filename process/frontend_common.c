/* process/frontend_common.c - motion common to both beams: a shaking
 * floor or table found in the lines of v1/h1 - v2/h2, which holds no
 * rotation, and removed from both channels (frontend_common.h; the method
 * and its measured choices: docs/process.md section 1, "Motion common to
 * both beams"). */
#include "process/frontend_common.h"

#include "process/frontend_core.h"
#include "process/robust.h"
#include "process/spectral.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The search band of a shaking floor's lines, and how far a line must
 * stand above its neighbourhood's median in the spectrum of
 * v1/h1 - v2/h2.  A floor or table moves at a few hertz to a few tens; a
 * sinusoid of 0.2 mm/s stands 10^4 above a white 20 um/s floor in that
 * spectrum and 10^2 above 1/f noise of 500 um/s, while the spectrum of
 * pure noise reaches 15 times its median in one bin of 1000 about once
 * (an exponential variable averaged over a few segments). */
#define COMMON_LO_HZ 0.5
#define COMMON_HI_HZ 200.0
#define COMMON_LINE 50.0
#define COMMON_BLOCK_S 0.5
/* A clean segment whose broadband level stands this far above the
 * quietest one's is speckle garbage past the motion (tens of mm/s),
 * not the beams' noise (within a few times from segment to segment). */
#define CLEAN_LEVEL 10.0

/* e = v1/h1 - v2/h2 read sample by sample (a ten-minute run would spend
 * 54 MB on it and a mask), with whether sample i counts: not at a rail
 * and within 8 robust deviations of e's median (the spread includes the
 * motion sought: 8 of it keeps every sample of a sinusoid and leaves out
 * drop-outs, which leave the common level by a third of omega or more). */
typedef struct {
    double *const *v;
    double ih[2];             /* 1 / h */
    const spans *clip;
    double med, sd;
    size_t cur[2];
} diffsig;

static inline int diff_at(diffsig *d, size_t i, double *e)
{
    *e = d->v[0][i] * d->ih[0] - d->v[1][i] * d->ih[1];
    int cs[2];
    clips_at(d->clip, i, d->cur, cs);
    if (cs[0] || cs[1])
        return 0;
    return !(d->sd > 0) || fabs(*e - d->med) <= 8 * d->sd;
}

/* e over [a, b) decimated to about 1 kHz by block means of the samples
 * that count: x[k] at time t0 + k / rd (the block's centre), cnt[k] how
 * many samples it holds.  A block with none holds the previous value, so
 * the spectrum sees no step; the fits below leave it out. */
typedef struct {
    double *x, t0, rd;
    unsigned *cnt;
    size_t m;
} decimated;

static int decimate(diffsig *d, size_t a, size_t b, double rate, decimated *z)
{
    size_t dec = (size_t)fmax(1, floor(rate / 1000));
    z->m = (b - a) / dec;
    z->rd = rate / (double)dec;
    z->t0 = ((double)a + 0.5 * (double)(dec - 1)) / rate;
    z->x = malloc((z->m ? z->m : 1) * sizeof *z->x);
    z->cnt = malloc((z->m ? z->m : 1) * sizeof *z->cnt);
    if (!z->x || !z->cnt)
        return -1;
    double prev = 0;
    for (size_t k = 0; k < z->m; k++) {
        double sum = 0;
        unsigned used = 0;
        for (size_t i = a + k * dec; i < a + (k + 1) * dec; i++) {
            double e;
            if (diff_at(d, i, &e)) {
                sum += e;
                used++;
            }
        }
        z->x[k] = prev = used ? sum / (double)used : prev;
        z->cnt[k] = used;
    }
    return 0;
}

/* The spectrum of x[0..m) (rate rd) as the median, bin by bin, of the
 * periodograms of Hann segments of seg samples at 50 % overlap (at most
 * 64, spread evenly).  Not their mean: the speckle garbage a recording
 * holds past the motion puts tens of mm/s of broadband into each beam for
 * a second or more, which in a mean buried a floor's line of 1.6 mm/s
 * (seed 390 of the faulted corpus); the median is held by the segments
 * where the beams saw the prism.  The median of exponential bins sits
 * ln 2 below their mean, for the lines' neighbourhoods and the noise
 * alike.  With `clean`, only the segments of which at least 95 % of the
 * blocks hold samples that count (cnt[]: no clipped stretch, no
 * drop-out, no lost beam) enter; -2 when there is none.  -1 when out of
 * memory or too short. */
static int median_psd(const decimated *z, size_t seg, int clean, double *psd)
{
    size_t m = z->m, hop = seg / 2, ns = m >= seg ? (m - seg) / hop + 1 : 0, nb = seg / 2 + 1;
    if (ns > 64)
        ns = 64;
    if (ns == 0)
        return -1;
    size_t *start = malloc(ns * sizeof *start), nk = 0;
    double *lvl = clean ? malloc((ns + seg) * sizeof *lvl) : NULL;
    if (!start || (clean && !lvl)) {
        free(start);
        free(lvl);
        return -1;
    }
    for (size_t k = 0; k < ns; k++) {
        size_t s0 = ns > 1 ? k * (m - seg) / (ns - 1) : 0, full = 0;
        for (size_t i = s0; clean && i < s0 + seg; i++)
            full += z->cnt[i] > 0;
        if (!clean || 20 * full >= 19 * seg)
            start[nk++] = s0;
    }
    if (clean && nk > 1) {
        /* each segment's broadband level: the median step between
         * neighbouring points, which a floor's few hertz barely move */
        double *d = lvl + ns, q = INFINITY;
        for (size_t k = 0; k < nk; k++) {
            for (size_t i = 0; i + 1 < seg; i++)
                d[i] = fabs(z->x[start[k] + i + 1] - z->x[start[k] + i]);
            lvl[k] = pl_median(d, seg - 1);
            q = fmin(q, lvl[k]);
        }
        size_t kept = 0;
        for (size_t k = 0; k < nk; k++)
            if (lvl[k] <= CLEAN_LEVEL * q)
                start[kept++] = start[k];
        nk = kept;
    }
    free(lvl);
    if (nk == 0) {
        free(start);
        return -2;
    }
    ns = nk;
    double *all = malloc(ns * nb * sizeof *all), *col = malloc(ns * sizeof *col);
    pl_welch *w = NULL;
    pl_err ignore = {0};
    int rc = -1;
    if (!all || !col || pl_welch_create(&w, seg, &ignore) != PL_OK)
        goto out;
    for (size_t k = 0; k < ns; k++) {
        size_t s0 = start[k];
        if (pl_welch_run(w, z->x + s0, seg, z->rd, 1, all + k * nb, NULL, &ignore) != PL_OK)
            goto out;
    }
    for (size_t j = 0; j < nb; j++) {
        for (size_t k = 0; k < ns; k++)
            col[k] = all[k * nb + j];
        psd[j] = pl_median(col, ns);
    }
    rc = 0;
out:
    pl_welch_destroy(w);
    free(start);
    free(all);
    free(col);
    return rc;
}

/* The lines of e (decimated: decimate()) that stand COMMON_LINE above the median of the
 * spectrum within 8 Hz, between COMMON_LO_HZ and COMMON_HI_HZ and away
 * from the first four harmonics of 50 and 60 Hz (hum is not common
 * motion: it enters the channels in volts, and has its own fit).  Their
 * frequencies go to f[], at most `max`, strongest first, and the
 * spectrum's bin width to *df_out; returns how many.  With `clean` the
 * spectrum is of the clean segments only (median_psd()), 2 s long
 * where there are such, else 1 s or 0.5 s (resolving lines 2 Hz apart);
 * none: no lines. */
static size_t common_lines(const decimated *z, int clean, double *f, size_t max, double *df_out)
{
    size_t m = z->m, seg = 2048;
    double rd = z->rd;
    while (seg > 256 && seg > m / 2)
        seg /= 2;
    if (m < seg || seg < 256)
        return 0;
    double *psd = malloc((seg / 2 + 1) * sizeof *psd);
    size_t found = 0;
    int prc = -2;
    while (psd && (prc = median_psd(z, seg, clean, psd)) == -2 && seg > 512)
        seg /= 2;
    if (!psd || prc != 0)
        goto out;
    double df = rd / (double)seg, cand[64], pw[64];
    /* (from the bin that holds COMMON_LO_HZ: a 2.1 Hz line of 1.4 mm/s
     * peaked in the bin at 1.95 Hz, below the next one, and was lost) */
    size_t nc = 0, w = (size_t)ceil(8 / df), lo = (size_t)floor(COMMON_LO_HZ / df + 0.5);
    size_t hi = (size_t)fmin((double)(seg / 2 - 1), COMMON_HI_HZ / df);
    double tmp[512];
    for (size_t k = lo > 2 ? lo : 2; k <= hi && nc < 64; k++) {
        if (!(psd[k] > psd[k - 1] && psd[k] >= psd[k + 1]))
            continue;
        size_t q = 0;
        for (size_t j = k > w ? k - w : 1; j <= k + w && j <= seg / 2 && q < 512; j++)
            if (j + 2 < k || j > k + 2)
                tmp[q++] = psd[j];
        double med = pl_median(tmp, q);
        if (!(psd[k] > COMMON_LINE * med))
            continue;
        /* the peak between bins from the parabola through the log-spectrum */
        double y0 = log(psd[k - 1]), y1 = log(psd[k]), y2 = log(psd[k + 1]);
        double den = y0 - 2 * y1 + y2, d = den < 0 ? 0.5 * (y0 - y2) / den : 0;
        double fk = ((double)k + fmax(-0.5, fmin(0.5, d))) * df;
        /* this runs before the hum is known: either mains may be the lab's */
        int mains_line = 0;
        for (int hk = 1; hk <= 4; hk++)
            mains_line |= fabs(fk - hk * 50.0) < 2 * df + 0.5 ||
                          fabs(fk - hk * 60.0) < 2 * df + 0.5;
        if (mains_line)
            continue;
        cand[nc] = fk;
        pw[nc++] = psd[k];
    }
    while (found < max && nc > 0) {   /* strongest first */
        size_t best = 0;
        for (size_t k = 1; k < nc; k++)
            if (pw[k] > pw[best])
                best = k;
        f[found++] = cand[best];
        cand[best] = cand[nc - 1];
        pw[best] = pw[nc - 1];
        nc--;
    }
    *df_out = df;
out:
    free(psd);
    return found;
}

/* The row of a floor's block fit at one sample: a constant, the slope's
 * u, and each line's cosine and sine at the phase 2 pi f[l] s / div (s
 * and div as the caller counts time: sample and rate, or seconds and 1). */
static void lines_row(double *x, double u, const double *f, size_t nl, double s, double div)
{
    x[0] = 1;
    x[1] = u;
    for (size_t l = 0; l < nl; l++) {
        double ph = 2 * M_PI * f[l] * s / div;
        x[2 + 2 * l] = cos(ph);
        x[3 + 2 * l] = sin(ph);
    }
}

/* Least squares over one block [k0, k1) of the decimated e: a constant, a
 * slope and the lines f[0..nl); the residual sum of squares, and how many
 * samples counted (*used); NAN when the fit cannot be solved. */
static double block_rss(const decimated *z, size_t k0, size_t k1, const double *f, size_t nl,
                        size_t *used)
{
    size_t P = 2 + 2 * nl;
    double A[100] = {0}, y[10] = {0}, x[10], yy = 0, mid = 0.5 * (double)(k0 + k1);
    *used = 0;
    for (size_t k = k0; k < k1; k++) {
        if (!z->cnt[k])
            continue;
        double e = z->x[k];
        lines_row(x, ((double)k - mid) / (double)(k1 - k0), f, nl, z->t0 + (double)k / z->rd, 1);
        normal_add(A, y, x, P, e);
        yy += e * e;
        (*used)++;
    }
    double c[10];
    if (*used < 2 * P || pl_fe_normal_solve(A, y, P, c) != 0)
        return NAN;
    double fit = 0;
    for (size_t r = 0; r < P; r++)
        fit += c[r] * y[r];
    return fmax(0, yy - fit);
}

/* The blocks of refine_lines(): about COMMON_BLOCK_S each, at most
 * REFINE_BLOCKS of them spread evenly over the run (a minute of shaking
 * fixes a frequency far better than the fit needs). */
enum { REFINE_BLOCKS = 120 };

/* Sum over the blocks of their residual sums of squares, each over its
 * weight w[b] (its noise: the residual variance at the frequencies found
 * first), with the lines at f[]; blocks without weight are passed over. */
/* The first sample of the b-th of nb blocks of B spread over z. */
static size_t spread_block(const decimated *z, size_t B, size_t nb, size_t b)
{
    size_t all = z->m / B;
    return (nb > 1 ? b * (all - 1) / (nb - 1) : 0) * B;
}

/* Each of lines_cost()'s blocks' weight: its residual variance with the
 * lines f[] (0: too few samples). */
static void block_weights(const decimated *z, size_t B, size_t nb, const double *f, size_t nl,
                          double *w)
{
    for (size_t b = 0; b < nb; b++) {
        size_t k0 = spread_block(z, B, nb, b), used;
        double rss = block_rss(z, k0, k0 + B, f, nl, &used);
        w[b] = isfinite(rss) && used > 2 + 2 * nl ? rss / (double)(used - 2 - 2 * nl) : 0;
    }
}

static double lines_cost(const decimated *z, size_t B, size_t nb, const double *w,
                         const double *f, size_t nl)
{
    double cost = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t k0 = spread_block(z, B, nb, b), used;
        if (!(w[b] > 0))
            continue;
        double rss = block_rss(z, k0, k0 + B, f, nl, &used);
        if (isfinite(rss))
            cost += rss / w[b];
    }
    return cost;
}

/* The block fits' length (s): COMMON_BLOCK_S, or a period of the slowest
 * line where that is longer: in a shorter block a line that slow cannot
 * be told from the block's constant and slope (a floor shaking at 1.5
 * Hz, about walking pace, was not found below the 2 Hz the search began
 * at, and 5 % of an injected foreign run's impacts fell 2 ms off). */
static double block_s(const double *f, size_t nl)
{
    double s = COMMON_BLOCK_S;
    for (size_t l = 0; l < nl; l++)
        if (f[l] > 0 && 1 / f[l] > s)
            s = 1 / f[l];
    return s;
}

/* Each line's frequency refined to where the block fits of e leave the
 * least residual: the spectrum's peak is off by up to a few tenths of a
 * bin (0.1-0.2 Hz at its 0.5 Hz bins) where the clipped stretches leave
 * gaps or a second line stands near, and a line 0.15 Hz off turns by 27
 * degrees over a 0.5 s block, leaving a sixth of its amplitude behind in
 * the beams.  Each block counts over its own noise, so the speckle garbage
 * past the motion, a hundred times louder, does not steer the search.
 * Lines searched within +-0.6 bins of the peak, coarse steps of a tenth
 * of a bin, then golden sections to 1 mHz; two rounds over the lines.
 * -1 when out of memory. */
static int refine_lines(const decimated *z, double *f, size_t nl, double df)
{
    size_t B = (size_t)(block_s(f, nl) * z->rd), nb = B ? z->m / B : 0;
    if (nb < 2 || nl == 0)
        return 0;
    if (nb > REFINE_BLOCKS)
        nb = REFINE_BLOCKS;
    double *w = malloc(nb * sizeof *w);
    if (!w)
        return -1;
    block_weights(z, B, nb, f, nl, w);
    const double g = 0.5 * (sqrt(5.0) - 1);
    for (int round = 0; round < 2; round++)
        for (size_t l = 0; l < nl; l++) {
            double f0 = f[l], best = f0, cbest = INFINITY;
            for (int j = -6; j <= 6; j++) {
                f[l] = f0 + 0.1 * df * j;
                double c = lines_cost(z, B, nb, w, f, nl);
                if (c < cbest) {
                    cbest = c;
                    best = f[l];
                }
            }
            double lo = best - 0.1 * df, hi = best + 0.1 * df;
            double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), c1, c2;
            f[l] = x1;
            c1 = lines_cost(z, B, nb, w, f, nl);
            f[l] = x2;
            c2 = lines_cost(z, B, nb, w, f, nl);
            while (hi - lo > 1e-3) {
                if (c1 < c2) {
                    hi = x2;
                    x2 = x1;
                    c2 = c1;
                    x1 = hi - g * (hi - lo);
                    f[l] = x1;
                    c1 = lines_cost(z, B, nb, w, f, nl);
                } else {
                    lo = x1;
                    x1 = x2;
                    c1 = c2;
                    x2 = lo + g * (hi - lo);
                    f[l] = x2;
                    c2 = lines_cost(z, B, nb, w, f, nl);
                }
            }
            f[l] = 0.5 * (lo + hi);
        }
    free(w);
    return 0;
}

/* The block fit of remove_common(): for each of the nb blocks of B
 * samples (the last takes the rest) a constant, a slope and the lines
 * f[0..nl) fitted to the samples of e that count; the lines' cosine and
 * sine coefficients go to co[bk * 2 nl ..], ok[bk] says the block had
 * samples enough (a tenth: a clipped beam leaves only the arcs' lower
 * parts, spread over every block) and a solvable fit, rms[bk] the RMS of
 * its residuals. */
static void fit_blocks(diffsig *d, size_t n, size_t B, size_t nb, double rate, const double *f,
                       size_t nl, double *co, unsigned char *ok, double *rms, size_t *nused)
{
    size_t P = 2 + 2 * nl;
    for (size_t bk = 0; bk < nb; bk++) {
        size_t s0 = bk * B, s1 = bk + 1 == nb ? n : s0 + B, used = 0;
        double A[100] = {0}, y[10] = {0}, x[10], mid = 0.5 * (double)(s0 + s1), yy = 0;
        ok[bk] = 0;
        for (size_t i = s0; i < s1; i++) {
            double ei;
            if (!diff_at(d, i, &ei))
                continue;
            lines_row(x, ((double)i - mid) / (double)B, f, nl, (double)i, rate);
            normal_add(A, y, x, P, ei);
            yy += ei * ei;
            used++;
        }
        double c[10], fit = 0;
        if (10 * used < s1 - s0 || pl_fe_normal_solve(A, y, P, c) != 0)
            continue;
        for (size_t r = 0; r < P; r++)
            fit += c[r] * y[r];
        rms[bk] = sqrt(fmax(0, yy - fit) / (double)used);
        nused[bk] = used;
        memcpy(co + bk * 2 * nl, c + 2, 2 * nl * sizeof *c);
        ok[bk] = 1;
    }
}

/* Blocks that do not see the floor are no measure of it, however well
 * they fit.  Past the motion the beams read speckle garbage, of which
 * the samples within e's gate still fill a tenth of a block, then 0 V:
 * taken as fitted, the blocks there were the far ends that fill_blocks()
 * joined a clipped beam's last 2.3 s to, and the floor's 2 mm/s came
 * back in the wrong phase (faulted corpus seed 86, the motion's good
 * blocks' residuals 0.008 rad/s, the garbage's 0.25-0.57).  A block
 * counts when its residual RMS is within 5 times the fitted blocks'
 * lower quartile (or e's quiet spread, if less) and its lines'
 * amplitude within 4 times their median either way: a beam that has
 * lost the prism sees no floor either, and a garbage block fitted
 * 9.25 rad/s of lines where the floor held 0.11 (seed 246). */
static void drop_blind_blocks(const double *co, unsigned char *ok, const double *rms,
                              size_t nb, size_t nl, double quiet, double *scratch)
{
    size_t m = 0;
    for (size_t bk = 0; bk < nb; bk++)
        if (ok[bk])
            scratch[m++] = rms[bk];
    if (m < 3)
        return;
    /* the lower quartile: the garbage can fill half the blocks */
    double ref = fmin(pl_select_kth(scratch, m, m / 4), quiet > 0 ? quiet : INFINITY);
    m = 0;
    for (size_t bk = 0; bk < nb; bk++) {
        if (ok[bk] && !(rms[bk] <= 5 * ref))
            ok[bk] = 0;
        if (!ok[bk])
            continue;
        double a2 = 0;
        for (size_t j = 0; j < 2 * nl; j++)
            a2 += co[bk * 2 * nl + j] * co[bk * 2 * nl + j];
        scratch[nb + m++] = sqrt(a2);
    }
    if (m < 3)
        return;
    /* the median from a copy: pl_median() reorders, and the check below
     * reads the amplitudes in block order (read reordered, a block past
     * the motion of a fifteenth of the floor's amplitude passed, and the
     * fill joined a clipped beam's last 3 s to it: faulted corpus seed
     * 112, the floor back in full in the beam that carried omega) */
    memcpy(scratch, scratch + nb, m * sizeof *scratch);
    double amp = pl_median(scratch, m);
    for (size_t bk = 0, k = 0; bk < nb; bk++)
        if (ok[bk]) {
            double a = scratch[nb + k++];
            if (!(a >= 0.25 * amp && a <= 4 * amp))
                ok[bk] = 0;
        }
}

/* The coefficients (nc a block: each line's cosine and sine) of the
 * blocks that could not be fitted (ok[bk] 0).  A line that holds steady
 * (steady[l], line_steady()) takes its phasor's value at the block's
 * centre: a clipped beam's blocks are bridged by what every fitted block
 * says, turning at the line's drift from the frequency found.  Any other
 * takes the nearest fitted blocks' either side, joined linearly by their
 * distance, or the one side's past the first or last fitted block.  The
 * lines' phases count from the run's first sample, so a steady floor
 * found at its own frequency keeps the same coefficients from block to
 * block; one 0.02 Hz off turns by 29 degrees over a 4 s clipped
 * stretch, and held at the last fitted block, itself half clipped and
 * 20 degrees off, half the floor was back in the beam that carried omega
 * (faulted corpus seed 112).  The nearest block alone was taken before
 * the neighbours: past the motion that is a block of speckle garbage or
 * of 0 V (faulted corpus seed 86: the last 1.3 s of the motion took a
 * 0.42 mm/s line in the wrong phase for the floor's 1.65 mm/s). */
static void fill_blocks(double *co, const unsigned char *ok, size_t nb, size_t nl,
                        const double *steady, double blk_s)
{
    size_t nc = 2 * nl;
    for (size_t bk = 0; bk < nb; bk++) {
        if (ok[bk])
            continue;
        size_t lo = bk, hi = bk + 1;
        while (lo > 0 && !ok[lo - 1])
            lo--;
        while (hi < nb && !ok[hi])
            hi++;
        /* lo - 1 and hi are the fitted neighbours where they exist */
        const double *a = lo > 0 ? co + (lo - 1) * nc : NULL, *b = hi < nb ? co + hi * nc : NULL;
        double t = a && b ? (double)(bk - (lo - 1)) / (double)(hi - (lo - 1)) : 0;
        for (size_t l = 0; l < nl; l++) {
            const double *st = steady + 3 * l;
            if (st[0] != 0 || st[1] != 0) {
                /* z = c - i s = (re + i im) exp(2 pi i drift t) */
                double ph = 2 * M_PI * st[2] * ((double)bk + 0.5) * blk_s;
                co[bk * nc + 2 * l] = st[0] * cos(ph) - st[1] * sin(ph);
                co[bk * nc + 2 * l + 1] = -(st[0] * sin(ph) + st[1] * cos(ph));
                continue;
            }
            for (size_t j = 2 * l; j < 2 * l + 2; j++)
                co[bk * nc + j] = a && b ? (1 - t) * a[j] + t * b[j] : a ? a[j] : b ? b[j] : 0;
        }
    }
}

/* Two lines of a floor closer than the spectrum resolves (under a Hann
 * window of 2 s, about 1 Hz) read as one peak between them, and the
 * block fits at that one frequency follow their beat only from block
 * centre to block centre (faulted corpus seeds 798: 31.94 and 32.90 Hz
 * read as 32.27; 390: 35.11 and 35.95 as 35.89).  A line at f + d fitted
 * at f turns by 2 pi d t from block to block: each block's complex
 * coefficient y_b (cosine - i sine) is a sum of exp(2 pi i d_k t_b) over
 * the lines within the block rate's Nyquist (1 Hz at 0.5 s blocks), so
 * the blocks' own series says whether one offset or two are there. */
enum { SPLIT_MAX_BLOCKS = 240 };
/* The chi-square a second line must win, and the share of the single
 * line's that it must leave at most: a true pair left 0.002-0.59 of it
 * (seeds 798, 390, 88, 939, 979), a line's own misfit beside a pair read
 * as one 0.80 (979's 24.34 Hz, which gained a line at 23.5 that is not
 * there). */
#define SPLIT_CHI2 50.0
#define SPLIT_SHARE 0.7

typedef struct {
    double *re, *im, *w, *t;   /* each block's coefficient, its weight
                                  (1 / variance) and its centre (s) */
    size_t n;
} beat;

/* The weighted fit of y_b by sum_k a_k exp(2 pi i d[k] t_b), k < K
 * (1 or 2): the chi-square left; a[] (2 K: re, im) the amplitudes. */
static double beat_fit(const beat *bt, const double *d, int K, double *a)
{
    /* complex normal equations G a = g, G Hermitian */
    double Gr[4] = {0}, Gi[4] = {0}, gr[2] = {0}, gi[2] = {0}, yy = 0;
    for (size_t b = 0; b < bt->n; b++) {
        double er[2], ei[2], w = bt->w[b];
        for (int k = 0; k < K; k++) {
            er[k] = cos(2 * M_PI * d[k] * bt->t[b]);
            ei[k] = sin(2 * M_PI * d[k] * bt->t[b]);
            /* g_k += conj(e_k) y */
            gr[k] += w * (er[k] * bt->re[b] + ei[k] * bt->im[b]);
            gi[k] += w * (er[k] * bt->im[b] - ei[k] * bt->re[b]);
        }
        for (int j = 0; j < K; j++)
            for (int k = 0; k < K; k++) {   /* G_jk += conj(e_j) e_k */
                Gr[2 * j + k] += w * (er[j] * er[k] + ei[j] * ei[k]);
                Gi[2 * j + k] += w * (er[j] * ei[k] - ei[j] * er[k]);
            }
        yy += w * (bt->re[b] * bt->re[b] + bt->im[b] * bt->im[b]);
    }
    if (K == 1) {
        if (!(Gr[0] > 0))
            return INFINITY;
        a[0] = gr[0] / Gr[0];
        a[1] = gi[0] / Gr[0];
        return yy - (gr[0] * gr[0] + gi[0] * gi[0]) / Gr[0];
    }
    /* 2 x 2: det = G00 G11 - |G01|^2 (real for a Hermitian G) */
    double det = Gr[0] * Gr[3] - (Gr[1] * Gr[1] + Gi[1] * Gi[1]);
    if (!(det > 1e-9 * Gr[0] * Gr[3]))
        return INFINITY;
    /* a0 = (G11 g0 - G01 g1) / det, a1 = (G00 g1 - G10 g0) / det */
    a[0] = (Gr[3] * gr[0] - (Gr[1] * gr[1] - Gi[1] * gi[1])) / det;
    a[1] = (Gr[3] * gi[0] - (Gr[1] * gi[1] + Gi[1] * gr[1])) / det;
    a[2] = (Gr[0] * gr[1] - (Gr[2] * gr[0] - Gi[2] * gi[0])) / det;
    a[3] = (Gr[0] * gi[1] - (Gr[2] * gi[0] + Gi[2] * gr[0])) / det;
    /* chi2 = yy - Re(conj(a) . g) */
    return yy - (a[0] * gr[0] + a[1] * gi[0] + a[2] * gr[1] + a[3] * gi[1]);
}

/* The best single offset on a grid of step `step` within +-lim Hz of
 * `centre`, and (with d0 given) the best second one at least `apart`
 * from it; the chi-square left into *chi. */
static double beat_scan(const beat *bt, double centre, double lim, double step, int K, double d0,
                        double apart, double *chi)
{
    double best = NAN, a[4];
    *chi = INFINITY;
    for (double x = centre - lim; x <= centre + lim + 1e-12; x += step) {
        if (K == 2 && fabs(x - d0) < apart)
            continue;
        double d[2] = {K == 2 ? d0 : x, x}, c = beat_fit(bt, d, K, a);
        if (c < *chi) {
            *chi = c;
            best = x;
        }
    }
    return best;
}

/* Each line's blocks over the first SPLIT_MAX_BLOCKS blocks of z (the
 * blocks' fits with every line, as remove_common()'s but on z) into bt
 * per line; the blocks not seeing the floor (drop_blind_blocks()) are
 * left out.  Returns how many blocks count, 0 when out of memory. */
static size_t beat_series(const decimated *z, const double *f, size_t nl, size_t B, double quiet,
                          beat *bt)
{
    size_t nb = z->m / B, P = 2 + 2 * nl;
    if (nb > SPLIT_MAX_BLOCKS)
        nb = SPLIT_MAX_BLOCKS;
    double *co = calloc(nb * 2 * nl, sizeof *co), *rms = malloc(3 * nb * sizeof *rms);
    unsigned *used = calloc(nb, sizeof *used);
    unsigned char *ok = calloc(nb, 1);
    size_t n = 0;
    if (!co || !rms || !used || !ok)
        goto out;
    for (size_t bk = 0; bk < nb; bk++) {
        size_t k0 = bk * B, k1 = k0 + B;
        double A[100] = {0}, y[10] = {0}, x[10], yy = 0, c[10], fit = 0;
        for (size_t k = k0; k < k1; k++) {
            if (!z->cnt[k])
                continue;
            lines_row(x, ((double)k - 0.5 * (double)(k0 + k1)) / (double)B, f, nl,
                      z->t0 + (double)k / z->rd, 1);
            normal_add(A, y, x, P, z->x[k]);
            yy += z->x[k] * z->x[k];
            used[bk]++;
        }
        if (10 * used[bk] < B || used[bk] < 2 * P || pl_fe_normal_solve(A, y, P, c) != 0)
            continue;
        for (size_t r = 0; r < P; r++)
            fit += c[r] * y[r];
        rms[bk] = sqrt(fmax(0, yy - fit) / (double)used[bk]);
        memcpy(co + bk * 2 * nl, c + 2, 2 * nl * sizeof *c);
        ok[bk] = 1;
    }
    drop_blind_blocks(co, ok, rms, nb, nl, quiet, rms + nb);
    for (size_t l = 0; l < nl; l++)
        bt[l].n = 0;
    for (size_t bk = 0; bk < nb; bk++) {
        if (!ok[bk] || !(rms[bk] > 0))
            continue;
        for (size_t l = 0; l < nl; l++) {
            size_t j = bt[l].n++;
            bt[l].re[j] = co[bk * 2 * nl + 2 * l];
            bt[l].im[j] = -co[bk * 2 * nl + 2 * l + 1];
            bt[l].w[j] = (double)used[bk] / (2 * rms[bk] * rms[bk]);
            bt[l].t[j] = z->t0 + ((double)bk + 0.5) * (double)B / z->rd;
        }
        n++;
    }
out:
    free(co);
    free(rms);
    free(used);
    free(ok);
    return n;
}

/* The block fits themselves (lines_cost(), 0.5 s blocks each over its
 * own noise) judge a split the beat proposed: line l at f1 alone against
 * f1 with a second line at f2 or at its aliases f2 -+ alias (the beat's
 * series cannot tell them apart: seed 939's second line 1.21 Hz below
 * read 0.93 Hz above at 0.5 s blocks).  The best second line wins when
 * it takes more than SPLIT_GAIN a block off the cost, where a line of
 * noise takes 2 (its two coefficients); NAN when none does or out of
 * memory. */
#define SPLIT_GAIN 6.0
static double split_verify(const decimated *z, const double *f, size_t nl, size_t l, double f1,
                           double f2, double alias, double *gain)
{
    *gain = 0;
    size_t B = (size_t)(COMMON_BLOCK_S * z->rd), nb = B ? z->m / B : 0;
    if (nb < 2 || nl + 1 > PL_FRONTEND_MAX_LINES)
        return NAN;
    if (nb > REFINE_BLOCKS)
        nb = REFINE_BLOCKS;
    double *w = malloc(nb * sizeof *w), g[PL_FRONTEND_MAX_LINES], best = NAN;
    if (!w)
        return NAN;
    memcpy(g, f, nl * sizeof *f);
    g[l] = f1;
    block_weights(z, B, nb, g, nl, w);
    double c0 = lines_cost(z, B, nb, w, g, nl), cb = c0 - SPLIT_GAIN * (double)nb;
    for (int k = -1; k <= 1; k++) {
        g[nl] = f2 + k * alias;
        if (g[nl] < COMMON_LO_HZ || g[nl] > COMMON_HI_HZ || fabs(g[nl] - f1) < 0.1)
            continue;
        double c = lines_cost(z, B, nb, w, g, nl + 1);
        if (c < cb) {
            cb = c;
            best = g[nl];
            *gain = (c0 - c) / (double)nb;
        }
    }
    free(w);
    return best;
}

/* Splits each line whose blocks beat with a second offset into the two
 * (SPLIT_CHI2 the chi-square the second must win, far above the 3 it
 * wins on noise; apart at least a fifth of the block rate, the weaker
 * a fifth of the stronger): f[] and *nl updated, at most max.  Only
 * where the spectrum's bins were 0.5 Hz (2 s segments): coarser bins
 * leave pairs further apart than the blocks' Nyquist unresolved, and
 * their beat would alias.  -1 when out of memory. */
static int split_lines(const decimated *z, double *f, size_t *nl, size_t max, double df,
                       double quiet)
{
    /* blocks short enough that the beat's Nyquist covers the Hann main
     * lobe's half-width (2 bins): 0.5 s at 0.5 Hz bins */
    size_t B = (size_t)(fmin(COMMON_BLOCK_S, 0.25 / df) * z->rd), n0 = *nl;
    if (B < 64 || z->m / B < 6 || n0 == 0 || n0 >= max)
        return 0;
    size_t nb = z->m / B > SPLIT_MAX_BLOCKS ? SPLIT_MAX_BLOCKS : z->m / B;
    double *mem = malloc(4 * nb * max * sizeof *mem);
    beat bt[PL_FRONTEND_MAX_LINES];
    if (!mem || max > PL_FRONTEND_MAX_LINES) {
        free(mem);
        return -1;
    }
    for (size_t l = 0; l < max; l++)
        bt[l] = (beat){mem + 4 * nb * l, mem + 4 * nb * l + nb, mem + 4 * nb * l + 2 * nb,
                       mem + 4 * nb * l + 3 * nb, 0};
    /* one split a round, the line whose split wins most first, each
     * round's series fitted with the lines split so far: a pair read as
     * one leaves its beat in the blocks of the lines beside it (seed 979:
     * 30.81 and 31.51 Hz read as 30.99 put a beat on 24.34, which split
     * first took a line at 23.49 that is not there).  The refinement is
     * not run again: with two lines a hertz apart in each 0.5 s block
     * it traded them off (31.12 and 31.92 Hz went to 31.00 and 31.76). */
    int rc = 0;
    unsigned char split[PL_FRONTEND_MAX_LINES] = {0};
    while (rc == 0 && *nl < max) {
        size_t nlc = *nl, used = beat_series(z, f, nlc, B, quiet, bt), bl = nlc;
        double nyq = 0.5 * z->rd / (double)B, lim = 0.9 * nyq, apart = 0.4 * nyq;
        double bgain = 0, bf1 = NAN, bf2 = NAN;
        /* the lines found, each split once: a split pair's own residual
         * beat, or a line it added, split again took lines that are not
         * there (seed 88: 28.26 and 28.25 Hz beside 31.13 and 31.92) */
        for (size_t l = 0; used >= 6 && l < n0; l++) {
            double chi1, chi2, a[4], gain;
            if (split[l])
                continue;
            double d1 = beat_scan(&bt[l], 0, lim, 0.005, 1, 0, 0, &chi1);
            double d2 = beat_scan(&bt[l], 0, lim, 0.005, 2, d1, apart, &chi2);
            if (isnan(d1) || isnan(d2) || !(chi1 - chi2 > SPLIT_CHI2) ||
                !(chi2 < SPLIT_SHARE * chi1))
                continue;
            d1 = beat_scan(&bt[l], 0, lim, 0.005, 2, d2, apart, &chi2);   /* the first again */
            double d[2] = {d2, d1};
            if (!isfinite(beat_fit(&bt[l], d, 2, a)))
                continue;
            double A1 = hypot(a[0], a[1]), A2 = hypot(a[2], a[3]);
            if (fmin(A1, A2) < 0.1 * fmax(A1, A2))
                continue;
            double f2 = split_verify(z, f, nlc, l, f[l] + d1, f[l] + d2, 2 * nyq, &gain);
            if (!isnan(f2) && gain > bgain) {
                bgain = gain;
                bl = l;
                bf1 = f[l] + d1;
                bf2 = f2;
            }
        }
        if (bl == nlc)
            break;
        f[bl] = bf1;
        f[(*nl)++] = bf2;
        split[bl] = 1;
    }
    free(mem);
    return rc;
}

/* Whether each line holds steady over the run, and its phasor if so:
 * the fitted blocks' coefficients, as complex amplitudes z = c - i s
 * (beat), fitted by one phasor z0 exp(2 pi i drift t), drift within
 * +-DRIFT_MAX_HZ of the frequency found, each block weighted by its
 * samples over its residual variance (a block a clipped beam leaves a
 * tenth of its samples counts a tenth).  The refinement's block fits
 * cannot place a line closer than a few hundredths of a hertz: 0.02 Hz
 * turns it by 3.6 degrees over a 0.5 s block, far below its noise,
 * while the blocks' phases over seconds show it.  steady[3 l ..] = re,
 * im of z0 and the drift; all 0 for a line whose phasor leaves more
 * than STEADY_SHARE of the blocks' weighted power (a floor that swells
 * or changes, two lines read as one), which fill_blocks() then bridges
 * from the neighbours.  Only where some block needs filling.  -1 when
 * out of memory. */
#define DRIFT_MAX_HZ 0.2
#define STEADY_SHARE 0.1
static int line_steady(const double *co, const unsigned char *ok, const double *rms,
                       const size_t *nused, size_t nb, size_t nl, double blk_s, double *steady)
{
    size_t nok = 0, gaps = 0;
    for (size_t bk = 0; bk < nb; bk++) {
        nok += ok[bk] && rms[bk] > 0;
        gaps += !ok[bk];
    }
    for (size_t j = 0; j < 3 * nl; j++)
        steady[j] = 0;
    if (gaps == 0 || nok < 4)
        return 0;
    double *mem = malloc(4 * nok * sizeof *mem);
    if (!mem)
        return -1;
    beat bt = {mem, mem + nok, mem + 2 * nok, mem + 3 * nok, 0};
    for (size_t l = 0; l < nl; l++) {
        bt.n = 0;
        double yy = 0;
        for (size_t bk = 0; bk < nb; bk++) {
            if (!ok[bk] || !(rms[bk] > 0))
                continue;
            size_t j = bt.n++;
            bt.re[j] = co[bk * 2 * nl + 2 * l];
            bt.im[j] = -co[bk * 2 * nl + 2 * l + 1];
            bt.w[j] = (double)nused[bk] / (rms[bk] * rms[bk]);
            bt.t[j] = ((double)bk + 0.5) * blk_s;
            yy += bt.w[j] * (bt.re[j] * bt.re[j] + bt.im[j] * bt.im[j]);
        }
        /* a coarse scan (at most a tenth of a turn over the fitted
         * blocks' span a step), then a fine one about its best: 80
         * phasor fits for a run of a few seconds, 4 a second of span
         * beyond 10 s (a ten-minute shaken run with a clipped stretch:
         * 2400 fits of 1200 blocks, about 0.05 s a line) */
        double span = bt.t[bt.n - 1] - bt.t[0], step = span > 0 ? fmin(0.01, 0.1 / span) : 0.01;
        double cbest, cfine, a[2];
        double best = beat_scan(&bt, 0, DRIFT_MAX_HZ, step, 1, 0, 0, &cbest);
        double fine = beat_scan(&bt, best, step, 0.05 * step, 1, 0, 0, &cfine);
        if (cfine < cbest) {
            cbest = cfine;
            best = fine;
        }
        if (!(cbest <= STEADY_SHARE * yy) || !isfinite(beat_fit(&bt, &best, 1, a)))
            continue;
        steady[3 * l] = a[0];
        steady[3 * l + 1] = a[1];
        steady[3 * l + 2] = best;
    }
    free(mem);
    return 0;
}

/* Fits a constant, a slope and the lines f[0..nl) to e over blocks of
 * about COMMON_BLOCK_S (fit_blocks()) and subtracts the lines, their
 * coefficients joined linearly between block centres, times `to_u` (m/s
 * of u per unit of e) from both channels: the floor's motion in each
 * beam.  A block that could not be fitted takes its fitted neighbours',
 * or a steady line's phasor (line_steady(), fill_blocks()); the fitted
 * blocks keep their own (correcting the frequencies themselves from the
 * blocks' phases, as mains_refine() does for the hum, won one chain of the
 * faulted corpus and lost one of seeds 201-400).  amp[] receives each line's mean amplitude in
 * m/s and *rms the RMS of u removed over [a, b).  -1 when out of memory. */
static int remove_common(double *v[2], diffsig *d, size_t n, size_t a, size_t b, double rate,
                         const double *f, size_t nl, double to_u, double *amp, double *rms)
{
    size_t B = (size_t)(block_s(f, nl) * rate), nb = B ? n / B : 0;
    if (B == 0 || nb == 0)
        return 0;
    B = n / nb;
    double *co = calloc(nb * 2 * nl, sizeof *co), *brms = malloc(3 * nb * sizeof *brms);
    unsigned char *ok = calloc(nb, 1);
    size_t *nused = calloc(nb, sizeof *nused);
    if (!co || !ok || !brms || !nused) {
        free(co);
        free(ok);
        free(brms);
        free(nused);
        return -1;
    }
    fit_blocks(d, n, B, nb, rate, f, nl, co, ok, brms, nused);
    drop_blind_blocks(co, ok, brms, nb, nl, d->sd, brms + nb);
    double steady[3 * PL_FRONTEND_MAX_LINES];
    int src = line_steady(co, ok, brms, nused, nb, nl, (double)B / rate, steady);
    free(brms);
    free(nused);
    if (src != 0) {
        free(co);
        free(ok);
        return -1;
    }
    fill_blocks(co, ok, nb, nl, steady, (double)B / rate);
    double s2 = 0;
    for (size_t l = 0; l < nl; l++)
        amp[l] = 0;
    size_t na = 0;
    for (size_t bk = 0; bk < nb; bk++)
        if (ok[bk] && bk * B >= a && bk * B < b) {
            for (size_t l = 0; l < nl; l++)
                amp[l] += hypot(co[bk * 2 * nl + 2 * l], co[bk * 2 * nl + 2 * l + 1]);
            na++;
        }
    for (size_t l = 0; l < nl; l++)
        amp[l] = na ? fabs(to_u) * amp[l] / (double)na : 0;
    for (size_t i = 0; i < n; i++) {
        /* between the centres of blocks k and k + 1 */
        double pos = ((double)i + 0.5) / (double)B - 0.5;
        size_t k0 = pos <= 0 ? 0 : (size_t)pos;
        if (k0 >= nb)
            k0 = nb - 1;
        size_t k1 = k0 + 1 < nb ? k0 + 1 : k0;
        double t = fmin(1, fmax(0, pos - (double)k0)), u = 0;
        for (size_t l = 0; l < nl; l++) {
            double ph = 2 * M_PI * f[l] * (double)i / rate, cs = cos(ph), sn = sin(ph);
            const double *c0 = co + k0 * 2 * nl + 2 * l, *c1 = co + k1 * 2 * nl + 2 * l;
            u += ((1 - t) * c0[0] + t * c1[0]) * cs + ((1 - t) * c0[1] + t * c1[1]) * sn;
        }
        u *= to_u;
        v[0][i] -= u;
        v[1][i] -= u;
        if (i >= a && i < b)
            s2 += u * u;
    }
    *rms = b > a ? sqrt(s2 / (double)(b - a)) : 0;
    free(co);
    free(ok);
    return 0;
}

/* The spread of e where the beams see the prism: the median over blocks
 * of bs samples of t[0..ns) (in time order; reordered on return) of each
 * block's robust deviation.  The whole run's deviation would count the
 * speckle garbage past the motion (tens of mm/s, a quarter of a run's
 * samples), and 8 of it let that garbage into the search and the fits,
 * where the last block of the motion took a wrong line from it. */
static double quiet_spread(double *t, size_t ns, size_t bs)
{
    if (bs < 16)
        bs = 16;
    size_t nb = ns / bs;
    if (nb < 3)
        return pl_robust_sd(t, ns);
    double *sd = malloc(nb * sizeof *sd), q = NAN;
    if (!sd)
        return pl_robust_sd(t, ns);
    for (size_t b = 0; b < nb; b++)
        sd[b] = pl_robust_sd(t + b * bs, bs);
    q = pl_median(sd, nb);
    free(sd);
    return q;
}

int pl_fe_common_motion(double *v[2], const double h[2], size_t n, size_t from, double rate,
                        const spans clip[2], pl_frontend_report *rep)
{
    if (n <= from + (size_t)rate)
        return 0;
    /* the level and spread from every k-th sample of the motion */
    diffsig d = {v, {1.0 / h[0], 1.0 / h[1]}, clip, 0, 0, {0, 0}};
    size_t step = (n - from) / 20000 + 1, ns = 0;
    double *t = malloc(((n - from) / step + 1) * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = from; i < n; i += step) {
        double e;
        if (diff_at(&d, i, &e))   /* (sd is 0 yet: only the rails count) */
            t[ns++] = e;
    }
    d.sd = quiet_spread(t, ns, (size_t)(COMMON_BLOCK_S * rate / (double)step));
    d.med = pl_median(t, ns);
    free(t);
    double f[PL_FRONTEND_MAX_LINES], df = 0;
    decimated z = {0};
    size_t nl = 0;
    int rc = decimate(&d, from, n, rate, &z);
    if (rc == 0) {
        /* The lines of the whole motion, and those of its clean stretches
         * alone.  Where a beam clips for most of a run, every 2 s segment
         * holds clipped gaps, whose held values spread broadband steps
         * over the spectrum: a 6.4 Hz line of 1.3 mm/s and one of 21 Hz
         * went unseen on faulted corpus seed 86, which 1.6 s before the
         * clipping show at once.  The clean search alone lost lines the
         * whole one finds (seed 107: 0.7 s clean, 0.5 s segments); the
         * two together won seeds 21 and 86 and lost none. */
        nl = common_lines(&z, 0, f, PL_FRONTEND_MAX_LINES, &df);
        double fc[PL_FRONTEND_MAX_LINES], dfc = 0;
        size_t nc = common_lines(&z, 1, fc, PL_FRONTEND_MAX_LINES, &dfc);
        for (size_t j = 0; j < nc && nl < PL_FRONTEND_MAX_LINES; j++) {
            int dup = 0;
            for (size_t l = 0; l < nl; l++)
                dup |= fabs(fc[j] - f[l]) < 2 * fmax(df, dfc);
            if (!dup)
                f[nl++] = fc[j];
        }
    }
    if (rc == 0 && nl > 0)
        rc = refine_lines(&z, f, nl, df);
    if (rc == 0 && nl > 0)
        rc = split_lines(&z, f, &nl, PL_FRONTEND_MAX_LINES, df, d.sd);
    free(z.x);
    free(z.cnt);
    if (rc == 0 && nl > 0) {
        double to_u = h[0] * h[1] / (h[1] - h[0]);
        rc = remove_common(v, &d, n, from, n, rate, f, nl, to_u, rep->common_amp_mps,
                           &rep->common_rms_mps);
        rep->n_common = nl;
        memcpy(rep->common_hz, f, nl * sizeof *f);
    }
    return rc;
}

