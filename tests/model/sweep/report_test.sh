#!/bin/sh
# tests/model/sweep/report_test.sh - the prism's phase map end to end: the
# 10,000-point sweep of fixtures/sweeps/prism-phase.ini on this machine,
# `prismlab sweep report`, and the page in headless Chromium:
#   - every figure the page names exists, and every image renders;
#   - the table's bracket of beta_c for each law and N is the stored one
#     (the smallest grid beta/alpha with a start that rolls for ever);
#   - the settled speed is within 0.1 % of the closed form (the command
#     says how far: the worst over all runs still rolling at 7 s);
#   - no console error;
#   - every text of every figure (titles, legends) lies inside its picture
#     as Chromium draws it (tests/util/svgfit.sh): the long legends of
#     beta_c.svg and the maps ran 30-190 px off the right.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "sweep report_test: $*" >&2; exit 1; }
db=$dir/p.db
src=${PRISMLAB_SRC:-.}

$bin db init --db "$db" > /dev/null || fail "db init"
$bin sweep "$src/fixtures/sweeps/prism-phase.ini" --db "$db" > "$dir/out" || fail "sweep: $(cat "$dir/out")"
grep -q "10000/10000 points stored" "$dir/out" || fail "sweep: $(cat "$dir/out")"
out=$dir/report
$bin sweep report prism-phase --db "$db" -o "$out" > "$dir/rep" || fail "report: $(cat "$dir/rep")"
cat "$dir/rep"
worst=$(sed -n 's/.*omega\* worst \([^ ]*\) % off.*/\1/p' "$dir/rep")
awk -v w="$worst" 'BEGIN { exit !(w != "" && w + 0 < 0.1) }' || fail "omega* worst $worst % (limit 0.1 %)"
n=$(grep -o 'src="[^"]*"' "$out/index.html" | wc -l)
[ "$n" -eq 22 ] || fail "the page has $n figures, expected omega*, beta_c and 20 maps"
grep -o 'src="[^"]*"' "$out/index.html" | sed 's/^src="\(.*\)"$/\1/' | while read -r ref; do
    [ -s "$out/$ref" ] || fail "index.html references $ref, which is not there"
done
# the bracket in the table is the stored one, for every law and N
sqlite3 "$db" "SELECT json_extract(params, '$.law'), json_extract(params, '$.N'),
                      min(json_extract(params, '$.\"beta-frac\"'))
                 FROM sweep_point WHERE json_extract(result, '$.rolls') = 1 GROUP BY 1, 2" |
while IFS='|' read -r law N b; do
    want=$(printf '%.6g' "$b")
    grep -q "<tr><td>$law</td><td>$N</td><td>[^<]*</td><td>[^<]*</td><td>[^<]*</td><td>$want</td>" "$out/index.html" \
        || fail "the table lacks $law N $N's first rolling beta/alpha $want"
done

command -v chromium >/dev/null || fail "chromium is not installed (make deps)"
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-dev-shm-usage"
timeout 120 chromium $flags --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
    --dump-dom "file://$out/index.html" >"$dir/dom.html" 2>"$dir/console.log" || true
grep -q 'data-images="22/22"' "$dir/dom.html" ||
    fail "the browser did not load every image: $(grep -o 'data-images="[^"]*"' "$dir/dom.html")"
if grep -i 'CONSOLE' "$dir/console.log" | grep -qi 'error\|uncaught'; then
    fail "console errors: $(grep -i CONSOLE "$dir/console.log")"
fi
sh "$src/tests/util/svgfit.sh" "$out"/*.svg >"$dir/fit" || fail "texts cut off: $(cat "$dir/fit")"
mkdir -p build
timeout 120 chromium $flags --window-size=1200,2400 --screenshot=build/sweep-report-screenshot.png \
    "file://$out/index.html" >/dev/null 2>&1 || true
[ -s build/sweep-report-screenshot.png ] || fail "no screenshot"
echo "sweep report_test: 10,000-point phase map drawn, 22/22 images in Chromium (build/sweep-report-screenshot.png)"
