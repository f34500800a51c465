/* process/releases.c - the releases in a long recording.  See releases.h. */
#include "process/releases.h"

#include "process/physics.h"

#include <math.h>
#include <stdlib.h>

struct pl_releases {
    double h1, h2;
    size_t block;              /* frames a block */
    size_t still_need, roll_need;   /* blocks */
    double follow;             /* the resting level's step a still block */
    /* the block being filled */
    double s1, s2;
    size_t filled;
    long long at;              /* frames read */
    /* the resting levels (m/s); have_base: set from the first block */
    double base1, base2;
    int have_base;
    /* the motion under way */
    int moving, released;
    long long start, still_from;
    size_t still_run, roll_run;
    pl_release *list;
    size_t n, cap;
};

pl_status pl_releases_create(pl_releases **out, double rate, double h1, double h2,
                             pl_err *err)
{
    *out = NULL;
    if (!(rate > 0) || !(h1 > 0) || !(h2 > 0))
        return pl_err_set(err, PL_EINVAL, "finding releases: rate %g Hz and beam "
                          "heights %g, %g m must be positive", rate, h1, h2);
    pl_releases *r = calloc(1, sizeof *r);
    if (!r)
        return pl_err_set(err, PL_ENOMEM, "finding releases: out of memory");
    r->h1 = h1;
    r->h2 = h2;
    r->block = (size_t)ceil(PL_PHYS_BLOCK_S * rate);
    r->still_need = (size_t)ceil(PL_RELEASES_STILL_S / PL_PHYS_BLOCK_S);
    r->roll_need = (size_t)ceil(PL_PHYS_SECOND_S / PL_PHYS_BLOCK_S);
    /* 1 s time constant, the daemon trigger's: a drift follows, a motion
     * (never still) does not move it */
    r->follow = PL_PHYS_BLOCK_S / 1.0;
    *out = r;
    return PL_OK;
}

static pl_status keep(pl_releases *r, long long end, pl_err *err)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 32;
        pl_release *l = realloc(r->list, cap * sizeof *l);
        if (!l)
            return pl_err_set(err, PL_ENOMEM, "finding releases: out of memory "
                              "for %zu releases", cap);
        r->list = l;
        r->cap = cap;
    }
    r->list[r->n++] = (pl_release){r->start, end};
    return PL_OK;
}

/* One whole block, first frame first, with means m1, m2. */
static pl_status block(pl_releases *r, long long first, double m1, double m2, pl_err *err)
{
    if (!r->have_base) {
        r->base1 = m1;
        r->base2 = m2;
        r->have_base = 1;
    }
    double w1 = (m1 - r->base1) / r->h1, w2 = (m2 - r->base2) / r->h2;
    int still = pl_phys_still(w1, w2);
    if (still) {
        r->base1 += r->follow * (m1 - r->base1);
        r->base2 += r->follow * (m2 - r->base2);
    }
    if (!r->moving) {
        if (still)
            return PL_OK;
        r->moving = 1;
        r->released = 0;
        r->start = first;
        r->still_run = r->roll_run = 0;
    }
    r->roll_run = pl_phys_rolling(w1, w2) ? r->roll_run + 1 : 0;
    if (r->roll_run >= r->roll_need)
        r->released = 1;
    if (!still) {
        r->still_run = 0;
        return PL_OK;
    }
    if (r->still_run++ == 0)
        r->still_from = first;
    if (r->still_run < r->still_need)
        return PL_OK;
    r->moving = 0;
    return r->released ? keep(r, r->still_from, err) : PL_OK;
}

pl_status pl_releases_feed(pl_releases *r, const double *v1, const double *v2, size_t n,
                           pl_err *err)
{
    for (size_t i = 0; i < n; i++) {
        r->s1 += v1[i];
        r->s2 += v2[i];
        r->at++;
        if (++r->filled < r->block)
            continue;
        double b = (double)r->block;
        pl_status st = block(r, r->at - (long long)r->block, r->s1 / b, r->s2 / b, err);
        r->s1 = r->s2 = 0;
        r->filled = 0;
        if (st != PL_OK)
            return st;
    }
    return PL_OK;
}

pl_status pl_releases_finish(pl_releases *r, pl_err *err)
{
    if (r->moving && r->released) {
        r->moving = 0;
        return keep(r, r->still_run ? r->still_from : r->at, err);
    }
    return PL_OK;
}

const pl_release *pl_releases_list(const pl_releases *r, size_t *n)
{
    *n = r->n;
    return r->list;
}

void pl_releases_destroy(pl_releases *r)
{
    if (!r)
        return;
    free(r->list);
    free(r);
}
