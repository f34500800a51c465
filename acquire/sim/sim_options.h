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
};

/* Defaults: pl_simrun_config_default's run, delivered as fast as read. */
void pl_sim_options_init(pl_sim_options *o);

#endif
