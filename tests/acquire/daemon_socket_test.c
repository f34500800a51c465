/* tests/acquire/daemon_socket_test.c - the daemon's control socket against
 * the real binary recording the rig simulator in real time: a client that
 * trickles one byte every 180 ms neither delays other clients nor costs a
 * frame; the socket is born 0660; a file, a symlink or a live daemon's
 * socket at the socket path is left alone and refused; a stale socket is
 * replaced; a symlink as the recorder lock is refused; another user of the
 * socket's group may ask status but not quit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/daemon.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <errno.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *dir, *db, *ini, *sock, *log;
    pid_t daemon;   /* the last one started, killed by teardown */
} fixture;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pause_s(double s)
{
    nanosleep(&(struct timespec){.tv_sec = (time_t)s,
                                 .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)},
              NULL);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("dsock");
    f->db = tu_path(f->dir, "d.db");
    f->ini = tu_path(f->dir, "rig.ini");
    f->sock = tu_path(f->dir, "d.sock");
    f->log = tu_path(f->dir, "log");
    pl_err err = {0};
    if (tu_fixture_db(f->db, NULL, NULL, &err) != PL_OK)
        fail_msg("%s", err.msg);
    char ini[1024];
    snprintf(ini, sizeof ini,
             "[daq]\nsource = sim\nrate_hz = 10000\n"
             "[beams]\nh1_m = 0.0199\nh2_m = 0.0116\nsign1 = 1\nsign2 = -1\n"
             "ldv_scale_mps_per_v = 0.025\n"
             "[store]\ndb = %s\n"
             "[run]\nprism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\n"
             "[sim]\nseed = 2\npaced = 1\n", f->db);
    assert_int_equal(tu_write_file(f->ini, ini), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->daemon > 0 && kill(f->daemon, SIGKILL) == 0)
        waitpid(f->daemon, NULL, 0);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f->ini);
    free(f->sock);
    free(f->log);
    free(f);
    return 0;
}

/* Starts `prismlab acquire daemon` on f's rig and socket (stderr to the
 * log); returns its pid. */
static pid_t start_daemon(fixture *f, const char *sock)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *l = freopen(f->log, "a", stderr);
        l = freopen("/dev/null", "w", stdout);
        (void)l;
        execl(tu_prismlab_path(), tu_prismlab_path(), "acquire", "daemon",
              "--config", f->ini, "--socket", sock, (char *)NULL);
        _exit(127);
    }
    f->daemon = pid;
    return pid;
}

static int connect_to(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void wait_socket(const char *path)
{
    for (int i = 0; i < 100; i++) {
        int fd = connect_to(path);
        if (fd >= 0) {
            close(fd);
            return;
        }
        pause_s(0.05);
    }
    fail_msg("%s: no daemon came up", path);
}

static void ask(const char *sock, const char *cmd, char *out, size_t size)
{
    pl_err err = {0};
    if (pl_daemon_command(sock, cmd, out, size, &err) != PL_OK)
        fail_msg("%s: %s", cmd, err.msg);
}

static long long status_frames(const char *sock)
{
    char r[256];
    ask(sock, "status", r, sizeof r);
    const char *p = strstr(r, "frames=");
    assert_non_null(p);
    return atoll(p + 7);
}

static void stop_daemon(pid_t pid)
{
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_slow_client_stalls_nothing(void **state)
{
    fixture *f = *state;
    pid_t d = start_daemon(f, f->sock);
    wait_socket(f->sock);
    struct stat sb;
    assert_int_equal(lstat(f->sock, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0660);
    char r[256];
    ask(f->sock, "start", r, sizeof r);
    assert_non_null(strstr(r, "ok recording run=1"));

    /* the trickler: 30 bytes of a line, one every 180 ms (5.4 s) */
    pid_t t = fork();
    assert_true(t >= 0);
    if (t == 0) {
        int fd = connect_to(f->sock);
        for (int i = 0; i < 30 && fd >= 0; i++) {
            if (send(fd, i == 29 ? "\n" : "x", 1, MSG_NOSIGNAL) != 1)
                break;
            pause_s(0.18);
        }
        _exit(0);
    }
    pause_s(0.3);
    double worst = 0;
    long long first = status_frames(f->sock), last = first;
    for (int i = 0; i < 12; i++) {
        double t0 = now_s();
        last = status_frames(f->sock);
        double dt = now_s() - t0;
        if (dt > worst)
            worst = dt;
        pause_s(0.3);
    }
    waitpid(t, NULL, 0);
    print_message("status took at most %.3f s while a client trickled; "
                  "frames %lld -> %lld\n", worst, first, last);
    if (worst > 0.5)
        fail_msg("a status took %.3f s while another client trickled", worst);
    /* about 12 x 0.3 s of frames committed meanwhile (10 kHz) */
    assert_true(last - first > 25000);
    ask(f->sock, "stop", r, sizeof r);
    assert_non_null(strstr(r, "ok stopped run=1"));
    stop_daemon(d);

    pl_store *s = NULL;
    pl_err err = {0};
    pl_run_info info;
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    assert_int_equal(pl_run_get(s, 1, &info, &err), PL_OK);
    assert_int_equal(info.state, PL_RUN_COMPLETE);   /* not overrun: 0 lost */
    assert_int_equal(info.overrun_frame, -1);
    pl_store_close(s);
    assert_int_equal(lstat(f->sock, &sb), -1);   /* removed at exit */
}

/* Reads what is there on fd (waiting at most ms) into buf at *len. */
static void drain(int fd, char *buf, size_t *len, size_t size, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (*len + 1 < size && poll(&p, 1, ms) > 0) {
        ssize_t r = read(fd, buf + *len, size - 1 - *len);
        if (r <= 0)
            break;
        *len += (size_t)r;
        ms = 0;
    }
    buf[*len] = '\0';
}

/* The live stream: 3 clients that read and 1 that never does while a run
 * records.  The readers get every block in order (each D line starts
 * where the one before ended), the stalled one's queue stays bounded (it
 * is told of the lines it lost with a G line), status stays quick, and
 * the run loses no frame. */
static void test_streams_are_bounded(void **state)
{
    fixture *f = *state;
    pid_t d = start_daemon(f, f->sock);
    wait_socket(f->sock);
    int fd[4];
    for (int i = 0; i < 4; i++) {
        fd[i] = connect_to(f->sock);
        assert_true(fd[i] >= 0);
        assert_int_equal(send(fd[i], "stream\n", 7, MSG_NOSIGNAL), 7);
    }
    /* the stalled client: a small receive buffer, never read */
    int small = 4096;
    setsockopt(fd[3], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    char r[256];
    /* 2 more streams make 6; a seventh is refused, commands still go */
    int more[2];
    for (int i = 0; i < 2; i++) {
        more[i] = connect_to(f->sock);
        assert_int_equal(send(more[i], "stream\n", 7, MSG_NOSIGNAL), 7);
    }
    pause_s(0.2);
    ask(f->sock, "stream", r, sizeof r);
    assert_non_null(strstr(r, "error stream: 6 viewers already stream"));
    for (int i = 0; i < 2; i++)
        close(more[i]);
    ask(f->sock, "start", r, sizeof r);
    assert_non_null(strstr(r, "ok recording run=1"));
    enum { CAP = 8 << 20 };
    char *got[3];
    size_t len[3] = {0};
    for (int i = 0; i < 3; i++)
        got[i] = malloc(CAP);
    double worst = 0;
    /* 6 s of wall time.  The stalled client holds about 160 kB (the
     * daemon's 64 KiB queue and the kernel's socket buffers); 40 turns of
     * 0.1 s made 87-89 blocks, 163 kB, so whether any line was dropped
     * (and a G line owed) hung on two blocks, and beside CPU hogs it was
     * not.  6 s makes about 240 kB, and the stalled client still takes
     * nothing for less than the daemon's STREAM_STALL_S (10 s). */
    double t_end = now_s() + 6.0;
    for (int k = 0; now_s() < t_end; k++) {
        for (int i = 0; i < 3; i++)
            drain(fd[i], got[i], &len[i], CAP, 0);
        if (k % 5 == 0) {
            double t0 = now_s();
            status_frames(f->sock);
            worst = fmax(worst, now_s() - t0);
        }
        pause_s(0.1);
    }
    ask(f->sock, "stop", r, sizeof r);
    assert_non_null(strstr(r, "ok stopped run=1"));
    for (int i = 0; i < 3; i++)
        drain(fd[i], got[i], &len[i], CAP, 200);
    /* each reader: D lines without a gap, about 6 s of frames (the
     * verdict is kept until the buffers are freed: a failed test must not
     * bury its message under a leak report of 24 MB) */
    char bad[200] = "";
    for (int i = 0; i < 3 && !bad[0]; i++) {
        if (strncmp(got[i], "ok streaming\n", 13) != 0)
            snprintf(bad, sizeof bad, "client %d: no 'ok streaming' first", i);
        long long next = -1, frames = 0;
        int lines = 0;
        for (char *line = strtok(got[i], "\n"); line && !bad[0]; line = strtok(NULL, "\n")) {
            /* E: the live search's events (acquire/live.h), since 1f50b17 */
            if (line[0] != 'o' && line[0] != 'S' && line[0] != 'D' && line[0] != 'E')
                snprintf(bad, sizeof bad, "client %d: a line '%.40s'", i, line);
            if (line[0] != 'D')
                continue;
            double stamp, rate;
            long long first;
            int k, n;
            if (sscanf(line, "D %lf %lld %lf %d %d", &stamp, &first, &rate, &k, &n) != 5 ||
                k != 10)
                snprintf(bad, sizeof bad, "client %d: a D line '%.60s'", i, line);
            else if (next >= 0 && first != next)
                snprintf(bad, sizeof bad, "client %d: a D line starts at frame %lld, the one "
                         "before ended at %lld", i, first, next);
            next = first + (long long)n * k;
            frames += (long long)n * k;
            lines++;
        }
        print_message("stream client %d: %d blocks, %lld frames in order\n", i, lines, frames);
        if (!bad[0] && frames <= 55000)
            snprintf(bad, sizeof bad, "client %d: %lld frames in 6 s", i, frames);
    }
    if (bad[0]) {
        for (int i = 0; i < 4; i++)
            close(fd[i]);
        for (int i = 0; i < 3; i++)
            free(got[i]);
        stop_daemon(d);
        fail_msg("%s", bad);
    }
    /* the stalled one: its backlog is bounded; reading it now shows the loss */
    char *late = malloc(CAP);
    size_t ll = 0;
    /* the daemon announces the loss with its next line once there is
     * room: a status line every 0.5 s, so in well under a second on a
     * quiet machine; beside 4 CPU hogs draining the backlog takes longer
     * (the wait is the machine's, not the daemon's) */
    double until = now_s() + 5;
    do
        drain(fd[3], late, &ll, CAP, 100);
    while (!strstr(late, "\nG ") && now_s() < until);
    print_message("stalled client: %zu bytes queued for it; status took at most %.3f s\n",
                  ll, worst);
    assert_true(ll < 512 * 1024);
    assert_non_null(strstr(late, "\nG "));
    assert_true(worst < 0.5);
    for (int i = 0; i < 4; i++)
        close(fd[i]);
    for (int i = 0; i < 3; i++)
        free(got[i]);
    free(late);
    stop_daemon(d);
    pl_store *s = NULL;
    pl_err err = {0};
    pl_run_info info;
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    assert_int_equal(pl_run_get(s, 1, &info, &err), PL_OK);
    assert_int_equal(info.state, PL_RUN_COMPLETE);
    assert_int_equal(info.overrun_frame, -1);
    pl_store_close(s);
}

static void test_socket_path_guarded(void **state)
{
    fixture *f = *state;
    char r[256];
    /* a regular file: kept, refused */
    assert_int_equal(tu_write_file(f->sock, "precious\n"), 0);
    pid_t d = start_daemon(f, f->sock);
    int status;
    waitpid(d, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    FILE *fp = fopen(f->sock, "r");
    assert_non_null(fp);
    assert_non_null(fgets(r, sizeof r, fp));
    fclose(fp);
    assert_string_equal(r, "precious\n");
    /* a symlink to a file: neither followed nor removed */
    char *target = tu_path(f->dir, "target");
    assert_int_equal(rename(f->sock, target), 0);
    assert_int_equal(symlink(target, f->sock), 0);
    d = start_daemon(f, f->sock);
    waitpid(d, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    struct stat sb;
    assert_int_equal(lstat(f->sock, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(stat(target, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    unlink(f->sock);
    /* a stale socket (its daemon killed) is replaced */
    d = start_daemon(f, f->sock);
    wait_socket(f->sock);
    kill(d, SIGKILL);
    waitpid(d, NULL, 0);
    assert_int_equal(lstat(f->sock, &sb), 0);
    d = start_daemon(f, f->sock);
    wait_socket(f->sock);
    ask(f->sock, "status", r, sizeof r);
    assert_non_null(strstr(r, "ok state=idle"));
    /* a live daemon's socket is not taken over (another database) */
    char *db2 = tu_path(f->dir, "other.db"), *ini2 = tu_path(f->dir, "rig2.ini");
    char ini[512];
    pl_err e = {0};
    if (tu_fixture_db(db2, NULL, NULL, &e) != PL_OK)
        fail_msg("%s", e.msg);
    snprintf(ini, sizeof ini, "[daq]\nsource = sim\nrate_hz = 10000\n[beams]\n"
             "h1_m = 0.0199\nh2_m = 0.0116\nsign1 = 1\nsign2 = -1\n"
             "ldv_scale_mps_per_v = 0.025\n[store]\ndb = %s\n[run]\n"
             "prism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\n", db2);
    assert_int_equal(tu_write_file(ini2, ini), 0);
    char err[4096];
    const char *argv[] = {"prismlab", "acquire", "daemon", "--config", ini2,
                          "--socket", f->sock, NULL};
    assert_int_not_equal(tu_prismlab(NULL, err, sizeof err, argv), 0);
    if (!strstr(err, "a daemon answers on this socket"))
        fail_msg("a second daemon on a live socket: %s", err);
    ask(f->sock, "status", r, sizeof r);   /* the first still serves */
    assert_non_null(strstr(r, "ok state=idle"));
    stop_daemon(d);
    /* a symlink as the recorder lock is refused */
    char lock[1100];
    snprintf(lock, sizeof lock, "%s.recorder.lock", f->db);
    unlink(lock);
    assert_int_equal(symlink(target, lock), 0);
    const char *argv2[] = {"prismlab", "acquire", "daemon", "--config", f->ini,
                           "--socket", f->sock, NULL};
    assert_int_not_equal(tu_prismlab(NULL, err, sizeof err, argv2), 0);
    assert_non_null(strstr(err, "a symbolic link: refused"));
    free(target);
    free(db2);
    free(ini2);
}

static void test_only_owner_quits(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0) {
        print_message("skipped: needs root to act as another user\n");
        skip();
    }
    assert_int_equal(chmod(f->dir, 0710), 0);   /* the group may reach it */
    pid_t d = start_daemon(f, f->sock);
    wait_socket(f->sock);
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        /* another user in the socket's group (0660 lets it connect) */
        if (setgroups(0, NULL) != 0 || setgid(getegid()) != 0 || setuid(65534) != 0)
            _exit(3);
        char r[256];
        pl_err err = {0};
        if (pl_daemon_command(f->sock, "status", r, sizeof r, &err) != PL_OK ||
            strncmp(r, "ok state=idle", 13))
            _exit(4);
        if (pl_daemon_command(f->sock, "quit", r, sizeof r, &err) != PL_OK ||
            !strstr(r, "error quit: only user 0 may stop this daemon"))
            _exit(5);
        _exit(0);
    }
    int status;
    waitpid(c, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char r[256];
    ask(f->sock, "status", r, sizeof r);   /* still there */
    assert_non_null(strstr(r, "ok state=idle"));
    ask(f->sock, "quit", r, sizeof r);
    assert_non_null(strstr(r, "ok quitting"));
    waitpid(d, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    alarm(120);   /* a hung daemon or client fails the test, not the check */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slow_client_stalls_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_are_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_path_guarded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_owner_quits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
