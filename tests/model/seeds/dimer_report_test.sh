#!/bin/sh
# tests/model/seeds/dimer_report_test.sh - `prismlab dimer-report --quick`
# with basin maps of 5 x 5 starts (3 x 3 for the open choices) end to end
# and in a real browser:
#   - the report's files exist, every page the index links exists, every
#     file a page references exists;
#   - the index marks each statement holds or does not hold: figure 11's
#     reversal at A_r 5 holds (the quick sweep spans it), figure 15's rest
#     holds, figure 13's jump start does not (it comes to rest here);
#   - the maps are stored and a second report reads them instead of
#     running them again;
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
n=$(grep -c 'data-verdict=' "$out/index.html")
[ "$n" -eq 17 ] || fail "index.html has $n verdicts, expected 10 + 7"
tail -n +2 "$out/fig11.csv" | awk -F, '$2 == 4.50 && $5 <= 0 { exit 1 } $2 == 5.50 && $5 >= 0 { exit 1 }' ||
    fail "fig11.csv: the drift does not change sign between A_r 4.5 and 5.5 at 25 Hz"

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
echo "dimer_report_test: $(cat "$dir/stdout" | sed 's/^dimer-report: [^ ]*: //'); rendered by Chromium"
