/* acquire/live.c - the online impact search on its own thread.  See
 * live.h. */
#define _GNU_SOURCE   /* pipe2 */
#include "acquire/live.h"

#include "core/json.h"
#include "db/catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Arrival marks kept for the latency of an impact: one a block read, a
 * block being 50 ms, so a minute of them; an impact is reported within
 * seconds of its samples. */
enum { MARKS = 1200 };
/* A look may take a cut-short run's place for this long at a begin. */
#define BEGIN_WAIT_S 0.2
/* A pace is announced when it moves by this factor from the last. */
#define PACE_STEP 1.5
/* events waiting for the daemon's loop, past which they are dropped
 * (counted in the stop event): a loop that stalls that long has lost
 * its viewers anyway */
enum { EVENTS_MAX = 1 << 20 };

typedef struct {
    long long frame_end;     /* the run's frames read when the block came */
    double wall_s;
} mark;

struct pl_live {
    pl_live_options opt;
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* the thread waits on it for work; begin for
                                the thread's last look */
    int quit;
    /* the run fed, as the daemon's loop set it (under mu) */
    long long gen;           /* bumped at each begin */
    long long run;
    int searched;            /* cfg holds the run's search; 0: off */
    pl_online_config cfg;
    char off[256];
    long long ended_gen;     /* the gen whose frames are all pushed */
    char why[128];
    double *q[2];            /* the queue: qlen frames from qhead */
    size_t qcap, qhead, qlen;
    long long pushed;        /* frames of the run pushed */
    int overflow;            /* the queue was full: frames left out */
    mark marks[MARKS];
    size_t n_marks;          /* waiting for the thread */
    long long done_gen;      /* the gen the thread has finished */
    /* what status says (pl_live_describe()) */
    const char *state;       /* "idle", "searching", "paused", "off" */
    long long shown_run;
    size_t shown_impacts;
    /* events for the daemon's loop */
    char *ev;
    size_t ev_len, ev_cap;
    long long ev_dropped;
    int wake[2];
};

/* What the thread keeps of the run it searches. */
typedef struct {
    long long gen, run;
    pl_online *o;
    int active, paused, released;
    int unlooked;            /* frames pushed to o since its last look */
    int unsearched, stopped; /* a run not searched; its stop event sent */
    double next_look;        /* monotonic s */
    double cpu_ema, pace, cpu_s;
    size_t looks;
    long long frames;
    mark marks[MARKS];       /* a ring of the newest */
    size_t n_marks, mark_head;
    double *lat;             /* every impact's latency */
    size_t n_lat, lat_cap;
    double ratio_s, ratio_ss, last_lp;
    size_t n_ratio, impacts;
    double *buf[2];          /* frames taken from the queue */
    size_t buf_cap;
} search;

void pl_live_options_default(pl_live_options *opt)
{
    opt->cpu_share = 0.2;
    opt->min_look_s = 0.05;
    opt->max_behind_s = 10.0;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* --- events ------------------------------------------------------------- */

/* An event under construction: its JSON text, in memory (open_memstream;
 * f NULL when that failed: the event is not sent).  Its values are
 * written as the commands' --json write theirs (core/json.h); its keys
 * without a space, one compact line. */
typedef struct {
    FILE *f;
    char *text;
    size_t n;
} event;

static void ev_put(event *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ev_put(event *e, const char *fmt, ...)
{
    if (!e->f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(e->f, fmt, ap);
    va_end(ap);
}

/* A number as JSON: NaN and infinities are null. */
static void ev_num(event *e, const char *key, double v)
{
    ev_put(e, ",\"%s\":", key);
    if (e->f)
        pl_json_number(e->f, v);
}

static void ev_str(event *e, const char *key, const char *v)
{
    ev_put(e, ",\"%s\":", key);
    if (e->f)
        pl_json_string(e->f, v);
}

static void ev_begin(event *e, const char *kind, long long run)
{
    e->text = NULL;
    e->n = 0;
    e->f = open_memstream(&e->text, &e->n);
    ev_put(e, "E {\"event\":\"%s\",\"run\":%lld,\"wall_ms\":%.1f", kind, run, wall_s() * 1e3);
}

/* Ends the event and queues it for the daemon's loop. */
static void ev_send(pl_live *lv, event *e)
{
    ev_put(e, "}\n");
    if (!e->f || fclose(e->f) != 0) {   /* out of memory: not sent */
        free(e->text);
        return;
    }
    const char *text = e->text;
    size_t n = e->n;
    pthread_mutex_lock(&lv->mu);
    if (lv->ev_len + n > EVENTS_MAX) {
        lv->ev_dropped++;
    } else {
        if (lv->ev_len + n > lv->ev_cap) {
            size_t cap = 2 * (lv->ev_len + n);
            char *p = realloc(lv->ev, cap);
            if (p) {
                lv->ev = p;
                lv->ev_cap = cap;
            }
        }
        if (lv->ev_len + n <= lv->ev_cap) {
            memcpy(lv->ev + lv->ev_len, text, n);
            lv->ev_len += n;
        } else {
            lv->ev_dropped++;
        }
    }
    pthread_mutex_unlock(&lv->mu);
    free(e->text);
    char one = 1;
    if (write(lv->wake[1], &one, 1) < 0 && errno != EAGAIN)
        return;   /* a full pipe wakes the loop already */
}

/* --- the search --------------------------------------------------------- */

/* What status says of the search, set from the thread. */
static void show(pl_live *lv, const char *state, long long run, size_t impacts)
{
    pthread_mutex_lock(&lv->mu);
    lv->state = state;
    lv->shown_run = run;
    lv->shown_impacts = impacts;
    pthread_mutex_unlock(&lv->mu);
}

/* The wall time the run's frame f arrived at; NaN when its mark is gone. */
static double arrival(const search *s, long long f)
{
    for (size_t i = 0; i < s->n_marks; i++) {
        const mark *m = &s->marks[(s->mark_head + MARKS - s->n_marks + i) % MARKS];
        if (m->frame_end > f)
            return m->wall_s;
    }
    return NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void send_stop(pl_live *lv, search *s, const char *why)
{
    event e;
    ev_begin(&e, "stop", s->run);
    ev_put(&e, ",\"frames\":%lld,\"impacts\":%zu", s->frames, s->impacts);
    ev_num(&e, "lp", s->last_lp);
    double mean = s->n_ratio ? s->ratio_s / (double)s->n_ratio : NAN;
    double var = s->n_ratio > 1 ? (s->ratio_ss - (double)s->n_ratio * mean * mean) /
                                      (double)(s->n_ratio - 1) : NAN;
    ev_num(&e, "ratio_mean", mean);
    ev_num(&e, "ratio_sd", var > 0 ? sqrt(var) : var == 0 ? 0 : NAN);
    ev_put(&e, ",\"looks\":%zu", s->looks);
    ev_num(&e, "cpu_s", s->cpu_s);
    double med = NAN;
    if (s->n_lat) {
        qsort(s->lat, s->n_lat, sizeof *s->lat, cmp_double);
        med = s->n_lat % 2 ? s->lat[s->n_lat / 2]
                           : 0.5 * (s->lat[s->n_lat / 2 - 1] + s->lat[s->n_lat / 2]);
    }
    ev_num(&e, "latency_median_s", med);
    ev_put(&e, ",\"paused\":%s", s->paused ? "true" : "false");
    pthread_mutex_lock(&lv->mu);
    long long lost = lv->ev_dropped;
    lv->ev_dropped = 0;
    pthread_mutex_unlock(&lv->mu);
    ev_put(&e, ",\"events_lost\":%lld", lost);
    ev_str(&e, "why", why);
    ev_send(lv, &e);
}

static void search_end(search *s)
{
    pl_online_destroy(s->o);
    s->o = NULL;
    s->active = 0;
}

/* A look's news as events. */
static void send_news(pl_live *lv, search *s, const pl_online_news *nw)
{
    event e;
    if (!s->released && isfinite(nw->release_t) && nw->looked) {
        s->released = 1;
        ev_begin(&e, "release", s->run);
        ev_num(&e, "t_s", nw->release_t);
        ev_send(lv, &e);
    }
    double now = wall_s();
    for (size_t i = 0; i < nw->n_impacts; i++) {
        const pl_online_impact *p = &nw->impacts[i];
        double lat = now - arrival(s, p->frame);
        ev_begin(&e, "impact", s->run);
        ev_num(&e, "t_s", p->t_s);
        ev_num(&e, "omega_minus", p->omega_minus);
        ev_num(&e, "omega_plus", p->omega_plus);
        ev_num(&e, "ratio", p->ratio);
        ev_num(&e, "ratio_se", p->ratio_se);
        ev_num(&e, "lp", p->lp);
        ev_put(&e, ",\"confirmed\":%d", p->confirmed);
        ev_num(&e, "latency_s", lat);
        ev_send(lv, &e);
        s->impacts++;
        s->last_lp = p->lp;
        if (p->confirmed == 1 && isfinite(p->ratio)) {
            s->ratio_s += p->ratio;
            s->ratio_ss += p->ratio * p->ratio;
            s->n_ratio++;
        }
        if (isfinite(lat)) {
            if (s->n_lat == s->lat_cap) {
                size_t cap = s->lat_cap ? 2 * s->lat_cap : 1024;
                double *q = realloc(s->lat, cap * sizeof *q);
                if (!q)
                    continue;
                s->lat = q;
                s->lat_cap = cap;
            }
            s->lat[s->n_lat++] = lat;
        }
    }
    if (nw->track_n) {
        ev_begin(&e, "track", s->run);
        ev_num(&e, "t0_s", nw->track_t0_s);
        ev_num(&e, "dt_s", nw->track_dt_s);
        /* six digits a point, what a plot shows: up to 200 points an
         * event share the viewers' stream queue with the D lines */
        for (int k = 0; k < 2; k++) {
            const double *x = k ? nw->track_lp : nw->track_omega;
            ev_put(&e, ",\"%s\":[", k ? "lp" : "omega");
            for (size_t j = 0; j < nw->track_n; j++)
                if (isfinite(x[j]))
                    ev_put(&e, "%s%.6g", j ? "," : "", x[j]);
                else
                    ev_put(&e, "%snull", j ? "," : "");
            ev_put(&e, "]");
        }
        ev_send(lv, &e);
    }
    for (const char *p = nw->findings; *p;) {
        size_t len = strcspn(p, "\n");
        char line[512], kind[64];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        snprintf(kind, sizeof kind, "%.*s", (int)strcspn(line, " "), line);
        ev_begin(&e, "finding", s->run);
        ev_str(&e, "kind", kind);
        ev_str(&e, "text", line);
        ev_send(lv, &e);
        p += len + (p[len] == '\n');
    }
}

/* One look, timed; its pace kept to the share of a core. */
static void look(pl_live *lv, search *s, int final)
{
    pl_online_news nw;
    pl_err err = {0};
    double c0 = cpu_s();
    pl_status st = pl_online_look(s->o, final, &nw, &err);
    double c = cpu_s() - c0;
    s->cpu_s += c;
    s->looks++;
    if (st != PL_OK) {
        event e;
        ev_begin(&e, "paused", s->run);
        ev_num(&e, "behind_s", 0);
        ev_str(&e, "why", err.msg);
        ev_send(lv, &e);
        s->paused = 1;
        show(lv, "paused", s->run, s->impacts);
        return;
    }
    send_news(lv, s, &nw);
    show(lv, "searching", s->run, s->impacts);
    s->cpu_ema = s->looks == 1 ? c : 0.7 * s->cpu_ema + 0.3 * c;
    double pace = fmax(lv->opt.min_look_s, s->cpu_ema / lv->opt.cpu_share);
    if (pace > PACE_STEP * s->pace || pace * PACE_STEP < s->pace) {
        char why[160];
        snprintf(why, sizeof why, "a look takes %.0f ms of CPU; at most %.0f %% of a core",
                 1e3 * s->cpu_ema, 100 * lv->opt.cpu_share);
        event e;
        ev_begin(&e, "pace", s->run);
        ev_num(&e, "look_s", pace);
        ev_str(&e, "why", why);
        ev_send(lv, &e);
        s->pace = pace;
    }
    s->next_look = mono_s() + fmax(lv->opt.min_look_s, s->cpu_ema / lv->opt.cpu_share);
}

/* A new run taken up (mu held): its start event, its handle. */
static void search_begin(pl_live *lv, search *s)
{
    s->gen = lv->gen;
    s->run = lv->run;
    s->active = 1;
    s->paused = s->released = 0;
    s->looks = s->impacts = s->n_ratio = s->n_lat = s->n_marks = s->mark_head = 0;
    s->cpu_s = s->cpu_ema = s->ratio_s = s->ratio_ss = 0;
    s->last_lp = NAN;
    s->frames = 0;
    s->pace = lv->opt.min_look_s;
    s->next_look = 0;
    lv->state = lv->searched ? "searching" : "off";
    lv->shown_run = s->run;
    lv->shown_impacts = 0;
    s->unlooked = s->stopped = 0;
    s->unsearched = !lv->searched;
    int on = lv->searched;
    pl_online_config cfg = lv->cfg;
    char off[256];
    snprintf(off, sizeof off, "%s", lv->off);
    pthread_mutex_unlock(&lv->mu);
    pl_err err = {0};
    if (on && pl_online_create(&s->o, &cfg, &err) != PL_OK) {
        on = 0;
        snprintf(off, sizeof off, "%.200s", err.msg);
    }
    event e;
    ev_begin(&e, "start", s->run);
    if (on) {
        ev_num(&e, "rate_hz", cfg.rate_hz);
        ev_put(&e, ",\"N\":%d", cfg.N);
        ev_num(&e, "h1_m", cfg.h_m[0]);
        ev_num(&e, "h2_m", cfg.h_m[1]);
        ev_num(&e, "cpu_share", lv->opt.cpu_share);
        ev_put(&e, ",\"live\":true");
    } else {
        ev_put(&e, ",\"live\":false");
        ev_str(&e, "why", off);
        s->active = 0;
        s->unsearched = 1;
    }
    ev_send(lv, &e);
    pthread_mutex_lock(&lv->mu);
}

/* The queued frames and marks into s (mu held); returns how many. */
static size_t take_queue(pl_live *lv, search *s)
{
    size_t n = lv->qlen;
    if (n > s->buf_cap) {
        for (int c = 0; c < 2; c++) {
            double *p = realloc(s->buf[c], n * sizeof *p);
            if (!p)
                return 0;   /* tried again on the next pass */
            s->buf[c] = p;
        }
        s->buf_cap = n;
    }
    for (int c = 0; c < 2 && n > 0; c++) {
        size_t first = lv->qcap - lv->qhead < n ? lv->qcap - lv->qhead : n;
        memcpy(s->buf[c], lv->q[c] + lv->qhead, first * sizeof(double));
        if (n > first)
            memcpy(s->buf[c] + first, lv->q[c], (n - first) * sizeof(double));
    }
    lv->qhead = (lv->qhead + n) % (lv->qcap ? lv->qcap : 1);
    lv->qlen = 0;
    for (size_t i = 0; i < lv->n_marks; i++) {
        s->marks[s->mark_head] = lv->marks[i];
        s->mark_head = (s->mark_head + 1) % MARKS;
        if (s->n_marks < MARKS)
            s->n_marks++;
    }
    lv->n_marks = 0;
    return n;
}

static void *worker(void *arg)
{
    pl_live *lv = arg;
    search s = {0};
    s.gen = -1;
    pthread_mutex_lock(&lv->mu);
    while (!lv->quit) {
        if (lv->gen != s.gen) {
            if (s.active) {
                search_end(&s);
                pthread_mutex_unlock(&lv->mu);
                send_stop(lv, &s, "cut short by the next run");
                pthread_mutex_lock(&lv->mu);
            }
            search_begin(lv, &s);
            continue;
        }
        if (!s.active && s.unsearched && !s.stopped && lv->ended_gen == s.gen) {
            /* a run not searched starts and stops all the same */
            char why[128];
            snprintf(why, sizeof why, "%s", lv->why);
            s.frames = lv->pushed;
            s.stopped = 1;
            pthread_mutex_unlock(&lv->mu);
            send_stop(lv, &s, why);
            pthread_mutex_lock(&lv->mu);
            continue;
        }
        if (!s.active) {
            lv->done_gen = s.gen;
            pthread_cond_broadcast(&lv->cv);
            pthread_cond_wait(&lv->cv, &lv->mu);
            continue;
        }
        size_t n = take_queue(lv, &s);
        int ended = lv->ended_gen == s.gen, overflow = lv->overflow;
        char why[128];
        snprintf(why, sizeof why, "%s", lv->why);
        double behind = lv->cfg.rate_hz > 0 ? (double)lv->pushed / lv->cfg.rate_hz : 0;
        pthread_mutex_unlock(&lv->mu);
        pl_err err = {0};
        if (n && !s.paused && pl_online_push(s.o, s.buf[0], s.buf[1], n, &err) == PL_OK)
            s.unlooked = 1;
        s.frames += (long long)n;
        if (overflow && !s.paused) {
            event e;
            char w[200];
            snprintf(w, sizeof w, "the search fell %.0f s behind the recording (a busy "
                     "machine?); every frame is recorded and the run is processed at the stop",
                     lv->opt.max_behind_s);
            ev_begin(&e, "paused", s.run);
            ev_num(&e, "behind_s", behind - (double)s.frames / lv->cfg.rate_hz);
            ev_str(&e, "why", w);
            ev_send(lv, &e);
            s.paused = 1;
            show(lv, "paused", s.run, s.impacts);
        }
        if (!s.paused && (ended || (s.unlooked && mono_s() >= s.next_look))) {
            look(lv, &s, ended);
            s.unlooked = 0;
        }
        if (ended) {
            search_end(&s);
            send_stop(lv, &s, why);
            show(lv, "idle", s.run, s.impacts);
        }
        pthread_mutex_lock(&lv->mu);
        if (ended || lv->gen != s.gen || lv->quit || lv->qlen > 0)
            continue;
        /* wait for frames, or the next look's time when some wait for it */
        double wait = s.next_look - mono_s();
        if (wait > 0 && s.unlooked && !s.paused) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + wait;
            ts.tv_sec = (time_t)t;
            ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
            pthread_cond_timedwait(&lv->cv, &lv->mu, &ts);
        } else {
            pthread_cond_wait(&lv->cv, &lv->mu);
        }
    }
    pthread_mutex_unlock(&lv->mu);
    search_end(&s);
    free(s.lat);
    free(s.buf[0]);
    free(s.buf[1]);
    return NULL;
}

/* --- the daemon's side ---------------------------------------------------- */

pl_status pl_live_create(pl_live **out, const pl_live_options *opt, pl_err *err)
{
    *out = NULL;
    pl_live *lv = calloc(1, sizeof *lv);
    if (!lv)
        return pl_err_set(err, PL_ENOMEM, "live search: out of memory");
    lv->opt = *opt;
    lv->gen = lv->ended_gen = lv->done_gen = lv->shown_run = -1;
    lv->state = "idle";
    if (pipe2(lv->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        int e = errno;
        free(lv);
        return pl_err_set(err, PL_EIO, "live search: pipe: %s", strerror(e));
    }
    pthread_mutex_init(&lv->mu, NULL);
    pthread_cond_init(&lv->cv, NULL);
    int e = pthread_create(&lv->tid, NULL, worker, lv);
    if (e != 0) {
        pl_live_destroy(lv);
        return pl_err_set(err, PL_EIO, "live search: thread: %s", strerror(e));
    }
    lv->started = 1;
    *out = lv;
    return PL_OK;
}

void pl_live_destroy(pl_live *lv)
{
    if (!lv)
        return;
    if (lv->started) {
        pthread_mutex_lock(&lv->mu);
        lv->quit = 1;
        pthread_cond_broadcast(&lv->cv);
        pthread_mutex_unlock(&lv->mu);
        pthread_join(lv->tid, NULL);
    }
    pthread_mutex_destroy(&lv->mu);
    pthread_cond_destroy(&lv->cv);
    close(lv->wake[0]);
    close(lv->wake[1]);
    free(lv->q[0]);
    free(lv->q[1]);
    free(lv->ev);
    free(lv);
}

pl_status pl_live_begin(pl_live *lv, long long run, const pl_online_config *cfg,
                        const char *off, pl_err *err)
{
    pthread_mutex_lock(&lv->mu);
    /* the run before takes its last look first, if it is quick about it */
    if (lv->ended_gen == lv->gen && lv->done_gen != lv->gen) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(BEGIN_WAIT_S * 1e9);
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        while (lv->done_gen != lv->gen &&
               pthread_cond_timedwait(&lv->cv, &lv->mu, &ts) == 0)
            ;
    }
    size_t cap = cfg ? (size_t)(lv->opt.max_behind_s * cfg->rate_hz) + 1 : 0;
    if (cap > lv->qcap) {
        for (int c = 0; c < 2; c++) {
            double *p = realloc(lv->q[c], cap * sizeof *p);
            if (!p) {
                pthread_mutex_unlock(&lv->mu);
                return pl_err_set(err, PL_ENOMEM, "live search: out of memory for %zu frames",
                                  cap);
            }
            lv->q[c] = p;
        }
        lv->qcap = cap;
    }
    lv->gen++;
    lv->run = run;
    lv->searched = cfg != NULL;
    if (cfg)
        lv->cfg = *cfg;
    else
        lv->cfg.rate_hz = 0;
    snprintf(lv->off, sizeof lv->off, "%s", off ? off : "");
    lv->qhead = lv->qlen = 0;
    lv->n_marks = 0;
    lv->pushed = 0;
    lv->overflow = 0;
    lv->why[0] = '\0';
    pthread_cond_broadcast(&lv->cv);
    pthread_mutex_unlock(&lv->mu);
    return PL_OK;
}

void pl_live_push(pl_live *lv, const double *v1, const double *v2, size_t n, double wall)
{
    pthread_mutex_lock(&lv->mu);
    if (!lv->searched || lv->ended_gen == lv->gen || lv->overflow) {
        if (!lv->searched && lv->ended_gen != lv->gen)
            lv->pushed += (long long)n;   /* for the stop event's frames */
        pthread_mutex_unlock(&lv->mu);
        return;
    }
    if (lv->qlen + n > lv->qcap) {
        lv->overflow = 1;   /* the thread says so; the rest of the run goes unsearched */
    } else {
        const double *v[2] = {v1, v2};
        for (int c = 0; c < 2; c++) {
            size_t at = (lv->qhead + lv->qlen) % lv->qcap;
            size_t first = lv->qcap - at < n ? lv->qcap - at : n;
            memcpy(lv->q[c] + at, v[c], first * sizeof(double));
            if (n > first)
                memcpy(lv->q[c], v[c] + first, (n - first) * sizeof(double));
        }
        lv->qlen += n;
        lv->pushed += (long long)n;
        if (lv->n_marks == MARKS) {   /* the thread is far behind: the oldest go */
            memmove(lv->marks, lv->marks + 1, (MARKS - 1) * sizeof *lv->marks);
            lv->n_marks--;
        }
        lv->marks[lv->n_marks++] = (mark){lv->pushed, wall};
    }
    pthread_cond_broadcast(&lv->cv);
    pthread_mutex_unlock(&lv->mu);
}

void pl_live_end(pl_live *lv, const char *why)
{
    pthread_mutex_lock(&lv->mu);
    lv->ended_gen = lv->gen;
    snprintf(lv->why, sizeof lv->why, "%s", why ? why : "");
    pthread_cond_broadcast(&lv->cv);
    pthread_mutex_unlock(&lv->mu);
}

void pl_live_drain(pl_live *lv, void (*fn)(void *ctx, const char *line, size_t n), void *ctx)
{
    char sink[64];
    while (read(lv->wake[0], sink, sizeof sink) > 0)
        ;
    pthread_mutex_lock(&lv->mu);
    char *ev = lv->ev;
    size_t len = lv->ev_len;
    lv->ev = NULL;
    lv->ev_len = lv->ev_cap = 0;
    pthread_mutex_unlock(&lv->mu);
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(ev + i, '\n', len - i);
        size_t k = (size_t)(nl - (ev + i)) + 1;
        fn(ctx, ev + i, k);
        i += k;
    }
    free(ev);
}

int pl_live_run_config(pl_store *catalog, const char *prism, const char *ramp,
                       const pl_source_info *info, pl_online_config *cfg, char *off,
                       size_t off_size)
{
    pl_online_config_default(cfg);
    off[0] = '\0';
    if (info->n_channels < 2) {
        snprintf(off, off_size, "%d channel%s recorded: the search needs both beams",
                 info->n_channels, info->n_channels == 1 ? "" : "s");
        return 0;
    }
    if (!prism || !prism[0]) {
        snprintf(off, off_size, "no [run] prism in the rig file: the search needs its N");
        return 0;
    }
    pl_prism p;
    pl_err err = {0};
    if (pl_prism_get(catalog, prism, &p, &err) != PL_OK) {
        snprintf(off, off_size, "%s", err.msg);
        return 0;
    }
    cfg->rate_hz = info->sample_rate_hz;
    cfg->N = p.n_edges;
    cfg->h_m[0] = info->channel[0].beam_height_m;
    cfg->h_m[1] = info->channel[1].beam_height_m;
    pl_process_config_for_run(&cfg->proc, catalog, &p, ramp, info->channel);
    return 1;
}

void pl_live_describe(pl_live *lv, char *buf, size_t size)
{
    if (!lv) {
        snprintf(buf, size, "live=off");
        return;
    }
    pthread_mutex_lock(&lv->mu);
    if (lv->shown_run < 0)
        snprintf(buf, size, "live=%s", lv->state);
    else
        snprintf(buf, size, "live=%s live_run=%lld live_impacts=%zu", lv->state, lv->shown_run,
                 lv->shown_impacts);
    pthread_mutex_unlock(&lv->mu);
}

int pl_live_fd(const pl_live *lv)
{
    return lv->wake[0];
}
