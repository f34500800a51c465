/* model/seeds/cmd_sphere.c - `prismlab sphere`: rolling friction of a viscous
 * sphere (seed 004).  Only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "model/seeds/sphere.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char usage[] =
    "usage: prismlab sphere --radius M --young PA --poisson NU --eta1 PA_S --eta2 PA_S\n"
    "                       [--density KG_M3] [--impact-speed M_S]\n"
    "                       [--slope-deg PHI --v0 M_S --duration S [--csv FILE]]\n"
    "       prismlab sphere --restitution EPS --impact-speed M_S --radius M\n"
    "                       --young PA --poisson NU [--density KG_M3]\n\n"
    "The rolling friction of a viscoelastic sphere on a hard plane (seed 004,\n"
    "Brilliantov & Poschel): k_rol of eq. (16) from Young's modulus, Poisson's\n"
    "ratio and the viscous constants, the torque M = k_rol Omega R F_N (15) and\n"
    "the restitution coefficient it implies, 1 - eps = C1 k_rol rho^(2/5) v^(1/5)\n"
    "(C1 = 1.15344; rho for two identical spheres, see docs/models.md).  With\n"
    "--slope-deg, a sphere rolling without slip from --v0: its speed and distance\n"
    "(GSL rk8pd) and its terminal speed R tan(phi) / k_rol.  With --restitution,\n"
    "the inverse estimate of k_rol from a measured restitution coefficient, as the\n"
    "document does for steel (1 - eps = 0.1 at 1 m/s, m = 10 g: about 1e-6 s).\n"
    "Density defaults to steel, 7800 kg/m^3; impact speed to 1 m/s.\n\n"
    "Last line: k_rol=<s> [restitution=<eps>] [v_terminal=<m/s> v_end=<m/s> x_end=<m>]\n";

enum { O_R = 1000, O_Y, O_NU, O_E1, O_E2, O_RHO, O_V, O_SLOPE, O_V0, O_DUR,
       O_CSV, O_EPS, O_HELP };

int pl_cmd_sphere(int argc, char **argv)
{
    static const struct option opts[] = {
        {"radius", required_argument, 0, O_R}, {"young", required_argument, 0, O_Y},
        {"poisson", required_argument, 0, O_NU}, {"eta1", required_argument, 0, O_E1},
        {"eta2", required_argument, 0, O_E2}, {"density", required_argument, 0, O_RHO},
        {"impact-speed", required_argument, 0, O_V},
        {"slope-deg", required_argument, 0, O_SLOPE}, {"v0", required_argument, 0, O_V0},
        {"duration", required_argument, 0, O_DUR}, {"csv", required_argument, 0, O_CSV},
        {"restitution", required_argument, 0, O_EPS}, {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    const char *cmd = "sphere", *csv = NULL;
    pl_err err = {0};
    pl_sphere s = {NAN, NAN, NAN, NAN, NAN, 7800};
    double v = 1.0, slope = NAN, v0 = 0, dur = NAN, eps = NAN;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        switch (c) {
        case O_R: st = pl_parse_double("radius", optarg, -1e9, 1e9, &s.radius, &err); break;
        case O_Y: st = pl_parse_double("young", optarg, -1e15, 1e15, &s.young, &err); break;
        case O_NU: st = pl_parse_double("poisson", optarg, -10, 10, &s.poisson, &err); break;
        case O_E1: st = pl_parse_double("eta1", optarg, -1e15, 1e15, &s.eta1, &err); break;
        case O_E2: st = pl_parse_double("eta2", optarg, -1e15, 1e15, &s.eta2, &err); break;
        case O_RHO: st = pl_parse_double("density", optarg, -1e9, 1e9, &s.density, &err); break;
        case O_V: st = pl_parse_double("impact-speed", optarg, 1e-9, 1e6, &v, &err); break;
        case O_SLOPE: st = pl_parse_double("slope-deg", optarg, 0, 89.9, &slope, &err); break;
        case O_V0: st = pl_parse_double("v0", optarg, 0, 1e6, &v0, &err); break;
        case O_DUR: st = pl_parse_double("duration", optarg, 1e-9, 1e9, &dur, &err); break;
        case O_CSV: csv = optarg; break;
        case O_EPS: st = pl_parse_double("restitution", optarg, 0, 1, &eps, &err); break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (optind < argc)
        return pl_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!isnan(eps)) {
        /* the inverse estimate needs no viscous constants */
        if (isnan(s.eta1)) s.eta1 = 0;
        if (isnan(s.eta2)) s.eta2 = 1;
        if (pl_sphere_check(&s, &err) != PL_OK)
            return pl_cli_fail(cmd, &err);
        double m = s.density * 4.0 / 3.0 * M_PI * pow(s.radius, 3);
        printf("mass=%.6g kg rho=%.6g rho^(2/5)=%.6g\n", m, pl_sphere_rho(&s),
               pow(pl_sphere_rho(&s), 0.4));
        printf("k_rol=%.6g\n", pl_sphere_krol_from_restitution(&s, eps, v));
        return PL_EXIT_OK;
    }
    if (pl_sphere_check(&s, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    double k = pl_sphere_krol(&s);
    if (isnan(slope)) {
        printf("k_rol=%.6g restitution=%.6g\n", k, pl_sphere_restitution(&s, v));
        return PL_EXIT_OK;
    }
    if (isnan(dur))
        return pl_cli_usage_error(cmd, "--slope-deg needs --duration S");
    size_t n = csv ? 1001 : 2;
    double *t = malloc(3 * n * sizeof *t);
    if (!t) {
        pl_err_set(&err, PL_ENOMEM, "out of memory");
        return pl_cli_fail(cmd, &err);
    }
    pl_sphere_roll r;
    if (pl_sphere_roll_run(&s, slope * M_PI / 180, v0, dur, n, t, t + n, t + 2 * n, &r,
                           &err) != PL_OK) {
        free(t);
        return pl_cli_fail(cmd, &err);
    }
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (!f) {
            free(t);
            pl_err_set(&err, PL_EIO, "%s: cannot create", csv);
            return pl_cli_fail(cmd, &err);
        }
        fputs("t_s,v_mps,x_m\n", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.9g,%.9g,%.9g\n", t[i], t[n + i], t[2 * n + i]);
        fclose(f);
    }
    free(t);
    printf("k_rol=%.6g restitution=%.6g tau=%.6g v_terminal=%.6g v_end=%.9g x_end=%.9g\n",
           k, pl_sphere_restitution(&s, v), r.tau, r.v_terminal, r.v_end, r.x_end);
    return PL_EXIT_OK;
}
