/* acquire/source.h - where samples come from.
 *
 * Every way samples enter the store (a DAQ card through comedi, a WAV or
 * CSV file, the rig simulator) is a source: a table of five functions
 * (open, start, read, stop, close) over an opaque state.  One writer
 * (acquire/writer.h) takes frames from any of them, so the guarantees on
 * what reaches the store are made once.
 *
 * A source delivers raw frames: one sample per channel, interleaved, in
 * the format and byte order it states in pl_source_info, exactly as they
 * came (a file's PCM words, a card's codes); the calibration that turns
 * them into volts is stated per channel and stored beside them.
 *
 * Threading: one source is used by one thread at a time.
 */
#ifndef PL_ACQUIRE_SOURCE_H
#define PL_ACQUIRE_SOURCE_H

#include "acquire/sim/simrun.h"
#include "core/error.h"
#include "db/run.h"

#include <stddef.h>

enum { PL_SOURCE_MAX_CHANNELS = 16 };

/* What a source delivers, filled by open(). */
typedef struct {
    double sample_rate_hz;
    int n_channels;
    pl_sample_format format;     /* raw samples exactly as delivered */
    int little_endian;
    /* Calibration and range filled by the source; heights, signs and LDV
     * scales from the file's metadata or the configuration. */
    pl_channel channel[PL_SOURCE_MAX_CHANNELS];
    long long total_frames;      /* -1 when live or unknown */
    char kind[8];                /* "comedi", "wav", "csv", "sim" */
    char detail[256];            /* device path or file name */
    char sha256[65];             /* hex SHA-256 of a file source, else "" */
    int synthetic;               /* 1: made by the rig simulator */
    /* From a file's prismlab metadata; "" / NaN when absent. */
    char prism[64], ramp[64];
    double lambda0_rad;
} pl_source_info;

/* Options; each source reads its own part.  NaN / 0 / "" mean "not given":
 * a file source then takes the value from its metadata. */
typedef struct {
    struct {
        char device[256];
        int subdevice;           /* -1: the first with streaming input */
        int channels[PL_SOURCE_MAX_CHANNELS];
        int n_channels;
        int range, aref;
        double rate_hz;
        long buffer_bytes;       /* 0: the driver's default */
    } comedi;
    struct {
        char path[1024];
        double full_scale_v;     /* WAV: volts at full scale */
        int channels[PL_SOURCE_MAX_CHANNELS]; /* WAV: file channels to keep, */
        int n_channels;          /* in LDV order; 0: all */
        char columns[256];       /* CSV: LDV columns by header name or index
                                    from 0, comma-separated; "": every <name>_V */
        char time_column[64];    /* CSV: "" = t_s when present; "none" */
        int mps;                 /* CSV: values are m/s, not volts */
        char delimiter, decimal; /* CSV: 0 = ',' and '.' */
        double rate_hz;          /* CSV without a time column or metadata */
    } file;
    struct {
        pl_simrun_config run;
        int paced;               /* 1: deliver at the card's real rate */
    } sim;
    int expect_channels;         /* > 0: any other count is an error */
    /* Per channel; NaN / 0 when not given. */
    double beam_height_m[PL_SOURCE_MAX_CHANNELS];
    int beam_sign[PL_SOURCE_MAX_CHANNELS];
    double ldv_scale_mps_per_v[PL_SOURCE_MAX_CHANNELS];
} pl_source_config;

typedef struct pl_source_type {
    const char *name;
    /* Opens the source and describes it in info. */
    pl_status (*open)(void **self, const pl_source_config *cfg,
                      pl_source_info *info, pl_err *err);
    /* Starts delivery (a card starts sampling; a paced source its clock). */
    pl_status (*start)(void *self, pl_err *err);
    /* Reads up to max_frames raw frames into buf.  A finite source
     * (total_frames >= 0) returns *got = 0 with PL_OK at the end of the
     * stream; a live source (total_frames = -1) blocks at most ~100 ms and
     * may return *got = 0 when no whole frame arrived in that time.  A
     * loss the source reports (a card's buffer overflow) is PL_EOVERRUN
     * with the frame index in the message. */
    pl_status (*read)(void *self, void *buf, size_t max_frames, size_t *got,
                      pl_err *err);
    /* Stops delivery. */
    pl_status (*stop)(void *self, pl_err *err);
    /* Frees everything; NULL is a no-op. */
    void (*close)(void *self);
} pl_source_type;

extern const pl_source_type pl_source_comedi, pl_source_wav, pl_source_csv,
    pl_source_sim;

/* Finds a source type by name; NULL when unknown. */
const pl_source_type *pl_source_find(const char *name);

/* Fills cfg with "not given" everywhere (NaN, 0, ""), subdevice -1. */
void pl_source_config_init(pl_source_config *cfg);

/* Applies a `prismlab key=value ...` metadata line (the WAV comment or the
 * first CSV comment line, see docs/acquire.md) to info: rate, heights,
 * signs, LDV scales, synthetic, prism, ramp, lambda0.  *full_scale_v
 * receives full_scale_v= when present.  Lines not starting with
 * "prismlab " are ignored.  PL_EFORMAT names a malformed value. */
pl_status pl_source_apply_metadata(const char *line, pl_source_info *info,
                                   double *full_scale_v, pl_err *err);

/* Applies the configuration's per-channel heights, signs and scales (those
 * given) over what the metadata said, and checks that every channel then
 * has a height >= 0, a sign of +-1 and a scale > 0: PL_EINVAL names the
 * channel and the option that would give it. */
pl_status pl_source_apply_config(const pl_source_config *cfg,
                                 pl_source_info *info, pl_err *err);

/* Hex SHA-256 of a file (nettle), for the run's provenance. */
pl_status pl_source_file_sha256(const char *path, char hex[65], pl_err *err);

#endif
