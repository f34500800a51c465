/* process/lattice_core.h - what every room of the impact search
 * (process/lattice*.c) shares: the walk's state, the slot, the ringing's
 * shape, the per-impact passes shared between threads, theta and time,
 * and the small Cholesky solves.  Internal to process/lattice*.c and
 * their tests; process/lattice.h is the interface.
 *
 * The rooms, in the order pl_lattice_find() runs them (lattice.h and
 * docs/process.md section 4 give the method):
 *   lattice_walk.c    the step statistic D, the seeds, the walk
 *   lattice_arcs.c    one slot's step: the arcs and the equal-area instant
 *   lattice_ring.c    the ringing: detection, refinement, onsets
 *   lattice_settle.c  after the walk: the ringing taken out, the gap
 *                     narrowed, the slot past the last
 *   lattice_smooth.c  the slots' angles smoothed along the lattice
 *   lattice_tops.c    the arcs' tops: the ramp's slope, the one shift
 *   lattice_eval.c    the impacts: instants, speeds, ratios
 *   lattice_delay.c   the decoder's delay on the stacked steps (when
 *                     asked: pl_lattice_config.to_contact)
 *
 * Units: samples and rad inside (the walk's rate turns them into s). */
#ifndef PL_PROCESS_LATTICE_CORE_H
#define PL_PROCESS_LATTICE_CORE_H

#include <math.h>
#include <stddef.h>

/* Powers of the ringing fit's cubic whose sums pl_lat_ring_joint() takes from a
 * table: x^0 .. x^6. */
enum { RJ_POW = 7 };

/* The run's ringing: a decaying sinusoid after each impact, its shape
 * the same for every impact (from the stack, in units of the step), its
 * size each impact's own. */
typedef struct {
    double w, tau;           /* rad/sample, samples; w = 0: none */
    double a, b;             /* sin, cos coefficients from the onset */
    double onset;            /* samples from the instant */
} ringing;

/* The search's state, shared by every room: the signal, the windows in
 * samples, the noise, the ringing found so far.  The passes after the
 * walk get a copy each (pl_lat_for_slots()), with its own scratch. */
typedef struct {
    double *om;                     /* the detection signal; ringing found is
                                       subtracted from it in place */
    const double *theta;
    size_t n, release, end, g, w;   /* g, w: D's gap and window, samples */
    size_t G, W;                    /* arc fits: gap and longest window */
    double rate, delta, conf, noise_d, noise_om;
    ringing ring;
    double *scratch;                /* 4 W + 64 doubles for the ringing's loops */
    int threads;                    /* for the per-impact passes; 0: one per CPU */
    const double *powsum;           /* [n * RJ_POW + p]: sum_{j<n} (j/n)^p, n <= W */
    size_t quiet;                   /* the lead-in [0, quiet) gives D's noise
                                       (lead_in_d_noise()) */
    int end_seen;                   /* end is where the prism left the beams,
                                       seen in the data (pl_lattice_config) */
} walk;

/* A per-impact pass over slots [a, b) on a copy of the walk with its own
 * scratch buffer: the passes after the walk (ringing, re-location,
 * evaluation) treat each impact on its own, so they are shared between
 * threads in contiguous ranges and give the same result on any count. */
typedef void (*slot_pass)(walk *wk, size_t a, size_t b, void *ctx);

/* One lattice slot. */
typedef struct {
    long k;                  /* index from the seed */
    double tc;               /* instant, samples (fractional) */
    double theta, var_theta; /* measured angle there and its variance */
    double z;                /* D peak / its noise */
    int confirmed, measured;
    double ring_amp, ring_t; /* ringing subtracted: size, start (samples) */
    double next_amp, next_t; /* the same, found for the next pass */
    double step;             /* the step measured, rad/s */
    int dropped;             /* measured, then dropped by pl_lat_smooth_phase() */
} slot;

/* A growing array of slots (the walk's, the candidates of each seed). */
typedef struct {
    slot *v;
    size_t n, cap;
} slots;

/* Walks, passes and fits all say where they are in samples and ask
 * the angle there: theta between samples, linearly, held at the ends.
 * Inline: the arcs evaluate it on every sample of every fit. */
static inline double theta_at(const walk *wk, double t)
{
    if (t <= 0)
        return wk->theta[0];
    size_t i = (size_t)t;
    if (i + 1 >= wk->n)
        return wk->theta[wk->n - 1];
    double f = t - (double)i;
    return wk->theta[i] + f * (wk->theta[i + 1] - wk->theta[i]);
}

/* The small normal equations of the arcs, the ringing and the tops (3 to
 * 6 unknowns, one system per impact and pass) are factored here rather
 * than by GSL's Cholesky: GSL reports a matrix that is not positive
 * definite through its error handler, one for the whole process, which
 * the per-impact threads can neither rely on being off nor switch off and
 * on; and at this size its general driver costs more than the sums. */
enum { CHOL_MAX = 8 };

/* The lower Cholesky factor of the n x n symmetric A (row-major, n <=
 * CHOL_MAX; the lower triangle read) in place; -1 at a pivot that is not
 * positive. */
static inline int chol_factor(double *A, int n)
{
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (int k = 0; k < j; k++)
            d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0))
            return -1;
        d = sqrt(d);
        A[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (int k = 0; k < j; k++)
                s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / d;
        }
    }
    return 0;
}

/* x = A^-1 b for A = L L' with L the lower triangle of l (n x n). */
static inline void chol_solve_n(const double *l, int n, const double *b, double *x)
{
    double y[CHOL_MAX];
    for (int i = 0; i < n; i++) {
        double s = b[i];
        for (int j = 0; j < i; j++)
            s -= l[i * n + j] * y[j];
        y[i] = s / l[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = y[i];
        for (int j = i + 1; j < n; j++)
            s -= l[j * n + i] * x[j];
        x[i] = s / l[i * n + i];
    }
}

/* x' A^-1 x for A = L L' (n x n): |L^-1 x|^2, the forward half of a
 * solve (a variance of a fitted value, asked for on every slot). */
static inline double chol_quad(const double *l, int n, const double *x)
{
    double y[CHOL_MAX], q = 0;
    for (int i = 0; i < n; i++) {
        double s = x[i];
        for (int j = 0; j < i; j++)
            s -= l[i * n + j] * y[j];
        y[i] = s / l[i * n + i];
        q += y[i] * y[i];
    }
    return q;
}

/* Runs fn over slots [0, m) in contiguous ranges on up to wk->threads
 * threads (0: one per CPU, at most 8, none under 256 slots each), each on
 * a copy of *wk with its own scratch: the per-impact passes cost most of
 * a long run's time, and a range each keeps the result the same on any
 * count.  A thread that cannot start has its range run here. */
void pl_lat_for_slots(const walk *wk, size_t m, slot_pass fn, void *ctx);

/* The first time (samples) theta reaches th, searched from sample `from`
 * forwards (dir > 0) or backwards; NAN when it does not within the
 * window.  Near rest noise makes theta wander, so the first crossing in
 * the walk's direction is the one meant. */
double pl_lat_time_of_theta(const walk *wk, double th, size_t from, int dir);

/* Appends x to s, growing it by doubling; -1 when out of memory (s is
 * left as it was). */
int pl_lat_push(slots *s, slot x);

#endif
