#!/bin/sh
# tests/acquire/time_gap_test.sh - time is what the samples say (issue 44),
# from the command line, on a recording the rig simulator makes here
# (N = 26, 10 kHz, 2 s of motion, seed 1) and cuts as a logger would:
#   a dropped buffer (220 rows missing at 1.690 s, the time column
#       jumping): imported with the gap named (FILE:LINE, rows, where,
#       how long) and stored in run_gap (run show's gap: line, --json's
#       gaps list); processed through it: quality
#       degraded with the gap's fault line, no impact inside the gap (the
#       truth's impact at 1.697 s was not seen), every other impact within
#       1 ms of the truth, L_p at the motion's end whole-slot right (within
#       0.1 % of the truth's, as the uncut run);
#   refused at import, naming the line: the time column going backwards,
#       a jump that is no whole number of frames, a gap past 0.1 s;
#   refused at process: a gap in which the prism turns through more than
#       one slot of the lattice (95 ms at 2.30 s: about two);
#   a rate the dynamics contradict: the time column in ms read as s
#       (10 Hz) and --rate 10 refused at once with the figure and the
#       likely cause; with --time-unit ms the same file imports at 10 kHz.
# Each check fails on the code before it: the jump was refused at import,
# and the 10 Hz run was stored.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/t.db
fail() { echo "time_gap_test: $*" >&2; exit 1; }
run_of() { sed -n 's/^run=\([0-9]*\) .*/\1/p' "$1"; }
$bin db init --db "$db" >/dev/null
$bin prism add p26 --N 26 --a0 0.015 --length 0.05 --material steel --density 7850 \
    --db "$db" >/dev/null
$bin sim --N 26 --a0 0.015 --beta-deg 0.4079 --mu-s 0.12 --lambda0-deg 6.3 --h1 0.0199 \
    --h2 0.0112 --lead-in 0.5 --tail 0.3 --max-motion 2 --csv "$dir/s.csv" \
    --truth "$dir/s.truth.csv" >/dev/null
truth_end=$(sed -n 's/^# end_t_s=//p' "$dir/s.truth.csv")
truth_lp=$(sed -n 's/^# Lp_end=//p' "$dir/s.truth.csv")
# the file without frames [a, b): rows are frames k = NR - 4 (two comment
# lines and the header first)
cut_rows() {
    awk -F, -v a="$1" -v b="$2" '/^#/ || NR <= 3 { print; next }
        { k = NR - 4; if (k < a || k >= b) print }' "$dir/s.csv" >"$3"
}
# L_p of a run at the truth's end of the motion
lp_at_end() {
    $bin export "$1" --db "$db" --series Lp --csv "$dir/lp.csv" >/dev/null
    awk -F, -v t="$truth_end" '!/^#/ && NR > 1 { d = $1 - t; if (d < 0) d = -d;
        if (best == "" || d < best) { best = d; v = $2 } } END { print v }' "$dir/lp.csv"
}

# the dropped buffer: frames 16900..17119 (1.690 s, 22 ms)
cut_rows 16900 17120 "$dir/gap.csv"
$bin import "$dir/gap.csv" --db "$db" --prism p26 >"$dir/out" 2>"$dir/err" ||
    fail "a CSV with a dropped buffer refused: $(cat "$dir/err")"
grep -qxF "prismlab import: $dir/gap.csv:16904: 220 rows missing at 1.690 s (the time column jumps 22.0 ms): imported with the gap marked" "$dir/err" ||
    fail "the gap not named as expected: $(cat "$dir/err")"
id=$(run_of "$dir/out")
grep -q "frames=28001 " "$dir/out" || fail "the gap's frames not kept: $(cat "$dir/out")"
[ "$(sqlite3 "$db" "SELECT first_frame || ' ' || n_frames FROM run_gap WHERE run_id = $id")" = "16900 220" ] ||
    fail "run_gap holds '$(sqlite3 "$db" "SELECT * FROM run_gap")'"
$bin run show "$id" --db "$db" | grep -qxF "gap:            220 frames (22.0 ms) missing at 1.690 s (frame 16900): not measured, stored as a line" ||
    fail "run show: no gap line: $($bin run show "$id" --db "$db")"
$bin run show "$id" --db "$db" --json | grep -qF '"gaps": [{"first_frame": 16900, "n_frames": 220, "at_s": 1.69, "missing_s": 0.022}]' ||
    fail "run show --json: no gaps: $($bin run show "$id" --db "$db" --json)"
$bin process "$id" --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "the gapped run not processed: $(cat "$dir/err")"
grep -q "quality=degraded" "$dir/out" || fail "quality: $(cat "$dir/out")"
$bin run show "$id" --db "$db" >"$dir/show"
grep -qF "the recording has a gap: 220 frames (22.0 ms) missing at 1.690 s, bridged by the impact lattice" "$dir/show" ||
    fail "no gap in run show: $(cat "$dir/show")"
$bin export "$id" --db "$db" --series impacts --csv "$dir/imp.csv" >/dev/null
grep '^impact,' "$dir/s.truth.csv" | cut -d, -f2 >"$dir/truth_t"
# no impact in the gap; each measured one within 1 ms of a true one; every
# true one but the gap's measured
awk -F, 'NR == FNR { t[++n] = $1; next } /^#/ || FNR == 1 { next }
    { m++; if ($1 >= 1.690 && $1 < 1.712) { print "an impact at " $1 " s, in the gap"; bad = 1 }
      ok = 0; for (i = 1; i <= n; i++) { d = $1 - t[i]; if (d < 0) d = -d; if (d < 0.001) ok = 1 }
      if (!ok) { print "an impact at " $1 " s, none true within 1 ms"; bad = 1 } }
    END { if (m != n - 1) { print m " impacts, the truth has " n " with one in the gap"; bad = 1 }
          exit bad }' "$dir/truth_t" "$dir/imp.csv" >"$dir/why" || fail "impacts: $(cat "$dir/why")"
lp=$(lp_at_end "$id")
awk -v a="$lp" -v b="$truth_lp" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit !(d <= 0.001) }' ||
    fail "L_p at the end $lp through the gap, the truth $truth_lp"

# refused at import, naming the line
awk -F, '/^#/ || NR <= 3 { print; next } NR == 12004 { keep = $0; next }
    { print } NR == 12005 { print keep }' "$dir/s.csv" >"$dir/back.csv"
$bin import "$dir/back.csv" --db "$db" --prism p26 >/dev/null 2>"$dir/err" &&
    fail "a time column going backwards imported"
grep -qF "back.csv:12005: t_s = 1.2 goes back 0.0001 s from the row before (1.2001): the time column must increase" "$dir/err" ||
    fail "backwards: $(cat "$dir/err")"
awk -F, '/^#/ || NR <= 3 { print; next } { k = NR - 4 } k >= 16900 && k < 16950 { next }
    k >= 16950 { printf "%.5f,%s,%s\n", $1 + 0.00005, $2, $3; next } { print }' "$dir/s.csv" >"$dir/half.csv"
$bin import "$dir/half.csv" --db "$db" --prism p26 >/dev/null 2>"$dir/err" &&
    fail "a jump of 50.5 frames imported"
grep -qF "half.csv:16904: t_s = 1.69505 breaks the regular spacing of 0.0001 s (expected 1.69): it jumps 51.50 periods from the row before, not a whole number" "$dir/err" ||
    fail "off the clock: $(cat "$dir/err")"
cut_rows 16000 17500 "$dir/long.csv"
$bin import "$dir/long.csv" --db "$db" --prism p26 >/dev/null 2>"$dir/err" &&
    fail "a gap of 0.15 s imported"
grep -qF "long.csv:16004: t_s jumps from 1.5999 to 1.75 s: 1500 rows (0.15 s at one row each 0.1 ms) missing, longer than the 0.1 s a gap may be bridged" "$dir/err" ||
    fail "too long: $(cat "$dir/err")"

# refused at process: two slots in one gap
cut_rows 23000 23950 "$dir/slots.csv"
$bin import "$dir/slots.csv" --db "$db" --prism p26 >"$dir/out" 2>/dev/null ||
    fail "a 95 ms gap refused at import"
id=$(run_of "$dir/out")
$bin process "$id" --db "$db" >/dev/null 2>"$dir/err" && fail "a gap of two slots processed"
grep -qE "the recording has a gap at 2.300 s \(950 frames, 95.0 ms missing\) in which the prism turned through [0-9.]+ slots of the lattice: more than 1 would" "$dir/err" ||
    fail "two slots: $(cat "$dir/err")"
$bin run show "$id" --db "$db" | grep -q "^quality: *refused" || fail "the two-slot gap's run not marked refused"

# the time column in ms read as s: 10 Hz
# (another logger's file: no prismlab metadata, the notebook's beams given)
nb="--prism p26 --h1 0.0199 --h2 0.0112 --sign1 1 --sign2 -1 --ldv-scale 0.025"
awk -F, '/^#/ { next } NR == 3 { print "Time,v1_V,v2_V"; next }
    { printf "%.1f,%s,%s\n", 1000 * $1, $2, $3 }' "$dir/s.csv" >"$dir/ms.csv"
$bin import "$dir/ms.csv" --db "$db" $nb --time-column Time >/dev/null 2>"$dir/err" &&
    fail "a time column in ms read as s imported"
grep -qxF "prismlab import: $dir/ms.csv: the time column 'Time' (in s) gives 10 Hz between rows: an LDV run needs at least 1 kHz (the impacts last well under a ms, and the impact search needs samples in the ms about each); is the time column in ms? --time-unit ms" "$dir/err" ||
    fail "ms as s: $(cat "$dir/err")"
$bin import "$dir/ms.csv" --db "$db" $nb --time-column Time --time-unit ms \
    >"$dir/out" 2>"$dir/err" || fail "--time-unit ms refused: $(cat "$dir/err")"
$bin run show "$(run_of "$dir/out")" --db "$db" | grep -q "^sample_rate: *10000 Hz" ||
    fail "--time-unit ms not 10 kHz"
grep -v '^#' "$dir/s.csv" | cut -d, -f2- >"$dir/plain.csv"
$bin import "$dir/plain.csv" --db "$db" $nb --time-column none --rate 10 \
    >/dev/null 2>"$dir/err" &&
    fail "--rate 10 imported"
grep -qF "plain.csv: --rate gives 10 Hz: an LDV run needs at least 1 kHz" "$dir/err" &&
    grep -qF -e "--rate is in Hz: --rate 10000 for 10 kHz?" "$dir/err" || fail "--rate 10: $(cat "$dir/err")"
echo "time_gap_test: ok"
