/* model/prism/options.c - the prism model's command-line options. */
#include "model/prism/options.h"

#include <math.h>
#include <stddef.h>

#define DEG (M_PI / 180.0)

const pl_opt_choice pl_model_law_choices[] = {
    {"line", PL_LAW_LINE}, {"plastic", PL_LAW_PLASTIC}, {NULL, 0}};

void pl_model_options_init(pl_model_options *o)
{
    o->prism = o->ramp = NULL;
    o->N = -1;
    o->a0 = o->beta_deg = o->mu_s = o->mu = o->lambda0_deg = NAN;
    o->h1 = o->h2 = o->ramp_length = NAN;
    o->law = PL_LAW_LINE;
}

pl_status pl_model_options_check(const pl_model_options *o, pl_err *err)
{
    if ((o->prism != NULL) != (o->ramp != NULL))
        return pl_err_set(err, PL_EINVAL, "--prism and --ramp go together");
    /* Every missing option named at once, the catalogue's numbers first
     * with the way round them: one at a time took a new user a try per
     * option (issue 30). */
    const struct { int missing; const char *name; } need[] = {
        {!o->prism && o->N < 0, "--N"},
        {!o->prism && isnan(o->a0), "--a0"},
        {!o->prism && isnan(o->beta_deg), "--beta-deg"},
        {!o->prism && isnan(o->mu_s), "--mu-s"},
        {isnan(o->lambda0_deg), "--lambda0-deg"},
        {isnan(o->h1), "--h1"},
        {isnan(o->h2), "--h2"}};
    enum { CATALOGUE = 4 };   /* need[0..3]: what --prism/--ramp give */
    char list[200] = "";
    size_t used = 0;
    int n = 0;
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (i == CATALOGUE && n)
            used += (size_t)snprintf(list + used, sizeof list - used,
                                     " (or give --prism and --ramp)");
        if (need[i].missing)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     n++ ? ", " : "", need[i].name);
    }
    if (n)
        return pl_err_set(err, PL_EINVAL, "missing option%s %s",
                          n > 1 ? "s" : "", list);
    return PL_OK;
}

void pl_model_options_apply(const pl_model_options *o, pl_model_params *p)
{
    if (!o->prism)
        p->mu = NAN;
    if (o->N >= 0) p->N = (int)o->N;
    if (!isnan(o->a0)) p->a0 = o->a0;
    if (!isnan(o->beta_deg)) p->beta = o->beta_deg * DEG;
    if (!isnan(o->mu_s)) p->mu_s = o->mu_s;
    if (!isnan(o->mu)) p->mu = o->mu;
    if (!isnan(o->ramp_length)) p->ramp_length = o->ramp_length;
    if (!isnan(o->lambda0_deg)) p->lambda0 = o->lambda0_deg * DEG;
    if (!isnan(o->h1)) p->h1 = o->h1;
    if (!isnan(o->h2)) p->h2 = o->h2;
    p->law = (pl_law)o->law;
}

void pl_simulate_options_init(pl_simulate_options *o)
{
    pl_model_options_init(&o->mo);
    o->duration = o->rate = o->mass = NAN;
}

pl_status pl_simulate_options_params(const pl_simulate_options *o,
                                     int catalogue_done, pl_model_params *p,
                                     pl_err *err)
{
    if (pl_model_options_check(&o->mo, err) != PL_OK)
        return err->code;
    if (o->mo.prism && !catalogue_done)
        return pl_err_set(err, PL_EINVAL, "--prism and --ramp need the catalogue: "
                          "give the numbers (--N, --a0, --beta-deg, --mu-s)");
    if (isnan(o->duration))
        return pl_err_set(err, PL_EINVAL, "missing option --duration");
    pl_model_options_apply(&o->mo, p);
    if (!isnan(o->mass))
        p->mass = o->mass;
    if (!isnan(o->rate))
        p->rate = o->rate;
    p->duration = o->duration;
    if (p->duration * p->rate > 5e7)
        return pl_err_set(err, PL_EINVAL, "--duration times --rate = %g samples: "
                          "at most 5e7", p->duration * p->rate);
    return pl_model_params_check(p, err);
}
