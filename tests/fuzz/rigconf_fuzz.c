/* tests/fuzz/rigconf_fuzz.c - the rig file (INI, libinih) reader. */
#include "acquire/rigconf.h"
#include "tests/fuzz/fuzz.h"

static int fuzz_rigconf(const uint8_t *data, size_t n)
{
    char path[128];
    pl_rigconf rc;
    pl_rigconf_init(&rc);
    pl_err err = {0};
    pl_rigconf_read(&rc, fuzz_file(path, sizeof path, "ini", data, n), &err);
    return 0;
}
FUZZ_ENTRY(fuzz_rigconf)
