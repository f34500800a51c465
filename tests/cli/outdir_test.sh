#!/bin/sh
# tests/cli/outdir_test.sh - where reports go (issue 30, item 2):
#   - `report -o a/b/E` makes the missing parents, like mkdir -p (the
#     README's own `-o out/E` on a fresh clone);
#   - `report -o -` is refused with a message, and makes no folder "-";
#   - a file in the way of a parent is named in the error, exit != 0.
set -eu
bin=${PRISMLAB_BIN:-$PWD/bin/prismlab}   # absolute: one step runs in a scratch folder
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/r.db
fail() { echo "outdir_test: $*" >&2; exit 1; }

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
exp=$(sqlite3 "$db" "SELECT name FROM experiment LIMIT 1" 2>/dev/null || true)
[ -n "$exp" ] || fail "no experiment in the fixture store"

$bin report --experiment "$exp" --db "$db" -o "$dir/out/deep/E1" >"$dir/log" 2>&1 \
    || fail "report -o out/deep/E1 failed: $(cat "$dir/log")"
[ -f "$dir/out/deep/E1/index.html" ] || fail "no out/deep/E1/index.html"

(cd "$dir" && $bin report --experiment "$exp" --db "$db" -o - >log2 2>&1) \
    && fail "report -o - exited 0"
[ ! -e "$dir/-" ] || fail "report -o - made a folder named '-'"
grep -q "name a folder" "$dir/log2" || fail "report -o -: no clear message: $(cat "$dir/log2")"

: >"$dir/afile"
$bin report --experiment "$exp" --db "$db" -o "$dir/afile/E1" >"$dir/log3" 2>&1 \
    && fail "report -o afile/E1 exited 0"
grep -q "afile" "$dir/log3" || fail "the error does not name the path: $(cat "$dir/log3")"
echo "outdir_test: ok"
