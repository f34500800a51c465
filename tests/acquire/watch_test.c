/* tests/acquire/watch_test.c - `acquire watch`'s client and lines
 * (acquire/watch.h).  The lines: each event as acquire/live.c writes it
 * (copied from a run of the daemon) and the text it becomes; track and
 * what is not an event have none; a key quoted inside a string is not the
 * member.  The client, over a real Unix socket whose other end plays the
 * daemon's stream byte for byte (its framing: the greeting, D and S lines
 * passed over, an event split across writes, G lines counted), its
 * refusal, its timeout and its end; with no daemon, the error names the
 * socket and how to start one.  The daemon itself serving watch:
 * tests/acquire/live_watch_test.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/watch.h"
#include "tests/util/testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char impact[] =
    "{\"event\":\"impact\",\"run\":1,\"wall_ms\":1795969680641.4,\"t_s\":0.748801992,"
    "\"omega_minus\":2.11169143,\"omega_plus\":2.10290638,\"ratio\":0.995839807,"
    "\"ratio_se\":1.83180958e-05,\"lp\":1.47542876,\"confirmed\":1,\"latency_s\":0.176132441}";

static void test_lines(void **state)
{
    (void)state;
    char line[1024], kind[16];
    assert_int_equal(pl_watch_format(impact, line, sizeof line), 1);
    assert_string_equal(line, "run 1: impact t=0.7488 s L_p=1.48 omega 2.1117 -> 2.1029 rad/s "
                              "ratio 0.995840 +- 1.8e-05 latency 0.176 s");
    assert_int_equal(pl_watch_kind(impact, kind, sizeof kind), 1);
    assert_string_equal(kind, "impact");

    static const char *const cases[][2] = {
        {"{\"event\":\"start\",\"run\":3,\"wall_ms\":1.5,\"rate_hz\":20000,\"N\":38,"
         "\"h1_m\":0.0199,\"h2_m\":0.0116,\"cpu_share\":0.2,\"live\":true}",
         "run 3: start: 20000 Hz, N = 38, live search on (at most 20 % of a core)"},
        {"{\"event\":\"start\",\"run\":4,\"wall_ms\":1.5,\"live\":false,"
         "\"why\":\"no [run] prism in the rig file: the search needs its N\"}",
         "run 4: start: live search off: no [run] prism in the rig file: the search needs its N"},
        {"{\"event\":\"release\",\"run\":1,\"wall_ms\":1.5,\"t_s\":0.4883}",
         "run 1: release at t=0.4883 s"},
        {"{\"event\":\"finding\",\"run\":1,\"wall_ms\":1.5,\"kind\":\"hum\","
         "\"text\":\"hum freq_hz=50.000 amp1_mps=2.4e-05\"}",
         "run 1: finding: hum freq_hz=50.000 amp1_mps=2.4e-05"},
        {"{\"event\":\"pace\",\"run\":1,\"wall_ms\":1.5,\"look_s\":0.0762828233,"
         "\"why\":\"a look takes 15 ms of CPU; at most 20 % of a core\"}",
         "run 1: pace: a look every 0.08 s (a look takes 15 ms of CPU; at most 20 % of a core)"},
        {"{\"event\":\"paused\",\"run\":2,\"wall_ms\":1.5,\"behind_s\":10.25,"
         "\"why\":\"the search fell 10 s behind\"}",
         "run 2: paused, 10.2 s behind: the search fell 10 s behind"},
        {"{\"event\":\"stop\",\"run\":1,\"wall_ms\":1.5,\"frames\":70946,\"impacts\":262,"
         "\"lp\":261.474261,\"ratio_mean\":0.995819886,\"ratio_sd\":7.98968632e-05,"
         "\"looks\":104,\"cpu_s\":1.00557803,\"latency_median_s\":0.0769040585,"
         "\"paused\":false,\"why\":\"end of source\"}",
         "run 1: stop (end of source): 262 impacts, L_p=261.47, ratio 0.995820 sd 8e-05, "
         "median latency 0.077 s, 104 looks, 1.01 s CPU, 70946 frames"},
        /* an unconfirmed impact, a null se (NaN in the search) */
        {"{\"event\":\"impact\",\"run\":1,\"wall_ms\":1,\"t_s\":2,\"omega_minus\":3,"
         "\"omega_plus\":2.9,\"ratio\":0.9666,\"ratio_se\":null,\"lp\":7,\"confirmed\":0,"
         "\"latency_s\":0.05}",
         "run 1: impact t=2.0000 s L_p=7.00 omega 3.0000 -> 2.9000 rad/s ratio 0.966600 "
         "+- nan latency 0.050 s (unconfirmed: placed by the lattice)"},
        /* the member, not a quoted key inside a string before it */
        {"{\"event\":\"finding\",\"run\":5,\"wall_ms\":1,\"kind\":\"x\",\"why\":"
         "\"a \\\"text\\\":\\\"wrong\\\", [}\",\"text\":\"right \\u0041\\\\\"}",
         "run 5: finding: right A\\"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(pl_watch_format(cases[i][0], line, sizeof line), 1);
        assert_string_equal(line, cases[i][1]);
    }
    /* plots' data and what is not an event have no line */
    assert_int_equal(pl_watch_format("{\"event\":\"track\",\"run\":1,\"wall_ms\":1,\"t0_s\":0.5,"
                                     "\"dt_s\":0.01,\"omega\":[1,null,2],\"lp\":[0,0.5,1]}",
                                     line, sizeof line), 0);
    assert_int_equal(pl_watch_format("{\"run\":1}", line, sizeof line), 0);
    assert_int_equal(pl_watch_format("not json", line, sizeof line), 0);
    assert_int_equal(pl_watch_kind("{\"a\":[1,{\"event\":\"stop\"}]}", kind, sizeof kind), 0);
}

/* The daemon's end of the stream: after "stream\n", the chunks written
 * with a pause between them, then the connection held until the client
 * closes it or (hang_up) closed. */
typedef struct {
    char *path;
    const char *const *chunks;
    int hang_up;
    int listen_fd;
    char got[64];
    pthread_t th;
} fake;

static void *serve(void *arg)
{
    fake *f = arg;
    int c = accept(f->listen_fd, NULL, NULL);
    if (c < 0)
        return NULL;
    ssize_t n = read(c, f->got, sizeof f->got - 1);
    f->got[n > 0 ? n : 0] = '\0';
    for (const char *const *p = f->chunks; *p; p++) {
        if (write(c, *p, strlen(*p)) < 0)
            break;
        struct timespec nap = {0, 20000000L};
        nanosleep(&nap, NULL);
    }
    char b[64];
    if (!f->hang_up)
        while (read(c, b, sizeof b) > 0) {
        }
    close(c);
    return NULL;
}

static void fake_start(fake *f, const char *dir, const char *const *chunks, int hang_up)
{
    f->path = tu_path(dir, "d.sock");
    f->chunks = chunks;
    f->hang_up = hang_up;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", f->path);
    unlink(f->path);
    f->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(f->listen_fd >= 0);
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->listen_fd, 4), 0);
    assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
}

static void fake_end(fake *f)
{
    pthread_join(f->th, NULL);
    close(f->listen_fd);
    free(f->path);
}

static void test_stream(void **state)
{
    char *dir = *state;
    static const char *const chunks[] = {
        "ok streaming\nS state=armed run=-1 frames=0\n",
        "D 1795969680234.1 0 10000 10 2 0 0 0 0 0 0 0 0\nE {\"event\":\"start\",\"run\":1,",
        "\"wall_ms\":1,\"live\":false,\"why\":\"off\"}\nG 3\nD 1 2 3\n",
        "G 2\nE {\"event\":\"stop\",\"run\":1,\"wall_ms\":2}\nE {\"event\":\"rel",
        NULL};
    fake f;
    fake_start(&f, dir, chunks, 1);
    pl_watch *w = NULL;
    pl_err err = {0};
    assert_int_equal(pl_watch_open(&w, f.path, &err), PL_OK);
    const char *json;
    long long lost;
    assert_int_equal(pl_watch_next(w, 10, NULL, &json, &lost, &err), PL_OK);
    assert_string_equal(json, "{\"event\":\"start\",\"run\":1,\"wall_ms\":1,\"live\":false,"
                              "\"why\":\"off\"}");
    assert_int_equal(lost, 0);
    assert_int_equal(pl_watch_next(w, 10, NULL, &json, &lost, &err), PL_OK);
    assert_string_equal(json, "{\"event\":\"stop\",\"run\":1,\"wall_ms\":2}");
    assert_int_equal(lost, 5);
    /* the unfinished line is not an event: the daemon's hang-up ends it */
    assert_int_equal(pl_watch_next(w, 10, NULL, &json, &lost, &err), PL_EIO);
    assert_null(json);
    assert_non_null(strstr(err.msg, "the daemon closed the stream"));
    assert_non_null(strstr(err.msg, f.path));
    pl_watch_close(w);
    fake_end(&f);
    assert_string_equal(f.got, "stream\n");
}

static void test_timeout_and_stop(void **state)
{
    char *dir = *state;
    static const char *const chunks[] = {"ok streaming\nS state=idle\n", NULL};
    fake f;
    fake_start(&f, dir, chunks, 0);
    pl_watch *w = NULL;
    pl_err err = {0};
    assert_int_equal(pl_watch_open(&w, f.path, &err), PL_OK);
    const char *json;
    long long lost;
    assert_int_equal(pl_watch_next(w, 0.3, NULL, &json, &lost, &err), PL_ESTATE);
    assert_non_null(strstr(err.msg, "no event for 0.3 s"));
    volatile sig_atomic_t stop = 1;   /* Ctrl-C: no event, no error */
    assert_int_equal(pl_watch_next(w, 0, &stop, &json, &lost, &err), PL_OK);
    assert_null(json);
    pl_watch_close(w);
    fake_end(&f);
}

static void test_refused_and_absent(void **state)
{
    char *dir = *state;
    static const char *const chunks[] = {
        "error stream: 6 viewers already stream from this daemon\n", NULL};
    fake f;
    fake_start(&f, dir, chunks, 1);
    pl_watch *w = NULL;
    pl_err err = {0};
    assert_int_equal(pl_watch_open(&w, f.path, &err), PL_ESTATE);
    assert_null(w);
    assert_non_null(strstr(err.msg, "refused the stream: error stream: 6 viewers"));
    fake_end(&f);

    char *none = tu_path(dir, "none.sock");
    assert_int_equal(pl_watch_open(&w, none, &err), PL_EIO);
    assert_non_null(strstr(err.msg, none));
    assert_non_null(strstr(err.msg, "prismlab acquire daemon --config rig.ini"));
    free(none);
}

static int setup(void **state)
{
    *state = tu_tmpdir("watch");
    return 0;
}

static int teardown(void **state)
{
    tu_rmtree(*state);
    free(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_and_absent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
