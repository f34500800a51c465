#!/bin/sh
# tests/acquire/daemon_test.sh - the recording daemon driven over its
# socket, with the rig simulator delivering in real time as the card would:
# arm catches the release with its pre-trigger frames, a run ends after
# its duration, start/stop record by hand, a second daemon on the same
# database is refused, SIGTERM during a run closes it cleanly.
name=daemon_test
. tests/util/daemon.sh
{
    sh tests/util/simrig.sh "$db"
    echo "[run]"
    echo "prism = steel-38"
    echo "ramp = glass-0.4079"
    echo "experiment = rehearsal"
    echo "lambda0_deg = 4.5"
    echo "duration_s = 3"
    echo "[sim]"
    echo "seed = 2"     # a speckle drop-out in its lead-in: a spike is no motion
    echo "paced = 1"
} >"$dir/rig.ini"
ctl() { $bin acquire "$1" --config "$dir/rig.ini"; }

$bin acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
pid=$!
i=0
while [ ! -S "$db.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ctl status | grep -q '^ok state=idle' || fail "status when idle"

# a second daemon on the same database is refused
if $bin acquire daemon --config "$dir/rig.ini" --socket "$dir/other.sock" 2>"$dir/err2"; then
    fail "a second daemon was allowed"
fi
grep -q 'another recorder' "$dir/err2" || fail "second daemon: $(cat "$dir/err2")"

# arm: the simulated prism is released 1 s after the source opens
ctl arm | grep -q '^ok armed' || fail "arm"
if ctl arm >"$dir/out"; then fail "arm twice was accepted"; fi
grep -q '^error already' "$dir/out" || fail "arm twice: $(cat "$dir/out")"
i=0
until grep -q 'run 1: ended (duration)' "$dir/log"; do
    sleep 0.2
    i=$((i + 1))
    [ $i -lt 60 ] || fail "the armed run did not end"
done
show=$($bin run show 1 --db "$db")
echo "$show" | grep -q '^state: *complete' || fail "run 1 state"
echo "$show" | grep -q '^frames: *30000 ' || fail "run 1: $(echo "$show" | grep frames)"
echo "$show" | grep -q '^pretrigger: *5001 frames' || fail "run 1: $(echo "$show" | grep pretrigger)"
$bin process 1 --db "$db" >/dev/null 2>&1 || fail "processing run 1"
rel=$($bin run show 1 --db "$db" | sed -n 's/^window: *\([0-9.]*\) .*/\1/p')
echo "$rel" | awk '{ exit !($1 > 0.2 && $1 < 0.5) }' ||
    fail "the release is at $rel s in the run, expected inside the 0.5 s pre-trigger"

# start / stop by hand; the run must not end at the speckle spike followed
# by stillness before the release
ctl start | grep -q '^ok recording run=2' || fail "start"
sleep 2.5
ctl status | grep -q '^ok state=recording run=2' || fail "status while recording: $(ctl status)"
ctl stop | grep -q '^ok stopped run=2' || fail "stop"

# SIGTERM during a run: closed cleanly
ctl start | grep -q '^ok recording run=3' || fail "start 3"
sleep 0.5
kill -TERM "$pid"
wait "$pid" || fail "daemon exit status after SIGTERM"
pid=
$bin run show 3 --db "$db" | grep -q '^state: *complete' || fail "run 3 after SIGTERM"
[ ! -e "$db.sock" ] || fail "the socket was left behind"
$bin db check --db "$db" >/dev/null || fail "db check"
echo "daemon_test: armed release caught with 5001 pre-trigger frames (release at $rel s in the run), start/stop, SIGTERM clean"
