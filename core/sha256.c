/* core/sha256.c - SHA-256 in hex.  See sha256.h. */
#include "core/sha256.h"

#include <stdio.h>

void pl_sha256_init(pl_sha256 *h)
{
    sha256_init(&h->ctx);
}

void pl_sha256_update(pl_sha256 *h, const void *data, size_t n)
{
    sha256_update(&h->ctx, n, data);
}

void pl_sha256_hex(pl_sha256 *h, char hex[65])
{
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&h->ctx, sizeof d, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}
