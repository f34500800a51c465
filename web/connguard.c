/* web/connguard.c - whole-request deadlines.  See connguard.h. */
#include "web/connguard.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct entry {
    struct entry *prev, *next;
    struct pl_connguard *g;
    int fd;                /* our dup of the socket; -1 once shut down */
    double since;          /* accepted, or its last response done (monotonic s) */
    int answering;         /* a whole request is being answered: not timed */
} entry;

struct pl_connguard {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t thread;
    int stopping;
    double deadline_s;
    int max_waiting;
    entry *head;
    long long n_deadline, n_evicted;
};

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Under the lock. */
static void cut(entry *e)
{
    if (e->fd >= 0) {
        shutdown(e->fd, SHUT_RDWR);
        close(e->fd);
        e->fd = -1;
    }
}

static void *sweeper(void *arg)
{
    pl_connguard *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stopping) {
        double now = mono_s();
        for (entry *e = g->head; e; e = e->next)
            if (e->fd >= 0 && !e->answering && now - e->since > g->deadline_s) {
                cut(e);
                g->n_deadline++;
            }
        /* a quarter of a second: a deadline is kept to within that */
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 250000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->wake, &g->mu, &t);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

pl_status pl_connguard_create(pl_connguard **out, double deadline_s, int max_waiting,
                              pl_err *err)
{
    *out = NULL;
    pl_connguard *g = calloc(1, sizeof *g);
    if (!g)
        return pl_err_set(err, PL_ENOMEM, "connection guard: out of memory");
    g->deadline_s = deadline_s;
    g->max_waiting = max_waiting < 1 ? 1 : max_waiting;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->wake, NULL);
    if (pthread_create(&g->thread, NULL, sweeper, g) != 0) {
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->wake);
        free(g);
        return pl_err_set(err, PL_ENOMEM, "connection guard: cannot start its thread");
    }
    *out = g;
    return PL_OK;
}

void pl_connguard_destroy(pl_connguard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->stopping = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    /* libmicrohttpd has reported every connection closed; anything left
     * would be its leak, not a connection */
    for (entry *e = g->head, *n; e; e = n) {
        n = e->next;
        cut(e);
        free(e);
    }
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->wake);
    free(g);
}

/* Under the lock: makes room for one more waiting connection by cutting
 * the one that has waited longest, when max_waiting are waiting. */
static void make_room(pl_connguard *g)
{
    int waiting = 0;
    entry *oldest = NULL;
    for (entry *e = g->head; e; e = e->next) {
        if (e->fd < 0 || e->answering)
            continue;
        waiting++;
        if (!oldest || e->since < oldest->since)
            oldest = e;
    }
    if (waiting >= g->max_waiting && oldest) {
        cut(oldest);
        g->n_evicted++;
    }
}

void pl_connguard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode code)
{
    pl_connguard *g = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        entry *e = calloc(1, sizeof *e);
        /* Without memory or a descriptor the connection goes unguarded:
         * libmicrohttpd's inactivity timeout still ends it. */
        if (!e || !ci)
            goto unguarded;
        e->g = g;
        e->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0);
        if (e->fd < 0)
            goto unguarded;
        e->since = mono_s();
        pthread_mutex_lock(&g->mu);
        make_room(g);
        e->next = g->head;
        if (g->head)
            g->head->prev = e;
        g->head = e;
        pthread_mutex_unlock(&g->mu);
        *socket_context = e;
        return;
    unguarded:
        free(e);
        *socket_context = NULL;
        return;
    }
    entry *e = *socket_context;
    if (code != MHD_CONNECTION_NOTIFY_CLOSED || !e)
        return;
    pthread_mutex_lock(&g->mu);
    if (e->prev)
        e->prev->next = e->next;
    else
        g->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    if (e->fd >= 0)
        close(e->fd);
    pthread_mutex_unlock(&g->mu);
    free(e);
    *socket_context = NULL;
}

static entry *entry_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void pl_connguard_request_whole(struct MHD_Connection *c)
{
    entry *e = entry_of(c);
    if (!e)
        return;
    pthread_mutex_lock(&e->g->mu);
    e->answering = 1;
    pthread_mutex_unlock(&e->g->mu);
}

void pl_connguard_request_done(struct MHD_Connection *c)
{
    entry *e = entry_of(c);
    if (!e)
        return;
    pthread_mutex_lock(&e->g->mu);
    e->answering = 0;
    e->since = mono_s();
    pthread_mutex_unlock(&e->g->mu);
}

void pl_connguard_counts(pl_connguard *g, long long *deadline, long long *evicted)
{
    pthread_mutex_lock(&g->mu);
    *deadline = g->n_deadline;
    *evicted = g->n_evicted;
    pthread_mutex_unlock(&g->mu);
}
