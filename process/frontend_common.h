/* process/frontend_common.h - the front end's room for motion common to
 * both beams (a shaking floor).  Internal to process/frontend*.c. */
#ifndef PL_PROCESS_FRONTEND_COMMON_H
#define PL_PROCESS_FRONTEND_COMMON_H

#include "process/frontend_report.h"
#include "process/frontend_core.h"

#include <stddef.h>

/* Motion common to both beams over [from, n): found in the lines of
 * e = v1/h1 - v2/h2, which holds no rotation, and removed from both
 * channels.  The samples of clipped stretches and of drop-outs (e far
 * from its median) are left out of the search and the fit.  -1 when out
 * of memory. */
int pl_fe_common_motion(double *v[2], const double h[2], size_t n, size_t from, double rate,
                        const spans clip[2], pl_frontend_report *rep);

#endif
