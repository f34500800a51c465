/* acquire/pump.c - source -> writer loop.  See pump.h. */
#include "acquire/pump.h"

#include <stdlib.h>

pl_status pl_acquire_pump(const pl_source_type *type, void *src,
                          const pl_source_info *info, pl_writer *w,
                          const pl_pump_options *opt, long long *frames,
                          pl_err *err)
{
    /* Blocks of ~10 ms: small enough for a paced source to hand over data
     * promptly, large enough that the per-call cost vanishes. */
    size_t block = opt && opt->block_frames ? opt->block_frames
                                            : (size_t)(info->sample_rate_hz / 100.0);
    if (block < 64)
        block = 64;
    size_t frame_bytes = pl_sample_format_size(info->format) * (size_t)info->n_channels;
    unsigned char *buf = malloc(block * frame_bytes);
    if (!buf)
        return pl_err_set(err, PL_ENOMEM, "pump: out of memory");
    long long done = 0, next_report = 0;
    long long report_every = (long long)(info->sample_rate_hz / 10.0) + 1;
    pl_status st = PL_OK;
    for (;;) {
        if (opt && opt->stop && *opt->stop)
            break;
        size_t want = block;
        if (opt && opt->max_frames >= 0) {
            if (done >= opt->max_frames)
                break;
            if ((long long)want > opt->max_frames - done)
                want = (size_t)(opt->max_frames - done);
        }
        size_t got = 0;
        st = type->read(src, buf, want, &got, err);
        if (got > 0) {
            pl_status ps = pl_writer_push(w, buf, got, st == PL_OK ? err : &(pl_err){0});
            if (ps != PL_OK && st == PL_OK)
                st = ps;
            if (ps == PL_OK)
                done += (long long)got;
        }
        /* The frames a read delivers with a loss came before it: they are
         * pushed first, then the loss is marked where they end. */
        if (st == PL_EOVERRUN) {
            pl_err ignore = {0};
            pl_writer_mark_overrun(w, done, &ignore);
        }
        if (st != PL_OK)
            break;
        /* A finite source (a file, a simulated run) has ended when it gives
         * nothing; a live one (a card) may simply have had no whole frame
         * ready within its ~100 ms: keep reading. */
        if (got == 0 && info->total_frames >= 0)
            break;
        if (opt && opt->progress && done >= next_report) {
            opt->progress(opt->progress_ctx, done, info->total_frames);
            next_report = done + report_every;
        }
    }
    if (opt && opt->progress)
        opt->progress(opt->progress_ctx, done, info->total_frames);
    free(buf);
    if (frames)
        *frames = done;
    return st;
}
