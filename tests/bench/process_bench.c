/* tests/bench/process_bench.c - the whole processing of a 10-minute
 * two-channel 10 kHz recording:
 *   process_10min: million samples per second through
 *     pl_process_signals() (despike, omega, release and end, filter,
 *     integrate, spectra, impacts) from calibrated velocities in memory;
 *   process_10min_store_to_store: the same with the chunks read from the
 *     store and the result written back (pl_process_run());
 *   process_10min_maxrss_per_sample: peak resident memory of the process
 *     divided by the run's samples (bytes), a check that memory stays a
 *     small constant times the run length;
 *   process_10min_impacts: impacts found (a sanity figure). */
#include "acquire/sim/simrun.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"
#include "process/process.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    const char *db = "/tmp/prismlab-process-bench.db";
    pl_err err = {0};
    pl_simrun_config c;
    pl_simrun_config_default(&c);
    c.model.N = 38;
    c.model.lambda0 = 4.5 * M_PI / 180;
    c.model.ramp_length = 0;     /* an endless ramp: ten minutes of rolling */
    c.model.duration = 598.5;
    c.lead_in_s = 1.0;
    c.tail_s = 0.5;
    pl_simrun *s = NULL;
    if (pl_simrun_create(&s, &c, &err) != PL_OK) {
        fprintf(stderr, "process_bench: %s\n", err.msg);
        return 1;
    }
    unlink(db);
    pl_store *store = NULL;
    pl_prism pr;
    pl_prism_init(&pr);
    snprintf(pr.name, sizeof pr.name, "bench-38");
    pr.n_edges = 38;
    pr.a0_m = 0.015;
    pr.length_m = 0.05;
    pr.mass_kg = 0.27;
    snprintf(pr.material, sizeof pr.material, "steel");
    pl_run_info info;
    pl_run_info_init(&info);
    snprintf(info.prism, sizeof info.prism, "bench-38");
    info.sample_rate_hz = c.rate_hz;
    info.n_channels = 2;
    info.format = PL_FMT_U16;
    info.little_endian = pl_host_little_endian();
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    info.synthetic = 1;
    pl_channel ch[2];
    pl_simrun_channels(s, ch);
    size_t n = pl_simrun_frames(s);
    const uint16_t *codes = pl_simrun_codes(s);
    if (pl_store_open(&store, db, PL_STORE_CREATE, &err) != PL_OK ||
        pl_prism_add(store, &pr, &err) != PL_OK ||
        pl_store_begin(store, &err) != PL_OK ||
        pl_run_create(store, &info, ch, &err) != PL_OK) {
        fprintf(stderr, "process_bench: %s\n", err.msg);
        return 1;
    }
    for (size_t at = 0; at < n; at += 65536) {
        size_t m = n - at < 65536 ? n - at : 65536;
        if (pl_run_append_chunk(store, info.id, (long long)at, (long long)m,
                                codes + 2 * at, m * 4, &err) != PL_OK) {
            fprintf(stderr, "process_bench: %s\n", err.msg);
            return 1;
        }
    }
    if (pl_store_commit(store, &err) != PL_OK)
        return 1;
    pl_simrun_destroy(s);

    pl_process_config cfg;
    pl_process_config_default(&cfg);
    cfg.lattice.beta_rad = c.model.beta;   /* as the run's ramp would give it */
    pl_process_result r;

    /* The processing proper, from calibrated velocities in memory (what
     * the target is about): read and scaled outside the clock. */
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    if (!v[0] || !v[1] ||
        pl_run_read_channels(store, info.id, 0, (long long)n, v, 2, &err) != PL_OK) {
        fprintf(stderr, "process_bench: %s\n", v[0] && v[1] ? err.msg : "out of memory");
        return 1;
    }
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n; i++)
            v[k][i] *= ch[k].beam_sign * ch[k].ldv_scale_mps_per_v;
    double t0 = now_s();
    if (pl_process_signals(v[0], v[1], n, c.rate_hz, ch[0].beam_height_m,
                           ch[1].beam_height_m, 38, &cfg, &r, &err) != PL_OK) {
        fprintf(stderr, "process_bench: %s\n", err.msg);
        return 1;
    }
    double dt = now_s() - t0;
    pl_process_result_free(&r);
    free(v[0]);
    free(v[1]);

    /* The whole command: read the chunks, process, write the result. */
    t0 = now_s();
    if (pl_process_run(store, info.id, &cfg, &r, &err) != PL_OK) {
        fprintf(stderr, "process_bench: %s\n", err.msg);
        return 1;
    }
    double dt_store = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("process_10min: %.1f MS/s\n", 2.0 * n / dt / 1e6);
    printf("process_10min_seconds: %.3f s\n", dt);
    printf("process_10min_store_to_store: %.1f MS/s\n", 2.0 * n / dt_store / 1e6);
    printf("process_10min_store_to_store_seconds: %.3f s\n", dt_store);
    printf("process_10min_maxrss_per_sample: %.1f B\n", ru.ru_maxrss * 1024.0 / (2.0 * n));
    printf("process_10min_impacts: %zu count\n", r.n_impacts);
    pl_process_result_free(&r);
    pl_store_close(store);
    unlink(db);
    char side[80];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    return 0;
}
