#!/bin/sh
# tests/acquire/split_releases_test.sh - import --split-releases (issue 46):
# 20 simulated runs (rig simulator, every bench imperfection on, ramps of
# 6 to 9 cm: 1.2-1.8 s of motion each), each with its own still lead-in
# and tail of varying length, written one after another into one CSV, as a
# logger left running records them.  The import cuts 20 runs; processed,
# each has the impacts of the same simulated run imported and processed on
# its own: the same count, every instant within 0.5 ms once shifted by
# where the cut lies in the file, L_p at the end within 0.1 %.  run show
# says where each run was cut.  A recording of one release gives one run;
# one of the rig at rest is refused naming the file; a split cut short is
# completed by importing the file again; the manifest column does the same.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/t.db
fail() { echo "split_releases_test: $*" >&2; exit 1; }
sh tests/util/catalogdb.sh "$bin" "$db"
rate=10000
names='--prism steel-22 --ramp glass-0.3702 --lambda0-deg 7.2'

# The 20 runs, and the long recording: their rows one after another, the
# time column counted on (the first file's metadata line heads it).
: >"$dir/body"
: >"$dir/offsets"
k=0
while [ $k -lt 20 ]; do
    k=$((k + 1))
    lead=$(awk -v k=$k 'BEGIN { printf "%.2f", 1.2 + (k * 37 % 11) * 0.15 }')
    tail=$(awk -v k=$k 'BEGIN { printf "%.2f", 0.6 + (k * 53 % 7) * 0.2 }')
    ramp=$(awk -v k=$k 'BEGIN { printf "%.3f", 0.06 + (k * 7 % 4) * 0.01 }')
    $bin sim --db "$db" --prism steel-22 --ramp glass-0.3702 --lambda0-deg 7.2 \
        --h1 0.0199 --h2 0.0116 --seed $((k + 100)) --ramp-length "$ramp" \
        --lead-in "$lead" --tail "$tail" --csv "$dir/r$k.csv" >/dev/null
    wc -l <"$dir/body" >>"$dir/offsets"   # the run's first frame in the file
    grep -v '^#' "$dir/r$k.csv" | tail -n +2 >>"$dir/body"
done
{
    head -1 "$dir/r1.csv"
    echo 't_s,v1_V,v2_V'
    awk -F, -v rate=$rate '{ printf "%.4f,%s,%s\n", (NR - 1) / rate, $2, $3 }' "$dir/body"
} >"$dir/long.csv"

$bin import "$dir/long.csv" --split-releases $names --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "import --split-releases: $(cat "$dir/err")"
[ "$(grep -c '^run=' "$dir/out")" = 20 ] || fail "expected 20 runs: $(cat "$dir/out" "$dir/err")"
grep -q 'long.csv: split into 20 runs: 1\.\.20$' "$dir/err" ||
    fail "the runs not named together: $(cat "$dir/err")"

# The same 20 runs imported one by one (runs 21..40).
k=0
while [ $k -lt 20 ]; do
    k=$((k + 1))
    $bin import "$dir/r$k.csv" $names --db "$db" >/dev/null
done
$bin process --all --db "$db" >"$dir/proc" 2>"$dir/perr" || fail "process: $(grep -v warning "$dir/perr")"

k=0
while [ $k -lt 20 ]; do
    k=$((k + 1))
    cut=$k one=$((k + 20))
    first=$(sed -n "${k}p" "$dir/out" | sed -n 's/.*first_frame=\([0-9]*\)$/\1/p')
    at=$(sed -n "${k}p" "$dir/offsets" | tr -d ' ')
    [ -n "$first" ] || fail "run $cut: no first_frame in '$(sed -n "${k}p" "$dir/out")'"
    # where the cut lies in the file, in run show and its JSON
    want=$(awk -v f="$first" -v r=$rate 'BEGIN { printf "%.3f", f / r }')
    $bin run show $cut --db "$db" | grep -q "cut from .*/long.csv at frame $first ($want s)" ||
        fail "run $cut: run show: $($bin run show $cut --db "$db" | grep -i cut)"
    $bin run show $cut --json --db "$db" | grep -q "\"cut_first_frame\": $first," ||
        fail "run $cut: run show --json has no cut_first_frame $first"
    $bin export $cut --series impacts --csv "$dir/c.imp" --db "$db"
    $bin export $one --series impacts --csv "$dir/s.imp" --db "$db"
    nc=$(grep -vc '^[#t]' "$dir/c.imp" || true)
    ns=$(grep -vc '^[#t]' "$dir/s.imp" || true)
    [ "$nc" = "$ns" ] && [ "$nc" -gt 5 ] || fail "run $cut: $nc impacts, run $one on its own $ns"
    # t on the cut's clock plus (first - at) / rate is t on the run's own
    grep -v '^[#t]' "$dir/c.imp" | cut -d, -f1 >"$dir/tc"
    grep -v '^[#t]' "$dir/s.imp" | cut -d, -f1 >"$dir/ts"
    paste -d, "$dir/tc" "$dir/ts" | awk -F, -v sh="$(( first - at ))" -v r=$rate '
        { d = $1 + sh / r - $2; if (d < 0) d = -d; if (d > m) m = d }
        END { if (m > 0.0005) { printf "%.3f ms apart\n", m * 1e3; exit 1 } }' >"$dir/why" ||
        fail "run $cut against run $one: impacts $(cat "$dir/why")"
    lc=$(sed -n "s/^run=$cut .*Lp_end=\([^ ]*\).*/\1/p" "$dir/proc")
    ls=$(sed -n "s/^run=$one .*Lp_end=\([^ ]*\).*/\1/p" "$dir/proc")
    awk -v a="$lc" -v b="$ls" 'BEGIN { d = (a - b) / b; exit !(b > 0 && d < 0.001 && d > -0.001) }' ||
        fail "run $cut: L_p at the end $lc, run $one on its own $ls"
done

# Imported again: every cut is there already.
if $bin import "$dir/long.csv" --split-releases $names --db "$db" >/dev/null 2>"$dir/err"; then
    fail "the split file imported twice"
fi
grep -q 'stored already, split by release, as runs 1\.\.20' "$dir/err" || fail "again: $(cat "$dir/err")"
# A split cut short (runs 3 and 7 lost) is completed by running it again.
$bin run delete 3 7 --yes --db "$db" >/dev/null
$bin import "$dir/long.csv" --split-releases $names --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "resuming: $(cat "$dir/err")"
[ "$(grep -c '^run=' "$dir/out")" = 2 ] || fail "resuming stored $(grep -c '^run=' "$dir/out") runs"
grep -q 'split into 2 runs: 41\.\.42 (stored already: 1\.\.2, 4\.\.6, 8\.\.20)' "$dir/err" ||
    fail "resuming: $(cat "$dir/err")"

# One release: one run, the same impacts as the file imported whole.
db1=$dir/one.db
sh tests/util/catalogdb.sh "$bin" "$db1"
$bin import "$dir/r5.csv" --split-releases $names --db "$db1" >"$dir/out" 2>"$dir/err"
[ "$(grep -c '^run=' "$dir/out")" = 1 ] || fail "one release: $(cat "$dir/out")"
grep -q 'split into 1 run: 1$' "$dir/err" || fail "one release: $(cat "$dir/err")"

# The rig at rest: refused, naming the file; nothing stored.
head -2 "$dir/r1.csv" >"$dir/still.csv"
grep -v '^#' "$dir/r1.csv" | sed -n '1,12001p' >>"$dir/still.csv"
if $bin import "$dir/still.csv" --split-releases $names --db "$db1" >/dev/null 2>"$dir/err"; then
    fail "a recording with no release was split"
fi
grep -q 'still.csv: no release found in 1.2 s' "$dir/err" || fail "no release: $(cat "$dir/err")"
[ "$($bin run list --db "$db1" | tail -n +2 | wc -l)" = 1 ] || fail "no release: a run was stored"

# The manifest's column.
db2=$dir/m.db
sh tests/util/catalogdb.sh "$bin" "$db2"
printf 'file,prism,ramp,lambda0_deg,split_releases\nlong.csv,steel-22,glass-0.3702,7.2,1\n' \
    >"$dir/manifest.csv"
$bin import --manifest "$dir/manifest.csv" --db "$db2" >"$dir/out" 2>"$dir/err" ||
    fail "manifest: $(cat "$dir/err")"
grep -q '^imported 20 runs' "$dir/out" || fail "manifest: $(tail -1 "$dir/out")"
[ "$(grep -c '^run=' "$dir/out")" = 20 ] || fail "manifest: $(cat "$dir/out")"
$bin db check --db "$db2" >/dev/null || fail "db check after the manifest"
echo "split_releases_test: ok"
