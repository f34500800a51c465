#!/bin/sh
# tests/process/decoder_delay_test.sh - the LDV decoders' delay given with
# the run (issue 33, item 2): `import --decoder-delay-s` and a manifest's
# decoder_delay_s column store it with the channels (run show and --json
# read it back to the bit); `process` then takes the two channels' mean by
# default, so that every impact's t_s is the contact: exactly that delay
# before the transition's centre the same file gives without it, nothing
# else changed; the record says where the delay came from.
# `--decoder-delay S` overrides the stored delay, `--decoder-delay 0`
# asks for the centres, and a run with one channel's delay only is
# processed without one (and says so).  rig.ini's [beams] decoder_delay_s
# goes with a run `acquire record` stores; a bad value names the line.
# An export's metadata line carries the delays back into an import.
# The foreign 5 kHz run's decoder
# tracks at f_c = 1500 Hz (its truth's artefacts.track_hz): its delay at
# DC is 1 / (2 pi f_c) (docs/process.md section 4).
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "decoder_delay_test: $*" >&2; exit 1; }
src=fixtures/foreign
db=$dir/d.db

fresh() {
    sh tests/util/catalogdb.sh "$bin" "$1"
}
# JSON value of a run's field, through Python's own parser
json() {  # RUN DB EXPRESSION (on the run's object r)
    $bin run show "$1" --json --db "$2" |
        /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); print(repr($3))"
}
# a processed run's impacts, every column at full precision (the export
# CSV rounds t_s to the microsecond), one line each
impacts() {
    /usr/bin/python3 - "$db" "$1" >"$dir/imp$1.txt" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for row in c.execute("SELECT idx, t_s, omega_minus, omega_plus, ratio, interval_s, "
                     "t_sd_s, ratio_se, confirmed FROM impact WHERE run_id = ? "
                     "ORDER BY idx", (int(sys.argv[2]),)):
    print(' '.join(repr(v) for v in row))
PY
}

track=$(/usr/bin/python3 -c "import json; print(json.load(open('$src/foreign-5k-n24.truth.json'))['artefacts']['track_hz'])")
[ "$track" = 1500 ] || fail "the 5 kHz run's truth: track_hz $track, expected 1500"
D=$(/usr/bin/python3 -c "import math; print(repr(1 / (2 * math.pi * $track)))")
args="--prism aluminium-24 --ramp glass-0.3702 --h1 0.0199 --h2 0.0116 --ldv-scale 0.025
      --sign1 -1 --sign2 1 --full-scale-v 10 --lambda0-deg 5.25"

fresh "$db"
# run 1: as the notebook has it, no delay; run 2: the same file with it
$bin import $src/foreign-5k-n24.wav $args --db "$db" >/dev/null
$bin import $src/foreign-5k-n24.wav $args --decoder-delay-s "$D" --force --db "$db" >/dev/null
# run 3: the two decoders' delays apart
$bin import $src/foreign-5k-n24.wav $args --decoder-delay-s "8e-5,$D" --force --db "$db" >/dev/null

[ "$(json 1 "$db" "[c['decoder_delay_s'] for c in r['channels']]")" = "[None, None]" ] ||
    fail "run 1 has a delay: $(json 1 "$db" "r['channels']")"
[ "$(json 2 "$db" "[c['decoder_delay_s'] for c in r['channels']]")" = "[$D, $D]" ] ||
    fail "run 2's delays: $(json 2 "$db" "[c['decoder_delay_s'] for c in r['channels']]"), expected $D"
[ "$(json 3 "$db" "[c['decoder_delay_s'] for c in r['channels']]")" = "[8e-05, $D]" ] ||
    fail "run 3's delays: $(json 3 "$db" "[c['decoder_delay_s'] for c in r['channels']]")"
$bin run show 1 --db "$db" | grep -qx 'decoder_delay:  not known, not known' ||
    fail "run show 1: $($bin run show 1 --db "$db" | grep decoder)"
$bin run show 2 --db "$db" | grep -qx 'decoder_delay:  0.000106103 s, 0.000106103 s' ||
    fail "run show 2: $($bin run show 2 --db "$db" | grep decoder)"

# bad values are refused, naming the option, and store nothing
for bad in 0 -1e-4 0.2 1e-4, 106us; do
    if $bin import $src/foreign-5k-n24.wav $args --decoder-delay-s "$bad" --force \
        --db "$db" >"$dir/out" 2>&1; then fail "--decoder-delay-s $bad was taken"; fi
    grep -q "option '--decoder-delay-s': " "$dir/out" || fail "--decoder-delay-s $bad: $(cat "$dir/out")"
done
[ "$($bin run list --json --db "$db" | /usr/bin/python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" = 3 ] ||
    fail "a refused import stored a run"

# processed by default: run 2's instants are run 1's less the delay
$bin process 1 2 3 --db "$db" >/dev/null
for r in 1 2 3; do impacts $r; done
check_shift() {  # RUN SHIFT: RUN's t_s = run 1's + SHIFT, every other column the same
    /usr/bin/python3 - "$dir/imp1.txt" "$dir/imp$1.txt" "$2" <<'PY' || fail "run $1's impacts against run 1's, shift $2"
import sys
a = [l.split() for l in open(sys.argv[1])]
b = [l.split() for l in open(sys.argv[2])]
shift = float(sys.argv[3])
assert len(a) == len(b) == 91, (len(a), len(b))
worst = 0
for x, y in zip(a, b):
    d = float(y[1]) - float(x[1])
    worst = max(worst, abs(d - shift))
    assert x[0] == y[0] and x[2:] == y[2:], (x, y)
# t_s + shift in doubles: a few ulps of t_s (< 6 s) off the shift
assert worst <= 1e-14, worst
PY
}
check_shift 2 "-$D"
check_shift 3 "-$(/usr/bin/python3 -c "print(repr((8e-5 + $D) / 2))")"
[ "$(json 1 "$db" "[r['processing'][k] for k in ('impact_t', 'decoder_delay_from', 'decoder_shift_s')]")" = \
  "['centre', 'none', 0]" ] || fail "run 1's record: $(json 1 "$db" "r['processing']")"
[ "$(json 2 "$db" "[r['processing'][k] for k in ('impact_t', 'decoder_delay_from')]")" = \
  "['contact_given_delay', 'channels']" ] || fail "run 2's record: $(json 2 "$db" "r['processing']")"
$bin run show 2 --db "$db" | grep -q '^impact_t:       contact_given_delay (decoder delay from: channels; t_s moved by -0.000106103 s)$' ||
    fail "run show 2: $($bin run show 2 --db "$db" | grep impact_t)"

# an export carries the delays on its metadata line; imported, they come back
$bin export 3 --csv "$dir/run3.csv" --db "$db" >/dev/null
head -n 1 "$dir/run3.csv" | grep -q " decoder_delay_s=8e-05,$D\$" ||
    fail "export's metadata: $(head -n 1 "$dir/run3.csv")"
$bin import "$dir/run3.csv" --db "$db" >/dev/null
[ "$(json 4 "$db" "[c['decoder_delay_s'] for c in r['channels']]")" = "[8e-05, $D]" ] ||
    fail "run 3 exported and imported: $(json 4 "$db" "r['channels']")"
$bin export 1 --csv "$dir/run1.csv" --db "$db" >/dev/null
if head -n 1 "$dir/run1.csv" | grep -q decoder_delay; then
    fail "run 1's export names a delay: $(head -n 1 "$dir/run1.csv")"
fi
sed '1s/$/ decoder_delay_s=0.3/' "$dir/run1.csv" >"$dir/bad1.csv"
if $bin import "$dir/bad1.csv" --db "$db" >"$dir/out" 2>&1; then fail "metadata delay 0.3 s taken"; fi
grep -q "metadata: decoder_delay_s='0.3': value 1 is 0.3 s, expected a delay in (0, 0.1\] s" "$dir/out" ||
    fail "bad metadata: $(cat "$dir/out")"

# --decoder-delay 0: the centres, whatever the channels say
$bin process 2 --decoder-delay 0 --db "$db" >/dev/null
impacts 2
check_shift 2 0
[ "$(json 2 "$db" "[r['processing'][k] for k in ('impact_t', 'decoder_delay_from', 'decoder_shift_s')]")" = \
  "['centre', 'option_centre', 0]" ] || fail "run 2 with 0: $(json 2 "$db" "r['processing']")"
# --decoder-delay S: that one, over the channels' (run 3's mean is not D)
$bin process 3 --decoder-delay "$D" --db "$db" >/dev/null
impacts 3
check_shift 3 "-$D"
[ "$(json 3 "$db" "r['processing']['decoder_delay_from']")" = "'option'" ] ||
    fail "run 3 with the option: $(json 3 "$db" "r['processing']")"

# one channel's delay only: none used, and the record says why
sqlite3 "$db" "UPDATE channel SET decoder_delay_s = NULL WHERE run_id = 2 AND idx = 1"
$bin process 2 --db "$db" >/dev/null
impacts 2
check_shift 2 0
[ "$(json 2 "$db" "[r['processing'][k] for k in ('impact_t', 'decoder_delay_from')]")" = \
  "['centre', 'none_one_channel']" ] || fail "run 2 with one delay: $(json 2 "$db" "r['processing']")"

# rig.ini's key: `acquire record` (and the daemon: the same source spec,
# cmd_acquire.c) stores it with the channels, here from the simulator
rdb=$dir/rig.db
fresh "$rdb"
printf '[daq]\nsource = sim\nrate_hz = 10000\n[beams]\nh1_m = 0.0199\nh2_m = 0.0116\n' >"$dir/rig.ini"
printf 'decoder_delay_s = 72e-6, 5e-5\n[store]\ndb = %s\n[run]\nprism = steel-38\n' "$rdb" >>"$dir/rig.ini"
printf 'ramp = glass-0.4079\nduration_s = 4\n[sim]\nseed = 2\nlambda0_deg = 4.5\n' >>"$dir/rig.ini"
$bin acquire record --config "$dir/rig.ini" >"$dir/out" 2>&1 || fail "acquire record: $(cat "$dir/out")"
[ "$(json 1 "$rdb" "[c['decoder_delay_s'] for c in r['channels']]")" = "[7.2e-05, 5e-05]" ] ||
    fail "recorded run's delays: $(json 1 "$rdb" "r['channels']")"
$bin process 1 --db "$rdb" >/dev/null 2>&1
[ "$(json 1 "$rdb" "[r['processing'][k] for k in ('impact_t', 'decoder_delay_from', 'decoder_shift_s')]")" = \
  "['contact_given_delay', 'channels', -6.1e-05]" ] || fail "recorded run's record: $(json 1 "$rdb" "r['processing']")"
sed -i 's/^decoder_delay_s = .*/decoder_delay_s = 72 us/' "$dir/rig.ini"
if $bin acquire record --config "$dir/rig.ini" >"$dir/out" 2>&1; then fail "rig.ini's '72 us' was taken"; fi
grep -q "rig.ini:7: \[beams\] decoder_delay_s: expected S or S1,S2 (seconds), got '72 us'" "$dir/out" ||
    fail "bad rig.ini: $(cat "$dir/out")"

# the manifest's column: one value for both, two (quoted: the cell holds a
# comma) one each, empty for not known; a bad cell names line and column
# (the notebook's lines end in CR LF: taken off before the column is added)
m=$dir/manifest.csv
awk -v D="$D" '{ sub(/\r$/, "") } NR == 1 { print $0 ",decoder_delay_s"; next }
               /5k-n24/ { print $0 "," D; next }
               /pink/ { print $0 ",\"5.3e-5,5.4e-5\""; next }
               { print $0 "," }' $src/manifest.csv >"$m"
sed -i "s|^foreign-|$PWD/$src/foreign-|" "$m"
db2=$dir/m.db
fresh "$db2"
$bin import --manifest "$m" --db "$db2" >"$dir/out" || fail "manifest: $(cat "$dir/out")"
grep -q '^imported 6 runs' "$dir/out" || fail "manifest: $(tail -1 "$dir/out")"
for r in 1 2 3 4 5 6; do
    file=$(json $r "$db2" "r['source_detail']")
    got=$(json $r "$db2" "[c['decoder_delay_s'] for c in r['channels']]")
    case $file in
    *5k-n24*) want="[$D, $D]" ;;
    *pink*) want="[5.3e-05, 5.4e-05]" ;;
    *) want="[None, None]" ;;
    esac
    [ "$got" = "$want" ] || fail "manifest run $r ($file): $got, expected $want"
done
awk 'NR == 2 { sub(/,"5.3e-5,5.4e-5"$/, ",0.5") } { print }' "$m" >"$dir/bad.csv"
fresh "$dir/b.db"
if $bin import --manifest "$dir/bad.csv" --db "$dir/b.db" >"$dir/out" 2>&1; then
    fail "a manifest delay of 0.5 s was taken"
fi
grep -q "bad.csv:2: column 'decoder_delay_s': '0.5': value 1 is 0.5 s, expected a delay in (0, 0.1\] s" "$dir/out" ||
    fail "bad manifest cell: $(cat "$dir/out")"
echo "decoder_delay_test: ok (delay $D s)"
