/* model/validate/report.c - the validation report of an experiment.  See report.h
 * and docs/validation.md. */
#include "model/validate/report.h"

#include "core/atomicfile.h"
#include "core/jobs.h"
#include "core/plot.h"
#include "core/version.h"
#include "db/catalog.h"
#include "db/derived.h"
#include "db/quality.h"
#include "db/run.h"
#include "db/validation.h"
#include "model/prism/match.h"
#include "model/validate/answer.h"
#include "model/validate/ratio.h"
#include "model/validate/validate.h"
#include "process/warnings.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { LAWS = 2, FITS = 2 };
static const char *const law_name[LAWS] = {"line", "plastic"};
static const char *const fit_name[FITS] = {"recorded", "fitted"};

typedef struct {
    pl_run_info info;
    pl_prism prism;
    pl_processing proc;
    int processed;
    pl_quality quality;           /* the data-quality record */
    int has_quality;              /* 0: neither processed nor refused */
    pl_validation v[LAWS][FITS];
    int has[LAWS][FITS];
    /* measured, 1 kHz, over the valid window; simulated (line, fitted,
     * else line, recorded) on the same times */
    double *t, *lp, *om, *v1, *v2, *slp, *som, *sv1, *sv2;
    double *plp, *pom;            /* the plastic law's L_p and omega */
    size_t n;
    pl_impact *imp;               /* the impacts (processed runs) */
    size_t n_imp;
    double law_ratio[LAWS];       /* each law's omega+/omega- (NaN: none) */
    double h[2];                  /* beam heights from the run's channels */
    double blocks[PL_FIT_BLOCKS]; /* the verdict's block log-ratios */
    size_t n_blocks;
    pl_verdict verdict;
    char withheld[512];           /* "" or why the run names no law (neither
                                     fits, or its quality is not to be
                                     trusted); its blocks are then not pooled */
} run_data;

typedef struct {
    run_data *r;
    size_t n, cap;
    pl_store *store;
} run_set;

static int collect(void *ctx, const pl_run_info *info)
{
    run_set *s = ctx;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        run_data *v = realloc(s->r, cap * sizeof *v);
        if (!v)
            return 1;
        s->r = v;
        s->cap = cap;
    }
    memset(&s->r[s->n], 0, sizeof s->r[0]);
    s->r[s->n++].info = *info;
    return 0;
}

static int by_edges(const void *a, const void *b)
{
    const run_data *x = a, *y = b;
    if (x->prism.n_edges != y->prism.n_edges)
        return x->prism.n_edges - y->prism.n_edges;
    return x->info.id < y->info.id ? -1 : x->info.id > y->info.id;
}

static void free_run(run_data *r)
{
    double *v[11] = {r->t, r->lp, r->om, r->v1, r->v2, r->slp, r->som, r->sv1,
                     r->sv2, r->plp, r->pom};
    for (int i = 0; i < 11; i++)
        free(v[i]);
    free(r->imp);
}

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

static const pl_validation *best_val(const run_data *r, int law)
{
    if (r->has[law][1])
        return &r->v[law][1];
    if (r->has[law][0])
        return &r->v[law][0];
    return NULL;
}

/* The simulation a stored validation describes, on the run's times (the
 * law is the validation's own: the caller picked v by it). */
static pl_status simulate_curve(const pl_validation *v, pl_law law,
                                const run_data *r, double *lp, double *om,
                                double *v1, double *v2, pl_err *err)
{
    (void)law;
    return pl_validation_curve(v, r->t, lp, om, v1, v2, r->n, err);
}

/* Loads the run's series, both laws' simulations on the same times and
 * the run's verdict. */
static pl_status load_series(pl_store *store, run_data *r, pl_err *err)
{
    double *full[4] = {NULL};
    const char *names[4] = {"Lp", "omega", "vp1", "vp2"};
    size_t n = 0;
    double t0 = 0, rate = 1;
    for (int i = 0; i < 4; i++) {
        size_t m;
        if (pl_derived_series(store, r->info.id, names[i], 10, &full[i], &m,
                              &t0, &rate, err) != PL_OK) {
            for (int j = 0; j < i; j++)
                free(full[j]);
            return err->code;
        }
        n = i ? (m < n ? m : n) : m;
    }
    size_t a = (size_t)ceil((r->proc.release_t_s - t0) * rate);
    size_t b = (size_t)floor((r->proc.end_t_s - t0) * rate);
    if (b > n)
        b = n;
    if (a >= b)
        a = b = 0;
    r->n = b - a;
    double **dst[11] = {&r->t, &r->lp, &r->om, &r->v1, &r->v2, &r->slp, &r->som,
                        &r->sv1, &r->sv2, &r->plp, &r->pom};
    for (int i = 0; i < 11; i++)
        if (!(*dst[i] = calloc(r->n ? r->n : 1, sizeof(double)))) {
            for (int j = 0; j < 4; j++)
                free(full[j]);
            return pl_err_set(err, PL_ENOMEM, "report: out of memory");
        }
    for (size_t k = 0; k < r->n; k++) {
        r->t[k] = t0 + (double)(a + k) / rate;
        r->lp[k] = full[0][a + k];
        r->om[k] = full[1][a + k];
        r->v1[k] = full[2][a + k];
        r->v2[k] = full[3][a + k];
    }
    for (int i = 0; i < 4; i++)
        free(full[i]);
    const pl_validation *v = best_val(r, 0), *vp = best_val(r, 1);
    if (r->n == 0)
        return PL_OK;
    if (v && simulate_curve(v, PL_LAW_LINE, r, r->slp, r->som, r->sv1, r->sv2,
                            err) != PL_OK)
        return err->code;
    if (vp && simulate_curve(vp, PL_LAW_PLASTIC, r, r->plp, r->pom, NULL,
                             NULL, err) != PL_OK)
        return err->code;
    /* the verdict compares like with like: both laws fitted, or both as
     * recorded */
    if (v && vp && !strcmp(v->fit, vp->fit))
        r->n_blocks = pl_verdict_blocks(r->lp, r->slp, r->plp, r->n, r->blocks);
    pl_verdict_decide(r->blocks, r->n_blocks, &r->verdict);
    /* a verdict only where a law fits and the numbers are to be trusted
     * (docs/validation.md, "A verdict only where a law fits"); a run that
     * gives none lends the pooled verdicts no evidence either */
    if (r->n_blocks > 0 &&
        ((r->has_quality && pl_quality_withholds(r->info.id, r->quality.quality, r->withheld,
                                                 sizeof r->withheld)) ||
         pl_verdict_gate(&r->verdict, v, vp, r->withheld, sizeof r->withheld))) {
        r->n_blocks = 0;
        pl_verdict_decide(NULL, 0, &r->verdict);
    }
    return PL_OK;
}

/* What the figures share: per run the time from the release and the
 * L_p error, room for one panel's series and their legend labels. */
typedef struct {
    const run_set *s;
    const char *dir;
    pl_plot_series *ser;
    double **rel, **dif;
    char (*label)[48];
    size_t n_label;
    double tmax;              /* the longest window: one time axis for all */
} fig_ctx;

static void fig_free(fig_ctx *c)
{
    for (size_t i = 0; c->rel && c->dif && i < c->s->n; i++) {
        free(c->rel[i]);
        free(c->dif[i]);
    }
    free(c->rel);
    free(c->dif);
    free(c->ser);
    free(c->label);
}

static pl_status fig_init(fig_ctx *c, const run_set *s, const char *dir,
                          pl_err *err)
{
    size_t n = s->n;
    *c = (fig_ctx){.s = s, .dir = dir};
    c->ser = calloc(4 * n + 8, sizeof *c->ser);
    c->label = calloc(4 * n + 8, sizeof *c->label);
    c->rel = calloc(n ? n : 1, sizeof *c->rel);
    c->dif = calloc(n ? n : 1, sizeof *c->dif);
    int ok = c->ser && c->label && c->rel && c->dif;
    for (size_t i = 0; ok && i < n; i++) {
        const run_data *r = &s->r[i];
        c->rel[i] = malloc((r->n ? r->n : 1) * sizeof(double));
        c->dif[i] = malloc((r->n ? r->n : 1) * sizeof(double));
        ok = c->rel[i] && c->dif[i];
        for (size_t j = 0; ok && j < r->n; j++) {
            c->rel[i][j] = r->t[j] - r->proc.release_t_s;
            c->dif[i][j] = r->slp[j] - r->lp[j];
        }
        if (ok && r->n && c->rel[i][r->n - 1] > c->tmax)
            c->tmax = c->rel[i][r->n - 1];
    }
    if (ok)
        return PL_OK;
    fig_free(c);
    return pl_err_set(err, PL_ENOMEM, "report: out of memory");
}

/* The legend label of run r: one entry a run, by its id (the colour
 * is the run's in every figure; the line style says what is drawn). */
static const char *fig_label(fig_ctx *c, const run_data *r)
{
    char *l = c->label[c->n_label++];
    snprintf(l, sizeof c->label[0], "run %lld (N=%d %s)", r->info.id,
             r->prism.n_edges, r->prism.material);
    return l;
}

/* The legend's style keys after the runs: black entries without data. */
static size_t fig_keys(fig_ctx *c, size_t k, int plastic)
{
    c->ser[k++] = (pl_plot_series){NULL, NULL, 0, "measured", -1, PL_PLOT_LINE};
    c->ser[k++] = (pl_plot_series){NULL, NULL, 0, "line-impact law", -1, PL_PLOT_DASHED};
    if (plastic)
        c->ser[k++] = (pl_plot_series){NULL, NULL, 0, "plastic law", -1, PL_PLOT_DOTTED};
    return k;
}

/* The panel's series: every run's measured L_p (omega: its rotary
 * speed) against the time from the release, the line law's (dashed) and
 * the plastic law's (dotted) beside it where the run was validated, then
 * the style keys.  Returns their count. */
static size_t fig_measured_and_model(fig_ctx *c, int omega)
{
    size_t k = 0;
    int plastic = 0;
    c->n_label = 0;
    for (size_t i = 0; i < c->s->n; i++) {
        const run_data *r = &c->s->r[i];
        c->ser[k++] = (pl_plot_series){c->rel[i], omega ? r->om : r->lp, r->n,
                                       fig_label(c, r), (int)i, PL_PLOT_LINE};
        if (best_val(r, 0))
            c->ser[k++] = (pl_plot_series){c->rel[i], omega ? r->som : r->slp, r->n,
                                           NULL, (int)i, PL_PLOT_DASHED};
        if (best_val(r, 1)) {
            c->ser[k++] = (pl_plot_series){c->rel[i], omega ? r->pom : r->plp, r->n,
                                           NULL, (int)i, PL_PLOT_DOTTED};
            plastic = 1;
        }
    }
    return fig_keys(c, k, plastic);
}

/* Draws the panels into dir/name and counts the figure. */
static pl_status fig_write(const fig_ctx *c, const char *name, int width,
                           int height, const pl_plot_panel *p, size_t n_panels,
                           int *count, pl_err *err)
{
    char base[1200];
    /* name.svg, and beside it name.pdf and name.png for a manuscript */
    snprintf(base, sizeof base, "%s/%.*s", c->dir, (int)(strlen(name) - 4), name);
    if (pl_plot_files(base, width, height, p, n_panels, err) != PL_OK)
        return err->code;
    ++*count;
    return PL_OK;
}

/* Figs. 8/9 and 6 of the paper: L_p(t) and omega(t), measured and
 * simulated; between them the L_p error of the validated runs. */
static pl_status fig_lp_omega(fig_ctx *c, int *count, pl_err *err)
{
    size_t k = fig_measured_and_model(c, 0);
    pl_plot_panel p1 = {"Line-impact count L_p(t) (4.2): measured and simulated",
                        "time from release t (s)", "L_p", 0, c->tmax, 0, NAN, c->ser, k};
    if (fig_write(c, "lp.svg", 900, 560, &p1, 1, count, err) != PL_OK)
        return err->code;
    k = 0;
    c->n_label = 0;
    for (size_t i = 0; i < c->s->n; i++) {
        const run_data *r = &c->s->r[i];
        if (best_val(r, 0))
            c->ser[k++] = (pl_plot_series){c->rel[i], c->dif[i], r->n, fig_label(c, r),
                                           (int)i, PL_PLOT_LINE};
    }
    pl_plot_panel p2 = {"L_p(simulated, line law) - L_p(measured)", "time from release t (s)",
                        "L_p error (impacts)", 0, c->tmax, NAN, NAN, c->ser, k};
    if (k && fig_write(c, "lp_error.svg", 900, 420, &p2, 1, count, err) != PL_OK)
        return err->code;
    k = fig_measured_and_model(c, 1);
    pl_plot_panel p3 = {"Rotary speed (4.1): measured and simulated", "time from release t (s)",
                        "omega (rad/s)", 0, c->tmax, 0, NAN, c->ser, k};
    return fig_write(c, "omega.svg", 900, 560, &p3, 1, count, err);
}

/* Fig. 5 of the paper: the gauge velocities of the first run, whole and
 * zoomed on a few impacts mid-run (none for a run of 100 samples or
 * fewer). */
static pl_status fig_vp(const fig_ctx *c, int *count, pl_err *err)
{
    if (c->s->n == 0 || c->s->r[0].n <= 100)
        return PL_OK;
    const run_data *r = &c->s->r[0];
    const double *t = c->rel[0];
    size_t mid = r->n / 2, a = mid > 25 ? mid - 25 : 0, b = mid + 35 < r->n ? mid + 35 : r->n;
    pl_plot_series whole[6] = {
        {t, r->v1, r->n, "v_p1", 0, PL_PLOT_LINE},
        {t, r->v2, r->n, "v_p2", 1, PL_PLOT_LINE},
        {t, r->sv1, r->n, NULL, 0, PL_PLOT_DASHED},
        {t, r->sv2, r->n, NULL, 1, PL_PLOT_DASHED},
        {NULL, NULL, 0, "measured", -1, PL_PLOT_LINE},
        {NULL, NULL, 0, "line-impact law", -1, PL_PLOT_DASHED}};
    if (!best_val(r, 0))   /* nothing simulated: no model, no key for it */
        whole[2].n = whole[3].n = 0, whole[5].label = NULL;
    pl_plot_series zoom[4] = {
        {t + a, r->v1 + a, b - a, NULL, 0, PL_PLOT_LINE},
        {t + a, r->v2 + a, b - a, NULL, 1, PL_PLOT_LINE},
        {t + a, r->sv1 + a, b - a, NULL, 0, PL_PLOT_DASHED},
        {t + a, r->sv2 + a, b - a, NULL, 1, PL_PLOT_DASHED}};
    int sim = best_val(r, 0) != NULL;
    pl_plot_panel pv[2] = {
        {"Gauge-point velocities (4.3)", "time from release t (s)", "v (m/s)", 0, c->tmax, NAN, NAN, whole, 6},
        {"Zoom on line impacts (cf. the inset of fig. 5)", "time from release t (s)", "v (m/s)", NAN, NAN, NAN, NAN, zoom, sim ? 4 : 2}};
    return fig_write(c, "vp.svg", 900, 760, pv, 2, count, err);
}

/* omega+/omega- against N: each processed run's measured mean and the
 * two laws' predictions (none when no run was processed). */
static pl_status fig_ratio(const fig_ctx *c, int *count, pl_err *err)
{
    size_t n = c->s->n, m = 0, ml = 0, mp = 0;
    double *buf = calloc(8 * (n ? n : 1), sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "report: out of memory");
    double *xN = buf, *ym = buf + n, *xl = buf + 2 * n, *yl = buf + 3 * n;
    double *xp = buf + 4 * n, *yp = buf + 5 * n, *sd = buf + 6 * n;
    for (size_t i = 0; i < n; i++) {
        const run_data *r = &c->s->r[i];
        if (!r->processed)
            continue;
        xN[m] = r->prism.n_edges;
        sd[m] = isfinite(r->proc.ratio_sd) ? r->proc.ratio_sd : 0;
        ym[m++] = r->proc.ratio_mean;
        if (r->has[0][1] || r->has[0][0]) {
            xl[ml] = r->prism.n_edges;
            yl[ml++] = best_val(r, 0)->ratio_pred;
        }
        if (r->has[1][1] || r->has[1][0]) {
            xp[mp] = r->prism.n_edges;
            yp[mp++] = best_val(r, 1)->ratio_pred;
        }
    }
    /* the bars: the mean -+ the spread of the run's single impacts, as
     * PL_PLOT_BARS wants them (lows, then highs) */
    double *bars = malloc(2 * (m ? m : 1) * sizeof *bars);
    if (!bars) {
        free(buf);
        return pl_err_set(err, PL_ENOMEM, "report: out of memory");
    }
    for (size_t j = 0; j < m; j++) {
        bars[j] = ym[j] - sd[j];
        bars[m + j] = ym[j] + sd[j];
    }
    pl_plot_series rs[4] = {{xN, ym, m, "measured (+- sd)", 0, PL_PLOT_POINTS},
                            {xN, bars, m, NULL, 0, PL_PLOT_BARS},
                            {xl, yl, ml, "line-impact law", 1, PL_PLOT_POINTS},
                            {xp, yp, mp, "plastic law", 2, PL_PLOT_POINTS}};
    pl_plot_panel pr = {"Impact ratio omega+/omega- against the number of edges",
                        "N", "omega+/omega-", NAN, NAN, NAN, NAN, rs, 4};
    pl_status st = m ? fig_write(c, "ratio.svg", 900, 480, &pr, 1, count, err) : PL_OK;
    free(bars);
    free(buf);
    return st;
}

/* Impacts drawn at most in a run's figure of its ratios: every k-th
 * beyond (a 10-minute run has some 40 000, an SVG of them megabytes). */
enum { RUN_RATIO_POINTS = 2000 };

static size_t run_ratio_step(const run_data *r)
{
    return r->n_imp > RUN_RATIO_POINTS ? (r->n_imp + RUN_RATIO_POINTS - 1) / RUN_RATIO_POINTS : 1;
}

/* A run's impacts (ratio_runID.svg): each one's omega+/omega- against
 * omega- just before it, its standard error as a bar, and each law's
 * ratio as a line across them (dashed: line-impact law; dotted: plastic,
 * as in the other figures); none for a run without ratios. */
static pl_status fig_run_ratio(const fig_ctx *c, const run_data *r, int *count, pl_err *err)
{
    size_t step = run_ratio_step(r), cap = r->n_imp / step + 1, m = 0;
    double *buf = malloc(5 * cap * sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "report: out of memory");
    double *x = buf, *y = buf + cap, *bars = buf + 2 * cap, *hi = buf + 4 * cap;
    double lo_x = INFINITY, hi_x = -INFINITY;
    for (size_t i = 0; i < r->n_imp; i += step) {
        const pl_impact *im = &r->imp[i];
        if (!isfinite(im->omega_minus) || !isfinite(im->ratio))
            continue;
        double se = isfinite(im->ratio_se) ? im->ratio_se : 0;
        x[m] = im->omega_minus;
        y[m] = im->ratio;
        bars[m] = im->ratio - se;
        hi[m++] = im->ratio + se;
        lo_x = fmin(lo_x, im->omega_minus);
        hi_x = fmax(hi_x, im->omega_minus);
    }
    /* PL_PLOT_BARS wants the lows, then the highs */
    memmove(bars + m, hi, m * sizeof *hi);
    double lx[2] = {lo_x, hi_x}, ly[LAWS][2];
    pl_plot_series ser[4] = {{x, y, m, "impacts (bars: 1 sd)", 0, PL_PLOT_POINTS},
                             {x, bars, m, NULL, 0, PL_PLOT_BARS}};
    size_t k = 2;
    static const char *const names[LAWS] = {"line-impact law", "plastic law"};
    for (int law = 0; law < LAWS; law++)
        if (isfinite(r->law_ratio[law])) {
            ly[law][0] = ly[law][1] = r->law_ratio[law];
            ser[k++] = (pl_plot_series){lx, ly[law], 2, names[law], 1 + law,
                                        law ? PL_PLOT_DOTTED : PL_PLOT_DASHED};
        }
    char title[160], name[64];
    snprintf(title, sizeof title, "Run %lld (N=%d %s): omega+/omega- of each impact",
             r->info.id, r->prism.n_edges, r->prism.material);
    snprintf(name, sizeof name, "ratio_run%lld.svg", r->info.id);
    pl_plot_panel p = {title, "omega- just before the impact (rad/s)", "omega+/omega-",
                       NAN, NAN, NAN, NAN, ser, k};
    pl_status st = m ? fig_write(c, name, 900, 420, &p, 1, count, err) : PL_OK;
    free(buf);
    return st;
}

/* The figures one after the other: the experiment's three (fig_lp_omega
 * draws three files), then a run's each. */
enum { SHARED_FIGURES = 3 };

/* Figure task k of figures(): the shared ones first, then run k - 3's. */
static pl_status figure(fig_ctx *c, size_t k, int *count, pl_err *err)
{
    switch (k) {
    case 0: return fig_lp_omega(c, count, err);
    case 1: return fig_vp(c, count, err);
    case 2: return fig_ratio(c, count, err);
    default: return fig_run_ratio(c, &c->s->r[k - SHARED_FIGURES], count, err);
    }
}

/* --jobs: the figures drawn in worker processes (core/jobs.h), which
 * have the runs' data from the fork; PLplot's state is then each
 * process's own.  A worker's exit status is the files it drew, or
 * FIG_FAILED with the error on its stdout. */
enum { FIG_FAILED = 125 };

typedef struct {
    fig_ctx *c;
    int count;
    pl_err *err;
    pl_status st;
} fig_jobs;

static int fig_job(void *arg, size_t k, pl_jobs_turn *turn)
{
    fig_jobs *j = arg;
    pl_err err = {0};
    int count = 0;
    (void)turn;   /* the figures are files of their own: no turn */
    if (figure(j->c, k, &count, &err) != PL_OK) {
        fputs(err.msg, stdout);
        return FIG_FAILED;
    }
    return count;
}

static int fig_emit(void *arg, size_t k, const pl_jobs_result *r)
{
    fig_jobs *j = arg;
    char why[96];
    if (pl_jobs_death(r, why, sizeof why))
        j->st = pl_err_set(j->err, PL_EIO, "report: figure %zu: %s", k + 1, why);
    else if (r->code == FIG_FAILED)
        j->st = pl_err_set(j->err, PL_EIO, "%s", r->out[0] ? r->out : "report: a "
                           "figure's worker failed");
    else
        j->count += r->code;
    return j->st != PL_OK;
}

static pl_status figures(const run_set *s, const char *dir, int jobs, int *count,
                         pl_err *err)
{
    fig_ctx c;
    if (fig_init(&c, s, dir, err) != PL_OK)
        return err->code;
    size_t n = SHARED_FIGURES + s->n;
    pl_status st = PL_OK;
    if (jobs > 1) {
        fig_jobs j = {.c = &c, .err = err};
        st = pl_jobs_run(n, jobs, NULL, fig_job, fig_emit, &j, err);
        if (st == PL_OK)
            st = j.st;
        *count += j.count;
    } else {
        for (size_t k = 0; k < n && st == PL_OK; k++)
            st = figure(&c, k, count, err);
    }
    fig_free(&c);
    return st;
}

/* The paper's own maximum relative errors of L_p (captions of figs. 8, 9)
 * by N, for the experiments that repeat them. */
static double paper_error(const char *ramp, int N)
{
    static const int Ns[6] = {22, 24, 30, 32, 36, 38};
    static const double fig8[6] = {0.39, 2.19, 1.79, 0.69, 2.54, 0.75};
    static const double fig9[6] = {4.42, 1.73, 0.837, 1.71, 1.12, 3.08};
    const double *v = !strcmp(ramp, "glass-0.3702") ? fig8
                    : !strcmp(ramp, "steel-0.3792") ? fig9 : NULL;
    for (int i = 0; v && i < 6; i++)
        if (Ns[i] == N)
            return v[i];
    return NAN;
}

/* The figure of seed 000 a run repeats, by its conditions (0: none):
 * fig. 6 glass 0.4079 deg; fig. 7 glass 0.3702 deg with the beams at
 * 22.3 / 11.9 mm; fig. 8 glass 0.3702 deg otherwise; fig. 9 steel
 * 0.3792 deg. */
static int paper_figure(const run_data *r)
{
    if (!strcmp(r->info.ramp, "glass-0.4079"))
        return 6;
    if (!strcmp(r->info.ramp, "steel-0.3792"))
        return 9;
    if (!strcmp(r->info.ramp, "glass-0.3702"))
        return fabs(r->h[0] - 0.0223) < 5e-4 && fabs(r->h[1] - 0.0119) < 5e-4 ? 7 : 8;
    return 0;
}

/* The release angle the paper simulated for fig. 6 or 8 and N (NaN: it
 * gives none). */
static double paper_lambda0(int fig, int N)
{
    static const int Ns[6] = {22, 24, 30, 32, 36, 38};
    static const double fig8[6] = {7.2, 5.25, 5.3220, 4.8937, 5.06, 4.5};
    for (int i = 0; i < 6; i++)
        if (Ns[i] == N && (fig == 8 || (fig == 6 && (N == 22 || N == 30 || N == 38))))
            return fig8[i];   /* fig. 6 uses fig. 8's angles for its three N */
    return NAN;
}

static void pct(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.3f", 100 * v);
    else
        fputs("&ndash;", f);
}

static void num(FILE *f, const char *fmt, double v)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("&ndash;", f);
}

/* The page's head, title and opening paragraphs (now: when it was
 * written; synthetic: whether a run came from the rig simulator). */
static void html_head(FILE *f, const char *exp, const char *now, int synthetic)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>prismlab validation: ", f);
    html_text(f, exp);
    fputs("</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
          "table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #bbb;padding:3px 6px;text-align:right}"
          "th{background:#eee}td.l{text-align:left}.synthetic{background:#fff3cd;border:1px solid #e0b000;padding:0.5em;font-weight:bold}"
          "tr.degraded td{background:#fff3cd}tr.suspect td{background:#f5c6cb}tr.refused td{background:#f8d7da}"
          "ul.faults{margin:0;padding-left:1.2em;text-align:left}"
          "figure{margin:1.5em 0}figcaption{font-size:0.9em;color:#444}img{max-width:100%;border:1px solid #ddd}</style>\n"
          "</head><body>\n<h1>Validation report: ", f);
    html_text(f, exp);
    fprintf(f, "</h1>\n<p>Written %s by prismlab %s.  Model: seed 000 (Zhao, Liu &amp; Ma 2014), "
               "contact phase (2.1)-(2.2), line impacts (section 3) and, for comparison, the plastic "
               "(rimless-wheel) law; measured L_p by (4.1)-(4.2).  Definitions: docs/validation.md.</p>\n",
            now, pl_version());
    if (synthetic)
        fputs("<p class=\"synthetic\">SYNTHETIC: runs marked below were made by the rig simulator "
              "(prismlab sim), not measured on the rig.</p>\n", f);
}

/* "</td><td>" and the values v[0..n-1] by fmt with " / " between them. */
static void html_cell(FILE *f, const char *fmt, size_t n, const double *v)
{
    fputs("</td><td>", f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(" / ", f);
        num(f, fmt, v[i]);
    }
}

/* One row of the verdict table: what it covers, the law supported, the
 * evidence. */
static void verdict_row(FILE *f, const char *scope, const pl_verdict *v,
                        const char *withheld)
{
    static const char *const words[] = {
        [PL_VERDICT_NONE] = "&ndash; (not validated with both laws)",
        [PL_VERDICT_LINE] = "<b>line-impact law</b>",
        [PL_VERDICT_PLASTIC] = "<b>plastic law</b>",
        [PL_VERDICT_UNDECIDED] = "undecided"};
    fputs("<tr><td class=\"l\">", f);
    html_text(f, scope);
    if (withheld && withheld[0]) {
        fputs("</td><td class=\"l\" data-verdict=\"withheld\">none: ", f);
        html_text(f, withheld);
        fputs("</td><td colspan=\"4\"></td></tr>\n", f);
        return;
    }
    fprintf(f, "</td><td class=\"l\" data-verdict=\"%s\">%s</td><td>",
            pl_verdict_name(v->law), words[v->law]);
    num(f, "%.3g", v->rms_ratio);
    fputs("</td><td>", f);
    num(f, "%.3g", v->t_stat);
    fputs("</td><td>", f);
    num(f, "%.3f", v->t_crit);
    fprintf(f, "</td><td>%zu</td></tr>\n", v->blocks);
}

/* Whether run i holds the samples of a run before it that the pool of
 * prism (NULL: every run) already counts: identical runs are one
 * measurement, however often stored (docs/validation.md, "Runs that hold
 * the same samples"). */
static int pooled_already(const run_set *s, size_t i, const char *prism)
{
    const char *h = s->r[i].info.samples_sha256;
    for (size_t j = 0; h[0] && j < i; j++)
        if (s->r[j].n_blocks > 0 && (!prism || !strcmp(prism, s->r[j].info.prism)) &&
            !strcmp(h, s->r[j].info.samples_sha256))
            return 1;
    return 0;
}

/* Pools the block log-ratios of the runs that match (prism NULL: all),
 * each set of runs with the same samples once. */
static void pooled_verdict(const run_set *s, const char *prism, pl_verdict *v)
{
    double *d = malloc((s->n * PL_FIT_BLOCKS + 1) * sizeof *d);
    size_t k = 0;
    for (size_t i = 0; d && i < s->n; i++)
        if ((!prism || !strcmp(prism, s->r[i].info.prism)) &&
            !pooled_already(s, i, prism))
            for (size_t j = 0; j < s->r[i].n_blocks; j++)
                d[k++] = s->r[i].blocks[j];
    pl_verdict_decide(d, d ? k : 0, v);
    free(d);
}

/* The runs that hold another run's samples, named under the verdicts
 * that count them once: a stored copy is no second measurement. */
static void html_same_samples(FILE *f, const run_set *s)
{
    int n = 0;
    for (size_t i = 0; i < s->n; i++) {
        char text[512];
        pl_err err = {0};
        if (pl_run_same_samples_text(s->store, s->r[i].info.id, text, sizeof text,
                                     &err) != PL_OK || !text[0])
            continue;
        fputs(n++ ? "<li>" : "<ul id=\"same-samples\"><li>", f);
        html_text(f, text);
        fputs("</li>\n", f);
    }
    if (n)
        fputs("</ul>\n<p>The pooled verdicts above count each set of runs with the "
              "same samples once.</p>\n", f);
}

/* The answer first: which impact law the data support, for the whole
 * experiment, per prism and per run (docs/validation.md, "The verdict"). */
static void html_verdict(FILE *f, const run_set *s, const char *exp)
{
    pl_verdict all;
    int validated = 0, withheld = 0;
    for (size_t i = 0; i < s->n; i++) {
        validated += s->r[i].has[0][0] || s->r[i].has[0][1];
        withheld += s->r[i].withheld[0] != '\0';
    }
    pooled_verdict(s, NULL, &all);
    fputs("<h2>Verdict</h2>\n", f);
    if (!validated) {
        fputs("<p class=\"synthetic\">No run of this experiment is validated yet, so there is no verdict and "
              "the tables below hold dashes.  Process and validate the runs, then write the report again:<br>"
              "<code>prismlab process --experiment ", f);
        html_text(f, exp);
        fputs(" &amp;&amp; prismlab validate --experiment ", f);
        html_text(f, exp);
        fputs("</code></p>\n", f);
        return;
    }
    fprintf(f, "<p id=\"verdict\" data-verdict=\"%s\">", pl_verdict_name(all.law));
    if (all.law == PL_VERDICT_LINE || all.law == PL_VERDICT_PLASTIC)
        fprintf(f, "<b>The data support the %s.</b>  Over the experiment's %zu blocks the %s law's L_p "
                   "residuals are smaller by a factor %.3g in rms (t = %.3g against %.3f at 95 %%).",
                all.law == PL_VERDICT_LINE ? "line-impact law (seed 000, section 3)" : "plastic (rimless-wheel) law",
                all.blocks, all.law == PL_VERDICT_LINE ? "line" : "plastic",
                all.law == PL_VERDICT_LINE ? all.rms_ratio : 1 / all.rms_ratio, all.t_stat, all.t_crit);
    else if (all.blocks == 0 && withheld)
        fputs("<b>No run gives a verdict</b>: in each run validated with both laws, neither law "
              "fits within what the run allows, or the run's data quality is not to be trusted "
              "(the rows below say which, with the figures).", f);
    else
        fputs("<b>The data do not decide between the two laws</b> at the 95 % level.", f);
    fprintf(f, "  Criterion: each run's window is cut into %d contiguous blocks; in each, the log ratio of "
               "the two laws' mean squared L_p residuals (both fitted); a t-test of the mean log ratio over the "
               "blocks pooled (per run, per prism, for the experiment).  Blocks, not samples, are the unit "
               "because the residuals are correlated along the curve.</p>\n", PL_FIT_BLOCKS);
    fputs("<table><tr><th>scope</th><th>law supported</th><th>rms plastic / rms line</th><th>t</th>"
          "<th>t needed</th><th>blocks</th></tr>\n", f);
    verdict_row(f, "experiment", &all, NULL);
    for (size_t i = 0; i < s->n; i++) {
        int first = 1;
        for (size_t j = 0; j < i; j++)
            first &= strcmp(s->r[j].info.prism, s->r[i].info.prism) != 0;
        if (!first || !s->r[i].info.prism[0])
            continue;
        char scope[PL_NAME_SIZE + 16];
        pl_verdict v;
        pooled_verdict(s, s->r[i].info.prism, &v);
        snprintf(scope, sizeof scope, "prism %s", s->r[i].info.prism);
        verdict_row(f, scope, &v, NULL);
    }
    for (size_t i = 0; i < s->n; i++) {
        char scope[PL_NAME_SIZE + 40];
        snprintf(scope, sizeof scope, "run %lld (%s)", s->r[i].info.id,
                 s->r[i].info.prism[0] ? s->r[i].info.prism : "no prism");
        verdict_row(f, scope, &s->r[i].verdict, s->r[i].withheld);
    }
    fputs("</table>\n", f);
    html_same_samples(f, s);
}

/* One warning of the processing, as an item of the runs table's list. */
static int html_warning(void *ctx, const char *line, size_t len)
{
    FILE *f = ctx;
    char words[2048];
    snprintf(words, sizeof words, "%.*s", (int)len, line);
    fputs("<li>", f);
    html_text(f, words);
    fputs("</li>", f);
    return 0;
}

/* One fault, in words, as an item of the runs table's list. */
static int html_fault(void *ctx, const pl_fault *fault, const char *line, size_t len)
{
    char words[2048];
    if (!fault)
        return html_warning(ctx, line, len);
    pl_fault_describe(fault, words, sizeof words);
    return html_warning(ctx, words, strlen(words));
}

/* The quality cell: the record's word and its faults as a short list
 * (docs/data-model.md, "Data quality"). */
static void html_quality(FILE *f, const run_data *r)
{
    const pl_quality *q = &r->quality;
    if (!r->has_quality) {
        fputs("&ndash;", f);
        return;
    }
    if (!q->quality[0]) {
        fputs("<span title=\"processed before prismlab recorded data quality\">"
              "not assessed</span>", f);
        return;
    }
    fputs(strcmp(q->quality, "good") == 0 ? "" : "<b>", f);
    html_text(f, q->quality);
    fputs(strcmp(q->quality, "good") == 0 ? "" : "</b>", f);
    if (q->faults[0]) {
        fputs("<ul class=\"faults\">", f);
        pl_faults_each(q->faults, html_fault, f);
        fputs("</ul>", f);
    }
}

/* The table of runs: where each came from, its prism and ramp, the beam
 * heights, the valid window, the data quality (a degraded, suspect or
 * refused run's row marked) and the processing's warnings. */
static void html_runs(FILE *f, const run_set *s)
{
    fputs("<h2>Runs</h2>\n<table><tr><th>run</th><th>source</th><th>prism</th><th>N</th><th>material</th>"
          "<th>ramp</th><th>h1 / h2 (mm)</th><th>window (s)</th><th>impacts</th><th>data quality</th>"
          "<th>processing warnings (besides the faults)</th></tr>\n", f);
    for (size_t i = 0; i < s->n; i++) {
        const run_data *r = &s->r[i];
        const char *q = r->has_quality ? r->quality.quality : "";
        fprintf(f, "<tr%s><td>%lld</td><td class=\"l\">",
                strcmp(q, "degraded") == 0  ? " class=\"degraded\""
                : strcmp(q, "suspect") == 0 ? " class=\"suspect\""
                : strcmp(q, "refused") == 0 ? " class=\"refused\""
                                            : "", r->info.id);
        html_text(f, r->info.source_kind);
        fputc(' ', f);
        html_text(f, r->info.source_detail);
        if (r->info.synthetic)
            fputs(" <b>SYNTHETIC</b>", f);
        fputs("</td><td class=\"l\">", f);
        html_text(f, r->prism.name);
        fprintf(f, "</td><td>%d</td><td class=\"l\">", r->prism.n_edges);
        html_text(f, r->prism.material);
        fputs("</td><td class=\"l\">", f);
        html_text(f, r->info.ramp);
        html_cell(f, "%.1f", 2, (const double[]){1e3 * r->h[0], 1e3 * r->h[1]});
        if (r->processed)
            fprintf(f, "</td><td>%.3f &ndash; %.3f</td><td>%lld</td><td class=\"l\">",
                    r->proc.release_t_s, r->proc.end_t_s, r->proc.n_impacts);
        else
            fprintf(f, "</td><td>%s</td><td></td><td class=\"l\">",
                    strcmp(q, "refused") == 0 ? "refused" : "not processed");
        html_quality(f, r);
        fputs("</td><td class=\"l\">", f);
        /* each finding once: the warnings a fault of the quality cell
         * already says are left out */
        const char *faults = r->has_quality ? r->quality.faults : NULL;
        if (r->processed && pl_warnings_count(r->proc.warnings, faults)) {
            fputs("<ul class=\"faults\">", f);
            pl_warnings_each(r->proc.warnings, faults, html_warning, f);
            fputs("</ul>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The half width of a stored lambda0's 95 % interval, statistical and
 * systematic together (rad; NaN when it has none). */
static double lambda0_half95(const pl_validation *v)
{
    return pl_fit_total_factor(v->lambda0_sd_rad, v->lambda0_sys_rad) *
           pl_fit_total_sd(v->lambda0_sd_rad, v->lambda0_sys_rad);
}

/* A fitted lambda0 in the words of every page (pl_lambda0_words(): +-
 * one sd, the 95 % interval beside it, or why there is none) and the
 * sd's parts; "-" without a fitted validation. */
static void lambda0_text(FILE *f, const pl_validation *v, int html)
{
    if (!v) {
        fputs(html ? "&ndash;" : "-", f);
        return;
    }
    char words[192];
    pl_lambda0_words(v, !html, words, sizeof words);
    if (html)
        html_text(f, words);
    else
        fputs(words, f);
    /* the parts: what the data say, what the inputs' stated precision adds */
    if (pl_fit_flag_of_validation(v) == PL_FIT_FLAG_NONE && isfinite(v->lambda0_sd_rad) &&
        isfinite(v->lambda0_sys_rad))
        fprintf(f, html ? " <small class=\"sd\">(parts, 1 sd: stat %.*f, sys %.*f)</small>"
                        : " (parts, 1 sd: stat %.*f, sys %.*f)",
                pl_fit_decimals(v->lambda0_sd_rad * 180 / M_PI), v->lambda0_sd_rad * 180 / M_PI,
                pl_fit_decimals(v->lambda0_sys_rad * 180 / M_PI), v->lambda0_sys_rad * 180 / M_PI);
}

/* Both laws' fitted lambda0, labelled, the law the run's verdict names
 * first (in bold on the page): the line law's alone misled where the
 * verdict is plastic. */
static void lambda0_both(FILE *f, const run_data *r, int html)
{
    int first = r->verdict.law == PL_VERDICT_PLASTIC;
    for (int k = 0; k < LAWS; k++) {
        int law = k ? !first : first;
        const pl_validation *v = r->has[law][1] ? &r->v[law][1] : NULL;
        int named = (law == 0 && r->verdict.law == PL_VERDICT_LINE) ||
                    (law == 1 && r->verdict.law == PL_VERDICT_PLASTIC);
        fputs(k ? (html ? "<br>" : "; ") : "", f);
        fputs(html && named ? "<b>" : "", f);
        fprintf(f, "%s ", law_name[law]);
        lambda0_text(f, v, html);
        fputs(html && named ? "</b>" : "", f);
    }
}

/* One run's row of the results: lambda0 recorded and fitted, the errors
 * of both laws, the end figures and the paper's own error. */
static void html_result_row(FILE *f, const run_data *r)
{
    const pl_validation *lr = r->has[0][0] ? &r->v[0][0] : NULL;
    const pl_validation *lf = r->has[0][1] ? &r->v[0][1] : NULL;
    const pl_validation *pf = best_val(r, 1), *l = best_val(r, 0);
    fprintf(f, "<tr><td>%lld</td><td>%d</td><td class=\"l\">", r->info.id, r->prism.n_edges);
    html_text(f, r->prism.material);
    html_cell(f, "%.4f", 1, (const double[]){r->info.lambda0_rad * 180 / M_PI});
    fputs("</td><td class=\"l\">", f);
    lambda0_both(f, r, 1);
    const pl_validation *errs[3] = {lr, lf, pf};
    for (int i = 0; i < 3; i++) {
        fputs("</td><td>", f);
        pct(f, errs[i] ? errs[i]->max_rel_err_lp : NAN);
    }
    html_cell(f, "%.3g", 2, (const double[]){l ? l->rms_err_lp : NAN, pf ? pf->rms_err_lp : NAN});
    html_cell(f, "%.2f", 2, (const double[]){l ? l->lp_end_meas : NAN, l ? l->lp_end_sim : NAN});
    html_cell(f, "%.3f", 2, (const double[]){l ? l->omega_last_meas : NAN,
                                             l ? l->omega_last_sim : NAN});
    /* the measured mean with its standard error, to the digits that
     * tell it from the line law's (they differ by 1e-6 on the fixtures) */
    html_cell(f, "%.6f", 1, (const double[]){r->processed ? r->proc.ratio_mean : NAN});
    if (r->processed && isfinite(r->proc.ratio_mean_se))
        fprintf(f, " &plusmn; %.1e (1 sd)", r->proc.ratio_mean_se);
    fputs(" / ", f);
    num(f, "%.6f", l ? l->ratio_pred : NAN);
    fputs(" / ", f);
    num(f, "%.6f", pf ? pf->ratio_pred : NAN);
    fprintf(f, "</td><td>%lld / %lld</td><td class=\"l\">%s</td><td>",
            l ? l->n_impacts_meas : 0, l ? l->n_impacts_sim : 0,
            l ? (strcmp(l->status, "slip") && strcmp(l->status, "detached") ? "yes" : l->status) : "&ndash;");
    double pe = paper_error(r->info.ramp, r->prism.n_edges);
    if (isfinite(pe))
        fprintf(f, "%.3g</td></tr>\n", pe);
    else
        fputs("&ndash;</td></tr>\n", f);
}

static void html_results(FILE *f, const run_set *s)
{
    fprintf(f, "<h2>Results per prism</h2>\n<p>Max rel. err.: max |L_sim - L_exp| / L_exp where L_exp &ge; 1, "
          "in %%; RMS in impacts.  <i>recorded</i>: lambda0 as the operator recorded it, release as detected; "
          "<i>fitted</i>: lambda0, the release instant and the ramp's inclination (within 3 sd of the catalogue's; "
          "validate's default, unless --fit named fewer) fitted to L_p, "
          "with a constant error of the measured L_p's level (the integral before the first impact), which the "
          "figures here leave in; "
          "&plusmn; is one standard deviation of the total, statistical and systematic, as everywhere in "
          "prismlab; its 95 %% interval and its two parts follow it.  <i>stat</i>: a delete-a-block jackknife over %d contiguous "
          "blocks of the window and the least-squares error inflated for AR(1)-correlated residuals, in "
          "quadrature (the L_p residuals are correlated along the curve: the plain least-squares error is far "
          "too small); <i>sys</i>: the fitted value's response to the inputs stated with finite precision - "
          "the local g against the model's standard gravity (0.015 m/s&sup2; unless stated), the ramp's "
          "inclination where it was not fitted (its catalogue uncertainty), the model's integration step - in "
          "quadrature.  The interval is the total times Student's t with the Welch-Satterthwaite degrees of "
          "freedom (%d for the statistical part alone: %.3f; 1.96 as the systematic part dominates); "
          "docs/validation.md says how its coverage was measured.  <i>omega+/omega- meas.</i>: the "
          "impacts' ratios averaged with weights 1/s.e.&sup2;, &plusmn; the mean's standard error from their "
          "scatter about it (or the run's energy line's, where larger); each impact's own s.e. comes from its "
          "arcs' tops, scaled to the run's noise, and <code>prismlab export RUN --series impacts</code> lists "
          "it beside each instant's standard deviation (the instant is the decoded step's centre unless the "
          "LDV decoder's delay was given: the run page says which).</p>\n"
          "<table><tr><th>run</th><th>N</th><th>material</th><th>lambda0 recorded (deg)</th><th>lambda0 fitted (deg), each law "
          "(bold: the law the run's verdict names)</th>"
          "<th>max rel. err. line, recorded</th><th>max rel. err. line, fitted</th><th>max rel. err. plastic, fitted</th>"
          "<th>RMS line / plastic</th><th>L_p end meas. / line</th><th>omega last s meas. / line (rad/s)</th>"
          "<th>omega+/omega- meas. <th>omega+/omega- meas. &plusmn; s.e. / line / plastic</th>plusmn; 1 sd of the mean / line / plastic</th><th>impacts meas. / line</th><th>pure rotation (2.2)</th>"
          "<th>paper's max rel. err.</th></tr>\n", PL_FIT_BLOCKS, PL_FIT_BLOCKS - 1,
            pl_fit_interval_factor());
    for (size_t i = 0; i < s->n; i++)
        html_result_row(f, &s->r[i]);
    fputs("</table>\n", f);
}

/* Where the paper gives numbers for a figure (figs. 6-9 of seed 000:
 * the release angles simulated, the maximum relative errors, the beam
 * heights of fig. 7), ours beside them. */
static void html_paper(FILE *f, const run_set *s)
{
    int any = 0;
    for (size_t i = 0; i < s->n; i++)
        any |= paper_figure(&s->r[i]) != 0;
    if (!any)
        return;
    fputs("<h2>The paper's numbers beside ours</h2>\n<p>Seed 000 gives numbers for figs. 6-9 in their "
          "captions: the release angles its simulations used (figs. 6, 8), the maximum relative error "
          "of L_p (figs. 8, 9) and the beam heights (fig. 7).  Ours: lambda0 fitted with its 95 % "
          "interval, the line law's maximum relative error as fitted and as recorded.</p>\n"
          "<table><tr><th>paper fig.</th><th>run</th><th>N</th><th>lambda0 paper (deg)</th>"
          "<th>lambda0 ours (deg)</th><th>max rel. err. paper (%)</th><th>ours, fitted (%)</th>"
          "<th>ours, recorded (%)</th><th>h1 / h2 paper (mm)</th><th>h1 / h2 ours (mm)</th></tr>\n", f);
    for (size_t i = 0; i < s->n; i++) {
        const run_data *r = &s->r[i];
        int fig = paper_figure(r);
        if (!fig)
            continue;
        const pl_validation *lf = r->has[0][1] ? &r->v[0][1] : NULL;
        const pl_validation *lr = r->has[0][0] ? &r->v[0][0] : NULL;
        fprintf(f, "<tr><td>%d</td><td>%lld</td><td>%d</td><td>", fig, r->info.id, r->prism.n_edges);
        num(f, "%.4f", paper_lambda0(fig, r->prism.n_edges));
        fputs("</td><td>", f);
        lambda0_text(f, lf, 1);
        fputs("</td><td>", f);
        num(f, "%.3g", fig == 8 || fig == 9 ? paper_error(r->info.ramp, r->prism.n_edges) : NAN);
        fputs("</td><td>", f);
        pct(f, lf ? lf->max_rel_err_lp : NAN);
        fputs("</td><td>", f);
        pct(f, lr ? lr->max_rel_err_lp : NAN);
        fputs(fig == 7 ? "</td><td>22.3 / 11.9" : "</td><td>&ndash;", f);
        html_cell(f, "%.1f", 2, (const double[]){1e3 * r->h[0], 1e3 * r->h[1]});
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The figures written into dir with their captions, the other files,
 * and the check the browser test reads. */
static void html_figures(FILE *f, const char *dir, int figures)
{
    static const struct { const char *file, *cap; } figs[] = {
        {"lp.svg", "Line-impact count L_p(t) = N theta / 2 pi (4.2) measured (solid) and simulated with the "
                   "line-impact law (dashed) and the plastic law (dotted), each fitted where the run was "
                   "validated with a fit, else as recorded; one colour and one legend entry a run; time from "
                   "the detected release; cf. seed 000 figs. 8 and 9."},
        {"lp_error.svg", "Difference of simulated and measured L_p over the valid window (line law, fitted "
                         "release); the maximum relative error in the table is taken from this curve where L_exp &ge; 1."},
        {"omega.svg", "Rotary speed omega(t) = (v_p1 - v_p2)/(h1 - h2) (4.1), measured (solid, low-passed) and "
                      "simulated with the line-impact law (dashed) and the plastic law (dotted); cf. seed 000 fig. 6."},
        {"vp.svg", "Gauge-point velocities v_p1, v_p2 (4.3) of the first prism, measured (solid) and simulated "
                   "with the line-impact law (dashed), with a zoom on impacts mid-run (every cusp is one line "
                   "impact); cf. seed 000 fig. 5 and its inset."},
        {"ratio.svg", "omega+/omega- per prism: the measured mean of every detected impact (points), its bar the "
                      "standard deviation of the single impacts (bars: 1 sd), against the line-impact law's and the "
                      "plastic law's predictions (points of their own colours)."},
    };
    fputs("<h2>Figures</h2>\n", f);
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char fp[1300];
        snprintf(fp, sizeof fp, "%s/%s", dir, figs[i].file);
        struct stat sb;
        if (stat(fp, &sb) != 0)
            continue;
        int stem = (int)(strlen(figs[i].file) - 4);
        fprintf(f, "<figure><img src=\"%s\" alt=\"%s\"><figcaption>%s  (<a href=\"%.*s.pdf\">PDF</a>, "
                   "<a href=\"%.*s.png\">PNG</a>)</figcaption></figure>\n",
                figs[i].file, figs[i].file, figs[i].cap, stem, figs[i].file, stem, figs[i].file);
    }
    fprintf(f, "<p>Files: <a href=\"metrics.csv\">metrics.csv</a>, <a href=\"summary.md\">summary.md</a>; "
               "%d figures, each also as PDF and PNG (same name, .pdf and .png).</p>\n", figures);
}

/* Each run's impacts: the figure fig_run_ratio() drew, its caption
 * saying what the points, the bars and the lines are, with the numbers
 * (the measured mean with its standard error, each law's ratio). */
static void html_run_ratios(FILE *f, const run_set *s, const char *dir)
{
    int any = 0;
    for (size_t i = 0; i < s->n; i++) {
        const run_data *r = &s->r[i];
        char file[64], fp[1300];
        snprintf(file, sizeof file, "ratio_run%lld.svg", r->info.id);
        snprintf(fp, sizeof fp, "%s/%s", dir, file);
        struct stat sb;
        if (stat(fp, &sb) != 0)
            continue;
        if (!any++)
            fputs("<h2>Each run's impacts</h2>\n<p>The run's central measurement: the ratio "
                  "omega+/omega- of each impact, against the speed it met the ramp with, beside what "
                  "each law predicts for the prism (neither depends on the speed).</p>\n", f);
        size_t step = run_ratio_step(r);
        fprintf(f, "<figure id=\"ratio-run%lld\"><img src=\"%s\" alt=\"%s\"><figcaption>Run %lld "
                   "(N=%d ", r->info.id, file, file, r->info.id, r->prism.n_edges);
        html_text(f, r->prism.material);
        fprintf(f, "): omega+/omega- of each of its %zu impacts (points", r->n_imp);
        if (step > 1)
            fprintf(f, "; every %zu-th drawn", step);
        fputs(") against omega- just before it; each bar &plusmn;1 standard error of that impact's ratio "
              "(bars: 1 sd, from its tops' fits scaled to the run's noise); the line-impact law's ratio "
              "(dashed, ", f);
        num(f, "%.5f", r->law_ratio[0]);
        fputs(") and the plastic law's (dotted, ", f);
        num(f, "%.5f", r->law_ratio[1]);
        fputs(") across.  Measured mean ", f);
        num(f, "%.5f", r->proc.ratio_mean);
        if (isfinite(r->proc.ratio_mean_se))
            fprintf(f, " &plusmn; %.1e (1 sd of the mean)", r->proc.ratio_mean_se);
        fprintf(f, ".  (<a href=\"ratio_run%lld.pdf\">PDF</a>, <a href=\"ratio_run%lld.png\">PNG</a>)"
                   "</figcaption></figure>\n", r->info.id, r->info.id);
    }
}

/* The page's end, with the check the browser test reads. */
static void html_end(FILE *f)
{
    /* For the browser test: after loading, say whether every image
     * rendered (naturalWidth > 0). */
    fputs("<p id=\"check\" data-images=\"pending\"></p>\n<script>\nwindow.addEventListener('load', function () {\n"
          "  var imgs = document.images, ok = 0;\n"
          "  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;\n"
          "  var c = document.getElementById('check');\n"
          "  c.setAttribute('data-images', ok + '/' + imgs.length);\n"
          "});\n</script>\n</body></html>\n", f);
}

static pl_status write_html(const run_set *s, const char *exp, const char *dir,
                            int figures, pl_err *err)
{
    char path[1200], now[32];
    snprintf(path, sizeof path, "%s/index.html", dir);
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, err) != PL_OK)
        return err->code;
    FILE *f = pl_atomicfile_stream(af);
    pl_store_utc_now(now);
    int synthetic = 0;
    for (size_t i = 0; i < s->n; i++)
        synthetic |= s->r[i].info.synthetic;
    html_head(f, exp, now, synthetic);
    html_verdict(f, s, exp);
    html_runs(f, s);
    html_results(f, s);
    html_run_ratios(f, s, dir);
    html_figures(f, dir, figures);
    html_paper(f, s);
    html_end(f);
    return pl_atomicfile_commit(af, err);
}

/* The run's quality word for metrics.csv and summary.md: good, degraded,
 * suspect or refused; "" when it has no record (neither processed nor refused)
 * or was processed before prismlab recorded data quality. */
static const char *quality_word(const run_data *r)
{
    return r->has_quality ? r->quality.quality : "";
}

/* The kinds of a run's faults, each once (two channels' drop-outs are
 * one kind), and a refusal's reason: the short list of summary.md (the
 * words are the report's and the run page's). */
enum { KINDS_MAX = 16 };

typedef struct {
    char kind[KINDS_MAX][PL_FAULT_NAME_MAX];
    int n;
    char reason[PL_FAULT_TEXT_MAX];
} fault_kinds;

static int add_kind(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    fault_kinds *k = ctx;
    char kind[PL_FAULT_NAME_MAX];
    size_t w = strcspn(line, " ");
    if (f)
        snprintf(kind, sizeof kind, "%s", f->kind);
    else   /* a line that does not parse: its first word, as written */
        snprintf(kind, sizeof kind, "%.*s", (int)(w < len ? w : len), line);
    if (f && strcmp(f->kind, "refused") == 0 && pl_fault_get(f, "reason"))
        snprintf(k->reason, sizeof k->reason, "%s", pl_fault_get(f, "reason")->text);
    for (int i = 0; i < k->n; i++)
        if (strcmp(k->kind[i], kind) == 0)
            return 0;
    if (k->n < KINDS_MAX)
        memcpy(k->kind[k->n++], kind, sizeof kind);
    return 0;
}

/* Markdown table text: a '|' would end the cell. */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

/* summary.md's quality cells: the word, and the faults as their kinds
 * ("beam_lost, dropouts"; a refusal its reason). */
static void md_quality(FILE *m, const run_data *r)
{
    fault_kinds k = {.n = 0};
    fprintf(m, " %s | ", quality_word(r));
    if (r->has_quality)
        pl_faults_each(r->quality.faults, add_kind, &k);
    for (int i = 0; i < k.n; i++) {
        fputs(i ? ", " : "", m);
        if (strcmp(k.kind[i], "refused") == 0 && k.reason[0])
            md_text(m, k.reason);
        else
            md_text(m, k.kind[i]);
    }
    fputs(k.n ? " |\n" : "|\n", m);
}

/* The run's rows of metrics.csv, one per law and fit validated; the
 * quality word last, so that readers of the older columns keep working. */
static void csv_rows(FILE *c, const run_data *r)
{
    for (int law = 0; law < LAWS; law++)
        for (int fit = 0; fit < FITS; fit++) {
            if (!r->has[law][fit])
                continue;
            const pl_validation *v = &r->v[law][fit];
            fprintf(c, "%lld,%d,%s,%d,%s,%s,%s,%s,%.6f,%.6g,%.6f,%.6f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
                       "%.6g,%.6g,%lld,%lld,%s,%.6g,%.9f,%.9f,%s,%s,%.6g,%.6g\n",
                    r->info.id, r->info.synthetic, r->prism.name, r->prism.n_edges,
                    r->prism.material, r->info.ramp, law_name[law], fit_name[fit],
                    v->lambda0_rad * 180 / M_PI, v->lambda0_sd_rad * 180 / M_PI, v->t0_s,
                    v->beta_rad * 180 / M_PI, v->max_rel_err_lp, v->rms_err_lp,
                    v->lp_end_meas, v->lp_end_sim, v->omega_last_meas, v->omega_last_sim,
                    v->ratio_meas, v->ratio_pred, v->n_impacts_meas, v->n_impacts_sim,
                    v->status, v->fit_residual,
                    (v->lambda0_rad - lambda0_half95(v)) * 180 / M_PI,
                    (v->lambda0_rad + lambda0_half95(v)) * 180 / M_PI,
                    pl_verdict_name(r->verdict.law), quality_word(r),
                    v->lambda0_sys_rad * 180 / M_PI,
                    pl_fit_total_sd(v->lambda0_sd_rad, v->lambda0_sys_rad) * 180 / M_PI);
        }
}

static pl_status write_tables(const run_set *s, const char *exp, const char *dir,
                              pl_err *err)
{
    char path[1200];
    pl_atomicfile *cf = NULL, *mf = NULL;
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    if (pl_atomicfile_open(&cf, path, err) == PL_OK) {
        snprintf(path, sizeof path, "%s/summary.md", dir);
        pl_atomicfile_open(&mf, path, err);
    }
    if (!mf) {
        pl_atomicfile_abort(cf);
        return err->code;
    }
    FILE *c = pl_atomicfile_stream(cf), *m = pl_atomicfile_stream(mf);
    fputs("run,synthetic,prism,N,material,ramp,law,fit,lambda0_deg,lambda0_sd_deg,t0_s,beta_deg,"
          "max_rel_err_lp,rms_err_lp,lp_end_meas,lp_end_sim,omega_last_meas,omega_last_sim,"
          "ratio_meas,ratio_pred,n_impacts_meas,n_impacts_sim,status,fit_residual,"
          "lambda0_lo95_deg,lambda0_hi95_deg,verdict,quality,lambda0_sys_deg,lambda0_total_sd_deg\n", c);
    fprintf(m, "# Validation: %s\n\nprismlab %s.  Max relative error of L_p in %%, line law unless "
               "stated.%s  Verdict: the law the run's L_p supports (docs/validation.md, \"The verdict\"); "
               "lambda0 with its 95 %% interval, the verdict's law first.\n\n"
               "| run | N | material | verdict | lambda0 fitted (deg) | max rel err line fitted | "
               "max rel err plastic fitted | L_p end meas/sim | status | quality | faults |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n",
            exp, pl_version(), s->n && s->r[0].info.synthetic ? "  **SYNTHETIC runs (rig simulator).**" : "");
    for (size_t i = 0; i < s->n; i++) {
        const run_data *r = &s->r[i];
        csv_rows(c, r);
        const pl_validation *lf = r->has[0][1] ? &r->v[0][1] : NULL;
        const pl_validation *pf = r->has[1][1] ? &r->v[1][1] : NULL;
        fprintf(m, "| %lld | %d | %s | %s | ", r->info.id, r->prism.n_edges, r->prism.material,
                pl_verdict_name(r->verdict.law));
        lambda0_both(m, r, 0);
        fprintf(m, " | %.3f | %.3f | %.2f / %.2f | %s |",
                lf ? 100 * lf->max_rel_err_lp : NAN, pf ? 100 * pf->max_rel_err_lp : NAN,
                lf ? lf->lp_end_meas : NAN, lf ? lf->lp_end_sim : NAN, lf ? lf->status : "-");
        md_quality(m, r);
    }
    fputs("\nFigures: lp.svg, lp_error.svg, omega.svg, vp.svg, ratio.svg; open index.html.\n", m);
    if (pl_atomicfile_commit(cf, err) != PL_OK) {
        pl_atomicfile_abort(mf);
        return err->code;
    }
    return pl_atomicfile_commit(mf, err);
}

pl_status pl_report_write(pl_store *store, const char *experiment,
                          const char *dir, pl_report_stats *stats,
                          pl_err *err)
{
    return pl_report_write_jobs(store, experiment, dir, 1, stats, err);
}

pl_status pl_report_write_jobs(pl_store *store, const char *experiment,
                               const char *dir, int jobs, pl_report_stats *stats,
                               pl_err *err)
{
    pl_experiment e;
    if (pl_experiment_get(store, experiment, &e, err) != PL_OK)
        return err->code;
    run_set s = {.store = store};
    if (pl_run_list(store, experiment, collect, &s, err) != PL_OK) {
        free(s.r);
        return err->code;
    }
    if (s.n == 0) {
        free(s.r);
        return pl_err_set(err, PL_ENOTFOUND, "experiment '%s' has no runs", experiment);
    }
    if (pl_mkdirs(dir, err) != PL_OK) {
        free(s.r);
        return err->code;
    }
    pl_status st = PL_OK;
    pl_report_stats rs = {0};
    for (size_t i = 0; i < s.n && st == PL_OK; i++) {
        run_data *r = &s.r[i];
        pl_err ignore = {0};
        pl_prism_init(&r->prism);
        if (r->info.prism[0])
            pl_prism_get(store, r->info.prism, &r->prism, &ignore);
        r->processed = pl_derived_get(store, r->info.id, &r->proc, &ignore) == PL_OK;
        r->has_quality = pl_quality_get(store, r->info.id, &r->quality, &ignore) == PL_OK;
        r->h[0] = r->h[1] = NAN;
        {
            pl_channel ch[64];
            if (pl_run_channels(store, r->info.id, ch, 64, &ignore) == PL_OK)
                for (int c = 0; c < 2 && c < r->info.n_channels; c++)
                    r->h[c] = ch[c].beam_height_m;
        }
        for (int law = 0; law < LAWS; law++)
            for (int fit = 0; fit < FITS; fit++)
                r->has[law][fit] = pl_validation_get(store, r->info.id, law_name[law],
                                                     fit_name[fit], &r->v[law][fit],
                                                     &ignore) == PL_OK;
    }
    qsort(s.r, s.n, sizeof s.r[0], by_edges);
    for (size_t i = 0; i < s.n && st == PL_OK; i++) {
        run_data *r = &s.r[i];
        pl_err ignore = {0};
        if (r->processed)
            st = load_series(store, r, err);
        /* a run processed before its impacts were stored has none to draw */
        if (st == PL_OK && r->processed)
            pl_derived_impacts(store, r->info.id, &r->imp, &r->n_imp, &ignore);
        if (st == PL_OK)
            st = pl_law_ratios(store, r->info.id, r->law_ratio, err);
        rs.validated += s.r[i].has[0][1];
    }
    rs.runs = (int)s.n;
    if (st == PL_OK)
        st = figures(&s, dir, jobs, &rs.figures, err);
    if (st == PL_OK)
        st = write_tables(&s, experiment, dir, err);
    if (st == PL_OK)
        st = write_html(&s, experiment, dir, rs.figures, err);
    for (size_t i = 0; i < s.n; i++)
        free_run(&s.r[i]);
    free(s.r);
    if (st == PL_OK && stats)
        *stats = rs;
    return st;
}
