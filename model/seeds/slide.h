/* model/seeds/slide.h - one run of `prismlab roughplane` as its options
 * give it (seed 003: a particle or a rigid body sliding on a plane): the
 * option table's rows, the checks a body needs beyond them, and the run.
 * The command and sweeps of it (model/sweep/) share these, so a sweep
 * file names the parameters as the command does and is refused by the
 * same words.
 */
#ifndef PL_MODEL_SLIDE_H
#define PL_MODEL_SLIDE_H

#include "core/cli.h"
#include "core/error.h"
#include "model/seeds/body.h"
#include "model/seeds/roughplane.h"

#include <stddef.h>

/* What the options give. */
typedef struct {
    int body;                 /* a pl_body_kind, or -1: the particle */
    int friction;             /* a pl_friction */
    int hack;
    pl_body b;
    pl_plane plane;
    double masses[2];         /* --masses: the pair's, kept apart from
                                 --particle's until the body is known */
    double vx, vy, w0, th0, phi, dur, eps;
} pl_slide;

/* Nothing given: the particle, rough friction, mu and v0 missing (NaN), a
 * flat plane, 10 s, eps 1e-3. */
void pl_slide_init(pl_slide *s);

/* The names of --body (-1: the particle) and --friction. */
extern const pl_opt_choice pl_slide_bodies[];
extern const pl_opt_choice pl_slide_frictions[];

/* --particle M,X,Y: appends one particle to the pl_body at opt->dest. */
pl_status pl_slide_parse_particle(const pl_opt *opt, const char *text, pl_err *err);

/* The option table's rows (all but --csv and --plot). */
#define PL_OPT_ROUGHPLANE_PARAMS(s)                                          \
    PL_OPT_CHOICE("body", &(s)->body, pl_slide_bodies, "KIND",              \
                  "particle (default), pair,\nparticles, rod, board or box"), \
    PL_OPT_CHOICE("friction", &(s)->friction, pl_slide_frictions, "rough|viscous", \
                  "default rough"),                                          \
    PL_OPT_DOUBLE("mu", &(s)->plane.mu, 0, 1e6, "MU",                       \
                  "Coulomb's coefficient, or alpha (1/s) when viscous"),   \
    PL_OPT_PAIR("v0", &(s)->vx, &(s)->vy, "VX,VY",                          \
                "the centre's velocity at the start, m/s"),                \
    PL_OPT_DOUBLE("omega0", &(s)->w0, -1e6, 1e6, "W", "the spin at the start, rad/s"), \
    PL_OPT_DOUBLE("theta0-deg", &(s)->th0, -1e6, 1e6, "T", "the orientation at the start"), \
    PL_OPT_FLAG("hack", &(s)->hack, "the decoupled model"),                 \
    PL_OPT_DOUBLE("mass", &(s)->b.mass, -1e9, 1e9, "KG", "rod, board, box: the mass"), \
    PL_OPT_PAIR("masses", &(s)->masses[0], &(s)->masses[1], "M1,M2", "pair: the two masses"), \
    PL_OPT_CALLBACK("particle", &(s)->b, pl_slide_parse_particle, "M,X,Y",  \
                    "particles: one of them (kg, m, m)"),                  \
    PL_OPT_DOUBLE("length", &(s)->b.length, -1e9, 1e9, "M", "pair, rod, board, box"), \
    PL_OPT_DOUBLE("width", &(s)->b.width, -1e9, 1e9, "M", "board, box"),    \
    PL_OPT_DOUBLE("height", &(s)->b.height, -1e9, 1e9, "M", "box"),         \
    PL_OPT_DOUBLE("phi-deg", &(s)->phi, 0, 89.99, "PHI", "the slope (default 0)"), \
    PL_OPT_DOUBLE("duration", &(s)->dur, 1e-6, 1e6, "S", "default 10 s"),   \
    PL_OPT_DOUBLE("eps", &(s)->eps, 0, 1e6, "M_S", "viscous: at rest below (default 1e-3)")

/* What a body needs beyond its options' ranges (--mu and --v0 given; no
 * spin for the particle; the pair's masses, two particles at least), and
 * the plane from --friction and --phi-deg.  PL_EINVAL says what is
 * missing, in the command's words. */
pl_status pl_slide_check(pl_slide *s, pl_err *err);

/* The run after pl_slide_check(); n samples of the path at equal steps
 * of the duration go to t and path (n 0: none; for the bodies the
 * samples' instants are integration stops, as the command's --csv). */
pl_status pl_slide_run(const pl_slide *s, size_t n, double *t,
                       pl_body_state *path, pl_body_end *e, pl_err *err);

/* The body's name ("particle", "rod", ...). */
const char *pl_slide_body_name(const pl_slide *s);

#endif
