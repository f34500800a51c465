/* model/prism/options.h - the prism model's parameters as command-line
 * options, the same for `prismlab simulate` and `prismlab sim`: a
 * catalogued prism and ramp (--prism, --ramp) or the numbers (--N, --a0,
 * --beta-deg, --mu-s, --mu), numbers overriding the catalogue, and the
 * release and beams every run needs (--lambda0-deg, --h1, --h2).
 *
 * A command puts PL_OPT_MODEL_PARAMS() in its option table, checks with
 * pl_model_options_check(), looks the catalogue names up itself (the
 * store is not this room's business: model/validate/setup.h) and applies
 * the numbers with pl_model_options_apply().
 */
#ifndef PL_MODEL_PRISM_OPTIONS_H
#define PL_MODEL_PRISM_OPTIONS_H

#include "core/cli.h"
#include "model/prism/prism.h"

typedef struct {
    const char *prism, *ramp;   /* catalogue names; NULL when not given */
    long N;                     /* -1 when not given */
    double a0, beta_deg, mu_s, mu, lambda0_deg, h1, h2, ramp_length;
                                /* NaN when not given */
    int law;                    /* a pl_law; PL_LAW_LINE unless --law */
} pl_model_options;

/* Nothing given: names NULL, N -1, numbers NaN, the line law. */
void pl_model_options_init(pl_model_options *o);

/* The law's names for --law. */
extern const pl_opt_choice pl_model_law_choices[];

/* The option table's rows.  --lambda0-deg, --h1 and --h2 are needed, but
 * pl_model_options_check() says so, not the parser: a command may draw
 * the whole run otherwise (prismlab sim --random-chain). */
#define PL_OPT_MODEL_PARAMS(o)                                              \
    PL_OPT_STRING("prism", &(o)->prism, "NAME", "a prism of the catalogue (--db)"), \
    PL_OPT_STRING("ramp", &(o)->ramp, "NAME", "a ramp of the catalogue (--db)"), \
    PL_OPT_INT("N", &(o)->N, 3, 100000, "N", "edges (>= 3)"),              \
    PL_OPT_DOUBLE("a0", &(o)->a0, 1e-6, 10, "M", "centre-to-edge distance, m"), \
    PL_OPT_DOUBLE("beta-deg", &(o)->beta_deg, -90, 90, "DEG",              \
                  "ramp inclination, (0, 180/N) degrees"),                 \
    PL_OPT_DOUBLE("mu-s", &(o)->mu_s, 0, 10, "MU", "static friction coefficient"), \
    PL_OPT_DOUBLE("mu", &(o)->mu, 0, 10, "MU", "slip friction coefficient (default mu-s)"), \
    PL_OPT_DOUBLE("lambda0-deg", &(o)->lambda0_deg, -180, 180, "DEG",      \
                  "release angle of the leading face,\n"                   \
                  "(0, 180/N + beta) degrees"),                            \
    PL_OPT_DOUBLE("h1", &(o)->h1, 0, 10, "M",                              \
                  "laser beam heights above the ramp, m"),                 \
    PL_OPT_DOUBLE("h2", &(o)->h2, 0, 10, "M", "(they must differ)"),       \
    PL_OPT_CHOICE("law", &(o)->law, pl_model_law_choices, "line|plastic",  \
                  "the impact law (default line; plastic: the\n"           \
                  "rimless-wheel law)"),                                   \
    PL_OPT_DOUBLE("ramp-length", &(o)->ramp_length, 0, 1e6, "M",           \
                  "stop when the prism has rolled M downhill (status\n"    \
                  "left_ramp); default the ramp's length, else unlimited")

/* What `prismlab simulate` takes beyond the model's parameters: the run's
 * duration, sample rate and mass.  The sweep (model/sweep/) builds each
 * point from the same rows, so a sweep file names parameters exactly as
 * the command does. */
typedef struct {
    pl_model_options mo;
    double duration, rate, mass;   /* NaN when not given */
} pl_simulate_options;

/* Nothing given (pl_model_options_init and NaNs). */
void pl_simulate_options_init(pl_simulate_options *o);

#define PL_OPT_SIMULATE(o)                                                   \
    PL_OPT_MODEL_PARAMS(&(o)->mo),                                          \
    PL_OPT_DOUBLE("duration", &(o)->duration, 1e-6, 1e5, "S", "simulated time, s"), \
    PL_OPT_DOUBLE("rate", &(o)->rate, 1, 1e7, "HZ",                         \
                  "output samples per second (default 10000)"),            \
    PL_OPT_DOUBLE("mass", &(o)->mass, 1e-9, 1e6, "KG",                      \
                  "mass (default 0.2; the motion does not depend on it)")

/* Checks o without a catalogue (--prism refused: "catalogue names need the
 * store"), applies it to p (which holds the defaults) and checks the
 * result: --duration needed, duration times rate at most 5e7 samples,
 * then pl_model_params_check().  PL_EINVAL names the option. */
pl_status pl_simulate_options_params(const pl_simulate_options *o,
                                     int catalogue_done, pl_model_params *p,
                                     pl_err *err);

/* PL_EINVAL when --prism comes without --ramp or the other way round
 * ("--prism and --ramp go together"), or when options are missing: the
 * numbers without them, --lambda0-deg, --h1, --h2, all named in one
 * message ("missing options --N, --a0 (or give --prism and --ramp),
 * --h1"; "missing option --h1"). */
pl_status pl_model_options_check(const pl_model_options *o, pl_err *err);

/* Writes what the options give into p, which holds the defaults or the
 * catalogue's values: the numbers given override; without a catalogue the
 * slip coefficient is mu-s unless --mu. */
void pl_model_options_apply(const pl_model_options *o, pl_model_params *p);

#endif
