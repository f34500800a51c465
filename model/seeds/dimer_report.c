/* model/seeds/dimer_report.c - the dimer report.  See dimer_report.h and
 * docs/dimer.md. */
#include "model/seeds/dimer_report.h"

#include "core/atomicfile.h"
#include "core/plot.h"
#include "core/version.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --- HTML ------------------------------------------------------------------ */

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static void html_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
    html_text(f, title);
    fputs("</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
          "table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #bbb;padding:3px 6px;"
          "text-align:left;vertical-align:top}th{background:#eee}td.n{text-align:right}"
          ".holds{background:#d8f0d8;font-weight:bold}.fails{background:#f8d8d8;font-weight:bold}"
          ".unchecked{background:#eee;color:#555;font-style:italic}"
          ".notrun{background:#fff3c8;color:#555;font-style:italic}"
          "figure{margin:1.5em 0}figcaption{font-size:0.9em;color:#444}img{max-width:100%;border:1px solid #ddd}"
          "</style>\n</head><body>\n<p><a href=\"index.html\">dimer report</a></p>\n<h1>", f);
    html_text(f, title);
    fputs("</h1>\n", f);
}

static void html_foot(FILE *f)
{
    /* the page says how many of its figures the browser could show (the
     * report's test reads it) */
    fputs("<script>window.addEventListener('load',function(){var im=document.images,k=0;"
          "for(var i=0;i<im.length;i++)if(im[i].complete&&im[i].naturalWidth>0)k++;"
          "document.body.setAttribute('data-images',k+'/'+im.length);});</script>\n", f);
    fprintf(f, "<p><small>prismlab %s; docs/dimer.md describes the model and every "
               "choice the paper leaves open.</small></p>\n</body></html>\n", pl_version());
}

/* The verdict's cell: its class (the colour) and data-verdict are
 * "holds", "fails", "unchecked" or "notrun"; the reader sees the words. */
static void verdict_cell(FILE *f, pl_dimer_verdict v)
{
    static const char *const key[4] = {"fails", "holds", "unchecked", "notrun"};
    static const char *const words[4] = {"does not hold", "holds", "not checked",
                                         "not run: interrupted"};
    int i = v >= PL_DIMER_FAILS && v <= PL_DIMER_NOT_RUN ? (int)v : 0;
    fprintf(f, "<td class=\"%s\" data-verdict=\"%s\">%s</td>", key[i], key[i], words[i]);
}

/* dir/name into buf. */
static void path_in(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

/* --- what the report gathers ----------------------------------------------- */

typedef struct {
    const pl_dimer_case *c;
    pl_dimer_result r;
    pl_dimer_statement st;      /* part by part: pl_dimer_case_check */
    pl_dimer_verdict verdict;   /* PL_DIMER_NOT_RUN until run */
} case_run;

typedef struct {
    const char *name;           /* the map's file name part (its first case) */
    const char *title;
    pl_dimer_basin_spec spec;
    int *modes;
    double *drift, *energy;
    const pl_dimer_case *cases[3];  /* the cases whose starts it holds */
    int n_cases;
    /* the open choices: share of the variant map's starts whose mode
     * differs from the same grid with the defaults (NAN: not run) */
    double moved[4];
    double vshare[5][PL_DIMER_NMODES];  /* the variants' and the base's shares */
} basin_map;

static const char *const variant_names[4] = {"v_rest 0.3 mm/s", "v_rest 3 mm/s",
                                             "distributing exponent 0.4",
                                             "distributing exponent 0.8"};
static const char *const variant_files[4] = {"-vrest0.3", "-vrest3", "-dist0.4", "-dist0.8"};

static void variant_apply(int v, pl_dimer_params *p)
{
    if (v == 0) p->v_rest = 0.3e-3;
    if (v == 1) p->v_rest = 3e-3;
    if (v == 2) p->dist_exp = 0.4;
    if (v == 3) p->dist_exp = 0.8;
}

typedef struct {
    const pl_dimer_report_opts *o;
    const char *stage;
} prog_ctx;

/* Whether the report was asked to stop (SIGINT, SIGTERM). */
static int stopped(const pl_dimer_report_opts *o)
{
    return o->stop && *o->stop;
}

static int prog(size_t done, size_t total, void *ctx)
{
    prog_ctx *p = ctx;
    if (p->o->progress)
        p->o->progress(p->stage, done, total, p->o->ctx);
    return stopped(p->o);
}

/* A map: read from dir/basin-NAME.csv when stored with the same
 * parameters, else run and stored there. */
static pl_status map_get(const char *dir, const char *name,
                         const pl_dimer_basin_spec *s, const pl_dimer_report_opts *o,
                         int *modes, double *drift, double *energy,
                         pl_dimer_report_stats *stats, pl_err *err)
{
    char key[1024], file[256], path[4096], stage[96];
    pl_dimer_basin_key(s, name, key, sizeof key);
    snprintf(file, sizeof file, "basin-%s.csv", name);
    path_in(path, sizeof path, dir, file);
    pl_err e2 = {0};
    pl_status st = pl_dimer_basin_load(path, key, s, modes, drift, energy, &e2);
    if (st == PL_OK) {
        stats->maps_read++;
        return PL_OK;
    }
    if (st != PL_ENOTFOUND) {
        *err = e2;
        return st;
    }
    snprintf(stage, sizeof stage, "basin %s", name);
    prog_ctx pc = {o, stage};
    st = pl_dimer_basin_run_on(s, o->batch, o->runner, o->threads, modes, drift, energy,
                               prog, &pc, err);
    /* an interrupted map is not stored: a later report would take it whole
     * (a batch over MPI ranks runs to its end and returns PL_OK) */
    if (st == PL_OK && stopped(o))
        st = pl_err_set(err, PL_ESTATE, "basin %s: interrupted", name);
    if (st != PL_OK)
        return st;
    stats->runs += s->nh * s->nth;
    if (st == PL_OK)
        st = pl_dimer_basin_save(path, key, s, modes, drift, energy, err);
    return st;
}

static const char *const mode_labels[PL_DIMER_NMODES] = {
    "rest", "drift", "jump", "flutter", "other", "mixed", "hop", "alternate"};

/* --- figure 11 --------------------------------------------------------------- */

static pl_status fig11_figure(const char *dir, const pl_dimer_fig11_spec *s,
                              const pl_dimer_fig11_point *pts, pl_err *err)
{
    size_t na = s->n_ar, nf = s->n_freqs;
    double *buf = malloc(nf * na * 6 * sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "figure 11: out of memory");
    pl_plot_series top[3 * 8 + 1], bot[8];
    char labels[8][32], paper_labels[8][64];
    /* the paper's features beside the curves: where its reverse drift
     * ends at each f (section 5: 6.2, 8.2, 7.6), dashed in the f's
     * colour, and the reversal at A_r 5, dotted */
    static const double paper_f[3] = {25, 50, 75}, paper_end[3] = {6.2, 8.2, 7.6};
    double paper_xy[4][4];
    size_t nt = 0, nb = 0;
    double *ar = malloc(na * sizeof *ar);
    if (!ar) {
        free(buf);
        return pl_err_set(err, PL_ENOMEM, "figure 11: out of memory");
    }
    for (size_t a = 0; a < na; a++)
        ar[a] = pts[a].Ar;
    for (size_t k = 0; k < nf && k < 8; k++) {
        /* per frequency: the medians' A_r and values, their quartile
         * bars (lower ones, then upper ones), the drift-mode shares */
        double *x = buf + k * na * 6, *y = x + na, *bars = y + na, *frac = bars + 2 * na;
        size_t m = 0;
        for (size_t a = 0; a < na; a++) {
            const pl_dimer_fig11_point *p = &pts[k * na + a];
            frac[a] = p->starts ? (double)p->drift_starts / (double)p->starts : NAN;
            if (!isnan(p->med)) {
                x[m] = p->Ar;
                y[m] = p->med;
                m++;
            }
        }
        for (size_t a = 0, j = 0; a < na; a++) {
            const pl_dimer_fig11_point *p = &pts[k * na + a];
            if (isnan(p->med))
                continue;
            bars[j] = p->q1;
            bars[m + j] = p->q3;
            j++;
        }
        snprintf(labels[k], sizeof labels[k], "f = %g Hz", s->freqs[k]);
        top[nt++] = (pl_plot_series){x, y, m, labels[k], (int)k, PL_PLOT_POINTS};
        top[nt++] = (pl_plot_series){x, bars, m, NULL, (int)k, PL_PLOT_BARS};
        bot[nb++] = (pl_plot_series){ar, frac, na, labels[k], (int)k, PL_PLOT_LINE};
        for (int j = 0; j < 3; j++) {
            if (s->freqs[k] != paper_f[j])
                continue;
            double *xy = paper_xy[j];
            xy[0] = xy[1] = paper_end[j];
            xy[2] = -1.5;
            xy[3] = 1.5;
            snprintf(paper_labels[k], sizeof paper_labels[k],
                     "paper: %g Hz zero", s->freqs[k]);
            top[nt++] = (pl_plot_series){xy, xy + 2, 2, paper_labels[k], (int)k,
                                         PL_PLOT_DASHED};
        }
    }
    double *rev = paper_xy[3];
    rev[0] = rev[1] = 5.0;
    rev[2] = -1.5;
    rev[3] = 1.5;
    if (s->ar_min <= 5.0)
        top[nt++] = (pl_plot_series){rev, rev + 2, 2, "paper: reversal", -1,
                                     PL_PLOT_DOTTED};
    pl_plot_panel pan[2] = {
        {"Figure 11: scaled mean drift <u> f/g 10^2 (median and quartiles of the "
         "drift-mode starts)", "A_r", "<u> f / g x 10^2", NAN, NAN, NAN, NAN, top, nt},
        {"share of the starts that reach the drift mode", "A_r", "share", NAN, NAN,
         -0.05, 1.05, bot, nb}};
    char path[4096];
    path_in(path, sizeof path, dir, "fig11.svg");
    pl_status st = pl_plot_svg(path, 1000, 900, pan, 2, err);
    free(ar);
    free(buf);
    return st;
}

static pl_status fig11_csv(const char *dir, const pl_dimer_fig11_spec *s,
                           const pl_dimer_fig11_point *pts, size_t n,
                           const pl_dimer_result *res, const int *ok, pl_err *err)
{
    char path[4096];
    pl_atomicfile *af;
    path_in(path, sizeof path, dir, "fig11.csv");
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    fputs("f_hz,Ar,starts,drift_starts,median,q1,q3,min,max,median_all", f);
    for (int m = 0; m < PL_DIMER_NMODES; m++)
        fprintf(f, ",%s", mode_labels[m]);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const pl_dimer_fig11_point *p = &pts[i];
        fprintf(f, "%g,%.2f,%zu,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", p->f, p->Ar, p->starts,
                p->drift_starts, p->med, p->q1, p->q3, p->lo, p->hi, p->med_all);
        for (int m = 0; m < PL_DIMER_NMODES; m++)
            fprintf(f, ",%zu", p->modes[m]);
        fputc('\n', f);
    }
    pl_status st = pl_atomicfile_commit(af, err);
    if (st != PL_OK)
        return st;
    path_in(path, sizeof path, dir, "fig11-runs.csv");
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    f = pl_atomicfile_stream(af);
    fputs("f_hz,Ar,h0_mm,theta0_deg,ok,mode,drift_mm_s,forward_scaled,hits_left,"
          "hits_right,hmax_left_mm,hmax_right_mm,energy\n", f);
    size_t total = pl_dimer_fig11_size(s);
    for (size_t i = 0; i < total; i++) {
        pl_dimer_params p;
        pl_dimer_fig11_params(s, i, &p);
        const pl_dimer_result *r = &res[i];
        fprintf(f, "%g,%.2f,%.6g,%.6g,%d,%s,%.6g,%.6g,%zu,%zu,%.6g,%.6g,%.6g\n", p.f, p.Ar,
                p.h0 * 1e3, p.theta0 * 180 / M_PI, ok[i], pl_dimer_mode_name(r->mode),
                r->drift * 1e3, pl_dimer_scaled_drift(pl_dimer_drift_forward(r), p.f, p.g),
                r->hits[0], r->hits[1], r->hmax[0] * 1e3, r->hmax[1] * 1e3, r->energy);
    }
    return pl_atomicfile_commit(af, err);
}

static pl_status fig11_page(const char *dir, const pl_dimer_fig11_spec *s,
                            const pl_dimer_statement *sts, double seconds, pl_err *err)
{
    char path[4096];
    pl_atomicfile *af;
    path_in(path, sizeof path, dir, "fig11.html");
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    html_head(f, "Figure 11: the drift against the aspect ratio");
    fprintf(f, "<p>Gamma %g, e_s %g, mu_s %g, mu_c %g, mu_i %g; f =", s->base.Gamma,
            s->base.es, s->base.mu_s, s->base.mu_c, s->base.mu_i);
    for (size_t k = 0; k < s->n_freqs; k++)
        fprintf(f, " %g%s", s->freqs[k], k + 1 < s->n_freqs ? "," : " Hz");
    fprintf(f, "; A_r %.2f to %.2f by %.2f; %zu starts at each point (h0 =",
            s->ar_min, s->ar_min + (double)(s->n_ar - 1) * s->ar_step, s->ar_step,
            s->n_h0 * s->n_theta0);
    for (size_t k = 0; k < s->n_h0; k++)
        fprintf(f, " %g", s->h0[k] * 1e3);
    fputs(" mm with theta0 =", f);
    for (size_t k = 0; k < s->n_theta0; k++)
        fprintf(f, " %g", s->theta0[k] * 180 / M_PI);
    fprintf(f, " deg); %g plate cycles each, &lt;u&gt; over the last ten (the paper's "
               "definition), towards the bouncing end.  %zu simulations in %.1f s.</p>\n",
            s->cycles, pl_dimer_fig11_size(s), seconds);
    fputs("<figure><img src=\"fig11.svg\" alt=\"figure 11 reproduced\"><figcaption>Top: the "
          "median scaled drift of the starts that reach the drift mode, bars from the lower to "
          "the upper quartile.  Bottom: the share of the starts that reach it.  Numbers: "
          "<a href=\"fig11.csv\">fig11.csv</a>, every run: <a href=\"fig11-runs.csv\">"
          "fig11-runs.csv</a>.</figcaption></figure>\n", f);
    fputs("<table id=\"statements\"><tr><th>the paper</th><th>checked as</th><th>prismlab</th>"
          "<th>verdict</th></tr>\n", f);
    for (int i = 0; i < PL_DIMER_FIG11_STATEMENTS; i++) {
        fputs("<tr><td>", f);
        html_text(f, sts[i].paper);
        fputs("</td><td>", f);
        html_text(f, sts[i].criterion);
        fputs("</td><td>", f);
        html_text(f, sts[i].finding);
        fputs("</td>", f);
        verdict_cell(f, sts[i].verdict);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    html_foot(f);
    return pl_atomicfile_commit(af, err);
}

/* --- the single runs ------------------------------------------------------------ */

static pl_status case_figure(const char *dir, const case_run *cr,
                             const pl_dimer_sample *sm, size_t n, pl_err *err)
{
    const pl_dimer_case *c = cr->c;
    double T = 1 / c->f, end = sm[n - 1].t;
    size_t a = 0;
    while (a < n && sm[a].t < end - 8 * T)
        a++;
    double *buf = malloc(5 * n * sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "%s: out of memory", c->name);
    double *t = buf, *y1 = t + n, *y2 = y1 + n, *yp = y2 + n, *x1 = yp + n;
    for (size_t i = 0; i < n; i++) {
        t[i] = sm[i].t;
        y1[i] = sm[i].y1 * 1e3;
        y2[i] = sm[i].y2 * 1e3;
        yp[i] = sm[i].yp * 1e3;
        x1[i] = sm[i].x1 * 1e3;
    }
    pl_plot_series top[] = {{t + a, y1 + a, n - a, "left tip", 0, PL_PLOT_LINE},
                            {t + a, y2 + a, n - a, "right tip", 1, PL_PLOT_DASHED},
                            {t + a, yp + a, n - a, "plate", 2, PL_PLOT_DOTTED}};
    pl_plot_series bot[] = {{t, x1, n, "left tip", 0, PL_PLOT_LINE}};
    char title[160];
    snprintf(title, sizeof title, "%s: A_r %g, f %g Hz, Gamma %g, e_s %g, h0 %g mm, "
             "theta0 %g deg: the last 8 cycles", c->figure, c->Ar, c->f, c->Gamma, c->es,
             c->h0 * 1e3, c->theta0_deg);
    pl_plot_panel pan[] = {
        {title, "t (s)", "height (mm)", NAN, NAN, NAN, NAN, top, 3},
        {"horizontal position over the whole run", "t (s)", "x of the left tip (mm)",
         NAN, NAN, NAN, NAN, bot, 1}};
    char file[64], path[4096];
    snprintf(file, sizeof file, "%s.svg", c->name);
    path_in(path, sizeof path, dir, file);
    pl_status st = pl_plot_svg(path, 1000, 800, pan, 2, err);
    free(buf);
    return st;
}

static void result_text(FILE *f, const pl_dimer_result *r, double fz, double g)
{
    fprintf(f, "mode <b>%s</b>; over the last ten cycles the left sphere hits %zu times and "
               "rises %.3g mm, the right %zu times and %.3g mm (odd / even cycles: left "
               "%.3g / %.3g mm, right %.3g / %.3g mm); drift %.3g mm/s (scaled %.3g); "
               "energy measure %.3g",
            pl_dimer_mode_name(r->mode), r->hits[0], r->hmax[0] * 1e3, r->hits[1],
            r->hmax[1] * 1e3, r->hcycle[0][1] * 1e3, r->hcycle[0][0] * 1e3,
            r->hcycle[1][1] * 1e3, r->hcycle[1][0] * 1e3, r->drift * 1e3,
            pl_dimer_scaled_drift(r->drift, fz, g), r->energy);
}

static pl_status case_page(const char *dir, const case_run *cr, const char *basin,
                           pl_err *err)
{
    const pl_dimer_case *c = cr->c;
    char file[64], path[4096], title[128];
    snprintf(file, sizeof file, "%s.html", c->name);
    path_in(path, sizeof path, dir, file);
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    snprintf(title, sizeof title, "%s from the paper's start", c->figure);
    html_head(f, title);
    fputs("<table><tr><th>the paper</th><th>prismlab, from the same start (100 cycles)</th>"
          "<th>verdict</th></tr>\n<tr><td>", f);
    html_text(f, c->statement);
    fprintf(f, " (mode %s)</td><td>", pl_dimer_mode_name(c->mode));
    result_text(f, &cr->r, c->f, 9.81);
    fputs("</td>", f);
    verdict_cell(f, cr->verdict);
    fputs("</tr></table>\n<p id=\"finding\"><b>What the paper's figure shows and what "
          "prismlab gets</b> (", f);
    html_text(f, cr->st.criterion);
    fputs("): ", f);
    html_text(f, cr->st.finding);
    fputs(".</p>\n", f);
    fprintf(f, "<figure><img src=\"%s.svg\" alt=\"%s\"><figcaption>The tips' heights and the "
               "plate over the last eight cycles; the left tip's horizontal position over the "
               "run.</figcaption></figure>\n", c->name, c->name);
    if (basin)
        fprintf(f, "<p>Where this mode lives around the start: <a href=\"basin-%s.html\">"
                   "the basin map</a>.</p>\n", basin);
    html_foot(f);
    return pl_atomicfile_commit(af, err);
}

/* --- basin maps ----------------------------------------------------------------- */

static pl_status basin_page(const char *dir, const basin_map *b, pl_err *err)
{
    const pl_dimer_basin_spec *s = &b->spec;
    size_t n = s->nh * s->nth;
    int *cells = malloc(n * sizeof *cells);
    if (!cells)
        return pl_err_set(err, PL_ENOMEM, "basin %s: out of memory", b->name);
    /* the map's x: theta0 (fastest in the file), y: h0 */
    for (size_t i = 0; i < n; i++)
        cells[i] = b->modes[i];
    double mx[3], my[3];
    for (int k = 0; k < b->n_cases; k++) {
        mx[k] = b->cases[k]->theta0_deg;
        my[k] = b->cases[k]->h0 * 1e3;
    }
    char title[160];
    snprintf(title, sizeof title, "%s: the mode reached from each start (x: the paper's)",
             b->title);
    pl_plot_map m = {title, "theta0 (deg)", "h0 (mm)", s->th_min * 180 / M_PI,
                     s->th_max * 180 / M_PI, s->h0_min * 1e3, s->h0_max * 1e3, s->nth,
                     s->nh, cells, mode_labels, PL_DIMER_NMODES, mx, my, (size_t)b->n_cases};
    char file[96], path[4096];
    snprintf(file, sizeof file, "basin-%s.png", b->name);
    path_in(path, sizeof path, dir, file);
    pl_status st = pl_plot_map_png(path, 1000, 800, &m, err);
    free(cells);
    if (st != PL_OK)
        return st;
    snprintf(file, sizeof file, "basin-%s.html", b->name);
    path_in(path, sizeof path, dir, file);
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    snprintf(title, sizeof title, "Basin map: %s", b->title);
    html_head(f, title);
    const pl_dimer_params *p = &s->base;
    fprintf(f, "<p>A_r %g, f %g Hz, Gamma %g, e_s %g, mu_s %g, mu_c %g, mu_i %g, v_rest %g mm/s, "
               "distributing exponent %g; %zu x %zu starts at rest, h0 %g-%g mm, theta0 %g-%g "
               "deg; %g s each (the mode: the last ten cycles).  Every start: "
               "<a href=\"basin-%s.csv\">basin-%s.csv</a>.</p>\n",
            p->Ar, p->f, p->Gamma, p->es, p->mu_s, p->mu_c, p->mu_i, p->v_rest * 1e3,
            p->dist_exp, s->nh, s->nth, s->h0_min * 1e3, s->h0_max * 1e3,
            s->th_min * 180 / M_PI, s->th_max * 180 / M_PI, p->duration, b->name, b->name);
    fprintf(f, "<figure><img src=\"basin-%s.png\" alt=\"basin map %s\"></figure>\n", b->name,
            b->name);
    pl_dimer_basin_stats bs;
    pl_dimer_basin_summarize(s, b->modes, 0, 0, PL_DIMER_REST, &bs);
    fputs("<table id=\"shares\"><tr><th>mode</th><th>share of the starts</th></tr>\n", f);
    for (int mo = 0; mo < PL_DIMER_NMODES; mo++)
        fprintf(f, "<tr><td>%s</td><td class=\"n\">%.1f %%</td></tr>\n", mode_labels[mo],
                100 * bs.share[mo]);
    fprintf(f, "<tr><td>refused by the model</td><td class=\"n\">%zu</td></tr></table>\n",
            bs.failed);
    fputs("<h2>The paper's starts</h2>\n<table id=\"nearest\"><tr><th>start</th><th>the "
          "paper's mode</th><th>reached here</th><th>nearest start reaching the paper's mode"
          "</th><th>distance (1 mm ~ 1 deg)</th></tr>\n", f);
    for (int k = 0; k < b->n_cases; k++) {
        const pl_dimer_case *c = b->cases[k];
        pl_dimer_basin_summarize(s, b->modes, c->h0, c->theta0_deg * M_PI / 180, c->mode, &bs);
        fprintf(f, "<tr><td>%s: h0 %g mm, theta0 %g deg</td><td>%s</td><td class=\"n\">%.1f %% "
                   "of the map</td>", c->figure, c->h0 * 1e3, c->theta0_deg,
                pl_dimer_mode_name(c->mode), 100 * bs.share[c->mode]);
        if (isnan(bs.dist))
            fputs("<td>none in the map</td><td></td></tr>\n", f);
        else
            fprintf(f, "<td>h0 %.3f mm, theta0 %.3f deg</td><td class=\"n\">%.3f</td></tr>\n",
                    bs.h0_near * 1e3, bs.th_near * 180 / M_PI, bs.dist);
    }
    fputs("</table>\n", f);
    if (!isnan(b->moved[0])) {
        fputs("<h2>The choices the paper leaves open</h2>\n<p>The same map on a coarser grid "
              "(every fourth start) with one choice changed (docs/dimer.md): the share of the "
              "starts whose mode changes, and the modes' shares.</p>\n<table id=\"variants\">"
              "<tr><th>choice</th><th>starts whose mode changes</th>", f);
        for (int mo = 0; mo < PL_DIMER_NMODES; mo++)
            fprintf(f, "<th>%s</th>", mode_labels[mo]);
        fputs("</tr>\n<tr><td>the defaults (v_rest 1 mm/s, exponent 0.6)</td><td></td>", f);
        for (int mo = 0; mo < PL_DIMER_NMODES; mo++)
            fprintf(f, "<td class=\"n\">%.1f %%</td>", 100 * b->vshare[4][mo]);
        fputs("</tr>\n", f);
        for (int v = 0; v < 4; v++) {
            fprintf(f, "<tr><td>%s</td><td class=\"n\">%.1f %%</td>", variant_names[v],
                    100 * b->moved[v]);
            for (int mo = 0; mo < PL_DIMER_NMODES; mo++)
                fprintf(f, "<td class=\"n\">%.1f %%</td>", 100 * b->vshare[v][mo]);
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    html_foot(f);
    return pl_atomicfile_commit(af, err);
}

/* The map s2, every k-th start of b's map, read off it and stored as
 * dir/basin-NAME.csv like a computed one. */
static pl_status map_subgrid(const char *dir, const char *name, const basin_map *b,
                             const pl_dimer_basin_spec *s2, size_t k, int *modes,
                             double *drift, double *energy, pl_err *err)
{
    for (size_t ih = 0; ih < s2->nh; ih++)
        for (size_t it = 0; it < s2->nth; it++) {
            size_t i = ih * s2->nth + it, j = k * ih * b->spec.nth + k * it;
            modes[i] = b->modes[j];
            drift[i] = b->drift[j];
            energy[i] = b->energy[j];
        }
    char key[1024], file[256], path[4096];
    pl_dimer_basin_key(s2, name, key, sizeof key);
    snprintf(file, sizeof file, "basin-%s.csv", name);
    path_in(path, sizeof path, dir, file);
    return pl_dimer_basin_save(path, key, s2, modes, drift, energy, err);
}

/* The open choices' maps of b on an n x n grid. */
static pl_status basin_variants(const char *dir, basin_map *b, size_t n,
                                const pl_dimer_report_opts *o,
                                pl_dimer_report_stats *stats, pl_err *err)
{
    pl_dimer_basin_spec s = b->spec;
    s.nh = s.nth = n;
    size_t N = n * n;
    int *base = malloc(N * sizeof *base), *mv = malloc(N * sizeof *mv);
    double *d = malloc(N * sizeof *d), *e = malloc(N * sizeof *e);
    pl_status st = PL_OK;
    if (!base || !mv || !d || !e) {
        st = pl_err_set(err, PL_ENOMEM, "basin %s: out of memory", b->name);
        goto out;
    }
    char name[96];
    snprintf(name, sizeof name, "%s-base%zu", b->name, n);
    /* the defaults' coarse map is, start for start, part of the full one
     * (51 of 201: every fourth) unless the sides do not divide */
    size_t k;
    if (pl_dimer_basin_is_subgrid(&b->spec, &s, &k))
        st = map_subgrid(dir, name, b, &s, k, base, d, e, err);
    else
        st = map_get(dir, name, &s, o, base, d, e, stats, err);
    if (st != PL_OK)
        goto out;
    pl_dimer_basin_stats bs;
    pl_dimer_basin_summarize(&s, base, 0, 0, PL_DIMER_REST, &bs);
    memcpy(b->vshare[4], bs.share, sizeof bs.share);
    for (int v = 0; v < 4; v++) {
        pl_dimer_basin_spec sv = s;
        variant_apply(v, &sv.base);
        snprintf(name, sizeof name, "%s%s", b->name, variant_files[v]);
        if ((st = map_get(dir, name, &sv, o, mv, d, e, stats, err)) != PL_OK)
            goto out;
        size_t diff = 0, cnt = 0;
        for (size_t i = 0; i < N; i++)
            if (base[i] >= 0 && mv[i] >= 0) {
                cnt++;
                diff += base[i] != mv[i];
            }
        b->moved[v] = cnt ? (double)diff / (double)cnt : NAN;
        pl_dimer_basin_summarize(&sv, mv, 0, 0, PL_DIMER_REST, &bs);
        memcpy(b->vshare[v], bs.share, sizeof bs.share);
    }
out:
    free(base);
    free(mv);
    free(d);
    free(e);
    return st;
}

/* --- the whole report ------------------------------------------------------------ */

/* What the report gathers, stage by stage; what an interruption left
 * undone reads PL_DIMER_NOT_RUN (statements, runs) or is missing (maps). */
typedef struct {
    pl_dimer_statement sts[PL_DIMER_FIG11_STATEMENTS];
    case_run runs[16];
    size_t nc;
    basin_map maps[3];
    int nm;                     /* maps done */
    const char *pending_map;    /* the map an interruption cut short */
    const char *basin_of[16];   /* each run's map, NULL: none */
    int interrupted;
} report;

/* The statements' count by verdict into stats. */
static void count_verdicts(const report *r, pl_dimer_report_stats *stats)
{
    int by[4] = {0};
    for (int i = 0; i < PL_DIMER_FIG11_STATEMENTS; i++)
        by[r->sts[i].verdict]++;
    for (size_t i = 0; i < r->nc; i++)
        by[r->runs[i].verdict]++;
    stats->statements = PL_DIMER_FIG11_STATEMENTS + (int)r->nc;
    stats->holding = by[PL_DIMER_HOLDS];
    stats->failing = by[PL_DIMER_FAILS];
    stats->unchecked = by[PL_DIMER_UNCHECKED];
    stats->not_run = by[PL_DIMER_NOT_RUN];
}

static void index_summary(FILE *f, const pl_dimer_report_stats *c)
{
    fprintf(f, "<p>Zhao, Liu &amp; Brogliato (2009), the bouncing dimer: each of the paper's "
               "statements on figures 11-20 against prismlab's simulation of the same case "
               "(model/seeds/dimer.c).  <b id=\"summary\">%d of %d statements hold</b>, %d do "
               "not", c->holding, c->statements, c->failing);
    if (c->unchecked)
        fprintf(f, ", <span class=\"unchecked\">%d not checked</span> (this report's sweep "
                   "did not simulate the frequencies or aspect ratios they need: --quick)",
                c->unchecked);
    if (c->not_run)
        fprintf(f, ", <span class=\"notrun\">%d not run: interrupted</span>", c->not_run);
    fputs(".</p>\n", f);
    if (c->not_run || c->interrupted)
        fputs("<p class=\"notrun\" id=\"interrupted\">The report was interrupted (SIGINT or "
              "SIGTERM): it shows the sections done; the rest is marked \"not run: "
              "interrupted\".</p>\n", f);
}

static void index_maps(FILE *f, const report *r)
{
    if (r->nm || r->pending_map) {
        fputs("<h2>Basin maps</h2>\n<ul>\n", f);
        for (int i = 0; i < r->nm; i++)
            fprintf(f, "<li><a href=\"basin-%s.html\">%s</a></li>\n", r->maps[i].name,
                    r->maps[i].title);
        if (r->pending_map)
            fprintf(f, "<li class=\"notrun\">basin %s and any after it: not run: "
                       "interrupted</li>\n", r->pending_map);
        fputs("</ul>\n", f);
    } else if (r->interrupted) {
        fputs("<p class=\"notrun\">Basin maps: not run: interrupted.</p>\n", f);
    } else {
        fputs("<p>No basin maps in this report (--basin-n 0, or every start lands in the "
              "paper's mode).</p>\n", f);
    }
}

static pl_status index_page(const char *dir, const report *r,
                            const pl_dimer_report_stats *counts, pl_err *err)
{
    char path[4096];
    pl_atomicfile *af;
    path_in(path, sizeof path, dir, "index.html");
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    html_head(f, "Dimer report: seed 002's maps checked");
    index_summary(f, counts);
    fputs("<table id=\"verdicts\"><tr><th>figure</th><th>the paper</th><th>verdict</th></tr>\n", f);
    for (int i = 0; i < PL_DIMER_FIG11_STATEMENTS; i++) {
        /* fig11.html exists once figure 11 ran */
        if (r->sts[i].verdict == PL_DIMER_NOT_RUN)
            fputs("<tr><td>Figure 11</td><td>", f);
        else
            fputs("<tr><td><a href=\"fig11.html\">Figure 11</a></td><td>", f);
        html_text(f, r->sts[i].paper);
        fputs("</td>", f);
        verdict_cell(f, r->sts[i].verdict);
        fputs("</tr>\n", f);
    }
    for (size_t i = 0; i < r->nc; i++) {
        const case_run *cr = &r->runs[i];
        if (cr->verdict == PL_DIMER_NOT_RUN)
            fprintf(f, "<tr><td>%s</td><td>", cr->c->figure);
        else
            fprintf(f, "<tr><td><a href=\"%s.html\">%s</a></td><td>", cr->c->name,
                    cr->c->figure);
        html_text(f, cr->c->statement);
        fputs("</td>", f);
        verdict_cell(f, cr->verdict);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    index_maps(f, r);
    html_foot(f);
    return pl_atomicfile_commit(af, err);
}

static pl_status run_fig11(const char *dir, const pl_dimer_report_opts *o,
                           const pl_dimer_fig11_spec *s, pl_dimer_statement *sts,
                           pl_dimer_report_stats *stats, pl_err *err)
{
    size_t n = pl_dimer_fig11_size(s), np = s->n_freqs * s->n_ar;
    /* figure 11 and the 2.5 Hz check (A_r 2.0-2.3) in one batch */
    static const double low_f[1] = {2.5};
    pl_dimer_fig11_spec low = *s;
    low.freqs = low_f;
    low.n_freqs = 1;
    low.ar_min = 2.0;
    low.ar_step = 0.05;
    low.n_ar = 7;
    size_t nl = pl_dimer_fig11_size(&low), tot = n + nl;
    pl_dimer_params *ps = malloc(tot * sizeof *ps);
    pl_dimer_result *res = malloc(tot * sizeof *res);
    int *ok = malloc(tot * sizeof *ok);
    pl_dimer_fig11_point *pts = malloc((np + low.n_ar) * sizeof *pts);
    pl_status st = PL_OK;
    if (!ps || !res || !ok || !pts) {
        st = pl_err_set(err, PL_ENOMEM, "figure 11: out of memory for %zu runs", tot);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        pl_dimer_fig11_params(s, i, &ps[i]);
    for (size_t i = 0; i < nl; i++)
        pl_dimer_fig11_params(&low, i, &ps[n + i]);
    pl_dimer_geometry g;
    if ((st = pl_dimer_geometry_of(&ps[0], &g, err)) != PL_OK)
        goto out;
    prog_ctx pc = {o, "figure 11"};
    double t0 = now();
    st = o->batch ? o->batch(o->runner, ps, tot, o->threads, res, ok, prog, &pc, err)
                  : pl_dimer_batch(ps, tot, o->threads, res, ok, prog, &pc, err);
    if (st == PL_OK && stopped(o))  /* over MPI the batch ran to its end */
        st = pl_err_set(err, PL_ESTATE, "figure 11: interrupted");
    if (st != PL_OK)
        goto out;
    stats->fig11_seconds = now() - t0;
    stats->runs += tot;
    pl_dimer_fig11_summarize(s, res, ok, pts);
    pl_dimer_fig11_summarize(&low, res + n, ok + n, pts + np);
    pl_dimer_fig11_check(s, pts, pts + np, low.n_ar, sts);
    if ((st = fig11_csv(dir, s, pts, np, res, ok, err)) != PL_OK ||
        (st = fig11_figure(dir, s, pts, err)) != PL_OK ||
        (st = fig11_page(dir, s, sts, stats->fig11_seconds, err)) != PL_OK)
        goto out;
    stats->pages++;
out:
    free(ps);
    free(res);
    free(ok);
    free(pts);
    return st;
}

/* The paper's runs, one after another until done or interrupted (then
 * PL_ESTATE, the runs not reached keeping PL_DIMER_NOT_RUN). */
static pl_status run_cases(const char *dir, const pl_dimer_report_opts *o,
                           case_run *runs, size_t n, pl_err *err)
{
    if (o->progress)
        o->progress("the paper's runs", 0, n, o->ctx);
    for (size_t i = 0; i < n; i++) {
        if (stopped(o))
            return pl_err_set(err, PL_ESTATE, "the paper's runs: interrupted");
        pl_dimer_params p;
        pl_dimer_case_params(runs[i].c, 100, &p);
        size_t ns = (size_t)(100 * 200) + 1;
        pl_dimer_sample *sm = malloc(ns * sizeof *sm);
        if (!sm)
            return pl_err_set(err, PL_ENOMEM, "%s: out of memory", runs[i].c->name);
        pl_status st = pl_dimer_run(&p, sm, ns, &runs[i].r, err);
        if (st == PL_OK)
            st = case_figure(dir, &runs[i], sm, ns, err);
        free(sm);
        if (st != PL_OK)
            return st;
        if ((st = pl_dimer_case_check(runs[i].c, &runs[i].r, &runs[i].st, err)) != PL_OK)
            return st;
        runs[i].verdict = runs[i].st.verdict;
        if (o->progress)
            o->progress("the paper's runs", i + 1, n, o->ctx);
    }
    return PL_OK;
}

/* One basin map: figure 13's and figure 20's starts, and one for figures
 * 16-18 together, each when a start in it lands elsewhere.  *made says
 * whether it is in the report. */
static pl_status run_map(const char *dir, const pl_dimer_report_opts *o, report *r, int gi,
                         pl_dimer_report_stats *stats, int *made, pl_err *err)
{
    static const char *const groups[3][3] = {{"fig13", NULL, NULL}, {"fig20", NULL, NULL},
                                             {"fig16", "fig17", "fig18"}};
    static const char *const titles[3] = {"figure 13's jump start", "figure 20's flutter start",
                                          "figures 16-18 (Gamma 1.4)"};
    basin_map *b = &r->maps[r->nm];
    int elsewhere = 0;
    *made = 0;
    memset(b, 0, sizeof *b);
    for (int k = 0; k < 3 && groups[gi][k]; k++)
        for (size_t i = 0; i < r->nc; i++)
            if (strcmp(r->runs[i].c->name, groups[gi][k]) == 0) {
                b->cases[b->n_cases++] = r->runs[i].c;
                elsewhere |= r->runs[i].verdict != PL_DIMER_HOLDS;
            }
    if (!elsewhere || b->n_cases == 0)
        return PL_OK;
    b->name = groups[gi][0];
    b->title = titles[gi];
    pl_dimer_case_basin(b->cases[0], o->basin_n, &b->spec);
    size_t N = o->basin_n * o->basin_n;
    b->modes = malloc(N * sizeof *b->modes);
    b->drift = malloc(N * sizeof *b->drift);
    b->energy = malloc(N * sizeof *b->energy);
    for (int v = 0; v < 4; v++)
        b->moved[v] = NAN;
    pl_status st;
    if (!b->modes || !b->drift || !b->energy)
        st = pl_err_set(err, PL_ENOMEM, "basin %s: out of memory", b->name);
    else if ((st = map_get(dir, b->name, &b->spec, o, b->modes, b->drift, b->energy, stats,
                           err)) == PL_OK &&
             (o->variant_n == 0 ||
              (st = basin_variants(dir, b, o->variant_n, o, stats, err)) == PL_OK))
        st = basin_page(dir, b, err);
    if (st != PL_OK) {
        r->pending_map = b->name;
        free(b->modes);
        free(b->drift);
        free(b->energy);
        memset(b, 0, sizeof *b);
        return st;
    }
    stats->pages++;
    stats->maps++;
    r->nm++;
    *made = 1;
    for (int k = 0; k < b->n_cases; k++)
        for (size_t i = 0; i < r->nc; i++)
            if (r->runs[i].c == b->cases[k])
                r->basin_of[i] = b->name;
    return PL_OK;
}

/* A stage's status: an interruption (PL_ESTATE with the stop flag set)
 * marks the report interrupted and is no error; the next stages skip. */
static pl_status stage_end(report *r, const pl_dimer_report_opts *o, pl_status st)
{
    if (st == PL_ESTATE && stopped(o)) {
        r->interrupted = 1;
        return PL_OK;
    }
    return st;
}

/* The stages: figure 11, the paper's runs, the maps; each skipped once
 * the report was interrupted. */
static pl_status run_stages(const char *dir, const pl_dimer_report_opts *o, report *r,
                            pl_dimer_report_stats *stats, pl_err *err)
{
    pl_dimer_fig11_spec def;
    pl_dimer_fig11_default(&def);
    pl_status st = stage_end(r, o, run_fig11(dir, o, o->fig11 ? o->fig11 : &def, r->sts,
                                             stats, err));
    if (st != PL_OK || r->interrupted)
        return st;
    double t0 = now();
    if ((st = stage_end(r, o, run_cases(dir, o, r->runs, r->nc, err))) != PL_OK ||
        r->interrupted)
        return st;
    stats->cases_seconds = now() - t0;
    stats->runs += r->nc;
    t0 = now();
    for (int gi = 0; gi < 3 && o->basin_n > 0 && !r->interrupted; gi++) {
        int made;
        if ((st = stage_end(r, o, run_map(dir, o, r, gi, stats, &made, err))) != PL_OK)
            return st;
    }
    stats->maps_seconds = now() - t0;
    return PL_OK;
}

pl_status pl_dimer_report_write(const char *dir, const pl_dimer_report_opts *o,
                                pl_dimer_report_stats *stats, pl_err *err)
{
    memset(stats, 0, sizeof *stats);
    stats->threads = o->batch ? 0 : pl_dimer_threads(o->threads);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return pl_err_set(err, PL_EIO, "%s: %s", dir, strerror(errno));
    report *r = calloc(1, sizeof *r);
    if (!r)
        return pl_err_set(err, PL_ENOMEM, "dimer report: out of memory");
    /* the statements' words before any run, so that an interrupted
     * report names what it did not check */
    pl_dimer_fig11_spec none = {0};
    pl_dimer_fig11_check(&none, NULL, NULL, 0, r->sts);
    for (int i = 0; i < PL_DIMER_FIG11_STATEMENTS; i++)
        r->sts[i].verdict = PL_DIMER_NOT_RUN;
    const pl_dimer_case *cases = pl_dimer_cases(&r->nc);
    if (r->nc > 16)
        r->nc = 16;
    for (size_t i = 0; i < r->nc; i++) {
        r->runs[i].c = &cases[i];
        r->runs[i].verdict = PL_DIMER_NOT_RUN;
    }
    pl_status st = run_stages(dir, o, r, stats, err);
    for (size_t i = 0; st == PL_OK && i < r->nc; i++)
        if (r->runs[i].verdict != PL_DIMER_NOT_RUN) {
            st = case_page(dir, &r->runs[i], r->basin_of[i], err);
            stats->pages++;
        }
    count_verdicts(r, stats);
    stats->interrupted = r->interrupted;
    if (st == PL_OK && (st = index_page(dir, r, stats, err)) == PL_OK)
        stats->pages++;
    if (st == PL_OK && r->interrupted)
        st = pl_err_set(err, PL_ESTATE, "interrupted: %s/index.html holds the sections "
                        "done, the rest marked \"not run: interrupted\"", dir);
    for (int i = 0; i < r->nm; i++) {
        free(r->maps[i].modes);
        free(r->maps[i].drift);
        free(r->maps[i].energy);
    }
    free(r);
    return st;
}
