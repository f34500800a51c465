/* commands/cmd_roughplane.c - `prismlab roughplane`: a particle or a rigid
 * body sliding on a rough plane (seed 003).  Only this file prints. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "core/plot.h"
#include "model/seeds/body.h"
#include "model/seeds/roughplane.h"
#include "model/seeds/slide.h"

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

/* The run, its CSV and its picture; n samples of the path (0: none). */
static pl_status run(const pl_slide *s, const char *csv, const char *plot, size_t n,
                     double *t, pl_body_state *path, pl_body_end *e, pl_err *err)
{
    pl_status st = pl_slide_run(s, n, t, path, e, err);
    if (st == PL_OK && csv)
        st = write_csv(csv, t, path, n, err);
    if (st == PL_OK && plot) {
        char title[96];
        snprintf(title, sizeof title, "%s, %s friction%s, mu %g, slope %g deg",
                 pl_slide_body_name(s),
                 s->plane.friction == PL_FRICTION_ROUGH ? "rough" : "viscous",
                 s->hack ? " (decoupled)" : "", s->plane.mu, s->phi);
        st = draw(plot, title, t, path, n, err);
    }
    return st;
}

int pl_cmd_roughplane(int argc, char **argv)
{
    pl_slide s;
    pl_slide_init(&s);
    const char *csv = NULL, *plot = NULL;
    pl_opt opts[] = {
        PL_OPT_ROUGHPLANE_PARAMS(&s),
        PL_OPT_STRING("csv", &csv, "FILE", "the path"),
        PL_OPT_STRING("plot", &plot, "FILE.svg", "the path drawn"),
        PL_OPT_END()};
    pl_err err = {0};
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (pl_slide_check(&s, &err) != PL_OK)
        return pl_cli_usage_error(command.name, "%s", err.msg);

    size_t n = csv || plot ? 1001 : 0;
    double *t = n ? malloc(n * sizeof *t) : NULL;
    pl_body_state *path = n ? malloc(n * sizeof *path) : NULL;
    pl_body_end e;
    pl_status st = n && (!t || !path) ? pl_err_set(&err, PL_ENOMEM, "out of memory")
                 : run(&s, csv, plot, n, t, path, &e, &err);
    free(t);
    free(path);
    if (st != PL_OK)
        return pl_cli_fail(command.name, &err);
    char ts[32] = "inf";
    if (isfinite(e.t_stop))
        snprintf(ts, sizeof ts, "%.9g", e.t_stop);
    fprintf(pl_cli_result_stream(csv, plot, NULL), "t_stop=%s x=%.9g y=%.9g theta=%.9g\n", ts, e.end.x, e.end.w, e.end.theta);
    return PL_EXIT_OK;
}
