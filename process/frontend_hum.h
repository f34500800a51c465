/* process/frontend_hum.h - the front end's room for the offsets and the
 * mains hum.  Internal to process/frontend*.c. */
#ifndef PL_PROCESS_FRONTEND_HUM_H
#define PL_PROCESS_FRONTEND_HUM_H

#include "process/frontend_report.h"
#include "process/frontend_core.h"

#include <stddef.h>

/* The offsets and the hum over the lead-in [0, lead) (use[] its masks,
 * level[] its medians; both freed here), removed from the whole
 * channels, the mains frequency refined and its drift measured over the
 * run into rep; the second channel on a thread of its own unless
 * threads is 1.  splice (NULL: none) gives the frequency and the phase
 * across a long run's splice (frontend.h).  A lead-in too short for the hum fit gives the offsets
 * only (the medians).  -1 when out of memory. */
int pl_fe_offsets_and_hum(double *v[2], const double h[2], size_t n, double rate,
                          size_t lead, unsigned char *use[2], const double level[2],
                          const pl_frontend_splice *splice, int threads,
                          pl_frontend_report *rep);

#endif
