/* tests/fuzz/manifest_fuzz.c - a lab notebook's manifest: every row read
 * and checked, each file it names imported (into one store a process). */
#include "acquire/import.h"
#include "db/store.h"
#include "tests/fuzz/fuzz.h"

static int fuzz_manifest(const uint8_t *data, size_t n)
{
    char path[128], db[128];
    snprintf(db, sizeof db, "/tmp/prismlab-fuzz-%ld.db", (long)getpid());
    int count = 0;
    pl_err err = {0};
    /* only `db init` creates a store: made when missing, not opened for
     * every input (that held the harness to 590 inputs/s) */
    pl_store *store = NULL;
    if (access(db, F_OK) != 0 &&
        pl_store_open(&store, db, PL_STORE_CREATE, &err) == PL_OK)
        pl_store_close(store);
    pl_import_manifest(db, fuzz_file(path, sizeof path, "manifest.csv", data, n),
                       0, 0, NULL, NULL, NULL, NULL, &count, &err);
    return 0;
}
FUZZ_ENTRY(fuzz_manifest)
