/* model/seeds/sphere.c - rolling friction of a viscoelastic sphere (seed 004).
 * See sphere.h and docs/models.md. */
#include "model/seeds/sphere.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>

#define G_ACC 9.80665
#define C1 1.15344

pl_status pl_sphere_check(const pl_sphere *s, pl_err *err)
{
    if (!(s->radius > 0))
        return pl_err_set(err, PL_EINVAL, "radius %g m: must be > 0", s->radius);
    if (!(s->young > 0))
        return pl_err_set(err, PL_EINVAL, "Young's modulus %g Pa: must be > 0", s->young);
    if (!(s->poisson > 0 && s->poisson < 0.5))
        return pl_err_set(err, PL_EINVAL, "Poisson's ratio %g: must lie in (0, 0.5) "
                          "((16) divides by nu^2; 1 - 2 nu > 0 for a stable solid)",
                          s->poisson);
    if (!(s->eta1 >= 0) || !(s->eta2 >= 0))
        return pl_err_set(err, PL_EINVAL, "viscous constants eta1 = %g, eta2 = %g "
                          "Pa s: must be >= 0", s->eta1, s->eta2);
    if (!(3 * s->eta2 + 2 * s->eta1 > 0))
        return pl_err_set(err, PL_EINVAL, "3 eta2 + 2 eta1 must be > 0 ((16) "
                          "divides by it)");
    if (!(s->density > 0))
        return pl_err_set(err, PL_EINVAL, "density %g kg/m^3: must be > 0", s->density);
    return PL_OK;
}

double pl_sphere_krol(const pl_sphere *s)
{
    double nu = s->poisson, a = 3 * s->eta2 - s->eta1;
    return a * a / (3 * (3 * s->eta2 + 2 * s->eta1)) *
           (1 - nu * nu) * (1 - 2 * nu) / (s->young * nu * nu);
}

double pl_sphere_rho(const pl_sphere *s)
{
    double m = s->density * 4.0 / 3.0 * M_PI * pow(s->radius, 3);
    return 2 * s->young * sqrt(s->radius / 2) /
           (3 * (1 - s->poisson * s->poisson) * (m / 2));
}

double pl_sphere_restitution(const pl_sphere *s, double v)
{
    return 1 - C1 * pl_sphere_krol(s) * pow(pl_sphere_rho(s), 0.4) * pow(v, 0.2);
}

double pl_sphere_krol_from_restitution(const pl_sphere *s, double eps, double v)
{
    return (1 - eps) / (C1 * pow(pl_sphere_rho(s), 0.4) * pow(v, 0.2));
}

typedef struct {
    double a, b;   /* v' = a - b v */
} roll_ctx;

static int rhs(double t, const double y[], double f[], void *p)
{
    (void)t;
    const roll_ctx *c = p;
    f[0] = c->a - c->b * y[0];   /* v */
    f[1] = y[0];                 /* x */
    return GSL_SUCCESS;
}

static int jac(double t, const double y[], double *dfdy, double dfdt[], void *p)
{
    (void)t;
    (void)y;
    const roll_ctx *c = p;
    dfdy[0] = -c->b;
    dfdy[1] = 0;
    dfdy[2] = 1;
    dfdy[3] = 0;
    dfdt[0] = dfdt[1] = 0;
    return GSL_SUCCESS;
}

pl_status pl_sphere_roll_run(const pl_sphere *s, double phi, double v0,
                             double t_end, size_t n, double *tt, double *vv,
                             double *xx, pl_sphere_roll *out, pl_err *err)
{
    if (pl_sphere_check(s, err) != PL_OK)
        return err->code;
    if (!(phi >= 0 && phi < M_PI / 2) || !(v0 >= 0) || !(t_end > 0))
        return pl_err_set(err, PL_EINVAL, "slope %g rad must lie in [0, pi/2), "
                          "v0 %g m/s >= 0 and the duration %g s > 0", phi, v0, t_end);
    double k = pl_sphere_krol(s);
    roll_ctx c = {5.0 / 7.0 * G_ACC * sin(phi), 5.0 / 7.0 * G_ACC * k * cos(phi) / s->radius};
    out->v_terminal = k > 0 ? s->radius * tan(phi) / k : INFINITY;
    out->tau = c.b > 0 ? 1 / c.b : INFINITY;
    gsl_odeiv2_system sys = {rhs, jac, 2, &c};
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd,
                                                         1e-6 * fmin(t_end, isfinite(out->tau) ? out->tau : t_end),
                                                         1e-12, 1e-12);
    if (!d)
        return pl_err_set(err, PL_ENOMEM, "sphere: out of memory");
    double y[2] = {v0, 0}, t = 0;
    size_t steps = n > 1 ? n - 1 : 1;
    pl_status st = PL_OK;
    for (size_t i = 0; i <= steps; i++) {
        double ti = t_end * (double)i / (double)steps;
        if (ti > t) {
            int rc = gsl_odeiv2_driver_apply(d, &t, ti, y);
            if (rc != GSL_SUCCESS) {
                st = pl_err_set(err, PL_ENUMERIC, "sphere: the integration failed "
                                "at t = %g s (%s)", t, gsl_strerror(rc));
                break;
            }
        }
        if (n > 0 && i < n) {
            if (tt) tt[i] = ti;
            if (vv) vv[i] = y[0];
            if (xx) xx[i] = y[1];
        }
    }
    gsl_odeiv2_driver_free(d);
    out->t_end = t;
    out->v_end = y[0];
    out->x_end = y[1];
    return st;
}
