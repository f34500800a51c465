/* model/sweep/report.c - the prism's phase map page.  See report.h. */
#include "model/sweep/report.h"

#include "core/atomicfile.h"
#include "core/plot.h"
#include "core/version.h"
#include "db/sweep.h"
#include "model/prism/map.h"
#include "model/prism/prism.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXV 256       /* distinct values of one axis */
#define G_ACC 9.80665

enum { ST_STOPPED, ST_ROLLING, ST_OTHER, ST_NONE };

typedef struct {
    int law, ni, bi, li;
    int status;           /* ST_* */
    long impacts;
    double omega_settle;  /* NaN when none */
    int rolls;            /* -1 unknown */
} pt;

typedef struct {
    double N[MAXV], bf[MAXV], lf[MAXV];
    int nN, nb, nl;
    double a0, mu_s, mu;  /* from the points (fixed parameters) */
    int have_mu;
    pt *p;
    long long n, cap;
    double worst;         /* omega_settle against omega* */
    pl_status st;
    pl_err *err;
} data;

static int slot(double *v, int *n, double x)
{
    for (int i = 0; i < *n; i++)
        if (v[i] == x)
            return i;
    if (*n == MAXV)
        return -1;
    v[*n] = x;
    return (*n)++;
}

static int num(const pl_sweep_cell *c, double *v)
{
    if (c->kind != PL_SWEEP_NUM)
        return 0;
    *v = c->num;
    return 1;
}

/* names: law N beta-frac lambda0-frac a0 mu-s mu impacts status
 * omega_settle rolls */
static int collect(void *ctx, const pl_sweep_point *p, const pl_sweep_cell *c, size_t n)
{
    data *d = ctx;
    (void)n;
    double N, bf, lf, imp;
    if (!p->ok || c[0].kind != PL_SWEEP_TEXT || !num(&c[1], &N) || !num(&c[2], &bf) ||
        !num(&c[3], &lf))
        return 0;   /* a point the model refused has no place on the map */
    if (d->n == d->cap) {
        long long nc = d->cap ? 2 * d->cap : 4096;
        pt *np = realloc(d->p, (size_t)nc * sizeof *np);
        if (!np) {
            d->st = pl_err_set(d->err, PL_ENOMEM, "out of memory for %lld points", nc);
            return 1;
        }
        d->p = np;
        d->cap = nc;
    }
    pt *q = &d->p[d->n];
    q->law = !strcmp(c[0].text, "plastic");
    q->ni = slot(d->N, &d->nN, N);
    q->bi = slot(d->bf, &d->nb, bf);
    q->li = slot(d->lf, &d->nl, lf);
    if (q->ni < 0 || q->bi < 0 || q->li < 0) {
        d->st = pl_err_set(d->err, PL_EINVAL, "more than %d values on an axis", MAXV);
        return 1;
    }
    num(&c[4], &d->a0);
    num(&c[5], &d->mu_s);
    d->have_mu = num(&c[6], &d->mu);
    q->impacts = num(&c[7], &imp) ? (long)imp : 0;
    const char *s = c[8].kind == PL_SWEEP_TEXT ? c[8].text : "";
    q->status = !strcmp(s, "stopped") ? ST_STOPPED
              : !strcmp(s, "end") || !strcmp(s, "left_ramp") ? ST_ROLLING : ST_OTHER;
    if (!num(&c[9], &q->omega_settle))
        q->omega_settle = NAN;
    double r;
    q->rolls = num(&c[10], &r) ? (int)r : -1;
    d->n++;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts an axis and renumbers the points' indices. */
static void sort_axis(data *d, double *v, int n, int which)
{
    double old[MAXV];
    int map[MAXV];
    memcpy(old, v, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (v[j] == old[i])
                map[i] = j;
    for (long long k = 0; k < d->n; k++) {
        int *x = which == 0 ? &d->p[k].ni : which == 1 ? &d->p[k].bi : &d->p[k].li;
        *x = map[*x];
    }
}

/* The law's omega+/omega- for N (the line law solved as the model does). */
static double ratio_of(const data *d, int law, int N)
{
    if (law)
        return pl_plastic_ratio(N);
    pl_impact_detail det;
    pl_err e = {0};
    if (pl_line_impact_solve(N, d->a0, 1.0, d->mu_s, d->have_mu ? d->mu : d->mu_s, 1.0, 400,
                             &det, &e) != PL_OK)
        return NAN;
    return det.ratio;
}

/* The release fraction lambda0 / (alpha + beta) above which the first
 * impact passes the top (NaN: none does). */
static double lambda_frac_c(int N, double beta, double r)
{
    double alpha = M_PI / N;
    double c = cos(alpha + beta) + (1 - cos(alpha - beta)) / (r * r);
    if (!(r > 0) || c > 1)
        return NAN;
    return 1 - acos(c) / (alpha + beta);
}

typedef struct {
    double bc[2][MAXV];           /* closed form beta_c / alpha, per law and N */
    double lo[2][MAXV], hi[2][MAXV];   /* the sweep's bracket (NaN: none) */
    long long cnt[2][MAXV][3];    /* stopped, rolling at the end, slip/detached */
    double worst[2][MAXV];        /* omega_settle against omega*, relative */
    unsigned char rolls[2][MAXV][MAXV];   /* some start at (law, N, beta) rolls for ever */
} table;

static pl_status fig_omega(const data *d, const char *dir, const table *t, int *figs,
                           pl_err *err)
{
    /* the grid beta nearest half of alpha */
    int bref = 0;
    for (int b = 1; b < d->nb; b++)
        if (fabs(d->bf[b] - 0.5) < fabs(d->bf[bref] - 0.5))
            bref = b;
    (void)t;
    enum { NC = 98 };
    static const char *lab[2][2] = {{"line law: closed form", "line law: runs (median)"},
                                    {"plastic law: closed form", "plastic law: runs (median)"}};
    double cx[2][NC], cy[2][NC], px[2][MAXV], py[2][MAXV];
    size_t np[2] = {0, 0};
    for (int law = 0; law < 2; law++) {
        for (int k = 0; k < NC; k++) {
            int N = 3 + k;
            pl_map_form f;
            pl_err e = {0};
            double beta = d->bf[bref] * M_PI / N;
            cx[law][k] = N;
            cy[law][k] = pl_map_form_of(N, d->a0, beta, ratio_of(d, law, N), &f, &e) == PL_OK
                         ? f.omega_star : NAN;
        }
        for (int ni = 0; ni < d->nN; ni++) {
            double v[4096];
            size_t m = 0;
            for (long long k = 0; k < d->n && m < 4096; k++) {
                const pt *q = &d->p[k];
                if (q->law == law && q->ni == ni && q->bi == bref && q->status == ST_ROLLING &&
                    isfinite(q->omega_settle))
                    v[m++] = q->omega_settle;
            }
            if (!m)
                continue;
            qsort(v, m, sizeof *v, cmp_double);
            px[law][np[law]] = d->N[ni];
            py[law][np[law]++] = v[m / 2];
        }
    }
    pl_plot_series s[4] = {
        {cx[0], cy[0], NC, lab[0][0], 0, PL_PLOT_LINE},
        {px[0], py[0], np[0], lab[0][1], 0, PL_PLOT_POINTS},
        {cx[1], cy[1], NC, lab[1][0], 1, PL_PLOT_DASHED},
        {px[1], py[1], np[1], lab[1][1], 1, PL_PLOT_POINTS}};
    for (int i = 0; i < 4; i++)
        if (!s[i].n)
            s[i].label = NULL;
    char title[160], path[1200];
    snprintf(title, sizeof title, "Settled speed omega* (pre-impact) at beta = %.3g alpha", d->bf[bref]);
    pl_plot_panel pan = {title, "N", "omega* (rad/s)", NAN, NAN, 0, NAN, s, 4};
    snprintf(path, sizeof path, "%s/omega_star.svg", dir);
    if (pl_plot_svg(path, 900, 520, &pan, 1, err) != PL_OK)
        return err->code;
    (*figs)++;
    return PL_OK;
}

static pl_status fig_beta_c(const data *d, const char *dir, const table *t, int *figs,
                            pl_err *err)
{
    enum { NC = 98 };
    double cx[NC], cy[2][NC], lx[2][MAXV], ly[2][MAXV], hx[2][MAXV], hy[2][MAXV];
    size_t nl[2] = {0, 0}, nh[2] = {0, 0};
    for (int law = 0; law < 2; law++) {
        for (int k = 0; k < NC; k++) {
            int N = 3 + k;
            double bc;
            pl_err e = {0};
            cx[k] = N;
            cy[law][k] = pl_map_beta_c(N, ratio_of(d, law, N), &bc, &e) == PL_OK
                         ? log10(bc / (M_PI / N)) : NAN;
        }
        for (int ni = 0; ni < d->nN; ni++) {
            if (isfinite(t->lo[law][ni])) {
                lx[law][nl[law]] = d->N[ni];
                ly[law][nl[law]++] = log10(t->lo[law][ni]);
            }
            if (isfinite(t->hi[law][ni])) {
                hx[law][nh[law]] = d->N[ni];
                hy[law][nh[law]++] = log10(t->hi[law][ni]);
            }
        }
    }
    pl_plot_series s[6] = {
        {cx, cy[0], NC, "line law: closed form", 0, PL_PLOT_LINE},
        {hx[0], hy[0], nh[0], "line: first rolling grid beta", 0, PL_PLOT_POINTS},
        {lx[0], ly[0], nl[0], "line: grid beta below it", 4, PL_PLOT_POINTS},
        {cx, cy[1], NC, "plastic law: closed form", 1, PL_PLOT_DASHED},
        {hx[1], hy[1], nh[1], "plastic: first rolling grid beta", 1, PL_PLOT_POINTS},
        {lx[1], ly[1], nl[1], "plastic: grid beta below it", 5, PL_PLOT_POINTS}};
    for (int i = 0; i < 6; i++)
        if (!s[i].n)
            s[i].label = NULL;
    pl_plot_panel pan = {"Slope below which no start keeps rolling, beta_c (alpha = 180/N deg)",
                         "N", "log10(beta_c / alpha)", NAN, NAN, NAN, NAN, s, 6};
    char path[1200];
    snprintf(path, sizeof path, "%s/beta_c.svg", dir);
    if (pl_plot_svg(path, 900, 560, &pan, 1, err) != PL_OK)
        return err->code;
    (*figs)++;
    return PL_OK;
}

static pl_status fig_map(const data *d, const char *dir, const table *t, int law, int ni,
                         int *figs, pl_err *err)
{
    int N = (int)d->N[ni];
    size_t cells = (size_t)d->nb * (size_t)d->nl;
    double *z = malloc(cells * sizeof *z);
    double *buf = malloc((size_t)d->n * 6 * sizeof *buf);
    double x[MAXV];
    enum { NC = 200 };
    double bx[NC], by[NC], vx[2], vy[2];
    if (!z || !buf) {
        free(z);
        free(buf);
        return pl_err_set(err, PL_ENOMEM, "out of memory for a map");
    }
    double *rx = buf, *ry = buf + d->n, *ox = buf + 2 * d->n, *oy = buf + 3 * d->n,
           *ex = buf + 4 * d->n, *ey = buf + 5 * d->n;
    size_t nr = 0, no = 0, ne = 0;
    double zmax = 0;
    for (size_t k = 0; k < cells; k++)
        z[k] = NAN;
    for (int b = 0; b < d->nb; b++)
        x[b] = log10(d->bf[b]);
    for (long long k = 0; k < d->n; k++) {
        const pt *q = &d->p[k];
        if (q->law != law || q->ni != ni)
            continue;
        double px = x[q->bi], py = d->lf[q->li];
        if (q->status == ST_STOPPED) {
            z[(size_t)q->bi * (size_t)d->nl + (size_t)q->li] = log10((double)(q->impacts > 0 ? q->impacts : 1));
            zmax = fmax(zmax, log10((double)(q->impacts > 0 ? q->impacts : 1)));
        } else if (q->status == ST_ROLLING && q->rolls == 1) {
            rx[nr] = px;
            ry[nr++] = py;
        } else if (q->status == ST_ROLLING) {
            ox[no] = px;
            oy[no++] = py;
        } else {
            ex[ne] = px;
            ey[ne++] = py;
        }
    }
    /* the closed form: beta_c, and the release above which the first impact
     * passes the top (for beta > beta_c: there the start rolls for ever) */
    double r = ratio_of(d, law, N), bc = t->bc[law][ni] * M_PI / N;
    size_t nbd = 0;
    double b0 = log10(t->bc[law][ni]), b1 = x[d->nb - 1];
    for (int k = 0; k < NC && b1 > b0; k++) {
        double lb = b0 + (b1 - b0) * k / (NC - 1), beta = pow(10, lb) * M_PI / N;
        double lf = lambda_frac_c(N, beta, r);
        if (isfinite(lf) && beta > bc) {
            bx[nbd] = lb;
            by[nbd++] = lf;
        }
    }
    vx[0] = vx[1] = b0;
    vy[0] = d->lf[0];
    vy[1] = d->lf[d->nl - 1];
    pl_plot_series s[5] = {
        {rx, ry, nr, "rolls for ever (its own impacts)", 2, PL_PLOT_POINTS},
        {ox, oy, no, "rolling at the end, will stop", 6, PL_PLOT_POINTS},
        {ex, ey, ne, "slip or detached", 9, PL_PLOT_POINTS},
        {vx, vy, isfinite(b0) && b0 >= x[0] && b0 <= x[d->nb - 1] ? 2 : 0,
         "closed form: beta_c", 1, PL_PLOT_LINE},
        {bx, by, nbd, "closed form: first impact passes", 3, PL_PLOT_DASHED}};
    char title[200], path[1200];
    snprintf(title, sizeof title, "N = %d, %s law: impacts before stopping, log10 0 (blue) .. "
             "%.2g (yellow)", N, law ? "plastic" : "line", zmax);
    for (int i = 0; i < 5; i++)   /* an empty series is no legend key here */
        if (!s[i].n)
            s[i].label = NULL;
    pl_plot_panel pan = {title, "log10(beta / alpha)", "lambda0 / (alpha + beta)", NAN, NAN,
                         NAN, NAN, s, 5};
    pl_plot_grid g = {(size_t)d->nb, (size_t)d->nl, x, d->lf, z, 0, zmax > 0 ? zmax : 1};
    snprintf(path, sizeof path, "%s/map_%s_%03d.svg", dir, law ? "plastic" : "line", N);
    pl_status st = pl_plot_grid_svg(path, 760, 620, &pan, &g, err);
    free(z);
    free(buf);
    if (st == PL_OK)
        (*figs)++;
    return st;
}

static void html(FILE *f, const char *name, const data *d, const table *t,
                 const pl_sweep_info *info, int figs)
{
    char now[32];
    pl_store_utc_now(now);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<title>prismlab phase map: %s</title>\n<style>body{font-family:sans-serif;"
               "max-width:1100px;margin:1em auto}table{border-collapse:collapse}td,th{border:"
               "1px solid #bbb;padding:2px 6px;text-align:right}img{max-width:100%%}"
               "</style></head><body>\n<h1>The prism's phase map: %s</h1>\n", name, name);
    fprintf(f, "<p>%lld points of %lld (model %s, a0 = %g m, mu_s = %g; axes %s), written %s "
               "by prismlab %s. Closed form: docs/model.md section 10; method: docs/sweep.md."
               "</p>\n", d->n, info->n_points, info->model, d->a0, d->mu_s, info->axes, now,
            pl_version());
    fputs("<h2>Settled speed</h2>\n<img src=\"omega_star.svg\" alt=\"omega* against N\">\n"
          "<h2>beta_c</h2>\n<img src=\"beta_c.svg\" alt=\"beta_c against N\">\n"
          "<p>First rolling grid beta: the smallest beta of the grid at which a start "
          "rolls for ever; grid beta below it: the grid's next smaller beta.</p>\n", f);
    fputs("<table>\n<tr><th>law</th><th>N</th><th>beta_c (deg)</th><th>beta_c / alpha</th>"
          "<th>sweep: below</th><th>sweep: above</th><th>stopped</th><th>rolling at the end</th>"
          "<th>slip, detached</th><th>omega_settle vs omega*</th></tr>\n", f);
    for (int law = 0; law < 2; law++)
        for (int ni = 0; ni < d->nN; ni++) {
            int N = (int)d->N[ni];
            const long long *c = t->cnt[law][ni];
            if (c[0] + c[1] + c[2] == 0)
                continue;
            fprintf(f, "<tr><td>%s</td><td>%d</td><td>%.6g</td><td>%.6g</td>",
                    law ? "plastic" : "line", N, t->bc[law][ni] * 180 / N, t->bc[law][ni]);
            if (isfinite(t->lo[law][ni]))
                fprintf(f, "<td>%.6g</td>", t->lo[law][ni]);
            else
                fputs("<td>-</td>", f);
            if (isfinite(t->hi[law][ni]))
                fprintf(f, "<td>%.6g</td>", t->hi[law][ni]);
            else
                fputs("<td>-</td>", f);
            fprintf(f, "<td>%lld</td><td>%lld</td><td>%lld</td>", c[0], c[1], c[2]);
            if (t->worst[law][ni] >= 0)
                fprintf(f, "<td>%.2e</td></tr>\n", t->worst[law][ni]);
            else
                fputs("<td>-</td></tr>\n", f);
        }
    fputs("</table>\n<p>sweep: below / above: the largest grid beta / alpha at which no "
          "start rolls for ever, and the smallest at which one does (by the runs' own "
          "last impacts: <code>rolls</code>). omega_settle vs omega*: the largest relative "
          "difference over the runs still rolling at the end.</p>\n<h2>Per N: the (beta, "
          "lambda0) plane</h2>\n", f);
    for (int law = 0; law < 2; law++)
        for (int ni = 0; ni < d->nN; ni++)
            if (t->cnt[law][ni][0] + t->cnt[law][ni][1] + t->cnt[law][ni][2])
            fprintf(f, "<img src=\"map_%s_%03d.svg\" alt=\"N %d %s\" width=\"540\">\n",
                    law ? "plastic" : "line", (int)d->N[ni], (int)d->N[ni],
                    law ? "plastic" : "line");
    fprintf(f, "<p>%d figures.</p>\n", figs);
    fputs("<p id=\"check\" data-images=\"pending\"></p>\n<script>\nwindow.addEventListener('load', function () {\n"
          "  var imgs = document.images, ok = 0;\n"
          "  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;\n"
          "  document.getElementById('check').setAttribute('data-images', ok + '/' + imgs.length);\n"
          "});\n</script>\n</body></html>\n", f);
}

/* The phase map needs the prism's sweep over N, beta-frac and
 * lambda0-frac. */
static pl_status check_sweep(const pl_sweep_info *info, const char *name, pl_err *err)
{
    if (strcmp(info->model, "simulate"))
        return pl_err_set(err, PL_EINVAL, "sweep '%s' is of the %s model: the phase map "
                          "draws the prism (simulate)", name, info->model);
    const char *need[] = {"N", "beta-frac", "lambda0-frac"};
    for (int i = 0; i < 3; i++) {
        char a[1030];
        snprintf(a, sizeof a, ",%s,", info->axes);
        char k[40];
        snprintf(k, sizeof k, ",%s,", need[i]);
        if (!strstr(a, k))
            return pl_err_set(err, PL_EINVAL, "sweep '%s' has axes %s: the phase map needs "
                              "N, beta-frac and lambda0-frac", name, info->axes);
    }
    return PL_OK;
}

/* The table: per law and N the closed form's beta_c, the bracket the
 * points put it in (sum counts the brackets and those that hold it), the
 * points' outcomes, and omega_settle's worst departure from omega*. */
static void tabulate(data *d, table *t, pl_sweep_report_summary *sum)
{
    for (int law = 0; law < 2; law++)
        for (int ni = 0; ni < d->nN; ni++) {
            int N = (int)d->N[ni];
            double bc;
            pl_err e = {0};
            t->bc[law][ni] = pl_map_beta_c(N, ratio_of(d, law, N), &bc, &e) == PL_OK
                             ? bc / (M_PI / N) : NAN;
            t->lo[law][ni] = t->hi[law][ni] = NAN;
            t->worst[law][ni] = -1;
        }
    for (long long k = 0; k < d->n; k++) {
        const pt *q = &d->p[k];
        t->cnt[q->law][q->ni][q->status == ST_STOPPED ? 0 : q->status == ST_ROLLING ? 1 : 2]++;
        if (q->rolls == 1)
            t->rolls[q->law][q->ni][q->bi] = 1;
        if (q->status == ST_ROLLING && isfinite(q->omega_settle)) {
            int N = (int)d->N[q->ni];
            pl_map_form f;
            pl_err e = {0};
            double beta = d->bf[q->bi] * M_PI / N;
            if (pl_map_form_of(N, d->a0, beta, ratio_of(d, q->law, N), &f, &e) == PL_OK) {
                double rel = fabs(q->omega_settle / f.omega_star - 1);
                if (rel > t->worst[q->law][q->ni])
                    t->worst[q->law][q->ni] = rel;
                if (rel > d->worst)
                    d->worst = rel;
            }
        }
    }
    for (int law = 0; law < 2; law++)
        for (int ni = 0; ni < d->nN; ni++) {
            int first = -1;
            for (int b = 0; b < d->nb && first < 0; b++)
                if (t->rolls[law][ni][b])
                    first = b;
            if (first < 0)
                continue;
            t->hi[law][ni] = d->bf[first];
            if (first > 0)
                t->lo[law][ni] = d->bf[first - 1];
            sum->beta_c_n++;
            double bcf = t->bc[law][ni];
            if (bcf < d->bf[first] && (first == 0 || bcf >= d->bf[first - 1]))
                sum->beta_c_ok++;
        }
}

/* The figures into dir, *figs counting them; then index.html. */
static pl_status write_report(const data *d, const table *t, const char *dir,
                              const char *name, const pl_sweep_info *info, int *figs,
                              pl_err *err)
{
    pl_status st = pl_mkdirs(dir, err);
    if (st == PL_OK)
        st = fig_omega(d, dir, t, figs, err);
    if (st == PL_OK)
        st = fig_beta_c(d, dir, t, figs, err);
    for (int law = 0; law < 2 && st == PL_OK; law++)
        for (int ni = 0; ni < d->nN && st == PL_OK; ni++)
            if (t->cnt[law][ni][0] + t->cnt[law][ni][1] + t->cnt[law][ni][2])
                st = fig_map(d, dir, t, law, ni, figs, err);
    if (st != PL_OK)
        return st;
    char path[1200];
    snprintf(path, sizeof path, "%s/index.html", dir);
    pl_atomicfile *af;
    if ((st = pl_atomicfile_open(&af, path, err)) != PL_OK)
        return st;
    html(pl_atomicfile_stream(af), name, d, t, info, *figs);
    return pl_atomicfile_commit(af, err);
}

pl_status pl_sweep_report(pl_store *store, const char *name, const char *dir,
                          pl_sweep_report_summary *sum, pl_err *err)
{
    memset(sum, 0, sizeof *sum);
    pl_sweep_info info;
    if (pl_sweep_find(store, name, &info, err) != PL_OK)
        return err->code;
    if (check_sweep(&info, name, err) != PL_OK)
        return err->code;
    data *d = calloc(1, sizeof *d);
    table *t = calloc(1, sizeof *t);
    if (!d || !t) {
        free(d);
        free(t);
        return pl_err_set(err, PL_ENOMEM, "out of memory for the report");
    }
    d->err = err;
    d->a0 = 0.015;
    d->mu_s = NAN;
    const char *names[] = {"law", "N", "beta-frac", "lambda0-frac", "a0", "mu-s", "mu",
                           "impacts", "status", "omega_settle", "rolls"};
    pl_status st = pl_sweep_points(store, info.sweep_id, names, 11, collect, d, err);
    if (st == PL_OK)
        st = d->st;
    if (st == PL_OK && d->n == 0)
        st = pl_err_set(err, PL_EINVAL, "sweep '%s' has no computed points", name);
    if (st == PL_OK && !isfinite(d->mu_s))
        st = pl_err_set(err, PL_EINVAL, "sweep '%s': no mu-s in its points", name);
    if (st == PL_OK) {
        sort_axis(d, d->N, d->nN, 0);
        sort_axis(d, d->bf, d->nb, 1);
        sort_axis(d, d->lf, d->nl, 2);
        tabulate(d, t, sum);
        int figs = 0;
        st = write_report(d, t, dir, name, &info, &figs, err);
        sum->points = d->n;
        sum->figures = figs;
        sum->omega_worst_pct = 100 * d->worst;
    }
    free(d->p);
    free(d);
    free(t);
    return st;
}
