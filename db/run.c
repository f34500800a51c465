/* db/run.c - runs, channels and chunks in the store. */
#include "db/run.h"

#include "core/numtext.h"
#include "core/sha256.h"
#include "core/version.h"
#include "db/catalog.h"
#include "db/sqlite_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const state_names[PL_NRUNSTATE] = {
    "recording", "complete", "interrupted", "overrun", "imported"};

const char *pl_run_state_name(pl_run_state s) { return state_names[s]; }

pl_status pl_run_state_parse(const char *name, pl_run_state *st)
{
    for (int i = 0; name && i < PL_NRUNSTATE; i++)
        if (strcmp(name, state_names[i]) == 0) {
            *st = (pl_run_state)i;
            return PL_OK;
        }
    return PL_EINVAL;
}

void pl_run_info_init(pl_run_info *info)
{
    memset(info, 0, sizeof *info);
    info->n_channels = 2;
    info->format = PL_FMT_S16;
    info->little_endian = pl_host_little_endian();
    info->state = PL_RUN_RECORDING;
    info->overrun_frame = -1;
    info->cut_first_frame = -1;
    info->lambda0_rad = NAN;
    snprintf(info->source_kind, sizeof info->source_kind, "sim");
}

/* Binds a catalogue reference by name: NULL when empty, an error naming
 * the table when the name is unknown. */
static pl_status lookup_id(pl_store *store, const char *table,
                           const char *name, long long *id, pl_err *err)
{
    char sql[96];
    sqlite3_stmt *st;
    int rc;

    *id = 0;
    if (!name[0])
        return PL_OK;
    snprintf(sql, sizeof sql, "SELECT id FROM %s WHERE name = ?", table);
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return pl_err_set(err, PL_ENOTFOUND,
                          "no %s named '%s' in the catalogue (see 'prismlab "
                          "%s list')", table, name, table);
    return PL_OK;
}

static void bind_id_or_null(sqlite3_stmt *st, int col, long long id)
{
    if (id > 0)
        sqlite3_bind_int64(st, col, id);
    else
        sqlite3_bind_null(st, col);
}

static void bind_text_or_null(sqlite3_stmt *st, int col, const char *text)
{
    if (text[0])
        sqlite3_bind_text(st, col, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, col);
}

static pl_status insert_channel(pl_store *store, long long run_id, int idx,
                                const pl_channel *c, pl_err *err)
{
    static const char sql[] =
        "INSERT INTO channel (run_id, idx, name, source_channel, "
        " beam_height_m, beam_sign, ldv_scale_mps_per_v, cal_kind, "
        " cal_origin, cal_order, cal_c0, cal_c1, cal_c2, cal_c3, "
        " range_min_v, range_max_v, maxdata, decoder_delay_s) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *st;
    int rc;

    if (c->beam_sign != 1 && c->beam_sign != -1)
        return pl_err_set(err, PL_EINVAL,
                          "channel %d: beam sign must be +1 or -1, got %d", idx,
                          c->beam_sign);
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, idx);
    sqlite3_bind_text(st, 3, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, c->source_channel);
    sqlite3_bind_double(st, 5, c->beam_height_m);
    sqlite3_bind_int(st, 6, c->beam_sign);
    sqlite3_bind_double(st, 7, c->ldv_scale_mps_per_v);
    sqlite3_bind_text(st, 8, pl_cal_kind_name(c->cal_kind), -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 9, c->cal_origin);
    sqlite3_bind_int(st, 10, c->cal_order);
    for (int k = 0; k < 4; k++)
        sqlite3_bind_double(st, 11 + k, k <= c->cal_order ? c->cal_coef[k] : 0.0);
    pl_store_bind_real(st, 15, c->range_min_v);
    pl_store_bind_real(st, 16, c->range_max_v);
    if (c->maxdata > 0)
        sqlite3_bind_int64(st, 17, c->maxdata);
    else
        sqlite3_bind_null(st, 17);
    /* 0: not known, NULL in the store (the column's CHECK takes (0, 0.1]) */
    if (c->decoder_delay_s > 0)
        sqlite3_bind_double(st, 18, c->decoder_delay_s);
    else
        sqlite3_bind_null(st, 18);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "storing a channel", err);
    return PL_OK;
}

pl_status pl_run_create(pl_store *store, pl_run_info *info,
                        const pl_channel *ch, pl_err *err)
{
    static const char sql[] =
        "INSERT INTO run (prism_id, ramp_id, experiment_id, started_utc, "
        " sample_rate_hz, n_channels, sample_format, byte_order, state, "
        " source_kind, source_detail, source_sha256, synthetic, lambda0_rad, "
        " pretrigger_frames, notes, started_from, imported_utc) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    long long prism, ramp, experiment;
    sqlite3_stmt *st;
    int rc;

    if (!(info->sample_rate_hz > 0) || info->n_channels < 1 ||
        info->n_channels > 64)
        return pl_err_set(err, PL_EINVAL,
                          "a run needs a positive sample rate and 1..64 "
                          "channels, got %g Hz and %d channels",
                          info->sample_rate_hz, info->n_channels);
    if (lookup_id(store, "prism", info->prism, &prism, err) != PL_OK ||
        lookup_id(store, "ramp", info->ramp, &ramp, err) != PL_OK ||
        lookup_id(store, "experiment", info->experiment, &experiment, err) !=
            PL_OK)
        return err->code;
    if (!info->started_utc[0]) {
        pl_store_utc_now(info->started_utc);
        snprintf(info->started_from, sizeof info->started_from, "clock");
    }
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    bind_id_or_null(st, 1, prism);
    bind_id_or_null(st, 2, ramp);
    bind_id_or_null(st, 3, experiment);
    sqlite3_bind_text(st, 4, info->started_utc, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, info->sample_rate_hz);
    sqlite3_bind_int(st, 6, info->n_channels);
    sqlite3_bind_text(st, 7, pl_sample_format_name(info->format), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, info->little_endian ? "le" : "be", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, pl_run_state_name(info->state), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, info->source_kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, info->source_detail, -1, SQLITE_STATIC);
    bind_text_or_null(st, 12, info->source_sha256);
    sqlite3_bind_int(st, 13, info->synthetic ? 1 : 0);
    pl_store_bind_real(st, 14, info->lambda0_rad);
    sqlite3_bind_int64(st, 15, info->pretrigger_frames);
    sqlite3_bind_text(st, 16, info->notes, -1, SQLITE_STATIC);
    bind_text_or_null(st, 17, info->started_from);
    bind_text_or_null(st, 18, info->imported_utc);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "creating a run", err);
    info->id = sqlite3_last_insert_rowid(pl_store_db(store));
    info->n_frames = 0;
    for (int i = 0; i < info->n_channels; i++)
        if (insert_channel(store, info->id, i, &ch[i], err) != PL_OK)
            return err->code;
    return PL_OK;
}

pl_status pl_run_append_chunk(pl_store *store, long long run_id,
                              long long first_frame, long long n_frames,
                              const void *data, size_t bytes, pl_err *err)
{
    static const char ins[] =
        "INSERT INTO chunk (run_id, first_frame, n_frames, crc32, data) "
        "VALUES (?,?,?,?,?)";
    static const char upd[] =
        "UPDATE run SET n_frames = ?2 WHERE id = ?1 AND n_frames = ?3";
    sqlite3_stmt *st;
    uint32_t crc = (uint32_t)crc32(0L, data, (uInt)bytes);
    int rc;

    if (n_frames <= 0)
        return pl_err_set(err, PL_EINVAL, "run %lld: empty chunk", run_id);
    if (pl_store_prepare(store, ins, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, first_frame);
    sqlite3_bind_int64(st, 3, n_frames);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)crc);
    sqlite3_bind_blob64(st, 5, data, bytes, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "storing a chunk", err);
    /* The guard on the old n_frames keeps chunks contiguous: a chunk that
     * does not start where the run ends changes no row and is refused. */
    if (pl_store_prepare(store, upd, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, first_frame + n_frames);
    sqlite3_bind_int64(st, 3, first_frame);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "updating the run's frame count", err);
    if (sqlite3_changes(pl_store_db(store)) != 1)
        return pl_err_set(err, PL_ESTATE,
                          "run %lld: chunk at frame %lld does not continue the "
                          "run", run_id, first_frame);
    return PL_OK;
}

pl_status pl_run_set_state(pl_store *store, long long run_id,
                           pl_run_state state, long long overrun_frame,
                           pl_err *err)
{
    /* An import ends where its recording ended (its start and its
     * length, to the nearest second), not when the import finished: that
     * is imported_utc. */
    static const char sql[] =
        "UPDATE run SET state = ?2, "
        " overrun_frame = COALESCE(?3, overrun_frame), "
        " ended_utc = CASE WHEN ?2 = 'recording' THEN NULL "
        "  WHEN imported_utc IS NOT NULL AND started_from <> 'import' THEN "
        "   COALESCE(strftime('%Y-%m-%dT%H:%M:%SZ', started_utc, "
        "    printf('%+.3f seconds', n_frames / sample_rate_hz + 0.5)), ?4) "
        "  ELSE ?4 END "
        "WHERE id = ?1";
    char now[32];
    sqlite3_stmt *st;
    int rc;

    pl_store_utc_now(now);
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, pl_run_state_name(state), -1, SQLITE_STATIC);
    if (overrun_frame >= 0)
        sqlite3_bind_int64(st, 3, overrun_frame);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_text(st, 4, now, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "updating the run's state", err);
    if (sqlite3_changes(pl_store_db(store)) != 1)
        return pl_err_set(err, PL_ENOTFOUND, "no run %lld", run_id);
    return PL_OK;
}

#define RUN_COLUMNS                                                         \
    "SELECT r.id, COALESCE(p.name,''), COALESCE(m.name,''), "               \
    " COALESCE(e.name,''), r.started_utc, r.sample_rate_hz, r.n_channels, " \
    " r.sample_format, r.byte_order, r.state, r.overrun_frame, "            \
    " r.source_kind, r.source_detail, r.source_sha256, r.synthetic, "       \
    " r.lambda0_rad, r.pretrigger_frames, r.n_frames, r.ended_utc, "        \
    " r.notes, r.samples_sha256, r.started_from, r.imported_utc, "         \
    " r.cut_first_frame "                                                   \
    "FROM run r LEFT JOIN prism p ON p.id = r.prism_id "                    \
    " LEFT JOIN ramp m ON m.id = r.ramp_id "                                \
    " LEFT JOIN experiment e ON e.id = r.experiment_id "

static void row_to_info(sqlite3_stmt *st, pl_run_info *info)
{
    pl_run_info_init(info);
    info->id = sqlite3_column_int64(st, 0);
    pl_store_column_text(st, 1, info->prism, sizeof info->prism);
    pl_store_column_text(st, 2, info->ramp, sizeof info->ramp);
    pl_store_column_text(st, 3, info->experiment, sizeof info->experiment);
    pl_store_column_text(st, 4, info->started_utc, sizeof info->started_utc);
    info->sample_rate_hz = sqlite3_column_double(st, 5);
    info->n_channels = sqlite3_column_int(st, 6);
    pl_sample_format_parse((const char *)sqlite3_column_text(st, 7), &info->format);
    info->little_endian = strcmp((const char *)sqlite3_column_text(st, 8), "le") == 0;
    pl_run_state_parse((const char *)sqlite3_column_text(st, 9), &info->state);
    info->overrun_frame = sqlite3_column_type(st, 10) == SQLITE_NULL
                              ? -1 : sqlite3_column_int64(st, 10);
    pl_store_column_text(st, 11, info->source_kind, sizeof info->source_kind);
    pl_store_column_text(st, 12, info->source_detail, sizeof info->source_detail);
    pl_store_column_text(st, 13, info->source_sha256, sizeof info->source_sha256);
    info->synthetic = sqlite3_column_int(st, 14);
    info->lambda0_rad = pl_store_column_real(st, 15);
    info->pretrigger_frames = sqlite3_column_int64(st, 16);
    info->n_frames = sqlite3_column_int64(st, 17);
    pl_store_column_text(st, 18, info->ended_utc, sizeof info->ended_utc);
    pl_store_column_text(st, 19, info->notes, sizeof info->notes);
    pl_store_column_text(st, 20, info->samples_sha256, sizeof info->samples_sha256);
    pl_store_column_text(st, 21, info->started_from, sizeof info->started_from);
    pl_store_column_text(st, 22, info->imported_utc, sizeof info->imported_utc);
    info->cut_first_frame = sqlite3_column_type(st, 23) == SQLITE_NULL
                                ? -1 : sqlite3_column_int64(st, 23);
}

pl_status pl_run_get(pl_store *store, long long run_id, pl_run_info *info,
                     pl_err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (pl_store_prepare(store, RUN_COLUMNS "WHERE r.id = ?", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        row_to_info(st, info);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return PL_OK;
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "reading a run", err);
    return pl_err_set(err, PL_ENOTFOUND, "no run %lld in '%s' (see 'prismlab "
                      "run list')", run_id, pl_store_path(store));
}

pl_status pl_run_list(pl_store *store, const char *experiment,
                      pl_run_visit_fn fn, void *ctx, pl_err *err)
{
    sqlite3_stmt *st;
    pl_run_info info;
    int rc;

    if (pl_store_prepare(store,
                         RUN_COLUMNS "WHERE ?1 IS NULL OR e.name = ?1 "
                                     "ORDER BY r.id DESC",
                         &st, err) != PL_OK)
        return err->code;
    if (experiment)
        sqlite3_bind_text(st, 1, experiment, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        row_to_info(st, &info);
        if (fn(ctx, &info))
            break;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return pl_store_fail(store, "listing runs", err);
    return PL_OK;
}

pl_status pl_run_channels(pl_store *store, long long run_id, pl_channel *ch,
                          int max, pl_err *err)
{
    static const char sql[] =
        "SELECT idx, name, source_channel, beam_height_m, beam_sign, "
        " ldv_scale_mps_per_v, cal_kind, cal_origin, cal_order, cal_c0, "
        " cal_c1, cal_c2, cal_c3, range_min_v, range_max_v, maxdata, "
        " decoder_delay_s "
        "FROM channel WHERE run_id = ? ORDER BY idx";
    sqlite3_stmt *st;
    int rc, n = 0;

    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < max) {
        pl_channel *c = &ch[n++];
        memset(c, 0, sizeof *c);
        pl_store_column_text(st, 1, c->name, sizeof c->name);
        c->source_channel = sqlite3_column_int(st, 2);
        c->beam_height_m = sqlite3_column_double(st, 3);
        c->beam_sign = sqlite3_column_int(st, 4);
        c->ldv_scale_mps_per_v = sqlite3_column_double(st, 5);
        pl_cal_kind_parse((const char *)sqlite3_column_text(st, 6), &c->cal_kind);
        c->cal_origin = sqlite3_column_double(st, 7);
        c->cal_order = sqlite3_column_int(st, 8);
        for (int k = 0; k < 4; k++)
            c->cal_coef[k] = sqlite3_column_double(st, 9 + k);
        c->range_min_v = pl_store_column_real(st, 13);
        c->range_max_v = pl_store_column_real(st, 14);
        c->maxdata = sqlite3_column_int64(st, 15);
        c->decoder_delay_s = sqlite3_column_double(st, 16); /* NULL: 0 */
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return pl_store_fail(store, "reading channels", err);
    return PL_OK;
}

/* Hands the stored bytes of frames [first, first + n) to fn, chunk by
 * chunk in frame order, each verified against its CRC first: fn gets the
 * offset of the piece from first, the piece and its frame count.  The
 * readers below differ only in what they do with a piece. */
typedef void (*chunk_fn)(void *ctx, size_t at, const unsigned char *data,
                         size_t frames);

static pl_status walk_chunks(pl_store *store, long long run_id,
                             const pl_run_info *info, long long first,
                             long long n, chunk_fn fn, void *ctx, pl_err *err)
{
    static const char sql[] =
        "SELECT id, first_frame, n_frames, crc32, data FROM chunk "
        "WHERE run_id = ?1 AND first_frame < ?3 AND first_frame + n_frames > ?2 "
        "ORDER BY first_frame";
    sqlite3_stmt *st;
    size_t frame_bytes;
    long long got = 0;
    int rc;

    if (first < 0 || n < 0 || first + n > info->n_frames)
        return pl_err_set(err, PL_EINVAL,
                          "run %lld: frames %lld..%lld requested, run has %lld",
                          run_id, first, first + n - 1, info->n_frames);
    frame_bytes = pl_sample_format_size(info->format) * (size_t)info->n_channels;
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, first);
    sqlite3_bind_int64(st, 3, first + n);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long cid = sqlite3_column_int64(st, 0);
        long long cfirst = sqlite3_column_int64(st, 1);
        long long cn = sqlite3_column_int64(st, 2);
        uint32_t crc = (uint32_t)sqlite3_column_int64(st, 3);
        const unsigned char *data = sqlite3_column_blob(st, 4);
        size_t bytes = (size_t)sqlite3_column_bytes(st, 4);
        long long lo = first > cfirst ? first : cfirst;
        long long hi = (first + n < cfirst + cn) ? first + n : cfirst + cn;

        if (bytes != (size_t)cn * frame_bytes ||
            (uint32_t)crc32(0L, data, (uInt)bytes) != crc) {
            sqlite3_finalize(st);
            return pl_err_set(err, PL_ECORRUPT,
                              "run %lld chunk %lld (frames %lld..%lld) fails "
                              "its CRC-32 check: run 'prismlab db check'",
                              run_id, cid, cfirst, cfirst + cn - 1);
        }
        fn(ctx, (size_t)(lo - first), data + (size_t)(lo - cfirst) * frame_bytes,
           (size_t)(hi - lo));
        got += hi - lo;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "reading chunks", err);
    if (got != n)
        return pl_err_set(err, PL_ECORRUPT,
                          "run %lld: chunks hold %lld of frames %lld..%lld",
                          run_id, got, first, first + n - 1);
    return PL_OK;
}

typedef struct {
    unsigned char *buf;
    size_t frame_bytes;
} raw_ctx;

static void copy_piece(void *ctx, size_t at, const unsigned char *data,
                       size_t frames)
{
    raw_ctx *c = ctx;
    memcpy(c->buf + at * c->frame_bytes, data, frames * c->frame_bytes);
}

pl_status pl_run_read_raw(pl_store *store, long long run_id, long long first,
                          long long n, void *buf, size_t bufsize, pl_err *err)
{
    pl_run_info info;

    if (pl_run_get(store, run_id, &info, err) != PL_OK)
        return err->code;
    raw_ctx c = {buf, pl_sample_format_size(info.format) * (size_t)info.n_channels};
    if (n > 0 && (size_t)n * c.frame_bytes > bufsize)
        return pl_err_set(err, PL_EINVAL, "run %lld: buffer too small", run_id);
    return walk_chunks(store, run_id, &info, first, n, copy_piece, &c, err);
}

/* Decoded volts go to out[k][frame * stride] for channel k: one array per
 * channel (stride 1) or one frame-interleaved array (stride = channels). */
typedef struct {
    const pl_run_info *info;
    const pl_channel *ch;
    double *const *out;
    size_t stride;
    const double *lut;      /* 65536 volts per channel, or NULL */
    const double *scale;    /* a factor per channel, or NULL */
    int swap;
} chan_ctx;

static void decode_piece(void *ctx, size_t at, const unsigned char *data,
                         size_t frames)
{
    const chan_ctx *c = ctx;
    size_t nc = (size_t)c->info->n_channels;
    size_t ss = pl_sample_format_size(c->info->format);

    if (c->lut) {
        for (size_t i = 0; i < frames; i++)
            for (size_t k = 0; k < nc; k++) {
                const unsigned char *p = data + (i * nc + k) * 2;
                unsigned code = c->swap ? (unsigned)p[0] << 8 | p[1]
                                        : (unsigned)p[1] << 8 | p[0];
                c->out[k][(at + i) * c->stride] = c->lut[k * 65536 + code];
            }
        return;
    }
    for (size_t i = 0; i < frames; i++)
        for (size_t k = 0; k < nc; k++) {
            double v = pl_channel_volts(&c->ch[k], pl_sample_code(data + (i * nc + k) * ss,
                                                                 c->info->format, c->swap));
            c->out[k][(at + i) * c->stride] = c->scale ? v * c->scale[k] : v;
        }
}

/* Reads frames [first, first + n) as volts into out[k] with the given
 * stride: what read_volts and read_channels share. */
static pl_status read_decoded(pl_store *store, long long run_id,
                              const pl_run_info *info, const pl_channel *ch,
                              long long first, long long n, double *const *out,
                              size_t stride, const double *scale, pl_err *err)
{
    chan_ctx c = {info, ch, out, stride, NULL, scale,
                  info->little_endian != pl_host_little_endian()};
    /* A 16-bit code has 65536 values: past that many frames a table of
     * their volts (times the scale: the same product as afterwards) is
     * cheaper than a polynomial per sample, and exact. */
    double *lut = NULL;
    int narrow = info->format == PL_FMT_S16 || info->format == PL_FMT_U16;
    if (narrow && n > 65536 && (lut = malloc((size_t)info->n_channels * 65536 * sizeof *lut))) {
        for (int k = 0; k < info->n_channels; k++)
            for (unsigned code = 0; code < 65536; code++) {
                double v = info->format == PL_FMT_S16 && code >= 32768 ? (double)code - 65536.0 : (double)code;
                v = pl_channel_volts(&ch[k], v);
                lut[(size_t)k * 65536 + code] = scale ? v * scale[k] : v;
            }
        c.lut = lut;
    }
    pl_status st = walk_chunks(store, run_id, info, first, n, decode_piece, &c, err);
    free(lut);
    return st;
}

pl_status pl_run_read_volts(pl_store *store, long long run_id, long long first,
                            long long n, double *out, pl_err *err)
{
    pl_run_info info;
    pl_channel ch[64];
    double *col[64];

    if (pl_run_get(store, run_id, &info, err) != PL_OK ||
        pl_run_channels(store, run_id, ch, 64, err) != PL_OK)
        return err->code;
    for (int k = 0; k < info.n_channels; k++)
        col[k] = out + k;
    return read_decoded(store, run_id, &info, ch, first, n, col,
                        (size_t)info.n_channels, NULL, err);
}

pl_status pl_run_read_channels(pl_store *store, long long run_id,
                               long long first, long long n,
                               double *const *out, int n_out, pl_err *err)
{
    return pl_run_read_scaled(store, run_id, first, n, out, NULL, n_out, err);
}

pl_status pl_run_read_scaled(pl_store *store, long long run_id,
                             long long first, long long n, double *const *out,
                             const double *scale, int n_out, pl_err *err)
{
    pl_run_info info;
    pl_channel ch[64];

    if (pl_run_get(store, run_id, &info, err) != PL_OK ||
        pl_run_channels(store, run_id, ch, 64, err) != PL_OK)
        return err->code;
    if (n_out != info.n_channels)
        return pl_err_set(err, PL_EINVAL, "run %lld has %d channels, %d "
                          "arrays given", run_id, info.n_channels, n_out);
    return read_decoded(store, run_id, &info, ch, first, n, out, 1, scale, err);
}

pl_status pl_run_mark_interrupted(pl_store *store, long long *count,
                                  pl_err *err)
{
    char now[32];
    char sql[160];

    pl_store_utc_now(now);
    snprintf(sql, sizeof sql,
             "UPDATE run SET state = 'interrupted', ended_utc = '%s' "
             "WHERE state = 'recording'", now);
    if (pl_store_exec(store, sql, err) != PL_OK)
        return err->code;
    *count = sqlite3_changes(pl_store_db(store));
    return PL_OK;
}

/* Steps a prepared one-row, one-column integer query and finalizes it:
 * *v receives the value, or fallback when there is no row. */
static pl_status step_int64(pl_store *store, sqlite3_stmt *st,
                            const char *what, long long fallback,
                            long long *v, pl_err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int64(st, 0);
    else if (rc == SQLITE_DONE)
        *v = fallback;
    else
        pl_store_fail(store, what, err);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? PL_OK : PL_EDB;
}

pl_status pl_run_find_by_sha256(pl_store *store, const char *sha256,
                                long long *run_id, pl_err *err)
{
    sqlite3_stmt *st;
    /* Only a whole import counts: a run an earlier prismlab left unfinished
     * ('recording', 'interrupted') must not block importing the file. */
    if (pl_store_prepare(store, "SELECT id FROM run WHERE source_sha256 = ? "
                         "AND state = 'imported' ORDER BY id LIMIT 1", &st,
                         err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC);
    return step_int64(store, st, "looking up a run by SHA-256", 0, run_id, err);
}

pl_status pl_run_set_cut(pl_store *store, long long run_id, long long first_frame,
                         pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "UPDATE run SET cut_first_frame = ? WHERE id = ?",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, first_frame);
    sqlite3_bind_int64(st, 2, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "storing where the run was cut", err);
    return PL_OK;
}

pl_status pl_run_find_cut(pl_store *store, const char *sha256, long long first_frame,
                          long long *run_id, pl_err *err)
{
    sqlite3_stmt *st;
    /* as pl_run_find_by_sha256: only a whole import counts */
    if (pl_store_prepare(store, "SELECT id FROM run WHERE source_sha256 = ?1 AND "
                         "state = 'imported' AND (cut_first_frame = ?2 OR "
                         "(?2 < 0 AND cut_first_frame IS NULL)) ORDER BY id LIMIT 1",
                         &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_text(st, 1, sha256, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, first_frame);
    return step_int64(store, st, "looking up a cut run", 0, run_id, err);
}

pl_status pl_run_set_samples_sha256(pl_store *store, long long run_id,
                                    const char *hex, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "UPDATE run SET samples_sha256 = ? WHERE id = ?",
                         &st, err) != PL_OK)
        return err->code;
    bind_text_or_null(st, 1, hex);
    sqlite3_bind_int64(st, 2, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "storing the samples' SHA-256", err);
    return PL_OK;
}

pl_status pl_run_same_samples(pl_store *store, long long run_id,
                              long long *other, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "SELECT o.id FROM run r JOIN run o ON "
                         "o.samples_sha256 = r.samples_sha256 AND o.id < r.id "
                         "WHERE r.id = ? ORDER BY o.id LIMIT 1", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    return step_int64(store, st, "looking up runs with the same samples", 0,
                      other, err);
}

pl_status pl_run_same_samples_text(pl_store *store, long long run_id,
                                   char *text, size_t size, pl_err *err)
{
    long long other = 0;
    pl_run_info o;
    text[0] = '\0';
    if (pl_run_same_samples(store, run_id, &other, err) != PL_OK)
        return err->code;
    if (!other)
        return PL_OK;
    if (pl_run_get(store, other, &o, err) != PL_OK)
        return err->code;
    snprintf(text, size, "run %lld holds the same samples as run %lld (%.200s): "
             "not independent evidence", run_id, other, o.source_detail);
    return PL_OK;
}

/* The SHA-256 of one run's chunks in frame order, the bytes the writer
 * hashed as they went in. */
static pl_status hash_chunks(pl_store *store, long long run_id, char hex[65],
                             pl_err *err)
{
    sqlite3_stmt *st;
    pl_sha256 h;
    int rc;
    if (pl_store_prepare(store, "SELECT data FROM chunk WHERE run_id = ? "
                         "ORDER BY first_frame", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    pl_sha256_init(&h);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        pl_sha256_update(&h, sqlite3_column_blob(st, 0),
                         (size_t)sqlite3_column_bytes(st, 0));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "reading a run's chunks", err);
    pl_sha256_hex(&h, hex);
    return PL_OK;
}

pl_status pl_run_fill_samples_sha256(pl_store *store, long long *count,
                                     pl_err *err)
{
    sqlite3_stmt *st;
    long long *ids = NULL;
    size_t n = 0, cap = 0;
    int rc;
    *count = 0;
    if (pl_store_prepare(store, "SELECT id FROM run WHERE samples_sha256 IS NULL "
                         "AND n_frames > 0 AND state <> 'recording' ORDER BY id",
                         &st, err) != PL_OK)
        return err->code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            long long *v = realloc(ids, cap * sizeof *v);
            if (!v) {
                sqlite3_finalize(st);
                free(ids);
                return pl_err_set(err, PL_ENOMEM, "hashing the runs' samples: "
                                  "out of memory");
            }
            ids = v;
        }
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(ids);
        return pl_store_fail(store, "listing the runs to hash", err);
    }
    for (size_t i = 0; i < n; i++) {
        char hex[65];
        long long id = ids[i];
        if (hash_chunks(store, id, hex, err) != PL_OK ||
            pl_run_set_samples_sha256(store, id, hex, err) != PL_OK) {
            free(ids);
            return pl_err_prefix(err, "run %lld: ", id);
        }
    }
    free(ids);
    *count = (long long)n;
    return PL_OK;
}

pl_status pl_run_delete(pl_store *store, long long run_id, pl_err *err)
{
    sqlite3_stmt *st;
    int rc;
    /* channel, chunk, processing, simulation and validation rows go by
     * the schema's ON DELETE CASCADE */
    if (pl_store_prepare(store, "DELETE FROM run WHERE id = ?", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "deleting a run", err);
    if (sqlite3_changes(pl_store_db(store)) != 1)
        return pl_err_set(err, PL_ENOTFOUND, "no run %lld in '%s'", run_id,
                          pl_store_path(store));
    return PL_OK;
}

pl_status pl_run_add_gap(pl_store *store, long long run_id, const pl_run_gap *gap,
                         pl_err *err)
{
    if (gap->first_frame < 1 || gap->n_frames < 1)
        return pl_err_set(err, PL_EINVAL, "run %lld: a gap of %lld frames at frame %lld "
                          "lies outside a recording", run_id, gap->n_frames,
                          gap->first_frame);
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "INSERT INTO run_gap (run_id, first_frame, n_frames) "
                         "VALUES (?, ?, ?)", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, gap->first_frame);
    sqlite3_bind_int64(st, 3, gap->n_frames);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PL_OK : pl_store_fail(store, "recording a gap", err);
}

pl_status pl_run_gaps(pl_store *store, long long run_id, pl_run_gap **gaps,
                      size_t *n, pl_err *err)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;
    *gaps = NULL;
    *n = 0;
    if (pl_store_prepare(store, "SELECT first_frame, n_frames FROM run_gap "
                         "WHERE run_id = ? ORDER BY first_frame", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 4;
            pl_run_gap *g = realloc(*gaps, cap * sizeof *g);
            if (!g) {
                sqlite3_finalize(st);
                free(*gaps);
                *gaps = NULL;
                *n = 0;
                return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory for its gaps",
                                  run_id);
            }
            *gaps = g;
        }
        (*gaps)[*n].first_frame = sqlite3_column_int64(st, 0);
        (*gaps)[*n].n_frames = sqlite3_column_int64(st, 1);
        ++*n;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(*gaps);
        *gaps = NULL;
        *n = 0;
        return pl_store_fail(store, "reading a run's gaps", err);
    }
    return PL_OK;
}

pl_status pl_run_total_frames(pl_store *store, long long *frames, pl_err *err)
{
    sqlite3_stmt *st;
    if (pl_store_prepare(store, "SELECT COALESCE(sum(n_frames), 0) FROM run",
                         &st, err) != PL_OK)
        return err->code;
    return step_int64(store, st, "summing the stored frames", 0, frames, err);
}

typedef struct {
    long long *ids;
    size_t n, cap;
} id_list;

static int collect_id(void *ctx, const pl_run_info *info)
{
    id_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        long long *v = realloc(l->ids, cap * sizeof *v);
        if (!v)
            return 1;
        l->ids = v;
        l->cap = cap;
    }
    l->ids[l->n++] = info->id;
    return 0;
}

pl_status pl_run_select(pl_store *store, char *const *args, int nargs,
                        const char *experiment, long long **ids, size_t *n,
                        pl_err *err)
{
    id_list l = {0};
    *ids = NULL;
    *n = 0;
    if (nargs > 0) {
        for (int i = 0; i < nargs; i++) {
            char *end;
            long long v = strtoll(args[i], &end, 10);
            if (end == args[i] || *end || v < 1) {
                free(l.ids);
                return pl_err_set(err, PL_EINVAL, "'%s' is not a run id (a "
                                  "number)", args[i]);
            }
            pl_run_info info = {.id = v};
            if (collect_id(&l, &info)) {
                free(l.ids);
                return pl_err_set(err, PL_ENOMEM, "out of memory");
            }
        }
    } else {
        if (pl_run_list(store, experiment, collect_id, &l, err) != PL_OK) {
            free(l.ids);
            return err->code;
        }
        /* pl_run_list gives the newest first: recording order instead */
        for (size_t i = 0; i < l.n / 2; i++) {
            long long t = l.ids[i];
            l.ids[i] = l.ids[l.n - 1 - i];
            l.ids[l.n - 1 - i] = t;
        }
    }
    *ids = l.ids;
    *n = l.n;
    return PL_OK;
}

/* --- corrections ----------------------------------------------------------- */

void pl_run_edit_init(pl_run_edit *e)
{
    memset(e, 0, sizeof *e);
    e->h[0] = e->h[1] = NAN;
    e->ldv_scale_mps_per_v = NAN;
    e->lambda0_rad = NAN;
}

/* A number in the history: the shortest text that reads back the same
 * double (core/numtext.h: 90, not 9e+01); "" for NaN (none). */
static void number_text(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%s", "");
    if (!isnan(v))
        pl_num_text(buf, n, v);
}

/* The same for a release angle stored in radians, in degrees: the text
 * that `run set --lambda0-deg` would read back to the same radians. */
static void degree_text(double rad, char *buf, size_t n)
{
    snprintf(buf, n, "%s", "");
    if (!isnan(rad))
        pl_deg_text(buf, n, rad);
}

/* Records one field's change, unless old and new read the same. */
static pl_status note_change(pl_store *store, long long run_id,
                             const char *when, const char *field,
                             const char *old_value, const char *new_value,
                             int *changed, pl_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if (!strcmp(old_value, new_value))
        return PL_OK;
    if (pl_store_prepare(store, "INSERT INTO run_change (run_id, changed_utc,"
                         " field, old_value, new_value, version) VALUES "
                         "(?, ?, ?, ?, ?, ?)", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, when, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, field, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, old_value, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, new_value, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, pl_version(), -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "recording a run's correction", err);
    ++*changed;
    return PL_OK;
}

/* Runs one UPDATE or DELETE with the run's id as its last parameter,
 * after binding text (when not NULL) or a double to parameter 1. */
static pl_status run_update(pl_store *store, const char *sql, long long run_id,
                            int nparams, const char *text, double value,
                            long long id_value, pl_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if (pl_store_prepare(store, sql, &st, err) != PL_OK)
        return err->code;
    if (nparams == 2) {
        if (text)
            sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
        else if (id_value > 0)
            sqlite3_bind_int64(st, 1, id_value);
        else if (id_value < 0)
            sqlite3_bind_null(st, 1);
        else
            pl_store_bind_real(st, 1, value);
    }
    sqlite3_bind_int64(st, nparams, run_id);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return pl_store_fail(store, "correcting a run", err);
    return PL_OK;
}

/* A catalogue reference: the new name's id (-1 for "" = none), checked. */
static pl_status set_reference(pl_store *store, long long run_id,
                               const char *when, const char *table,
                               const char *old_name, const char *new_name,
                               int *changed, pl_err *err)
{
    char sql[96];
    long long id = 0;
    int before = *changed;
    if (!new_name)
        return PL_OK;
    if (pl_name_check(table, new_name, err) != PL_OK)
        return err->code;
    if (!strcmp(table, "experiment") && new_name[0] &&
        pl_experiment_ensure(store, new_name, err) != PL_OK)
        return err->code;
    if (lookup_id(store, table, new_name, &id, err) != PL_OK)
        return err->code;
    if (note_change(store, run_id, when, table, old_name, new_name, changed,
                    err) != PL_OK)
        return err->code;
    if (*changed == before)
        return PL_OK;
    snprintf(sql, sizeof sql, "UPDATE run SET %s_id = ? WHERE id = ?", table);
    return run_update(store, sql, run_id, 2, NULL, 0, id > 0 ? id : -1, err);
}

/* One channel column of channels 0 and 1 (h, sign) or of all (scale). */
static pl_status set_channel_real(pl_store *store, long long run_id,
                                  const char *when, const char *field,
                                  const char *column, int idx, double old_v,
                                  double new_v, int *changed, pl_err *err)
{
    char a[64], b[64], sql[128];
    int before = *changed;
    if (isnan(new_v))
        return PL_OK;
    number_text(old_v, a, sizeof a);
    number_text(new_v, b, sizeof b);
    if (note_change(store, run_id, when, field, a, b, changed, err) != PL_OK)
        return err->code;
    if (*changed == before)
        return PL_OK;
    if (idx >= 0)
        snprintf(sql, sizeof sql, "UPDATE channel SET %s = ? WHERE idx = %d "
                 "AND run_id = ?", column, idx);
    else
        snprintf(sql, sizeof sql, "UPDATE channel SET %s = ? WHERE run_id = ?",
                 column);
    return run_update(store, sql, run_id, 2, NULL, new_v, 0, err);
}

/* What the old metadata produced: processing (series and impacts go with
 * it), its quality record (or a refusal: the corrected run may well
 * process), simulations and validations. */
static pl_status drop_derived(pl_store *store, long long run_id, pl_err *err)
{
    static const char *const sql[] = {
        "DELETE FROM validation WHERE run_id = ?",
        "DELETE FROM simulation WHERE run_id = ?",
        "DELETE FROM processing WHERE run_id = ?",
        "DELETE FROM run_quality WHERE run_id = ?"};
    for (size_t i = 0; i < sizeof sql / sizeof *sql; i++)
        if (run_update(store, sql[i], run_id, 1, NULL, 0, 0, err) != PL_OK)
            return err->code;
    return PL_OK;
}

/* The corrected run's release angle and beam heights against its prism
 * and ramp (the corrected ones where named), when the edit touches any of
 * them: refused now, rather than by validate later. */
static pl_status check_against_prism(pl_store *store, const pl_run_info *r,
                                     const pl_run_edit *e, double h1,
                                     double h2, pl_err *err)
{
    double lambda0 = e->clear_lambda0 ? NAN : !isnan(e->lambda0_rad)
                     ? e->lambda0_rad : r->lambda0_rad;
    if (!e->prism && !e->ramp && isnan(e->h[0]) && isnan(e->h[1]) &&
        isnan(e->lambda0_rad))
        return PL_OK;
    if (pl_catalog_inputs_check(store, e->prism ? e->prism : r->prism,
                                e->ramp ? e->ramp : r->ramp, h1,
                                r->n_channels > 1 ? h2 : NAN, lambda0, err) != PL_OK)
        return pl_err_prefix(err, "run %lld: ", r->id);
    return PL_OK;
}

static pl_status apply_edit(pl_store *store, long long run_id,
                            const pl_run_edit *e, int *changed, pl_err *err)
{
    pl_run_info r;
    pl_channel ch[64];
    char when[32], a[64], b[64];
    double h1, h2;

    if (pl_run_get(store, run_id, &r, err) != PL_OK ||
        pl_run_channels(store, run_id, ch, 64, err) != PL_OK)
        return err->code;
    if (r.state == PL_RUN_RECORDING)
        return pl_err_set(err, PL_EINVAL, "run %lld is still recording: "
                          "correct it when it has ended", run_id);
    h1 = !isnan(e->h[0]) ? e->h[0] : ch[0].beam_height_m;
    h2 = r.n_channels > 1 ? (!isnan(e->h[1]) ? e->h[1] : ch[1].beam_height_m)
                          : h1 + 1;
    if ((!isnan(e->h[0]) || !isnan(e->h[1])) &&
        pl_beam_heights_check(h1, h2, err) != PL_OK)
        return err->code;
    if (!isnan(e->h[1]) && r.n_channels < 2)
        return pl_err_set(err, PL_EINVAL, "run %lld has one channel: it has "
                          "no h2", run_id);
    if (e->sign[1] && r.n_channels < 2)
        return pl_err_set(err, PL_EINVAL, "run %lld has one channel: it has "
                          "no sign2", run_id);
    for (int i = 0; i < 2; i++)
        if (e->sign[i] && e->sign[i] != 1 && e->sign[i] != -1)
            return pl_err_set(err, PL_EINVAL, "sign%d = %d: expected +1 or -1",
                              i + 1, e->sign[i]);
    if (!isnan(e->ldv_scale_mps_per_v) &&
        !(e->ldv_scale_mps_per_v > 0 && e->ldv_scale_mps_per_v <= 1e3))
        return pl_err_set(err, PL_EINVAL, "LDV scale %g m/s/V: expected a "
                          "value in (0, 1000]", e->ldv_scale_mps_per_v);
    if (pl_lambda0_check(e->lambda0_rad, err) != PL_OK ||
        check_against_prism(store, &r, e, h1, h2, err) != PL_OK)
        return err->code;

    pl_store_utc_now(when);
    if (set_reference(store, run_id, when, "prism", r.prism, e->prism,
                      changed, err) ||
        set_reference(store, run_id, when, "ramp", r.ramp, e->ramp, changed,
                      err) ||
        set_reference(store, run_id, when, "experiment", r.experiment,
                      e->experiment, changed, err))
        return err->code;
    for (int i = 0; i < 2 && i < r.n_channels; i++) {
        char field[16];
        snprintf(field, sizeof field, "h%d_m", i + 1);
        if (set_channel_real(store, run_id, when, field, "beam_height_m", i,
                             ch[i].beam_height_m, e->h[i], changed, err))
            return err->code;
        snprintf(field, sizeof field, "sign%d", i + 1);
        if (set_channel_real(store, run_id, when, field, "beam_sign", i,
                             ch[i].beam_sign, e->sign[i] ? e->sign[i] : NAN,
                             changed, err))
            return err->code;
    }
    if (set_channel_real(store, run_id, when, "ldv_scale_mps_per_v",
                         "ldv_scale_mps_per_v", -1, ch[0].ldv_scale_mps_per_v,
                         e->ldv_scale_mps_per_v, changed, err))
        return err->code;
    if (!isnan(e->lambda0_rad) || e->clear_lambda0) {
        int before = *changed;
        double v = e->clear_lambda0 ? NAN : e->lambda0_rad;
        degree_text(r.lambda0_rad, a, sizeof a);
        degree_text(v, b, sizeof b);
        if (note_change(store, run_id, when, "lambda0_deg", a, b, changed,
                        err) != PL_OK ||
            (*changed > before &&
             run_update(store, "UPDATE run SET lambda0_rad = ? WHERE id = ?",
                        run_id, 2, NULL, v, 0, err) != PL_OK))
            return err->code;
    }
    if (e->notes) {
        int before = *changed;
        if (note_change(store, run_id, when, "notes", r.notes, e->notes,
                        changed, err) != PL_OK ||
            (*changed > before &&
             run_update(store, "UPDATE run SET notes = ? WHERE id = ?", run_id,
                        2, e->notes, 0, 0, err) != PL_OK))
            return err->code;
    }
    return *changed ? drop_derived(store, run_id, err) : PL_OK;
}

pl_status pl_run_set(pl_store *store, long long run_id, const pl_run_edit *e,
                     int *changed, pl_err *err)
{
    *changed = 0;
    if (pl_store_begin(store, err) != PL_OK)
        return err->code;
    if (apply_edit(store, run_id, e, changed, err) != PL_OK) {
        pl_store_rollback(store);
        *changed = 0;
        return err->code;
    }
    return pl_store_commit(store, err);
}

pl_status pl_run_history(pl_store *store, long long run_id,
                         int (*fn)(void *ctx, const pl_run_change *c),
                         void *ctx, pl_err *err)
{
    sqlite3_stmt *st;
    int rc;
    if (pl_store_prepare(store, "SELECT changed_utc, field, old_value, "
                         "new_value, version FROM run_change WHERE run_id = ?"
                         " ORDER BY id", &st, err) != PL_OK)
        return err->code;
    sqlite3_bind_int64(st, 1, run_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        pl_run_change c;
        pl_store_column_text(st, 0, c.changed_utc, sizeof c.changed_utc);
        pl_store_column_text(st, 1, c.field, sizeof c.field);
        pl_store_column_text(st, 2, c.old_value, sizeof c.old_value);
        pl_store_column_text(st, 3, c.new_value, sizeof c.new_value);
        pl_store_column_text(st, 4, c.version, sizeof c.version);
        if (fn(ctx, &c))
            break;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return pl_store_fail(store, "reading a run's corrections", err);
    return PL_OK;
}
