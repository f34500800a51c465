/* model/prism/match.c - matching simulations, fits and error figures.  See
 * match.h and docs/validation.md. */
#include "model/prism/match.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pl_match_errors(const double *sim, const double *meas, const double *t,
                     size_t n, double *max_rel, double *t_max, double *rms)
{
    double mx = 0, tm = NAN, ss = 0;
    size_t counted = 0;
    for (size_t i = 0; i < n; i++) {
        double d = sim[i] - meas[i];
        ss += d * d;
        /* relative error only where a whole impact has been counted:
         * near the release L_exp -> 0 and the ratio means nothing */
        if (meas[i] >= 1.0) {
            counted++;
            if (fabs(d) / meas[i] > mx) {
                mx = fabs(d) / meas[i];
                tm = t[i];
            }
        }
    }
    /* a measured L_p that never reached one impact has no relative error:
     * 0 would read as a perfect match (issue 44: "0.000 %" at rms 42.9) */
    *max_rel = counted ? mx : NAN;
    *t_max = tm;
    *rms = n ? sqrt(ss / n) : NAN;
}

typedef struct late_run late_run;

/* The objective's context: the fit grid and a model handle reused for
 * every evaluation (pl_model_set_params re-solves the impact only when N
 * or the friction change). */
typedef struct {
    pl_model *m;
    pl_model_params p;
    const pl_fit_spec *spec;
    const double *t, *lp;      /* fit grid: run clock, measured L_p */
    size_t n;
    double *trel, *lsim;       /* work */
    double t0_start, beta0;
    int evals;
    int with_c;                /* x ends with the level error's w */
    double tscale;             /* model time per run time: 1, or sqrt(g'/g)
                                  for the systematic term of g */
    /* a late start (pl_match_data.late_omega): t0 is then t_base plus the
     * fitted shift, and each evaluation moves the release back by the
     * time the model takes to turn as the recording's first LATE_SPAN
     * does, late_gain slots (late_tau()) */
    double late_gain, t_base;
    late_run *late;
} fit_ctx;

/* --- a recording that starts after the release ------------------------- */

/* The model's own run from rest, to find when it turns at a speed: a
 * handle and its omega series, kept across a fit's evaluations. */
struct late_run {
    pl_model *m;
    double *lp;
    size_t cap;
};

static void late_free(late_run *l)
{
    if (!l)
        return;
    pl_model_destroy(l->m);
    free(l->lp);
    free(l);
}

/* How long after its release from rest the model p turns through gain
 * slots (L_p) in the LATE_SPAN that follows: the recording's own turn
 * over its first LATE_SPAN.  Early on the prism rocks over each edge and
 * omega itself swings by a third within a slot (N = 24 at 0.45 s: 1.84 to
 * 2.34 rad/s), so a speed would be met several times; the turn over a
 * second grows steadily.  On the model's 1 kHz L_p, run 2, 8 and 30 s
 * until it gets there.  NaN when it never does. */
#define LATE_SPAN 1.0
static double late_tau(late_run *l, const pl_model_params *base, double gain)
{
    static const double spans[] = {2, 8, 30};
    pl_err err = {0};
    pl_model_params p = *base;
    p.rate = 1000;
    p.ramp_length = 0;
    size_t w = (size_t)(LATE_SPAN * p.rate);
    for (int k = 0; k < 3; k++) {
        p.duration = spans[k] + LATE_SPAN;
        size_t need = (size_t)(p.duration * p.rate) + 2;
        if (need > l->cap) {
            double *b = realloc(l->lp, need * sizeof *b);
            if (!b)
                return NAN;
            l->lp = b;
            l->cap = need;
        }
        if ((l->m ? pl_model_set_params(l->m, &p, &err) : pl_model_create(&l->m, &p, &err)) !=
            PL_OK)
            return NAN;
        pl_model_result r = {.lp = l->lp, .cap_samples = l->cap};
        if (pl_model_run(l->m, &r, &err) != PL_OK)
            return NAN;
        double prev = NAN;
        for (size_t i = 0; i + w < r.n_samples; i++) {
            double g = l->lp[i + w] - l->lp[i];
            if (g >= gain) {
                double f = i > 0 && g > prev ? (gain - prev) / (g - prev) : 1;
                return ((double)i - 1 + f) / p.rate;
            }
            prev = g;
        }
        if (r.end != PL_END_DURATION)
            return NAN;
    }
    return NAN;
}

/* x = (lambda0 in deg, v, u, w): t0 = t0_start + T0_RANGE tanh(v) and
 * beta = beta0 + 3 sd tanh(u) keep the release within 50 ms of the
 * detected one (the detection is good to about 1 ms) and the inclination
 * within three standard deviations of the catalogue, without bounds the
 * solver would have to know about.  A law that cannot match the data
 * would otherwise drag the release far away to trade early error for late.
 * c = C_RANGE tanh(w), always fitted, is the error of the measured L_p's
 * level in impacts: the lattice fixes L_p's steps from one impact to the
 * next, but its level comes from the plain integral of omega from the
 * detected release to the first impact, which a release detected late
 * (the turn before it, alpha t^2 / 2, is never integrated) or a residual
 * offset of omega (a spike in the lead-in moved the offset fit) shifts
 * for good.  Left out, c is taken up by lambda0, which sets the same
 * level (docs/validation.md, "Uncertainties").  The fixtures' level
 * errors reach 0.0017; C_RANGE = 0.02 (a release detected 30 ms late)
 * keeps a law that cannot match the data from hiding its misfit in c. */
static const double T0_RANGE = 0.05, C_RANGE = 0.02;

/* The model's gravity (model/prism/prism.c's G_ACC, standard gravity). */
static const double G_MODEL = 9.80665;

/* Iterations of the solver (fit_drive(), both stages of fit_solve()
 * together): the line law converges in 9-27 on the fixtures, in 47 where
 * the release was detected 6.7 ms late near alpha + beta (lambda0 and t0
 * trade along a long flat valley there, the sum of squares halving every
 * few iterations); past FIT_PATIENCE a fit stops once FIT_STALL_ITER
 * iterations have lowered the sum by less than FIT_STALL_REL (a law that
 * cannot match the data: the plastic law gains 0.006 % over five after
 * 20), and at FIT_MAX_ITER in any case. */
enum { FIT_MAX_ITER = 60, FIT_PATIENCE = 20, FIT_STALL_ITER = 5 };

/* Iterations of a systematic term's refit (sys_refit()), at most. */
enum { SYS_REFIT_ITER = 25 };

/* A fitted beta whose tanh coordinate is past this is held at an end of
 * its 3 sd range: its uncertainty is no longer the fit's own. */
static const double BETA_HELD = 0.999;
static const double FIT_STALL_REL = 1e-3;

static double beta_of(const fit_ctx *c, double u)
{
    return c->beta0 + 3 * c->spec->beta_sd * tanh(u);
}

static void unpack(const fit_ctx *c, const gsl_vector *x, pl_model_params *p,
                   double *t0, double *offset)
{
    size_t k = 0;
    *p = c->p;
    *t0 = c->t0_start;
    if (c->spec->lambda0)
        p->lambda0 = gsl_vector_get(x, k++) * M_PI / 180;
    if (c->spec->t0)
        *t0 = c->t0_start + T0_RANGE * tanh(gsl_vector_get(x, k++));
    if (c->spec->beta)
        p->beta = beta_of(c, gsl_vector_get(x, k++));
    *offset = c->with_c ? C_RANGE * tanh(gsl_vector_get(x, k)) : 0.0;
}

/* Fills c->lsim with the simulated L_p on the fit grid; -1 when the
 * parameters are outside the model's range. */
static int simulate_grid(fit_ctx *c, const pl_model_params *p, double t0)
{
    double alpha = M_PI / p->N;
    if (!(p->lambda0 > 0 && p->lambda0 < alpha + p->beta) || !(p->beta > 0))
        return -1;
    pl_err err = {0};
    if (pl_model_set_params(c->m, p, &err) != PL_OK)
        return -1;
    /* a late start: the release that far back which brings the model to
     * the recording's first speed at t_base, and L_p from there */
    double base_lp = 0;
    pl_model_end end;
    if (c->late_gain > 0) {
        double tau = late_tau(c->late, p, c->late_gain), at;
        if (isnan(tau))
            return -1;
        t0 -= tau;
        at = fmax(0, (c->t_base - t0) * c->tscale);
        if (pl_model_lp_grid(c->m, &at, &base_lp, 1, &end, &err) != PL_OK)
            return -1;
    }
    size_t first = 0;
    while (first < c->n && c->t[first] < t0)
        first++;
    for (size_t i = first; i < c->n; i++)
        c->trel[i - first] = (c->t[i] - t0) * c->tscale;
    if (first < c->n &&
        pl_model_lp_grid(c->m, c->trel, c->lsim + first, c->n - first, &end, &err) != PL_OK)
        return -1;
    for (size_t i = first; i < c->n; i++)
        c->lsim[i] -= base_lp;
    for (size_t i = 0; i < first; i++)
        c->lsim[i] = 0;
    c->evals++;
    return 0;
}

/* The residuals L_sim + c - L_exp on the fit grid, for GSL's trust-region
 * least squares; outside the model's range every residual is large, which
 * turns the step back. */
static int residuals(const gsl_vector *x, void *ctx, gsl_vector *f)
{
    fit_ctx *c = ctx;
    pl_model_params p;
    double t0, offset;
    unpack(c, x, &p, &t0, &offset);
    int bad = simulate_grid(c, &p, t0) != 0;
    for (size_t i = 0; i < c->n; i++)
        gsl_vector_set(f, i, bad ? 1e3 : c->lsim[i] + offset - c->lp[i]);
    return GSL_SUCCESS;
}

/* Model outputs on the run's clock from a 1 kHz simulation, interpolated. */
pl_status pl_match_curve(const pl_match_result *res, const double *t,
                         double *lp, double *omega, double *vp1, double *vp2,
                         size_t n, pl_err *err)
{
    if (n == 0)
        return PL_OK;
    double tmax = t[n - 1] - res->t0;
    pl_model_params p = res->params;
    p.rate = 1000.0;
    p.duration = tmax > 0.01 ? tmax + 0.01 : 0.02;
    size_t ns = (size_t)(p.duration * p.rate) + 2;
    double *buf = malloc(4 * ns * sizeof *buf);
    pl_model_impact *im = malloc(4096 * sizeof *im);
    pl_model *m = NULL;
    if (!buf || !im) {
        free(buf);
        free(im);
        return pl_err_set(err, PL_ENOMEM, "matching: out of memory");
    }
    pl_model_result r = {.lp = buf, .omega = buf + ns, .vp1 = buf + 2 * ns,
                         .vp2 = buf + 3 * ns, .cap_samples = ns,
                         .impacts = im, .cap_impacts = 4096};
    pl_status st = pl_model_create(&m, &p, err);
    if (st == PL_OK)
        st = pl_model_run(m, &r, err);
    pl_model_destroy(m);
    if (st == PL_OK) {
        const double *src[4] = {r.lp, r.omega, r.vp1, r.vp2};
        double *dst[4] = {lp, omega, vp1, vp2};
        for (size_t i = 0; i < n; i++) {
            double u = (t[i] - res->t0) * p.rate;
            for (int s = 0; s < 4; s++) {
                if (!dst[s])
                    continue;
                double v = 0;
                if (u >= 0 && r.n_samples > 0) {
                    size_t k = (size_t)u;
                    if (k + 1 < r.n_samples) {
                        double f = u - (double)k;
                        v = src[s][k] + f * (src[s][k + 1] - src[s][k]);
                    } else if (s == 0 || r.end == PL_END_DURATION) {
                        v = src[s][r.n_samples - 1];   /* hold L_p; speeds 0 once stopped */
                    }
                }
                dst[s][i] = s == 0 && u >= 0 ? v - res->lp_base : v;
            }
        }
    }
    free(buf);
    free(im);
    return st;
}

/* The measured samples [*a, *b) that lie in the valid window
 * [release_t, end_t]; PL_EINVAL when fewer than 10 do. */
static pl_status match_window(const pl_match_data *d, size_t *a, size_t *b,
                              pl_err *err)
{
    *a = 0;
    *b = d->n;
    while (*a < d->n && d->t_first + (double)*a / d->rate < d->release_t)
        ++*a;
    while (*b > *a && d->t_first + (double)(*b - 1) / d->rate > d->end_t)
        --*b;
    if (*b - *a < 10)
        return pl_err_set(err, PL_EINVAL, "matching: the valid window "
                          "[%.3f, %.3f] s holds %zu samples", d->release_t,
                          d->end_t, *b - *a);
    return PL_OK;
}

/* Adds to var[] the formal variances s^2 (J'J)^-1 (A = J'J) times the
 * AR(1) inflation (1 + rho) / (1 - rho) of the residuals r (rho kept in
 * [0, 0.999]); work: perm, W (np x np).  0, or -1 when J'J is singular. */
static int formal_ar1(const gsl_matrix *A, const gsl_vector *r, size_t n,
                      size_t np, gsl_permutation *perm, gsl_matrix *W,
                      double *var)
{
    double sse = 0, c1 = 0, rho;
    int sign, rc = 0;
    gsl_matrix *inv = gsl_matrix_alloc(np, np);
    for (size_t i = 0; i < n; i++) {
        double ri = gsl_vector_get(r, i);
        sse += ri * ri;
        if (i + 1 < n)
            c1 += ri * gsl_vector_get(r, i + 1);
    }
    rho = sse > 0 ? c1 / sse : 0;
    rho = rho < 0 ? 0 : rho > 0.999 ? 0.999 : rho;
    gsl_matrix_memcpy(W, A);
    if (!inv || gsl_linalg_LU_decomp(W, perm, &sign) != GSL_SUCCESS ||
        gsl_linalg_LU_invert(W, perm, inv) != GSL_SUCCESS)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < np; i++)
        var[i] += sse / (double)(n - np) * gsl_matrix_get(inv, i, i) *
                  (1 + rho) / (1 - rho);
    gsl_matrix_free(inv);
    return rc;
}

/* The variances var[0..np-1] of the parameters of J's columns by a
 * delete-a-block jackknife (Kunsch 1989): the fit grid is cut into
 * PL_FIT_BLOCKS contiguous blocks, the fit is redone without each block
 * in turn, and the spread of the K estimates gives var = (K-1)/K sum (x_k
 * - mean)^2.  The residuals of L_p are correlated along the curve (a
 * processing bias or a model mismatch stays the same sign for hundreds of
 * samples), so the formal s^2 (J'J)^-1, which treats them as independent,
 * is 10-100 times too small; blocks much longer than that correlation
 * carry it.  Each refit is one Gauss-Newton step from the solution, with
 * the Jacobian J and residuals r already there:
 *     dx_k = (J'J - J_k'J_k)^-1 (J_k'r_k - J'r),
 * exact for a linear model and a few model runs cheaper than K refits.
 * 0, or -1 when a matrix is singular (var is then incomplete). */
static int block_variances(const gsl_matrix *J, const gsl_vector *r, double *var)
{
    enum { K = PL_FIT_BLOCKS, PMAX = 4 };
    size_t n = J->size1, np = J->size2;
    double est[K][PMAX], mean[PMAX] = {0};
    gsl_matrix *A = gsl_matrix_alloc(np, np), *Ak = gsl_matrix_alloc(np, np);
    gsl_vector *g = gsl_vector_calloc(np), *gk = gsl_vector_alloc(np);
    gsl_vector *dx = gsl_vector_alloc(np);
    gsl_permutation *perm = gsl_permutation_alloc(np);
    int ok = A && Ak && g && gk && dx && perm && np <= PMAX && n >= 2 * K;

    for (size_t i = 0; i < np; i++)
        var[i] = 0;
    if (ok) {
        /* J'J and J'r over the whole grid */
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, J, J, 0.0, A);
        gsl_blas_dgemv(CblasTrans, 1.0, J, r, 0.0, g);
    }
    for (size_t k = 0; ok && k < K; k++) {
        size_t lo = n * k / K, hi = n * (k + 1) / K;
        gsl_matrix_const_view Jk = gsl_matrix_const_submatrix(J, lo, 0, hi - lo, np);
        gsl_vector_const_view rk = gsl_vector_const_subvector(r, lo, hi - lo);
        int sign;
        /* (J'J - J_k'J_k) and (J_k'r_k - J'r) */
        gsl_matrix_memcpy(Ak, A);
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, -1.0, &Jk.matrix, &Jk.matrix,
                       1.0, Ak);
        gsl_blas_dgemv(CblasTrans, 1.0, &Jk.matrix, &rk.vector, 0.0, gk);
        gsl_vector_sub(gk, g);
        if (gsl_linalg_LU_decomp(Ak, perm, &sign) != GSL_SUCCESS ||
            gsl_linalg_LU_solve(Ak, perm, gk, dx) != GSL_SUCCESS) {
            ok = 0;
            break;
        }
        for (size_t i = 0; i < np; i++) {
            est[k][i] = gsl_vector_get(dx, i);
            mean[i] += est[k][i] / K;
        }
    }
    for (size_t k = 0; ok && k < K; k++)
        for (size_t i = 0; i < np; i++)
            var[i] += (double)(K - 1) / K * (est[k][i] - mean[i]) * (est[k][i] - mean[i]);
    /* Plus the formal variance s^2 (J'J)^-1 inflated for an AR(1)
     * correlation of the residuals, (1 + rho) / (1 - rho) with rho their
     * lag-1 autocorrelation: the within-block part of the correlated
     * noise, which five block estimates (four degrees of freedom) see
     * only roughly.  The two add in quadrature. */
    if (ok && formal_ar1(A, r, n, np, perm, Ak, var) != 0)
        ok = 0;
    gsl_matrix_free(A);
    gsl_matrix_free(Ak);
    gsl_vector_free(g);
    gsl_vector_free(gk);
    gsl_vector_free(dx);
    gsl_permutation_free(perm);
    return ok ? 0 : -1;
}

/* The columns of J whose parameter the fit still moves (col[], *na of
 * them) as a matrix of their own; NULL when none or out of memory.  A
 * column 1e9 times shorter than the longest belongs to a parameter held
 * at the end of its range (its tanh saturated). */
static gsl_matrix *active_jacobian(const gsl_matrix *J, size_t *col, size_t *na)
{
    size_t n = J->size1, np = J->size2;
    double norm[8], top = 0;
    *na = 0;
    if (np > 8)
        return NULL;
    for (size_t j = 0; j < np; j++) {
        gsl_vector_const_view cj = gsl_matrix_const_column(J, j);
        norm[j] = gsl_blas_dnrm2(&cj.vector);
        top = fmax(top, norm[j]);
    }
    for (size_t j = 0; j < np; j++)
        if (norm[j] > 1e-9 * top)
            col[(*na)++] = j;
    gsl_matrix *Ja = *na ? gsl_matrix_alloc(n, *na) : NULL;
    for (size_t i = 0; Ja && i < *na; i++) {
        gsl_vector_const_view cj = gsl_matrix_const_column(J, col[i]);
        gsl_matrix_set_col(Ja, i, &cj.vector);
    }
    return Ja;
}

/* The standard errors of the fitted parameters at xb (block_variances()),
 * carried through the maps of unpack().  A parameter held at the end of
 * its range (its tanh saturated: c where the law or a fixed beta cannot
 * match the data, t0 at 50 ms) has no derivative left and would make J'J
 * singular: it is taken as fixed there, its error NaN, and the others'
 * errors are those of the fit without it. */
static void fit_uncertainties(pl_match_result *res, const pl_fit_spec *spec,
                              const gsl_vector *xb, const gsl_matrix *J,
                              const gsl_vector *r)
{
    enum { PMAX = 4 };
    size_t np = J->size2, col[PMAX], na;
    double va[PMAX], var[PMAX];
    if (np > PMAX)
        return;
    gsl_matrix *Ja = active_jacobian(J, col, &na);
    int ok = Ja && block_variances(Ja, r, va) == 0;
    gsl_matrix_free(Ja);
    if (!ok)
        return;
    for (size_t j = 0; j < np; j++)
        var[j] = NAN;
    for (size_t i = 0; i < na; i++)
        var[col[i]] = va[i];
    size_t k = 0;
    if (spec->lambda0)
        res->lambda0_sd = sqrt(var[k]) * M_PI / 180, k++;
    if (spec->t0) {
        double v = gsl_vector_get(xb, k);
        res->t0_sd = sqrt(var[k]) * T0_RANGE * (1 - tanh(v) * tanh(v));
        k++;
    }
    if (spec->beta) {
        double u = gsl_vector_get(xb, k);
        res->beta_sd = sqrt(var[k]) * 3 * spec->beta_sd * (1 - tanh(u) * tanh(u));
        k++;
    }
    double w = gsl_vector_get(xb, k);
    res->lp_offset_sd = sqrt(var[k]) * C_RANGE * (1 - tanh(w) * tanh(w));
}

double pl_fit_interval_factor(void)
{
    /* Student's t with K - 1 degrees of freedom: the jackknife's own
     * uncertainty about its variance */
    return gsl_cdf_tdist_Pinv(0.975, PL_FIT_BLOCKS - 1);
}

const char *pl_sys_term_name(int term)
{
    static const char *const names[PL_SYS_TERMS] = {"g", "beta", "step"};
    return term >= 0 && term < PL_SYS_TERMS ? names[term] : "?";
}

double pl_fit_total_sd(double stat, double sys)
{
    return isnan(sys) ? stat : sqrt(stat * stat + sys * sys);
}

double pl_fit_total_factor(double stat, double sys)
{
    double total = pl_fit_total_sd(stat, sys);
    if (!(stat > 0) || !isfinite(total))
        return pl_fit_interval_factor();
    /* Welch-Satterthwaite: only the statistical part is estimated, from
     * PL_FIT_BLOCKS - 1 degrees of freedom; the systematic terms are
     * stated precisions, known */
    double r = total / stat, dof = (PL_FIT_BLOCKS - 1) * r * r * r * r;
    return gsl_cdf_tdist_Pinv(0.975, fmin(dof, 1e6));
}

/* Moves c's model by systematic term `term`'s stated sd (sys_refit()
 * moves it back from *keep and beta0); 1 when the term does not apply
 * (beta fitted inside its range, xb's coordinate not saturated: its
 * uncertainty is the fit's own; held at an end of the range, the range
 * itself moves).  g: the motion is driven by gravity alone and impacts
 * are ratios of speeds, so a gravity g' runs the same motion on a clock
 * sqrt(g'/g) faster; beta: the ramp's stated sd; step: the RK4 step
 * halved, the model's own resolution. */
static int sys_move(fit_ctx *c, int term, const gsl_vector *xb, pl_model_params *keep)
{
    double g_sd = c->spec->g_sd > 0 ? c->spec->g_sd : PL_SYS_G_SD;
    *keep = c->p;
    switch (term) {
    case PL_SYS_G:
        c->tscale = sqrt(1 + g_sd / G_MODEL);
        return 0;
    case PL_SYS_BETA:
        if (c->spec->beta) {
            double u = tanh(gsl_vector_get(xb, (size_t)(c->spec->lambda0 + c->spec->t0)));
            if (fabs(u) < BETA_HELD)
                return 1;
            c->beta0 += c->spec->beta_sd;
            return 0;
        }
        c->p.beta += c->spec->beta_sd;
        return 0;
    default:
        c->p.rate = 2 * c->p.rate;
        return 0;
    }
}

/* Writes dx (x's coordinates at xb) as the parameters' standard errors
 * of one systematic term into sys's slot `term`. */
static void sys_store(const fit_ctx *c, const gsl_vector *xb, const double *dx,
                      int term, pl_fit_sys *sys)
{
    const pl_fit_spec *spec = c->spec;
    size_t k = 0;
    if (spec->lambda0)
        sys->lambda0[term] = fabs(dx[k++]) * M_PI / 180;
    if (spec->t0) {
        double v = tanh(gsl_vector_get(xb, k));
        sys->t0[term] = fabs(dx[k++]) * T0_RANGE * (1 - v * v);
    }
    if (spec->beta) {
        double u = tanh(gsl_vector_get(xb, k));
        sys->beta[term] = fabs(dx[k++]) * 3 * spec->beta_sd * (1 - u * u);
    }
}

/* The solver's parameters: GSL's trust region, with the finite
 * differences' step for a model smooth in its parameters to ~1e-10. */
static gsl_multifit_nlinear_parameters fit_parameters(void)
{
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    fp.h_df = 1e-5;
    return fp;
}

/* The sum of squares of the workspace's residuals. */
static double ws_sse(const gsl_multifit_nlinear_workspace *ws)
{
    double sse;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(ws), gsl_multifit_nlinear_residual(ws), &sse);
    return sse;
}

/* gsl_multifit_nlinear_driver()'s loop (iterate, then test for a small
 * step, gradient or change of the residuals; no progress on the first
 * iteration ends it) with the stall test above, counting the done
 * iterations of an earlier stage of the same fit.  GSL_SUCCESS when the
 * solver's tests or the stall ended it, else GSL_EMAXITER or the solver's
 * error; *info: why (GSL's codes). */
static int fit_drive(gsl_multifit_nlinear_workspace *ws, size_t done, int *info)
{
    double hist[FIT_STALL_ITER] = {0};   /* sums of squares, iteration % size */
    int status;
    size_t iter = 0;
    hist[0] = ws_sse(ws);
    *info = 0;
    do {
        status = gsl_multifit_nlinear_iterate(ws);
        if (status == GSL_ENOPROG && iter == 0) {
            *info = status;
            return GSL_EMAXITER;
        }
        ++iter;
        double sse = ws_sse(ws), before = hist[iter % FIT_STALL_ITER];
        hist[iter % FIT_STALL_ITER] = sse;
        status = gsl_multifit_nlinear_test(1e-8, 1e-8, 1e-6, info, ws);
        if (status == GSL_CONTINUE && iter >= FIT_STALL_ITER &&
            done + iter >= FIT_PATIENCE && before - sse < FIT_STALL_REL * sse)
            return GSL_SUCCESS;   /* stalled: *info stays 0 */
    } while (status == GSL_CONTINUE && done + iter < FIT_MAX_ITER);
    if (status == GSL_ETOLF || status == GSL_ETOLX || status == GSL_ETOLG) {
        *info = status;
        status = GSL_SUCCESS;
    }
    if (done + iter >= FIT_MAX_ITER && status != GSL_SUCCESS)
        status = GSL_EMAXITER;
    return status;
}

/* One run of the solver on ws from x; the sum of squares into *sse and
 * the iterations added to *iters.  PL_ENUMERIC when it failed. */
static pl_status fit_stage(fit_ctx *c, gsl_multifit_nlinear_workspace *ws,
                           const gsl_vector *x, double *sse, int *iters,
                           pl_err *err)
{
    size_t nf = c->n;
    gsl_multifit_nlinear_fdf fdf = {.f = residuals, .df = NULL, .fvv = NULL,
                                    .n = nf, .p = x->size, .params = c};
    int info = 0;
    gsl_multifit_nlinear_init(x, &fdf, ws);
    int status = fit_drive(ws, (size_t)*iters, &info);
    *iters += (int)gsl_multifit_nlinear_niter(ws);
    gsl_vector *fx = gsl_multifit_nlinear_residual(ws);
    *sse = 0;
    for (size_t i = 0; i < nf; i++)
        *sse += gsl_vector_get(fx, i) * gsl_vector_get(fx, i);
    if ((status != GSL_SUCCESS && status != GSL_EMAXITER) || !(*sse < 1e5 * nf))
        return pl_err_set(err, PL_ENUMERIC, "matching: the fit did not "
                          "converge (%s after %d iterations, rms %.3g)",
                          gsl_strerror(status), *iters, sqrt(*sse / nf));
    return PL_OK;
}

/* One systematic term's response dx (x's coordinates) at the fit's
 * solution xb: the fit done again with the term moved (sys_move()),
 * starting at xb, on ws.  A refit, not the linearised step
 * -(J'J)^-1 J' d through the Jacobian at xb: lambda0, t0 and beta trade
 * along a curved valley, and the linear step's lambda0 came out 0.0041
 * and 0.31 deg for g on two runs cut 0.1 s apart, where a refit moves
 * both by 0.0022 (docs/validation.md, "Systematic terms").  1 when the
 * term does not apply, -1 when the refit fails. */
static int sys_refit(fit_ctx *c, int term, gsl_multifit_nlinear_workspace *ws,
                     const gsl_vector *xb, double *dx)
{
    pl_model_params keep;
    double beta0 = c->beta0;
    int rc = sys_move(c, term, xb, &keep);
    if (rc == 0) {
        /* from the solution a refit converges in 10-20 iterations; the
         * count starts past FIT_PATIENCE, so that a law that cannot match
         * the data stops once it stalls, and ends at FIT_MAX_ITER */
        double sse;
        int iters = FIT_MAX_ITER - SYS_REFIT_ITER;
        pl_err ignore = {0};
        rc = fit_stage(c, ws, xb, &sse, &iters, &ignore) == PL_OK ? 0 : -1;
        const gsl_vector *xn = gsl_multifit_nlinear_position(ws);
        for (size_t j = 0; rc == 0 && j < xb->size; j++)
            dx[j] = gsl_vector_get(xn, j) - gsl_vector_get(xb, j);
    }
    c->p = keep;
    c->beta0 = beta0;
    c->tscale = 1;
    return rc;
}

/* The systematic terms of the fit at xb into res->sys (sys_refit(), one
 * refit a term that applies).  A term that cannot be worked out is NaN,
 * and so is the sum it is part of. */
static void fit_systematics(fit_ctx *c, const gsl_vector *xb, pl_match_result *res)
{
    enum { PMAX = 4 };
    pl_fit_sys *sys = &res->sys;
    size_t np = xb->size;
    double dx[PMAX];
    gsl_multifit_nlinear_parameters fp = fit_parameters();
    gsl_multifit_nlinear_workspace *ws = np <= PMAX && c->n > np
        ? gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, c->n, np) : NULL;
    for (int term = 0; term < PL_SYS_TERMS; term++) {
        int rc = ws ? sys_refit(c, term, ws, xb, dx) : -1;
        if (rc == 1)
            for (size_t j = 0; j < np; j++)
                dx[j] = 0;
        if (rc >= 0)
            sys_store(c, xb, dx, term, sys);
    }
    double *rows[3] = {sys->lambda0, sys->t0, sys->beta};
    double *sum[3] = {&sys->lambda0_sd, &sys->t0_sd, &sys->beta_sd};
    for (int r = 0; r < 3; r++) {
        double ss = 0;
        for (int term = 0; term < PL_SYS_TERMS; term++)
            ss += rows[r][term] * rows[r][term];
        *sum[r] = sqrt(ss);   /* NaN when a term is */
    }
    gsl_multifit_nlinear_free(ws);
}

/* The parameters alone from x0's start (ws0), then with the level error
 * c from there (x1, ws1), into res with the sum of squares in *sse.  c
 * from the start took the level of a lambda0 far off (the release angle
 * unknown: 90 % of alpha + beta) into c, whose tanh then saturated at its
 * bound and held the fit there (8.5 deg for 5.322 on a steel-22 run);
 * the level brings lambda0 into the right valley first. */
static pl_status fit_two_stages(fit_ctx *c, gsl_multifit_nlinear_workspace *ws0,
                                gsl_vector *x0, gsl_multifit_nlinear_workspace *ws1,
                                gsl_vector *x1, pl_match_result *res, double *sse,
                                pl_err *err)
{
    size_t np = x0->size;
    c->with_c = 0;
    res->iterations = 0;
    if (fit_stage(c, ws0, x0, sse, &res->iterations, err) != PL_OK)
        return err->code;
    gsl_vector *xb = gsl_multifit_nlinear_position(ws0);
    for (size_t k = 0; k < np; k++)
        gsl_vector_set(x1, k, gsl_vector_get(xb, k));
    gsl_vector_set(x1, np, 0.0);   /* c: L_p's level as measured */
    c->with_c = 1;
    if (fit_stage(c, ws1, x1, sse, &res->iterations, err) != PL_OK)
        return err->code;
    xb = gsl_multifit_nlinear_position(ws1);
    unpack(c, xb, &res->params, &res->t0, &res->lp_offset);
    res->fit_rms = sqrt(*sse / (double)c->n);
    fit_uncertainties(res, c->spec, xb, gsl_multifit_nlinear_jac(ws1),
                      gsl_multifit_nlinear_residual(ws1));
    fit_systematics(c, xb, res);
    return PL_OK;
}

/* Fills x0 (lambda0 in deg, v = 0: t0 at the detection, beta's u). */
static void fit_start(const pl_fit_spec *spec, gsl_vector *x0, double lambda0_deg, double u)
{
    size_t k = 0;
    if (spec->lambda0)
        gsl_vector_set(x0, k++, lambda0_deg);
    if (spec->t0)
        gsl_vector_set(x0, k++, 0.0);
    if (spec->beta)
        gsl_vector_set(x0, k++, u);
}

/* A fit whose release ends further than this from the detection (good to
 * about a millisecond) has walked down the lambda0-t0 valley, and is
 * tried again from t0 held there (fit_solve()). */
static const double T0_WANDER = 0.005;

/* Runs the least-squares solver on c from base's lambda0 (and v = u = 0)
 * and puts the best parameters, the release instant, the level error, the
 * rms and the uncertainties into res (fit_two_stages()).  When lambda0
 * and t0 are both fitted and the release ends more than T0_WANDER from
 * the detection, a second start: lambda0 (and beta) fitted with t0 held
 * at the detected release (xp, wsp), the two stages from there, and the
 * lower sum of squares kept.  Near alpha + beta lambda0 and t0 trade
 * along a long flat valley, and from a rough recorded angle the solver
 * walked down it and stalled (the foreign plastic drop-out run: t0 38 ms
 * early, 5.2338 +- 0.0559 deg for 5.06, rms 0.008 impacts; from the held
 * start 5.0635 +- 0.0099, rms 0.001).  Not always from the held start:
 * there, from a start far above the truth (7.73 deg for 5.322 on a
 * steel-22 run), lambda0 climbed to the top of its range (8.57, rms
 * 0.2) where the free fit finds 5.3220. */
static pl_status fit_solve(fit_ctx *c, const pl_model_params *base,
                           gsl_multifit_nlinear_workspace *wsp, gsl_vector *xp,
                           gsl_multifit_nlinear_workspace *ws0, gsl_vector *x0,
                           gsl_multifit_nlinear_workspace *ws1, gsl_vector *x1,
                           pl_match_result *res, pl_err *err)
{
    const pl_fit_spec *spec = c->spec;
    double sse, lambda0_deg = base->lambda0 * 180 / M_PI;
    fit_start(spec, x0, lambda0_deg, 0.0);
    pl_status st = fit_two_stages(c, ws0, x0, ws1, x1, res, &sse, err);
    if (st != PL_OK || !wsp || !(fabs(res->t0 - c->t0_start) > T0_WANDER))
        return st;
    /* t0 held at the detection (xp: lambda0 and, when fitted, beta's u) */
    pl_fit_spec held = *spec;
    held.t0 = 0;
    c->spec = &held;
    c->with_c = 0;
    gsl_vector_set(xp, 0, lambda0_deg);
    if (spec->beta)
        gsl_vector_set(xp, 1, 0.0);
    int iters = 0;
    double sse_held;
    pl_err ignore = {0};
    st = fit_stage(c, wsp, xp, &sse_held, &iters, &ignore);
    c->spec = spec;
    if (st != PL_OK)
        return PL_OK;   /* the first start's result stands */
    gsl_vector *xb = gsl_multifit_nlinear_position(wsp);
    fit_start(spec, x0, gsl_vector_get(xb, 0), spec->beta ? gsl_vector_get(xb, 1) : 0.0);
    pl_match_result second = *res;
    if (fit_two_stages(c, ws0, x0, ws1, x1, &second, &sse_held, &ignore) == PL_OK &&
        sse_held < sse) {
        second.iterations += res->iterations + iters;
        *res = second;
    } else {
        res->iterations += second.iterations + iters;
    }
    return PL_OK;
}

/* The slots the recording turns through over its first LATE_SPAN from
 * release_t (a late start: late_tau() finds the model's moment that
 * turns as much); 0 when not a late start or too short. */
static double late_gain(const pl_match_data *d)
{
    if (!(d->late_omega > 0))
        return 0;
    double a = (d->release_t - d->t_first) * d->rate, b = a + LATE_SPAN * d->rate;
    if (a < 0 || b + 1 >= (double)d->n)
        return 0;
    size_t i = (size_t)a, j = (size_t)b;
    return d->lp[j] - d->lp[i];
}

/* Fits what spec names to the measured L_p lexp on the window's times t
 * (nw of them; trel and lsim: work of that length), starting from base
 * released at res->t0, into res. */
static pl_status fit(pl_match_result *res, const pl_model_params *base,
                     const pl_fit_spec *spec, const pl_match_data *d,
                     const double *t, const double *lexp, size_t nw,
                     double *trel, double *lsim, pl_err *err)
{
    size_t np = (size_t)(spec->lambda0 + spec->t0 + spec->beta);
    /* fit on a 100 Hz sub-grid: L_p is smooth between impacts at that
     * scale and the fit costs a tenth */
    size_t stride = (size_t)(d->rate / 100.0);
    if (stride < 1)
        stride = 1;
    size_t nf = (nw + stride - 1) / stride;
    double *tf = malloc(nf * sizeof *tf), *lf = malloc(nf * sizeof *lf);
    fit_ctx c = {.p = res->params, .spec = spec, .t = tf, .lp = lf, .n = nf,
                 .trel = trel, .lsim = lsim, .t0_start = res->t0,
                 .beta0 = base->beta, .tscale = 1, .late_gain = late_gain(d),
                 .t_base = d->release_t};
    if (d->late_omega > 0 && !(c.late = calloc(1, sizeof *c.late))) {
        free(tf);
        free(lf);
        return pl_err_set(err, PL_ENOMEM, "matching: out of memory");
    }
    gsl_vector *x0 = gsl_vector_alloc(np), *x1 = gsl_vector_alloc(np + 1);
    gsl_multifit_nlinear_parameters fp = fit_parameters();
    gsl_multifit_nlinear_workspace *ws0 = x0 && nf > np + 1
        ? gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nf, np) : NULL;
    gsl_multifit_nlinear_workspace *ws1 = x1 && ws0
        ? gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nf, np + 1) : NULL;
    int held = spec->lambda0 && spec->t0;   /* fit_solve()'s second start */
    gsl_vector *xp = held ? gsl_vector_alloc(np - 1) : NULL;
    gsl_multifit_nlinear_workspace *wsp = xp && nf > np
        ? gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nf, np - 1) : NULL;
    pl_status st;
    if (!tf || !lf || !ws1 || (held && !wsp) ||
        pl_model_create(&c.m, &res->params, err) != PL_OK) {
        st = err->code ? err->code : pl_err_set(err, PL_ENOMEM, "matching: out of memory");
    } else {
        for (size_t i = 0; i < nf; i++) {
            tf[i] = t[i * stride];
            lf[i] = lexp[i * stride];
        }
        st = fit_solve(&c, base, wsp, xp, ws0, x0, ws1, x1, res, err);
    }
    gsl_multifit_nlinear_free(wsp);
    gsl_vector_free(xp);
    gsl_multifit_nlinear_free(ws0);
    gsl_multifit_nlinear_free(ws1);
    gsl_vector_free(x0);
    gsl_vector_free(x1);
    pl_model_destroy(c.m);
    late_free(c.late);
    free(tf);
    free(lf);
    return st;
}

/* The comparison of the simulated L_p lsim and omega wsim with the
 * measured lexp and d's figures over the window's times t (nw); the rms
 * of the whole window is the fit residual when nothing was fitted. */
static void compare(pl_match_result *res, const pl_match_data *d,
                    const double *t, const double *lexp, const double *lsim,
                    const double *wsim, size_t nw, int fitted)
{
    pl_match_errors(lsim, lexp, t, nw, &res->max_rel_err,
                    &res->t_max_rel_err, &res->rms_err);
    if (!fitted) {
        double ss = 0;
        for (size_t i = 0; i < nw; i++)
            ss += (lsim[i] - lexp[i]) * (lsim[i] - lexp[i]);
        res->fit_rms = sqrt(ss / nw);
    }
    res->lp_end_meas = lexp[nw - 1];
    res->lp_end_sim = lsim[nw - 1];
    /* mean simulated speed over the window's last second */
    size_t s1 = nw > (size_t)d->rate ? nw - (size_t)d->rate : 0;
    double acc = 0;
    for (size_t i = s1; i < nw; i++)
        acc += wsim[i];
    res->omega_last_sim = acc / (double)(nw - s1);
    res->omega_last_meas = d->omega_last_mean;
    res->ratio_meas = d->ratio_mean;
    res->n_impacts_meas = d->n_impacts;
}

/* The model's own outcome over the window (its impacts, their ratio, how
 * and when it ended) from res's parameters and release. */
static pl_status model_outcome(pl_match_result *res, const pl_match_data *d,
                               pl_err *err)
{
    pl_status st = PL_OK;
    pl_model_params p = res->params;
    p.rate = 1000;
    p.duration = fmax(d->end_t - res->t0, 0.01);
    size_t ns = (size_t)(p.duration * p.rate) + 2;
    double *lpb = malloc(ns * sizeof *lpb);
    pl_model_impact *im = malloc(8192 * sizeof *im);
    pl_model *m = NULL;
    pl_model_result r = {.lp = lpb, .cap_samples = ns, .impacts = im, .cap_impacts = 8192};
    if (!lpb || !im)
        st = pl_err_set(err, PL_ENOMEM, "matching: out of memory");
    if (st == PL_OK && (st = pl_model_create(&m, &p, err)) == PL_OK &&
        (st = pl_model_run(m, &r, err)) == PL_OK) {
        res->ratio_pred = pl_model_impact_ratio(m);
        res->n_impacts_sim = (long)r.n_impacts;
        res->status = r.end;
        res->status_t = res->t0 + r.t_end;
    }
    pl_model_destroy(m);
    free(lpb);
    free(im);
    return st;
}

/* A late start's release on the run's clock and the model's L_p at the
 * recording's start, for res's parameters (the fit's t0 is the shift from
 * the speed-matched release: see simulate_grid()). */
static pl_status late_release(pl_match_result *res, const pl_match_data *d, pl_err *err)
{
    late_run *l = calloc(1, sizeof *l);
    if (!l)
        return pl_err_set(err, PL_ENOMEM, "matching: out of memory");
    double gain = late_gain(d), tau = gain > 0 ? late_tau(l, &res->params, gain) : NAN;
    late_free(l);
    if (isnan(tau))
        return pl_err_set(err, PL_ENUMERIC, "matching: the model never turns through %.3g "
                          "slots in %g s as the recording's start does (a late start at %.3g "
                          "rad/s)", gain, LATE_SPAN, d->late_omega);
    res->t0 -= tau;
    pl_model *m = NULL;
    pl_model_end end;
    double at = d->release_t - res->t0;
    pl_status st = pl_model_create(&m, &res->params, err);
    if (st == PL_OK)
        st = pl_model_lp_grid(m, &at, &res->lp_base, 1, &end, err);
    pl_model_destroy(m);
    return st;
}

pl_status pl_match_run(const pl_model_params *base, double t0_start,
                       const pl_match_data *d, const pl_fit_spec *spec,
                       pl_match_result *res, pl_err *err)
{
    memset(res, 0, sizeof *res);
    res->lambda0_sd = res->t0_sd = res->beta_sd = res->lp_offset_sd = NAN;
    res->sys.lambda0_sd = res->sys.t0_sd = res->sys.beta_sd = NAN;
    for (int k = 0; k < PL_SYS_TERMS; k++)
        res->sys.lambda0[k] = res->sys.t0[k] = res->sys.beta[k] = NAN;
    if (!(base->lambda0 > 0))
        return pl_err_set(err, PL_EINVAL, "matching: no release angle lambda0 "
                          "(record one with the run or fit it)");
    size_t a, b;
    if (match_window(d, &a, &b, err) != PL_OK)
        return err->code;
    size_t nw = b - a;
    double *t = malloc(nw * sizeof *t), *lsim = malloc(nw * sizeof *lsim);
    double *wsim = malloc(nw * sizeof *wsim), *trel = malloc(nw * sizeof *trel);
    if (!t || !lsim || !wsim || !trel) {
        free(t); free(lsim); free(wsim); free(trel);
        return pl_err_set(err, PL_ENOMEM, "matching: out of memory");
    }
    for (size_t i = 0; i < nw; i++)
        t[i] = d->t_first + (double)(a + i) / d->rate;
    const double *lexp = d->lp + a;

    res->params = *base;
    /* compared over the measured window only: the ramp's end is where the
     * measurement stops, not something to simulate twice */
    res->params.ramp_length = 0;
    /* the model's RK4 step is 1 / rate: 1 ms is accurate to ~1e-12 on these
     * arcs (impacts are located by Newton inside the step, not on the
     * grid) and ten times cheaper than the rig's 10 kHz */
    res->params.rate = 1000.0;
    res->t0 = t0_start;
    int fitted = spec->lambda0 || spec->t0 || spec->beta;
    pl_status st = fitted ? fit(res, base, spec, d, t, lexp, nw, trel, lsim, err) : PL_OK;
    if (st == PL_OK && d->late_omega > 0)
        st = late_release(res, d, err);
    if (st == PL_OK)
        st = pl_match_curve(res, t, lsim, wsim, NULL, NULL, nw, err);
    if (st == PL_OK) {
        compare(res, d, t, lexp, lsim, wsim, nw, fitted);
        st = model_outcome(res, d, err);
    }
    free(t);
    free(lsim);
    free(wsim);
    free(trel);
    return st;
}

/* --- the verdict ------------------------------------------------------- */

size_t pl_verdict_blocks(const double *meas, const double *line,
                         const double *plastic, size_t n, double *d)
{
    enum { K = PL_FIT_BLOCKS };
    /* a floor far below any real residual keeps a perfect fit finite */
    const double floor_ms = 1e-12;
    if (n < 2 * K)
        return 0;
    for (size_t k = 0; k < K; k++) {
        size_t lo = n * k / K, hi = n * (k + 1) / K;
        double sl = 0, sp = 0;
        for (size_t i = lo; i < hi; i++) {
            sl += (line[i] - meas[i]) * (line[i] - meas[i]);
            sp += (plastic[i] - meas[i]) * (plastic[i] - meas[i]);
        }
        d[k] = log((sp / (double)(hi - lo) + floor_ms) /
                   (sl / (double)(hi - lo) + floor_ms));
    }
    return K;
}

void pl_verdict_decide(const double *d, size_t k, pl_verdict *v)
{
    double mean = 0, ss = 0;
    memset(v, 0, sizeof *v);
    v->blocks = k;
    v->law = PL_VERDICT_NONE;
    v->mean_log_ratio = v->t_stat = v->t_crit = v->rms_ratio = NAN;
    if (k < 3)
        return;
    for (size_t i = 0; i < k; i++)
        mean += d[i] / (double)k;
    for (size_t i = 0; i < k; i++)
        ss += (d[i] - mean) * (d[i] - mean);
    double se = sqrt(ss / (double)(k - 1) / (double)k);
    v->mean_log_ratio = mean;
    v->rms_ratio = exp(mean / 2);
    v->t_crit = gsl_cdf_tdist_Pinv(0.975, (double)(k - 1));
    /* all blocks equal: the sign alone decides (se 0, no spread) */
    v->t_stat = se > 0 ? mean / se : mean > 0 ? INFINITY : mean < 0 ? -INFINITY : 0;
    v->law = v->t_stat > v->t_crit ? PL_VERDICT_LINE
           : v->t_stat < -v->t_crit ? PL_VERDICT_PLASTIC : PL_VERDICT_UNDECIDED;
}

const char *pl_verdict_name(pl_verdict_law law)
{
    switch (law) {
    case PL_VERDICT_LINE: return "line";
    case PL_VERDICT_PLASTIC: return "plastic";
    case PL_VERDICT_UNDECIDED: return "undecided";
    case PL_VERDICT_NONE: break;
    }
    return "none";
}
