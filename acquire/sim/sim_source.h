/* acquire/sim/sim_source.h - the rig simulator as an acquisition source,
 * as the rest of acquire/ and the commands see it.
 *
 * The simulator's options hold a whole simulated run (the prism model's
 * parameters, acquire/sim/simrun.h), so they are opaque here: code that
 * only chooses the rig's source (cmd_acquire.c, the daemon) never
 * compiles against the model.  Code that builds a run itself (prismlab
 * sim, tests) includes acquire/sim/sim_options.h for the whole struct.
 */
#ifndef PL_ACQUIRE_SIM_SOURCE_H
#define PL_ACQUIRE_SIM_SOURCE_H

#include "acquire/rigconf.h"
#include "acquire/source.h"
#include "core/error.h"

typedef struct pl_sim_options pl_sim_options;

extern const pl_source_type pl_source_sim;

/* The simulator as a source spec: pl_source_sim with o (borrowed) and
 * cfg.  The simulator takes its beams from its own run, not from cfg. */
pl_source_spec pl_sim_spec(const pl_sim_options *o, const pl_source_config *cfg);

/* Options for the simulator playing the rig that rc describes ([daq]
 * source = sim): the prism, ramp and release angle of [sim] (else [run]),
 * looked up in the catalogue at db_path; the seed, pacing, ramp length and
 * motion cap of [sim]; the beams, signs and LDV scales of [beams]; the rate
 * of [daq].  *out is allocated; free it with pl_sim_options_free().
 * PL_EINVAL names config (the INI file, for the message) and what [sim]
 * lacks; PL_ENOTFOUND the prism or ramp not catalogued.  Implemented with
 * the sim command (commands/cmd_sim.c): the catalogue meets the model
 * only in the command layer. */
pl_status pl_sim_rig_options(pl_sim_options **out, const pl_rigconf *rc,
                             const char *db_path, const char *config,
                             pl_err *err);

/* What pl_sim_rig_options() found worth saying about the rig file (a
 * ramp without a length: the prism rolls on without end), "" when
 * nothing; the caller says it once, when it has the rig (after the
 * recorder lock: a daemon refused says nothing but why). */
const char *pl_sim_options_note(const pl_sim_options *o);

/* Frees options from pl_sim_rig_options(); NULL is a no-op. */
void pl_sim_options_free(pl_sim_options *o);

#endif
