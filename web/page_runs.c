/* web/page_runs.c - the runs list, the experiments, and an experiment's
 * validation report written into the server's own folder and served. */
#include "db/catalog.h"
#include "db/derived.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/validation.h"
#include "model/validate/report.h"
#include "web/server_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The faults in words so far: n of them into b. */
typedef struct {
    pl_buf *b;
    int n;
} title_out;

/* The faults in words, one a line, for a tooltip. */
static int fault_title(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    title_out *o = ctx;
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
    title_out o = {b, 0};
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

/* The experiment filter, showing the one in force (exp, or NULL for
 * all); returns 1 when exp is in the catalogue. */
static int filter_form(pl_buf *b, const char *exp, const exp_vec *exps)
{
    /* "all" only when there is none, a name not in the catalogue as
     * itself (and said below) */
    int known = 0;
    for (size_t i = 0; exp && i < exps->n; i++)
        known |= !strcmp(exp, exps->e[i].name);
    pl_buf_printf(b, "<h1>Runs</h1>\n<form method=\"get\" action=\"/\" id=\"filter\">"
                     "<label>experiment <select name=\"experiment\">"
                     "<option value=\"\"%s>all</option>", exp ? "" : " selected");
    if (exp && !known) {
        pl_buf_puts(b, "<option value=\"");
        pl_buf_html(b, exp);
        pl_buf_puts(b, "\" selected>");
        pl_buf_html(b, exp);
        pl_buf_puts(b, " (no such experiment)</option>");
    }
    for (size_t i = 0; i < exps->n; i++) {
        pl_buf_puts(b, "<option value=\"");
        pl_buf_html(b, exps->e[i].name);
        pl_buf_puts(b, exp && !strcmp(exp, exps->e[i].name) ? "\" selected>" : "\">");
        pl_buf_html(b, exps->e[i].name);
        pl_buf_puts(b, "</option>");
    }
    pl_buf_puts(b, "</select></label> <button>show</button></form>\n");
    return known;
}

/* One run's row of the runs table (w->lock held). */
static void run_row(pl_web *w, pl_buf *b, const pl_run_info *r)
{
    pl_err err = {0};
    pl_processing p;
    int processed = pl_derived_get(w->store, r->id, &p, &err) == PL_OK;
    pl_buf_printf(b, "<tr data-run=\"%lld\"><td><a href=\"/run/%lld\">%lld</a>%s</td>"
                     "<td class=\"state-%s\">%s</td><td>",
                  r->id, r->id, r->id, r->synthetic ? " <abbr title=\"made by the rig simulator\">sim</abbr>" : "",
                  pl_run_state_name(r->state), pl_run_state_name(r->state));
    if (r->experiment[0]) {
        pl_buf_puts(b, "<a href=\"/experiment/");
        pl_web_url_enc(b, r->experiment);
        pl_buf_puts(b, "/\">");
        pl_buf_html(b, r->experiment);
        pl_buf_puts(b, "</a>");
    }
    pl_buf_puts(b, "</td>");
    file_cell(b, r);
    pl_buf_puts(b, "<td>");
    pl_buf_html(b, r->prism);
    pl_buf_puts(b, "</td><td>");
    pl_buf_html(b, r->ramp);
    pl_buf_puts(b, "</td><td>");
    pl_buf_html(b, r->started_utc);
    pl_buf_puts(b, "</td>");
    pl_web_num_cell(b, "<td>%.3f</td>", r->sample_rate_hz > 0 ? (double)r->n_frames / r->sample_rate_hz : NAN);
    if (processed) {
        pl_buf_printf(b, "<td>%lld</td>", p.n_impacts);
        pl_web_num_cell(b, "<td>%.3f</td>", p.lp_end);
    } else {
        pl_buf_puts(b, "<td class=\"na\" colspan=\"2\">not processed</td>");
    }
    quality_cell(w, b, r->id);
    law_cell(w, b, r->id);
    pl_buf_puts(b, "</tr>\n");
}

enum MHD_Result pl_web_page_runs(pl_web *w, struct MHD_Connection *c)
{
    const char *exp = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "experiment");
    if (exp && !*exp)
        exp = NULL;
    if (exp && pl_name_check("experiment", exp, NULL) != PL_OK)
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "parameter 'experiment': a name is at most %d characters",
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
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    }
    pl_web_page_head(&b, "runs", exp);
    int known = filter_form(&b, exp, &exps);
    pl_buf_printf(&b, "<table id=\"runs\" data-count=\"%zu\">\n<thead><tr><th>run</th><th>state</th>"
                      "<th>experiment</th><th>file (imported) or how recorded</th><th>prism</th><th>ramp</th>"
                      "<th>started (UTC)</th>"
                      "<th>duration (s)</th><th>impacts</th><th>L<sub>p</sub> at the end</th>"
                      "<th>data quality</th><th>law the data support</th></tr></thead>\n"
                      "<tbody>\n", runs.n);
    for (size_t i = 0; i < runs.n; i++)
        run_row(w, &b, &runs.r[i]);
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
    pl_web_page_end(&b);
    free(runs.r);
    free(exps.e);
    return pl_web_send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
}

enum MHD_Result pl_web_page_experiments(pl_web *w, struct MHD_Connection *c)
{
    exp_vec exps = {0};
    pl_err err = {0};
    pthread_mutex_lock(&w->lock);
    pl_status st = pl_experiment_list(w->store, collect_exp, &exps, &err);
    pthread_mutex_unlock(&w->lock);
    if (st != PL_OK) {
        free(exps.e);
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    }
    pl_buf b;
    pl_buf_init(&b);
    pl_web_page_head(&b, "experiments", NULL);
    pl_buf_puts(&b, "<h1>Experiments</h1>\n<ul id=\"experiments\">\n");
    for (size_t i = 0; i < exps.n; i++) {
        pl_buf_puts(&b, "<li><a href=\"/experiment/");
        pl_web_url_enc(&b, exps.e[i].name);
        pl_buf_puts(&b, "/\">");
        pl_buf_html(&b, exps.e[i].name);
        pl_buf_puts(&b, "</a> ");
        pl_buf_html(&b, exps.e[i].description);
        pl_buf_puts(&b, " (<a href=\"/?experiment=");
        pl_web_url_enc(&b, exps.e[i].name);
        pl_buf_puts(&b, "\">runs</a>)</li>\n");
    }
    pl_buf_puts(&b, "</ul>\n");
    pl_web_page_end(&b);
    free(exps.e);
    return pl_web_send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
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
        return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "no such file in the report");
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
        return pl_web_fail(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "reading the report failed");
    }
    return pl_web_send_buf(c, MHD_HTTP_OK, mime, &b, csp);
}

/* The report's own page has an inline style and script (it is made to
 * open from disk); everything else stays 'self'. */
#define REPORT_CSP "default-src 'self'; style-src 'self' 'unsafe-inline'; " \
    "script-src 'self' 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'"

enum MHD_Result pl_web_page_experiment(pl_web *w, struct MHD_Connection *c,
                                       const char *name, const char *file)
{
    if (!*name || pl_name_check("experiment", name, NULL) != PL_OK)
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "experiment name: expected 1 to %d characters",
                    PL_NAME_MAX);
    if (!*file)
        file = "index.html";
    if (!report_file_ok(file))
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "report file '%.64s': expected a plain file name", file);
    const char *dot = strrchr(file, '.');
    const char *mime = !dot ? NULL : !strcmp(dot, ".html") ? "text/html; charset=utf-8"
                     : !strcmp(dot, ".svg") ? "image/svg+xml"
                     : !strcmp(dot, ".csv") || !strcmp(dot, ".md") ? "text/plain; charset=utf-8"
                     : NULL;
    if (!mime)
        return pl_web_fail(c, MHD_HTTP_NOT_FOUND, "the report has no file '%s'", file);
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
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    return send_file(c, path, mime, REPORT_CSP);
}
