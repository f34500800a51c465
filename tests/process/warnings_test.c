/* tests/process/warnings_test.c - which warnings a fault already says
 * (process/warnings.c), on the warnings and fault lines processing wrote
 * for the foreign fixture runs (fixtures/foreign, foreign2, foreign3: hum,
 * drop-outs, a beam lost, clipped, saturated and dead beams, a shaking
 * floor, a tail, a late start, a drift, a gap) and fig8-steel-22: each
 * warning that restates one of its run's faults is left out, every other
 * one kept, in order; a fault on another beam or at another instant does
 * not count; records written before the warnings said "beam" still
 * match. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "process/warnings.h"

#include <stdio.h>
#include <string.h>

/* The warnings pl_warnings_each() keeps, joined by '|'. */
typedef struct {
    char text[4096];
} kept;

static int keep(void *ctx, const char *line, size_t len)
{
    kept *k = ctx;
    size_t at = strlen(k->text);
    snprintf(k->text + at, sizeof k->text - at, "%s%.*s", at ? "|" : "", (int)len, line);
    return 0;
}

static const char *shown(const char *warnings, const char *faults, kept *k)
{
    k->text[0] = '\0';
    assert_int_equal(pl_warnings_each(warnings, faults, keep, k), 0);
    return k->text;
}

/* As processing stored them: every warning restates one of the faults. */
static void restated_warnings_are_left_out(void **state)
{
    (void)state;
    static const char *const runs[][2] = {
        /* fig8-steel-22 */
        {"both beams lost the prism at 8.246 s: the window ends there\n"
         "beam 1: 2 drop-outs (1.8 ms in all) bridged from the other beam\n"
         "beam 2: 1 drop-out (0.9 ms in all) bridged from the other beam\n"
         "mains hum at 50.00 Hz removed (0.0249 and 0.0248 mm/s)\n",
         "hum freq_hz=50.000 drift_hz=-0.001 drift_se_hz=0.0014 amp1_mps=2.49e-05 amp2_mps=2.48e-05\n"
         "dropouts channel=1 count=2 total_s=0.0018\n"
         "dropouts channel=2 count=1 total_s=0.0009\n"
         "tail_cut at_s=8.2462\n"},
        /* foreign2-beamloss-n30: the 3.100 / 3.0998 s */
        {"beam 1: 1 drop-out (2.1 ms in all) bridged from the other beam\n"
         "beam 2: 3 drop-outs (6.7 ms in all) bridged from the other beam\n"
         "beam 1 lost the prism from 3.100 s to 3.300 s: omega from beam 2 alone there\n",
         "beam_lost channel=1 from_s=3.0998 to_s=3.3002\n"
         "dropouts channel=1 count=1 total_s=0.0021\n"
         "dropouts channel=2 count=3 total_s=0.0067\n"},
        /* foreign2-clip-n24 */
        {"beam 1 clipped: 26797 samples at its rails in 9 stretches from 2.154 s to 5.100 s, "
         "carried by beam 2\n",
         "clipped channel=1 samples=26797 spans=9 from_s=2.1540 to_s=5.1001\n"},
        /* foreign2-vib-n22 */
        {"motion common to both beams removed (a shaking floor?): 23.00,9.00 Hz, 1.14 mm/s RMS\n",
         "common_motion level_mps=0.00114 freqs_hz=23.00,9.00 amps_mps=0.00149,0.000605\n"},
        /* foreign2-tail-n38 */
        {"both beams lost the prism at 5.500 s: the window ends there\n", "tail_cut at_s=5.5001\n"},
        /* visible3-latestart-n24 */
        {"the recording starts after the release: the prism turns at 1.9 rad/s at the first "
         "sample; L_p counts from there, and the decoders' offsets are taken as 0\n",
         "late_start omega_rad_s=1.898\n"},
        /* visible3-decsat-n38 */
        {"beam 2 flat at 0.15 m/s from 2.888 s to 5.250 s while beam 1 turned on (its decoder's "
         "velocity limit?), carried by beam 1\n",
         "saturated channel=2 level_mps=0.15 samples=18290 spans=10 from_s=2.8879 to_s=5.2501\n"},
        /* visible3-drift-n46-plastic */
        {"omega (4.1) over the last second, 7.014 rad/s, is -1.42 % off the impacts' own clock "
         "(7.114 rad/s): the decoders' offsets drifted, or the LDV scale or the heights' "
         "difference is off by that much; omega_last is the lattice's\n",
         "omega_drift omega41_rad_s=7.0138 lattice_rad_s=7.1145 part=-0.0142 q_first=0.99721 "
         "q_last=0.99899\n"},
        /* visible3-csvgap-n26 */
        {"the recording has a gap at 2.400 s: 256 frames (21.3 ms) missing, bridged by the impact "
         "lattice (0.50 of a slot; the impact the lattice placed in it not reported)\n",
         "gap at_s=2.4000 frames=256 missing_s=0.02133 in_motion=1 slots=0.501 impacts_dropped=1\n"},
    };
    kept k;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        const char *s = shown(runs[i][0], runs[i][1], &k);
        if (s[0])
            fail_msg("run %zu: kept '%s', which a fault says", i, s);
    }
}

/* visible3-deadbeam2-n34: the dead beam is a fault, the drop-outs of
 * both beams at once are not (no fault kind says them). */
static void a_warning_no_fault_says_is_kept(void **state)
{
    (void)state;
    kept k;
    assert_string_equal(
        shown("2 drop-outs of both beams at once bridged by straight lines\n"
              "beam 2 never saw the prism (it follows beam 1 in 0.0 % of 437 blocks of the "
              "motion): omega from beam 1 alone over the whole run; check its alignment and "
              "decoder\n",
              "beam_dead channel=2 agree=0.000 blocks=437\n", &k),
        "2 drop-outs of both beams at once bridged by straight lines");
    assert_int_equal(pl_warnings_count("2 drop-outs of both beams at once bridged by straight "
                                       "lines\nbeam 2 never saw the prism (it follows beam 1)\n",
                                       "beam_dead channel=2 agree=0.000 blocks=437\n"), 1);
    /* no quality record (processed before prismlab kept one): all, in order */
    assert_string_equal(shown("a\n\nb\r\nc", NULL, &k), "a|b|c");
    assert_string_equal(shown("mains hum at 50.00 Hz removed (0.0249 and 0.0248 mm/s)\n", "", &k),
                        "mains hum at 50.00 Hz removed (0.0249 and 0.0248 mm/s)");
}

/* The same kind on the other beam, or at another instant, is another
 * finding: the warning stays. */
static void another_beam_or_instant_is_another_finding(void **state)
{
    (void)state;
    kept k;
    assert_string_equal(shown("beam 2: 3 drop-outs (6.7 ms in all) bridged from the other beam",
                              "dropouts channel=1 count=3 total_s=0.0067", &k),
                        "beam 2: 3 drop-outs (6.7 ms in all) bridged from the other beam");
    assert_string_equal(shown("beam 1 lost the prism from 3.100 s to 3.300 s: omega from beam 2 "
                              "alone there\nbeam 1 lost the prism from 6.000 s to 6.100 s: omega "
                              "from beam 2 alone there",
                              "beam_lost channel=1 from_s=3.0998 to_s=3.3002", &k),
                        "beam 1 lost the prism from 6.000 s to 6.100 s: omega from beam 2 alone there");
    /* a window ended by the beams' loss with the recording stopping
     * right there: no tail_cut fault, so the warning is the only word */
    assert_string_equal(shown("both beams lost the prism at 5.500 s: the window ends there",
                              "hum freq_hz=50.000 amp1_mps=2e-05 amp2_mps=2e-05", &k),
                        "both beams lost the prism at 5.500 s: the window ends there");
    assert_int_equal(pl_warning_restated("the recording has a gap at 2.402 s: x", 37,
                                         "gap at_s=2.4000 frames=256"), 0);
}

/* Records processed before the warnings said "beam" for the numbered
 * beams ("channel 1: ...") read the same. */
static void older_channel_wording_still_matches(void **state)
{
    (void)state;
    kept k;
    assert_string_equal(shown("channel 1: 2 drop-outs (1.8 ms in all) bridged from the other beam\n"
                              "channel 2 clipped: 5 samples at its rails in 1 stretches from "
                              "2.154 s to 2.155 s, carried by beam 1\n"
                              "channel 1 flat at 0.15 m/s from 2.888 s to 5.250 s while beam 2 "
                              "turned on (its decoder's velocity limit?), carried by beam 2\n",
                              "dropouts channel=1 count=2 total_s=0.0018\n"
                              "clipped channel=2 samples=5 spans=1 from_s=2.1540 to_s=2.155\n"
                              "saturated channel=1 level_mps=0.15 samples=1 spans=1 from_s=2.8879 "
                              "to_s=5.2501\n", &k),
                        "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(restated_warnings_are_left_out),
        cmocka_unit_test(a_warning_no_fault_says_is_kept),
        cmocka_unit_test(another_beam_or_instant_is_another_finding),
        cmocka_unit_test(older_channel_wording_still_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
