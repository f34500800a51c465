/* tests/util/testutil.h - helpers shared by the cmocka tests.
 *
 * Tests run from the source tree's top (make check does so); they find the
 * prismlab binary in $PRISMLAB_BIN and the sources in $PRISMLAB_SRC.
 */
#ifndef PL_TESTUTIL_H
#define PL_TESTUTIL_H

#include "core/error.h"

#include <math.h>
#include <stddef.h>

/* Debian's cmocka 1.1.5 has no double comparison (its float one rounds to
 * float): |a - b| <= tol, printing both values when it fails.  Use after
 * including cmocka.h. */
#define tu_assert_close(a, b, tol)                                          \
    do {                                                                    \
        double tu_a_ = (a), tu_b_ = (b), tu_t_ = (tol);                     \
        if (!(fabs(tu_a_ - tu_b_) <= tu_t_))                                \
            fail_msg("%s = %.17g, expected %.17g within %g", #a, tu_a_,     \
                     tu_b_, tu_t_);                                         \
    } while (0)

/* A fixed pseudo-random sequence (an LCG on the state *s, Knuth's MMIX
 * constants): the tests draw the same numbers on every machine and every
 * run, whatever the C library's rand() does.  Uniform in [0, 1). */
double tu_uniform(unsigned long *s);

/* A normal deviate from the same sequence: Box-Muller on two draws moved
 * half a step into (0, 1), so that the logarithm never sees 0. */
double tu_gauss(unsigned long *s);

/* Makes a fresh empty directory under /tmp and returns its path (static
 * storage per call site is the caller's business: the result is malloc'd). */
char *tu_tmpdir(const char *tag);

/* Removes a directory made by tu_tmpdir() and everything in it. */
void tu_rmtree(const char *path);

/* Joins dir and name into a malloc'd path. */
char *tu_path(const char *dir, const char *name);

/* Writes text to path (truncating); returns 0 on success. */
int tu_write_file(const char *path, const char *text);

/* Reads fd to its end into a malloc'd, NUL-terminated buffer (its length
 * in *len); NULL when timeout_ms pass without a byte (or memory runs
 * out), *len then what had come. */
char *tu_read_all(int fd, int timeout_ms, size_t *len);

/* Runs the prismlab binary with a NULL-terminated argv (argv[0] ignored)
 * and returns its exit status (-1 when it did not exit normally).  Its
 * stdout and stderr go to out and errout (each at most size bytes,
 * NUL-terminated) when those are not NULL. */
int tu_prismlab(char *out, char *errout, size_t size, const char *const *argv);

/* Creates the database db with the bundled catalog's prisms and ramps
 * (fixtures/catalog) and, when manifest is not NULL, imports the runs it
 * lists (their count into *runs).  Returns PL_OK or the error, in err. */
/* Creates an empty store at db, as `prismlab db init` does (only it
 * creates one); 0 on success. */
int tu_init_db(const char *db);

pl_status tu_fixture_db(const char *db, const char *manifest, int *runs, pl_err *err);

/* The store tests' fixture: a temporary folder, a store in it holding
 * one imported run (10 kHz, two channels with identity calibration, beams
 * at 19.9 and 11.6 mm, no samples) to hang records on, and the run's id.
 * tu_run_fixture_setup() and _teardown() are cmocka's setup and teardown
 * (the state is a tu_run_fixture *); setup returns -1 when the store
 * cannot be made, saying why. */
struct pl_store;
typedef struct {
    char *dir, *db;
    struct pl_store *store;
    long long run;
} tu_run_fixture;
int tu_run_fixture_setup(void **state);
int tu_run_fixture_teardown(void **state);

/* Path of the prismlab binary under test ($PRISMLAB_BIN or bin/prismlab). */
const char *tu_prismlab_path(void);

#endif
