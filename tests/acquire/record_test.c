/* tests/acquire/record_test.c - one recording under the recorder lock,
 * against real files and a real SQLite store: a CSV recording becomes a
 * complete run with the source's names unless the options override them,
 * its experiment created and its samples exact; the pre-trigger count is
 * stored; a run whose source fails ends 'interrupted' with the frames
 * before the failure and the source's message, one whose source loses
 * samples ends 'overrun' at that frame; a name not in the catalogue is
 * refused before anything is stored; the lock file is named when a second
 * recorder is refused, and a run a dead recorder left 'recording' is
 * marked 'interrupted' by the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/csv_source.h"
#include "acquire/record.h"
#include "db/store.h"
#include "tests/util/testsource.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dir, *db, *csv;
    pl_recorder *r;
} fixture;

/* A store with the bundled catalogue, and a two-channel CSV recording of
 * 1500 frames whose metadata names a prism, a ramp and the release. */
static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("record");
    f->db = tu_path(f->dir, "r.db");
    f->csv = tu_path(f->dir, "run.csv");
    pl_err err = {0};
    if (tu_fixture_db(f->db, NULL, NULL, &err) != PL_OK) {
        print_error("setup: %s\n", err.msg);
        return -1;
    }
    FILE *out = fopen(f->csv, "w");
    fputs("# prismlab rate_hz=10000 h=0.0199,0.0116 sign=1,-1 ldv_scale=0.025,0.025 "
          "prism=steel-22 ramp=glass-0.3702 lambda0_deg=7.2\n"
          "t_s,v1_V,v2_V\n", out);
    for (int k = 0; k < 1500; k++)
        fprintf(out, "%.4f,%.6f,%.6f\n", k / 10000.0, 0.5 + k * 1e-4, -0.25 - k * 1e-4);
    fclose(out);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pl_recorder_close(f->r);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f->csv);
    free(f);
    return 0;
}

/* Opens the recorder and records one run from spec. */
static pl_status record(fixture *f, pl_source_spec *spec,
                        const pl_record_options *ro, long long *id,
                        long long *frames, pl_err *err)
{
    if (!f->r)
        assert_int_equal(pl_recorder_open(&f->r, f->db, &ro->writer, NULL, err), PL_OK);
    void *src = NULL;
    pl_source_info info;
    assert_int_equal(pl_source_open(spec, &src, &info, err), PL_OK);
    pl_status st = pl_recorder_run(f->r, spec->type, src, &info, ro, id, frames, err);
    spec->type->close(src);
    return st;
}

static pl_run_info stored(fixture *f, long long id)
{
    pl_err err = {0};
    pl_run_info got;
    assert_int_equal(pl_run_get(pl_writer_store(pl_recorder_writer(f->r)), id,
                                &got, &err), PL_OK);
    return got;
}

/* The source's names and release by default; the options win over them. */
static void test_csv_run_names(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_csv_options co;
    pl_csv_options_init(&co);
    co.path = f->csv;
    pl_source_config cfg;
    pl_source_config_init(&cfg);
    pl_source_spec spec = pl_csv_spec(&co, &cfg);
    pl_record_options ro;
    pl_record_options_init(&ro);
    ro.experiment = "bench-1";
    snprintf(ro.notes, sizeof ro.notes, "first light");
    long long id = 0, frames = 0;
    assert_int_equal(record(f, &spec, &ro, &id, &frames, &err), PL_OK);
    assert_int_equal(frames, 1500);
    pl_run_info got = stored(f, id);
    assert_int_equal(got.state, PL_RUN_COMPLETE);
    assert_int_equal(got.n_frames, 1500);
    assert_string_equal(got.prism, "steel-22");
    assert_string_equal(got.ramp, "glass-0.3702");
    assert_string_equal(got.experiment, "bench-1");
    assert_string_equal(got.notes, "first light");
    assert_string_equal(got.source_kind, "csv");
    assert_int_equal(got.pretrigger_frames, 0);
    tu_assert_close(got.lambda0_rad, 7.2 * M_PI / 180, 1e-12);
    double v[4];
    assert_int_equal(pl_run_read_volts(pl_writer_store(pl_recorder_writer(f->r)),
                                       id, 1000, 2, v, &err), PL_OK);
    tu_assert_close(v[0], 0.6, 1e-12);
    tu_assert_close(v[3], -0.3501, 1e-12);

    ro.prism = "steel-30";
    ro.ramp = "steel-0.3792";
    ro.lambda0_rad = 0.1;
    assert_int_equal(record(f, &spec, &ro, &id, &frames, &err), PL_OK);
    got = stored(f, id);
    assert_string_equal(got.prism, "steel-30");
    assert_string_equal(got.ramp, "steel-0.3792");
    tu_assert_close(got.lambda0_rad, 0.1, 0);
}

/* A name the catalogue lacks is refused, naming it; nothing is stored. */
static void test_unknown_prism(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    tu_source_script_init(&sc, 100);
    pl_source_spec spec = tu_source_spec(&sc);
    pl_record_options ro;
    pl_record_options_init(&ro);
    ro.prism = "steel-99";
    long long id = -1;
    assert_int_equal(record(f, &spec, &ro, &id, NULL, &err), PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, "'steel-99'"));
    assert_int_equal(sc.seen.reads, 0);
    pl_run_info got;
    assert_int_equal(pl_run_get(pl_writer_store(pl_recorder_writer(f->r)), 1, &got, &err),
                     PL_ENOTFOUND);
}

/* The daemon's way: a run begun without reading, its pre-trigger count
 * stored with it. */
static void test_begin_pretrigger(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_record_options ro;
    pl_record_options_init(&ro);
    assert_int_equal(pl_recorder_open(&f->r, f->db, &ro.writer, NULL, &err), PL_OK);
    tu_source_script sc;
    tu_source_script_init(&sc, -1);
    pl_source_spec spec = tu_source_spec(&sc);
    void *src = NULL;
    pl_source_info info;
    assert_int_equal(pl_source_open(&spec, &src, &info, &err), PL_OK);
    long long id = 0;
    assert_int_equal(pl_recorder_begin(f->r, &info, &ro, 5000, &id, &err), PL_OK);
    int16_t frames[2 * 10];
    for (int k = 0; k < 10; k++)
        for (int c = 0; c < 2; c++)
            frames[2 * k + c] = tu_source_sample(k, c);
    pl_writer *w = pl_recorder_writer(f->r);
    assert_int_equal(pl_writer_push(w, frames, 10, &err), PL_OK);
    assert_int_equal(pl_writer_end_run(w, PL_RUN_COMPLETE, &err), PL_OK);
    tu_source.close(src);
    pl_run_info got = stored(f, id);
    assert_int_equal(got.pretrigger_frames, 5000);
    assert_int_equal(got.n_frames, 10);
    assert_string_equal(got.experiment, "");
}

/* Records from a live scripted source that fails at frame fail_at. */
static pl_status record_failing(fixture *f, tu_source_script *sc,
                                long long fail_at, pl_status code,
                                long long *id, long long *frames, pl_err *err)
{
    tu_source_script_init(sc, -1);
    sc->fail_at = fail_at;
    sc->fail_code = code;
    pl_source_spec spec = tu_source_spec(sc);
    pl_record_options ro;
    pl_record_options_init(&ro);
    return record(f, &spec, &ro, id, frames, err);
}

/* A source that fails: 'interrupted', the frames before it, its message;
 * the source is stopped either way. */
static void test_source_fails(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    long long id = 0, frames = 0;
    assert_int_equal(record_failing(f, &sc, 2345, PL_EDAQ, &id, &frames, &err),
                     PL_EDAQ);
    assert_string_equal(err.msg, "test source: device gone at frame 2345");
    assert_int_equal(frames, 2345);
    assert_int_equal(sc.seen.started, 1);
    assert_int_equal(sc.seen.stopped, 1);
    pl_run_info got = stored(f, id);
    assert_int_equal(got.state, PL_RUN_INTERRUPTED);
    assert_int_equal(got.n_frames, 2345);
    assert_int_equal(got.overrun_frame, -1);
}

/* A loss is an outcome, not a failure: 'overrun' at its frame. */
static void test_source_overrun(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    tu_source_script sc;
    long long id = 0, frames = 0;
    assert_int_equal(record_failing(f, &sc, 4321, PL_EOVERRUN, &id, &frames, &err),
                     PL_EOVERRUN);
    assert_int_equal(frames, 4321);
    pl_run_info got = stored(f, id);
    assert_int_equal(got.state, PL_RUN_OVERRUN);
    assert_int_equal(got.overrun_frame, 4321);
    assert_int_equal(got.n_frames, 4321);
    int16_t raw[2];
    assert_int_equal(pl_run_read_raw(pl_writer_store(pl_recorder_writer(f->r)), id,
                                     4320, 1, raw, sizeof raw, &err), PL_OK);
    assert_int_equal(raw[0], tu_source_sample(4320, 0));
}

/* The lock file is named when a second recorder is refused; a run left
 * 'recording' (its recorder died) is 'interrupted' for the next. */
static void test_lock_and_leftovers(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_store *s = NULL;
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    pl_run_info run;
    pl_run_info_init(&run);
    run.sample_rate_hz = 10000;
    snprintf(run.source_kind, sizeof run.source_kind, "comedi");
    pl_channel ch[2];
    memset(ch, 0, sizeof ch);
    for (int i = 0; i < 2; i++) {
        ch[i].cal_kind = PL_CAL_IDENTITY;
        ch[i].cal_order = 1;
        ch[i].cal_coef[1] = 1;
        ch[i].beam_sign = 1;
        ch[i].ldv_scale_mps_per_v = 0.025;
        ch[i].range_min_v = ch[i].range_max_v = NAN;
    }
    assert_int_equal(pl_run_create(s, &run, ch, &err), PL_OK);
    pl_store_close(s);

    pl_writer_config wc = {0};
    long long interrupted = -1;
    assert_int_equal(pl_recorder_open(&f->r, f->db, &wc, &interrupted, &err), PL_OK);
    assert_int_equal(interrupted, 1);
    assert_int_equal(stored(f, run.id).state, PL_RUN_INTERRUPTED);

    pl_recorder *second = NULL;
    assert_int_equal(pl_recorder_open(&second, f->db, &wc, NULL, &err), PL_ESTATE);
    char want[1200];
    snprintf(want, sizeof want, "%s.recorder.lock: another recorder holds this "
             "database", f->db);
    assert_non_null(strstr(err.msg, want));
    pl_recorder_close(f->r);
    f->r = NULL;
    assert_int_equal(pl_recorder_open(&f->r, f->db, &wc, &interrupted, &err), PL_OK);
    assert_int_equal(interrupted, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_csv_run_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_prism, setup, teardown),
        cmocka_unit_test_setup_teardown(test_begin_pretrigger, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_overrun, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock_and_leftovers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
