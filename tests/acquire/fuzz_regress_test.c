/* tests/acquire/fuzz_regress_test.c - every fuzz harness (tests/fuzz/)
 * replayed on its seed corpus and on every input the fuzzer ever found to
 * crash or hang (tests/fuzz/crashers/NAME-*), in make check and under the
 * sanitizers; the harnesses are compiled in without libFuzzer's entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define FUZZ_NO_MAIN
#include "tests/fuzz/catalog_fuzz.c"
#include "tests/fuzz/csv_fuzz.c"
#include "tests/fuzz/manifest_fuzz.c"
#include "tests/fuzz/rigconf_fuzz.c"
#include "tests/fuzz/socket_fuzz.c"
#include "tests/fuzz/wav_fuzz.c"

#include <dirent.h>

typedef int (*harness)(const uint8_t *, size_t);

/* Runs fn on every file of dir whose name starts with prefix; returns how
 * many. */
static int replay(const char *dir, const char *prefix, harness fn)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t *buf = malloc(1 << 20);
        size_t len = fread(buf, 1, 1 << 20, f);
        fclose(f);
        fn(buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

static void check(const char *name, harness fn)
{
    char dir[256], prefix[64];
    snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", name);
    int seeds = replay(dir, "", fn);
    snprintf(prefix, sizeof prefix, "%s-", name);
    int crashers = replay("tests/fuzz/crashers", prefix, fn);
    print_message("%s: %d seeds, %d kept crashers replayed\n", name, seeds, crashers);
    assert_true(seeds > 0);
}

static void test_csv(void **s) { (void)s; check("csv", fuzz_csv); }
static void test_wav(void **s) { (void)s; check("wav", fuzz_wav); }
static void test_manifest(void **s) { (void)s; check("manifest", fuzz_manifest); }
static void test_catalog(void **s) { (void)s; check("catalog", fuzz_catalog); }
static void test_rigconf(void **s) { (void)s; check("rigconf", fuzz_rigconf); }
static void test_socket(void **s) { (void)s; check("socket", fuzz_socket); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv),      cmocka_unit_test(test_wav),
        cmocka_unit_test(test_manifest), cmocka_unit_test(test_catalog),
        cmocka_unit_test(test_rigconf),  cmocka_unit_test(test_socket),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    static const char *const ext[] = {"db", "csv", "wav", "ini", "manifest.csv"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        char p[128];
        snprintf(p, sizeof p, "/tmp/prismlab-fuzz-%ld.%s", (long)getpid(), ext[i]);
        unlink(p);
    }
    return rc;
}
