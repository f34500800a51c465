/* core/extremes.h - the smallest and largest of runs of samples.
 *
 * A plot of w pixels draws at most w columns, each the span from the
 * minimum to the maximum of the samples it covers; the web view answers
 * every window from such extremes (web/trace.h), and processing stores
 * them for a run's raw velocities at a fixed bucket size so that a viewer
 * never rereads the run to draw it whole (db/derived.h, "vp1_raw_min").
 * Both compute them here, so that what is stored is what the viewer would
 * have computed, bit for bit.
 *
 * NaN samples are passed over; a run of only NaN gives NaN, NaN.
 */
#ifndef PL_CORE_EXTREMES_H
#define PL_CORE_EXTREMES_H

#include <stddef.h>

/* The minimum and maximum of x[0..n) into *lo, *hi. */
void pl_extremes(const double *x, size_t n, double *lo, double *hi);

/* The extremes of each bucket of x[0..n): bucket k covers samples
 * [k bucket, (k + 1) bucket), the last one what is left; lo and hi take
 * ceil(n / bucket) values.  bucket >= 1. */
void pl_bucket_extremes(const double *x, size_t n, size_t bucket, double *lo,
                        double *hi);

#endif
