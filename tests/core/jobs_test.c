/* tests/core/jobs_test.c - the --jobs pool (core/jobs.h): tasks that end
 * in the reverse order still write in task order (each appends its
 * number to a file once it has its turn) and are emitted in task order
 * with their own stdout, stderr and exit status; an emit() that stops
 * ends the work there, the later tasks writing nothing; a worker that
 * dies costs its own task only; JSON parts join into one array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/jobs.h"
#include "tests/util/testutil.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TASKS = 12 };

typedef struct {
    char *dir, *path;    /* the "store": tasks append to path in their turn */
    size_t emitted[TASKS];
    size_t n_emitted;
    int stop_at;         /* emit() stops after this task; -1: never */
    int die_at;          /* this task's worker kills itself; -1: none */
    int codes[TASKS], signals[TASKS];
    char out[TASKS][64], errout[TASKS][64];
} pool;

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Later tasks finish first: without the turn they would write first. */
static int work(void *ctx, size_t k, pl_jobs_turn *turn)
{
    pool *p = ctx;
    pl_err err = {0};
    nap_ms((long)(TASKS - k) * 4);
    if ((int)k == p->die_at)
        raise(SIGKILL);
    printf("task %zu\n", k);
    fprintf(stderr, "warn %zu\n", k);
    if (pl_jobs_gate(turn, &err) != PL_OK)
        return 100;
    int fd = open(p->path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    char line[32];
    int len = snprintf(line, sizeof line, "%zu\n", k);
    if (fd < 0 || write(fd, line, (size_t)len) != len)
        return 101;
    close(fd);
    return (int)(k % 3);
}

static int emit(void *ctx, size_t k, const pl_jobs_result *r)
{
    pool *p = ctx;
    p->emitted[p->n_emitted++] = k;
    p->codes[k] = r->code;
    p->signals[k] = r->signal;
    snprintf(p->out[k], sizeof p->out[k], "%s", r->out);
    snprintf(p->errout[k], sizeof p->errout[k], "%s", r->errout);
    return (int)k == p->stop_at;
}

static void pool_free(pool *p)
{
    tu_rmtree(p->dir);
    free(p->dir);
    free(p->path);
    free(p);
}

static pool *pool_new(const char *name)
{
    pool *p = calloc(1, sizeof *p);
    p->dir = tu_tmpdir(name);
    p->path = tu_path(p->dir, "store.txt");
    p->stop_at = p->die_at = -1;
    return p;
}

/* The file's lines, as one string. */
static char *written(const pool *p)
{
    static char buf[256];
    FILE *f = fopen(p->path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

static void all_in_order(void **state)
{
    (void)state;
    pool *p = pool_new("jobs_order");
    pl_err err = {0};
    assert_int_equal(pl_jobs_run(TASKS, 3, NULL, work, emit, p, &err), PL_OK);
    assert_int_equal(p->n_emitted, TASKS);
    char expect[256] = "";
    for (size_t k = 0; k < TASKS; k++) {
        char line[64];
        assert_int_equal(p->emitted[k], k);
        assert_int_equal(p->codes[k], (int)(k % 3));
        assert_int_equal(p->signals[k], 0);
        snprintf(line, sizeof line, "task %zu\n", k);
        assert_string_equal(p->out[k], line);
        snprintf(line, sizeof line, "warn %zu\n", k);
        assert_string_equal(p->errout[k], line);
        snprintf(line, sizeof line, "%zu\n", k);
        strcat(expect, line);
    }
    assert_string_equal(written(p), expect);
    pool_free(p);
}

static void stop_ends_the_work(void **state)
{
    (void)state;
    pool *p = pool_new("jobs_stop");
    p->stop_at = 4;
    pl_err err = {0};
    assert_int_equal(pl_jobs_run(TASKS, 3, NULL, work, emit, p, &err), PL_OK);
    assert_int_equal(p->n_emitted, 5);
    assert_string_equal(written(p), "0\n1\n2\n3\n4\n");
    pool_free(p);
}

static void a_dead_worker_loses_its_task_only(void **state)
{
    (void)state;
    pool *p = pool_new("jobs_dead");
    p->die_at = 5;
    pl_err err = {0};
    assert_int_equal(pl_jobs_run(TASKS, 2, NULL, work, emit, p, &err), PL_OK);
    assert_int_equal(p->n_emitted, TASKS);
    assert_int_equal(p->signals[5], SIGKILL);
    assert_int_equal(p->codes[5], -1);
    char why[96];
    pl_jobs_result r = {.code = -1, .signal = SIGKILL};
    assert_string_equal(pl_jobs_death(&r, why, sizeof why), "the worker died (signal 9)");
    assert_string_equal(p->out[5], "");
    assert_string_equal(p->out[6], "task 6\n");
    assert_string_equal(written(p), "0\n1\n2\n3\n4\n6\n7\n8\n9\n10\n11\n");
    pool_free(p);
}

static void json_parts_join(void **state)
{
    (void)state;
    char path[] = "/tmp/jobs_json_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    size_t n = 0;
    pl_jobs_result a = {.out = "[{\"run\": 1},\n {\"run\": 1}", .out_len = 24, .errout = ""};
    pl_jobs_result none = {.out = "", .errout = ""};
    pl_jobs_result b = {.out = "[{\"run\": 3}", .out_len = 11, .errout = ""};
    pl_jobs_print(&a, 1, &n);
    pl_jobs_print(&none, 1, &n);
    pl_jobs_print(&b, 1, &n);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char buf[128] = "";
    ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
    assert_true(got > 0);
    close(fd);
    unlink(path);
    assert_string_equal(buf, "[{\"run\": 1},\n {\"run\": 1},\n {\"run\": 3}");
    assert_int_equal(n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_in_order),
        cmocka_unit_test(stop_ends_the_work),
        cmocka_unit_test(a_dead_worker_loses_its_task_only),
        cmocka_unit_test(json_parts_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
