/* core/sample.h - the vocabulary of a recording: sample formats,
 * calibration kinds and channels.
 *
 * These types describe what a source delivers and what the store keeps;
 * both db/ (which stores them) and the stages that read or write samples
 * use them, so they live below all of them.  The names returned and parsed
 * here are the schema's names (schemas/001_*.sql).
 */
#ifndef PL_CORE_SAMPLE_H
#define PL_CORE_SAMPLE_H

#include "core/error.h"

#include <stddef.h>

typedef enum {
    PL_FMT_S16,     /* signed 16-bit */
    PL_FMT_S24_32,  /* a signed 24-bit code in a 32-bit word */
    PL_FMT_S32,     /* signed 32-bit */
    PL_FMT_U16,     /* comedi's sampl_t: unsigned 16-bit codes */
    PL_FMT_U32,     /* comedi's lsampl_t: unsigned 32-bit codes */
    PL_FMT_F32,     /* IEEE-754 single */
    PL_FMT_F64,     /* IEEE-754 double */
    PL_NFMT
} pl_sample_format;

/* Bytes one sample of fmt occupies. */
size_t pl_sample_format_size(pl_sample_format fmt);

/* The schema's name of fmt ("s16", "u16", ...). */
const char *pl_sample_format_name(pl_sample_format fmt);

/* Parses a schema name; PL_EINVAL for an unknown one. */
pl_status pl_sample_format_parse(const char *name, pl_sample_format *fmt);

/* The code of one sample of fmt at p as a double, its bytes reversed
 * when swap (stored in the other byte order than this machine's). */
double pl_sample_code(const unsigned char *p, pl_sample_format fmt, int swap);

/* True when this machine stores multi-byte numbers little-endian. */
int pl_host_little_endian(void);

/* Calibration kinds, as in the channel table. */
typedef enum {
    PL_CAL_SOFTCAL,  /* comedilib's per-board software calibration */
    PL_CAL_HARDCAL,  /* hardware-calibrated board: comedilib's converter */
    PL_CAL_LINEAR,   /* the range's nominal linear map */
    PL_CAL_FILE,     /* a file's full-scale value (--full-scale) */
    PL_CAL_IDENTITY, /* samples are already volts (float files, CSV) */
    PL_NCAL
} pl_cal_kind;

/* The schema's name of kind ("softcal", "linear", ...). */
const char *pl_cal_kind_name(pl_cal_kind kind);

/* Parses a schema name; PL_EINVAL for an unknown one. */
pl_status pl_cal_kind_parse(const char *name, pl_cal_kind *kind);

/* One channel: where its beam is and how its codes become velocities. */
typedef struct {
    char name[32];
    int source_channel;          /* channel number at the DAQ or in the file */
    double beam_height_m;        /* h_i of seed 000 section 4 */
    int beam_sign;               /* +1 or -1: makes downhill motion positive */
    double ldv_scale_mps_per_v;  /* the LDV decoder's scale */
    pl_cal_kind cal_kind;
    double cal_origin;           /* V = sum_k cal_coef[k] (code - origin)^k */
    int cal_order;               /* 0..3 */
    double cal_coef[4];
    double range_min_v, range_max_v; /* NaN when not known */
    long long maxdata;           /* 0 when not known */
    double decoder_delay_s;      /* the LDV decoder's delay at DC (s), as
                                    the lab gives it; 0 when not known */
} pl_channel;

/* Converts one raw code to volts by the channel's polynomial. */
double pl_channel_volts(const pl_channel *ch, double code);

/* PL_EINVAL naming the value when a recorded release angle is outside
 * (0, 120) deg (0 < lambda0 < alpha + beta <= 2 pi / N for N >= 3); NaN
 * (not recorded) passes.  Shared by import, record and `run set`. */
pl_status pl_lambda0_check(double lambda0_rad, pl_err *err);

/* PL_EINVAL naming the beam when h1 or h2 is outside (0, 10] m or they
 * are equal (eq. 4.1 divides by h1 - h2). */
pl_status pl_beam_heights_check(double h1_m, double h2_m, pl_err *err);

/* The same two checks narrowed to a known prism of n_edges edges and
 * circumradius a0_m (centre to edge) on a ramp inclined beta_rad (NaN: no
 * ramp known).  lambda0 must lie in (0, alpha + beta), alpha = pi / N
 * (model/prism/prism.h), or (0, 2 alpha) without a ramp (beta < alpha);
 * each beam height in (0, 2 a0 cos alpha): the prism's cross-section
 * always holds its inscribed circle, of diameter 2 a0 cos alpha, so a beam
 * lower than that hits the prism at every angle of its roll, and one
 * higher passes over it while it stands on a face.  NaN values (not
 * given) pass; `what` names the prism in the message. */
pl_status pl_prism_inputs_check(const char *what, int n_edges, double a0_m,
                                double beta_rad, double h1_m, double h2_m,
                                double lambda0_rad, pl_err *err);

#endif
