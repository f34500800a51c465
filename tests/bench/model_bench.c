/* tests/bench/model_bench.c - time of one 7 s simulation at 10 kHz output
 * (line-impact and plastic law), of the one-off impact solution, and of
 * seed 003's rod and board sliding and spinning to rest under the full
 * equations (their friction is a quadrature at every stage), and of four
 * simulated seconds of seed 002's bouncing dimer; prints
 * `name: value unit` lines.  Best of several repetitions. */
#include "model/seeds/body.h"
#include "model/seeds/dimer.h"
#include "model/seeds/dimer_maps.h"
#include "model/prism/prism.h"

#include <gsl/gsl_errno.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NS 70001
static double T[NS], X[NS], Y[NS], TH[NS], OM[NS], V1[NS], V2[NS], LP[NS];
static pl_model_impact IMP[2000];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int run_case(const char *name, pl_law law, double lambda0_deg)
{
    pl_model_params p;
    pl_model_params_default(&p);
    p.law = law;
    p.lambda0 = lambda0_deg * M_PI / 180;
    pl_err err = {0};
    pl_model *m;
    if (pl_model_create(&m, &p, &err) != PL_OK) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    pl_model_result r = {0};
    r.t = T; r.x = X; r.y = Y; r.theta = TH; r.omega = OM; r.vp1 = V1; r.vp2 = V2;
    r.lp = LP; r.cap_samples = NS; r.impacts = IMP; r.cap_impacts = 2000;
    double best = 1e9;
    for (int i = 0; i < 7; i++) {
        double t0 = now();
        if (pl_model_run(m, &r, &err) != PL_OK) {
            fprintf(stderr, "%s: %s\n", name, err.msg);
            pl_model_destroy(m);
            return 1;
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("%s: %.3f ms\n", name, best * 1e3);
    /* Reference values beside the timing, so a speed-up that changes the answer shows. */
    printf("%s_Lp_end: %.4f impacts\n", name, r.lp_end);
    printf("%s_impacts: %zu count\n", name, r.n_impacts);
    fprintf(stderr, "%s ended by %s after %zu samples\n", name, pl_model_end_name(r.end), r.n_samples);
    pl_model_destroy(m);
    return 0;
}

int main(void)
{
    gsl_set_error_handler_off();   /* the library checks GSL's codes */
    int rc = run_case("model_line_7s_10khz", PL_LAW_LINE, 5.322);
    /* the plastic law stops N = 22 released at 5.322 deg after one impact;
     * release it from 8.5 deg so that the benchmark times a full run */
    rc |= run_case("model_plastic_7s_10khz", PL_LAW_PLASTIC, 8.5);
    pl_impact_detail d;
    pl_err err = {0};
    double best = 1e9;
    for (int i = 0; i < 20; i++) {
        double t0 = now();
        pl_line_impact_solve(22, 0.015, 0.2, 0.12, 0.12, 1, 400, &d, &err);
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("model_line_impact_solve_400: %.3f us\n", best * 1e6);

    pl_plane pl = {PL_FRICTION_ROUGH, 0.3, 10 * M_PI / 180, 9.80665};
    pl_body bodies[2] = {{.kind = PL_BODY_ROD, .mass = 1, .length = 0.5},
                         {.kind = PL_BODY_BOARD, .mass = 1, .length = 0.4, .width = 0.1}};
    const char *names[2] = {"roughplane_rod_full", "roughplane_board_full"};
    for (int b = 0; b < 2; b++) {
        pl_body_state s0 = {0, 0, 0, 1.0, 0.5, 8.0};
        pl_body_end e;
        best = 1e9;
        for (int i = 0; i < 5; i++) {
            double t0 = now();
            if (pl_roughplane_body(&bodies[b], &pl, &s0, 0, 2, 0, 0, NULL, NULL, &e, &err) != PL_OK) {
                fprintf(stderr, "%s: %s\n", names[b], err.msg);
                return 1;
            }
            double dt = now() - t0;
            if (dt < best) best = dt;
        }
        printf("%s: %.1f ms\n", names[b], best * 1e3);
        printf("%s_t_stop: %.4f s\n", names[b], e.t_stop);
    }

    /* the bouncing dimer: four simulated seconds of section 5's drift */
    pl_dimer_params dp;
    pl_dimer_params_default(&dp);
    pl_dimer_result dr;
    best = 1e9;
    for (int i = 0; i < 3; i++) {
        double t0 = now();
        if (pl_dimer_run(&dp, NULL, 0, &dr, &err) != PL_OK) {
            fprintf(stderr, "dimer: %s\n", err.msg);
            return 1;
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("dimer_section5_4s: %.1f ms\n", best * 1e3);
    printf("dimer_section5_drift: %.3f mm/s\n", dr.drift * 1e3);

    /* figure 11's sweep: 3 f x 65 A_r x 16 starts, one thread a CPU */
    pl_dimer_fig11_spec fs;
    pl_dimer_fig11_default(&fs);
    size_t nf = pl_dimer_fig11_size(&fs);
    pl_dimer_params *fps = malloc(nf * sizeof *fps);
    pl_dimer_result *fres = malloc(nf * sizeof *fres);
    int *fok = malloc(nf * sizeof *fok);
    if (!fps || !fres || !fok) {
        fprintf(stderr, "dimer fig11: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < nf; i++)
        pl_dimer_fig11_params(&fs, i, &fps[i]);
    double t0 = now();
    if (pl_dimer_batch(fps, nf, 0, fres, fok, NULL, NULL, &err) != PL_OK) {
        fprintf(stderr, "dimer fig11: %s\n", err.msg);
        return 1;
    }
    double sweep = now() - t0;
    size_t drift_runs = 0;
    for (size_t i = 0; i < nf; i++)
        drift_runs += fok[i] && fres[i].mode == PL_DIMER_DRIFT;
    printf("dimer_fig11_sweep: %.1f s\n", sweep);
    printf("dimer_fig11_runs: %zu runs\n", nf);
    printf("dimer_fig11_per_run: %.1f ms\n", sweep / (double)nf * 1e3);
    printf("dimer_fig11_drift_mode: %zu runs\n", drift_runs);
    free(fps);
    free(fres);
    free(fok);
    return rc;
}
