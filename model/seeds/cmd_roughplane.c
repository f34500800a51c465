/* model/seeds/cmd_roughplane.c - `prismlab roughplane`: a particle or a rigid
 * body sliding on a rough plane (seed 003).  Only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "core/plot.h"
#include "model/seeds/body.h"
#include "model/seeds/roughplane.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: prismlab roughplane --body particle|pair|particles|rod|board|box\n"
    "                           --friction rough|viscous --mu MU --v0 VX,VY\n"
    "                           [--omega0 W] [--theta0-deg T] [--hack]\n"
    "                           [--mass KG] [--masses M1,M2] [--particle M,X,Y]...\n"
    "                           [--length M] [--width M] [--height M]\n"
    "                           [--phi-deg PHI] [--duration S] [--eps M_S]\n"
    "                           [--csv FILE] [--plot FILE.svg]\n\n"
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
    "speed sqrt(2 E / m) <= --eps (default 1e-3 m/s).  --omega0 in rad/s.\n"
    "--duration defaults to 10 s; --csv writes the path, --plot draws it.\n\n"
    "Last line: t_stop=<s or inf> x=<m> y=<m> theta=<rad>\n";

enum { O_BODY = 1000, O_FRICTION, O_MU, O_V0, O_W0, O_TH0, O_HACK, O_MASS,
       O_MASSES, O_PARTICLE, O_LENGTH, O_WIDTH, O_HEIGHT, O_PHI, O_DUR, O_EPS,
       O_CSV, O_PLOT, O_HELP };

static int body_kind(const char *name, pl_body_kind *k)
{
    static const struct { const char *name; pl_body_kind kind; } kinds[] = {
        {"pair", PL_BODY_PAIR}, {"particles", PL_BODY_PARTICLES},
        {"rod", PL_BODY_ROD}, {"board", PL_BODY_BOARD}, {"box", PL_BODY_BOX}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(name, kinds[i].name)) {
            *k = kinds[i].kind;
            return 1;
        }
    return 0;
}

static pl_status parse_particle(const char *text, pl_body *b, pl_err *err)
{
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
    FILE *f = fopen(path, "w");
    if (!f)
        return pl_err_set(err, PL_EIO, "%s: cannot create", path);
    fputs("t_s,x_m,y_m,theta_rad,vx_mps,vy_mps,omega_radps\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", t[i], s[i].x, s[i].w,
                s[i].theta, s[i].vx, s[i].vw, s[i].omega);
    if (fclose(f) != 0)
        return pl_err_set(err, PL_EIO, "%s: write failed", path);
    return PL_OK;
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

int pl_cmd_roughplane(int argc, char **argv)
{
    static const struct option opts[] = {
        {"body", required_argument, 0, O_BODY}, {"friction", required_argument, 0, O_FRICTION},
        {"mu", required_argument, 0, O_MU}, {"v0", required_argument, 0, O_V0},
        {"omega0", required_argument, 0, O_W0}, {"theta0-deg", required_argument, 0, O_TH0},
        {"hack", no_argument, 0, O_HACK}, {"mass", required_argument, 0, O_MASS},
        {"masses", required_argument, 0, O_MASSES},
        {"particle", required_argument, 0, O_PARTICLE},
        {"length", required_argument, 0, O_LENGTH}, {"width", required_argument, 0, O_WIDTH},
        {"height", required_argument, 0, O_HEIGHT},
        {"phi-deg", required_argument, 0, O_PHI}, {"duration", required_argument, 0, O_DUR},
        {"eps", required_argument, 0, O_EPS}, {"csv", required_argument, 0, O_CSV},
        {"plot", required_argument, 0, O_PLOT},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    const char *cmd = "roughplane", *body = "particle", *csv = NULL, *plot = NULL;
    pl_err err = {0};
    pl_plane pl = {PL_FRICTION_ROUGH, NAN, 0, 9.80665};
    pl_body b;
    memset(&b, 0, sizeof b);
    b.mass = b.length = b.width = b.height = NAN;
    double vx = NAN, vy = NAN, w0 = 0, th0 = 0, phi = 0, dur = 10, eps = 1e-3;
    int hack = 0;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        switch (c) {
        case O_BODY: body = optarg; break;
        case O_FRICTION:
            if (!strcmp(optarg, "rough")) pl.friction = PL_FRICTION_ROUGH;
            else if (!strcmp(optarg, "viscous")) pl.friction = PL_FRICTION_VISCOUS;
            else return pl_cli_usage_error(cmd, "option '--friction': expected rough or viscous, got '%s'", optarg);
            break;
        case O_MU: st = pl_parse_double("mu", optarg, 0, 1e6, &pl.mu, &err); break;
        case O_V0: st = pl_parse_pair("v0", optarg, &vx, &vy, &err); break;
        case O_W0: st = pl_parse_double("omega0", optarg, -1e6, 1e6, &w0, &err); break;
        case O_TH0: st = pl_parse_double("theta0-deg", optarg, -1e6, 1e6, &th0, &err); break;
        case O_HACK: hack = 1; break;
        case O_MASS: st = pl_parse_double("mass", optarg, -1e9, 1e9, &b.mass, &err); break;
        case O_MASSES: st = pl_parse_pair("masses", optarg, &b.m[0], &b.m[1], &err); break;
        case O_PARTICLE: st = parse_particle(optarg, &b, &err); break;
        case O_LENGTH: st = pl_parse_double("length", optarg, -1e9, 1e9, &b.length, &err); break;
        case O_WIDTH: st = pl_parse_double("width", optarg, -1e9, 1e9, &b.width, &err); break;
        case O_HEIGHT: st = pl_parse_double("height", optarg, -1e9, 1e9, &b.height, &err); break;
        case O_PHI: st = pl_parse_double("phi-deg", optarg, 0, 89.99, &phi, &err); break;
        case O_DUR: st = pl_parse_double("duration", optarg, 1e-6, 1e6, &dur, &err); break;
        case O_EPS: st = pl_parse_double("eps", optarg, 0, 1e6, &eps, &err); break;
        case O_CSV: csv = optarg; break;
        case O_PLOT: plot = optarg; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (optind < argc)
        return pl_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (isnan(pl.mu) || isnan(vx))
        return pl_cli_usage_error(cmd, "give --mu MU and --v0 VX,VY");
    int particle = !strcmp(body, "particle");
    if (!particle && !body_kind(body, &b.kind))
        return pl_cli_usage_error(cmd, "option '--body': expected particle, pair, "
                                  "particles, rod, board or box, got '%s'", body);
    if (particle && (w0 != 0 || hack))
        return pl_cli_usage_error(cmd, "a particle has no spin: --omega0 and "
                                  "--hack are for the other bodies");
    if (b.kind == PL_BODY_PAIR && !particle) {
        b.n = 2;
        if (b.m[0] == 0 && b.m[1] == 0)
            return pl_cli_usage_error(cmd, "pair: give --masses M1,M2 and --length M");
    }
    if (b.kind == PL_BODY_PARTICLES && !particle && b.n < 2)
        return pl_cli_usage_error(cmd, "particles: give --particle M,X,Y at least twice");
    pl.phi = phi * M_PI / 180;

    size_t n = csv || plot ? 1001 : 0;
    double *t = n ? malloc(n * sizeof *t) : NULL;
    pl_body_state *path = n ? malloc(n * sizeof *path) : NULL;
    if (n && (!t || !path)) {
        free(t);
        free(path);
        pl_err_set(&err, PL_ENOMEM, "out of memory");
        return pl_cli_fail(cmd, &err);
    }
    pl_body_end e;
    pl_status st;
    if (particle) {
        pl_particle_sample *sm = n ? malloc(n * sizeof *sm) : NULL;
        pl_particle_end pe;
        st = n && !sm ? pl_err_set(&err, PL_ENOMEM, "out of memory")
                      : pl_roughplane_particle(&pl, vx, vy, dur, eps, n, sm, &pe, &err);
        for (size_t i = 0; st == PL_OK && i < n; i++) {
            t[i] = sm[i].t;
            path[i] = (pl_body_state){sm[i].x, sm[i].w, 0, sm[i].vx, sm[i].vw, 0};
        }
        free(sm);
        e.t_stop = pe.t_stop;
        e.at_rest = pe.at_rest;
        e.end = (pl_body_state){pe.x, pe.w, 0, pe.vx, pe.vw, 0};
    } else {
        pl_body_state s0 = {0, 0, th0 * M_PI / 180, vx, vy, w0};
        st = pl_roughplane_body(&b, &pl, &s0, hack, dur, eps, n, t, path, &e, &err);
    }
    if (st == PL_OK && csv)
        st = write_csv(csv, t, path, n, &err);
    if (st == PL_OK && plot) {
        char title[96];
        snprintf(title, sizeof title, "%s, %s friction%s, mu %g, slope %g deg",
                 body, pl.friction == PL_FRICTION_ROUGH ? "rough" : "viscous",
                 hack ? " (decoupled)" : "", pl.mu, phi);
        st = draw(plot, title, t, path, n, &err);
    }
    free(t);
    free(path);
    if (st != PL_OK)
        return pl_cli_fail(cmd, &err);
    char ts[32] = "inf";
    if (isfinite(e.t_stop))
        snprintf(ts, sizeof ts, "%.9g", e.t_stop);
    printf("t_stop=%s x=%.9g y=%.9g theta=%.9g\n", ts, e.end.x, e.end.w, e.end.theta);
    return PL_EXIT_OK;
}
