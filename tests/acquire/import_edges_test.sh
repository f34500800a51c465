#!/bin/sh
# tests/acquire/import_edges_test.sh - issue 31's parser defects and issue
# 30's import messages, from the command line:
#   D6  sim --csv at 20 and 50 kHz imports (t_s was rounded to 0.1 ms): each
#       frame, the rate and the volts as simulated, and its export imports
#       again to the same samples;
#   D7  a float WAV holding NaN and Inf is refused naming the file, the
#       channel, the first frame and the count, and stores nothing;
#   D8  a 100-channel WAV imports with --channels 98,1;
#   D9  CR-only, CRLF and mixed line ends import as the LF file does;
#   a plain WAV names every missing option at once, sim names every missing
#   model option at once, and a CSV whose time column is 'time' is told
#   about --time-column.
# Each check fails on the code before issue 31's fixes.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/t.db
fail() { echo "import_edges_test: $*" >&2; exit 1; }
beams="--h1 0.02 --h2 0.01 --sign1 1 --sign2 -1 --ldv-scale 0.025"
model="--N 30 --a0 0.015 --beta-deg 0.4 --mu-s 0.12 --lambda0-deg 5.3 \
--h1 0.02 --h2 0.01 --ramp-length 0.05"
$bin db init --db "$db" >/dev/null
# the run's line of run show: "sample_rate:    20000 Hz" -> 20000
show() { $bin run show "$1" --db "$db" | sed -n "s/^$2: *\([0-9.]*\).*/\1/p"; }
run_of() { sed -n 's/^run=\([0-9]*\) .*/\1/p' "$1"; }

# D6: the simulator's CSV above 10 kHz, through its own importer.
for rate in 20000 50000; do
    $bin sim $model --rate $rate --csv "$dir/s$rate.csv" >"$dir/sim" ||
        fail "sim at $rate Hz: $(cat "$dir/sim")"
    want=$(sed -n 's/^frames=\([0-9]*\) .*/\1/p' "$dir/sim")
    $bin import "$dir/s$rate.csv" --db "$db" >"$dir/out" 2>"$dir/err" ||
        fail "sim --csv at $rate Hz refused by import: $(cat "$dir/err")"
    id=$(run_of "$dir/out")
    [ "$(show "$id" sample_rate)" = "$rate" ] || fail "$rate Hz stored as $(show "$id" sample_rate)"
    [ "$(show "$id" frames)" = "$want" ] || fail "$rate Hz: $(show "$id" frames) frames, sim made $want"
    # the time column exact: frame k at k / rate, to the last digit
    awk -F, -v r=$rate '!/^#/ && NR > 3 { k = NR - 4; if ($1 + 0 != k / r) { print "row " k ": " $1; exit 1 } }' \
        "$dir/s$rate.csv" || fail "$rate Hz: a time off its frame"
    # round trip: the stored volts are the file's, and the export imports
    # again to the same samples
    $bin export "$id" --csv "$dir/e$rate.csv" --db "$db" >/dev/null
    grep -v '^#' "$dir/s$rate.csv" | cut -d, -f2- >"$dir/a"
    grep -v '^#' "$dir/e$rate.csv" | cut -d, -f2- >"$dir/b"
    awk -F, 'NR == FNR { v[FNR] = $0; next }
             FNR > 1 { split(v[FNR], w, ","); if (w[1] + 0 != $1 + 0 || w[2] + 0 != $2 + 0) exit 1 }' \
        "$dir/a" "$dir/b" || fail "$rate Hz: stored volts differ from the file's"
    $bin import "$dir/e$rate.csv" --db "$db" >"$dir/out" 2>"$dir/err" ||
        fail "$rate Hz: the export refused by import: $(cat "$dir/err")"
    $bin export "$(run_of "$dir/out")" --csv "$dir/f$rate.csv" --db "$db" >/dev/null
    grep -v '^#' "$dir/e$rate.csv" >"$dir/a"
    grep -v '^#' "$dir/f$rate.csv" >"$dir/b"
    cmp -s "$dir/a" "$dir/b" || fail "$rate Hz: export -> import -> export changed the samples"
done
# 10 kHz as before: four decimals
$bin sim $model --csv "$dir/s10k.csv" >/dev/null
sed -n 5p "$dir/s10k.csv" | grep -qx '0.0001,[-0-9.]*,[-0-9.]*' ||
    fail "10 kHz rows changed: $(sed -n 5p "$dir/s10k.csv")"

# D9: the 10 kHz file with CR, CRLF and mixed line ends stores the same run.
$bin import "$dir/s10k.csv" --db "$db" >"$dir/out"
lf=$(run_of "$dir/out")
$bin export "$lf" --csv "$dir/lf.out.csv" --db "$db" >/dev/null
tr '\n' '\r' <"$dir/s10k.csv" >"$dir/cr.csv"
sed 's/$/\r/' "$dir/s10k.csv" >"$dir/crlf.csv"
awk '{ printf "%s%s", $0, (NR % 3 == 0 ? "\r" : NR % 3 == 1 ? "\r\n" : "\n") }' \
    "$dir/s10k.csv" >"$dir/mixed.csv"
for kind in cr crlf mixed; do
    $bin import "$dir/$kind.csv" --db "$db" >"$dir/out" 2>"$dir/err" ||
        fail "$kind line ends: $(cat "$dir/err")"
    id=$(run_of "$dir/out")
    [ "$(show "$id" frames)" = "$(show "$lf" frames)" ] ||
        fail "$kind: $(show "$id" frames) frames, LF $(show "$lf" frames)"
    $bin export "$id" --csv "$dir/$kind.out.csv" --db "$db" >/dev/null
    grep -v '^#' "$dir/$kind.out.csv" >"$dir/a"
    grep -v '^#' "$dir/lf.out.csv" >"$dir/b"
    cmp -s "$dir/a" "$dir/b" || fail "$kind: samples differ from the LF file's"
done

# Python writes the WAVs below: a float WAV (format 3) by hand, and a
# 100-channel 16-bit one with its wave module.
command -v python3 >/dev/null || fail "python3 is needed"
python3 - "$dir" <<'EOF'
import math, struct, sys, wave
d = sys.argv[1]
n, ch = 5000, 2
data = bytearray()
for k in range(n):
    a, b = 0.1 * math.sin(k / 50), -0.1 * math.sin(k / 50)
    if k in (1234, 1300): b = float('nan')
    if k == 4000: a = float('inf')
    data += struct.pack('<2f', a, b)
fmt = struct.pack('<HHIIHH', 3, ch, 10000, 10000 * 4 * ch, 4 * ch, 32)
body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt \
    + b'data' + struct.pack('<I', len(data)) + bytes(data)
open(d + '/nan.wav', 'wb').write(b'RIFF' + struct.pack('<I', len(body)) + body)
w = wave.open(d + '/wide.wav', 'wb')
w.setnchannels(100); w.setsampwidth(2); w.setframerate(10000)
w.writeframes(b''.join(struct.pack('<100h', *[(k * 7 + c * 311) % 30000 - 15000
                                               for c in range(100)])
                       for k in range(3000)))
w.close()
EOF

# D7: NaN and Inf refused, named; nothing stored.
runs=$($bin run list --db "$db" | tail -n +2 | wc -l)
if $bin import "$dir/nan.wav" --full-scale-v 1 $beams --db "$db" >/dev/null 2>"$dir/err"; then
    fail "a WAV with NaN was imported"
fi
grep -qF "$dir/nan.wav: file channel 1 (LDV 2) holds NaN at frame 1234, the first of 3 NaN or infinite samples" "$dir/err" ||
    fail "NaN WAV: $(cat "$dir/err")"
[ "$($bin run list --db "$db" | tail -n +2 | wc -l)" = "$runs" ] || fail "the NaN WAV stored a run"

# D8: 100 channels, two picked.
$bin import "$dir/wide.wav" --channels 98,1 --full-scale-v 10 $beams --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "100-channel WAV with --channels 98,1: $(cat "$dir/err")"
[ "$(show "$(run_of "$dir/out")" frames)" = 3000 ] || fail "100-channel WAV: frames"

# Issue 30: a plain WAV names all it lacks at once.
python3 - "$dir" <<'EOF'
import struct, sys, wave
w = wave.open(sys.argv[1] + '/plain.wav', 'wb')
w.setnchannels(2); w.setsampwidth(2); w.setframerate(10000)
w.writeframes(b''.join(struct.pack('<2h', k % 100, -(k % 77)) for k in range(2000)))
w.close()
EOF
if $bin import "$dir/plain.wav" --db "$db" >/dev/null 2>"$dir/err"; then
    fail "a plain WAV was imported without options"
fi
grep -qF "plain.wav: the file does not say, so give --full-scale-v V (the DAQ range, e.g. 10), --h1 M, --sign1 +-1, --h2 M, --sign2 +-1, --ldv-scale MPS_PER_V" "$dir/err" ||
    fail "plain WAV: $(cat "$dir/err")"
$bin import "$dir/plain.wav" --full-scale-v 10 $beams --db "$db" >/dev/null 2>"$dir/err" ||
    fail "plain WAV with every option named: $(cat "$dir/err")"

# ... and sim names every missing model option at once.
if $bin sim --wav "$dir/x.wav" --a0 0.015 >/dev/null 2>"$dir/err"; then
    fail "sim without a model ran"
fi
grep -qF "missing options --N, --beta-deg, --mu-s (or give --prism and --ramp), --lambda0-deg, --h1, --h2" "$dir/err" ||
    fail "sim: $(cat "$dir/err")"

# ... and a CSV whose time column is 'time' is pointed at --time-column.
grep -v '^#' "$dir/s10k.csv" | sed '1s/^t_s/time/' >"$dir/time.csv"
if $bin import "$dir/time.csv" $beams --db "$db" >/dev/null 2>"$dir/err"; then
    fail "a CSV with an unknown rate was imported"
fi
grep -qF "column 'time' looks like the time" "$dir/err" && grep -qF -- "--time-column 'time'" "$dir/err" ||
    fail "time column: $(cat "$dir/err")"
$bin import "$dir/time.csv" --time-column time $beams --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "time column stated: $(cat "$dir/err")"
[ "$(show "$(run_of "$dir/out")" sample_rate)" = 10000 ] || fail "time column stated: rate"

echo "import_edges_test: sim --csv at 20 and 50 kHz imported exactly; CR, CRLF and mixed line ends as LF; NaN WAV refused with channel, frame and count; 100-channel WAV with --channels; every missing option named at once (WAV, sim); --time-column hinted"
