/* commands/cmd_simulate.c - `prismlab simulate`: one run of the prism model
 * (model/prism/prism.h), from numbers or from a catalogued prism and ramp.
 * Prints a one-line summary; --csv writes the sampled series, --impacts
 * the impact list.  Only this file prints. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "model/prism/options.h"
#include "model/prism/prism.h"
#include "model/validate/setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "simulate",
    .usage =
    "usage: prismlab simulate --N N --a0 M --beta-deg DEG --lambda0-deg DEG\n"
    "                         --mu-s MU [--mu MU] --h1 M --h2 M --duration S\n"
    "                         [--law line|plastic] [--rate HZ] [--ramp-length M]\n"
    "                         [--mass KG] [--csv FILE] [--impacts FILE]\n"
    "       prismlab simulate --prism NAME --ramp NAME [--db FILE] --lambda0-deg DEG\n"
    "                         --h1 M --h2 M --duration S [options above]\n",
    .about =
    "Simulates a prism rolling down a ramp (seed paper sections 2-4): rotation\n"
    "about an edge (2.1) between line impacts (section 3) or plastic impacts\n"
    "(--law plastic, the rimless-wheel law).  Numbers override catalogue values.\n",
    .footer =
    "Summary: ratio=<omega+/omega-> t_end=<s> x_end=<m> omega_end=<rad/s>\n"
    "Lp_end=<value> impacts=<count> status=<end|stopped|left_ramp|slip|detached>\n"};

static pl_status write_series(const char *path, const pl_model_result *r,
                              pl_err *err)
{
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    fputs("t,omega,theta,Lp,x,vp1,vp2\n", f);
    for (size_t i = 0; i < r->n_samples; i++)
        fprintf(f, "%.4f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r->t[i], r->omega[i],
                r->theta[i], r->lp[i], r->x[i], r->vp1[i], r->vp2[i]);
    return pl_atomicfile_commit(af, err);
}

static pl_status write_impacts(const char *path, const pl_model_result *r,
                               pl_err *err)
{
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    fputs("n,t,omega_minus,omega_plus,ratio,friction\n", f);
    size_t k = r->n_impacts < r->cap_impacts ? r->n_impacts : r->cap_impacts;
    const pl_model_impact *im = r->impacts;
    for (size_t i = 0; i < k; i++)
        fprintf(f, "%zu,%.9g,%.9g,%.9g,%.12g,%s\n", i + 1, im[i].t, im[i].omega_minus,
                im[i].omega_plus, im[i].ratio, im[i].slipped ? "slip" : "stick");
    return pl_atomicfile_commit(af, err);
}

static void print_summary(FILE *out, const pl_model *m,
                          const pl_model_params *p, const pl_model_result *r)
{
    if (r->end == PL_END_SLIP || r->end == PL_END_DETACHED)
        fprintf(out, "%s at t=%.6f s: F_n=%.6g N F_t=%.6g N (mu_s=%g)\n",
               pl_model_end_name(r->end), r->t_end, r->fail_fn, r->fail_ft, p->mu_s);
    fprintf(out, "law=%s ratio=%.9f t_end=%.4f x_end=%.6f omega_end=%.6f Lp_end=%.6f impacts=%zu status=%s\n",
           p->law == PL_LAW_LINE ? "line" : "plastic", pl_model_impact_ratio(m), r->t_end,
           r->x_end, r->omega_end, r->lp_end, r->n_impacts, pl_model_end_name(r->end));
}

/* Runs the model, writes the files asked for and prints the summary. */
static pl_status simulate(const pl_model_params *p, const char *csv,
                          const char *imp, pl_err *err)
{
    pl_model *m = NULL;
    if (pl_model_create(&m, p, err) != PL_OK)
        return err->code;
    size_t ns = (size_t)floor(p->duration * p->rate + 1e-9) + 1;
    size_t ni = (size_t)(p->duration * 1000) + 16;  /* impacts are >= 1 ms apart */
    double *buf = malloc(ns * 7 * sizeof *buf);
    pl_model_impact *im = malloc(ni * sizeof *im);
    pl_model_result r = {0};
    pl_status st = PL_OK;
    if (!buf || !im) {
        st = pl_err_set(err, PL_ENOMEM, "out of memory for %zu samples", ns);
        goto out;
    }
    r.t = buf; r.omega = buf + ns; r.theta = buf + 2 * ns; r.lp = buf + 3 * ns;
    r.x = buf + 4 * ns; r.vp1 = buf + 5 * ns; r.vp2 = buf + 6 * ns;
    r.cap_samples = ns;
    r.impacts = im;
    r.cap_impacts = ni;
    st = pl_model_run(m, &r, err);
    if (st == PL_OK && csv)
        st = write_series(csv, &r, err);
    if (st == PL_OK && imp)
        st = write_impacts(imp, &r, err);
    if (st == PL_OK)
        print_summary(pl_cli_result_stream(csv, imp, NULL), m, p, &r);
out:
    free(buf);
    free(im);
    pl_model_destroy(m);
    return st;
}

int pl_cmd_simulate(int argc, char **argv)
{
    const char *cmd = command.name, *csv = NULL, *imp = NULL, *db = NULL;
    pl_err err = {0};
    pl_model_params p;
    pl_model_params_default(&p);
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {
        PL_OPT_SIMULATE(&so),
        PL_OPT_STRING("csv", &csv, "FILE", "columns t,omega,theta,Lp,x,vp1,vp2 (SI, header row)"),
        PL_OPT_STRING("impacts", &imp, "FILE",
                      "columns n,t,omega_minus,omega_plus,ratio,friction"),
        PL_OPT_DB(&db),
        PL_OPT_END()};
    int rc = pl_cli_parse(&command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    if (pl_model_options_check(&so.mo, &err) != PL_OK)
        return pl_cli_usage_error(cmd, "%s", err.msg);
    if (so.mo.prism && pl_model_params_lookup(&p, pl_cli_db_path(db), so.mo.prism,
                                              so.mo.ramp, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    if (pl_simulate_options_params(&so, 1, &p, &err) != PL_OK)
        return pl_cli_usage_error(cmd, "%s", err.msg);
    if (so.mo.ramp && !(p.ramp_length > 0))
        fprintf(stderr, "prismlab simulate: warning: ramp '%s' has no length in "
                "the catalogue: the prism rolls %g s on an endless ramp (give "
                "the ramp one with 'prismlab ramp add NAME ... --length M')\n",
                so.mo.ramp, p.duration);
    return simulate(&p, csv, imp, &err) == PL_OK ? PL_EXIT_OK : pl_cli_fail(cmd, &err);
}
