#!/bin/sh
# tests/acquire/daemon_unmarked_test.sh - a disk still full when the
# daemon marks its run (issue 46).  The full disk is a real kernel limit
# on the real daemon: prlimit (util-linux) sets its RLIMIT_FSIZE to the
# WAL's size while run 1 records (the soft limit: lifting it needs no
# privilege), so that no file of the daemon's may grow
# (with SIGXFSZ ignored, as set here and kept across exec, a write past
# the limit fails with EFBIG: SQLite's "disk I/O error"), and lifts it
# later.  No mount: CI may not be allowed one.
#   1. The chunk commit fails, the run stops, and marking it overrun fails
#      too: one log line says so ("could not be marked overrun at frame
#      N: ...; will retry"), status says unmarked=1, the store keeps state
#      'recording' meanwhile; the limit lifted, the mark is stored within
#      seconds (overrun at the frames stored) and logged.
#   2. Run 2 fails the same way and the daemon is killed with its mark
#      unstored; a daemon started on the still full disk starts all the
#      same, says run 2 could not be marked interrupted, and marks it once
#      the limit is lifted.
name=daemon_unmarked_test
. tests/util/daemon.sh
command -v prlimit >/dev/null || fail "prlimit (util-linux) is needed: make deps"
daemon_rig
ctl() { $bin acquire "$1" --config "$dir/rig.ini"; }
# start_daemon [PRLIMIT-OPTION]: the daemon ignoring SIGXFSZ, under the
# file-size limit given, once it answers
start_daemon() {
    prlimit ${1:-"--fsize=unlimited:"} sh -c 'trap "" XFSZ; exec "$0" acquire daemon --config "$1"' \
        "$bin" "$dir/rig.ini" 2>"$dir/log" &
    pid=$!
    daemon_answers "$dir/rig.ini"
}
# fill_disk RUN: once RUN has stored 1 s of frames, no file of the daemon's
# may grow (new frames go at the WAL's end: no checkpoint runs at these
# sizes); then until the run has stopped by itself
fill_disk() {
    daemon_until "$dir/rig.ini" "state=recording run=$1 frames=[1-9][0-9][0-9][0-9][0-9]" 300 \
        "run $1 stored no 10000 frames"
    prlimit --pid "$pid" --fsize="$(stat -c %s "$db-wal"):"
    daemon_until "$dir/rig.ini" 'state=idle' 300 "run $1 went on recording on a full disk"
}
row() { sqlite3 "$db" "SELECT state, coalesce(overrun_frame, 'NULL'), n_frames FROM run WHERE id = $1"; }

# 1
start_daemon
ctl start | grep -q '^ok recording run=1' || fail "start"
fill_disk 1
daemon_wait 'run 1: ended (a commit failed)' 50
grep -q 'run 1: could not be marked overrun at frame [0-9]*: .*; will retry' "$dir/log" ||
    fail "the log does not say that run 1 could not be marked"
frame=$(sed -n 's/.*run 1: could not be marked overrun at frame \([0-9]*\):.*/\1/p' "$dir/log")
st=$(ctl status)
echo "$st" | grep -q 'overruns=1 last_run=1 .* unmarked=1 error=' || fail "status: $st"
[ "$(row 1)" = "recording|NULL|$frame" ] || fail "run 1 before the space: $(row 1), frame $frame"
# the retries (one a second) are silent and change nothing
sleep 2.5
[ "$(grep -c 'could not be marked' "$dir/log")" = 1 ] || fail "the failed mark logged more than once"
[ "$(row 1)" = "recording|NULL|$frame" ] || fail "run 1 changed on a full disk: $(row 1)"
prlimit --pid "$pid" --fsize=unlimited:
daemon_wait "run 1: marked overrun at frame $frame, [0-9]* s after the first try" 100
ctl status | grep -q 'unmarked=none' || fail "status after the mark: $(ctl status)"
chunks=$(sqlite3 "$db" 'SELECT sum(n_frames) FROM chunk WHERE run_id = 1')
[ "$(row 1)" = "overrun|$chunks|$chunks" ] || fail "run 1 after the space: $(row 1), $chunks frames in chunks"

# 2: run 2 fails the same way; the daemon is killed with its mark unstored
ctl start | grep -q '^ok recording run=2' || fail "start 2"
fill_disk 2
daemon_wait 'run 2: could not be marked overrun' 50
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
pid=
# The next daemon's limit is 64 KiB, below both the database and its WAL:
# at its start, the store's first connection closing would otherwise
# checkpoint the WAL into the database and start a new one (prismlab's
# first open of a store) with room in it for the mark.  Its log and the
# recorder's lock file stay far below.
for f in "$db" "$db-wal"; do
    [ "$(stat -c %s "$f")" -gt 65536 ] || fail "$f is too small for this test: $(stat -c %s "$f") bytes"
done
start_daemon "--fsize=65536:"
daemon_wait 'run 2: could not be marked interrupted: .*; will retry' 50
ctl status | grep -q 'unmarked=2' || fail "status of the daemon started on a full disk: $(ctl status)"
[ "$(row 2 | cut -d'|' -f1)" = recording ] || fail "run 2 on the full disk: $(row 2)"
prlimit --pid "$pid" --fsize=unlimited:
daemon_wait 'run 2: marked interrupted, [0-9]* s after the first try' 100
chunks=$(sqlite3 "$db" 'SELECT sum(n_frames) FROM chunk WHERE run_id = 2')
[ "$(row 2)" = "interrupted|NULL|$chunks" ] || fail "run 2 after the space: $(row 2), $chunks frames in chunks"
ctl status | grep -q '^ok state=idle .*unmarked=none' || fail "status at the end: $(ctl status)"
kill -TERM "$pid"
wait "$pid" || fail "daemon exit status after SIGTERM"
pid=
$bin db check --db "$db" >/dev/null || fail "db check"
echo "daemon_unmarked_test: run 1 left unmarked on the full disk (said once, unmarked=1) and" \
     "marked overrun at frame $frame when space came; run 2, left recording by a killed" \
     "daemon, marked interrupted by a daemon started on the full disk once space came"
