/* tests/process/corpus_faults_test.c - processing on the random corpus
 * with a lab's faults (issue 28 item 7): the chains of corpus_test.c
 * (seeds 1..200, the same prisms, ramps, beams, rates and signal chains)
 * with the faults pl_simrun_config_random_faults() draws on top, each
 * with its own probability and levels (docs/rig.md, "A lab's faults"):
 * the ramp's vibration (35 %), one beam losing the prism for 50..400 ms
 * (35 %), garbage after the prism left the beams (half of the runs that
 * roll off the ramp) and the card's range below the higher beam's peak,
 * which then clips (30 %).  Scored with corpus_test.c's numbers (issue
 * 16's: recall and precision >= 0.995, median impact-time error <= 0.2
 * ms, |loss bias| <= max(3 %, 2.5 standard errors), L_p at the end within
 * 0.1 %), chain by chain; since every chain passes without its faults,
 * a failure here is the faults'.
 *
 * Prints the corpus line, the count of passing chains, a line per fault
 * kind (chains with it, passing; chains with it alone, passing) and the
 * failing chains' rows (every row with PRISMLAB_CORPUS_TABLE=1), then
 * asserts that at least MIN_PASSING of the 200 chains pass (the same
 * share of the 20 run under AddressSanitizer).  PRISMLAB_CORPUS_MIN=K
 * asks for K passing chains instead (for development: while processing
 * learns the faults); PRISMLAB_CORPUS_OFF=VLTC leaves the faults named
 * out; PRISMLAB_CORPUS_SEED / FIRST / TABLE as in corpus_test.c.  `prismlab sim --random-chain SEED --faults --wav F
 * --truth T` writes any one chain to a file, its faults in the truth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "acquire/sim/simrun.h"
#include "tests/util/corpus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many of the 200 chains must meet issue 16's numbers: 198 today
 * (from 82 before processing learned the faults), issue 28's goal.  A
 * ratchet: raise it as chains are won.  It went down to 197 on
 * 2026-11-27, when the floor's unresolved line pairs were split (net +4
 * chains over 1600 of eight corpora): seed 88's floor then read right
 * (31.12 and 31.92 Hz, where one line at 31.89 stood), and one of its
 * impacts under 0.49 mm/s of 1/f noise moved from inside the 2 ms match
 * to 2.15 ms, with omega's error unchanged to 0.002 rad/s.  Back to 198
 * on 2026-11-27 when seed 89's release line, run over the first impacts
 * by 19 mV of hum, no longer left the front end without a lead-in.  The
 * two short: seed 88, and a clipped beam whose other carries 0.5 mm/s
 * of 1/f noise alone (179); docs/process.md, "Measured", lists them. */
#define MIN_PASSING 198
#define FULL_CORPUS 200

#if defined(__SANITIZE_ADDRESS__)
enum { CHAINS = 20 };
#else
enum { CHAINS = FULL_CORPUS };
#endif

enum { F_VIB, F_LOSS, F_TAIL, F_CLIP, F_KINDS };
static const char *const kind_name[F_KINDS] = {"vibration", "beam loss", "tail garbage",
                                               "clipping"};

static void kinds_of(const pl_rigsim_config *g, int on[F_KINDS])
{
    on[F_VIB] = g->vibration;
    on[F_LOSS] = g->beam_loss;
    on[F_TAIL] = g->tail_garbage;
    on[F_CLIP] = g->clip;
}

/* The faults' column: V<n>x<sum of amplitudes, mm/s>, L<beam>@<start as a
 * fraction of the motion>+<length, s>, T<garbage, s>, C<range / peak>. */
static void fault_column(const tu_chain *c, char *buf, size_t size)
{
    const pl_rigsim_config *g = &c->cfg.rig;
    size_t len = 0;
    buf[0] = '\0';
    if (g->vibration) {
        double a = 0;
        for (int i = 0; i < g->vib_n; i++)
            a += g->vib_amp_mps[i];
        len += snprintf(buf + len, size - len, " V%dx%.1f", g->vib_n, 1e3 * a);
    }
    if (g->beam_loss && len < size)
        len += snprintf(buf + len, size - len, " L%d@%.2f+%.2f%s", g->beam_loss_channel + 1,
                        g->beam_loss_frac, g->beam_loss_len_s, g->beam_loss_edge_s > 0 ? "e" : "");
    if (g->tail_garbage && len < size)
        len += snprintf(buf + len, size - len, " T%.1f", g->tail_garbage_s);
    if (g->clip && len < size)
        len += snprintf(buf + len, size - len, " C%.2f", g->clip_frac);
    if (len == 0)
        snprintf(buf, size, " -");
}

static void print_kinds(const tu_chain *cs, size_t count)
{
    size_t with[F_KINDS] = {0}, pass[F_KINDS] = {0}, alone[F_KINDS] = {0};
    size_t alone_pass[F_KINDS] = {0}, none = 0, none_pass = 0;
    for (size_t i = 0; i < count; i++) {
        int on[F_KINDS], n_on = 0, ok = tu_corpus_chain_ok(&cs[i]);
        kinds_of(&cs[i].cfg.rig, on);
        for (int k = 0; k < F_KINDS; k++)
            n_on += on[k];
        none += n_on == 0;
        none_pass += n_on == 0 && ok;
        for (int k = 0; k < F_KINDS; k++) {
            with[k] += on[k];
            pass[k] += on[k] && ok;
            alone[k] += on[k] && n_on == 1;
            alone_pass[k] += on[k] && n_on == 1 && ok;
        }
    }
    print_message("no fault: %zu of %zu pass\n", none_pass, none);
    for (int k = 0; k < F_KINDS; k++)
        print_message("%-12s: %3zu of %3zu chains with it pass; %3zu of %3zu with it alone\n",
                      kind_name[k], pass[k], with[k], alone_pass[k], alone[k]);
}

/* pl_simrun_config_random_faults(), less the faults PRISMLAB_CORPUS_OFF
 * names (letters of the faults' column: V, L, T, C) after the draw, so
 * the chain and its other faults stay as drawn: for development, to see
 * which of a chain's faults costs it. */
static void draw_faults(pl_simrun_config *cfg, unsigned long seed)
{
    pl_simrun_config_random_faults(cfg, seed);
    const char *off = getenv("PRISMLAB_CORPUS_OFF");
    if (!off)
        return;
    pl_rigsim_config *g = &cfg->rig;
    g->vibration = g->vibration && !strchr(off, 'V');
    g->beam_loss = g->beam_loss && !strchr(off, 'L');
    g->tail_garbage = g->tail_garbage && !strchr(off, 'T');
    g->clip = g->clip && !strchr(off, 'C');
}

static void corpus_with_faults(void **state)
{
    (void)state;
    size_t count;
    int table;
    tu_corpus_sum u;
    tu_chain *cs = tu_corpus_start(CHAINS, draw_faults, 0, &count, &table, &u);
    if (count > 1)
        tu_corpus_check_z(&u);
    size_t passing = count - u.bad;
    /* the failures MIN_PASSING allows in 200, as a share of the chains
     * run, rounded up: the 20 under AddressSanitizer are there for memory
     * errors, and a share rounded down asked all 20 to pass whenever one
     * of the 200's few failures fell among them (seed 4) */
    size_t need = count - (size_t)ceil((double)(FULL_CORPUS - MIN_PASSING) * count / FULL_CORPUS);
    const char *env = getenv("PRISMLAB_CORPUS_MIN");
    if (env && *env)
        need = strtoul(env, NULL, 10);
    if (count == 1)
        need = 0; /* a single chain (PRISMLAB_CORPUS_SEED) only prints */
    print_message("faults corpus: %zu of %zu chains pass (at least %zu wanted%s)\n", passing,
                  count, need, env && *env ? ", from PRISMLAB_CORPUS_MIN" : "");
    print_kinds(cs, count);
    if (u.bad || count == 1 || table) {
        tu_corpus_print_header("  faults");
        for (size_t i = 0; i < count; i++)
            if (!tu_corpus_chain_ok(&cs[i]) || count == 1 || table) {
                char col[96];
                fault_column(&cs[i], col, sizeof col);
                tu_corpus_print_row(&cs[i], col);
            }
    }
    free(cs);
    if (passing < need)
        fail_msg("%zu of %zu chains with faults pass, fewer than %zu", passing, count, need);
}

/* Chains of the corpora beyond seeds 1-200 that a change was made for,
 * each failing before it (docs/process.md, "Measured"): they guard those
 * changes as the 200 guard the rest.  The seed, then what it needed. */
static const struct {
    unsigned long seed;
    const char *why;
} guards[] = {
    {246, "a lost beam's edges read clear of its decoder's garbage"},
    {251, "the floor's blocks past the motion not fitted"},
    {335, "a lost beam's edges read clear of its decoder's garbage"},
    {390, "two floor lines 0.84 Hz apart split; slots to the seen end"},
    {430, "a carry's far edge not read in the garbage past the motion"},
    {460, "the clean-stretch line search leaves garbage segments out"},
    {485, "a carry's far edge not read in the garbage past the motion"},
    {693, "a lost beam's garbage at its rail does not make it the carrier"},
    {741, "a lost beam's mean read in the motion's sense"},
    {798, "two floor lines 0.96 Hz apart split"},
    {939, "a split's second line at its alias, chosen by the block fits"},
    {990, "slots to the seen end"},
    {1126, "both beams out at their rails is the motion's end"},
    {1163, "both beams out at their rails is the motion's end"},
    {1341, "a lost beam beside a clipped one is carried"},
    {1365, "overlapping stretches keep their troubled run"},
};

static void chains_guarded(void **state)
{
    (void)state;
    size_t n = sizeof guards / sizeof guards[0], bad = 0;
#if defined(__SANITIZE_ADDRESS__)
    n = 3;   /* for memory errors: the full list runs in the plain build */
#endif
    for (size_t i = 0; i < n; i++) {
        tu_chain c;
        memset(&c, 0, sizeof c);
        tu_corpus_run_chain(&c, guards[i].seed, draw_faults, 0);
        if (!tu_corpus_chain_ok(&c)) {
            print_message("seed %lu fails (%s)\n", guards[i].seed, guards[i].why);
            bad++;
        }
    }
    print_message("guarded chains: %zu of %zu pass\n", n - bad, n);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus_with_faults),
        cmocka_unit_test(chains_guarded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
