/* process/robust.c - median-based spreads.  See robust.h. */
#include "process/robust.h"

#include <math.h>
#include <stdlib.h>

/* Hoare's selection: the processing takes medians of 100 000 values a
 * few times a run. */
double pl_select_kth(double *v, size_t m, size_t k)
{
    size_t lo = 0, hi = m - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

double pl_median(double *v, size_t m)
{
    if (m == 0)
        return NAN;
    double hi = pl_select_kth(v, m, m / 2);
    if (m % 2)
        return hi;
    /* the selection leaves the smaller half before m / 2 */
    double lo = v[0];
    for (size_t i = 1; i < m / 2; i++)
        lo = v[i] > lo ? v[i] : lo;
    return 0.5 * (lo + hi);
}

double pl_robust_sd(double *v, size_t m)
{
    if (m < 8)
        return NAN;
    double med = pl_select_kth(v, m, m / 2);
    for (size_t i = 0; i < m; i++)
        v[i] = fabs(v[i] - med);
    return 1.4826 * pl_select_kth(v, m, m / 2);
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
