/* process/online.h - the impact search while the prism rolls.
 *
 * The recorder hands over the two velocities as they arrive; every look
 * runs offline processing itself (process.h: release, front end, omega,
 * the lattice's impact search) on a window of the run, and reports the
 * impacts that the window has settled since the last look.  A look is:
 *
 *   whole    until the run holds its release and a window of motion
 *            after it: the run so far (its quiet lead-in capped at
 *            lead_s before the release), exactly as `process` sees a
 *            short run;
 *   spliced  after that: the lead-in [release - lead_s, release) with the
 *            newest window_s of the run after it, joined as a long run's
 *            segments are (process_long.c, pl_frontend_splice): the same
 *            offsets, hum and noise, the first looks' cut-off and slope.
 *
 * An impact is reported once, when it lies guard_s or more before the
 * newest sample (the arcs after it measured, its neighbours seen), and
 * never revised: the live result is a view.  What is stored stays what
 * offline processing writes at the stop; docs/process.md, "Online", says
 * where the two differ and by how much.  L_p is carried from look to
 * look at the impacts: each look's theta, anchored on its impacts, gives
 * the slots from the last impact reported to each new one.
 *
 * Cost: a look processes lead_s + window_s of samples, whatever the
 * run's length, so its time is bounded and the caller chooses how often
 * to look (the recorder's live thread looks at most every look_s and
 * less often when it falls behind: acquire/live.h).
 *
 * Units: SI.  Threading: one handle on one thread at a time; handles
 * share nothing. */
#ifndef PL_PROCESS_ONLINE_H
#define PL_PROCESS_ONLINE_H

#include "core/error.h"
#include "process/process.h"

#include <stddef.h>

typedef struct {
    double rate_hz;          /* samples per second per channel */
    double h_m[2];           /* beam heights (they differ) */
    int N;                   /* the prism's edges */
    pl_process_config proc;  /* as offline: the ramp's slope, a0, the ramp's
                                length, the decoders' delay (threads is
                                taken as 1: a look keeps to its thread) */
    double lead_s;           /* the quiet lead-in a look keeps before the
                                release (1 s) */
    double window_s;         /* motion a spliced look processes (1.5 s) */
    double guard_s;          /* an impact is reported once the run holds
                                this much after it (0.015 s) */
} pl_online_config;

/* Defaults for all but rate_hz, h_m, N and proc's run-specific fields
 * (proc gets pl_process_config_default()'s values). */
void pl_online_config_default(pl_online_config *cfg);

typedef struct pl_online pl_online;

/* An impact as a look reports it: time on the run's clock (s from its
 * first frame, the contact when the decoders' delay is known, as
 * offline), omega before and after (rad/s), their ratio and its
 * standard error, L_p at the impact, confirmed as offline, and the run's
 * frame at t_s (for the caller's latency). */
typedef struct {
    double t_s, omega_minus, omega_plus, ratio, ratio_se, lp;
    int confirmed;
    long long frame;
} pl_online_impact;

enum { PL_ONLINE_FINDINGS = 1024 };

/* What one look found that the last did not. */
typedef struct {
    const pl_online_impact *impacts;   /* new ones, in time order; valid
                                          until the next look */
    size_t n_impacts;
    char findings[PL_ONLINE_FINDINGS];  /* new quality findings of the
                                           run, one a line, in
                                           db/derived.h's fault words,
                                           times on the run's clock;
                                           "" for none) */
    /* omega (4.1, filtered as offline) and L_p every track_dt_s from
     * track_t0_s, over the stretch this look settled: track_n values
     * each, valid until the next look */
    double track_t0_s, track_dt_s;
    const double *track_omega, *track_lp;
    size_t track_n;
    double release_t;        /* the release on the run's clock; NaN: not
                                found yet */
    int looked;              /* 0: nothing to look at yet (no motion, or
                                too little since the release) */
    int ended;               /* 1: this look saw the motion end (the prism
                                left the beams); a later look may see it go
                                on (looks never stop on it) */
    long long frames;        /* the run's frames the look saw */
} pl_online_news;

/* A handle for one run.  PL_EINVAL naming the field for a bad config. */
pl_status pl_online_create(pl_online **out, const pl_online_config *cfg, pl_err *err);

/* Frees the handle (NULL is fine). */
void pl_online_destroy(pl_online *o);

/* Appends the next n frames of the two downhill velocities (m/s).
 * PL_ENOMEM only. */
pl_status pl_online_push(pl_online *o, const double *v1, const double *v2, size_t n,
                         pl_err *err);

/* Looks at the run so far.  final: the run has ended, so impacts up to
 * its last sample are reported (no guard).  A window that processing
 * refuses is no error: the look reports nothing new, and the refusal's
 * words become a finding once.  PL_ENOMEM, or PL_EOVERRUN when frames
 * after the last impact reported left the buffer before a look saw them
 * (looks seconds apart): the search can no longer see every impact. */
pl_status pl_online_look(pl_online *o, int final, pl_online_news *news, pl_err *err);

/* Impacts reported so far. */
size_t pl_online_count(const pl_online *o);

#endif
