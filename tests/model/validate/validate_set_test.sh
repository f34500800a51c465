#!/bin/sh
# tests/model/validate/validate_set_test.sh - a run's validations are
# stored together (issue 31 D1): when storing one of the four (line and
# plastic, recorded and fitted) fails, none of the new ones is stored and
# the run keeps its earlier four whole, the same rows and simulations.
# The failure is made by a trigger that aborts the insert of the last
# (plastic, fitted) row, as a kill or a full disk would cut the set
# short; before, each was its own transaction and three of the four were
# replaced.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "validate_set_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig6-steel-22.wav --db "$db" >/dev/null
$bin process 1 --db "$db" >/dev/null 2>&1
$bin validate 1 --db "$db" >"$dir/out1" || fail "first validate: $(cat "$dir/out1")"
[ "$(grep -c '^run=1 ' "$dir/out1")" -eq 4 ] || fail "first validate printed: $(cat "$dir/out1")"
rows() { sqlite3 "$db" "SELECT v.rowid, v.law, v.fit, v.simulation_id, v.created_utc, s.id
                        FROM validation v JOIN simulation s ON s.id = v.simulation_id
                        WHERE v.run_id = 1 ORDER BY v.law, v.fit"; }
before=$(rows)
[ "$(echo "$before" | wc -l)" -eq 4 ] || fail "4 validations expected: $before"
# one stamp for the set
[ "$(sqlite3 "$db" 'SELECT count(DISTINCT created_utc) FROM validation WHERE run_id = 1')" -eq 1 ] ||
    fail "the set has more than one stamp"
sqlite3 "$db" "CREATE TRIGGER cut AFTER INSERT ON validation
               WHEN NEW.law = 'plastic' AND NEW.fit = 'fitted'
               BEGIN SELECT RAISE(ABORT, 'cut short by the test'); END"
sleep 1.1   # a new set would have a new stamp
set +e
$bin validate 1 --db "$db" >"$dir/out2" 2>"$dir/err2"
rc=$?
set -e
[ $rc -eq 2 ] || fail "validate with the last insert failing: exit $rc, $(cat "$dir/err2")"
[ "$(rows)" = "$before" ] || fail "the earlier validations changed: $(rows) (before: $before)"
grep -q 'run 1: storing its 4 validations: .*cut short by the test' "$dir/err2" ||
    fail "the error does not name the run and the cause: $(cat "$dir/err2")"
[ ! -s "$dir/out2" ] || fail "printed results it did not store: $(cat "$dir/out2")"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM simulation WHERE run_id = 1')" -eq 4 ] ||
    fail "simulations left over: $(sqlite3 "$db" 'SELECT count(*) FROM simulation')"
$bin db check --db "$db" >/dev/null || fail "db check"
sqlite3 "$db" "DROP TRIGGER cut"
$bin validate 1 --db "$db" >/dev/null || fail "validate after the trigger went"
[ "$(rows)" != "$before" ] || fail "the new set was not stored"
[ "$(sqlite3 "$db" 'SELECT count(DISTINCT created_utc) || count(*) FROM validation WHERE run_id = 1')" = 14 ] ||
    fail "the new set: one stamp, four rows expected"
echo "validate_set_test: a failed store keeps the earlier set whole; a new set is one stamp"
