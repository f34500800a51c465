/* commands/cmd_acquire.c - `prismlab acquire`: one recording from the rig
 * (a DAQ card through comedi, or the rig simulator in real time) into the
 * store, in the foreground (record), or the recording daemon and the
 * commands it takes (daemon, arm, start, stop, status), and the live
 * search's events as they come (watch).  Only this file prints. */
#include "acquire/daemon.h"
#include "acquire/record.h"
#include "acquire/rigconf.h"
#include "acquire/sim/sim_source.h"
#include "acquire/watch.h"
#include "commands.h"
#include "core/cli.h"
#include "db/store.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char synopsis[] =
    "usage: prismlab acquire daemon --config rig.ini [--socket PATH] [--pretrigger S]\n"
    "                               [--threshold MPS] [--still S] [--db FILE]\n"
    "       prismlab acquire arm|start|stop|status|quit (--config rig.ini | --socket PATH)\n"
    "       prismlab acquire watch (--config rig.ini | --socket PATH) [--json] [--runs N]\n"
    "                              [--timeout S]\n"
    "       prismlab acquire record --config rig.ini [--duration S] [--prism P]\n"
    "                               [--ramp R] [--experiment E] [--lambda0-deg DEG]\n"
    "                               [--note TEXT] [--db FILE]\n";

#define RECORD_ABOUT \
    "Records one run from the rig named by the configuration file (docs/acquire.md):\n" \
    "the DAQ card's two LDV channels through comedi ([daq] source = comedi), or\n" \
    "the rig simulator delivering in real time ([daq] source = sim).  Stops after\n" \
    "--duration (or [run] duration_s), at Ctrl-C or SIGTERM (the run is closed\n" \
    "cleanly), or at the end of a simulated run.  Every committed 0.1 s of data\n" \
    "survives a crash; a run left unfinished is marked interrupted by the next\n" \
    "recorder.  Options override the file.\n"
#define RECORD_FOOTER \
    "Prints: run=<id> frames=<n> seconds=<s> state=<complete|overrun>.\n" \
    "Exit status 0 only when nothing was lost; 2 on an overrun or error.\n"
/* --db: here the rig file names the default. */
#define RIG_DB(d) \
    PL_OPT_STRING("db", d, "FILE", "the database (default: [store] db of rig.ini)")

/* The daemon a client talks to: daemon_socket() names its socket. */
#define DAEMON_SOCKET(config, sock, db) \
    PL_OPT_STRING("config", config, "rig.ini", "the rig: its database's socket"), \
    PL_OPT_STRING("socket", sock, "PATH", "the daemon's socket"), RIG_DB(db)

#define DAEMON_ABOUT \
    "daemon: keeps the rig ready and takes commands on a Unix socket (default\n" \
    "<db>.sock, mode 0660): arm (wait for the release, keep --pretrigger seconds\n" \
    "before it; motion = a channel leaving its resting level by --threshold),\n" \
    "start (record now), stop (ends the run), status, quit (ends the daemon).\n" \
    "A run ends on stop, after [run] duration_s, when the signal is still for\n" \
    "--still seconds after motion, or when a simulated run ends.  Logs to\n" \
    "stderr; SIGTERM/SIGINT close the run cleanly.  With [pipeline] after_run =\n" \
    "process, validate in rig.ini, each run is processed and validated as soon\n" \
    "as it stops (child processes; status says pipeline=, pipeline_last=,\n" \
    "verdict_run=).  At start it takes up its runs that an earlier daemon\n" \
    "left without processing or validation (killed, or its queue was full):\n" \
    "queued again, or named in the log and status with the pipeline off.\n" \
    "While a run records it searches the incoming samples for impacts on a\n" \
    "thread of its own, at most [live] cpu_share (0.2) of a core ([live]\n" \
    "search = off: not; [run] prism names the prism), never holding up the\n" \
    "recording; status says live=, live_impacts=; `acquire watch` prints its\n" \
    "events.  docs/acquire.md.\n"

#define WATCH_ABOUT \
    "watch: the daemon's live impact search as it runs ([live] search = on):\n" \
    "one line per event from the daemon's stream, as the prism rolls.  Text:\n" \
    "start (rate, N, or why the search is off), release, each impact (t, L_p,\n" \
    "omega before -> after, ratio +- its standard error, latency: from the\n" \
    "sample's arrival to the event), finding (a quality finding, the first\n" \
    "time), pace (the looks slowed or sped up to keep to their share of a\n" \
    "core), paused (the search fell behind and stopped for this run; the\n" \
    "recording keeps every frame), stop (the run's summary).  --json: each\n" \
    "event's JSON object as the daemon sent it, track events (omega and L_p\n" \
    "over time) included.  The recorded run is processed offline at the stop\n" \
    "as always: the live lines are a view of it.  docs/guide.md.\n"
#define WATCH_FOOTER \
    "Exit status 0 after --runs stop events or on Ctrl-C; 1 when no event came\n" \
    "for --timeout seconds; 2 when the daemon is not there or closes the stream.\n" \
    "Lines the daemon dropped for this viewer are counted on stderr.\n"

/* `prismlab acquire --help`: every action, their options under each one's
 * own --help. */
static const pl_cli_command overview = {
    .name = "acquire", .usage = synopsis,
    .about = RECORD_ABOUT "\n" RECORD_FOOTER "\n" DAEMON_ABOUT "\n" WATCH_ABOUT,
    .footer = "'prismlab acquire ACTION --help' lists the action's options.\n"};
static const pl_cli_command record_command = {
    .name = "acquire", .usage = synopsis, .about = RECORD_ABOUT,
    .footer = RECORD_FOOTER};
static const pl_cli_command daemon_command = {
    .name = "acquire daemon", .usage = synopsis, .about = DAEMON_ABOUT};
static const pl_cli_command watch_command = {
    .name = "acquire watch", .usage = synopsis, .about = WATCH_ABOUT,
    .footer = WATCH_FOOTER};
static const pl_cli_command client_command = {
    .name = "acquire", .usage = synopsis,
    .about = "arm, start, stop, status, quit: the action sent to the daemon, its\n"
             "reply printed (exit status 2 unless it begins with ok).  stop ends\n"
             "the run in progress and leaves the daemon serving; quit ends any run\n"
             "cleanly, then the daemon, and returns when it is gone (the database\n"
             "is then free for another recorder).\n"
             "status's line: state=idle|armed|recording run= frames= ring=FILL/SIZE\n"
             "overruns= last_run=, the pipeline's words (pipeline=, queued=,\n"
             "pipeline_last=, pipeline_s=, verdict_run=), then dropped=N (runs the\n"
             "pipeline's full queue turned away since start), unfinished=7,9 (the\n"
             "daemon's runs without processing or verdict that it will not do now;\n"
             "none), unmarked=1 (runs whose final state waits for disk space; none)\n"
             "and error=CAUSE after a failed commit.\n"};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void progress(void *ctx, long long frames, long long total)
{
    const double *rate = ctx;
    (void)total;   /* the line is ended once, when the recording returns */
    if (pl_cli_isatty(stderr))
        fprintf(stderr, "\rrecording: %.1f s", frames / *rate);
}

/* The rig's source: the card of [daq], or (source = sim) the simulator
 * playing the rig, whose options *sim receives (free them after the last
 * open). */
static pl_status rig_source(const pl_rigconf *rc, const char *dbpath,
                            const char *config, pl_source_spec *spec,
                            pl_sim_options **sim, pl_err *err)
{
    *sim = NULL;
    if (strcmp(rc->source, "sim")) {
        *spec = pl_comedi_spec(&rc->comedi, &rc->beams);
        return PL_OK;
    }
    if (pl_sim_rig_options(sim, rc, dbpath, config, err) != PL_OK)
        return err->code;
    *spec = pl_sim_spec(*sim, &rc->beams);
    return PL_OK;
}

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    char now[32];
    pl_store_utc_now(now);
    fprintf(stderr, "%s prismlab acquire daemon: %s\n", now, line);
}

static int run_daemon(int argc, char **argv)
{
    const char *cmd = daemon_command.name, *config = NULL, *sock = NULL, *db = NULL;
    pl_err err = {0};
    pl_daemon_options o = {.pretrigger_s = 0.5, .threshold_mps = 1e-3, .still_s = 0.5,
                           .stop = &stop_flag, .log = log_line};
    pl_opt opts[] = {
        PL_OPT_REQUIRED_STRING("config", &config, "rig.ini", "the rig (docs/acquire.md)"),
        PL_OPT_STRING("socket", &sock, "PATH", "the socket (default <db>.sock)"),
        PL_OPT_DOUBLE("pretrigger", &o.pretrigger_s, 0, 60, "S",
                      "kept before the release (default 0.5)"),
        PL_OPT_DOUBLE("threshold", &o.threshold_mps, 1e-9, 10, "MPS",
                      "motion: a channel this far from rest (default 0.001)"),
        PL_OPT_DOUBLE("still", &o.still_s, 0, 3600, "S",
                      "the end: still this long after motion (default 0.5)"),
        RIG_DB(&db),
        PL_OPT_END()};
    int rc = pl_cli_parse(&daemon_command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    pl_rigconf conf;
    pl_rigconf_init(&conf);
    if (pl_rigconf_read(&conf, config, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    if (db)
        snprintf(conf.db, sizeof conf.db, "%s", db);
    pl_source_spec spec;
    pl_sim_options *sim = NULL;
    if (rig_source(&conf, conf.db, config, &spec, &sim, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    char path[1100];
    snprintf(path, sizeof path, "%s", sock ? sock : "");
    if (!sock)
        snprintf(path, sizeof path, "%s.sock", conf.db);
    o.socket_path = path;
    o.notice = pl_sim_options_note(sim);
    pl_cli_on_stop(on_signal);   /* the run in progress closes cleanly */
    signal(SIGPIPE, SIG_IGN);
    pl_status st = pl_daemon_run(&conf, &spec, &o, &err);
    pl_sim_options_free(sim);
    return st == PL_OK ? PL_EXIT_OK : pl_cli_fail(cmd, &err);
}

/* The daemon's socket into path: --socket, else <db>.sock of --db or of
 * the rig file's [store] db; an exit status when none can be named. */
static int daemon_socket(const char *cmd, const char *sock, const char *config,
                         const char *db, char *path, size_t size)
{
    pl_err err = {0};
    if (sock) {
        snprintf(path, size, "%s", sock);
    } else if (config || db) {
        pl_rigconf conf;
        pl_rigconf_init(&conf);
        if (config && pl_rigconf_read(&conf, config, &err) != PL_OK)
            return pl_cli_fail(cmd, &err);
        snprintf(path, size, "%s.sock", db ? db : conf.db);
    } else {
        return pl_cli_usage_error(cmd, "give --socket PATH or --config rig.ini");
    }
    return PL_EXIT_OK;
}

static int run_client(const char *action, int argc, char **argv)
{
    const char *cmd = client_command.name, *config = NULL, *sock = NULL, *db = NULL;
    pl_err err = {0};
    pl_opt opts[] = {
        DAEMON_SOCKET(&config, &sock, &db),
        PL_OPT_END()};
    int rc = pl_cli_parse(&client_command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    char path[1100];
    if ((rc = daemon_socket(cmd, sock, config, db, path, sizeof path)) != PL_EXIT_OK)
        return rc;
    char reply[512];
    if (pl_daemon_command(path, action, reply, sizeof reply, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    printf("%s\n", reply);
    if (strncmp(reply, "ok", 2))
        return PL_EXIT_DATA;
    /* quit returns when the daemon is gone, so that the next command may
     * take the database at once */
    if (!strcmp(action, "quit") && pl_daemon_wait_gone(path, 30, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    return PL_EXIT_OK;
}

/* One event on stdout: its JSON, or its readable line (none for track);
 * 1 when it was a run's stop. */
static int print_event(const char *json, int as_json)
{
    char kind[16] = "", line[1024];
    pl_watch_kind(json, kind, sizeof kind);
    if (as_json)
        printf("%s\n", json);
    else if (pl_watch_format(json, line, sizeof line))
        printf("%s\n", line);
    fflush(stdout);   /* a pipe gets each event as it comes, not at exit */
    return !strcmp(kind, "stop");
}

static int run_watch(int argc, char **argv)
{
    const char *cmd = watch_command.name, *config = NULL, *sock = NULL, *db = NULL;
    int as_json = 0;
    long runs = 0;
    double timeout = 0;
    pl_err err = {0};
    pl_opt opts[] = {
        DAEMON_SOCKET(&config, &sock, &db),
        PL_OPT_FLAG("json", &as_json, "each event's JSON object, one a line"),
        PL_OPT_INT("runs", &runs, 1, 1e9, "N", "exit after N runs' stop events (default: never)"),
        PL_OPT_DOUBLE("timeout", &timeout, 0.1, 86400, "S",
                      "exit 1 when no event comes for S seconds (default: wait)"),
        PL_OPT_END()};
    int rc = pl_cli_parse(&watch_command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    char path[1100];
    if ((rc = daemon_socket(cmd, sock, config, db, path, sizeof path)) != PL_EXIT_OK)
        return rc;
    pl_watch *w = NULL;
    if (pl_watch_open(&w, path, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    fprintf(stderr, "prismlab %s: watching %s\n", cmd, path);
    pl_cli_on_stop(on_signal);
    long stops = 0;
    while (!stop_flag && (runs == 0 || stops < runs)) {
        const char *json;
        long long lost;
        pl_status st = pl_watch_next(w, timeout, &stop_flag, &json, &lost, &err);
        if (lost)
            fprintf(stderr, "prismlab %s: the daemon dropped %lld stream line%s for this "
                    "viewer (it read too slowly): events may be missing\n", cmd, lost,
                    lost == 1 ? "" : "s");
        if (st != PL_OK) {
            pl_watch_close(w);
            fprintf(stderr, "prismlab %s: %s\n", cmd, err.msg);
            return st == PL_ESTATE ? PL_EXIT_USAGE : PL_EXIT_DATA;   /* the timeout */
        }
        if (json)
            stops += print_event(json, as_json);
    }
    pl_watch_close(w);
    return PL_EXIT_OK;
}

/* What `acquire record` takes; NULL and NaN: the file's value. */
typedef struct {
    const char *config, *prism, *ramp, *experiment, *note, *db;
    double duration, lambda0_deg;
} record_args;

/* The recorder's options: the command line's, else the file's. */
static void record_options(const record_args *a, const pl_rigconf *conf,
                           pl_record_options *ro)
{
    pl_record_options_init(ro);
    ro->prism = a->prism ? a->prism : conf->prism[0] ? conf->prism : NULL;
    ro->ramp = a->ramp ? a->ramp : conf->ramp[0] ? conf->ramp : NULL;
    ro->experiment = a->experiment ? a->experiment
                   : conf->experiment[0] ? conf->experiment : NULL;
    ro->lambda0_rad = !isnan(a->lambda0_deg) ? a->lambda0_deg * M_PI / 180
                    : !isnan(conf->lambda0_deg) ? conf->lambda0_deg * M_PI / 180 : NAN;
    if (a->note)
        snprintf(ro->notes, sizeof ro->notes, "%s", a->note);
    ro->writer.sync_full = conf->sync_full;
    ro->writer.commit_interval_s = conf->commit_interval_s;
    ro->writer.block_when_full = 0;   /* a live source never waits */
    ro->pump.stop = &stop_flag;
}

/* The last line: the run, and what recording cost this process (CPU over
 * wall time since t_start, peak memory). */
static void print_record(long long id, const pl_writer_stats *ws, double rate,
                         pl_status st, const struct timespec *t_start)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t_start->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t_start->tv_nsec);
    double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                 (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    printf("run=%lld frames=%lld seconds=%.3f rate=%.6g state=%s ring_peak=%zu "
           "cpu=%.2f%% maxrss=%ldkB\n", id, ws->frames_committed,
           ws->frames_committed / rate, rate, st == PL_EOVERRUN ? "overrun" : "complete",
           ws->ring_peak, wall > 0 ? 100 * cpu / wall : 0.0, ru.ru_maxrss);
}

/* Opens the recorder and the source, records until the end, the duration
 * or a signal, and prints the result. */
static int record(const char *dbpath, const pl_source_spec *spec,
                  pl_record_options *ro, double duration_s, const char *note)
{
    const char *cmd = record_command.name;
    pl_err err = {0};
    pl_recorder *r = NULL;
    long long interrupted = 0;
    pl_cli_on_stop(on_signal);   /* the run in progress closes cleanly */
    if (pl_recorder_open(&r, dbpath, &ro->writer, &interrupted, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    if (interrupted)
        fprintf(stderr, "prismlab acquire: marked %lld unfinished run%s interrupted\n",
                interrupted, interrupted == 1 ? "" : "s");
    if (note[0])
        fprintf(stderr, "prismlab acquire: %s\n", note);
    void *src = NULL;
    pl_source_info info;
    if (pl_source_open(spec, &src, &info, &err) != PL_OK) {
        pl_recorder_close(r);
        return pl_cli_fail(cmd, &err);
    }
    double rate = info.sample_rate_hz;
    ro->pump.max_frames = duration_s > 0 ? (long long)llround(duration_s * rate) : -1;
    ro->pump.progress = progress;
    ro->pump.progress_ctx = &rate;
    long long id = -1, frames = 0;
    struct timespec t_start;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    pl_status st = pl_recorder_run(r, spec->type, src, &info, ro, &id, &frames, &err);
    spec->type->close(src);
    pl_writer_stats ws;
    pl_writer_get_stats(pl_recorder_writer(r), &ws);
    char same[512] = "";
    if (id > 0)
        pl_recorder_same_samples(r, id, same, sizeof same);
    if (same[0])
        fprintf(stderr, "prismlab acquire: %s\n", same);
    pl_recorder_close(r);
    /* the "recording: N s" line ends where the run ended, not only at a
     * --duration reached: Ctrl-C, the end of a simulated run, an error */
    if (pl_cli_isatty(stderr) && frames > 0)
        fputc('\n', stderr);
    if (st != PL_OK && st != PL_EOVERRUN)
        return pl_cli_fail(cmd, &err);
    print_record(id, &ws, rate, st, &t_start);
    if (st == PL_EOVERRUN) {
        fprintf(stderr, "prismlab acquire: %s\n", err.msg);
        return PL_EXIT_DATA;
    }
    return PL_EXIT_OK;
}

static int run_record(int argc, char **argv)
{
    const char *cmd = record_command.name;
    record_args a = {.duration = NAN, .lambda0_deg = NAN};
    pl_err err = {0};
    pl_opt opts[] = {
        PL_OPT_REQUIRED_STRING("config", &a.config, "rig.ini", "the rig (docs/acquire.md)"),
        PL_OPT_DOUBLE("duration", &a.duration, 1e-3, 86400, "S",
                      "stop after S seconds (default [run] duration_s)"),
        PL_OPT_STRING("prism", &a.prism, "P", "the prism on the ramp (catalogue name)"),
        PL_OPT_STRING("ramp", &a.ramp, "R", "the ramp (catalogue name)"),
        PL_OPT_STRING("experiment", &a.experiment, "E", "file the run under E"),
        PL_OPT_DOUBLE("lambda0-deg", &a.lambda0_deg, 0, 90, "DEG",
                      "the release angle the operator set"),
        PL_OPT_STRING("note", &a.note, "TEXT", "stored with the run"),
        RIG_DB(&a.db),
        PL_OPT_END()};
    int rc = pl_cli_parse(&record_command, opts, argc, argv, NULL);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    pl_rigconf conf;
    pl_rigconf_init(&conf);
    if (pl_rigconf_read(&conf, a.config, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    const char *dbpath = a.db ? a.db : conf.db;
    if (!isnan(a.duration))
        conf.duration_s = a.duration;
    pl_source_spec spec;
    pl_sim_options *sim = NULL;
    if (rig_source(&conf, dbpath, a.config, &spec, &sim, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    pl_record_options ro;
    record_options(&a, &conf, &ro);
    rc = record(dbpath, &spec, &ro, conf.duration_s, pl_sim_options_note(sim));
    pl_sim_options_free(sim);
    return rc;
}

int pl_cmd_acquire(int argc, char **argv)
{
    static const pl_opt none[] = {PL_OPT_END()};
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        pl_cli_help(&overview, none, argc < 2 ? stderr : stdout);
        return argc < 2 ? PL_EXIT_USAGE : PL_EXIT_OK;
    }
    if (!strcmp(argv[1], "daemon"))
        return run_daemon(argc - 1, argv + 1);
    if (!strcmp(argv[1], "arm") || !strcmp(argv[1], "start") ||
        !strcmp(argv[1], "stop") || !strcmp(argv[1], "status") ||
        !strcmp(argv[1], "quit"))
        return run_client(argv[1], argc - 1, argv + 1);
    if (!strcmp(argv[1], "record"))
        return run_record(argc - 1, argv + 1);
    if (!strcmp(argv[1], "watch"))
        return run_watch(argc - 1, argv + 1);
    return pl_cli_usage_error(overview.name, "unknown action '%s' (expected daemon, "
                              "arm, start, stop, status, quit, record or watch)", argv[1]);
}
