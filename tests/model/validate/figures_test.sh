#!/bin/sh
# tests/model/validate/figures_test.sh - figures a paper can use (issue
# 17 item 3), checked in headless Chromium: in every figure of the fig7
# and fig8 reports no label lies inside a plot frame (legends outside the
# data), none overlaps another (the L_p error axis label once overlapped
# its ticks) or leaves the figure; one legend entry a run (run id) in the
# L_p, L_p error and omega figures; one time axis, "time from release",
# in every time plot; each figure also as PDF and PNG; the paper's numbers
# beside ours (fig. 8's 0.39 % for N = 22).
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
top=$(pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/f.db
fail() { echo "figures_test: $*" >&2; exit 1; }
command -v chromium >/dev/null || fail "chromium is not installed (make deps)"

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
$bin process --experiment fig7 --db "$db" >/dev/null 2>&1
$bin process --experiment fig8 --db "$db" >/dev/null 2>&1
$bin validate --experiment fig7 --fit lambda0,t0 --db "$db" >/dev/null
$bin validate --experiment fig8 --fit lambda0,t0 --db "$db" >/dev/null
figs="lp lp_error omega vp ratio"
for e in fig7 fig8; do
    out=$dir/$e
    $bin report --experiment $e -o "$out" --db "$db" >/dev/null
    runs=$(tail -n +2 "$out/metrics.csv" | cut -d, -f1 | sort -u | wc -l)
    for f in $figs; do
        head -c 4 "$out/$f.pdf" | grep -q '%PDF' || fail "$e/$f.pdf is not a PDF"
        [ "$(head -c 8 "$out/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
            fail "$e/$f.png is not a PNG"
    done
    for f in lp lp_error omega vp; do
        # PLplot writes every character as an entity: read the text back
        python3 -c 'import html, sys; print(html.unescape(open(sys.argv[1]).read()))' \
            "$out/$f.svg" > "$dir/text"
        grep -q 'time from release t (s)' "$dir/text" || fail "$e/$f.svg: not on the time from release"
        if grep -q 'run time' "$dir/text"; then fail "$e/$f.svg: a second time axis"; fi
    done
    cp "$top/tests/model/validate/figcheck.html" "$out/"
    # and each run's figure of its impacts' ratios
    list=$(echo $figs $(cd "$out" && ls ratio_run*.svg | sed 's/\.svg$//') | sed 's/\([a-z_0-9]*\)/\1.svg/g; s/ /,/g')
    nfigs=$(echo "$list" | tr ',' '\n' | wc -l)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-dev-shm-usage --allow-file-access-from-files --virtual-time-budget=5000 \
        --dump-dom "file://$out/figcheck.html#$list" > "$dir/$e.dom" 2>/dev/null || true
    grep -q 'data-result="done"' "$dir/$e.dom" || fail "$e: the browser check did not finish"
    grep -q "data-checked=\"$nfigs\"" "$dir/$e.dom" || fail "$e: not every figure was checked"
    grep -q 'data-problems="0"' "$dir/$e.dom" ||
        fail "$e: $(sed -n '/<div id="out"/,/<\/div>/p' "$dir/$e.dom" | sed 's/<[^>]*>//g')"
    # one entry a run in lp, lp_error and omega
    grep -q "data-legend-runs=\"$((3 * runs))\"" "$dir/$e.dom" ||
        fail "$e: legend entries $(grep -o 'data-legend-runs="[0-9]*"' "$dir/$e.dom"), expected $((3 * runs))"
    echo "figures_test: $e: $nfigs figures, $runs runs, no label in a plot area or on another label"
done
grep -q "The paper's numbers beside ours" "$dir/fig8/index.html" || fail "no table of the paper's numbers"
grep -q '<td>0.39</td>' "$dir/fig8/index.html" || fail "fig. 8's 0.39 % is not beside ours"
grep -q '<td>22.3 / 11.9' "$dir/fig7/index.html" || fail "fig. 7's beam heights are not beside ours"
echo "figures_test: ok"
