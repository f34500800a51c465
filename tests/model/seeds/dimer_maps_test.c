/* tests/model/seeds/dimer_maps_test.c - figure 11's features that hold
 * here (seed 002), the threaded batch, basin maps' files and statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/seeds/dimer_maps.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The median scaled forward drift of the drift-mode starts of spec s at
 * each of its points, the batch on threads workers. */
static pl_dimer_fig11_point *fig11_run(const pl_dimer_fig11_spec *s, int threads)
{
    size_t n = pl_dimer_fig11_size(s);
    pl_dimer_params *ps = malloc(n * sizeof *ps);
    pl_dimer_result *res = malloc(n * sizeof *res);
    int *ok = malloc(n * sizeof *ok);
    pl_dimer_fig11_point *pts = malloc(s->n_freqs * s->n_ar * sizeof *pts);
    assert_non_null(ps);
    assert_non_null(res);
    assert_non_null(ok);
    assert_non_null(pts);
    for (size_t i = 0; i < n; i++)
        pl_dimer_fig11_params(s, i, &ps[i]);
    pl_err err = {0};
    assert_int_equal(pl_dimer_batch(ps, n, threads, res, ok, NULL, NULL, &err), PL_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ok[i], 1);
    pl_dimer_fig11_summarize(s, res, ok, pts);
    free(ps);
    free(res);
    free(ok);
    return pts;
}

/* Figure 11 at 25 Hz across A_r 5, from four starts around the paper's:
 * the forward drift falls with A_r up to 4.9 and turns into a reverse
 * drift between 4.9 and 5.0 (the paper: "at A_r = 5 ... suddenly"); the
 * issue's pin: a sign change between 4.5 and 5.5.  Measured medians:
 * 1.476 at 4.5, 1.239 at 4.9, -2.589 at 5.0, -1.994 at 5.5. */
static void test_fig11_reversal_at_5(void **state)
{
    (void)state;
    static const double f[1] = {25}, h0[2] = {0.25e-3, 0.5e-3};
    static const double th[2] = {5 * M_PI / 180, 7 * M_PI / 180};
    pl_dimer_fig11_spec s;
    pl_dimer_fig11_default(&s);
    s.freqs = f;
    s.n_freqs = 1;
    s.ar_min = 4.5;
    s.n_ar = 11;
    s.h0 = h0;
    s.n_h0 = 2;
    s.theta0 = th;
    s.n_theta0 = 2;
    pl_dimer_fig11_point *p = fig11_run(&s, 0);
    assert_true(p[0].med > 0);                  /* 4.5 */
    assert_true(p[10].med < 0);                 /* 5.5 */
    for (int a = 0; a < 4; a++) {               /* falls on 4.5 .. 4.9 */
        assert_true(p[a + 1].med < p[a].med);
        assert_true(p[a + 1].med > 0);
    }
    assert_true(p[5].med < 0);                  /* 5.0: reversed at once */
    assert_true(p[5].med < -p[4].med);          /* and faster than before */
    tu_assert_close(p[0].med, 1.4755, 1e-3);
    tu_assert_close(p[5].med, -2.5889, 1e-3);
    for (int a = 0; a < 11; a++)
        assert_int_equal(p[a].drift_starts, 4);
    free(p);
}

/* The forward drift's independence of f (scaled: <u> f / g 10^2): 2.10,
 * 2.02 and 1.98 at A_r 3.9 for 25, 50 and 75 Hz from the paper's start;
 * at 75 Hz the left sphere is the one that bounces, and forward is
 * towards it. */
static void test_fig11_frequency(void **state)
{
    (void)state;
    static const double f[3] = {25, 50, 75}, h0[1] = {0.25e-3}, th[1] = {5 * M_PI / 180};
    pl_dimer_fig11_spec s;
    pl_dimer_fig11_default(&s);
    s.freqs = f;
    s.ar_min = 3.9;
    s.n_ar = 1;
    s.h0 = h0;
    s.n_h0 = 1;
    s.theta0 = th;
    s.n_theta0 = 1;
    pl_dimer_fig11_point *p = fig11_run(&s, 2);
    double want[3] = {2.1028, 2.0201, 1.9772};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(p[k].drift_starts, 1);
        tu_assert_close(p[k].med, want[k], 1e-3);
    }
    double lo = fmin(p[0].med, fmin(p[1].med, p[2].med));
    double hi = fmax(p[0].med, fmax(p[1].med, p[2].med));
    assert_true(hi - lo < 0.1 * hi);
    free(p);
}

/* Above the reverse branch at 25 Hz the dimer rests in the paper's
 * single pendulum: the right sphere swings and hits once a cycle, the
 * left stays stuck, and the drift is zero (scaled 0.0002 at 6.2, 0.0018
 * at 6.5).  Before issue 32 it drifted forward again above 6.2 (2.20 at
 * 6.5): a tip stuck when a double impact began was let slide. */
static void test_fig11_above_6_2(void **state)
{
    (void)state;
    static const double f[1] = {25}, h0[1] = {0.25e-3}, th[1] = {5 * M_PI / 180};
    pl_dimer_fig11_spec s;
    pl_dimer_fig11_default(&s);
    s.freqs = f;
    s.n_freqs = 1;
    s.ar_min = 6.1;
    s.n_ar = 5;
    s.h0 = h0;
    s.n_h0 = 1;
    s.theta0 = th;
    s.n_theta0 = 1;
    pl_dimer_fig11_point *p = fig11_run(&s, 1);
    assert_true(p[0].med < -1);                 /* 6.1: reverse */
    for (int a = 1; a < 5; a++) {               /* 6.2 .. 6.5: zero */
        assert_int_equal(p[a].drift_starts, 1);
        assert_true(fabs(p[a].med) < 0.01);
    }
    free(p);
}

/* The batch's results do not depend on the threads: 1 and 2 give the
 * same bytes. */
static void test_batch_threads(void **state)
{
    (void)state;
    enum { N = 6 };
    pl_dimer_params ps[N];
    pl_dimer_result r1[N], r2[N];
    int ok1[N], ok2[N];
    for (int i = 0; i < N; i++) {
        pl_dimer_params_default(&ps[i]);
        ps[i].f = 50;
        ps[i].duration = 0.5;
        ps[i].h0 = (0.5 + i) * 1e-3;
        ps[i].theta0 = (3 + i) * M_PI / 180;
    }
    ps[3].Ar = 1.5;                             /* refused: not an error */
    memset(r1, 0x55, sizeof r1);
    memset(r2, 0xaa, sizeof r2);
    pl_err err = {0};
    assert_int_equal(pl_dimer_batch(ps, N, 1, r1, ok1, NULL, NULL, &err), PL_OK);
    assert_int_equal(pl_dimer_batch(ps, N, 2, r2, ok2, NULL, NULL, &err), PL_OK);
    assert_memory_equal(ok1, ok2, sizeof ok1);
    assert_memory_equal(r1, r2, sizeof r1);
    assert_int_equal(ok1[3], 0);
    assert_int_equal(ok1[2], 1);
}

typedef struct {
    size_t calls, last, total, backwards;
} progress_log;

static int log_progress(size_t done, size_t total, void *ctx)
{
    progress_log *l = ctx;
    l->backwards += l->calls > 0 && done < l->last;
    l->calls++;
    l->last = done;
    l->total = total;
    return 0;
}

/* A basin map on 1 thread and on 2, 3 and 5 (more than this machine's
 * CPUs): the same modes, drifts and energies, byte for byte, whichever
 * thread took which start; the progress counts up to the map's size. */
static void test_basin_threads(void **state)
{
    (void)state;
    enum { N = 5, T = 4 };
    static const int threads[T] = {1, 2, 3, 5};
    pl_dimer_basin_spec s;
    size_t nc;
    const pl_dimer_case *c = pl_dimer_cases(&nc);
    assert_string_equal(c[6].name, "fig20");
    pl_dimer_case_basin(&c[6], N, &s);          /* the map of the most modes */
    int m[T][N * N];
    double d[T][N * N], e[T][N * N];
    memset(d, 0x55, sizeof d);
    memset(e, 0xaa, sizeof e);
    pl_err err = {0};
    for (int k = 0; k < T; k++) {
        progress_log log = {0};
        assert_int_equal(pl_dimer_basin_run(&s, threads[k], m[k], d[k], e[k], log_progress,
                                            &log, &err), PL_OK);
        assert_int_equal(log.total, N * N);
        assert_int_equal(log.last, N * N);
        assert_int_equal(log.backwards, 0);
        assert_true(log.calls >= 2);
        if (k == 0)
            continue;
        assert_memory_equal(m[k], m[0], sizeof m[0]);
        assert_memory_equal(d[k], d[0], sizeof d[0]);
        assert_memory_equal(e[k], e[0], sizeof e[0]);
    }
    /* the comparison means something: the map holds several modes */
    int modes = 0, seen[PL_DIMER_NMODES] = {0};
    for (int i = 0; i < N * N; i++) {
        assert_true(m[0][i] >= 0 && m[0][i] < PL_DIMER_NMODES);
        modes += !seen[m[0][i]]++;
    }
    assert_true(modes >= 3);
}

/* The thread count: as asked, capped, or the CPUs online. */
static void test_threads_default(void **state)
{
    (void)state;
    assert_int_equal(pl_dimer_threads(3), 3);
    assert_int_equal(pl_dimer_threads(100000), PL_DIMER_MAX_THREADS);
    assert_int_equal(pl_dimer_threads(0), (int)sysconf(_SC_NPROCESSORS_ONLN));
    assert_int_equal(pl_dimer_threads(-1), (int)sysconf(_SC_NPROCESSORS_ONLN));
}

/* A basin map's file: written and read back whole; another map's key is
 * not read; a damaged line is named. */
static void test_basin_file(void **state)
{
    (void)state;
    pl_dimer_basin_spec s;
    size_t nc;
    const pl_dimer_case *c = pl_dimer_cases(&nc);
    pl_dimer_case_basin(&c[1], 3, &s);          /* figure 13's start */
    assert_string_equal(c[1].name, "fig13");
    int m[9], m2[9];
    double d[9], e[9], d2[9], e2[9];
    pl_err err = {0};
    assert_int_equal(pl_dimer_basin_run(&s, 2, m, d, e, NULL, NULL, &err), PL_OK);
    char dir[] = "/tmp/dimer_maps_testXXXXXX", path[256], key[1024], other[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/basin.csv", dir);
    pl_dimer_basin_key(&s, "fig13", key, sizeof key);
    assert_int_equal(pl_dimer_basin_save(path, key, &s, m, d, e, &err), PL_OK);
    assert_int_equal(pl_dimer_basin_load(path, key, &s, m2, d2, e2, &err), PL_OK);
    assert_memory_equal(m, m2, sizeof m);
    for (int i = 0; i < 9; i++) {
        tu_assert_close(d2[i], d[i], 1e-9 * fabs(d[i]) + 1e-15);
        tu_assert_close(e2[i], e[i], 1e-8 * fabs(e[i]) + 1e-15);
    }
    pl_dimer_basin_spec s2 = s;
    s2.base.v_rest = 3e-3;
    pl_dimer_basin_key(&s2, "fig13", other, sizeof other);
    assert_string_not_equal(key, other);
    assert_int_equal(pl_dimer_basin_load(path, other, &s2, m2, d2, e2, &err), PL_ENOTFOUND);
    /* damage row 5 (file line 7) */
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    char *line = buf;
    for (int i = 0; i < 6; i++)
        line = strchr(line, '\n') + 1;
    line[0] = 'x';
    rewind(f);
    fwrite(buf, 1, len, f);
    fclose(f);
    assert_int_equal(pl_dimer_basin_load(path, key, &s, m2, d2, e2, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "basin.csv:7:"));
    unlink(path);
    rmdir(dir);
}

/* The statistics of a map: shares and the nearest start of a mode in
 * the metric 1 mm ~ 1 degree. */
static void test_basin_stats(void **state)
{
    (void)state;
    pl_dimer_basin_spec s;
    memset(&s, 0, sizeof s);
    pl_dimer_params_default(&s.base);
    s.h0_min = 0;
    s.h0_max = 2e-3;                            /* 0, 1, 2 mm */
    s.th_min = 0;
    s.th_max = 4 * M_PI / 180;                  /* 0, 2, 4 deg */
    s.nh = s.nth = 3;
    int modes[9] = {PL_DIMER_REST, PL_DIMER_REST, PL_DIMER_JUMP,
                    PL_DIMER_DRIFT, PL_DIMER_REST, -1,
                    PL_DIMER_JUMP, PL_DIMER_DRIFT, PL_DIMER_REST};
    pl_dimer_basin_stats st;
    pl_dimer_basin_summarize(&s, modes, 1e-3, 2 * M_PI / 180, PL_DIMER_JUMP, &st);
    assert_int_equal(st.failed, 1);
    tu_assert_close(st.share[PL_DIMER_REST], 4.0 / 8, 1e-12);
    tu_assert_close(st.share[PL_DIMER_JUMP], 2.0 / 8, 1e-12);
    tu_assert_close(st.share[PL_DIMER_DRIFT], 2.0 / 8, 1e-12);
    /* jump at (0 mm, 4 deg) and (2 mm, 0 deg): both sqrt(1 + 4) away;
     * the first found is kept */
    tu_assert_close(st.dist, sqrt(5), 1e-9);
    tu_assert_close(st.h0_near, 0, 1e-15);
    tu_assert_close(st.th_near, 4 * M_PI / 180, 1e-12);
    pl_dimer_basin_summarize(&s, modes, 1e-3, 2 * M_PI / 180, PL_DIMER_FLUTTER, &st);
    assert_true(isnan(st.dist));
}

/* A progress that asks to stop at its first call: the batch takes no
 * more simulations and says PL_ESTATE, having run fewer than asked (each
 * of 2 threads finishes at most the one it holds). */
static int stop_now(size_t done, size_t total, void *ctx)
{
    (void)done;
    (void)total;
    ++*(int *)ctx;
    return 1;
}

static void test_batch_stops(void **state)
{
    (void)state;
    enum { N = 64 };
    pl_dimer_params ps[N];
    pl_dimer_result r[N];
    int ok[N], calls = 0;
    for (int i = 0; i < N; i++) {
        pl_dimer_params_default(&ps[i]);
        ps[i].duration = 2;
    }
    pl_err err = {0};
    assert_int_equal(pl_dimer_batch(ps, N, 2, r, ok, stop_now, &calls, &err), PL_ESTATE);
    assert_int_equal(calls, 1);                 /* not called again: no "total" line */
    assert_non_null(strstr(err.msg, "stopped after"));
    size_t done = 0;
    assert_int_equal(sscanf(err.msg, "dimer batch: stopped after %zu of", &done), 1);
    assert_true(done <= 2);
}

/* A point of figure 11 at f, A_r with a median drift m, every start in
 * the drift mode. */
static pl_dimer_fig11_point point(double f, double Ar, double m)
{
    pl_dimer_fig11_point p = {.f = f, .Ar = Ar, .starts = 4, .drift_starts = 4, .med = m};
    return p;
}

/* dimer-report --quick's sweep (25 Hz, A_r 3.9 to 6.5): the statements
 * on 50 and 75 Hz, on A_r it did not reach, and those comparing the
 * frequencies are not checked; the reversal at 5, which it spans, is
 * checked at 25 Hz and says 50 and 75 Hz were left out. */
static void test_fig11_unchecked(void **state)
{
    (void)state;
    static const double f25[1] = {25};
    pl_dimer_fig11_spec s;
    pl_dimer_fig11_default(&s);
    s.freqs = f25;
    s.n_freqs = 1;
    s.ar_min = 3.9;
    s.n_ar = 27;
    pl_dimer_fig11_point pts[27], low[2];
    for (int a = 0; a < 27; a++) {
        double Ar = 3.9 + 0.1 * a;
        pts[a] = point(25, Ar, Ar < 4.95 ? 2.0 - 0.1 * a : Ar < 6.15 ? -1.0 : 0.0);
    }
    low[0] = point(2.5, 2.0, NAN);
    low[0].drift_starts = 0;
    low[1] = point(2.5, 2.2, NAN);
    low[1].drift_starts = 0;
    pl_dimer_statement st[PL_DIMER_FIG11_STATEMENTS];
    pl_dimer_fig11_check(&s, pts, low, 2, st);
    static const pl_dimer_verdict want[PL_DIMER_FIG11_STATEMENTS] = {
        PL_DIMER_UNCHECKED, PL_DIMER_UNCHECKED, PL_DIMER_UNCHECKED, PL_DIMER_HOLDS,
        PL_DIMER_UNCHECKED, PL_DIMER_UNCHECKED, PL_DIMER_HOLDS, PL_DIMER_HOLDS,
        PL_DIMER_UNCHECKED, PL_DIMER_UNCHECKED};
    for (int i = 0; i < PL_DIMER_FIG11_STATEMENTS; i++) {
        if (st[i].verdict != want[i])
            print_error("statement %d: verdict %d, want %d (%s)\n", i + 1, st[i].verdict,
                        want[i], st[i].finding);
        assert_int_equal(st[i].verdict, want[i]);
    }
    assert_non_null(strstr(st[5].paper, "frequency has little influence"));
    assert_non_null(strstr(st[5].finding, "not checked"));
    assert_non_null(strstr(st[2].finding, "50, 75 Hz"));
    assert_non_null(strstr(st[3].finding, "not checked at 50, 75 Hz"));
    /* the same numbers with the reversal gone: checked, and it fails */
    for (int a = 11; a < 23; a++)
        pts[a].med = 0.5;
    pl_dimer_fig11_check(&s, pts, low, 2, st);
    assert_int_equal(st[3].verdict, PL_DIMER_FAILS);
    assert_int_equal(st[5].verdict, PL_DIMER_UNCHECKED);
}

/* Figure 12's check, part by part: from the paper's start the mode and
 * the zero drift hold but the left sphere swings, so it does not hold,
 * and the finding says so with why - the lower sphere's lone fate
 * (bouncing), the upper one's (captured) and the mirror start, where the
 * right swings as in the paper.  A made-up result with the right sphere
 * swinging and zero drift holds; one in another mode says the mode
 * fails, with no explanation of the sphere. */
static void test_case_check(void **state)
{
    (void)state;
    size_t n;
    const pl_dimer_case *c = pl_dimer_cases(&n);
    assert_string_equal(c[0].name, "fig12");
    pl_dimer_params p;
    pl_dimer_case_params(&c[0], 100, &p);
    pl_dimer_result r;
    pl_err err = {0};
    assert_int_equal(pl_dimer_run(&p, NULL, 0, &r, &err), PL_OK);
    pl_dimer_statement st;
    assert_int_equal(pl_dimer_case_check(&c[0], &r, &st, &err), PL_OK);
    assert_int_equal(st.verdict, PL_DIMER_FAILS);
    assert_ptr_equal(st.paper, c[0].statement);
    const char *want[] = {
        "the paper: drift mode, the right sphere swinging, zero mean drift",
        "here: drift mode, the left sphere swinging (10 hits",
        "the mode and the zero drift hold, the swinging sphere is the other one",
        "puts the left sphere lower", "2.25 mm over the plate's mean",
        "a lone sphere released there keeps bouncing (10 hits",
        "released from the right one's 13.1 mm it is captured at 0.2",
        "by -2.6 % of its own",
        "From the mirror start (theta0 -12 deg) prismlab gives drift mode, the right "
        "sphere swinging (10 hits"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(st.finding, want[i]))
            print_error("no '%s' in: %s\n", want[i], st.finding);
        assert_non_null(strstr(st.finding, want[i]));
    }
    pl_dimer_result m = r;
    m.hits[0] = 0;
    m.hits[1] = 10;
    m.hmax[0] = 1e-6;
    m.hmax[1] = 2.5e-3;
    assert_int_equal(pl_dimer_case_check(&c[0], &m, &st, &err), PL_OK);
    assert_int_equal(st.verdict, PL_DIMER_HOLDS);
    assert_non_null(strstr(st.finding, "the right sphere swinging (10 hits"));
    assert_non_null(strstr(st.finding, ": holds"));
    assert_null(strstr(st.finding, "Why"));
    m.mode = PL_DIMER_JUMP;
    assert_int_equal(pl_dimer_case_check(&c[0], &m, &st, &err), PL_OK);
    assert_int_equal(st.verdict, PL_DIMER_FAILS);
    assert_non_null(strstr(st.finding, "here: jump mode"));
    assert_non_null(strstr(st.finding, "the mode does not hold"));
    assert_null(strstr(st.finding, "Why"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fig11_reversal_at_5),
        cmocka_unit_test(test_fig11_frequency),
        cmocka_unit_test(test_fig11_above_6_2),
        cmocka_unit_test(test_batch_threads),
        cmocka_unit_test(test_basin_threads),
        cmocka_unit_test(test_threads_default),
        cmocka_unit_test(test_basin_file),
        cmocka_unit_test(test_basin_stats),
        cmocka_unit_test(test_batch_stops),
        cmocka_unit_test(test_fig11_unchecked),
        cmocka_unit_test(test_case_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
