#!/bin/sh
# tests/cli/plurals_test.sh - counts and their nouns agree (issue 45):
# import's summary ("imported 1 run", "0 runs ... (1 stored already,
# skipped)"), a CSV's gap of one row ("1 row missing") and the report's
# line ("1 run, ...") and process's warning of one drop-out on a beam
# ("1 drop-out (0.9 ms in all)").  Before issue 45: "imported 1 runs", "1
# rows missing", "1 runs", "1 drop-outs".
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "plurals_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
{ sed -n '/^file,/p' fixtures/runs/manifest.csv
  grep '^fig6-steel-30.wav,' fixtures/runs/manifest.csv | sed "s|^|$PWD/fixtures/runs/|"; } >"$dir/m.csv"
$bin import --manifest "$dir/m.csv" --db "$db" 2>/dev/null | tail -1 >"$dir/out"
grep -qx "imported 1 run from $dir/m.csv into $db" "$dir/out" || fail "one run: $(cat "$dir/out")"
$bin import --manifest "$dir/m.csv" --db "$db" 2>/dev/null | tail -1 >"$dir/out"
grep -qx "imported 0 runs from $dir/m.csv into $db (1 stored already, skipped)" "$dir/out" ||
    fail "none, one skipped: $(cat "$dir/out")"

# a logger that dropped one row: its CSV's time column jumps by two periods
$bin sim --N 30 --a0 0.015 --beta-deg 0.4 --mu-s 0.12 --lambda0-deg 5.3 --h1 0.02 \
    --h2 0.01 --ramp-length 0.05 --csv "$dir/s.csv" >/dev/null
awk 'NR != 1000' "$dir/s.csv" >"$dir/gap.csv"
$bin import "$dir/gap.csv" --db "$db" >/dev/null 2>"$dir/err" || fail "the gap: $(cat "$dir/err")"
grep -q "gap.csv:1000: 1 row missing at " "$dir/err" || fail "the gap: $(cat "$dir/err")"

$bin report --experiment fig6 --out "$dir/rep" --db "$db" >"$dir/out" 2>/dev/null
grep -q "^$dir/rep/index.html: 1 run, 0 validated, " "$dir/out" || fail "report: $(cat "$dir/out")"
# process: the fixtures hold beams with a single drop-out
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null 2>&1
$bin process --all --db "$db" >/dev/null 2>"$dir/err" || true
grep -q "beam [12]: 1 drop-out (0\.9 ms in all) bridged" "$dir/err" || fail "process: one drop-out: $(grep drop-out "$dir/err" | head -3)"
grep -q " 1 drop-outs" "$dir/err" && fail "process: $(grep ' 1 drop-outs' "$dir/err" | head -1)"
echo "plurals_test: ok"
