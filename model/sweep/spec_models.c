/* model/sweep/spec_models.c - the models a sweep runs a point of:
 * simulate (the prism), dimer (seed 002), roughplane (seed 003).  Each
 * takes the point's arguments as its command would and returns its result
 * as a JSON object, and the series asked for.  See spec.h and
 * docs/sweep.md. */
#include "model/sweep/spec_private.h"

#include "model/prism/options.h"
#include "model/prism/prism.h"
#include "model/seeds/dimer.h"
#include "model/seeds/slide.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies the row of the option called name out of a table. */
static int opt_find(const pl_opt *o, const char *name, pl_opt *row)
{
    for (; o->kind != PL_OPTK_END; o++)
        if (o->name && !strcmp(o->name, name)) {
            *row = *o;
            return 1;
        }
    return 0;
}

static void set_error(pl_sweep_out *out, pl_jbuf *res, const char *msg)
{
    out->ok = 0;
    pl_jbuf_start(res, &out->result, &out->result_cap);
    pl_jbuf_str(res, "error", msg);
}

/* The series of a model that samples n instants at equal steps of its
 * duration: n = duration x series-rate + 1, rounded.  0 when none is
 * asked; (size_t)-1, with the point's error set, when they would not fit. */
static size_t series_samples(const pl_sweep_spec *s, double duration,
                             pl_sweep_out *out, pl_jbuf *res)
{
    if (!s->nseries)
        return 0;
    double n = floor(duration * s->series_rate + 0.5) + 1;
    if (!(n <= 1e6)) {
        char msg[160];
        snprintf(msg, sizeof msg, "series: %.6g samples a series (duration x series-rate) "
                 "exceed 1e6", n);
        set_error(out, res, msg);
        return (size_t)-1;
    }
    return (size_t)n;
}

/* Room for total doubles of series in out; 0 (the point's error set) when
 * there is none. */
static int series_room(pl_sweep_out *out, pl_jbuf *res, size_t total)
{
    if (total > out->series_cap) {
        double *nb = realloc(out->series, total * sizeof *nb);
        if (!nb) {
            set_error(out, res, "out of memory for the series");
            return 0;
        }
        out->series = nb;
        out->series_cap = total;
    }
    out->series_n = total;
    return 1;
}

/* Series i of the file, of n samples of size `size` bytes from base,
 * field off[k] for the model's series k, into out (room made). */
static void series_fill(const pl_sweep_spec *s, pl_sweep_out *out, const void *base,
                        size_t size, size_t n, const size_t *off)
{
    for (size_t i = 0; i < s->nseries; i++)
        for (size_t k = 0; k < n; k++) {
            double v;
            memcpy(&v, (const char *)base + k * size + off[s->series[i]], sizeof v);
            out->series[i * n + k] = v;
        }
}

/* simulate ------------------------------------------------------------------ */

static const char sim_series[] = "t,omega,theta,Lp,x,vp1,vp2";

static int sim_option(const char *name, pl_opt *row)
{
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {PL_OPT_SIMULATE(&so), PL_OPT_END()};
    if (opt_find(opts, name, row))
        return 1;
    if (strcmp(name, "beta-frac") && strcmp(name, "lambda0-frac"))
        return 0;
    *row = (pl_opt){.kind = PL_OPTK_DOUBLE, .name = name, .argh = "F"};
    return 1;
}
/* The run of the endless-ramp verdict from the run's own last impacts
 * (docs/sweep.md, the phase map): the settled pre-impact speed from
 * omega-_{k+1}^2 = r^2 omega-_k^2 + Delta, and whether its post-impact
 * energy clears the next top. */
static void sim_settle(const pl_model_params *p, double r,
                       const pl_model_result *res, double *omega_last,
                       double *omega_settle, int *rolls)
{
    size_t k = res->n_impacts < res->cap_impacts ? res->n_impacts : res->cap_impacts;
    *omega_last = k ? res->impacts[k - 1].omega_minus : NAN;
    *omega_settle = NAN;
    *rolls = -1;
    if (res->end == PL_END_STOPPED) {
        *rolls = 0;
        return;
    }
    if (res->end == PL_END_SLIP || res->end == PL_END_DETACHED || k < 2 || !(r < 1))
        return;
    double w1 = res->impacts[k - 2].omega_minus, w2 = res->impacts[k - 1].omega_minus;
    double delta = w2 * w2 - r * r * w1 * w1;
    if (!(delta > 0))
        return;
    *omega_settle = sqrt(delta / (1 - r * r));
    double alpha = M_PI / p->N, wp = r * *omega_settle;
    double e_after = pl_contact_energy(p->N, p->a0, p->mass, p->beta, -alpha, wp);
    double e_top = pl_contact_energy(p->N, p->a0, p->mass, p->beta, -p->beta, 0);
    *rolls = e_after > e_top;
}

static pl_status sim_check(int argc, char **argv, pl_err *err)
{
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {PL_OPT_SIMULATE(&so), PL_OPT_END()};
    int nargs = 0, help = 0;
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK ||
        pl_model_options_check(&so.mo, err) != PL_OK)
        return err->code;
    if (isnan(so.duration))
        return pl_err_set(err, PL_EINVAL, "missing option --duration");
    return PL_OK;
}

static void sim_run(const pl_sweep_spec *s, int argc, char **argv,
                    pl_sweep_out *out, pl_jbuf *res, pl_err *err)
{
    pl_simulate_options so;
    pl_simulate_options_init(&so);
    pl_opt opts[] = {PL_OPT_SIMULATE(&so), PL_OPT_END()};
    int nargs = 0, help = 0;
    pl_model_params p;
    pl_model_params_default(&p);
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK ||
        pl_simulate_options_params(&so, 0, &p, err) != PL_OK) {
        set_error(out, res, err->msg);
        return;
    }
    p.ramp_length = isnan(so.mo.ramp_length) ? 0 : so.mo.ramp_length;
    size_t ni = (size_t)(p.duration * 1000) + 16;   /* impacts are >= 1 ms apart */
    size_t ns = s->nseries ? (size_t)floor(p.duration * p.rate + 1e-9) + 1 : 0;
    pl_model_impact *im = malloc(ni * sizeof *im);
    double *buf = ns ? malloc(ns * s->nseries * sizeof *buf) : NULL;
    pl_model *m = NULL;
    pl_model_result r = {0};
    if (!im || (ns && !buf)) {
        set_error(out, res, "out of memory");
        goto done;
    }
    if (pl_model_create(&m, &p, err) != PL_OK) {
        set_error(out, res, err->msg);
        goto done;
    }
    double **dst[] = {&r.t, &r.omega, &r.theta, &r.lp, &r.x, &r.vp1, &r.vp2};
    for (size_t i = 0; i < s->nseries; i++)
        *dst[s->series[i]] = buf + i * ns;
    r.cap_samples = ns;
    r.impacts = im;
    r.cap_impacts = ni;
    if (pl_model_run(m, &r, err) != PL_OK) {
        set_error(out, res, err->msg);
        goto done;
    }
    double ratio = pl_model_impact_ratio(m), wl, ws;
    int rolls;
    sim_settle(&p, ratio, &r, &wl, &ws, &rolls);
    pl_jbuf_str(res, "law", p.law == PL_LAW_LINE ? "line" : "plastic");
    pl_jbuf_num(res, "ratio", ratio);
    pl_jbuf_num(res, "t_end", r.t_end);
    pl_jbuf_num(res, "x_end", r.x_end);
    pl_jbuf_num(res, "omega_end", r.omega_end);
    pl_jbuf_num(res, "Lp_end", r.lp_end);
    pl_jbuf_int(res, "impacts", (long long)r.n_impacts);
    pl_jbuf_str(res, "status", pl_model_end_name(r.end));
    pl_jbuf_num(res, "omega_last", wl);
    pl_jbuf_num(res, "omega_settle", ws);
    pl_jbuf_key(res, "rolls");
    pl_jbuf_add(res, rolls < 0 ? "null" : rolls ? "1" : "0");
    /* series: every step-th sample at the file's series rate */
    if (s->nseries) {
        size_t step = (size_t)fmax(1, floor(p.rate / s->series_rate + 0.5));
        size_t n = (r.n_samples + step - 1) / step, total = n * s->nseries;
        if (total > out->series_cap) {
            double *nb = realloc(out->series, total * sizeof *nb);
            if (!nb) {
                set_error(out, res, "out of memory for the series");
                goto done;
            }
            out->series = nb;
            out->series_cap = total;
        }
        for (size_t i = 0; i < s->nseries; i++)
            for (size_t k = 0; k < n; k++)
                out->series[i * n + k] = buf[i * ns + k * step];
        out->series_n = total;
    }
done:
    pl_model_destroy(m);
    free(im);
    free(buf);
}


/* dimer --------------------------------------------------------------------- */

/* Its CSV's columns (prismlab dimer --csv) without the units. */
static const char dimer_series[] = "t,x1,y1,x2,y2,yp,vx1,theta";
static const size_t dimer_off[] = {
    offsetof(pl_dimer_sample, t), offsetof(pl_dimer_sample, x1),
    offsetof(pl_dimer_sample, y1), offsetof(pl_dimer_sample, x2),
    offsetof(pl_dimer_sample, y2), offsetof(pl_dimer_sample, yp),
    offsetof(pl_dimer_sample, vx1), offsetof(pl_dimer_sample, theta)};

static int dimer_option(const char *name, pl_opt *row)
{
    pl_dimer_params p;
    double th = 0;
    pl_opt opts[] = {PL_OPT_DIMER_PARAMS(&p, &th), PL_OPT_END()};
    return opt_find(opts, name, row);
}

static pl_status dimer_check(int argc, char **argv, pl_err *err)
{
    pl_dimer_params p;
    pl_dimer_params_default(&p);
    double th = 0;
    pl_opt opts[] = {PL_OPT_DIMER_PARAMS(&p, &th), PL_OPT_END()};
    int nargs = 0, help = 0;
    return pl_opt_parse(opts, argc, argv, &nargs, &help, err);
}

static void dimer_run(const pl_sweep_spec *s, int argc, char **argv,
                      pl_sweep_out *out, pl_jbuf *res, pl_err *err)
{
    pl_dimer_params p;
    pl_dimer_params_default(&p);
    double th = p.theta0 * 180 / M_PI;
    pl_opt opts[] = {PL_OPT_DIMER_PARAMS(&p, &th), PL_OPT_END()};
    int nargs = 0, help = 0;
    pl_dimer_result r;
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK) {
        set_error(out, res, err->msg);
        return;
    }
    p.theta0 = th * M_PI / 180;
    /* the samples are taken from the steps, not stepped to: the run with
     * series is the run without (model/seeds/dimer.c) */
    size_t n = series_samples(s, p.duration, out, res);
    if (n == (size_t)-1)
        return;
    pl_dimer_sample *sm = n ? malloc(n * sizeof *sm) : NULL;
    if (n && !sm) {
        set_error(out, res, "out of memory for the series");
        return;
    }
    if (pl_dimer_run(&p, sm, n, &r, err) != PL_OK) {
        set_error(out, res, err->msg);
        free(sm);
        return;
    }
    if (n && series_room(out, res, n * s->nseries))
        series_fill(s, out, sm, sizeof *sm, n, dimer_off);
    free(sm);
    if (!out->ok)
        return;
    pl_jbuf_int(res, "impacts", (long long)r.impacts);
    pl_jbuf_int(res, "doubles", (long long)r.doubles);
    pl_jbuf_int(res, "sticks", (long long)r.stick_events);
    pl_jbuf_int(res, "hits1", (long long)r.hits[0]);
    pl_jbuf_int(res, "hits2", (long long)r.hits[1]);
    pl_jbuf_num(res, "hmax1_m", r.hmax[0]);
    pl_jbuf_num(res, "hmax2_m", r.hmax[1]);
    pl_jbuf_num(res, "energy", r.energy);
    pl_jbuf_num(res, "drift", r.drift);
    pl_jbuf_str(res, "mode", pl_dimer_mode_name(r.mode));
    pl_jbuf_num(res, "x1_end", r.x1_end);
}

/* roughplane ---------------------------------------------------------------- */

/* Its CSV's columns (prismlab roughplane --csv) without the units. */
static const char slide_series[] = "t,x,y,theta,vx,vy,omega";

/* One sample: the instant and the state, as the series' order. */
typedef struct {
    double t;
    pl_body_state st;
} slide_sample;

static const size_t slide_off[] = {
    offsetof(slide_sample, t), offsetof(slide_sample, st.x),
    offsetof(slide_sample, st.w), offsetof(slide_sample, st.theta),
    offsetof(slide_sample, st.vx), offsetof(slide_sample, st.vw),
    offsetof(slide_sample, st.omega)};

static int slide_option(const char *name, pl_opt *row)
{
    pl_slide sl;
    pl_slide_init(&sl);
    pl_opt opts[] = {PL_OPT_ROUGHPLANE_PARAMS(&sl), PL_OPT_END()};
    return opt_find(opts, name, row);
}

static pl_status slide_parse(pl_slide *sl, int argc, char **argv, pl_err *err)
{
    pl_slide_init(sl);
    pl_opt opts[] = {PL_OPT_ROUGHPLANE_PARAMS(sl), PL_OPT_END()};
    int nargs = 0, help = 0;
    if (pl_opt_parse(opts, argc, argv, &nargs, &help, err) != PL_OK)
        return err->code;
    return pl_slide_check(sl, err);
}

static pl_status slide_check(int argc, char **argv, pl_err *err)
{
    pl_slide sl;
    return slide_parse(&sl, argc, argv, err);
}

static void slide_run(const pl_sweep_spec *s, int argc, char **argv,
                      pl_sweep_out *out, pl_jbuf *res, pl_err *err)
{
    pl_slide sl;
    if (slide_parse(&sl, argc, argv, err) != PL_OK) {
        set_error(out, res, err->msg);
        return;
    }
    size_t n = series_samples(s, sl.dur, out, res);
    if (n == (size_t)-1)
        return;
    double *t = n ? malloc(n * sizeof *t) : NULL;
    pl_body_state *path = n ? malloc(n * sizeof *path) : NULL;
    slide_sample *sm = n ? malloc(n * sizeof *sm) : NULL;
    pl_body_end e;
    if (n && (!t || !path || !sm))
        set_error(out, res, "out of memory for the series");
    else if (pl_slide_run(&sl, n, t, path, &e, err) != PL_OK)
        set_error(out, res, err->msg);
    else if (n && series_room(out, res, n * s->nseries)) {
        for (size_t k = 0; k < n; k++)
            sm[k] = (slide_sample){t[k], path[k]};
        series_fill(s, out, sm, sizeof *sm, n, slide_off);
    }
    free(t);
    free(path);
    free(sm);
    if (!out->ok)
        return;
    /* the command's last line: t_stop=<s or inf> x y theta (inf: null) */
    pl_jbuf_num(res, "t_stop", e.t_stop);
    pl_jbuf_num(res, "x", e.end.x);
    pl_jbuf_num(res, "y", e.end.w);
    pl_jbuf_num(res, "theta", e.end.theta);
}

const model pl_sweep_models[] = {
    {"simulate", "law,ratio,t_end,x_end,omega_end,Lp_end,impacts,status,"
                 "omega_last,omega_settle,rolls", sim_series, sim_option, "",
                 sim_check, sim_run},
    {"dimer", "impacts,doubles,sticks,hits1,hits2,hmax1_m,hmax2_m,energy,drift,"
              "mode,x1_end", dimer_series, dimer_option, "", dimer_check, dimer_run},
    {"roughplane", "t_stop,x,y,theta", slide_series, slide_option, "particle",
                   slide_check, slide_run},
};

const size_t pl_sweep_n_models = sizeof pl_sweep_models / sizeof pl_sweep_models[0];
