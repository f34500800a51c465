/* acquire/source.c - what every source shares: opening one from its spec,
 * the prismlab metadata line, per-channel options, a file's SHA-256. */
#include "acquire/source.h"

#include "core/sha256.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pl_status pl_source_open(const pl_source_spec *spec, void **self,
                         pl_source_info *info, pl_err *err)
{
    return spec->type->open(self, spec->options, &spec->cfg, info, err);
}

void pl_source_config_init(pl_source_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < PL_SOURCE_MAX_CHANNELS; i++) {
        cfg->beam_height_m[i] = NAN;
        cfg->ldv_scale_mps_per_v[i] = NAN;
    }
}

/* Parses "a,b,..." into at most max doubles; returns how many, -1 when a
 * value is not a number. */
static int parse_list(const char *text, double *v, int max)
{
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        v[n] = strtod(p, &end);
        if (end == p || !isfinite(v[n]) || (*end && *end != ','))
            return -1;
        n++;
        p = *end ? end + 1 : end;
    }
    return *p ? -1 : n;
}

/* The values given, v[0..n), are rig.ini's, an import's and a metadata
 * line's alike: the 1-based index of the first outside (0, hi], 0 when
 * all are inside. */
static int bad_value(const double *v, int n, double hi)
{
    for (int i = 0; i < n; i++)
        if (!(v[i] > 0 && v[i] <= hi))
            return i + 1;
    return 0;
}

/* Channel i's value of the n given: one value is every channel's (one
 * decoder model, one vibrometer type on both beams), else one a channel;
 * 0 past the list. */
static double value_of(const double *v, int n, int i)
{
    return n == 1 ? v[0] : i < n ? v[i] : 0;
}

/* "V" for every channel or "V1,V2,..." one a channel, each in (0, hi]
 * (unit, what: for the message), into out[0..PL_SOURCE_MAX_CHANNELS);
 * channels past a list get 0 (not given). */
static pl_status parse_per_channel(const char *text, double hi, const char *unit,
                                   const char *what, const char *form, double *out,
                                   pl_err *err)
{
    double v[PL_SOURCE_MAX_CHANNELS + 1];
    int n = parse_list(text, v, PL_SOURCE_MAX_CHANNELS + 1);
    size_t len = strlen(text);
    /* parse_list() lets "S," pass as one value: a second one went missing */
    if (n < 1 || n > PL_SOURCE_MAX_CHANNELS || text[len - 1] == ',')
        return pl_err_set(err, PL_EINVAL, "expected %s, got '%.60s'", form, text);
    int bad = bad_value(v, n, hi);
    if (bad)
        return pl_err_set(err, PL_EINVAL, "'%.60s': value %d is %g %s, expected %s "
                          "in (0, %g] %s", text, bad, v[bad - 1], unit, what, hi, unit);
    for (int i = 0; i < PL_SOURCE_MAX_CHANNELS; i++)
        out[i] = value_of(v, n, i);
    return PL_OK;
}

pl_status pl_source_parse_decoder_delay(const char *text, pl_source_config *cfg,
                                        pl_err *err)
{
    return parse_per_channel(text, PL_SOURCE_MAX_DECODER_DELAY_S, "s", "a delay",
                             "S or S1,S2 (seconds)", cfg->decoder_delay_s, err);
}

pl_status pl_source_parse_ldv_scale(const char *text, pl_source_config *cfg,
                                    pl_err *err)
{
    double v[PL_SOURCE_MAX_CHANNELS];
    if (parse_per_channel(text, PL_SOURCE_MAX_LDV_SCALE, "m/s/V", "a scale",
                          "MPS_PER_V or beam 1's,beam 2's (m/s per volt)", v,
                          err) != PL_OK)
        return err->code;
    /* a channel the list leaves out keeps "not given" (the file's), not 0 */
    for (int i = 0; i < PL_SOURCE_MAX_CHANNELS; i++)
        cfg->ldv_scale_mps_per_v[i] = v[i] > 0 ? v[i] : NAN;
    return PL_OK;
}

pl_status pl_source_apply_metadata(const char *line, pl_source_info *info,
                                   double *full_scale_v, pl_err *err)
{
    if (!line || strncmp(line, "prismlab ", 9) != 0)
        return PL_OK;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", line + 9);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return pl_err_set(err, PL_EFORMAT, "metadata: '%s' is not key=value", tok);
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        double v[PL_SOURCE_MAX_CHANNELS];
        int n = 0;
        if (!strcmp(key, "prism") || !strcmp(key, "ramp")) {
            /* a name cut short could name another prism: refuse instead */
            if (pl_name_check(key, val, err) != PL_OK)
                return pl_err_prefix(err, "metadata: ");
            snprintf(!strcmp(key, "prism") ? info->prism : info->ramp,
                     sizeof info->prism, "%s", val);
            continue;
        }
        if (!strcmp(key, "started_utc")) {
            if (!pl_source_time_text(val, info->started_utc))
                return pl_err_set(err, PL_EFORMAT, "metadata: started_utc='%.40s': "
                                  "expected a date and time, YYYY-MM-DDTHH:MM:SSZ", val);
            snprintf(info->started_from, sizeof info->started_from, "metadata");
            continue;
        }
        /* The numeric keys, each value in its range before it is used (a
         * sign of 1.6e32 must not reach an int); the delay's range, open
         * at 0, is checked below.  Unknown keys are kept for newer
         * writers (and export's cal= and code_offset=, which describe the
         * codes for other readers: the WAV's own format says how they
         * decode): ignored, not an error, and not read as numbers. */
        static const struct { const char *key; double lo, hi; } numeric[] = {
            {"rate_hz", 1e-3, 1e9}, {"full_scale_v", 1e-9, 1e6},
            {"synthetic", 0, 1}, {"lambda0_deg", -180, 180},
            {"ldv_scale", 1e-9, 1e3}, {"sign", -1, 1}, {"h", 0, 10},
            {"decoder_delay_s", NAN, NAN}};
        size_t r = 0;
        while (r < sizeof numeric / sizeof numeric[0] && strcmp(key, numeric[r].key))
            r++;
        if (r == sizeof numeric / sizeof numeric[0])
            continue;
        n = parse_list(val, v, PL_SOURCE_MAX_CHANNELS);
        if (n < 1)
            return pl_err_set(err, PL_EFORMAT, "metadata: %s='%s': expected "
                              "a number or a comma-separated list", key, val);
        for (int i = 0; i < n && !isnan(numeric[r].lo); i++)
            if (!(v[i] >= numeric[r].lo && v[i] <= numeric[r].hi) ||
                (!strcmp(key, "sign") && v[i] != 1 && v[i] != -1))
                return !strcmp(key, "sign")
                    ? pl_err_set(err, PL_EFORMAT, "metadata: sign='%.40s': "
                                 "value %d is %g, expected +1 or -1", val, i + 1, v[i])
                    : pl_err_set(err, PL_EFORMAT, "metadata: %s='%.40s': "
                                 "value %d is %g, expected a value in "
                                 "[%g, %g]", key, val, i + 1, v[i],
                                 numeric[r].lo, numeric[r].hi);
        if (!strcmp(key, "decoder_delay_s")) {
            int bad = bad_value(v, n, PL_SOURCE_MAX_DECODER_DELAY_S);
            if (bad)
                return pl_err_set(err, PL_EFORMAT, "metadata: decoder_delay_s='%.40s': "
                                  "value %d is %g s, expected a delay in (0, %g] s", val,
                                  bad, v[bad - 1], PL_SOURCE_MAX_DECODER_DELAY_S);
            for (int i = 0; i < PL_SOURCE_MAX_CHANNELS; i++)
                info->channel[i].decoder_delay_s = value_of(v, n, i);
        } else if (!strcmp(key, "rate_hz")) {
            info->sample_rate_hz = v[0];
        } else if (!strcmp(key, "full_scale_v")) {
            if (full_scale_v)
                *full_scale_v = v[0];
        } else if (!strcmp(key, "synthetic")) {
            info->synthetic = v[0] != 0;
        } else if (!strcmp(key, "lambda0_deg")) {
            info->lambda0_rad = v[0] * M_PI / 180.0;
        } else if (!strcmp(key, "ldv_scale") || !strcmp(key, "sign") ||
                   !strcmp(key, "h")) {
            for (int i = 0; i < n; i++) {
                if (!strcmp(key, "h"))
                    info->channel[i].beam_height_m = v[i];
                else if (!strcmp(key, "sign"))
                    info->channel[i].beam_sign = (int)v[i];
                else
                    info->channel[i].ldv_scale_mps_per_v = v[i];
            }
        }
    }
    return PL_OK;
}

pl_status pl_source_apply_config(const pl_source_config *cfg,
                                 pl_source_info *info, pl_err *err)
{
    return pl_source_apply_config_missing(cfg, info, NULL, err);
}

pl_status pl_source_apply_config_missing(const pl_source_config *cfg,
                                         pl_source_info *info,
                                         const char *also_missing, pl_err *err)
{
    if (cfg->expect_channels > 0 && info->n_channels != cfg->expect_channels)
        return pl_err_set(err, PL_EFORMAT, "%s: %d channel%s, expected %d "
                          "(one per LDV)", info->detail, info->n_channels,
                          info->n_channels == 1 ? "" : "s",
                          cfg->expect_channels);
    /* Everything missing is named at once (a first-day user once needed
     * four tries for one WAV); values out of range come after. */
    char missing[384] = "";
    size_t used = 0;
    int n_missing = 0, no_scale = 0;
    if (also_missing && also_missing[0]) {
        used = (size_t)snprintf(missing, sizeof missing, "%s", also_missing);
        n_missing++;
    }
    for (int i = 0; i < info->n_channels; i++) {
        pl_channel *ch = &info->channel[i];
        if (!isnan(cfg->beam_height_m[i]))
            ch->beam_height_m = cfg->beam_height_m[i];
        if (cfg->beam_sign[i])
            ch->beam_sign = cfg->beam_sign[i];
        if (!isnan(cfg->ldv_scale_mps_per_v[i]))
            ch->ldv_scale_mps_per_v = cfg->ldv_scale_mps_per_v[i];
        if (cfg->decoder_delay_s[i] > 0)
            ch->decoder_delay_s = cfg->decoder_delay_s[i];
        if ((isnan(ch->beam_height_m) || ch->beam_height_m < 0) && used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used,
                                     "%s--h%d M", n_missing++ ? ", " : "", i + 1);
        if (ch->beam_sign != 1 && ch->beam_sign != -1 && used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used,
                                     "%s--sign%d +-1", n_missing++ ? ", " : "", i + 1);
        no_scale |= !(ch->ldv_scale_mps_per_v > 0);
    }
    if (no_scale && used < sizeof missing)
        used += (size_t)snprintf(missing + used, sizeof missing - used,
                                 "%s--ldv-scale MPS_PER_V", n_missing++ ? ", " : "");
    if (n_missing)
        return pl_err_set(err, PL_EINVAL, "%s: the file does not say, so give "
                          "%s", info->detail, missing);
    for (int i = 0; i < info->n_channels; i++)
        if (!(info->channel[i].beam_height_m > 0 &&
              info->channel[i].beam_height_m <= 10))
            return pl_err_set(err, PL_EINVAL, "%s: beam height h%d = %g m: "
                              "expected a height in (0, 10] m above the ramp",
                              info->detail, i + 1, info->channel[i].beam_height_m);
    /* (4.1) divides by h1 - h2: equal heights give no rotary speed */
    for (int i = 1; i < info->n_channels; i++)
        if (info->channel[i].beam_height_m == info->channel[0].beam_height_m)
            return pl_err_set(err, PL_EINVAL, "%s: beam heights h1 = h%d = %g m: "
                              "the beams must be at different heights (eq. 4.1 "
                              "divides by their difference)", info->detail,
                              i + 1, info->channel[0].beam_height_m);
    return PL_OK;
}

pl_status pl_source_check_lambda0(double lambda0_rad, pl_err *err)
{
    return pl_lambda0_check(lambda0_rad, err);
}

int pl_source_time_text(const char *text, char out[32])
{
    int y, mo, d, h, mi, sec, used = 0;
    char sep;
    if (!text || sscanf(text, "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &sep, &h,
                        &mi, &sec, &used) != 7 || (sep != 'T' && sep != ' ') ||
        mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
        y < 1900 || h < 0 || mi < 0 || sec < 0)
        return 0;
    const char *p = text + used;
    if (*p == '.' || *p == ',')
        for (p++; *p >= '0' && *p <= '9'; p++) {
        }
    long offset = 0;   /* the zone's seconds east of UTC */
    int oh, om;
    if ((*p == '+' || *p == '-') &&
        (sscanf(p + 1, "%2d:%2d", &oh, &om) == 2 || sscanf(p + 1, "%2d%2d", &oh, &om) == 2)) {
        offset = (*p == '-' ? -1 : 1) * (oh * 3600L + om * 60L);
        p += strspn(p + 1, "0123456789:") + 1;
    } else if (*p == 'Z') {
        p++;
    }
    if (*p && *p != ' ')
        return 0;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                    .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm) - offset;
    if (!gmtime_r(&t, &tm))
        return 0;
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return 1;
}

pl_status pl_source_file_sha256(const char *path, char hex[65], pl_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return pl_err_set(err, PL_EIO, "%s: %s", path, strerror(errno));
    pl_sha256 h;
    pl_sha256_init(&h);
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        pl_sha256_update(&h, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return pl_err_set(err, PL_EIO, "%s: read error", path);
    pl_sha256_hex(&h, hex);
    return PL_OK;
}
