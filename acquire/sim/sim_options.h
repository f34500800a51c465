/* acquire/sim/sim_options.h - the rig simulator source's options in full.
 *
 * For code that builds a simulated run itself (prismlab sim --store, the
 * tests); everything else holds them through acquire/sim/sim_source.h
 * without seeing the model.
 */
#ifndef PL_ACQUIRE_SIM_OPTIONS_H
#define PL_ACQUIRE_SIM_OPTIONS_H

#include "acquire/sim/simrun.h"
#include "acquire/sim/sim_source.h"

struct pl_sim_options {
    pl_simrun_config run;        /* the run open() simulates */
    int paced;                   /* 1: deliver at the card's real rate */
    char note[512];              /* what pl_sim_rig_options() has to say of
                                    the rig file ("": nothing) */
    int draw_seed;               /* 1: each open draws a new run.rig.seed, so
                                    that no two runs hold the same samples
                                    (the rig's noise is never the same twice) */
};

/* Defaults: pl_simrun_config_default's run, delivered as fast as read. */
void pl_sim_options_init(pl_sim_options *o);

#endif
