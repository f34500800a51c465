/* model/seeds/roughplane.c - a particle on a rough plane (seed 003, section 1).
 * See roughplane.h and docs/models.md. */
#include "model/seeds/roughplane.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <string.h>


typedef struct {
    const pl_plane *pl;
    double alpha, beta;   /* friction per unit mass, g sin(phi) */
} ctx_t;

/* y = (x, w, vx, vw) */
static int rhs(double t, const double y[], double f[], void *p)
{
    (void)t;
    const ctx_t *c = p;
    double s = hypot(y[2], y[3]);
    f[0] = y[2];
    f[1] = y[3];
    if (c->pl->friction == PL_FRICTION_VISCOUS) {
        f[2] = -c->alpha * y[2];
        f[3] = -c->alpha * y[3] - c->beta;
    } else if (s > 0) {
        f[2] = -c->alpha * y[2] / s;
        f[3] = -c->alpha * y[3] / s - c->beta;
    } else {
        /* At V = 0 the document sets the friction term to zero.  That holds
         * for an instant only; an integrator's first stage from rest would
         * see gravity alone.  Use the motion that follows instead: held by
         * static friction when it can (alpha >= g sin phi), else sliding
         * down-slope with kinetic friction against it. */
        f[2] = 0;
        f[3] = c->alpha >= c->beta ? 0 : -c->beta + c->alpha;
    }
    return GSL_SUCCESS;
}

/* One step of size h from y into out, with a fresh stepper. */
static int step(gsl_odeiv2_step *st, gsl_odeiv2_system *sys, const double y[4],
                double h, double out[4])
{
    double err[4];
    memcpy(out, y, 4 * sizeof *out);
    gsl_odeiv2_step_reset(st);
    return gsl_odeiv2_step_apply(st, 0, h, out, err, NULL, NULL, sys);
}

/* The step hs from y on rough friction, where the speed s0 falls at
 * alpha + g sin(phi) x (the up-slope part of the direction): when it would
 * reach zero within the step, a quarter of the way to that instant rather
 * than across it, where the friction force jumps and no step (nor any of
 * its stages) should go (*to_rest then 1).  Short steps matter: on an
 * incline the direction swings down-slope ever faster as the speed goes
 * (its rate is g sin(phi) / |V|), and steps of nearly the whole time left
 * misplaced the stop by 2e-6 s.  About a hundred such steps bring the
 * speed below 1e-12 of the scale. */
static double rough_step(const ctx_t *c, const double y[4], double s0,
                         double hs, int *to_rest)
{
    double decel = c->alpha + c->beta * y[3] / s0;
    *to_rest = 0;
    if (decel > 0 && s0 / decel <= 4 * hs) {
        *to_rest = 1;
        return 0.25 * s0 / decel;
    }
    return hs;
}

/* Viscous friction on a flat plane: the instant within the step hs from
 * y (at t) where the speed falls to eps, by bisection; y1 receives the
 * state there. */
static double viscous_stop(gsl_odeiv2_step *st, gsl_odeiv2_system *sys,
                           const double y[4], double t, double hs, double eps,
                           double y1[4])
{
    double lo = 0, hi = hs, ym[4];
    for (int it = 0; it < 80 && hi - lo > 1e-15 * (1 + t); it++) {
        double mid = 0.5 * (lo + hi);
        step(st, sys, y, mid, ym);
        if (hypot(ym[2], ym[3]) > eps)
            lo = mid;
        else
            hi = mid;
    }
    step(st, sys, y, hi, y1);
    return hi;
}

/* The samples (of n at duration * k / steps) that fall in the step of hs
 * from y at t, from *next on; each is stepped to from y. */
static void step_samples(gsl_odeiv2_step *st, gsl_odeiv2_system *sys,
                         const double y[4], double t, double hs,
                         double duration, size_t n, size_t steps, size_t *next,
                         pl_particle_sample *samples)
{
    while (n > 0 && *next <= steps && *next < n &&
           duration * (double)*next / (double)steps <= t + hs) {
        double ts = duration * (double)*next / (double)steps, ys[4];
        if (ts > t)
            step(st, sys, y, ts - t, ys);
        else
            memcpy(ys, y, 4 * sizeof *ys);
        if (samples)
            samples[*next] = (pl_particle_sample){ts, ys[0], ys[1], ys[2], ys[3]};
        ++*next;
    }
}

pl_status pl_roughplane_particle(const pl_plane *pl, double vx0, double vw0,
                                 double duration, double eps, size_t n,
                                 pl_particle_sample *samples,
                                 pl_particle_end *end, pl_err *err)
{
    if (!(pl->mu >= 0) || !(pl->phi >= 0 && pl->phi < M_PI / 2) || !(pl->g > 0))
        return pl_err_set(err, PL_EINVAL, "rough plane: mu %g must be >= 0, "
                          "the slope %g rad in [0, pi/2), g %g > 0", pl->mu,
                          pl->phi, pl->g);
    if (!(duration > 0) || !isfinite(vx0) || !isfinite(vw0))
        return pl_err_set(err, PL_EINVAL, "rough plane: the duration %g s must "
                          "be > 0 and the initial velocity finite", duration);
    ctx_t c = {pl, pl->friction == PL_FRICTION_ROUGH ? pl->mu * pl->g * cos(pl->phi)
                                                     : pl->mu,
               pl->g * sin(pl->phi)};
    /* rough friction holds a particle at rest when it can match gravity */
    int holds = pl->friction == PL_FRICTION_ROUGH && c.alpha >= c.beta;
    gsl_odeiv2_system sys = {rhs, NULL, 4, &c};
    gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, 4);
    if (!st)
        return pl_err_set(err, PL_ENOMEM, "rough plane: out of memory");
    double y[4] = {0, 0, vx0, vw0}, t = 0;
    double h = duration / 20000;
    size_t next = 0, steps = n > 1 ? n - 1 : 1;
    end->t_stop = INFINITY;
    end->at_rest = 0;
    if (holds && vx0 == 0 && vw0 == 0) {
        end->t_stop = 0;
        end->at_rest = 1;
    }
    double vscale = hypot(vx0, vw0) + c.beta * duration;
    while (!end->at_rest && t < duration) {
        double hs = fmin(h, duration - t), y1[4];
        double s0 = hypot(y[2], y[3]);
        int to_rest = 0;
        if (pl->friction == PL_FRICTION_ROUGH && s0 > 0)
            hs = rough_step(&c, y, s0, hs, &to_rest);
        if (step(st, &sys, y, hs, y1) != GSL_SUCCESS)
            break;
        int stop = 0;
        if (to_rest && hypot(y1[2], y1[3]) <= 1e-12 * vscale) {
            /* at rest: it stays if friction holds it, else it starts again
             * from V = 0 under gravity */
            y1[2] = y1[3] = 0;
            stop = holds;
        } else if (pl->friction == PL_FRICTION_VISCOUS && c.beta == 0 && eps > 0 &&
                   hypot(y1[2], y1[3]) <= eps && s0 > eps) {
            hs = viscous_stop(st, &sys, y, t, hs, eps, y1);
            stop = 1;
        }
        step_samples(st, &sys, y, t, hs, duration, n, steps, &next, samples);
        memcpy(y, y1, sizeof y);
        t += hs;
        if (stop) {
            end->t_stop = t;
            end->at_rest = 1;
        }
    }
    for (; n > 0 && next < n; next++) {   /* held at rest */
        if (samples)
            samples[next] = (pl_particle_sample){duration * (double)next / (double)steps,
                                                 y[0], y[1], 0, 0};
    }
    gsl_odeiv2_step_free(st);
    end->x = y[0];
    end->w = y[1];
    end->vx = y[2];
    end->vw = y[3];
    return PL_OK;
}
