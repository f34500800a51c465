#!/bin/sh
# tests/acquire/daemon_quit_test.sh - ending the daemon, and what it says
# of a ramp without end (issue 45):
#   - `acquire quit` (with --help) ends the daemon: it returns when the
#     daemon has gone, its socket is removed, and a new daemon takes the
#     database at once;
#   - a second daemon (and `acquire record`) is told to end the first with
#     `prismlab acquire quit --socket PATH`, naming its pid, not to "stop"
#     it (stop ends a run), and says nothing about the rig file first;
#   - [sim] ramp_length_m = 0 is said once, in the daemon's log, as what it
#     is (an endless ramp, not the catalogue's 0.65 m), not as a warning
#     that the catalogue has no length; a ramp the catalogue gives no
#     length is warned about once by `acquire record`.
# Before issue 45: no `acquire quit`, "stop it first: prismlab acquire
# stop", and the no-length warning before every refusal, 0.65 m or not.
name=daemon_quit_test
. tests/util/daemon.sh
{
    sh tests/util/simrig.sh "$db"
    printf '[run]\nprism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\nduration_s = 1\n'
    printf '[sim]\nramp_length_m = 0\n'
} >"$dir/rig.ini"

$bin acquire quit --help >"$dir/help" 2>&1 || fail "acquire quit --help fails: $(cat "$dir/help")"
grep -q 'quit' "$dir/help" || fail "acquire quit --help says nothing of quit"

daemon_start "$dir/rig.ini"
n=$(grep -c 'ramp_length_m' "$dir/log" || true)
[ "$n" = 1 ] || fail "the daemon's log names ramp_length_m $n times"
grep -q "ramp_length_m = 0: the prism rolls on an endless ramp until the recording ends, not on the 0.65 m the catalogue gives ramp 'glass-0.4079'" "$dir/log" ||
    fail "ramp_length_m = 0: $(grep ramp_length_m "$dir/log")"
grep -q 'no length\|warning' "$dir/log" && fail "ramp_length_m = 0 is warned about: $(grep 'length' "$dir/log")"

# a second daemon, and a recording: refused, told how to end the daemon
if $bin acquire daemon --config "$dir/rig.ini" --socket "$dir/other.sock" 2>"$dir/err"; then
    fail "a second daemon was allowed"
fi
grep -q "another recorder holds this database, a daemon (pid $pid): end it first with 'prismlab acquire quit --socket $db.sock'" "$dir/err" ||
    fail "second daemon: $(cat "$dir/err")"
grep -q 'ramp_length\|length' "$dir/err" && fail "second daemon: the rig file's ramp said first: $(cat "$dir/err")"
if $bin acquire record --config "$dir/rig.ini" --duration 0.2 >/dev/null 2>"$dir/err"; then
    fail "a recording was allowed beside the daemon"
fi
grep -q "prismlab acquire quit --socket $db.sock" "$dir/err" || fail "record: $(cat "$dir/err")"
grep -q 'length' "$dir/err" && fail "record: the rig file's ramp said first: $(cat "$dir/err")"

# quit: ok, and the daemon is gone when it returns
$bin acquire quit --config "$dir/rig.ini" >"$dir/out" || fail "acquire quit failed"
grep -q '^ok quitting' "$dir/out" || fail "acquire quit: $(cat "$dir/out")"
[ ! -S "$db.sock" ] || fail "the socket is still there after quit"
wait "$pid" || fail "the daemon's exit status after quit"
pid=
daemon_start "$dir/rig.ini"   # at once: the database is free
$bin acquire quit --socket "$db.sock" >/dev/null || fail "quit by --socket"
wait "$pid" || fail "the second daemon's exit status"
pid=
if $bin acquire quit --socket "$db.sock" 2>"$dir/err"; then fail "quit without a daemon succeeded"; fi
grep -q 'no daemon answers' "$dir/err" || fail "quit without a daemon: $(cat "$dir/err")"

# a ramp the catalogue gives no length: one warning, from the recorder
$bin ramp add flat-nolength --beta-deg 0.4 --mu-s 0.12 --material glass --db "$db" >/dev/null 2>&1
sed -e 's/^ramp = glass-0.4079/ramp = flat-nolength/' -e '/^ramp_length_m/d' "$dir/rig.ini" >"$dir/nolen.ini"
$bin acquire record --config "$dir/nolen.ini" --duration 0.2 >/dev/null 2>"$dir/err" ||
    fail "record on flat-nolength: $(cat "$dir/err")"
n=$(grep -c "warning: ramp 'flat-nolength' has no length in the catalogue" "$dir/err" || true)
[ "$n" = 1 ] || fail "record on flat-nolength: $n warnings: $(cat "$dir/err")"
grep -q "\[sim\] ramp_length_m = M in $dir/nolen.ini" "$dir/err" ||
    fail "the warning does not name the rig file's key: $(cat "$dir/err")"
echo "daemon_quit_test: ok"
