#!/bin/sh
# tests/acquire/daemon_fulldisk_test.sh - the disk fills during a daemon
# recording (issue 31, D3).  No mount: the test-only variable
# PRISMLAB_TEST_MAX_PAGE_COUNT caps the database at ~4 s of data more than
# it holds, so a commit fails with SQLite's "database or disk is full" as on
# a full disk.  The daemon must then stop the run at once: one log line
# naming the run and the cause, status showing overruns=1 and the error,
# the run 'overrun' at the first frame not stored (= the frames it holds),
# the store intact and the daemon still serving.
name=daemon_fulldisk_test
. tests/util/daemon.sh
daemon_rig
# 10 kHz x 2 channels x 2 bytes = 40 kB/s: ~4 s is 160 kB, in the store's
# pages (16 KiB in a new store, 4 KiB in an older one)
pages=$(sqlite3 "$db" 'PRAGMA page_count')
psize=$(sqlite3 "$db" 'PRAGMA page_size')
cap=$((pages + 163840 / psize))
PRISMLAB_TEST_MAX_PAGE_COUNT=$cap $bin acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
pid=$!
i=0
while [ ! -S "$db.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ctl() { $bin acquire "$1" --config "$dir/rig.ini"; }
ctl start | grep -q '^ok recording run=1' || fail "start"

# The run must stop by itself once the disk is full (generous on a busy
# machine: the cap is ~4 s of data; the run would go on for 60 s).
i=0
while :; do
    st=$(ctl status)
    case $st in *state=idle*) break ;; esac
    # while it still records, a failed commit must already show
    if grep -q 'full' "$dir/log"; then
        case $st in *state=recording*overruns=0*) fail "status hides the failed commit: $st" ;; esac
    fi
    sleep 0.1
    i=$((i + 1))
    [ $i -lt 300 ] || fail "the run went on recording on a full disk: $st"
done
echo "$st" | grep -q 'overruns=1' || fail "status after the full disk: $st"
echo "$st" | grep -q 'last_run=1' || fail "status after the full disk: $st"
echo "$st" | grep -q 'error=.*full' || fail "status does not name the full disk: $st"
n=$(grep -c 'full' "$dir/log" || true)
[ "$n" -eq 1 ] || fail "the full disk was logged $n times, expected once"
grep 'full' "$dir/log" | grep -q 'run 1' || fail "the log line does not name the run: $(grep full "$dir/log")"
grep -q 'run 1: ended (a commit failed): .*OVERRUN' "$dir/log" || fail "no end line with OVERRUN"
row=$(sqlite3 "$db" 'SELECT state, overrun_frame, n_frames, (SELECT coalesce(sum(n_frames),0) FROM chunk WHERE run_id = 1) FROM run WHERE id = 1')
state=${row%%|*}
rest=${row#*|}
of=${rest%%|*}
rest=${rest#*|}
nf=${rest%%|*}
chunks=${rest#*|}
[ "$state" = overrun ] || fail "run 1 is '$state', expected overrun ($row)"
[ "$of" = "$chunks" ] || fail "overrun at frame $of, but the run holds $chunks frames ($row)"
[ "$nf" = "$chunks" ] || fail "n_frames $nf, chunks hold $chunks ($row)"
[ "$chunks" -gt 10000 ] || fail "only $chunks frames stored before the disk filled"
# still serving, and the store is whole
ctl status | grep -q '^ok state=idle' || fail "status after the run"
kill -TERM "$pid"
wait "$pid" || fail "daemon exit status after SIGTERM"
pid=
$bin db check --db "$db" >/dev/null || fail "db check"
echo "daemon_fulldisk_test: run 1 stopped on the full disk after $chunks frames, overrun at frame $of, logged once"
