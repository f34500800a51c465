/* model/seeds/slide.c - one run of `prismlab roughplane` from its options.
 * See slide.h. */
#include "model/seeds/slide.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pl_opt_choice pl_slide_bodies[] = {
    {"particle", -1}, {"pair", PL_BODY_PAIR}, {"particles", PL_BODY_PARTICLES},
    {"rod", PL_BODY_ROD}, {"board", PL_BODY_BOARD}, {"box", PL_BODY_BOX},
    {NULL, 0}};

const pl_opt_choice pl_slide_frictions[] = {
    {"rough", PL_FRICTION_ROUGH}, {"viscous", PL_FRICTION_VISCOUS}, {NULL, 0}};

void pl_slide_init(pl_slide *s)
{
    memset(s, 0, sizeof *s);
    s->body = -1;
    s->friction = PL_FRICTION_ROUGH;
    s->plane = (pl_plane){PL_FRICTION_ROUGH, NAN, 0, 9.80665};
    s->b.mass = s->b.length = s->b.width = s->b.height = NAN;
    s->vx = s->vy = NAN;
    s->dur = 10;
    s->eps = 1e-3;
}

pl_status pl_slide_parse_particle(const pl_opt *opt, const char *text, pl_err *err)
{
    pl_body *b = opt->dest;
    double m, x, y;
    char extra;
    if (b->n >= PL_BODY_MAX_PARTICLES)
        return pl_err_set(err, PL_EINVAL, "option '--particle': at most %d",
                          PL_BODY_MAX_PARTICLES);
    if (sscanf(text, "%lf,%lf,%lf%c", &m, &x, &y, &extra) != 3)
        return pl_err_set(err, PL_EINVAL, "option '--particle': expected "
                          "M,X,Y (kg, m, m), got '%s'", text);
    b->m[b->n] = m;
    b->px[b->n] = x;
    b->py[b->n] = y;
    b->n++;
    return PL_OK;
}

pl_status pl_slide_check(pl_slide *s, pl_err *err)
{
    if (isnan(s->plane.mu) || isnan(s->vx))
        return pl_err_set(err, PL_EINVAL, "give --mu MU and --v0 VX,VY");
    if (s->body < 0 && (s->w0 != 0 || s->hack))
        return pl_err_set(err, PL_EINVAL, "a particle has no spin: --omega0 and "
                          "--hack are for the other bodies");
    s->plane.friction = (pl_friction)s->friction;
    s->plane.phi = s->phi * M_PI / 180;
    if (s->body < 0)
        return PL_OK;
    s->b.kind = (pl_body_kind)s->body;
    if (s->b.kind == PL_BODY_PAIR) {
        s->b.n = 2;
        s->b.m[0] = s->masses[0];
        s->b.m[1] = s->masses[1];
        if (s->b.m[0] == 0 && s->b.m[1] == 0)
            return pl_err_set(err, PL_EINVAL, "pair: give --masses M1,M2 and --length M");
    }
    if (s->b.kind == PL_BODY_PARTICLES && s->b.n < 2)
        return pl_err_set(err, PL_EINVAL, "particles: give --particle M,X,Y at least twice");
    return PL_OK;
}

/* The particle of section 1, its path in the shape of a body's. */
static pl_status slide_particle(const pl_slide *s, size_t n, double *t,
                                pl_body_state *path, pl_body_end *e, pl_err *err)
{
    pl_particle_sample *sm = n ? malloc(n * sizeof *sm) : NULL;
    pl_particle_end pe;
    pl_status st = n && !sm ? pl_err_set(err, PL_ENOMEM, "out of memory")
                 : pl_roughplane_particle(&s->plane, s->vx, s->vy, s->dur, s->eps,
                                          n, sm, &pe, err);
    for (size_t i = 0; st == PL_OK && i < n; i++) {
        t[i] = sm[i].t;
        path[i] = (pl_body_state){sm[i].x, sm[i].w, 0, sm[i].vx, sm[i].vw, 0};
    }
    free(sm);
    if (st != PL_OK)
        return st;
    e->t_stop = pe.t_stop;
    e->at_rest = pe.at_rest;
    e->end = (pl_body_state){pe.x, pe.w, 0, pe.vx, pe.vw, 0};
    return PL_OK;
}

pl_status pl_slide_run(const pl_slide *s, size_t n, double *t,
                       pl_body_state *path, pl_body_end *e, pl_err *err)
{
    if (s->body < 0)
        return slide_particle(s, n, t, path, e, err);
    pl_body_state s0 = {0, 0, s->th0 * M_PI / 180, s->vx, s->vy, s->w0};
    return pl_roughplane_body(&s->b, &s->plane, &s0, s->hack, s->dur, s->eps,
                              n, t, path, e, err);
}

const char *pl_slide_body_name(const pl_slide *s)
{
    for (const pl_opt_choice *c = pl_slide_bodies; c->name; c++)
        if (c->value == s->body)
            return c->name;
    return "particle";
}
