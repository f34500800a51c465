/* model/cmd_roughplane.c - `prismlab roughplane`: a body sliding on a
 * rough plane (seed 003).  Only the particle is written.  Only this file
 * prints. */
#include "commands.h"
#include "core/cli.h"
#include "model/roughplane.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: prismlab roughplane --body particle --friction rough|viscous --mu MU\n"
    "                           --v0 VX,VY [--phi-deg PHI] [--duration S]\n"
    "                           [--eps M_S] [--csv FILE]\n\n"
    "A particle sliding on a plane inclined by PHI (seed 003, Eberly, section 1):\n"
    "x across the slope, y up it.  Rough friction: Coulomb, F = -mu m g cos(phi)\n"
    "V/|V|; the particle stops in finite time and stays if mu >= tan(phi).\n"
    "Viscous friction: F = -c V with --mu giving alpha = c/m in 1/s; on a flat\n"
    "plane it counts as at rest once |V| <= --eps (default 1e-3 m/s).\n"
    "The pair, particles, rod, board and box bodies of the document are not\n"
    "written yet (docs/models.md).\n\n"
    "Last line: t_stop=<s or inf> x=<m> y=<m> theta=<rad>\n";

enum { O_BODY = 1000, O_FRICTION, O_MU, O_V0, O_PHI, O_DUR, O_EPS, O_CSV, O_HELP };

int pl_cmd_roughplane(int argc, char **argv)
{
    static const struct option opts[] = {
        {"body", required_argument, 0, O_BODY}, {"friction", required_argument, 0, O_FRICTION},
        {"mu", required_argument, 0, O_MU}, {"v0", required_argument, 0, O_V0},
        {"phi-deg", required_argument, 0, O_PHI}, {"duration", required_argument, 0, O_DUR},
        {"eps", required_argument, 0, O_EPS}, {"csv", required_argument, 0, O_CSV},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    const char *cmd = "roughplane", *body = "particle", *csv = NULL;
    pl_err err = {0};
    pl_plane pl = {PL_FRICTION_ROUGH, NAN, 0, 9.80665};
    double vx = NAN, vy = NAN, phi = 0, dur = 10, eps = 1e-3;
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
        case O_PHI: st = pl_parse_double("phi-deg", optarg, 0, 89.99, &phi, &err); break;
        case O_DUR: st = pl_parse_double("duration", optarg, 1e-6, 1e6, &dur, &err); break;
        case O_EPS: st = pl_parse_double("eps", optarg, 0, 1e6, &eps, &err); break;
        case O_CSV: csv = optarg; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (optind < argc)
        return pl_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (strcmp(body, "particle")) {
        pl_err_set(&err, PL_EINVAL, "body '%s': only 'particle' is written yet "
                   "(pair, particles, rod, board and box are to come)", body);
        return pl_cli_fail(cmd, &err);
    }
    if (isnan(pl.mu) || isnan(vx))
        return pl_cli_usage_error(cmd, "give --mu MU and --v0 VX,VY");
    pl.phi = phi * M_PI / 180;
    size_t n = csv ? 1001 : 0;
    double *buf = n ? malloc(3 * n * sizeof *buf) : NULL;
    if (n && !buf) {
        pl_err_set(&err, PL_ENOMEM, "out of memory");
        return pl_cli_fail(cmd, &err);
    }
    pl_particle_end e;
    if (pl_roughplane_particle(&pl, vx, vy, dur, eps, n, buf, buf ? buf + n : NULL,
                               buf ? buf + 2 * n : NULL, &e, &err) != PL_OK) {
        free(buf);
        return pl_cli_fail(cmd, &err);
    }
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (!f) {
            free(buf);
            pl_err_set(&err, PL_EIO, "%s: cannot create", csv);
            return pl_cli_fail(cmd, &err);
        }
        fputs("t_s,x_m,y_m\n", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.9g,%.9g,%.9g\n", buf[i], buf[n + i], buf[2 * n + i]);
        fclose(f);
    }
    free(buf);
    char ts[32] = "inf";
    if (isfinite(e.t_stop))
        snprintf(ts, sizeof ts, "%.9g", e.t_stop);
    printf("t_stop=%s x=%.9g y=%.9g theta=0\n", ts, e.x, e.w);
    return PL_EXIT_OK;
}
