/* process/frontend_mend.h - the front end's room for what one beam or
 * both did not measure.  Internal to process/frontend*.c. */
#ifndef PL_PROCESS_FRONTEND_MEND_H
#define PL_PROCESS_FRONTEND_MEND_H

#include "core/error.h"
#include "process/frontend_report.h"
#include "process/frontend_core.h"

#include <stddef.h>

/* Each channel's stretches at its rails into clip[c] (level[c]: the
 * channel's resting level), the second channel on a thread of its own
 * unless threads is 1.  -1 when out of memory. */
int pl_fe_clips(double *v[2], size_t n, const double level[2], double rate, int threads,
                spans clip[2]);

/* Mends what neither channel measured from sample `from` on: the
 * drop-outs bridged, a lost beam carried by the other, the clipped
 * samples carried, the stretches where neither beam holds the level
 * bridged by lines; where both beams lost the prism rep->lost_t_s.
 * PL_ENUMERIC when both beams sit at their rails together past a bridge
 * (the message says where); PL_ENOMEM. */
pl_status pl_fe_mend(double *v[2], const double h[2], size_t n, double rate, size_t from,
                     const spans clip[2], pl_frontend_report *rep, pl_err *err);

#endif
