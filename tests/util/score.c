/* tests/util/score.c - score.py's scoring in C (see score.h). */
#include "tests/util/score.h"

#include "process/robust.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* numpy's median: the mean of the two middle values when n is even. */
static double median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* The nearest detected impact to t: numpy's argmin, the first of equals. */
static size_t nearest(const double *det_t, size_t n_det, double t)
{
    size_t best = 0;
    for (size_t j = 1; j < n_det; j++)
        if (fabs(det_t[j] - t) < fabs(det_t[best] - t))
            best = j;
    return best;
}

int tu_score_run(const double *true_t, const double *true_ratio, size_t n_true,
                 const double *det_t, const double *det_ratio, size_t n_det,
                 double lp_meas, double lp_true, tu_score *out)
{
    unsigned char *used = calloc(n_det + 1, 1);
    double *dt = malloc((n_true + 1) * sizeof *dt);
    double *bias = malloc((n_true + 1) * sizeof *bias);
    if (!used || !dt || !bias) {
        free(used);
        free(dt);
        free(bias);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n_true && n_det > 0; i++) {
        size_t j = nearest(det_t, n_det, true_t[i]);
        if (fabs(det_t[j] - true_t[i]) < 0.002 && !used[j]) {
            used[j] = 1;
            dt[m] = fabs(det_t[j] - true_t[i]);
            bias[m++] = ((1 - det_ratio[j]) - (1 - true_ratio[i])) / (1 - true_ratio[i]);
        }
    }
    tu_score s = {.n_true = n_true, .n_det = n_det, .n_matched = m};
    s.recall = n_true ? (double)m / n_true : 0.0;
    s.precision = (double)m / (n_det ? n_det : 1);
    s.dt_med_s = m ? median(dt, m) : 0.099;
    s.loss_bias = s.loss_sd = 9.9;
    if (m) {
        double sum = 0, ss = 0;
        for (size_t k = 0; k < m; k++)
            sum += bias[k];
        s.loss_bias = sum / m;
        for (size_t k = 0; k < m; k++)
            ss += (bias[k] - s.loss_bias) * (bias[k] - s.loss_bias);
        s.loss_sd = sqrt(ss / m);
    }
    s.bias_limit = fmax(0.03, 2.5 * s.loss_sd / sqrt(m > 1 ? (double)m : 1.0));
    s.lp_err = fabs(lp_meas - lp_true) / lp_true;
    s.ok_py = s.recall >= 0.995 && s.precision >= 0.995 && s.lp_err <= 0.001 &&
              fabs(s.loss_bias) <= s.bias_limit;
    s.ok = s.ok_py && s.dt_med_s <= 0.0002;
    *out = s;
    free(used);
    free(dt);
    free(bias);
    return 0;
}

long tu_ratio_z(const double *true_t, const double *true_ratio, size_t n_true,
                const pl_impact *imp, size_t n_imp, double cut, double *sd, double *med)
{
    double *z = malloc((n_imp + 1) * sizeof *z);
    if (!z)
        return -1;
    size_t m = 0;
    for (size_t j = 0; j < n_imp; j++) {
        const pl_impact *d = &imp[j];
        if (!(d->t_s < cut) || !(d->ratio_se > 0) || !isfinite(d->ratio_se))
            continue;
        size_t best = 0;
        for (size_t i = 1; i < n_true; i++)
            if (fabs(true_t[i] - d->t_s) < fabs(true_t[best] - d->t_s))
                best = i;
        if (n_true && fabs(true_t[best] - d->t_s) < 0.002)
            z[m++] = (d->ratio - true_ratio[best]) / d->ratio_se;
    }
    /* the median first: pl_robust_sd() leaves |z - median| in z */
    *med = pl_median(z, m);
    *sd = pl_robust_sd(z, m);
    free(z);
    return (long)m;
}

long tu_time_z(const double *true_t, size_t n_true, const pl_impact *imp, size_t n_imp,
               double cut, double *sd, double *med)
{
    double *z = malloc((n_imp + 1) * sizeof *z);
    if (!z)
        return -1;
    size_t m = 0;
    for (size_t j = 0; j < n_imp; j++) {
        const pl_impact *d = &imp[j];
        if (!(d->t_s < cut) || !(d->t_sd_s > 0) || !isfinite(d->t_sd_s))
            continue;
        size_t best = 0;
        for (size_t i = 1; i < n_true; i++)
            if (fabs(true_t[i] - d->t_s) < fabs(true_t[best] - d->t_s))
                best = i;
        if (n_true && fabs(true_t[best] - d->t_s) < 0.002)
            z[m++] = (d->t_s - true_t[best]) / d->t_sd_s;
    }
    *med = pl_median(z, m);
    *sd = pl_robust_sd(z, m);
    free(z);
    return (long)m;
}
