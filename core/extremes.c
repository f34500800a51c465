/* core/extremes.c - see extremes.h. */
#include "core/extremes.h"

#include <assert.h>
#include <math.h>

void pl_extremes(const double *x, size_t n, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    /* a comparison with NaN is false: NaN never replaces an extreme */
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    if (mn > mx)
        mn = mx = NAN;
    *lo = mn;
    *hi = mx;
}

void pl_bucket_extremes(const double *x, size_t n, size_t bucket, double *lo,
                        double *hi)
{
    assert(bucket >= 1);
    for (size_t a = 0, k = 0; a < n; a += bucket, k++)
        pl_extremes(x + a, n - a < bucket ? n - a : bucket, &lo[k], &hi[k]);
}
