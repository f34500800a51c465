/* commands/cmd_sphere.c - `prismlab sphere`: rolling friction of a viscous
 * sphere (seed 004).  Only this file prints. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "model/seeds/sphere.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const pl_cli_command command = {
    .name = "sphere",
    .usage =
    "usage: prismlab sphere --radius M --young PA --poisson NU --eta1 PA_S --eta2 PA_S\n"
    "                       [--density KG_M3] [--impact-speed M_S]\n"
    "                       [--slope-deg PHI --v0 M_S --duration S [--csv FILE]]\n"
    "       prismlab sphere --restitution EPS --impact-speed M_S --radius M\n"
    "                       --young PA --poisson NU [--density KG_M3]\n",
    .about =
    "The rolling friction of a viscoelastic sphere on a hard plane (seed 004,\n"
    "Brilliantov & Poschel): k_rol of eq. (16) from Young's modulus, Poisson's\n"
    "ratio and the viscous constants, the torque M = k_rol Omega R F_N (15) and\n"
    "the restitution coefficient it implies, 1 - eps = C1 k_rol rho^(2/5) v^(1/5)\n"
    "(C1 = 1.15344; rho for two identical spheres, see docs/models.md).  With\n"
    "--slope-deg, a sphere rolling without slip from --v0: its speed and distance\n"
    "(GSL rk8pd) and its terminal speed R tan(phi) / k_rol.  With --restitution,\n"
    "the inverse estimate of k_rol from a measured restitution coefficient, as the\n"
    "document does for steel (1 - eps = 0.1 at 1 m/s, m = 10 g: about 1e-6 s).\n",
    .footer =
    "Last line: k_rol=<s> [restitution=<eps>] [v_terminal=<m/s> v_end=<m/s> x_end=<m>]\n"};

/* The inverse estimate: k_rol from a measured restitution coefficient. */
static int krol_from_restitution(pl_sphere *s, double eps, double v)
{
    pl_err err = {0};
    /* the inverse estimate needs no viscous constants */
    if (isnan(s->eta1)) s->eta1 = 0;
    if (isnan(s->eta2)) s->eta2 = 1;
    if (pl_sphere_check(s, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    double m = s->density * 4.0 / 3.0 * M_PI * pow(s->radius, 3);
    printf("mass=%.6g kg rho=%.6g rho^(2/5)=%.6g\n", m, pl_sphere_rho(s),
           pow(pl_sphere_rho(s), 0.4));
    printf("k_rol=%.6g\n", pl_sphere_krol_from_restitution(s, eps, v));
    return PL_EXIT_OK;
}

/* --slope-deg: the sphere rolling down the slope for dur seconds. */
static int roll(const pl_sphere *s, double v, double slope, double v0,
                double dur, const char *csv)
{
    pl_err err = {0};
    double k = pl_sphere_krol(s);
    size_t n = csv ? 1001 : 2;
    double *t = malloc(3 * n * sizeof *t);
    if (!t) {
        pl_err_set(&err, PL_ENOMEM, "out of memory");
        return pl_cli_fail(command.name, &err);
    }
    pl_sphere_roll r;
    if (pl_sphere_roll_run(s, slope * M_PI / 180, v0, dur, n, t, t + n, t + 2 * n, &r,
                           &err) != PL_OK) {
        free(t);
        return pl_cli_fail(command.name, &err);
    }
    if (csv) {
        pl_atomicfile *af;
        if (pl_atomicfile_open(&af, csv, &err) != PL_OK) {
            free(t);
            return pl_cli_fail(command.name, &err);
        }
        FILE *f = pl_atomicfile_stream(af);
        fputs("t_s,v_mps,x_m\n", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.9g,%.9g,%.9g\n", t[i], t[n + i], t[2 * n + i]);
        if (pl_atomicfile_commit(af, &err) != PL_OK) {
            free(t);
            return pl_cli_fail(command.name, &err);
        }
    }
    free(t);
    fprintf(pl_cli_result_stream(csv, NULL, NULL), "k_rol=%.6g restitution=%.6g tau=%.6g v_terminal=%.6g v_end=%.9g x_end=%.9g\n",
           k, pl_sphere_restitution(s, v), r.tau, r.v_terminal, r.v_end, r.x_end);
    return PL_EXIT_OK;
}

int pl_cmd_sphere(int argc, char **argv)
{
    const char *csv = NULL;
    pl_sphere s = {NAN, NAN, NAN, NAN, NAN, 7800};
    double v = 1.0, slope = NAN, v0 = 0, dur = NAN, eps = NAN;
    pl_opt opts[] = {
        PL_OPT_DOUBLE("radius", &s.radius, -1e9, 1e9, "M", "the sphere's radius"),
        PL_OPT_DOUBLE("young", &s.young, -1e15, 1e15, "PA", "Young's modulus"),
        PL_OPT_DOUBLE("poisson", &s.poisson, -10, 10, "NU", "Poisson's ratio"),
        PL_OPT_DOUBLE("eta1", &s.eta1, -1e15, 1e15, "PA_S", "the viscous constants"),
        PL_OPT_DOUBLE("eta2", &s.eta2, -1e15, 1e15, "PA_S", "of the material"),
        PL_OPT_DOUBLE("density", &s.density, -1e9, 1e9, "KG_M3",
                      "default steel, 7800 kg/m^3"),
        PL_OPT_DOUBLE("impact-speed", &v, 1e-9, 1e6, "M_S", "default 1 m/s"),
        PL_OPT_DOUBLE("slope-deg", &slope, 0, 89.9, "PHI", "roll down this slope"),
        PL_OPT_DOUBLE("v0", &v0, 0, 1e6, "M_S", "from this speed (default 0)"),
        PL_OPT_DOUBLE("duration", &dur, 1e-9, 1e9, "S", "for this long"),
        PL_OPT_STRING("csv", &csv, "FILE", "columns t_s,v_mps,x_m"),
        PL_OPT_DOUBLE("restitution", &eps, 0, 1, "EPS",
                      "a measured restitution coefficient: estimate k_rol"),
        PL_OPT_END()};
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (!isnan(eps))
        return krol_from_restitution(&s, eps, v);
    pl_err err = {0};
    if (pl_sphere_check(&s, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    if (isnan(slope)) {
        printf("k_rol=%.6g restitution=%.6g\n", pl_sphere_krol(&s),
               pl_sphere_restitution(&s, v));
        return PL_EXIT_OK;
    }
    if (isnan(dur))
        return pl_cli_usage_error(command.name, "--slope-deg needs --duration S");
    return roll(&s, v, slope, v0, dur, csv);
}
