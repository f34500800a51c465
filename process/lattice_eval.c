/* process/lattice_eval.c - the impacts at the slots' smoothed angles:
 * instants, speeds either side, ratios and their errors
 * (lattice_eval.h). */
#include "process/lattice_eval.h"

#include "process/lattice_arcs.h"

#include <math.h>
#include <stdlib.h>

/* The ratio of impact i from the tops either side (pl_lat_top_shift()): energy
 * along each contact phase (2.1) takes omega^2 from the top before to the
 * landing, omega^2 = low + A, and from the landing to the top after,
 * low' + B, so omega- and omega+ need no instant at all: neither the
 * decoder's rounding, nor a ringing inside the gap, nor the x^4 of the
 * arcs moves them.  Each interval's tops come from all its samples. */
static int tops_ratio(const tops *tp, size_t i, pl_impact *m)
{
    if (i == 0 || !tp->top || !isfinite(tp->A) || isnan(tp->top[i - 1]) || isnan(tp->top[i]))
        return 0;
    double wm2 = tp->low[i - 1] + tp->A, wp2 = tp->low[i] + tp->B;
    if (!(wm2 > 0) || !(wp2 > 0) || !isfinite(tp->low_var[i - 1]) ||
        !isfinite(tp->low_var[i]))
        return 0;
    m->omega_minus = sqrt(wm2);
    m->omega_plus = sqrt(wp2);
    m->ratio = m->omega_plus / m->omega_minus;
    m->ratio_se = 0.5 * m->ratio *
                  sqrt(tp->low_var[i] / (wp2 * wp2) + tp->low_var[i - 1] / (wm2 * wm2));
    return 1;
}

/* The impact of slot i at its smoothed angle: the arcs there, the ratio
 * and its standard error (the arcs' own and the instant's share through
 * the kink). */
static int evaluate(const walk *wk, const slot *s, double th, double var_th,
                    double interval, const tops *tp, size_t i, pl_impact *m)
{
    double from = s->tc - interval;
    double tc = pl_lat_time_of_theta(wk, th, from > 0 ? (size_t)from : 0, 1);
    if (isnan(tc))
        return -1;
    m->confirmed = s->confirmed;
    m->interval_s = NAN;
    if (tops_ratio(tp, i, m)) {
        /* the time's variance through the mean speed of the tops' arcs */
        double om = 0.5 * (m->omega_minus + m->omega_plus);   /* rad/s */
        m->t_s = tc / wk->rate;
        m->t_sd_s = sqrt(var_th / (om * om));
        return 0;
    }
    step_fit f;
    arcs J;
    size_t W = pl_lat_arc_window(wk, interval), c = (size_t)llround(tc);
    if (pl_lat_fit_arcs_at(wk, c, W, NULL, &J) != 0)
        return -1;
    pl_lat_arcs_eval(&J, wk->G, tc - (double)c, &f);
    double wm = f.wm, wp = f.wp;
    /* omega in rad per sample: var_tc in samples^2, as dr_du wants */
    double om = fabs(0.5 * (wm + wp)) > 0 ? 0.5 * (wm + wp) / wk->rate : 1e-12;
    double var_tc = var_th / (om * om);
    m->t_s = tc / wk->rate;
    m->t_sd_s = sqrt(var_tc) / wk->rate;
    m->omega_minus = wm;
    m->omega_plus = wp;
    m->ratio = wp / wm;
    double dr_du = (f.slope_p - m->ratio * f.slope_m) / wm;
    m->ratio_se = sqrt((f.var_wp + m->ratio * m->ratio * f.var_wm) / (wm * wm) +
                       dr_du * dr_du * var_tc);
    return 0;
}

/* The impacts of the smoothed slots, and the figures of the walk. */
typedef struct {
    const slot *v;
    size_t m;
    const double *ths, *vars;
    const tops *tp;
    pl_impact *imp;     /* imp[i] for slot i */
    char *ok;
} collect_ctx;

static void evaluate_range(walk *wk, size_t a, size_t b, void *p)
{
    const collect_ctx *x = p;
    const slot *v = x->v;
    size_t m = x->m;
    for (size_t i = a; i < b; i++) {
        double prev = i > 0 ? v[i].tc - v[i - 1].tc : (i + 1 < m ? v[i + 1].tc - v[i].tc : wk->W);
        double next = i + 1 < m ? v[i + 1].tc - v[i].tc : prev;
        x->ok[i] = evaluate(wk, &v[i], x->ths[i], x->vars[i], fmin(prev, next), x->tp, i,
                            &x->imp[i]) == 0;
    }
}

size_t pl_lat_collect(const walk *wk, const slot *v, size_t m, const double *ths,
                      const double *vars, const slot *seed, const tops *tp, pl_impact *imp,
                      pl_lattice_stats *st)
{
    size_t k = 0, nss = 0;
    double ss = 0, phase0 = seed->theta - (double)seed->k * wk->delta;
    char *ok = calloc(m ? m : 1, 1);
    if (!ok)
        return 0;
    collect_ctx x = {v, m, ths, vars, tp, imp, ok};
    pl_lat_for_slots(wk, m, evaluate_range, &x);
    for (size_t i = 0; i < m; i++) {
        st->confirmed += v[i].confirmed;
        st->drift_rad = fmax(st->drift_rad, fabs(ths[i] - (double)v[i].k * wk->delta - phase0));
        if (v[i].measured) {
            ss += (v[i].theta - ths[i]) * (v[i].theta - ths[i]);
            nss++;
        }
        if (ok[i])
            imp[k++] = imp[i];
    }
    free(ok);
    st->expected = m;
    st->phase_sd_rad = nss > 1 ? sqrt(ss / (double)(nss - 1)) : NAN;
    for (size_t i = 0; i + 1 < k; i++)
        imp[i].interval_s = imp[i + 1].t_s - imp[i].t_s;
    return k;
}

