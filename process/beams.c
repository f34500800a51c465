/* process/beams.c - the two beams checked against each other: a beam
 * that never saw the prism, and the ratio v1/v2 the motion gives.  See
 * beams.h and docs/process.md section 1 ("The beams against each
 * other"). */
#include "process/beams.h"

#include "process/robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A block every BLOCK_S, its mean over its first MEAN_S: 20 % of the
 * samples, enough to follow the motion (it changes over tens of ms)
 * and cheap on a ten-minute run. */
#define BLOCK_S 0.010
#define MEAN_S 0.002
/* A beam moves in a block where its mean v/h stands this many of its
 * lead-in blocks' robust spreads from zero: far beyond any noise, so
 * that a block's ratio is the motion's and not the noise's. */
#define MOVE_SIGMAS 50.0
/* At least this many moving blocks (0.3 s of motion) before a beam is
 * called dead: a shorter motion says too little. */
#define MIN_MOVING 30
/* Dead: the other beam agrees (v/h within a factor AGREE_FACTOR) in
 * under DEAD_AGREE of the moving blocks and the median ratio lies
 * within DEAD_RATIO of 0.  A beam lost for part of the motion agrees
 * in the rest (it is carried there by the front end, not replaced);
 * heights swapped in the notebook give a ratio (h2/h1)^2, 0.34 on the
 * rig, a sign swapped -1: neither is a dead beam. */
#define AGREE_FACTOR 2.0
#define DEAD_AGREE 0.05
#define DEAD_RATIO 0.1
/* The ratio v1/v2 is read where both beams stand below RATIO_TOP of
 * their largest block (when at least MIN_MOVING blocks do): a decoder
 * past its velocity range holds one beam flat at the motion's fastest,
 * and over half the motion there the median ratio would follow it. */
#define RATIO_TOP 0.6
/* The notebook's h1/h2 and the data's v1/v2 agree within NOTE_TOL
 * (relative): a gain mismatch between two decoders of a few per cent
 * is a calibration matter, a height swapped or misread is a factor. */
#define NOTE_TOL 0.05
/* ... and only where the ratio's cluster holds at least NOTE_CLUSTER of
 * the blocks: a wrong notebook puts every block at the wrong ratio,
 * while a beam clipped over most of the run scatters them (a cluster of
 * 0.20 at 0.59 of h1/h2 under a beam at its rail from 1.6 s on) and
 * says nothing of the heights. */
#define NOTE_CLUSTER 0.5

/* The ratio's cluster: blocks within CLUSTER (relative) of each other. */
#define CLUSTER 0.04

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Block means of v / h into m[0..nb). */
static void block_means(const double *v, double h, size_t nb, size_t B, size_t M, double *m)
{
    for (size_t k = 0; k < nb; k++) {
        double s = 0;
        for (size_t i = k * B; i < k * B + M; i++)
            s += v[i];
        m[k] = s / (double)M / h;
    }
}

/* The ratio v1/v2 into b from the blocks mb[0], mb[1] (nb of them, v/h;
 * sd[] their lead-in spreads): where both beams move, below RATIO_TOP of
 * their peaks where enough blocks are (a beam saturates at its fastest),
 * the densest cluster's median.  t: nb doubles of scratch. */
static void beams_ratio(double *const mb[2], size_t nb, const double h[2], const double sd[2],
                        double *t, pl_beams_report *b)
{
    double top[2] = {0, 0};
    for (int c = 0; c < 2; c++)
        for (size_t k = 0; k < nb; k++)
            top[c] = fmax(top[c], fabs(mb[c][k]));
    size_t cnt = 0;
    for (int pass = 0; pass < 2 && cnt < MIN_MOVING; pass++) {
        double cap = pass ? INFINITY : RATIO_TOP;
        cnt = 0;
        for (size_t k = 0; k < nb; k++)
            if (fabs(mb[0][k]) > MOVE_SIGMAS * sd[0] &&
                fabs(mb[1][k]) > MOVE_SIGMAS * sd[1] && mb[0][k] != 0 && mb[1][k] != 0 &&
                fabs(mb[0][k]) < cap * top[0] && fabs(mb[1][k]) < cap * top[1])
                t[cnt++] = mb[0][k] * h[0] / (mb[1][k] * h[1]);
    }
    b->both = cnt;
    if (cnt < MIN_MOVING)
        return;
    /* the densest cluster, not the median: a lost or clipped beam's
     * blocks scatter the ratio (a median 0.73 of h1/h2 on a faulted
     * corpus chain), while the blocks where both see the prism all lie
     * at h1/h2 */
    qsort(t, cnt, sizeof *t, cmp_double);
    size_t best = 0, bi = 0;
    for (size_t i = 0, j = 0; i < cnt; i++) {
        if (j < i)
            j = i;
        while (j < cnt && t[j] <= t[i] + CLUSTER * fabs(t[i]))
            j++;
        if (j - i > best) {
            best = j - i;
            bi = i;
        }
    }
    b->cluster = (double)best / (double)cnt;
    b->ratio = pl_median(t + bi, best);   /* (pl_robust_sd() overwrites t) */
    b->ratio_sd = pl_robust_sd(t, cnt);
}

/* Each beam as the mover in turn: in how many blocks it moves
 * (moving[L]), in how many of those the other agrees (agree[L]), and
 * the median ratio other/mover (med[L]); then each beam's own sense over
 * the blocks where it moves (downhill is positive once its sign is
 * right) into b.  t: nb doubles of scratch. */
static void beams_vote(double *const mb[2], size_t nb, const double sd[2], double *t,
                       size_t moving[2], size_t agree[2], double med[2], pl_beams_report *b)
{
    for (int L = 0; L < 2; L++) {
        size_t cnt = 0;
        agree[L] = 0;
        med[L] = NAN;
        for (size_t k = 0; k < nb; k++)
            if (fabs(mb[L][k]) > MOVE_SIGMAS * sd[L] && mb[L][k] != 0) {
                double r = mb[1 - L][k] / mb[L][k];
                agree[L] += r > 1 / AGREE_FACTOR && r < AGREE_FACTOR;
                t[cnt++] = r;
            }
        moving[L] = cnt;
        if (cnt > 0)
            med[L] = pl_median(t, cnt);
    }
    for (int c = 0; c < 2; c++) {
        long vote = 0;
        for (size_t k = 0; k < nb; k++)
            if (fabs(mb[c][k]) > MOVE_SIGMAS * sd[c] && mb[c][k] != 0)
                vote += mb[c][k] > 0 ? 1 : -1;
        b->sense[c] = moving[c] >= MIN_MOVING ? (vote > 0) - (vote < 0) : 0;
    }
}

int pl_beams_check(double *v[2], const double h[2], size_t n, double rate, size_t q,
                   pl_beams_report *b)
{
    memset(b, 0, sizeof *b);
    b->agree = 1;
    b->ratio = b->ratio_sd = NAN;
    size_t B = (size_t)(BLOCK_S * rate), M = (size_t)(MEAN_S * rate);
    if (M < 1)
        M = 1;
    if (B < M)
        B = M;
    size_t nb = n / B, ql = q / B;
    if (nb < MIN_MOVING || ql < 4)
        return 0;
    double *m = malloc(3 * nb * sizeof *m);
    if (!m)
        return -1;
    double *mb[2] = {m, m + nb}, *t = m + 2 * nb, sd[2];
    for (int c = 0; c < 2; c++) {
        block_means(v[c], h[c], nb, B, M, mb[c]);
        memcpy(t, mb[c], ql * sizeof *t);
        sd[c] = pl_robust_sd(t, ql);
        if (!(sd[c] >= 0))
            sd[c] = 0;
    }
    /* the beam that moved in more blocks is the live one, and the other
     * is judged against it */
    size_t moving[2], agree[2];
    double med[2];
    beams_vote(mb, nb, sd, t, moving, agree, med, b);
    int L = moving[1] > moving[0] ? 1 : 0;
    b->moving = moving[L];
    b->agree = moving[L] ? (double)agree[L] / (double)moving[L] : 1;
    if (moving[L] >= MIN_MOVING && b->agree < DEAD_AGREE && fabs(med[L]) < DEAD_RATIO) {
        int d = 1 - L;
        double k = h[d] / h[L];
        for (size_t i = 0; i < n; i++)
            v[d][i] = k * v[L][i];
        b->dead = d + 1;
    } else {
        beams_ratio(mb, nb, h, sd, t, b);
    }
    free(m);
    return 0;
}

/* x within NOTE_TOL of y (relative). */
static int near(double x, double y)
{
    return fabs(x - y) <= NOTE_TOL * fabs(y);
}

int pl_beams_verdict(const pl_beams_report *b, const double h[2], char *buf, size_t n)
{
    buf[0] = '\0';
    double rho = b->ratio, note = h[0] / h[1];
    if (!isfinite(rho) || near(rho, note) || !(b->cluster >= NOTE_CLUSTER))
        return 0;
    if (near(rho, 1 / note))
        snprintf(buf, n, "the beams' ratio v1/v2 during the motion is %.3g, which in "
                 "pure rotation is h1/h2, and the notebook gives %.3g: the heights are "
                 "swapped (or the beams' wires: the same fix), and omega's scale with "
                 "them; set h1 = %g m and h2 = %g m ('prismlab run set RUN --h1 %g "
                 "--h2 %g') and process it again", rho, note, h[1], h[0], h[1], h[0]);
    else if (near(rho, -note))
        snprintf(buf, n, "the beams' ratio v1/v2 during the motion is %.3g, which in "
                 "pure rotation is h1/h2 = %.3g: one beam's sign is swapped (beam %d "
                 "moves uphill); flip that beam's sign ('prismlab run set RUN --sign%d') "
                 "and process it again", rho, note, b->sense[0] < 0 ? 1 : 2,
                 b->sense[0] < 0 ? 1 : 2);
    else
        snprintf(buf, n, "the beams' ratio v1/v2 during the motion is %.3g, which in "
                 "pure rotation is h1/h2, and the notebook gives %.3g (h1 = %g m, h2 = "
                 "%g m)%s: a height is wrong, or one beam carries a part of the other "
                 "(crosstalk), and omega's scale is wrong with it; measure the heights "
                 "again and set them ('prismlab run set RUN --h1 H1 --h2 H2')",
                 rho, note, h[0], h[1], rho < 0 ? " and of the other sign" : "");
    /* the signs are each beam's own: say where they are wrong too */
    size_t len = strlen(buf);
    if (!near(rho, -note) && (b->sense[0] < 0 || b->sense[1] < 0) && len + 2 < n) {
        snprintf(buf + len, n - len, "; ");
        pl_beams_senses(b, buf + len + 2, n - len - 2);
    }
    return 1;
}

void pl_beams_senses(const pl_beams_report *b, char *buf, size_t n)
{
    buf[0] = '\0';
    if (b->sense[0] < 0 && b->sense[1] < 0)
        snprintf(buf, n, "both beams move uphill over the motion: each beam's sign is "
                 "the wrong one");
    else if (b->sense[0] < 0 || b->sense[1] < 0)
        snprintf(buf, n, "beam %d moves uphill over the motion: its sign is the wrong one",
                 b->sense[0] < 0 ? 1 : 2);
    else if (b->dead)
        snprintf(buf, n, "beam %d never saw the prism", b->dead);
}
