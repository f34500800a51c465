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
#include "acquire/sim/simrun.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"

#include <math.h>
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

/* A store at path holding one run of duration_s of rolling (1 s of
 * lead-in, 0.5 s of tail), unprocessed; its id into *run_id. */
static void make_store(const char *path, double duration_s, long long *run_id)
{
    pl_err err = {0};
    pl_simrun_config c;
    pl_simrun_config_default(&c);
    c.model.N = 38;
    c.model.lambda0 = 4.5 * M_PI / 180;
    c.model.ramp_length = 0;     /* an endless ramp */
    c.model.duration = duration_s;
    c.lead_in_s = 1.0;
    c.tail_s = 0.5;
    pl_simrun *s = NULL;
    if (pl_simrun_create(&s, &c, &err) != PL_OK)
        die(err.msg);
    pl_prism pr;
    pl_prism_init(&pr);
    snprintf(pr.name, sizeof pr.name, "bench-38");
    pr.n_edges = 38;
    pr.a0_m = 0.015;
    pr.length_m = 0.05;
    pr.mass_kg = 0.27;
    snprintf(pr.material, sizeof pr.material, "steel");
    pl_ramp ramp;
    pl_ramp_init(&ramp);
    snprintf(ramp.name, sizeof ramp.name, "bench-ramp");
    snprintf(ramp.material, sizeof ramp.material, "glass");
    ramp.beta_rad = c.model.beta;
    ramp.mu_s = c.model.mu_s;
    pl_run_info info;
    pl_run_info_init(&info);
    snprintf(info.prism, sizeof info.prism, "bench-38");
    snprintf(info.ramp, sizeof info.ramp, "bench-ramp");
    info.sample_rate_hz = c.rate_hz;
    info.n_channels = 2;
    info.format = PL_FMT_U16;
    info.little_endian = pl_host_little_endian();
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    info.synthetic = 1;
    pl_channel ch[2];
    pl_simrun_channels(s, ch);
    size_t n = pl_simrun_frames(s);
    const uint16_t *codes = pl_simrun_codes(s);
    pl_store *store = NULL;
    unlink(path);
    if (pl_store_open(&store, path, PL_STORE_CREATE, &err) != PL_OK ||
        pl_prism_add(store, &pr, &err) != PL_OK || pl_ramp_add(store, &ramp, &err) != PL_OK ||
        pl_store_begin(store, &err) != PL_OK || pl_run_create(store, &info, ch, &err) != PL_OK)
        die(err.msg);
    for (size_t at = 0; at < n; at += 65536) {
        size_t m = n - at < 65536 ? n - at : 65536;
        if (pl_run_append_chunk(store, info.id, (long long)at, (long long)m,
                                codes + 2 * at, m * 4, &err) != PL_OK)
            die(err.msg);
    }
    if (pl_store_commit(store, &err) != PL_OK)
        die(err.msg);
    pl_store_close(store);   /* its checkpoint: the command reads no WAL */
    pl_simrun_destroy(s);
    *run_id = info.id;
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

/* The impacts the command's output names ("impacts: K ..."); -1 if none. */
static long impacts_of(const char *out)
{
    FILE *f = fopen(out, "r");
    char line[512];
    long k = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, " impacts: %ld", &k) == 1)
            break;
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
        make_store(db, runs[k].duration_s, &id);
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
