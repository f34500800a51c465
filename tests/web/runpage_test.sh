#!/bin/sh
# tests/web/runpage_test.sh - the run page and the runs list read as a
# physicist needs them (issue 45), in a real browser (tests/web/runpage.mjs
# says what it checks): the fig8 fixture runs imported, processed and
# validated, the other fixture runs imported, and one run recorded from
# the rig simulator, behind `prismlab serve`.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
. tests/web/liverig.sh
trap liverig_cleanup EXIT INT TERM
fail() { liverig_fail runpage_test "$@"; }
need_browser

db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
$bin process --experiment fig8 --db "$db" >/dev/null 2>&1
$bin validate --experiment fig8 --fit lambda0,t0,beta --db "$db" >/dev/null
# a run recorded (not imported): the simulator, unpaced, for a second
rig_ini "$db" 1
sed -i 's/^paced = 1$/paced = 0/' "$dir/rig.ini"
recorded=$($bin acquire record --config "$dir/rig.ini" --db "$db" | sed -n 's/^run=\([0-9]*\) .*/\1/p')
[ -n "$recorded" ] || fail "acquire record did not record a run"
# what the ratio plot's lines must be: the stored validations' ratios
line=$(sqlite3 "$db" "SELECT ratio_pred FROM validation WHERE run_id = 1 AND law = 'line' AND fit = 'fitted'")
plastic=$(sqlite3 "$db" "SELECT ratio_pred FROM validation WHERE run_id = 1 AND law = 'plastic' AND fit = 'fitted'")
start_serve "$db" || fail "serve did not start"
timeout 180 node tests/web/runpage.mjs "$url" "$recorded" "$line" "$plastic" >"$dir/runpage.out" 2>&1 ||
    { cat "$dir/runpage.out" >&2; fail "the browser test failed"; }
cat "$dir/runpage.out"
