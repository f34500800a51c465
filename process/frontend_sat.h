/* process/frontend_sat.h - the front end's room for a beam held at a
 * level that is not its converter's rail: an LDV decoder past its
 * velocity range puts out its limit, with the decoder's noise on top,
 * well inside the DAQ's range.  Internal to process/frontend*.c. */
#ifndef PL_PROCESS_FRONTEND_SAT_H
#define PL_PROCESS_FRONTEND_SAT_H

#include "process/frontend_report.h"
#include "process/frontend_core.h"

#include <stddef.h>

/* For each channel with no stretch at its rails in clip[c]: the samples
 * on a plateau at its extreme (within 8 of its noise's standard
 * deviations of it) while the other beam's v / h stands beyond the
 * plateau's in the motion's sense, by more than 10 of the beams'
 * difference's noise and 2 % of the level (no rolling prism holds one
 * beam flat while the other turns faster), go into clip[c] as clipped
 * stretches, to be carried by the other beam as any clipped stretch is;
 * rep->sat_level_mps[c] receives the plateau's level (its median), NaN
 * where there is none.  level[c]: the channel's resting level.  -1 when
 * out of memory. */
int pl_fe_saturation(double *v[2], const double h[2], size_t n, const double level[2],
                     double rate, spans clip[2], pl_frontend_report *rep);

#endif
