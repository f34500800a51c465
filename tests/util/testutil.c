/* tests/util/testutil.c - temp dirs, fixture databases and running the
 * binary for tests. */
#include "tests/util/testutil.h"

#include "acquire/import.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

double tu_uniform(unsigned long *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

double tu_gauss(unsigned long *s)
{
    double u[2];
    for (int i = 0; i < 2; i++)
        u[i] = tu_uniform(s) + 0.5 / 9007199254740992.0;
    return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

char *tu_tmpdir(const char *tag)
{
    char *path = malloc(256);
    snprintf(path, 256, "/tmp/prismlab-%s-XXXXXX", tag);
    if (!mkdtemp(path)) {
        perror("mkdtemp");
        abort();
    }
    return path;
}

void tu_rmtree(const char *path)
{
    char cmd[600];
    if (!path || strncmp(path, "/tmp/prismlab-", 14) != 0)
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", path);
}

char *tu_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

char *tu_read_all(int fd, int timeout_ms, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (; buf;) {
        if (n + 4096 > cap) {
            char *more = realloc(buf, cap *= 2);
            if (!more)
                break;
            buf = more;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        n += (size_t)r;
    }
    free(buf);
    *len = n;
    return NULL;
}

const char *tu_prismlab_path(void)
{
    const char *p = getenv("PRISMLAB_BIN");
    return p && *p ? p : "bin/prismlab";
}

static void slurp(int fd, char *buf, size_t size)
{
    size_t got = 0;
    ssize_t n;
    char sink[4096];
    while (1) {
        if (buf && got + 1 < size)
            n = read(fd, buf + got, size - 1 - got);
        else
            n = read(fd, sink, sizeof sink);
        if (n <= 0)
            break;
        if (buf && got + 1 < size)
            got += (size_t)n;
    }
    if (buf && size)
        buf[got] = '\0';
}

int tu_prismlab(char *out, char *errout, size_t size, const char *const *argv)
{
    char outname[] = "/tmp/prismlab-out-XXXXXX";
    char errname[] = "/tmp/prismlab-err-XXXXXX";
    int ofd = mkstemp(outname), efd = mkstemp(errname), status;
    pid_t pid;

    unlink(outname);
    unlink(errname);
    pid = fork();
    if (pid == 0) {
        int n = 0;
        const char *args[64];
        args[n++] = tu_prismlab_path();
        for (int i = 1; argv[i] && n < 63; i++)
            args[n++] = argv[i];
        args[n] = NULL;
        dup2(ofd, 1);
        dup2(efd, 2);
        execv(args[0], (char *const *)args);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    lseek(ofd, 0, SEEK_SET);
    lseek(efd, 0, SEEK_SET);
    slurp(ofd, out, size);
    slurp(efd, errout, size);
    close(ofd);
    close(efd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tu_init_db(const char *db)
{
    pl_store *store = NULL;
    pl_err err = {0};
    if (pl_store_open(&store, db, PL_STORE_CREATE, &err) != PL_OK)
        return -1;
    pl_store_close(store);
    return 0;
}

pl_status tu_fixture_db(const char *db, const char *manifest, int *runs, pl_err *err)
{
    pl_store *store = NULL;
    int count = 0;
    pl_status st = pl_store_open(&store, db, PL_STORE_CREATE, err);
    if (st == PL_OK)
        st = pl_prism_import_csv(store, "fixtures/catalog/prisms.csv", &count, err);
    if (st == PL_OK)
        st = pl_ramp_import_csv(store, "fixtures/catalog/ramps.csv", &count, err);
    pl_store_close(store);
    if (st == PL_OK && manifest)
        st = pl_import_manifest(db, manifest, 0, 0, NULL, NULL, NULL, NULL, runs, err);
    return st;
}

int tu_run_fixture_setup(void **state)
{
    tu_run_fixture *f = calloc(1, sizeof *f);
    pl_run_info info;
    pl_channel ch[2];
    pl_err err = {0};
    if (!f)
        return -1;
    f->dir = tu_tmpdir("store");
    f->db = tu_path(f->dir, "t.db");
    *state = f;
    if (pl_store_open(&f->store, f->db, PL_STORE_CREATE, &err) != PL_OK) {
        fprintf(stderr, "tu_run_fixture_setup: %s\n", err.msg);
        return -1;
    }
    pl_run_info_init(&info);
    info.state = PL_RUN_IMPORTED;   /* `run set` refuses a run still recording */
    info.sample_rate_hz = 10000;
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    memset(ch, 0, sizeof ch);
    for (int c = 0; c < 2; c++) {
        ch[c].beam_height_m = c ? 0.0116 : 0.0199;
        ch[c].beam_sign = c ? -1 : 1;
        ch[c].ldv_scale_mps_per_v = 0.025;
        ch[c].cal_kind = PL_CAL_IDENTITY;
        ch[c].cal_order = 1;
        ch[c].cal_coef[1] = 1;
    }
    if (pl_run_create(f->store, &info, ch, &err) != PL_OK) {
        fprintf(stderr, "tu_run_fixture_setup: %s\n", err.msg);
        return -1;
    }
    f->run = info.id;
    return 0;
}

int tu_run_fixture_teardown(void **state)
{
    tu_run_fixture *f = *state;
    if (!f)
        return 0;
    pl_store_close(f->store);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}
