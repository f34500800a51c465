/* core/sha256.h - SHA-256 as prismlab names what it stores: 64 lower-case
 * hex digits.  A file's (its provenance, acquire/source.h) and a run's
 * raw samples (which runs hold the same ones, db/run.h) are both hashed
 * through these, so the two always mean the same digest.  nettle does the
 * work; no state outside the caller's struct, safe from any thread. */
#ifndef PL_CORE_SHA256_H
#define PL_CORE_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>

typedef struct {
    struct sha256_ctx ctx;
} pl_sha256;

/* Starts a digest. */
void pl_sha256_init(pl_sha256 *h);

/* Adds n bytes of data. */
void pl_sha256_update(pl_sha256 *h, const void *data, size_t n);

/* Ends the digest into hex (64 digits and a NUL); h starts again. */
void pl_sha256_hex(pl_sha256 *h, char hex[65]);

#endif
