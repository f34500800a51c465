/* tests/bench/process_memory_bench.c - the peak memory of `prismlab
 * process RUN --db FILE` (a fresh process, ru_maxrss from wait4) on
 * recordings of 10 s, 10 minutes and 80 minutes at 10 kHz: a 38-edged
 * prism rolling on an endless ramp (tests/bench/process_bench.c's run,
 * longer or shorter), stored as an import would store it:
 *   process_maxrss_10s, process_maxrss_10min, process_maxrss_80min: MB;
 *   process_80min_seconds: the 80-minute command's wall time;
 *   process_80min_impacts: what it found (a sanity figure).
 * Runs up to pl_process_config.segment_frames are processed whole, longer
 * ones in segments (docs/process.md, "Long runs"): the 80-minute figure is
 * the bound's, the others the whole path's.  The 80-minute run costs
 * about a minute to simulate and store and as much to process; its store
 * is 200 MB in a folder of its own under $TMPDIR (named on stderr).
 * PRISMLAB_BIN names the binary (default bin/prismlab);
 * PRISMLAB_BENCH_KEEP=1 leaves the stores (run-10s.db, run-10min.db,
 * run-80min.db, each processed) for comparing by hand. */
#include "tests/util/longrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "process_memory_bench: %s\n", what);
    exit(1);
}

/* `bin process ID --db path` as a fresh process: its peak resident
 * memory in kB into *rss_kb, its wall time returned; dies when it fails.
 * Its output goes to out. */
static double run_process(const char *bin, const char *path, long long id, const char *out,
                          long *rss_kb)
{
    char sid[24];
    snprintf(sid, sizeof sid, "%lld", id);
    char *argv[] = {(char *)bin, "process", sid, "--db", (char *)path, NULL};
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        if (!freopen(out, "w", stdout))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "process_memory_bench: '%s process %s --db %s' failed\n", bin, sid,
                path);
        exit(1);
    }
    *rss_kb = ru.ru_maxrss;
    return now_s() - t0;
}

/* The impacts the command's output names ("... impacts=K ..."); -1 if none. */
static long impacts_of(const char *out)
{
    FILE *f = fopen(out, "r");
    char line[512];
    long k = -1;
    while (f && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, " impacts=");
        if (at && sscanf(at, " impacts=%ld", &k) == 1)
            break;
    }
    if (f)
        fclose(f);
    return k;
}

static void remove_store(const char *db)
{
    char side[700];
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
}

int main(void)
{
    const char *bin = getenv("PRISMLAB_BIN"), *tmp = getenv("TMPDIR");
    const char *keep = getenv("PRISMLAB_BENCH_KEEP");
    if (!bin || !*bin)
        bin = "bin/prismlab";
    char dir[512], db[600], out[600];
    snprintf(dir, sizeof dir, "%.480s/prismlab-memory-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        die("cannot make a folder under $TMPDIR");
    fprintf(stderr, "process_memory_bench: files in %s\n", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    static const struct {
        const char *name;
        double duration_s;
    } runs[] = {{"10s", 8.5}, {"10min", 598.5}, {"80min", 4798.5}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        long long id;
        long rss_kb = 0;
        snprintf(db, sizeof db, "%s/run-%s.db", dir, runs[k].name);
        pl_err err = {0};
        if (tu_long_run_store(db, runs[k].duration_s, &id, &err) != PL_OK)
            die(err.msg);
        double dt = run_process(bin, db, id, out, &rss_kb);
        printf("process_maxrss_%s: %.0f MB\n", runs[k].name, rss_kb / 1024.0);
        if (!strcmp(runs[k].name, "80min")) {
            printf("process_80min_seconds: %.1f s\n", dt);
            printf("process_80min_impacts: %ld count\n", impacts_of(out));
        }
        fflush(stdout);
        if (!keep || strcmp(keep, "1") != 0)
            remove_store(db);
    }
    unlink(out);
    if (!keep || strcmp(keep, "1") != 0)
        rmdir(dir);
    return 0;
}
