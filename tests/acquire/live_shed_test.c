/* tests/acquire/live_shed_test.c - the live search sheds its load, never
 * the recording's: the real daemon recording the rig simulator in real
 * time (steel-38 rolling on an endless ramp, 2 x 10 kHz) with [live]
 * cpu_share = 0.01.  A look costs milliseconds of CPU, so at a hundredth
 * of a core the looks must space out to a second or so: the stream says
 * so (a pace event naming the 1 %), the search's CPU over the run stays
 * near that share, it still reports impacts, and the run keeps every
 * frame (complete, no overrun, its stored frames those the search saw and
 * the duration's).  Deterministic on a loaded machine: the pace follows
 * the looks' CPU time, not the wall clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "db/run.h"
#include "db/store.h"
#include "tests/util/livestream.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RATE_HZ 10000
#define RUN_S 8

typedef struct {
    int started, live, stopped, paused, paces, impacts;
    double max_look_s, cpu_s;
    long long run, frames, overruns;
    char pace_why[256], paused_why[256];
} heard;

static int hear(void *ctx, const char *line)
{
    heard *h = ctx;
    if (line[0] == 'S') {
        const char *p = strstr(line, "overruns=");
        long long o = 0;
        if (p && sscanf(p, "overruns=%lld", &o) == 1 && o > h->overruns)
            h->overruns = o;
        return 0;
    }
    if (tu_is_event(line, "start")) {
        h->started = 1;
        h->live = strstr(line, "\"live\":true") != NULL;
        h->run = (long long)tu_json_num(line, "run");
    } else if (tu_is_event(line, "pace")) {
        if (h->paces++ == 0)
            snprintf(h->pace_why, sizeof h->pace_why, "%s", line);
        h->max_look_s = fmax(h->max_look_s, tu_json_num(line, "look_s"));
    } else if (tu_is_event(line, "paused")) {
        h->paused = 1;
        snprintf(h->paused_why, sizeof h->paused_why, "%s", line);
    } else if (tu_is_event(line, "impact")) {
        h->impacts++;
    } else if (tu_is_event(line, "stop")) {
        h->stopped = 1;
        h->frames = (long long)tu_json_num(line, "frames");
        h->cpu_s = tu_json_num(line, "cpu_s");
        return 1;
    }
    return 0;
}

static void test_a_hundredth_of_a_core(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("liveshed");
    char *db = tu_path(dir, "d.db"), *ini = tu_path(dir, "rig.ini");
    char *sock = tu_path(dir, "d.sock");
    pl_err err = {0};
    if (tu_fixture_db(db, NULL, NULL, &err) != PL_OK)
        fail_msg("%s", err.msg);
    char text[1024];
    snprintf(text, sizeof text,
             "[daq]\nsource = sim\nrate_hz = %d\n"
             "[beams]\nh1_m = 0.0199\nh2_m = 0.0116\nsign1 = 1\nsign2 = -1\n"
             "ldv_scale_mps_per_v = 0.025\n[store]\ndb = %s\n"
             "[run]\nprism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\n"
             "duration_s = %d\n[sim]\nseed = 2\npaced = 1\nramp_length_m = 0\n"
             "motion_s = %d\n[live]\nsearch = on\ncpu_share = 0.01\n",
             RATE_HZ, db, RUN_S, RUN_S + 5);
    assert_int_equal(tu_write_file(ini, text), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(127);
        execl(tu_prismlab_path(), tu_prismlab_path(), "acquire", "daemon", "--config", ini,
              "--socket", sock, (char *)NULL);
        _exit(127);
    }
    int fd = tu_stream_open(sock, 30);
    char reply[256] = "";
    heard h = {0};
    if (fd >= 0 && tu_daemon_ask(sock, "arm", reply, sizeof reply, 60) == 0)
        tu_stream_read(fd, RUN_S + 120, hear, &h);
    if (fd >= 0)
        close(fd);
    /* the stop event comes after the run's end; its last commit may not */
    pl_run_info info = {0};
    for (int i = 0; i < 100 && h.run > 0; i++) {
        pl_store *s = NULL;
        if (pl_store_open(&s, db, 0, &err) == PL_OK && pl_run_get(s, h.run, &info, &err) == PL_OK &&
            info.state != PL_RUN_RECORDING) {
            pl_store_close(s);
            break;
        }
        pl_store_close(s);
        usleep(100000);
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    print_message("arm: %s; %d pace events (%s), looks up to %.2f s apart, %d impacts, "
                  "cpu %.3f s, %lld frames searched, %lld stored (%lld pre-trigger)%s%s\n",
                  reply, h.paces, h.pace_why, h.max_look_s, h.impacts, h.cpu_s, h.frames,
                  info.n_frames, info.pretrigger_frames, h.paused ? ", " : "", h.paused_why);
    assert_string_equal(reply, "ok armed");
    assert_true(h.started && h.live);
    assert_true(h.stopped);
    /* the pace: a look's CPU time over 1 % of a core, said in words */
    assert_true(h.paces >= 1);
    assert_non_null(strstr(h.pace_why, "at most 1 % of a core"));
    assert_true(h.max_look_s >= 0.1);
    /* the search's CPU near the share (the looks before the first pace
     * event and the last one come on top): well under the 0.1-0.2 of a
     * core it takes at its default pace (tests/bench/live_bench.c);
     * 0.013-0.015 here, 0.032 under the sanitizers */
    assert_true(h.cpu_s / RUN_S < 0.08);
    /* slower, not blind: the rolling prism's impacts still come */
    assert_true(h.impacts > 10);
    /* and every frame recorded: the run whole, what the search saw */
    assert_int_equal(info.state, PL_RUN_COMPLETE);
    assert_int_equal(info.overrun_frame, -1);
    assert_int_equal(h.overruns, 0);
    /* the duration counts from the first frame kept, the pre-trigger's */
    assert_int_equal(info.n_frames, (long long)RUN_S * RATE_HZ);
    assert_int_equal(h.frames, info.n_frames);
    tu_rmtree(dir);
    free(dir);
    free(db);
    free(ini);
    free(sock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_hundredth_of_a_core),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
