/* model/seeds/cmd_roughplane.c - `prismlab roughplane`: a particle or a rigid
 * body sliding on a rough plane (seed 003).  Only this file prints. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "core/plot.h"
#include "model/seeds/body.h"
#include "model/seeds/roughplane.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "roughplane",
    .usage =
    "usage: prismlab roughplane --body particle|pair|particles|rod|board|box\n"
    "                           --friction rough|viscous --mu MU --v0 VX,VY\n"
    "                           [--omega0 W] [--theta0-deg T] [--hack]\n"
    "                           [--mass KG] [--masses M1,M2] [--particle M,X,Y]...\n"
    "                           [--length M] [--width M] [--height M]\n"
    "                           [--phi-deg PHI] [--duration S] [--eps M_S]\n"
    "                           [--csv FILE] [--plot FILE.svg]\n",
    .about =
    "A body sliding on a plane inclined by PHI (seed 003, Eberly, \"Rough Plane\n"
    "Analysis\"): x across the slope, y up it, theta the orientation; (x, y) is\n"
    "the centre of mass.  Bodies (the document's sections):\n"
    "  particle   1: a point\n"
    "  pair       2: --masses M1,M2 joined rigidly at distance --length\n"
    "  particles  3: --particle M,X,Y once for each (2 to 64; body-frame\n"
    "                positions, any origin)\n"
    "  rod        4: uniform, --mass, --length\n"
    "  board      5: uniform rectangle, --mass, --length (along the body's x)\n"
    "                and --width\n"
    "  box        6: a board of --height on its face (the height does not\n"
    "                enter the motion)\n"
    "Rough friction: Coulomb, dF = -mu g cos(phi) dm v/|v| on every point of\n"
    "the base, the full equations (rod and board integrals by GSL quadrature);\n"
    "--hack: the document's decoupled model instead (the centre slides as a\n"
    "particle, the spin decays at a constant rate).  The body stops in finite\n"
    "time and stays if mu >= tan(phi).  Viscous friction: dF = -alpha dm v with\n"
    "--mu giving alpha in 1/s; on a flat plane it counts as at rest once its\n"
    "speed sqrt(2 E / m) <= --eps.\n",
    .footer = "Last line: t_stop=<s or inf> x=<m> y=<m> theta=<rad>\n"};

/* -1 for the particle, which is no pl_body (seed 003's section 1). */
static const pl_opt_choice bodies[] = {
    {"particle", -1}, {"pair", PL_BODY_PAIR}, {"particles", PL_BODY_PARTICLES},
    {"rod", PL_BODY_ROD}, {"board", PL_BODY_BOARD}, {"box", PL_BODY_BOX},
    {NULL, 0}};

static const pl_opt_choice frictions[] = {
    {"rough", PL_FRICTION_ROUGH}, {"viscous", PL_FRICTION_VISCOUS}, {NULL, 0}};

/* --particle M,X,Y, once for each particle. */
static pl_status parse_particle(const pl_opt *opt, const char *text, pl_err *err)
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

static pl_status write_csv(const char *path, const double *t,
                           const pl_body_state *s, size_t n, pl_err *err)
{
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    fputs("t_s,x_m,y_m,theta_rad,vx_mps,vy_mps,omega_radps\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", t[i], s[i].x, s[i].w,
                s[i].theta, s[i].vx, s[i].vw, s[i].omega);
    return pl_atomicfile_commit(af, err);
}

/* The path of the centre of mass, and theta and the speed against time. */
static pl_status draw(const char *path, const char *title, const double *t,
                      const pl_body_state *s, size_t n, pl_err *err)
{
    double *buf = malloc(5 * n * sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "plot: out of memory");
    double *x = buf, *y = buf + n, *th = buf + 2 * n, *sp = buf + 3 * n, *om = buf + 4 * n;
    for (size_t i = 0; i < n; i++) {
        x[i] = s[i].x;
        y[i] = s[i].w;
        th[i] = s[i].theta;
        sp[i] = hypot(s[i].vx, s[i].vw);
        om[i] = s[i].omega;
    }
    pl_plot_series s1[] = {{x, y, n, "centre of mass", 0, PL_PLOT_LINE}};
    pl_plot_series s2[] = {{t, th, n, "theta (rad)", 1, PL_PLOT_LINE}};
    pl_plot_series s3[] = {{t, sp, n, "|V| (m/s)", 2, PL_PLOT_LINE},
                           {t, om, n, "omega (rad/s)", 3, PL_PLOT_DASHED}};
    pl_plot_panel p[] = {
        {title, "x (m)", "y, up the slope (m)", NAN, NAN, NAN, NAN, s1, 1},
        {"orientation", "t (s)", "theta (rad)", NAN, NAN, NAN, NAN, s2, 1},
        {"speeds", "t (s)", "speed", NAN, NAN, NAN, NAN, s3, 2}};
    pl_status st = pl_plot_svg(path, 900, 1100, p, 3, err);
    free(buf);
    return st;
}

/* Everything the options give. */
typedef struct {
    int body;                 /* a pl_body_kind, or -1: the particle */
    int friction;             /* a pl_friction */
    int hack;
    pl_body b;
    pl_plane plane;
    double vx, vy, w0, th0, phi, dur, eps;
    const char *csv, *plot;
} slide;

static void slide_init(slide *s)
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

/* What a body needs beyond its options' ranges: PL_CLI_CONTINUE or the
 * usage error's exit status. */
static int check_body(slide *s)
{
    const char *cmd = command.name;
    if (isnan(s->plane.mu) || isnan(s->vx))
        return pl_cli_usage_error(cmd, "give --mu MU and --v0 VX,VY");
    if (s->body < 0 && (s->w0 != 0 || s->hack))
        return pl_cli_usage_error(cmd, "a particle has no spin: --omega0 and "
                                  "--hack are for the other bodies");
    if (s->body < 0)
        return PL_CLI_CONTINUE;
    s->b.kind = (pl_body_kind)s->body;
    if (s->b.kind == PL_BODY_PAIR) {
        s->b.n = 2;
        if (s->b.m[0] == 0 && s->b.m[1] == 0)
            return pl_cli_usage_error(cmd, "pair: give --masses M1,M2 and --length M");
    }
    if (s->b.kind == PL_BODY_PARTICLES && s->b.n < 2)
        return pl_cli_usage_error(cmd, "particles: give --particle M,X,Y at least twice");
    return PL_CLI_CONTINUE;
}

/* The particle of section 1, its path in the shape of a body's. */
static pl_status slide_particle(const slide *s, size_t n, double *t,
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
    e->t_stop = pe.t_stop;
    e->at_rest = pe.at_rest;
    e->end = (pl_body_state){pe.x, pe.w, 0, pe.vx, pe.vw, 0};
    return st;
}

/* The run, its CSV and its picture; n samples of the path (0: none). */
static pl_status run(slide *s, size_t n, double *t, pl_body_state *path,
                     pl_body_end *e, pl_err *err)
{
    pl_status st;
    if (s->body < 0) {
        st = slide_particle(s, n, t, path, e, err);
    } else {
        pl_body_state s0 = {0, 0, s->th0 * M_PI / 180, s->vx, s->vy, s->w0};
        st = pl_roughplane_body(&s->b, &s->plane, &s0, s->hack, s->dur, s->eps,
                                n, t, path, e, err);
    }
    if (st == PL_OK && s->csv)
        st = write_csv(s->csv, t, path, n, err);
    if (st == PL_OK && s->plot) {
        const char *name = "particle";
        for (const pl_opt_choice *c = bodies; c->name; c++)
            if (c->value == s->body)
                name = c->name;
        char title[96];
        snprintf(title, sizeof title, "%s, %s friction%s, mu %g, slope %g deg",
                 name, s->plane.friction == PL_FRICTION_ROUGH ? "rough" : "viscous",
                 s->hack ? " (decoupled)" : "", s->plane.mu, s->phi);
        st = draw(s->plot, title, t, path, n, err);
    }
    return st;
}

int pl_cmd_roughplane(int argc, char **argv)
{
    slide s;
    slide_init(&s);
    pl_opt opts[] = {
        PL_OPT_CHOICE("body", &s.body, bodies, "KIND", "particle (default), pair,\n"
                      "particles, rod, board or box"),
        PL_OPT_CHOICE("friction", &s.friction, frictions, "rough|viscous",
                      "default rough"),
        PL_OPT_DOUBLE("mu", &s.plane.mu, 0, 1e6, "MU",
                      "Coulomb's coefficient, or alpha (1/s) when viscous"),
        PL_OPT_PAIR("v0", &s.vx, &s.vy, "VX,VY", "the centre's velocity at the start, m/s"),
        PL_OPT_DOUBLE("omega0", &s.w0, -1e6, 1e6, "W", "the spin at the start, rad/s"),
        PL_OPT_DOUBLE("theta0-deg", &s.th0, -1e6, 1e6, "T", "the orientation at the start"),
        PL_OPT_FLAG("hack", &s.hack, "the decoupled model"),
        PL_OPT_DOUBLE("mass", &s.b.mass, -1e9, 1e9, "KG", "rod, board, box: the mass"),
        PL_OPT_PAIR("masses", &s.b.m[0], &s.b.m[1], "M1,M2", "pair: the two masses"),
        PL_OPT_CALLBACK("particle", &s.b, parse_particle, "M,X,Y",
                        "particles: one of them (kg, m, m)"),
        PL_OPT_DOUBLE("length", &s.b.length, -1e9, 1e9, "M", "pair, rod, board, box"),
        PL_OPT_DOUBLE("width", &s.b.width, -1e9, 1e9, "M", "board, box"),
        PL_OPT_DOUBLE("height", &s.b.height, -1e9, 1e9, "M", "box"),
        PL_OPT_DOUBLE("phi-deg", &s.phi, 0, 89.99, "PHI", "the slope (default 0)"),
        PL_OPT_DOUBLE("duration", &s.dur, 1e-6, 1e6, "S", "default 10 s"),
        PL_OPT_DOUBLE("eps", &s.eps, 0, 1e6, "M_S", "viscous: at rest below (default 1e-3)"),
        PL_OPT_STRING("csv", &s.csv, "FILE", "the path"),
        PL_OPT_STRING("plot", &s.plot, "FILE.svg", "the path drawn"),
        PL_OPT_END()};
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE || (rc = check_body(&s)) != PL_CLI_CONTINUE)
        return rc;
    s.plane.friction = (pl_friction)s.friction;
    s.plane.phi = s.phi * M_PI / 180;

    pl_err err = {0};
    size_t n = s.csv || s.plot ? 1001 : 0;
    double *t = n ? malloc(n * sizeof *t) : NULL;
    pl_body_state *path = n ? malloc(n * sizeof *path) : NULL;
    pl_body_end e;
    pl_status st = n && (!t || !path) ? pl_err_set(&err, PL_ENOMEM, "out of memory")
                 : run(&s, n, t, path, &e, &err);
    free(t);
    free(path);
    if (st != PL_OK)
        return pl_cli_fail(command.name, &err);
    char ts[32] = "inf";
    if (isfinite(e.t_stop))
        snprintf(ts, sizeof ts, "%.9g", e.t_stop);
    fprintf(pl_cli_result_stream(s.csv, s.plot, NULL), "t_stop=%s x=%.9g y=%.9g theta=%.9g\n", ts, e.end.x, e.end.w, e.end.theta);
    return PL_EXIT_OK;
}
