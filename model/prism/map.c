/* model/prism/map.c - the impact-to-impact map in closed form.  See map.h
 * and docs/model.md section 10. */
#include "model/prism/map.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>

#define G_ACC 9.80665   /* as model/prism/prism.c */

static double k_of(int N, double a0)
{
    return G_ACC / a0 * 6 / (cos(2 * M_PI / N) + 8);
}

pl_status pl_map_form_of(int N, double a0, double beta, double r,
                         pl_map_form *out, pl_err *err)
{
    double alpha = M_PI / N;
    if (N < 3)
        return pl_err_set(err, PL_EINVAL, "map: N = %d, expected >= 3", N);
    if (!(a0 > 0))
        return pl_err_set(err, PL_EINVAL, "map: a0 = %g m, expected > 0", a0);
    if (!(beta > 0 && beta < alpha))
        return pl_err_set(err, PL_EINVAL, "map: beta = %g rad, expected in (0, pi/N)",
                          beta);
    if (!(r > -1 && r < 1))
        return pl_err_set(err, PL_EINVAL, "map: ratio %g, expected in (-1, 1)", r);
    out->r = r;
    out->K = k_of(N, a0);
    out->delta = 4 * out->K * sin(alpha) * sin(beta);
    out->barrier = 2 * out->K * (1 - cos(alpha - beta));
    out->omega_star = sqrt(out->delta / (1 - r * r));
    /* r <= 0 (the plastic law at N = 3): the impact stops it */
    out->rolls = r > 0 && r * r * out->omega_star * out->omega_star > out->barrier;
    return PL_OK;
}

double pl_map_first_omega(int N, double a0, double beta, double lambda0)
{
    double alpha = M_PI / N;
    return sqrt(2 * k_of(N, a0) * (cos(alpha - lambda0 + beta) - cos(alpha + beta)));
}

long pl_map_impacts_to_stop(const pl_map_form *f, double w1, long max_impacts)
{
    double w2 = w1 * w1, r2 = f->r * f->r;
    if (f->r <= 0)
        return 1;
    for (long k = 1; k <= max_impacts; k++) {
        if (r2 * w2 <= f->barrier)
            return k;
        w2 = r2 * w2 + f->delta;
    }
    return 0;
}

typedef struct { double alpha, r2; } bc_ctx;

static double bc_fn(double beta, void *ctx)
{
    const bc_ctx *c = ctx;
    return 2 * c->r2 * sin(c->alpha) * sin(beta) -
           (1 - c->r2) * (1 - cos(c->alpha - beta));
}

pl_status pl_map_beta_c(int N, double r, double *beta_c, pl_err *err)
{
    if (N < 3 || !(r > -1 && r < 1))
        return pl_err_set(err, PL_EINVAL, "beta_c: N = %d, ratio %g: expected N >= 3 "
                          "and a ratio in (-1, 1)", N, r);
    bc_ctx c = {M_PI / N, r * r};
    if (r <= 0) {   /* every impact stops it: no slope below pi/N rolls */
        *beta_c = c.alpha;
        return PL_OK;
    }
    gsl_function F = {bc_fn, &c};
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s)
        return pl_err_set(err, PL_ENOMEM, "beta_c: out of memory");
    /* f(0) < 0 < f(alpha) and f grows on (0, alpha): one root */
    int st = gsl_root_fsolver_set(s, &F, 0, c.alpha);
    for (int i = 0; st == GSL_SUCCESS && i < 200; i++) {
        st = gsl_root_fsolver_iterate(s);
        if (st != GSL_SUCCESS)
            break;
        st = gsl_root_test_interval(gsl_root_fsolver_x_lower(s),
                                    gsl_root_fsolver_x_upper(s), 1e-14, 0);
        if (st == GSL_SUCCESS)
            break;
        if (st == GSL_CONTINUE)
            st = GSL_SUCCESS;
    }
    *beta_c = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    if (st != GSL_SUCCESS)
        return pl_err_set(err, PL_ENUMERIC, "beta_c: Brent's method failed for N = %d "
                          "(%s)", N, gsl_strerror(st));
    return PL_OK;
}
