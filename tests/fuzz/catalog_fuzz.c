/* tests/fuzz/catalog_fuzz.c - the catalogue's CSV import (prisms, then
 * ramps, from the same bytes) into an in-memory store. */
#include "db/catalog.h"
#include "db/store.h"
#include "tests/fuzz/fuzz.h"

static int fuzz_catalog(const uint8_t *data, size_t n)
{
    /* Opening and migrating a store costs 100 times an import: one store
     * serves 1000 inputs (what they add stays, as in a real catalogue). */
    static pl_store *s;
    static unsigned uses;
    char path[128];
    pl_err err = {0};
    if (s && ++uses % 1000 == 0) {
        pl_store_close(s);
        s = NULL;
    }
    if (!s && pl_store_open(&s, ":memory:", PL_STORE_CREATE, &err) != PL_OK)
        abort();
    const char *p = fuzz_file(path, sizeof path, "csv", data, n);
    int count = 0;
    pl_prism_import_csv(s, p, &count, &err);
    pl_ramp_import_csv(s, p, &count, &err);
    return 0;
}
FUZZ_ENTRY(fuzz_catalog)
