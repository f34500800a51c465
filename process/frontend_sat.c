/* process/frontend_sat.c - a beam held flat at a level that is not its
 * converter's rail (a decoder past its velocity range): found from the
 * other beam, which keeps turning, and handed to the clipped stretches'
 * carry.  See frontend_sat.h and docs/process.md section 1
 * ("Saturation inside the converter's range"). */
#include "process/frontend_sat.h"

#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

/* The plateau: samples within SAT_BAND noise standard deviations of the
 * channel's extreme.  The extreme of noise on a flat level lies about
 * 4.5 standard deviations above it on a few seconds of samples, so the
 * band holds the plateau's samples all but never missed; a beam in
 * range passes through it only for a moment, except at its own peak. */
#define SAT_BAND 8.0
/* At least SAT_MIN_S of the plateau: a few impacts' worth, far more than
 * a peak of the motion spends within the band. */
#define SAT_MIN_S 0.020
/* The other beam beyond the plateau by more than SAT_EXCESS of the
 * difference's noise and SAT_SHARE of the level (median over the
 * plateau's samples): at a beam's own peak the other beam is at its peak
 * too, and the excess is noise. */
#define SAT_EXCESS 10.0
#define SAT_SHARE 0.02

/* Channel c's plateau, if the other beam says it is one: its stretches
 * into clip (none there before) and its level into *lvl. */
static int plateau(double *v[2], const double h[2], size_t n, int c, double rest, double rate,
                   spans *clip, double *lvl)
{
    const double *x = v[c], *y = v[1 - c];
    double hi = x[0], lo = x[0];
    for (size_t i = 1; i < n; i++) {
        hi = x[i] > hi ? x[i] : hi;
        lo = x[i] < lo ? x[i] : lo;
    }
    /* the extreme far from rest: a held beam is held where it moves most */
    int s = hi - rest >= rest - lo ? 1 : -1;
    double ext = s > 0 ? hi : lo;
    double sd = pl_robust_spread(x, NULL, 1, 1, 0, n, 1);
    double sdo = pl_robust_spread(y, NULL, 1, 1, 0, n, 1);
    if (!(sd > 0) || !(sdo >= 0) || !(s * (ext - rest) > 100 * sd))
        return 0;
    double edge = ext - s * SAT_BAND * sd;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += s * (x[i] - edge) > 0;
    if ((double)cnt < SAT_MIN_S * rate)
        return 0;
    /* the plateau's level and the other beam beyond it, over at most
     * 4096 of its samples spread over it */
    enum { TAKE = 4096 };
    double *t = malloc(2 * TAKE * sizeof *t), *u = t + TAKE;
    if (!t)
        return -1;
    size_t step = cnt / TAKE + 1, m = 0, seen = 0;
    for (size_t i = 0; i < n && m < TAKE; i++)
        if (s * (x[i] - edge) > 0 && seen++ % step == 0) {
            t[m] = x[i];
            u[m++] = s * (y[i] / h[1 - c] - x[i] / h[c]);
        }
    double level = pl_median(t, m), excess = pl_median(u, m);
    free(t);
    double noise_e = hypot(sd / h[c], sdo / h[1 - c]);
    if (!(excess > SAT_EXCESS * noise_e && excess > SAT_SHARE * fabs(level - rest) / h[c]))
        return 0;
    /* the stretches: plateau samples no more than 0.5 ms apart (noise
     * dips out of the band now and then; an impact that drops the beam
     * below its limit for longer is data) */
    size_t merge = (size_t)ceil(0.0005 * rate), a = 0, last = 0, at = 0;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(s * (x[i] - edge) > 0))
            continue;
        if (open && i <= last + merge) {
            last = i;
            at++;
            continue;
        }
        if (open && spans_push(clip, (struct span){a, last + 1, s, at}) != 0)
            return -1;
        a = last = i;
        at = 1;
        open = 1;
    }
    if (open && spans_push(clip, (struct span){a, last + 1, s, at}) != 0)
        return -1;
    *lvl = level;
    return 0;
}

int pl_fe_saturation(double *v[2], const double h[2], size_t n, const double level[2],
                     double rate, spans clip[2], pl_frontend_report *rep)
{
    for (int c = 0; c < 2; c++) {
        rep->sat_level_mps[c] = NAN;
        if (clip[c].n == 0 && n > 1 &&
            plateau(v, h, n, c, level[c], rate, &clip[c], &rep->sat_level_mps[c]) != 0)
            return -1;
    }
    return 0;
}
