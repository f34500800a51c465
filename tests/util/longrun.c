/* tests/util/longrun.c - see longrun.h. */
#include "tests/util/longrun.h"

#include "acquire/sim/simrun.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

pl_status tu_long_run_sim(double duration_s, pl_simrun **out, pl_err *err)
{
    pl_simrun_config c;
    pl_simrun_config_default(&c);
    c.model.N = 38;
    c.model.lambda0 = 4.5 * M_PI / 180;
    c.model.ramp_length = 0;     /* an endless ramp */
    c.model.duration = duration_s;
    c.lead_in_s = 1.0;
    c.tail_s = 0.5;
    *out = NULL;
    return pl_simrun_create(out, &c, err);
}

pl_status tu_long_run_put(const char *path, const pl_simrun *s, long long *run_id,
                          pl_err *err)
{
    const pl_simrun_config *c = pl_simrun_get_config(s);
    pl_prism pr;
    pl_prism_init(&pr);
    snprintf(pr.name, sizeof pr.name, "bench-38");
    pr.n_edges = 38;
    pr.a0_m = 0.015;
    pr.length_m = 0.05;
    pr.mass_kg = 0.27;
    snprintf(pr.material, sizeof pr.material, "steel");
    pl_ramp ramp;
    pl_ramp_init(&ramp);
    snprintf(ramp.name, sizeof ramp.name, "bench-ramp");
    snprintf(ramp.material, sizeof ramp.material, "glass");
    ramp.beta_rad = c->model.beta;
    ramp.mu_s = c->model.mu_s;
    pl_run_info info;
    pl_run_info_init(&info);
    snprintf(info.prism, sizeof info.prism, "bench-38");
    snprintf(info.ramp, sizeof info.ramp, "bench-ramp");
    info.sample_rate_hz = c->rate_hz;
    info.n_channels = 2;
    info.format = PL_FMT_U16;
    info.little_endian = pl_host_little_endian();
    snprintf(info.source_kind, sizeof info.source_kind, "sim");
    info.synthetic = 1;
    pl_channel ch[2];
    pl_simrun_channels(s, ch);
    size_t n = pl_simrun_frames(s);
    const uint16_t *codes = pl_simrun_codes(s);
    pl_store *store = NULL;
    unlink(path);
    pl_status st = pl_store_open(&store, path, PL_STORE_CREATE, err);
    if (st == PL_OK && (pl_prism_add(store, &pr, err) != PL_OK ||
                        pl_ramp_add(store, &ramp, err) != PL_OK ||
                        pl_store_begin(store, err) != PL_OK ||
                        pl_run_create(store, &info, ch, err) != PL_OK))
        st = err->code;
    for (size_t at = 0; st == PL_OK && at < n; at += 65536) {
        size_t m = n - at < 65536 ? n - at : 65536;
        st = pl_run_append_chunk(store, info.id, (long long)at, (long long)m, codes + 2 * at,
                                 m * 4, err);
    }
    if (st == PL_OK)
        st = pl_store_commit(store, err);
    pl_store_close(store);   /* its checkpoint: the command reads no WAL */
    *run_id = info.id;
    return st;
}

pl_status tu_long_run_store(const char *path, double duration_s, long long *run_id,
                            pl_err *err)
{
    pl_simrun *s = NULL;
    pl_status st = tu_long_run_sim(duration_s, &s, err);
    if (st == PL_OK)
        st = tu_long_run_put(path, s, run_id, err);
    pl_simrun_destroy(s);
    return st;
}

