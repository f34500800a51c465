/* acquire/import.c - WAV and CSV recordings into the store.  See import.h. */
#include "acquire/import.h"

#include "acquire/pump.h"
#include "acquire/writer.h"
#include "core/csvtable.h"
#include "core/numtext.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

void pl_import_options_init(pl_import_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->lambda0_rad = NAN;
    pl_source_config_init(&opt->beams);
    opt->beams.expect_channels = 2;   /* two LDVs: (4.1) needs both */
    pl_wav_options_init(&opt->wav);
    pl_csv_options_init(&opt->csv);
}

static const char *format_of(const char *path, const char *format)
{
    if (format)
        return format;
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".wav"))
        return "wav";
    if (dot && !strcasecmp(dot, ".csv"))
        return "csv";
    return NULL;
}

/* The release angle and the beam heights against the prism and ramp
 * named, when the catalogue knows them: the check `run set` makes
 * (db/catalog.h), so that what one refuses the other does not store.  A
 * beam above the prism recorded nothing of it; a release angle past
 * alpha + beta is no release of this prism on this ramp (a typo, or the
 * wrong prism named: the message names both). */
static pl_status check_inputs(pl_store *store, const char *prism, const char *ramp,
                              const pl_source_info *info, double lambda0,
                              pl_err *err)
{
    return pl_catalog_inputs_check(store, prism, ramp, info->channel[0].beam_height_m,
                                   info->n_channels > 1 ? info->channel[1].beam_height_m
                                                        : NAN, lambda0, err);
}

/* When the recording was made: what the file says (its metadata, a WAV's
 * BWF or INFO date), else its modification time less its length (a
 * logger writes the file to its end); the run keeps which it is and,
 * apart, when it was imported. */
static void recording_time(const char *path, const pl_source_info *info,
                           pl_run_info *run)
{
    struct stat sb;
    pl_store_utc_now(run->imported_utc);
    if (info->started_utc[0]) {
        snprintf(run->started_utc, sizeof run->started_utc, "%s", info->started_utc);
        snprintf(run->started_from, sizeof run->started_from, "%s", info->started_from);
        return;
    }
    struct tm tm;
    time_t t = 0;
    if (stat(path, &sb) == 0 && info->total_frames >= 0)
        t = (time_t)floor((double)sb.st_mtime - (double)info->total_frames /
                          info->sample_rate_hz);
    if (!t || !gmtime_r(&t, &tm)) {   /* nothing else known: the import's */
        snprintf(run->started_utc, sizeof run->started_utc, "%s", run->imported_utc);
        snprintf(run->started_from, sizeof run->started_from, "import");
        return;
    }
    strftime(run->started_utc, sizeof run->started_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(run->started_from, sizeof run->started_from, "mtime");
}

/* The slowest sample rate an LDV run can be measured at.  The impact
 * search leaves out the millisecond about each impact (the decoded step:
 * the impacts themselves last well under a ms) and fits the arcs either
 * side of it (process/lattice.h); below 1 kHz that millisecond holds no
 * sample, and the shortest slots of the paper's prisms (2 pi / (N omega):
 * 10-30 ms for N = 22-46 at 8-10 rad/s) hold fewer than 10-30 samples for
 * their two arcs and the step between them.  Every rate an LDV's decoder
 * is recorded at (kHz to hundreds of kHz) passes; a unit read wrong
 * (milliseconds as seconds: 10 kHz becomes 10 Hz) is short of it by a
 * factor of 100 or more, never near it. */
#define MIN_RATE_HZ 1000.0

/* PL_EINVAL naming the rate, where it came from and the likely cause,
 * when the rate is below what the dynamics allow (MIN_RATE_HZ). */
static pl_status check_rate(const char *path, const pl_source_info *info,
                            const pl_csv_options *csv, pl_err *err)
{
    double rate = info->sample_rate_hz;
    if (!(rate < MIN_RATE_HZ))
        return PL_OK;
    const char *from = info->rate_from[0] ? info->rate_from : "the file";
    char hint[160];
    if (!strncmp(from, "the time column", 15)) {
        const char *unit = strstr(from, "(in ms)") ? "ms" : strstr(from, "(in us)") ? "us" : "s";
        if (!strcmp(unit, "s"))
            snprintf(hint, sizeof hint, "is the time column in ms? --time-unit ms");
        else if (!strcmp(unit, "ms"))
            snprintf(hint, sizeof hint, "is the time column in us? --time-unit us");
        else
            snprintf(hint, sizeof hint, "the rows are %.4g ms apart even in us: "
                     "this is no LDV recording", 1e3 / rate);
    } else if (!strcmp(from, "--rate") && !isnan(csv->rate_hz)) {
        snprintf(hint, sizeof hint, "--rate is in Hz: --rate %.6g for %.6g kHz?",
                 1e3 * rate, rate);
    } else if (!strcmp(from, "the WAV header")) {
        snprintf(hint, sizeof hint, "the file was written with the wrong rate: "
                 "write it again with the rate it was recorded at");
    } else {
        snprintf(hint, sizeof hint, "give the rate it was recorded at: --rate HZ");
    }
    return pl_err_set(err, PL_EINVAL, "%s: %s gives %.6g Hz%s: an LDV run needs at "
                      "least %g kHz (the impacts last well under a ms, and the impact "
                      "search needs samples in the ms about each); %s", path, from,
                      rate, strncmp(from, "the time column", 15) ? "" : " between rows",
                      MIN_RATE_HZ / 1e3, hint);
}

/* Each gap the source filled into the run's record (the run's own
 * transaction), and named to the caller: the frames are there, as a line
 * the processing knows not to read as measured. */
static pl_status record_gaps(pl_store *store, long long run_id, const char *path,
                             const pl_source_info *info, const pl_import_options *opt,
                             pl_err *err)
{
    for (size_t g = 0; g < info->n_gaps; g++) {
        const pl_source_gap *sg = &info->gaps[g];
        pl_run_gap rg = {sg->first_frame, sg->n_frames};
        if (pl_run_add_gap(store, run_id, &rg, err) != PL_OK)
            return err->code;
        if (opt->notice) {
            char text[1200];
            double rate = info->sample_rate_hz;
            snprintf(text, sizeof text, "%s:%ld: %lld row%s missing at %.3f s (the "
                     "time column jumps %.1f ms): imported with the gap marked",
                     path, sg->line, sg->n_frames, pl_plural_s(sg->n_frames),
                     (double)sg->first_frame / rate,
                     1e3 * (double)sg->n_frames / rate);
            opt->notice(opt->notice_ctx, text);
        }
    }
    return PL_OK;
}

/* Tells the caller when the new run's samples are another run's (an
 * export imported again, a file copied under another name and --force):
 * the report then counts the two once (docs/validation.md). */
static void name_same_samples(pl_store *store, long long run_id,
                              const pl_import_options *opt)
{
    char text[512];
    pl_err e = {0};
    if (pl_run_same_samples_text(store, run_id, text, sizeof text, &e) == PL_OK &&
        text[0])
        opt->notice(opt->notice_ctx, text);
}

/* PL_EEXIST naming the stored run (also in *id) when a file with this
 * SHA-256 is in the store already. */
static pl_status refuse_stored(pl_store *store, const char *path,
                               const char *sha256, long long *id, pl_err *err)
{
    *id = 0;
    if (pl_run_find_by_sha256(store, sha256, id, err) != PL_OK)
        return err->code;
    if (*id)
        return pl_err_set(err, PL_EEXIST, "%s is stored already as run %lld "
                          "(same SHA-256): give --force to import it again",
                          path, *id);
    return PL_OK;
}

pl_status pl_import_file(const char *db_path, const pl_import_options *opt,
                         long long *run_id, long long *frames, pl_err *err)
{
    const char *fmt = format_of(opt->path, opt->format);
    if (!fmt)
        return pl_err_set(err, PL_EINVAL, "%s: cannot tell the format from "
                          "the name: give --format wav|csv", opt->path);
    pl_wav_options wav = opt->wav;
    pl_csv_options csv = opt->csv;
    wav.path = csv.path = opt->path;
    pl_source_spec spec;
    if (!strcmp(fmt, "wav"))
        spec = pl_wav_spec(&wav, &opt->beams);
    else if (!strcmp(fmt, "csv"))
        spec = pl_csv_spec(&csv, &opt->beams);
    else
        return pl_err_set(err, PL_EINVAL, "format '%s': expected wav or csv", fmt);
    const pl_source_type *type = spec.type;
    pl_source_info info;
    void *src = NULL;
    if (pl_source_open(&spec, &src, &info, err) != PL_OK)
        return err->code;
    if (check_rate(opt->path, &info, &csv, err) != PL_OK) {
        type->close(src);
        return err->code;
    }

    pl_run_info run;
    pl_run_info_init(&run);
    const char *prism = opt->prism ? opt->prism : info.prism;
    const char *ramp = opt->ramp ? opt->ramp : info.ramp;
    double lambda0 = !isnan(opt->lambda0_rad) ? opt->lambda0_rad : info.lambda0_rad;
    if (pl_name_check("prism", prism, err) != PL_OK ||
        pl_name_check("ramp", ramp, err) != PL_OK ||
        pl_name_check("experiment", opt->experiment, err) != PL_OK ||
        pl_source_check_lambda0(lambda0, err) != PL_OK) {
        type->close(src);
        return pl_err_prefix(err, "%s: ", opt->path);
    }
    snprintf(run.prism, sizeof run.prism, "%s", prism);
    snprintf(run.ramp, sizeof run.ramp, "%s", ramp);
    if (opt->experiment)
        snprintf(run.experiment, sizeof run.experiment, "%s", opt->experiment);
    run.sample_rate_hz = info.sample_rate_hz;
    run.n_channels = info.n_channels;
    run.format = info.format;
    run.little_endian = info.little_endian;
    snprintf(run.source_kind, sizeof run.source_kind, "%s", info.kind);
    snprintf(run.source_detail, sizeof run.source_detail, "%s", info.detail);
    snprintf(run.source_sha256, sizeof run.source_sha256, "%s", info.sha256);
    run.synthetic = opt->synthetic || info.synthetic;
    run.lambda0_rad = lambda0;
    recording_time(opt->path, &info, &run);

    /* 65536-frame chunks at 10 kHz, the store bench's bulk size; the whole
     * run in one transaction, so a failure, a kill or a power cut before
     * its end leaves nothing (writer.h). */
    pl_writer_config wc = {.commit_interval_s = 6.5536, .sync_full = opt->sync_full,
                           .block_when_full = 1, .atomic = 1};
    pl_writer *w = NULL;
    pl_status st = pl_writer_create(&w, db_path, &wc, err);
    /* the turn before the first write: the experiment's row (autocommit,
     * past the store's gate) is one too */
    if (st == PL_OK && opt->gate)
        st = opt->gate(opt->gate_ctx, err);
    if (st == PL_OK && run.experiment[0])
        st = pl_experiment_ensure(pl_writer_store(w), run.experiment, err);
    if (st == PL_OK)
        st = pl_writer_begin_run(w, &run, info.channel, err);
    /* Inside the run's transaction (the write lock held): two imports of
     * one file at once cannot both pass.  The thread has no frames yet,
     * so the store is this thread's alone here. */
    if (st == PL_OK && !opt->force && info.sha256[0] &&
        refuse_stored(pl_writer_store(w), opt->path, info.sha256, run_id, err) != PL_OK) {
        pl_err ignore = {0};
        pl_writer_abort_run(w, &ignore);
        st = err->code;
    }
    if (st == PL_OK && check_inputs(pl_writer_store(w), prism, ramp, &info, lambda0,
                                    err) != PL_OK) {
        pl_err ignore = {0};
        pl_writer_abort_run(w, &ignore);
        st = pl_err_prefix(err, "%s: ", opt->path);
    }
    if (st == PL_OK && record_gaps(pl_writer_store(w), run.id, opt->path, &info, opt,
                                   err) != PL_OK) {
        pl_err ignore = {0};
        pl_writer_abort_run(w, &ignore);
        st = err->code;
    }
    if (st != PL_OK) {
        type->close(src);
        pl_writer_destroy(w);
        return st;
    }
    /* Files go in big pieces: the per-read cost, not the disk, limits an
     * import read in 10 ms blocks. */
    pl_pump_options po = {.max_frames = -1, .block_frames = 16384,
                          .progress = opt->progress,
                          .progress_ctx = opt->progress_ctx};
    long long moved = 0;
    st = type->start(src, err);
    if (st == PL_OK)
        st = pl_acquire_pump(type, src, &info, w, &po, &moved, err);
    if (st == PL_OK && moved == 0)
        st = pl_err_set(err, PL_EFORMAT, "%s: the file holds no frames: "
                        "nothing to import", opt->path);
    pl_err end_err = {0};
    if (st == PL_OK)
        st = pl_writer_end_run(w, PL_RUN_IMPORTED, err);
    else
        pl_writer_abort_run(w, &end_err);
    if (st == PL_OK && opt->notice)
        name_same_samples(pl_writer_store(w), run.id, opt);
    type->stop(src, &end_err);
    type->close(src);
    pl_writer_destroy(w);
    if (st == PL_OK) {
        *run_id = run.id;
        if (frames)
            *frames = moved;
    }
    return st;
}

static const char *const manifest_columns[] = {
    "file", "format", "experiment", "prism", "ramp", "h1_m", "h2_m",
    "ldv_scale_mps_per_v", "sign1", "sign2", "full_scale_v", "lambda0_deg",
    "synthetic",
    /* optional: how to read the file, when it cannot tell (docs/acquire.md) */
    "channels", "delimiter", "decimal", "columns", "time_column", "time_unit",
    "rate_hz", "units",
    /* optional: the LDV decoders' delay at DC, S or "S1,S2" (empty: not known) */
    "decoder_delay_s",
    /* optional: the volts in one unit of a CSV's values (a logger's gain) */
    "volts_per_unit"};

/* One manifest row as import options, with the text they point to. */
typedef struct {
    char file[512], format[8], exp[PL_NAME_SIZE], prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE], path[1600];
    pl_import_options o;
} manifest_row;

/* What the lab notebook says: the file, the names, the beams, the release. */
static pl_status row_notebook(const pl_csvtable *t, int r, manifest_row *m,
                              pl_err *err)
{
    double h1, h2, s1, s2, fs, lam, syn;
    pl_status st;
    if ((st = pl_csvtable_string(t, r, "file", 1, m->file, sizeof m->file, err)) ||
        (st = pl_csvtable_string(t, r, "format", 0, m->format, sizeof m->format, err)) ||
        (st = pl_csvtable_string(t, r, "experiment", 0, m->exp, sizeof m->exp, err)) ||
        (st = pl_csvtable_string(t, r, "prism", 0, m->prism, sizeof m->prism, err)) ||
        (st = pl_csvtable_string(t, r, "ramp", 0, m->ramp, sizeof m->ramp, err)) ||
        (st = pl_csvtable_double(t, r, "h1_m", 0, 10, 1, NAN, &h1, err)) ||
        (st = pl_csvtable_double(t, r, "h2_m", 0, 10, 1, NAN, &h2, err)) ||
        (st = pl_csvtable_double(t, r, "sign1", -1, 1, 1, 0, &s1, err)) ||
        (st = pl_csvtable_double(t, r, "sign2", -1, 1, 1, 0, &s2, err)) ||
        (st = pl_csvtable_double(t, r, "full_scale_v", 1e-9, 1e6, 1, NAN, &fs, err)) ||
        (st = pl_csvtable_double(t, r, "lambda0_deg", -180, 180, 1, NAN, &lam, err)) ||
        (st = pl_csvtable_double(t, r, "synthetic", 0, 1, 1, 0, &syn, err)))
        return st;
    if ((s1 != 0 && fabs(s1) != 1) || (s2 != 0 && fabs(s2) != 1))
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: sign1/sign2: expected "
                          "+1 or -1", pl_csvtable_path(t), pl_csvtable_line(t, r));
    pl_import_options *o = &m->o;
    o->format = m->format[0] ? m->format : NULL;
    o->experiment = m->exp[0] ? m->exp : NULL;
    o->prism = m->prism[0] ? m->prism : NULL;
    o->ramp = m->ramp[0] ? m->ramp : NULL;
    o->lambda0_rad = lam * M_PI / 180.0;
    o->synthetic = syn != 0;
    o->beams.beam_height_m[0] = h1;
    o->beams.beam_height_m[1] = h2;
    o->beams.beam_sign[0] = (int)s1;
    o->beams.beam_sign[1] = (int)s2;
    o->wav.full_scale_v = fs;
    /* per beam: "V" or "V1,V2" (two vibrometers, two decoders) */
    char scale[64], delay[64];
    if ((st = pl_csvtable_string(t, r, "ldv_scale_mps_per_v", 0, scale, sizeof scale, err)) ||
        (st = pl_csvtable_string(t, r, "decoder_delay_s", 0, delay, sizeof delay, err)))
        return st;
    if (scale[0] && pl_source_parse_ldv_scale(scale, &o->beams, err) != PL_OK)
        return pl_err_prefix(err, "%s:%ld: column 'ldv_scale_mps_per_v': ",
                             pl_csvtable_path(t), pl_csvtable_line(t, r));
    if (delay[0] && pl_source_parse_decoder_delay(delay, &o->beams, err) != PL_OK)
        return pl_err_prefix(err, "%s:%ld: column 'decoder_delay_s': ",
                             pl_csvtable_path(t), pl_csvtable_line(t, r));
    return PL_OK;
}

/* A field separator or decimal mark: one character, or the word tab. */
static pl_status mark_cell(const pl_csvtable *t, int r, const char *name,
                           char *out, pl_err *err)
{
    char text[8];
    pl_status st = pl_csvtable_string(t, r, name, 0, text, sizeof text, err);
    if (st != PL_OK || !text[0])
        return st;
    if (!strcmp(text, "tab"))
        *out = '\t';
    else if (strlen(text) == 1)
        *out = text[0];
    else
        return pl_err_set(err, PL_EFORMAT, "%s:%ld: column '%s': expected one "
                          "character or tab, got '%s'", pl_csvtable_path(t),
                          pl_csvtable_line(t, r), name, text);
    return PL_OK;
}

/* Which WAV channels hold the LDVs: "I,J", file channels from 0. */
static pl_status channels_cell(const pl_csvtable *t, int r, pl_wav_options *w,
                               pl_err *err)
{
    char text[128];
    pl_status st = pl_csvtable_string(t, r, "channels", 0, text, sizeof text, err);
    char *save = NULL;
    w->n_channels = 0;
    for (char *c = strtok_r(text, ",", &save); st == PL_OK && c;
         c = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(c, &end, 10);
        if (*end || end == c || v < 0 || v >= PL_WAV_MAX_FILE_CHANNELS ||
            w->n_channels >= PL_SOURCE_MAX_CHANNELS)
            return pl_err_set(err, PL_EFORMAT, "%s:%ld: column 'channels': "
                              "expected file channels from 0 to %d as I,J, got "
                              "'%s'", pl_csvtable_path(t), pl_csvtable_line(t, r),
                              PL_WAV_MAX_FILE_CHANNELS - 1,
                              pl_csvtable_text(t, r, pl_csvtable_column(t, "channels")));
        w->channels[w->n_channels++] = (int)v;
    }
    return st;
}

/* How to read the file where it cannot tell: the optional columns. */
static pl_status row_layout(const pl_csvtable *t, int r, manifest_row *m,
                            pl_err *err)
{
    pl_csv_options *c = &m->o.csv;
    char units[8];
    double scale;
    pl_status st;
    if ((st = channels_cell(t, r, &m->o.wav, err)) ||
        (st = mark_cell(t, r, "delimiter", &c->delimiter, err)) ||
        (st = mark_cell(t, r, "decimal", &c->decimal, err)) ||
        (st = pl_csvtable_string(t, r, "columns", 0, c->columns, sizeof c->columns, err)) ||
        (st = pl_csvtable_string(t, r, "time_column", 0, c->time_column,
                                 sizeof c->time_column, err)) ||
        (st = pl_csvtable_string(t, r, "time_unit", 0, c->time_unit,
                                 sizeof c->time_unit, err)) ||
        (st = pl_csvtable_double(t, r, "rate_hz", 1e-3, 1e9, 1, NAN, &c->rate_hz, err)) ||
        (st = pl_csvtable_double(t, r, "volts_per_unit", 1e-12, 1e12, 1, NAN,
                                 &c->volts_per_unit, err)) ||
        (st = pl_csvtable_string(t, r, "units", 0, units, sizeof units, err)))
        return st;
    if (c->time_unit[0] && pl_csv_time_unit(c->time_unit, &scale, err) != PL_OK)
        return pl_err_prefix(err, "%s:%ld: column 'time_unit': ",
                             pl_csvtable_path(t), pl_csvtable_line(t, r));
    if (units[0] && pl_csv_units(units, c, err) != PL_OK)
        return pl_err_prefix(err, "%s:%ld: column 'units': ", pl_csvtable_path(t),
                             pl_csvtable_line(t, r));
    return PL_OK;
}

/* Row r as import options; paths relative to the manifest's folder dir. */
static pl_status read_row(const pl_csvtable *t, int r, const char *dir,
                          int sync_full, manifest_row *m, pl_err *err)
{
    pl_import_options_init(&m->o);
    pl_status st = row_notebook(t, r, m, err);
    if (st == PL_OK)
        st = row_layout(t, r, m, err);
    snprintf(m->path, sizeof m->path, "%s%s", m->file[0] == '/' ? "" : dir, m->file);
    m->o.path = m->path;
    m->o.sync_full = sync_full;
    return st;
}

struct pl_manifest {
    pl_csvtable *t;
    const char *path;
    char dir[1024];      /* the manifest's folder, with its '/' */
    int sync_full, force;
};

pl_status pl_manifest_open(pl_manifest **out, const char *manifest, int sync_full,
                           int force, pl_err *err)
{
    pl_manifest *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return pl_err_set(err, PL_ENOMEM, "manifest: out of memory");
    if (pl_csvtable_read(&m->t, manifest, err) != PL_OK ||
        pl_csvtable_check_columns(m->t, manifest_columns,
                                  sizeof manifest_columns / sizeof manifest_columns[0],
                                  err) != PL_OK ||
        pl_csvtable_require(m->t, "file", err) != PL_OK) {
        pl_manifest_close(m);
        return err->code;
    }
    m->path = manifest;
    m->sync_full = sync_full;
    m->force = force;
    snprintf(m->dir, sizeof m->dir, "%s", manifest);
    char *slash = strrchr(m->dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        m->dir[0] = '\0';
    *out = m;
    return PL_OK;
}

void pl_manifest_close(pl_manifest *m)
{
    if (!m)
        return;
    pl_csvtable_free(m->t);
    free(m);
}

const char *pl_manifest_path(const pl_manifest *m)
{
    return m->path;
}

int pl_manifest_rows(const pl_manifest *m)
{
    return pl_csvtable_rows(m->t);
}

pl_status pl_manifest_import(const pl_manifest *m, int r, const char *db_path,
                             const pl_import_options *how, long long *run_id,
                             int *stored, char *path, size_t path_size, pl_err *err)
{
    manifest_row *row = malloc(sizeof *row);
    *run_id = 0;
    *stored = 0;
    if (path_size)
        path[0] = '\0';
    if (!row)
        return pl_err_set(err, PL_ENOMEM, "manifest: out of memory");
    pl_status st = read_row(m->t, r, m->dir, m->sync_full, row, err);
    if (st == PL_OK) {
        snprintf(path, path_size, "%s", row->path);
        row->o.force = m->force;
        row->o.notice = how->notice;
        row->o.notice_ctx = how->notice_ctx;
        row->o.gate = how->gate;
        row->o.gate_ctx = how->gate_ctx;
        st = pl_import_file(db_path, &row->o, run_id, NULL, err);
        /* A manifest killed half-way is resumed by running it again: what
         * it stored whole is passed over, not a reason to stop. */
        if (st == PL_EEXIST && *run_id > 0) {
            *stored = 1;
            st = PL_OK;
        }
        if (st != PL_OK)   /* the row's own errors name its line already */
            pl_err_prefix(err, "%s:%ld: ", m->path, pl_csvtable_line(m->t, r));
    }
    free(row);
    return st;
}

pl_status pl_import_manifest(const char *db_path, const char *manifest,
                             int sync_full, int force,
                             void (*each)(void *ctx, int row, int rows,
                                          long long run_id, const char *path,
                                          int stored),
                             void *ctx, void (*notice)(void *ctx, const char *text),
                             void *notice_ctx, int *count, pl_err *err)
{
    pl_manifest *m = NULL;
    *count = 0;
    if (pl_manifest_open(&m, manifest, sync_full, force, err) != PL_OK)
        return err->code;
    pl_import_options how;
    pl_import_options_init(&how);
    how.notice = notice;
    how.notice_ctx = notice_ctx;
    int rows = pl_manifest_rows(m);
    pl_status st = PL_OK;
    for (int r = 0; r < rows && st == PL_OK; r++) {
        long long id = 0;
        int stored = 0;
        char path[1600];
        if ((st = pl_manifest_import(m, r, db_path, &how, &id, &stored, path,
                                     sizeof path, err)) != PL_OK)
            break;
        *count += !stored;
        if (each)
            each(ctx, r, rows, id, path, stored);
    }
    pl_manifest_close(m);
    return st;
}
