/* web/server.c - see server.h.  Routing, the pages and the JSON
 * endpoints; the envelopes are web/trace.c's, the run data web/runcache.c's. */
#define _GNU_SOURCE   /* accept4-free, but struct ucred-free too: for getrandom */
#include "web/server.h"

#include "acquire/daemon.h"
#include "core/version.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/validation.h"
#include "db/work.h"
#include "model/validate/answer.h"
#include "model/validate/ratio.h"
#include "model/validate/report.h"
#include "process/warnings.h"
#include "web/assets.h"
#include "web/buf.h"
#include "web/connguard.h"
#include "web/runcache.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { MAX_REPORTS = 32, MAX_PX = 8192 };

typedef struct {
    char name[PL_NAME_SIZE];
    char dir[PATH_MAX + 8];
} report_dir;

struct pl_web {
    struct MHD_Daemon *mhd;
    pl_connguard *guard;           /* whole-request deadlines */
    pl_store *store;
    pl_runcache *cache;
    pthread_mutex_t lock;          /* the store, the cache, the reports */
    char url[96];
    char host[64];
    int port;
    int loopback;                  /* bound to loopback: Host must say so */
    int control;
    char token[33];
    char socket[108];
    char tmp[PATH_MAX];            /* the reports' folder (ours alone) */
    report_dir reports[MAX_REPORTS];
    int n_reports, next_report;
    volatile int stopping;
};

const char *pl_web_url(const pl_web *w) { return w->url; }
const char *pl_web_token(const pl_web *w) { return w->token; }

/* ------------------------------------------------------------------ */
/* responses */

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned code,
                                const char *mime, pl_buf *b, const char *csp)
{
    if (b->failed) {
        pl_buf_free(b);
        pl_buf_puts(b, "out of memory building the answer\n");
        code = MHD_HTTP_INTERNAL_SERVER_ERROR;
        mime = "text/plain; charset=utf-8";
    }
    size_t len;
    char *data = pl_buf_take(b, &len);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data,
                                                             MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", mime);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", csp ? csp :
                            "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                            "img-src 'self' data:; frame-ancestors 'none'");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static void page_head(pl_buf *b, const char *title_a, const char *title_b);
static void page_end(pl_buf *b);

/* msg without the server's paths (a store's error names its file): " in
 * '/...'" goes, any other quoted absolute path becomes "a file on the
 * server".  A visitor learns what was wrong, not where the lab keeps its
 * data. */
static void scrub_paths(char *msg)
{
    char *q;
    while ((q = strstr(msg, "'/"))) {
        char *end = strchr(q + 2, '\'');
        if (!end)
            break;
        end++;
        const char *put = "a file on the server";
        if (q - msg >= 4 && !strncmp(q - 4, " in ", 4)) {
            q -= 4;
            put = "";
        }
        size_t pl = strlen(put);
        memmove(q + pl, end, strlen(end) + 1);
        memcpy(q, put, pl);
    }
}

/* A 4xx/5xx answer saying what was wrong, without the server's paths: a
 * page for a browser's navigation (it asks for text/html), one line of
 * plain text for the API's callers (run.js shows it as it is). */
static enum MHD_Result fail(struct MHD_Connection *c, unsigned code,
                            const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result fail(struct MHD_Connection *c, unsigned code,
                            const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    scrub_paths(msg);
    pl_buf b;
    pl_buf_init(&b);
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    if (!accept || !strstr(accept, "text/html")) {
        pl_buf_printf(&b, "%u: %s\n", code, msg);
        return send_buf(c, code, "text/plain; charset=utf-8", &b, NULL);
    }
    const char *reason = MHD_get_reason_phrase_for(code);
    char title[80];
    snprintf(title, sizeof title, "%u %s", code, reason ? reason : "");
    page_head(&b, title, NULL);
    pl_buf_printf(&b, "<h1 id=\"error\" data-code=\"%u\">", code);
    pl_buf_html(&b, title);
    pl_buf_puts(&b, "</h1>\n<p id=\"why\">");
    pl_buf_html(&b, msg);
    pl_buf_puts(&b, "</p>\n<p>See <a href=\"/\">the runs</a> or <a href=\"/experiments\">"
                    "the experiments</a>.</p>\n");
    page_end(&b);
    return send_buf(c, code, "text/html; charset=utf-8", &b, NULL);
}

static unsigned status_of(pl_status st)
{
    switch (st) {
    case PL_ENOTFOUND: return MHD_HTTP_NOT_FOUND;
    case PL_EINVAL: return MHD_HTTP_BAD_REQUEST;
    default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

/* ------------------------------------------------------------------ */
/* parameters: strict, each error names the parameter and what it expects */

static int parse_id(const char *s, long long *id)
{
    if (!s || !*s || strlen(s) > 15)
        return 0;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
    }
    *id = v;
    return v > 0;
}

/* 1: found and good; 0: absent (def kept); -1: bad (msg says why) */
static int arg_double(struct MHD_Connection *c, const char *name, double lo,
                      double hi, double *out, char *msg, size_t size)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
        snprintf(msg, size, "parameter '%s': expected a number in [%g, %g], got '%.40s'",
                 name, lo, hi, s);
        return -1;
    }
    *out = v;
    return 1;
}

/* ------------------------------------------------------------------ */
/* common page parts */

static void page_head(pl_buf *b, const char *title_a, const char *title_b)
{
    pl_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<link rel=\"icon\" href=\"data:,\">\n<title>");
    pl_buf_html(b, title_a);
    if (title_b) {
        pl_buf_puts(b, " ");
        pl_buf_html(b, title_b);
    }
    pl_buf_puts(b, " - prismlab</title>\n"
                   "<link rel=\"stylesheet\" href=\"/static/uPlot.min.css\">\n"
                   "<link rel=\"stylesheet\" href=\"/static/prismlab.css\">\n"
                   "</head><body>\n<nav><a href=\"/\">runs</a> <a href=\"/experiments\">experiments</a> "
                   "<a href=\"/live\">live</a></nav>\n");
}

static void page_end(pl_buf *b)
{
    pl_buf_printf(b, "<footer>prismlab %s</footer>\n</body></html>\n", pl_version());
}

/* percent-encodes s for a path segment or a query value */
static void url_enc(pl_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~')
            pl_buf_add(b, s, 1);
        else
            pl_buf_printf(b, "%%%02X", ch);
    }
}

static void num_cell(pl_buf *b, const char *fmt, double v)
{
    if (isfinite(v))
        pl_buf_printf(b, fmt, v);
    else
        pl_buf_puts(b, "<td class=\"na\">-</td>");
}

/* ------------------------------------------------------------------ */
/* the runs */

typedef struct {
    pl_run_info *r;
    size_t n, cap;
} run_vec;

static int collect_run(void *ctx, const pl_run_info *info)
{
    run_vec *v = ctx;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        pl_run_info *p = realloc(v->r, cap * sizeof *p);
        if (!p)
            return 1;
        v->r = p;
        v->cap = cap;
    }
    v->r[v->n++] = *info;
    return 0;
}

typedef struct {
    pl_experiment *e;
    size_t n, cap;
} exp_vec;

static int collect_exp(void *ctx, const pl_experiment *e)
{
    exp_vec *v = ctx;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        pl_experiment *p = realloc(v->e, cap * sizeof *p);
        if (!p)
            return 1;
        v->e = p;
        v->cap = cap;
    }
    v->e[v->n++] = *e;
    return 0;
}

/* Which law the run's fitted validations favour: the one whose simulated
 * L_p is nearer the measured (rms), with both errors shown; "-" when the
 * run has not been validated under both. */
static void law_cell(pl_web *w, pl_buf *b, long long id)
{
    pl_validation line, plastic;
    pl_err e = {0};
    int hl = pl_validation_get(w->store, id, "line", "fitted", &line, &e) == PL_OK;
    int hp = pl_validation_get(w->store, id, "plastic", "fitted", &plastic, &e) == PL_OK;
    if (!hl || !hp) {
        pl_buf_puts(b, "<td class=\"na\">-</td>");
        return;
    }
    int l = line.rms_err_lp <= plastic.rms_err_lp;
    pl_buf_printf(b, "<td class=\"law\" title=\"rms L_p error, fitted: line %.3g, plastic %.3g\">"
                     "%s <small>(max rel. L_p error %.2f %% vs %.2f %%)</small></td>",
                  line.rms_err_lp, plastic.rms_err_lp, l ? "line" : "plastic",
                  100 * (l ? line.max_rel_err_lp : plastic.max_rel_err_lp),
                  100 * (l ? plastic.max_rel_err_lp : line.max_rel_err_lp));
}

/* Where the faults of a quality record go: JSON objects or words (for
 * /api/run/ID/meta), or words one a line (a tooltip). */
typedef struct {
    pl_buf *b;
    int n;
    int words;   /* 1: the faults in words, 0: as JSON objects */
} fault_out;

/* One fault as JSON: {"kind": ..., its fields, numbers as numbers}
 * ({"kind": null, "line": ...} for a line that does not parse), or its
 * words as a JSON string. */
static int fault_item(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    fault_out *o = ctx;
    char text[2048];
    if (o->words) {
        if (f)
            pl_fault_describe(f, text, sizeof text);
        else
            snprintf(text, sizeof text, "%.*s", (int)len, line);
        pl_buf_puts(o->b, o->n ? "," : "");
        pl_buf_json_str(o->b, text);
        o->n++;
        return 0;
    }
    pl_buf_puts(o->b, o->n++ ? ",{" : "{");
    if (!f) {
        snprintf(text, sizeof text, "%.*s", (int)len, line);
        pl_buf_puts(o->b, "\"kind\":null,\"line\":");
        pl_buf_json_str(o->b, text);
        pl_buf_puts(o->b, "}");
        return 0;
    }
    pl_buf_puts(o->b, "\"kind\":");
    pl_buf_json_str(o->b, f->kind);
    for (int i = 0; i < f->n; i++) {
        const pl_fault_field *fld = &f->field[i];
        double v[PL_FAULT_TEXT_MAX / 2];
        size_t nv = pl_fault_numbers(fld, v, sizeof v / sizeof *v);
        pl_buf_printf(o->b, ",\"%s\":", fld->key);   /* a key is [a-z0-9_] */
        if (fld->type == PL_FAULT_STRING)
            pl_buf_json_str(o->b, fld->text);
        else if (fld->type == PL_FAULT_NUMBER)
            pl_buf_json_num(o->b, fld->number, 15);
        else {
            pl_buf_puts(o->b, "[");
            for (size_t k = 0; k < nv; k++) {
                pl_buf_puts(o->b, k ? "," : "");
                pl_buf_json_num(o->b, v[k], 15);
            }
            pl_buf_puts(o->b, "]");
        }
    }
    pl_buf_puts(o->b, "}");
    return 0;
}

/* The faults in words, one a line, for a tooltip. */
static int fault_title(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    fault_out *o = ctx;
    char text[2048];
    if (f)
        pl_fault_describe(f, text, sizeof text);
    else
        snprintf(text, sizeof text, "%.*s", (int)len, line);
    pl_buf_puts(o->b, o->n++ ? "\n" : "");
    pl_buf_html(o->b, text);
    return 0;
}

/* The quality cell of the runs table: the record's word as a badge, the
 * faults in words as its tooltip; "-" for a run neither processed nor
 * refused. */
static void quality_cell(pl_web *w, pl_buf *b, long long id)
{
    pl_quality q;
    pl_err e = {0};
    fault_out o = {b, 0, 1};
    if (pl_quality_get(w->store, id, &q, &e) != PL_OK) {
        pl_buf_puts(b, "<td class=\"na\">-</td>");
        return;
    }
    if (!q.quality[0]) {
        pl_buf_puts(b, "<td class=\"na\" title=\"processed before prismlab recorded "
                       "data quality\">not assessed</td>");
        return;
    }
    pl_buf_printf(b, "<td><span class=\"badge q-%s\" title=\"", q.quality);
    pl_faults_each(q.faults, fault_title, &o);
    pl_buf_printf(b, "\">%s</span></td>", q.quality);
}

/* The file cell of the runs table: an imported run's file by its name
 * (the path it came from as the tooltip), a recorded run how it was
 * recorded (the DAQ card's device, or the rig simulator and its seed). */
static void file_cell(pl_buf *b, const pl_run_info *r)
{
    if (r->state == PL_RUN_IMPORTED) {
        const char *slash = strrchr(r->source_detail, '/');
        pl_buf_puts(b, "<td class=\"file\" title=\"");
        pl_buf_html(b, r->source_detail);
        pl_buf_puts(b, "\">");
        pl_buf_html(b, slash ? slash + 1 : r->source_detail);
    } else {
        pl_buf_puts(b, "<td class=\"file recorded\">recorded from ");
        pl_buf_html(b, r->source_detail[0] ? r->source_detail : r->source_kind);
    }
    pl_buf_puts(b, "</td>");
}

static enum MHD_Result page_runs(pl_web *w, struct MHD_Connection *c)
{
    const char *exp = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "experiment");
    if (exp && !*exp)
        exp = NULL;
    if (exp && pl_name_check("experiment", exp, NULL) != PL_OK)
        return fail(c, MHD_HTTP_BAD_REQUEST, "parameter 'experiment': a name is at most %d characters",
                    PL_NAME_MAX);
    run_vec runs = {0};
    exp_vec exps = {0};
    pl_err err = {0};
    pl_buf b;
    pl_buf_init(&b);
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_run_list(w->store, exp, collect_run, &runs, &err);
    if (st == PL_OK)
        st = pl_experiment_list(w->store, collect_exp, &exps, &err);
    if (st != PL_OK) {
        pthread_mutex_unlock(&w->lock);
        free(runs.r);
        free(exps.e);
        return fail(c, status_of(st), "%s", err.msg);
    }
    page_head(&b, "runs", exp);
    /* the select shows the filter in force: "all" only when there is none,
     * a name not in the catalogue as itself (and said below) */
    int known = 0;
    for (size_t i = 0; exp && i < exps.n; i++)
        known |= !strcmp(exp, exps.e[i].name);
    pl_buf_printf(&b, "<h1>Runs</h1>\n<form method=\"get\" action=\"/\" id=\"filter\">"
                      "<label>experiment <select name=\"experiment\">"
                      "<option value=\"\"%s>all</option>", exp ? "" : " selected");
    if (exp && !known) {
        pl_buf_puts(&b, "<option value=\"");
        pl_buf_html(&b, exp);
        pl_buf_puts(&b, "\" selected>");
        pl_buf_html(&b, exp);
        pl_buf_puts(&b, " (no such experiment)</option>");
    }
    for (size_t i = 0; i < exps.n; i++) {
        pl_buf_puts(&b, "<option value=\"");
        pl_buf_html(&b, exps.e[i].name);
        pl_buf_puts(&b, exp && !strcmp(exp, exps.e[i].name) ? "\" selected>" : "\">");
        pl_buf_html(&b, exps.e[i].name);
        pl_buf_puts(&b, "</option>");
    }
    pl_buf_puts(&b, "</select></label> <button>show</button></form>\n");
    pl_buf_printf(&b, "<table id=\"runs\" data-count=\"%zu\">\n<thead><tr><th>run</th><th>state</th>"
                      "<th>experiment</th><th>file (imported) or how recorded</th><th>prism</th><th>ramp</th>"
                      "<th>started (UTC)</th>"
                      "<th>duration (s)</th><th>impacts</th><th>L<sub>p</sub> at the end</th>"
                      "<th>data quality</th><th>law the data support</th></tr></thead>\n"
                      "<tbody>\n", runs.n);
    for (size_t i = 0; i < runs.n; i++) {
        const pl_run_info *r = &runs.r[i];
        pl_processing p;
        int processed = pl_derived_get(w->store, r->id, &p, &err) == PL_OK;
        pl_buf_printf(&b, "<tr data-run=\"%lld\"><td><a href=\"/run/%lld\">%lld</a>%s</td>"
                          "<td class=\"state-%s\">%s</td><td>",
                      r->id, r->id, r->id, r->synthetic ? " <abbr title=\"made by the rig simulator\">sim</abbr>" : "",
                      pl_run_state_name(r->state), pl_run_state_name(r->state));
        if (r->experiment[0]) {
            pl_buf_puts(&b, "<a href=\"/experiment/");
            url_enc(&b, r->experiment);
            pl_buf_puts(&b, "/\">");
            pl_buf_html(&b, r->experiment);
            pl_buf_puts(&b, "</a>");
        }
        pl_buf_puts(&b, "</td>");
        file_cell(&b, r);
        pl_buf_puts(&b, "<td>");
        pl_buf_html(&b, r->prism);
        pl_buf_puts(&b, "</td><td>");
        pl_buf_html(&b, r->ramp);
        pl_buf_puts(&b, "</td><td>");
        pl_buf_html(&b, r->started_utc);
        pl_buf_puts(&b, "</td>");
        num_cell(&b, "<td>%.3f</td>", r->sample_rate_hz > 0 ? (double)r->n_frames / r->sample_rate_hz : NAN);
        if (processed) {
            pl_buf_printf(&b, "<td>%lld</td>", p.n_impacts);
            num_cell(&b, "<td>%.3f</td>", p.lp_end);
        } else {
            pl_buf_puts(&b, "<td class=\"na\" colspan=\"2\">not processed</td>");
        }
        quality_cell(w, &b, r->id);
        law_cell(w, &b, r->id);
        pl_buf_puts(&b, "</tr>\n");
    }
    pthread_mutex_unlock(&w->lock);
    pl_buf_puts(&b, "</tbody></table>\n");
    if (runs.n == 0 && exp) {
        pl_buf_printf(&b, "<p id=\"none\">No runs: %s <b>", known ? "experiment" : "there is no experiment named");
        pl_buf_html(&b, exp);
        pl_buf_puts(&b, known ? "</b> has none yet.  " : "</b>.  ");
        pl_buf_puts(&b, "<a href=\"/\">Show all runs</a>.</p>\n");
    } else if (runs.n == 0) {
        pl_buf_puts(&b, "<p id=\"none\">No runs.</p>\n");
    }
    page_end(&b);
    free(runs.r);
    free(exps.e);
    return send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

static enum MHD_Result page_experiments(pl_web *w, struct MHD_Connection *c)
{
    exp_vec exps = {0};
    pl_err err = {0};
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_experiment_list(w->store, collect_exp, &exps, &err);
    pthread_mutex_unlock(&w->lock);
    if (st != PL_OK) {
        free(exps.e);
        return fail(c, status_of(st), "%s", err.msg);
    }
    pl_buf b;
    pl_buf_init(&b);
    page_head(&b, "experiments", NULL);
    pl_buf_puts(&b, "<h1>Experiments</h1>\n<ul id=\"experiments\">\n");
    for (size_t i = 0; i < exps.n; i++) {
        pl_buf_puts(&b, "<li><a href=\"/experiment/");
        url_enc(&b, exps.e[i].name);
        pl_buf_puts(&b, "/\">");
        pl_buf_html(&b, exps.e[i].name);
        pl_buf_puts(&b, "</a> ");
        pl_buf_html(&b, exps.e[i].description);
        pl_buf_puts(&b, " (<a href=\"/?experiment=");
        url_enc(&b, exps.e[i].name);
        pl_buf_puts(&b, "\">runs</a>)</li>\n");
    }
    pl_buf_puts(&b, "</ul>\n");
    page_end(&b);
    free(exps.e);
    return send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

/* ------------------------------------------------------------------ */
/* a run */

/* One law's row of the answer: lambda0 in the words of every page, its flag. */
static void answer_law(pl_buf *b, const char *name, const pl_answer_law *l, int fits)
{
    pl_buf_printf(b, "<tr data-law=\"%s\"><th>&lambda;<sub>0</sub>, %s law</th><td>", name, name);
    if (!l->has) {
        pl_buf_puts(b, "not validated</td></tr>");
        return;
    }
    char words[192];
    pl_lambda0_words(&l->v, 0, words, sizeof words);
    /* .flag: lambda0's own (the words say why there is no +-) */
    if (l->flag != PL_FIT_FLAG_NONE)
        pl_buf_printf(b, "<em class=\"flag\" data-flag=\"%s\">", pl_fit_flag_words(l->flag));
    pl_buf_html(b, words);
    if (l->flag != PL_FIT_FLAG_NONE)
        pl_buf_puts(b, "</em>");
    if (isfinite(l->v.max_rel_err_lp))
        pl_buf_printf(b, "; max rel. L<sub>p</sub> error %.3f %%", 100 * l->v.max_rel_err_lp);
    else
        pl_buf_puts(b, "; max rel. L<sub>p</sub> error none (the measured L<sub>p</sub> never "
                       "reached 1 impact)");
    /* its own class: .flag is lambda0's (undetermined, at its bound) */
    pl_buf_printf(b, "; rms %.3f impacts <span class=\"%s\">(%s)</span>", l->v.rms_err_lp,
                  fits ? "fits" : "nofit", fits ? "fits" : "does not fit");
    /* the +-'s parts, one sd each, with their meaning */
    if (l->flag == PL_FIT_FLAG_NONE && isfinite(l->stat_sd_rad) && isfinite(l->sys_sd_rad))
        pl_buf_printf(b, "; its parts, 1 sd: <span class=\"stat\" title=\"the fit's "
                      "statistics: block jackknife and correlated noise of L_p\">statistical "
                      "%.*f</span>, <span class=\"sys\" title=\"the lab's inputs at their "
                      "stated precision: local g against standard gravity, the ramp's angle "
                      "where not fitted, the model's step\">systematic %.*f</span> deg",
                      pl_fit_decimals(l->stat_sd_rad * 180 / M_PI), l->stat_sd_rad * 180 / M_PI,
                      pl_fit_decimals(l->sys_sd_rad * 180 / M_PI), l->sys_sd_rad * 180 / M_PI);
    pl_buf_puts(b, "</td></tr>");
}

/* The validation's answer on the run page: the verdict (as the report
 * works it out), each law's lambda0, the way to the experiment's report
 * (this server writes it on demand at /experiment/NAME/). */
static void answer_section(pl_buf *b, const pl_run_info *r, const pl_answer *a,
                           pl_status st, const char *why, const char *busy)
{
    pl_buf_puts(b, "<h2>Validation</h2>\n");
    /* a command working on the run now: said, and the page asks again
     * (run.js) until it is done */
    if (busy[0]) {
        pl_buf_puts(b, "<p id=\"under-way\">");
        pl_buf_html(b, busy);
        pl_buf_puts(b, (a->law[0].has || a->law[1].has) && st == PL_OK
                       ? "; below, the validation before it.  This section updates "
                         "itself when it is done.</p>\n"
                       : ".  This section updates itself when it is done.</p>\n");
    }
    if (st != PL_OK || (!a->law[0].has && !a->law[1].has)) {
        pl_buf_puts(b, "<p id=\"answer\" data-verdict=\"none\">");
        if (st != PL_OK) {
            pl_buf_puts(b, "The validation could not be read: ");
            pl_buf_html(b, why);
        } else if (busy[0]) {
            pl_buf_puts(b, "No verdict yet.");
        } else {
            pl_buf_printf(b, "Not validated: <code>prismlab validate %lld</code> "
                             "fits both laws and gives the verdict.", r->id);
        }
        pl_buf_puts(b, "</p>\n");
        return;
    }
    pl_buf_printf(b, "<table class=\"info\" id=\"answer\" data-verdict=\"%s\"><tr><th>verdict</th><td>",
                  a->why[0] ? "error" : a->withheld[0] ? "withheld" : pl_verdict_name(a->verdict.law));
    if (a->why[0]) {
        pl_buf_puts(b, "? (");
        pl_buf_html(b, a->why);
        pl_buf_puts(b, ")");
    } else if (a->withheld[0]) {
        pl_buf_puts(b, "<b id=\"withheld\">none</b>: ");
        pl_buf_html(b, a->withheld);
    } else {
        pl_buf_printf(b, "<b>%s</b>", pl_verdict_words(a->verdict.law));
        if (a->verdict.law != PL_VERDICT_NONE)
            pl_buf_printf(b, " <small>(t = %.3g over %zu blocks, 95 %% level %.3g; rms plastic / line "
                             "%.3g)</small>", a->verdict.t_stat, a->verdict.blocks, a->verdict.t_crit,
                          a->verdict.rms_ratio);
    }
    pl_buf_puts(b, "</td></tr>");
    answer_law(b, "line", &a->law[0], a->fits[0]);
    answer_law(b, "plastic", &a->law[1], a->fits[1]);
    pl_buf_puts(b, "<tr><th>report</th><td>");
    if (r->experiment[0]) {
        pl_buf_puts(b, "<a id=\"report-link\" href=\"/experiment/");
        url_enc(b, r->experiment);
        pl_buf_puts(b, "/\">the report of experiment ");
        pl_buf_html(b, r->experiment);
        pl_buf_puts(b, "</a>");
    } else {
        pl_buf_printf(b, "none: the run has no experiment (<code>prismlab run set %lld --experiment E</code>)",
                      r->id);
    }
    pl_buf_puts(b, "</td></tr></table>\n");
}

/* /api/run/ID/answer: the run page's validation section, as HTML */
static enum MHD_Result api_answer(pl_web *w, struct MHD_Connection *c, long long id)
{
    pl_run_info r;
    pl_answer ans;
    pl_err err = {0}, aerr = {0};
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_run_get(w->store, id, &r, &err);
    pl_status ast = st == PL_OK ? pl_answer_get(w->store, id, &ans, &aerr) : st;
    char busy[256] = "";
    if (st == PL_OK)
        pl_work_describe(w->store, id, busy, sizeof busy);
    pthread_mutex_unlock(&w->lock);
    if (st != PL_OK)
        return fail(c, status_of(st), "%s", err.msg);
    scrub_paths(aerr.msg);
    pl_buf b;
    pl_buf_init(&b);
    answer_section(&b, &r, &ans, ast, aerr.msg, busy);
    return send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

/* What the impacts' instants and their +- mean (issue 33): the decoded
 * steps' centres, or the contacts when the decoder's delay was known, as
 * the processing record says; a record from before prismlab wrote it
 * holds centres. */
static void impact_t_row(pl_buf *b, const pl_processing *p)
{
    char what[32], from[32], shift[32];
    pl_processing_param(p, "impact_t", what, sizeof what);
    pl_processing_param(p, "decoder_delay_from", from, sizeof from);
    pl_processing_param(p, "decoder_shift_s", shift, sizeof shift);
    double us = shift[0] ? -1e6 * strtod(shift, NULL) : 0;
    pl_buf_puts(b, "<tr><th>impact instants</th><td id=\"impact-t\">");
    if (!strcmp(what, "contact_given_delay"))
        pl_buf_printf(b, "the contacts: the decoded steps' centres moved back by the LDV "
                         "decoder's delay, %.4g &micro;s (from %s)", us,
                      !strcmp(from, "option") ? "<code>process --decoder-delay</code>"
                                              : "the channels' stored delays");
    else if (!strcmp(what, "contact_measured_delay"))
        pl_buf_printf(b, "the contacts: the decoded steps' centres moved back by %.4g "
                         "&micro;s, the decoder's delay measured on the run's steps", us);
    else
        pl_buf_puts(b, "the centres of the decoded steps, later than the contacts by the "
                       "LDV decoder's delay, which this run does not state (<code>import "
                       "--decoder-delay-s</code>, rig.ini <code>[beams] decoder_delay_s</code>)");
    pl_buf_puts(b, "; &plusmn; t is one standard deviation of each instant's own scatter, "
                   "not the delay's; &plusmn; ratio one standard error of each ratio, from "
                   "its tops' fits scaled to the run's noise (docs/process.md)</td></tr>");
}

/* One processing warning as an item of the run page's list. */
static int warning_item(void *ctx, const char *line, size_t len)
{
    char text[2048];
    snprintf(text, sizeof text, "%.*s", (int)len, line);
    pl_buf_puts(ctx, "<li>");
    pl_buf_html(ctx, text);
    pl_buf_puts(ctx, "</li>");
    return 0;
}

static enum MHD_Result page_run(pl_web *w, struct MHD_Connection *c, long long id)
{
    pl_run_info r;
    pl_processing p;
    pl_channel ch[2] = {{.decoder_delay_s = 0}};
    pl_err err = {0}, ignored;
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_run_get(w->store, id, &r, &err);
    int processed = st == PL_OK && pl_derived_get(w->store, id, &p, &err) == PL_OK;
    if (st == PL_OK)
        pl_run_channels(w->store, id, ch, 2, &ignored);
    pthread_mutex_unlock(&w->lock);
    if (st != PL_OK)
        return fail(c, status_of(st), "%s", err.msg);
    char title[32];
    snprintf(title, sizeof title, "run %lld", id);
    pl_buf b;
    pl_buf_init(&b);
    page_head(&b, title, NULL);
    pl_buf_printf(&b, "<h1>Run %lld%s</h1>\n<table class=\"info\">", id,
                  r.synthetic ? " <small class=\"synthetic\">SYNTHETIC (rig simulator)</small>" : "");
    const char *keys[] = {"state", "experiment", "prism", "ramp", "started (UTC)", "ended (UTC)",
                          "source", "notes"};
    const char *vals[] = {pl_run_state_name(r.state), r.experiment, r.prism, r.ramp,
                          r.started_utc, r.ended_utc, r.source_detail, r.notes};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!vals[i][0])
            continue;
        pl_buf_printf(&b, "<tr><th>%s</th><td>", keys[i]);
        pl_buf_html(&b, vals[i]);
        pl_buf_puts(&b, "</td></tr>");
    }
    pl_buf_printf(&b, "<tr><th>frames</th><td>%lld at %g Hz (%.3f s)</td></tr>", r.n_frames,
                  r.sample_rate_hz, r.sample_rate_hz > 0 ? (double)r.n_frames / r.sample_rate_hz : 0.0);
    /* the LDV decoders' delays the lab gave (issue 33): what puts the
     * impacts at the contact rather than at the decoded steps' centres */
    pl_buf_puts(&b, "<tr><th>LDV decoder delay</th><td id=\"decoder-delay\">");
    for (int i = 0; i < 2 && i < r.n_channels; i++)
        if (ch[i].decoder_delay_s > 0)
            pl_buf_printf(&b, "%s%.4g &micro;s", i ? ", " : "", ch[i].decoder_delay_s * 1e6);
        else
            pl_buf_printf(&b, "%snot known", i ? ", " : "");
    pl_buf_puts(&b, "</td></tr>");
    if (processed)
        pl_buf_printf(&b, "<tr><th>processed</th><td>release %.4f s, end %.4f s, %lld impacts, "
                          "L<sub>p</sub> at the end %.3f, &omega;<sub>+</sub>/&omega;<sub>-</sub> "
                          "%.5f &plusmn; %.2g (1 sd of one impact's ratio; the mean's %.2g)</td></tr>",
                      p.release_t_s, p.end_t_s, p.n_impacts, p.lp_end, p.ratio_mean, p.ratio_sd,
                      p.ratio_mean_se);
    if (processed && p.n_impacts > 0)
        impact_t_row(&b, &p);
    pl_buf_puts(&b, "</table>\n");
    /* the validation's answer: run.js asks /api/run/ID/answer once the
     * plots are drawn (its simulations take a 10-minute run's page
     * ~0.25 s, which the first paint and the plots need not wait for) */
    pl_buf_puts(&b, "<div id=\"validation\"><h2>Validation</h2><p class=\"hint\">Loading the "
                    "verdict&hellip;</p></div>\n");
    /* the data quality's badge and faults: run.js, from /api/run/ID/meta */
    pl_buf_puts(&b, "<div id=\"quality\"></div>\n");
    if (!processed)
        pl_buf_puts(&b, "<p class=\"warn\">Not processed: only the raw velocities are shown "
                        "(<code>prismlab process</code> derives &omega;, L<sub>p</sub> and the impacts).</p>\n");
    /* the run's central measurement, near the top: run.js draws it from
     * /api/run/ID/ratios once the time plots are drawn */
    if (processed && p.n_impacts > 0)
        pl_buf_puts(&b, "<h2>Impact ratio &omega;<sub>+</sub>/&omega;<sub>-</sub></h2>\n"
                        "<p class=\"hint\" id=\"ratio-note\">Loading the impacts&hellip;</p>\n"
                        "<div class=\"plot\" id=\"plot-ratio\"></div>\n");
    /* each finding once: the warnings a fault above already says are
     * left out (process/warnings.h) */
    if (processed && pl_warnings_count(p.warnings, p.faults)) {
        pl_buf_puts(&b, "<h2>Processing warnings</h2>\n<ul id=\"warnings\">");
        pl_warnings_each(p.warnings, p.faults, warning_item, &b);
        pl_buf_puts(&b, "</ul>\n");
    }
    /* the loading sign shows from the first paint until run.js has drawn
     * the plots (or says what failed) */
    pl_buf_printf(&b, "<p class=\"hint\">Drag across a plot to zoom (all time plots follow); "
                      "double-click to see the whole run.  <span id=\"status\"></span></p>\n"
                      "<p id=\"loading\" class=\"loading\" role=\"status\">"
                      "<span class=\"spinner\"></span>Loading the plots&hellip;</p>\n"
                      "<div id=\"plots\" data-run=\"%lld\">\n"
                      "<div class=\"plot\" id=\"plot-vp\"></div>\n"
                      "<div class=\"plot\" id=\"plot-omega\"></div>\n"
                      "<div class=\"plot\" id=\"plot-lp\"></div>\n"
                      "<h2>Spectrum of the residual of &omega;</h2>\n"
                      "<div class=\"plot\" id=\"plot-psd\"></div>\n</div>\n", id);
    /* the impacts' table is filled by run.js a page at a time from
     * /api/run/ID/impacts: a 10-minute run has some 40 000, and a page
     * holding them all took the browser seconds to lay out before the
     * plots could start */
    if (processed && p.n_impacts > 0)
        pl_buf_printf(&b, "<h2>Impacts</h2>\n<p id=\"impacts-nav\"><button id=\"impacts-prev\" "
                          "disabled>earlier</button> <span id=\"impacts-range\"></span> "
                          "<button id=\"impacts-next\" disabled>later</button></p>\n"
                          "<table id=\"impacts\" data-count=\"%lld\"><thead><tr>"
                          "<th>#</th><th title=\"the instant: see 'impact instants' above\">t (s)</th>"
                          "<th title=\"one standard deviation of the instant's own scatter\">"
                          "&plusmn; t (&micro;s)</th><th>&omega;<sub>-</sub> (rad/s)</th>"
                          "<th>&omega;<sub>+</sub> (rad/s)</th><th>&omega;<sub>+</sub>/&omega;<sub>-</sub></th>"
                          "<th title=\"one standard error of the ratio\">&plusmn; ratio</th>"
                          "<th>step</th></tr></thead><tbody></tbody></table>\n", p.n_impacts);
    pl_buf_puts(&b, "<script src=\"/static/uPlot.iife.min.js\"></script>\n"
                    "<script src=\"/static/run.js\"></script>\n");
    page_end(&b);
    return send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

static void json_array(pl_buf *b, const char *name, const double *v, size_t n, int digits)
{
    pl_buf_printf(b, "\"%s\":[", name);
    for (size_t i = 0; i < n; i++) {
        if (i)
            pl_buf_add(b, ",", 1);
        pl_buf_json_num(b, v[i], digits);
    }
    pl_buf_add(b, "]", 1);
}

/* ,"quality":..., "faults":[...], "fault_words":[...] of run id: the
 * record's word (null: neither processed nor refused, or processed
 * before prismlab recorded it), its faults as objects (numbers as
 * numbers, docs/data-model.md) and the same in words, in order. */
static void json_quality(pl_web *w, pl_buf *b, long long id)
{
    pl_quality q;
    pl_err e = {0};
    fault_out o = {b, 0, 0};
    if (pl_quality_get(w->store, id, &q, &e) != PL_OK || !q.quality[0]) {
        pl_buf_printf(b, ",\"quality\":null,\"faults\":[],\"fault_words\":[]");
        return;
    }
    pl_buf_puts(b, ",\"quality\":");
    pl_buf_json_str(b, q.quality);
    pl_buf_puts(b, ",\"faults\":[");
    pl_faults_each(q.faults, fault_item, &o);
    pl_buf_puts(b, "],\"fault_words\":[");
    o.n = 0;
    o.words = 1;
    pl_faults_each(q.faults, fault_item, &o);
    pl_buf_puts(b, "]");
}

/* Run id's cached entry into *e with w->lock held (the caller unlocks);
 * on failure the lock is released and the status returned. */
static pl_status lock_run(pl_web *w, long long id, pl_run_entry **e, pl_err *err)
{
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_runcache_get(w->cache, w->store, id, e, err);
    if (st != PL_OK)
        pthread_mutex_unlock(&w->lock);
    return st;
}

static enum MHD_Result api_meta(pl_web *w, struct MHD_Connection *c, long long id)
{
    pl_err err = {0};
    pl_run_entry *e;
    pl_buf b;
    pl_buf_init(&b);
    pl_status st = lock_run(w, id, &e, &err);
    if (st != PL_OK)
        return fail(c, status_of(st), "%s", err.msg);
    double rate = pl_trace_rate(e->trace);
    long long frames = pl_trace_frames(e->trace);
    pl_buf_printf(&b, "{\"run\":%lld,\"rate\":%.10g,\"frames\":%lld,\"duration\":%.10g,"
                      "\"processed\":%s", id, rate, frames, (double)frames / rate,
                  e->processed ? "true" : "false");
    json_quality(w, &b, id);
    if (e->processed) {
        pl_buf_printf(&b, ",\"release\":%.10g,\"end\":%.10g,\"series_rate\":%.10g",
                      e->proc.release_t_s, e->proc.end_t_s, e->rate);
        pl_buf_puts(&b, ",\"sim\":");
        if (e->simulated)
            pl_buf_json_str(&b, e->sim_label);
        else
            pl_buf_puts(&b, "null");
        const pl_impact *imp = e->imp;
        pl_buf_puts(&b, ",\"impacts\":[");
        for (size_t i = 0; i < e->n_imp; i++) {
            pl_buf_printf(&b, "%s[%.10g,", i ? "," : "", imp[i].t_s);
            pl_buf_json_num(&b, imp[i].ratio, 6);
            pl_buf_printf(&b, ",%d]", imp[i].confirmed);
        }
        pl_buf_puts(&b, "]");
        double *psd = NULL, t0, df;
        size_t np = 0;
        if (pl_derived_series(w->store, id, "psd_residual", 1, &psd, &np, &t0, &df, &err) == PL_OK) {
            pl_buf_printf(&b, ",\"psd\":{\"df\":%.10g,", 1 / df);
            json_array(&b, "v", psd, np, 6);
            pl_buf_puts(&b, "}");
            free(psd);
        }
        pl_err_clear(&err);
        st = PL_OK;
    }
    pthread_mutex_unlock(&w->lock);
    pl_buf_puts(&b, "}\n");
    if (st != PL_OK) {
        pl_buf_free(&b);
        return fail(c, status_of(st), "%s", err.msg);
    }
    return send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

/* sep, then "[v0,v1,...]": v[k] to digits[k] significant digits, null
 * where it is not finite (a row of an impacts' answer). */
static void json_row(pl_buf *b, const char *sep, size_t n, const double *v, const int *digits)
{
    pl_buf_puts(b, sep);
    for (size_t k = 0; k < n; k++) {
        pl_buf_puts(b, k ? "," : "[");
        pl_buf_json_num(b, v[k], digits[k]);
    }
    pl_buf_puts(b, "]");
}

/* /api/run/ID/ratios: what the run page's figure of the impact ratio
 * draws: each impact's [omega_minus, ratio, ratio_se] (those with a
 * ratio, in time order; ratio_se null where unknown), each law's
 * predicted ratio (model/validate/ratio.h; null where none) and the
 * run's mean with its standard error. */
static enum MHD_Result api_ratios(pl_web *w, struct MHD_Connection *c, long long id)
{
    pl_err err = {0};
    pl_run_entry *e;
    double law[2];
    pl_status st = lock_run(w, id, &e, &err);
    if (st != PL_OK)
        return fail(c, status_of(st), "%s", err.msg);
    st = pl_law_ratios(w->store, id, law, &err);
    if (st != PL_OK) {
        pthread_mutex_unlock(&w->lock);
        return fail(c, status_of(st), "%s", err.msg);
    }
    pl_buf b;
    pl_buf_init(&b);
    pl_buf_printf(&b, "{\"run\":%lld,\"line\":", id);
    pl_buf_json_num(&b, law[0], 8);
    pl_buf_puts(&b, ",\"plastic\":");
    pl_buf_json_num(&b, law[1], 8);
    pl_buf_puts(&b, ",\"mean\":");
    pl_buf_json_num(&b, e->processed ? e->proc.ratio_mean : NAN, 8);
    pl_buf_puts(&b, ",\"mean_se\":");
    pl_buf_json_num(&b, e->processed ? e->proc.ratio_mean_se : NAN, 3);
    pl_buf_printf(&b, ",\"total\":%zu,\"impacts\":[", e->n_imp);
    int n = 0;
    for (size_t i = 0; i < e->n_imp; i++) {
        const pl_impact *m = &e->imp[i];
        if (isfinite(m->omega_minus) && isfinite(m->ratio))
            json_row(&b, n++ ? "," : "", 3, (const double[]){m->omega_minus, m->ratio, m->ratio_se},
                     (const int[]){8, 8, 3});
    }
    pthread_mutex_unlock(&w->lock);
    pl_buf_puts(&b, "]}\n");
    return send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

enum { IMPACTS_PAGE = 200, IMPACTS_MAX = 1000 };

/* A page of the impacts' table: rows [from, from + n) (n at most
 * IMPACTS_MAX, default IMPACTS_PAGE) as [t, omega-, omega+, ratio,
 * confirmed, t_sd, ratio_se], with the run's total. */
static enum MHD_Result api_impacts(pl_web *w, struct MHD_Connection *c, long long id)
{
    char msg[200];
    double from = 0, n = IMPACTS_PAGE;
    if (arg_double(c, "from", 0, 1e15, &from, msg, sizeof msg) < 0 ||
        arg_double(c, "n", 1, IMPACTS_MAX, &n, msg, sizeof msg) < 0)
        return fail(c, MHD_HTTP_BAD_REQUEST, "%s", msg);
    if (from != floor(from) || n != floor(n))
        return fail(c, MHD_HTTP_BAD_REQUEST, "parameters 'from', 'n': expected whole "
                    "numbers, got %g and %g", from, n);
    pl_err err = {0};
    pl_run_entry *e;
    pl_buf b;
    pl_buf_init(&b);
    pl_status st = lock_run(w, id, &e, &err);
    if (st != PL_OK)
        return fail(c, status_of(st), "%s", err.msg);
    size_t a = (size_t)fmin(from, (double)e->n_imp);
    size_t z = (size_t)fmin((double)a + n, (double)e->n_imp);
    pl_buf_printf(&b, "{\"run\":%lld,\"total\":%zu,\"from\":%zu,\"rows\":[", id, e->n_imp, a);
    for (size_t i = a; i < z; i++) {
        const pl_impact *m = &e->imp[i];
        json_row(&b, i > a ? "," : "", 7,
                 (const double[]){m->t_s, m->omega_minus, m->omega_plus, m->ratio,
                                  m->confirmed, m->t_sd_s, m->ratio_se},
                 (const int[]){10, 8, 8, 8, 10, 4, 4});
    }
    pthread_mutex_unlock(&w->lock);
    pl_buf_puts(&b, "]}\n");
    return send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

/* The plots' data for the window [t0, t1] s at px columns: the envelopes
 * of v_p1, v_p2 (from the chunks) and of the derived series. */
static enum MHD_Result api_window(pl_web *w, struct MHD_Connection *c, long long id)
{
    char msg[200];
    double t0 = 0, t1 = 1e12, px = 1000;
    if (arg_double(c, "t0", -1e9, 1e12, &t0, msg, sizeof msg) < 0 ||
        arg_double(c, "t1", -1e9, 1e12, &t1, msg, sizeof msg) < 0 ||
        arg_double(c, "px", 1, MAX_PX, &px, msg, sizeof msg) < 0)
        return fail(c, MHD_HTTP_BAD_REQUEST, "%s", msg);
    if (!(t1 > t0))
        return fail(c, MHD_HTTP_BAD_REQUEST, "parameters 't0', 't1': expected t0 < t1, "
                    "got %g and %g", t0, t1);
    size_t cols = (size_t)px;
    pl_err err = {0};
    pl_run_entry *e;
    pl_envelope_cols raw = {0}, der = {0};
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_runcache_get(w->cache, w->store, id, &e, &err);
    double rate = 0, srate = 0, st0 = 0;
    long long frames = 0;
    if (st == PL_OK) {
        rate = pl_trace_rate(e->trace);
        frames = pl_trace_frames(e->trace);
        double f0 = floor(fmax(0, t0) * rate), f1 = ceil(fmin(t1 * rate, (double)frames));
        st = pl_trace_window(e->trace, w->store, (long long)f0,
                             (long long)fmax(f0, f1), cols, &raw, &err);
    }
    if (st == PL_OK && e->processed) {
        srate = e->rate;
        st0 = e->t0;
        double a = fmax(0, ceil((t0 - e->t0) * e->rate)), bb = floor((t1 - e->t0) * e->rate) + 1;
        size_t ia = (size_t)fmin(a, (double)e->n), ib = (size_t)fmin(fmax(bb, 0), (double)e->n);
        if (ib < ia)
            ib = ia;
        const double *x[4] = {e->s[0], e->s[1], e->s[2], e->s[3]};
        st = pl_envelope(x, e->simulated ? 4 : 2, ia, ib, cols, &der, &err);
    }
    pthread_mutex_unlock(&w->lock);
    if (st != PL_OK) {
        pl_envelope_cols_free(&raw);
        return fail(c, status_of(st), "%s", err.msg);
    }
    pl_buf b;
    pl_buf_init(&b);
    pl_buf_printf(&b, "{\"t0\":%.10g,\"t1\":%.10g,\"px\":%zu,\"frames\":%lld,\"rate\":%.10g,"
                      "\"vp\":{\"full\":%s,\"n\":%zu,", t0, t1, cols, frames, rate,
                  raw.full ? "true" : "false", raw.n);
    pl_buf_puts(&b, "\"t\":[");
    for (size_t i = 0; i < raw.n; i++)
        pl_buf_printf(&b, "%s%.10g", i ? "," : "", (double)raw.first[i] / rate);
    pl_buf_puts(&b, "],");
    json_array(&b, "min1", raw.min[0], raw.n, 6);
    pl_buf_puts(&b, ",");
    json_array(&b, "max1", raw.max[0], raw.n, 6);
    pl_buf_puts(&b, ",");
    json_array(&b, "min2", raw.min[1], raw.n, 6);
    pl_buf_puts(&b, ",");
    json_array(&b, "max2", raw.max[1], raw.n, 6);
    pl_buf_puts(&b, "}");
    if (der.n_ch) {
        static const char *const names[4][2] = {{"omega_min", "omega_max"}, {"lp_min", "lp_max"},
                                                {"somega_min", "somega_max"}, {"slp_min", "slp_max"}};
        pl_buf_printf(&b, ",\"derived\":{\"full\":%s,\"n\":%zu,\"t\":[", der.full ? "true" : "false",
                      der.n);
        for (size_t i = 0; i < der.n; i++)
            pl_buf_printf(&b, "%s%.10g", i ? "," : "", st0 + (double)der.first[i] / srate);
        pl_buf_puts(&b, "]");
        for (int k = 0; k < der.n_ch; k++) {
            pl_buf_puts(&b, ",");
            json_array(&b, names[k][0], der.min[k], der.n, 7);
            pl_buf_puts(&b, ",");
            json_array(&b, names[k][1], der.max[k], der.n, 7);
        }
        pl_buf_puts(&b, "}");
    }
    pl_buf_puts(&b, "}\n");
    pl_envelope_cols_free(&raw);
    pl_envelope_cols_free(&der);
    return send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

/* ------------------------------------------------------------------ */
/* an experiment: the validation report (model/validate/report.c), written
 * into the server's own temporary folder and served from there by name */

static int report_file_ok(const char *f)
{
    size_t n = strlen(f);
    if (n == 0 || n > 64 || f[0] == '.')
        return 0;
    for (const char *p = f; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.'))
            return 0;
    return 1;
}

static enum MHD_Result send_file(struct MHD_Connection *c, const char *path,
                                 const char *mime, const char *csp)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(c, MHD_HTTP_NOT_FOUND, "no such file in the report");
    pl_buf b;
    pl_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        pl_buf_add(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        pl_buf_free(&b);
        return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "reading the report failed");
    }
    return send_buf(c, MHD_HTTP_OK, mime, &b, csp);
}

/* The report's own page has an inline style and script (it is made to
 * open from disk); everything else stays 'self'. */
#define REPORT_CSP "default-src 'self'; style-src 'self' 'unsafe-inline'; " \
    "script-src 'self' 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'"

static enum MHD_Result page_experiment(pl_web *w, struct MHD_Connection *c,
                                       const char *name, const char *file)
{
    if (!*name || pl_name_check("experiment", name, NULL) != PL_OK)
        return fail(c, MHD_HTTP_BAD_REQUEST, "experiment name: expected 1 to %d characters",
                    PL_NAME_MAX);
    if (!*file)
        file = "index.html";
    if (!report_file_ok(file))
        return fail(c, MHD_HTTP_BAD_REQUEST, "report file '%.64s': expected a plain file name", file);
    const char *dot = strrchr(file, '.');
    const char *mime = !dot ? NULL : !strcmp(dot, ".html") ? "text/html; charset=utf-8"
                     : !strcmp(dot, ".svg") ? "image/svg+xml"
                     : !strcmp(dot, ".csv") || !strcmp(dot, ".md") ? "text/plain; charset=utf-8"
                     : NULL;
    if (!mime)
        return fail(c, MHD_HTTP_NOT_FOUND, "the report has no file '%s'", file);
    char path[PATH_MAX + 80];
    pl_err err = {0};
    pthread_mutex_lock(&w->lock);
    report_dir *rd = NULL;
    for (int i = 0; i < w->n_reports && !rd; i++)
        if (!strcmp(w->reports[i].name, name))
            rd = &w->reports[i];
    pl_status st = PL_OK;
    /* index.html is written anew each time (the store may have changed);
     * the figures it names are the ones written with it */
    if (!strcmp(file, "index.html") || !rd) {
        if (!rd) {
            rd = &w->reports[w->n_reports < MAX_REPORTS ? w->n_reports++
                                                        : w->next_report++ % MAX_REPORTS];
            snprintf(rd->name, sizeof rd->name, "%s", name);
            snprintf(rd->dir, sizeof rd->dir, "%s/r%d", w->tmp, (int)(rd - w->reports) % 100);
        }
        pl_report_stats stats;
        st = pl_report_write(w->store, name, rd->dir, &stats, &err);
        if (st != PL_OK)
            rd->name[0] = '\0';
    }
    if (st == PL_OK)
        snprintf(path, sizeof path, "%s/%s", rd->dir, file);
    pthread_mutex_unlock(&w->lock);
    if (st != PL_OK)
        return fail(c, status_of(st), "%s", err.msg);
    return send_file(c, path, mime, REPORT_CSP);
}

/* ------------------------------------------------------------------ */
/* live: the daemon's stream as server-sent events */

static enum MHD_Result page_live(pl_web *w, struct MHD_Connection *c)
{
    pl_buf b;
    pl_buf_init(&b);
    page_head(&b, "live", NULL);
    pl_buf_printf(&b, "<h1>Live</h1>\n<p id=\"daemon\" data-control=\"%d\">daemon: <code>",
                  w->control);
    pl_buf_html(&b, w->socket);
    pl_buf_puts(&b, "</code> <span id=\"state\">connecting</span></p>\n"
                    "<div id=\"controls\">"
                    "<button id=\"arm\" disabled>arm</button> "
                    "<button id=\"start\" disabled>start</button> "
                    "<button id=\"stop\" disabled>stop</button> "
                    "<span id=\"reply\"></span></div>\n"
                    "<div id=\"levels\"><div class=\"level\"><span>v<sub>p1</sub></span>"
                    "<meter id=\"level1\" min=\"-0.5\" max=\"0.5\" value=\"0\"></meter>"
                    "<output id=\"value1\">-</output> m/s</div>"
                    "<div class=\"level\"><span>v<sub>p2</sub></span>"
                    "<meter id=\"level2\" min=\"-0.5\" max=\"0.5\" value=\"0\"></meter>"
                    "<output id=\"value2\">-</output> m/s</div></div>\n"
                    "<div class=\"plot\" id=\"plot-live\"></div>\n"
                    "<p class=\"hint\">The last 10 s of both channels as the daemon reads them "
                    "(min and max of each 5 ms).  <span id=\"latency\"></span></p>\n"
                    "<script src=\"/static/uPlot.iife.min.js\"></script>\n"
                    "<script src=\"/static/live.js\"></script>\n");
    page_end(&b);
    return send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

typedef struct {
    pl_web *w;
    int fd;                 /* the daemon's stream; -1: not connected */
    char in[65536];
    size_t in_len;
    int said_hello;
    double last_sent;
} sse;

static double mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int stream_connect(const char *path, char *why, size_t size)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, size, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        write(fd, "stream\n", 7) != 7) {
        /* the socket is the store's path with .sock: not for visitors */
        snprintf(why, size, "no daemon answers on the store's socket (%s)", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Turns the daemon's lines into events: "S ..." status, "D ..." data,
 * "G n" a gap (n lines the daemon could not queue for us). */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    sse *s = cls;
    size_t out = 0;
    if (!s->said_hello) {
        s->said_hello = 1;
        char why[300];
        s->fd = stream_connect(s->w->socket, why, sizeof why);
        if (s->fd < 0) {
            int n = snprintf(buf, max, "retry: 2000\nevent: nodaemon\ndata: %s\n\n", why);
            return n > 0 && (size_t)n < max ? n : MHD_CONTENT_READER_END_WITH_ERROR;
        }
        int n = snprintf(buf, max, "retry: 1000\n: prismlab live\n\n");
        s->last_sent = mono_now();
        return n;
    }
    if (s->fd < 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    for (;;) {
        if (s->w->stopping)
            return out ? (ssize_t)out : MHD_CONTENT_READER_END_OF_STREAM;
        /* whole lines already here first */
        char *nl;
        while ((nl = memchr(s->in, '\n', s->in_len))) {
            size_t k = (size_t)(nl - s->in);
            const char *ev = s->in[0] == 'D' ? "data" : s->in[0] == 'S' ? "status"
                           : s->in[0] == 'G' ? "gap" : s->in[0] == 'e' ? "nodaemon" : "reply";
            if (out + k + 32 > max)
                return out ? (ssize_t)out : MHD_CONTENT_READER_END_WITH_ERROR;
            out += (size_t)snprintf(buf + out, max - out, "event: %s\ndata: ", ev);
            memcpy(buf + out, s->in, k);
            out += k;
            memcpy(buf + out, "\n\n", 2);
            out += 2;
            s->in_len -= k + 1;
            memmove(s->in, nl + 1, s->in_len);
        }
        if (out) {
            s->last_sent = mono_now();
            return (ssize_t)out;
        }
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        int r = poll(&p, 1, 250);
        if (r > 0) {
            ssize_t got = read(s->fd, s->in + s->in_len, sizeof s->in - s->in_len);
            if (got <= 0) {
                close(s->fd);
                s->fd = -1;
                int n = snprintf(buf, max, "event: nodaemon\ndata: the daemon closed the stream\n\n");
                return n;
            }
            s->in_len += (size_t)got;
            if (s->in_len == sizeof s->in)   /* a line longer than the buffer: not ours */
                s->in_len = 0;
        } else if (mono_now() - s->last_sent > 5) {
            s->last_sent = mono_now();
            return snprintf(buf, max, ": keepalive\n\n");
        }
    }
}

static void sse_free(void *cls)
{
    sse *s = cls;
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}

static enum MHD_Result api_live(pl_web *w, struct MHD_Connection *c)
{
    sse *s = calloc(1, sizeof *s);
    if (!s)
        return fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    s->w = w;
    s->fd = -1;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 65536,
                                                               sse_read, s, sse_free);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static int token_equal(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (strlen(a) != n)
        return 0;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static enum MHD_Result api_control(pl_web *w, struct MHD_Connection *c, const char *cmd)
{
    if (strcmp(cmd, "arm") && strcmp(cmd, "start") && strcmp(cmd, "stop"))
        return fail(c, MHD_HTTP_NOT_FOUND, "no control command '%.20s' (arm, start, stop)", cmd);
    if (!w->control)
        return fail(c, MHD_HTTP_FORBIDDEN, "read-only: start prismlab serve with --control "
                    "to arm, start and stop the daemon");
    const char *tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Prismlab-Token");
    if (!tok || !token_equal(tok, w->token))
        return fail(c, MHD_HTTP_FORBIDDEN, "%s: the X-Prismlab-Token header must carry "
                    "the token prismlab serve printed at start-up", tok ? "wrong token" : "no token");
    char reply[512];
    pl_err err = {0};
    if (pl_daemon_command(w->socket, cmd, reply, sizeof reply, &err) != PL_OK)
        return fail(c, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", err.msg);
    pl_buf b;
    pl_buf_init(&b);
    pl_buf_puts(&b, "{\"reply\":");
    pl_buf_json_str(&b, reply);
    pl_buf_puts(&b, "}\n");
    return send_buf(c, strncmp(reply, "ok", 2) ? MHD_HTTP_CONFLICT : MHD_HTTP_OK,
                    "application/json", &b, NULL);
}

static enum MHD_Result api_status(pl_web *w, struct MHD_Connection *c)
{
    char reply[512];
    pl_err err = {0};
    pl_buf b;
    pl_buf_init(&b);
    if (pl_daemon_command(w->socket, "status", reply, sizeof reply, &err) != PL_OK) {
        pl_buf_puts(&b, "{\"daemon\":false,\"error\":");
        pl_buf_json_str(&b, err.msg);
    } else {
        pl_buf_puts(&b, "{\"daemon\":true,\"reply\":");
        pl_buf_json_str(&b, reply);
    }
    pl_buf_printf(&b, ",\"control\":%s}\n", w->control ? "true" : "false");
    return send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

/* ------------------------------------------------------------------ */
/* routing */

static enum MHD_Result static_file(struct MHD_Connection *c, const char *name)
{
    const pl_web_asset *a = pl_web_asset_find(name);
    if (!a)
        return fail(c, MHD_HTTP_NOT_FOUND, "no static file '%.64s'", name);
    struct MHD_Response *r = MHD_create_response_from_buffer(a->size, (void *)a->data,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", a->mime);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cache-Control", "max-age=3600");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* A page bound to loopback answers only to loopback names: a page of
 * another site cannot reach it through a name that resolves to 127.0.0.1
 * (DNS rebinding). */
static int host_ok(pl_web *w, struct MHD_Connection *c)
{
    if (!w->loopback)
        return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!h)
        return 0;
    const char *names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(h, names[i], n) && (h[n] == '\0' || h[n] == ':'))
            return 1;
    }
    return 0;
}

/* The response is done: the connection now waits for its next request,
 * which the guard times afresh. */
static void request_completed(void *cls, struct MHD_Connection *c, void **state,
                              enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)state;
    (void)code;
    pl_connguard_request_done(c);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version,
                              const char *upload, size_t *upload_size, void **state)
{
    (void)version;
    (void)upload;
    pl_web *w = cls;
    static int marker;
    if (!*state) {   /* headers only so far */
        *state = &marker;
        return MHD_YES;
    }
    if (*upload_size) {   /* a body is not used by any request: skip it */
        *upload_size = 0;
        return MHD_YES;
    }
    pl_connguard_request_whole(c);   /* headers and body are in: answer it */
    if (!host_ok(w, c))
        return fail(c, MHD_HTTP_FORBIDDEN, "this server answers to 127.0.0.1, localhost "
                    "and [::1] only");
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    int post = !strcmp(method, "POST");
    if (!strncmp(url, "/api/control/", 13))
        return post ? api_control(w, c, url + 13)
                    : fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%.10s: control is POST only", method);
    if (!get)
        return fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%.10s: only GET (and POST to "
                    "/api/control/...) are served", method);
    if (!strcmp(url, "/"))
        return page_runs(w, c);
    if (!strcmp(url, "/favicon.ico")) {   /* browsers ask; there is none */
        pl_buf b;
        pl_buf_init(&b);
        return send_buf(c, MHD_HTTP_NO_CONTENT, "text/plain", &b, NULL);
    }
    if (!strcmp(url, "/experiments"))
        return page_experiments(w, c);
    if (!strcmp(url, "/live"))
        return page_live(w, c);
    if (!strcmp(url, "/api/live"))
        return api_live(w, c);
    if (!strcmp(url, "/api/status"))
        return api_status(w, c);
    if (!strncmp(url, "/static/", 8))
        return static_file(c, url + 8);
    if (!strncmp(url, "/experiment/", 12)) {
        /* /experiment/NAME/FILE: the name may hold '/', the file never */
        const char *rest = url + 12, *slash = strrchr(rest, '/');
        if (!slash)
            return fail(c, MHD_HTTP_NOT_FOUND, "an experiment's report is at /experiment/NAME/");
        char name[PL_NAME_SIZE + 1];
        size_t n = (size_t)(slash - rest);
        if (n > PL_NAME_BYTES)
            return fail(c, MHD_HTTP_BAD_REQUEST, "experiment name: at most %d characters", PL_NAME_MAX);
        memcpy(name, rest, n);
        name[n] = '\0';
        return page_experiment(w, c, name, slash + 1);
    }
    long long id;
    char idtext[32], what[16];
    if (!strncmp(url, "/run/", 5)) {
        if (!parse_id(url + 5, &id))
            return fail(c, MHD_HTTP_BAD_REQUEST, "run id: expected a positive integer, got '%.20s'",
                        url + 5);
        return page_run(w, c, id);
    }
    if (!strncmp(url, "/api/run/", 9)) {
        const char *rest = url + 9, *slash = strchr(rest, '/');
        size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
        if (!slash || n >= sizeof idtext || strlen(slash + 1) >= sizeof what)
            return fail(c, MHD_HTTP_NOT_FOUND, "expected /api/run/ID/meta, /api/run/ID/window "
                        "or /api/run/ID/impacts");
        memcpy(idtext, rest, n);
        idtext[n] = '\0';
        snprintf(what, sizeof what, "%s", slash + 1);
        if (!parse_id(idtext, &id))
            return fail(c, MHD_HTTP_BAD_REQUEST, "run id: expected a positive integer, got '%s'",
                        idtext);
        if (!strcmp(what, "meta"))
            return api_meta(w, c, id);
        if (!strcmp(what, "window"))
            return api_window(w, c, id);
        if (!strcmp(what, "impacts"))
            return api_impacts(w, c, id);
        if (!strcmp(what, "ratios"))
            return api_ratios(w, c, id);
        if (!strcmp(what, "answer"))
            return api_answer(w, c, id);
        return fail(c, MHD_HTTP_NOT_FOUND, "expected /api/run/ID/meta, /api/run/ID/window, "
                    "/api/run/ID/impacts, /api/run/ID/ratios or /api/run/ID/answer");
    }
    return fail(c, MHD_HTTP_NOT_FOUND, "no page at this address (see / for the runs)");
}

/* ------------------------------------------------------------------ */

pl_status pl_web_parse_listen(const char *text, char *host, size_t size, int *port,
                              pl_err *err)
{
    const char *colon;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return pl_err_set(err, PL_EINVAL, "--listen '%s': expected [IPV6]:PORT", text);
        if ((size_t)(close - text - 1) >= size)
            return pl_err_set(err, PL_EINVAL, "--listen '%s': address too long", text);
        snprintf(host, size, "%.*s", (int)(close - text - 1), text + 1);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return pl_err_set(err, PL_EINVAL, "--listen '%s': expected HOST:PORT "
                              "(127.0.0.1:8080)", text);
        if ((size_t)(colon - text) >= size)
            return pl_err_set(err, PL_EINVAL, "--listen '%s': address too long", text);
        if (colon == text)
            snprintf(host, size, "127.0.0.1");
        else
            snprintf(host, size, "%.*s", (int)(colon - text), text);
    }
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || p < 0 || p > 65535)
        return pl_err_set(err, PL_EINVAL, "--listen '%s': expected a port in [0, 65535] "
                          "after the last ':'", text);
    *port = (int)p;
    return PL_OK;
}

static int bind_socket(pl_web *w, const char *host, int port, pl_err *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    int family;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (!strcmp(host, "localhost"))
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        family = a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        len = sizeof *a4;
        w->loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        family = a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        len = sizeof *a6;
        w->loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
    } else {
        pl_err_set(err, PL_EINVAL, "--listen: '%s' is not an IPv4 or IPv6 address "
                   "(names other than localhost are not looked up)", host);
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
        pl_err_set(err, PL_EIO, "--listen %s:%d: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    getsockname(fd, (struct sockaddr *)&ss, &len);
    w->port = ntohs(family == AF_INET ? a4->sin_port : a6->sin6_port);
    snprintf(w->url, sizeof w->url, family == AF_INET ? "http://%s:%d/" : "http://[%s]:%d/",
             host, w->port);
    return fd;
}

/* Removes our folder: report folders of plain files, one level deep. */
static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char sub[PATH_MAX + 300];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *s2 = opendir(sub);
        struct dirent *f;
        while (s2 && (f = readdir(s2))) {
            char file[PATH_MAX + 600];
            snprintf(file, sizeof file, "%s/%s", sub, f->d_name);
            if (f->d_type != DT_DIR)
                unlink(file);
        }
        if (s2)
            closedir(s2);
        if (rmdir(sub) != 0)
            unlink(sub);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

void pl_web_stop(pl_web *w)
{
    if (!w)
        return;
    w->stopping = 1;
    if (w->mhd)
        MHD_stop_daemon(w->mhd);
    pl_connguard_destroy(w->guard);
    pl_runcache_destroy(w->cache);
    pl_store_close(w->store);
    if (w->tmp[0])
        rm_tree(w->tmp);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

pl_status pl_web_start(pl_web **out, const pl_web_options *opt, pl_err *err)
{
    *out = NULL;
    char host[64];
    int port;
    if (pl_web_parse_listen(opt->listen ? opt->listen : "127.0.0.1:8080", host,
                            sizeof host, &port, err) != PL_OK)
        return err->code;
    pl_web *w = calloc(1, sizeof *w);
    if (!w)
        return pl_err_set(err, PL_ENOMEM, "out of memory");
    pthread_mutex_init(&w->lock, NULL);
    w->control = opt->control;
    if (opt->socket)
        snprintf(w->socket, sizeof w->socket, "%s", opt->socket);
    else if (snprintf(w->socket, sizeof w->socket, "%s.sock", opt->db) >= (int)sizeof w->socket) {
        pl_web_stop(w);
        return pl_err_set(err, PL_EINVAL, "%s.sock: socket path too long; give --socket", opt->db);
    }
    if (opt->control) {
        unsigned char r[16];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
            pl_web_stop(w);
            return pl_err_set(err, PL_EIO, "getrandom: %s", strerror(errno));
        }
        for (int i = 0; i < 16; i++)
            snprintf(w->token + 2 * i, 3, "%02x", r[i]);
    }
    if (pl_store_open(&w->store, opt->db, PL_STORE_READONLY, err) != PL_OK ||
        pl_runcache_create(&w->cache, err) != PL_OK) {
        pl_web_stop(w);
        return err->code;
    }
    const char *tmpdir = getenv("TMPDIR");
    snprintf(w->tmp, sizeof w->tmp, "%s/prismlab-serve-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(w->tmp)) {
        pl_status st = pl_err_set(err, PL_EIO, "%s: %s", w->tmp, strerror(errno));
        w->tmp[0] = '\0';
        pl_web_stop(w);
        return st;
    }
    int fd = bind_socket(w, host, port, err);
    if (fd < 0) {
        pl_web_stop(w);
        return err->code;
    }
    double deadline = opt->request_deadline_s > 0 ? opt->request_deadline_s
                                                  : PL_WEB_REQUEST_DEADLINE_S;
    if (pl_connguard_create(&w->guard, deadline, PL_WEB_MAX_WAITING, err) != PL_OK) {
        close(fd);
        pl_web_stop(w);
        return err->code;
    }
    /* Every client of a loopback server is 127.0.0.1, so a per-IP limit
     * below the total only let one slow client lock out every browser; the
     * guard keeps the room instead: at most PL_WEB_MAX_WAITING connections
     * wait for a request, each at most the deadline, and the rest of the
     * CONNECTION_LIMIT is for requests being answered (live streams). */
    w->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                              MHD_USE_POLL,
                              0, NULL, NULL, handle, w,
                              MHD_OPTION_LISTEN_SOCKET, fd,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)PL_WEB_MAX_CONNECTIONS,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PL_WEB_MAX_CONNECTIONS,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
                              MHD_OPTION_NOTIFY_CONNECTION, pl_connguard_notify, w->guard,
                              MHD_OPTION_NOTIFY_COMPLETED, request_completed, w,
                              MHD_OPTION_END);
    if (!w->mhd) {
        close(fd);
        pl_web_stop(w);
        return pl_err_set(err, PL_EIO, "libmicrohttpd would not start on %s:%d", host, port);
    }
    *out = w;
    return PL_OK;
}
