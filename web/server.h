/* web/server.h - `prismlab serve`: the lab in a browser.
 *
 * An HTTP server (GNU libmicrohttpd, a thread per connection) over one
 * database: the runs, a run's zoomable plots, an experiment's validation
 * report, and the live view of the recording daemon.  Pages are HTML
 * built here (every string from the store escaped), plots are drawn in
 * the browser by uPlot from the JSON endpoints; every file the browser
 * gets is compiled into the binary (web/static/, web/vendor/uplot/), so
 * nothing on disk but the database is served and nothing comes from
 * another host.
 *
 * Read-only unless control is on: then POST /api/control/{arm,start,stop}
 * sends the daemon its command, when the request carries the token made
 * at start-up (header X-Prismlab-Token).  docs/web.md lists every URL.
 */
#ifndef PL_WEB_SERVER_H
#define PL_WEB_SERVER_H

#include "core/error.h"

#include <stddef.h>

typedef struct {
    const char *db;           /* the database (must exist) */
    const char *listen;       /* "HOST:PORT" (IPv4 or [IPv6]); port 0: any free one */
    const char *socket;       /* the daemon's socket; NULL: <db>.sock */
    int control;              /* 1: arm/start/stop allowed (with the token) */
    double request_deadline_s; /* a whole request, from accept; 0: the default */
} pl_web_options;

/* Hostile clients (docs/web.md): a request must arrive whole, headers and
 * body, within PL_WEB_REQUEST_DEADLINE_S of its connection's accept (or
 * of the end of the connection's last response); at most
 * PL_WEB_MAX_WAITING connections wait for a request, a new one past that
 * cutting the one that has waited longest; PL_WEB_MAX_CONNECTIONS in all. */
#define PL_WEB_REQUEST_DEADLINE_S 10.0
enum { PL_WEB_MAX_WAITING = 32, PL_WEB_MAX_CONNECTIONS = 128 };

typedef struct pl_web pl_web;

/* Opens the database, binds the address and starts serving on threads of
 * its own.  PL_EINVAL for a malformed address, PL_EIO when it cannot be
 * bound (the message names it). */
pl_status pl_web_start(pl_web **out, const pl_web_options *opt, pl_err *err);

/* Stops serving (open streams end within a second) and frees everything;
 * NULL is a no-op. */
void pl_web_stop(pl_web *web);

/* The address served, as a URL ("http://127.0.0.1:8080/"). */
const char *pl_web_url(const pl_web *web);

/* The control token (32 hex digits; "" when control is off). */
const char *pl_web_token(const pl_web *web);

/* Parses "HOST:PORT" into host (size bytes) and port; PL_EINVAL naming
 * what is wrong.  "[::1]:8080" for IPv6; a bare ":8080" means 127.0.0.1. */
pl_status pl_web_parse_listen(const char *text, char *host, size_t size,
                              int *port, pl_err *err);

#endif
