/* acquire/comedi_source.h - a DAQ card through comedilib, as a source.
 *
 * The card's own options: which device, subdevice and channels, the range
 * and reference, the rate, the driver's buffer.  The rig's INI file
 * ([daq], acquire/rigconf.h) fills them.
 */
#ifndef PL_ACQUIRE_COMEDI_SOURCE_H
#define PL_ACQUIRE_COMEDI_SOURCE_H

#include "acquire/source.h"

typedef struct {
    char device[256];            /* "": /dev/comedi0 */
    int subdevice;               /* -1: the first with streaming input */
    int channels[PL_SOURCE_MAX_CHANNELS];
    int n_channels;              /* 0: channels 0 and 1 */
    int range, aref;             /* comedi range index, AREF_* */
    double rate_hz;              /* per channel; 0: 10 kHz */
    long buffer_bytes;           /* 0: 4 s of data, within the
                                    driver's limit (never shrunk) */
} pl_comedi_options;

extern const pl_source_type pl_source_comedi;

/* Defaults: /dev/comedi0, the first streaming AI subdevice, channels 0 and
 * 1, range 0, ground reference, 10 kHz, a buffer of 4 s. */
void pl_comedi_options_init(pl_comedi_options *o);

/* The card as a source spec: pl_source_comedi with o and cfg (o is
 * borrowed). */
pl_source_spec pl_comedi_spec(const pl_comedi_options *o,
                              const pl_source_config *cfg);

#endif
