#!/bin/sh
# tests/cli/import_lambda0_test.sh - import is no looser than run set
# (issue 45): the release angle and the beam heights are checked against
# the prism and ramp named by one check, so lambda0 = 50 deg for an N = 22
# prism is refused by import (a file, and a manifest's row, naming its
# line) with the very words run set refuses it with, and nothing is
# stored; an angle the prism can have is taken by both.
# Before issue 45 import stored lambda0 = 50 deg for steel-22.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "import_lambda0_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
wav=$PWD/fixtures/runs/fig8-steel-22.wav
beams="--ramp glass-0.3702 --h1 0.0199 --h2 0.0116 --sign1 1 --sign2 -1 --ldv-scale 0.025 --full-scale-v 10"
want="lambda0 = 50 deg: expected a release angle in (0, 8.552) deg for prism 'steel-22' on ramp 'glass-0.3702'"

if $bin import "$wav" --prism steel-22 --lambda0-deg 50 $beams --db "$db" >/dev/null 2>"$dir/err"; then
    fail "import took lambda0 = 50 deg for steel-22"
fi
grep -qF "prismlab import: $wav: $want" "$dir/err" || fail "import: $(cat "$dir/err")"
[ -z "$($bin run list --db "$db" 2>/dev/null | tail -n +2)" ] || fail "the refused import stored a run"

# a manifest's row: the same check, with the row's line
{ sed -n '/^file,/p' fixtures/runs/manifest.csv
  grep '^fig8-steel-22.wav,' fixtures/runs/manifest.csv | sed "s|^|$PWD/fixtures/runs/|; s|,7.2,1\$|,50,1|"
} >"$dir/m.csv"
grep -q ',50,1$' "$dir/m.csv" || fail "the manifest row has no lambda0 of 50: $(cat "$dir/m.csv")"
if $bin import --manifest "$dir/m.csv" --db "$db" >/dev/null 2>"$dir/err"; then
    fail "a manifest row took lambda0 = 50 deg"
fi
grep -qF "$dir/m.csv:2: $wav: $want" "$dir/err" || fail "manifest: $(cat "$dir/err")"

# run set refuses it with the same words; an angle in range is taken by both
$bin import "$wav" --prism steel-22 --lambda0-deg 7.2 $beams --db "$db" >/dev/null 2>&1 ||
    fail "import refused lambda0 = 7.2 deg for steel-22"
if $bin run set 1 --lambda0-deg 50 --db "$db" 2>"$dir/err"; then fail "run set took 50 deg"; fi
grep -qF "run 1: $want" "$dir/err" || fail "run set: $(cat "$dir/err")"
$bin run set 1 --lambda0-deg 7.23 --db "$db" >/dev/null || fail "run set refused 7.23 deg"
# a beam above the prism: refused by both alike
if $bin import "$wav" --prism steel-22 $beams --h1 0.05 --force --db "$db" 2>"$dir/err"; then
    fail "import took h1 = 0.05 m"
fi
grep -qF "beam height h1 = 0.05 m: expected a height in (0, 0.02969) m for prism 'steel-22' on ramp 'glass-0.3702'" "$dir/err" ||
    fail "import h1 0.05: $(cat "$dir/err")"
echo "import_lambda0_test: ok"
