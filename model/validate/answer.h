/* model/validate/answer.h - a run's answer to the science question, where
 * people look for it (run show, the run's web page): per law the lambda0
 * its validation fitted, with the 95 % interval and a flag when the fit
 * says nothing about it, and the run's verdict, computed as the report
 * computes it (docs/validation.md, "The verdict" and "On the run"). */
#ifndef PL_MODEL_VALIDATE_ANSWER_H
#define PL_MODEL_VALIDATE_ANSWER_H

#include "db/store.h"
#include "db/validation.h"
#include "model/prism/match.h"

/* What a fitted lambda0 says: a value, one held at an end of the model's
 * range (0, alpha + beta), or one whose interval is as wide as the range. */
typedef enum {
    PL_FIT_FLAG_NONE,
    PL_FIT_FLAG_BOUND,          /* "at its bound" */
    PL_FIT_FLAG_UNDETERMINED    /* "undetermined" */
} pl_fit_flag;

/* The flag of a fitted lambda0 (rad) with standard error sd (rad, NaN when
 * the fit held it fixed) for a prism of n_edges on a ramp inclined beta
 * (rad): at its bound when sd is not finite or lambda0 lies within
 * PL_FIT_BOUND_DEG of 0 or alpha + beta (alpha = pi / n_edges);
 * undetermined when the 95 % interval (pl_fit_interval_factor() sd each
 * side) is wider than the whole range. */
pl_fit_flag pl_fit_flag_of(double lambda0_rad, double sd_rad, int n_edges,
                           double beta_rad);

/* How near an end of (0, alpha + beta) a fitted lambda0 counts as held
 * there, degrees. */
#define PL_FIT_BOUND_DEG 1e-3

/* The flag of a stored validation (its total standard error): NONE for
 * one with lambda0 as recorded. */
pl_fit_flag pl_fit_flag_of_validation(const pl_validation *v);

/* The decimals to print a fitted lambda0 and its interval's half width
 * (degrees) with: down to the half width's second significant digit, 2 to
 * 6 (4 when the width is not finite); the report's rule. */
int pl_fit_decimals(double half_deg);

/* A stored validation's lambda0 in words, the same on every page (n
 * bytes into buf): "5.3013 +- 0.0065 deg (1 sd; 95 %: 5.2833 to 5.3193)"
 * (+- one standard deviation, the total, as everywhere in prismlab; ascii
 * 0 writes the sign as U+00B1), "7.40 deg, not determined by this run:
 * the interval spans the whole range, 0 to 8.55 deg", "... at its
 * bound ...", or "7.20 deg (as recorded, not fitted)". */
void pl_lambda0_words(const pl_validation *v, int ascii, char *buf, size_t n);

/* "", "at its bound", "undetermined". */
const char *pl_fit_flag_words(pl_fit_flag f);

enum { PL_ANSWER_LAWS = 2 };   /* line, plastic */

typedef struct {
    int has;                  /* validated under this law */
    pl_validation v;          /* its fitted validation, else the recorded one */
    double half95_rad;        /* the 95 % interval's half width, statistical
                                 and systematic together
                                 (pl_fit_total_factor() times the total
                                 standard error); NaN when lambda0 was not
                                 fitted */
    double stat_sd_rad, sys_sd_rad;   /* its standard errors apart: the fit's
                                 statistics, the systematic terms (NaN: none
                                 stored, a row from before them) */
    pl_fit_flag flag;
} pl_answer_law;

/* The largest rms L_p residual, in impacts over the valid window, with
 * which a law fits a run (docs/validation.md, "A verdict only where a
 * law fits"): half a slot, beyond which the law puts the run's impacts
 * in other slots.  The law that made a recording stays within 0.27 on
 * every fixture and foreign run (beta held at the catalogue's; 0.009
 * with beta fitted); the other law, a scale or heights wrong lie at 3.1
 * to 1000. */
#define PL_LAW_FIT_RMS 0.5

/* Whether stored validation v fits its run: its rms L_p residual is
 * finite and at most PL_LAW_FIT_RMS, and its lambda0, when fitted, is
 * not at its bound (a fit that ran to an end of the model's range says
 * nothing of the release). */
int pl_law_fits(const pl_validation *v);

/* Keeps a verdict only where a law fits: with line and plastic the two
 * laws' validations the verdict v came from, a verdict naming a law that
 * does not fit becomes undecided, and when neither law fits v becomes
 * PL_VERDICT_NONE and why (n bytes) says so with the figures ("neither
 * law fits: rms 985.6 impacts (line) and 1008.0 (plastic) against 0.05
 * allowed ..."); returns 1 then, else 0 with why "". */
int pl_verdict_gate(pl_verdict *v, const pl_validation *line,
                    const pl_validation *plastic, char *why, size_t n);

/* Why a run whose data quality is q ("suspect", "refused") gets no
 * verdict, into why (n bytes); returns 0 with why "" for any other word. */
int pl_quality_withholds(long long run_id, const char *q, char *why, size_t n);

typedef struct {
    pl_answer_law law[PL_ANSWER_LAWS];   /* [0] line, [1] plastic */
    int fits[PL_ANSWER_LAWS]; /* pl_law_fits() of each law's validation */
    pl_verdict verdict;       /* law PL_VERDICT_NONE unless both laws were
                                 validated with the same fit on a processed
                                 run, at least one fits and its quality is
                                 to be trusted */
    char withheld[512];       /* "" or why no law is named although both were
                                 validated: neither fits (the figures), or
                                 the run's quality is suspect or refused */
    char why[512];            /* "" or why no verdict could be worked out
                                 (a simulation that failed: the laws stand) */
} pl_answer;

/* Reads run_id's validations and works out its verdict (the laws'
 * simulations run again on the window's 1 kHz L_p, as the report does),
 * kept only where a law fits and the run's quality is to be trusted
 * (a->withheld says why not).
 * A run not validated gives an answer with neither law and no verdict; a
 * verdict that cannot be worked out leaves its reason in a->why and
 * returns PL_OK; errors reading the store are returned. */
pl_status pl_answer_get(pl_store *store, long long run_id, pl_answer *a,
                        pl_err *err);

/* The name of the law a verdict supports, in words for a reader:
 * "line-impact law", "plastic law", "undecided", "none (not validated
 * under both laws)". */
const char *pl_verdict_words(pl_verdict_law law);

#endif
