/* web/page_run.c - a run's page and the JSON its plots ask for: the
 * answer, the metadata, the envelopes (web/trace.c), the impacts and the
 * ratios. */
#include "db/derived.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/validation.h"
#include "db/work.h"
#include "model/validate/answer.h"
#include "model/validate/ratio.h"
#include "process/warnings.h"
#include "web/server_private.h"
#include "web/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PX = 8192 };

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
        pl_web_url_enc(b, r->experiment);
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
enum MHD_Result pl_web_api_answer(pl_web *w, struct MHD_Connection *c, long long id)
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
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    pl_web_scrub_paths(aerr.msg);
    pl_buf b;
    pl_buf_init(&b);
    answer_section(&b, &r, &ans, ast, aerr.msg, busy);
    return pl_web_send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
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

/* The run's heading and its table of facts: what it is, its frames, the
 * decoders' delays, and what processing found (p when processed). */
static void info_table(pl_buf *b, long long id, const pl_run_info *r,
                       const pl_channel ch[2], int processed, const pl_processing *p)
{
    pl_buf_printf(b, "<h1>Run %lld%s</h1>\n<table class=\"info\">", id,
                  r->synthetic ? " <small class=\"synthetic\">SYNTHETIC (rig simulator)</small>" : "");
    const char *keys[] = {"state", "experiment", "prism", "ramp", "started (UTC)", "ended (UTC)",
                          "source", "notes"};
    const char *vals[] = {pl_run_state_name(r->state), r->experiment, r->prism, r->ramp,
                          r->started_utc, r->ended_utc, r->source_detail, r->notes};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!vals[i][0])
            continue;
        pl_buf_printf(b, "<tr><th>%s</th><td>", keys[i]);
        pl_buf_html(b, vals[i]);
        pl_buf_puts(b, "</td></tr>");
    }
    pl_buf_printf(b, "<tr><th>frames</th><td>%lld at %g Hz (%.3f s)</td></tr>", r->n_frames,
                  r->sample_rate_hz, r->sample_rate_hz > 0 ? (double)r->n_frames / r->sample_rate_hz : 0.0);
    /* the LDV decoders' delays the lab gave (issue 33): what puts the
     * impacts at the contact rather than at the decoded steps' centres */
    pl_buf_puts(b, "<tr><th>LDV decoder delay</th><td id=\"decoder-delay\">");
    for (int i = 0; i < 2 && i < r->n_channels; i++)
        if (ch[i].decoder_delay_s > 0)
            pl_buf_printf(b, "%s%.4g &micro;s", i ? ", " : "", ch[i].decoder_delay_s * 1e6);
        else
            pl_buf_printf(b, "%snot known", i ? ", " : "");
    pl_buf_puts(b, "</td></tr>");
    if (processed)
        pl_buf_printf(b, "<tr><th>processed</th><td>release %.4f s, end %.4f s, %lld impacts, "
                          "L<sub>p</sub> at the end %.3f, &omega;<sub>+</sub>/&omega;<sub>-</sub> "
                          "%.5f &plusmn; %.2g (1 sd of one impact's ratio; the mean's %.2g)</td></tr>",
                      p->release_t_s, p->end_t_s, p->n_impacts, p->lp_end, p->ratio_mean, p->ratio_sd,
                      p->ratio_mean_se);
    if (processed && p->n_impacts > 0)
        impact_t_row(b, p);
    pl_buf_puts(b, "</table>\n");
}

enum MHD_Result pl_web_page_run(pl_web *w, struct MHD_Connection *c, long long id)
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
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    char title[32];
    snprintf(title, sizeof title, "run %lld", id);
    pl_buf b;
    pl_buf_init(&b);
    pl_web_page_head(&b, title, NULL);
    info_table(&b, id, &r, ch, processed, &p);
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
    pl_web_page_end(&b);
    return pl_web_send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", &b, NULL);
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

enum MHD_Result pl_web_api_meta(pl_web *w, struct MHD_Connection *c, long long id)
{
    pl_err err = {0};
    pl_run_entry *e;
    pl_buf b;
    pl_buf_init(&b);
    pl_status st = lock_run(w, id, &e, &err);
    if (st != PL_OK)
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
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
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    }
    return pl_web_send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
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
enum MHD_Result pl_web_api_ratios(pl_web *w, struct MHD_Connection *c, long long id)
{
    pl_err err = {0};
    pl_run_entry *e;
    double law[2];
    pl_status st = lock_run(w, id, &e, &err);
    if (st != PL_OK)
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
    st = pl_law_ratios(w->store, id, law, &err);
    if (st != PL_OK) {
        pthread_mutex_unlock(&w->lock);
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
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
    return pl_web_send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

enum { IMPACTS_PAGE = 200, IMPACTS_MAX = 1000 };

/* A page of the impacts' table: rows [from, from + n) (n at most
 * IMPACTS_MAX, default IMPACTS_PAGE) as [t, omega-, omega+, ratio,
 * confirmed, t_sd, ratio_se], with the run's total. */
enum MHD_Result pl_web_api_impacts(pl_web *w, struct MHD_Connection *c, long long id)
{
    char msg[200];
    double from = 0, n = IMPACTS_PAGE;
    if (pl_web_arg_double(c, "from", 0, 1e15, &from, msg, sizeof msg) < 0 ||
        pl_web_arg_double(c, "n", 1, IMPACTS_MAX, &n, msg, sizeof msg) < 0)
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "%s", msg);
    if (from != floor(from) || n != floor(n))
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "parameters 'from', 'n': expected whole "
                    "numbers, got %g and %g", from, n);
    pl_err err = {0};
    pl_run_entry *e;
    pl_buf b;
    pl_buf_init(&b);
    pl_status st = lock_run(w, id, &e, &err);
    if (st != PL_OK)
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
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
    return pl_web_send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}

/* The plots' data for the window [t0, t1] s at px columns: the envelopes
 * of v_p1, v_p2 (from the chunks) and of the derived series. */
enum MHD_Result pl_web_api_window(pl_web *w, struct MHD_Connection *c, long long id)
{
    char msg[200];
    double t0 = 0, t1 = 1e12, px = 1000;
    if (pl_web_arg_double(c, "t0", -1e9, 1e12, &t0, msg, sizeof msg) < 0 ||
        pl_web_arg_double(c, "t1", -1e9, 1e12, &t1, msg, sizeof msg) < 0 ||
        pl_web_arg_double(c, "px", 1, MAX_PX, &px, msg, sizeof msg) < 0)
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "%s", msg);
    if (!(t1 > t0))
        return pl_web_fail(c, MHD_HTTP_BAD_REQUEST, "parameters 't0', 't1': expected t0 < t1, "
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
        return pl_web_fail(c, pl_web_status_of(st), "%s", err.msg);
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
    return pl_web_send_buf(c, MHD_HTTP_OK, "application/json", &b, NULL);
}
