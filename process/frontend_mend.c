/* process/frontend_mend.c - the front end's room for what one beam or
 * both did not measure: the clipped stretches at a channel's rails,
 * drop-outs bridged from the other beam, a beam lost and carried by the
 * other, and the motion's end where both are lost.  See frontend_mend.h
 * and docs/process.md section 1. */
#include "process/frontend_mend.h"

#include "core/pair.h"
#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

static inline double dmax(double x, double y) { return x > y ? x : y; }


static int spans_add(spans *l, size_t a, size_t b, int sign)
{
    if (l->n > 0 && a <= l->s[l->n - 1].b) {   /* touching: one stretch */
        if (b > l->s[l->n - 1].b)
            l->s[l->n - 1].b = b;
        return 0;
    }
    return spans_push(l, (struct span){a, b, sign, 0});
}


/* The samples of v at one of its rails: its highest or lowest value,
 * when that value lies far from the resting level `rest` (at least half
 * of the channel's widest swing: a clipped channel is clipped where it
 * moves most), is held for CLIP_HOLD samples in a row somewhere, and
 * occurs CLIP_MIN times in all.  A converter at its limit returns its
 * extreme code for as long as the input stays beyond it; a signal in
 * range reaches its extreme value once or twice, never as a plateau.
 * Stretches closer than `merge` samples join (the few samples between
 * two stretches at a rail are where the input dipped just inside it);
 * each stretch counts its samples at the rail.  -1 when out of memory. */
#define CLIP_HOLD 3
#define CLIP_MIN 8
/* The clipped stretch's carry is joined to the channel's own velocity
 * over CLIP_EDGE_S either side, not a drop-out's millisecond: a clipped
 * stretch ends where an impact drops the beam below its rail, and the
 * millisecond after it holds the impact's ringing and the decoders'
 * step responses (faulted corpus: 191 of 200 chains with 1 ms, 194 with
 * 3 ms, 192 with 5 and 10; seeds 201-400: 185, 188). */
#define CLIP_EDGE_S 0.003

static int find_clips(const double *v, size_t n, double rest, size_t merge, spans *out)
{
    if (n == 0)
        return 0;
    /* the extremes, then how often each occurs, then (rarely: a signal
     * in range reaches its extreme a few times) its longest run: three
     * plain loops cost less than one that branches on every sample */
    double hi = v[0], lo = v[0];
    for (size_t i = 1; i < n; i++) {
        hi = v[i] > hi ? v[i] : hi;
        lo = v[i] < lo ? v[i] : lo;
    }
    size_t total[2] = {0, 0}, longest[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        total[0] += v[i] == hi;
        total[1] += v[i] == lo;
    }
    for (int r = 0; r < 2; r++) {
        double x = r ? lo : hi;
        for (size_t i = 0, run = 0; total[r] >= CLIP_MIN && i < n; i++) {
            run = v[i] == x ? run + 1 : 0;
            longest[r] = run > longest[r] ? run : longest[r];
        }
    }
    double swing = dmax(fabs(hi - rest), fabs(lo - rest));
    double rail[2] = {hi, lo};
    int use[2];
    for (int r = 0; r < 2; r++)
        use[r] = fabs(rail[r] - rest) >= 0.5 * swing && swing > 0 && total[r] >= CLIP_MIN &&
                 longest[r] >= CLIP_HOLD;
    if (!use[0] && !use[1])
        return 0;
    size_t a = 0, last = 0, count = 0;
    int open = 0, sign = 0;
    for (size_t i = 0; i < n; i++) {
        int at = use[0] && v[i] == hi ? 1 : use[1] && v[i] == lo ? -1 : 0;
        if (!at)
            continue;
        if (open && i <= last + merge && at == sign) {
            /* only across samples near the rail: a drop-out to 0 V
             * between two clipped stretches is not at a rail */
            double half = 0.5 * (at > 0 ? hi - rest : rest - lo);
            size_t g = last + 1;
            while (g < i && at * (v[g] - rest) > half)
                g++;
            if (g == i) {
                last = i;
                count++;
                continue;
            }
        }
        if (open && spans_add(out, a, last + 1, sign) != 0)
            return -1;
        if (open)
            out->s[out->n - 1].at = count;
        a = last = i;
        sign = at;
        count = 1;
        open = 1;
    }
    if (open && spans_add(out, a, last + 1, sign) != 0)
        return -1;
    if (open)
        out->s[out->n - 1].at = count;
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

/* Channel `bad` over [a, b) becomes the other's velocity scaled to its
 * height.  The beams differ by their own noise, 1/f noise most: the bad
 * channel's difference from the other's (scaled) at the edges is carried
 * across the stretch as a line, or the bridge would step by it at both
 * edges (about 0.02 rad/s of omega on 200 um/s of 1/f noise, a quarter
 * of a 23-edge prism's step) - a step the impact search could take for
 * the impact beside it.  Only samples where the beams agree to `agree`
 * and neither sits at a rail count at the edges: the next drop-out, not
 * yet bridged, may lie within the millisecond, and a beam back from a
 * loss at its rail read the rail's deficit for the difference, which the
 * clipped stretch after it then carried on to the run's end (faulted
 * corpus seed 174: beam 1 1.4 % slow over its last 1.5 s, every ratio's
 * loss 5-8 % off). */
/* The mean of v[bad][i] - k v[good][i] over the samples i in [lo, hi)
 * where the beams agree to `agree` and neither sits at a rail; NAN when
 * fewer than `need` do: one sample's noise, carried over a stretch that
 * ends a sample before the motion, had put 0.06 rad/s on omega there
 * (faulted corpus seed 13). */
static double edge_offset(double *v[2], const double h[2], size_t lo, size_t hi, double agree,
                          int bad, double k, const spans clip[2], size_t need)
{
    double o = 0;
    size_t m = 0, cur[2] = {0, 0};
    for (size_t i = lo; i < hi; i++)
        if (fabs(v[0][i] / h[0] - v[1][i] / h[1]) <= agree && !clip_at(&clip[0], i, &cur[0]) &&
            !clip_at(&clip[1], i, &cur[1])) {
            o += v[bad][i] - k * v[1 - bad][i];
            m++;
        }
    return m && m >= need ? o / (double)m : NAN;
}

/* The carry (above) with its edges read `gap` samples clear of [a, b). */
static void carry_at(double *v[2], const double h[2], size_t n, size_t a, size_t b, size_t r,
                     size_t gap, double agree, int bad, const spans clip[2])
{
    int good = 1 - bad;
    double k = h[bad] / h[good];
    size_t need = r / 2, a0 = a > gap ? a - gap : 0, b0 = b + gap < n ? b + gap : n;
    double oa = edge_offset(v, h, a0 > r ? a0 - r : 0, a0, agree, bad, k, clip, need);
    double ob = edge_offset(v, h, b0, b0 + r < n ? b0 + r : n, agree, bad, k, clip, need);
    if (isnan(ob))
        ob = oa;
    if (isnan(oa))
        oa = isnan(ob) ? 0 : ob;
    if (isnan(ob))
        ob = oa;
    for (size_t i = a; i < b; i++)
        v[bad][i] = k * v[good][i] + oa + (ob - oa) * (double)(i - a + 1) / (double)(b - a + 1);
}

static void carry(double *v[2], const double h[2], size_t n, size_t a, size_t b, size_t r,
                  double agree, int bad, const spans clip[2])
{
    carry_at(v, h, n, a, b, r, 0, agree, bad, clip);
}

/* A lost beam's carry reads its edges LOST_EDGE_GAP_S clear of the
 * stretch: a decoder losing and finding the prism puts out garbage for a
 * few ms either side, whose tail the stretch's end can fall inside, and
 * whose samples that happened to agree with the other beam set the
 * far edge's offset (faulted corpus seed 246: -0.50 rad/s against the
 * near edge's +0.004, ramped across the 240 ms carried, three impacts
 * 1.5-3 ms off and their ratios 0.02 low). */
#define LOST_EDGE_GAP_S 0.010

/* Both channels over [a, b) follow the line between the beams' common
 * levels at its edges: neither saw the prism, and a bridge this short
 * (at most 20 ms) holds no impact a line would hide for long. */
static void both_line(double *v[2], const double h[2], size_t n, size_t a, size_t b, size_t r)
{
    double la, lb;
    edge_levels(v, h, n, a, b, r, &la, &lb);
    for (size_t i = a; i < b; i++) {
        double lvl = la + (lb - la) * (double)(i - a + 1) / (double)(b - a + 1);
        v[0][i] = lvl * h[0];
        v[1][i] = lvl * h[1];
    }
}

/* Bridges the drop-out [a, b) of at most 20 ms: the channel that left
 * the common level is carried by the other; when both left it, both
 * follow the line between the levels at the edges.  Returns the channel
 * carried, or -1 for the line. */
static int bridge(double *v[2], const double h[2], size_t n, size_t a, size_t b,
                   size_t r, double thr, double agree, const spans clip[2],
                   pl_frontend_report *rep, double rate)
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
        both_line(v, h, n, a, b, r);
        rep->both_out += pl_fe_counted(rep, a);
        return -1;
    }
    int bad = dev[0] > dev[1] ? 0 : 1;
    carry(v, h, n, a, b, r, agree, bad, clip);
    if (pl_fe_counted(rep, a)) {
        rep->dropouts[bad]++;
        rep->dropout_s[bad] += (double)(b - a) / rate;
    }
    return bad;
}

/* How much rougher than over the 20 ms before a beam must be to have lost
 * the prism: lost_beam(). */
#define LOST_ROUGH 10.0

/* Over a stretch longer than a bridge the common level is no line: the
 * prism turns through arcs and impacts.  Which beam lost it is told by
 * what no rolling prism does: a level far from the motion's on both
 * sides of the stretch (a decoder at 0 V: v / h below a third of the
 * edges' level), or a roughness (mean |v[i+1] - v[i]| / h) many times
 * the other beam's (speckle garbage).  ref: the beams' common level
 * before the stretch, whose sign is the motion's (0: the edges'); clip:
 * the channels' samples at a rail.  Returns the channel (0 or 1) that lost the prism, -2 when both did,
 * -1 when neither can be told. */
static int lost_beam(double *v[2], const double h[2], size_t n, size_t a, size_t b, size_t r,
                     double ref, const spans clip[2])
{
    double la, lb;
    edge_levels(v, h, n, a, b, r, &la, &lb);
    double lvl = fmax(fabs(la), fabs(lb)), m[2] = {0, 0}, rough[2] = {0, 0}, before[2];
    size_t w = 20 * r, a0 = a > w ? a - w : 0, held[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        size_t cur = 0;
        for (size_t i = a; i < b; i++) {
            m[c] += v[c][i] / h[c];
            if (i + 1 < b)
                rough[c] += fabs(v[c][i + 1] - v[c][i]) / h[c];
            held[c] += clip_at(&clip[c], i, &cur) != 0;
        }
        m[c] /= (double)(b - a);
        rough[c] /= (double)(b - a);
        before[c] = 0;
        for (size_t i = a0; i + 1 < a; i++)
            before[c] += fabs(v[c][i + 1] - v[c][i]) / h[c];
        before[c] = a > a0 + 1 ? before[c] / (double)(a - a0 - 1) : INFINITY;
    }
    /* out: at a level the motion never had, or rough beside the other
     * beam, or beside itself over the 20 ms before: speckle garbage in
     * both beams as the prism leaves them is as rough in each, and a beam
     * lost the moment it began (at a rail, then garbage) left the other's
     * garbage to be carried as the motion (seed 323: 32 ms, L_p +0.17 %) */
    /* (the level in the motion's own sense: a mean of the other sign is
     * no rolling prism's, as beam 2's garbage at -2.4 rad/s against the
     * motion's 3.5 carried as the motion for 110 ms on faulted corpus
     * seed 741) */
    /* (a level the motion never had above it too, held flat: a decoder
     * held at its rail read 2.8 times the motion's level on a lost beam
     * injected into a foreign run, where a clipped beam reads at most the
     * motion; held, at its rail over most of the stretch, as the motion
     * grows by more than half over a stretch that runs to the recording's
     * end; and rough
     * beside the other beam only where rougher than itself before as
     * well: a decoder at 0 V is smoother than any beam that sees the
     * prism, which then read as rough beside it, and the run ended at a
     * loss the other beam carried) */
    int out[2];
    double sense = (ref != 0 ? ref : la + lb) < 0 ? -1 : 1;
    for (int c = 0; c < 2; c++)
        out[c] = sense * m[c] < lvl / 3 ||
                 (sense * m[c] > 1.5 * lvl && 2 * held[c] > b - a) ||
                 (rough[c] > 5 * rough[1 - c] && rough[c] > 2 * before[c]) ||
                 rough[c] > LOST_ROUGH * before[c];
    if (out[0] == out[1])
        return out[0] ? -2 : -1;
    return out[0] ? 0 : 1;
}

static void note_lost(pl_frontend_report *rep, int c, size_t a, size_t b, double rate)
{
    if (!pl_fe_counted(rep, a))
        return;
    if (rep->n_lost < PL_FRONTEND_MAX_SPANS)
        rep->lost[rep->n_lost] = (pl_beam_span){c + 1, (double)a / rate, (double)b / rate};
    rep->n_lost++;
    rep->lost_total_s += (double)(b - a) / rate;
}

/* The next stretch [*a, *b) where both channels' clipped stretches
 * overlap, walking the two ordered lists with the cursors *i and *j
 * (both 0 at the start); 0 when there is none left. */
static int both_clipped_next(const spans clip[2], size_t *i, size_t *j, size_t *a, size_t *b)
{
    while (*i < clip[0].n && *j < clip[1].n) {
        const struct span *x = &clip[0].s[*i], *y = &clip[1].s[*j];
        *a = x->a > y->a ? x->a : y->a;
        *b = x->b < y->b ? x->b : y->b;
        if (x->b < y->b)
            ++*i;
        else
            ++*j;
        if (*b > *a)
            return 1;
    }
    return 0;
}

/* Both beams at their rails together for longer than a bridge before
 * the motion's end: no beam saw the prism there, and a line over an
 * impact would hide it (speckle garbage after the prism left may reach
 * the rails: that is no clipping of the motion). */
static pl_status clips_refused(const spans clip[2], double rate, size_t max_len, size_t end,
                               pl_err *err)
{
    size_t i = 0, j = 0, a, b;
    while (both_clipped_next(clip, &i, &j, &a, &b))
        if (b - a > max_len && a < end)
            return pl_err_set(err, PL_ENUMERIC, "both beams sit at their rails together "
                              "from %.4f s to %.4f s (%.1f ms, longer than a %.0f ms "
                              "bridge): clipped (widen the LDV's velocity range or the "
                              "DAQ's input range)", (double)a / rate, (double)b / rate,
                              1e3 * (double)(b - a) / rate, 1e3 * (double)max_len / rate);
    return PL_OK;
}

/* The clipped stretches that begin before the motion's end, each carried
 * by the other beam; where both beams sit at their rails together (at
 * most a bridge, clips_refused() saw to that) both follow a line.  No
 * edge offset is read past the motion's end: a stretch that runs into it
 * found its far edge in the speckle garbage after, and the carried beam
 * followed the garbage's mean over 1.4 s (faulted corpus seed 430: the
 * tops' slope 1.6 % off, every ratio's loss 3.8 % off). */
static void carry_clips(double *v[2], const double h[2], size_t n, double rate,
                        const spans clip[2], size_t r, double agree, size_t end,
                        pl_frontend_report *rep)
{
    for (int c = 0; c < 2; c++)
        for (size_t k = 0; k < clip[c].n && clip[c].s[k].a < end; k++) {
            size_t a = clip[c].s[k].a, b = clip[c].s[k].b;
            carry(v, h, end < n ? end : n, a, b, r, agree, c, clip);
            if (!pl_fe_counted(rep, a))
                continue;
            rep->clipped[c] += clip[c].s[k].at;
            rep->clip_spans[c]++;
            if (rep->clip_spans[c] == 1)
                rep->clip_from_s[c] = (double)a / rate;
            rep->clip_to_s[c] = (double)b / rate;
        }
    /* where both were clipped the second carry copied a clipped value */
    size_t i = 0, j = 0, a, b;
    while (both_clipped_next(clip, &i, &j, &a, &b)) {
        both_line(v, h, n, a, b, r);
        rep->both_out += pl_fe_counted(rep, a);
    }
}

/* The beams' disagreement at a sample where they read a[0] = v1/h1 and
 * a[1] = v2/h2, a clipped sample counting as the bound it is: a channel
 * at its top rail read at most the prism's speed, so it disagrees only
 * with another beam below it (at the bottom rail, above it); both
 * clipped say nothing.  *lvl receives the larger |a| of the channels not
 * clipped (both when neither is).  Inline: it runs on every sample. */
static inline double disagreement(const double a[2], const int cs[2], double *lvl)
{
    double d = a[0] - a[1];
    if (!cs[0] && !cs[1]) {
        *lvl = dmax(fabs(a[0]), fabs(a[1]));
        return fabs(d);
    }
    if (cs[0] && cs[1]) {
        *lvl = 0;
        return 0;
    }
    if (cs[0]) {
        *lvl = fabs(a[1]);
        return cs[0] * d > 0 ? fabs(d) : 0;
    }
    *lvl = fabs(a[0]);
    return cs[1] * d < 0 ? fabs(d) : 0;
}


/* Every beam not at a rail far below the motion's level `ref`: both
 * decoders at 0 V together (two drop-outs that coincide, or one in the
 * beam that carries a lost or clipped one), which no disagreement
 * shows.  The motion never loses two thirds of its speed in the 2 ms
 * that ref lags. */
static inline int both_fell(const double a[2], const int cs[2], double ref, double floor_e)
{
    return !(cs[0] && cs[1]) && ref > 3 * floor_e && (cs[0] || fabs(a[0]) < 0.3 * ref) &&
           (cs[1] || fabs(a[1]) < 0.3 * ref);
}

/* Adds to `unknown` the parts of [a, b) where channel c, which carried
 * the other beam there, held nothing itself: at a rail (a bound only),
 * or fallen below 0.3 of its median |v / h| over the stretch (its own
 * drop-out to 0 V, which the carried beam now repeats).  `pad` samples
 * either side, within [a, b), take the decoder's transitions.  A part
 * longer than max_len is both beams lost: *blind receives its start
 * (when earlier than *blind).  -1 when out of memory. */
static int carrier_gaps(double *v[2], const double h[2], size_t a, size_t b, size_t pad,
                        int c, const spans *clip, size_t max_len, size_t *blind,
                        spans *unknown)
{
    size_t step = (b - a) / 4096 + 1, m = 0, cur = 0;
    double t[4097];
    for (size_t i = a; i < b && m < 4097; i += step)
        if (!clip_at(clip, i, &cur))
            t[m++] = fabs(v[c][i] / h[c]);
    double lvl = m ? pl_median(t, m) : 0;
    size_t x = 0;
    int open = 0;
    for (size_t i = a; i <= b; i++) {
        int gap = i < b && (clip_at(clip, i, &cur) || fabs(v[c][i] / h[c]) < 0.3 * lvl);
        if (gap && !open) {
            x = i;
            open = 1;
        } else if (!gap && open) {
            open = 0;
            if (i - x > max_len && *blind > x)
                *blind = x;
            size_t lo = x > a + pad ? x - pad : a, hi = i + pad < b ? i + pad : b;
            if (spans_add(unknown, lo, hi, 0) != 0)
                return -1;
        }
    }
    return 0;
}

/* A recording that runs on past the motion shows both beams in speckle
 * garbage as the prism leaves: stretches where neither beam holds the
 * common level follow each other within TROUBLE_GAP_S.  TROUBLE_RUN of
 * them in a row, BOTH_OUT_MIN of them with both beams out, is the
 * motion's end, at the first with both out; two coinciding drop-outs of
 * a rolling prism (about one in twenty seconds at 3 drop-outs a second a
 * beam) never come three to 30 ms. */
#define TROUBLE_GAP_S 0.030
#define TROUBLE_RUN 3
#define BOTH_OUT_MIN 2

typedef struct {
    size_t first_both, last_end, count, both;
} trouble;

/* Samples from the last stretch's end to a, 0 where they overlap (the
 * pad makes a stretch begin before the last one ended; the difference of
 * size_t's then wrapped to 2^64 and started a new run, faulted corpus
 * seed 1365: the window ended at the third stretch, 9 ms after the prism
 * left, where the first two had both beams out). */
static double trouble_gap(const trouble *t, size_t a)
{
    return a > t->last_end ? (double)(a - t->last_end) : 0;
}

/* Where the motion ended, for a stretch whose first flagged sample is a
 * and from which neither beam sees the prism any more: at a itself (not
 * the stretch's padded start: the window's end adds its own guard, as
 * at a drop of omega), or at the first stretch with both beams out in
 * the troubled run that led up to it, when it follows that run within
 * TROUBLE_GAP_S (the prism left the beams there, and the garbage it left
 * behind was bridged before its run grew longer than a bridge; a beam's
 * own drop-out just before is no sign of the end). */
static size_t trouble_end(const trouble *t, size_t a, double rate)
{
    return t->both > 0 && trouble_gap(t, a) <= TROUBLE_GAP_S * rate ? t->first_both : a;
}

/* Notes a stretch [a, b) that was bridged (both: both beams out); 1 when
 * it completes the motion's end. */
static int trouble_note(trouble *t, size_t a, size_t b, int both, double rate)
{
    if (t->count == 0 || trouble_gap(t, a) > TROUBLE_GAP_S * rate)
        t->count = t->both = 0;
    if (both && t->both == 0)
        t->first_both = a;
    t->count++;
    t->both += both != 0;
    t->last_end = b;
    return t->count >= TROUBLE_RUN && t->both >= BOTH_OUT_MIN;
}

/* The robust spread of v1/h1 - v2/h2 over [a, b) as pl_robust_spread()
 * measures it, the samples at a rail left out: a clipped beam's distance
 * from the other is the motion beyond the rail, not noise, and counted
 * in it raised the drop-out threshold above every drop-out. */
static double spread_all(double *v[2], const double h[2], size_t a, size_t b,
                               const spans clip[2])
{
    if (clip[0].n == 0 && clip[1].n == 0)
        return pl_robust_spread(v[0], v[1], h[0], h[1], a, b, 0);
    size_t m = b > a + 1 ? b - a - 1 : 0, stride = m > 100000 ? m / 100000 : 1;
    double *t = malloc((m / stride + 1) * sizeof *t);
    if (!t)
        return NAN;
    size_t cnt = 0, cur[2] = {0, 0};
    for (size_t k = a; k + 1 < b; k += stride)
        if (!clip_at(&clip[0], k, &cur[0]) && !clip_at(&clip[1], k, &cur[1]))
            t[cnt++] = v[0][k] / h[0] - v[1][k] / h[1];
    double sd = cnt >= 8 ? pl_robust_sd(t, cnt) : NAN;
    free(t);
    return sd;
}

/* The quietest blocks' spread: SPREAD_BLOCKS blocks of SPREAD_BLOCK_S
 * spread evenly over [a, b), each's robust spread of v1/h1 - v2/h2 (at
 * most 128 samples of it, those at a rail left out), their lower
 * decile.  NaN when too few. */
#define SPREAD_BLOCKS 128
#define SPREAD_BLOCK_S 0.2

static double spread_quiet_blocks(double *v[2], const double h[2], size_t a, size_t b,
                                  const spans clip[2], double rate)
{
    size_t len = (size_t)(SPREAD_BLOCK_S * rate), nb = len ? (b - a) / len : 0;
    if (nb > SPREAD_BLOCKS)
        nb = SPREAD_BLOCKS;
    if (nb < 4)
        return NAN;
    size_t stride = len > 128 ? len / 128 : 1, cur[2] = {0, 0}, got = 0;
    double sd[SPREAD_BLOCKS], t[129];
    for (size_t k = 0; k < nb; k++) {
        size_t s0 = a + k * ((b - a - len) / (nb - 1)), m = 0;
        for (size_t i = s0; i < s0 + len && m < 129; i += stride) {
            int cs[2];
            clips_at(clip, i, cur, cs);
            if (!cs[0] && !cs[1])
                t[m++] = v[0][i] / h[0] - v[1][i] / h[1];
        }
        if (m >= 16)
            sd[got++] = pl_robust_sd(t, m);
    }
    if (got < 4)
        return NAN;
    return pl_select_kth(sd, got, got / 10);
}

/* The drop-outs' noise floor: the spread of the beams' difference over
 * the run (spread_all()), but no more than SPREAD_QUIET times that of
 * its quietest blocks.  A beam lost for most of the run (to its end,
 * say) is most of the difference's samples, and their spread, the
 * motion itself, had set a floor no disagreement reached: a beam lost
 * from 1.64 s to the end of a 5.2 s foreign run was never found, and
 * omega read (v1 - 0) / (h1 - h2), 17 rad/s for 7.  On a run without
 * such a loss the whole run's spread stands (1/f noise makes it larger
 * than a 0.2 s block's, but not by this much). */
#define SPREAD_QUIET 4.0

static double spread_unclipped(double *v[2], const double h[2], size_t a, size_t b,
                               const spans clip[2], double rate)
{
    double all = spread_all(v, h, a, b, clip), quiet = spread_quiet_blocks(v, h, a, b, clip, rate);
    return quiet > 0 && all > SPREAD_QUIET * quiet ? SPREAD_QUIET * quiet : all;
}

/* Finds and bridges the drop-outs from sample `from` on; a stretch
 * longer than a bridge is one beam lost (carried by the other) or both
 * (the motion's end: rep->lost_t_s, and the scan stops).  Clipped
 * samples count as bounds (disagreement() above); where the carrying
 * beam is clipped the stretch goes to `unknown`, to be bridged when
 * the clipped samples have been carried.  -1 when out of memory. */
/* What dropouts() and judge() share over one run. */
typedef struct {
    double **v;
    const double *h;
    size_t n, r, pad, max_len, lost_gap;
    double rate, floor_e, ref;
    const spans *clip;
    spans *unknown;
    pl_frontend_report *rep;
    trouble tb;
} dropctx;

/* Ends the motion at the troubled run's start before flagged sample k. */
static int motion_ends(dropctx *d, size_t k, int fell)
{
    size_t e = trouble_end(&d->tb, k, d->rate);
    d->rep->lost_t_s = (double)e / d->rate;
    d->rep->lost_at_drop = fell && e == k;
    return 1;
}

/* Mends the stretch [a, b) (k its first flagged sample, thr its
 * threshold): a bridge, a carry, or the motion's end.  *carrier the beam
 * that carries it (-1: none), *both whether both beams were out.  1 when
 * the motion ends there, -1 when out of memory, 0 otherwise. */
static int judge(dropctx *d, size_t a, size_t b, size_t k, int fell, const int clipped_in[2],
                 double thr, int *carrier, int *both)
{
    double **v = d->v;
    const double *h = d->h;
    size_t n = d->n, r = d->r, max_len = d->max_len;
    int lng = b - a > max_len;
    *carrier = -1;
    *both = 0;
    if (clipped_in[0] != clipped_in[1]) {
        /* the beam at its rail is the bound the other broke: the other
         * is out, carried where the clipped one holds the level; unless
         * the beam at its rail is the one lost: a lost beam's garbage can
         * touch a rail (faulted corpus seed 693: 18 samples of beam 2's,
         * which then carried the 270 ms it had lost, L_p 2.7 % off), or
         * both are, the prism gone and the garbage of both at their rails
         * now and then (seeds 1126, 1163: one beam's garbage carried as
         * the motion for 75 and 49 ms, and an impact placed in it).  Over
         * a stretch longer than a bridge the beams' own levels and
         * roughness decide. */
        int c = clipped_in[0] ? 0 : 1;
        int lb = lng ? lost_beam(v, h, n, a, b, r, d->ref, d->clip) : -1;
        if (lb == -2)
            return motion_ends(d, k, 0);
        if (lb == c)
            c = 1 - c;
        carry_at(v, h, n, a, b, r, lng ? d->lost_gap : 0, d->floor_e, 1 - c, d->clip);
        if (lng) {
            note_lost(d->rep, 1 - c, a, b, d->rate);
        } else if (pl_fe_counted(d->rep, a)) {
            d->rep->dropouts[1 - c]++;
            d->rep->dropout_s[1 - c] += (double)(b - a) / d->rate;
        }
        *carrier = c;
        return 0;
    }
    if (fell || clipped_in[0]) {
        /* neither beam holds the level: a line when short, else the end;
         * but both at a rail now and then over a long stretch may be one
         * beam lost, its garbage touching its rails, and the other
         * clipping at its arcs' tops (faulted corpus seed 1341: the
         * window ended at beam 2's loss, 7 of 70 impacts, L_p 90 % off):
         * the beams' levels and roughness decide, the carrier's own
         * clipped samples then bridged as any carrier's */
        int lb = lng && !fell ? lost_beam(v, h, n, a, b, r, d->ref, d->clip) : -1;
        if (lb >= 0) {
            carry_at(v, h, n, a, b, r, d->lost_gap, d->floor_e, lb, d->clip);
            note_lost(d->rep, lb, a, b, d->rate);
            *carrier = 1 - lb;
            return 0;
        }
        if (lng)
            return motion_ends(d, k, fell);
        if (spans_add(d->unknown, a, b, 0) != 0)
            return -1;
        d->rep->both_out += pl_fe_counted(d->rep, a);
        *both = 1;
        return 0;
    }
    if (lng) {
        int bad = lost_beam(v, h, n, a, b, r, d->ref, d->clip);
        if (bad < 0)
            return motion_ends(d, k, 0);
        carry_at(v, h, n, a, b, r, d->lost_gap, d->floor_e, bad, d->clip);
        note_lost(d->rep, bad, a, b, d->rate);
        *carrier = 1 - bad;
        return 0;
    }
    int bad = bridge(v, h, n, a, b, r, thr, d->floor_e, d->clip, d->rep, d->rate);
    *both = bad < 0;
    *carrier = bad < 0 ? -1 : 1 - bad;
    return 0;
}

static int dropouts(double *v[2], const double h[2], size_t n, size_t from, double rate,
                    const spans clip[2], spans *unknown, pl_frontend_report *rep)
{
    double sd_e = spread_unclipped(v, h, from, n, clip, rate);
    if (!(sd_e > 0))
        sd_e = 0;
    dropctx d = {v, h, n, (size_t)ceil(0.001 * rate), (size_t)ceil(0.0002 * rate),
                 (size_t)(0.020 * rate), (size_t)ceil(LOST_EDGE_GAP_S * rate), rate,
                 10 * sd_e, 0, clip, unknown, rep, {0, 0, 0, 0}};
    size_t merge = (size_t)ceil(0.0005 * rate), pad = d.pad, cur[2] = {0, 0};
    double floor_e = d.floor_e, alpha = 1.0 / fmax(1, 0.002 * rate);
    double i0 = 1.0 / h[0], i1 = 1.0 / h[1];   /* a multiply a sample, not a divide */
    for (size_t k = from; k < n; k++) {
        int cs[2];
        clips_at(clip, k, cur, cs);
        double ak[2] = {v[0][k] * i0, v[1][k] * i1}, lvl, e = disagreement(ak, cs, &lvl);
        int fell = both_fell(ak, cs, d.ref, floor_e);
        double thr = dmax(floor_e, 0.3 * lvl);
        if (!fell && !(e > floor_e && e > thr && lvl > 0)) {
            /* the common level, from the beams not at a rail */
            double m = cs[0] ? ak[1] : cs[1] ? ak[0] : 0.5 * (ak[0] + ak[1]);
            if (!(cs[0] && cs[1]))
                d.ref += alpha * (m - d.ref);
            continue;
        }
        /* the stretch: flagged samples no more than `merge` apart */
        size_t last = k, j = k + 1;
        int clipped_in[2] = {cs[0] != 0, cs[1] != 0};
        for (; j < n && j <= last + merge; j++) {
            int cj[2];
            clips_at(clip, j, cur, cj);
            double aj[2] = {v[0][j] / h[0], v[1][j] / h[1]}, lj, ej = disagreement(aj, cj, &lj);
            if ((ej > dmax(floor_e, 0.3 * lj) && lj > 0) ||
                both_fell(aj, cj, d.ref, floor_e)) {
                last = j;
                clipped_in[0] |= cj[0] != 0;
                clipped_in[1] |= cj[1] != 0;
            }
        }
        size_t a = k > from + pad ? k - pad : from, b = last + 1 + pad < n ? last + 1 + pad : n;
        int both, carrier, rc = judge(&d, a, b, k, fell, clipped_in, thr, &carrier, &both);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        size_t blind = n;
        if (carrier >= 0 &&
            carrier_gaps(v, h, a, b, pad, carrier, &clip[carrier], d.max_len, &blind, unknown) != 0)
            return -1;
        if (blind < n) {   /* the carrier lost it too: neither beam sees the prism */
            rep->lost_t_s = (double)blind / rate;
            return 0;
        }
        if (trouble_note(&d.tb, a, b, both, rate)) {
            rep->lost_t_s = (double)d.tb.first_both / rate;
            return 0;
        }
        k = b;
    }
    return 0;
}

/* One channel's clipped stretches, for the channels' own threads (a
 * pass over a ten-minute run each). */
typedef struct {
    const double *v;
    size_t n;
    double rest;
    size_t merge;
    spans *out;
    int rc;
} clip_job;

static void *clip_run(void *p)
{
    clip_job *j = p;
    j->rc = find_clips(j->v, j->n, j->rest, j->merge, j->out);
    return NULL;
}

/* Both channels' clipped stretches (find_clips()), the second on a
 * thread of its own unless threads is 1.  -1 when out of memory. */
int pl_fe_clips(double *v[2], size_t n, const double level[2], double rate, int threads,
                spans clip[2])
{
    size_t merge = (size_t)ceil(0.0005 * rate);
    clip_job cj[2];
    for (int c = 0; c < 2; c++)
        cj[c] = (clip_job){v[c], n, level[c], merge, &clip[c], 0};
    pl_run_pair(clip_run, &cj[0], &cj[1], threads);
    return cj[0].rc != 0 || cj[1].rc != 0 ? -1 : 0;
}

/* Mends what neither channel measured: the drop-outs first, the clipped
 * samples counting as the bounds they are; then the clipped samples
 * carried by the other beam; last the stretches where neither beam holds
 * the level, bridged by lines between edges that are all mended by then
 * (none past the motion's end: a line there would only blur the drop
 * where the beams lose the prism, which the window's end reads). */
pl_status pl_fe_mend(double *v[2], const double h[2], size_t n, double rate, size_t from,
                     const spans clip[2], pl_frontend_report *rep, pl_err *err)
{
    size_t r = (size_t)ceil(0.001 * rate), max_len = (size_t)(0.020 * rate);
    spans unknown = {0};
    pl_status st = PL_OK;
    if (dropouts(v, h, n, from, rate, clip, &unknown, rep) != 0)
        st = pl_err_set(err, PL_ENOMEM, "front end: out of memory for the drop-outs");
    size_t end = isnan(rep->lost_t_s) ? n : (size_t)(rep->lost_t_s * rate);
    if (st == PL_OK)
        st = clips_refused(clip, rate, max_len, end, err);
    if (st == PL_OK && (clip[0].n || clip[1].n)) {
        /* (the clipped samples are still there: their distance from the
         * other beam is no measure of agreement) */
        double sd_e = spread_all(v, h, from, end, clip);
        carry_clips(v, h, n, rate, clip, (size_t)ceil(CLIP_EDGE_S * rate),
                    sd_e > 0 ? 10 * sd_e : INFINITY, end, rep);
    }
    for (size_t k = 0; st == PL_OK && k < unknown.n && unknown.s[k].a < end; k++)
        both_line(v, h, n, unknown.s[k].a, unknown.s[k].b, r);
    free(unknown.s);
    return st;
}
