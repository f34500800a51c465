/* tests/cli/quality_test.c - the run's data-quality record as a user
 * meets it, through the real binary ($PRISMLAB_BIN): `prismlab process`
 * of a stored run that is all zeros fails as before (exit 2, "no
 * motion") and records the refusal in place of the run's earlier result;
 * `run show` prints the quality and the faults in words, and its --json
 * parses (Python's json module) with the faults as objects whose numbers
 * are numbers; `run list` has the quality column; a suspect run (issue
 * 44: a check failed, nothing measured through it) is said so in each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BUF = 1 << 16, FRAMES = 50000 };

typedef struct {
    char *dir, *db;
    char out[BUF], err[BUF];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    pl_err err = {0};
    int runs = 0;
    f->dir = tu_tmpdir("cliq");
    f->db = tu_path(f->dir, "t.db");
    if (tu_fixture_db(f->db, NULL, &runs, &err) != PL_OK)
        fail_msg("fixture db: %s", err.msg);
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

#define RUN(f, ...) \
    tu_prismlab((f)->out, (f)->err, BUF, (const char *const[]){"prismlab", __VA_ARGS__, NULL})

/* A stored run of 5 s, both beams all zeros: no motion at all. */
static long long zero_run(pl_store *s)
{
    pl_run_info info;
    pl_channel ch[2];
    pl_err err = {0};
    int16_t *codes = calloc(2 * FRAMES, sizeof *codes);

    pl_run_info_init(&info);
    info.state = PL_RUN_IMPORTED;
    info.sample_rate_hz = 10000;
    info.format = PL_FMT_S16;
    snprintf(info.prism, sizeof info.prism, "steel-22");
    snprintf(info.ramp, sizeof info.ramp, "glass-0.3702");
    snprintf(info.source_kind, sizeof info.source_kind, "wav");
    memset(ch, 0, sizeof ch);
    for (int c = 0; c < 2; c++) {
        ch[c].beam_height_m = c ? 0.0116 : 0.0199;
        ch[c].beam_sign = c ? -1 : 1;
        ch[c].ldv_scale_mps_per_v = 0.025;
        ch[c].cal_kind = PL_CAL_FILE;
        ch[c].cal_order = 1;
        ch[c].cal_coef[1] = 10.0 / 32768;
    }
    assert_non_null(codes);
    if (pl_run_create(s, &info, ch, &err) != PL_OK ||
        pl_run_append_chunk(s, info.id, 0, FRAMES, codes, 2 * FRAMES * sizeof *codes,
                            &err) != PL_OK)
        fail_msg("zero run: %s", err.msg);
    free(codes);
    return info.id;
}

/* Stores a processing record with the quality and faults given, as
 * process.c does after a run it measured. */
static void save_record(pl_store *s, long long id, const char *quality, const char *faults)
{
    pl_processing rec;
    pl_err err = {0};
    double lp[4] = {0, 1, 2, 3};
    pl_series sv = {"Lp", "1", 10, 0, 1000, 4, lp};
    memset(&rec, 0, sizeof rec);
    rec.run_id = id;
    snprintf(rec.processed_utc, sizeof rec.processed_utc, "2026-11-25T10:00:00Z");
    snprintf(rec.version, sizeof rec.version, "test");
    rec.n_impacts = 3;
    rec.lp_end = 3;
    rec.ratio_mean_se = NAN;
    rec.n_expected = -1;
    snprintf(rec.quality, sizeof rec.quality, "%s", quality);
    snprintf(rec.faults, sizeof rec.faults, "%s", faults);
    if (pl_derived_save(s, &rec, &sv, 1, NULL, 0, &err) != PL_OK)
        fail_msg("save: %s", err.msg);
}

/* Runs python3 on the JSON in f->out with the expression expr of d (the
 * parsed document) and returns what it prints in out, without the
 * newline; a JSON that does not parse fails the test. */
static void json_eval(fixture *f, const char *expr, char *out, size_t n)
{
    char *path = tu_path(f->dir, "show.json"), cmd[2048];
    FILE *p;
    assert_int_equal(tu_write_file(path, f->out), 0);
    snprintf(cmd, sizeof cmd, "python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); "
             "print(%s)' '%s' 2>&1", expr, path);
    p = popen(cmd, "r");
    assert_non_null(p);
    if (!fgets(out, (int)n, p))
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    if (pclose(p) != 0)
        fail_msg("python3 on the JSON of run show: %s\n%s", out, f->out);
    free(path);
}

static void refusal_is_recorded_when_processing_fails(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};
    char id[16], got[1024];

    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    long long run = zero_run(s);
    /* an earlier result, which the refusal must replace */
    save_record(s, run, "good", "");
    pl_store_close(s);
    snprintf(id, sizeof id, "%lld", run);

    /* the failure is reported as before */
    assert_int_equal(RUN(f, "process", id, "--db", f->db), 2);
    assert_non_null(strstr(f->err, "no motion"));

    assert_int_equal(RUN(f, "run", "show", id, "--json", "--db", f->db), 0);
    json_eval(f, "d[\"quality\"], d[\"processing\"], len(d[\"faults\"]), d[\"faults\"][0][\"kind\"]",
              got, sizeof got);
    assert_string_equal(got, "refused None 1 refused");
    json_eval(f, "d[\"faults\"][0][\"reason\"]", got, sizeof got);
    assert_true(strncmp(got, "no motion", 9) == 0);
    /* the reason is the run's own, without the "run N: " of the message */
    assert_null(strstr(got, "run "));

    assert_int_equal(RUN(f, "run", "show", id, "--db", f->db), 0);
    assert_non_null(strstr(f->out, "processing:     none: refused"));
    assert_non_null(strstr(f->out, "quality:        refused by prismlab"));
    assert_non_null(strstr(f->out, "\n                processing refused the run: no motion"));

    assert_int_equal(RUN(f, "run", "list", "--db", f->db), 0);
    assert_non_null(strstr(f->out, " quality "));
    assert_non_null(strstr(f->out, " refused "));
}

static void show_json_of_a_degraded_run_names_its_faults(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};
    char id[16], got[1024];

    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    long long run = zero_run(s), fresh = zero_run(s);
    save_record(s, run, "degraded",
                "beam_lost channel=1 from_s=2.345 to_s=2.545\n"
                "common_motion level_mps=0.0015 freqs_hz=23.0,9.0\n"
                "some_future_kind note=\"a \\\"quoted\\\" word\"");
    pl_store_close(s);
    snprintf(id, sizeof id, "%lld", run);

    assert_int_equal(RUN(f, "run", "show", id, "--json", "--db", f->db), 0);
    json_eval(f, "d[\"quality\"], len(d[\"faults\"]), d[\"faults\"][0]", got, sizeof got);
    assert_string_equal(got, "degraded 3 {'kind': 'beam_lost', 'channel': 1, "
                             "'from_s': 2.345, 'to_s': 2.545}");
    /* numbers are JSON numbers, a list a list of them */
    json_eval(f, "type(d[\"faults\"][0][\"from_s\"]).__name__, d[\"faults\"][1][\"freqs_hz\"], "
                 "d[\"faults\"][2][\"note\"]", got, sizeof got);
    assert_string_equal(got, "float [23, 9] a \"quoted\" word");

    assert_int_equal(RUN(f, "run", "show", id, "--db", f->db), 0);
    assert_non_null(strstr(f->out, "quality:        degraded (measured through a fault)\n"
                                   "                beam 1 lost the prism from 2.345 s to "
                                   "2.545 s (measured on beam 2 alone)\n"));
    assert_non_null(strstr(f->out, "both beams saw the same 1.5 mm/s RMS at 23.0, 9.0 Hz"));

    /* a run never processed: quality null, no faults, no quality line */
    snprintf(id, sizeof id, "%lld", fresh);
    assert_int_equal(RUN(f, "run", "show", id, "--json", "--db", f->db), 0);
    json_eval(f, "d[\"quality\"], d[\"faults\"]", got, sizeof got);
    assert_string_equal(got, "None []");

    assert_int_equal(RUN(f, "run", "list", "--json", "--db", f->db), 0);
    json_eval(f, "sorted((r[\"id\"], r[\"quality\"]) for r in d)", got, sizeof got);
    {
        char want[128];
        snprintf(want, sizeof want, "[(%lld, 'degraded'), (%lld, None)]", run, fresh);
        assert_string_equal(got, want);
    }
}

/* Issue 44: 'suspect' (a check against the physics failed, nothing was
 * measured through it) in run show's words and JSON and in run list's
 * column and JSON, with its faults. */
static void suspect_run_is_shown_as_suspect(void **state)
{
    fixture *f = *state;
    pl_store *s = NULL;
    pl_err err = {0};
    char id[16], got[1024], want[256];

    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    long long run = zero_run(s);
    save_record(s, run, "suspect", "dropouts channel=2 count=5 total_s=0.011");
    pl_store_close(s);
    snprintf(id, sizeof id, "%lld", run);

    assert_int_equal(RUN(f, "run", "show", id, "--db", f->db), 0);
    assert_non_null(strstr(f->out, "quality:        suspect (a check failed: do not trust "
                                   "the numbers; see the faults)\n"
                                   "                beam 2 dropped out 5 times, 0.011 s in all\n"));
    assert_int_equal(RUN(f, "run", "show", id, "--json", "--db", f->db), 0);
    json_eval(f, "d[\"quality\"], d[\"faults\"]", got, sizeof got);
    assert_string_equal(got, "suspect [{'kind': 'dropouts', 'channel': 2, 'count': 5, "
                             "'total_s': 0.011}]");

    assert_int_equal(RUN(f, "run", "list", "--db", f->db), 0);
    snprintf(want, sizeof want, "\n%5lld  ", run);
    const char *line = strstr(f->out, want);
    assert_non_null(line);
    const char *eol = strchr(line + 1, '\n');
    assert_non_null(eol);
    assert_non_null(strstr(line, " suspect "));
    assert_true(strstr(line, " suspect ") < eol);
    assert_int_equal(RUN(f, "run", "list", "--json", "--db", f->db), 0);
    {
        char expr[128];
        snprintf(expr, sizeof expr, "[r[\"quality\"] for r in d if r[\"id\"] == %lld]", run);
        json_eval(f, expr, got, sizeof got);
    }
    assert_string_equal(got, "['suspect']");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(refusal_is_recorded_when_processing_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(show_json_of_a_degraded_run_names_its_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(suspect_run_is_shown_as_suspect, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
