/* tests/bench/sweep_bench.c - the prism's phase map
 * (fixtures/sweeps/prism-phase.ini: 10,000 runs of 7 s) through `mpirun
 * -np K bin/prismlab sweep`, K = 1 and 2 taken in turn
 * PRISMLAB_SWEEP_BENCH_REPS times (default 3; the machine is shared, so
 * the best of each), then a kill and a resume:
 *   sweep_phase_map_10k_2ranks: the whole mpirun command with 2 ranks, s;
 *   sweep_phase_map_10k_1rank: the same with 1 rank, s;
 *   sweep_parallel_efficiency_1to2: T1 / (2 T2), %;
 *   sweep_busy_2ranks: the ranks' time in the model over 2 x the sweep's
 *     wall time, % (what the machine's other load does not take away);
 *   sweep_sched_per_point: the workers' time waiting for work (lock,
 *     request, answer) over the points, us;
 *   sweep_cheapest_point: the cheapest point's model time, us;
 *   sweep_sched_share_of_cheapest: the two above as a share, %;
 *   sweep_store_per_point: rank 0's writer time over the points, us;
 *   sweep_kill_stored, sweep_kill_lost_in_flight: a rank SIGKILLed after
 *     4000 points are stored: points stored, and points handed out but not
 *     stored at the last store (work lost to the kill);
 *   sweep_resume_computed: the points --resume computed (= 10000 - stored,
 *     else the bench fails);
 * and first, in this process, the cost of one roughplane point (a 2 s
 * slide, mu 0.3, v0 (1, 0.5), spin 4 rad/s but for the particle), the
 * median model time of 21 (pl_sweep_compute, as a worker runs it):
 *   sweep_roughplane_point_BODY: particle, pair, particles (3), rod and
 *     board (GSL quadrature over the base at every step), the full
 *     equations, us;
 *   sweep_roughplane_point_board_hack: the board's decoupled model, us;
 *   sweep_roughplane_point_board_series100: the board with its 7 series
 *     at 100 Hz (201 integration stops), us.
 */
#include "db/store.h"
#include "model/sweep/spec.h"

#include <gsl/gsl_errno.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *ini = "fixtures/sweeps/prism-phase.ini";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    double cmd_s, wall_s, compute_s, sched_us, store_us, cheapest_us;
    long long before, computed;
} result;

/* Runs mpirun -np k ... and parses prismlab's last line. */
static int run(int k, const char *db, int resume, result *r)
{
    char cmd[1024], line[1024];
    snprintf(cmd, sizeof cmd, "%s%s%smpirun %s -np %d bin/prismlab sweep %s --db %s%s 2>&1",
             resume ? "" : "bin/prismlab db init --db ", resume ? "" : db, resume ? "" : " >/dev/null && ",
             getuid() == 0 ? "--allow-run-as-root" : "", k, ini, db, resume ? " --resume" : "");
    double t0 = now_s();
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int got = 0;
    while (fgets(line, sizeof line, p)) {
        long long stored, total, failed, chunks;
        int workers;
        if (sscanf(line, "sweep %*s %lld/%lld points stored (%lld before, %lld computed, "
                   "%lld refused or failed by the model) in %lf s by %d workers; compute "
                   "%lf s; %lld chunks, scheduling %lf us a point, storing %lf us a point, "
                   "cheapest point %lf us", &stored, &total, &r->before, &r->computed,
                   &failed, &r->wall_s, &workers, &r->compute_s, &chunks, &r->sched_us,
                   &r->store_us, &r->cheapest_us) == 12)
            got = 1;
        else
            fputs(line, stderr);
    }
    int st = pclose(p);
    r->cmd_s = now_s() - t0;
    return got && st == 0 ? 0 : -1;
}

static long long stored_points(const char *db)
{
    pl_store *s;
    pl_err err = {0};
    long long n = 0;
    if (access(db, F_OK) != 0 || pl_store_open(&s, db, 0, &err) != PL_OK)
        return 0;
    if (pl_store_count_rows(s, "sweep_point", &n, &err) != PL_OK)
        n = 0;
    pl_store_close(s);
    return n;
}

/* A prismlab child of pid (a rank of mpirun), or 0.  The rank is the
 * dispatcher exec'd into libexec's prismlab-sweep-mpi, whose name the
 * kernel keeps as "prismlab-sweep-m": a name that starts prismlab. */
static pid_t rank_of(pid_t parent)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int pid, ppid;
        char comm[64];
        if (fgets(buf, sizeof buf, f) &&
            sscanf(buf, "%d (%63[^)]) %*c %d", &pid, comm, &ppid) == 3 &&
            ppid == parent && !strncmp(comm, "prismlab", 8) && pid > found)
            found = pid;
        fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median model time of a roughplane point, us; -1 on failure. */
static double roughplane_point(const char *body, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text, "[sweep]\nname = rp\nmodel = roughplane\n%s[fixed]\n"
             "body = %s\nmu = 0.3\nv0 = 1, 0.5\nomega0 = %s\nduration = 2\n"
             "particle = 0.1,0,0 / 0.2,0.05,0 / 0.1,0.02,0.03\nmass = 0.5\nlength = 0.2\n"
             "width = 0.1\nmasses = 1, 2\n[repeat]\ncount = 21\n", extra, body,
             strcmp(body, "particle") ? "4" : "0");
    if (strstr(extra, "hack"))   /* the flag goes to [fixed] */
        snprintf(text, sizeof text, "[sweep]\nname = rp\nmodel = roughplane\n[fixed]\n"
                 "hack = yes\nbody = %s\nmu = 0.3\nv0 = 1, 0.5\nomega0 = 4\nduration = 2\n"
                 "mass = 0.5\nlength = 0.2\nwidth = 0.1\n[repeat]\ncount = 21\n", body);
    pl_sweep_spec *s;
    pl_sweep_out o = {0};
    pl_err err = {0};
    double cost[21];
    if (pl_sweep_spec_parse(&s, text, "bench.ini", &err) != PL_OK) {
        fprintf(stderr, "sweep_bench: %s\n", err.msg);
        return -1;
    }
    int ok = 1;
    for (int i = 0; i < 21 && ok; i++) {
        ok = pl_sweep_compute(s, i, &o, &err) == PL_OK && o.ok;
        cost[i] = o.cost_s;
    }
    if (!ok)
        fprintf(stderr, "sweep_bench: roughplane %s: %s %s\n", body, err.msg,
                o.result ? o.result : "");
    pl_sweep_out_free(&o);
    pl_sweep_spec_destroy(s);
    qsort(cost, 21, sizeof cost[0], cmp_double);
    return ok ? 1e6 * cost[10] : -1;
}

int main(void)
{
    gsl_set_error_handler_off();   /* as prismlab's main */
    static const char *bodies[] = {"particle", "pair", "particles", "rod", "board"};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        double us = roughplane_point(bodies[i], "");
        if (us < 0)
            return 1;
        printf("sweep_roughplane_point_%s: %.1f us\n", bodies[i], us);
    }
    double hack = roughplane_point("board", "hack"), series =
        roughplane_point("board", "series = t,x,y,theta,vx,vy,omega\nseries-rate = 100\n");
    if (hack < 0 || series < 0)
        return 1;
    printf("sweep_roughplane_point_board_hack: %.1f us\n", hack);
    printf("sweep_roughplane_point_board_series100: %.1f us\n", series);
    fflush(stdout);

    char tmpl[] = "/tmp/prismlab-sweep-bench.XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir) {
        perror("mkdtemp");
        return 1;
    }
    int reps = getenv("PRISMLAB_SWEEP_BENCH_REPS") ? atoi(getenv("PRISMLAB_SWEEP_BENCH_REPS")) : 3;
    if (reps < 1)
        reps = 1;
    result best[3];
    for (int k = 1; k <= 2; k++)
        best[k].cmd_s = INFINITY;
    char db[256], cmd[1200];
    for (int i = 0; i < reps; i++)
        for (int k = 2; k >= 1; k--) {
            result r;
            snprintf(db, sizeof db, "%s/k%d-%d.db", dir, k, i);
            if (run(k, db, 0, &r) != 0 || r.computed != 10000) {
                fprintf(stderr, "sweep_bench: mpirun -np %d failed\n", k);
                return 1;
            }
            if (r.cmd_s < best[k].cmd_s)
                best[k] = r;
            snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", db, db, db);
            if (system(cmd) != 0)
                return 1;
        }
    printf("sweep_phase_map_10k_2ranks: %.2f s\n", best[2].cmd_s);
    printf("sweep_phase_map_10k_1rank: %.2f s\n", best[1].cmd_s);
    printf("sweep_parallel_efficiency_1to2: %.1f %%\n", 100 * best[1].cmd_s / (2 * best[2].cmd_s));
    printf("sweep_busy_2ranks: %.1f %%\n", 100 * best[2].compute_s / (2 * best[2].wall_s));
    printf("sweep_sched_per_point: %.3f us\n", best[2].sched_us);
    printf("sweep_cheapest_point: %.1f us\n", best[2].cheapest_us);
    printf("sweep_sched_share_of_cheapest: %.3f %%\n", 100 * best[2].sched_us / best[2].cheapest_us);
    printf("sweep_store_per_point: %.1f us\n", best[2].store_us);

    /* kill a rank half-way, then resume */
    snprintf(db, sizeof db, "%s/kill.db", dir);
    snprintf(cmd, sizeof cmd, "bin/prismlab db init --db %s >/dev/null && exec mpirun %s -np 2 "
             "bin/prismlab sweep %s --db %s >/dev/null 2>&1", db,
             getuid() == 0 ? "--allow-run-as-root" : "", ini, db);
    pid_t mp = fork();
    if (mp == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    double t0 = now_s();
    while (stored_points(db) < 4000 && now_s() - t0 < 120) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    pid_t rk = rank_of(mp);
    if (rk <= 0 || kill(rk, SIGKILL) != 0) {
        fprintf(stderr, "sweep_bench: no rank to kill\n");
        kill(mp, SIGKILL);
        return 1;
    }
    int status;
    waitpid(mp, &status, 0);
    long long stored = stored_points(db);
    snprintf(cmd, sizeof cmd, "sqlite3 %s 'SELECT points_handed - points_done FROM sweep_session'",
             db);
    FILE *p = popen(cmd, "r");
    long long lost = -1;
    if (!p || fscanf(p, "%lld", &lost) != 1)
        lost = -1;
    if (p)
        pclose(p);
    result r;
    if (run(2, db, 1, &r) != 0 || r.before != stored || r.computed != 10000 - stored) {
        fprintf(stderr, "sweep_bench: resume computed %lld points after %lld stored\n",
                r.computed, stored);
        return 1;
    }
    printf("sweep_kill_stored: %lld points\n", stored);
    printf("sweep_kill_lost_in_flight: %lld points\n", lost);
    printf("sweep_resume_computed: %lld points\n", r.computed);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
