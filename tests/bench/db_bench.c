/* tests/bench/db_bench.c - raw chunk-write throughput of the store: the
 * ceiling every acquisition path is compared with.
 *
 * Writes 2-channel int16 frames through pl_run_append_chunk into a file
 * in /tmp, WAL mode, and prints million int16 samples per second, best of
 * three runs:
 *   db_chunk_write: bulk, as an import writes: chunks of 65536 frames,
 *     16 chunks per transaction, synchronous=NORMAL (the raw ceiling);
 *   db_chunk_write_100ms: chunks of 1000 frames (100 ms at 10 kHz, the
 *     live writer's default), one transaction each, synchronous=NORMAL;
 *   db_chunk_write_100ms_full_sync: the same with synchronous=FULL. */
#include "db/run.h"
#include "db/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double one_run(const char *path, unsigned flags, long long frames,
                      long long chunk, int per_txn)
{
    pl_store *s;
    pl_err err = {0};
    pl_run_info info;
    pl_channel ch[2] = {0};
    int16_t *buf = malloc((size_t)chunk * 2 * sizeof *buf);

    double t0, t1;

    unlink(path);
    if (pl_store_open(&s, path, flags | PL_STORE_CREATE, &err) != PL_OK) {
        fprintf(stderr, "db_bench: %s\n", err.msg);
        exit(1);
    }
    for (long long i = 0; i < chunk * 2; i++)
        buf[i] = (int16_t)(i * 37);
    for (int i = 0; i < 2; i++) {
        ch[i].beam_sign = 1;
        ch[i].ldv_scale_mps_per_v = 0.025;
        ch[i].cal_kind = PL_CAL_FILE;
        ch[i].cal_order = 1;
        ch[i].cal_coef[1] = 10.0 / 32768;
    }
    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    pl_run_create(s, &info, ch, &err);
    t0 = now_s();
    for (long long f = 0, k = 0; f < frames; f += chunk, k++) {
        if ((k % per_txn == 0 && pl_store_begin(s, &err)) ||
            pl_run_append_chunk(s, info.id, f, chunk, buf,
                                (size_t)chunk * 4, &err) ||
            ((k % per_txn == per_txn - 1 || f + chunk >= frames) &&
             pl_store_commit(s, &err))) {
            fprintf(stderr, "db_bench: %s\n", err.msg);
            exit(1);
        }
    }
    t1 = now_s();
    pl_store_close(s);
    free(buf);
    return frames * 2 / (t1 - t0) / 1e6;
}

int main(void)
{
    const char *path = "/tmp/prismlab-db-bench.db";
    char wal[64], shm[64];
    double best[3] = {0};

    for (int i = 0; i < 3; i++) {
        double v[3] = {one_run(path, 0, 65536 * 256, 65536, 16),
                       one_run(path, 0, 5000000, 1000, 1),
                       one_run(path, PL_STORE_SYNC_FULL, 1000000, 1000, 1)};
        for (int k = 0; k < 3; k++)
            best[k] = v[k] > best[k] ? v[k] : best[k];
    }
    printf("db_chunk_write: %.1f MS/s\n", best[0]);
    printf("db_chunk_write_100ms: %.1f MS/s\n", best[1]);
    printf("db_chunk_write_100ms_full_sync: %.1f MS/s\n", best[2]);
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    unlink(path);
    unlink(wal);
    unlink(shm);
    return 0;
}
