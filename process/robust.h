/* process/robust.h - spread estimates that a few outliers (impacts,
 * drop-outs) do not move: what every noise threshold of the processing
 * stage is measured with. */
#ifndef PL_PROCESS_ROBUST_H
#define PL_PROCESS_ROBUST_H

#include <stddef.h>

/* 1.4826 x the median absolute deviation of v[0..m-1], which is
 * reordered: the standard deviation for Gaussian data.  NaN for m < 8. */
double pl_robust_sd(double *v, size_t m);

/* The median of v[0..m-1] (the mean of the two middle values when m is
 * even), v reordered, in linear time; NaN for m = 0. */
double pl_median(double *v, size_t m);

/* The k-th smallest of v[0..m-1] (k < m; the value a sort would put at
 * k), v reordered, in linear time: a quantile without a sort. */
double pl_select_kth(double *v, size_t m, size_t k);

/* pl_robust_sd of f(k) = x[k+1] - x[k] (diff = 1, then divided by sqrt 2:
 * white noise per sample) or f(k) = x[k] / hx - y[k] / hy (diff = 0), for
 * at most 100 000 k evenly spread over [a, b - 1).  NaN when too few or
 * out of memory. */
double pl_robust_spread(const double *x, const double *y, double hx, double hy,
                        size_t a, size_t b, int diff);

#endif
