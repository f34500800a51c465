/* tests/db/quality_test.c - the run's data-quality record: fault lines
 * (db/quality.c: parse, format, words, a line it cannot read) and the
 * record in the real SQLite (db/derived.c: saved and read with the
 * processing record, written in steps, a refusal that drops the older derived data, a
 * correction that drops the record, a version-4 database whose
 * processed run reads as not assessed after the upgrade to 005, a
 * suspect run's record, and a version-8 database whose records stay
 * through 009). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/derived.h"
#include "db/migrations.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/sqlite_private.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tu_run_fixture fixture;

static long long scalar(pl_store *s, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    assert_int_equal(sqlite3_prepare_v2(pl_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static pl_fault parse_ok(const char *line)
{
    pl_fault f;
    pl_err err = {0};
    if (pl_fault_parse(line, strlen(line), &f, &err) != PL_OK)
        fail_msg("parse '%s': %s", line, err.msg);
    return f;
}

/* --- fault lines ----------------------------------------------------------- */

static void parse_reads_kind_numbers_lists_and_strings(void **state)
{
    (void)state;
    pl_fault f = parse_ok("beam_lost channel=1 from_s=2.345 to_s=2.545");
    assert_string_equal(f.kind, "beam_lost");
    assert_int_equal(f.n, 3);
    assert_string_equal(f.field[1].key, "from_s");
    assert_int_equal(f.field[1].type, PL_FAULT_NUMBER);
    tu_assert_close(f.field[1].number, 2.345, 0);
    tu_assert_close(pl_fault_get(&f, "channel")->number, 1, 0);
    assert_null(pl_fault_get(&f, "nothing"));

    f = parse_ok("common_motion level_mps=0.0015 freqs_hz=23.0,9.0");
    const pl_fault_field *fr = pl_fault_get(&f, "freqs_hz");
    double v[4];
    assert_int_equal(fr->type, PL_FAULT_NUMBERS);
    assert_int_equal(pl_fault_numbers(fr, v, 4), 2);
    tu_assert_close(v[0], 23, 0);
    tu_assert_close(v[1], 9, 0);
    assert_int_equal(pl_fault_numbers(fr, v, 1), 1);

    f = parse_ok("refused reason=\"both beams \\\"clipped\\\" at 5.1 s\\\\\"");
    assert_int_equal(f.field[0].type, PL_FAULT_STRING);
    assert_string_equal(f.field[0].text, "both beams \"clipped\" at 5.1 s\\");
    assert_int_equal(pl_fault_numbers(&f.field[0], v, 4), 0);

    /* a bare word a later prismlab may write is kept as a string */
    f = parse_ok("  hum freq_hz=60.00   side=left ");
    assert_int_equal(f.n, 2);
    assert_int_equal(f.field[1].type, PL_FAULT_STRING);
    assert_string_equal(f.field[1].text, "left");
}

static void malformed_lines_are_refused_naming_why(void **state)
{
    static const char *const bad[] = {
        "", "Beam_lost channel=1", "beam_lost channel", "beam_lost channel=",
        "refused reason=\"no end", "refused reason=\"a\"b", "beam-lost x=1",
        "tail_cut =3"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pl_fault f;
        pl_err err = {0};
        if (pl_fault_parse(bad[i], strlen(bad[i]), &f, &err) != PL_EFORMAT)
            fail_msg("'%s' parsed", bad[i]);
        assert_true(strlen(err.msg) > 0);
    }
    {
        pl_fault f;
        pl_err err = {0};
        const char *line = "refused reason=\"no end";
        pl_fault_parse(line, strlen(line), &f, &err);
        assert_non_null(strstr(err.msg, "no closing"));
    }
}

/* Every line of the format as written reads back to the same text, and
 * a fault built in code reads back to the same fields. */
static void format_round_trips(void **state)
{
    static const char *const lines[] = {
        "beam_lost channel=1 from_s=2.345 to_s=2.545",
        "clipped channel=1 samples=12345 spans=3 from_s=5.1 to_s=9.8",
        "common_motion level_mps=0.0015 freqs_hz=23.0,9.0",
        "hum freq_hz=60.00 drift_hz=0.1 amp1_mps=2e-5 amp2_mps=1e-5",
        "hum freq_hz=59.999 drift_hz=0.099 drift_se_hz=0.0031 amp1_mps=0.000374 amp2_mps=0.000306",
        "dropouts channel=2 count=5 total_s=0.011",
        "tail_cut at_s=8.31",
        "refused reason=\"both beams clipped together from 5.100 s to 5.300 s\"",
        "refused reason=\"a \\\"quoted\\\" word and a \\\\ backslash\""};
    char buf[512];
    pl_err err = {0};
    (void)state;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        pl_fault f = parse_ok(lines[i]);
        assert_int_equal(pl_fault_format(&f, buf, sizeof buf, &err), PL_OK);
        assert_string_equal(buf, lines[i]);
    }

    pl_fault g, back;
    pl_fault_init(&g, "beam_lost");
    pl_fault_add_number(&g, "channel", 2);
    pl_fault_add_number(&g, "from_s", 1.0 / 3);
    pl_fault_add_text(&g, "note", "line one\nline \"two\"");
    assert_int_equal(pl_fault_format(&g, buf, sizeof buf, &err), PL_OK);
    assert_null(strchr(buf, '\n'));   /* a fault is one line */
    back = parse_ok(buf);
    assert_string_equal(back.kind, "beam_lost");
    assert_int_equal(back.n, 3);
    tu_assert_close(back.field[0].number, 2, 0);
    tu_assert_close(back.field[1].number, 1.0 / 3, 1e-10);
    assert_string_equal(back.field[2].text, "line one line \"two\"");

    /* too small a buffer and a bad name are errors, not a cut line */
    assert_int_equal(pl_fault_format(&g, buf, 10, &err), PL_EINVAL);
    pl_fault_init(&g, "Bad kind");
    assert_int_equal(pl_fault_format(&g, buf, sizeof buf, &err), PL_EINVAL);
}

static void words_for_a_person(void **state)
{
    char w[512];
    pl_fault f;
    (void)state;
    f = parse_ok("beam_lost channel=1 from_s=2.345 to_s=2.545");
    pl_fault_describe(&f, w, sizeof w);
    assert_string_equal(w, "beam 1 lost the prism from 2.345 s to 2.545 s "
                           "(measured on beam 2 alone)");
    f = parse_ok("dropouts channel=2 count=1 total_s=0.011");
    pl_fault_describe(&f, w, sizeof w);
    assert_string_equal(w, "beam 2 dropped out 1 time, 0.011 s in all");
    f = parse_ok("common_motion level_mps=0.0015 freqs_hz=23.0,9.0");
    pl_fault_describe(&f, w, sizeof w);
    assert_non_null(strstr(w, "the same 1.5 mm/s RMS at 23.0, 9.0 Hz"));
    /* a drift not measured is said so, not taken for a steady mains */
    f = parse_ok("hum freq_hz=60.000 amp1_mps=2e-05 amp2_mps=1e-05");
    pl_fault_describe(&f, w, sizeof w);
    assert_string_equal(w, "mains hum at 60.000 Hz (its drift not measured) removed: "
                           "0.02 mm/s on beam 1, 0.01 mm/s on beam 2");
    f = parse_ok("hum freq_hz=59.999 drift_hz=0.099 drift_se_hz=0.0031 amp1_mps=0.000374 "
                 "amp2_mps=0.000306");
    pl_fault_describe(&f, w, sizeof w);
    assert_string_equal(w, "mains hum at 59.999 Hz (drifting 0.099 Hz over the run, "
                           "+- 0.0031 Hz at 1 sd) removed: 0.374 mm/s on beam 1, 0.306 mm/s on beam 2");
    f = parse_ok("hum freq_hz=60.000 drift_hz=0.000 amp1_mps=2e-05 amp2_mps=1e-05");
    pl_fault_describe(&f, w, sizeof w);
    assert_non_null(strstr(w, "(drifting 0.000 Hz over the run)"));
    f = parse_ok("refused reason=\"no motion\"");
    pl_fault_describe(&f, w, sizeof w);
    assert_string_equal(w, "processing refused the run: no motion");
    /* a kind this prismlab does not know: its line */
    f = parse_ok("wobble axis=\"x\" hz=3");
    pl_fault_describe(&f, w, sizeof w);
    assert_string_equal(w, "wobble axis=\"x\" hz=3");
    /* a key missing from a known kind */
    f = parse_ok("tail_cut");
    pl_fault_describe(&f, w, sizeof w);
    assert_non_null(strstr(w, "left the beams at ? s"));
    assert_string_equal(pl_quality_words(""), "not assessed (processed before "
                                              "prismlab recorded data quality)");
    assert_string_equal(pl_quality_words("refused"), "refused");
}

typedef struct {
    int n, bad;
    char kinds[8][32];
} seen;

static int see(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    seen *s = ctx;
    if (!f) {
        s->bad++;
        assert_int_equal(len, strlen("not a fault"));
        assert_memory_equal(line, "not a fault", len);
    } else
        snprintf(s->kinds[s->n], sizeof s->kinds[0], "%s", f->kind);
    s->n++;
    return s->n == 4;   /* stops after the fourth */
}

static void each_line_in_order_malformed_ones_included(void **state)
{
    seen s = {0};
    (void)state;
    assert_int_equal(pl_faults_each("tail_cut at_s=8.31\n\nnot a fault\r\n"
                                     "hum freq_hz=50\ndropouts channel=1 count=2 total_s=1\n"
                                     "beam_lost channel=1", see, &s), 1);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.bad, 1);
    assert_string_equal(s.kinds[0], "tail_cut");
    assert_string_equal(s.kinds[2], "hum");
    assert_string_equal(s.kinds[3], "dropouts");
    memset(&s, 0, sizeof s);
    assert_int_equal(pl_faults_each("", see, &s), 0);
    assert_int_equal(s.n, 0);
}

/* --- the record in the store ----------------------------------------------- */

static void save(fixture *f, const char *quality, const char *faults)
{
    pl_processing rec;
    pl_err err = {0};
    double data[3] = {1, 2, 3};
    pl_series sv = {"omega", "rad/s", 10, 0, 1000, 3, data};
    pl_impact imp = {.t_s = 1.5, .t_sd_s = NAN, .omega_minus = 2, .omega_plus = 1.9,
                     .ratio = 0.95, .ratio_se = NAN, .interval_s = NAN, .confirmed = 1};
    memset(&rec, 0, sizeof rec);
    rec.run_id = f->run;
    snprintf(rec.processed_utc, sizeof rec.processed_utc, "2026-11-25T10:00:00Z");
    snprintf(rec.version, sizeof rec.version, "test");
    rec.n_expected = -1;
    rec.ratio_mean_se = NAN;
    snprintf(rec.quality, sizeof rec.quality, "%s", quality);
    snprintf(rec.faults, sizeof rec.faults, "%s", faults);
    if (pl_derived_save(f->store, &rec, &sv, 1, &imp, 1, &err) != PL_OK)
        fail_msg("save: %s", err.msg);
}

static void save_and_get_round_trip(void **state)
{
    fixture *f = *state;
    pl_processing p;
    pl_quality q;
    pl_err err = {0};
    const char *faults = "beam_lost channel=1 from_s=2.345 to_s=2.545\n"
                         "dropouts channel=2 count=5 total_s=0.011";

    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_ENOTFOUND);
    save(f, "degraded", faults);
    assert_int_equal(pl_derived_get(f->store, f->run, &p, &err), PL_OK);
    assert_string_equal(p.quality, "degraded");
    assert_string_equal(p.faults, faults);
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_OK);
    assert_string_equal(q.quality, "degraded");
    assert_string_equal(q.faults, faults);
    assert_string_equal(q.recorded_utc, "2026-11-25T10:00:00Z");
    assert_string_equal(q.version, "test");

    /* processing again replaces it */
    save(f, "good", "");
    assert_int_equal(pl_derived_get(f->store, f->run, &p, &err), PL_OK);
    assert_string_equal(p.quality, "good");
    assert_string_equal(p.faults, "");
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM run_quality"), 1);

    /* no word: no record, the run reads as not assessed */
    save(f, "", "");
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM run_quality"), 0);
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_OK);
    assert_string_equal(q.quality, "");
    assert_string_equal(q.recorded_utc, "2026-11-25T10:00:00Z");

    /* a refusal is not a processing record's word */
    pl_processing bad;
    memset(&bad, 0, sizeof bad);
    bad.run_id = f->run;
    snprintf(bad.quality, sizeof bad.quality, "refused");
    assert_int_equal(pl_derived_save(f->store, &bad, NULL, 0, NULL, 0, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "refused"));
    assert_int_equal(pl_derived_get(f->store, f->run, &p, &err), PL_OK);
}

/* Issue 44: a check against the physics failed and nothing was measured
 * through it: 'suspect' is stored with its faults and read back, and
 * said in words that tell a person not to trust the numbers. */
static void suspect_round_trip(void **state)
{
    fixture *f = *state;
    pl_processing p;
    pl_quality q;
    pl_err err = {0};
    const char *faults = "dropouts channel=2 count=5 total_s=0.011";

    save(f, "suspect", faults);
    assert_int_equal(pl_derived_get(f->store, f->run, &p, &err), PL_OK);
    assert_string_equal(p.quality, "suspect");
    assert_string_equal(p.faults, faults);
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_OK);
    assert_string_equal(q.quality, "suspect");
    assert_string_equal(q.faults, faults);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM run_quality WHERE "
                                      "quality = 'suspect'"), 1);
    assert_string_equal(pl_quality_words("suspect"), "suspect (a check failed: do not "
                        "trust the numbers; see the faults)");
    /* the processing record itself still holds its figures */
    assert_int_equal(p.run_id, f->run);
    /* a word the store does not know is still refused, naming the word */
    pl_processing bad = p;
    snprintf(bad.quality, sizeof bad.quality, "dubious");
    assert_int_equal(pl_derived_save(f->store, &bad, NULL, 0, NULL, 0, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "'dubious'"));
    assert_non_null(strstr(err.msg, "suspect"));
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_OK);
    assert_string_equal(q.quality, "suspect");
}

/* The derived data written in steps (pl_derived_begin/put/finish): the
 * series before their processing row, all visible at the commit and none
 * before it (a second connection reads the old result meanwhile); an
 * abort, or a finish that fails (the record of another run), leaves the
 * old result whole; the write lock is the writer's from begin to the
 * end. */
static void writer_in_steps(void **state)
{
    fixture *f = *state;
    pl_err err = {0};
    pl_processing p;
    pl_derived_writer *w = NULL;
    pl_store *other = NULL;
    double a[3] = {1, 2, 3}, b[4] = {4, 5, 6, 7};
    pl_series s1 = {"vp1", "m/s", 10, 0, 1000, 4, b};
    pl_impact imp[70];

    save(f, "good", "");   /* the old result: omega 1, 2, 3 and one impact */
    assert_int_equal(pl_store_open(&other, f->db, 0, &err), PL_OK);
    assert_int_equal(pl_derived_begin(f->store, f->run, &w, &err), PL_OK);
    assert_int_equal(pl_derived_put(w, &s1, &err), PL_OK);
    /* synced, not committed: no one sees it, an abort still undoes it */
    assert_int_equal(pl_derived_sync(w, &err), PL_OK);
    /* another writer waits for the lock (here: gives up at once) */
    sqlite3_busy_timeout(pl_store_db(other), 0);
    assert_int_not_equal(sqlite3_exec(pl_store_db(other), "BEGIN IMMEDIATE", NULL, NULL,
                                      NULL), SQLITE_OK);
    assert_int_equal(scalar(other, "SELECT count(*) FROM series WHERE name = 'omega'"), 1);
    assert_int_equal(scalar(other, "SELECT count(*) FROM series WHERE name = 'vp1'"), 0);
    pl_derived_abort(w);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM series"), 1);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM impact"), 1);
    /* the writer's in-memory temporary storage ends with it */
    assert_int_equal(scalar(f->store, "PRAGMA temp_store"), 0);

    /* the record of another run: refused, rolled back */
    pl_processing rec;
    memset(&rec, 0, sizeof rec);
    rec.run_id = f->run + 1;
    rec.n_expected = -1;
    snprintf(rec.processed_utc, sizeof rec.processed_utc, "2026-11-26T10:00:00Z");
    snprintf(rec.version, sizeof rec.version, "steps");
    assert_int_equal(pl_derived_begin(f->store, f->run, &w, &err), PL_OK);
    assert_int_equal(pl_derived_put(w, &s1, &err), PL_OK);
    assert_int_equal(pl_derived_finish(w, &rec, NULL, 0, &err), PL_EINVAL);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM series WHERE name = 'vp1'"), 0);
    assert_int_equal(pl_derived_get(f->store, f->run, &p, &err), PL_OK);
    assert_string_equal(p.version, "test");

    /* the whole: series first, the row, 70 impacts (a 64-row statement
     * and six single rows), one commit */
    for (int i = 0; i < 70; i++)
        imp[i] = (pl_impact){.t_s = 0.01 * i, .t_sd_s = i % 3 ? 1e-5 : NAN, .omega_minus = i,
                             .omega_plus = 0.99 * i, .ratio = 0.99, .ratio_se = NAN,
                             .interval_s = i < 69 ? 0.01 : NAN, .confirmed = i % 2 ? 1 : -1};
    rec.run_id = f->run;
    pl_series s0 = {"omega", "rad/s", 10, 0, 1000, 3, a};
    assert_int_equal(pl_derived_begin(f->store, f->run, &w, &err), PL_OK);
    assert_int_equal(pl_derived_put(w, &s1, &err), PL_OK);
    assert_int_equal(scalar(f->store, "PRAGMA temp_store"), 2);
    assert_int_equal(pl_derived_sync(w, &err), PL_OK);
    assert_int_equal(pl_derived_put(w, &s0, &err), PL_OK);
    assert_int_equal(pl_derived_finish(w, &rec, imp, 70, &err), PL_OK);
    assert_int_equal(scalar(f->store, "PRAGMA temp_store"), 0);
    assert_int_equal(pl_derived_get(other, f->run, &p, &err), PL_OK);
    assert_string_equal(p.version, "steps");
    double *v;
    size_t n;
    assert_int_equal(pl_derived_series(other, f->run, "vp1", 10, &v, &n, NULL, NULL, &err),
                     PL_OK);
    assert_int_equal(n, 4);
    assert_true(v[0] == 4 && v[3] == 7);
    free(v);
    pl_impact *got;
    assert_int_equal(pl_derived_impacts(other, f->run, &got, &n, &err), PL_OK);
    assert_int_equal(n, 70);
    for (int i = 0; i < 70; i++) {
        assert_true(got[i].t_s == imp[i].t_s && got[i].omega_minus == imp[i].omega_minus);
        assert_true(got[i].confirmed == imp[i].confirmed);
        assert_true(isnan(got[i].t_sd_s) == isnan(imp[i].t_sd_s));
        assert_true(isnan(got[i].interval_s) == (i == 69));
    }
    free(got);
    pl_store_close(other);
}

static void refusal_replaces_the_older_derived_data(void **state)
{
    fixture *f = *state;
    pl_processing p;
    pl_quality q;
    pl_err err = {0};
    char sql[256];

    save(f, "good", "");
    snprintf(sql, sizeof sql, "INSERT INTO simulation (run_id, law, fit, created_utc, "
             "n_edges, a0_m, beta_rad, lambda0_rad, mu_s, mu, duration_s, rate_hz, status) "
             "VALUES (%lld, 'line', 'fitted', 'now', 22, 0.015, 0.006, 0.1, 0.3, 0.3, 7, "
             "1000, 'end')", f->run);
    assert_int_equal(pl_store_exec(f->store, sql, &err), PL_OK);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM impact"), 1);

    assert_int_equal(pl_quality_refuse(f->store, f->run, "no motion: the rotary "
                                       "speed never exceeds \"8e-09\" rad/s\nfor 50 ms",
                                       &err), PL_OK);
    assert_int_equal(pl_derived_get(f->store, f->run, &p, &err), PL_ENOTFOUND);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM series"), 0);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM impact"), 0);
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM simulation"), 0);
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_OK);
    assert_string_equal(q.quality, "refused");
    assert_string_equal(q.faults, "refused reason=\"no motion: the rotary speed never "
                                  "exceeds \\\"8e-09\\\" rad/s for 50 ms\"");
    pl_fault fault = parse_ok(q.faults);
    assert_string_equal(pl_fault_get(&fault, "reason")->text,
                        "no motion: the rotary speed never exceeds \"8e-09\" rad/s for 50 ms");
    assert_true(strlen(q.recorded_utc) == 20);

    /* processed again successfully: the refusal goes */
    save(f, "good", "");
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_OK);
    assert_string_equal(q.quality, "good");

    assert_int_equal(pl_quality_refuse(f->store, 999, "x", &err), PL_ENOTFOUND);
    assert_non_null(strstr(err.msg, "999"));
    assert_int_equal(scalar(f->store, "SELECT count(*) FROM run_quality"), 1);
}

/* A correction (`run set`) drops the processing and so its record, a
 * refusal too: the corrected run may process. */
static void correction_drops_the_record(void **state)
{
    fixture *f = *state;
    pl_quality q;
    pl_err err = {0};
    pl_run_edit e;
    int changed = 0;

    assert_int_equal(pl_quality_refuse(f->store, f->run, "no motion", &err), PL_OK);
    pl_run_edit_init(&e);
    e.sign[0] = -1;
    e.sign[1] = 1;
    assert_int_equal(pl_run_set(f->store, f->run, &e, &changed, &err), PL_OK);
    assert_int_equal(changed, 2);
    assert_int_equal(pl_quality_get(f->store, f->run, &q, &err), PL_ENOTFOUND);
}

/* A database of schema 4 with a processed run: opening it applies 005,
 * and the run reads as processed, not assessed. */
static void version_4_database_upgrades(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    pl_store *s = NULL;
    pl_processing p;
    pl_quality q;
    pl_err err = {0};
    char *old = tu_path(f->dir, "v4.db");

    assert_true(pl_migration_count >= 5);
    assert_string_equal(pl_migrations[4].name, "005_quality");
    assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(sqlite3_exec(db, pl_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "PRAGMA user_version = 4;"
        "INSERT INTO run (id, started_utc, sample_rate_hz, n_channels, sample_format, "
        "byte_order, state, source_kind) VALUES (7, 'then', 10000, 2, 's16', 'le', "
        "'imported', 'wav');"
        "INSERT INTO processing (run_id, processed_utc, prismlab_version, params, "
        "n_impacts, warnings) VALUES (7, '2026-01-02T03:04:05Z', 'old', '', 12, 'w');",
        NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    assert_int_equal(pl_store_open(&s, old, 0, &err), PL_OK);
    assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
    assert_int_equal(scalar(s, "SELECT count(*) FROM sqlite_master WHERE name = 'run_quality'"), 1);
    assert_int_equal(pl_derived_get(s, 7, &p, &err), PL_OK);
    assert_int_equal(p.n_impacts, 12);
    assert_string_equal(p.quality, "");
    assert_string_equal(p.faults, "");
    assert_int_equal(pl_quality_get(s, 7, &q, &err), PL_OK);
    assert_string_equal(q.quality, "");
    assert_string_equal(q.recorded_utc, "2026-01-02T03:04:05Z");
    assert_string_equal(q.version, "old");
    /* the table's CHECK holds the three words */
    assert_int_equal(pl_store_exec(s, "INSERT INTO run_quality VALUES (7, 'fine', '', "
                                      "'now', 'x')", &err), PL_EDB);
    /* and the record goes with its run */
    assert_int_equal(pl_quality_refuse(s, 7, "too short", &err), PL_OK);
    assert_int_equal(pl_store_exec(s, "DELETE FROM run WHERE id = 7", &err), PL_OK);
    assert_int_equal(scalar(s, "SELECT count(*) FROM run_quality"), 0);
    pl_store_close(s);
    free(old);
}

/* A store of schema 8 (before 'suspect') with three runs of each older
 * word: opening it rebuilds run_quality (009) and keeps every row as it
 * was; the new word goes in, an unknown one is still refused by the
 * table's CHECK, and a record still goes with its run. */
static void version_8_database_keeps_its_records(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    pl_store *s = NULL;
    pl_quality q;
    pl_err err = {0};
    char *old = tu_path(f->dir, "v8.db");

    assert_true(pl_migration_count >= 9);
    assert_string_equal(pl_migrations[8].name, "009_quality_suspect");
    assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
    for (int i = 0; i < 8; i++)
        assert_int_equal(sqlite3_exec(db, pl_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "PRAGMA user_version = 8;"
        "INSERT INTO run (id, started_utc, sample_rate_hz, n_channels, sample_format, "
        "byte_order, state, source_kind) VALUES (3, 'then', 10000, 2, 's16', 'le', "
        "'imported', 'wav'), (5, 'then', 10000, 2, 's16', 'le', 'imported', 'wav'), "
        "(9, 'then', 10000, 2, 's16', 'le', 'imported', 'wav');"
        "INSERT INTO run_quality VALUES (3, 'good', '', '2026-01-02T03:04:05Z', 'a'), "
        "(5, 'degraded', 'dropouts channel=2 count=5 total_s=0.011', "
        "'2026-01-02T03:04:06Z', 'b'), (9, 'refused', 'refused reason=\"no motion\"', "
        "'2026-01-02T03:04:07Z', 'c');",
        NULL, NULL, NULL), SQLITE_OK);
    /* the old table refuses the new word: this is what 009 changes */
    assert_int_not_equal(sqlite3_exec(db, "UPDATE run_quality SET quality = 'suspect' "
                                          "WHERE run_id = 3", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    assert_int_equal(pl_store_open(&s, old, 0, &err), PL_OK);
    assert_int_equal(pl_store_schema_version(s), pl_store_latest_version());
    assert_int_equal(scalar(s, "SELECT count(*) FROM run_quality"), 3);
    assert_int_equal(pl_quality_get(s, 5, &q, &err), PL_OK);
    assert_string_equal(q.quality, "degraded");
    assert_string_equal(q.faults, "dropouts channel=2 count=5 total_s=0.011");
    assert_string_equal(q.recorded_utc, "2026-01-02T03:04:06Z");
    assert_string_equal(q.version, "b");
    assert_int_equal(pl_quality_get(s, 9, &q, &err), PL_OK);
    assert_string_equal(q.quality, "refused");
    assert_string_equal(q.faults, "refused reason=\"no motion\"");
    assert_int_equal(pl_quality_get(s, 3, &q, &err), PL_OK);
    assert_string_equal(q.quality, "good");
    assert_int_equal(pl_store_exec(s, "UPDATE run_quality SET quality = 'suspect' "
                                      "WHERE run_id = 3", &err), PL_OK);
    assert_int_equal(pl_quality_get(s, 3, &q, &err), PL_OK);
    assert_string_equal(q.quality, "suspect");
    assert_int_equal(pl_store_exec(s, "UPDATE run_quality SET quality = 'fine' "
                                      "WHERE run_id = 3", &err), PL_EDB);
    assert_int_equal(pl_store_exec(s, "DELETE FROM run WHERE id = 5", &err), PL_OK);
    assert_int_equal(scalar(s, "SELECT count(*) FROM run_quality"), 2);
    pl_store_close(s);
    free(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_reads_kind_numbers_lists_and_strings),
        cmocka_unit_test(malformed_lines_are_refused_naming_why),
        cmocka_unit_test(format_round_trips),
        cmocka_unit_test(words_for_a_person),
        cmocka_unit_test(each_line_in_order_malformed_ones_included),
        cmocka_unit_test_setup_teardown(save_and_get_round_trip, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(writer_in_steps, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(refusal_replaces_the_older_derived_data, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(correction_drops_the_record, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(version_4_database_upgrades, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(suspect_round_trip, tu_run_fixture_setup, tu_run_fixture_teardown),
        cmocka_unit_test_setup_teardown(version_8_database_keeps_its_records, tu_run_fixture_setup, tu_run_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
