/* tests/process/corpus_test.c - processing on a random corpus of signal
 * chains (issue 16): at least 200 recordings drawn by
 * pl_simrun_config_random() (prism N = 18..40, ramp, release, beams,
 * line or plastic law, card rate 5..50 kHz, and every artefact of a real
 * LDV chain at a random level: docs/rig.md, "Random signal chains"),
 * simulated, converted to m/s with each channel's stored calibration,
 * processed by pl_process_signals() and scored as score.py scores the
 * foreign runs (tests/util/score.h) against issue 16's numbers: recall
 * and precision >= 0.995, median impact-time error <= 0.2 ms, |loss bias|
 * <= max(3 %, 2.5 standard errors), L_p at the end within 0.1 %, on
 * every chain.  A failure prints a table of the failing chains with
 * their seeds and levels; `prismlab sim --random-chain SEED --wav F
 * --truth T` writes any one of them to a file.
 * PRISMLAB_CORPUS_SEED=SEED runs only that chain here,
 * PRISMLAB_CORPUS_FIRST=SEED runs the chains from SEED on (201 gives a
 * corpus nobody tuned on), and PRISMLAB_CORPUS_TABLE=1 prints every
 * chain's row.
 *
 * How the truth is counted and the chains run (shared with
 * corpus_faults_test.c): tests/util/corpus.h.
 *
 * Seeds 1..200 (20 under AddressSanitizer, which runs ten times slower);
 * a seed whose model slips or stops is replaced by seed + 1000000 (none
 * of the first 400 does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/simrun.h"
#include "tests/util/corpus.h"

#include <math.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
enum { CHAINS = 20 };
#else
enum { CHAINS = 200 };
#endif

static void corpus_reaches_issue_16s_numbers(void **state)
{
    (void)state;
    size_t count;
    int table;
    tu_corpus_sum u;
    tu_chain *cs = tu_corpus_start(CHAINS, pl_simrun_config_random, 0, &count, &table, &u);
    if (count > 1)
        tu_corpus_check_z(&u);
    if (u.bad || count == 1 || table) {
        tu_corpus_print_header("");
        for (size_t i = 0; i < count; i++)
            if (!tu_corpus_chain_ok(&cs[i]) || count == 1 || table)
                tu_corpus_print_row(&cs[i], "");
    }
    free(cs);
    /* Issue 16 asks every chain to meet its numbers, and every chain of
     * seeds 1..200 does (the closest, seed 52: 0.182 ms of median time
     * error).  A single chain (PRISMLAB_CORPUS_SEED) only prints its row. */
    size_t allowed = count == 1 ? 1 : 0;
    if (u.bad)
        print_message("%zu of %zu chains miss issue 16's numbers (table above)\n", u.bad, count);
    assert_int_equal(u.why[0], 0);
    assert_true(u.truths == 0 || (double)u.matched / u.truths >= 0.995);
    assert_true(u.dets == 0 || (double)u.matched / u.dets >= 0.995);
    if (u.bad > allowed)
        fail_msg("%zu of %zu chains miss issue 16's numbers", u.bad, count);
}

/* Issue 33: told the simulated decoder's delay (as a lab would give its
 * decoder's data sheet: process --decoder-delay), the instants are the
 * contacts: the time z's median over a chain is centred (the medians'
 * median, measured on seeds 1-200: +0.11, +0.28 while the tops were
 * parabolas; the transitions' centres give +4.13), and the chains still
 * meet issue 16's numbers.  Not yet honest on every chain: 106 of 200
 * within the calibration goal (201-400: 103), the spreads' median 1.27
 * (1.34): t_sd_s is still short of the scatter on a typical chain
 * (docs/process.md section 4).  Before the smoothed tops' covariance
 * entered t_sd_s: 75 of 200 and 1.46, which the bounds below fail. */
static void instants_at_the_contact_with_a_known_delay(void **state)
{
    (void)state;
    size_t count;
    int table;
    tu_corpus_sum u;
    tu_chain *cs = tu_corpus_start(CHAINS, pl_simrun_config_random, 1, &count, &table, &u);
    if (count == 1 || table) {
        tu_corpus_print_header("");
        for (size_t i = 0; i < count; i++)
            tu_corpus_print_row(&cs[i], "");
    }
    free(cs);
    if (count > 1) {
        assert_true(u.tz_measured >= count - count / 20);
        assert_true(fabs(u.tz_med_med) < 1);
        assert_true(u.tz_sd_med < 1.42);
        /* (on the whole corpus: the ASan build's 20 chains give 9) */
        if (count >= 100)
            assert_true(u.tz_honest >= u.tz_measured * 2 / 5);
    }
    assert_int_equal(u.why[0], 0);
    assert_true(u.bad <= (count == 1 ? 1 : 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus_reaches_issue_16s_numbers),
        cmocka_unit_test(instants_at_the_contact_with_a_known_delay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
