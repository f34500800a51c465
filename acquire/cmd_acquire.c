/* acquire/cmd_acquire.c - `prismlab acquire record`: one recording from
 * the rig (a DAQ card through comedi, or the rig simulator in real time)
 * into the store, in the foreground.  Only this file prints. */
#include "acquire/daemon.h"
#include "acquire/record.h"
#include "acquire/rigconf.h"
#include "acquire/sim/sim_source.h"
#include "commands.h"
#include "core/cli.h"
#include "db/store.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char usage[] =
    "usage: prismlab acquire daemon --config rig.ini [--socket PATH] [--pretrigger S]\n"
    "                               [--threshold MPS] [--still S] [--db FILE]\n"
    "       prismlab acquire arm|start|stop|status (--config rig.ini | --socket PATH)\n"
    "       prismlab acquire record --config rig.ini [--duration S] [--prism P]\n"
    "                               [--ramp R] [--experiment E] [--lambda0-deg DEG]\n"
    "                               [--note TEXT] [--db FILE]\n\n"
    "Records one run from the rig named by the configuration file (docs/acquire.md):\n"
    "the DAQ card's two LDV channels through comedi ([daq] source = comedi), or\n"
    "the rig simulator delivering in real time ([daq] source = sim).  Stops after\n"
    "--duration (or [run] duration_s), at Ctrl-C or SIGTERM (the run is closed\n"
    "cleanly), or at the end of a simulated run.  Every committed 0.1 s of data\n"
    "survives a crash; a run left unfinished is marked interrupted by the next\n"
    "recorder.  Options override the file.\n\n"
    "Prints: run=<id> frames=<n> seconds=<s> state=<complete|overrun>.\n"
    "Exit status 0 only when nothing was lost; 2 on an overrun or error.\n\n"
    "daemon: keeps the rig ready and takes commands on a Unix socket (default\n"
    "<db>.sock, mode 0660): arm (wait for the release, keep --pretrigger seconds\n"
    "before it, default 0.5; motion = a channel leaving its resting level by\n"
    "--threshold m/s, default 0.001), start (record now), stop, status.  A run\n"
    "ends on stop, after [run] duration_s, when the signal is still for --still\n"
    "seconds after motion (default 0.5), or when a simulated run ends.  Logs to\n"
    "stderr; SIGTERM/SIGINT close the run cleanly.  docs/acquire.md.\n";

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void progress(void *ctx, long long frames, long long total)
{
    const double *rate = ctx;
    if (pl_cli_isatty(stderr))
        fprintf(stderr, "\rrecording: %.1f s%s", frames / *rate,
                total > 0 && frames >= total ? "\n" : "");
}

enum { O_CONFIG = 1000, O_DURATION, O_PRISM, O_RAMP, O_EXP, O_LAMBDA0,
       O_NOTE, O_DB, O_HELP };

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
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"socket", required_argument, 0, 's'},
        {"pretrigger", required_argument, 0, 'p'}, {"threshold", required_argument, 0, 't'},
        {"still", required_argument, 0, 'q'}, {"db", required_argument, 0, 'd'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "acquire daemon", *config = NULL, *sock = NULL, *db = NULL;
    pl_err err = {0};
    pl_daemon_options o = {.pretrigger_s = 0.5, .threshold_mps = 1e-3, .still_s = 0.5,
                           .stop = &stop_flag, .log = log_line};
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        switch (c) {
        case 'c': config = optarg; break;
        case 's': sock = optarg; break;
        case 'p': st = pl_parse_double("pretrigger", optarg, 0, 60, &o.pretrigger_s, &err); break;
        case 't': st = pl_parse_double("threshold", optarg, 1e-9, 10, &o.threshold_mps, &err); break;
        case 'q': st = pl_parse_double("still", optarg, 0, 3600, &o.still_s, &err); break;
        case 'd': db = optarg; break;
        case 'h': fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (!config)
        return pl_cli_usage_error(cmd, "give --config rig.ini");
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    if (pl_rigconf_read(&rc, config, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    if (db)
        snprintf(rc.db, sizeof rc.db, "%s", db);
    pl_source_spec spec;
    pl_sim_options *sim = NULL;
    if (rig_source(&rc, rc.db, config, &spec, &sim, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    char path[1100];
    snprintf(path, sizeof path, "%s", sock ? sock : "");
    if (!sock)
        snprintf(path, sizeof path, "%s.sock", rc.db);
    o.socket_path = path;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    pl_status st = pl_daemon_run(&rc, &spec, &o, &err);
    pl_sim_options_free(sim);
    return st == PL_OK ? PL_EXIT_OK : pl_cli_fail(cmd, &err);
}

static int run_client(const char *action, int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"socket", required_argument, 0, 's'},
        {"db", required_argument, 0, 'd'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "acquire", *config = NULL, *sock = NULL, *db = NULL;
    pl_err err = {0};
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'c') config = optarg;
        else if (c == 's') sock = optarg;
        else if (c == 'd') db = optarg;
        else if (c == 'h') { fputs(usage, stdout); return PL_EXIT_OK; }
        else return pl_cli_usage_error(cmd, "unknown option");
    }
    char path[1100];
    if (sock) {
        snprintf(path, sizeof path, "%s", sock);
    } else if (config || db) {
        pl_rigconf rc;
        pl_rigconf_init(&rc);
        if (config && pl_rigconf_read(&rc, config, &err) != PL_OK)
            return pl_cli_fail(cmd, &err);
        snprintf(path, sizeof path, "%s.sock", db ? db : rc.db);
    } else {
        return pl_cli_usage_error(cmd, "give --socket PATH or --config rig.ini");
    }
    char reply[512];
    if (pl_daemon_command(path, action, reply, sizeof reply, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    printf("%s\n", reply);
    return strncmp(reply, "ok", 2) ? PL_EXIT_DATA : PL_EXIT_OK;
}

int pl_cmd_acquire(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, O_CONFIG},
        {"duration", required_argument, 0, O_DURATION},
        {"prism", required_argument, 0, O_PRISM}, {"ramp", required_argument, 0, O_RAMP},
        {"experiment", required_argument, 0, O_EXP},
        {"lambda0-deg", required_argument, 0, O_LAMBDA0},
        {"note", required_argument, 0, O_NOTE}, {"db", required_argument, 0, O_DB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    const char *cmd = "acquire";
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? PL_EXIT_USAGE : PL_EXIT_OK;
    }
    if (!strcmp(argv[1], "daemon"))
        return run_daemon(argc - 1, argv + 1);
    if (!strcmp(argv[1], "arm") || !strcmp(argv[1], "start") ||
        !strcmp(argv[1], "stop") || !strcmp(argv[1], "status"))
        return run_client(argv[1], argc - 1, argv + 1);
    if (strcmp(argv[1], "record"))
        return pl_cli_usage_error(cmd, "unknown action '%s' (expected daemon, "
                                  "arm, start, stop, status or record)", argv[1]);
    argc--;
    argv++;
    pl_err err = {0};
    const char *config = NULL, *prism = NULL, *ramp = NULL, *exp = NULL,
               *note = NULL, *db = NULL;
    double duration = NAN, lam = NAN;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        pl_status st = PL_OK;
        switch (c) {
        case O_CONFIG: config = optarg; break;
        case O_DURATION: st = pl_parse_double("duration", optarg, 1e-3, 86400, &duration, &err); break;
        case O_PRISM: prism = optarg; break;
        case O_RAMP: ramp = optarg; break;
        case O_EXP: exp = optarg; break;
        case O_LAMBDA0: st = pl_parse_double("lambda0-deg", optarg, 0, 90, &lam, &err); break;
        case O_NOTE: note = optarg; break;
        case O_DB: db = optarg; break;
        case O_HELP: fputs(usage, stdout); return PL_EXIT_OK;
        default: return pl_cli_usage_error(cmd, "unknown option");
        }
        if (st != PL_OK)
            return pl_cli_fail(cmd, &err);
    }
    if (!config)
        return pl_cli_usage_error(cmd, "give --config rig.ini");
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    if (pl_rigconf_read(&rc, config, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    const char *dbpath = db ? db : rc.db;
    if (!isnan(duration))
        rc.duration_s = duration;

    pl_source_spec spec;
    pl_sim_options *sim = NULL;
    if (rig_source(&rc, dbpath, config, &spec, &sim, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    const pl_source_type *type = spec.type;
    pl_record_options ro;
    pl_record_options_init(&ro);
    ro.prism = prism ? prism : rc.prism[0] ? rc.prism : NULL;
    ro.ramp = ramp ? ramp : rc.ramp[0] ? rc.ramp : NULL;
    ro.experiment = exp ? exp : rc.experiment[0] ? rc.experiment : NULL;
    ro.lambda0_rad = !isnan(lam) ? lam * M_PI / 180
                   : !isnan(rc.lambda0_deg) ? rc.lambda0_deg * M_PI / 180 : NAN;
    if (note)
        snprintf(ro.notes, sizeof ro.notes, "%s", note);
    ro.writer.sync_full = rc.sync_full;
    ro.writer.commit_interval_s = rc.commit_interval_s;
    ro.writer.block_when_full = 0;   /* a live source never waits */
    ro.pump.stop = &stop_flag;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    pl_recorder *r = NULL;
    long long interrupted = 0;
    if (pl_recorder_open(&r, dbpath, &ro.writer, &interrupted, &err) != PL_OK) {
        pl_sim_options_free(sim);
        return pl_cli_fail(cmd, &err);
    }
    if (interrupted)
        fprintf(stderr, "prismlab acquire: marked %lld unfinished run%s interrupted\n",
                interrupted, interrupted == 1 ? "" : "s");
    void *src = NULL;
    pl_source_info info;
    if (pl_source_open(&spec, &src, &info, &err) != PL_OK) {
        pl_recorder_close(r);
        pl_sim_options_free(sim);
        return pl_cli_fail(cmd, &err);
    }
    double rate = info.sample_rate_hz;
    ro.pump.max_frames = rc.duration_s > 0 ? (long long)llround(rc.duration_s * rate) : -1;
    ro.pump.progress = progress;
    ro.pump.progress_ctx = &rate;
    long long id = -1, frames = 0;
    struct timespec t_start;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    pl_status st = pl_recorder_run(r, type, src, &info, &ro, &id, &frames, &err);
    type->close(src);
    pl_sim_options_free(sim);
    pl_writer_stats ws;
    pl_writer_get_stats(pl_recorder_writer(r), &ws);
    pl_recorder_close(r);
    if (st != PL_OK && st != PL_EOVERRUN)
        return pl_cli_fail(cmd, &err);
    /* what recording cost this process: CPU over wall time, peak memory */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t_start.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t_start.tv_nsec);
    double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                 (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    printf("run=%lld frames=%lld seconds=%.3f rate=%.6g state=%s ring_peak=%zu "
           "cpu=%.2f%% maxrss=%ldkB\n", id, ws.frames_committed,
           ws.frames_committed / rate, rate, st == PL_EOVERRUN ? "overrun" : "complete",
           ws.ring_peak, wall > 0 ? 100 * cpu / wall : 0.0, ru.ru_maxrss);
    if (st == PL_EOVERRUN) {
        fprintf(stderr, "prismlab acquire: %s\n", err.msg);
        return PL_EXIT_DATA;
    }
    return PL_EXIT_OK;
}
