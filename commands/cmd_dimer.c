/* commands/cmd_dimer.c - `prismlab dimer`: the bouncing dimer (seed 002).
 * Only this file prints. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "core/plot.h"
#include "model/seeds/dimer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "dimer",
    .usage =
    "usage: prismlab dimer [--Ar A] [--f HZ] [--Gamma G] [--es E] [--mu-s MU]\n"
    "                      [--mu-c MU] [--mu-i MU] [--h0 M] [--theta0-deg T]\n"
    "                      [--duration S] [--dt S] [--dist-exp X] [--v-rest M_S]\n"
    "                      [--rod-d M] [--csv FILE] [--plot FILE.svg]\n",
    .about =
    "A dimer - two steel spheres joined by a light glass rod - released at rest\n"
    "on a plate vibrating as y_p = -A sin(2 pi f t), Gamma = A (2 pi f)^2 / g\n"
    "(seed 002, Zhao, Liu & Brogliato 2009): contact phases with the\n"
    "complementarity condition and Coulomb's stick and slip, single and double\n"
    "impacts by Darboux-Keller shock dynamics with the energetic coefficient of\n"
    "restitution and the distributing law, slip coefficients mu-c in contact and\n"
    "mu-i in impact (the paper's claim 5.1).  Defaults are the paper's section 5.\n"
    "See docs/dimer.md.\n",
    .footer =
    "Last line: ... drift=<m/s> mode=<rest|drift|jump|flutter|mixed|hop|\n"
    "alternate|other> (docs/dimer.md, Modes): the left\n"
    "tip's mean horizontal speed over the last ten plate cycles and the mode\n"
    "persisting in them.\n"};

static pl_status write_csv(const char *path, const pl_dimer_sample *s, size_t n,
                           pl_err *err)
{
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    fputs("t_s,x1_m,y1_m,x2_m,y2_m,yp_m,vx1_mps,theta_rad\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", s[i].t, s[i].x1,
                s[i].y1, s[i].x2, s[i].y2, s[i].yp, s[i].vx1, s[i].theta);
    return pl_atomicfile_commit(af, err);
}

/* The tips' heights and the plate (as the paper's figures 3, 6, 13, 20)
 * over the last half second, and the left tip's x over the whole run. */
static pl_status draw(const char *path, const pl_dimer_params *p,
                      const pl_dimer_sample *s, size_t n, pl_err *err)
{
    double *buf = malloc(5 * n * sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "plot: out of memory");
    double *t = buf, *y1 = buf + n, *y2 = buf + 2 * n, *yp = buf + 3 * n,
           *x1 = buf + 4 * n;
    size_t a = 0;
    while (a < n && s[a].t < p->duration - 0.5)
        a++;
    for (size_t i = 0; i < n; i++) {
        x1[i] = s[i].x1 * 1e3;
        t[i] = s[i].t;
        y1[i] = s[i].y1 * 1e3;
        y2[i] = s[i].y2 * 1e3;
        yp[i] = s[i].yp * 1e3;
    }
    pl_plot_series top[] = {{t + a, y1 + a, n - a, "left tip", 0, PL_PLOT_LINE},
                            {t + a, y2 + a, n - a, "right tip", 1, PL_PLOT_DASHED},
                            {t + a, yp + a, n - a, "plate", 2, PL_PLOT_LINE}};
    pl_plot_series bot[] = {{t, x1, n, "left tip", 0, PL_PLOT_LINE}};
    char title[128];
    snprintf(title, sizeof title, "dimer Ar %g, f %g Hz, Gamma %g, e_s %g, mu_c %g, mu_i %g",
             p->Ar, p->f, p->Gamma, p->es, p->mu_c, p->mu_i);
    pl_plot_panel pan[] = {
        {title, "t (s)", "height (mm)", NAN, NAN, NAN, NAN, top, 3},
        {"horizontal position", "t (s)", "x of the left tip (mm)", NAN, NAN, NAN, NAN, bot, 1}};
    pl_status st = pl_plot_svg(path, 900, 800, pan, 2, err);
    free(buf);
    return st;
}

int pl_cmd_dimer(int argc, char **argv)
{
    const char *csv = NULL, *plot = NULL;
    pl_err err = {0};
    pl_dimer_params p;
    pl_dimer_params_default(&p);
    double th = p.theta0 * 180 / M_PI;
    pl_opt opts[] = {
        PL_OPT_DIMER_PARAMS(&p, &th),
        PL_OPT_STRING("csv", &csv, "FILE", "the motion, 20 samples a plate cycle"),
        PL_OPT_STRING("plot", &plot, "FILE.svg", "the tips' heights and the left tip's x"),
        PL_OPT_END()};
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    const char *cmd = command.name;
    p.theta0 = th * M_PI / 180;
    /* 20 samples a plate cycle for the CSV, 400 a cycle for the figure */
    size_t n = 0;
    if (csv || plot)
        n = (size_t)(p.duration * p.f * (plot ? 400 : 20)) + 1;
    pl_dimer_sample *s = n ? malloc(n * sizeof *s) : NULL;
    if (n && !s) {
        pl_err_set(&err, PL_ENOMEM, "out of memory for %zu samples", n);
        return pl_cli_fail(cmd, &err);
    }
    pl_dimer_result r;
    pl_status st = pl_dimer_run(&p, s, n, &r, &err);
    if (st == PL_OK && csv)
        st = write_csv(csv, s, n, &err);
    if (st == PL_OK && plot)
        st = draw(plot, &p, s, n, &err);
    free(s);
    if (st != PL_OK)
        return pl_cli_fail(cmd, &err);
    pl_dimer_geometry g;
    pl_dimer_geometry_of(&p, &g, &err);
    FILE *out = pl_cli_result_stream(csv, plot, NULL);
    fprintf(out, "dimer: r %.4g mm, l %.4g mm, m_b %.4g g, rod %.3g mm x %.4g mm, %.4g g; "
           "plate A %.4g mm\n", g.r * 1e3, g.l * 1e3, g.mb * 1e3, g.rod_d * 1e3,
           (g.l - 2 * g.r) * 1e3, g.mr * 1e3, g.A * 1e3);
    fprintf(out, "impacts=%zu doubles=%zu sticks=%zu hits=%zu,%zu hmax_m=%.4g,%.4g "
           "energy=%.4g drift=%.6g mode=%s\n", r.impacts, r.doubles, r.stick_events,
           r.hits[0], r.hits[1], r.hmax[0], r.hmax[1], r.energy, r.drift,
           pl_dimer_mode_name(r.mode));
    return PL_EXIT_OK;
}
