/* model/sweep/report.h - the prism's phase map as an HTML page with PLplot
 * figures, from a stored sweep of the simulate model whose axes include
 * N, beta-frac and lambda0-frac (fixtures/sweeps/prism-phase.ini), set
 * against the closed form of the impact map (model/prism/map.h):
 *   omega_star.svg   the settled speed against N, runs and closed form,
 *   beta_c.svg       beta_c / alpha against N: closed form, and the
 *                    sweep's bracket (the largest grid beta with no start
 *                    rolling for ever, the smallest with one),
 *   map_LAW_NN.svg   per law and N, the (beta, lambda0) plane: impacts
 *                    before stopping as a heat map, runs that roll for
 *                    ever, runs that slip or detach, and the closed form's
 *                    boundaries.
 * index.html holds them and a table per law and N.  docs/sweep.md.
 */
#ifndef PL_MODEL_SWEEP_REPORT_H
#define PL_MODEL_SWEEP_REPORT_H

#include "core/error.h"
#include "db/store.h"

typedef struct {
    long long points;          /* points drawn */
    int figures;               /* SVG files written */
    double omega_worst_pct;    /* largest |omega_settle / omega* - 1|, % */
    int beta_c_n;              /* (law, N) with a start rolling for ever */
    int beta_c_ok;             /* of them, beta_c within one grid step below
                                  the first grid beta with such a start */
} pl_sweep_report_summary;

/* Writes DIR/index.html and the figures for the sweep called name.
 * PL_ENOTFOUND for no such sweep, PL_EINVAL for a sweep that is not a
 * prism phase map (another model, or no N, beta-frac, lambda0-frac axes). */
pl_status pl_sweep_report(pl_store *store, const char *name, const char *dir,
                          pl_sweep_report_summary *sum, pl_err *err);

#endif
