/* acquire/daemon.h - the recording daemon: a rig that is always ready.
 *
 * One process owns the rig's database (the recorder lock) and its source,
 * and is driven over a Unix socket by one-line text commands:
 *
 *   arm     open the source and wait for the prism's release: frames go
 *           into a pre-trigger ring (default 0.5 s); when either channel's
 *           velocity leaves its resting level by more than the threshold
 *           (default 1 mm/s) for 1 ms, a run begins with the pre-trigger
 *           frames as its first frames (run.pretrigger_frames);
 *   start   begin a run now (from armed: with the pre-trigger frames);
 *   stop    end the run (state complete) and close the source;
 *   status  one line: state, run, frames, ring fill, overruns, the
 *           live search's words (live=, live_run=, live_impacts=:
 *           acquire/live.h), the pipeline's words, dropped= (runs its full
 *           queue turned away), unfinished= (the daemon's runs without
 *           processing or verdict that it will not do), unmarked= (runs
 *           whose final state waits for disk space), and "error=<cause>"
 *           after a commit failed (a
 *           full disk: the run is stopped at once, overrun where its
 *           stored frames end; when even that mark cannot be stored, it is
 *           retried once a second);
 *   stream  the connection becomes a live stream: per block read, the
 *           min/max of both velocities each millisecond ("D" lines), the
 *           state every 0.5 s ("S"), the live impact search's events
 *           ("E" and a JSON object: acquire/live.h), lines lost to a slow
 *           client ("G"); a bounded queue per client, never waited on
 *           (docs/acquire.md);
 *   quit    end any run cleanly and exit (`prismlab acquire quit`).
 *
 * While a run records, the impact search runs on the incoming samples on
 * a thread of its own ([live] in the rig file, on by default when [run]
 * names a prism of the catalogue: acquire/live.h); the recording never
 * waits on it.
 *
 * With [pipeline] after_run in the rig file, each run that stops is handed
 * to the after-run pipeline (acquire/pipeline.h): processed and validated
 * by child processes while the daemon serves on; status and the stream's
 * S line end with its words (pipeline=..., verdict_run=...).  The daemon
 * enters each run it begins in its book (db/daemon_run.h) with how its
 * pipeline ended; at start it takes up those an earlier daemon left
 * without processing or validation: queued again, or named with the
 * pipeline off.
 *
 * A run also ends after the configured duration, when the signal has been
 * still for still_s after motion (the prism left the beams), or when the
 * source ends (a simulated run).  SIGTERM/SIGINT end the run cleanly and
 * exit.  Replies are one line starting "ok" or "error".
 *
 * Threading: the daemon's loop runs on the caller's thread (plus the
 * writer's own thread); the socket is served between source reads, which
 * block at most ~100 ms, without ever waiting on a client (non-blocking
 * sockets, bounded per-client buffers, a client slower than 2 s dropped).
 * A client flooding the socket with connections cannot crowd out a
 * command: each is served as it is accepted, and when the slots are full
 * the longest-held one without a whole line makes room.
 * Only the daemon's own user may send quit (SO_PEERCRED); a socket path
 * holding anything but a stale socket is refused, never removed.
 */
#ifndef PL_ACQUIRE_DAEMON_H
#define PL_ACQUIRE_DAEMON_H

#include "acquire/record.h"
#include "acquire/rigconf.h"

#include <signal.h>

typedef struct {
    const char *socket_path;     /* the control socket */
    double pretrigger_s;         /* 0.5 */
    double threshold_mps;        /* 1e-3: motion */
    double still_s;              /* 0.5: after motion, this long still ends a run */
    volatile sig_atomic_t *stop; /* set by SIGTERM/SIGINT */
    void (*log)(void *ctx, const char *line);   /* one line per event */
    void *log_ctx;
    const char *notice;          /* logged once when the daemon holds the rig
                                    (NULL: none): what the rig file asks that
                                    the user may not expect */
} pl_daemon_options;

/* Serves the rig described by rc, whose source is opened from source at
 * every arm or start, until quit or *opt->stop.  Returns the first error
 * that ended it (PL_OK for a clean exit). */
pl_status pl_daemon_run(const pl_rigconf *rc, const pl_source_spec *source,
                        const pl_daemon_options *opt, pl_err *err);

/* The daemon's framing of what a client sends, apart so that it can be
 * tested and fuzzed: appends data[0..n) to the client's buffer in (*len
 * bytes used of size); when a line is whole, copies it without its CR/LF
 * into line (line_size bytes) and returns 1; returns 0 when more is
 * needed and -1 when the line outgrows the buffer (the client is told and
 * dropped). */
int pl_daemon_take_line(char *in, size_t *len, size_t size, const char *data,
                        size_t n, char *line, size_t line_size);

/* A connection to the daemon at socket_path (blocking, close-on-exec)
 * into *fd.  PL_EIO naming the socket and how to start a daemon when none
 * answers, or whose socket it is when this user may not use it. */
pl_status pl_daemon_connect(const char *socket_path, int *fd, pl_err *err);

/* Sends one command line to the daemon at socket_path and copies its reply
 * (one line, without the newline) into reply. */
pl_status pl_daemon_command(const char *socket_path, const char *command,
                            char *reply, size_t size, pl_err *err);

/* Waits until nothing answers on socket_path any more (a daemon told to
 * quit has closed its run, released the database and removed its socket),
 * at most timeout_s: PL_ESTATE naming the socket past it. */
pl_status pl_daemon_wait_gone(const char *socket_path, double timeout_s,
                              pl_err *err);

#endif
