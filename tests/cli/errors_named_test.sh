#!/bin/sh
# tests/cli/errors_named_test.sh - errors that say what is wrong (issue 31
# D10, D11):
#  1. a failure of `process` names the run ("run 1: ...") even when it is
#     the store's own error (made here by a trigger that refuses a series);
#  2. `db init --db /dev/null` is refused before SQLite opens it, and leaves
#     no /dev/null-journal;
#  3. a foreign SQLite file with a run table is "not a prismlab store",
#     naming the tables it lacks and not the one it has;
#  4. (root, setpriv) another user on the daemon's socket is told
#     "permission denied on SOCKET" and what to do, not that no daemon
#     answers.
set -eu
bin=$(cd "$(dirname "${PRISMLAB_BIN:-bin/prismlab}")" && pwd)/$(basename "${PRISMLAB_BIN:-bin/prismlab}")
dir=$(mktemp -d)
dpid=
cleanup() {
    if [ -n "$dpid" ]; then kill "$dpid" 2>/dev/null || true; wait "$dpid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() { echo "errors_named_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig6-steel-22.wav --db "$db" >/dev/null

# 1.
sqlite3 "$db" "CREATE TRIGGER cut BEFORE INSERT ON series
               BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
if $bin process 1 --db "$db" >/dev/null 2>"$dir/err"; then fail "process passed the trigger"; fi
grep -q '^prismlab process: run 1: .*refused by the test' "$dir/err" ||
    fail "the process error does not name the run: $(grep -v warning "$dir/err")"
sqlite3 "$db" "DROP TRIGGER cut"
echo "errors_named_test: a store error of process names the run"

# 2.
journal=0
[ -e /dev/null-journal ] && journal=1
if $bin db init --db /dev/null >/dev/null 2>"$dir/err"; then fail "db init took /dev/null"; fi
if [ $journal -eq 0 ] && [ -e /dev/null-journal ]; then
    rm -f /dev/null-journal
    fail "db init --db /dev/null left /dev/null-journal"
fi
grep -q "database '/dev/null' is not a regular file" "$dir/err" || fail "/dev/null: $(cat "$dir/err")"
echo "errors_named_test: /dev/null refused before SQLite opens it"

# 3.
sqlite3 "$dir/f.db" "CREATE TABLE run (id INTEGER PRIMARY KEY, what TEXT); PRAGMA user_version = 3"
if $bin run list --db "$dir/f.db" >/dev/null 2>"$dir/err"; then fail "a foreign file listed"; fi
grep -q "not a prismlab store (its user_version is 3, but it has no tables prism, ramp, experiment, channel, chunk)" "$dir/err" ||
    fail "foreign file: $(cat "$dir/err")"
sqlite3 "$dir/g.db" "CREATE TABLE run (id INTEGER PRIMARY KEY)"
if $bin run list --db "$dir/g.db" >/dev/null 2>"$dir/err"; then fail "a foreign file listed"; fi
grep -q "not a prismlab store (it has no prismlab schema version (user_version 0) and no tables prism, ramp, experiment, channel, chunk)" "$dir/err" ||
    fail "foreign file without a version: $(cat "$dir/err")"
echo "errors_named_test: a foreign file is named for what it lacks"

# 4.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "errors_named_test: socket part SKIPPED: needs root and setpriv to be another user"
    exit 0
fi
sh tests/util/simrig.sh "$db" >"$dir/rig.ini"
cat >>"$dir/rig.ini" <<EOR
[run]
prism = steel-38
ramp = glass-0.4079
lambda0_deg = 4.5
EOR
sock=$dir/d.sock
$bin acquire daemon --config "$dir/rig.ini" --socket "$sock" 2>"$dir/dlog" &
dpid=$!
k=0
until $bin acquire status --socket "$sock" >/dev/null 2>&1; do
    k=$((k + 1)); [ $k -lt 100 ] || fail "the daemon did not come up: $(cat "$dir/dlog")"
    sleep 0.05
done
chmod 755 "$dir"
as=${RO_USER:-nobody}
if setpriv --reuid="$as" --regid=nogroup --clear-groups "$bin" acquire status --socket "$sock" \
    >/dev/null 2>"$dir/err"; then
    fail "$as used root's socket"
fi
grep -q "permission denied on $sock (owner uid 0, .*mode 660): run the command as the daemon's user" "$dir/err" ||
    fail "another user on the socket: $(cat "$dir/err")"
if grep -q 'no daemon answers' "$dir/err"; then fail "still 'no daemon answers': $(cat "$dir/err")"; fi
echo "errors_named_test: another user on the socket is told permission denied"
