/* tests/acquire/writer_test.c - the writer and the recorder against a real
 * SQLite file: every pushed frame comes back byte for byte in tiled,
 * CRC-checked chunks; a writer held up by the disk marks the run overrun
 * at the exact first lost frame and keeps everything before it; a recorder
 * killed with SIGKILL leaves only intact committed chunks and the next
 * recorder marks its run interrupted; the paced sim source keeps real
 * time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/record.h"
#include "acquire/sim/sim_options.h"
#include "acquire/writer.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *dir, *db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("writer");
    f->db = tu_path(f->dir, "w.db");
    assert_int_equal(tu_init_db(f->db), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

static void run_info(pl_run_info *info, pl_channel ch[2])
{
    pl_run_info_init(info);
    info->sample_rate_hz = 10000;
    info->n_channels = 2;
    info->format = PL_FMT_S16;
    info->little_endian = pl_host_little_endian();
    snprintf(info->source_kind, sizeof info->source_kind, "sim");
    memset(ch, 0, 2 * sizeof *ch);
    for (int i = 0; i < 2; i++) {
        ch[i].beam_height_m = 0.02 - 0.01 * i;
        ch[i].beam_sign = i ? -1 : 1;
        ch[i].ldv_scale_mps_per_v = 0.025;
        ch[i].cal_kind = PL_CAL_FILE;
        ch[i].cal_order = 1;
        ch[i].cal_coef[1] = 10.0 / 32768;
        ch[i].range_min_v = ch[i].range_max_v = NAN;
    }
}

static void print_problem(void *ctx, long long run, long long chunk, const char *what)
{
    (void)ctx;
    print_error("store problem: run %lld chunk %lld: %s\n", run, chunk, what);
}

static void check_store(const char *db)
{
    pl_store *s = NULL;
    pl_err err = {0};
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    long long problems = -1;
    assert_int_equal(pl_store_check(s, print_problem, NULL, &problems, &err), PL_OK);
    assert_int_equal(problems, 0);
    pl_store_close(s);
}

/* 25 007 frames pushed in odd-sized pieces through a small ring come back
 * exactly, in chunks of the commit interval. */
static void test_frames_come_back(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_writer_config wc = {.ring_frames = 1000, .commit_interval_s = 0.01,
                           .block_when_full = 1};
    pl_writer *w = NULL;
    assert_int_equal(pl_writer_create(&w, f->db, &wc, &err), PL_OK);
    pl_run_info info;
    pl_channel ch[2];
    run_info(&info, ch);
    assert_int_equal(pl_writer_begin_run(w, &info, ch, &err), PL_OK);
    enum { TOTAL = 25007 };
    int16_t *data = malloc(2 * TOTAL * sizeof *data);
    for (int i = 0; i < 2 * TOTAL; i++)
        data[i] = (int16_t)(i * 7919);
    size_t at = 0, piece = 1;
    while (at < TOTAL) {
        size_t n = piece < TOTAL - at ? piece : TOTAL - at;
        assert_int_equal(pl_writer_push(w, data + 2 * at, n, &err), PL_OK);
        at += n;
        piece = piece * 3 % 1237 + 1;
    }
    assert_int_equal(pl_writer_end_run(w, PL_RUN_COMPLETE, &err), PL_OK);
    pl_writer_stats st;
    pl_writer_get_stats(w, &st);
    assert_int_equal(st.frames_committed, TOTAL);
    assert_int_equal(st.commits, (TOTAL + 99) / 100);
    assert_true(st.ring_peak <= 1000);
    assert_int_equal(st.overruns, 0);

    pl_store *s = pl_writer_store(w);
    pl_run_info got;
    assert_int_equal(pl_run_get(s, info.id, &got, &err), PL_OK);
    assert_int_equal(got.state, PL_RUN_COMPLETE);
    assert_int_equal(got.n_frames, TOTAL);
    int16_t *back = malloc(2 * TOTAL * sizeof *back);
    assert_int_equal(pl_run_read_raw(s, info.id, 0, TOTAL, back,
                                     2 * TOTAL * sizeof *back, &err), PL_OK);
    assert_memory_equal(back, data, 2 * TOTAL * sizeof *back);
    pl_writer_destroy(w);
    check_store(f->db);
    free(data);
    free(back);
}

/* Another connection holds the write lock, so the writer thread cannot
 * commit; the 100-frame ring fills and push #11 of 10 frames overruns at
 * frame 100 exactly.  After the lock goes, the first 100 frames are
 * stored and the run says overrun at 100. */
static void test_overrun_at_exact_frame(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_writer_config wc = {.ring_frames = 100, .commit_interval_s = 0.001,
                           .block_when_full = 0};
    pl_writer *w = NULL;
    assert_int_equal(pl_writer_create(&w, f->db, &wc, &err), PL_OK);
    pl_run_info info;
    pl_channel ch[2];
    run_info(&info, ch);
    assert_int_equal(pl_writer_begin_run(w, &info, ch, &err), PL_OK);

    pl_store *blocker = NULL;
    assert_int_equal(pl_store_open(&blocker, f->db, 0, &err), PL_OK);
    assert_int_equal(pl_store_begin(blocker, &err), PL_OK);

    int16_t frames[20];
    for (int i = 0; i < 20; i++)
        frames[i] = (int16_t)i;
    for (int k = 0; k < 10; k++)
        assert_int_equal(pl_writer_push(w, frames, 10, &err), PL_OK);
    assert_int_equal(pl_writer_push(w, frames, 10, &err), PL_EOVERRUN);
    assert_non_null(strstr(err.msg, "overrun at frame 100"));
    assert_int_equal(pl_writer_push(w, frames, 10, &err), PL_EOVERRUN);

    assert_int_equal(pl_store_commit(blocker, &err), PL_OK);
    pl_store_close(blocker);
    assert_int_equal(pl_writer_end_run(w, PL_RUN_COMPLETE, &err), PL_OK);
    pl_run_info got;
    assert_int_equal(pl_run_get(pl_writer_store(w), info.id, &got, &err), PL_OK);
    assert_int_equal(got.state, PL_RUN_OVERRUN);
    assert_int_equal(got.overrun_frame, 100);
    assert_int_equal(got.n_frames, 100);
    pl_writer_destroy(w);
    check_store(f->db);
}

/* The page size an SQLite file's header gives (bytes 16-17, big-endian;
 * 1 means 65536): new stores have 16 KiB pages, older ones 4 KiB. */
static long page_size_of(const char *path)
{
    unsigned char h[18] = {0};
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(h, 1, sizeof h, fp), sizeof h);
    fclose(fp);
    long v = (long)h[16] << 8 | h[17];
    return v == 1 ? 65536 : v;
}

/* A commit that fails (the disk full: the test-only page cap) marks the
 * run overrun at once, at the first frame not stored: get_stats says so
 * before the run ends, push returns the cause naming the run, and the run
 * ends 'overrun' there, every frame before it kept (issue 31, D3). */
static void test_failed_commit_is_overrun(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    struct stat sb;
    assert_int_equal(stat(f->db, &sb), 0);
    char cap[32];
    /* ~80 kB (2 s of these frames) past what it holds, in its pages */
    long page = page_size_of(f->db);
    snprintf(cap, sizeof cap, "%lld", (long long)sb.st_size / page + (81920 + page - 1) / page);
    setenv("PRISMLAB_TEST_MAX_PAGE_COUNT", cap, 1);
    pl_writer_config wc = {.commit_interval_s = 0.1, .block_when_full = 0};
    pl_writer *w = NULL;
    pl_status st = pl_writer_create(&w, f->db, &wc, &err);
    unsetenv("PRISMLAB_TEST_MAX_PAGE_COUNT");
    assert_int_equal(st, PL_OK);
    pl_run_info info;
    pl_channel ch[2];
    run_info(&info, ch);
    assert_int_equal(pl_writer_begin_run(w, &info, ch, &err), PL_OK);
    int16_t frames[2 * 1000] = {0};
    pl_writer_stats ws = {0};
    /* 10 s of data at most, in 0.1 s pieces (the ring holds 10 s) */
    for (int k = 0; k < 100 && st == PL_OK; k++) {
        for (int i = 0; i < 2000; i++)
            frames[i] = (int16_t)(k * 7 + i);
        st = pl_writer_push(w, frames, 1000, &err);
        nanosleep(&(struct timespec){.tv_nsec = 20000000L}, NULL);
    }
    assert_int_equal(st, PL_EDB);
    assert_non_null(strstr(err.msg, "full"));
    assert_non_null(strstr(err.msg, "run 1"));
    pl_writer_get_stats(w, &ws);
    assert_int_equal(ws.failed, 1);
    assert_int_equal(ws.overruns, 1);
    long long kept = ws.frames_committed;
    assert_true(kept > 0);
    assert_int_equal(pl_writer_end_run(w, PL_RUN_COMPLETE, &err), PL_EDB);
    pl_run_info got;
    assert_int_equal(pl_run_get(pl_writer_store(w), info.id, &got, &err), PL_OK);
    assert_int_equal(got.state, PL_RUN_OVERRUN);
    assert_int_equal(got.overrun_frame, kept);
    assert_int_equal(got.n_frames, kept);
    pl_writer_destroy(w);
    check_store(f->db);
}

static void sim_config(pl_sim_options *so, int paced, double ramp_length)
{
    pl_sim_options_init(so);
    pl_simrun_config *r = &so->run;
    r->model.N = 30;
    r->model.a0 = 0.015;
    r->model.beta = 0.4079 * M_PI / 180;
    r->model.lambda0 = 5.322 * M_PI / 180;
    r->model.mu_s = 0.12;
    r->model.mu = NAN;
    r->model.h1 = 0.0199;
    r->model.h2 = 0.0116;
    r->model.ramp_length = ramp_length;
    r->rig.seed = 3;
    so->paced = paced;
}

/* The child records a paced simulated run; SIGKILL hits it mid-run. */
static void test_sigkill_leaves_committed_chunks(void **state)
{
    fixture *f = *state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pl_err err = {0};
        pl_sim_options so;
        sim_config(&so, 1, 0.65);
        pl_source_config beams;
        pl_source_config_init(&beams);
        pl_record_options ro;
        pl_record_options_init(&ro);
        pl_recorder *r = NULL;
        void *src = NULL;
        pl_source_info info;
        long long id;
        if (pl_recorder_open(&r, f->db, &ro.writer, NULL, &err) != PL_OK ||
            pl_source_sim.open(&src, &so, &beams, &info, &err) != PL_OK)
            _exit(3);
        pl_recorder_run(r, &pl_source_sim, src, &info, &ro, &id, NULL, &err);
        _exit(4);   /* not reached: the run lasts about 8 s */
    }
    struct timespec ts = {1, 200000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    check_store(f->db);

    /* A new recorder takes the lock and marks the dead one's run. */
    pl_err err = {0};
    pl_writer_config wc = {.commit_interval_s = 0.1};
    pl_recorder *r = NULL;
    long long interrupted = -1;
    assert_int_equal(pl_recorder_open(&r, f->db, &wc, &interrupted, &err), PL_OK);
    assert_int_equal(interrupted, 1);
    pl_store *s = pl_writer_store(pl_recorder_writer(r));
    pl_run_info got;
    assert_int_equal(pl_run_get(s, 1, &got, &err), PL_OK);
    assert_int_equal(got.state, PL_RUN_INTERRUPTED);
    /* ~1.2 s of data was delivered; committed in 0.1 s transactions */
    assert_true(got.n_frames >= 8000 && got.n_frames <= 13000);
    assert_int_equal(got.n_frames % 1000, 0);

    /* and the committed frames are the simulator's, byte for byte */
    pl_sim_options so;
    sim_config(&so, 0, 0.65);
    pl_simrun *sim = NULL;
    assert_int_equal(pl_simrun_create(&sim, &so.run, &err), PL_OK);
    uint16_t *back = malloc((size_t)got.n_frames * 2 * sizeof *back);
    assert_int_equal(pl_run_read_raw(s, 1, 0, got.n_frames, back,
                                     (size_t)got.n_frames * 4, &err), PL_OK);
    assert_memory_equal(back, pl_simrun_codes(sim), (size_t)got.n_frames * 4);
    free(back);
    pl_simrun_destroy(sim);
    pl_recorder_close(r);
    check_store(f->db);
}

/* A second recorder on the same database is refused while one runs. */
static void test_one_recorder_at_a_time(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_writer_config wc = {0};
    pl_recorder *a = NULL, *b = NULL;
    assert_int_equal(pl_recorder_open(&a, f->db, &wc, NULL, &err), PL_OK);
    assert_int_equal(pl_recorder_open(&b, f->db, &wc, NULL, &err), PL_ESTATE);
    assert_non_null(strstr(err.msg, "another recorder"));
    pl_recorder_close(a);
    assert_int_equal(pl_recorder_open(&b, f->db, &wc, NULL, &err), PL_OK);
    pl_recorder_close(b);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Paced delivery of a ~10 s recording takes its own length in wall time:
 * the deadlines are absolute, so the error is one block at most. */
static void test_paced_keeps_real_time(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_sim_options so;
    sim_config(&so, 1, 0.72);
    so.run.lead_in_s = 3.0;   /* 10.4 s in all */
    pl_source_config beams;
    pl_source_config_init(&beams);
    pl_record_options ro;
    pl_record_options_init(&ro);
    pl_recorder *r = NULL;
    void *src = NULL;
    pl_source_info info;
    long long id = 0, frames = 0;
    assert_int_equal(pl_recorder_open(&r, f->db, &ro.writer, NULL, &err), PL_OK);
    assert_int_equal(pl_source_sim.open(&src, &so, &beams, &info, &err), PL_OK);
    double t0 = now_s();
    assert_int_equal(pl_recorder_run(r, &pl_source_sim, src, &info, &ro, &id,
                                     &frames, &err), PL_OK);
    double wall = now_s() - t0;
    double dur = frames / info.sample_rate_hz;
    print_message("paced: %lld frames = %.3f s of data in %.3f s wall (%+.2f %%)\n",
                  frames, dur, wall, 100 * (wall - dur) / dur);
    assert_true(dur > 10.0);
    assert_true(fabs(wall - dur) / dur < 0.01);
    assert_int_equal(frames, info.total_frames);
    pl_source_sim.close(src);
    pl_recorder_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_frames_come_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overrun_at_exact_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_commit_is_overrun, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigkill_leaves_committed_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_recorder_at_a_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paced_keeps_real_time, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
