/* tests/process/foreign_test.c - the processing on recordings our own
 * simulator did not make: the six foreign runs of fixtures/foreign/ (an
 * independent implementation of seed 000's model through a separately
 * written LDV chain), imported through their notebook's manifest as a user
 * would, processed, and scored against their truth by score.py's rules
 * (tests/util/score.h).
 *
 * Every run must meet issue 16's recall, precision, time and L_p numbers,
 * and its loss bias score.py's limit, max(0.03, 2.5 standard errors).
 * And no impact may be far off: the spread of the per-impact loss error
 * stays below 0.3 (the runs give 0.004-0.23, the most on the 1/f run,
 * whose slow first impact's loss is 1.8 times off; one ringing onset
 * taken two periods late on the 50 kHz run, its first impact's ratio
 * 0.968 for 0.993, gave 0.33 while its bias still passed).  Loosening any of this
 * hides a regression.
 *
 * The same for the five runs with a lab's faults of fixtures/foreign2/
 * (issue 28), whose data-quality records must also name what happened;
 * the clean runs' records must call them good.  The records' hum lines
 * give the mains' drift: 0.1 Hz on the run whose mains drifts, 0 on the
 * clean runs with hum.  On every run the impacts' stated ratio errors
 * must be honest (issue 33): z = error / ratio_se spread within 0.7-1.5
 * with its median within +-1 (without their scaling by the ratios'
 * scatter, the runs with 1/f noise gave 5-8).  The instants' time z
 * is measured with the decoders' delay given (instants_calibrated()):
 * t_s is then the contact, and t_sd_s is checked against the scatter.
 *
 * And the faults of a lab injected into those clean foreign runs, with
 * other numbers than fixtures/foreign2 has: beams lost flat at 0 V, in
 * garbage or held at a rail of either sign, from 70 ms to the
 * recording's end; a beam clipped at another level; a floor shaking in
 * other lines.  Every impact must still be found from whichever beam
 * sees the prism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sndfile.h>

#include "acquire/import.h"
#include "db/catalog.h"
#include "db/quality.h"
#include "db/store.h"
#include "process/process.h"
#include "tests/util/score.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double *t, *ratio;
    size_t n;
    double lp_end, t_end;
    double track_hz;   /* the decoder's tracking bandwidth f_c */
} truth;

/* The number after "key": in the JSON text, NaN when absent. */
static double json_number(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* The numbers of the array "key": [...] into a malloc'd array. */
static double *json_array(const char *text, const char *key, size_t *n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    assert_non_null(p);
    p = strchr(p, '[');
    assert_non_null(p);
    size_t cap = 256;
    double *v = malloc(cap * sizeof *v);
    *n = 0;
    for (p++; *p && *p != ']';) {
        char *end;
        double x = strtod(p, &end);
        if (end == p) {
            p++;
            continue;
        }
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[(*n)++] = x;
        p = end;
    }
    return v;
}

/* The text of the truth file at path, in a buffer the next call reuses. */
static const char *truth_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    return text;
}

static void read_truth(const char *path, truth *tr)
{
    const char *text = truth_text(path);
    size_t nr;
    tr->t = json_array(text, "impact_times", &tr->n);
    tr->ratio = json_array(text, "ratios", &nr);
    assert_int_equal(nr, tr->n);
    tr->lp_end = json_number(text, "Lp_end");
    tr->t_end = json_number(text, "t_end");
    tr->track_hz = json_number(text, "track_hz");
}

/* Issue 33 item 2, the instants' stated errors: run id processed again
 * as a lab that knows its decoder would (the foreign decoder is a Bessel
 * low-pass normalised for its delay, 1 / (2 pi f_c) at DC: its data
 * sheet's figure, process --decoder-delay), so that t_s is the contact;
 * time z = (t_s - true) / t_sd_s printed.  Returns 1 when honest by the
 * issue's goal (spread 0.7-1.5, |median| < 1); fails at once where the
 * median passes 6 or the spread 3 (the centres, not moved, gave medians
 * of +1 to +30). */
static int instants_calibrated(pl_store *store, long long id, const truth *tr, const char *stem)
{
    pl_process_config c;
    pl_process_config_default(&c);
    c.lattice.decoder_delay_s = 1 / (2 * M_PI * tr->track_hz);
    pl_process_result r;
    pl_err err = {0};
    if (pl_process_run(store, id, &c, &r, &err) != PL_OK)
        fail_msg("%s: %s", stem, err.msg);
    double tsd, tmed;
    assert_true(tu_time_z(tr->t, tr->n, r.impacts, r.n_impacts, INFINITY, &tsd, &tmed) >= 10);
    int honest = tsd >= 0.7 && tsd <= 1.5 && fabs(tmed) < 1;
    print_message("%-30s decoder delay %.1f us given: time z %.2f %+.2f%s\n", stem,
                  1e6 * c.lattice.decoder_delay_s, tsd, tmed, honest ? " honest" : "");
    pl_process_result_free(&r);
    assert_true(fabs(tmed) < 6 && tsd < 3);
    return honest;
}

/* Whether the record's hum line gives the mains' drift within
 * DRIFT_TOL_HZ of want (NaN: no check).  The drift is the record's, as
 * written, not the front end's number: what a reader gets. */
#define DRIFT_TOL_HZ 0.01

static int drift_said(const char *faults, double want, const char *stem)
{
    if (isnan(want))
        return 1;
    const char *line = strstr(faults, "hum ");
    pl_fault f;
    pl_err err = {0};
    if (!line || pl_fault_parse(line, strcspn(line, "\n"), &f, &err) != PL_OK) {
        print_message("%s: no hum line to give the drift\n", stem);
        return 0;
    }
    const pl_fault_field *d = pl_fault_get(&f, "drift_hz");
    int ok = d && d->type == PL_FAULT_NUMBER && fabs(d->number - want) <= DRIFT_TOL_HZ;
    print_message("%-30s hum drift %s Hz (want %.3f +- %.3f)%s\n", stem, d ? d->text : "?",
                  want, DRIFT_TOL_HZ, ok ? "" : " WRONG");
    return ok;
}

/* Processes stored run id (stem names it) and scores it against the
 * truth at path as score.py reads a stored run: its impacts' instants
 * and ratios, and L_p where the truth gives it.  tr receives the truth
 * and r the result (the caller frees both). */
static void process_scored(pl_store *store, long long id, const char *stem,
                           const char *path, truth *tr, pl_process_result *r, tu_score *s)
{
    pl_err err = {0};
    read_truth(path, tr);
    pl_process_config c;
    pl_process_config_default(&c);
    if (pl_process_run(store, id, &c, r, &err) != PL_OK)
        fail_msg("%s: %s", stem, err.msg);
    double *t = malloc((r->n_impacts + 1) * sizeof *t);
    double *ratio = malloc((r->n_impacts + 1) * sizeof *ratio);
    for (size_t i = 0; i < r->n_impacts; i++) {
        t[i] = r->impacts[i].t_s;
        ratio[i] = r->impacts[i].ratio;
    }
    size_t k = (size_t)llround(tr->t_end * r->rate_hz);
    double lp = r->lp_end * (k < r->n ? r->theta[k] : r->theta[r->n - 1]) / r->theta[r->end - 1];
    assert_int_equal(tu_score_run(tr->t, tr->ratio, tr->n, t, ratio, r->n_impacts, lp,
                                  tr->lp_end, s), 0);
    free(t);
    free(ratio);
}

/* Imports the manifest of set (a fixtures/ folder) into a fresh store,
 * processes its runs and scores them; each run's quality word and a
 * fault its record must hold (NULL, NULL: no check), and the mains'
 * drift its hum line must give (NULL, or NaN for a run: no check).
 * Returns how many runs missed a number or their record. */
static int score_set(const char *set, const char *const stems[], int n_runs,
                     const char *const quality[], const char *const fault[],
                     const double drift_hz[], int *honest)
{
    char *dir = tu_tmpdir("foreign");
    char *db = tu_path(dir, "f.db"), manifest[128];
    snprintf(manifest, sizeof manifest, "fixtures/%s/manifest.csv", set);
    pl_store *store = NULL;
    pl_err err = {0};
    int count = 0;
    if (tu_fixture_db(db, manifest, &count, &err) != PL_OK)
        fail_msg("import: %s", err.msg);
    assert_int_equal(count, n_runs);
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);
    int bad = 0;
    for (long long id = 1; id <= n_runs; id++) {
        char path[256];
        snprintf(path, sizeof path, "fixtures/%s/%s.truth.json", set, stems[id - 1]);
        truth tr;
        pl_process_result r;
        tu_score s;
        process_scored(store, id, stems[id - 1], path, &tr, &r, &s);
        int said = !quality || (strcmp(r.quality, quality[id - 1]) == 0 &&
                                strstr(r.faults, fault[id - 1]) != NULL);
        said &= drift_said(r.faults, drift_hz ? drift_hz[id - 1] : NAN, stems[id - 1]);
        double zsd, zmed;
        assert_true(tu_ratio_z(tr.t, tr.ratio, tr.n, r.impacts, r.n_impacts, INFINITY, &zsd,
                               &zmed) >= 0);
        /* issue 33 item 2: the instants' z is measured and printed, not
         * yet asserted (t_s is the transition's centre, later than the
         * contact by the decoder's delay: docs/process.md section 4,
         * "The contact instant") */
        double tsd, tmed;
        assert_true(tu_time_z(tr.t, tr.n, r.impacts, r.n_impacts, INFINITY, &tsd, &tmed) >= 0);
        print_message("%-30s impacts %3zu/%3zu recall %.4f precision %.4f dt_med %.3f ms "
                      "loss_bias %+.3f (limit %.3f) loss_sd %.3f L_p %.3f %% ratio z %.2f "
                      "%+.2f (x%.2f) time z %.2f %+.2f %s %s%s\n",
                      stems[id - 1], s.n_det, s.n_true, s.recall, s.precision,
                      1e3 * s.dt_med_s, s.loss_bias, s.bias_limit, s.loss_sd, 100 * s.lp_err,
                      zsd, zmed, r.ratio_se_scale, tsd, tmed, s.ok ? "ok" : "SHORT", r.quality,
                      said ? "" : " (record WRONG)");
        if (!said)
            print_message("  faults:\n%s", r.faults);
        /* issue 33's goal for the stated ratio errors: z's spread within
         * 0.7-1.5, its median within +-1 */
        int ok = s.recall >= 0.995 && s.precision >= 0.995 && s.dt_med_s <= 0.0002 &&
                 s.lp_err <= 0.001 && fabs(s.loss_bias) <= s.bias_limit && s.loss_sd < 0.3 &&
                 zsd >= 0.7 && zsd <= 1.5 && fabs(zmed) < 1;
        bad += !ok || !said;
        *honest += instants_calibrated(store, id, &tr, stems[id - 1]);
        free(tr.t);
        free(tr.ratio);
        pl_process_result_free(&r);
    }
    pl_store_close(store);
    tu_rmtree(dir);
    free(db);
    free(dir);
    return bad;
}

static void foreign_runs_meet_issue_16s_numbers(void **state)
{
    (void)state;
    static const char *const stems[] = {
        "foreign-pink-n22", "foreign-50k-ring-n30", "foreign-dropouts-n36-plastic",
        "foreign-5k-n24", "foreign-euro-csv-n38", "foreign-hum-offset-n22"};
    /* clean runs: good, and nothing reported but what every rig has */
    static const char *const quality[] = {"good", "good", "good", "good", "good", "good"};
    static const char *const fault[] = {"", "hum", "dropouts", "", "", "hum"};
    /* their mains is steady: the drift measured must say so */
    static const double drift[] = {NAN, 0, NAN, NAN, NAN, 0};
    int honest = 0;
    assert_int_equal(score_set("foreign", stems, 6, quality, fault, drift, &honest), 0);
    /* with the decoder's delay given, the 1/f run's time z is honest;
     * not the 5 kHz run (median -1.02: told 1 / (2 pi f_c), the clean
     * runs' contacts come 1-6 us early once the tops' exact form took
     * out their own late bias, which had made it -0.78: 2 of 6), the
     * ringing runs and the drop-out run (contacts 12-20 us early on both
     * sides of every impact), nor hum-offset (spread 2.1):
     * docs/process.md section 4 */
    print_message("time z honest on %d of 6 runs given their decoders' delay\n", honest);
    assert_true(honest >= 1);
}

/* The runs with a lab's faults (issue 28): the same numbers, from
 * whichever beam still saw the prism, and the record names the fault. */
static void faulted_runs_are_measured_and_said(void **state)
{
    (void)state;
    static const char *const stems[] = {"foreign2-beamloss-n30", "foreign2-clip-n24",
                                        "foreign2-vib-n22", "foreign2-tail-n38",
                                        "foreign2-us60-n32"};
    static const char *const quality[] = {"degraded", "degraded", "degraded", "good", "good"};
    static const char *const fault[] = {"beam_lost channel=1 from_s=3.09", "clipped channel=1",
                                        "common_motion", "tail_cut at_s=5.",
                                        "hum freq_hz=59.9"};
    /* us60's mains runs from 59.95 to 60.05 Hz over the recording (its
     * README); a constant frequency would read 0 and fail */
    static const double drift[] = {NAN, NAN, NAN, NAN, 0.1};
    int honest = 0;
    assert_int_equal(score_set("foreign2", stems, 5, quality, fault, drift, &honest), 0);
    /* given the decoders' delay: beamloss, clip and tail honest (the
     * beam-loss run's spread was 1.64 before the smoothed tops'
     * covariance: 2 of 5); not vib (2.5: its floor's 9 and 23 Hz, seen
     * at the impacts' rate, wander slowly through the tops) nor us60
     * (ringing) */
    print_message("time z honest on %d of 5 runs given their decoders' delay\n", honest);
    assert_true(honest >= 3);
}

/* The five runs of fixtures/foreign3 (issue 44), whose faults before it
 * ended in a run marked good with wrong numbers, or in a refusal: a beam
 * dead all run, a late start, a decoder saturated inside the converter's
 * range, drifting offsets, a logger's dropped buffer.  Imported through
 * their notebook (their prisms p24..p46 are not in the catalogue: added
 * as the scorer adds them), each must meet score_trust.py's PASS: recall
 * and precision 0.995, L_p within 0.1 %, the loss bias within its limit
 * and omega over the last second within 1 % of the truth, and its
 * record must name the fault and say degraded. */
static void physics_faults_are_measured_through(void **state)
{
    (void)state;
    static const char *const stems[] = {"visible3-deadbeam2-n34", "visible3-latestart-n24",
                                        "visible3-decsat-n38", "visible3-drift-n46-plastic",
                                        "visible3-csvgap-n26"};
    static const char *const fault[] = {"beam_dead channel=2", "late_start", "saturated channel=2",
                                        "omega_drift", "gap "};
    static const int edges[] = {24, 26, 34, 38, 46};
    char *dir = tu_tmpdir("foreign3");
    char *db = tu_path(dir, "f.db");
    pl_store *store = NULL;
    pl_err err = {0};
    int count = 0;
    if (tu_fixture_db(db, NULL, &count, &err) != PL_OK)
        fail_msg("catalogue: %s", err.msg);
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);
    for (int k = 0; k < 5; k++) {
        pl_prism p;
        pl_prism_init(&p);
        snprintf(p.name, sizeof p.name, "p%d", edges[k]);
        p.n_edges = edges[k];
        p.a0_m = 0.015;
        p.length_m = 0.05;
        p.density_kg_m3 = 7850;
        snprintf(p.material, sizeof p.material, "steel");
        if (pl_prism_add(store, &p, &err) != PL_OK)
            fail_msg("prism p%d: %s", edges[k], err.msg);
    }
    pl_store_close(store);
    if (pl_import_manifest(db, "fixtures/foreign3/manifest.csv", 0, 0, NULL, NULL, NULL, NULL,
                           &count, &err) != PL_OK)
        fail_msg("import: %s", err.msg);
    assert_int_equal(count, 5);
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);
    int bad = 0;
    for (long long id = 1; id <= 5; id++) {
        char path[256];
        snprintf(path, sizeof path, "fixtures/foreign3/%s.truth.json", stems[id - 1]);
        truth tr;
        pl_process_result r;
        tu_score s;
        process_scored(store, id, stems[id - 1], path, &tr, &r, &s);
        double w_true = json_number(truth_text(path), "w_mean_last_1s");
        double werr = fabs(r.omega_last_mean / w_true - 1);
        int said = strcmp(r.quality, "degraded") == 0 && strstr(r.faults, fault[id - 1]) != NULL;
        int ok = s.recall >= 0.995 && s.precision >= 0.995 && s.lp_err <= 0.001 &&
                 fabs(s.loss_bias) <= s.bias_limit && werr <= 0.01;
        print_message("%-28s impacts %3zu/%3zu recall %.4f precision %.4f loss_bias %+.3f "
                      "(limit %.3f) L_p %.3f %% omega %.2f %% %s %s%s\n", stems[id - 1], s.n_det,
                      s.n_true, s.recall, s.precision, s.loss_bias, s.bias_limit,
                      100 * s.lp_err, 100 * werr, ok ? "ok" : "SHORT", r.quality,
                      said ? "" : " (record WRONG)");
        if (!said)
            print_message("  faults:\n%s", r.faults);
        bad += !ok || !said;
        free(tr.t);
        free(tr.ratio);
        pl_process_result_free(&r);
    }
    pl_store_close(store);
    tu_rmtree(dir);
    free(db);
    free(dir);
    assert_int_equal(bad, 0);
}

/* --- the clean foreign runs with faults injected ------------------------ */

typedef enum { LOST_FLAT, LOST_GARBAGE, LOST_AT_RAIL, CLIPPED, SHAKING } fault_kind;

/* One fault on one run: beam 1 or 2 from t0 for len seconds (LOST_*);
 * level is the rail's sign (LOST_AT_RAIL), the garbage's RMS (m/s), the
 * range as a share of the beam's peak (CLIPPED), or the floor's velocity
 * amplitude (m/s) at len Hz and at 0.45 len Hz with half of it (SHAKING). */
typedef struct {
    const char *stem;
    fault_kind kind;
    int beam;
    double t0, len, level;
} injection;

/* The run's two channels as velocities (m/s, processing's sense) from
 * its WAV through the truth's notebook numbers, with the fault injected
 * in volts where the chain would put it. */
static void injected_run(const injection *in, const char *text, double **v1, double **v2,
                         size_t *n, double *rate)
{
    char path[256];
    snprintf(path, sizeof path, "fixtures/foreign/%s.wav", in->stem);
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    assert_non_null(f);
    assert_int_equal(info.channels, 2);
    *n = (size_t)info.frames;
    *rate = info.samplerate;
    double *x = malloc(2 * *n * sizeof *x);
    assert_non_null(x);
    assert_int_equal(sf_readf_double(f, x, info.frames), info.frames);
    sf_close(f);
    double fs = json_number(text, "full_scale_v"), sign[2];
    size_t ns, nsc;
    double *sg = json_array(text, "sign", &ns), *sc = json_array(text, "ldv_scale", &nsc);
    assert_int_equal(ns, 2);
    assert_int_equal(nsc, 2);
    assert_true(sc[0] == sc[1]);   /* the faults below are in one scale's volts */
    double scale = sc[0];
    sign[0] = sg[0];
    sign[1] = sg[1];
    free(sg);
    free(sc);
    unsigned long rnd = 2026;
    int c = in->beam - 1;
    double peak = 0;
    for (size_t i = 0; i < *n; i++) {
        double t = (double)i / *rate, *vo = &x[2 * i];
        vo[0] *= fs;
        vo[1] *= fs;
        peak = fmax(peak, fabs(vo[c]));
        int inside = t >= in->t0 && t < in->t0 + in->len;
        if (in->kind == LOST_FLAT && inside)
            vo[c] = 0;
        else if (in->kind == LOST_GARBAGE && inside)
            vo[c] = in->level / scale * tu_gauss(&rnd);
        else if (in->kind == LOST_AT_RAIL && inside)
            vo[c] = in->level * fs;
        else if (in->kind == SHAKING) {
            double u = in->level * (sin(2 * M_PI * in->len * t + 0.3) +
                                    0.5 * sin(2 * M_PI * 0.45 * in->len * t + 1.9));
            vo[0] += sign[0] * u / scale;
            vo[1] += sign[1] * u / scale;
        }
    }
    double rail = in->kind == CLIPPED ? in->level * peak : fs;
    *v1 = malloc(*n * sizeof **v1);
    *v2 = malloc(*n * sizeof **v2);
    assert_true(*v1 && *v2);
    for (size_t i = 0; i < *n; i++) {
        double a = fmax(-rail, fmin(rail, x[2 * i])), b = fmax(-rail, fmin(rail, x[2 * i + 1]));
        if (in->kind != CLIPPED) {
            a = fmax(-fs, fmin(fs, x[2 * i]));
            b = fmax(-fs, fmin(fs, x[2 * i + 1]));
        } else if (c == 1) {
            a = fmax(-fs, fmin(fs, x[2 * i]));
        } else {
            b = fmax(-fs, fmin(fs, x[2 * i + 1]));
        }
        (*v1)[i] = sign[0] * scale * a;
        (*v2)[i] = sign[1] * scale * b;
    }
    free(x);
}

static void injected_faults_are_measured(void **state)
{
    (void)state;
    /* nine of them (all the rails, the flat losses but the pink run's,
     * the loss to the end in garbage) were taken for both beams lost, or
     * the loss to the recording's end not found at all, before the front
     * end learned them: recall 0.01-0.71 */
    static const injection runs[] = {
        {"foreign-dropouts-n36-plastic", LOST_FLAT, 1, 1.14, 0.27, 0},
        {"foreign-pink-n22", LOST_FLAT, 2, 2.0, 0.3, 0},
        {"foreign-5k-n24", LOST_AT_RAIL, 1, 2.67, 0.07, -1},
        {"foreign-pink-n22", LOST_AT_RAIL, 2, 0.92, 0.29, -1},
        {"foreign-50k-ring-n30", LOST_AT_RAIL, 1, 2.67, 0.36, -1},
        {"foreign-hum-offset-n22", LOST_AT_RAIL, 2, 4.11, 0.09, -1},
        {"foreign-hum-offset-n22", LOST_AT_RAIL, 1, 2.87, 1.0, 1},
        {"foreign-hum-offset-n22", LOST_GARBAGE, 2, 1.6, 0.32, 0.02},
        {"foreign-5k-n24", LOST_FLAT, 1, 3.78, 0.76, 0},
        {"foreign-5k-n24", LOST_FLAT, 2, 1.64, 10, 0},
        {"foreign-hum-offset-n22", LOST_GARBAGE, 2, 2.70, 10, 0.0075},
        {"foreign-5k-n24", CLIPPED, 1, 0, 0, 0.55},
        {"foreign-dropouts-n36-plastic", SHAKING, 1, 0, 27.5, 2e-3},
        {"foreign-5k-n24", SHAKING, 1, 0, 3.3, 2.5e-3},   /* and 1.49 Hz */
    };
    static const char *const kind[] = {"flat", "garbage", "at a rail", "clipped", "shaking"};
    int bad = 0;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        const injection *in = &runs[k];
        char path[256];
        snprintf(path, sizeof path, "fixtures/foreign/%s.truth.json", in->stem);
        truth tr;
        read_truth(path, &tr);
        const char *text = truth_text(path);
        double *v1, *v2, rate;
        size_t n;
        injected_run(in, text, &v1, &v2, &n, &rate);
        pl_process_config c;
        pl_process_config_default(&c);
        c.threads = 1;
        pl_process_result r;
        pl_err err = {0};
        if (pl_process_signals(v1, v2, n, rate, json_number(text, "h1"), json_number(text, "h2"),
                               (int)json_number(text, "N"), &c, &r, &err) != PL_OK)
            fail_msg("%s with beam %d %s: %s", in->stem, in->beam, kind[in->kind], err.msg);
        size_t ke = (size_t)llround(tr.t_end * rate);
        double lp = r.lp_end * (ke < r.n ? r.theta[ke] : r.theta[r.n - 1]) / r.theta[r.end - 1];
        double *t = malloc((r.n_impacts + 1) * sizeof *t), *ratio = malloc((r.n_impacts + 1) * sizeof *ratio);
        for (size_t i = 0; i < r.n_impacts; i++) {
            t[i] = r.impacts[i].t_s;
            ratio[i] = r.impacts[i].ratio;
        }
        tu_score s;
        assert_int_equal(tu_score_run(tr.t, tr.ratio, tr.n, t, ratio, r.n_impacts, lp,
                                      tr.lp_end, &s), 0);
        print_message("%-30s beam %d %-9s %4.2f+%4.2f  impacts %3zu/%3zu recall %.4f "
                      "precision %.4f loss_bias %+.3f (limit %.3f) L_p %.3f %% %s %s\n",
                      in->stem, in->beam, kind[in->kind], in->t0, in->len, s.n_det, s.n_true,
                      s.recall, s.precision, s.loss_bias, s.bias_limit, 100 * s.lp_err,
                      s.ok ? "ok" : "SHORT", r.quality);
        bad += !s.ok || strcmp(r.quality, "degraded") != 0;
        free(t);
        free(ratio);
        free(tr.t);
        free(tr.ratio);
        free(v1);
        free(v2);
        pl_process_result_free(&r);
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(foreign_runs_meet_issue_16s_numbers),
        cmocka_unit_test(faulted_runs_are_measured_and_said),
        cmocka_unit_test(physics_faults_are_measured_through),
        cmocka_unit_test(injected_faults_are_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
