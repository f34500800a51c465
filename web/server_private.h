/* web/server_private.h - what the server's files share: the server's state
 * and the responses, parameters and page parts every page uses.  Not part
 * of the public interface (web/server.h).  The files: server.c routes and
 * runs the server, respond.c answers, page_runs.c the lists and the
 * experiments' reports, page_run.c a run's page and its data, page_live.c
 * the daemon's live view. */
#ifndef PL_WEB_SERVER_PRIVATE_H
#define PL_WEB_SERVER_PRIVATE_H

#include "db/store.h"
#include "web/buf.h"
#include "web/connguard.h"
#include "web/runcache.h"
#include "web/server.h"

#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>


enum { MAX_REPORTS = 32 };

typedef struct {
    char name[PL_NAME_SIZE];
    char dir[PATH_MAX + 8];
} report_dir;

struct pl_web {
    struct MHD_Daemon *mhd;
    pl_connguard *guard;           /* whole-request deadlines */
    pl_store *store;
    pl_runcache *cache;
    pthread_mutex_t lock;          /* the store, the cache, the reports */
    char url[96];
    char host[64];
    int port;
    int loopback;                  /* bound to loopback: Host must say so */
    int control;
    char token[33];
    char socket[108];
    char tmp[PATH_MAX];            /* the reports' folder (ours alone) */
    report_dir reports[MAX_REPORTS];
    int n_reports, next_report;
    volatile int stopping;
};

/* b as the answer (b is taken); csp NULL for the pages' default policy. */
enum MHD_Result pl_web_send_buf(struct MHD_Connection *c, unsigned code,
                                const char *mime, pl_buf *b, const char *csp);

/* A 4xx/5xx answer saying what was wrong, without the server's paths: a
 * page for a browser's navigation, a line of text for the API's callers. */
enum MHD_Result pl_web_fail(struct MHD_Connection *c, unsigned code,
                            const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* msg without the server's paths (a visitor learns what was wrong, not
 * where the lab keeps its data). */
void pl_web_scrub_paths(char *msg);

/* The HTTP status a pl_status answers with. */
unsigned pl_web_status_of(pl_status st);

/* A run id of 1 to 15 digits, > 0; returns 0 when s is not one. */
int pl_web_parse_id(const char *s, long long *id);

/* Query parameter name as a number in [lo, hi] into *out: 1 found and
 * good, 0 absent (*out kept), -1 bad (msg, size bytes, says why). */
int pl_web_arg_double(struct MHD_Connection *c, const char *name, double lo,
                      double hi, double *out, char *msg, size_t size);

/* A page's head (title "title_a title_b - prismlab", styles, navigation)
 * and its end (the footer). */
void pl_web_page_head(pl_buf *b, const char *title_a, const char *title_b);
void pl_web_page_end(pl_buf *b);

/* s percent-encoded for a path segment or a query value. */
void pl_web_url_enc(pl_buf *b, const char *s);

/* A table cell of v by fmt ("<td>%.3f</td>"), "-" when v is not finite. */
void pl_web_num_cell(pl_buf *b, const char *fmt, double v);

/* The pages and endpoints, by file; each answers c for server w. */
enum MHD_Result pl_web_page_runs(pl_web *w, struct MHD_Connection *c);
enum MHD_Result pl_web_page_experiments(pl_web *w, struct MHD_Connection *c);
enum MHD_Result pl_web_page_experiment(pl_web *w, struct MHD_Connection *c,
                                       const char *name, const char *file);
enum MHD_Result pl_web_page_run(pl_web *w, struct MHD_Connection *c, long long id);
enum MHD_Result pl_web_api_answer(pl_web *w, struct MHD_Connection *c, long long id);
enum MHD_Result pl_web_api_meta(pl_web *w, struct MHD_Connection *c, long long id);
enum MHD_Result pl_web_api_window(pl_web *w, struct MHD_Connection *c, long long id);
enum MHD_Result pl_web_api_impacts(pl_web *w, struct MHD_Connection *c, long long id);
enum MHD_Result pl_web_api_ratios(pl_web *w, struct MHD_Connection *c, long long id);
enum MHD_Result pl_web_page_live(pl_web *w, struct MHD_Connection *c);
enum MHD_Result pl_web_api_live(pl_web *w, struct MHD_Connection *c);
enum MHD_Result pl_web_api_status(pl_web *w, struct MHD_Connection *c);
enum MHD_Result pl_web_api_control(pl_web *w, struct MHD_Connection *c, const char *cmd);

#endif
