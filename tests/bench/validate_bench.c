/* tests/bench/validate_bench.c - validation of the 12-run glass + steel
 * experiment set (seed 000 figs. 8 and 9 fixtures): both laws, recorded
 * and fitted (lambda0, release, beta), then both reports.
 *   validate_12_runs: wall time of validation and reports, s;
 *   validate_fit_line_mean: mean time of one line-law fit, s;
 *   validate_fit_plastic_mean: mean time of one plastic-law fit, s. */
#include "model/validate/report.h"
#include "model/validate/validate.h"
#include "process/process.h"
#include "tests/util/testutil.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    gsl_set_error_handler_off();
    const char *db = "/tmp/prismlab-validate-bench.db";
    pl_err err = {0};
    pl_store *store = NULL;
    int count;
    unlink(db);
    if (tu_fixture_db(db, "fixtures/runs/manifest.csv", &count, &err) != PL_OK ||
        pl_store_open(&store, db, 0, &err) != PL_OK) {
        fprintf(stderr, "validate_bench: %s\n", err.msg);
        return 1;
    }
    pl_process_config pc;
    pl_process_config_default(&pc);
    for (long long id = 1; id <= 12; id++)   /* fig8 and fig9: runs 1-12 */
        if (pl_process_run(store, id, &pc, NULL, &err) != PL_OK) {
            fprintf(stderr, "validate_bench: %s\n", err.msg);
            return 1;
        }
    pl_fit_spec spec = {.lambda0 = 1, .t0 = 1, .beta = 1, .beta_sd = NAN};
    double t0 = now_s(), tfit[2] = {0, 0};
    for (long long id = 1; id <= 12; id++)
        for (int law = 0; law < 2; law++)
            for (int fitted = 0; fitted < 2; fitted++) {
                double a = now_s();
                if (pl_validate_run(store, id, law ? PL_LAW_PLASTIC : PL_LAW_LINE, fitted,
                                    &spec, NULL, &err) != PL_OK) {
                    fprintf(stderr, "validate_bench: %s\n", err.msg);
                    return 1;
                }
                if (fitted)
                    tfit[law] += now_s() - a;
            }
    char dir[] = "/tmp/prismlab-validate-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char out[64];
    pl_report_stats rs;
    snprintf(out, sizeof out, "%s/fig8", dir);
    if (pl_report_write(store, "fig8", out, &rs, &err) != PL_OK)
        return 1;
    snprintf(out, sizeof out, "%s/fig9", dir);
    if (pl_report_write(store, "fig9", out, &rs, &err) != PL_OK)
        return 1;
    double total = now_s() - t0;
    printf("validate_12_runs: %.2f s\n", total);
    printf("validate_fit_line_mean: %.3f s\n", tfit[0] / 12);
    printf("validate_fit_plastic_mean: %.3f s\n", tfit[1] / 12);
    pl_store_close(store);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s %s-wal %s-shm", dir, db, db, db);
    return system(cmd) == 0 ? 0 : 1;
}
