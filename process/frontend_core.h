/* process/frontend_core.h - what the front end's rooms share
 * (frontend.c: the lead-in and the combined omega; frontend_hum.c:
 * offsets and hum; frontend_mend.c: clipping, drop-outs, lost beams;
 * frontend_common.c: motion common to both beams): the clipped stretches
 * and the normal equations of the small block fits.  Internal to
 * process/frontend*.c; process/frontend.h is the interface. */
#ifndef PL_PROCESS_FRONTEND_CORE_H
#define PL_PROCESS_FRONTEND_CORE_H

#include "process/frontend_report.h"

#include <stddef.h>
#include <stdlib.h>

/* Stretches [s[k].a, s[k].b) of samples, in order; for a clipped
 * stretch, sign says which rail (+1 the highest value, -1 the lowest). */
typedef struct {
    struct span {
        size_t a, b;
        int sign;
        size_t at;    /* clipped: the samples exactly at the rail */
    } *s;
    size_t n, cap;
} spans;

/* Appends sp to l, growing it; -1 when out of memory (l as it was). */
static inline int spans_push(spans *l, struct span sp)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        void *p = realloc(l->s, cap * sizeof *l->s);
        if (!p)
            return -1;
        l->s = p;
        l->cap = cap;
    }
    l->s[l->n++] = sp;
    return 0;
}

/* The rail (+1, -1) channel list l holds sample i at, or 0; *cur is a
 * cursor into l that a forward scan keeps (any value is safe). */
static inline int clip_at(const spans *l, size_t i, size_t *cur)
{
    if (l->n == 0)
        return 0;
    if (*cur >= l->n || l->s[*cur].a > i) {   /* backwards: search again */
        size_t lo = 0, hi = l->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (l->s[mid].b <= i)
                lo = mid + 1;
            else
                hi = mid;
        }
        *cur = lo;
    }
    while (*cur < l->n && l->s[*cur].b <= i)
        ++*cur;
    return *cur < l->n && l->s[*cur].a <= i ? l->s[*cur].sign : 0;
}

/* The rails (+1, -1, 0) of both channels at sample i: none without
 * clipped stretches, and the per-sample loops then pay nothing for them. */
static inline void clips_at(const spans clip[2], size_t i, size_t cur[2], int cs[2])
{
    cs[0] = clip[0].n ? clip_at(&clip[0], i, &cur[0]) : 0;
    cs[1] = clip[1].n ? clip_at(&clip[1], i, &cur[1]) : 0;
}

/* Whether an event starting at sample a is the report's to count
 * (frontend_report.h: count_from, count_to). */
static inline int pl_fe_counted(const pl_frontend_report *rep, size_t a)
{
    return a >= rep->count_from && a < rep->count_to;
}

/* The block fits (the hum's phase in frontend_hum.c, a floor's lines in
 * frontend_common.c) solve small
 * linear least squares by their normal equations: P <= 10 columns of a
 * constant, a slope and sinusoids over a block, well conditioned.  A
 * sample's row x[0..P) with datum e goes into the lower triangle of A
 * (P x P) and into y: the upper one is never read. */
static inline void normal_add(double *A, double *y, const double *x, size_t P, double e)
{
    for (size_t r = 0; r < P; r++) {
        y[r] += x[r] * e;
        for (size_t q = 0; q <= r; q++)
            A[P * r + q] += x[r] * x[q];
    }
}

/* The normal equations' solution into c[0..P) by GSL's Cholesky, which
 * reads A's lower triangle and leaves its factor there; -1 when A is
 * not positive definite. */
int pl_fe_normal_solve(double *A, double *y, size_t P, double *c);

#endif
