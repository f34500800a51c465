/* tests/fuzz/csv_fuzz.c - the CSV source: any bytes as a recording, opened
 * (the whole file parsed and checked) and read to the end. */
#include "acquire/csv_source.h"
#include "tests/fuzz/fuzz.h"

static int fuzz_csv(const uint8_t *data, size_t n)
{
    char path[128];
    pl_csv_options o;
    pl_csv_options_init(&o);
    o.path = fuzz_file(path, sizeof path, "csv", data, n);
    pl_source_config cfg;
    pl_source_config_init(&cfg);
    cfg.expect_channels = 2;
    pl_source_spec spec = pl_csv_spec(&o, &cfg);
    void *src = NULL;
    pl_source_info info;
    pl_err err = {0};
    if (pl_source_open(&spec, &src, &info, &err) == PL_OK) {
        double buf[2 * 256];
        size_t got = 1;
        if (spec.type->start(src, &err) == PL_OK)
            while (got > 0 && spec.type->read(src, buf, 256, &got, &err) == PL_OK) {
            }
        spec.type->stop(src, &err);
        spec.type->close(src);
    }
    return 0;
}
FUZZ_ENTRY(fuzz_csv)
