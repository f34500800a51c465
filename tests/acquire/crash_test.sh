#!/bin/sh
# tests/acquire/crash_test.sh - SIGKILL at random moments, as SQLite tests
# itself: CRASH_N times each (10 in make check, 50 in make crashtest) an
# import, a recording, a processing and the daemon are killed with SIGKILL
# after a random delay, and each time:
#   - db check passes (SQLite integrity, every chunk's CRC, tiling);
#   - every run that was final before is unchanged: its row and its
#     chunks' (first frame, frames, CRC-32) list (db check ties those CRCs
#     to the bytes), and run 1's bytes by SHA-256 of its BLOBs;
#   - import: no partial run (no run, or the whole run 'imported'), and the
#     file imports again without --force (or is refused as stored, when the
#     kill came after the commit);
#   - record and daemon: the next recorder marks the killed run
#     'interrupted' and no run is left 'recording';
#   - process: processing the run again gives the reference result.
# Prints the counts: how many kills landed mid-way and how many too late.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
n=${CRASH_N:-10}
dir=$(mktemp -d)
dpid=
cleanup() {
    if [ -n "$dpid" ]; then kill -9 "$dpid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() { echo "crash_test: $*" >&2; exit 1; }
db=$dir/c.db
rnd() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }   # 0..65535
pause_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig6-steel-22.wav --db "$db" >/dev/null
run1=$(sqlite3 "$db" 'SELECT hex(data) FROM chunk WHERE run_id = 1 ORDER BY first_frame' | sha256sum)
ref=$($bin process 1 --db "$db" 2>/dev/null)

# What every final run is: rows and chunk lists.
final_ids() { sqlite3 "$db" "SELECT group_concat(id) FROM run WHERE state <> 'recording'"; }
snap() {   # snap IDS
    sqlite3 "$db" "SELECT id, state, n_frames, overrun_frame, source_sha256, ended_utc FROM run WHERE id IN ($1) ORDER BY id;
                   SELECT run_id, first_frame, n_frames, crc32 FROM chunk WHERE run_id IN ($1) ORDER BY run_id, first_frame" | sha256sum
}
after_kill() {   # after_kill WHAT IDS SNAPSHOT
    $bin db check --db "$db" >"$dir/check" 2>&1 || fail "$1: db check: $(cat "$dir/check")"
    [ "$(snap "$2")" = "$3" ] || fail "$1: a run that was final changed"
    [ "$(sqlite3 "$db" 'SELECT hex(data) FROM chunk WHERE run_id = 1 ORDER BY first_frame' | sha256sum)" = "$run1" ] ||
        fail "$1: run 1's bytes changed"
}

# A 2-channel 16-bit 10 kHz WAV of random samples (a new SHA-256 each).
le() {   # le VALUE BYTES: little-endian bytes (shell variables are global)
    le_v=$1 le_k=0
    while [ $le_k -lt "$2" ]; do
        printf "\\$(printf %03o $((le_v & 255)))"; le_v=$((le_v >> 8)); le_k=$((le_k + 1))
    done
}
wav() {   # wav FILE SECONDS
    bytes=$(($2 * 40000))
    { printf RIFF; le $((36 + bytes)) 4; printf 'WAVEfmt '; le 16 4; le 1 2; le 2 2
      le 10000 4; le 40000 4; le 4 2; le 16 2; printf data; le $bytes 4
      head -c $bytes /dev/urandom; } >"$1"
}
imp() {   # imp FILE [--force]; exec: a kill of the background job hits prismlab
    exec $bin import "$@" --prism steel-22 --ramp glass-0.4079 --h1 0.0199 --h2 0.0116 \
        --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10 --lambda0-deg 7.2 --db "$db"
}

# 1. import
mid=0 late=0 i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    wav "$dir/r.wav" 60
    ids=$(final_ids); s=$(snap "$ids"); before=$(sqlite3 "$db" 'SELECT count(*) FROM run')
    (imp "$dir/r.wav") >/dev/null 2>&1 &
    p=$!
    pause_ms $(($(rnd) % 25))
    kill -9 $p 2>/dev/null || true
    wait $p 2>/dev/null || true
    after_kill "import $i" "$ids" "$s"
    now=$(sqlite3 "$db" 'SELECT count(*) FROM run')
    if [ "$now" -eq "$before" ]; then
        mid=$((mid + 1))
        (imp "$dir/r.wav") >/dev/null 2>"$dir/err" || fail "import $i: re-import refused: $(cat "$dir/err")"
    else
        late=$((late + 1))
        [ "$now" -eq $((before + 1)) ] || fail "import $i: $now runs after, $before before"
        if (imp "$dir/r.wav") >/dev/null 2>"$dir/err"; then fail "import $i: imported twice"; fi
        grep -q 'stored already' "$dir/err" || fail "import $i: $(cat "$dir/err")"
    fi
    [ "$(sqlite3 "$db" "SELECT count(*) FROM run WHERE state <> 'imported' AND source_sha256 <> ''")" -eq 0 ] ||
        fail "import $i: a partial import run"
    [ "$(sqlite3 "$db" "SELECT state || ' ' || n_frames FROM run ORDER BY id DESC LIMIT 1")" = "imported 600000" ] ||
        fail "import $i: the last run is not the whole file"
done
echo "crash_test: import killed $n times: $mid mid-way (nothing stored, re-imported), $late after the commit (whole)"

# 2. record (the simulator in real time) and 3. the daemon
sh tests/util/simrig.sh "$db" >"$dir/rig.ini"
cat >>"$dir/rig.ini" <<EOF
[run]
prism = steel-38
ramp = glass-0.4079
lambda0_deg = 4.5
[sim]
paced = 1
EOF
mid=0 i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    ids=$(final_ids); s=$(snap "$ids")
    $bin acquire record --config "$dir/rig.ini" --duration 3 >/dev/null 2>&1 &
    p=$!
    pause_ms $((100 + $(rnd) % 1000))
    kill -9 $p 2>/dev/null || true
    wait $p 2>/dev/null || true
    after_kill "record $i" "$ids" "$s"
    open=$(sqlite3 "$db" "SELECT count(*) FROM run WHERE state = 'recording'")
    $bin acquire record --config "$dir/rig.ini" --duration 0.05 >/dev/null 2>"$dir/err" ||
        fail "record $i: the next recorder: $(cat "$dir/err")"
    if [ "$open" -gt 0 ]; then
        mid=$((mid + 1))
        grep -q "marked $open unfinished run" "$dir/err" || fail "record $i: $(cat "$dir/err")"
    fi
    [ "$(sqlite3 "$db" "SELECT count(*) FROM run WHERE state = 'recording'")" -eq 0 ] ||
        fail "record $i: a run left recording"
done
echo "crash_test: record killed $n times: $mid mid-run (marked interrupted by the next recorder, chunks intact)"

mid=0 i=0
sock=$dir/d.sock
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    ids=$(final_ids); s=$(snap "$ids")
    $bin acquire daemon --config "$dir/rig.ini" --socket "$sock" 2>>"$dir/dlog" &
    dpid=$!
    k=0
    until $bin acquire status --socket "$sock" >/dev/null 2>&1; do
        k=$((k + 1)); [ $k -lt 100 ] || fail "daemon $i did not come up: $(tail -3 "$dir/dlog")"
        sleep 0.05
    done
    $bin acquire start --socket "$sock" >/dev/null
    pause_ms $(($(rnd) % 800))
    kill -9 $dpid
    wait $dpid 2>/dev/null || true
    dpid=
    after_kill "daemon $i" "$ids" "$s"
    [ -S "$sock" ] || fail "daemon $i: no stale socket to replace"
    open=$(sqlite3 "$db" "SELECT count(*) FROM run WHERE state = 'recording'")
    [ "$open" -gt 0 ] && mid=$((mid + 1))
done
# the next daemon replaces the stale socket and marks the last run
$bin acquire daemon --config "$dir/rig.ini" --socket "$sock" 2>"$dir/dlog2" &
dpid=$!
k=0
until $bin acquire status --socket "$sock" >/dev/null 2>&1; do
    k=$((k + 1)); [ $k -lt 100 ] || fail "the last daemon did not come up: $(cat "$dir/dlog2")"
    sleep 0.05
done
kill -TERM $dpid; wait $dpid || fail "daemon exit"; dpid=
[ "$(sqlite3 "$db" "SELECT count(*) FROM run WHERE state = 'recording'")" -eq 0 ] || fail "daemon: a run left recording"
echo "crash_test: daemon killed $n times: $mid mid-run; each restart replaced the stale socket"

# 4. process
mid=0 i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    ids=$(final_ids); s=$(snap "$ids")
    $bin process 1 --db "$db" >/dev/null 2>&1 &
    p=$!
    pause_ms $(($(rnd) % 50))
    kill -9 $p 2>/dev/null && mid=$((mid + 1))
    wait $p 2>/dev/null || true
    after_kill "process $i" "$ids" "$s"
    [ "$($bin process 1 --db "$db" 2>/dev/null)" = "$ref" ] || fail "process $i: not the reference result"
done
echo "crash_test: process killed $n times ($mid while running): the same result after each"
$bin db check --db "$db" >/dev/null || fail "final db check"
echo "crash_test: $((4 * n)) SIGKILLs, db check clean, earlier runs unchanged"
