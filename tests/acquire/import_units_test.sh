#!/bin/sh
# tests/acquire/import_units_test.sh - what a lab's loggers write (issue 45):
#   - two vibrometers: --ldv-scale 0.025,0.05 (beam 1's, beam 2's) stores
#     each channel's own scale, as does a manifest's ldv_scale_mps_per_v
#     cell "0.025,0.05" and the file's metadata line (ldv_scale=A,B); one
#     value is both beams'; a bad second value is named;
#   - a CSV in millivolts: --units mV (or --volts-per-unit 0.001, or a
#     manifest's units = mV) stores the file's numbers with the calibration
#     that makes them volts: the export's volts are the volts file's.
# Before issue 45 "--ldv-scale 0.025,0.05" and "--units mV" were refused.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "import_units_test: $*" >&2; exit 1; }
db=$dir/t.db
$bin db init --db "$db" >/dev/null
run_of() { sed -n 's/^run=\([0-9]*\) .*/\1/p' "$1"; }
scales() { $bin run show "$1" --db "$db" | sed -n 's/^channel \([12]\):.* scale=\([0-9.e-]*\) m\/s\/V.*/\2/p' | tr '\n' ' '; }
$bin sim --N 30 --a0 0.015 --beta-deg 0.4 --mu-s 0.12 --lambda0-deg 5.3 --h1 0.02 \
    --h2 0.01 --ramp-length 0.05 --csv "$dir/v.csv" >/dev/null

# per-channel LDV scales
$bin import "$dir/v.csv" --ldv-scale 0.025,0.05 --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "--ldv-scale 0.025,0.05: $(cat "$dir/err")"
[ "$(scales "$(run_of "$dir/out")")" = "0.025 0.05 " ] ||
    fail "--ldv-scale 0.025,0.05 stored $(scales "$(run_of "$dir/out")")"
$bin import "$dir/v.csv" --ldv-scale 0.04 --force --db "$db" >"$dir/out" 2>/dev/null
[ "$(scales "$(run_of "$dir/out")")" = "0.04 0.04 " ] ||
    fail "--ldv-scale 0.04 stored $(scales "$(run_of "$dir/out")")"
if $bin import "$dir/v.csv" --ldv-scale 0.025,0 --force --db "$db" 2>"$dir/err"; then
    fail "--ldv-scale 0.025,0 accepted"
fi
grep -q "option '--ldv-scale': '0.025,0': value 2 is 0 m/s/V, expected a scale in (0, 1000\] m/s/V" "$dir/err" ||
    fail "--ldv-scale 0.025,0: $(cat "$dir/err")"
# the metadata line's list: each channel its own
sed '1s/ldv_scale=0.025,0.025/ldv_scale=0.02,0.03/' "$dir/v.csv" >"$dir/meta.csv"
$bin import "$dir/meta.csv" --db "$db" >"$dir/out" 2>/dev/null
[ "$(scales "$(run_of "$dir/out")")" = "0.02 0.03 " ] ||
    fail "ldv_scale=0.02,0.03 stored $(scales "$(run_of "$dir/out")")"
# a manifest's cell
printf 'file,ldv_scale_mps_per_v\nv.csv,"0.025,0.05"\n' >"$dir/m.csv"
$bin import --manifest "$dir/m.csv" --force --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "manifest \"0.025,0.05\": $(cat "$dir/err")"
[ "$(scales "$(sed -n 's/^run=\([0-9]*\) .*/\1/p' "$dir/out")")" = "0.025 0.05 " ] ||
    fail "manifest \"0.025,0.05\" stored $(scales "$(sed -n 's/^run=\([0-9]*\) .*/\1/p' "$dir/out")")"
printf 'file,ldv_scale_mps_per_v\nv.csv,"0.025,x"\n' >"$dir/bad.csv"
if $bin import --manifest "$dir/bad.csv" --force --db "$db" >/dev/null 2>"$dir/err"; then
    fail "manifest \"0.025,x\" accepted"
fi
grep -q "bad.csv:2: column 'ldv_scale_mps_per_v': expected MPS_PER_V or beam 1's,beam 2's" "$dir/err" ||
    fail "manifest \"0.025,x\": $(cat "$dir/err")"

# millivolts: the same volts as the volts file
$bin import "$dir/v.csv" --force --db "$db" >"$dir/out" 2>/dev/null
volts=$(run_of "$dir/out")
$bin export "$volts" --csv "$dir/volts.out" --db "$db" >/dev/null
awk -F, '/^#/ { print; next } /^t_s/ { print "t_s,v1_mV,v2_mV"; next }
         { printf "%s,%.3f,%.3f\n", $1, 1000 * $2, 1000 * $3 }' "$dir/v.csv" >"$dir/mv.csv"
same_volts() {   # $1: run; its export against the volts file's, to 1e-12 V
    $bin export "$1" --csv "$dir/mv.out" --db "$db" >/dev/null
    grep -v '^#' "$dir/volts.out" | tail -n +2 >"$dir/a"
    grep -v '^#' "$dir/mv.out" | tail -n +2 >"$dir/b"
    [ "$(wc -l <"$dir/a")" = "$(wc -l <"$dir/b")" ] || return 1
    paste -d, "$dir/a" "$dir/b" | awk -F, '{ for (i = 2; i <= 3; i++) { d = $i - $(i + 3); if (d > 1e-12 || d < -1e-12) { print "row " NR ": " $0; exit 1 } } }'
}
for units in "--units mV" "--volts-per-unit 0.001"; do
    $bin import "$dir/mv.csv" --columns v1_mV,v2_mV $units --db "$db" --force >"$dir/out" 2>"$dir/err" ||
        fail "$units: $(cat "$dir/err")"
    same_volts "$(run_of "$dir/out")" || fail "$units: the volts differ from the volts file's"
done
printf 'file,columns,units\nmv.csv,"v1_mV,v2_mV",mV\n' >"$dir/m.csv"
$bin import --manifest "$dir/m.csv" --force --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "manifest units = mV: $(cat "$dir/err")"
same_volts "$(sed -n 's/^run=\([0-9]*\) .*/\1/p' "$dir/out")" || fail "manifest units = mV: the volts differ"
if $bin import "$dir/mv.csv" --columns v1_mV,v2_mV --units kV --force --db "$db" 2>"$dir/err"; then
    fail "--units kV accepted"
fi
grep -q "option '--units': units 'kV': expected volts, mV or mps" "$dir/err" || fail "--units kV: $(cat "$dir/err")"
echo "import_units_test: ok"
