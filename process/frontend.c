/* process/frontend.c - the front end: the lead-in's masks, then its
 * rooms in turn (frontend_mend.c: clipped stretches, drop-outs, lost
 * beams; frontend_common.c: motion common to both beams; frontend_hum.c:
 * offsets and hum), and the combined omega.  See frontend.h and
 * docs/process.md section 1. */
#include "process/frontend.h"

#include "process/frontend_common.h"
#include "process/frontend_core.h"
#include "process/frontend_hum.h"
#include "process/frontend_mend.h"
#include "process/frontend_sat.h"

#include "process/robust.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Which of the lead-in's L samples the offset and hum fits use: all but
 * those more than 8 robust standard deviations from the median, and two
 * samples either side of them.  A speckle spike (a few samples of -4.9 V
 * on one fixture) would otherwise move the least-squares offset by
 * 5e-5 m/s and pull the mains frequency off 50 Hz; the hum itself stays
 * within 1.5 robust deviations of the median.  NULL when out of memory;
 * *level receives the median. */
static unsigned char *lead_mask(const double *v, size_t L, double *level)
{
    unsigned char *use = malloc(L ? L : 1);
    double *t = malloc((L ? L : 1) * sizeof *t);
    if (!use || !t) {
        free(use);
        free(t);
        return NULL;
    }
    memcpy(t, v, L * sizeof *t);
    /* (pl_median() only reorders t: the spread needs no fresh copy) */
    double med = pl_median(t, L), sd = pl_robust_sd(t, L);
    free(t);
    *level = med;
    memset(use, 1, L);
    if (!(sd > 0))
        return use;
    for (size_t i = 0; i < L; i++)
        if (fabs(v[i] - med) > 8 * sd)
            for (size_t j = i > 2 ? i - 2 : 0; j < L && j <= i + 2; j++)
                use[j] = 0;
    return use;
}

pl_status pl_frontend_run(double *v[2], size_t n, double rate, const double h[2],
                          size_t lead, size_t from, double *omega_c, int threads,
                          pl_frontend_report *rep, pl_err *err)
{
    return pl_frontend_run_spliced(v, n, rate, h, lead, from, NULL, omega_c, threads, rep,
                                   err);
}

pl_status pl_frontend_run_spliced(double *v[2], size_t n, double rate, const double h[2],
                                  size_t lead, size_t from, const pl_frontend_splice *splice,
                                  double *omega_c, int threads, pl_frontend_report *rep,
                                  pl_err *err)
{
    memset(rep, 0, sizeof *rep);
    rep->lost_t_s = NAN;
    rep->hum_drift_hz = rep->hum_drift_se_hz = NAN;
    rep->clip_from_s[0] = rep->clip_from_s[1] = NAN;
    rep->clip_to_s[0] = rep->clip_to_s[1] = NAN;
    rep->sat_level_mps[0] = rep->sat_level_mps[1] = NAN;
    rep->count_to = n;
    if (splice) {
        rep->count_from = splice->core_from;
        rep->count_to = splice->core_to;
    }
    if (lead > n)
        lead = n;
    unsigned char *use[2] = {NULL, NULL};
    double level[2] = {0, 0};
    for (int c = 0; lead > 0 && c < 2; c++)
        if (!(use[c] = lead_mask(v[c], lead, &level[c]))) {
            free(use[0]);
            return pl_err_set(err, PL_ENOMEM, "front end: out of memory for %zu samples",
                              lead);
        }
    /* the clipped stretches first: the hum's removal below moves the
     * samples off the rails' exact values.  Motion common to both beams
     * before the hum, whose fit over the short lead-in would take part of
     * a 23 Hz shake for 50 Hz hum and subtract that from the whole run,
     * and before the drop-outs, whose threshold it would raise; the
     * clipped samples are left out of it. */
    spans clip[2] = {{0}, {0}};
    pl_status st = PL_OK;
    if (pl_fe_clips(v, n, level, rate, threads, clip) != 0 ||
        pl_fe_saturation(v, h, n, level, rate, clip, rep) != 0)
        st = pl_err_set(err, PL_ENOMEM, "front end: out of memory for the clipped "
                        "stretches");
    else if (pl_fe_common_motion(v, h, n, from, rate, clip, rep) != 0)
        st = pl_err_set(err, PL_ENOMEM, "front end: out of memory for %zu samples", n);
    if (st != PL_OK) {
        free(use[0]);
        free(use[1]);
    } else if (pl_fe_offsets_and_hum(v, h, n, rate, lead, use, level, splice, threads,
                                     rep) != 0) {
        st = pl_err_set(err, PL_ENOMEM, "hum fit: out of memory for %zu samples", lead);
    }
    for (int c = 0; st == PL_OK && c < 2; c++) {
        rep->noise_mps[c] = lead > 16 ? pl_robust_spread(v[c], NULL, 1, 1, 0, lead, 1) : NAN;
        if (!(rep->noise_mps[c] >= 0))
            rep->noise_mps[c] = NAN;
    }
    if (st == PL_OK)
        st = pl_fe_mend(v, h, n, rate, from, clip, rep, err);
    free(clip[0].s);
    free(clip[1].s);
    if (st != PL_OK)
        return st;
    /* inverse-variance weights of v_i / h_i; equal noise when unknown */
    double s0 = rep->noise_mps[0], s1 = rep->noise_mps[1];
    double w0 = h[0] * h[0], w1 = h[1] * h[1];
    if (s0 > 0 && s1 > 0) {
        w0 /= s0 * s0;
        w1 /= s1 * s1;
    }
    double sw = w0 + w1;
    w0 /= sw;
    w1 /= sw;
    w0 /= h[0];
    w1 /= h[1];
    for (size_t i = 0; i < n; i++)
        omega_c[i] = w0 * v[0][i] + w1 * v[1][i];
    return PL_OK;
}
