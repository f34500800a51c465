/* model/prism/cmd_simulate.c - `prismlab simulate`: one run of the prism model
 * (model/prism/prism.h), from numbers or from a catalogued prism and ramp.
 * Prints a one-line summary; --csv writes the sampled series, --impacts
 * the impact list.  Only this file prints. */
#include "commands.h"
#include "core/cli.h"
#include "model/prism/prism.h"
#include "model/validate/setup.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

static const char usage[] =
    "usage: prismlab simulate --N N --a0 M --beta-deg DEG --lambda0-deg DEG\n"
    "                         --mu-s MU [--mu MU] --h1 M --h2 M --duration S\n"
    "                         [--law line|plastic] [--rate HZ] [--ramp-length M]\n"
    "                         [--mass KG] [--csv FILE] [--impacts FILE]\n"
    "       prismlab simulate --prism NAME --ramp NAME [--db FILE] --lambda0-deg DEG\n"
    "                         --h1 M --h2 M --duration S [options above]\n\n"
    "Simulates a prism rolling down a ramp (seed paper sections 2-4): rotation\n"
    "about an edge (2.1) between line impacts (section 3) or plastic impacts\n"
    "(--law plastic, the rimless-wheel law).  Numbers override catalogue values.\n\n"
    "  --N N              edges (>= 3)\n"
    "  --a0 M             centre-to-edge distance, m\n"
    "  --beta-deg DEG     ramp inclination, (0, 180/N) degrees\n"
    "  --lambda0-deg DEG  release angle of the leading face, (0, 180/N + beta)\n"
    "  --mu-s MU          static friction coefficient; --mu slip (default mu-s)\n"
    "  --h1 M, --h2 M     laser beam heights above the ramp, m\n"
    "  --duration S       simulated time, s\n"
    "  --rate HZ          output samples per second (default 10000)\n"
    "  --ramp-length M    stop when the prism has rolled M downhill (status\n"
    "                     left_ramp); default 0 = unlimited, or the ramp's length\n"
    "  --mass KG          mass (default 0.2; the motion does not depend on it)\n"
    "  --csv FILE         columns t,omega,theta,Lp,x,vp1,vp2 (SI, header row)\n"
    "  --impacts FILE     columns n,t,omega_minus,omega_plus,ratio,friction\n\n"
    "Summary: ratio=<omega+/omega-> t_end=<s> x_end=<m> omega_end=<rad/s>\n"
    "Lp_end=<value> impacts=<count> status=<end|stopped|left_ramp|slip|detached>\n";

enum { O_N = 1000, O_A0, O_BETA, O_LAMBDA0, O_MUS, O_MU, O_H1, O_H2, O_DUR,
       O_LAW, O_RATE, O_CSV, O_IMP, O_PRISM, O_RAMP, O_DB, O_RAMPLEN, O_MASS,
       O_HELP };

int pl_cmd_simulate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"N", required_argument, 0, O_N}, {"a0", required_argument, 0, O_A0},
        {"beta-deg", required_argument, 0, O_BETA},
        {"lambda0-deg", required_argument, 0, O_LAMBDA0},
        {"mu-s", required_argument, 0, O_MUS}, {"mu", required_argument, 0, O_MU},
        {"h1", required_argument, 0, O_H1}, {"h2", required_argument, 0, O_H2},
        {"duration", required_argument, 0, O_DUR},
        {"law", required_argument, 0, O_LAW}, {"rate", required_argument, 0, O_RATE},
        {"csv", required_argument, 0, O_CSV}, {"impacts", required_argument, 0, O_IMP},
        {"prism", required_argument, 0, O_PRISM}, {"ramp", required_argument, 0, O_RAMP},
        {"db", required_argument, 0, O_DB},
        {"ramp-length", required_argument, 0, O_RAMPLEN},
        {"mass", required_argument, 0, O_MASS}, {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    const char *cmd = "simulate";
    pl_err err = {0};
    pl_model_params p;
    pl_model_params_default(&p);
    double nan_ = NAN, v;
    long n = -1;
    double a0 = nan_, beta = nan_, lam = nan_, mus = nan_, mu = nan_, h1 = nan_,
           h2 = nan_, dur = nan_, ramplen = nan_, mass = nan_;
    const char *csv = NULL, *imp = NULL, *prism = NULL, *ramp = NULL, *db = NULL;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        switch (c) {
        case O_N: st = pl_parse_long("N", optarg, 3, 100000, &n, &err); break;
        case O_A0: st = pl_parse_double("a0", optarg, 1e-6, 10, &a0, &err); break;
        case O_BETA: st = pl_parse_double("beta-deg", optarg, -90, 90, &beta, &err); break;
        case O_LAMBDA0: st = pl_parse_double("lambda0-deg", optarg, -180, 180, &lam, &err); break;
        case O_MUS: st = pl_parse_double("mu-s", optarg, 0, 10, &mus, &err); break;
        case O_MU: st = pl_parse_double("mu", optarg, 0, 10, &mu, &err); break;
        case O_H1: st = pl_parse_double("h1", optarg, -10, 10, &h1, &err); break;
        case O_H2: st = pl_parse_double("h2", optarg, -10, 10, &h2, &err); break;
        case O_DUR: st = pl_parse_double("duration", optarg, 1e-6, 1e5, &dur, &err); break;
        case O_RATE: st = pl_parse_double("rate", optarg, 1, 1e7, &v, &err); p.rate = v; break;
        case O_RAMPLEN: st = pl_parse_double("ramp-length", optarg, 0, 1e6, &ramplen, &err); break;
        case O_MASS: st = pl_parse_double("mass", optarg, 1e-9, 1e6, &mass, &err); break;
        case O_LAW:
            if (!strcmp(optarg, "line")) p.law = PL_LAW_LINE;
            else if (!strcmp(optarg, "plastic")) p.law = PL_LAW_PLASTIC;
            else return pl_cli_usage_error(cmd, "option '--law': expected line or plastic, got '%s'", optarg);
            break;
        case O_CSV: csv = optarg; break;
        case O_IMP: imp = optarg; break;
        case O_PRISM: prism = optarg; break;
        case O_RAMP: ramp = optarg; break;
        case O_DB: db = optarg; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (optind < argc)
        return pl_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if ((prism != NULL) != (ramp != NULL))
        return pl_cli_usage_error(cmd, "--prism and --ramp go together");
    if (prism) {
        if (pl_model_params_lookup(&p, pl_cli_db_path(db), prism, ramp, &err) != PL_OK)
            return pl_cli_fail(cmd, &err);
    } else {
        const char *miss = n < 0 ? "--N" : isnan(a0) ? "--a0" : isnan(beta) ? "--beta-deg"
                         : isnan(mus) ? "--mu-s" : NULL;
        if (miss)
            return pl_cli_usage_error(cmd, "missing option %s (or give --prism and --ramp)", miss);
        p.mu = NAN;
    }
    const char *miss = isnan(lam) ? "--lambda0-deg" : isnan(h1) ? "--h1" : isnan(h2) ? "--h2"
                     : isnan(dur) ? "--duration" : NULL;
    if (miss)
        return pl_cli_usage_error(cmd, "missing option %s", miss);
    if (n >= 0) p.N = (int)n;
    if (!isnan(a0)) p.a0 = a0;
    if (!isnan(beta)) p.beta = beta * DEG;
    if (!isnan(mus)) p.mu_s = mus;
    if (!isnan(mu)) p.mu = mu;
    if (!isnan(ramplen)) p.ramp_length = ramplen;
    if (!isnan(mass)) p.mass = mass;
    p.lambda0 = lam * DEG;
    p.h1 = h1;
    p.h2 = h2;
    p.duration = dur;

    if (p.duration * p.rate > 5e7)
        return pl_cli_usage_error(cmd, "--duration times --rate = %g samples: at most 5e7", p.duration * p.rate);
    pl_model *m = NULL;
    if (pl_model_create(&m, &p, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    size_t ns = (size_t)floor(p.duration * p.rate + 1e-9) + 1;
    size_t ni = (size_t)(p.duration * 1000) + 16;  /* impacts are >= 1 ms apart */
    double *buf = malloc(ns * 7 * sizeof *buf);
    pl_model_impact *im = malloc(ni * sizeof *im);
    int rc = PL_EXIT_OK;
    if (!buf || !im) {
        pl_err_set(&err, PL_ENOMEM, "out of memory for %zu samples", ns);
        rc = pl_cli_fail(cmd, &err);
        goto out;
    }
    pl_model_result r = {0};
    r.t = buf; r.omega = buf + ns; r.theta = buf + 2 * ns; r.lp = buf + 3 * ns;
    r.x = buf + 4 * ns; r.vp1 = buf + 5 * ns; r.vp2 = buf + 6 * ns;
    r.cap_samples = ns;
    r.impacts = im;
    r.cap_impacts = ni;
    if (pl_model_run(m, &r, &err) != PL_OK) {
        rc = pl_cli_fail(cmd, &err);
        goto out;
    }
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (!f) {
            pl_err_set(&err, PL_EIO, "cannot write '%s'", csv);
            rc = pl_cli_fail(cmd, &err);
            goto out;
        }
        fputs("t,omega,theta,Lp,x,vp1,vp2\n", f);
        for (size_t i = 0; i < r.n_samples; i++)
            fprintf(f, "%.4f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r.t[i], r.omega[i],
                    r.theta[i], r.lp[i], r.x[i], r.vp1[i], r.vp2[i]);
        if (fclose(f) != 0) {
            pl_err_set(&err, PL_EIO, "cannot write '%s'", csv);
            rc = pl_cli_fail(cmd, &err);
            goto out;
        }
    }
    if (imp) {
        FILE *f = fopen(imp, "w");
        if (!f) {
            pl_err_set(&err, PL_EIO, "cannot write '%s'", imp);
            rc = pl_cli_fail(cmd, &err);
            goto out;
        }
        fputs("n,t,omega_minus,omega_plus,ratio,friction\n", f);
        size_t k = r.n_impacts < ni ? r.n_impacts : ni;
        for (size_t i = 0; i < k; i++)
            fprintf(f, "%zu,%.9g,%.9g,%.9g,%.12g,%s\n", i + 1, im[i].t, im[i].omega_minus,
                    im[i].omega_plus, im[i].ratio, im[i].slipped ? "slip" : "stick");
        if (fclose(f) != 0) {
            pl_err_set(&err, PL_EIO, "cannot write '%s'", imp);
            rc = pl_cli_fail(cmd, &err);
            goto out;
        }
    }
    if (r.end == PL_END_SLIP || r.end == PL_END_DETACHED)
        printf("%s at t=%.6f s: F_n=%.6g N F_t=%.6g N (mu_s=%g)\n",
               pl_model_end_name(r.end), r.t_end, r.fail_fn, r.fail_ft, p.mu_s);
    printf("law=%s ratio=%.9f t_end=%.4f x_end=%.6f omega_end=%.6f Lp_end=%.6f impacts=%zu status=%s\n",
           p.law == PL_LAW_LINE ? "line" : "plastic", pl_model_impact_ratio(m), r.t_end,
           r.x_end, r.omega_end, r.lp_end, r.n_impacts, pl_model_end_name(r.end));
out:
    free(buf);
    free(im);
    pl_model_destroy(m);
    return rc;
}
