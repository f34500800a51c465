/* process/online.c - the impact search while the prism rolls: offline
 * processing on a bounded window of the run, look after look.  See
 * online.h and docs/process.md, "Online". */
#include "process/online.h"

#include "process/process_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far past the splice a spliced look's impact search starts
 * (process.c's SEG_SETTLE_S), and the slots past that its impacts still
 * lean on the splice (the smoothing of the angles reaches half its
 * neighbours that way): an impact is reported from a spliced look only
 * past both. */
#define SPLICE_SETTLE_S 0.25
#define SPLICE_LEAN_S 0.25
/* A whole look becomes spliced once the run holds this much motion past
 * the window: the first looks' release, cut-off and slope then stand on
 * a window of motion of their own. */
#define SETTLE_EXTRA_S 0.5
/* the track of omega and L_p: every 10 ms, as a plot of a few seconds
 * needs */
#define TRACK_DT_S 0.01
/* A whole look reports impacts only once it holds this many: the
 * instants' lag common to the run (the arcs' tops, the ringing) is
 * measured on the look's own impacts, and on the eleven foreign runs the
 * first second's impacts sat 0.5-0.9 ms off the whole run's when reported
 * from looks of 2-5 impacts; from 10 on every live instant of those runs
 * lies within 0.26 ms of offline's, the median latency unchanged. */
#define FIRST_IMPACTS 10
/* A look reports an impact only when it holds the next one too: the arc
 * after it is then measured whole (without it the clean foreign pink
 * run's live ratios fell from 85 to 49-62 of 85 within offline's
 * errors; waiting for more impacts cost 0.1-0.2 s of latency each and
 * moved no ratio by its error). */
#define AFTER_IMPACTS 1
/* A spliced look whose walk along the lattice stops this many intervals
 * short of its newest samples is looked at again over twice the window:
 * a drop-out held a simulated run's looks at 2.72 s for 0.8 s (37
 * impacts 0.3-0.8 s late) where a window of 2 s or more crosses it. */
#define STUCK_SLOTS 4
/* A finding is reported once this many looks in a row show it, or the
 * last look: a window's newest samples are its extremes and its fits
 * stand on a second or two, so a single look sees clipping where the
 * accelerating prism's speed peaks (the simulator's run at 20 kHz: 10
 * samples "clipped" at 0.89 s) or omega drifting off the impacts' clock
 * by 0.8 % (a clean foreign run); the run's own faults stay in every
 * look that holds them. */
#define PERSIST 3
enum { MAX_KINDS = 32 };

struct pl_online {
    pl_online_config c;
    /* the newest frames: rv[0..rn) are the run's frames r_from on */
    double *rv[2];
    size_t rn, rcap;
    long long r_from, total;
    long long looked;        /* total at the last look */
    /* once spliced: the lead-in, the run's frames [lead_from, release) */
    double *lv[2];
    size_t ln;
    long long release;       /* run frame; -1: not found yet */
    seg_io io;               /* the whole looks' last lead-in and release */
    double mains_hz, cutoff_hz, beta_rad;
    int spliced;
    /* what was reported */
    pl_online_impact *out;   /* this look's new impacts */
    size_t out_cap;
    size_t count;
    double last_t, last_lp;  /* the last impact reported; NaN: none */
    /* the looks' arrays, kept from look to look (vp1, vp2, omega, theta,
     * the combined omega; pool_n doubles each): new ones each look cost
     * the kernel's first-touch faults, a seventh of a look's time */
    double *pool[5];
    size_t pool_n;
    double track_next;       /* the track's next point (run clock, s) */
    double *track;           /* track_cap omega values, then as many L_p */
    size_t track_cap;
    /* the findings' kinds, each with the looks in a row that showed its
     * event starting at the same instant (PERSIST of them report it) */
    struct {
        char kind[48];
        double at;           /* the event's instant (run clock); NaN: none */
        int in_row;
        size_t last_look;
        int reported;
    } kinds[MAX_KINDS];
    int n_kinds;
    size_t looks;
    int ended;
};

void pl_online_config_default(pl_online_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    pl_process_config_default(&cfg->proc);
    cfg->lead_s = 1.0;
    cfg->window_s = 1.5;
    cfg->guard_s = 0.015;
}

pl_status pl_online_create(pl_online **out, const pl_online_config *cfg, pl_err *err)
{
    *out = NULL;
    if (!(cfg->rate_hz >= 100) || !isfinite(cfg->rate_hz))
        return pl_err_set(err, PL_EINVAL, "online search: rate %g Hz (at least 100 Hz)",
                          cfg->rate_hz);
    if (cfg->N < 3)
        return pl_err_set(err, PL_EINVAL, "online search: N = %d edges (at least 3)", cfg->N);
    if (!(cfg->h_m[0] > 0) || !(cfg->h_m[1] > 0) || cfg->h_m[0] == cfg->h_m[1])
        return pl_err_set(err, PL_EINVAL, "online search: beam heights %g and %g m (two "
                          "different heights above the ramp)", cfg->h_m[0], cfg->h_m[1]);
    if (!(cfg->window_s >= 0.5) || !(cfg->lead_s >= 0.2) || !(cfg->guard_s >= 0) ||
        !(cfg->guard_s < cfg->window_s / 4))
        return pl_err_set(err, PL_EINVAL, "online search: window %g s, lead-in %g s, guard "
                          "%g s (window >= 0.5 s, lead-in >= 0.2 s, guard under a quarter "
                          "of the window)", cfg->window_s, cfg->lead_s, cfg->guard_s);
    pl_online *o = calloc(1, sizeof *o);
    if (!o)
        return pl_err_set(err, PL_ENOMEM, "online search: out of memory");
    o->c = *cfg;
    o->c.proc.threads = 1;
    o->c.proc.lattice.threads = 1;
    /* whole looks span the lead-in, a window and its settling; the
     * buffer keeps twice that, moved down when full */
    o->rcap = (size_t)(2 * (cfg->lead_s + cfg->window_s + SETTLE_EXTRA_S + 1.0) * cfg->rate_hz);
    o->rv[0] = malloc(o->rcap * sizeof(double));
    o->rv[1] = malloc(o->rcap * sizeof(double));
    if (!o->rv[0] || !o->rv[1]) {
        size_t cap = o->rcap;
        pl_online_destroy(o);
        return pl_err_set(err, PL_ENOMEM, "online search: out of memory for %zu frames", cap);
    }
    o->release = -1;
    o->last_t = o->last_lp = NAN;
    *out = o;
    return PL_OK;
}

/* Frees the looks' arrays. */
static void pool_drop(pl_online *o)
{
    for (int k = 0; k < 5; k++) {
        free(o->pool[k]);
        o->pool[k] = NULL;
    }
    o->pool_n = 0;
}

void pl_online_destroy(pl_online *o)
{
    if (!o)
        return;
    for (int c = 0; c < 2; c++) {
        free(o->rv[c]);
        free(o->lv[c]);
    }
    pool_drop(o);
    free(o->out);
    free(o->track);
    free(o);
}

size_t pl_online_count(const pl_online *o)
{
    return o->count;
}

pl_status pl_online_push(pl_online *o, const double *v1, const double *v2, size_t n,
                         pl_err *err)
{
    const double *v[2] = {v1, v2};
    (void)err;
    while (n > 0) {
        if (o->rn == o->rcap) {   /* keep the newest half */
            size_t keep = o->rcap / 2, drop = o->rn - keep;
            for (int c = 0; c < 2; c++)
                memmove(o->rv[c], o->rv[c] + drop, keep * sizeof(double));
            o->rn = keep;
            o->r_from += (long long)drop;
        }
        size_t k = o->rcap - o->rn < n ? o->rcap - o->rn : n;
        for (int c = 0; c < 2; c++) {
            memcpy(o->rv[c] + o->rn, v[c], k * sizeof(double));
            v[c] += k;
        }
        o->rn += k;
        o->total += (long long)k;
        n -= k;
    }
    return PL_OK;
}

/* A finding's kind: its first word and its channel, if it names one. */
static void finding_kind(const char *line, size_t len, char *kind, size_t size)
{
    size_t w = strcspn(line, " \n");
    const char *ch = strstr(line, "channel=");
    if (ch && (size_t)(ch - line) < len)
        snprintf(kind, size, "%.*s %.9s", (int)w, line, ch);
    else
        snprintf(kind, size, "%.*s", (int)w, line);
    kind[strcspn(kind, " \n") + (ch && (size_t)(ch - line) < len ? 10 : 0)] = '\0';
}

/* Whether the word w (n bytes) is key followed by a number, into *v. */
static int key_number(const char *w, size_t n, const char *key, double *v)
{
    size_t kl = strlen(key);
    if (n <= kl || strncmp(w, key, kl))
        return 0;
    char *end;
    *v = strtod(w + kl, &end);
    return end == w + n;
}

/* The length of the word at line[i] in a line of len bytes. */
static size_t word_at(const char *line, size_t len, size_t i)
{
    size_t w = strcspn(line + i, " \n");
    return w > len - i ? len - i : w;
}

/* A fault line of a look, its instants (the keys ending "_s=" that name
 * a time: at_s, from_s, to_s, first_end_s) moved to the run's clock by
 * shift_s, into out. */
static void shift_line(const char *line, size_t len, double shift_s, char *out, size_t size)
{
    static const char *const keys[] = {"at_s=", "from_s=", "to_s=", "first_end_s="};
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < size;) {
        size_t word = word_at(line, len, i);
        int timed = 0;
        double v;
        for (size_t j = 0; j < sizeof keys / sizeof keys[0] && !timed; j++)
            if (key_number(line + i, word, keys[j], &v)) {
                k += (size_t)snprintf(out + k, size - k, "%s%.4f", keys[j], v + shift_s);
                timed = 1;
            }
        if (!timed)
            k += (size_t)snprintf(out + k, size - k, "%.*s", (int)word, line + i);
        i += word;
        if (i < len && k + 1 < size)
            out[k++] = line[i++];
        if (k >= size)
            k = size - 1;
    }
    out[k < size ? k : size - 1] = '\0';
}

/* The instant the event of a fault line starts at, on the look's clock:
 * its from_s, else its at_s; NaN for neither. */
static double line_instant(const char *line, size_t len)
{
    double from = NAN, at = NAN, v;
    for (size_t i = 0; i < len; i++) {
        size_t word = word_at(line, len, i);
        if (key_number(line + i, word, "from_s=", &v))
            from = v;
        else if (key_number(line + i, word, "at_s=", &v))
            at = v;
        i += word;
    }
    return isnan(from) ? at : from;
}

/* Whether a finding's kind (its first word, its channel) is word's. */
static int is_kind(const char *kind, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(kind, word, n) && (kind[n] == ' ' || kind[n] == '\0');
}

/* A look's fault lines into news, each kind once it has shown the same
 * event (same kind, same starting instant to 5 ms: a window's edge moves
 * with the window) in PERSIST looks in a row, or at the last look.  A
 * jump of the lattice's phase is left out: it is a file's missing buffer
 * that the run's own clock shows, which a live recording cannot have
 * unseen (the driver reports an overrun), while a window of a second and
 * a half holds too few drops for the whole run's test (a simulated run
 * without one showed one in a look, at 2.38 s).  So is omega's drift off
 * the impacts' clock (omega_drift): a window of a second and a half gives
 * too loose a figure for it: 0.8-0.9 % on a clean foreign run (1/f
 * noise) whose whole run gives 0.52 %, the tolerance being 0.75 %
 * (process.c); the stop's processing says it.  Clipping is taken from
 * spliced looks (and the last): its rails are a channel's extremes in
 * the look, and over the first half second of motion those are the
 * speed's peaks so far (our simulator's run at 20 kHz: 10 samples at
 * 0.89 s "clipped" in three looks in a row). */
static void add_findings(pl_online *o, const char *text, double shift_s, int final,
                         pl_online_news *news)
{
    for (const char *p = text; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
        size_t len = strcspn(p, "\n");
        char kind[48];
        finding_kind(p, len, kind, sizeof kind);
        if (len == 0 || is_kind(kind, "time_jump") || is_kind(kind, "omega_drift") ||
            (!o->spliced && !final && is_kind(kind, "clipped")))
            continue;
        int k = 0;
        while (k < o->n_kinds && strcmp(o->kinds[k].kind, kind))
            k++;
        if (k == MAX_KINDS)
            continue;
        if (k == o->n_kinds) {
            o->n_kinds++;
            snprintf(o->kinds[k].kind, sizeof o->kinds[k].kind, "%s", kind);
            o->kinds[k].in_row = o->kinds[k].reported = 0;
        }
        if (o->kinds[k].reported)
            continue;
        double at = line_instant(p, len) + shift_s, was = o->kinds[k].at;
        int same = o->kinds[k].in_row && o->kinds[k].last_look + 1 == o->looks &&
                   (isnan(at) ? isnan(was) : fabs(at - was) < 0.005);
        o->kinds[k].in_row = same ? o->kinds[k].in_row + 1 : 1;
        o->kinds[k].at = at;
        o->kinds[k].last_look = o->looks;
        if (o->kinds[k].in_row >= PERSIST || final) {
            char line[512];
            o->kinds[k].reported = 1;
            shift_line(p, len, shift_s, line, sizeof line);
            size_t used = strlen(news->findings);
            snprintf(news->findings + used, sizeof news->findings - used, "%s\n", line);
        }
    }
}

/* The look's arrays back from its result r (processing moved all but the
 * combined omega there), so that freeing r leaves them; when r lost them
 * (a refused look frees its arrays) the pool is empty again. */
static void pool_return(pl_online *o, pl_process_result *r, int refused)
{
    if (refused) {
        free(o->pool[4]);   /* the combined omega stays the caller's */
        for (int k = 0; k < 5; k++)
            o->pool[k] = NULL;
        o->pool_n = 0;
        return;
    }
    double **own[4] = {&r->vp1, &r->vp2, &r->omega, &r->theta};
    for (int k = 0; k < 4; k++) {
        if (*own[k] != o->pool[k])   /* moved elsewhere: not ours to keep */
            o->pool[k] = NULL;
        *own[k] = NULL;
    }
    if (!o->pool[0] || !o->pool[1] || !o->pool[2] || !o->pool[3])
        pool_drop(o);
}

/* The look's arrays: frames [a, total) of the run after, when spliced,
 * the lead-in; *len their length.  -1 when out of memory. */
static int look_arrays(pl_online *o, long long a, run_arrays *arr, size_t *pre)
{
    size_t lead = o->spliced ? o->ln : 0, tail = (size_t)(o->total - a), n = lead + tail;
    int touched = n <= o->pool_n;
    if (!touched) {
        pool_drop(o);
        for (int k = 0; k < 5; k++)
            if (!(o->pool[k] = malloc(n * sizeof(double)))) {
                pool_drop(o);
                return -1;
            }
        o->pool_n = n;
    }
    memset(arr, 0, sizeof *arr);
    *arr = (run_arrays){{o->pool[0], o->pool[1]}, o->pool[2], o->pool[3], o->pool[4], n,
                        touched, 0};
    size_t from = (size_t)(a - o->r_from);
    for (int c = 0; c < 2; c++) {
        if (lead)
            memcpy(arr->v[c], o->lv[c], lead * sizeof(double));
        memcpy(arr->v[c] + lead, o->rv[c] + from, tail * sizeof(double));
    }
    *pre = lead;
    return 0;
}

/* Room for k impacts in o->out; -1 when out of memory. */
static int out_room(pl_online *o, size_t k)
{
    if (k <= o->out_cap)
        return 0;
    pl_online_impact *p = realloc(o->out, k * sizeof *p);
    if (!p)
        return -1;
    o->out = p;
    o->out_cap = k;
    return 0;
}

/* L_p at the look's fractional sample x: carried from the last impact
 * reported (at look sample xp) along the look's theta; NaN where the
 * look does not reach back to it. */
static double lp_at(const pl_online *o, const pl_process_result *r, double x, double xp)
{
    double k = o->c.N / (2 * M_PI);
    if (isnan(o->last_t))
        return k * pl_lattice_at(r->theta, r->n, x);
    if (xp < (double)r->release)
        return NAN;
    return o->last_lp + k * (pl_lattice_at(r->theta, r->n, x) - pl_lattice_at(r->theta, r->n, xp));
}

/* The look's impacts past the last one reported, from index from_x of
 * its arrays up to (not including) to_x, into news; the look's frame i
 * is the run's frame i + shift. */
static pl_status report_impacts(pl_online *o, const pl_process_result *r, double from_x,
                                double to_x, int all, long long shift, pl_online_news *news,
                                pl_err *err)
{
    double rate = r->rate_hz, shift_s = (double)shift / rate;
    if (out_room(o, r->n_impacts) != 0)
        return pl_err_set(err, PL_ENOMEM, "online search: out of memory for %zu impacts",
                          r->n_impacts);
    news->impacts = o->out;
    news->n_impacts = 0;
    for (size_t i = 0; i < r->n_impacts; i++) {
        const pl_impact *p = &r->impacts[i];
        double x = (p->t_s - r->decoder_shift_s) * rate, t = p->t_s + shift_s;
        /* the look's last impact waits for the next look but at the end:
         * its arc after is not measured whole, and on the first looks its
         * ratio's scatter stands on two impacts */
        if (x < from_x || x >= to_x || (!all && i + AFTER_IMPACTS >= r->n_impacts))
            continue;
        /* half the slot's interval from the last reported: the same impact
         * as a look before placed it */
        double half = 0.5 * (i > 0 ? p->t_s - r->impacts[i - 1].t_s
                             : i + 1 < r->n_impacts ? r->impacts[i + 1].t_s - p->t_s : 0);
        if (!isnan(o->last_t) && t <= o->last_t + half)
            continue;
        /* a step the look could not measure (its arcs cut by a drop-out
         * at the window's edge: a simulated run's impact placed 10 ms
         * off, with no standard error) waits, and those after it with
         * it, for a look that measures it */
        if (!all && !isfinite(p->ratio_se))
            break;
        /* the slots from the last reported, on this look's theta */
        double lp = lp_at(o, r, x, (o->last_t - shift_s - r->decoder_shift_s) * rate);
        pl_online_impact *q = &o->out[news->n_impacts++];
        *q = (pl_online_impact){t, p->omega_minus, p->omega_plus, p->ratio, p->ratio_se, lp,
                                p->confirmed, (long long)floor(t * rate)};
        o->last_t = t;
        o->last_lp = lp;
        o->count++;
    }
    return PL_OK;
}

/* The track of omega and L_p over [from_x, to_x) of the look, from where
 * the last one ended, into news. */
static pl_status report_track(pl_online *o, const pl_process_result *r, double from_x,
                              double to_x, long long shift, pl_online_news *news, pl_err *err)
{
    double rate = r->rate_hz, shift_s = (double)shift / rate;
    double t0 = fmax(o->track_next, (from_x + (double)shift) / rate);
    double t1 = (to_x + (double)shift) / rate;
    size_t n = t1 > t0 ? (size_t)floor((t1 - t0) / TRACK_DT_S) : 0;
    if (n > o->track_cap) {
        double *p = realloc(o->track, 2 * n * sizeof *p);
        if (!p)
            return pl_err_set(err, PL_ENOMEM, "online search: out of memory for its track");
        o->track = p;
        o->track_cap = n;
    }
    double xp = (o->last_t - shift_s - r->decoder_shift_s) * rate;
    for (size_t j = 0; j < n; j++) {
        double x = (t0 + (double)j * TRACK_DT_S) * rate - (double)shift;
        o->track[j] = pl_lattice_at(r->omega, r->n, x);
        o->track[o->track_cap + j] = lp_at(o, r, x, xp);
    }
    news->track_t0_s = t0;
    news->track_dt_s = TRACK_DT_S;
    news->track_omega = o->track;
    news->track_lp = o->track + o->track_cap;
    news->track_n = n;
    if (n)
        o->track_next = t0 + (double)n * TRACK_DT_S;
    return PL_OK;
}

/* The first looks' stand, which the spliced ones keep: the lead-in
 * before the release and the release, cut-off and slope. */
static pl_status settle(pl_online *o, const pl_process_result *r, long long shift, pl_err *err)
{
    size_t lead = (size_t)(o->c.lead_s * o->c.rate_hz);
    long long R = (long long)r->release + shift, from = R - (long long)lead;
    if (from < o->r_from)
        from = o->r_from;
    o->ln = (size_t)(R - from);
    for (int c = 0; c < 2; c++) {
        o->lv[c] = malloc((o->ln ? o->ln : 1) * sizeof(double));
        if (!o->lv[c])
            return pl_err_set(err, PL_ENOMEM, "online search: out of memory");
        memcpy(o->lv[c], o->rv[c] + (from - o->r_from), o->ln * sizeof(double));
    }
    /* in the spliced look the lead-in is [0, ln): its release at ln */
    o->io.release = o->ln;
    o->io.quiet = r->quiet > (size_t)(from - shift) ? r->quiet - (size_t)(from - shift) : 0;
    if (o->io.quiet > o->ln)
        o->io.quiet = o->ln;
    o->io.lead = o->io.lead > (size_t)(from - shift) ? o->io.lead - (size_t)(from - shift) : 0;
    if (o->io.lead > o->ln)
        o->io.lead = o->ln;
    o->mains_hz = r->front.mains_hz;
    o->cutoff_hz = r->cutoff_hz;
    o->beta_rad = r->beta_used_rad;
    o->release = R;
    o->spliced = 1;
    return PL_OK;
}

/* Where the look's samples start, for a window of window_s: *a, the
 * run's frame (-1: too little new to look at).  PL_EOVERRUN when frames
 * never looked at are gone from the buffer. */
static pl_status look_start(pl_online *o, double window_s, long long *a, pl_err *err)
{
    double rate = o->c.rate_hz;
    size_t lead = (size_t)(o->c.lead_s * rate), win = (size_t)(window_s * rate);
    if (!o->spliced) {
        /* before the release: the last lead-in and window; after it: from
         * the lead-in before it */
        long long span = (long long)(lead + win + (size_t)(SETTLE_EXTRA_S * rate));
        *a = o->release >= 0 ? o->release - (long long)lead : o->total - span;
    } else {
        *a = o->total - (long long)win;
        /* back to the last impact reported and its neighbours, so that
         * L_p carries from it (a look that comes late sees a longer run) */
        long long need = (long long)floor((o->last_t - SPLICE_SETTLE_S - SPLICE_LEAN_S) * rate);
        if (!isnan(o->last_t) && need < *a)
            *a = need;
        /* the frames after the last impact, some of them never looked at,
         * gone from the buffer: the looks came too far apart (a tiny
         * share of a core), and the impacts there would go unseen
         * without a word */
        if (!isnan(o->last_t) && need < o->r_from && o->r_from > o->looked - (long long)win)
            return pl_err_set(err, PL_EOVERRUN, "online search: %.1f s between looks, more "
                              "than its buffer keeps (%.1f s); impacts there would go unseen",
                              (double)(o->total - o->looked) / rate,
                              (double)(o->rcap / 2) / rate);
        if (*a <= o->release)
            *a = o->release + 1;
    }
    if (*a < o->r_from)
        *a = o->r_from;
    if (o->total - *a < (long long)(0.05 * rate))
        *a = -1;
    return PL_OK;
}

/* The processing of a look of n samples, the first pre of them the
 * lead-in and the rest the run's from frame a, into *cs and o->io. */
static void look_config(pl_online *o, long long a, size_t pre, size_t n, pl_process_config *cs)
{
    *cs = o->c.proc;
    if (!o->spliced) {
        o->io = (seg_io){0};
        o->io.fs = (pl_frontend_splice){0, 0, 0, 0, n};
        return;
    }
    /* one spectrum segment: the live view shows none, and the cut-off
     * that the whole looks took from theirs stands */
    cs->psd_max_segments = 1;
    cs->cutoff_hz = o->cutoff_hz;
    /* the first looks' slope, measured on the prism's speeding up; a
     * window's own (its tops at a near-steady speed) moved the ratios of
     * a simulated run by 4e-5, twice their errors */
    if (isfinite(o->beta_rad)) {
        cs->lattice.beta_rad = o->beta_rad;
        cs->lattice.beta_fixed = 1;
    }
    /* events are counted past the splice's reach (an edge of the window
     * is no drop-out, jump or lost beam of the run's) */
    size_t core = pre + (size_t)((SPLICE_SETTLE_S + 2 * SPLICE_LEAN_S) * o->c.rate_hz);
    o->io.fs = (pl_frontend_splice){pre, (size_t)a, o->mains_hz, core < n ? core : n, n};
}

/* What a processed look r (its frame i the run's i + shift, the lead-in
 * its first pre) adds to news. */
static pl_status look_news(pl_online *o, pl_process_result *r, size_t pre, long long shift,
                           int final, pl_online_news *news, pl_err *err)
{
    double rate = o->c.rate_hz;
    size_t win = (size_t)(o->c.window_s * rate);
    news->looked = 1;
    if (!o->spliced)
        o->release = (long long)r->release + shift;
    news->release_t = (double)o->release / rate;
    /* A look that sees the motion end may be wrong (a short window of 1/f
     * noise took the prism for gone on a foreign run): the looks go on,
     * and the end only lets the look's last impact be reported when it
     * lies a guard before the newest sample. */
    int ended = r->end + 1 < r->n && (double)r->end < (double)r->n - o->c.guard_s * rate;
    double to_x = final ? (double)r->n : (double)r->n - o->c.guard_s * rate;
    double from_x = o->spliced ? (double)pre + (SPLICE_SETTLE_S + SPLICE_LEAN_S) * rate
                               : (double)r->release;
    /* the run's first impacts wait until a look holds enough of them for
     * the instants' global lag (the tops' shift, the ringing) to stand */
    if (!o->spliced && !final && r->n_impacts < FIRST_IMPACTS)
        to_x = from_x;
    pl_status st = report_impacts(o, r, from_x, to_x, final || ended, shift, news, err);
    if (st == PL_OK)
        st = report_track(o, r, from_x, to_x, shift, news, err);
    if (st == PL_OK) {
        add_findings(o, r->faults, (double)shift / rate, final, news);
        o->ended = ended;
        news->ended = ended;
    }
    /* spliced looks carry L_p from an impact reported: a whole look
     * must have reported one first */
    if (st == PL_OK && !o->spliced && !isnan(o->last_t) &&
        o->total - o->release > (long long)(win + (size_t)(SETTLE_EXTRA_S * rate)))
        st = settle(o, r, shift, err);
    return st;
}

/* A spliced look whose walk along the lattice stopped short: its last
 * impact more than STUCK_SLOTS intervals before the newest sample it
 * reports up to, the motion going on. */
static int stuck(const pl_online *o, const pl_process_result *r)
{
    size_t m = r->n_impacts;
    if (!o->spliced || m < 4 || r->end + 1 < r->n)
        return 0;
    double span = (r->impacts[m - 1].t_s - r->impacts[m - 4].t_s) / 3;
    double last = (r->impacts[m - 1].t_s - r->decoder_shift_s) * r->rate_hz;
    double to_x = (double)r->n - o->c.guard_s * r->rate_hz;
    return to_x - last > STUCK_SLOTS * span * r->rate_hz;
}

/* One look at the run over a window of window_s: processing's result in
 * *r (st PL_OK), or its refusal in *perr; *pre the lead-in's samples and
 * *a the run's frame the window starts at (-1: nothing to look at). */
static pl_status look_once(pl_online *o, double window_s, long long *a, size_t *pre,
                           pl_process_result *r, pl_err *perr, pl_err *err)
{
    if (look_start(o, window_s, a, err) != PL_OK)
        return err->code;
    if (*a < 0)
        return PL_OK;
    run_arrays arr;
    if (look_arrays(o, *a, &arr, pre) != 0)
        return pl_err_set(err, PL_ENOMEM, "online search: out of memory");
    pl_process_config cs;
    look_config(o, *a, *pre, arr.n, &cs);
    pl_status st = pl_proc_process_owned(&arr, NULL, NULL, o->c.rate_hz, o->c.h_m[0],
                                         o->c.h_m[1], o->c.N, &cs, r, NULL, &o->io, perr);
    if (st != PL_OK)
        pool_return(o, NULL, 1);
    if (st == PL_ENOMEM)
        *err = *perr;
    return st == PL_ENOMEM ? st : PL_OK;
}

pl_status pl_online_look(pl_online *o, int final, pl_online_news *news, pl_err *err)
{
    memset(news, 0, sizeof *news);
    news->release_t = o->release >= 0 ? (double)o->release / o->c.rate_hz : NAN;
    news->frames = o->total;
    news->ended = o->ended;
    long long a;
    size_t pre = 0;
    pl_process_result r;
    pl_err perr = {0};
    if (look_once(o, o->c.window_s, &a, &pre, &r, &perr, err) != PL_OK)
        return err->code;
    if (a < 0)
        return PL_OK;
    o->looks++;
    if (perr.code == PL_OK && stuck(o, &r)) {
        /* once more over twice the window, which crosses what held it */
        pool_return(o, &r, 0);
        pl_process_result_free(&r);
        perr = (pl_err){0};
        if (look_once(o, 2 * o->c.window_s, &a, &pre, &r, &perr, err) != PL_OK)
            return err->code;
    }
    o->looked = o->total;
    if (perr.code != PL_OK) {
        /* no motion yet is the quiet before the release, and none left the
         * stillness after the prism left the beams: said by nothing; at
         * the end of a run that never released it is why the run has no
         * impacts (as process says at the stop) */
        if (((o->release >= 0 || o->spliced) && !o->ended) || (final && o->release < 0)) {
            char line[PL_ONLINE_FINDINGS];
            snprintf(line, sizeof line, "refused reason=\"%s\"", perr.msg);
            add_findings(o, line, 0, final, news);
        }
        return PL_OK;
    }
    pl_status st = look_news(o, &r, pre, a - (long long)pre, final, news, err);
    pool_return(o, &r, 0);
    pl_process_result_free(&r);
    return st;
}
