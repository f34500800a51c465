/* commands/cmd_import.c - `prismlab import`: stored recordings into the
 * store, one file or a manifest of many.  Only this file prints. */
#include "acquire/import.h"
#include "commands.h"
#include "core/cli.h"
#include "core/jobs.h"
#include "core/numtext.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "import",
    .usage =
    "usage: prismlab import FILE [--format wav|csv] [--prism P] [--ramp R]\n"
    "                       [--experiment E] [--h1 M --h2 M] [--ldv-scale V[,V2]]\n"
    "                       [--sign1 +-1 --sign2 +-1] [--decoder-delay-s S[,S2]]\n"
    "                       [--full-scale-v V] [--rate HZ]\n"
    "                       [--lambda0-deg DEG] [--synthetic] [--channels I,J]\n"
    "                       [--columns A,B] [--time-column NAME|none]\n"
    "                       [--time-unit s|ms|us] [--units volts|mV|mps]\n"
    "                       [--volts-per-unit V]\n"
    "                       [--delimiter C] [--decimal C] [--split-releases]\n"
    "                       [--force]\n"
    "                       [--sync normal|full] [--db FILE]\n"
    "       prismlab import --manifest FILE.csv [--jobs N] [--force]\n"
    "                       [--sync normal|full] [--db FILE]\n",
    .about =
    "Stores a recording made elsewhere (a WAV or CSV file) as a run, exactly as\n"
    "the file holds it, with its SHA-256.  Options override the file's prismlab\n"
    "metadata; what neither gives is an error naming the option.  A file that\n"
    "turns out bad half-way stores nothing.  A CSV from another logger is read\n"
    "as it is (the separator, the decimal mark, the time column and its unit\n"
    "found from the file, trigger columns passed over); the CSV options say\n"
    "what it cannot tell.  A CSV whose time column jumps by whole rows (a\n"
    "logger's dropped buffer, at most 0.1 s) is imported with the gap marked\n"
    "and named on stderr; a rate below 1 kHz is refused with its likely cause.\n"
    "The release angle and the beam heights are checked against the prism\n"
    "and ramp as run set checks them.  A run whose samples an earlier run\n"
    "holds is named on stderr (not independent evidence).  The run starts\n"
    "when the recording did (the file's metadata started_utc=, a WAV's BWF or\n"
    "INFO date, else its modification time less its length; run show says\n"
    "which); the import's time is kept as imported_utc.\n"
    "--split-releases stores a recording that holds many releases (a logger\n"
    "left running) as one run per release, each with up to 1 s of the still\n"
    "lead-in before it and 0.5 s of the stillness after it, and where it lies\n"
    "in the file (run show: cut from FILE at frame F); the runs are named\n"
    "together on stderr (FILE: split into 20 runs: 3..22), and a file with no\n"
    "release is refused (docs/acquire.md, \"One run per release\").\n"
    "A manifest passes over the files stored already\n"
    "(one line each on stderr), so one cut short is resumed by running it\n"
    "again; --force imports them all again.\n",
    .footer =
    "Prints: run=<id> frames=<n> file=<path> (a manifest: one run=<id> line a file;\n"
    "--split-releases: one line a run, with first_frame=<f>)\n",
    .max_args = PL_CLI_ANY_ARGS};

static const pl_opt_choice formats[] = {{"wav", 0}, {"csv", 1}, {NULL, 0}};
static const pl_opt_choice syncs[] = {{"normal", 0}, {"full", 1}, {NULL, 0}};
static const pl_opt_choice time_units[] = {{"s", 0}, {"ms", 1}, {"us", 2}, {NULL, 0}};

/* --channels I,J: the WAV channels that hold the LDVs, in order. */
static pl_status parse_channels(const pl_opt *opt, const char *value, pl_err *err)
{
    pl_wav_options *w = opt->dest;
    char buf[128], *save = NULL;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", value);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long v;
        if (n >= PL_SOURCE_MAX_CHANNELS)
            return pl_err_set(err, PL_EINVAL, "option '--channels': at most %d",
                              PL_SOURCE_MAX_CHANNELS);
        if (pl_parse_long("channels", t, 0, PL_WAV_MAX_FILE_CHANNELS - 1, &v,
                          err) != PL_OK)
            return err->code;
        w->channels[n++] = (int)v;
    }
    w->n_channels = n;
    return PL_OK;
}

/* --decoder-delay-s S[,S2]: the LDV decoders' delays, stored with the
 * channels (one value: both). */
static pl_status parse_decoder_delay(const pl_opt *opt, const char *value, pl_err *err)
{
    if (pl_source_parse_decoder_delay(value, opt->dest, err) != PL_OK)
        return pl_err_prefix(err, "option '--decoder-delay-s': ");
    return PL_OK;
}

/* --ldv-scale V[,V2]: the LDV decoders' scales (one value: both beams'). */
static pl_status parse_ldv_scale(const pl_opt *opt, const char *value, pl_err *err)
{
    if (pl_source_parse_ldv_scale(value, opt->dest, err) != PL_OK)
        return pl_err_prefix(err, "option '--ldv-scale': ");
    return PL_OK;
}

/* --units volts|mV|mps: what the CSV's LDV columns hold. */
static pl_status parse_units(const pl_opt *opt, const char *value, pl_err *err)
{
    if (pl_csv_units(value, opt->dest, err) != PL_OK)
        return pl_err_prefix(err, "option '--units': ");
    return PL_OK;
}

/* What the command line gives beyond pl_import_options' own fields. */
typedef struct {
    pl_import_options o;
    const char *db, *manifest;
    long jobs;                  /* --jobs; 0: one per CPU */
    int format;                 /* -1: from the file name */
    int time_unit;              /* -1: from the time column's name */
    double lambda0_deg;         /* NaN: the file's */
} import_args;

/* The option table, pointing into a; t has room for cap rows. */
static void import_table(pl_opt *t, size_t cap, import_args *a)
{
    pl_import_options *o = &a->o;
    pl_opt rows[] = {
        PL_OPT_CHOICE("format", &a->format, formats, "wav|csv", "default: from the file name"),
        PL_OPT_STRING("prism", &o->prism, "P", "the prism, a catalogue name (default: the file's)"),
        PL_OPT_STRING("ramp", &o->ramp, "R", "the ramp, likewise"),
        PL_OPT_STRING("experiment", &o->experiment, "E", "file the run under E (created if new)"),
        PL_OPT_DOUBLE("h1", &o->beams.beam_height_m[0], 0, 10, "M",
                      "beam heights of channels 1 and 2, m"),
        PL_OPT_DOUBLE("h2", &o->beams.beam_height_m[1], 0, 10, "M", "(the second)"),
        PL_OPT_CALLBACK("ldv-scale", &o->beams, parse_ldv_scale, "V[,V2]",
                        "the LDV decoders' scales, m/s per volt: one for\n"
                        "both beams, or beam 1's,beam 2's (two vibrometers)"),
        PL_OPT_SIGN("sign1", &o->beams.beam_sign[0],
                    "+1 or -1: the sign that makes downhill positive"),
        PL_OPT_SIGN("sign2", &o->beams.beam_sign[1], "(the second channel's)"),
        PL_OPT_CALLBACK("decoder-delay-s", &o->beams, parse_decoder_delay, "S[,S2]",
                        "the LDV decoders' delay at DC, s (data sheet, or\n"
                        "1/(2 pi f_c) of the tracking filter): one for both\n"
                        "channels or one each; stored with the channels,\n"
                        "process then puts t_s at the contact (default: not\n"
                        "known, t_s is the decoded step's centre)"),
        PL_OPT_DOUBLE("full-scale-v", &o->wav.full_scale_v, 1e-9, 1e6, "V",
                      "WAV: the volts at digital full scale"),
        PL_OPT_DOUBLE("rate", &o->csv.rate_hz, 1e-3, 1e9, "HZ",
                      "CSV without a time column or rate metadata"),
        PL_OPT_DOUBLE("lambda0-deg", &a->lambda0_deg, -180, 180, "DEG",
                      "the release angle the operator set"),
        PL_OPT_FLAG("synthetic", &o->synthetic, "mark the run as simulated"),
        PL_OPT_CALLBACK("channels", &o->wav, parse_channels, "I,J",
                        "WAV: the file channels that hold LDV 1, LDV 2 (from 0)"),
        PL_OPT_FLAG("force", &o->force, "import a file whose SHA-256 is already in the store"),
        PL_OPT_FLAG("split-releases", &o->split_releases,
                    "one run per release: a recording of many releases\n"
                    "(a logger left running) cut at the stillness between\n"
                    "them, each run with its lead-in"),
        PL_OPT_TEXT("columns", o->csv.columns, "A,B",
                    "CSV: the LDV columns, by header name or index from 0\n"
                    "(default: every column named <name>_V but trig*;\n"
                    "other columns are passed over)"),
        PL_OPT_TEXT("time-column", o->csv.time_column, "NAME",
                    "CSV: the time column (default t_s, else the first\n"
                    "column named <name>_s, _ms or _us; none: no time\n"
                    "column, the rate from --rate or the metadata)"),
        PL_OPT_CHOICE("time-unit", &a->time_unit, time_units, "s|ms|us",
                      "CSV: its unit (default: its name's suffix _s, _ms\n"
                      "or _us; s for other names)"),
        PL_OPT_CALLBACK("units", &o->csv, parse_units, "volts|mV|mps",
                        "CSV: values are volts (default), millivolts\n"
                        "(a logger that writes mV) or m/s"),
        PL_OPT_DOUBLE("volts-per-unit", &o->csv.volts_per_unit, 1e-12, 1e12, "V",
                      "CSV: the volts one unit of the values is (1e-3 for\n"
                      "mV; a logger's own gain)"),
        PL_OPT_CHAR("delimiter", &o->csv.delimiter, "C",
                    "CSV: field separator (default: of , ; and tab,\n"
                    "the one the header row uses)"),
        PL_OPT_CHAR("decimal", &o->csv.decimal, "C",
                    "CSV: decimal mark (default: . with , separators,\n"
                    "else the first mark a number shows)"),
        PL_OPT_STRING("manifest", &a->manifest, "FILE",
                      "import every row of a manifest (docs/acquire.md)"),
        PL_OPT_INT("jobs", &a->jobs, 0, 4096, "N",
                   "--manifest: files read at once, each in a process of\n"
                   "its own (0, the default: one per CPU; 1: one after\n"
                   "the other); run ids and the store are the same on any\n"
                   "count; memory: N times one file's import"),
        PL_OPT_CHOICE("sync", &o->sync_full, syncs, "normal|full",
                      "full: survive a power cut (slower); default normal"),
        PL_OPT_DB(&a->db),
        PL_OPT_END()};
    assert(sizeof rows <= cap * sizeof *t);
    memcpy(t, rows, sizeof rows);
}

typedef struct {
    const char *label;
} progress_ctx;

static void progress(void *ctx, long long frames, long long total)
{
    const progress_ctx *p = ctx;
    if (total > 0)
        pl_cli_progress(p->label, (unsigned long long)frames,
                        (unsigned long long)total);
}

static void each(void *ctx, int row, int rows, long long run_id,
                 const char *path, int stored)
{
    int *skipped = ctx;
    if (stored) {
        /* stderr: stdout's run= lines stay the runs this call imported */
        fprintf(stderr, "prismlab import: %s is stored already as run %lld: "
                "skipped (--force imports it again)\n", path, run_id);
        ++*skipped;
    } else {
        printf("run=%lld %s\n", run_id, path);
    }
    pl_cli_progress("import", (unsigned long long)row + 1, (unsigned long long)rows);
}

/* A notice of the import's (a gap marked) on stderr, where warnings go:
 * stdout's run= lines stay what scripts read. */
static void notice(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "prismlab import: %s\n", text);
}

/* A cut of --split-releases: its run= line, as a whole file's but with
 * where it starts in the file. */
static void each_cut(void *ctx, long long run_id, long long first_frame,
                     long long frames, int stored)
{
    const char *path = ctx;
    pl_cli_progress_clear();
    if (stored)
        fprintf(stderr, "prismlab import: %s from frame %lld is stored already as run "
                "%lld: skipped (--force imports it again)\n", path, first_frame, run_id);
    else
        printf("run=%lld frames=%lld file=%s first_frame=%lld\n", run_id, frames, path,
               first_frame);
}

/* import --manifest --jobs: the manifest's rows in worker processes. */
typedef struct {
    const pl_manifest *m;
    const char *db;
    int count, skipped, code;
} manifest_jobs;

/* A worker's row of a split file: each cut told as a row of a whole file
 * is (each()), from the path the row's import names. */
typedef struct {
    int row;
    const char *path;
} row_cut_ctx;

static void row_cut(void *ctx, long long run_id, long long first_frame, long long frames,
                    int stored)
{
    const row_cut_ctx *c = ctx;
    int skipped = 0;
    (void)first_frame;
    (void)frames;
    each(&skipped, c->row, 0, run_id, c->path, stored);
}

/* Row k in a worker; its exit status: 0, else the command's for its
 * error.  What it stored and passed over it prints (each()). */
static int import_row_job(void *arg, size_t k, pl_jobs_turn *turn)
{
    manifest_jobs *j = arg;
    pl_import_options how;
    pl_import_options_init(&how);
    char path[1600] = "";
    row_cut_ctx cut = {(int)k, path};
    how.notice = notice;
    how.gate = pl_jobs_gate;
    how.gate_ctx = turn;
    how.each_run = row_cut;
    how.each_run_ctx = &cut;
    long long id = 0;
    int stored = 0, split = 0;
    pl_err err = {0};
    if (pl_manifest_import(j->m, (int)k, j->db, &how, &id, &stored, &split, path,
                           sizeof path, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    int skipped = 0;
    if (!split)
        each(&skipped, (int)k, 0, id, path, stored);
    return PL_EXIT_OK;
}

/* Lines of text that begin with what (at_start) or hold it. */
static int lines_with(const char *text, const char *what, int at_start)
{
    int count = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *end = strchr(l, '\n'), *hit = strstr(l, what);
        count += hit && (!end || hit < end) && (!at_start || hit == l);
    }
    return count;
}

static int import_row_emit(void *arg, size_t k, const pl_jobs_result *r)
{
    manifest_jobs *j = arg;
    pl_jobs_print(r, 0, NULL);
    char why[96];
    if (pl_jobs_death(r, why, sizeof why))
        fprintf(stderr, "prismlab import: %s row %zu: %s\n", pl_manifest_path(j->m),
                k + 1, why);
    /* the runs a row stored are its run= lines, those passed over its
     * "stored already" lines (each()): a row of a split file has many,
     * which an exit status cannot carry */
    j->count += lines_with(r->out, "run=", 1);
    j->skipped += lines_with(r->errout, " is stored already as run ", 0);
    if (r->code != PL_EXIT_OK)
        j->code = r->code > 0 ? r->code : PL_EXIT_DATA;
    return j->code != PL_EXIT_OK;   /* a serial import stops there too */
}

/* import --manifest with --jobs N (N > 1). */
static int import_manifest_jobs(import_args *a, const char *path, int jobs)
{
    pl_err err = {0};
    pl_manifest *m = NULL;
    if (pl_manifest_open(&m, a->manifest, a->o.sync_full, a->o.force, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    manifest_jobs j = {.m = m, .db = path};
    int rows = pl_manifest_rows(m);
    if (pl_jobs_run((size_t)rows, jobs, "import", import_row_job, import_row_emit, &j,
                    &err) != PL_OK && j.code == PL_EXIT_OK)
        j.code = pl_cli_fail(command.name, &err);
    pl_manifest_close(m);
    printf("imported %d run%s from %s into %s", j.count, pl_plural_s(j.count),
           a->manifest, path);
    if (j.skipped)
        printf(" (%d stored already, skipped)", j.skipped);
    putchar('\n');
    return j.code;
}

/* One file, with progress. */
static int import_file(import_args *a, const char *dbpath, const char *path)
{
    pl_import_options *o = &a->o;
    pl_err err = {0};
    o->path = path;
    if (a->format >= 0)
        o->format = formats[a->format].name;
    if (a->time_unit >= 0)
        snprintf(o->csv.time_unit, sizeof o->csv.time_unit, "%s",
                 time_units[a->time_unit].name);
    if (!isnan(a->lambda0_deg))
        o->lambda0_rad = a->lambda0_deg * M_PI / 180.0;
    progress_ctx pc = {.label = "import"};
    o->progress = progress;
    o->progress_ctx = &pc;
    o->notice = notice;
    o->each_run = each_cut;
    o->each_run_ctx = (void *)path;
    long long id = 0, frames = 0;
    if (pl_import_file(dbpath, o, &id, &frames, &err) != PL_OK)
        return pl_cli_fail(command.name, &err);
    if (!o->split_releases)
        printf("run=%lld frames=%lld file=%s\n", id, frames, o->path);
    return PL_EXIT_OK;
}

int pl_cmd_import(int argc, char **argv)
{
    const char *cmd = command.name;
    import_args a = {.format = -1, .time_unit = -1, .lambda0_deg = NAN};
    pl_import_options_init(&a.o);
    pl_opt opts[32];
    import_table(opts, sizeof opts / sizeof *opts, &a);
    int nargs, rc = pl_cli_parse(&command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    const char *path = pl_cli_db_path(a.db);
    if (a.manifest) {
        if (nargs > 0)
            return pl_cli_usage_error(cmd, "give a FILE or --manifest, not both");
        int jobs = a.jobs ? (int)a.jobs : pl_jobs_cpus();
        if (jobs > 1)
            return import_manifest_jobs(&a, path, jobs);
        pl_err err = {0};
        int count = 0, skipped = 0;
        pl_status st = pl_import_manifest(path, a.manifest, a.o.sync_full, a.o.force,
                                          each, &skipped, notice, NULL,
                                          &count, &err);
        printf("imported %d run%s from %s into %s", count, pl_plural_s(count),
               a.manifest, path);
        if (skipped)
            printf(" (%d stored already, skipped)", skipped);
        putchar('\n');
        return st == PL_OK ? PL_EXIT_OK : pl_cli_fail(cmd, &err);
    }
    if (nargs != 1)
        return pl_cli_usage_error(cmd, "expected one FILE (or --manifest FILE)");
    return import_file(&a, path, argv[1]);
}
