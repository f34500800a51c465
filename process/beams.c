/* process/beams.c - the two beams checked against each other: a beam
 * that never saw the prism, and the ratio v1/v2 the motion gives.  See
 * beams.h and docs/process.md section 1 ("The beams against each
 * other"). */
#include "process/beams.h"

#include "process/robust.h"

#include <math.h>
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
    /* each beam as the mover in turn: the one that moved in more blocks
     * is the live one, and the other is judged against it */
    size_t moving[2] = {0, 0}, agree[2] = {0, 0};
    double med[2] = {NAN, NAN};
    for (int L = 0; L < 2; L++) {
        size_t cnt = 0;
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
        /* v1/v2 where both beams move */
        size_t cnt = 0;
        for (size_t k = 0; k < nb; k++)
            if (fabs(mb[0][k]) > MOVE_SIGMAS * sd[0] && fabs(mb[1][k]) > MOVE_SIGMAS * sd[1] &&
                mb[0][k] != 0 && mb[1][k] != 0)
                t[cnt++] = mb[0][k] * h[0] / (mb[1][k] * h[1]);
        b->both = cnt;
        if (cnt >= MIN_MOVING) {
            b->ratio = pl_median(t, cnt);   /* (pl_robust_sd() overwrites t) */
            b->ratio_sd = pl_robust_sd(t, cnt);
        }
    }
    free(m);
    return 0;
}
