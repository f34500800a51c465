#!/bin/sh
# tests/acquire/legacy_partial_test.sh - an unfinished import an earlier
# prismlab left (a 'wav' run still 'recording' after a SIGKILL, or
# 'interrupted' after a recorder marked it, as issue 21 found in 29 of 36
# kills) is named by a reader and removed by the next command that opens
# the store to write, which says so on stderr naming the run; the file
# then imports again without --force; a live recorder's run ('sim',
# 'recording') is left alone, and so is every finished run.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/t.db
fail() { echo "legacy_partial_test: $*" >&2; exit 1; }

sh tests/util/catalogdb.sh "$bin" "$db"
for f in fig6-steel-22 fig6-steel-30 fig6-steel-38 fig7-steel-24; do
    $bin import "fixtures/runs/$f.wav" --db "$db" >/dev/null
done
run1=$(sqlite3 "$db" 'SELECT hex(data) FROM chunk WHERE run_id = 1 ORDER BY first_frame' | sha256sum)
full2=$(sqlite3 "$db" 'SELECT n_frames FROM run WHERE id = 2')
# What the old importer left: run 2 killed mid-way (its last chunks never
# written), run 3 killed and then marked by a recorder; run 4 stands for
# a live recording in progress.
sqlite3 "$db" "UPDATE run SET state = 'recording' WHERE id = 2;
               DELETE FROM chunk WHERE run_id = 2 AND first_frame > 0;
               UPDATE run SET n_frames = (SELECT sum(n_frames) FROM chunk WHERE run_id = 2) WHERE id = 2;
               UPDATE run SET state = 'interrupted' WHERE id = 3;
               UPDATE run SET state = 'recording', source_kind = 'sim' WHERE id = 4;"
part=$(sqlite3 "$db" 'SELECT n_frames FROM run WHERE id = 2')
[ "$part" -lt "$full2" ] || fail "run 2 is not partial: $part of $full2 frames"

# a reader names them and leaves them
$bin run list --db "$db" >"$dir/out" 2>"$dir/err" || fail "run list: $(cat "$dir/err")"
grep -q "^prismlab: database '$db': run 2 (recording of wav 'fixtures/runs/fig6-steel-30.wav', $part frames stored) is an import left unfinished by a killed or failed prismlab: the next command that writes to the database removes it$" "$dir/err" ||
    fail "run list: no line for run 2: $(cat "$dir/err")"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM run')" -eq 4 ] || fail "a reader removed a run"

# the next writer (here: importing the file again, without --force)
# removes them, a line each
$bin import fixtures/runs/fig6-steel-30.wav --db "$db" >/dev/null 2>"$dir/err" ||
    fail "re-import refused: $(cat "$dir/err")"
grep -q "^prismlab: database '$db': removed run 2 (recording of wav 'fixtures/runs/fig6-steel-30.wav', $part frames stored): an import left unfinished by a killed or failed prismlab$" "$dir/err" ||
    fail "no line for run 2: $(cat "$dir/err")"
grep -q "removed run 3 (interrupted of wav 'fixtures/runs/fig6-steel-38.wav'," "$dir/err" ||
    fail "no line for run 3: $(cat "$dir/err")"
[ "$(wc -l <"$dir/err")" -eq 2 ] || fail "more than two lines: $(cat "$dir/err")"
[ "$(sqlite3 "$db" 'SELECT group_concat(id) FROM run ORDER BY id')" = "1,4,5" ] ||
    fail "runs left: $(sqlite3 "$db" 'SELECT group_concat(id) FROM run')"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM chunk WHERE run_id IN (2, 3); SELECT count(*) FROM channel WHERE run_id IN (2, 3)')" = "0
0" ] || fail "chunks or channels of runs 2, 3 left"
[ "$(sqlite3 "$db" 'SELECT state FROM run WHERE id = 4')" = recording ] || fail "the live run was touched"
[ "$(sqlite3 "$db" "SELECT state || ' ' || n_frames FROM run WHERE id = 5")" = "imported $full2" ] ||
    fail "run 5 is not the whole file"
[ "$(sqlite3 "$db" 'SELECT hex(data) FROM chunk WHERE run_id = 1 ORDER BY first_frame' | sha256sum)" = "$run1" ] ||
    fail "run 1's bytes changed"
$bin db check --db "$db" >/dev/null 2>"$dir/err" || fail "db check: $(cat "$dir/err")"
[ ! -s "$dir/err" ] || fail "a later command found something again: $(cat "$dir/err")"
$bin import fixtures/runs/fig6-steel-38.wav --db "$db" >/dev/null 2>"$dir/err" ||
    fail "re-import refused: $(cat "$dir/err")"
echo "legacy_partial_test: 2 unfinished imports named by a reader, removed by the next writer with a line each; the live run and run 1 intact; both files imported again"
