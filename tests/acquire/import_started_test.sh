#!/bin/sh
# tests/acquire/import_started_test.sh - an imported run's "started" is
# when it was recorded, not when it was imported (issue 45), and the run
# says where the time comes from:
#   - a WAV's BWF origination date and time (bext chunk): started_from bwf;
#   - a WAV's LIST INFO creation date with a time (ICRD): riff;
#   - a CSV's metadata line, started_utc= with a zone: metadata, in UTC;
#   - a file that says nothing: its modification time less its length
#     (mtime);
# each with imported_utc (the import's time, today) and ended_utc the
# recording's end (started + its length); run show --json carries both,
# and an export's metadata line carries the start back to an import.
# Before issue 45 started_utc was the import's time for every one.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "import_started_test: $*" >&2; exit 1; }
db=$dir/t.db
$bin db init --db "$db" >/dev/null
model="--N 30 --a0 0.015 --beta-deg 0.4 --mu-s 0.12 --lambda0-deg 5.3 --h1 0.02 --h2 0.01 --ramp-length 0.05"
$bin sim $model --wav "$dir/s.wav" >/dev/null   # 27488 frames at 10 kHz: 2.749 s
$bin sim $model --csv "$dir/s.csv" >/dev/null
# A copy of a WAV with one chunk more after 'fmt ': bext (BWF) or LIST INFO ICRD.
cat >"$dir/chunk.py" <<'PY'
import struct, sys
src, dst, kind, text = sys.argv[1:5]
d = open(src, 'rb').read()
if kind == 'bext':
    date, time = text.split('T')
    body = (b'\0' * 320 + date.encode().ljust(10, b'\0') + time.encode().ljust(8, b'\0')
            + struct.pack('<QH', 0, 1) + b'\0' * 254)
    chunk = b'bext' + struct.pack('<I', len(body)) + body
else:
    t = text.encode() + b'\0'
    sub = b'ICRD' + struct.pack('<I', len(t)) + t + b'\0' * (len(t) & 1)
    chunk = b'LIST' + struct.pack('<I', 4 + len(sub)) + b'INFO' + sub
i = 12
while d[i:i + 4] != b'fmt ':
    i += 8 + struct.unpack('<I', d[i + 4:i + 8])[0]
i += 8 + struct.unpack('<I', d[i + 4:i + 8])[0]
out = d[:i] + chunk + d[i:]
open(dst, 'wb').write(out[:4] + struct.pack('<I', len(out) - 8) + out[8:])
PY
python3 "$dir/chunk.py" "$dir/s.wav" "$dir/bwf.wav" bext 2023-03-04T05:06:07
python3 "$dir/chunk.py" "$dir/s.wav" "$dir/icrd.wav" icrd "2022-02-02 12:34:56"
sed '1s/$/ started_utc=2024-05-01T10:00:00+02:00/' "$dir/s.csv" >"$dir/meta.csv"
cp "$dir/s.wav" "$dir/plain.wav"
touch -d '2021-01-01 00:00:30 UTC' "$dir/plain.wav"
today=$(date -u +%Y-%m-%d)

check() {   # $1 file, $2 started_utc, $3 started_from's first words, $4 ended_utc
    $bin import "$dir/$1" --force --db "$db" >"$dir/out" 2>/dev/null || fail "$1 refused"
    id=$(sed -n 's/^run=\([0-9]*\) .*/\1/p' "$dir/out")
    $bin run show "$id" --db "$db" >"$dir/show"
    grep -qx "started_utc:    $2" "$dir/show" || fail "$1: $(grep '^started_utc' "$dir/show"), expected $2"
    grep -q "^started_from:   $3" "$dir/show" || fail "$1: $(grep '^started_from' "$dir/show")"
    grep -qx "ended_utc:      $4" "$dir/show" || fail "$1: $(grep '^ended_utc' "$dir/show"), expected $4"
    grep -q "^imported_utc:   ${today}T" "$dir/show" || fail "$1: $(grep '^imported_utc' "$dir/show")"
}
check bwf.wav 2023-03-04T05:06:07Z "the WAV's broadcast extension" 2023-03-04T05:06:10Z
check icrd.wav 2022-02-02T12:34:56Z "the WAV's creation date (LIST INFO ICRD)" 2022-02-02T12:34:59Z
check meta.csv 2024-05-01T08:00:00Z "the file's prismlab metadata" 2024-05-01T08:00:03Z
check plain.wav 2021-01-01T00:00:27Z "the file's modification time less the recording's length" \
    2021-01-01T00:00:30Z
$bin run show "$id" --json --db "$db" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["started_utc"] == "2021-01-01T00:00:27Z" and r["started_from"] == "mtime", r
assert r["imported_utc"].startswith(sys.argv[1]), r' "$today" || fail "run show --json"
# an export carries the start (started_utc=), and imports back with it
bwf=$($bin run list --db "$db" | awk '$NF ~ /bwf.wav$/ { print $1; exit }')
$bin export "$bwf" --csv "$dir/back.csv" --db "$db" >/dev/null
head -1 "$dir/back.csv" | grep -q ' started_utc=2023-03-04T05:06:07Z' ||
    fail "the export's metadata: $(head -1 "$dir/back.csv")"
check back.csv 2023-03-04T05:06:07Z "the file's prismlab metadata" 2023-03-04T05:06:10Z
# a start the metadata gets wrong is named, not stored
sed '1s/$/ started_utc=yesterday/' "$dir/s.csv" >"$dir/bad.csv"
if $bin import "$dir/bad.csv" --db "$db" 2>"$dir/err"; then fail "started_utc=yesterday accepted"; fi
grep -q "bad.csv:1: metadata: started_utc='yesterday': expected a date and time, YYYY-MM-DDTHH:MM:SSZ" "$dir/err" ||
    fail "started_utc=yesterday: $(cat "$dir/err")"
echo "import_started_test: ok"
