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

#include "core/error.h"
#include "db/run.h"

#include <stddef.h>

enum { PL_SOURCE_MAX_CHANNELS = 16 };

/* Frames a file skipped, which its source filled in so that the frame
 * index keeps meaning time (a CSV's time column jumping by whole frames:
 * docs/acquire.md, "Gaps in the time column"). */
typedef struct {
    long long first_frame, n_frames;
    long line;                   /* the file's line after the gap */
} pl_source_gap;

/* What a source delivers, filled by open(). */
typedef struct {
    double sample_rate_hz;
    char rate_from[96];          /* where the rate came from, for a message
                                    that doubts it: "the time column 'Time'
                                    (in s)", "--rate", "the WAV header" */
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
    char prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE];
    double lambda0_rad;
    /* The gaps the source filled, in frame order; the source owns them
     * (valid until close).  NULL, 0: none. */
    const pl_source_gap *gaps;
    size_t n_gaps;
    /* When a file says it was recorded (its first frame), as
     * "YYYY-MM-DDTHH:MM:SSZ", and what said so (pl_run_info's
     * started_from: "metadata", "bwf", "riff"); "": the file does not say
     * (the import then takes its modification time). */
    char started_utc[32];
    char started_from[12];
} pl_source_info;

/* What every source is told about its channels, whatever its type: the
 * common part of a source's configuration.  A source type's own options
 * (a card's device and channel list, a file's path and layout, the
 * simulator's run) are its own struct, declared in its own header
 * (comedi_source.h, wav_source.h, csv_source.h, sim/sim_source.h), so that
 * choosing a source never drags in what another source needs.  NaN / 0
 * mean "not given": a file source then takes the value from its metadata. */
typedef struct {
    int expect_channels;         /* > 0: any other count is an error */
    double beam_height_m[PL_SOURCE_MAX_CHANNELS];
    int beam_sign[PL_SOURCE_MAX_CHANNELS];
    double ldv_scale_mps_per_v[PL_SOURCE_MAX_CHANNELS];
    double decoder_delay_s[PL_SOURCE_MAX_CHANNELS]; /* the LDV decoders'
                                    delays at DC (s); 0: not known */
} pl_source_config;

/* The largest decoder delay taken (s): a tracking filter's 1 / (2 pi f_c)
 * at 1.6 Hz.  Real decoders delay by microseconds to a few milliseconds;
 * the same bound as `process --decoder-delay`. */
#define PL_SOURCE_MAX_DECODER_DELAY_S 0.1

typedef struct pl_source_type {
    const char *name;
    /* Opens the source and describes it in info.  options is the type's
     * own options struct (the one its header declares); cfg the common
     * per-channel part. */
    pl_status (*open)(void **self, const void *options,
                      const pl_source_config *cfg, pl_source_info *info,
                      pl_err *err);
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

/* A source ready to be opened, any number of times (the daemon opens it
 * at every arm): its type, that type's options and the common part.  Made
 * by the type's own constructor (pl_comedi_spec, pl_sim_spec, ...), which
 * pairs the type with options of the right kind; options are borrowed and
 * must outlive every open. */
typedef struct {
    const pl_source_type *type;
    const void *options;
    pl_source_config cfg;
} pl_source_spec;

/* Opens the source a spec describes: spec->type->open with its options. */
pl_status pl_source_open(const pl_source_spec *spec, void **self,
                         pl_source_info *info, pl_err *err);

/* Fills cfg with "not given" everywhere (NaN, 0). */
void pl_source_config_init(pl_source_config *cfg);

/* Applies a `prismlab key=value ...` metadata line (the WAV comment or the
 * first CSV comment line, see docs/acquire.md) to info: rate, heights,
 * signs, LDV scales, decoder delays, synthetic, prism, ramp, lambda0, the
 * recording's start (started_utc=).
 * *full_scale_v receives full_scale_v= when present.  Lines not starting
 * with "prismlab " are ignored.  PL_EFORMAT names a malformed value. */
pl_status pl_source_apply_metadata(const char *line, pl_source_info *info,
                                   double *full_scale_v, pl_err *err);

/* Applies the configuration's per-channel heights, signs and scales (those
 * given) over what the metadata said, and checks that every channel then
 * has a height >= 0, a sign of +-1 and a scale > 0: PL_EINVAL names the
 * channel and the option that would give it. */
pl_status pl_source_apply_config(const pl_source_config *cfg,
                                 pl_source_info *info, pl_err *err);

/* pl_source_apply_config() for a source that found options missing of its
 * own (also_missing, e.g. "--full-scale-v V"; NULL or "": none): they are
 * named first in the one message that names every missing option. */
pl_status pl_source_apply_config_missing(const pl_source_config *cfg,
                                         pl_source_info *info,
                                         const char *also_missing, pl_err *err);

/* Parses the decoder delay of the channels: "S" for all of them or
 * "S1,S2,..." one a channel (at most PL_SOURCE_MAX_CHANNELS), each a
 * number of seconds in (0, PL_SOURCE_MAX_DECODER_DELAY_S], into
 * cfg->decoder_delay_s.  PL_EINVAL names the value and the range; the
 * caller prefixes where it came from (file and line, option). */
pl_status pl_source_parse_decoder_delay(const char *text, pl_source_config *cfg,
                                        pl_err *err);

/* A time of day as a file writes it, "YYYY-MM-DD HH:MM:SS" or with a T,
 * optional fractional seconds (dropped) and a zone ("Z", "+HH:MM",
 * "+HHMM"; none: UTC), into out as "YYYY-MM-DDTHH:MM:SSZ" in UTC.
 * Returns 0 (out untouched) for anything else, a date alone included: a
 * run's start is a moment, not a day. */
int pl_source_time_text(const char *text, char out[32]);

/* The largest LDV scale taken (m/s per volt), as `run set` and the
 * metadata line bound it. */
#define PL_SOURCE_MAX_LDV_SCALE 1e3

/* Parses the LDV decoders' scales: "V" for every channel or "V1,V2" (beam
 * 1's, beam 2's: a lab with two vibrometers), each in (0,
 * PL_SOURCE_MAX_LDV_SCALE] m/s per volt, into cfg->ldv_scale_mps_per_v;
 * channels past the list keep "not given".  PL_EINVAL names the value;
 * the caller prefixes where it came from (option, file and line). */
pl_status pl_source_parse_ldv_scale(const char *text, pl_source_config *cfg,
                                    pl_err *err);

/* Hex SHA-256 of a file (nettle), for the run's provenance. */
pl_status pl_source_file_sha256(const char *path, char hex[65], pl_err *err);

/* PL_EINVAL naming the value unless lambda0_rad is NaN (not known) or a
 * release angle some prism could have: (0, 120) degrees. */
pl_status pl_source_check_lambda0(double lambda0_rad, pl_err *err);

#endif
