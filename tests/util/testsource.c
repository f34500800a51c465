/* tests/util/testsource.c - a scripted source for the acquisition tests.
 * See testsource.h. */
#include "tests/util/testsource.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tu_source_script *sc;
    long long next;
    int reads;
} tu_state;

void tu_source_script_init(tu_source_script *sc, long long total)
{
    memset(sc, 0, sizeof *sc);
    sc->total = total;
    sc->rate_hz = 10000;
    sc->fail_at = -1;
    sc->stop_after = -1;
}

int16_t tu_source_sample(long long k, int c)
{
    int v = (int)(k % 30000);
    return (int16_t)(c ? -v : v);
}

pl_source_spec tu_source_spec(tu_source_script *script)
{
    pl_source_spec spec = {.type = &tu_source, .options = script};
    pl_source_config_init(&spec.cfg);
    return spec;
}

static pl_status tu_open(void **self, const void *options,
                         const pl_source_config *cfg, pl_source_info *info,
                         pl_err *err)
{
    tu_state *s = calloc(1, sizeof *s);
    if (!s)
        return pl_err_set(err, PL_ENOMEM, "test source: out of memory");
    /* the script is the test's own, written back to on purpose */
    s->sc = (tu_source_script *)options;
    s->sc->seen.opened++;
    memset(info, 0, sizeof *info);
    info->sample_rate_hz = s->sc->rate_hz > 0 ? s->sc->rate_hz : 10000;
    info->n_channels = 2;
    info->format = PL_FMT_S16;
    info->little_endian = pl_host_little_endian();
    info->total_frames = s->sc->total;
    info->lambda0_rad = NAN;
    /* the store knows the real kinds only: this one stands in for a card */
    snprintf(info->kind, sizeof info->kind, "comedi");
    snprintf(info->detail, sizeof info->detail, "scripted test source");
    for (int i = 0; i < 2; i++) {
        pl_channel *ch = &info->channel[i];
        snprintf(ch->name, sizeof ch->name, "ldv%d", i + 1);
        ch->source_channel = i;
        ch->cal_kind = PL_CAL_FILE;
        ch->cal_order = 1;
        ch->cal_coef[1] = 10.0 / 32768;
        ch->range_min_v = -10;
        ch->range_max_v = 10;
        ch->beam_height_m = 0.02 - 0.01 * i;
        ch->beam_sign = i ? -1 : 1;
        ch->ldv_scale_mps_per_v = 0.025;
    }
    pl_status st = pl_source_apply_config(cfg, info, err);
    if (st != PL_OK) {
        free(s);
        return st;
    }
    *self = s;
    return PL_OK;
}

static pl_status tu_start(void *self, pl_err *err)
{
    (void)err;
    tu_state *s = self;
    s->sc->seen.started++;
    return PL_OK;
}

static pl_status tu_read(void *self, void *buf, size_t max_frames,
                         size_t *got, pl_err *err)
{
    tu_state *s = self;
    tu_source_script *sc = s->sc;
    *got = 0;
    sc->seen.reads = ++s->reads;
    if (max_frames > sc->seen.largest_request)
        sc->seen.largest_request = max_frames;
    if (s->reads <= sc->empty_reads)
        return PL_OK;
    long long n = (long long)max_frames;
    if (sc->total >= 0 && n > sc->total - s->next)
        n = sc->total - s->next;
    int failing = sc->fail_at >= 0 && s->next + n >= sc->fail_at;
    if (failing)
        n = sc->fail_at - s->next;
    int16_t *out = buf;
    for (long long k = 0; k < n; k++)
        for (int c = 0; c < 2; c++)
            out[2 * k + c] = tu_source_sample(s->next + k, c);
    s->next += n;
    sc->seen.delivered = s->next;
    *got = (size_t)n;
    if (sc->stop && sc->stop_after >= 0 && s->next >= sc->stop_after)
        *sc->stop = 1;
    if (failing)
        return pl_err_set(err, sc->fail_code, "test source: %s at frame %lld",
                          sc->fail_code == PL_EOVERRUN ? "samples lost"
                                                       : "device gone",
                          sc->fail_at);
    return PL_OK;
}

static pl_status tu_stop(void *self, pl_err *err)
{
    (void)err;
    tu_state *s = self;
    s->sc->seen.stopped++;
    return PL_OK;
}

static void tu_close(void *self)
{
    tu_state *s = self;
    if (!s)
        return;
    s->sc->seen.closed++;
    free(s);
}

const pl_source_type tu_source = {
    .name = "test",
    .open = tu_open,
    .start = tu_start,
    .read = tu_read,
    .stop = tu_stop,
    .close = tu_close,
};
