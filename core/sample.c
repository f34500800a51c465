/* core/sample.c - sample formats, calibration kinds and the channel's
 * calibration polynomial. */
#include "core/sample.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} formats[PL_NFMT] = {
    [PL_FMT_S16] = {"s16", 2},    [PL_FMT_S24_32] = {"s24_32", 4},
    [PL_FMT_S32] = {"s32", 4},    [PL_FMT_U16] = {"u16", 2},
    [PL_FMT_U32] = {"u32", 4},    [PL_FMT_F32] = {"f32", 4},
    [PL_FMT_F64] = {"f64", 8},
};

static const char *const cal_names[PL_NCAL] = {
    "softcal", "hardcal", "linear", "file", "identity"};

size_t pl_sample_format_size(pl_sample_format fmt) { return formats[fmt].size; }
const char *pl_sample_format_name(pl_sample_format fmt) { return formats[fmt].name; }
const char *pl_cal_kind_name(pl_cal_kind kind) { return cal_names[kind]; }

pl_status pl_sample_format_parse(const char *name, pl_sample_format *fmt)
{
    for (int i = 0; name && i < PL_NFMT; i++)
        if (strcmp(name, formats[i].name) == 0) {
            *fmt = (pl_sample_format)i;
            return PL_OK;
        }
    return PL_EINVAL;
}

pl_status pl_cal_kind_parse(const char *name, pl_cal_kind *kind)
{
    for (int i = 0; name && i < PL_NCAL; i++)
        if (strcmp(name, cal_names[i]) == 0) {
            *kind = (pl_cal_kind)i;
            return PL_OK;
        }
    return PL_EINVAL;
}

int pl_host_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

double pl_sample_code(const unsigned char *p, pl_sample_format fmt, int swap)
{
    unsigned char b[8];
    size_t size = pl_sample_format_size(fmt);

    for (size_t i = 0; i < size; i++)
        b[i] = swap ? p[size - 1 - i] : p[i];
    switch (fmt) {
    case PL_FMT_S16: { int16_t v; memcpy(&v, b, 2); return v; }
    case PL_FMT_U16: { uint16_t v; memcpy(&v, b, 2); return v; }
    case PL_FMT_S24_32:
    case PL_FMT_S32: { int32_t v; memcpy(&v, b, 4); return v; }
    case PL_FMT_U32: { uint32_t v; memcpy(&v, b, 4); return v; }
    case PL_FMT_F32: { float v; memcpy(&v, b, 4); return v; }
    case PL_FMT_F64: { double v; memcpy(&v, b, 8); return v; }
    default: return NAN;
    }
}

double pl_channel_volts(const pl_channel *ch, double code)
{
    /* Horner in (code - origin), as comedi_to_physical() evaluates it. */
    double x = code - ch->cal_origin, v = 0.0;
    for (int k = ch->cal_order; k >= 0; k--)
        v = v * x + ch->cal_coef[k];
    return v;
}

pl_status pl_lambda0_check(double lambda0_rad, pl_err *err)
{
    /* 0 < lambda0 < alpha + beta (model/prism/prism.h), and alpha + beta <
     * 2 pi / N <= 120 deg for any prism (N >= 3): the catalogue's prism
     * and ramp narrow it further when the run is processed. */
    double deg = lambda0_rad * 180.0 / M_PI;
    if (!isnan(lambda0_rad) && !(deg > 0 && deg < 120))
        return pl_err_set(err, PL_EINVAL, "lambda0 = %g deg: expected a "
                          "release angle in (0, 120) deg (0 < lambda0 < alpha "
                          "+ beta <= 2 pi / N)", deg);
    return PL_OK;
}

pl_status pl_beam_heights_check(double h1_m, double h2_m, pl_err *err)
{
    double h[2] = {h1_m, h2_m};
    for (int i = 0; i < 2; i++)
        if (!(h[i] > 0 && h[i] <= 10))
            return pl_err_set(err, PL_EINVAL, "beam height h%d = %g m: "
                              "expected a height in (0, 10] m above the ramp",
                              i + 1, h[i]);
    if (h1_m == h2_m)
        return pl_err_set(err, PL_EINVAL, "beam heights h1 = h2 = %g m: the "
                          "beams must be at different heights (eq. 4.1 "
                          "divides by their difference)", h1_m);
    return PL_OK;
}

pl_status pl_prism_inputs_check(const char *what, int n_edges, double a0_m,
                                double beta_rad, double h1_m, double h2_m,
                                double lambda0_rad, pl_err *err)
{
    double alpha = M_PI / n_edges, deg = 180.0 / M_PI;
    double top = isnan(beta_rad) ? 2 * alpha : alpha + beta_rad;
    double hmax = 2 * a0_m * cos(alpha), h[2] = {h1_m, h2_m};
    if (!isnan(lambda0_rad) && !(lambda0_rad > 0 && lambda0_rad < top))
        return pl_err_set(err, PL_EINVAL, "lambda0 = %g deg: expected a "
                          "release angle in (0, %.4g) deg for %s (N = %d: 0 < "
                          "lambda0 < %s)", lambda0_rad * deg, top * deg, what,
                          n_edges, isnan(beta_rad) ? "alpha + beta < 2 pi / N"
                          : "alpha + beta, alpha = pi / N");
    for (int i = 0; i < 2; i++)
        if (!isnan(h[i]) && !(h[i] > 0 && h[i] < hmax))
            return pl_err_set(err, PL_EINVAL, "beam height h%d = %g m: "
                              "expected a height in (0, %.4g) m for %s (2 a0 "
                              "cos(pi/N), N = %d, a0 = %g m: the least height "
                              "of the prism as it rolls; a beam above it "
                              "misses the prism)", i + 1, h[i], hmax, what,
                              n_edges, a0_m);
    return PL_OK;
}
