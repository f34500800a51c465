#!/bin/sh
# tests/bench/web_page_bench.sh - the run page of a real 10-minute run in
# a browser, as issue 29 met it: the rig simulator's recording of a
# 38-faced prism rolling for ten minutes (2 x 6 M frames at 10 kHz),
# imported, processed (~40 000 impacts) and validated under the line law;
# then WEB_PAGE_BENCH_N times (default 5) a fresh `prismlab serve` and a
# fresh headless chromium (empty cache) opening /run/1
# (tests/web/page_bench.mjs):
#   web_page_paint_10min: the median time from the navigation's start to
#     the page's first paint (with its loading sign);
#   web_page_drawn_10min (median), web_page_drawn_10min_max: to the plots
#     drawn (the browser's own work included: the page, the scripts, the
#     1 MB of /meta, uPlot);
#   web_answer_10min (median of 5, and _max): /api/run/1/answer on a warm
#     server, the run page's validation section (both laws simulated
#     again for the verdict), asked for once the plots are drawn.
set -eu
n=${WEB_PAGE_BENCH_N:-5}
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
spid=
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin sim --prism steel-38 --ramp glass-0.4079 --ramp-length 1000 --lambda0-deg 4.5 \
    --h1 0.0199 --h2 0.0116 --max-motion 598.5 --wav "$dir/run.wav" --db "$db" >/dev/null
$bin import "$dir/run.wav" --db "$db" >/dev/null
$bin process --all --db "$db" >"$dir/process.out" 2>/dev/null
$bin validate --all --no-fit --db "$db" >/dev/null
echo "web_page_bench: $(cat "$dir/process.out")" >&2
i=0
while [ $i -lt "$n" ]; do
    # a file of its own: the shell may truncate a reused one after the
    # loop below has read the last server's address from it
    out=$dir/serve.$i.out
    $bin serve --db "$db" --listen 127.0.0.1:0 >"$out" 2>&1 &
    spid=$!
    k=0
    while ! grep -qs '^prismlab serve: http' "$out" && [ $k -lt 50 ]; do sleep 0.1; k=$((k + 1)); done
    url=$(sed -n 's/^prismlab serve: \(http[^ ]*\) .*/\1/p' "$out")
    [ -n "$url" ] || { echo "web_page_bench: serve did not start" >&2; cat "$out" >&2; exit 1; }
    node tests/web/page_bench.mjs "$url" 1 >>"$dir/times"
    kill "$spid"
    wait "$spid" 2>/dev/null || true
    spid=
    i=$((i + 1))
done
# the validation section: 5 requests to one server
out=$dir/serve.answer.out
$bin serve --db "$db" --listen 127.0.0.1:0 >"$out" 2>&1 &
spid=$!
k=0
while ! grep -qs '^prismlab serve: http' "$out" && [ $k -lt 50 ]; do sleep 0.1; k=$((k + 1)); done
url=$(sed -n 's/^prismlab serve: \(http[^ ]*\) .*/\1/p' "$out")
node -e 'const u = process.argv[1];
(async () => {
  for (let k = 0; k < 5; k++) {
    const t = performance.now();
    const r = await fetch(u);
    await r.text();
    if (!r.ok) throw new Error(u + ": HTTP " + r.status);
    console.log(((performance.now() - t) / 1000).toFixed(6));
  }
})();' "${url}api/run/1/answer" >>"$dir/answer"
kill "$spid"
wait "$spid" 2>/dev/null || true
spid=
sed 's/^/web_page_bench: /' "$dir/times" >&2
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "web_page_paint_10min: $(awk '{ print $3 }' "$dir/times" | median) ms"
echo "web_page_drawn_10min: $(awk '{ print $5 }' "$dir/times" | median) ms"
echo "web_page_drawn_10min_max: $(awk '{ print $5 }' "$dir/times" | sort -n | tail -1) ms"
echo "web_answer_10min: $(awk '{ printf "%.0f\n", 1000 * $1 }' "$dir/answer" | median) ms"
echo "web_answer_10min_max: $(awk '{ printf "%.0f\n", 1000 * $1 }' "$dir/answer" | sort -n | tail -1) ms"
