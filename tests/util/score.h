/* tests/util/score.h - scoring detected impacts against the truth exactly
 * as ../shared/foreign-runs/score.py does, for the tests and benches that
 * run processing on simulated recordings (the random corpus, the noise
 * bench).
 *
 * The rules (score.py): every true impact, in order, takes the detected
 * impact nearest to it (the first of equals); it is matched when that one
 * lies less than 2 ms away and no earlier true impact took it (so each
 * detected impact is used once, and a true impact whose nearest is taken
 * stays unmatched).  recall = matched / true, precision = matched /
 * detected, dt_med = the median |detected - true| of the matched, loss
 * bias = the mean over the matched of ((1 - r_meas) - (1 - r_true)) /
 * (1 - r_true), loss sd its population standard deviation, L_p error =
 * |L_p measured - true| / true at the end.  A run passes (ok_py) when
 * recall and precision >= 0.995, the L_p error <= 0.001 and |loss bias|
 * <= max(0.03, 2.5 sd / sqrt(max(1, matched))); issue 16's numbers (ok)
 * also want dt_med <= 0.2 ms.  With no detections at all score.py's
 * placeholders stand: dt_med 99 ms, bias and sd 9.9.
 */
#ifndef PL_TESTS_SCORE_H
#define PL_TESTS_SCORE_H

#include "db/derived.h"

#include <stddef.h>

typedef struct {
    size_t n_true, n_det, n_matched;
    double recall, precision;
    double dt_med_s;     /* median |dt| of the matched, s */
    double loss_bias, loss_sd;
    double bias_limit;   /* max(0.03, 2.5 sd / sqrt(max(1, matched))) */
    double lp_err;       /* relative */
    int ok_py;           /* score.py's pass rule */
    int ok;              /* ok_py and dt_med <= 0.2 ms */
} tu_score;

/* Scores det_t/det_ratio (n_det detected impacts, s on the recording's
 * clock) against true_t/true_ratio (n_true) and the L_p at the end.
 * Returns 0, or -1 when out of memory (out untouched). */
int tu_score_run(const double *true_t, const double *true_ratio, size_t n_true,
                 const double *det_t, const double *det_ratio, size_t n_det,
                 double lp_meas, double lp_true, tu_score *out);

/* Whether the impacts' stated ratio errors are honest, as
 * ../shared/foreign-runs/calibration.py asks (issue 33): over the
 * impacts imp[0..n_imp) before cut (s; INFINITY: all) with a finite
 * ratio_se > 0 and a true impact within 2 ms (the nearest of true_t),
 * z = (ratio - true) / ratio_se has a robust spread (1.4826 x its median
 * absolute deviation) *sd and a median *med.  Returns how many impacts
 * counted, or -1 when out of memory. */
long tu_ratio_z(const double *true_t, const double *true_ratio, size_t n_true,
                const pl_impact *imp, size_t n_imp, double cut, double *sd, double *med);

/* The same for the instants: z = (t_s - true) / t_sd_s over the impacts
 * with a finite t_sd_s > 0 matched within 2 ms (calibration.py's time z).
 * Returns how many counted, or -1 when out of memory. */
long tu_time_z(const double *true_t, size_t n_true, const pl_impact *imp, size_t n_imp,
               double cut, double *sd, double *med);

#endif
