#!/bin/sh
# tests/acquire/refusals_test.sh - bad values refused where they enter,
# each with a message naming the value and the valid range, and nothing
# stored: a release angle no prism has, a beam height of 0, equal beam
# heights, names past 63 characters (once cut silently, so two names could
# become one), a sign of 1.6e32 in a file's metadata (once cast to int:
# undefined behaviour), a symlink loop as --db (once "does not exist");
# and a tiny number (1e-320) is a number, judged by its range.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "refusals_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
wav=fixtures/runs/fig6-steel-22.wav

refused() {   # refused MESSAGE ARGS...: exit status non-zero, MESSAGE on stderr
    msg=$1
    shift
    if "$bin" "$@" >"$dir/out" 2>"$dir/err"; then fail "accepted: $*"; fi
    grep -qF -- "$msg" "$dir/err" || fail "$*: expected '$msg', got: $(cat "$dir/err")"
}
long=$(printf 'n%.0s' $(seq 64))
refused "lambda0 = -90 deg: expected a release angle in (0, 120) deg" \
    import "$wav" --lambda0-deg -90 --db "$db"
refused "beam height h1 = 0 m: expected a height in (0, 10] m" \
    import "$wav" --h1 0 --db "$db"
refused "beam heights h1 = h2 = 0.01 m: the beams must be at different heights" \
    import "$wav" --h1 0.01 --h2 0.01 --db "$db"
refused "experiment name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is 64 characters long: at most 63" \
    import "$wav" --experiment "$long" --db "$db"
refused "prism name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is 64 characters long: at most 63" \
    import "$wav" --prism "$long" --db "$db"
refused "prism name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is 64 characters long: at most 63" \
    prism add "$long" --N 22 --a0 0.015 --length 0.05 --material steel --density 7850 --db "$db"
ln -s loop "$dir/loop"
refused "database '$dir/loop': Too many levels of symbolic links" run list --db "$dir/loop"

# metadata out of range: a CSV whose comment line claims sign=1.6e32
{
    echo "# prismlab rate_hz=1000 ldv_scale=0.025,0.025 sign=155555555555555555555555555555555,-1 h=0.0199,0.0116"
    echo "t_s,a_V,b_V"
    i=0
    while [ $i -lt 50 ]; do echo "$i.0e-3,0.1,0.2"; i=$((i + 1)); done
} >"$dir/sign.csv"
refused "metadata: sign='155555555555555555555555555555555,-1': value 1 is 1.55556e+32, expected +1 or -1" \
    import "$dir/sign.csv" --db "$db"
[ "$($bin run list --db "$db" | wc -l)" -eq 0 ] || fail "a refused import stored a run"

# 1e-320 is a number (an underflow, not garbage): in range, so accepted
$bin import "$wav" --h1 1e-320 --db "$db" >/dev/null 2>"$dir/err" || fail "--h1 1e-320: $(cat "$dir/err")"
echo "refusals_test: 8 bad values refused with their ranges, 1e-320 read as a number"
