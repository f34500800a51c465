#!/bin/sh
# tests/acquire/daemon_resume_test.sh - the daemon picks up where it
# stopped (issue 46).  A daemon killed with SIGKILL while its after-run
# pipeline validates run 1 (processed, not yet validated) takes its
# validate child with it; the next daemon, with [pipeline] off, names
# run 1 in the log and in status (unfinished=1); with it on, queues run 1
# again from its validation (not processed twice) and stores its verdict;
# a third start queues nothing.  Then the queue: 34 runs stopped while
# the first one's process step is held leave the last one turned away
# (dropped=1, unfinished=35); the runs that process refuses (a tenth of a
# second of lead-in) count as answered, and only run 35 is queued again at
# the next start.
#
# To kill the daemon at a known step, its steps' programs are reached
# through a gate beside a copy of the daemon's program (as in
# daemon_pipeline_test.sh): a shell that waits for a file, then execs
# the real prismlab-process or prismlab-validate.  The gate only holds a
# step back; every step that runs is the real one.
name=daemon_resume_test
. tests/util/daemon.sh
libexec=$(cd "$(dirname "$bin")/../libexec/prismlab" && pwd)
# rig_ini AFTER_RUN: the test's rig; AFTER_RUN "" leaves [pipeline] out
rig_ini() {
    {
        sh tests/util/simrig.sh "$db"
        printf '[run]\nprism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\nduration_s = 3\n'
        printf '[sim]\nseed = 2\npaced = 1\nlambda0_deg = 4.5\n'
        [ -z "$1" ] || printf '[pipeline]\nafter_run = %s\n' "$1"
    } >"$dir/rig.ini"
}
ctl() { $bin acquire "$1" --config "$dir/rig.ini"; }
# start_daemon PROGRAM: a daemon on the rig, its log in $dir/log, once it
# answers (a killed one leaves its socket behind)
start_daemon() {
    "$1" acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
    pid=$!
    daemon_answers "$dir/rig.ini"
}
quit_daemon() {
    ctl quit >/dev/null || fail "quit"
    wait "$pid" || fail "daemon exit status"
    pid=
}
# alive PID: the process runs (a zombie waiting for its reaper does not)
alive() {
    st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null || true)
    [ -n "$st" ] && [ "$st" != Z ]
}
count() { sqlite3 "$db" "SELECT count(*) FROM $1"; }

mkdir "$dir/lx"
cp "$libexec/prismlab-acquire" "$dir/lx/"
for step in process validate; do
    printf '#!/bin/sh\ni=0\nwhile [ ! -e "%s/go.%s" ]; do\n    sleep 0.1; i=$((i + 1))\n    [ $i -lt 1200 ] || exit 3\ndone\nexec "%s/prismlab-%s" "$@"\n' \
        "$dir" "$step" "$libexec" "$step" >"$dir/lx/prismlab-$step"
    chmod +x "$dir/lx/prismlab-$step"
done

# 1: run 1 processed, its validation held; the daemon killed meanwhile
touch "$dir/go.process"
rig_ini "process, validate"
start_daemon "$dir/lx/prismlab-acquire"
ctl arm | grep -q '^ok armed' || fail "arm"
daemon_wait 'run 1: pipeline: validate started' 300
vpid=$(sed -n 's/.*run 1: pipeline: validate started (pid \([0-9]*\)).*/\1/p' "$dir/log")
[ "$(count "processing WHERE run_id = 1")" = 1 ] || fail "run 1 is not processed"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
pid=
i=0
while alive "$vpid"; do
    sleep 0.1
    i=$((i + 1))
    if [ $i -ge 100 ]; then
        kill -KILL "$vpid" 2>/dev/null || true
        fail "the pipeline's validate (pid $vpid) lives on 10 s after its daemon was killed"
    fi
done
[ "$(count "validation WHERE run_id = 1")" = 0 ] || fail "run 1 was validated before the kill"

# 2: [pipeline] off: run 1 named, in the log and status
rig_ini ""
start_daemon "$bin"
st=$(ctl status)
echo "$st" | grep -q ' dropped=0 unfinished=1 unmarked=none' ||
    fail "status does not name run 1 as unfinished: $st"
grep -q 'run 1: recorded but never validated, and \[pipeline\] is off: prismlab validate 1' \
    "$dir/log" || fail "the log does not name run 1"
quit_daemon

# 3: [pipeline] on: run 1 queued again, validated, not processed again
rig_ini "process, validate"
start_daemon "$bin"
grep -q 'run 1: queued again: recorded but never validated (the daemon stopped before its pipeline finished)' \
    "$dir/log" || fail "run 1 not queued again"
t0=$(date +%s)
daemon_wait 'run 1: pipeline: done' 600
secs=$(($(date +%s) - t0))
! grep -q 'run 1: pipeline: process started' "$dir/log" || fail "run 1 was processed again"
st=$(ctl status)
echo "$st" | grep -q 'pipeline_last=1:done .*verdict_run=1 dropped=0 unfinished=none unmarked=none' ||
    fail "status after run 1's verdict: $st"
[ "$(count "validation WHERE run_id = 1")" = 4 ] || fail "run 1: $(count "validation WHERE run_id = 1") validations"
[ "$(sqlite3 "$db" 'SELECT pipeline FROM daemon_run WHERE run_id = 1')" = done ] ||
    fail "the book does not say run 1's pipeline is done"
quit_daemon
# 4: nothing left: a start queues nothing
start_daemon "$bin"
! grep -q 'queued again' "$dir/log" || fail "a run queued again a second time: $(grep 'queued again' "$dir/log")"
quit_daemon

# 5: the queue full.  Run 2's process step is held: runs 3..34 fill the
# 32 places and run 35 is turned away.
rm "$dir/go.process"
start_daemon "$dir/lx/prismlab-acquire"
for r in $(seq 2 35); do
    ctl start | grep -q "^ok recording run=$r" || fail "start $r"
    ctl stop | grep -q "^ok stopped run=$r" || fail "stop $r"
done
grep -q "run 35: the pipeline's queue holds 32 runs already" "$dir/log" || fail "run 35 not logged"
st=$(ctl status)
echo "$st" | grep -q 'pipeline=process:2 queued=32 .* dropped=1 unfinished=35 ' ||
    fail "status with the queue full: $st"
touch "$dir/go.process"
daemon_until "$dir/rig.ini" 'pipeline=idle pipeline_last=34:' 600 "runs 2 to 34 not through the pipeline"
quit_daemon
refused=$(count "run_quality WHERE quality = 'refused' AND run_id BETWEEN 2 AND 34")
answered=$(count "daemon_run WHERE run_id BETWEEN 2 AND 34 AND pipeline IS NOT NULL")
[ "$answered" = 33 ] || fail "the book holds the outcome of $answered of runs 2 to 34, expected 33"
# 6: only run 35 is queued again; the refused runs have their answer
start_daemon "$bin"
n=$(grep -c 'queued again' "$dir/log" || true)
[ "$n" = 1 ] || fail "$n runs queued again, expected run 35 alone: $(grep 'queued again' "$dir/log")"
grep -q 'run 35: queued again: recorded but never processed' "$dir/log" || fail "run 35 not queued again"
daemon_until "$dir/rig.ini" 'pipeline=idle pipeline_last=35:' 300 "run 35 not through the pipeline"
st=$(ctl status)
echo "$st" | grep -q 'dropped=0 unfinished=none' || fail "status after run 35: $st"
quit_daemon
$bin db check --db "$db" >/dev/null || fail "db check"
echo "daemon_resume_test: the killed daemon's validate child died with it; run 1 named with" \
     "[pipeline] off, then validated ${secs} s after the next start (not processed again);" \
     "run 35 turned away by the full queue counted (dropped=1) and queued again at the next" \
     "start; $refused runs refused by processing not taken up again"
