/* tests/acquire/wav_test.c - every sample format and container the WAV
 * source takes, written here with libsndfile, imported, and read back:
 * the stored samples are the file's, bit for bit, and their volts are
 * sample x full scale / 2^(bits-1); a channel map keeps the chosen
 * channels in LDV order; an empty file and a repeat import are refused;
 * a LIST subchunk whose size wraps libsndfile's count (it would loop
 * forever in sf_open) is refused before libsndfile sees it; NaN and
 * infinities in a float file's kept channels refused with where and how
 * many; a 100-channel file read with --channels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/import.h"
#include "db/catalog.h"
#include "db/run.h"
#include "db/store.h"
#include "tests/util/testutil.h"

#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { FRAMES = 3000, CH = 3 };

/* A test signal in [-0.9, 0.9] of full scale, different on each channel. */
static double value(int k, int c)
{
    return 0.9 * sin(0.01 * k * (c + 1) + c);
}

static void write_file(const char *path, int format)
{
    SF_INFO info = {.samplerate = 10000, .channels = CH, .format = format};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    if (!f)
        fail_msg("%s: %s", path, sf_strerror(NULL));
    double *v = malloc(FRAMES * CH * sizeof *v);
    for (int k = 0; k < FRAMES; k++)
        for (int c = 0; c < CH; c++)
            v[k * CH + c] = value(k, c);
    sf_command(f, SFC_SET_NORM_DOUBLE, NULL, SF_TRUE);
    assert_int_equal(sf_writef_double(f, v, FRAMES), FRAMES);
    sf_close(f);
    free(v);
}

/* What the file holds, as the WAV source stores it. */
static double stored_expected(const char *path, int bits, int k, int c)
{
    SF_INFO info = {0};
    SNDFILE *f = sf_open(path, SFM_READ, &info);
    double r = NAN;
    sf_seek(f, k, SEEK_SET);
    if (bits == 16) {
        short s[CH];
        sf_readf_short(f, s, 1);
        r = s[c];
    } else if (bits == 24 || bits == 32) {
        int s[CH];
        sf_readf_int(f, s, 1);
        r = bits == 24 ? s[c] / 256 : s[c];
    } else if (bits == 0) {
        float s[CH];
        sf_readf_float(f, s, 1);
        r = s[c];
    } else {
        double s[CH];
        sf_readf_double(f, s, 1);
        r = s[c];
    }
    sf_close(f);
    return r;
}

static double raw_value(const unsigned char *p, pl_sample_format fmt)
{
    switch (fmt) {
    case PL_FMT_S16: { int16_t v; memcpy(&v, p, 2); return v; }
    case PL_FMT_S24_32:
    case PL_FMT_S32: { int32_t v; memcpy(&v, p, 4); return v; }
    case PL_FMT_F32: { float v; memcpy(&v, p, 4); return v; }
    case PL_FMT_F64: { double v; memcpy(&v, p, 8); return v; }
    default: return NAN;
    }
}

static void test_every_format(void **state)
{
    (void)state;
    struct { int format, bits; pl_sample_format fmt; const char *ext; } cases[] = {
        {SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16, PL_FMT_S16, "wav"},
        {SF_FORMAT_WAV | SF_FORMAT_PCM_24, 24, PL_FMT_S24_32, "wav"},
        {SF_FORMAT_WAV | SF_FORMAT_PCM_32, 32, PL_FMT_S32, "wav"},
        {SF_FORMAT_WAV | SF_FORMAT_FLOAT, 0, PL_FMT_F32, "wav"},
        {SF_FORMAT_WAV | SF_FORMAT_DOUBLE, -1, PL_FMT_F64, "wav"},
        {SF_FORMAT_W64 | SF_FORMAT_PCM_16, 16, PL_FMT_S16, "w64"},
        {SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16, PL_FMT_S16, "flac"},
        {SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 24, PL_FMT_S24_32, "flac"},
    };
    char *dir = tu_tmpdir("wav");
    char *db = tu_path(dir, "w.db");
    assert_int_equal(tu_init_db(db), 0);
    pl_err err = {0};
    /* pass 0 maps file channels 2, 0; pass 1 keeps all three as they are
     * (the source then decodes straight into the caller's buffer) */
    for (size_t i = 0; i < 2 * sizeof cases / sizeof cases[0]; i++) {
        int pass = (int)(i % 2), nch = pass ? 3 : 2;
        char name[64];
        snprintf(name, sizeof name, "f%zu.%s", i / 2, cases[i / 2].ext);
        char *path = tu_path(dir, name);
        if (!pass)
            write_file(path, cases[i / 2].format);
        pl_import_options o;
        pl_import_options_init(&o);
        o.path = path;
        o.format = "wav";
        o.wav.full_scale_v = 10;
        o.wav.channels[0] = 2;        /* LDV 1 on file channel 2 */
        o.wav.channels[1] = 0;
        o.wav.n_channels = pass ? 0 : 2;
        o.force = pass;   /* the same file again */
        o.beams.expect_channels = nch;
        for (int c = 0; c < nch; c++) {
            o.beams.beam_height_m[c] = 0.02 - 0.005 * c;
            o.beams.beam_sign[c] = c % 2 ? -1 : 1;
            o.beams.ldv_scale_mps_per_v[c] = 0.025;
        }
        long long id, frames;
        if (pl_import_file(db, &o, &id, &frames, &err) != PL_OK)
            fail_msg("%s: %s", name, err.msg);
        assert_int_equal(frames, FRAMES);
        pl_store *s = NULL;
        assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
        pl_run_info info;
        pl_channel ch[3];
        assert_int_equal(pl_run_get(s, id, &info, &err), PL_OK);
        assert_int_equal(info.n_channels, nch);
        assert_int_equal(pl_run_channels(s, id, ch, 3, &err), PL_OK);
        assert_int_equal(info.format, cases[i / 2].fmt);
        assert_int_equal(ch[0].source_channel, pass ? 0 : 2);
        assert_int_equal(ch[1].source_channel, pass ? 1 : 0);
        size_t ss = pl_sample_format_size(info.format);
        unsigned char *raw = malloc(FRAMES * (size_t)nch * ss);
        double *volts = malloc(FRAMES * (size_t)nch * sizeof *volts);
        assert_int_equal(pl_run_read_raw(s, id, 0, FRAMES, raw, FRAMES * (size_t)nch * ss, &err), PL_OK);
        assert_int_equal(pl_run_read_volts(s, id, 0, FRAMES, volts, &err), PL_OK);
        int bits = cases[i / 2].bits;
        double scale = bits > 0 ? 10.0 / ldexp(1.0, bits - 1) : 10.0;
        for (int k = 0; k < FRAMES; k += 97)
            for (int c = 0; c < nch; c++) {
                int fc = pass ? c : c == 0 ? 2 : 0;
                double want = stored_expected(path, bits, k, fc);
                double got = raw_value(raw + ((size_t)k * (size_t)nch + (size_t)c) * ss, info.format);
                if (got != want)
                    fail_msg("%s frame %d LDV %d: stored %.17g, file %.17g", name, k, c + 1, got, want);
                tu_assert_close(volts[k * nch + c], want * scale, 1e-12);
                /* and the volts are the signal written, to the format's
                 * resolution (libsndfile writes full scale as 2^(bits-1) - 1,
                 * we read it as 2^(bits-1): 3e-5 relative at 16 bits) */
                tu_assert_close(volts[k * nch + c], 10 * value(k, fc), bits == 16 ? 6e-4 : 1e-5);
            }
        free(raw);
        free(volts);
        pl_store_close(s);
        free(path);
    }
    free(db);
    tu_rmtree(dir);
    free(dir);
}

static void test_refusals(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("wav");
    char *db = tu_path(dir, "w.db"), *empty = tu_path(dir, "empty.wav"),
         *good = tu_path(dir, "good.wav");
    assert_int_equal(tu_init_db(db), 0);
    pl_err err = {0};
    assert_int_equal(tu_write_file(empty, ""), 0);
    pl_import_options o;
    pl_import_options_init(&o);
    o.path = empty;
    long long id;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "empty.wav: not a readable sound file"));
    /* a channel the file does not have */
    write_file(good, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
    pl_import_options_init(&o);
    o.path = good;
    o.wav.full_scale_v = 10;
    o.wav.channels[0] = 5;
    o.wav.channels[1] = 0;
    o.wav.n_channels = 2;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EINVAL);
    assert_non_null(strstr(err.msg, "file channel 5; the file has 0..2"));
    /* three channels where two LDVs are expected */
    o.wav.n_channels = 0;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "3 channels, expected 2"));
    /* twice the same file: refused unless forced */
    o.wav.channels[0] = 0;
    o.wav.channels[1] = 1;
    o.wav.n_channels = 2;
    for (int c = 0; c < 2; c++) {
        o.beams.beam_height_m[c] = 0.02 - 0.01 * c;
        o.beams.beam_sign[c] = c ? -1 : 1;
        o.beams.ldv_scale_mps_per_v[c] = 0.025;
    }
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_OK);
    long long first = id;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EEXIST);
    char want[64];
    snprintf(want, sizeof want, "stored already as run %lld", first);
    assert_non_null(strstr(err.msg, want));
    o.force = 1;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_OK);
    assert_true(id > first);
    free(db);
    free(empty);
    free(good);
    tu_rmtree(dir);
    free(dir);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

/* A 16-bit stereo WAV of 100 frames whose LIST INFO chunk holds a
 * subchunk 'IABC' of the given size. */
static void write_list_wav(const char *path, uint32_t sub_size)
{
    unsigned char b[12 + 24 + 28 + 8 + 400] = {0};
    memcpy(b, "RIFF", 4);
    put32(b + 4, sizeof b - 8);
    memcpy(b + 8, "WAVEfmt ", 8);
    put32(b + 16, 16);
    const unsigned char fmt[16] = {1, 0, 2, 0, 0x10, 0x27, 0, 0, 0x40, 0x9c, 0, 0, 4, 0, 16, 0};
    memcpy(b + 20, fmt, 16);
    memcpy(b + 36, "LIST", 4);
    put32(b + 40, 20);
    memcpy(b + 44, "INFOIABC", 8);
    put32(b + 52, sub_size);
    memcpy(b + 64, "data", 4);
    put32(b + 68, 400);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, sizeof b, f), sizeof b);
    fclose(f);
}

static void test_damaged_list(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("wavlist");
    char *db = tu_path(dir, "w.db"), *wav = tu_path(dir, "list.wav");
    pl_import_options o;
    pl_import_options_init(&o);
    o.path = wav;
    o.wav.full_scale_v = 10;
    for (int c = 0; c < 2; c++) {
        o.beams.beam_height_m[c] = 0.02 - 0.01 * c;
        o.beams.beam_sign[c] = c ? -1 : 1;
        o.beams.ldv_scale_mps_per_v[c] = 0.025;
    }
    pl_err err = {0};
    long long id;
    assert_int_equal(tu_init_db(db), 0);
    alarm(60);   /* the old code never returns: fail, do not hang make check */
    write_list_wav(wav, 8);   /* a sound subchunk: imported */
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_OK);
    /* 12 bytes read + 0xfffffff4 wraps to 0 in libsndfile's uint32 count */
    write_list_wav(wav, 0xfffffff4u);
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "list.wav: damaged header: the LIST subchunk "
                           "'IABC' at byte 48 claims 4294967284 bytes, past its "
                           "LIST chunk's end at byte 64"));
    /* a plain overrun (libsndfile would skip the rest of the LIST) */
    write_list_wav(wav, 9);
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "'IABC' at byte 48 claims 9 bytes"));
    alarm(0);
    free(db);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

/* Import options for a file of two kept channels, with the beams. */
static void two_ldvs(pl_import_options *o, const char *path, int c1, int c2)
{
    pl_import_options_init(o);
    o->path = path;
    o->wav.full_scale_v = 10;
    o->wav.channels[0] = c1;
    o->wav.channels[1] = c2;
    o->wav.n_channels = 2;
    for (int c = 0; c < 2; c++) {
        o->beams.beam_height_m[c] = 0.02 - 0.01 * c;
        o->beams.beam_sign[c] = c ? -1 : 1;
        o->beams.ldv_scale_mps_per_v[c] = 0.025;
    }
}

/* The store's run count: a refused import adds none. */
static long long runs_in(const char *db)
{
    pl_store *s = NULL;
    pl_err err = {0};
    long long n = -1;
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    assert_int_equal(pl_store_count_rows(s, "run", &n, &err), PL_OK);
    pl_store_close(s);
    return n;
}

/* A float WAV (f32 or f64) of 3 channels, 20000 frames (more than one
 * read block), with NaN or Inf where bad[] says: {frame, channel, value}. */
static void write_float_wav(const char *path, int sub, const double (*bad)[3],
                            int n_bad)
{
    enum { N = 20000 };
    SF_INFO info = {.samplerate = 10000, .channels = CH, .format = SF_FORMAT_WAV | sub};
    SNDFILE *f = sf_open(path, SFM_WRITE, &info);
    if (!f)
        fail_msg("%s: %s", path, sf_strerror(NULL));
    double *v = malloc(N * CH * sizeof *v);
    for (int k = 0; k < N; k++)
        for (int c = 0; c < CH; c++)
            v[k * CH + c] = value(k, c);
    for (int i = 0; i < n_bad; i++)
        v[(int)bad[i][0] * CH + (int)bad[i][1]] = bad[i][2];
    assert_int_equal(sf_writef_double(f, v, N), N);
    sf_close(f);
    free(v);
}

/* A NaN or an infinity in a kept channel of a float WAV is refused with
 * the file, the channel, the first frame and the count (issue 31 D7:
 * they were stored, and processing saw no motion); in a channel not kept
 * it is no business of the import's. */
static void test_nonfinite(void **state)
{
    (void)state;
    char *dir = tu_tmpdir("wav");
    char *db = tu_path(dir, "w.db"), *wav = tu_path(dir, "nan.wav");
    assert_int_equal(tu_init_db(db), 0);
    const double bad[][3] = {
        {12345, 2, NAN}, {12346, 2, NAN}, {15000, 0, INFINITY},
        {19999, 2, -INFINITY}, {300, 1, NAN}};
    const int subs[] = {SF_FORMAT_FLOAT, SF_FORMAT_DOUBLE};
    pl_import_options o;
    pl_err err = {0};
    long long id;
    for (int i = 0; i < 2; i++) {
        write_float_wav(wav, subs[i], bad, 5);
        /* LDV 1 = file channel 2 (NaN at 12345, 12346; -Inf at 19999),
         * LDV 2 = file channel 0 (+Inf at 15000); channel 1 not read */
        two_ldvs(&o, wav, 2, 0);
        assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
        char want[512];
        snprintf(want, sizeof want, "%s: file channel 2 (LDV 1) holds NaN at "
                 "frame 12345, the first of 4 NaN or infinite samples in the "
                 "channels read: a recording must hold finite samples", wav);
        assert_string_equal(err.msg, want);
        two_ldvs(&o, wav, 0, 1);   /* NaN at 300 in file channel 1 first */
        assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
        snprintf(want, sizeof want, "%s: file channel 1 (LDV 2) holds NaN at "
                 "frame 300, the first of 2 NaN", wav);
        assert_non_null(strstr(err.msg, want));
        assert_int_equal(runs_in(db), 0);
    }
    /* the bad samples only in file channel 1, which is not kept: imported */
    const double aside[][3] = {{300, 1, NAN}, {301, 1, INFINITY}};
    write_float_wav(wav, SF_FORMAT_FLOAT, aside, 2);
    two_ldvs(&o, wav, 2, 0);
    if (pl_import_file(db, &o, &id, NULL, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(runs_in(db), 1);
    free(db);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

/* A 100-channel WAV (more than the 64 once allowed; 4096 of its frames
 * would not fit the 1 MiB read block) with --channels 97,3: imported, the
 * samples those channels' (issue 31 D8: "100 channels"). */
static void test_many_channels(void **state)
{
    (void)state;
    enum { NCH = 100, N = 25000 };
    char *dir = tu_tmpdir("wav");
    char *db = tu_path(dir, "w.db"), *wav = tu_path(dir, "wide.wav");
    assert_int_equal(tu_init_db(db), 0);
    SF_INFO info = {.samplerate = 10000, .channels = NCH,
                    .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    SNDFILE *f = sf_open(wav, SFM_WRITE, &info);
    if (!f)
        fail_msg("%s: %s", wav, sf_strerror(NULL));
    short *v = malloc((size_t)N * NCH * sizeof *v);
    for (int k = 0; k < N; k++)
        for (int c = 0; c < NCH; c++)
            v[k * NCH + c] = (short)((k * 7 + c * 311) % 30000 - 15000);
    assert_int_equal(sf_writef_short(f, v, N), N);
    sf_close(f);
    pl_import_options o;
    pl_err err = {0};
    long long id, frames;
    two_ldvs(&o, wav, 97, 3);
    if (pl_import_file(db, &o, &id, &frames, &err) != PL_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(frames, N);
    pl_store *s = NULL;
    assert_int_equal(pl_store_open(&s, db, 0, &err), PL_OK);
    short *raw = malloc((size_t)N * 2 * sizeof *raw);
    assert_int_equal(pl_run_read_raw(s, id, 0, N, raw, (size_t)N * 2 * sizeof *raw, &err), PL_OK);
    for (int k = 0; k < N; k++)
        if (raw[2 * k] != v[k * NCH + 97] || raw[2 * k + 1] != v[k * NCH + 3])
            fail_msg("frame %d: stored %d, %d; file %d, %d", k, raw[2 * k],
                     raw[2 * k + 1], v[k * NCH + 97], v[k * NCH + 3]);
    pl_store_close(s);
    /* without --channels: the limit is the LDVs a run holds, and it says so */
    pl_import_options_init(&o);
    o.path = wav;
    o.wav.full_scale_v = 10;
    assert_int_equal(pl_import_file(db, &o, &id, NULL, &err), PL_EFORMAT);
    assert_non_null(strstr(err.msg, "wide.wav: 100 channels, at most 16 (pick "
                                    "the LDVs with --channels)"));
    free(raw);
    free(v);
    free(db);
    free(wav);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_format),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_damaged_list),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_many_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
