/* acquire/live.h - the daemon's view of the physics while the prism rolls:
 * the online impact search (process/online.h) on a thread of its own,
 * fed the velocities as they are recorded, its results as events.
 *
 * The recording never waits on it: pl_live_push() copies a block into a
 * bounded queue and returns.  The thread takes what is queued and looks
 * (pl_online_look()) as often as its share of one core allows: a look
 * that took c seconds of CPU is followed by the next no sooner than
 * c / cpu_share later (and never sooner than min_look_s), so a busy
 * machine slows the looks, not the recording; each change of the pace by
 * half or more is an event ("pace").  When the queue fills all the same
 * (the looks fell max_behind_s behind) the search pauses for the rest of
 * the run and says so ("paused"); the recording keeps every frame and the
 * run is processed whole at the stop, as always.
 *
 * Events are JSON objects, one a line, each with "event", "run" and
 * "wall_ms" (Unix ms when it was made):
 *
 *   start    rate_hz, N, h1_m, h2_m, live (true, or false with why)
 *   release  t_s: the prism's release on the run's clock
 *   impact   t_s, omega_minus, omega_plus, ratio, ratio_se, lp, confirmed,
 *            latency_s: the wall time from the arrival of the sample at
 *            t_s (its block read from the card) to the event
 *   track    t0_s, dt_s, omega[], lp[]: the rotary speed and L_p over the
 *            stretch a look settled, every dt_s
 *   finding  kind, text: a quality finding (db/derived.h's fault words)
 *            the first time the run shows it
 *   pace     look_s, why: the looks' new interval
 *   paused   behind_s, why
 *   stop     frames, impacts, lp, ratio_mean, ratio_sd, looks, cpu_s,
 *            latency_median_s, paused, events_lost (events the daemon's
 *            loop had no room for: it stalled for a megabyte of them), why:
 *            the run ended and the search with it (a run not searched has
 *            its stop too, with 0 impacts)
 *
 * The daemon sends each as an "E <json>" line to its stream clients
 * (acquire/daemon.h); `prismlab acquire watch` prints them.
 *
 * Threading: one thread of its own; the functions below are called from
 * one other thread (the daemon's loop). */
#ifndef PL_ACQUIRE_LIVE_H
#define PL_ACQUIRE_LIVE_H

#include "acquire/source.h"
#include "core/error.h"
#include "db/store.h"
#include "process/online.h"

#include <stddef.h>

typedef struct {
    double cpu_share;        /* the most of one core the looks take (0.2) */
    double min_look_s;       /* looks at most this often (0.05 s) */
    double max_behind_s;     /* the queue: this much data unlooked pauses the
                                search for the run (10 s) */
} pl_live_options;

/* The defaults above. */
void pl_live_options_default(pl_live_options *opt);

typedef struct pl_live pl_live;

/* Starts the search's thread.  PL_ENOMEM, or PL_EIO naming the cause
 * when the thread or its wake-up pipe cannot be made. */
pl_status pl_live_create(pl_live **out, const pl_live_options *opt, pl_err *err);

/* Ends the run searched (without its last look) and the thread. */
void pl_live_destroy(pl_live *lv);

/* A run begins: searched with cfg, or (cfg NULL) not, off saying why
 * (its start event says so).  A run still being searched is cut short
 * (its stop event says so).  PL_ENOMEM only. */
pl_status pl_live_begin(pl_live *lv, long long run, const pl_online_config *cfg,
                        const char *off, pl_err *err);

/* The next n frames of the run's two downhill velocities (m/s), read at
 * Unix time wall_s.  Never waits: past the queue's room the search
 * pauses (above). */
void pl_live_push(pl_live *lv, const double *v1, const double *v2, size_t n, double wall_s);

/* The run's frames are all pushed; why it ended (for its stop event).
 * The thread takes its last look and sends the stop event. */
void pl_live_end(pl_live *lv, const char *why);

/* Calls fn with each event line made since the last call ("E {...}\n",
 * n bytes with the newline), oldest first. */
void pl_live_drain(pl_live *lv, void (*fn)(void *ctx, const char *line, size_t n), void *ctx);

/* The search of a run of prism on ramp (names in catalog's catalogue)
 * recorded as info says, into cfg: 1 when it can be searched, else 0
 * with off saying why (no prism named or known, fewer than two
 * channels). */
int pl_live_run_config(pl_store *catalog, const char *prism, const char *ramp,
                       const pl_source_info *info, pl_online_config *cfg, char *off,
                       size_t off_size);

/* The search's words for the daemon's status, into buf: "live=off" (lv
 * NULL: [live] search = off), or live=idle|searching|paused|off (off: the
 * run is not searched, its start event says why) with live_run= and
 * live_impacts= (reported so far) once a run began. */
void pl_live_describe(pl_live *lv, char *buf, size_t size);

/* A descriptor that is readable while events wait (for poll()). */
int pl_live_fd(const pl_live *lv);

#endif
