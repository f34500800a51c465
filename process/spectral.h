/* process/spectral.h - FFTW-based filtering and spectra for processing.
 *
 * The low-pass is zero-phase (a real, even transfer function applied in
 * the frequency domain), so a cusp is not shifted in time, only rounded:
 * H(f) = 2^-(f / fc)^2, a Gaussian with H(fc) = 1/2 (-6 dB).  Its impulse
 * response is a Gaussian of standard deviation sqrt(2 ln 2) / (2 pi fc):
 * 0.19 ms at fc = 1 kHz, so the 0.3 ms impact steps stay sharp, while a
 * 2.8 kHz ringing is divided by 230.
 *
 * Long signals are filtered by overlap-save in blocks of a fixed size with
 * FFTW plans made once per handle and reused, so the cost is linear in the
 * length and the memory a constant.  Threading: a handle is used by one
 * thread at a time (FFTW planning itself is serialised by the caller's
 * single thread; prismlab plans only from the main thread).
 */
#ifndef PL_PROCESS_SPECTRAL_H
#define PL_PROCESS_SPECTRAL_H

#include "core/error.h"

#include <stddef.h>

typedef struct pl_lowpass pl_lowpass;

/* A low-pass with cut-off fc_hz (H = 1/2 there) at sampling rate rate_hz;
 * fc must lie in (0, rate / 2).  PL_EINVAL names the bad value. */
pl_status pl_lowpass_create(pl_lowpass **out, double fc_hz, double rate_hz,
                            pl_err *err);

/* Filters x[0..n-1] into y (may be x).  Edges are extended by reflection
 * so that the ends are not pulled towards zero. */
pl_status pl_lowpass_apply(pl_lowpass *lp, const double *x, double *y,
                           size_t n, pl_err *err);

/* Frees the handle and its plans; NULL is a no-op. */
void pl_lowpass_destroy(pl_lowpass *lp);

/* The filter's gain at f_hz (for docs and tests). */
double pl_lowpass_gain(const pl_lowpass *lp, double f_hz);

/* A Welch estimator for segments of seg samples: the FFTW plan, buffers
 * and window made once.  FFTW plans only on one thread at a time, so make
 * every handle (and low-pass) before running any on another thread; a
 * handle runs on one thread at a time, different handles at once. */
typedef struct pl_welch pl_welch;

/* seg: a power of two >= 16. */
pl_status pl_welch_create(pl_welch **out, size_t seg, pl_err *err);

/* Welch's estimate of x[0..n-1] into psd, as pl_welch_psd() below. */
pl_status pl_welch_run(pl_welch *w, const double *x, size_t n, double rate_hz,
                       size_t max_segments, double *psd, size_t *segments,
                       pl_err *err);

/* Frees the handle and its plan; NULL is a no-op. */
void pl_welch_destroy(pl_welch *w);

/* Welch's averaged periodogram of x[0..n-1] (Hann window, segments of seg
 * samples (a power of two >= 16), 50 % overlap, the mean of each segment
 * removed): psd[0..seg/2] in unit^2/Hz, one-sided, bin k at k rate / seg.
 * Needs n >= seg.  When 50 % overlap would give more than max_segments
 * (0: no limit), max_segments segments spread evenly over x are averaged
 * instead.  *segments receives how many were averaged. */
pl_status pl_welch_psd(const double *x, size_t n, double rate_hz, size_t seg,
                       size_t max_segments, double *psd, size_t *segments,
                       pl_err *err);

/* The ringing's frequency in a spectrum of len bins df apart: the most
 * prominent peak of the smoothed spectrum above 500 Hz, measured against
 * the lowest level between half its frequency and itself; NaN when no
 * peak stands 4 times above its valley. */
double pl_ring_peak(const double *psd, size_t len, double df);

#endif
