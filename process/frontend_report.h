/* process/frontend_report.h - what the front end found and undid in a
 * run's two channels (process/frontend.h says what each is), and where a
 * long run's segment is spliced to its lead-in.  Apart from frontend.h so
 * that the front end's rooms (frontend_*.c), which fill the one and read
 * the other, look down to them rather than up to the front end that
 * calls them. */
#ifndef PL_PROCESS_FRONTEND_REPORT_H
#define PL_PROCESS_FRONTEND_REPORT_H

#include <stddef.h>

enum { PL_FRONTEND_MAX_SPANS = 8, PL_FRONTEND_MAX_LINES = 4 };

/* A stretch where one beam did not see the prism (channel 1 or 2). */
typedef struct {
    int channel;
    double from_s, to_s;
} pl_beam_span;

typedef struct {
    double offset_mps[2];      /* removed */
    double hum_hz;             /* fundamental fitted; 0: none found */
    double hum_drift_hz;       /* how far the mains moved over the
                                  recording (end less start, from the
                                  trend of the hum's phase); NaN: not
                                  measured (no hum, or too weak to tell) */
    double hum_drift_se_hz;    /* its standard error; NaN with it */
    double hum_amp_mps[2];     /* amplitude of the fundamental removed */
    double noise_mps[2];       /* white noise per sample in the lead-in */
    size_t dropouts[2];        /* stretches bridged per channel */
    double dropout_s[2];       /* their total length */
    size_t both_out;           /* stretches where both beams were out */
    double lost_t_s;           /* both beams lost the prism for good here
                                  (the motion's end); NaN */
    int lost_channel;          /* 0 when lost_t_s is set (both) */
    int lost_at_drop;          /* 1: both beams fell to 0 V there at once
                                  (the prism left them cleanly) */
    /* clipping: samples at a channel's rails, carried by the other beam */
    size_t clipped[2];         /* samples */
    size_t clip_spans[2];      /* stretches */
    double clip_from_s[2], clip_to_s[2];   /* the first and the last; NaN */
    double sat_level_mps[2];   /* the channel's clipped stretches are a
                                  plateau at this level inside the
                                  converter's range (a decoder past its
                                  velocity range), not its rail; NaN */
    /* one beam lost for longer than a bridge, carried by the other; lost[]
     * holds the first PL_FRONTEND_MAX_SPANS of n_lost */
    pl_beam_span lost[PL_FRONTEND_MAX_SPANS];
    size_t n_lost;
    double lost_total_s;
    /* motion common to both beams (a shaking floor), removed: its lines
     * and the RMS of what was removed; n_common 0: none above the noise */
    size_t n_common;
    double common_hz[PL_FRONTEND_MAX_LINES], common_amp_mps[PL_FRONTEND_MAX_LINES];
    double common_rms_mps;
    double mains_hz;           /* the mains frequency the hum was fitted at,
                                  removed or not (0: lead-in too short):
                                  what a later segment of a long run fits
                                  its hum at (pl_frontend_splice) */
    size_t count_from, count_to; /* the events above (drop-outs, clipped and
                                  lost stretches) are those that start in
                                  [count_from, count_to): [0, n), or a long
                                  run's segment's core (pl_frontend_splice) */
} pl_frontend_report;

/* A long run's segment (process/process.h, segment_frames): events are
 * counted in its core [core_from, core_to) alone, each seam's margins
 * being another segment's core.  A later segment (at > 0) is the run's
 * lead-in [0, at) with the run's samples from frame origin on after it:
 * its hum is fitted at mains_hz (the first segment's, which measured it
 * over the run's first seconds; 0: found by the lead-in alone) and
 * removed in the run's own phase on each side of the splice; its drift
 * is not measured (NaN). */
typedef struct {
    size_t at, origin;
    double mains_hz;
    size_t core_from, core_to;
} pl_frontend_splice;

#endif
