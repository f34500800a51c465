/* web/connguard.h - whole-request deadlines and room for new clients on
 * the HTTP server.
 *
 * libmicrohttpd's own timeout is one of inactivity: a client that sends a
 * header line every few seconds keeps its connection (and, with a thread
 * per connection, its thread) for ever, and 32 of them used to fill the
 * per-IP limit every local browser shares (issue 31, D4).  The guard
 * watches each connection from accept: a connection that has not sent a
 * whole request (headers and body) within the deadline is shut down, and
 * so is one left idle between requests that long.  Connections waiting
 * for a request are also capped: a new one past the cap shuts down the
 * one that has waited longest, so slow clients can never hold the places
 * a new client needs.  A request being answered (a page, a live stream) is
 * never cut.
 *
 * A sweeping thread does the shutting down, on a dup() of each socket
 * taken at accept, so it never touches a descriptor number libmicrohttpd
 * may meanwhile have closed and reused; shutdown() wakes the connection's
 * thread, which sees the end of the stream and closes it.
 */
#ifndef PL_WEB_CONNGUARD_H
#define PL_WEB_CONNGUARD_H

#include "core/error.h"

#include <microhttpd.h>

typedef struct pl_connguard pl_connguard;

/* Starts the guard's thread: deadline_s for a whole request, at most
 * max_waiting connections waiting for one. */
pl_status pl_connguard_create(pl_connguard **out, double deadline_s, int max_waiting,
                              pl_err *err);

/* Stops the thread and frees the guard (after MHD_stop_daemon, which has
 * reported every connection closed); NULL is a no-op. */
void pl_connguard_destroy(pl_connguard *g);

/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the guard): follows each
 * connection from accept to close. */
void pl_connguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode code);

/* The access handler's call when a request has arrived whole: from here
 * on it is answered, not timed. */
void pl_connguard_request_whole(struct MHD_Connection *c);

/* MHD_OPTION_NOTIFY_COMPLETED's part: the response is done, the
 * connection waits for its next request, timed again from now. */
void pl_connguard_request_done(struct MHD_Connection *c);

/* Connections shut down so far for their deadline, and to make room
 * (counters for tests and the log). */
void pl_connguard_counts(pl_connguard *g, long long *deadline, long long *evicted);

#endif
