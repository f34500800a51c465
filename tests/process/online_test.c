/* tests/process/online_test.c - the impact search while the prism rolls
 * (process/online.h) against offline processing of the same recordings.
 *
 * Each recording is replayed as the daemon feeds it: in blocks, a look
 * after each, a last look at the end; what the looks reported is set
 * beside what pl_process_run() stores for the whole run.  The recordings
 * are the eleven foreign runs of fixtures/foreign and fixtures/foreign2
 * (an independent model through a separately written LDV chain: clean,
 * then a lost beam, clipping, a shaking floor, a cut tail and 60 Hz
 * mains) and one of our simulator at 20 kHz.  Issue 48 asks, on the
 * simulator, for the same impacts (count within 1 %, at least 99 %
 * within 0.5 ms) and ratios within one standard error; the foreign runs
 * must give the same count and instants too, and no quality finding the
 * offline record lacks.  Their ratios are held to the standard error of
 * the difference, sqrt(se_live^2 + se_offline^2), on the clean runs
 * only: a shaking floor's lines are fitted over a look's window, not the
 * run (docs/process.md, "Online"), and two faulty runs' live ratios
 * scatter past their offline errors for it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/simrun.h"
#include "db/catalog.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/store.h"
#include "process/online.h"
#include "process/process.h"
#include "tests/util/longrun.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a replay gave against offline. */
typedef struct {
    size_t live, offline;
    size_t near;          /* live instants within 0.5 ms of an offline one */
    size_t in_se;         /* live ratios within the offline's ratio_se */
    size_t in_comb;       /* ... within the difference's standard error */
    double worst_dt_s;
    double lp_err;        /* |L_p live - offline| at the last live impact */
    double first_t_s;     /* the run's time of the first look reporting */
    char findings[4096];  /* every finding reported */
    char faults[2048];    /* the offline record's */
} replay_sum;

/* Replays run id of store through the online search in blocks of look_s
 * and compares with its offline processing. */
static void replay(pl_store *store, long long id, double look_s, replay_sum *sum)
{
    pl_run_info info;
    pl_channel ch[2];
    pl_prism prism;
    pl_err err = {0};
    memset(sum, 0, sizeof *sum);
    assert_int_equal(pl_run_get(store, id, &info, &err), PL_OK);
    assert_int_equal(pl_run_channels(store, id, ch, 2, &err), PL_OK);
    assert_int_equal(pl_prism_get(store, info.prism, &prism, &err), PL_OK);
    pl_online_config oc;
    pl_online_config_default(&oc);
    oc.rate_hz = info.sample_rate_hz;
    oc.N = prism.n_edges;
    oc.h_m[0] = ch[0].beam_height_m;
    oc.h_m[1] = ch[1].beam_height_m;
    pl_process_config_for_run(&oc.proc, store, &prism, info.ramp, ch);
    pl_process_result off;
    pl_process_config pc;
    pl_process_config_default(&pc);
    if (pl_process_run(store, id, &pc, &off, &err) != PL_OK)
        fail_msg("run %lld: %s", id, err.msg);
    snprintf(sum->faults, sizeof sum->faults, "%s", off.faults);

    size_t n = (size_t)info.n_frames;
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    double k[2] = {ch[0].beam_sign * ch[0].ldv_scale_mps_per_v,
                   ch[1].beam_sign * ch[1].ldv_scale_mps_per_v};
    assert_non_null(v[0]);
    assert_non_null(v[1]);
    assert_int_equal(pl_run_read_scaled(store, id, 0, (long long)n, v, k, 2, &err), PL_OK);
    pl_online *o = NULL;
    assert_int_equal(pl_online_create(&o, &oc, &err), PL_OK);
    pl_online_impact *live = malloc((off.n_impacts + 64) * 2 * sizeof *live);
    assert_non_null(live);
    size_t cap = (off.n_impacts + 64) * 2, B = (size_t)(look_s * info.sample_rate_hz);
    sum->first_t_s = NAN;
    for (size_t at = 0; at < n; at += B) {
        size_t m = n - at < B ? n - at : B;
        pl_online_news nw;
        assert_int_equal(pl_online_push(o, v[0] + at, v[1] + at, m, &err), PL_OK);
        assert_int_equal(pl_online_look(o, at + m == n, &nw, &err), PL_OK);
        for (size_t i = 0; i < nw.n_impacts && sum->live < cap; i++)
            live[sum->live++] = nw.impacts[i];
        if (nw.n_impacts && isnan(sum->first_t_s))
            sum->first_t_s = (double)(at + m) / info.sample_rate_hz;
        size_t used = strlen(sum->findings);
        snprintf(sum->findings + used, sizeof sum->findings - used, "%s", nw.findings);
    }
    assert_int_equal(pl_online_count(o), sum->live);
    sum->offline = off.n_impacts;
    for (size_t j = 0; j < sum->live; j++) {
        size_t b = 0;
        for (size_t q = 1; q < off.n_impacts; q++)
            if (fabs(off.impacts[q].t_s - live[j].t_s) < fabs(off.impacts[b].t_s - live[j].t_s))
                b = q;
        const pl_impact *p = &off.impacts[b];
        double dt = fabs(p->t_s - live[j].t_s), dr = fabs(p->ratio - live[j].ratio);
        sum->near += dt <= 5e-4;
        sum->worst_dt_s = fmax(sum->worst_dt_s, dt);
        sum->in_se += dr <= p->ratio_se;
        sum->in_comb += dr <= hypot(p->ratio_se, live[j].ratio_se);
        /* successive impacts are whole slots apart: offline's L_p there */
        if (j + 1 == sum->live) {
            double x = (p->t_s - off.decoder_shift_s) * off.rate_hz;
            double lp = prism.n_edges * pl_lattice_at(off.theta, off.n, x) / (2 * M_PI);
            sum->lp_err = fabs(lp - live[j].lp);
        }
    }
    print_message("run %lld: live %zu offline %zu, within 0.5 ms %zu (worst %.3f ms), ratio "
                  "within se %zu, within the difference's se %zu, L_p off by %.4f, first "
                  "report at %.2f s\n", id, sum->live, sum->offline, sum->near,
                  1e3 * sum->worst_dt_s, sum->in_se, sum->in_comb, sum->lp_err, sum->first_t_s);
    pl_online_destroy(o);
    free(live);
    free(v[0]);
    free(v[1]);
    pl_process_result_free(&off);
}

/* The first word of each line of text, and its channel, as one list. */
static int kind_in(const char *kind, const char *faults)
{
    for (const char *p = faults; *p;) {
        size_t len = strcspn(p, "\n"), w = strcspn(p, " \n");
        if (w == strlen(kind) && !strncmp(p, kind, w))
            return 1;
        p += len + (p[len] == '\n');
    }
    return 0;
}

/* Every live finding's kind is one the offline record has. */
static int findings_in_record(const replay_sum *s)
{
    int ok = 1;
    for (const char *p = s->findings; *p;) {
        size_t len = strcspn(p, "\n");
        char kind[64];
        snprintf(kind, sizeof kind, "%.*s", (int)strcspn(p, " \n"), p);
        if (!kind_in(kind, s->faults)) {
            print_message("  live finding not in the record: %.*s\n", (int)len, p);
            ok = 0;
        }
        p += len + (p[len] == '\n');
    }
    return ok;
}

static void replay_set(const char *set, int runs, int clean)
{
    char *dir = tu_tmpdir("online");
    char *db = tu_path(dir, "f.db"), manifest[128];
    snprintf(manifest, sizeof manifest, "fixtures/%s/manifest.csv", set);
    pl_err err = {0};
    int count = 0;
    if (tu_fixture_db(db, manifest, &count, &err) != PL_OK)
        fail_msg("import: %s", err.msg);
    assert_int_equal(count, runs);
    pl_store *store = NULL;
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);
    size_t live = 0, near = 0, comb = 0;
    for (long long id = 1; id <= runs; id++) {
        replay_sum s;
        replay(store, id, 0.1, &s);
        assert_int_equal(s.live, s.offline);
        assert_true(s.worst_dt_s < 5e-4);
        assert_true(s.lp_err < 0.02);
        assert_true(findings_in_record(&s));
        /* what a person must see at once is seen live */
        static const char *const must[] = {"beam_lost", "clipped", "common_motion"};
        for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
            if (kind_in(must[i], s.faults) && !kind_in(must[i], s.findings))
                fail_msg("run %lld: the record has %s, the live search did not say so", id,
                         must[i]);
        live += s.live;
        near += s.near;
        comb += s.in_comb;
    }
    print_message("%s: %zu impacts live, %zu within 0.5 ms, %zu ratios within the "
                  "difference's se\n", set, live, near, comb);
    assert_true(near == live);
    /* the clean runs: 665 of 665; the faulty: 529 of 576, the shaking
     * floor and the drifting mains the most of those outside */
    assert_true((double)comb >= (clean ? 0.99 : 0.9) * (double)live);
    pl_store_close(store);
    tu_rmtree(dir);
    free(db);
    free(dir);
}

static void foreign_clean(void **state)
{
    (void)state;
    replay_set("foreign", 6, 1);
}

static void foreign_faults(void **state)
{
    (void)state;
    replay_set("foreign2", 5, 0);
}

/* Our simulator's N = 38 prism at 20 kHz on an endless ramp, with its
 * hum and drop-outs: the issue's own numbers, and looks every 50 ms. */
static void simulator_20khz(void **state)
{
    (void)state;
    pl_simrun_config c;
    pl_simrun_config_default(&c);
    c.model.N = 38;
    c.model.lambda0 = 4.5 * M_PI / 180;
    c.model.ramp_length = 0;
    c.model.duration = 6;
    c.rate_hz = 20000;
    c.lead_in_s = 0.5;
    c.tail_s = 0.2;
    pl_simrun *sim = NULL;
    pl_err err = {0};
    if (pl_simrun_create(&sim, &c, &err) != PL_OK)
        fail_msg("%s", err.msg);
    char *dir = tu_tmpdir("online");
    char *db = tu_path(dir, "s.db");
    long long id = 0;
    assert_int_equal(tu_long_run_put(db, sim, &id, &err), PL_OK);
    pl_simrun_destroy(sim);
    pl_store *store = NULL;
    assert_int_equal(pl_store_open(&store, db, 0, &err), PL_OK);
    replay_sum s;
    replay(store, id, 0.05, &s);
    assert_true(s.offline > 200);
    /* count within 1 %, 99 % within 0.5 ms: here all of them */
    assert_int_equal(s.live, s.offline);
    assert_int_equal(s.near, s.live);
    assert_true((double)s.in_se >= 0.99 * (double)s.live);
    assert_true(s.lp_err < 0.01);
    /* reported while it rolls: the first impacts within a second of the
     * release (0.5 s) */
    assert_true(s.first_t_s < 1.5);
    assert_true(findings_in_record(&s));
    pl_store_close(store);
    tu_rmtree(dir);
    free(db);
    free(dir);
}

/* A 22-edged prism's search at 10 kHz, beams at 20 and 11 mm. */
static void config_22(pl_online_config *c)
{
    pl_online_config_default(c);
    c->rate_hz = 10000;
    c->N = 22;
    c->h_m[0] = 0.02;
    c->h_m[1] = 0.011;
}

/* A bad configuration is named. */
static void bad_config(void **state)
{
    (void)state;
    pl_online_config c;
    pl_online *o = NULL;
    pl_err err = {0};
    config_22(&c);
    c.h_m[1] = c.h_m[0];
    assert_int_equal(pl_online_create(&o, &c, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "beam heights"));
    c.h_m[1] = 0.01;
    c.N = 2;
    assert_int_equal(pl_online_create(&o, &c, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "N = 2"));
    c.N = 22;
    c.guard_s = 1;
    assert_int_equal(pl_online_create(&o, &c, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "guard"));
    assert_null(o);
}

/* Quiet samples only: nothing is reported and nothing is said (the
 * quiet before a release is no finding) until the last look, which says
 * why the run has no impacts. */
static void quiet_only(void **state)
{
    (void)state;
    pl_online_config c;
    pl_online *o = NULL;
    pl_err err = {0};
    config_22(&c);
    assert_int_equal(pl_online_create(&o, &c, &err), PL_OK);
    double v1[500], v2[500];
    unsigned long seed = 7;
    for (int blk = 0; blk < 60; blk++) {
        for (int i = 0; i < 500; i++) {
            v1[i] = 1e-5 * tu_gauss(&seed);
            v2[i] = 1e-5 * tu_gauss(&seed);
        }
        pl_online_news nw;
        assert_int_equal(pl_online_push(o, v1, v2, 500, &err), PL_OK);
        assert_int_equal(pl_online_look(o, blk == 59, &nw, &err), PL_OK);
        assert_int_equal(nw.n_impacts, 0);
        /* the last look says why the run has no impacts, as process would */
        if (blk < 59)
            assert_string_equal(nw.findings, "");
        else
            assert_non_null(strstr(nw.findings, "refused reason=\"no motion"));
        assert_true(isnan(nw.release_t));
    }
    assert_int_equal(pl_online_count(o), 0);
    pl_online_destroy(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_config),
        cmocka_unit_test(quiet_only),
        cmocka_unit_test(simulator_20khz),
        cmocka_unit_test(foreign_clean),
        cmocka_unit_test(foreign_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
