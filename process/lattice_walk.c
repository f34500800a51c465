/* process/lattice_walk.c - the step statistic D, the seeds and the walk
 * along the lattice (lattice_walk.h). */
#include "process/lattice_walk.h"

#include "process/lattice_arcs.h"
#include "process/robust.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* D(k) for k in [from, to) into d[k - from]: the left line fit (window
 * [k-g-w, k-g)) minus the right one ([k+g, k+g+w)), both evaluated at k.
 * Symmetric windows make a parabola's D vanish, so the arcs between
 * impacts do not count; a downward step of size s gives D about s, and
 * the kink of an impact (speeding up before, slowing down after) adds to
 * it.  Sliding sums, resynced every 1024 samples so that rounding cannot
 * build up.  The caller keeps [from-g-w, to+g+w) inside the data. */
void pl_lat_step_statistic(const double *y, size_t g, size_t w, size_t from,
                           size_t to, double *d, double *rss)
{
    double s0 = (double)w, st = 0, stt = 0;
    for (size_t t = 0; t < w; t++) {
        st += (double)t;
        stt += (double)t * t;
    }
    double idet = 1.0 / (s0 * stt - st * st), is0 = 1.0 / s0;
    double syL = 0, styL = 0, syR = 0, styR = 0, yyL = 0, yyR = 0;
    for (size_t k = from, resync = 0; k < to; k++, resync--) {
        size_t aL = k - g - w, aR = k + g;
        if (resync == 0) {
            resync = 1024;
            syL = styL = syR = styR = yyL = yyR = 0;
            for (size_t t = 0; t < w; t++) {
                syL += y[aL + t];
                styL += (double)t * y[aL + t];
                yyL += y[aL + t] * y[aL + t];
                syR += y[aR + t];
                styR += (double)t * y[aR + t];
                yyR += y[aR + t] * y[aR + t];
            }
        } else {
            double outL = y[aL - 1], inL = y[aL + w - 1];
            styL = styL - syL + outL + (double)(w - 1) * inL;
            syL += inL - outL;
            yyL += inL * inL - outL * outL;
            double outR = y[aR - 1], inR = y[aR + w - 1];
            styR = styR - syR + outR + (double)(w - 1) * inR;
            syR += inR - outR;
            yyR += inR * inR - outR * outR;
        }
        double slL = (s0 * styL - st * syL) * idet, icL = (syL - slL * st) * is0;
        double slR = (s0 * styR - st * syR) * idet, icR = (syR - slR * st) * is0;
        d[k - from] = (icL + slL * (double)(g + w)) - (icR - slR * (double)g);
        /* least squares: y'y - b'X'y on each side */
        if (rss)
            rss[k - from] = (yyL - icL * syL - slL * styL) + (yyR - icR * syR - slR * styR);
    }
}

/* The noise of D per unit noise of omega: D is the difference of two
 * independent line extrapolations across the gap. */
double pl_lat_d_noise_gain(size_t g, size_t w)
{
    double tbar = 0.5 * (double)(w - 1), stt = 0;
    for (size_t t = 0; t < w; t++)
        stt += ((double)t - tbar) * ((double)t - tbar);
    double x0 = (double)(g + w) - tbar;   /* from the window's mean to k */
    return sqrt(2.0 * (1.0 / (double)w + x0 * x0 / stt));
}

/* White noise of omega per sample over the window, from first
 * differences: the arcs and the rare steps hardly move their median
 * spread. */
static double white_noise(const double *om, size_t a, size_t b)
{
    return pl_robust_spread(om, NULL, 1, 1, a, b, 1);
}

/* D's peak within [a, b) samples, and a centre for the step: among the
 * samples where D stands above half its peak, the one whose two windows
 * fit their lines best.  Neither window then holds the transition, so the
 * step lies within D's gap of it, whatever the kink does to D's shape. */
static int d_peak(const walk *wk, double a, double b, double *z, double *centre)
{
    size_t lo = a > (double)(wk->release + wk->g + wk->w) ? (size_t)a
                                                          : wk->release + wk->g + wk->w;
    size_t hi = (size_t)b;
    if (hi + wk->g + wk->w >= wk->end)
        hi = wk->end - wk->g - wk->w - 1;
    if (hi <= lo + 2)
        return -1;
    double *d = malloc(2 * (hi - lo) * sizeof *d), *rss = d ? d + (hi - lo) : NULL;
    if (!d)
        return -1;
    pl_lat_step_statistic(wk->om, wk->g, wk->w, lo, hi, d, rss);
    size_t best = lo;
    for (size_t k = lo; k < hi; k++)
        if (d[k - lo] > d[best - lo])
            best = k;
    double peak = d[best - lo];
    size_t at = best;
    for (size_t k = lo; k < hi; k++)
        if (d[k - lo] >= 0.5 * peak && rss[k - lo] < rss[at - lo])
            at = k;
    free(d);
    *z = peak / wk->noise_d;
    *centre = (double)at;
    return 0;
}

/* Measures the slot predicted at sample tp, the last one `interval`
 * samples away: its D peak within 15 % of an interval (at least one and a
 * half gaps) says whether the step stands above the noise (confirmed);
 * its instant is located whether it does or not, from D's centre when
 * confirmed and from the prediction when not.  Keeping the weak slots'
 * instants matters: the confirmation test and the instant share noise
 * (D's window overlaps the instant's gap), so a mean over confirmed slots
 * alone would lean late. */
static void measure_slot(const walk *wk, double tp, double interval, slot *s)
{
    double half = fmax(0.15 * interval, 1.5 * (double)wk->g);
    double z = 0, centre = tp;
    s->confirmed = s->measured = 0;
    s->tc = tp;
    s->z = 0;
    /* D needs its gap and window either side of the step */
    double reach = (double)(2 * wk->g + wk->w) + 2;
    int has_d = tp - reach > (double)wk->release && tp + reach < (double)wk->end &&
                d_peak(wk, tp - half, tp + half + 1, &z, &centre) == 0;
    if (has_d) {
        s->z = z;
        s->confirmed = z >= wk->conf;
        if (s->confirmed)
            s->tc = centre;   /* until the instant is located */
    }
    step_fit f;
    int found = pl_lat_locate(wk, s->confirmed ? centre : tp, interval, &f) == 0;
    /* Near the ends, before the ringing is taken out, re-centring can keep
     * hopping within the gap where the shortened window leaves it nothing
     * to settle on: one fit at the prediction then says whether a step is
     * there (the passes after the ringing locate it again). */
    if (!found && !has_d)
        found = pl_lat_fit_arcs(wk, (size_t)llround(tp), pl_lat_arc_window(wk, interval), NULL,
                                &f) == 0;
    if (!found || fabs(f.tc - tp) > half + (double)wk->G)
        return;
    if (!has_d) {
        /* Within D's 6 ms of either end of the window D cannot be formed,
         * yet the arcs can (down to 4 samples past the gap): a recording
         * that stops 5 ms after a landing still shows it.  There the step
         * of the arcs against its own standard error stands in for D. */
        double se = sqrt(f.var_wm + f.var_wp);
        s->z = se > 0 && isfinite(se) ? (f.wm - f.wp) / se : 0;
        s->confirmed = s->z >= wk->conf;
    }
    s->measured = 1;
    s->tc = f.tc;
    double om = 0.5 * (f.wm + f.wp);
    s->theta = theta_at(wk, f.tc);
    s->var_theta = f.var_tc * om * om;
}

/* Walks from the seed in direction dir (+1, -1), appending slots to out
 * until the lattice leaves the window.  The spacing in measured theta is
 * 2 pi / N times a scale that follows the confirmed slots: a calibration
 * off by a per cent shifts every slot's angle by that much of a slot. */
static int walk_dir(const walk *wk, const slot *seed, int dir, slots *out)
{
    slot last = *seed;
    double scale = 1.0, lost = 0;   /* lost: unconfirmed slots since last */
    size_t minw = 4 + wk->G;
    /* No two landings come within minw samples of each other (the step
     * needs its gap either side): more slots than that in the window is a
     * lattice far finer than the data, as a calibration 100 times too
     * large makes it, and the walk stops there rather than take memory
     * without bound (24 GB before the speed check, issue 44). */
    size_t most = out->n + (wk->end - wk->release) / minw + 2;
    for (long k = seed->k + dir; out->n < most; k += dir) {
        double th = last.theta + dir * (lost + 1) * wk->delta * scale;
        double tp = pl_lat_time_of_theta(wk, th, (size_t)last.tc, dir);
        /* From rest the first face lands after the prism has turned
         * through its release angle, somewhere in (0, 2 pi / N]: a slot at
         * a small positive angle is an impact, one at or below zero is
         * before the release. */
        if (th < 0.03 * wk->delta || isnan(tp) || tp < (double)(wk->release + minw) ||
            tp + (double)minw > (double)wk->end)
            break;
        double interval = fabs(tp - last.tc) / (lost + 1);
        slot s = {.k = k};
        measure_slot(wk, tp, interval, &s);
        if (!s.measured) {
            s.theta = th;
            s.var_theta = INFINITY;
        }
        if (!s.confirmed) {
            lost++;
        } else {
            double sc = (s.theta - last.theta) * dir / ((lost + 1) * wk->delta);
            if (sc > 0.9 && sc < 1.1)
                scale = 0.8 * scale + 0.2 * sc;
            last = s;
            lost = 0;
        }
        if (pl_lat_push(out, s) != 0)
            return -1;
    }
    return 0;
}

/* The seeds: the highest D peaks of the window that measure as steps.
 * Each block of the window offers its highest peak; the peaks are tried
 * from the highest down, so that one artefact (a spike the front end
 * left, the prism leaving the beams) cannot stop the search. */
typedef struct {
    double d;
    size_t at;
} peak;

typedef struct {
    peak *pk;       /* the blocks' peaks, highest first */
    size_t n;       /* how many */
    size_t next;    /* the first not yet tried */
} seeds;

static int cmp_peak(const void *a, const void *b)
{
    double x = ((const peak *)a)->d, y = ((const peak *)b)->d;
    return x > y ? -1 : x < y;
}

/* Ranks the blocks' peaks into sd (sd->n 0 when the window is too short
 * to hold a step); -1 when out of memory.  At most SEED_BLOCKS blocks,
 * evenly spread, are searched: a seed needs only a clear step, and only
 * the first few peaks are ever tried (seeds_next()), so a long run need
 * not have D formed over all of it (a sixth of a ten-minute run's time,
 * on one thread); a run up to 64 blocks (105 s at 10 kHz) is searched
 * whole. */
enum { SEED_BLOCK = 16384, SEED_BLOCKS = 64 };

static int seeds_rank(const walk *wk, seeds *sd)
{
    size_t ext = wk->g + wk->w, lo = wk->release + 2 * ext + wk->G + wk->W,
           hi = wk->end > 2 * ext + wk->G + wk->W ? wk->end - 2 * ext - wk->G - wk->W : 0;
    *sd = (seeds){NULL, 0, 0};
    if (hi <= lo)
        return 0;
    size_t all = (hi - lo + SEED_BLOCK - 1) / SEED_BLOCK;
    size_t nb = all < SEED_BLOCKS ? all : SEED_BLOCKS;
    double *d = malloc(SEED_BLOCK * sizeof *d);
    peak *pk = malloc(nb * sizeof *pk);
    if (!d || !pk) {
        free(d);
        free(pk);
        return -1;
    }
    for (size_t i = 0; i < nb; i++) {
        size_t a = lo + i * all / nb * SEED_BLOCK, b = a + SEED_BLOCK < hi ? a + SEED_BLOCK : hi;
        pl_lat_step_statistic(wk->om, wk->g, wk->w, a, b, d, NULL);
        pk[i] = (peak){-INFINITY, a};
        for (size_t k = a; k < b; k++)
            if (d[k - a] > pk[i].d)
                pk[i] = (peak){d[k - a], k};
    }
    free(d);
    qsort(pk, nb, sizeof *pk, cmp_peak);
    /* Of the peaks within a fifth of the highest, the one nearest the
     * window's middle is tried first: the walk's two ways from the seed
     * run on two threads, and a run that rolls at a steady speed has its
     * highest peak anywhere (on the bench's ten minutes, 64 % of the way
     * through: the longer way then took two thirds of the walk).  A run
     * that speeds up keeps its highest, late peak. */
    size_t mid = lo + (hi - lo) / 2, pick = 0;
    for (size_t i = 1; i < nb && pk[i].d >= 0.8 * pk[0].d; i++)
        if ((pk[i].at > mid ? pk[i].at - mid : mid - pk[i].at) <
            (pk[pick].at > mid ? pk[pick].at - mid : mid - pk[pick].at))
            pick = i;
    peak first = pk[pick];
    memmove(pk + 1, pk, pick * sizeof *pk);
    pk[0] = first;
    *sd = (seeds){pk, nb, 0};
    return 0;
}

/* The next seed, from the peaks after the last one taken; -1 when none
 * is left. */
static int seeds_next(const walk *wk, seeds *sd, slot *seed)
{
    enum { TRIES = 32 };
    for (size_t i = sd->next; i < sd->n && i < TRIES; i++) {
        size_t at = sd->pk[i].at;
        double interval = wk->delta / fmax(fabs(wk->om[at]), 1e-3) * wk->rate;
        slot s = {.k = 0};
        measure_slot(wk, (double)at - (double)wk->g, interval, &s);
        if (s.confirmed && (s.measured || i + 1 == sd->n || i + 1 == TRIES)) {
            /* the last resort: D's centre of a clear step, located again
             * once the ringing is known */
            if (!s.measured)
                s.theta = theta_at(wk, s.tc);
            *seed = s;
            sd->next = i + 1;
            return 0;
        }
    }
    sd->next = sd->n;
    return -1;
}

static int cmp_slot(const void *a, const void *b)
{
    long x = ((const slot *)a)->k, y = ((const slot *)b)->k;
    return x < y ? -1 : x > y;
}

/* The slots from the seed both ways, in order, less the trailing ones
 * that show no step: every slot between the release and the last
 * confirmed one is an impact (the prism turned through it); after the
 * last confirmed slot the data may have ended (the prism left the beams,
 * the run was cut), so a slot there needs some evidence of its own. */
typedef struct {
    const walk *wk;
    const slot *seed;
    slots out;
    int rc;
} half_walk;

static void *walk_up(void *p)
{
    half_walk *h = p;
    h->rc = walk_dir(h->wk, h->seed, 1, &h->out);
    return NULL;
}

/* The walk both ways from the seed.  Each way depends only on the seed
 * and the signal, so with more than one thread the way up runs beside
 * the way down (the same slots on any count). */
static int walk_all(const walk *wk, const slot *seed, double conf, slots *sl,
                    size_t *m)
{
    half_walk up = {wk, seed, {0}, 0};
    pthread_t tid;
    int par = wk->threads != 1 && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
              pthread_create(&tid, NULL, walk_up, &up) == 0;
    int rc = pl_lat_push(sl, *seed) != 0 || walk_dir(wk, seed, -1, sl) != 0;
    if (par)
        pthread_join(tid, NULL);
    else
        walk_up(&up);
    for (size_t i = 0; rc == 0 && up.rc == 0 && i < up.out.n; i++)
        rc = pl_lat_push(sl, up.out.v[i]);
    free(up.out.v);
    if (rc != 0 || up.rc != 0)
        return -1;
    qsort(sl->v, sl->n, sizeof *sl->v, cmp_slot);
    size_t b = sl->n;
    while (b > 0 && !sl->v[b - 1].confirmed &&
           !(sl->v[b - 1].measured && sl->v[b - 1].z >= 0.5 * conf) &&
           !wk->end_seen)
        b--;
    *m = b;
    return 0;
}

/* D's noise measured on D itself over the lead-in [0, quiet), where the
 * prism is at rest and only the LDV chain speaks: 1.4826 x its median
 * absolute deviation (0 when the lead-in is too short).  quiet is the
 * line's release (process/window.h), not the release the shape fit
 * places: that lies earlier or, where the line met zero at the start,
 * later, and the noise figure must not move with it.  The white noise from
 * first differences (white_noise()) does not see 1/f noise, which moves
 * the two lines D compares as a whole: on a chain with 14 um/s of white
 * and 195 um/s of 1/f noise every bend of the 1/f noise stood 100-300
 * such noise units high and was taken for a step, up to 10 ms from the
 * impact it stood in for. */
static double lead_in_d_noise(const walk *wk)
{
    size_t ext = wk->g + wk->w, from = ext + 1, to = wk->quiet > ext + 1 ? wk->quiet - ext - 1 : 0;
    if (to <= from + 64)
        return 0;
    double *d = malloc((to - from) * sizeof *d);
    if (!d)
        return 0;
    pl_lat_step_statistic(wk->om, wk->g, wk->w, from, to, d, NULL);
    double sd = pl_robust_sd(d, to - from);
    free(d);
    return sd > 0 ? sd : 0;
}

void pl_lat_noise(walk *wk)
{
    wk->noise_om = white_noise(wk->om, wk->release, wk->end);
    wk->noise_d = fmax(wk->noise_om * pl_lat_d_noise_gain(wk->g, wk->w), lead_in_d_noise(wk));
    if (!(wk->noise_d > 0))
        wk->noise_d = 1e-12;   /* a noise-free signal: every step stands out */
}

/* An artefact can pass for the strongest step and put the lattice
 * out of phase: then few of its slots show a step.  Up to four seeds
 * are tried, and the walk that confirms most is kept. */
int pl_lat_walk_best(const walk *wk, slots *sl, size_t *m, slot *seed, int *tried)
{
    size_t best_conf = 0;
    seeds ranked;
    int ok = seeds_rank(wk, &ranked) == 0;
    *tried = 0;
    for (int attempt = 0; ok && attempt < 4; attempt++) {
        slot sd;
        if (seeds_next(wk, &ranked, &sd) != 0)
            break;
        slots cand = {0};
        size_t mc = 0, conf = 0;
        ok = walk_all(wk, &sd, wk->conf, &cand, &mc) == 0;
        for (size_t i = 0; ok && i < mc; i++)
            conf += cand.v[i].confirmed;
        if (ok && (!*tried || conf > best_conf)) {
            free(sl->v);
            *sl = cand;
            *m = mc;
            *seed = sd;
            best_conf = conf;
        } else {
            free(cand.v);
        }
        *tried = 1;
        if (2 * best_conf >= *m)
            break;
    }
    free(ranked.pk);
    return ok ? 0 : -1;
}
