/* model/prism/match.h - a simulation matched to a measured run, and how far
 * apart they are (docs/validation.md defines every figure).
 *
 * The measured L_p(t) (seed 000 eq. 4.2, from the processing stage) is
 * compared with the model's L_p on the same clock: the simulation starts
 * from rest at lambda0 at the release instant t0.  Optionally lambda0, t0
 * and beta, with a constant error c of the measured curve's level (the
 * plain integral before the first impact: see match.c), are fitted to the
 * measured curve by least squares with GSL's
 * trust-region solver (gsl_multifit_nlinear, Levenberg-Marquardt steps,
 * Jacobian by finite differences): L_p(t) is continuous and smooth in the
 * parameters, and a least-squares solver needs a tenth of the model runs a
 * simplex does.  Uncertainties: a delete-a-block jackknife over
 * PL_FIT_BLOCKS contiguous blocks of the fit grid plus the formal
 * variance inflated for AR(1)-correlated residuals (docs/validation.md,
 * "Uncertainties"), and apart from them the systematic terms: the inputs
 * stated with finite precision (g, beta where held, the model's step)
 * through the fit's linearised response ("Systematic terms").
 *
 * Units: SI, angles in radians.  Threading: reentrant.
 */
#ifndef PL_MODEL_MATCH_H
#define PL_MODEL_MATCH_H

#include "core/error.h"
#include "model/prism/prism.h"

#include <stddef.h>

/* What is measured: L_p on a uniform grid, t_k = t_first + k / rate (the
 * run's clock, s), restricted to the valid window, plus the processing
 * stage's other figures. */
typedef struct {
    const double *lp;
    size_t n;
    double t_first, rate;
    double release_t, end_t;      /* detected release and end of valid data */
    double omega_last_mean;       /* rad/s over the last second of the window */
    double ratio_mean;            /* measured omega+/omega- */
    long n_impacts;
    double late_omega;            /* rad/s the prism already turned at release_t,
                                     a recording that starts after the release
                                     (L_p counts from there); 0: from rest */
} pl_match_data;

/* Blocks of the delete-a-block jackknife of the fit's uncertainties. */
#define PL_FIT_BLOCKS 5

/* The 95 % interval of a fitted parameter is its value +- this factor
 * times its standard error (Student's t, PL_FIT_BLOCKS - 1 degrees of
 * freedom: 2.776). */
double pl_fit_interval_factor(void);

typedef struct {
    int lambda0, t0, beta;        /* 1: fit this parameter */
    double beta_sd;               /* rad: the ramp's stated uncertainty; a fitted
                                     beta is kept within 3 sd of the catalogue,
                                     a fixed one is a systematic term */
    double g_sd;                  /* m/s^2: how far the lab's local g may lie from
                                     the model's standard gravity (one sd); NaN
                                     or 0 for PL_SYS_G_SD */
} pl_fit_spec;

/* The default g_sd, m/s^2: the model takes standard gravity (9.80665); a
 * lab's local g lies anywhere from 9.780 (equator) to 9.832 (poles) at
 * sea level, taken as uniform, sd 0.052 / sqrt(12) = 0.015
 * (docs/validation.md, "Systematic terms"). */
#define PL_SYS_G_SD 0.015

/* The systematic terms of a fit (docs/validation.md, "Systematic terms"):
 * each input the lab states with finite precision, moved by its stated sd,
 * and the fitted parameters' response through the fit's own Jacobian
 * (dx = -(J'J)^-1 J' dr, one model run a term).  Standard deviations; NaN
 * for a parameter not fitted. */
enum { PL_SYS_G, PL_SYS_BETA, PL_SYS_STEP, PL_SYS_TERMS };

typedef struct {
    double lambda0[PL_SYS_TERMS];  /* rad: g, beta (where not fitted), the
                                      model's step (resolution) */
    double t0[PL_SYS_TERMS];       /* s */
    double beta[PL_SYS_TERMS];     /* rad */
    double lambda0_sd, t0_sd, beta_sd;   /* the terms in quadrature */
} pl_fit_sys;

/* "g", "beta", "step": the names of the terms (stored, printed). */
const char *pl_sys_term_name(int term);

/* The total standard error of a fitted parameter: stat (the fit's
 * statistical one) and sys (the systematic terms) in quadrature; stat
 * when sys is NaN (a validation stored before the terms), NaN when stat
 * is. */
double pl_fit_total_sd(double stat, double sys);

/* The 95 % factor of the total: Student's t with the Welch-Satterthwaite
 * degrees of freedom (PL_FIT_BLOCKS - 1) (total / stat)^4, the systematic
 * terms taken as known (infinite degrees of freedom); 2.776 for sys = 0,
 * 1.96 as sys dominates. */
double pl_fit_total_factor(double stat, double sys);

typedef struct {
    pl_model_params params;       /* as simulated (lambda0, beta fitted or given) */
    double t0;                    /* release instant used, run clock, s */
    double lp_base;               /* the model's L_p at the data's release_t, taken
                                     off its curve: a late start's turn before the
                                     recording (0 from rest) */
    double lambda0_sd, t0_sd, beta_sd;   /* statistical standard errors (block
                                            jackknife + AR(1) formal); NaN when
                                            not fitted; sys holds the rest */
    double lp_offset, lp_offset_sd;      /* the measured L_p's level error c
                                            (impacts), fitted with any fit, and
                                            its standard error; 0 and NaN
                                            without a fit */
    pl_fit_sys sys;               /* systematic terms (NaN without a fit) */
    double fit_rms;               /* rms of L_p(sim) + c - L_p(meas) over the fit grid */
    int iterations;
    /* the comparison, over the window [t0, end_t] */
    double max_rel_err;           /* max |L_sim - L_exp| / L_exp where L_exp >= 1;
                                     NaN where L_exp never reaches 1 */
    double t_max_rel_err;         /* where it occurs, s */
    double rms_err;               /* rms of L_sim - L_exp */
    double lp_end_meas, lp_end_sim;
    double omega_last_meas, omega_last_sim;
    double ratio_meas, ratio_pred;
    long n_impacts_meas, n_impacts_sim;
    pl_model_end status;          /* the simulation's end: slip/detached = not pure rotation */
    double status_t;              /* when, run clock */
} pl_match_result;

/* Simulates base (whose lambda0 is the starting value or the recorded
 * one) released at t0_start and compares with data; fits what spec asks.
 * PL_EINVAL when the window is empty or lambda0 is missing; PL_ENUMERIC
 * when the fit does not converge (the message says how far it got). */
pl_status pl_match_run(const pl_model_params *base, double t0_start,
                       const pl_match_data *data, const pl_fit_spec *spec,
                       pl_match_result *res, pl_err *err);

/* The simulated L_p (and omega, v_p1, v_p2; each may be NULL) of a
 * result on the times t[0..n-1] (run clock, increasing), 0 before the
 * release; for plots. */
pl_status pl_match_curve(const pl_match_result *res, const double *t,
                         double *lp, double *omega, double *vp1, double *vp2,
                         size_t n, pl_err *err);

/* --- which law the data support (docs/validation.md, "The verdict") --- */

typedef enum {
    PL_VERDICT_NONE,       /* fewer than 3 blocks: nothing to say */
    PL_VERDICT_LINE,       /* the line-impact law fits significantly better */
    PL_VERDICT_PLASTIC,    /* the plastic law fits significantly better */
    PL_VERDICT_UNDECIDED   /* neither, at the 95 % level */
} pl_verdict_law;

typedef struct {
    pl_verdict_law law;
    size_t blocks;         /* block log-ratios pooled */
    double mean_log_ratio; /* mean of ln(MS_plastic / MS_line) over blocks */
    double t_stat;         /* mean / its standard error */
    double t_crit;         /* Student's t, blocks - 1 dof, 97.5 % */
    double rms_ratio;      /* exp(mean / 2): rms plastic / rms line */
} pl_verdict;

/* One run's evidence: the window's samples (n, in time order) cut into
 * PL_FIT_BLOCKS contiguous blocks; d[k] = ln(MS_plastic,k / MS_line,k),
 * the log ratio of the two laws' mean squared L_p residuals in block k.
 * Returns the number written (0 when n < 2 PL_FIT_BLOCKS). */
size_t pl_verdict_blocks(const double *meas, const double *line,
                         const double *plastic, size_t n, double *d);

/* The verdict from k pooled block log-ratios (one run's, a prism's runs',
 * an experiment's): a one-sample t-test of their mean against 0. */
void pl_verdict_decide(const double *d, size_t k, pl_verdict *v);

/* "line", "plastic", "undecided", "none". */
const char *pl_verdict_name(pl_verdict_law law);

/* The error figures of two L_p curves on the same times (exposed for
 * tests): max relative error where meas >= 1 (and where; NaN when meas
 * never reaches 1), rms. */
void pl_match_errors(const double *sim, const double *meas, const double *t,
                     size_t n, double *max_rel, double *t_max, double *rms);

#endif
