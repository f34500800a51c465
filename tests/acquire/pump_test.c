/* tests/acquire/pump_test.c - the source -> writer loop against real files
 * and a real SQLite store: a CSV file's frames arrive whole and exact; the
 * block size, max_frames and the stop flag are honoured to the frame; a
 * live source with nothing ready is read again, not taken for the end; a
 * source's error comes back with its message after the frames before it;
 * a reported loss marks the run overrun at the exact frame; progress ends
 * on the total. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/csv_source.h"
#include "acquire/pump.h"
#include "acquire/writer.h"
#include "db/store.h"
#include "tests/util/testsource.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *db;
    pl_writer *w;
    long long run_id;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("pump");
    f->db = tu_path(f->dir, "p.db");
    assert_int_equal(tu_init_db(f->db), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pl_writer_destroy(f->w);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

/* A writer on the fixture's store with a run begun for the source. */
static void begin(fixture *f, const pl_source_info *info, int block_when_full)
{
    pl_err err = {0};
    pl_writer_config wc = {.commit_interval_s = 0.1,
                           .block_when_full = block_when_full};
    assert_int_equal(pl_writer_create(&f->w, f->db, &wc, &err), PL_OK);
    pl_run_info run;
    pl_run_info_init(&run);
    run.sample_rate_hz = info->sample_rate_hz;
    run.n_channels = info->n_channels;
    run.format = info->format;
    run.little_endian = info->little_endian;
    snprintf(run.source_kind, sizeof run.source_kind, "%s", info->kind);
    assert_int_equal(pl_writer_begin_run(f->w, &run, info->channel, &err), PL_OK);
    f->run_id = run.id;
}

/* Ends the run and returns what the store holds of it. */
static pl_run_info end(fixture *f, pl_run_state state)
{
    pl_err err = {0};
    pl_run_info got;
    pl_writer_end_run(f->w, state, &err);
    assert_int_equal(pl_run_get(pl_writer_store(f->w), f->run_id, &got, &err), PL_OK);
    return got;
}

typedef struct {
    long long calls, last, total;
    int backwards;
} progress_log;

static void on_progress(void *ctx, long long frames, long long total)
{
    progress_log *p = ctx;
    if (frames < p->last)
        p->backwards = 1;
    p->calls++;
    p->last = frames;
    p->total = total;
}

/* 2500 frames of volts in a CSV file come back exactly, with progress
 * about ten times a second of data and last on the total. */
static void test_csv_file_whole(void **state)
{
    fixture *f = *state;
    char *csv = tu_path(f->dir, "v.csv");
    FILE *out = fopen(csv, "w");
    assert_non_null(out);
    fputs("# prismlab rate_hz=10000 h=0.02,0.01 sign=1,-1 ldv_scale=0.025,0.025\n"
          "t_s,v1_V,v2_V\n", out);
    for (int k = 0; k < 2500; k++)
        fprintf(out, "%.4f,%.6f,%.6f\n", k / 10000.0, k * 0.001, -k * 0.002);
    fclose(out);

    pl_err err = {0};
    pl_csv_options co;
    pl_csv_options_init(&co);
    co.path = csv;
    pl_source_config cfg;
    pl_source_config_init(&cfg);
    pl_source_spec spec = pl_csv_spec(&co, &cfg);
    void *src = NULL;
    pl_source_info info;
    assert_int_equal(pl_source_open(&spec, &src, &info, &err), PL_OK);
    begin(f, &info, 1);
    progress_log pl = {0};
    pl_pump_options po = {.max_frames = -1, .progress = on_progress,
                          .progress_ctx = &pl};
    long long frames = 0;
    assert_int_equal(spec.type->start(src, &err), PL_OK);
    assert_int_equal(pl_acquire_pump(spec.type, src, &info, f->w, &po, &frames, &err), PL_OK);
    spec.type->close(src);
    assert_int_equal(frames, 2500);
    assert_int_equal(pl.last, 2500);
    assert_int_equal(pl.total, 2500);
    assert_false(pl.backwards);
    /* every 1001 frames (0.1 s of data) and once at the end */
    assert_true(pl.calls >= 3 && pl.calls <= 5);

    pl_run_info got = end(f, PL_RUN_IMPORTED);
    assert_int_equal(got.n_frames, 2500);
    double *v = malloc(2500 * 2 * sizeof *v);
    assert_int_equal(pl_run_read_volts(pl_writer_store(f->w), f->run_id, 0, 2500, v, &err), PL_OK);
    for (int k = 0; k < 2500; k += 7) {
        tu_assert_close(v[2 * k], k * 0.001, 1e-12);
        tu_assert_close(v[2 * k + 1], -k * 0.002, 1e-12);
    }
    free(v);
    free(csv);
}

/* Moves from the scripted source; returns the pump's status. */
static pl_status pump(fixture *f, tu_source_script *sc, pl_pump_options *po,
                      long long *frames, pl_err *err)
{
    pl_source_spec spec = tu_source_spec(sc);
    void *src = NULL;
    pl_source_info info;
    assert_int_equal(pl_source_open(&spec, &src, &info, err), PL_OK);
    begin(f, &info, 1);
    assert_int_equal(tu_source.start(src, err), PL_OK);
    pl_status st = pl_acquire_pump(&tu_source, src, &info, f->w, po, frames, err);
    tu_source.close(src);
    return st;
}

/* max_frames stops on the frame; no read asks for more than the block or
 * than what is left. */
static void test_max_frames_and_block(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    tu_source_script_init(&sc, 100000);
    pl_pump_options po = {.max_frames = 1234, .block_frames = 500};
    long long frames = 0;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(frames, 1234);
    assert_int_equal(sc.seen.delivered, 1234);
    assert_int_equal(sc.seen.largest_request, 500);
    assert_int_equal(sc.seen.reads, 3);   /* 500, 500, 234 */
    pl_run_info got = end(f, PL_RUN_COMPLETE);
    assert_int_equal(got.n_frames, 1234);
    int16_t raw[2];
    assert_int_equal(pl_run_read_raw(pl_writer_store(f->w), f->run_id, 1233, 1,
                                     raw, sizeof raw, &err), PL_OK);
    assert_int_equal(raw[0], tu_source_sample(1233, 0));
    assert_int_equal(raw[1], tu_source_sample(1233, 1));
}

/* The default block is ~10 ms of data, never under 64 frames. */
static void test_default_block(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    tu_source_script_init(&sc, 3000);
    pl_pump_options po = {.max_frames = -1};
    long long frames = 0;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(frames, 3000);
    assert_int_equal(sc.seen.largest_request, 100);   /* 10 kHz / 100 */
    pl_writer_destroy(f->w);
    f->w = NULL;

    tu_source_script_init(&sc, 3000);
    sc.rate_hz = 1000;                                 /* 10 frames: 64 */
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(sc.seen.largest_request, 64);
}

/* A stop flag already set reads nothing; one set by a "signal" after 700
 * frames ends the loop at the end of that read. */
static void test_stop_flag(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    volatile sig_atomic_t stop = 1;
    tu_source_script sc;
    tu_source_script_init(&sc, -1);
    pl_pump_options po = {.max_frames = -1, .block_frames = 100, .stop = &stop};
    long long frames = -1;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(frames, 0);
    assert_int_equal(sc.seen.reads, 0);
    pl_writer_destroy(f->w);
    f->w = NULL;

    stop = 0;
    tu_source_script_init(&sc, -1);
    sc.stop = &stop;
    sc.stop_after = 700;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(frames, 700);
    assert_int_equal(end(f, PL_RUN_COMPLETE).n_frames, 700);
}

/* A live source with no whole frame ready is read again (a card between
 * two transfers); a finite source giving nothing has ended. */
static void test_live_source_empty_reads(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    volatile sig_atomic_t stop = 0;
    tu_source_script sc;
    tu_source_script_init(&sc, -1);
    sc.empty_reads = 5;
    sc.stop = &stop;
    sc.stop_after = 300;
    pl_pump_options po = {.max_frames = -1, .block_frames = 100, .stop = &stop};
    long long frames = 0;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(frames, 300);
    assert_int_equal(sc.seen.reads, 5 + 3);
    pl_writer_destroy(f->w);
    f->w = NULL;

    stop = 0;
    tu_source_script_init(&sc, 1000);
    sc.empty_reads = 1;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_OK);
    assert_int_equal(frames, 0);
    assert_int_equal(sc.seen.reads, 1);
}

/* A source that fails keeps the frames before the failure; its message
 * comes back as it was. */
static void test_source_error(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    tu_source_script_init(&sc, 5000);
    sc.fail_at = 450;
    sc.fail_code = PL_EIO;
    pl_pump_options po = {.max_frames = -1, .block_frames = 100};
    long long frames = 0;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_EIO);
    assert_string_equal(err.msg, "test source: device gone at frame 450");
    assert_int_equal(frames, 450);
    pl_run_info got = end(f, PL_RUN_INTERRUPTED);
    assert_int_equal(got.state, PL_RUN_INTERRUPTED);
    assert_int_equal(got.n_frames, 450);
}

/* A loss the source reports marks the run overrun at that frame, with
 * every frame before it stored. */
static void test_source_overrun(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    tu_source_script_init(&sc, -1);
    sc.fail_at = 777;
    sc.fail_code = PL_EOVERRUN;
    pl_pump_options po = {.max_frames = -1, .block_frames = 100};
    long long frames = 0;
    assert_int_equal(pump(f, &sc, &po, &frames, &err), PL_EOVERRUN);
    assert_non_null(strstr(err.msg, "samples lost at frame 777"));
    assert_int_equal(frames, 777);
    pl_run_info got = end(f, PL_RUN_COMPLETE);
    assert_int_equal(got.state, PL_RUN_OVERRUN);
    assert_int_equal(got.overrun_frame, 777);
    assert_int_equal(got.n_frames, 777);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_csv_file_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_frames_and_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_source_empty_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_overrun, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
