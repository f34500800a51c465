/* acquire/rigconf.c - the rig's INI file.  See rigconf.h. */
#include "acquire/rigconf.h"

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
    pl_source_config_init(&rc->src);
    snprintf(rc->src.comedi.device, sizeof rc->src.comedi.device, "/dev/comedi0");
    rc->src.comedi.n_channels = 2;
    rc->src.comedi.channels[0] = 0;
    rc->src.comedi.channels[1] = 1;
    rc->src.comedi.aref = AREF_GROUND;
    rc->src.comedi.rate_hz = 10000;
    rc->src.beam_sign[0] = 1;
    rc->src.beam_sign[1] = -1;
    rc->src.ldv_scale_mps_per_v[0] = rc->src.ldv_scale_mps_per_v[1] = 0.025;
    snprintf(rc->db, sizeof rc->db, "prismlab.db");
    rc->commit_interval_s = 0.1;
    rc->lambda0_deg = NAN;
    rc->sim_lambda0_deg = NAN;
    rc->sim_ramp_length_m = NAN;
    rc->sim_motion_s = NAN;
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
    errno = 0;
    double v = strtod(val, &end);
    if (end == val || *end || errno || !(v >= lo && v <= hi)) {
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

static int on_key(void *user, const char *sec, const char *key, const char *val)
{
    ctx *c = user;
    pl_rigconf *rc = c->rc;
    pl_source_config *s = &rc->src;
    double v;
    if (!strcmp(sec, "daq")) {
        if (!strcmp(key, "source")) {
            if (strcmp(val, "comedi") && strcmp(val, "sim")) {
                snprintf(c->msg, sizeof c->msg, "[daq] source: expected comedi or sim, got '%s'", val);
                return 0;
            }
            return text(c, sec, key, val, rc->source, sizeof rc->source);
        }
        if (!strcmp(key, "device"))
            return text(c, sec, key, val, s->comedi.device, sizeof s->comedi.device);
        if (!strcmp(key, "subdevice")) {
            if (!number(c, sec, key, val, -1, 255, &v)) return 0;
            s->comedi.subdevice = (int)v;
            return 1;
        }
        if (!strcmp(key, "channels")) {
            int n = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", val);
            char *save = NULL;
            for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
                if (n >= PL_SOURCE_MAX_CHANNELS || !number(c, sec, key, t, 0, 255, &v)) {
                    if (!c->msg[0])
                        snprintf(c->msg, sizeof c->msg, "[daq] channels: at most %d", PL_SOURCE_MAX_CHANNELS);
                    return 0;
                }
                s->comedi.channels[n++] = (int)v;
            }
            s->comedi.n_channels = n;
            return n > 0;
        }
        if (!strcmp(key, "range")) {
            if (!number(c, sec, key, val, 0, 255, &v)) return 0;
            s->comedi.range = (int)v;
            return 1;
        }
        if (!strcmp(key, "aref")) {
            if (!strcmp(val, "ground")) s->comedi.aref = AREF_GROUND;
            else if (!strcmp(val, "common")) s->comedi.aref = AREF_COMMON;
            else if (!strcmp(val, "diff")) s->comedi.aref = AREF_DIFF;
            else if (!strcmp(val, "other")) s->comedi.aref = AREF_OTHER;
            else {
                snprintf(c->msg, sizeof c->msg, "[daq] aref: expected ground, common, diff or other, got '%s'", val);
                return 0;
            }
            return 1;
        }
        if (!strcmp(key, "rate_hz"))
            return number(c, sec, key, val, 1, 1e7, &s->comedi.rate_hz);
        if (!strcmp(key, "buffer_bytes")) {
            if (!number(c, sec, key, val, 0, 1 << 30, &v)) return 0;
            s->comedi.buffer_bytes = (long)v;
            return 1;
        }
    } else if (!strcmp(sec, "beams")) {
        if (!strcmp(key, "h1_m")) return number(c, sec, key, val, 0, 10, &s->beam_height_m[0]);
        if (!strcmp(key, "h2_m")) return number(c, sec, key, val, 0, 10, &s->beam_height_m[1]);
        if (!strcmp(key, "sign1") || !strcmp(key, "sign2")) {
            if (!number(c, sec, key, val, -1, 1, &v) || v == 0) {
                snprintf(c->msg, sizeof c->msg, "[beams] %s: expected +1 or -1, got '%s'", key, val);
                return 0;
            }
            s->beam_sign[key[4] - '1'] = (int)v;
            return 1;
        }
        if (!strcmp(key, "ldv_scale_mps_per_v")) {
            if (!number(c, sec, key, val, 1e-9, 1e3, &v)) return 0;
            s->ldv_scale_mps_per_v[0] = s->ldv_scale_mps_per_v[1] = v;
            return 1;
        }
    } else if (!strcmp(sec, "store")) {
        if (!strcmp(key, "db")) return text(c, sec, key, val, rc->db, sizeof rc->db);
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
            return number(c, sec, key, val, 1e-3, 60, &rc->commit_interval_s);
    } else if (!strcmp(sec, "run")) {
        if (!strcmp(key, "prism")) return text(c, sec, key, val, rc->prism, sizeof rc->prism);
        if (!strcmp(key, "ramp")) return text(c, sec, key, val, rc->ramp, sizeof rc->ramp);
        if (!strcmp(key, "experiment")) return text(c, sec, key, val, rc->experiment, sizeof rc->experiment);
        if (!strcmp(key, "lambda0_deg")) return number(c, sec, key, val, 0, 90, &rc->lambda0_deg);
        if (!strcmp(key, "duration_s")) return number(c, sec, key, val, 0, 86400, &rc->duration_s);
    } else if (!strcmp(sec, "sim")) {
        if (!strcmp(key, "prism")) return text(c, sec, key, val, rc->sim_prism, sizeof rc->sim_prism);
        if (!strcmp(key, "ramp")) return text(c, sec, key, val, rc->sim_ramp, sizeof rc->sim_ramp);
        if (!strcmp(key, "lambda0_deg")) return number(c, sec, key, val, 0, 90, &rc->sim_lambda0_deg);
        if (!strcmp(key, "seed")) {
            if (!number(c, sec, key, val, 0, 2147483647.0, &v)) return 0;
            s->sim.run.rig.seed = (unsigned long)v;
            return 1;
        }
        if (!strcmp(key, "ramp_length_m"))
            return number(c, sec, key, val, 0, 1e6, &rc->sim_ramp_length_m);
        if (!strcmp(key, "motion_s"))
            return number(c, sec, key, val, 1e-3, 86400, &rc->sim_motion_s);
        if (!strcmp(key, "paced")) {
            if (!number(c, sec, key, val, 0, 1, &v)) return 0;
            s->sim.paced = (int)v;
            return 1;
        }
    } else {
        snprintf(c->msg, sizeof c->msg, "unknown section [%s] (expected daq, "
                 "beams, store, run or sim)", sec);
        return 0;
    }
    snprintf(c->msg, sizeof c->msg, "[%s] %s: unknown key", sec, key);
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
