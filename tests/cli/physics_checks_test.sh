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
#  5. the run as recorded: good, and its lattice figures in the record.
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
echo "physics_checks_test: ok (the 100x scale refused in $ms ms)"
