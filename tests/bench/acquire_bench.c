/* tests/bench/acquire_bench.c - acquisition paths against the store's raw
 * ceiling (db_bench's db_chunk_write):
 *   acquire_import_wav: `prismlab import` of a 10-minute two-channel 16-bit
 *     WAV at 10 kHz (source -> pump -> ring -> writer thread -> chunks), in
 *     million samples per second, best of three (a shorter file measures
 *     the database's creation more than the import);
 *   acquire_import_wav_vs_raw: that over db_chunk_write measured here;
 *   acquire_import_csv: a 60 s rig-simulator recording as a CSV of volts;
 *   acquire_import_csv_10min: the same for ten minutes (issue 29's
 *     target: 10 M samples/s; the shorter file measures the fixed costs
 *     more);
 *   acquire_csv_parse_cpu: the 60 s CSV's open() (the whole parse) in the
 *     CPU time of the parsing thread, best of five: the reader alone, and
 *     less moved by other load on the machine than the wall clock;
 *   acquire_csv_parse_cpu_cr: the same file with CR line ends (a reader
 *     that searched each line's block for an LF made this 0.57). */
#include "db/run.h"
#include "db/store.h"
#include "acquire/csv_source.h"
#include "acquire/import.h"
#include "acquire/sim/simrun.h"

#include <math.h>
#include <sndfile.h>
#include <stdint.h>
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

static double best_import(const char *db, const char *file, long long *frames)
{
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        unlink(db);
        pl_store *fresh = NULL;   /* only `db init` creates a store */
        pl_err init_err = {0};
        if (pl_store_open(&fresh, db, PL_STORE_CREATE, &init_err) != PL_OK) {
            fprintf(stderr, "acquire_bench: %s\n", init_err.msg);
            exit(1);
        }
        pl_store_close(fresh);
        pl_import_options o;
        pl_import_options_init(&o);
        o.path = file;
        long long id;
        pl_err err = {0};
        double t0 = now_s();
        if (pl_import_file(db, &o, &id, frames, &err) != PL_OK) {
            fprintf(stderr, "acquire_bench: %s\n", err.msg);
            exit(1);
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    return best;
}

/* The store's raw ceiling, as db_bench measures it: 65536-frame chunks,
 * 16 a transaction. */
static double raw_ceiling(const char *db)
{
    enum { CHUNK = 65536, CHUNKS = 96 };
    int16_t *buf = calloc((size_t)CHUNK * 2, sizeof *buf);
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        unlink(db);
        pl_store *s = NULL;
        pl_err err = {0};
        pl_run_info info;
        pl_channel ch[2];
        memset(ch, 0, sizeof ch);
        pl_run_info_init(&info);
        info.sample_rate_hz = 10000;
        snprintf(info.source_kind, sizeof info.source_kind, "wav");
        for (int i = 0; i < 2; i++) {
            ch[i].beam_sign = 1;
            ch[i].ldv_scale_mps_per_v = 1;
            ch[i].cal_kind = PL_CAL_IDENTITY;
            ch[i].cal_order = 1;
        }
        if (pl_store_open(&s, db, PL_STORE_CREATE, &err) != PL_OK ||
            pl_run_create(s, &info, ch, &err) != PL_OK)
            exit(1);
        double t0 = now_s();
        for (int c = 0; c < CHUNKS; c++) {
            if (c % 16 == 0 && pl_store_begin(s, &err) != PL_OK)
                exit(1);
            if (pl_run_append_chunk(s, info.id, (long long)c * CHUNK, CHUNK, buf,
                                    sizeof(int16_t) * 2 * CHUNK, &err) != PL_OK)
                exit(1);
            if ((c % 16 == 15 || c == CHUNKS - 1) && pl_store_commit(s, &err) != PL_OK)
                exit(1);
        }
        double dt = now_s() - t0;
        pl_store_close(s);
        if (dt < best)
            best = dt;
    }
    free(buf);
    return 2.0 * CHUNK * CHUNKS / best / 1e6;
}

/* Ten minutes of two LDV-like channels: slow sawtooth plus a fast one. */
static int write_long_wav(const char *path)
{
    SF_INFO info = {.samplerate = 10000, .channels = 2,
                    .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    if (!f)
        return -1;
    sf_set_string(f, SF_STR_COMMENT, "prismlab full_scale_v=10 ldv_scale=0.025,0.025 "
                  "sign=1,-1 h=0.0199,0.0116");
    short buf[2 * 10000];
    for (int sec = 0; sec < 600; sec++) {
        for (int k = 0; k < 10000; k++) {
            buf[2 * k] = (short)((k * 7 + sec) % 20000 - 10000);
            buf[2 * k + 1] = (short)(-(k * 3) % 15000);
        }
        if (sf_writef_short(f, buf, 10000) != 10000)
            return -1;
    }
    return sf_close(f);
}

/* The parse of a CSV (pl_source_open), best of five, in M samples per
 * second of this thread's CPU time (the hash runs on another). */
static double parse_cpu(const char *file)
{
    double best = INFINITY;
    long long frames = 0;
    for (int rep = 0; rep < 5; rep++) {
        pl_csv_options o;
        pl_csv_options_init(&o);
        o.path = file;
        pl_source_config cfg;
        pl_source_config_init(&cfg);
        pl_source_spec spec = pl_csv_spec(&o, &cfg);
        void *src = NULL;
        pl_source_info info;
        pl_err err = {0};
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        if (pl_source_open(&spec, &src, &info, &err) != PL_OK) {
            fprintf(stderr, "acquire_bench: %s\n", err.msg);
            exit(1);
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        pl_source_csv.close(src);
        frames = info.total_frames;
        double dt = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
        if (dt < best)
            best = dt;
    }
    return 2.0 * frames / best / 1e6;
}

/* src with every '\n' made '\r', into dst. */
static void to_cr(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    int c;
    if (!in || !out) {
        fprintf(stderr, "acquire_bench: cannot copy %s to %s\n", src, dst);
        exit(1);
    }
    while ((c = getc(in)) != EOF)
        putc(c == '\n' ? '\r' : c, out);
    fclose(in);
    if (fclose(out) != 0)
        exit(1);
}

/* A rig-simulator recording of the given length as a CSV of volts, as
 * `prismlab sim --csv` writes it. */
static void write_sim_csv(const char *path, double seconds)
{
    pl_simrun_config c;
    pl_simrun_config_default(&c);
    c.model.ramp_length = 0;        /* roll on: all of it motion */
    c.model.duration = seconds - 1.0;
    c.lead_in_s = 1.0;
    c.tail_s = 0.0;
    pl_simrun *s = NULL;
    pl_err err = {0};
    if (pl_simrun_create(&s, &c, &err) != PL_OK ||
        pl_simrun_write_csv(s, path, &err) != PL_OK) {
        fprintf(stderr, "acquire_bench: %s\n", err.msg);
        exit(1);
    }
    pl_simrun_destroy(s);
}

int main(void)
{
    char dir[] = "/tmp/prismlab-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char wav[64], csv[64], db[64];
    snprintf(wav, sizeof wav, "%s/a.wav", dir);
    snprintf(csv, sizeof csv, "%s/a.csv", dir);
    snprintf(db, sizeof db, "%s/a.db", dir);
    write_sim_csv(csv, 60.0);
    long long frames = 0;
    double t = best_import(db, csv, &frames);
    printf("acquire_import_csv: %.2f MS/s\n", 2.0 * frames / t / 1e6);
    printf("acquire_csv_parse_cpu: %.1f MS/s\n", parse_cpu(csv));
    char cr[80];
    snprintf(cr, sizeof cr, "%s/cr.csv", dir);
    to_cr(csv, cr);
    printf("acquire_csv_parse_cpu_cr: %.1f MS/s\n", parse_cpu(cr));
    unlink(cr);
    write_sim_csv(csv, 600.0);
    t = best_import(db, csv, &frames);
    printf("acquire_import_csv_10min: %.2f MS/s\n", 2.0 * frames / t / 1e6);
    if (2.0 * frames / t < 10e6)
        fprintf(stderr, "acquire_bench: goal not met: the 10-minute CSV import at %.2f M "
                        "samples/s, goal 10 (issue 29); the parse is about half of it, the "
                        "store's durable write of 96 MB of doubles the rest (docs/acquire.md)\n",
                2.0 * frames / t / 1e6);
    if (write_long_wav(wav) != 0) {
        fprintf(stderr, "acquire_bench: cannot write %s\n", wav);
        return 1;
    }
    t = best_import(db, wav, &frames);
    double raw = raw_ceiling(db);
    printf("acquire_import_wav: %.1f MS/s\n", 2.0 * frames / t / 1e6);
    printf("acquire_import_wav_vs_raw: %.2f ratio\n", 2.0 * frames / t / 1e6 / raw);
    unlink(wav);
    unlink(csv);
    unlink(db);
    char side[80];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    rmdir(dir);
    return 0;
}
