/* tests/util/livestream.h - a client of the recording daemon's live
 * stream (the `stream` command of acquire/daemon.h): its D, S, G and E
 * lines as they come, for the tests and benches of the live search
 * (acquire/live.h's events are the E lines). */
#ifndef PL_TESTS_LIVESTREAM_H
#define PL_TESTS_LIVESTREAM_H

#include <stddef.h>

/* Connects to the daemon's socket sock, retrying for up to wait_s while
 * the daemon starts, and asks for its stream: the descriptor, or -1. */
int tu_stream_open(const char *sock, double wait_s);

/* Sends the one-line command cmd to the daemon on sock and waits up to
 * wait_s for its reply line (into reply, newline removed): 0, or -1.
 * `prismlab acquire` waits 5 s; a simulated source of half an hour takes
 * longer than that to render when arm opens it. */
int tu_daemon_ask(const char *sock, const char *cmd, char *reply, size_t size, double wait_s);

/* Reads fd's lines as fast as they come (a slow client loses lines) and
 * calls fn with each, its newline removed, until fn returns nonzero (that
 * value is returned), the stream ends or limit_s pass (0). */
int tu_stream_read(int fd, double limit_s, int (*fn)(void *ctx, const char *line), void *ctx);

/* The number after "key": in a JSON line, NAN when absent or null. */
double tu_json_num(const char *line, const char *key);

/* 1 when line is the E line of an event of that kind. */
int tu_is_event(const char *line, const char *kind);

#endif
