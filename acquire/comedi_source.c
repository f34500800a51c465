/* acquire/comedi_source.c - a DAQ card through comedilib.
 *
 * Streaming acquisition by a comedi command: comedi_get_cmd_generic_timed()
 * proposes a timed scan of the channel list, comedi_command_test() is
 * repeated until the driver accepts it (it may round the period), and
 * comedi_command() starts it.  Samples are read from the device file as
 * the driver delivers them (sampl_t, or lsampl_t on SDF_LSAMPL boards) and
 * handed on unconverted; a read returns whole frames and keeps a partial
 * frame for the next call.
 *
 * Calibration per channel: the board's software calibration polynomial
 * (comedi_get_softcal_converter, from the calibration file written by
 * comedi_soft_calibrate) when the board is soft-calibrated and a file
 * exists; else the hardware-calibrated board's converter
 * (comedi_get_hardcal_converter); else the range's nominal linear map.
 *
 * A buffer overflow in the driver (the reader too slow; read() fails with
 * EPIPE, or the subdevice stops running with data lost) is PL_EOVERRUN
 * naming the frame where data were lost.
 */
#include "acquire/comedi_source.h"

#include <comedilib.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seconds of data the driver's buffer holds when the rig names no size:
 * a reader starved this long by the rest of the machine loses nothing. */
#define DEFAULT_BUFFER_S 4.0

typedef struct {
    comedi_t *dev;
    char path[256];
    unsigned subdevice;
    unsigned chanlist[PL_SOURCE_MAX_CHANNELS];
    int n_channels;
    comedi_cmd cmd;
    size_t sample_bytes, frame_bytes;
    unsigned char partial[PL_SOURCE_MAX_CHANNELS * sizeof(lsampl_t)];
    size_t partial_len;
    long long frames;            /* delivered so far */
    int running;
} comedi_source;

static void comedi_close_src(void *self)
{
    comedi_source *s = self;
    if (!s)
        return;
    if (s->dev) {
        if (s->running)
            comedi_cancel(s->dev, s->subdevice);
        comedi_close(s->dev);
    }
    free(s);
}

/* The polynomial comedilib gives, into our channel description. */
static void set_poly(pl_channel *ch, const comedi_polynomial_t *p,
                     pl_cal_kind kind)
{
    ch->cal_kind = kind;
    ch->cal_origin = p->expansion_origin;
    ch->cal_order = p->order > 3 ? 3 : (int)p->order;
    for (int k = 0; k < 4; k++)
        ch->cal_coef[k] = k <= ch->cal_order ? p->coefficients[k] : 0;
}

static void calibrate(comedi_source *s, pl_channel *ch, unsigned chan,
                      unsigned range)
{
    comedi_polynomial_t poly;
    int flags = comedi_get_subdevice_flags(s->dev, s->subdevice);
    comedi_range *rg = comedi_get_range(s->dev, s->subdevice, chan, range);
    lsampl_t maxdata = comedi_get_maxdata(s->dev, s->subdevice, chan);
    ch->maxdata = (long long)maxdata;
    ch->range_min_v = rg ? rg->min : NAN;
    ch->range_max_v = rg ? rg->max : NAN;
    if (flags >= 0 && (flags & SDF_SOFT_CALIBRATED)) {
        char *file = comedi_get_default_calibration_path(s->dev);
        comedi_calibration_t *cal = file ? comedi_parse_calibration_file(file) : NULL;
        free(file);
        if (cal && comedi_get_softcal_converter(s->subdevice, chan, range,
                                                COMEDI_TO_PHYSICAL, cal, &poly) == 0) {
            set_poly(ch, &poly, PL_CAL_SOFTCAL);
            comedi_cleanup_calibration(cal);
            return;
        }
        if (cal)
            comedi_cleanup_calibration(cal);
    } else if (comedi_get_hardcal_converter(s->dev, s->subdevice, chan, range,
                                            COMEDI_TO_PHYSICAL, &poly) == 0) {
        set_poly(ch, &poly, PL_CAL_HARDCAL);
        return;
    }
    /* the range's nominal line: V = min + (max - min) code / maxdata */
    ch->cal_kind = PL_CAL_LINEAR;
    ch->cal_origin = 0;
    ch->cal_order = 1;
    ch->cal_coef[0] = rg ? rg->min : 0;
    ch->cal_coef[1] = rg && maxdata ? (rg->max - rg->min) / (double)maxdata : 0;
    ch->cal_coef[2] = ch->cal_coef[3] = 0;
}

void pl_comedi_options_init(pl_comedi_options *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->device, sizeof o->device, "/dev/comedi0");
    o->subdevice = -1;
    o->n_channels = 2;
    o->channels[0] = 0;
    o->channels[1] = 1;
    o->aref = AREF_GROUND;
    o->rate_hz = 10000;
}

pl_source_spec pl_comedi_spec(const pl_comedi_options *o,
                              const pl_source_config *cfg)
{
    return (pl_source_spec){.type = &pl_source_comedi, .options = o, .cfg = *cfg};
}

/* The streaming analogue-input subdevice: the option's, else the first. */
static pl_status pick_subdevice(comedi_source *s, int sub, int *flags,
                                pl_err *err)
{
    if (sub < 0) {
        sub = comedi_find_subdevice_by_type(s->dev, COMEDI_SUBD_AI, 0);
        if (sub < 0)
            return pl_err_set(err, PL_EDAQ, "%s: the board has no analogue "
                              "input subdevice", s->path);
    }
    int n = comedi_get_n_subdevices(s->dev);
    if (sub >= n)
        return pl_err_set(err, PL_EDAQ, "%s: no subdevice %d (the board has "
                          "%d: 0..%d)", s->path, sub, n, n - 1);
    s->subdevice = (unsigned)sub;
    *flags = comedi_get_subdevice_flags(s->dev, s->subdevice);
    if (*flags < 0 || !(*flags & SDF_CMD_READ))
        return pl_err_set(err, PL_EDAQ, "%s: subdevice %d cannot stream input "
                          "(no SDF_CMD_READ): choose another subdevice",
                          s->path, sub);
    return PL_OK;
}

/* The channel list and each channel's calibration. */
static pl_status pick_channels(comedi_source *s, const pl_comedi_options *o,
                               pl_source_info *info, pl_err *err)
{
    s->n_channels = o->n_channels > 0 ? o->n_channels : 2;
    int nch = comedi_get_n_channels(s->dev, s->subdevice);
    for (int i = 0; i < s->n_channels; i++) {
        int c = o->n_channels > 0 ? o->channels[i] : i;
        if (c < 0 || c >= nch)
            return pl_err_set(err, PL_EDAQ, "%s: subdevice %u has channels "
                              "0..%d, not %d", s->path, s->subdevice, nch - 1, c);
        s->chanlist[i] = CR_PACK((unsigned)c, (unsigned)o->range,
                                 (unsigned)o->aref);
        pl_channel *ch = &info->channel[i];
        snprintf(ch->name, sizeof ch->name, "ai%d", c);
        ch->source_channel = c;
        ch->beam_height_m = NAN;
        calibrate(s, ch, (unsigned)c, (unsigned)o->range);
    }
    return PL_OK;
}

/* The timed scan the card will run, as the driver accepts it, and the
 * buffer it fills. */
static pl_status prepare_command(comedi_source *s, const pl_comedi_options *o,
                                 double rate, pl_err *err)
{
    unsigned period_ns = (unsigned)llround(1e9 / rate);
    if (comedi_get_cmd_generic_timed(s->dev, s->subdevice, &s->cmd,
                                     (unsigned)s->n_channels, period_ns) < 0)
        return pl_err_set(err, PL_EDAQ, "%s: subdevice %u cannot run a timed "
                          "scan of %d channels at %g Hz: %s", s->path,
                          s->subdevice, s->n_channels, rate,
                          comedi_strerror(comedi_errno()));
    s->cmd.chanlist = s->chanlist;
    s->cmd.chanlist_len = (unsigned)s->n_channels;
    s->cmd.scan_end_arg = (unsigned)s->n_channels;
    s->cmd.stop_src = TRIG_NONE;
    s->cmd.stop_arg = 0;
    /* The driver may adjust arguments (round the period to its clock):
     * test until it accepts, at most a few times. */
    int rc = -1;
    for (int i = 0; i < 4 && rc != 0; i++)
        rc = comedi_command_test(s->dev, &s->cmd);
    if (rc != 0)
        return pl_err_set(err, PL_EDAQ, "%s: the driver rejects the command "
                          "(comedi_command_test returned %d): check rate, "
                          "range and reference", s->path, rc);
    if (o->buffer_bytes > 0) {
        if (comedi_set_buffer_size(s->dev, s->subdevice, (unsigned)o->buffer_bytes) < 0)
            return pl_err_set(err, PL_EDAQ, "%s: cannot set the buffer to %ld bytes "
                              "(the limit is %d; as root raise it in "
                              "/sys/class/comedi)", s->path, o->buffer_bytes,
                              comedi_get_max_buffer_size(s->dev, s->subdevice));
        return PL_OK;
    }
    /* A subdevice keeps the buffer size its last user set, so "the
     * driver's default" may be someone's 4 KiB: 0.1 s at 10 kHz, less than
     * a loaded machine can stall a reader.  Unless the rig says otherwise,
     * ask for DEFAULT_BUFFER_S of data, as much as the limit allows, and
     * never shrink a buffer that is larger already. */
    double want = DEFAULT_BUFFER_S * rate * (double)s->n_channels * sizeof(lsampl_t);
    int have = comedi_get_buffer_size(s->dev, s->subdevice);
    int limit = comedi_get_max_buffer_size(s->dev, s->subdevice);
    if (have >= 0 && limit > 0 && (double)have < want) {
        double bytes = fmin(want, (double)limit);
        if (bytes > have)   /* best effort: a smaller buffer still records */
            comedi_set_buffer_size(s->dev, s->subdevice, (unsigned)bytes);
    }
    return PL_OK;
}

/* Everything open() finds out, in order; the caller closes s on an error. */
static pl_status describe(comedi_source *s, const pl_comedi_options *o,
                          const pl_source_config *cfg, pl_source_info *info,
                          pl_err *err)
{
    int flags = 0;
    double rate = o->rate_hz > 0 ? o->rate_hz : 10000.0;
    memset(info, 0, sizeof *info);
    info->lambda0_rad = NAN;
    pl_status st;
    if ((st = pick_subdevice(s, o->subdevice, &flags, err)) != PL_OK ||
        (st = pick_channels(s, o, info, err)) != PL_OK ||
        (st = prepare_command(s, o, rate, err)) != PL_OK)
        return st;
    int lsampl = (flags & SDF_LSAMPL) != 0;
    s->sample_bytes = lsampl ? sizeof(lsampl_t) : sizeof(sampl_t);
    s->frame_bytes = s->sample_bytes * (size_t)s->n_channels;
    if (s->cmd.scan_begin_src == TRIG_TIMER && s->cmd.scan_begin_arg > 0)
        info->sample_rate_hz = 1e9 / s->cmd.scan_begin_arg;
    else
        info->sample_rate_hz = rate;
    info->n_channels = s->n_channels;
    info->format = lsampl ? PL_FMT_U32 : PL_FMT_U16;
    info->little_endian = pl_host_little_endian();
    info->total_frames = -1;
    snprintf(info->kind, sizeof info->kind, "comedi");
    snprintf(info->detail, sizeof info->detail, "%.200s subdevice %u (%s)",
             s->path, s->subdevice, comedi_get_board_name(s->dev));
    return pl_source_apply_config(cfg, info, err);
}

static pl_status comedi_open_src(void **self, const void *options,
                                 const pl_source_config *cfg,
                                 pl_source_info *info, pl_err *err)
{
    const pl_comedi_options *o = options;
    const char *path = o->device[0] ? o->device : "/dev/comedi0";
    comedi_source *s = calloc(1, sizeof *s);
    if (!s)
        return pl_err_set(err, PL_ENOMEM, "comedi: out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    s->dev = comedi_open(path);
    if (!s->dev) {
        int e = errno;
        free(s);
        return pl_err_set(err, PL_EDAQ, "%s: cannot open the DAQ device (%s): "
                          "check that the driver is loaded and the board "
                          "attached (comedi_config), and that you may read "
                          "the device file", path, strerror(e));
    }
    pl_status st = describe(s, o, cfg, info, err);
    if (st != PL_OK) {
        comedi_close_src(s);
        return st;
    }
    *self = s;
    return PL_OK;
}

static pl_status comedi_start_src(void *self, pl_err *err)
{
    comedi_source *s = self;
    if (comedi_command(s->dev, &s->cmd) < 0)
        return pl_err_set(err, PL_EDAQ, "%s: the command did not start: %s",
                          s->path, comedi_strerror(comedi_errno()));
    s->running = 1;
    return PL_OK;
}

static pl_status comedi_read_src(void *self, void *buf, size_t max_frames,
                                 size_t *got, pl_err *err)
{
    comedi_source *s = self;
    *got = 0;
    struct pollfd pfd = {.fd = comedi_fileno(s->dev), .events = POLLIN};
    int pr = poll(&pfd, 1, 100);   /* a live source blocks at most ~100 ms */
    if (pr < 0 && errno != EINTR)
        return pl_err_set(err, PL_EDAQ, "%s: poll: %s", s->path, strerror(errno));
    if (pr <= 0)
        return PL_OK;
    unsigned char *out = buf;
    size_t have = s->partial_len;
    memcpy(out, s->partial, have);
    ssize_t n = read(pfd.fd, out + have, max_frames * s->frame_bytes - have);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return PL_OK;
        if (errno == EPIPE)
            return pl_err_set(err, PL_EOVERRUN, "%s: the driver's buffer "
                              "overflowed: samples lost after frame %lld "
                              "(the reader fell behind; enlarge the buffer "
                              "or lower the rate)", s->path, s->frames);
        return pl_err_set(err, PL_EDAQ, "%s: read: %s", s->path, strerror(errno));
    }
    if (n == 0) {
        /* end of acquisition: an error stop (overflow) or a finished count */
        int flags = comedi_get_subdevice_flags(s->dev, s->subdevice);
        if (flags >= 0 && (flags & SDF_RUNNING) == 0 && s->cmd.stop_src == TRIG_NONE)
            return pl_err_set(err, PL_EOVERRUN, "%s: the acquisition stopped "
                              "by itself after frame %lld (driver buffer "
                              "overflow)", s->path, s->frames);
        return PL_OK;
    }
    size_t total = have + (size_t)n, frames = total / s->frame_bytes;
    s->partial_len = total - frames * s->frame_bytes;
    memcpy(s->partial, out + frames * s->frame_bytes, s->partial_len);
    s->frames += (long long)frames;
    *got = frames;
    return PL_OK;
}

static pl_status comedi_stop_src(void *self, pl_err *err)
{
    comedi_source *s = self;
    if (s->running && comedi_cancel(s->dev, s->subdevice) < 0) {
        s->running = 0;
        return pl_err_set(err, PL_EDAQ, "%s: cancel: %s", s->path,
                          comedi_strerror(comedi_errno()));
    }
    s->running = 0;
    return PL_OK;
}

const pl_source_type pl_source_comedi = {
    .name = "comedi",
    .open = comedi_open_src,
    .start = comedi_start_src,
    .read = comedi_read_src,
    .stop = comedi_stop_src,
    .close = comedi_close_src,
};
