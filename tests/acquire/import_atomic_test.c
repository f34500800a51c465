/* tests/acquire/import_atomic_test.c - an import is all or nothing and
 * never hangs: WAVs at 1 kHz to 4 kHz lasting 20 s import whole (the writer
 * and the reader used to wait on each other, at 1 Hz); below 1 kHz, which
 * no LDV run is recorded at, they are refused at once naming the rate; an import killed by SIGKILL,
 * SIGTERM or SIGINT half-way leaves no run, the earlier runs byte for byte
 * as they were, db check clean, and the file imports again without
 * --force; a recorder that starts during an import marks nothing
 * interrupted; a file of no frames is refused; a ring that would not fit
 * in memory is bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/import.h"
#include "acquire/record.h"
#include "acquire/writer.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <signal.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A 2-channel 16-bit WAV of frames frames at rate Hz (a ramp per channel,
 * so every chunk's bytes differ). */
static void write_wav(const char *path, int rate, long frames, int salt)
{
    SF_INFO info = {.samplerate = rate, .channels = 2,
                    .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    if (!f)
        fail_msg("%s: %s", path, sf_strerror(NULL));
    short *v = malloc(2 * 4096 * sizeof *v);
    for (long k = 0; k < frames; k += 4096) {
        long n = frames - k < 4096 ? frames - k : 4096;
        for (long i = 0; i < n; i++) {
            v[2 * i] = (short)((k + i) * 7 + salt);
            v[2 * i + 1] = (short)(-(k + i) * 3 - salt);
        }
        assert_int_equal(sf_writef_short(f, v, n), n);
    }
    sf_close(f);
    free(v);
}

static void import_options(pl_import_options *o, const char *path)
{
    pl_import_options_init(o);
    o->path = path;
    o->wav.full_scale_v = 10;
    for (int c = 0; c < 2; c++) {
        o->beams.beam_height_m[c] = 0.02 - 0.01 * c;
        o->beams.beam_sign[c] = c ? -1 : 1;
        o->beams.ldv_scale_mps_per_v[c] = 0.025;
    }
}

/* Waits for child up to seconds; kills it and fails when it takes longer
 * (a hang), returns its wait status otherwise. */
static int wait_for(pid_t child, double seconds, const char *what)
{
    int status = 0;
    for (double t = 0; t < seconds; t += 0.01) {
        if (waitpid(child, &status, WNOHANG) == child)
            return status;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    fail_msg("%s: still running after %.0f s (hung)", what, seconds);
    return -1;
}

static long long count_rows(const char *db, const char *table)
{
    pl_store *s = NULL;
    pl_err err = {0};
    long long n = -1;
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    assert_int_equal(pl_store_count_rows(s, table, &n, &err), PL_OK);
    pl_store_close(s);
    return n;
}

static void no_problem(void *ctx, long long run, long long chunk, const char *what)
{
    (void)ctx;
    fail_msg("db check: run %lld chunk %lld: %s", run, chunk, what);
}

static void check_store(const char *db)
{
    pl_store *s = NULL;
    pl_err err = {0};
    long long problems = -1;
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    assert_int_equal(pl_store_check(s, no_problem, NULL, &problems, &err), PL_OK);
    assert_int_equal(problems, 0);
    pl_store_close(s);
}

/* The stored bytes of run id, malloc'd; *bytes receives their size. */
static unsigned char *run_bytes(const char *db, long long id, size_t *bytes)
{
    pl_store *s = NULL;
    pl_err err = {0};
    pl_run_info info;
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    assert_int_equal(pl_run_get(s, id, &info, &err), PL_OK);
    *bytes = (size_t)info.n_frames * 4;
    unsigned char *b = malloc(*bytes + 1);
    assert_int_equal(pl_run_read_raw(s, id, 0, info.n_frames, b, *bytes + 1, &err), PL_OK);
    pl_store_close(s);
    return b;
}

static void test_low_rates_finish(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("atomic");
    char *db = tu_path(dir, "a.db"), *wav = tu_path(dir, "slow.wav");
    assert_int_equal(tu_init_db(db), 0);
    static const int rates[] = {1, 2, 100, 200, 700, 800, 1000, 1500, 2000, 4000};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        long frames = 20L * rates[i];
        write_wav(wav, rates[i], frames, (int)i);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            pl_import_options o;
            import_options(&o, wav);
            pl_err err = {0};
            long long id, got = 0;
            pl_status st = pl_import_file(db, &o, &id, &got, &err);
            if (rates[i] < 1000) {
                char want[160];
                snprintf(want, sizeof want, "%s: the WAV header gives %d Hz: an LDV run "
                         "needs at least 1 kHz", wav, rates[i]);
                _exit(st == PL_EINVAL && !strncmp(err.msg, want, strlen(want)) ? 0 : 1);
            }
            if (st != PL_OK)
                fprintf(stderr, "%s\n", err.msg);
            _exit(st == PL_OK && got == frames ? 0 : 1);
        }
        char what[64];
        snprintf(what, sizeof what, "a 20 s import at %d Hz", rates[i]);
        int status = wait_for(child, 20, what);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(count_rows(db, "run"), 4);
    check_store(db);
    free(db);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

typedef struct {
    int sig;
    long long at;
    int fd;   /* >= 0: write a byte there and pause 1 s instead */
} stop_at;

static void stop_progress(void *ctx, long long frames, long long total)
{
    (void)total;
    stop_at *s = ctx;
    if (frames < s->at)
        return;
    if (s->fd >= 0) {
        if (write(s->fd, "x", 1) != 1)
            _exit(3);
        close(s->fd);
        s->fd = -1;
        sleep(1);
    } else if (s->sig) {
        raise(s->sig);
    }
}

static void test_killed_import_leaves_nothing(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("atomic");
    char *db = tu_path(dir, "k.db"), *first = tu_path(dir, "first.wav"),
         *big = tu_path(dir, "big.wav");
    assert_int_equal(tu_init_db(db), 0);
    write_wav(first, 10000, 30000, 1);
    write_wav(big, 10000, 600000, 2);
    pl_import_options o;
    pl_err err = {0};
    long long id0 = 0, id = 0;
    import_options(&o, first);
    assert_int_equal(pl_import_file(db, &o, &id0, NULL, &err), PL_OK);
    size_t n0;
    unsigned char *before = run_bytes(db, id0, &n0);
    static const int sigs[] = {SIGKILL, SIGTERM, SIGINT};
    for (size_t i = 0; i < 3; i++) {
        /* at a different point each time: inside the first chunk, past
         * several commits' worth, near the end */
        static const long long at[] = {20000, 300000, 590000};
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            /* A shell runs background jobs with SIGINT ignored, and that
             * is inherited (make check started with &): the default
             * action, which kills, is what an import meets at a terminal. */
            signal(sigs[i], SIG_DFL);
            stop_at s = {.sig = sigs[i], .at = at[i], .fd = -1};
            pl_import_options c;
            import_options(&c, big);
            c.progress = stop_progress;
            c.progress_ctx = &s;
            pl_err e = {0};
            long long cid;
            pl_import_file(db, &c, &cid, NULL, &e);
            _exit(0);   /* finished: the signal came too late */
        }
        int status = wait_for(child, 30, "an import to be killed");
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), sigs[i]);
        assert_int_equal(count_rows(db, "run"), 1);
        check_store(db);
        size_t n1;
        unsigned char *after = run_bytes(db, id0, &n1);
        assert_int_equal(n1, n0);
        assert_memory_equal(after, before, n0);
        free(after);
    }
    /* the file imports again without --force, whole */
    import_options(&o, big);
    long long frames = 0;
    assert_int_equal(pl_import_file(db, &o, &id, &frames, &err), PL_OK);
    assert_int_equal(frames, 600000);
    assert_int_equal(count_rows(db, "run"), 2);
    check_store(db);
    free(before);
    free(db);
    free(first);
    free(big);
    tu_rmtree(dir);
    free(dir);
}

static void test_recorder_during_import(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("atomic");
    char *db = tu_path(dir, "r.db"), *big = tu_path(dir, "big.wav");
    assert_int_equal(tu_init_db(db), 0);
    write_wav(big, 10000, 300000, 3);
    pl_err err = {0};
    pl_store *s = NULL;
    assert_int_equal(pl_store_open(&s, db, PL_STORE_CREATE, &err), PL_OK);
    pl_store_close(s);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(p[0]);
        stop_at st = {.at = 100000, .fd = p[1]};
        pl_import_options o;
        import_options(&o, big);
        o.progress = stop_progress;
        o.progress_ctx = &st;
        long long id;
        _exit(pl_import_file(db, &o, &id, NULL, &err) == PL_OK ? 0 : 1);
    }
    close(p[1]);
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);   /* the import is half-way */
    close(p[0]);
    pl_recorder *r = NULL;
    pl_writer_config wc = {.commit_interval_s = 0.1};
    long long interrupted = -1;
    assert_int_equal(pl_recorder_open(&r, db, &wc, &interrupted, &err), PL_OK);
    assert_int_equal(interrupted, 0);
    pl_recorder_close(r);
    int status = wait_for(child, 30, "the import");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pl_run_info info;
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    assert_int_equal(pl_run_get(s, 1, &info, &err), PL_OK);
    assert_int_equal(info.state, PL_RUN_IMPORTED);
    assert_int_equal(info.n_frames, 300000);
    pl_store_close(s);
    free(db);
    free(big);
    tu_rmtree(dir);
    free(dir);
}

static void test_empty_file_refused(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("atomic");
    char *db = tu_path(dir, "e.db"), *wav = tu_path(dir, "empty.wav");
    assert_int_equal(tu_init_db(db), 0);
    write_wav(wav, 10000, 0, 0);
    pl_import_options o;
    import_options(&o, wav);
    pl_err err = {0};
    long long id;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "empty.wav: the file holds no frames"));
    assert_int_equal(count_rows(db, "run"), 0);
    free(db);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

/* A header claiming 2 GHz must not ask for a 40 GB ring: an import gets a
 * bounded one and finishes; a live run that could not keep 10 s is refused
 * naming the bytes. */
static void test_ring_bounded(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("atomic");
    char *db = tu_path(dir, "g.db"), *wav = tu_path(dir, "ghz.wav");
    assert_int_equal(tu_init_db(db), 0);
    write_wav(wav, 2000000000, 50000, 4);
    pl_import_options o;
    import_options(&o, wav);
    pl_err err = {0};
    long long id, frames = 0;
    assert_int_equal(pl_import_file(db, &o, &id, &frames, &err), PL_OK);
    assert_int_equal(frames, 50000);

    pl_run_info info;
    pl_channel ch[2];
    pl_run_info_init(&info);
    info.sample_rate_hz = 2e9;
    info.n_channels = 2;
    info.format = PL_FMT_S16;
    memset(ch, 0, sizeof ch);
    for (int c = 0; c < 2; c++) {
        ch[c].source_channel = c;
        ch[c].beam_height_m = 0.02 - 0.01 * c;
        ch[c].beam_sign = c ? -1 : 1;
        ch[c].ldv_scale_mps_per_v = 0.025;
        ch[c].cal_kind = PL_CAL_FILE;
        ch[c].cal_order = 1;
        ch[c].cal_coef[1] = 10.0 / 32768;
        ch[c].range_min_v = ch[c].range_max_v = NAN;
    }
    pl_writer *w = NULL;
    pl_writer_config live = {.commit_interval_s = 0.1};
    assert_int_equal(pl_writer_create(&w, db, &live, &err), PL_OK);
    assert_int_equal(pl_writer_begin_run(w, &info, ch, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "needs 80000000000 bytes, over the limit of 268435456"));
    pl_writer_destroy(w);
    pl_writer_config file = {.commit_interval_s = 0.1, .block_when_full = 1};
    assert_int_equal(pl_writer_create(&w, db, &file, &err), PL_OK);
    assert_int_equal(pl_writer_begin_run(w, &info, ch, &err), PL_OK);
    pl_writer_stats ws;
    pl_writer_get_stats(w, &ws);
    assert_int_equal(ws.ring_capacity, PL_WRITER_RING_MAX_BYTES / 4);
    assert_int_equal(pl_writer_end_run(w, PL_RUN_COMPLETE, &err), PL_OK);
    pl_writer_destroy(w);
    free(db);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_low_rates_finish),
        cmocka_unit_test(test_killed_import_leaves_nothing),
        cmocka_unit_test(test_recorder_during_import),
        cmocka_unit_test(test_empty_file_refused),
        cmocka_unit_test(test_ring_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
