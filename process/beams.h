/* process/beams.h - the two beams checked against each other before
 * anything is derived from them.
 *
 * In pure rotation about the contact edge the point at height h above
 * the ramp moves along it at omega h, so v1/h1 = v2/h2 = omega: the two
 * beams are redundant.  Over 10 ms blocks of the whole recording (the
 * means of their first 2 ms), the blocks where one beam moves far above
 * its lead-in noise say what the other did meanwhile:
 *
 *   dead       the other never follows: its v/h agrees with the moving
 *              beam's (within a factor 2) in under 5 % of the blocks and
 *              their median ratio is near 0 - a decoder that never saw
 *              the prism (0 V, noise, speckle garbage).  The run is
 *              measured through the live beam: the dead channel becomes
 *              the live one scaled to its height, so (4.1) and the
 *              combined omega are the live beam's v / h.
 *   ratio      where both move, the median of v1/v2 is h1/h2 (its sign
 *              included): what the data say the notebook's heights and
 *              signs should be (cmd_process.c's diagnosis reads it).
 *
 * Threading: no shared state. */
#ifndef PL_PROCESS_BEAMS_H
#define PL_PROCESS_BEAMS_H

#include <stddef.h>

typedef struct {
    int dead;          /* 1 or 2: the channel that never saw the prism; 0 */
    size_t moving;     /* blocks where the beam that moves most moved */
    double agree;      /* share of them where the other beam's v/h agreed
                          within a factor 2 (1 on a sound run) */
    double ratio;      /* v1/v2 where both beams move (median); NaN: they
                          never both moved */
    double ratio_sd;   /* its blocks' robust spread; NaN with it */
    size_t both;       /* blocks where both moved */
} pl_beams_report;

/* Checks the offset-free velocities v[0], v[1] (m/s, n samples at rate
 * Hz, beams at h[0], h[1], the first q samples at rest) against each
 * other as above into b; a dead beam is replaced in place by the live
 * one scaled by h_dead / h_live.  -1 when out of memory (v untouched). */
int pl_beams_check(double *v[2], const double h[2], size_t n, double rate, size_t q,
                   pl_beams_report *b);

#endif
