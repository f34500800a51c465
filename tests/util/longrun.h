/* tests/util/longrun.h - a long recording in a store, for the tests and
 * benches of processing in segments (docs/process.md, "Long runs"). */
#ifndef PL_TU_LONGRUN_H
#define PL_TU_LONGRUN_H

#include "acquire/sim/simrun.h"
#include "core/error.h"

/* A fresh store at path (replaced) holding one run of duration_s of
 * rolling plus 1 s of lead-in and 0.5 s of tail at 10 kHz, unprocessed,
 * stored as an import would: a 38-edged prism on an endless ramp
 * (tests/bench/process_bench.c's run, longer or shorter), with the
 * simulator's hum, drop-outs and dropped buffers; its prism "bench-38"
 * and ramp "bench-ramp" in the catalogue.  Its id into *run_id. */
pl_status tu_long_run_store(const char *path, double duration_s, long long *run_id,
                            pl_err *err);

/* The same in two steps, for a caller that wants the recording too: the
 * simulated run (*out; the caller destroys it), and the store at path
 * (replaced) holding it. */
pl_status tu_long_run_sim(double duration_s, pl_simrun **out, pl_err *err);
pl_status tu_long_run_put(const char *path, const pl_simrun *s, long long *run_id,
                          pl_err *err);

#endif
