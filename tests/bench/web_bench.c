/* tests/bench/web_bench.c - prismlab serve on a 10-minute run (2 x 6 M
 * frames at 10 kHz, int16, plus its derived series at 1 kHz and 2000
 * impacts, as processing stores them), server in process, requests over a
 * real socket; times are wall time from sending a request to the last
 * byte of its answer on loopback, i.e. server time plus a local copy:
 *   web_first_draw_10min: what a run page needs before it draws, on a
 *     cold server: the page, /meta and the whole run's window at 1100
 *     columns (the one pass over the chunks that builds the bucket level
 *     is in it);
 *   web_zoom_median, web_zoom_max: 30 zoom requests (windows of 300 s
 *     down to 10 ms at random places, 1100 columns) on the warm server. */
#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"
#include "web/server.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RATE = 10000, SECONDS = 600, CHUNK = 65536 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "web_bench: %s: %s\n", what, msg);
    exit(1);
}

/* GET path; returns seconds until the whole answer was read */
static double get(int port, const char *path, size_t *bytes)
{
    double t0 = now_s();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        die(path, "connect");
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n)
        die(path, "write");
    char buf[1 << 16];
    size_t total = 0;
    ssize_t r;
    int ok = -1;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        if (ok < 0)
            ok = !strncmp(buf, "HTTP/1.1 200", 12);
        total += (size_t)r;
    }
    close(fd);
    if (ok != 1)
        die(path, "not 200");
    if (bytes)
        *bytes = total;
    return now_s() - t0;
}

static void make_run(const char *db)
{
    pl_store *s;
    pl_err err = {0};
    if (pl_store_open(&s, db, PL_STORE_CREATE, &err) != PL_OK)
        die(db, err.msg);
    pl_channel ch[2];
    memset(ch, 0, sizeof ch);
    for (int c = 0; c < 2; c++) {
        ch[c].beam_sign = c ? -1 : 1;
        ch[c].beam_height_m = c ? 0.0116 : 0.0199;
        ch[c].ldv_scale_mps_per_v = 0.025;
        ch[c].cal_kind = PL_CAL_FILE;
        ch[c].cal_order = 1;
        ch[c].cal_coef[1] = 10.0 / 32768;
    }
    pl_run_info info;
    pl_run_info_init(&info);
    info.sample_rate_hz = RATE;
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    info.synthetic = 1;
    if (pl_run_create(s, &info, ch, &err) != PL_OK)
        die("run", err.msg);
    int16_t *buf = malloc((size_t)CHUNK * 4);
    uint32_t rnd = 1;
    long long frames = (long long)RATE * SECONDS;
    for (long long f = 0, k = 0; f < frames; f += CHUNK, k++) {
        long long n = frames - f < CHUNK ? frames - f : CHUNK;
        for (long long i = 0; i < n; i++) {
            double t = (double)(f + i) / RATE;
            for (int c = 0; c < 2; c++) {
                rnd = rnd * 1664525u + 1013904223u;
                double v = 0.3 * (1 - exp(-t / 60)) * (1 + 0.1 * sin(40 * t + c)) +
                           1e-4 * ((double)(rnd >> 16) / 65536 - 0.5);
                buf[2 * i + c] = (int16_t)lround((c ? -v : v) / 0.025 * 32768 / 10);
            }
        }
        if ((k % 16 == 0 && pl_store_begin(s, &err) != PL_OK) ||
            pl_run_append_chunk(s, info.id, f, n, buf, (size_t)n * 4, &err) != PL_OK ||
            ((k % 16 == 15 || f + n >= frames) && pl_store_commit(s, &err) != PL_OK))
            die("chunks", err.msg);
    }
    free(buf);
    pl_run_set_state(s, info.id, PL_RUN_COMPLETE, -1, &err);
    /* derived, as processing stores it: 1 kHz series, spectra, impacts */
    size_t nd = (size_t)SECONDS * 1000, np = 1025, ni = 2000;
    double *d = malloc(5 * nd * sizeof *d), *psd = malloc(np * sizeof *psd);
    for (size_t i = 0; i < nd; i++) {
        double t = (double)i / 1000;
        d[i] = 30 * (1 - exp(-t / 60));                 /* omega */
        d[nd + i] = 30 * (t - 60 * (1 - exp(-t / 60)));   /* theta */
        d[2 * nd + i] = d[nd + i] * 22 / (2 * M_PI);      /* L_p */
        d[3 * nd + i] = d[4 * nd + i] = 0.01 * d[i];
    }
    for (size_t k = 0; k < np; k++)
        psd[k] = 1e-6 / (1 + (double)k);
    pl_series sv[6] = {
        {"omega", "rad/s", 10, 0, 1000, nd, d}, {"theta", "rad", 10, 0, 1000, nd, d + nd},
        {"Lp", "1", 10, 0, 1000, nd, d + 2 * nd}, {"vp1", "m/s", 10, 0, 1000, nd, d + 3 * nd},
        {"vp2", "m/s", 10, 0, 1000, nd, d + 4 * nd},
        {"psd_residual", "rad^2/s^2/Hz", 1, 0, 1 / 4.8828125, np, psd}};
    pl_impact *imp = calloc(ni, sizeof *imp);
    for (size_t i = 0; i < ni; i++) {
        imp[i].t_s = 1 + 0.29 * (double)i;
        imp[i].ratio = 0.9876;
        imp[i].confirmed = 1;
        imp[i].t_sd_s = imp[i].ratio_se = imp[i].interval_s = NAN;
    }
    pl_processing rec;
    memset(&rec, 0, sizeof rec);
    rec.run_id = info.id;
    snprintf(rec.processed_utc, sizeof rec.processed_utc, "2026-01-01T00:00:00Z");
    snprintf(rec.version, sizeof rec.version, "bench");
    rec.release_t_s = 1;
    rec.end_t_s = SECONDS - 1;
    rec.end_frame = (long long)(SECONDS - 1) * RATE;
    rec.release_frame = RATE;
    rec.n_impacts = (long long)ni;
    rec.lp_end = d[3 * nd - 1];
    rec.ratio_mean = 0.9876;
    rec.ratio_mean_se = NAN;
    rec.n_expected = -1;
    if (pl_derived_save(s, &rec, sv, 6, imp, ni, &err) != PL_OK)
        die("derived", err.msg);
    free(d);
    free(psd);
    free(imp);
    pl_store_close(s);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    char *dir = tu_tmpdir("webbench");
    char *db = tu_path(dir, "w.db");
    double t0 = now_s();
    make_run(db);
    fprintf(stderr, "web_bench: 10-minute run stored in %.1f s\n", now_s() - t0);
    pl_web *w;
    pl_err err = {0};
    pl_web_options o = {.db = db, .listen = "127.0.0.1:0"};
    if (pl_web_start(&w, &o, &err) != PL_OK)
        die("serve", err.msg);
    int port = atoi(strrchr(pl_web_url(w), ':') + 1);
    size_t b1, b2, b3;
    double page = get(port, "/run/1", &b1);
    double meta = get(port, "/api/run/1/meta", &b2);
    double win = get(port, "/api/run/1/window?t0=0&t1=600&px=1100", &b3);
    printf("web_first_draw_10min: %.1f ms\n", 1e3 * (page + meta + win));
    fprintf(stderr, "web_bench: page %.1f ms (%zu B), meta %.1f ms (%zu B: loads the run, the one "
            "pass over its chunks), whole-run window %.1f ms (%zu B)\n",
            1e3 * page, b1, 1e3 * meta, b2, 1e3 * win, b3);
    double z[30];
    const double spans[6] = {300, 60, 10, 1, 0.1, 0.01};
    uint32_t r = 7;
    for (int i = 0; i < 30; i++) {
        double span = spans[i % 6];
        r = r * 1664525u + 1013904223u;
        double a = (SECONDS - span) * (double)(r >> 8) / 16777216.0;
        char path[160];
        snprintf(path, sizeof path, "/api/run/1/window?t0=%.6f&t1=%.6f&px=1100", a, a + span);
        z[i] = get(port, path, NULL);
    }
    qsort(z, 30, sizeof z[0], cmp);
    printf("web_zoom_median: %.1f ms\n", 1e3 * z[15]);
    printf("web_zoom_max: %.1f ms\n", 1e3 * z[29]);
    pl_web_stop(w);
    tu_rmtree(dir);
    free(dir);
    free(db);
    return 0;
}
