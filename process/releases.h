/* process/releases.h - the releases in a long recording, found as it
 * streams past (issue 46: a logger left running through many releases
 * writes one file, and `import --split-releases` stores one run per
 * release).
 *
 * The recording is read in blocks of PL_PHYS_BLOCK_S, by the tests the
 * processing reads motion with (process/physics.h): a block is rolling
 * when both beams read the same rotary speed above PL_PHYS_MOVING_OMEGA,
 * still when both read less than it.  A motion starts at the first block
 * that is not still and ends where PL_RELEASES_STILL_S of still blocks
 * begin; it is a release when it holds PL_PHYS_SECOND_S of rolling blocks
 * in a row, as processing's test for a second release asks.  A speckle
 * drop-out, a spike or a knock on the table is not: none reads the same
 * speed on both beams for half a second.  The beams' resting levels (the
 * decoders' offsets) follow the still blocks with a 1 s time constant,
 * as the daemon's trigger follows them, from the first block on (a file
 * that starts in motion has its first motion measured against it).
 *
 * Memory is a few numbers and the list of releases, whatever the length.
 * Threading: one finder is used by one thread at a time. */
#ifndef PL_PROCESS_RELEASES_H
#define PL_PROCESS_RELEASES_H

#include "core/error.h"

#include <stddef.h>

/* Stillness that ends a motion (s): longer than any pause of a rolling
 * prism or of both beams at once, shorter than any gap between releases
 * a lab leaves (the prism must be set back on the ramp). */
#define PL_RELEASES_STILL_S 0.1

typedef struct pl_releases pl_releases;

/* One release: frames from the recording's first. */
typedef struct {
    long long start;   /* the motion's first block (not still) */
    long long end;     /* where the stillness after it begins; the
                          recording's end when it ends in motion */
} pl_release;

/* A finder for a recording at rate (Hz) whose beams are h1, h2 (m) above
 * the ramp.  PL_EINVAL for a rate or height that is not positive;
 * PL_ENOMEM. */
pl_status pl_releases_create(pl_releases **out, double rate, double h1, double h2,
                             pl_err *err);

/* Reads the next n frames: each beam's downhill velocity (m/s, signs
 * applied, offsets not removed).  PL_ENOMEM when the list cannot grow. */
pl_status pl_releases_feed(pl_releases *r, const double *v1, const double *v2, size_t n,
                           pl_err *err);

/* The recording has ended: a release still in motion ends at its last
 * frame.  PL_ENOMEM. */
pl_status pl_releases_finish(pl_releases *r, pl_err *err);

/* The releases found so far, in order, and how many; valid until the
 * next feed or destroy. */
const pl_release *pl_releases_list(const pl_releases *r, size_t *n);

/* Frees the finder; NULL is a no-op. */
void pl_releases_destroy(pl_releases *r);

#endif
