/* process/robust.c - median-based spreads.  See robust.h. */
#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double pl_robust_sd(double *v, size_t m)
{
    if (m < 8)
        return NAN;
    qsort(v, m, sizeof *v, cmp_double);
    double med = v[m / 2];
    for (size_t i = 0; i < m; i++)
        v[i] = fabs(v[i] - med);
    qsort(v, m, sizeof *v, cmp_double);
    return 1.4826 * v[m / 2];
}

double pl_robust_spread(const double *x, const double *y, double hx, double hy,
                        size_t a, size_t b, int diff)
{
    size_t m = b > a + 1 ? b - a - 1 : 0, stride = m > 100000 ? m / 100000 : 1;
    size_t cnt = m / stride;
    if (cnt < 8)
        return NAN;
    double *t = malloc(cnt * sizeof *t);
    if (!t)
        return NAN;
    for (size_t i = 0; i < cnt; i++) {
        size_t k = a + i * stride;
        t[i] = diff ? x[k + 1] - x[k] : x[k] / hx - y[k] / hy;
    }
    double sd = pl_robust_sd(t, cnt);
    free(t);
    return diff ? sd / sqrt(2.0) : sd;
}
