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
 *   ratio      where both move, v1/v2 (the median of its densest cluster
 *              of blocks, 4 % wide) is h1/h2 (its sign
 *              included): what the data say the notebook's heights and
 *              signs should be; a run whose ratio contradicts them is
 *              refused with the fix the data support.
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
    double cluster;    /* the share of those blocks within 4 % of each
                          other that gave it (the densest such cluster) */
    size_t both;       /* blocks where both moved */
    int sense[2];      /* each beam's direction where it moves: +1
                          downhill (its sign right), -1 uphill, 0 too
                          little motion to tell */
} pl_beams_report;

/* Checks the offset-free velocities v[0], v[1] (m/s, n samples at rate
 * Hz, beams at h[0], h[1], the first q samples at rest) against each
 * other as above into b; a dead beam is replaced in place by the live
 * one scaled by h_dead / h_live.  -1 when out of memory (v untouched). */
int pl_beams_check(double *v[2], const double h[2], size_t n, double rate, size_t q,
                   pl_beams_report *b);

/* What the beams' ratio says of the notebook's heights h[0], h[1]: 0
 * when it agrees with h1/h2 within 5 % or was not measured; 1 when it
 * contradicts them (omega's scale is then wrong, and the run cannot be
 * measured through), with buf (n bytes) naming what the data support -
 * heights or wires swapped, a sign swapped, a height wrong or crosstalk
 * - and its fix, "RUN" standing for the run's id. */
int pl_beams_verdict(const pl_beams_report *b, const double h[2], char *buf, size_t n);

/* The beams' own senses in words for a run refused as "no motion":
 * which beam moves uphill (its sign wrong), or which never saw the
 * prism; "" when each moves downhill (no sign is at fault). */
void pl_beams_senses(const pl_beams_report *b, char *buf, size_t n);

#endif
