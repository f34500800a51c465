#!/bin/sh
# tests/cli/physics_checks_test.sh - a run the physics rules out is refused
# with the figure and its likely cause, never stored as good (issue 44,
# docs/process.md "Checked against the physics"), on a fixture run
# (steel-30 on glass-0.3702) with the notebook errors a lab makes:
#  1. the LDV scale 100 times too large (a CSV in mV read as V): refused
#     by the speed check within 2 s and 300 MB of address space (before
#     it, the impact search took 24 GB);
#  2. the scale 10 times off: refused, the factor named;
#  3. the prism labelled steel-22: "is the prism 30-edged", not measured;
#  4. the heights swapped and then the signs flipped, as a hasty user
#     might: the prism would turn backwards: refused, never good;
#  5. the run as recorded: good, and its lattice figures in the record;
#  6. 15 ms of frames cut from the WAV at 4 s (a dropped buffer in a file
#     with no time column): the lattice's phase jump named, about 15 ms
#     missing, degraded, not good;
#  7. the same recording twice over in one file (a logger left running
#     through a second release): the first measured, the second named.
set -eu
bin=$(cd "$(dirname "${PRISMLAB_BIN:-bin/prismlab}")" && pwd)/$(basename "${PRISMLAB_BIN:-bin/prismlab}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "physics_checks_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig8-steel-30.wav --db "$db" --prism steel-30 --ramp glass-0.3702 \
    --experiment t --h1 0.0199 --h2 0.0116 --ldv-scale 0.025 --sign1 1 --sign2 -1 \
    --full-scale-v 10 --lambda0-deg 5.322 >/dev/null
quality() { $bin run list --json --db "$db" | tr '{' '\n' | sed -n 's/.*"quality": *"\([a-z]*\)".*/\1/p'; }
refused() {   # $1 what, $2 text the refusal must hold
    if $bin process 1 --db "$db" >/dev/null 2>"$dir/err"; then
        fail "$1: processed: $(cat "$dir/out" 2>/dev/null)"
    fi
    grep -q "$2" "$dir/err" || fail "$1: the refusal does not say '$2': $(cat "$dir/err")"
    [ "$(quality)" = refused ] || fail "$1: quality '$(quality)', expected refused"
}

# 1.
$bin run set 1 --ldv-scale 2.5 --db "$db" >/dev/null
t0=$(date +%s%N)
( ulimit -v 307200; $bin process 1 --db "$db" ) >/dev/null 2>"$dir/err" && fail "1: processed"
t1=$(date +%s%N)
grep -q "can reach" "$dir/err" || fail "1: not the speed check: $(cat "$dir/err")"
grep -q "about [0-9.]*x too fast" "$dir/err" || fail "1: no factor: $(cat "$dir/err")"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -lt 2000 ] || fail "1: refused after $ms ms"
[ "$(quality)" = refused ] || fail "1: quality '$(quality)'"

# 2.
$bin run set 1 --ldv-scale 0.25 --db "$db" >/dev/null
refused 2 "about 2.7x too fast"

# 3.
$bin run set 1 --ldv-scale 0.025 --prism steel-22 --lambda0-deg 3 --db "$db" >/dev/null
refused 3 "is the prism 30-edged, not 22"
grep -q "2 pi/30.0 apart" "$dir/err" || fail "3: no spacing: $(cat "$dir/err")"

# 4.
$bin run set 1 --prism steel-30 --lambda0-deg 5.322 --h1 0.0116 --h2 0.0199 \
    --sign1 -1 --sign2 1 --db "$db" >/dev/null
if $bin process 1 --db "$db" >/dev/null 2>"$dir/err"; then
    [ "$(quality)" != good ] || fail "4: swapped heights and signs stored as good"
fi

# 5.
$bin run set 1 --h1 0.0199 --h2 0.0116 --sign1 1 --sign2 -1 --db "$db" >/dev/null
$bin process 1 --db "$db" >/dev/null 2>&1 || fail "5: the run as recorded refused"
[ "$(quality)" = good ] || fail "5: quality '$(quality)'"
sqlite3 "$db" "SELECT params FROM processing" | grep -q "^step_spacing_slots=1.00" ||
    fail "5: no lattice spacing in the record"

# 6.
python3 - "$dir/cut.wav" <<'PY'
import sys, wave
r = wave.open("fixtures/runs/fig8-steel-30.wav", "rb"); p = r.getparams()
f = r.readframes(p.nframes); r.close()
b = p.sampwidth * p.nchannels
w = wave.open(sys.argv[1], "wb"); w.setparams(p)
w.writeframes(f[:40000 * b] + f[40150 * b:]); w.close()
PY
$bin import "$dir/cut.wav" --db "$db" --prism steel-30 --ramp glass-0.3702 --experiment t \
    --h1 0.0199 --h2 0.0116 --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10 \
    --lambda0-deg 5.322 >/dev/null
$bin process 2 --db "$db" >/dev/null 2>&1 || fail "6: refused"
$bin run show 2 --db "$db" >"$dir/show"
grep -q "^quality: *degraded" "$dir/show" || fail "6: $(grep quality "$dir/show")"
grep -q "lattice jumps by .* before 4.0[0-9]* s .*about 0.01[45][0-9]* s of samples missing" \
    "$dir/show" || fail "6: no jump named: $(cat "$dir/show")"

# 7.
python3 - "$dir/twice.wav" <<'PY'
import sys, wave
r = wave.open("fixtures/runs/fig8-steel-30.wav", "rb"); p = r.getparams()
f = r.readframes(p.nframes); r.close()
w = wave.open(sys.argv[1], "wb"); w.setparams(p); w.writeframes(f + f); w.close()
PY
$bin import "$dir/twice.wav" --db "$db" --prism steel-30 --ramp glass-0.3702 --experiment t \
    --h1 0.0199 --h2 0.0116 --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10 \
    --lambda0-deg 5.322 >/dev/null
$bin process 3 --db "$db" >"$dir/out" 2>&1 || fail "7: refused: $(cat "$dir/out")"
grep -q "impacts=207 " "$dir/out" || fail "7: the first release not measured: $(cat "$dir/out")"
$bin run show 3 --db "$db" >"$dir/show"
grep -q "^quality: *degraded" "$dir/show" || fail "7: $(grep quality "$dir/show")"
grep -q "the prism rolls again from 9.1[0-9]* s" "$dir/show" || fail "7: not named: $(cat "$dir/show")"
echo "physics_checks_test: ok (the 100x scale refused in $ms ms)"
