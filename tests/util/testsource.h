/* tests/util/testsource.h - a scripted source for the acquisition tests.
 *
 * The failures a recorder must survive (a card's buffer overflow, a device
 * that stops answering, a live source with nothing ready, a signal during
 * a recording) cannot be produced with a file, so this source delivers
 * counting frames and fails where the script says.  Everything downstream
 * (pump, writer, recorder, SQLite) is the real thing.
 *
 * Frames: two s16 channels, frame k holding tu_source_sample(k, 0) and
 * tu_source_sample(k, 1), calibration 10 V full scale, beams 0.02 / 0.01 m,
 * signs +1 / -1, 25 mm/s per volt.
 */
#ifndef PL_TESTSOURCE_H
#define PL_TESTSOURCE_H

#include "acquire/source.h"

#include <signal.h>
#include <stdint.h>

typedef struct {
    long long total;             /* frames; -1: live, never ends by itself */
    double rate_hz;              /* 0: 10 kHz */
    long long fail_at;           /* -1: never; else the read that reaches this
                                    frame delivers up to it and fails */
    pl_status fail_code;         /* PL_EOVERRUN (a loss) or any error */
    int empty_reads;             /* the first reads deliver nothing */
    volatile sig_atomic_t *stop; /* set once stop_after frames are out */
    long long stop_after;
    /* What the source saw, filled as it runs. */
    struct {
        int opened, started, stopped, closed, reads;
        size_t largest_request;
        long long delivered;
    } seen;
} tu_source_script;

extern const pl_source_type tu_source;

/* A script of total frames at 10 kHz that never fails nor stops. */
void tu_source_script_init(tu_source_script *sc, long long total);

/* Sample c of frame k. */
int16_t tu_source_sample(long long k, int c);

/* A spec for the scripted source (script is borrowed and written to). */
pl_source_spec tu_source_spec(tu_source_script *script);

#endif
