/* tests/fuzz/fuzz.h - what the fuzz harnesses share.
 *
 * Each harness NAME_fuzz.c defines `static int fuzz_NAME(const uint8_t *,
 * size_t)` and, unless FUZZ_NO_MAIN, libFuzzer's entry point calling it;
 * tests/acquire/fuzz_regress_test.c includes them all with FUZZ_NO_MAIN
 * and replays the seed corpora and every kept crasher in make check.  The
 * parsers read files, so an input is written to a file of the process's
 * own first. */
#ifndef PL_FUZZ_H
#define PL_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes data to /tmp/prismlab-fuzz-PID.EXT and returns that path (static
 * per extension in the caller; here a buffer the caller owns). */
static inline const char *fuzz_file(char *path, size_t size, const char *ext,
                                    const uint8_t *data, size_t n)
{
    snprintf(path, size, "/tmp/prismlab-fuzz-%ld.%s", (long)getpid(), ext);
    /* a new file, not the old one truncated: ext4 flushes a file truncated
     * to zero and rewritten when it is closed, which held the manifest
     * harness to 600 inputs/s */
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();   /* the harness cannot run: not a finding */
    if (n && fwrite(data, 1, n, f) != n)
        abort();
    fclose(f);
    return path;
}

#ifdef FUZZ_NO_MAIN
#define FUZZ_ENTRY(fn)
#else
#define FUZZ_ENTRY(fn)                                                       \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);               \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { return fn(data, n); }
#endif

#endif
