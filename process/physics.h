/* process/physics.h - checks of a run against what the physics allows
 * (issue 44): a prism released on a ramp can turn only so fast, only
 * downhill, and lands a face every 2 pi / N of theta, so the impacts'
 * spacing is a clock the LDV chain's calibration cannot move.  A run that
 * breaks one of these is a calibration, unit or notebook error, and says
 * which numbers the recording supports.  docs/process.md, "Checked
 * against the physics", gives each check's figures.
 *
 * Plain arithmetic on arrays; no store.  Threading: reentrant. */
#ifndef PL_PROCESS_PHYSICS_H
#define PL_PROCESS_PHYSICS_H

#include "core/error.h"
#include "db/derived.h"

#include <stddef.h>

/* A ramp of unknown length is taken as at most this long (m): lab ramps
 * are well under it (seed 000's is 0.65 m). */
#define PL_PHYS_RAMP_MAX_M 2.0

/* The measured speed may exceed the bound by this factor before it is
 * called impossible: the catalogue's slope and size are nominal, and a
 * launch by hand adds a little. */
#define PL_PHYS_SPEED_MARGIN 1.5

/* Both beams reading at least this rotary speed (rad/s), alike, over the
 * lead-in: the prism turns at the first sample. */
#define PL_PHYS_MOVING_OMEGA 0.3

typedef struct {
    int N;                 /* edges */
    double a0_m;           /* centre to edge (circumradius); NaN: unknown */
    double beta_rad;       /* the ramp's slope; NaN: unknown */
    double ramp_length_m;  /* NaN: unknown (PL_PHYS_RAMP_MAX_M taken) */
} pl_phys_body;

/* The fastest rotary speed (rad/s) body can reach from rest: all of its
 * fall down the ramp (and a0 besides, for the release angle) turned into
 * rotation about an edge, (J + m a0^2) omega^2 / 2 = m g dz, with J =
 * m a0^2 (cos 2 alpha + 2) / 6 (seed 000 section 2).  NaN when a0 or
 * beta is unknown. */
double pl_phys_omega_max(const pl_phys_body *b);

/* The speed check, before any costly search: omega over [from, to) (the
 * motion, rad/s) and each beam's |v| (m/s, beam heights h[]) against
 * what body can reach times PL_PHYS_SPEED_MARGIN, at their 98th
 * percentile (a speckle burst or drop-out covers less).  PL_ENUMERIC with
 * the figures and the likely cause when a speed is impossible; PL_ENOMEM;
 * PL_OK (also when the bound is unknown). */
pl_status pl_phys_check_speed(const double *omega, const double *v1, const double *v2,
                              size_t from, size_t to, const double h[2],
                              const pl_phys_body *body, pl_err *err);

/* The lattice's own clock over the impacts imp[0..m-1] (confirmed ones;
 * t_s on the run's clock): impacts land every 2 pi / N of theta, so over
 * any stretch between two of them the prism turned a whole number of
 * slots, whatever the LDV chain's calibration.  Compares that with the
 * plain integral theta[] of the cleaned omega the impact search reads
 * (the front end's combined omega) over the same stretches. */
typedef struct {
    size_t used;           /* confirmed impacts the comparison used */
    double spacing_slots;  /* median theta between neighbouring confirmed
                              impacts, in slots of 2 pi / N: 1 when the
                              notebook's N, scale and heights are right */
    double q_first, q_last;/* integral / lattice over the first and the last
                              second of impacts: 1 when the integral is
                              right; NaN when too few impacts */
    double q_sd;           /* the standard error of each */
    double t_first_s, t_last_s; /* the stretches' centres (s) */
} pl_phys_lattice;

/* Fills out from the confirmed impacts of imp[0..m-1] and the plain
 * integral theta (rad, n samples at rate, before it is anchored to the
 * lattice).  -1 when out of memory. */
int pl_phys_lattice_clock(const pl_impact *imp, size_t m, const double *theta, size_t n,
                          double rate, int N, pl_phys_lattice *out);

/* The impacts' spacing found without the lattice: every drop of omega
 * om (the cleaned rotary speed, rad/s) over [from, to) that stands out as
 * a step (on 0.5 ms means: the 4 ms either side of a 1 ms gap), the
 * landing at its block's centre, and the median turn
 * of theta (the plain integral, rad) between neighbouring drops, in slots
 * of 2 pi / N.  The lattice walk adapts its spacing to the data by 10 %
 * at most, so with the notebook's N a quarter off it confirms the steps
 * that happen to fall near its slots and their spacing says little; this
 * one sees every landing.
 *
 * And the lattice's phase: between any two landings the prism turned a
 * whole number of slots, so a turn that is not whole, beside turns that
 * are, is time missing from (or added to) the file there - a converter's
 * dropped buffer in a file with no time column.  A spurious drop splits
 * one turn into two parts that add up to a whole one, and is passed. */
typedef struct {
    size_t drops;          /* drops found */
    double spacing;        /* their median spacing in slots; NaN: < 8 */
    size_t jumps;          /* turns a part of a slot off whole (over
                              PL_PHYS_JUMP_PART) */
    double jump_at_s;      /* the largest: the drop after it (s from the
                              recording's first sample), */
    double jump_part;      /* its turn less the nearest whole slots (in
                              slots, within +-0.5), */
    double jump_missing_s; /* and the time it stands for, taken as missing
                              (a part short, or the rest of the slot when
                              over: a converter drops buffers, none adds) */
} pl_phys_steps;

/* A turn this far from whole slots is a jump of the lattice's phase: the
 * drops' spacings scatter by 0.002 of a slot on the foreign runs. */
#define PL_PHYS_JUMP_PART 0.1

/* Fills out for om, theta over [from, to) at rate, N edges.  -1 when out
 * of memory. */
int pl_phys_step_spacing(const double *om, const double *theta, size_t from, size_t to,
                         double rate, int N, pl_phys_steps *out);

/* Whether the prism already turns at the first sample (a recording that
 * starts after the release): over v1[0..q), v2[0..q) (m/s, signs applied,
 * offsets not removed) both beams read the same omega, v1/h1 = v2/h2,
 * well above any decoder offset, and move together with the ratio
 * h1/h2.  Returns omega at the first sample (rad/s: the line through
 * their mean v/h over the q samples, at 0), or 0 when the lead-in is at
 * rest. */
double pl_phys_moving_at_start(const double *v1, const double *v2, size_t q,
                               double h1, double h2);

/* A second release in one file: after the first motion's end (from), a
 * stretch where both beams read the same omega (v/h within 20 % of each
 * other) above PL_PHYS_MOVING_OMEGA in every 20 ms block for
 * PL_PHYS_SECOND_S in a row: the prism rolling again, not speckle
 * garbage, which the two beams do not share.  v1, v2 (m/s, offsets
 * removed) over [from, n) at rate.  Returns where that stretch starts
 * (s), or NaN. */
double pl_phys_second_release(const double *v1, const double *v2, size_t from, size_t n,
                              double rate, double h1, double h2);

/* How long the prism must be seen rolling again (s). */
#define PL_PHYS_SECOND_S 0.5

/* The blocks the rolling test reads (s): short beside a slot of the
 * paper's prisms at speed, long beside a speckle drop-out (0.3-3 ms). */
#define PL_PHYS_BLOCK_S 0.02

/* Whether one block, where the beams read the rotary speeds w1 = v1 / h1
 * and w2 = v2 / h2 (the block's means, offsets removed, rad/s), shows the
 * prism rolling: both above PL_PHYS_MOVING_OMEGA and within 20 % of each
 * other.  pl_phys_second_release() and the release finder of a long
 * recording (process/releases.h) read motion by this one test. */
int pl_phys_rolling(double w1, double w2);

/* Whether such a block shows the prism at rest: both beams' |w| below
 * PL_PHYS_MOVING_OMEGA (a decoder's offset reads a few mm/s at most). */
int pl_phys_still(double w1, double w2);

#endif
