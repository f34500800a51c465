#!/bin/sh
# tests/model/seeds/dimer_report_test.sh - `prismlab dimer-report --quick`
# with basin maps of 5 x 5 starts (3 x 3 for the open choices) end to end
# and in a real browser:
#   - the report's files exist, every page the index links exists, every
#     file a page references exists;
#   - the index marks each statement holds, does not hold or not checked:
#     figure 11's reversal at A_r 5 holds (the quick sweep spans it),
#     figure 15's rest holds, figure 13's jump start does not (it comes to
#     rest here); the quick sweep (25 Hz, A_r 3.9-6.5) leaves 7 of figure
#     11's statements not checked, among them the 50/75 Hz one and "the
#     frequency has little influence" (main called it "holds" on "2.10,
#     nan, nan"), and the summary counts them apart;
#   - every text of the figures lies inside its picture in Chromium
#     (tests/util/svgfit.sh; main cut every title: "ure 11: ...");
#   - interrupted, the report writes index.html with what is done: SIGINT
#     during a basin map exits 130, figure 11's verdicts are there, the map
#     reads "not run: interrupted" and is not stored; SIGTERM during
#     figure 11 exits 143 with all 17 statements "not run: interrupted";
#   - the maps are stored and a second report reads them instead of
#     running them again; the open choices' map with the defaults (3 x 3)
#     is every other start of the 5 x 5 map, read off it;
#   - `mpirun -np 3 prismlab dimer-report` (prismlab hands over to
#     prismlab-dimer-mpi) and one thread write the same CSV files, byte
#     for byte; so does the ASan+UBSan build under mpirun -np 2, without a
#     sanitizer report (Open MPI's and fontconfig's leftovers suppressed);
#   - headless Chromium renders index.html, fig11.html, fig13.html and the
#     basin maps' pages from disk with every image loaded and no console
#     error.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
out=$dir/report
fail() { echo "dimer_report_test: $*" >&2; exit 1; }

$bin dimer-report -o "$out" --quick --basin-n 5 --variant-n 3 >"$dir/stdout" 2>"$dir/stderr" ||
    fail "dimer-report failed: $(cat "$dir/stderr")"
grep -q "3 basin maps" "$dir/stdout" || fail "not 3 basin maps: $(cat "$dir/stdout")"
grep -q "basin fig13" "$dir/stderr" || fail "no progress of the fig13 map: $(cat "$dir/stderr")"
for f in basin-fig13.html basin-fig13.png basin-fig13.csv basin-fig20.html basin-fig16.html \
         basin-fig16-vrest3.csv basin-fig20-dist0.4.csv basin-fig13-base3.csv; do
    [ -s "$out/$f" ] || fail "$f missing"
done
[ "$(tail -n +3 "$out/basin-fig13.csv" | wc -l)" -eq 25 ] || fail "basin-fig13.csv has not 25 starts"
grep -q "simulations on [0-9]* threads*: figure 11 [0-9.]* s" "$dir/stdout" ||
    fail "no line of the stages' times: $(cat "$dir/stdout")"
grep -q "basin fig13: 25/25 runs .* runs/s  in [0-9]*s" "$dir/stderr" ||
    fail "no rate in the progress: $(cat "$dir/stderr")"
for m in fig13 fig20 fig16; do
    tail -n +3 "$out/basin-$m.csv" | awk 'int((NR - 1) / 5) % 2 == 0 && (NR - 1) % 5 % 2 == 0' \
        > "$dir/sub"
    tail -n +3 "$out/basin-$m-base3.csv" | cmp -s - "$dir/sub" ||
        fail "basin-$m-base3.csv is not every other start of basin-$m.csv"
done
# a second report reads the stored maps: no map runs
$bin dimer-report -o "$out" --quick --basin-n 5 --variant-n 3 >"$dir/stdout2" 2>"$dir/stderr2" ||
    fail "the second dimer-report failed: $(cat "$dir/stderr2")"
if grep -q "basin" "$dir/stderr2"; then fail "the second report ran maps again: $(cat "$dir/stderr2")"; fi
grep -q "statements hold" "$dir/stdout" || fail "no summary line: $(cat "$dir/stdout")"
for f in index.html fig11.html fig11.svg fig11.csv fig11-runs.csv fig12.html fig13.html \
         fig15.html fig16.html fig17.html fig18.html fig20.html fig13.svg; do
    [ -s "$out/$f" ] || fail "$f missing"
done
# every local href and src names a file of the report
for page in "$out"/*.html; do
    for ref in $(grep -o '\(href\|src\)="[^"#:]*"' "$page" | sed 's/^[a-z]*="//; s/"$//'); do
        [ -e "$out/$ref" ] || fail "$(basename "$page") references $ref, which is not there"
    done
done
# the verdicts
row() { grep -o "<tr><td><a href=\"$1\">[^<]*</a></td><td>$2[^<]*</td><td class=\"[a-z]*\" data-verdict=\"[a-z]*\"" "$out/index.html"; }
row fig11.html "At A_r = 5 the forward drift suddenly" | grep -q 'data-verdict="holds"' ||
    fail "figure 11's reversal at A_r 5 is not marked holds"
row fig15.html "Gamma 0.2" | grep -q 'data-verdict="holds"' || fail "figure 15 is not marked holds"
row fig13.html "f 50 Hz, from h0 10.25" | grep -q 'data-verdict="fails"' ||
    fail "figure 13 is not marked does not hold"
# figure 12 states what the paper's figure shows and what prismlab gets,
# and why the other sphere swings (docs/dimer.md)
row fig12.html "A_r 6.5, released from h0 2.25" | grep -q 'data-verdict="fails"' ||
    fail "figure 12 is not marked does not hold"
grep -q '<p id="finding">.*the paper: drift mode, the right sphere swinging, zero mean drift; here: drift mode, the left sphere swinging' \
    "$out/fig12.html" || fail "fig12.html does not say which sphere swings in the paper and here"
grep -q 'From the mirror start (theta0 -12 deg) prismlab gives drift mode, the right sphere swinging' \
    "$out/fig12.html" || fail "fig12.html does not give the mirror start's run"
n=$(grep -c 'data-verdict=' "$out/index.html" || true)
[ "$n" -eq 17 ] || fail "index.html has $n verdicts, expected 10 + 7"
tail -n +2 "$out/fig11.csv" | awk -F, '$2 == 4.50 && $5 <= 0 { exit 1 } $2 == 5.50 && $5 >= 0 { exit 1 }' ||
    fail "fig11.csv: the drift does not change sign between A_r 4.5 and 5.5 at 25 Hz"
# what the quick sweep did not simulate is not checked, and counted apart
row fig11.html "The frequency has little influence" | grep -q 'class="unchecked" data-verdict="unchecked"' ||
    fail "'the frequency has little influence' is not 'not checked' with 25 Hz only"
row fig11.html "At 50 and 75 Hz" | grep -q 'data-verdict="unchecked"' ||
    fail "the 50 and 75 Hz statement is not 'not checked' with 25 Hz only"
[ "$(grep -c 'data-verdict="unchecked"' "$out/index.html")" -eq 7 ] ||
    fail "not 7 statements not checked: $(grep -c 'data-verdict="unchecked"' "$out/index.html")"
grep -q '>not checked</td>' "$out/index.html" || fail "no 'not checked' verdict in the words"
grep -q '\.unchecked{' "$out/index.html" || fail "the 'not checked' class has no style"
grep -q "statements hold, [0-9]* do not, 7 not checked" "$dir/stdout" ||
    fail "the summary does not count the 7 not checked: $(head -1 "$dir/stdout")"
grep -q '<b id="summary">[0-9]* of 17 statements hold</b>, [0-9]* do not, <span class="unchecked">7 not checked' \
    "$out/index.html" || fail "index.html's summary does not count the 7 not checked"
src=${PRISMLAB_SRC:-$(cd "$(dirname "$0")/../../.." && pwd)}
sh "$src/tests/util/svgfit.sh" "$out"/*.svg >"$dir/fit" || fail "texts cut off: $(cat "$dir/fit")"

# --- interrupted: what is done, written ---------------------------------------------
# $1 signal, $2 the progress line to wait for, $3 folder; sets rc
interrupt() {
    $bin dimer-report -o "$3" --quick --basin-n 31 --variant-n 0 >"$3.out" 2>"$3.err" &
    pid=$!
    n=0
    until grep -q "$2" "$3.err" 2>/dev/null; do
        n=$((n + 1))
        [ $n -lt 600 ] || { kill "$pid"; fail "no '$2' in 60 s: $(cat "$3.err")"; }
        sleep 0.1
    done
    kill -s "$1" "$pid"
    rc=0
    wait "$pid" || rc=$?
}
interrupt INT "basin fig13" "$dir/int"
[ "$rc" -eq 130 ] || fail "SIGINT during a map: exit status $rc, not 130: $(cat "$dir/int.err")"
grep -q "interrupted" "$dir/int.err" || fail "SIGINT: stderr does not say interrupted: $(cat "$dir/int.err")"
[ -s "$dir/int/index.html" ] || fail "SIGINT during a map: no index.html"
[ ! -e "$dir/int/basin-fig13.csv" ] || fail "SIGINT: the map cut short was stored"
[ "$(grep -c 'data-verdict="holds"\|data-verdict="fails"' "$dir/int/index.html")" -ge 10 ] ||
    fail "SIGINT during a map: the verdicts done are not in index.html"
grep -q '<li class="notrun">basin fig13[^<]*not run: interrupted' "$dir/int/index.html" ||
    fail "SIGINT during a map: the map is not marked not run"
for ref in $(grep -o 'href="[^"#:]*"' "$dir/int/index.html" | sed 's/^href="//; s/"$//'); do
    [ -e "$dir/int/$ref" ] || fail "the interrupted index.html links $ref, which is not there"
done
interrupt TERM "figure 11" "$dir/term"
[ "$rc" -eq 143 ] || fail "SIGTERM during figure 11: exit status $rc, not 143: $(cat "$dir/term.err")"
[ "$(grep -c 'data-verdict="notrun"' "$dir/term/index.html")" -eq 17 ] ||
    fail "SIGTERM during figure 11: not 17 statements 'not run: interrupted'"
[ ! -e "$dir/term/fig11.html" ] || fail "SIGTERM during figure 11: fig11.html written"
echo "dimer_report_test: 7 statements not checked with --quick; SIGINT (130) and SIGTERM (143) leave index.html"

# --- over MPI ranks: the same files ------------------------------------------------
mpirun_=mpirun
[ "$(id -u)" = 0 ] && mpirun_="mpirun --allow-run-as-root"
same_csv() {   # $1 folder: its CSV files are those of the one-thread report
    for f in "$dir"/one/*.csv; do
        cmp -s "$f" "$1/$(basename "$f")" || fail "$1: $(basename "$f") differs from one thread's"
    done
}
$bin dimer-report -o "$dir/one" --quick --basin-n 5 --variant-n 3 --threads 1 >"$dir/out" 2>&1 ||
    fail "one thread: $(cat "$dir/out")"
[ "$(ls "$dir"/one/*.csv | wc -l)" -eq 20 ] || fail "one thread: not 20 CSV files"
same_csv "$out"
$mpirun_ --oversubscribe -np 3 $bin dimer-report -o "$dir/mpi" --quick --basin-n 5 --variant-n 3 \
    >"$dir/out" 2>&1 || fail "mpirun -np 3: $(cat "$dir/out")"
grep -q "simulations over the MPI job" "$dir/out" || fail "mpirun -np 3: not over MPI: $(cat "$dir/out")"
same_csv "$dir/mpi"
asan=${PRISMLAB_ASAN_BIN:-$src/build/asan/bin/prismlab}
if [ -x "$asan" ] && [ -x "$(dirname "$asan")/../libexec/prismlab/prismlab-dimer-mpi" ]; then
    LSAN_OPTIONS="suppressions=$src/tests/model/seeds/lsan-dimer-report.supp:print_suppressions=0:fast_unwind_on_malloc=0" \
    ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
        $mpirun_ --oversubscribe -np 2 -x LSAN_OPTIONS -x ASAN_OPTIONS -x UBSAN_OPTIONS \
        -x OMPI_MCA_mca_base_component_disable_dlclose "$asan" dimer-report -o "$dir/asan" \
        --quick --basin-n 5 --variant-n 3 >"$dir/out" 2>&1 ||
        fail "the ASan build under mpirun: $(cat "$dir/out")"
    ! grep -q "Sanitizer\|runtime error" "$dir/out" || fail "sanitizer report: $(cat "$dir/out")"
    same_csv "$dir/asan"
    asan_note="; the ASan+UBSan build under mpirun -np 2 too"
elif [ -n "${PRISMLAB_SRC:-}" ]; then
    fail "no ASan build of prismlab and prismlab-dimer-mpi at $(dirname "$asan") (make check builds them)"
else
    asan_note="; no ASan build: not run under the sanitizers"
fi
echo "dimer_report_test: one thread, $(grep -o "on [0-9]* threads*" "$dir/stdout") and mpirun -np 3 wrote the same 20 CSV files$asan_note"

command -v chromium >/dev/null || fail "chromium is not installed (make deps)"
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-dev-shm-usage"
for page in index fig11 fig13 basin-fig13 basin-fig16; do
    want=$(grep -o '<img ' "$out/$page.html" | wc -l)
    timeout 120 chromium $flags --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
        --dump-dom "file://$out/$page.html" >"$dir/dom.html" 2>"$dir/console.log" || true
    grep -q "data-images=\"$want/$want\"" "$dir/dom.html" ||
        fail "$page.html: the browser did not load every image: $(grep -o 'data-images="[^"]*"' "$dir/dom.html")"
    if grep -i 'CONSOLE' "$dir/console.log" | grep -qi 'error\|uncaught'; then
        fail "$page.html: console errors: $(grep -i CONSOLE "$dir/console.log")"
    fi
done
echo "dimer_report_test: $(head -1 "$dir/stdout" | sed 's/^dimer-report: [^ ]*: //'); rendered by Chromium"
