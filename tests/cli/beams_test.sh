#!/bin/sh
# tests/cli/beams_test.sh - the two beams checked against each other, as
# a user meets it (issue 44): a fixture recording whose beam 1 never saw
# the prism (its channel replaced by noise) is measured through beam 2,
# named, and never answered with advice to swap the signs (before: "no
# motion" and that advice; following it stored impacts=0, L_p -26.9 as
# good); heights swapped in the notebook are refused with the heights'
# fix alone (before: a sign fix too, which gave garbage), and a height
# misread is refused with the ratio the data give.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
fail() { echo "beams_test: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
wav=fixtures/runs/fig8-steel-22.wav
# beam 1 (the upper) replaced by the decoder's noise about 0 V
python3 - "$wav" "$dir/dead1.wav" <<'PY'
import array, random, sys, wave
w = wave.open(sys.argv[1]); p = w.getparams()
x = array.array("h", w.readframes(p.nframes))
rnd = random.Random(44)
for i in range(0, len(x), p.nchannels):
    x[i] = int(round(rnd.gauss(0, 3)))
o = wave.open(sys.argv[2], "wb"); o.setparams(p); o.writeframes(x.tobytes()); o.close()
PY
notebook() {   # FILE H1 H2: fig8-steel-22's row of the manifest, heights given
    $bin import "$1" --prism steel-22 --ramp glass-0.3702 --experiment beams --h1 "$2" \
        --h2 "$3" --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10 \
        --lambda0-deg 7.2 --force --db "$db" | sed 's/.*run=\([0-9]*\).*/\1/'
}
id=$(notebook "$dir/dead1.wav" 0.0199 0.0116)
$bin process "$id" --db "$db" >"$dir/out" 2>"$dir/err" || fail "dead beam 1 refused: $(cat "$dir/err")"
grep -q "impacts=152 .*quality=degraded" "$dir/out" || fail "dead beam 1: $(cat "$dir/out")"
grep -q -- "--sign" "$dir/err" && fail "sign advice for a dead beam: $(cat "$dir/err")"
$bin run show "$id" --db "$db" >"$dir/show"
grep -q "beam 1 never saw the prism: .*measured on beam 2 alone" "$dir/show" ||
    fail "dead beam 1 not named: $(cat "$dir/show")"
# heights swapped, signs right: refused with the heights' fix, no sign fix
id=$(notebook "$wav" 0.0116 0.0199)
if $bin process "$id" --db "$db" >/dev/null 2>"$dir/err"; then fail "swapped heights processed"; fi
grep -qF "the heights look swapped; fix with 'prismlab run set $id --h1 0.0199 --h2 0.0116'" \
    "$dir/err" || fail "no heights' fix: $(cat "$dir/err")"
grep -q -- "--sign" "$dir/err" && fail "a sign fix the data contradict: $(cat "$dir/err")"
$bin run show "$id" --db "$db" | grep -q "^quality: *refused" || fail "swapped heights not refused"
$bin run set "$id" --h1 0.0199 --h2 0.0116 --db "$db" >/dev/null
$bin process "$id" --db "$db" | grep -q "impacts=152 .*quality=good" || fail "heights fixed"
# one height misread (h2 5.0 mm for 11.6): the ratio the data give, no sign fix
id=$(notebook "$wav" 0.0199 0.0050)
if $bin process "$id" --db "$db" >/dev/null 2>"$dir/err"; then fail "a wrong h2 processed"; fi
grep -qF "v1/v2 during the motion is 1.72" "$dir/err" || fail "no ratio: $(cat "$dir/err")"
grep -qF "the notebook gives 3.98" "$dir/err" || fail "no notebook ratio: $(cat "$dir/err")"
grep -q -- "--sign" "$dir/err" && fail "a sign fix for a height: $(cat "$dir/err")"
echo "beams_test: ok"
