/* acquire/import.c - WAV and CSV recordings into the store.  See import.h. */
#include "acquire/import.h"

#include "acquire/pump.h"
#include "acquire/writer.h"
#include "core/sample.h"
#include "core/csvtable.h"
#include "core/numtext.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"
#include "process/physics.h"
#include "process/releases.h"

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

/* Each gap the source filled within frames [first, first + n) of the
 * file (n < 0: to its end) into the run's record (the run's own
 * transaction, its frames counted from first), and named to the caller:
 * the frames are there, as a line the processing knows not to read as
 * measured. */
static pl_status record_gaps(pl_store *store, long long run_id, const char *path,
                             const pl_source_info *info, long long first, long long n,
                             const pl_import_options *opt, pl_err *err)
{
    for (size_t g = 0; g < info->n_gaps; g++) {
        const pl_source_gap *sg = &info->gaps[g];
        long long from = sg->first_frame, to = sg->first_frame + sg->n_frames;
        if (from < first)
            from = first;
        if (n >= 0 && to > first + n)
            to = first + n;
        if (to <= from)
            continue;
        pl_run_gap rg = {from - first, to - from};
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

/* For a cut at frame first: PL_EEXIST naming the run (also in *id) when
 * the file is stored whole already; else *id receives the run that holds
 * this cut already, 0 when none. */
static pl_status refuse_cut(pl_store *store, const char *path, const char *sha256,
                            long long first, long long *id, pl_err *err)
{
    if (pl_run_find_cut(store, sha256, -1, id, err) != PL_OK)
        return err->code;
    if (*id)
        return pl_err_set(err, PL_EEXIST, "%s is stored already, whole, as run "
                          "%lld (same SHA-256): give --force to import it again "
                          "split", path, *id);
    return pl_run_find_cut(store, sha256, first, id, err);
}

/* A file opened for import: its source, what it says and the run it
 * makes (before the writer stores it). */
typedef struct {
    pl_wav_options wav;          /* the spec points here: never moved */
    pl_csv_options csv;
    pl_source_spec spec;
    pl_source_info info;
    void *src;
    pl_run_info run;
    const char *prism, *ramp;
    double lambda0;
} import_file;

/* Opens the file and fills f's run from it and the options. */
static pl_status open_file(const pl_import_options *opt, import_file *f, pl_err *err)
{
    const char *fmt = format_of(opt->path, opt->format);
    if (!fmt)
        return pl_err_set(err, PL_EINVAL, "%s: cannot tell the format from "
                          "the name: give --format wav|csv", opt->path);
    f->wav = opt->wav;
    f->csv = opt->csv;
    f->wav.path = f->csv.path = opt->path;
    f->src = NULL;
    if (!strcmp(fmt, "wav"))
        f->spec = pl_wav_spec(&f->wav, &opt->beams);
    else if (!strcmp(fmt, "csv"))
        f->spec = pl_csv_spec(&f->csv, &opt->beams);
    else
        return pl_err_set(err, PL_EINVAL, "format '%s': expected wav or csv", fmt);
    const pl_source_info *info = &f->info;
    if (pl_source_open(&f->spec, &f->src, &f->info, err) != PL_OK)
        return err->code;
    if (check_rate(opt->path, info, &f->csv, err) != PL_OK) {
        f->spec.type->close(f->src);
        return err->code;
    }

    pl_run_info *run = &f->run;
    pl_run_info_init(run);
    f->prism = opt->prism ? opt->prism : info->prism;
    f->ramp = opt->ramp ? opt->ramp : info->ramp;
    f->lambda0 = !isnan(opt->lambda0_rad) ? opt->lambda0_rad : info->lambda0_rad;
    if (pl_name_check("prism", f->prism, err) != PL_OK ||
        pl_name_check("ramp", f->ramp, err) != PL_OK ||
        pl_name_check("experiment", opt->experiment, err) != PL_OK ||
        pl_source_check_lambda0(f->lambda0, err) != PL_OK) {
        f->spec.type->close(f->src);
        return pl_err_prefix(err, "%s: ", opt->path);
    }
    snprintf(run->prism, sizeof run->prism, "%s", f->prism);
    snprintf(run->ramp, sizeof run->ramp, "%s", f->ramp);
    if (opt->experiment)
        snprintf(run->experiment, sizeof run->experiment, "%s", opt->experiment);
    run->sample_rate_hz = info->sample_rate_hz;
    run->n_channels = info->n_channels;
    run->format = info->format;
    run->little_endian = info->little_endian;
    snprintf(run->source_kind, sizeof run->source_kind, "%s", info->kind);
    snprintf(run->source_detail, sizeof run->source_detail, "%s", info->detail);
    snprintf(run->source_sha256, sizeof run->source_sha256, "%s", info->sha256);
    run->synthetic = opt->synthetic || info->synthetic;
    run->lambda0_rad = f->lambda0;
    recording_time(opt->path, info, run);
    return PL_OK;
}

/* A piece of the file stored as one run: frames [first, first + n);
 * first -1: the whole file (not a cut). */
typedef struct {
    long long first, n;
} import_cut;

/* Begins the run of cut c on w, inside its transaction: the checks, the
 * gaps that fall in it and where it was cut.  *stored receives the run
 * that holds it already (the run is then abandoned and PL_OK returned
 * for a cut, PL_EEXIST for a whole file). */
static pl_status begin(pl_writer *w, const pl_import_options *opt, import_file *f,
                       import_cut c, long long *stored, pl_err *err)
{
    pl_store *store = pl_writer_store(w);
    pl_run_info *run = &f->run;
    const pl_source_info *info = &f->info;
    *stored = 0;
    /* --jobs's turn before the first write: the experiment's row
     * (autocommit, past the store's gate) is one too */
    pl_status st = opt->gate ? opt->gate(opt->gate_ctx, err) : PL_OK;
    if (st == PL_OK && run->experiment[0])
        st = pl_experiment_ensure(store, run->experiment, err);
    if (st == PL_OK)
        st = pl_writer_begin_run(w, run, info->channel, err);
    if (st != PL_OK)
        return st;
    /* Inside the run's transaction (the write lock held): two imports of
     * one file at once cannot both pass.  The thread has no frames yet,
     * so the store is this thread's alone here.  A file stored whole is
     * refused; of a split one, each cut stored already is passed over. */
    if (!opt->force && info->sha256[0])
        st = c.first < 0 ? refuse_stored(store, opt->path, info->sha256, stored, err)
                         : refuse_cut(store, opt->path, info->sha256, c.first, stored, err);
    if (st == PL_OK && !*stored &&
        check_inputs(store, f->prism, f->ramp, info, f->lambda0, err) != PL_OK)
        st = pl_err_prefix(err, "%s: ", opt->path);
    if (st == PL_OK && !*stored)
        st = record_gaps(store, run->id, opt->path, info, c.first < 0 ? 0 : c.first,
                         c.first < 0 ? -1 : c.n, opt, err);
    if (st == PL_OK && !*stored && c.first >= 0)
        st = pl_run_set_cut(store, run->id, c.first, err);
    if (st != PL_OK || *stored) {
        pl_err ignore = {0};
        pl_writer_abort_run(w, &ignore);
    }
    return st;
}

/* 65536-frame chunks at 10 kHz, the store bench's bulk size; each run in
 * one transaction, so a failure, a kill or a power cut before its end
 * leaves nothing of it (writer.h). */
static pl_status make_writer(pl_writer **w, const char *db_path,
                             const pl_import_options *opt, pl_err *err)
{
    pl_writer_config wc = {.commit_interval_s = 6.5536, .sync_full = opt->sync_full,
                           .block_when_full = 1, .atomic = 1};
    return pl_writer_create(w, db_path, &wc, err);
}

/* Files go in big pieces: the per-read cost, not the disk, limits an
 * import read in 10 ms blocks. */
#define READ_FRAMES 16384

static pl_status import_whole(const char *db_path, const pl_import_options *opt,
                              import_file *f, long long *run_id, long long *frames,
                              pl_err *err)
{
    const pl_source_type *type = f->spec.type;
    pl_writer *w = NULL;
    long long stored = 0;
    pl_status st = make_writer(&w, db_path, opt, err);
    if (st == PL_OK)
        st = begin(w, opt, f, (import_cut){-1, -1}, &stored, err);
    if (st != PL_OK) {
        *run_id = stored;
        pl_writer_destroy(w);
        return st;
    }
    pl_pump_options po = {.max_frames = -1, .block_frames = READ_FRAMES,
                          .progress = opt->progress,
                          .progress_ctx = opt->progress_ctx};
    long long moved = 0;
    st = type->start(f->src, err);
    if (st == PL_OK)
        st = pl_acquire_pump(type, f->src, &f->info, w, &po, &moved, err);
    if (st == PL_OK && moved == 0)
        st = pl_err_set(err, PL_EFORMAT, "%s: the file holds no frames: "
                        "nothing to import", opt->path);
    pl_err end_err = {0};
    if (st == PL_OK)
        st = pl_writer_end_run(w, PL_RUN_IMPORTED, err);
    else
        pl_writer_abort_run(w, &end_err);
    if (st == PL_OK && opt->notice)
        name_same_samples(pl_writer_store(w), f->run.id, opt);
    type->stop(f->src, &end_err);
    pl_writer_destroy(w);
    if (st == PL_OK) {
        *run_id = f->run.id;
        if (frames)
            *frames = moved;
    }
    return st;
}

/* --- one run per release (--split-releases) ------------------------------ */

/* The lead-in a cut keeps before its release (s): processing measures the
 * decoders' offsets over its first quiet_s (0.2 s) and fits the hum over
 * all of it (50 periods of 50 Hz in 1 s), and the rig simulator and the
 * daemon leave about as much.  At most half the stillness since the
 * previous release's motion ended, so that the two runs do not share it. */
#define LEAD_S 1.0

/* The stillness a cut keeps after its motion (s): the rig simulator's
 * tail.  Processing's end of the motion lies before it; the rest of a
 * gap, minutes perhaps, is nobody's run. */
#define TAIL_S 0.5

/* The two beams' downhill velocities (m/s) of n raw frames. */
static void beam_velocities(const pl_source_info *info, const unsigned char *buf,
                            size_t n, double *v1, double *v2)
{
    size_t ss = pl_sample_format_size(info->format);
    size_t fb = ss * (size_t)info->n_channels;
    int swap = info->little_endian != pl_host_little_endian();
    double *v[2] = {v1, v2};
    for (int c = 0; c < 2; c++) {
        const pl_channel *ch = &info->channel[c];
        double k = ch->beam_sign * ch->ldv_scale_mps_per_v;
        for (size_t i = 0; i < n; i++)
            v[c][i] = k * pl_channel_volts(ch, pl_sample_code(buf + i * fb + (size_t)c * ss,
                                                             info->format, swap));
    }
}

/* Reads the opened, unstarted source of f to its end through a release
 * finder: *rel receives the finder (the caller destroys it), *total the
 * file's frames. */
static pl_status find_releases(const pl_import_options *opt, import_file *f,
                               pl_releases **rel, long long *total, pl_err *err)
{
    const pl_source_info *info = &f->info;
    const pl_source_type *type = f->spec.type;
    size_t fb = pl_sample_format_size(info->format) * (size_t)info->n_channels;
    unsigned char *buf = malloc(READ_FRAMES * fb);
    double *v = malloc(2 * READ_FRAMES * sizeof *v);
    *total = 0;
    pl_status st = buf && v ? PL_OK : pl_err_set(err, PL_ENOMEM, "%s: out of memory "
                                                 "for finding releases", opt->path);
    if (st == PL_OK && pl_releases_create(rel, info->sample_rate_hz,
                                          info->channel[0].beam_height_m,
                                          info->channel[1].beam_height_m, err) != PL_OK)
        st = pl_err_prefix(err, "%s: ", opt->path);
    if (st == PL_OK)
        st = type->start(f->src, err);
    long long known = info->total_frames;
    for (size_t got = 1; st == PL_OK && got > 0;) {
        st = type->read(f->src, buf, READ_FRAMES, &got, err);
        if (st != PL_OK || got == 0)
            break;
        beam_velocities(info, buf, got, v, v + READ_FRAMES);
        st = pl_releases_feed(*rel, v, v + READ_FRAMES, got, err);
        *total += (long long)got;
        /* the first half of the import's progress: this pass */
        if (opt->progress && known > 0)
            opt->progress(opt->progress_ctx, *total, 2 * known);
    }
    if (st == PL_OK)
        st = pl_releases_finish(*rel, err);
    pl_err ignore = {0};
    type->stop(f->src, &ignore);
    free(buf);
    free(v);
    return st;
}

/* The runs of the releases rel[0..n-1] in a file of total frames: each
 * from its lead-in (LEAD_S, at most half the stillness since the motion
 * before) to TAIL_S into the stillness after its motion, or to the next
 * run's lead-in.  cuts has room for n. */
static void place_cuts(const pl_release *rel, size_t n, long long total, double rate,
                       import_cut *cuts)
{
    long long lead = (long long)ceil(LEAD_S * rate), tail = (long long)ceil(TAIL_S * rate);
    for (size_t k = 0; k < n; k++) {
        long long still = rel[k].start - (k ? rel[k - 1].end : 0);
        long long l = k ? still / 2 : still;
        cuts[k].first = rel[k].start - (l < lead ? l : lead);
    }
    for (size_t k = 0; k < n; k++) {
        long long end = rel[k].end + tail;
        if (end > total)
            end = total;
        if (k + 1 < n && end > cuts[k + 1].first)
            end = cuts[k + 1].first;
        cuts[k].n = end - cuts[k].first;
    }
}

/* started_utc moved on by s seconds (the cut's first frame). */
static void shift_utc(const char *from, double s, char out[32])
{
    int y, mo, d, h, mi, sec;
    snprintf(out, 32, "%s", from);
    if (sscanf(from, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &sec) != 6)
        return;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                    .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm) + (time_t)floor(s);
    if (gmtime_r(&t, &tm))
        strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "3..22" or "3..10, 12, 14..22": ids (ascending) as ranges, into text. */
static void ids_text(const long long *ids, size_t n, char *text, size_t size)
{
    size_t len = 0;
    text[0] = '\0';
    for (size_t i = 0; i < n && len < size;) {
        size_t j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        int w = j > i ? snprintf(text + len, size - len, "%s%lld..%lld", i ? ", " : "",
                                 ids[i], ids[j])
                      : snprintf(text + len, size - len, "%s%lld", i ? ", " : "", ids[i]);
        len += w > 0 ? (size_t)w : 0;
        i = j + 1;
    }
}

/* Pass two: the file again, each cut of cuts[0..n-1] stored as a run of
 * its own (ids[k], or the run that held it already: stored[k] = 1). */
static pl_status store_cuts(const char *db_path, const pl_import_options *opt,
                            import_file *f, const import_cut *cuts, size_t n,
                            long long *ids, int *stored, pl_err *err)
{
    const pl_source_info *info = &f->info;
    const pl_source_type *type = f->spec.type;
    size_t fb = pl_sample_format_size(info->format) * (size_t)info->n_channels;
    double rate = info->sample_rate_hz;
    char started[32];
    snprintf(started, sizeof started, "%s", f->run.started_utc);
    unsigned char *buf = malloc(READ_FRAMES * fb);
    pl_writer *w = NULL;
    pl_status st = buf ? make_writer(&w, db_path, opt, err)
                       : pl_err_set(err, PL_ENOMEM, "%s: out of memory", opt->path);
    if (st == PL_OK)
        st = type->start(f->src, err);
    enum { IDLE, WRITING, PASSING } mode = IDLE;
    long long at = 0, total = 2 * (info->total_frames > 0 ? info->total_frames : 0);
    size_t k = 0;
    for (size_t got = 1; st == PL_OK && got > 0 && k < n; at += (long long)got) {
        if ((st = type->read(f->src, buf, READ_FRAMES, &got, err)) != PL_OK)
            break;
        if (got == 0)
            st = pl_err_set(err, PL_EFORMAT, "%s: the file ended at frame %lld, "
                            "before the cut at frames %lld..%lld: it changed since "
                            "its releases were found", opt->path, at, cuts[k].first,
                            cuts[k].first + cuts[k].n);
        for (size_t i = 0; st == PL_OK && i < got && k < n;) {
            long long pos = at + (long long)i, end = cuts[k].first + cuts[k].n;
            if (mode == IDLE && pos < cuts[k].first) {
                long long skip = cuts[k].first - pos;
                i += skip < (long long)(got - i) ? (size_t)skip : got - i;
                continue;
            }
            if (mode == IDLE) {
                shift_utc(started, (double)cuts[k].first / rate, f->run.started_utc);
                st = begin(w, opt, f, cuts[k], &ids[k], err);
                stored[k] = ids[k] != 0;
                mode = stored[k] ? PASSING : WRITING;
                if (st != PL_OK)
                    break;
            }
            size_t take = end - pos < (long long)(got - i) ? (size_t)(end - pos) : got - i;
            if (mode == WRITING)
                st = pl_writer_push(w, buf + i * fb, take, err);
            i += take;
            if (st != PL_OK || pos + (long long)take < end)
                continue;
            if (mode == WRITING && (st = pl_writer_end_run(w, PL_RUN_IMPORTED, err)) == PL_OK) {
                ids[k] = f->run.id;
                if (opt->notice)
                    name_same_samples(pl_writer_store(w), f->run.id, opt);
            }
            if (st == PL_OK && opt->each_run)
                opt->each_run(opt->each_run_ctx, ids[k], cuts[k].first, cuts[k].n,
                              stored[k]);
            mode = IDLE;
            k++;
        }
        if (opt->progress && total > 0)
            opt->progress(opt->progress_ctx, total / 2 + at + (long long)got, total);
    }
    pl_err ignore = {0};
    if (mode == WRITING)
        pl_writer_abort_run(w, &ignore);
    type->stop(f->src, &ignore);
    pl_writer_destroy(w);
    free(buf);
    return st;
}

/* The runs one file became, named together to opt->notice ("FILE: split
 * into 20 runs: 3..22"); all of them stored already is PL_EEXIST naming
 * them.  *run_id receives the last run imported (the first stored one
 * when none was), *frames their frames. */
static pl_status name_cuts(const pl_import_options *opt, const import_cut *cuts,
                           size_t n, long long *ids, const int *stored,
                           long long *run_id, long long *frames, pl_err *err)
{
    size_t made = 0, kept = 0;
    long long moved = 0;
    /* the imported ids to the front, the stored ones after them */
    long long *old = calloc(n + 1, sizeof *old);
    if (!old)
        return pl_err_set(err, PL_ENOMEM, "%s: out of memory", opt->path);
    for (size_t k = 0; k < n; k++) {
        if (stored[k]) {
            old[kept++] = ids[k];
        } else {
            ids[made++] = ids[k];
            moved += cuts[k].n;
        }
    }
    char made_text[512], old_text[512];
    ids_text(ids, made, made_text, sizeof made_text);
    ids_text(old, kept, old_text, sizeof old_text);
    pl_status st = PL_OK;
    if (!made) {
        *run_id = kept ? old[0] : 0;
        st = pl_err_set(err, PL_EEXIST, "%s is stored already, split by release, as "
                        "run%s %s (same SHA-256): give --force to import it again",
                        opt->path, pl_plural_s((long long)kept), old_text);
    } else {
        *run_id = ids[made - 1];
        if (frames)
            *frames = moved;
        if (opt->notice) {
            char text[1400];
            snprintf(text, sizeof text, "%s: split into %zu run%s: %s%s%s%s", opt->path,
                     made, pl_plural_s((long long)made), made_text,
                     kept ? " (stored already: " : "", kept ? old_text : "",
                     kept ? ")" : "");
            opt->notice(opt->notice_ctx, text);
        }
    }
    free(old);
    return st;
}

/* The file as one run per release: pass one finds the releases (nothing
 * stored), pass two reads the file again and stores each cut.  Memory
 * does not grow with the file: a read's frames, the list of releases. */
static pl_status import_split(const char *db_path, const pl_import_options *opt,
                              import_file *f, long long *run_id, long long *frames,
                              pl_err *err)
{
    pl_releases *rel = NULL;
    long long total = 0;
    pl_status st = find_releases(opt, f, &rel, &total, err);
    size_t n = 0;
    const pl_release *r = st == PL_OK ? pl_releases_list(rel, &n) : NULL;
    if (st == PL_OK && n == 0)
        st = pl_err_set(err, PL_EFORMAT, "%s: no release found in %.1f s: nowhere "
                        "do both beams read the same rotary speed above %g rad/s for "
                        "%g s after stillness (a recording of the rig at rest, or the "
                        "wrong beam heights or signs); without --split-releases it is "
                        "stored whole", opt->path, (double)total / f->info.sample_rate_hz,
                        PL_PHYS_MOVING_OMEGA, PL_PHYS_SECOND_S);
    import_cut *cuts = n ? malloc(n * sizeof *cuts) : NULL;
    long long *ids = n ? calloc(n, sizeof *ids) : NULL;
    int *stored = n ? calloc(n, sizeof *stored) : NULL;
    if (st == PL_OK && (!cuts || !ids || !stored))
        st = pl_err_set(err, PL_ENOMEM, "%s: out of memory for %zu releases",
                        opt->path, n);
    if (st == PL_OK)
        place_cuts(r, n, total, f->info.sample_rate_hz, cuts);
    pl_releases_destroy(rel);
    /* the source again, from its start (a file source reads it anew) */
    if (st == PL_OK) {
        f->spec.type->close(f->src);
        f->src = NULL;
        st = pl_source_open(&f->spec, &f->src, &f->info, err);
    }
    if (st == PL_OK)
        st = store_cuts(db_path, opt, f, cuts, n, ids, stored, err);
    if (st == PL_OK)
        st = name_cuts(opt, cuts, n, ids, stored, run_id, frames, err);
    free(cuts);
    free(ids);
    free(stored);
    return st;
}

pl_status pl_import_file(const char *db_path, const pl_import_options *opt,
                         long long *run_id, long long *frames, pl_err *err)
{
    import_file f;
    if (open_file(opt, &f, err) != PL_OK)
        return err->code;
    pl_status st = opt->split_releases
                       ? import_split(db_path, opt, &f, run_id, frames, err)
                       : import_whole(db_path, opt, &f, run_id, frames, err);
    f.spec.type->close(f.src);
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
    "volts_per_unit",
    /* optional: 1 stores one run per release (import --split-releases) */
    "split_releases"};

/* One manifest row as import options, with the text they point to. */
typedef struct {
    char file[512], format[8], exp[PL_NAME_SIZE], prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE], path[1600];
    pl_import_options o;
} manifest_row;

/* What the lab notebook says: the file, the names, the beams, the release. */
static pl_status row_notebook(const pl_csvtable *t, int r, manifest_row *m,
                              pl_err *err)
{
    double h1, h2, s1, s2, fs, lam, syn, split;
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
        (st = pl_csvtable_double(t, r, "synthetic", 0, 1, 1, 0, &syn, err)) ||
        (st = pl_csvtable_double(t, r, "split_releases", 0, 1, 1, 0, &split, err)))
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
    o->split_releases = split != 0;
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

/* A manifest row's cuts (split_releases) to the manifest's each(), one
 * call a run, as a row of whole files gets one. */
typedef struct {
    void (*each)(void *ctx, int row, int rows, long long run_id, const char *path,
                 int stored);
    void *ctx;
    int row, rows, made;
    const char *path;
} row_cuts;

static void each_cut(void *ctx, long long run_id, long long first_frame,
                     long long frames, int stored)
{
    row_cuts *c = ctx;
    (void)first_frame;
    (void)frames;
    c->made += !stored;
    if (c->each)
        c->each(c->ctx, c->row, c->rows, run_id, c->path, stored);
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
                             int *stored, int *split, char *path, size_t path_size,
                             pl_err *err)
{
    manifest_row *row = malloc(sizeof *row);
    *run_id = 0;
    *stored = 0;
    *split = 0;
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
        row->o.each_run = how->each_run;
        row->o.each_run_ctx = how->each_run_ctx;
        *split = row->o.split_releases;
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
        int stored = 0, split = 0;
        char path[1600];
        /* a row's cuts (split_releases) go to each() one a run, as a row
         * of a whole file gets one */
        row_cuts cuts = {each, ctx, r, rows, 0, path};
        how.each_run = each_cut;
        how.each_run_ctx = &cuts;
        if ((st = pl_manifest_import(m, r, db_path, &how, &id, &stored, &split, path,
                                     sizeof path, err)) != PL_OK)
            break;
        if (split) {   /* each cut was told already */
            *count += cuts.made;
            continue;
        }
        *count += !stored;
        if (each)
            each(ctx, r, rows, id, path, stored);
    }
    pl_manifest_close(m);
    return st;
}
