/* tests/bench/process_bench.c - the whole processing of a 10-minute
 * two-channel 10 kHz recording (6 M frames, a 38-edged prism on an
 * endless ramp), in process and as the command a user runs:
 *   process_10min: million samples per second through
 *     pl_process_signals() (despike, omega, release and end, filter,
 *     integrate, spectra, impacts) from calibrated velocities in memory,
 *     and process_10min_seconds, its time (best of 3 in one process: the
 *     arrays' pages are fresh each time, the heap's smaller blocks and
 *     the caches warm), process_10min_cold_seconds the first call's;
 *   process_10min_store_to_store: the same with the chunks read from the
 *     store and the result written back (pl_process_run(), best of 3);
 *   process_10min_command: `bin/prismlab process RUN --db FILE` as a
 *     fresh process, wall time from fork to exit, best of 6, each on a
 *     fresh copy of the store holding the run unprocessed, synced to the
 *     disk (what a user runs after the import), and process_10min_command_reprocess, the
 *     same on a store that holds an earlier result to replace (best of
 *     4); the command and the script below take turns, in two rounds;
 *   process_10min_scipy: tests/bench/scipy_reference.py on the same
 *     recording as a WAV (`prismlab sim --wav`'s format), as a fresh
 *     process, best of 5, in the same minutes (skipped, saying why, when
 *     /usr/bin/python3 has no numpy or scipy), with its time without the
 *     interpreter's start (process_10min_scipy_compute);
 *   process_10min_command_vs_scipy: the SciPy script's time over the
 *     command's (above 1: the command is faster);
 *   process_10min_command_over_inprocess: the command's time over
 *     process_10min_seconds;
 *   process_10min_command_maxrss: the command's peak resident memory;
 *   process_10min_maxrss_per_sample: this process's peak over the run's
 *     samples (bytes), a check that memory stays a small constant times
 *     the run length;
 *   process_10min_impacts: impacts found (a sanity figure);
 *   process_10min_goals_met: issue 29's two goals, the command at least
 *     twice as fast as the script and within 1.3 times the in-process
 *     figure: 1 when both hold, else 0 and a line on stderr for each
 *     missed, with the reason measured (docs/process.md, "Issue 29").
 * PRISMLAB_BIN names the binary (default bin/prismlab), PRISMLAB_SRC the
 * tree (default .), PRISMLAB_PYTHON the interpreter (default
 * /usr/bin/python3); PRISMLAB_BENCH_KEEP=1 leaves the store and the WAV
 * for profiling the command by hand.  Its files are in a folder of its own,
 * made fresh under $TMPDIR (default /tmp) and named on stderr, so that two
 * benches can run at once. */
#include "acquire/sim/simrun.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"
#include "process/beams.h"
#include "process/process.h"
#include "tests/util/longrun.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The bench's folder and the files in it (set_paths()). */
typedef struct {
    char dir[512];
    char db[600];        /* the run, unprocessed */
    char copy[600];      /* the command's copy of it */
    char wav[600];       /* the same recording for the SciPy script */
    char scipy_out[600];
} bench_paths;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "process_bench: %s\n", what);
    exit(1);
}

static void set_paths(bench_paths *p)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(p->dir, sizeof p->dir, "%.480s/prismlab-process-bench.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(p->dir))
        die("cannot make a folder under $TMPDIR");
    snprintf(p->db, sizeof p->db, "%s/store.db", p->dir);
    snprintf(p->copy, sizeof p->copy, "%s/cmd.db", p->dir);
    snprintf(p->wav, sizeof p->wav, "%s/run.wav", p->dir);
    snprintf(p->scipy_out, sizeof p->scipy_out, "%s/scipy.txt", p->dir);
    fprintf(stderr, "process_bench: files in %s\n", p->dir);
}

static void remove_store(const char *db)
{
    char side[640];
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
}

/* The bench's run: the simulator's codes stored as an import would, its
 * prism and ramp in the catalogue (the command reads the slope from the
 * ramp), and the same recording as a WAV for the SciPy script. */
static pl_simrun *make_run(const bench_paths *p, pl_store **store, long long *run_id,
                           pl_err *err)
{
    pl_simrun *s = NULL;
    if (tu_long_run_sim(598.5, &s, err) != PL_OK || pl_simrun_write_wav(s, p->wav, err) != PL_OK)
        die(err->msg);
    remove_store(p->db);
    /* the store whole in its file, as an import leaves it after its
     * checkpoint: the copies the command runs on need no WAL */
    if (tu_long_run_put(p->db, s, run_id, err) != PL_OK ||
        pl_store_open(store, p->db, 0, err) != PL_OK)
        die(err->msg);
    return s;
}

/* A copy on the disk, as an import leaves its store (its checkpoint
 * syncs it): unsynced, the command's own checkpoint would flush the copy's
 * 24 MB with its file (fdatasync 28-31 ms instead of 17-18). */
static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[1 << 16];
    size_t k;
    if (!a || !b)
        die("cannot copy the store");
    while ((k = fread(buf, 1, sizeof buf, a)) > 0)
        if (fwrite(buf, 1, k, b) != k)
            die("cannot copy the store");
    fclose(a);
    if (fflush(b) != 0 || fsync(fileno(b)) != 0 || fclose(b) != 0)
        die("cannot copy the store");
}

/* Runs argv as a fresh process with its output into out (NULL: thrown
 * away); returns its wall time in seconds, -1 when it did not exit 0.
 * *maxrss_kb receives its peak resident memory. */
static double run_timed(char *const argv[], const char *out, long *maxrss_kb)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int nul = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 1);
        if (nul >= 0 && !out)
            dup2(nul, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return -1;
    double dt = now_s() - t0;
    if (maxrss_kb)
        *maxrss_kb = ru.ru_maxrss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? dt : -(double)WEXITSTATUS(status);
}

static double min_of(double a, double b) { return a < 0 || b < a ? b : a; }

/* The command, fresh store each time (fresh = 1) or re-processing. */
static double time_command(const bench_paths *p, const char *bin, long long run_id, int fresh,
                           int reps,
                           long *maxrss_kb)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", run_id);
    char *argv[] = {(char *)bin, "process", id, "--db", (char *)p->copy, NULL};
    double best = -1;
    for (int k = 0; k < reps; k++) {
        if (fresh || k == 0) {
            remove_store(p->copy);
            copy_file(p->db, p->copy);
        }
        if (!fresh && k == 0 && run_timed(argv, NULL, NULL) < 0)
            die("prismlab process failed");
        double dt = run_timed(argv, NULL, maxrss_kb);
        if (dt < 0) {
            fprintf(stderr, "process_bench: '%s process %s --db %s' failed (exit %.0f)\n",
                    bin, id, p->copy, -dt);
            exit(1);
        }
        best = min_of(best, dt);
    }
    return best;
}

/* The SciPy script, best of reps; *compute receives its own time
 * without the interpreter's start.  -1 when it cannot run here. */
static double time_scipy(const bench_paths *p, const char *src, int reps, double *compute)
{
    char script[4096];
    const char *out = p->scipy_out;
    const char *python = getenv("PRISMLAB_PYTHON");
    snprintf(script, sizeof script, "%s/tests/bench/scipy_reference.py", src);
    char *argv[] = {(char *)(python && *python ? python : "/usr/bin/python3"), script, (char *)p->wav, NULL};
    double best = -1;
    *compute = -1;
    if (access(argv[0], X_OK) != 0) {
        printf("# process_10min_scipy: skipped: no %s "
               "(apt-get install python3-numpy python3-scipy)\n", argv[0]);
        return -1;
    }
    for (int k = 0; k < reps; k++) {
        double dt = run_timed(argv, out, NULL), c;
        FILE *f = fopen(out, "r");
        char line[256] = "";
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
            fclose(f);
        }
        if (dt < 0) {
            printf("# process_10min_scipy: skipped: the script exits %.0f%s "
                   "(apt-get install python3-numpy python3-scipy)\n", -dt,
                   dt == -2 ? ": no numpy or scipy" : "");
            unlink(out);
            return -1;
        }
        const char *at = strstr(line, "compute_s=");
        if (at && sscanf(at, "compute_s=%lf", &c) == 1)
            *compute = min_of(*compute, c);
        if (k == 0)
            printf("# %s", line);
        best = min_of(best, dt);
    }
    unlink(out);
    return best;
}

/* pl_process_signals() on the run's calibrated velocities, best of reps;
 * *cold receives the first call's time. */
static double time_inprocess(pl_store *store, long long id, const pl_channel ch[2],
                             size_t n, double rate, const pl_process_config *cfg, int reps,
                             double *cold)
{
    pl_err err = {0};
    pl_process_result r;
    double *v[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    if (!v[0] || !v[1] || pl_run_read_channels(store, id, 0, (long long)n, v, 2, &err) != PL_OK)
        die(v[0] && v[1] ? err.msg : "out of memory");
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n; i++)
            v[k][i] *= ch[k].beam_sign * ch[k].ldv_scale_mps_per_v;
    double best = -1;
    for (int k = 0; k < reps; k++) {
        double t0 = now_s();
        if (pl_process_signals(v[0], v[1], n, rate, ch[0].beam_height_m, ch[1].beam_height_m,
                               38, cfg, &r, &err) != PL_OK)
            die(err.msg);
        best = min_of(best, now_s() - t0);
        if (k == 0)
            *cold = best;
        pl_process_result_free(&r);
    }
    free(v[0]);
    free(v[1]);
    return best;
}

/* Issue 29's goals for the command, and why a missed one is missed: the
 * figures that stand in the way are this run's own, so the note holds on
 * whatever machine printed it.  1 when both are met. */
static int goals_note(double scipy, double cmd, double inproc)
{
    int met = 1;
    if (scipy > 0 && scipy / cmd < 2.0) {
        met = 0;
        fprintf(stderr,
                "process_bench: goal not met: the command at %.2f x the SciPy script's "
                "speed, goal 2 x (%.3f s or less); the processing alone, with no store "
                "read or written, takes %.3f s on this machine (docs/process.md, "
                "\"Issue 29, part 2\": the front end and the impact search)\n",
                scipy / cmd, scipy / 2.0, inproc);
    }
    if (cmd / inproc > 1.3) {
        met = 0;
        fprintf(stderr,
                "process_bench: goal not met: the command at %.2f x the in-process "
                "time, goal 1.3 x; the %.3f s around the processing are the store's "
                "read of 24 MB and its durable write of 28 MB in one transaction, "
                "start and exit (docs/process.md, \"Issue 29, part 3\")\n",
                cmd / inproc, cmd - inproc);
    }
    return met;
}

int main(void)
{
    pl_err err = {0};
    pl_store *store = NULL;
    long long id;
    const char *bin = getenv("PRISMLAB_BIN"), *src = getenv("PRISMLAB_SRC");
    const char *keep = getenv("PRISMLAB_BENCH_KEEP");
    if (!bin || !*bin)
        bin = "bin/prismlab";
    if (!src || !*src)
        src = ".";
    bench_paths p;
    set_paths(&p);
    pl_simrun *s = make_run(&p, &store, &id, &err);
    pl_channel ch[2];
    pl_simrun_channels(s, ch);
    size_t n = pl_simrun_frames(s);
    double rate = pl_simrun_get_config(s)->rate_hz;
    pl_process_config cfg;
    pl_process_config_default(&cfg);
    cfg.lattice.beta_rad = pl_simrun_get_config(s)->model.beta;  /* the ramp's */
    pl_simrun_destroy(s);

    /* The processing proper, from calibrated velocities in memory (what
     * the target is about): read and scaled outside the clock. */
    double cold = -1;
    double dt = time_inprocess(store, id, ch, n, rate, &cfg, 3, &cold);

    /* The whole processing through the library: read, process, write. */
    pl_process_result r;
    double dt_store = -1;
    for (int k = 0; k < 3; k++) {
        double t0 = now_s();
        if (pl_process_run(store, id, &cfg, &r, &err) != PL_OK)
            die(err.msg);
        dt_store = min_of(dt_store, now_s() - t0);
        if (k < 2)
            pl_process_result_free(&r);
    }
    /* What the checks against the physics cost (issue 44: at most 5 % of
     * the processing): the beams against each other, the speed check, the
     * drops' own spacing, the lattice's clock and the moving start, on
     * this run's arrays, best of 3.  (The saturation search is inside the
     * front end's clipping pass, not apart from it.) */
    double dt_checks = -1;
    for (int k = 0; k < 3; k++) {
        double t0 = now_s(), h[2] = {ch[0].beam_height_m, ch[1].beam_height_m};
        pl_phys_steps steps;
        pl_beams_report beams;
        double *v[2] = {r.vp1, r.vp2};   /* both see the prism: left as they are */
        if (pl_beams_check(v, h, r.n, r.rate_hz, r.release, &beams) != 0 || beams.dead)
            die("the beams' check failed on the bench's run");
        pl_phys_lattice clock;
        pl_phys_body body = {38, 0.015, cfg.lattice.beta_rad, NAN};   /* make_run()'s prism */
        if (pl_phys_check_speed(r.omega, r.vp1, r.vp2, r.release, r.end, h, &body, &err) !=
                PL_OK ||
            pl_phys_step_spacing(r.omega, r.theta, r.release, r.end, r.rate_hz, body.N,
                                 &steps) != 0 ||
            pl_phys_lattice_clock(r.impacts, r.n_impacts, r.theta, r.n, r.rate_hz, body.N,
                                  &clock) != 0)
            die("the checks failed on the bench's run");
        (void)pl_phys_moving_at_start(r.vp1, r.vp2, (size_t)(0.2 * r.rate_hz), h[0], h[1]);
        dt_checks = min_of(dt_checks, now_s() - t0);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    size_t impacts = r.n_impacts;
    pl_process_result_free(&r);
    pl_store_close(store);
    /* the copies start from the run unprocessed */
    remove_store(p.db);
    store = NULL;
    s = make_run(&p, &store, &id, &err);
    pl_simrun_destroy(s);
    pl_store_close(store);

    /* The command and the SciPy script in turn, in the same minutes. */
    long rss_kb = 0;
    double cmd = -1, reproc = -1, scipy = -1, scipy_compute = -1;
    for (int round = 0; round < 2; round++) {
        double c, c2, sc, scc = -1;
        c = time_command(&p, bin, id, 1, 3, &rss_kb);
        c2 = time_command(&p, bin, id, 0, 2, NULL);
        sc = time_scipy(&p, src, round == 0 ? 3 : 2, &scc);
        cmd = min_of(cmd, c);
        reproc = min_of(reproc, c2);
        if (sc > 0)
            scipy = min_of(scipy, sc);
        if (scc > 0)
            scipy_compute = min_of(scipy_compute, scc);
        if (sc < 0)
            break;
    }
    printf("process_10min: %.1f MS/s\n", 2.0 * n / dt / 1e6);
    printf("process_10min_seconds: %.3f s\n", dt);
    printf("process_10min_cold_seconds: %.3f s\n", cold);
    printf("process_10min_physics_checks_seconds: %.4f s\n", dt_checks);
    printf("process_10min_physics_checks_share: %.1f %%\n", 100 * dt_checks / dt);
    printf("process_10min_store_to_store: %.1f MS/s\n", 2.0 * n / dt_store / 1e6);
    printf("process_10min_store_to_store_seconds: %.3f s\n", dt_store);
    printf("process_10min_command: %.3f s\n", cmd);
    printf("process_10min_command_reprocess: %.3f s\n", reproc);
    printf("process_10min_command_maxrss: %.0f MB\n", rss_kb / 1024.0);
    if (scipy > 0) {
        printf("process_10min_scipy: %.3f s\n", scipy);
        printf("process_10min_scipy_compute: %.3f s\n", scipy_compute);
        printf("process_10min_command_vs_scipy: %.2f x\n", scipy / cmd);
    }
    printf("process_10min_command_over_inprocess: %.2f x\n", cmd / dt);
    printf("process_10min_maxrss_per_sample: %.1f B\n", ru.ru_maxrss * 1024.0 / (2.0 * n));
    printf("process_10min_impacts: %zu count\n", impacts);
    printf("process_10min_goals_met: %d bool\n", goals_note(scipy, cmd, dt));
    if (!keep || strcmp(keep, "1") != 0) {
        remove_store(p.db);
        remove_store(p.copy);
        unlink(p.wav);
        rmdir(p.dir);
    }
    return 0;
}
