/* tests/web/server_test.c - prismlab serve's HTTP surface, in process,
 * over real sockets, on a real store (two fixture runs imported and
 * processed by the real binary, one run stored with hostile names):
 *   - the runs page lists every run, with the stored figures;
 *   - every string from the store is escaped (a name holding markup comes
 *     back as text), in HTML and in JSON;
 *   - bad URLs and parameters get a 4xx naming the parameter, never a
 *     crash: ids, numbers, ranges, methods, paths that try to leave;
 *   - the run page shows a loading sign and leaves its impacts' table to
 *     the script, which pages it from /api/run/N/impacts (rows equal to
 *     the store's);
 *   - read-only without control; with it, the token is required and
 *     checked; a Host that is not loopback is refused (DNS rebinding).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "db/catalog.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"
#include "web/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    char *dir, *db;
    pl_web *web;
    int port;
    long long evil_run;
} fixture;

static char *body;          /* the last answer's body (malloc'd) */

/* One request; returns the status code, the body in `body`. */
static int http(int port, const char *method, const char *path, const char *headers)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail_msg("connect: port %d", port);
    char req[2048];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\n%s%sConnection: close\r\n"
                     "Content-Length: 0\r\n\r\n", method, path,
                     headers && strstr(headers, "Host:") ? "" : "Host: 127.0.0.1\r\n",
                     headers ? headers : "");
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t len;
    char *buf = tu_read_all(fd, 10000, &len);
    if (!buf)
        fail_msg("%s %s: no answer within 10 s", method, path);
    close(fd);
    int code = 0;
    sscanf(buf, "HTTP/1.%*d %d", &code);
    char *b = strstr(buf, "\r\n\r\n");
    free(body);
    body = strdup(b ? b + 4 : "");
    free(buf);
    return code;
}

static int port_of(const pl_web *w)
{
    const char *u = strrchr(pl_web_url(w), ':');
    return atoi(u + 1);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir("serve");
    f->db = tu_path(f->dir, "s.db");
    char *man = tu_path(f->dir, "m.csv");
    /* two fixture runs of the manifest, so processing stays quick */
    FILE *in = fopen("fixtures/runs/manifest.csv", "r"), *out = fopen(man, "w");
    assert_non_null(in);
    char line[1024], cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    int header = 0, rows = 0;
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#' || !header) {
            header |= line[0] != '#';
            fputs(line, out);
        } else if (rows++ < 2) {
            /* paths are relative to the manifest's folder: make them absolute */
            fprintf(out, "%s/fixtures/runs/%s", cwd, line);
        }
    }
    fclose(in);
    fclose(out);
    pl_err err = {0};
    int runs = 0;
    if (tu_fixture_db(f->db, man, &runs, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(runs, 2);
    const char *argv[] = {"prismlab", "process", "--all", "--db", f->db, NULL};
    char o[4096], e[4096];
    if (tu_prismlab(o, e, sizeof o, argv) != 0)
        fail_msg("process: %s", e);
    /* run 2 as a lab that knows its decoder: its instants are contacts */
    const char *argv2[] = {"prismlab", "process", "2", "--decoder-delay", "50e-6", "--db", f->db, NULL};
    if (tu_prismlab(o, e, sizeof o, argv2) != 0)
        fail_msg("process 2: %s", e);
    /* a run with markup in every name it has */
    pl_store *s;
    assert_int_equal(pl_store_open(&s, f->db, 0, &err), PL_OK);
    assert_int_equal(pl_experiment_ensure(s, "<b>x</b>&\"'", &err), PL_OK);
    pl_run_info info;
    pl_run_info_init(&info);
    info.sample_rate_hz = 1000;
    snprintf(info.experiment, sizeof info.experiment, "<b>x</b>&\"'");
    snprintf(info.notes, sizeof info.notes, "<script>alert(1)</script>");
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    pl_channel ch[2];
    memset(ch, 0, sizeof ch);
    for (int c = 0; c < 2; c++) {
        ch[c].beam_sign = 1;
        ch[c].ldv_scale_mps_per_v = 0.025;
        ch[c].cal_kind = PL_CAL_LINEAR;
        ch[c].cal_order = 1;
        ch[c].cal_coef[1] = 1e-3;
        ch[c].beam_height_m = c ? 0.01 : 0.02;
    }
    ch[0].decoder_delay_s = 106.1e-6;   /* the other decoder's: not known */
    assert_int_equal(pl_run_create(s, &info, ch, &err), PL_OK);
    int16_t buf[2 * 100];
    for (int i = 0; i < 200; i++)
        buf[i] = (int16_t)i;
    assert_int_equal(pl_run_append_chunk(s, info.id, 0, 100, buf, sizeof buf, &err), PL_OK);
    f->evil_run = info.id;
    pl_store_close(s);
    free(man);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pl_web_stop(f->web);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    free(body);
    body = NULL;
    return 0;
}

static void start(fixture *f, int control)
{
    pl_web_options o = {.db = f->db, .listen = "127.0.0.1:0", .control = control};
    pl_err err = {0};
    if (pl_web_start(&f->web, &o, &err) != PL_OK)
        fail_msg("%s", err.msg);
    f->port = port_of(f->web);
}

/* The run page of a processed run: the loading sign, and the impacts'
 * table empty with the count the store has, which the script fills a page
 * at a time from /api/run/1/impacts: the store's impacts, in order. */
static void check_run_page(fixture *f, const char *page)
{
    pl_store *s;
    pl_err err = {0};
    pl_impact *imp;
    size_t n;
    assert_int_equal(pl_store_open(&s, f->db, PL_STORE_READONLY, &err), PL_OK);
    assert_int_equal(pl_derived_impacts(s, 1, &imp, &n, &err), PL_OK);
    pl_store_close(s);
    assert_true(n > 10);
    assert_non_null(strstr(page, "<p id=\"loading\" class=\"loading\" role=\"status\">"));
    char want[64];
    snprintf(want, sizeof want, "<table id=\"impacts\" data-count=\"%zu\">", n);
    assert_non_null(strstr(page, want));
    assert_non_null(strstr(page, "<tbody></tbody></table>"));
    assert_true(strlen(page) < 8000);
    /* each +- with its meaning (issue 33): the fixture states no decoder
     * delay, so its instants are the decoded steps' centres */
    assert_non_null(strstr(page, "<td id=\"impact-t\">the centres of the decoded steps, later "
                                 "than the contacts by the LDV decoder's delay"));
    assert_non_null(strstr(page, "&plusmn; t is one standard deviation of each instant's own "
                                 "scatter, not the delay's"));
    assert_non_null(strstr(page, "&plusmn; t (&micro;s)</th>"));
    assert_non_null(strstr(page, "&plusmn; ratio</th>"));

    assert_int_equal(http(f->port, "GET", "/api/run/1/impacts?from=3&n=4", NULL), 200);
    snprintf(want, sizeof want, "{\"run\":1,\"total\":%zu,\"from\":3,\"rows\":[[", n);
    assert_non_null(strstr(body, want));
    const char *p = strstr(body, "\"rows\":[") + 8;
    for (size_t i = 3; i < 7; i++) {
        double t, om, op, ratio, tsd, rse;
        int confirmed;
        assert_int_equal(sscanf(p, "[%lf,%lf,%lf,%lf,%d,%lf,%lf]", &t, &om, &op, &ratio,
                                &confirmed, &tsd, &rse), 7);
        tu_assert_close(t, imp[i].t_s, 1e-9);
        tu_assert_close(om, imp[i].omega_minus, 1e-7);
        tu_assert_close(op, imp[i].omega_plus, 1e-7);
        tu_assert_close(ratio, imp[i].ratio, 1e-7);
        assert_int_equal(confirmed, imp[i].confirmed);
        assert_true(imp[i].t_sd_s > 0 && imp[i].ratio_se > 0);
        tu_assert_close(tsd, imp[i].t_sd_s, 1e-3 * imp[i].t_sd_s);
        tu_assert_close(rse, imp[i].ratio_se, 1e-3 * imp[i].ratio_se);
        p = strchr(p, ']') + 2;
    }
    assert_true(p[-1] == ']' && p[-2] == ']');   /* 4 rows, no more */
    /* the last page holds what is left; past the end, nothing */
    char path[96];
    snprintf(path, sizeof path, "/api/run/1/impacts?from=%zu", n - 2);
    assert_int_equal(http(f->port, "GET", path, NULL), 200);
    assert_non_null(strstr(body, "],["));
    assert_null(strstr(strstr(body, "],[") + 3, "],["));   /* two rows */
    snprintf(path, sizeof path, "/api/run/1/impacts?from=%zu", n + 5);
    assert_int_equal(http(f->port, "GET", path, NULL), 200);
    assert_non_null(strstr(body, "\"rows\":[]}"));
    free(imp);
}

static void pages_list_and_escape(void **state)
{
    fixture *f = *state;
    sqlite3 *db;
    /* run 2 measured through faults, one of them with hostile text */
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE run_quality SET quality = 'degraded', faults = "
                                      "'beam_lost channel=1 from_s=2.345 to_s=2.545' || char(10) || "
                                      "'odd note=\"<script>x</script>\"' WHERE run_id = 2",
                                  NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_changes(db), 1);
    sqlite3_close(db);
    start(f, 0);
    assert_int_equal(http(f->port, "GET", "/", NULL), 200);
    assert_non_null(strstr(body, "data-count=\"3\""));
    assert_non_null(strstr(body, "<a href=\"/run/1\">1</a>"));
    assert_non_null(strstr(body, "<a href=\"/run/2\">2</a>"));
    assert_non_null(strstr(body, "&lt;b&gt;x&lt;/b&gt;&amp;&quot;&#39;"));
    assert_null(strstr(body, "<b>x</b>"));
    /* the link percent-encodes it */
    assert_non_null(strstr(body, "/experiment/%3Cb%3Ex%3C%2Fb%3E%26%22%27/"));
    /* filtered by experiment: only its run */
    assert_int_equal(http(f->port, "GET", "/?experiment=%3Cb%3Ex%3C%2Fb%3E%26%22%27", NULL), 200);
    assert_non_null(strstr(body, "data-count=\"1\""));

    char path[64];
    snprintf(path, sizeof path, "/run/%lld", f->evil_run);
    assert_int_equal(http(f->port, "GET", path, NULL), 200);
    assert_non_null(strstr(body, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_null(strstr(body, "<script>alert"));
    /* the decoders' delays, as stored (issue 33) */
    assert_non_null(strstr(body, "<td id=\"decoder-delay\">106.1 &micro;s, not known</td>"));
    assert_int_equal(http(f->port, "GET", "/run/1", NULL), 200);
    assert_non_null(strstr(body, "<td id=\"decoder-delay\">not known, not known</td>"));
    check_run_page(f, body);

    assert_int_equal(http(f->port, "GET", "/run/2", NULL), 200);
    assert_non_null(strstr(body, "<td id=\"impact-t\">the contacts: the decoded steps' centres "
                                 "moved back by the LDV decoder's delay, 50 &micro;s (from "
                                 "<code>process --decoder-delay</code>)"));

    assert_int_equal(http(f->port, "GET", "/api/run/1/meta", NULL), 200);
    assert_non_null(strstr(body, "\"processed\":true"));
    assert_non_null(strstr(body, "\"impacts\":[["));
    /* a fixture run is good; what every rig has (hum, drop-outs) is
     * still listed */
    assert_non_null(strstr(body, "\"quality\":\"good\",\"faults\":["));
    assert_non_null(strstr(body, "{\"kind\":\"hum\",\"freq_hz\":"));
    assert_null(strstr(body, "beam_lost"));
    assert_int_equal(http(f->port, "GET", "/api/run/2/meta", NULL), 200);
    assert_non_null(strstr(body, "\"quality\":\"degraded\",\"faults\":[{\"kind\":\"beam_lost\","
                                 "\"channel\":1,\"from_s\":2.345,\"to_s\":2.545},"
                                 "{\"kind\":\"odd\",\"note\":\"\\u003cscript>x\\u003c/script>\"}]"));
    assert_non_null(strstr(body, "\"fault_words\":[\"beam 1 lost the prism from 2.345 s to "
                                 "2.545 s (measured on beam 2 alone)\","));
    snprintf(path, sizeof path, "/api/run/%lld/meta", f->evil_run);
    assert_int_equal(http(f->port, "GET", path, NULL), 200);
    assert_non_null(strstr(body, "\"quality\":null,\"faults\":[]"));
    /* the runs page: a badge each, the faults as its tooltip, escaped */
    assert_int_equal(http(f->port, "GET", "/", NULL), 200);
    assert_non_null(strstr(body, "<span class=\"badge q-good\""));
    assert_non_null(strstr(body, "<span class=\"badge q-degraded\" title=\"beam 1 lost the prism"));
    assert_non_null(strstr(body, "odd note=&quot;&lt;script&gt;x&lt;/script&gt;&quot;\">degraded</span>"));
    assert_null(strstr(body, "<script>x"));
    assert_int_equal(http(f->port, "GET", "/static/uPlot.iife.min.js", NULL), 200);
    assert_true(strlen(body) > 40000);
    assert_int_equal(http(f->port, "GET", "/experiments", NULL), 200);
    assert_non_null(strstr(body, "&lt;b&gt;"));
}

static void bad_requests_get_4xx(void **state)
{
    fixture *f = *state;
    start(f, 0);
    struct {
        const char *method, *path;
        int code;
        const char *says;
    } cases[] = {
        {"GET", "/run/abc", 400, "run id: expected a positive integer"},
        {"GET", "/run/0", 400, "run id"},
        {"GET", "/run/-1", 400, "run id"},
        {"GET", "/run/99999999999999999999", 400, "run id"},
        {"GET", "/run/999", 404, "999"},
        {"GET", "/api/run/1/window?px=0", 400, "parameter 'px'"},
        {"GET", "/api/run/1/window?px=100000", 400, "parameter 'px'"},
        {"GET", "/api/run/1/window?t0=nan", 400, "parameter 't0'"},
        {"GET", "/api/run/1/window?t0=1x", 400, "parameter 't0'"},
        {"GET", "/api/run/1/window?t0=2&t1=1", 400, "t0 < t1"},
        {"GET", "/api/run/999/window", 404, "999"},
        {"GET", "/api/run/1/impacts?from=-1", 400, "parameter 'from'"},
        {"GET", "/api/run/1/impacts?n=0", 400, "parameter 'n'"},
        {"GET", "/api/run/1/impacts?n=1001", 400, "parameter 'n'"},
        {"GET", "/api/run/1/impacts?from=1.5", 400, "whole numbers"},
        {"GET", "/api/run/999/impacts", 404, "999"},
        {"GET", "/api/run/1/nothing", 404, "/api/run/ID/meta"},
        {"GET", "/api/run/1", 404, "/api/run/ID/meta"},
        {"GET", "/static/../../etc/passwd", 404, "no static file"},
        {"GET", "/static/%2e%2e%2fetc%2fpasswd", 404, "no static file"},
        {"GET", "/experiment/fig8/../../../etc/passwd", 404, "has no file 'passwd'"},
        {"GET", "/experiment/fig8/a%2fb", 404, "has no file 'b'"},
        {"GET", "/experiment/fig8/x%20y.svg", 400, "plain file name"},
        {"GET", "/experiment/fig8/.hidden", 400, "plain file name"},
        {"GET", "/experiment/nosuch/", 404, "nosuch"},
        {"GET", "/nothing", 404, "no page"},
        {"DELETE", "/", 405, "only GET"},
        {"POST", "/", 405, "only GET"},
        {"POST", "/api/control/arm", 403, "read-only"},
        {"POST", "/api/control/format", 404, "arm, start, stop"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int code = http(f->port, cases[i].method, cases[i].path, NULL);
        if (code != cases[i].code || !strstr(body, cases[i].says))
            fail_msg("%s %s: %d '%s', expected %d saying '%s'", cases[i].method,
                     cases[i].path, code, body, cases[i].code, cases[i].says);
    }
    /* a page of another site, through a name that resolves to us */
    assert_int_equal(http(f->port, "GET", "/", "Host: evil.example:80\r\n"), 403);
    assert_int_equal(http(f->port, "GET", "/", "Host: localhost:8080\r\n"), 200);
    /* and still serving after all of it */
    assert_int_equal(http(f->port, "GET", "/api/run/1/window?t0=1&t1=2&px=50", NULL), 200);
    assert_non_null(strstr(body, "\"n\":50"));
}

static void control_needs_the_token(void **state)
{
    fixture *f = *state;
    start(f, 1);
    const char *tok = pl_web_token(f->web);
    assert_int_equal(strlen(tok), 32);
    assert_int_equal(http(f->port, "POST", "/api/control/arm", NULL), 403);
    assert_non_null(strstr(body, "no token"));
    assert_int_equal(http(f->port, "POST", "/api/control/arm",
                          "X-Prismlab-Token: 00000000000000000000000000000000\r\n"), 403);
    assert_non_null(strstr(body, "wrong token"));
    char h[128];
    snprintf(h, sizeof h, "X-Prismlab-Token: %s\r\n", tok);
    /* the right token, but no daemon listens on the socket */
    assert_int_equal(http(f->port, "POST", "/api/control/arm", h), 503);
    assert_non_null(strstr(body, "no daemon answers"));
    assert_int_equal(http(f->port, "GET", "/api/control/arm", h), 405);
}

static void listen_addresses(void **state)
{
    (void)state;
    char host[64];
    int port;
    pl_err err = {0};
    assert_int_equal(pl_web_parse_listen("127.0.0.1:8080", host, sizeof host, &port, &err), PL_OK);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(pl_web_parse_listen("[::1]:9", host, sizeof host, &port, &err), PL_OK);
    assert_string_equal(host, "::1");
    assert_int_equal(pl_web_parse_listen(":0", host, sizeof host, &port, &err), PL_OK);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(pl_web_parse_listen("8080", host, sizeof host, &port, &err), PL_EINVAL);
    assert_int_equal(pl_web_parse_listen("a:70000", host, sizeof host, &port, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "[0, 65535]"));
    assert_int_equal(pl_web_parse_listen("[::1:80", host, sizeof host, &port, &err), PL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listen_addresses),
        cmocka_unit_test_setup_teardown(pages_list_and_escape, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_requests_get_4xx, setup, teardown),
        cmocka_unit_test_setup_teardown(control_needs_the_token, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
