/* model/validate/answer.c - a run's fitted lambda0s, their flags and its
 * verdict.  See answer.h and docs/validation.md. */
#include "model/validate/answer.h"

#include "db/derived.h"
#include "db/quality.h"
#include "model/validate/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pl_fit_flag pl_fit_flag_of(double lambda0_rad, double sd_rad, int n_edges,
                           double beta_rad)
{
    if (!isfinite(sd_rad))
        return PL_FIT_FLAG_BOUND;
    double top = n_edges > 0 ? M_PI / n_edges + beta_rad : NAN;
    double tol = PL_FIT_BOUND_DEG * M_PI / 180;
    if (lambda0_rad < tol || (isfinite(top) && fabs(top - lambda0_rad) < tol))
        return PL_FIT_FLAG_BOUND;
    /* a range is only known with the prism's edges */
    if (isfinite(top) && 2 * pl_fit_interval_factor() * sd_rad >= top)
        return PL_FIT_FLAG_UNDETERMINED;
    return PL_FIT_FLAG_NONE;
}

/* Whether a stored validation fitted lambda0 (a fit of beta or t0 alone
 * keeps it as recorded; rows from before fit_lambda0 was stored fitted it
 * whenever they fitted). */
static int lambda0_fitted(const pl_validation *v)
{
    return !strcmp(v->fit, "fitted") && pl_validation_param(v, "fit_lambda0") != 0;
}

pl_fit_flag pl_fit_flag_of_validation(const pl_validation *v)
{
    if (!lambda0_fitted(v))
        return PL_FIT_FLAG_NONE;
    return pl_fit_flag_of(v->lambda0_rad, pl_fit_total_sd(v->lambda0_sd_rad, v->lambda0_sys_rad),
                          v->n_edges, v->beta_rad);
}

int pl_fit_decimals(double half_deg)
{
    int dec = isfinite(half_deg) && half_deg > 0 ? (int)ceil(-log10(half_deg)) + 1 : 4;
    return dec < 2 ? 2 : dec > 6 ? 6 : dec;
}

void pl_lambda0_words(const pl_validation *v, int ascii, char *buf, size_t n)
{
    const char *pm = ascii ? "+-" : "\u00b1";
    double deg = 180 / M_PI, sd = pl_fit_total_sd(v->lambda0_sd_rad, v->lambda0_sys_rad);
    double top = v->n_edges > 0 ? (M_PI / v->n_edges + v->beta_rad) * deg : NAN;
    if (!lambda0_fitted(v)) {
        snprintf(buf, n, "%.2f deg (as recorded, not fitted)", v->lambda0_rad * deg);
        return;
    }
    switch (pl_fit_flag_of_validation(v)) {
    case PL_FIT_FLAG_UNDETERMINED:
        snprintf(buf, n, "%.2f deg, not determined by this run: the interval spans the "
                 "whole range, 0 to %.2f deg", v->lambda0_rad * deg, top);
        return;
    case PL_FIT_FLAG_BOUND:
        snprintf(buf, n, "%.2f deg, at its bound: the fit ran to an end of the range "
                 "0 to %.2f deg, and says nothing of the release", v->lambda0_rad * deg, top);
        return;
    default:
        break;
    }
    if (!isfinite(sd)) {
        snprintf(buf, n, "%.4f deg (fitted, no uncertainty stored)", v->lambda0_rad * deg);
        return;
    }
    double half = pl_fit_total_factor(v->lambda0_sd_rad, v->lambda0_sys_rad) * sd;
    int dec = pl_fit_decimals(sd * deg);
    snprintf(buf, n, "%.*f %s %.*f deg (1 sd; 95 %%: %.*f to %.*f)", dec,
             v->lambda0_rad * deg, pm, dec, sd * deg, dec, (v->lambda0_rad - half) * deg,
             dec, (v->lambda0_rad + half) * deg);
}

const char *pl_fit_flag_words(pl_fit_flag f)
{
    switch (f) {
    case PL_FIT_FLAG_BOUND: return "at its bound";
    case PL_FIT_FLAG_UNDETERMINED: return "undetermined";
    default: return "";
    }
}

const char *pl_verdict_words(pl_verdict_law law)
{
    switch (law) {
    case PL_VERDICT_LINE: return "line-impact law";
    case PL_VERDICT_PLASTIC: return "plastic law";
    case PL_VERDICT_UNDECIDED: return "undecided";
    default: return "none (not validated under both laws)";
    }
}

int pl_law_fits(const pl_validation *v)
{
    return isfinite(v->rms_err_lp) && v->rms_err_lp <= PL_LAW_FIT_RMS &&
           pl_fit_flag_of_validation(v) != PL_FIT_FLAG_BOUND;
}

/* One law's figures for a sentence: "rms 985.6 impacts" and, for a
 * lambda0 fitted to an end of its range, "; lambda0 at its bound". */
static void law_figures(const pl_validation *v, char *buf, size_t n)
{
    snprintf(buf, n, "rms %.*f impacts%s", fabs(v->rms_err_lp) < 10 ? 3 : 1, v->rms_err_lp,
             pl_fit_flag_of_validation(v) == PL_FIT_FLAG_BOUND ? ", lambda0 at its bound" : "");
}

int pl_verdict_gate(pl_verdict *v, const pl_validation *line,
                    const pl_validation *plastic, char *why, size_t n)
{
    int fl = pl_law_fits(line), fp = pl_law_fits(plastic);
    why[0] = '\0';
    if (fl || fp) {
        /* the t-test compares the two; it may not name the one that misses */
        if ((v->law == PL_VERDICT_LINE && !fl) || (v->law == PL_VERDICT_PLASTIC && !fp))
            v->law = PL_VERDICT_UNDECIDED;
        return 0;
    }
    char a[96], b[96];
    law_figures(line, a, sizeof a);
    law_figures(plastic, b, sizeof b);
    long long id = line->run_id;
    if (strcmp(line->fit, "fitted") != 0)
        snprintf(why, n, "neither law fits run %lld: %s (line) and %s (plastic) against %.2g "
                 "allowed; lambda0 as recorded: a fit (prismlab validate %lld, "
                 "without --no-fit) may find the release; if it cannot either, check the "
                 "run's heights, signs and LDV scale (prismlab run show %lld)", id, a, b,
                 PL_LAW_FIT_RMS, id, id);
    else
        snprintf(why, n, "neither law fits run %lld: %s (line) and %s (plastic) against %.2g "
                 "allowed; the numbers the run was processed with (heights, signs, LDV "
                 "scale, prism) may be wrong: see prismlab run show %lld", id, a, b,
                 PL_LAW_FIT_RMS, id);
    v->law = PL_VERDICT_NONE;
    return 1;
}

int pl_quality_withholds(long long run_id, const char *q, char *why, size_t n)
{
    why[0] = '\0';
    if (strcmp(q, "suspect") == 0)
        snprintf(why, n, "run %lld: its data quality is suspect (a check against the physics "
                 "failed: see its faults in prismlab run show %lld): no verdict from numbers "
                 "not to be trusted; correct what the faults name and process it again",
                 run_id, run_id);
    else if (strcmp(q, "refused") == 0)
        snprintf(why, n, "run %lld: processing refused it (see prismlab run show %lld): "
                 "no verdict; correct what the refusal names and process it again",
                 run_id, run_id);
    return why[0] != '\0';
}

/* The verdict of the report's load_series(): the measured L_p at 1 kHz
 * (decimation 10) over the window [release, end], both laws simulated on
 * the same times, block log-ratios, the t-test. */
static pl_status verdict_of(pl_store *store, long long id, const pl_validation *line,
                            const pl_validation *plastic, pl_verdict *out, pl_err *err)
{
    pl_processing proc;
    pl_err ignore = {0};
    if (pl_derived_get(store, id, &proc, &ignore) != PL_OK)
        return PL_OK;
    double *lp = NULL, t0 = 0, rate = 1;
    size_t m = 0;
    if (pl_derived_series(store, id, "Lp", 10, &lp, &m, &t0, &rate, err) != PL_OK)
        return err->code;
    size_t a = (size_t)ceil((proc.release_t_s - t0) * rate);
    size_t b = (size_t)floor((proc.end_t_s - t0) * rate);
    if (b > m)
        b = m;
    if (a >= b)
        a = b = 0;
    size_t n = b - a;
    double *t = malloc((n ? n : 1) * sizeof *t), *sl = malloc((n ? n : 1) * sizeof *sl),
           *sp = malloc((n ? n : 1) * sizeof *sp), d[PL_FIT_BLOCKS];
    pl_status st = PL_OK;
    if (!t || !sl || !sp)
        st = pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for its verdict", id);
    for (size_t k = 0; st == PL_OK && k < n; k++)
        t[k] = t0 + (double)(a + k) / rate;
    if (st == PL_OK && n > 0 &&
        (pl_validation_curve(line, t, sl, NULL, NULL, NULL, n, err) != PL_OK ||
         pl_validation_curve(plastic, t, sp, NULL, NULL, NULL, n, err) != PL_OK))
        st = err->code;
    if (st == PL_OK && n > 0)
        pl_verdict_decide(d, pl_verdict_blocks(lp + a, sl, sp, n, d), out);
    free(lp);
    free(t);
    free(sl);
    free(sp);
    return st;
}

pl_status pl_answer_get(pl_store *store, long long run_id, pl_answer *a,
                        pl_err *err)
{
    static const char *const laws[PL_ANSWER_LAWS] = {"line", "plastic"};
    memset(a, 0, sizeof *a);
    pl_verdict_decide(NULL, 0, &a->verdict);
    for (int i = 0; i < PL_ANSWER_LAWS; i++) {
        pl_answer_law *l = &a->law[i];
        pl_err e = {0};
        l->has = pl_validation_get(store, run_id, laws[i], "fitted", &l->v, &e) == PL_OK;
        if (!l->has && e.code != PL_ENOTFOUND && e.code != PL_OK)
            return pl_err_set(err, e.code, "%s", e.msg);
        if (!l->has)
            l->has = pl_validation_get(store, run_id, laws[i], "recorded", &l->v, &e) == PL_OK;
        int fitted = l->has && !strcmp(l->v.fit, "fitted");
        l->stat_sd_rad = fitted ? l->v.lambda0_sd_rad : NAN;
        l->sys_sd_rad = fitted ? l->v.lambda0_sys_rad : NAN;
        l->half95_rad = fitted ? pl_fit_total_factor(l->stat_sd_rad, l->sys_sd_rad) *
                                     pl_fit_total_sd(l->stat_sd_rad, l->sys_sd_rad)
                               : NAN;
        l->flag = l->has ? pl_fit_flag_of_validation(&l->v) : PL_FIT_FLAG_NONE;
        a->fits[i] = l->has && pl_law_fits(&l->v);
    }
    /* like with like: both fitted or both as recorded */
    if (!a->law[0].has || !a->law[1].has || strcmp(a->law[0].v.fit, a->law[1].v.fit))
        return PL_OK;
    pl_err e = {0};
    pl_quality q;
    if (pl_quality_get(store, run_id, &q, &e) == PL_OK &&
        pl_quality_withholds(run_id, q.quality, a->withheld, sizeof a->withheld))
        return PL_OK;
    if (verdict_of(store, run_id, &a->law[0].v, &a->law[1].v, &a->verdict, &e) != PL_OK) {
        snprintf(a->why, sizeof a->why, "%s", e.msg);
        pl_verdict_decide(NULL, 0, &a->verdict);
        return PL_OK;
    }
    pl_verdict_gate(&a->verdict, &a->law[0].v, &a->law[1].v, a->withheld, sizeof a->withheld);
    return PL_OK;
}
