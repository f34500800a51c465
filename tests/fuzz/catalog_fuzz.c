/* tests/fuzz/catalog_fuzz.c - the catalogue's CSV import (prisms, then
 * ramps, from the same bytes) into an in-memory store. */
#include "db/catalog.h"
#include "db/store.h"
#include "tests/fuzz/fuzz.h"

static int fuzz_catalog(const uint8_t *data, size_t n)
{
    char path[128];
    pl_store *s = NULL;
    pl_err err = {0};
    if (pl_store_open(&s, ":memory:", PL_STORE_CREATE, &err) != PL_OK)
        abort();
    const char *p = fuzz_file(path, sizeof path, "csv", data, n);
    int count = 0;
    pl_prism_import_csv(s, p, &count, &err);
    pl_ramp_import_csv(s, p, &count, &err);
    pl_store_close(s);
    return 0;
}
FUZZ_ENTRY(fuzz_catalog)
