/* acquire/sim/sim_source.c - the rig simulator as an acquisition source.
 *
 * Lets the whole recording workflow (record, daemon, writer, store) be
 * rehearsed without a DAQ card: open() simulates one run (acquire/sim/simrun.h)
 * and read() hands its codes out as a comedi card would, two u16 offset-
 * binary channels with the card's linear calibration.
 *
 * Paced mode delivers frame k no earlier than start + k / rate on
 * CLOCK_MONOTONIC, in blocks of at most 50 ms, so a daemon sees data arrive
 * at the card's rate.  Deadlines are absolute, so oversleeping one block
 * never accumulates: over a whole run the delivery keeps real time to
 * within one block plus the scheduler's wake-up latency.  Unpaced mode
 * delivers as fast as the reader asks (file generation, tests).
 */
#include "acquire/sim/sim_options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

typedef struct {
    pl_simrun *run;
    int paced;
    size_t next;              /* next frame to deliver */
    struct timespec t0;       /* when start() was called */
    int started;
} sim_source;

void pl_sim_options_init(pl_sim_options *o)
{
    memset(o, 0, sizeof *o);
    pl_simrun_config_default(&o->run);
}

const char *pl_sim_options_note(const pl_sim_options *o)
{
    return o ? o->note : "";
}

void pl_sim_options_free(pl_sim_options *o)
{
    free(o);
}

pl_source_spec pl_sim_spec(const pl_sim_options *o, const pl_source_config *cfg)
{
    return (pl_source_spec){.type = &pl_source_sim, .options = o, .cfg = *cfg};
}

/* A seed in [1, 2^31 - 1], the range [sim] seed takes, so that the one
 * the run's source names can be given back to replay it.  getrandom()
 * needs no state of ours; the clock stands in where it fails. */
static unsigned long draw_seed(void)
{
    uint32_t v;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        v = (uint32_t)t.tv_nsec ^ (uint32_t)t.tv_sec * 2654435761u;
    }
    return v % 2147483647u + 1;
}

static pl_status sim_open(void **self, const void *options,
                          const pl_source_config *cfg, pl_source_info *info,
                          pl_err *err)
{
    /* the beams are the simulated run's own, but for the decoder delay
     * the lab states in rig.ini ([beams] decoder_delay_s), which goes
     * with the channels as a card's run's does (none by default: the
     * simulator's own delay is its truth, not something a lab told) */
    const pl_sim_options *o = options;
    sim_source *s = calloc(1, sizeof *s);
    if (!s)
        return pl_err_set(err, PL_ENOMEM, "sim source: out of memory");
    pl_simrun_config drawn;
    const pl_simrun_config *run = &o->run;
    if (o->draw_seed) {
        drawn = o->run;
        drawn.rig.seed = draw_seed();
        run = &drawn;
    }
    if (pl_simrun_create(&s->run, run, err) != PL_OK) {
        free(s);
        return err->code;
    }
    s->paced = o->paced;
    memset(info, 0, sizeof *info);
    info->sample_rate_hz = run->rate_hz;
    info->n_channels = 2;
    info->format = PL_FMT_U16;
    info->little_endian = pl_host_little_endian();
    pl_simrun_channels(s->run, info->channel);
    for (int i = 0; i < info->n_channels; i++)
        info->channel[i].decoder_delay_s = cfg->decoder_delay_s[i];
    info->total_frames = (long long)pl_simrun_frames(s->run);
    snprintf(info->kind, sizeof info->kind, "sim");
    snprintf(info->detail, sizeof info->detail, "rig simulator %.100s on %.100s, seed %lu%s",
             run->prism[0] ? run->prism : "(numbers)",
             run->ramp[0] ? run->ramp : "(numbers)",
             run->rig.seed, s->paced ? ", paced" : "");
    info->synthetic = 1;
    snprintf(info->prism, sizeof info->prism, "%s", run->prism);
    snprintf(info->ramp, sizeof info->ramp, "%s", run->ramp);
    info->lambda0_rad = run->nominal_lambda0;
    *self = s;
    return PL_OK;
}

static pl_status sim_start(void *self, pl_err *err)
{
    sim_source *s = self;
    if (clock_gettime(CLOCK_MONOTONIC, &s->t0) != 0)
        return pl_err_set(err, PL_EIO, "sim source: clock_gettime: %s",
                          strerror(errno));
    s->started = 1;
    return PL_OK;
}

static double since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

static void sleep_until(const struct timespec *t0, double offset_s)
{
    struct timespec at = *t0;
    double whole = floor(offset_s);
    at.tv_sec += (time_t)whole;
    at.tv_nsec += (long)((offset_s - whole) * 1e9);
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
        ;
}

static pl_status sim_read(void *self, void *buf, size_t max_frames,
                          size_t *got, pl_err *err)
{
    sim_source *s = self;
    double rate = pl_simrun_get_config(s->run)->rate_hz;
    size_t total = pl_simrun_frames(s->run);
    *got = 0;
    if (!s->started)
        return pl_err_set(err, PL_ESTATE, "sim source: read before start");
    if (s->next >= total)
        return PL_OK;
    size_t n = total - s->next;
    if (n > max_frames)
        n = max_frames;
    if (s->paced) {
        /* A live source blocks at most ~100 ms: deliver what has "arrived",
         * waiting for at least one block of 50 ms when nothing has. */
        size_t block = (size_t)ceil(0.05 * rate);
        double now = since(&s->t0);
        size_t due = (size_t)floor(now * rate);
        if (due < s->next + block) {
            size_t until = s->next + (n < block ? n : block);
            sleep_until(&s->t0, until / rate);
            due = until;
        }
        if (due > total)
            due = total;
        if (n > due - s->next)
            n = due - s->next;
    }
    memcpy(buf, pl_simrun_codes(s->run) + 2 * s->next, n * 2 * sizeof(uint16_t));
    s->next += n;
    *got = n;
    return PL_OK;
}

static pl_status sim_stop(void *self, pl_err *err)
{
    (void)err;
    sim_source *s = self;
    s->started = 0;
    return PL_OK;
}

static void sim_close(void *self)
{
    sim_source *s = self;
    if (!s)
        return;
    pl_simrun_destroy(s->run);
    free(s);
}

const pl_source_type pl_source_sim = {
    .name = "sim",
    .open = sim_open,
    .start = sim_start,
    .read = sim_read,
    .stop = sim_stop,
    .close = sim_close,
};
