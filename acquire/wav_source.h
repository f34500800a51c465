/* acquire/wav_source.h - a stored recording in a WAV file (or any
 * container libsndfile reads), as a source.
 *
 * Its own options: the file, the volts at digital full scale, and which
 * file channels hold the LDVs.
 */
#ifndef PL_ACQUIRE_WAV_SOURCE_H
#define PL_ACQUIRE_WAV_SOURCE_H

#include "acquire/source.h"

/* The most channels a file may have: libsndfile's own limit
 * (SF_MAX_CHANNELS in its source, not its header; sf_open() refuses more
 * as "Too many channels specified").  Ours is none: a file with more
 * channels than PL_SOURCE_MAX_CHANNELS is read when --channels picks the
 * LDVs. */
enum { PL_WAV_MAX_FILE_CHANNELS = 1024 };

typedef struct {
    const char *path;
    double full_scale_v;         /* NaN: from the file's metadata */
    int channels[PL_SOURCE_MAX_CHANNELS]; /* file channels to keep, */
    int n_channels;              /* in LDV order; 0: all */
} pl_wav_options;

extern const pl_source_type pl_source_wav;

/* Defaults: no path, full scale from the metadata, every channel. */
void pl_wav_options_init(pl_wav_options *o);

/* The file as a source spec: pl_source_wav with o and cfg (o is
 * borrowed). */
pl_source_spec pl_wav_spec(const pl_wav_options *o,
                           const pl_source_config *cfg);

#endif
