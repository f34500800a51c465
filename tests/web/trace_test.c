/* tests/web/trace_test.c - the envelopes the plots are drawn from, against
 * the min and max of every sample, computed here the slow way:
 *   - pl_envelope() on arrays: column edges, full rate, NaN passed over;
 *   - a real store holding a 200 000-frame run with spikes at known
 *     frames: narrow windows read from the chunks are exact; wide windows
 *     answered from the bucket level start each column on a bucket edge
 *     and hold exactly the extremes of the frames they cover; the spikes
 *     land in their columns; a window of few samples is the samples;
 *   - the coarse level (256 frames a bucket) answers the widest windows,
 *     exactly, from the chunks for a run not processed, from the stored
 *     extremes (db/derived.h) without reading a chunk for one processed;
 *     stored extremes that do not fit the run are passed over;
 *   - the fine level is built only for the slices a window covers, once;
 *   - a run that grows (recording) is extended by pl_trace_refresh(),
 *     reading only the frames it gained.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/extremes.h"
#include "core/sample.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"
#include "web/trace.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void envelope_of_arrays(void **state)
{
    (void)state;
    double x[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    double y[10] = {0, -1, -2, -3, -4, NAN, NAN, NAN, NAN, NAN};
    const double *xs[2] = {x, y};
    pl_envelope_cols e;
    pl_err err = {0};
    assert_int_equal(pl_envelope(xs, 2, 0, 10, 2, &e, &err), PL_OK);
    assert_int_equal(e.n, 2);
    assert_false(e.full);
    assert_int_equal(e.first[0], 0);
    assert_int_equal(e.first[1], 5);
    assert_true(e.min[0][0] == 1 && e.max[0][0] == 5);
    assert_true(e.min[0][1] == 2 && e.max[0][1] == 9);
    assert_true(e.min[1][0] == -4 && e.max[1][0] == 0);
    assert_true(isnan(e.min[1][1]) && isnan(e.max[1][1]));   /* only NaN */
    pl_envelope_cols_free(&e);

    /* 3 columns over 10 samples: edges at floor(10 i / 3) = 0, 3, 6 */
    assert_int_equal(pl_envelope(xs, 1, 0, 10, 3, &e, &err), PL_OK);
    assert_int_equal(e.n, 3);
    assert_int_equal(e.first[1], 3);
    assert_int_equal(e.first[2], 6);
    assert_true(e.min[0][0] == 1 && e.max[0][0] == 4);
    assert_true(e.min[0][1] == 1 && e.max[0][1] == 9);
    assert_true(e.min[0][2] == 2 && e.max[0][2] == 6);
    pl_envelope_cols_free(&e);

    /* samples 2..8 at 4 columns: 6 <= 2 x 4, so the samples themselves */
    assert_int_equal(pl_envelope(xs, 1, 2, 8, 4, &e, &err), PL_OK);
    assert_true(e.full);
    assert_int_equal(e.n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(e.first[i], 2 + (long long)i);
        assert_true(e.min[0][i] == x[2 + i] && e.max[0][i] == x[2 + i]);
    }
    pl_envelope_cols_free(&e);

    assert_int_equal(pl_envelope(xs, 1, 0, 10, 0, &e, &err), PL_EINVAL);
    assert_int_equal(pl_envelope(xs, 5, 0, 10, 2, &e, &err), PL_EINVAL);
}

enum { FRAMES = 200000, MORE = 30000, CHUNK = 4096 };

typedef struct {
    char *dir, *db;
    pl_store *s;
    long long run;
    pl_channel ch[2];
    int16_t *codes;     /* FRAMES + MORE frames, interleaved */
    double *v[2];       /* their velocities, computed here */
} fixture;

static double vel(const fixture *f, int c, long long i)
{
    return f->ch[c].beam_sign * f->ch[c].ldv_scale_mps_per_v *
           pl_channel_volts(&f->ch[c], f->codes[2 * i + c]);
}

static void append(fixture *f, long long from, long long to)
{
    pl_err err = {0};
    for (long long a = from; a < to; a += CHUNK) {
        long long n = to - a < CHUNK ? to - a : CHUNK;
        if (pl_run_append_chunk(f->s, f->run, a, n, f->codes + 2 * a,
                                (size_t)n * 4, &err) != PL_OK)
            fail_msg("append: %s", err.msg);
    }
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("trace");
    f->db = tu_path(f->dir, "t.db");
    pl_err err = {0};
    if (pl_store_open(&f->s, f->db, PL_STORE_CREATE, &err) != PL_OK)
        fail_msg("%s", err.msg);
    for (int c = 0; c < 2; c++) {
        f->ch[c].beam_height_m = c ? 0.0112 : 0.0199;
        f->ch[c].beam_sign = c ? -1 : 1;
        f->ch[c].ldv_scale_mps_per_v = 0.025;
        f->ch[c].cal_kind = PL_CAL_LINEAR;
        f->ch[c].cal_order = 1;
        f->ch[c].cal_coef[0] = 0;
        f->ch[c].cal_coef[1] = 10.0 / 32768.0;
        f->ch[c].range_min_v = -10;
        f->ch[c].range_max_v = 10;
        f->ch[c].maxdata = 65535;
    }
    f->codes = malloc(2 * (size_t)(FRAMES + MORE) * sizeof *f->codes);
    uint32_t r = 12345;
    for (long long i = 0; i < FRAMES + MORE; i++)
        for (int c = 0; c < 2; c++) {
            r = r * 1664525u + 1013904223u;
            f->codes[2 * i + c] = (int16_t)((int)(r >> 20) - 2048);   /* +-2048 */
        }
    /* spikes where the test looks for them */
    f->codes[2 * 77777] = 30000;
    f->codes[2 * 150001 + 1] = -31000;
    f->codes[2 * (FRAMES + 12345)] = 32000;     /* in what the run gains later */
    for (int c = 0; c < 2; c++) {
        f->v[c] = malloc((size_t)(FRAMES + MORE) * sizeof(double));
        for (long long i = 0; i < FRAMES + MORE; i++)
            f->v[c][i] = vel(f, c, i);
    }
    pl_run_info info;
    pl_run_info_init(&info);
    info.sample_rate_hz = 10000;
    info.format = PL_FMT_S16;
    info.state = PL_RUN_RECORDING;
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    if (pl_run_create(f->s, &info, f->ch, &err) != PL_OK)
        fail_msg("%s", err.msg);
    f->run = info.id;
    append(f, 0, FRAMES);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pl_store_close(f->s);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f->codes);
    free(f->v[0]);
    free(f->v[1]);
    free(f);
    return 0;
}

/* each column's extremes are those of the frames [first[i], first[i+1]) */
static void check_columns(const fixture *f, const pl_envelope_cols *e, long long end)
{
    for (size_t i = 0; i < e->n; i++) {
        long long a = e->first[i], b = i + 1 < e->n ? e->first[i + 1] : end;
        assert_true(b > a);
        for (int c = 0; c < 2; c++) {
            double mn = INFINITY, mx = -INFINITY;
            for (long long k = a; k < b; k++) {
                mn = fmin(mn, f->v[c][k]);
                mx = fmax(mx, f->v[c][k]);
            }
            tu_assert_close(e->min[c][i], mn, 1e-12);
            tu_assert_close(e->max[c][i], mx, 1e-12);
        }
    }
}

static size_t column_of(const pl_envelope_cols *e, long long frame)
{
    size_t i = 0;
    while (i + 1 < e->n && e->first[i + 1] <= frame)
        i++;
    return i;
}

static void narrow_windows_are_exact(void **state)
{
    fixture *f = *state;
    pl_trace *tr;
    pl_err err = {0};
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    assert_int_equal(pl_trace_frames(tr), FRAMES);
    pl_envelope_cols e;
    /* 5000 frames at 100 columns: 50 a column, under 8 buckets: exact */
    assert_int_equal(pl_trace_window(tr, f->s, 75000, 80000, 100, &e, &err), PL_OK);
    assert_false(e.full);
    assert_int_equal(e.n, 100);
    for (size_t i = 0; i < e.n; i++)
        assert_int_equal(e.first[i], 75000 + (long long)i * 50);
    check_columns(f, &e, 80000);
    size_t k = column_of(&e, 77777);
    tu_assert_close(e.max[0][k], 0.025 * 30000 * 10.0 / 32768.0, 1e-12);
    pl_envelope_cols_free(&e);

    /* 150 frames at 100 columns: the samples themselves */
    assert_int_equal(pl_trace_window(tr, f->s, 77700, 77850, 100, &e, &err), PL_OK);
    assert_true(e.full);
    assert_int_equal(e.n, 150);
    for (size_t i = 0; i < e.n; i++)
        for (int c = 0; c < 2; c++) {
            tu_assert_close(e.min[c][i], f->v[c][77700 + i], 1e-12);
            tu_assert_close(e.max[c][i], f->v[c][77700 + i], 1e-12);
        }
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);
}

static void wide_windows_from_buckets(void **state)
{
    fixture *f = *state;
    pl_trace *tr;
    pl_err err = {0};
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    pl_envelope_cols e;
    /* the whole run at 700 columns: ~286 frames a column */
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES, 700, &e, &err), PL_OK);
    assert_int_equal(e.n, 700);
    assert_false(e.full);
    for (size_t i = 0; i < e.n; i++)
        assert_int_equal(e.first[i] % PL_TRACE_BUCKET, 0);
    check_columns(f, &e, FRAMES);
    size_t k = column_of(&e, 77777);
    tu_assert_close(e.max[0][k], 0.025 * 30000 * 10.0 / 32768.0, 1e-12);
    k = column_of(&e, 150001);
    tu_assert_close(e.max[1][k], -1 * 0.025 * -31000 * 10.0 / 32768.0, 1e-12);
    pl_envelope_cols_free(&e);

    /* a window not on bucket edges: its columns start at most one bucket early */
    assert_int_equal(pl_trace_window(tr, f->s, 50007, 150003, 300, &e, &err), PL_OK);
    assert_true(e.first[0] <= 50007 && e.first[0] > 50007 - PL_TRACE_BUCKET);
    check_columns(f, &e, (150003 + PL_TRACE_BUCKET - 1) / PL_TRACE_BUCKET * PL_TRACE_BUCKET);
    pl_envelope_cols_free(&e);

    /* past the end is clipped; no frames is no columns */
    assert_int_equal(pl_trace_window(tr, f->s, FRAMES + 10, FRAMES + 100, 10, &e, &err), PL_OK);
    assert_int_equal(e.n, 0);
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);
}

static void coarse_windows_from_the_chunks(void **state)
{
    fixture *f = *state;
    pl_trace *tr;
    pl_err err = {0};
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    assert_int_equal(pl_trace_stored(tr), 0);
    assert_int_equal(pl_trace_frames_read(tr), 0);
    pl_envelope_cols e;
    /* the whole run at 60 columns: ~3333 frames a column, 13 coarse buckets */
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES, 60, &e, &err), PL_OK);
    assert_int_equal(e.n, 60);
    for (size_t i = 0; i < e.n; i++)
        assert_int_equal(e.first[i] % PL_TRACE_COARSE, 0);
    assert_true(e.first[1] - e.first[0] > 8 * PL_TRACE_COARSE);
    check_columns(f, &e, FRAMES);
    tu_assert_close(e.max[0][column_of(&e, 77777)], 0.025 * 30000 * 10.0 / 32768.0, 1e-12);
    tu_assert_close(e.max[1][column_of(&e, 150001)], 0.025 * 31000 * 10.0 / 32768.0, 1e-12);
    assert_int_equal(pl_trace_frames_read(tr), FRAMES);   /* one pass, once */
    pl_envelope_cols_free(&e);
    assert_int_equal(pl_trace_window(tr, f->s, 1000, FRAMES - 1000, 50, &e, &err), PL_OK);
    assert_true(e.first[0] <= 1000 && e.first[0] > 1000 - PL_TRACE_COARSE);
    check_columns(f, &e, (FRAMES - 1000 + PL_TRACE_COARSE - 1) / PL_TRACE_COARSE * PL_TRACE_COARSE);
    assert_int_equal(pl_trace_frames_read(tr), FRAMES);
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);
}

static void fine_level_built_where_needed(void **state)
{
    fixture *f = *state;
    pl_trace *tr;
    pl_err err = {0};
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    pl_envelope_cols e;
    /* 70 000 frames at 300 columns (233 a column): the fine level, of the
     * slices of 65536 frames the window touches (1 and 2) only */
    assert_int_equal(pl_trace_window(tr, f->s, 70000, 140000, 300, &e, &err), PL_OK);
    assert_int_equal(e.first[0], 70000);
    check_columns(f, &e, 140000);
    assert_int_equal(pl_trace_frames_read(tr), 2 * 65536);
    pl_envelope_cols_free(&e);
    assert_int_equal(pl_trace_window(tr, f->s, 66000, 130000, 250, &e, &err), PL_OK);
    check_columns(f, &e, 130000);
    assert_int_equal(pl_trace_frames_read(tr), 2 * 65536);   /* built already */
    pl_envelope_cols_free(&e);
    /* the whole run at 700 columns reads the other slices, not these again */
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES, 700, &e, &err), PL_OK);
    check_columns(f, &e, FRAMES);
    assert_int_equal(pl_trace_frames_read(tr), FRAMES);
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);
}

/* Stores the extremes processing would store for the fixture's run,
 * with vp1's maximum of coarse bucket 100 set to `planted` (a value no
 * sample has, to see where an answer came from), n_cut buckets short. */
static void store_extremes(fixture *f, double planted, size_t n_cut)
{
    pl_err err = {0};
    size_t nb = (FRAMES + PL_DERIVED_RAW_BUCKET - 1) / PL_DERIVED_RAW_BUCKET;
    double *x = malloc(4 * nb * sizeof *x);
    for (int c = 0; c < 2; c++)
        pl_bucket_extremes(f->v[c], FRAMES, PL_DERIVED_RAW_BUCKET, x + 2 * c * nb,
                           x + (2 * c + 1) * nb);
    x[nb + 100] = planted;
    double rate = 10000.0 / PL_DERIVED_RAW_BUCKET;
    size_t n = nb - n_cut;
    pl_series sv[4] = {{"vp1_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, rate, n, x},
                       {"vp1_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, rate, n, x + nb},
                       {"vp2_raw_min", "m/s", PL_DERIVED_RAW_BUCKET, 0, rate, n, x + 2 * nb},
                       {"vp2_raw_max", "m/s", PL_DERIVED_RAW_BUCKET, 0, rate, n, x + 3 * nb}};
    pl_processing rec;
    memset(&rec, 0, sizeof rec);
    rec.run_id = f->run;
    snprintf(rec.processed_utc, sizeof rec.processed_utc, "2026-01-01T00:00:00Z");
    rec.ratio_mean_se = NAN;
    rec.n_expected = -1;
    assert_int_equal(pl_run_set_state(f->s, f->run, PL_RUN_COMPLETE, -1, &err), PL_OK);
    if (pl_derived_save(f->s, &rec, sv, 4, NULL, 0, &err) != PL_OK)
        fail_msg("%s", err.msg);
    free(x);
}

static void coarse_windows_from_the_store(void **state)
{
    fixture *f = *state;
    store_extremes(f, 99.0, 0);
    pl_trace *tr;
    pl_err err = {0};
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    assert_int_equal(pl_trace_stored(tr), 1);
    pl_envelope_cols e;
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES, 60, &e, &err), PL_OK);
    assert_int_equal(pl_trace_frames_read(tr), 0);   /* not one chunk */
    size_t k = column_of(&e, 100 * PL_DERIVED_RAW_BUCKET);
    assert_true(e.max[0][k] == 99.0);                 /* the stored value */
    /* every other column is the samples' extremes */
    for (size_t i = 0; i < e.n; i++) {
        if (i == k)
            continue;
        pl_envelope_cols one = e;
        one.n = 1;
        one.first = e.first + i;
        for (int c = 0; c < 2; c++) {
            one.min[c] = e.min[c] + i;
            one.max[c] = e.max[c] + i;
        }
        check_columns(f, &one, i + 1 < e.n ? e.first[i + 1] : FRAMES);
    }
    pl_envelope_cols_free(&e);
    /* a narrower window over the planted bucket reads the chunks: the truth */
    assert_int_equal(pl_trace_window(tr, f->s, 20000, 40000, 100, &e, &err), PL_OK);
    assert_true(pl_trace_frames_read(tr) > 0);
    check_columns(f, &e, 40000);
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);

    /* extremes that do not cover the run are not used */
    store_extremes(f, 99.0, 1);
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    assert_int_equal(pl_trace_stored(tr), 0);
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES, 60, &e, &err), PL_OK);
    check_columns(f, &e, FRAMES);
    assert_int_equal(pl_trace_frames_read(tr), FRAMES);
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);
}

static void a_growing_run_is_extended(void **state)
{
    fixture *f = *state;
    pl_trace *tr;
    pl_err err = {0};
    assert_int_equal(pl_trace_open(&tr, f->s, f->run, &err), PL_OK);
    pl_envelope_cols e;
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES, 500, &e, &err), PL_OK);
    pl_envelope_cols_free(&e);
    assert_int_equal(pl_trace_frames_read(tr), FRAMES);
    append(f, FRAMES, FRAMES + MORE);
    assert_int_equal(pl_trace_refresh(tr, f->s, &err), PL_OK);
    assert_int_equal(pl_trace_frames(tr), FRAMES + MORE);
    assert_int_equal(pl_trace_window(tr, f->s, 0, FRAMES + MORE, 500, &e, &err), PL_OK);
    check_columns(f, &e, FRAMES + MORE);
    /* FRAMES is a multiple of 16: only the frames gained were read */
    assert_int_equal(pl_trace_frames_read(tr), FRAMES + MORE);
    size_t k = column_of(&e, FRAMES + 12345);
    tu_assert_close(e.max[0][k], 0.025 * 32000 * 10.0 / 32768.0, 1e-12);
    pl_envelope_cols_free(&e);
    pl_trace_close(tr);

    assert_int_equal(pl_trace_open(&tr, f->s, 999, &err), PL_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(envelope_of_arrays),
        cmocka_unit_test_setup_teardown(narrow_windows_are_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(wide_windows_from_buckets, setup, teardown),
        cmocka_unit_test_setup_teardown(coarse_windows_from_the_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(fine_level_built_where_needed, setup, teardown),
        cmocka_unit_test_setup_teardown(coarse_windows_from_the_store, setup, teardown),
        cmocka_unit_test_setup_teardown(a_growing_run_is_extended, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
