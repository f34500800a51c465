#!/bin/sh
# tests/acquire/manifest_resume_test.sh - `import --manifest` run again
# after it was cut short (issue 31 D2): files stored already are passed
# over, one line each on stderr naming the file and its run, and the rest
# imported; --force with --manifest imports every file again.  Before, the
# second run stopped at the first stored file and --force was ignored.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "manifest_resume_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
# a manifest of four rows; the second and third imported beforehand, as
# by a first run killed after them (the order does not matter)
m=$dir/m.csv
sed -n '/^file,/p' fixtures/runs/manifest.csv >"$m"
grep '^fig8-' fixtures/runs/manifest.csv | head -4 |
    sed "s|^|$PWD/fixtures/runs/|" >>"$m"
[ "$(wc -l <"$m")" -eq 5 ] || fail "the manifest: $(cat "$m")"
sed -n '1p;3,4p' "$m" >"$dir/first.csv"
$bin import --manifest "$dir/first.csv" --db "$db" >/dev/null || fail "first part"
f2=$(sed -n 3p "$m" | cut -d, -f1); f3=$(sed -n 4p "$m" | cut -d, -f1)
$bin import --manifest "$m" --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "the resumed manifest failed: $(cat "$dir/err")"
grep -qx "prismlab import: $f2 is stored already as run 1: skipped (--force imports it again)" "$dir/err" ||
    fail "no skip line for $f2: $(cat "$dir/err")"
grep -qx "prismlab import: $f3 is stored already as run 2: skipped (--force imports it again)" "$dir/err" ||
    fail "no skip line for $f3: $(cat "$dir/err")"
[ "$(grep -c 'stored already' "$dir/err")" -eq 2 ] || fail "skip lines: $(cat "$dir/err")"
[ "$(grep -c '^run=' "$dir/out")" -eq 2 ] || fail "imported lines: $(cat "$dir/out")"
grep -q "^imported 2 runs from $m into $db (2 stored already, skipped)$" "$dir/out" ||
    fail "summary: $(cat "$dir/out")"
# every file once
[ "$(sqlite3 "$db" 'SELECT count(*), count(DISTINCT source_sha256) FROM run')" = "4|4" ] ||
    fail "runs: $(sqlite3 "$db" 'SELECT id, source_detail FROM run')"
# all stored: nothing to do, still success
$bin import --manifest "$m" --db "$db" >"$dir/out" 2>"$dir/err" || fail "third run: $(cat "$dir/err")"
[ "$(grep -c 'stored already' "$dir/err")" -eq 4 ] || fail "third run: $(cat "$dir/err")"
# --force: each file again
$bin import --manifest "$m" --force --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "--force: $(cat "$dir/err")"
[ "$(grep -c '^run=' "$dir/out")" -eq 4 ] || fail "--force imported: $(cat "$dir/out")"
# what --force says: each file's run holds the samples of its first import
[ "$(grep -vc 'holds the same samples as run' "$dir/err")" = 0 ] &&
    [ "$(grep -c 'holds the same samples as run' "$dir/err")" = 4 ] ||
    fail "--force said: $(cat "$dir/err")"
[ "$(sqlite3 "$db" 'SELECT count(*), count(DISTINCT source_sha256) FROM run')" = "8|4" ] ||
    fail "after --force: $(sqlite3 "$db" 'SELECT count(*) FROM run')"
$bin db check --db "$db" >/dev/null || fail "db check"
echo "manifest_resume_test: stored files passed over, named with their run; --force imports again"
