/* acquire/watch.h - following the live search from outside the daemon
 * (`prismlab acquire watch`): a client of the daemon's stream
 * (acquire/daemon.h, `stream`) that hands on its events (the "E" lines,
 * acquire/live.h) and passes over the viewer's own lines (D, S), counting
 * what the daemon says this client lost (G); and a readable line per
 * event.
 *
 * The daemon drops a stream client that takes nothing for 10 s, so the
 * caller reads on without long pauses; lines are read as they come, each
 * whole before it is handed on.  No state outside the handle.
 */
#ifndef PL_ACQUIRE_WATCH_H
#define PL_ACQUIRE_WATCH_H

#include "core/error.h"

#include <signal.h>
#include <stddef.h>

typedef struct pl_watch pl_watch;

/* Connects to the daemon at socket_path, asks for its stream and returns
 * once the daemon has said yes: the events of a run armed after are all
 * seen.  PL_EIO
 * naming the socket and how to start a daemon when none answers; PL_ESTATE
 * with the daemon's words when it refuses (as many viewers as it serves
 * already). */
pl_status pl_watch_open(pl_watch **out, const char *socket_path, pl_err *err);

/* Closes the connection. */
void pl_watch_close(pl_watch *w);

/* The next event: its JSON object in *json (valid until the next call),
 * waiting at most timeout_s for it (<= 0: as long as it takes).  *lost:
 * the stream lines the daemon dropped for this client since the last call
 * (events may be among them).  When *stop becomes set (stop may be NULL)
 * it returns PL_OK with *json NULL.  PL_ESTATE saying so when no event
 * came in timeout_s; PL_EIO when the daemon closed the stream (it quit)
 * or the connection failed; PL_EFORMAT when a line outgrows 1 MiB. */
pl_status pl_watch_next(pl_watch *w, double timeout_s, volatile sig_atomic_t *stop,
                        const char **json, long long *lost, pl_err *err);

/* The event named "event" in json, into kind (kind_size bytes): 1, or 0
 * when json names none. */
int pl_watch_kind(const char *json, char *kind, size_t kind_size);

/* The readable line (without newline) for the event json into line: 1,
 * or 0 for an event that has none (track: its arrays are for plots) or
 * that is not an event. */
int pl_watch_format(const char *json, char *line, size_t size);

#endif
