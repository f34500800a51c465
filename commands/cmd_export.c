/* commands/cmd_export.c - `prismlab export`: a stored run back out, as
 * volts in CSV or as its raw samples in WAV, or a derived series.  Only
 * this file prints. */
#include "commands.h"
#include "core/atomicfile.h"
#include "core/cli.h"
#include "core/numtext.h"
#include "core/version.h"
#include "db/derived.h"
#include "db/run.h"
#include "db/validation.h"
#include "model/validate/validate.h"

#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pl_cli_command command = {
    .name = "export",
    .usage =
    "usage: prismlab export RUN (--csv FILE | --wav FILE) [--db FILE]\n"
    "       prismlab export RUN --series omega|theta|Lp|vp1|vp2|impacts --csv FILE\n"
    "       prismlab export RUN --series sim-line|sim-plastic [--fit recorded|fitted]\n"
    "                           --csv FILE\n",
    .about = "Writes a stored run out again, or what processing derived from it.\n",
    .max_args = PL_CLI_ANY_ARGS};

/* What --series names: a stored series, or the impact list. */
static const pl_opt_choice series_names[] = {
    {"omega", 0}, {"theta", 1}, {"Lp", 2}, {"vp1", 3}, {"vp2", 4},
    {"impacts", 5}, {"sim-line", 6}, {"sim-plastic", 7}, {NULL, 0}};

/* --fit of the simulated series: -1 the fitted one when stored, else the
 * one with the recorded release angle. */
static const pl_opt_choice fit_names[] = {{"recorded", 0}, {"fitted", 1},
                                          {NULL, 0}};

/* The validation of (run, law) export writes: fit as asked, or fitted
 * when stored and else recorded. */
static pl_status pick_validation(pl_store *s, long long id, const char *law,
                                 int fit, pl_validation *v, pl_err *err)
{
    if (fit >= 0)
        return pl_validation_get(s, id, law, fit_names[fit].name, v, err);
    if (pl_validation_get(s, id, law, "fitted", v, err) == PL_OK)
        return PL_OK;
    if (err->code != PL_ENOTFOUND)
        return err->code;
    return pl_validation_get(s, id, law, "recorded", v, err);
}

/* A stored simulation (validate keeps its parameters, not its series) run
 * again and written at 1 kHz over the window it was compared on:
 * t_s (the run's clock), Lp, omega_rad_s, vp1_mps, vp2_mps, under a '#'
 * line naming the simulation's parameters. */
static pl_status write_simulation(FILE *f, pl_store *s, long long id,
                                  const char *law, int fit, pl_err *err)
{
    pl_validation v;
    if (pick_validation(s, id, law, fit, &v, err) != PL_OK) {
        if (err->code == PL_ENOTFOUND)
            pl_err_set(err, PL_ENOTFOUND, "run %lld has no %s%s simulation of "
                       "the %s law: run 'prismlab validate %lld' first", id,
                       fit >= 0 ? fit_names[fit].name : "", fit >= 0 ? "" : "stored",
                       law, id);
        return err->code;
    }
    if (!(v.duration_s > 0 && v.duration_s < 1e5))
        return pl_err_set(err, PL_EINVAL, "run %lld: the %s simulation has "
                          "no window (%g s)", id, law, v.duration_s);
    size_t n = (size_t)floor(v.duration_s * 1000.0) + 1;
    double *buf = malloc(5 * n * sizeof *buf);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "run %lld: out of memory", id);
    double *t = buf, *lp = t + n, *om = lp + n, *v1 = om + n, *v2 = v1 + n;
    for (size_t i = 0; i < n; i++)
        t[i] = v.t0_s + (double)i / 1000.0;
    if (pl_validation_curve(&v, t, lp, om, v1, v2, n, err) != PL_OK) {
        free(buf);
        return err->code;
    }
    char a[PL_NUM_TEXT_SIZE], b[PL_NUM_TEXT_SIZE], c[PL_NUM_TEXT_SIZE];
    fprintf(f, "# prismlab simulation law=%s fit=%s N=%d a0_m=%s lambda0_deg=%s",
            v.law, v.fit, v.n_edges, pl_num_text(a, sizeof a, v.a0_m),
            pl_deg_text(b, sizeof b, v.lambda0_rad));
    fprintf(f, " beta_deg=%s t0_s=%s status=%s synthetic=1\n",
            pl_deg_text(a, sizeof a, v.beta_rad), pl_num_text(c, sizeof c, v.t0_s),
            v.status);
    fputs("t_s,Lp,omega_rad_s,vp1_mps,vp2_mps\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.6f,%.9g,%.9g,%.9g,%.9g\n", t[i], lp[i], om[i], v1[i], v2[i]);
    free(buf);
    return PL_OK;
}

static void metadata(FILE *f, const pl_run_info *r, const pl_channel *ch)
{
    char t[PL_NUM_TEXT_SIZE];
    fprintf(f, "# prismlab rate_hz=%s ldv_scale=",
            pl_num_text(t, sizeof t, r->sample_rate_hz));
    for (int i = 0; i < r->n_channels; i++)
        fprintf(f, "%s%s", i ? "," : "",
                pl_num_text(t, sizeof t, ch[i].ldv_scale_mps_per_v));
    fputs(" sign=", f);
    for (int i = 0; i < r->n_channels; i++)
        fprintf(f, "%s%d", i ? "," : "", ch[i].beam_sign);
    fputs(" h=", f);
    for (int i = 0; i < r->n_channels; i++)
        fprintf(f, "%s%s", i ? "," : "",
                pl_num_text(t, sizeof t, ch[i].beam_height_m));
    fprintf(f, " synthetic=%d", r->synthetic);
    if (r->prism[0])
        fprintf(f, " prism=%s", r->prism);
    if (r->ramp[0])
        fprintf(f, " ramp=%s", r->ramp);
    if (isfinite(r->lambda0_rad))
        fprintf(f, " lambda0_deg=%s", pl_deg_text(t, sizeof t, r->lambda0_rad));
    /* when it was recorded, so that the export imports back with the
     * recording's start, not the file's time; an old import's start is
     * only its import's and is left out */
    if (r->started_utc[0] && strcmp(r->started_from, "import"))
        fprintf(f, " started_utc=%s", r->started_utc);
    /* the decoders' delays, when every channel has one (a list cannot say
     * "not known" for one of them): an import reads them back */
    int known = 0;
    for (int i = 0; i < r->n_channels; i++)
        known += ch[i].decoder_delay_s > 0;
    for (int i = 0; known == r->n_channels && i < r->n_channels; i++)
        fprintf(f, "%s%s", i ? "," : " decoder_delay_s=",
                pl_num_text(t, sizeof t, ch[i].decoder_delay_s));
    fputc('\n', f);
}

static int export_csv(const char *cmd, pl_store *s, const pl_run_info *r,
                      const pl_channel *ch, const char *path)
{
    pl_err err = {0};
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    FILE *f = pl_atomicfile_stream(af);
    metadata(f, r, ch);
    fprintf(f, "# run %lld exported by prismlab %s: volts by each channel's calibration\n",
            r->id, pl_version());
    fputs("t_s", f);
    for (int i = 0; i < r->n_channels; i++)
        fprintf(f, ",%s_V", ch[i].name[0] ? ch[i].name : "ch");
    fputc('\n', f);
    enum { BLOCK = 65536 };
    double *v = malloc((size_t)BLOCK * r->n_channels * sizeof *v);
    int rc = PL_EXIT_OK;
    for (long long at = 0; v && at < r->n_frames; at += BLOCK) {
        long long n = r->n_frames - at < BLOCK ? r->n_frames - at : BLOCK;
        if (pl_run_read_volts(s, r->id, at, n, v, &err) != PL_OK) {
            rc = pl_cli_fail(cmd, &err);
            break;
        }
        for (long long k = 0; k < n; k++) {
            fprintf(f, "%.9g", (double)(at + k) / r->sample_rate_hz);
            for (int i = 0; i < r->n_channels; i++)
                fprintf(f, ",%.9g", v[k * r->n_channels + i]);
            fputc('\n', f);
        }
    }
    free(v);
    if (rc != PL_EXIT_OK)
        pl_atomicfile_abort(af);
    else if (pl_atomicfile_commit(af, &err) != PL_OK)
        rc = pl_cli_fail(cmd, &err);
    return rc;
}

/* The WAV subformat that keeps r's samples exactly, and for unsigned
 * card codes (comedi's sampl_t, lsampl_t) the mid-scale taken off, so
 * that an audio editor shows the signal around zero (exact; the metadata
 * says how back).  0, or -1 when no WAV format keeps them. */
static int wav_subformat(const pl_run_info *r, int *sub, double *code_offset)
{
    *code_offset = 0;
    switch (r->format) {
    case PL_FMT_S16: *sub = SF_FORMAT_PCM_16; return 0;
    case PL_FMT_S24_32: *sub = SF_FORMAT_PCM_24; return 0;
    case PL_FMT_S32: *sub = SF_FORMAT_PCM_32; return 0;
    case PL_FMT_F32: *sub = SF_FORMAT_FLOAT; return 0;
    case PL_FMT_F64: *sub = SF_FORMAT_DOUBLE; return 0;
    case PL_FMT_U16: *sub = SF_FORMAT_PCM_16; *code_offset = 32768; return 0;
    case PL_FMT_U32: *sub = SF_FORMAT_PCM_32; *code_offset = 2147483648.0; return 0;
    default: return -1;
    }
}

/* The run's prismlab metadata as the WAV's comment, with the file's full
 * scale fs (volts) and, for unsigned codes, how to get them back. */
static void wav_comment(SNDFILE *f, const pl_run_info *r, const pl_channel *ch, double fs,
                        double code_offset)
{
    char meta[1024];
    FILE *m = fmemopen(meta, sizeof meta, "w");
    if (!m)
        return;
    metadata(m, r, ch);
    fclose(m);
    meta[sizeof meta - 1] = '\0';
    char *nl = strchr(meta, '\n');
    if (nl)
        *nl = '\0';
    char full[1400], t[PL_NUM_TEXT_SIZE];
    int used = snprintf(full, sizeof full, "%s full_scale_v=%s", meta + 2,
                        pl_num_text(t, sizeof t, fs));
    if (code_offset != 0) {
        /* code = sample + code_offset; volts by each channel's
         * calibration V = sum_k c_k (code - origin)^k */
        used += snprintf(full + used, sizeof full - (size_t)used,
                         " code_offset=%.0f cal_origin=%s cal=", code_offset,
                         pl_num_text(t, sizeof t, ch[0].cal_origin));
        for (int i = 0; i < r->n_channels && used < (int)sizeof full; i++)
            used += snprintf(full + used, sizeof full - (size_t)used,
                             "%s%.9g:%.9g:%.9g:%.9g", i ? "," : "",
                             ch[i].cal_coef[0], ch[i].cal_coef[1],
                             ch[i].cal_coef[2], ch[i].cal_coef[3]);
    }
    sf_set_string(f, SF_STR_COMMENT, full);
}

/* n frames of raw samples in buf (r's format, nch channels) written to f
 * as subformat sub: unsigned codes less mid-scale, 24-bit codes back to
 * sndfile's int.  Returns the frames written. */
static sf_count_t wav_write_block(SNDFILE *f, int sub, pl_sample_format format, void *buf,
                                  long long n, int nch)
{
    if (format == PL_FMT_U16) {
        uint16_t *u = buf;
        int16_t *v = buf;
        for (long long i = 0; i < n * nch; i++)
            v[i] = (int16_t)((int32_t)u[i] - 32768);
    } else if (format == PL_FMT_U32) {
        uint32_t *u = buf;
        int32_t *v = buf;
        for (long long i = 0; i < n * nch; i++)
            v[i] = (int32_t)((int64_t)u[i] - 2147483648LL);
    }
    if (sub == SF_FORMAT_PCM_16)
        return sf_writef_short(f, buf, n);
    if (sub == SF_FORMAT_FLOAT)
        return sf_writef_float(f, buf, n);
    if (sub == SF_FORMAT_DOUBLE)
        return sf_writef_double(f, buf, n);
    int32_t *iv = buf;
    if (sub == SF_FORMAT_PCM_24)   /* stored as the 24-bit code */
        for (long long i = 0; i < n * nch; i++)
            iv[i] *= 256;
    return sf_writef_int(f, iv, n);
}

static int export_wav(const char *cmd, pl_store *s, const pl_run_info *r,
                      const pl_channel *ch, const char *path)
{
    pl_err err = {0};
    int sub;
    double code_offset;
    if (wav_subformat(r, &sub, &code_offset) != 0) {
        pl_err_set(&err, PL_EINVAL, "run %lld stores %s samples: no WAV "
                   "format keeps them; use --csv", r->id,
                   pl_sample_format_name(r->format));
        return pl_cli_fail(cmd, &err);
    }
    if (!r->little_endian != !pl_host_little_endian()) {
        pl_err_set(&err, PL_EINVAL, "run %lld: samples of the other byte order", r->id);
        return pl_cli_fail(cmd, &err);
    }
    SF_INFO info = {.samplerate = (int)lround(r->sample_rate_hz),
                    .channels = r->n_channels, .format = SF_FORMAT_WAV | sub};
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    SNDFILE *f = sf_open(pl_atomicfile_temp_path(af), SFM_WRITE, &info);
    if (!f) {
        pl_err_set(&err, PL_EIO, "%s: %s", path, sf_strerror(NULL));
        pl_atomicfile_abort(af);
        return pl_cli_fail(cmd, &err);
    }
    /* the file's full scale: the channels' volts per code x 2^(bits-1) */
    double fs = ch[0].cal_coef[1] * (sub == SF_FORMAT_PCM_16 ? 32768.0
                                     : sub == SF_FORMAT_PCM_24 ? 8388608.0
                                     : sub == SF_FORMAT_PCM_32 ? 2147483648.0 : 1.0);
    wav_comment(f, r, ch, fs, code_offset);
    enum { BLOCK = 65536 };
    size_t fb = pl_sample_format_size(r->format) * (size_t)r->n_channels;
    unsigned char *buf = malloc(BLOCK * fb);
    int rc = PL_EXIT_OK;
    for (long long at = 0; buf && at < r->n_frames; at += BLOCK) {
        long long n = r->n_frames - at < BLOCK ? r->n_frames - at : BLOCK;
        if (pl_run_read_raw(s, r->id, at, n, buf, BLOCK * fb, &err) != PL_OK) {
            rc = pl_cli_fail(cmd, &err);
            break;
        }
        if (wav_write_block(f, sub, r->format, buf, n, r->n_channels) != n) {
            pl_err_set(&err, PL_EIO, "%s: %s", path, sf_strerror(f));
            rc = pl_cli_fail(cmd, &err);
            break;
        }
    }
    free(buf);
    if (sf_close(f) != 0 && rc == PL_EXIT_OK) {
        pl_err_set(&err, PL_EIO, "%s: closing failed", path);
        rc = pl_cli_fail(cmd, &err);
    }
    if (rc != PL_EXIT_OK)
        pl_atomicfile_abort(af);
    else if (pl_atomicfile_commit(af, &err) != PL_OK)
        rc = pl_cli_fail(cmd, &err);
    return rc;
}

static int export_series(const char *cmd, pl_store *s, long long id,
                         const char *name, int fit, const char *path)
{
    pl_err err = {0};
    pl_atomicfile *af;
    if (pl_atomicfile_open(&af, path, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    FILE *f = pl_atomicfile_stream(af);
    int rc = PL_EXIT_OK;
    if (!strncmp(name, "sim-", 4)) {
        if (write_simulation(f, s, id, name + 4, fit, &err) != PL_OK) {
            pl_atomicfile_abort(af);
            return pl_cli_fail(cmd, &err);
        }
    } else if (!strcmp(name, "impacts")) {
        pl_impact *im;
        size_t n;
        if (pl_derived_impacts(s, id, &im, &n, &err) != PL_OK) {
            pl_atomicfile_abort(af);
            return pl_cli_fail(cmd, &err);
        }
        fputs("t_s,omega_minus,omega_plus,ratio,interval_s,t_sd_s,ratio_se,confirmed\n", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.6f,%.9g,%.9g,%.9g,%.9g,%.3g,%.3g,%d\n", im[i].t_s, im[i].omega_minus,
                    im[i].omega_plus, im[i].ratio, im[i].interval_s, im[i].t_sd_s,
                    im[i].ratio_se, im[i].confirmed);
        free(im);
    } else {
        double *v, t0, rate;
        size_t n;
        if (pl_derived_series(s, id, name, 10, &v, &n, &t0, &rate, &err) != PL_OK) {
            pl_atomicfile_abort(af);
            return pl_cli_fail(cmd, &err);
        }
        fprintf(f, "t_s,%s\n", name);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.6f,%.9g\n", t0 + (double)i / rate, v[i]);
        free(v);
    }
    if (pl_atomicfile_commit(af, &err) != PL_OK)
        rc = pl_cli_fail(cmd, &err);
    return rc;
}

int pl_cmd_export(int argc, char **argv)
{
    const char *csv = NULL, *wav = NULL, *db = NULL;
    int series = -1, fit = -1;
    pl_opt opts[] = {
        PL_OPT_STRING("csv", &csv, "FILE",
                      "columns t_s and one column of volts a channel (<name>_V),\n"
                      "with the run's prismlab metadata on the first '#' line,\n"
                      "so that `prismlab import` reads it back"),
        PL_OPT_STRING("wav", &wav, "FILE",
                      "the raw samples exactly as stored (16-bit, 24-in-32-bit,\n"
                      "32-bit PCM, 32- or 64-bit float), for runs whose samples\n"
                      "are signed PCM or float (a CSV import is 64-bit float)"),
        PL_OPT_CHOICE("series", &series, series_names, "NAME",
                      "with --csv: a processed series at 1 kHz (t_s,value), or\n"
                      "the impacts (t_s,omega_minus,omega_plus,ratio,interval_s,\n"
                      "t_sd_s,ratio_se,confirmed: -1 for rows older than\n"
                      "the lattice search; t_s is the step's centre, later than\n"
                      "the contact by the LDV decoder's delay, or the contact when\n"
                      "the delay was known (the run's channels' or process\n"
                      "--decoder-delay: the record's impact_t); t_sd_s is the\n"
                      "instant's own scatter, not the delay: docs/data-model.md);\n"
                      "or sim-line, sim-plastic: the simulation validate matched\n"
                      "to the run, run again at 1 kHz over its window\n"
                      "(t_s,Lp,omega_rad_s,vp1_mps,vp2_mps)"),
        PL_OPT_CHOICE("fit", &fit, fit_names, "recorded|fitted",
                      "with --series sim-*: the simulation with the recorded\n"
                      "release angle or the fitted one (default: fitted when\n"
                      "stored)"),
        PL_OPT_DB(&db),
        PL_OPT_END()};
    int nargs, rc = pl_cli_parse(&command, opts, argc, argv, &nargs);
    if (rc != PL_CLI_CONTINUE)
        return rc;
    const char *cmd = command.name;
    if (nargs != 1)
        return pl_cli_usage_error(cmd, "expected one RUN");
    if ((csv != NULL) + (wav != NULL) != 1)
        return pl_cli_usage_error(cmd, "give --csv FILE or --wav FILE");
    if (series >= 0 && !csv)
        return pl_cli_usage_error(cmd, "--series writes CSV: give --csv FILE");
    if (fit >= 0 && series < 6)
        return pl_cli_usage_error(cmd, "--fit goes with --series sim-line or "
                                  "sim-plastic");
    pl_err err = {0};
    char *end;
    long long id = strtoll(argv[1], &end, 10);
    if (end == argv[1] || *end || id < 1)
        return pl_cli_usage_error(cmd, "'%s' is not a run id (a number)",
                                  argv[1]);
    pl_store *s = NULL;
    if (pl_store_open(&s, pl_cli_db_path(db), PL_STORE_READONLY, &err) != PL_OK)
        return pl_cli_fail(cmd, &err);
    if (series >= 0) {
        rc = export_series(cmd, s, id, series_names[series].name, fit, csv);
    } else {
        pl_run_info r;
        pl_channel ch[64];
        if (pl_run_get(s, id, &r, &err) != PL_OK ||
            pl_run_channels(s, id, ch, 64, &err) != PL_OK)
            rc = pl_cli_fail(cmd, &err);
        else
            rc = csv ? export_csv(cmd, s, &r, ch, csv) : export_wav(cmd, s, &r, ch, wav);
    }
    pl_store_close(s);
    return rc;
}
