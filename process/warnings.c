/* process/warnings.c - which warnings a fault already says.  See warnings.h. */
#include "process/warnings.h"

#include "db/quality.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The warnings of process/process.c that restate a fault, by how they
 * begin ('#' stands for the beam's digit), the fault's kind and the key
 * of the instant the warning gives right after its beginning (NULL: it
 * gives none).  A record written before a fault kind existed keeps its
 * warning, which then has no fault to match; one written before the
 * warnings said "beam" where they now do says "channel". */
static const struct {
    const char *start, *kind, *at;
} restates[] = {
    {"the recording starts after the release", "late_start", NULL},
    {"both beams lost the prism at ", "tail_cut", "at_s"},
    {"beam #: ", "dropouts", NULL},
    {"channel #: ", "dropouts", NULL},
    {"mains hum at ", "hum", NULL},
    {"beam # never saw the prism", "beam_dead", NULL},
    {"beam # lost the prism from ", "beam_lost", "from_s"},
    {"beam # flat at ", "saturated", NULL},
    {"channel # flat at ", "saturated", NULL},
    {"beam # clipped", "clipped", NULL},
    {"channel # clipped", "clipped", NULL},
    {"motion common to both beams", "common_motion", NULL},
    {"omega (4.1) over the last second", "omega_drift", NULL},
    {"the prism rolls again from ", "second_release", "at_s"},
    {"the lattice's phase jumps", "time_jump", NULL},
    {"the integral of omega turns", "lattice_mismatch", NULL},
    {"the recording has a gap at ", "gap", "at_s"},
};

/* A warning's instants are written to the millisecond, the faults' to a
 * tenth of it: the same instant rounds within this. */
#define SAME_INSTANT_S 6e-4

/* Whether line (len bytes) begins as start, '#' matching one digit (into
 * *beam); *rest points past the beginning. */
static int begins(const char *line, size_t len, const char *start, int *beam,
                  const char **rest)
{
    size_t k = 0;
    for (; start[k]; k++) {
        if (k >= len)
            return 0;
        if (start[k] == '#') {
            if (line[k] < '0' || line[k] > '9')
                return 0;
            *beam = line[k] - '0';
        } else if (line[k] != start[k]) {
            return 0;
        }
    }
    *rest = line + k;
    return 1;
}

typedef struct {
    const char *kind, *at;
    int beam;          /* 0: the warning names none */
    double t;          /* NaN: the warning gives no instant */
    int found;
} wanted;

static int match_fault(void *ctx, const pl_fault *f, const char *line, size_t len)
{
    (void)line;
    (void)len;
    wanted *w = ctx;
    if (!f || strcmp(f->kind, w->kind) != 0)
        return 0;
    const pl_fault_field *ch = pl_fault_get(f, "channel");
    if (w->beam && (!ch || ch->type != PL_FAULT_NUMBER || ch->number != w->beam))
        return 0;
    const pl_fault_field *at = w->at ? pl_fault_get(f, w->at) : NULL;
    if (!isnan(w->t) && (!at || at->type != PL_FAULT_NUMBER ||
                         fabs(at->number - w->t) > SAME_INSTANT_S))
        return 0;
    w->found = 1;
    return 1;
}

int pl_warning_restated(const char *line, size_t len, const char *faults)
{
    if (!faults || !faults[0])
        return 0;
    for (size_t i = 0; i < sizeof restates / sizeof restates[0]; i++) {
        wanted w = {restates[i].kind, restates[i].at, 0, NAN, 0};
        const char *rest;
        if (!begins(line, len, restates[i].start, &w.beam, &rest))
            continue;
        if (w.at) {
            /* the line is not NUL-terminated: the number is copied out */
            char num[32];
            size_t n = (size_t)(line + len - rest);
            n = n < sizeof num - 1 ? n : sizeof num - 1;
            memcpy(num, rest, n);
            num[n] = '\0';
            char *end;
            w.t = strtod(num, &end);
            if (end == num)
                w.t = NAN;
        }
        pl_faults_each(faults, match_fault, &w);
        return w.found;
    }
    return 0;
}

int pl_warnings_each(const char *warnings, const char *faults,
                     int (*fn)(void *ctx, const char *line, size_t len),
                     void *ctx)
{
    for (const char *p = warnings; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0 && p[len - 1] == '\r')
            len--;
        int rc = 0;
        if (len > 0 && strspn(p, " ") < len && !pl_warning_restated(p, len, faults))
            rc = fn(ctx, p, len);
        if (rc)
            return rc;
        p = nl ? nl + 1 : p + strlen(p);
    }
    return 0;
}

static int count_one(void *ctx, const char *line, size_t len)
{
    (void)line;
    (void)len;
    ++*(size_t *)ctx;
    return 0;
}

size_t pl_warnings_count(const char *warnings, const char *faults)
{
    size_t n = 0;
    pl_warnings_each(warnings, faults, count_one, &n);
    return n;
}
