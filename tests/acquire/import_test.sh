#!/bin/sh
# tests/acquire/import_test.sh - prismlab import on the fixture runs: the
# manifest imports all 17 runs, each with as many frames as its truth says
# and its samples intact (db check); every deliberately bad file is refused
# with its documented message and leaves the database unchanged.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/t.db
fail() { echo "import_test: $*" >&2; exit 1; }

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >"$dir/out"
grep -q '^imported 17 runs' "$dir/out" || fail "manifest: $(tail -1 "$dir/out")"
$bin db check --db "$db" >/dev/null || fail "db check after the manifest"

# Frames per run against the truth files (run ids follow the manifest).
id=0
grep -v '^#' fixtures/runs/manifest.csv | tail -n +2 | while IFS=, read -r file rest; do
    id=$((id + 1))
    stem=${file%.*}
    want=$(sed -n 's/^# frames=//p' "fixtures/runs/$stem.truth.csv")
    got=$($bin run show "$id" --db "$db" | sed -n 's/^ *frames[: ]*\([0-9]*\).*/\1/p' | head -1)
    [ "$got" = "$want" ] || fail "run $id ($file): $got frames, truth says $want"
done
$bin run list --db "$db" | grep -c SYNTHETIC | grep -qx 17 || fail "not every run marked SYNTHETIC"

before=$(sqlite3 "$db" 'SELECT count(*) FROM run; SELECT count(*) FROM chunk;' 2>/dev/null || true)
check_bad() {
    file=$1 msg=$2
    if $bin import "fixtures/runs/bad/$file" --prism steel-22 --ramp glass-0.3702 \
        --db "$db" 2>"$dir/err" >/dev/null; then
        fail "$file was accepted"
    fi
    grep -q "$msg" "$dir/err" || fail "$file: expected '$msg', got: $(cat "$dir/err")"
}
check_bad truncated.wav 'truncated: the header promises 349848 bytes'
check_bad garbage-line.csv "garbage-line.csv:1234: column 1 (from 0, as --columns counts): expected a number, got '0.01O3'"
check_bad one-channel.csv '1 channel, expected 2'
check_bad three-channels.csv '3 channels, expected 2'
after=$(sqlite3 "$db" 'SELECT count(*) FROM run; SELECT count(*) FROM chunk;' 2>/dev/null || true)
[ "$before" = "$after" ] || fail "bad files changed the database"
$bin run list --db "$db" | tail -n +2 | wc -l | grep -qx 17 || fail "bad files added runs"

# A WAV without metadata needs the options it lacks, and says which.
$bin sim --N 30 --a0 0.015 --beta-deg 0.4 --mu-s 0.12 --lambda0-deg 5.3 \
    --h1 0.02 --h2 0.01 --ramp-length 0.05 --csv "$dir/x.csv" >/dev/null
grep -v '^#' "$dir/x.csv" >"$dir/plain.csv"
if $bin import "$dir/plain.csv" --db "$db" 2>"$dir/err" >/dev/null; then
    fail "a CSV without heights was accepted"
fi
grep -q 'give --h1 M' "$dir/err" || fail "plain CSV: $(cat "$dir/err")"
$bin import "$dir/plain.csv" --h1 0.02 --h2 0.01 --sign1 1 --sign2 -1 \
    --ldv-scale 0.025 --db "$db" >"$dir/out" || fail "plain CSV with options: $(cat "$dir/out")"
# Round trips: WAV -> store -> WAV -> store and CSV -> store -> CSV give the
# same samples (compared as volts, every digit, comment lines aside).
$bin export 1 --wav "$dir/rt.wav" --db "$db" >/dev/null
$bin import "$dir/rt.wav" --db "$db" >"$dir/out"
wid=$(sed -n 's/^run=\([0-9]*\).*/\1/p' "$dir/out")
$bin export 1 --csv "$dir/a.csv" --db "$db"
$bin export "$wid" --csv "$dir/b.csv" --db "$db"
grep -v '^#' "$dir/a.csv" >"$dir/a.body"
grep -v '^#' "$dir/b.csv" >"$dir/b.body"
cmp -s "$dir/a.body" "$dir/b.body" || fail "WAV round trip changed the samples"
$bin import "$dir/b.csv" --db "$db" >"$dir/out"
cid=$(sed -n 's/^run=\([0-9]*\).*/\1/p' "$dir/out")
$bin export "$cid" --csv "$dir/c.csv" --db "$db"
grep -v '^#' "$dir/c.csv" >"$dir/c.body"
cmp -s "$dir/b.body" "$dir/c.body" || fail "CSV round trip changed the samples"
# A recorded run (unsigned codes through a polynomial, as record and the
# daemon store them): export writes its cal= and code_offset= for other
# readers, which import must pass over, not refuse as "not a number".
$bin sim --prism steel-22 --ramp glass-0.3702 --lambda0-deg 7.2 --h1 0.0199 --h2 0.0116 \
    --ramp-length 0.1 --store --db "$db" >"$dir/out" 2>&1 || fail "sim --store: $(cat "$dir/out")"
sid=$(sed -n 's/^run=\([0-9]*\).*/\1/p' "$dir/out")
$bin export "$sid" --wav "$dir/rec.wav" --db "$db" >/dev/null
grep -q "cal=" "$dir/rec.wav" || fail "export --wav of a recorded run wrote no cal= for other readers"
$bin import "$dir/rec.wav" --db "$db" >"$dir/out" 2>&1 || fail "a recorded run's WAV refused: $(cat "$dir/out")"
rid=$(sed -n 's/^run=\([0-9]*\).*/\1/p' "$dir/out")
$bin export "$sid" --csv "$dir/r1.csv" --db "$db"
$bin export "$rid" --csv "$dir/r2.csv" --db "$db"
# The WAV holds signed codes at +-full scale, the store unsigned ones
# through -10 V + k c: the volts agree within half a code step (0.15 mV,
# an offset processing removes with the lead-in's), and the processing
# is the same to the printed digit.
paste -d, "$dir/r1.csv" "$dir/r2.csv" | awk -F, '!/^#/ && NR > 2 {
    for (i = 2; i <= 3; i++) { d = $i - $(i + 3); if (d < 0) d = -d; if (d > m) m = d } }
    END { exit !(m > 0 && m <= 0.000153) }' ||
    fail "a recorded run's WAV round trip moved the volts by more than half a code step"
$bin process "$sid" "$rid" --db "$db" 2>/dev/null | sed 's/^run=[0-9]* //' >"$dir/proc"
[ "$(sort -u "$dir/proc" | wc -l)" -eq 1 ] && [ "$(wc -l <"$dir/proc")" -eq 2 ] ||
    fail "a recorded run and its WAV round trip process differently: $(cat "$dir/proc")"
$bin db check --db "$db" >/dev/null || fail "db check after the round trips"

# A foreign logger's CSV: ';' between fields, decimal commas, a time column
# of its own name, an extra column, velocities in m/s, columns picked by
# name and by index.  Stored as m/s with the calibration that gives volts.
printf '# a foreign logger\ntime;a;LDV1 (m/s);LDV2 (m/s)\n' >"$dir/f.csv"
awk 'BEGIN { for (k = 0; k < 3000; k++) { t = k / 10000; om = t < 0.05 ? 0 : 30 * (t - 0.05);
    printf "%.4f;7;%.6f;%.6f\n", t, om * 0.0199, -om * 0.0116 } }' | tr . , >>"$dir/f.csv"
$bin import "$dir/f.csv" --delimiter ';' --decimal , --time-column time \
    --columns 'LDV1 (m/s),3' --units mps --h1 0.0199 --h2 0.0116 --sign1 1 \
    --sign2 -1 --ldv-scale 0.025 --db "$db" >"$dir/out" || fail "foreign CSV: $(cat "$dir/out")"
fid=$(sed -n 's/^run=\([0-9]*\) frames=3000 .*/\1/p' "$dir/out")
[ -n "$fid" ] || fail "foreign CSV: $(cat "$dir/out")"
$bin export "$fid" --csv "$dir/f-out.csv" --db "$db"
# t = 0.2 s: omega = 4.5 rad/s, v1 = 0.08955 m/s = 3.582 V, v2 = -0.0522 m/s = -2.088 V
grep '^0.2,' "$dir/f-out.csv" | awk -F, '{ exit !($2 > 3.5819 && $2 < 3.5821 && $3 < -2.0879 && $3 > -2.0881) }' ||
    fail "foreign CSV values: $(grep '^0.2,' "$dir/f-out.csv")"
if $bin import "$dir/f.csv" --delimiter ';' --decimal , --columns 'LDV9' --db "$db" 2>"$dir/err"; then
    fail "a missing column was accepted"
fi
grep -q "no column 'LDV9'" "$dir/err" || fail "missing column: $(cat "$dir/err")"
echo "import_test: 17 fixture runs imported and checked; 4 bad files refused; WAV and CSV round trips exact; a foreign CSV (;, decimal commas, m/s, columns by name and index) read right"
