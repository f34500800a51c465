/* acquire/rigconf.c - the rig's INI file.  See rigconf.h. */
#include "acquire/rigconf.h"

#include "db/validation.h"

#include <comedilib.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_rigconf_init(pl_rigconf *rc)
{
    memset(rc, 0, sizeof *rc);
    snprintf(rc->source, sizeof rc->source, "comedi");
    pl_comedi_options_init(&rc->comedi);
    pl_source_config_init(&rc->beams);
    rc->beams.beam_sign[0] = 1;
    rc->beams.beam_sign[1] = -1;
    rc->beams.ldv_scale_mps_per_v[0] = rc->beams.ldv_scale_mps_per_v[1] = 0.025;
    snprintf(rc->db, sizeof rc->db, "prismlab.db");
    rc->commit_interval_s = 0.1;
    rc->lambda0_deg = NAN;
    rc->sim.lambda0_deg = NAN;
    rc->sim.ramp_length_m = NAN;
    rc->sim.seed = -1;
    rc->sim.motion_s = NAN;
    rc->live.search = 1;
    rc->live.cpu_share = 0.2;
}

typedef struct {
    pl_rigconf *rc;
    char msg[400];
    int failed;
} ctx;

static int number(ctx *c, const char *sec, const char *key, const char *val,
                  double lo, double hi, double *out)
{
    char *end;
    double v = strtod(val, &end);
    /* not errno: strtod's ERANGE also flags an underflow, a number */
    if (end == val || *end || !(v >= lo && v <= hi)) {
        snprintf(c->msg, sizeof c->msg, "[%s] %s: expected a number in "
                 "[%g, %g], got '%s'", sec, key, lo, hi, val);
        return 0;
    }
    *out = v;
    return 1;
}

static int text(ctx *c, const char *sec, const char *key, const char *val,
                char *out, size_t size)
{
    if (strlen(val) >= size) {
        snprintf(c->msg, sizeof c->msg, "[%s] %s: longer than %zu characters",
                 sec, key, size - 1);
        return 0;
    }
    snprintf(out, size, "%s", val);
    return 1;
}

/* Each section's keys: 1 when taken, 0 with c->msg set when the value is
 * bad, -1 when the key is not one of the section's. */
static int channels_key(ctx *c, const char *val, pl_comedi_options *o)
{
    int n = 0;
    double v;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", val);
    char *save = NULL;
    for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (n >= PL_SOURCE_MAX_CHANNELS || !number(c, "daq", "channels", t, 0, 255, &v)) {
            if (!c->msg[0])
                snprintf(c->msg, sizeof c->msg, "[daq] channels: at most %d", PL_SOURCE_MAX_CHANNELS);
            return 0;
        }
        o->channels[n++] = (int)v;
    }
    o->n_channels = n;
    return n > 0;
}

static int daq_key(ctx *c, const char *key, const char *val)
{
    pl_rigconf *rc = c->rc;
    pl_comedi_options *o = &rc->comedi;
    const char *sec = "daq";
    double v;
    if (!strcmp(key, "source")) {
        if (strcmp(val, "comedi") && strcmp(val, "sim")) {
            snprintf(c->msg, sizeof c->msg, "[daq] source: expected comedi or sim, got '%s'", val);
            return 0;
        }
        return text(c, sec, key, val, rc->source, sizeof rc->source);
    }
    if (!strcmp(key, "device"))
        return text(c, sec, key, val, o->device, sizeof o->device);
    if (!strcmp(key, "subdevice")) {
        if (!number(c, sec, key, val, -1, 255, &v)) return 0;
        o->subdevice = (int)v;
        return 1;
    }
    if (!strcmp(key, "channels"))
        return channels_key(c, val, o);
    if (!strcmp(key, "range")) {
        if (!number(c, sec, key, val, 0, 255, &v)) return 0;
        o->range = (int)v;
        return 1;
    }
    if (!strcmp(key, "aref")) {
        if (!strcmp(val, "ground")) o->aref = AREF_GROUND;
        else if (!strcmp(val, "common")) o->aref = AREF_COMMON;
        else if (!strcmp(val, "diff")) o->aref = AREF_DIFF;
        else if (!strcmp(val, "other")) o->aref = AREF_OTHER;
        else {
            snprintf(c->msg, sizeof c->msg, "[daq] aref: expected ground, common, diff or other, got '%s'", val);
            return 0;
        }
        return 1;
    }
    if (!strcmp(key, "rate_hz"))
        return number(c, sec, key, val, 1, 1e7, &o->rate_hz);
    if (!strcmp(key, "buffer_bytes")) {
        if (!number(c, sec, key, val, 0, 1 << 30, &v)) return 0;
        o->buffer_bytes = (long)v;
        return 1;
    }
    return -1;
}

static int beams_key(ctx *c, const char *key, const char *val)
{
    pl_source_config *b = &c->rc->beams;
    const char *sec = "beams";
    double v;
    if (!strcmp(key, "h1_m")) return number(c, sec, key, val, 0, 10, &b->beam_height_m[0]);
    if (!strcmp(key, "h2_m")) return number(c, sec, key, val, 0, 10, &b->beam_height_m[1]);
    if (!strcmp(key, "sign1") || !strcmp(key, "sign2")) {
        if (!number(c, sec, key, val, -1, 1, &v) || v == 0) {
            snprintf(c->msg, sizeof c->msg, "[beams] %s: expected +1 or -1, got '%s'", key, val);
            return 0;
        }
        b->beam_sign[key[4] - '1'] = (int)v;
        return 1;
    }
    if (!strcmp(key, "ldv_scale_mps_per_v")) {
        /* one value for both beams, or beam 1's and beam 2's: two
         * vibrometers need not share a scale */
        pl_err e = {0};
        double keep[2] = {b->ldv_scale_mps_per_v[0], b->ldv_scale_mps_per_v[1]};
        if (pl_source_parse_ldv_scale(val, b, &e) != PL_OK) {
            snprintf(c->msg, sizeof c->msg, "[beams] ldv_scale_mps_per_v: %.300s", e.msg);
            return 0;
        }
        for (int i = 0; i < 2; i++)
            if (isnan(b->ldv_scale_mps_per_v[i]))
                b->ldv_scale_mps_per_v[i] = keep[i];
        return 1;
    }
    if (!strcmp(key, "decoder_delay_s")) {
        pl_err e = {0};
        if (pl_source_parse_decoder_delay(val, b, &e) != PL_OK) {
            snprintf(c->msg, sizeof c->msg, "[beams] decoder_delay_s: %.300s", e.msg);
            return 0;
        }
        return 1;
    }
    return -1;
}

static int store_key(ctx *c, const char *key, const char *val)
{
    pl_rigconf *rc = c->rc;
    if (!strcmp(key, "db")) return text(c, "store", key, val, rc->db, sizeof rc->db);
    if (!strcmp(key, "sync")) {
        if (!strcmp(val, "full")) rc->sync_full = 1;
        else if (!strcmp(val, "normal")) rc->sync_full = 0;
        else {
            snprintf(c->msg, sizeof c->msg, "[store] sync: expected normal or full, got '%s'", val);
            return 0;
        }
        return 1;
    }
    if (!strcmp(key, "commit_interval_s"))
        return number(c, "store", key, val, 1e-3, 60, &rc->commit_interval_s);
    return -1;
}

/* A prism, ramp or experiment name: counted in characters, as the store
 * counts them (db/store.h PL_NAME_MAX), not in bytes. */
static int name(ctx *c, const char *sec, const char *key, const char *val,
                char *out, size_t size)
{
    if (pl_name_check(key, val, NULL) != PL_OK) {
        snprintf(c->msg, sizeof c->msg, "[%s] %s: longer than %d characters",
                 sec, key, PL_NAME_MAX);
        return 0;
    }
    return text(c, sec, key, val, out, size);
}

static int run_key(ctx *c, const char *key, const char *val)
{
    pl_rigconf *rc = c->rc;
    const char *sec = "run";
    if (!strcmp(key, "prism")) return name(c, sec, key, val, rc->prism, sizeof rc->prism);
    if (!strcmp(key, "ramp")) return name(c, sec, key, val, rc->ramp, sizeof rc->ramp);
    if (!strcmp(key, "experiment")) return name(c, sec, key, val, rc->experiment, sizeof rc->experiment);
    if (!strcmp(key, "lambda0_deg")) return number(c, sec, key, val, 0, 90, &rc->lambda0_deg);
    if (!strcmp(key, "duration_s")) return number(c, sec, key, val, 0, 86400, &rc->duration_s);
    return -1;
}

static int sim_key(ctx *c, const char *key, const char *val)
{
    pl_rig_sim *s = &c->rc->sim;
    const char *sec = "sim";
    double v;
    if (!strcmp(key, "prism")) return name(c, sec, key, val, s->prism, sizeof s->prism);
    if (!strcmp(key, "ramp")) return name(c, sec, key, val, s->ramp, sizeof s->ramp);
    if (!strcmp(key, "lambda0_deg")) return number(c, sec, key, val, 0, 90, &s->lambda0_deg);
    if (!strcmp(key, "seed")) {
        if (!number(c, sec, key, val, 0, 2147483647.0, &v)) return 0;
        s->seed = (long)v;
        return 1;
    }
    if (!strcmp(key, "ramp_length_m"))
        return number(c, sec, key, val, 0, 1e6, &s->ramp_length_m);
    if (!strcmp(key, "motion_s"))
        return number(c, sec, key, val, 1e-3, 86400, &s->motion_s);
    if (!strcmp(key, "paced")) {
        if (!number(c, sec, key, val, 0, 1, &v)) return 0;
        s->paced = (int)v;
        return 1;
    }
    return -1;
}

/* [live]: the daemon's online impact search (acquire/live.h). */
static int live_key(ctx *c, const char *key, const char *val)
{
    const char *sec = "live";
    double v;
    if (!strcmp(key, "search")) {
        if (!strcmp(val, "on") || !strcmp(val, "off")) {
            c->rc->live.search = !strcmp(val, "on");
            return 1;
        }
        snprintf(c->msg, sizeof c->msg, "[live] search: expected on or off, got '%.200s'", val);
        return 0;
    }
    if (!strcmp(key, "cpu_share")) {
        if (!number(c, sec, key, val, 0.01, 1, &v)) return 0;
        c->rc->live.cpu_share = v;
        return 1;
    }
    return -1;
}

/* after_run: a list of steps; validate needs the processed run, so it
 * cannot come without process (nor before it: the order is fixed). */
static int pipeline_key(ctx *c, const char *key, const char *val)
{
    if (!strcmp(key, "fit")) {
        int l, t, b;
        pl_err e = {0};
        if (strlen(val) >= sizeof c->rc->fit ||
            pl_fit_names_parse(val, &l, &t, &b, &e) != PL_OK) {
            snprintf(c->msg, sizeof c->msg, "[pipeline] fit: %.300s", e.code ? e.msg
                     : "too long (expected some of lambda0, t0 and beta)");
            return 0;
        }
        snprintf(c->rc->fit, sizeof c->rc->fit, "%s", val);
        return 1;
    }
    if (strcmp(key, "after_run"))
        return -1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", val);
    unsigned steps = 0;
    int none = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        unsigned bit = !strcmp(t, "process") ? PL_AFTER_PROCESS
                       : !strcmp(t, "validate") ? PL_AFTER_VALIDATE : 0;
        if (!strcmp(t, "none")) {
            none = 1;
        } else if (!bit) {
            snprintf(c->msg, sizeof c->msg, "[pipeline] after_run: expected process, "
                     "validate or none, got '%s'", t);
            return 0;
        } else if (bit == PL_AFTER_PROCESS && (steps & PL_AFTER_VALIDATE)) {
            snprintf(c->msg, sizeof c->msg, "[pipeline] after_run: process comes "
                     "before validate");
            return 0;
        }
        steps |= bit;
    }
    if (none && steps) {
        snprintf(c->msg, sizeof c->msg, "[pipeline] after_run: none with steps ('%s')", val);
        return 0;
    }
    if ((steps & PL_AFTER_VALIDATE) && !(steps & PL_AFTER_PROCESS)) {
        snprintf(c->msg, sizeof c->msg, "[pipeline] after_run: validate needs the "
                 "processed run: write 'process, validate'");
        return 0;
    }
    c->rc->after_run = steps;
    return 1;
}

static int on_key(ctx *c, const char *sec, const char *key, const char *val)
{
    static const struct {
        const char *name;
        int (*key)(ctx *c, const char *key, const char *val);
    } sections[] = {{"daq", daq_key}, {"beams", beams_key}, {"store", store_key},
                    {"run", run_key}, {"sim", sim_key}, {"pipeline", pipeline_key},
                    {"live", live_key}};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (strcmp(sec, sections[i].name))
            continue;
        int r = sections[i].key(c, key, val);
        if (r < 0)
            snprintf(c->msg, sizeof c->msg, "[%s] %s: unknown key", sec, key);
        return r > 0;
    }
    snprintf(c->msg, sizeof c->msg, "unknown section [%s] (expected daq, "
             "beams, store, run, sim, pipeline or live)", sec);
    return 0;
}

/* inih reads on after an error and reports the first bad line; keep the
 * first line's message too. */
static int handler(void *user, const char *sec, const char *key, const char *val)
{
    ctx *c = user;
    if (c->failed)
        return 1;
    if (!on_key(c, sec, key, val)) {
        c->failed = 1;
        return 0;
    }
    return 1;
}

pl_status pl_rigconf_read(pl_rigconf *rc, const char *path, pl_err *err)
{
    ctx c = {.rc = rc};
    int line = ini_parse(path, handler, &c);
    if (line == -1)
        return pl_err_set(err, PL_EIO, "%s: %s", path, strerror(errno));
    if (line == -2)
        return pl_err_set(err, PL_ENOMEM, "%s: out of memory", path);
    if (line > 0)
        return pl_err_set(err, PL_EFORMAT, "%s:%d: %s", path, line,
                          c.msg[0] ? c.msg : "not an INI line (key = value or [section])");
    return PL_OK;
}
