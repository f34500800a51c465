#!/bin/sh
# tests/bench/daemon_pipeline_bench.sh - from a run's stop to its verdict in
# the store, for make bench: the recording daemon with [pipeline] after_run
# = process, validate, its source the rig simulator delivering 2 x 10 kHz
# in real time (steel-38 on an endless glass-0.4079 ramp, lambda0 4.5 deg
# recorded); armed, the release caught, 10 s recorded, then `stop`.  The
# time runs from stop's reply to the moment the run's validation rows are
# in the store (sqlite3 polled every 20 ms), DAEMON_PIPELINE_BENCH_N runs
# (default 3):
#   daemon_pipeline_verdict_median, _max: stop -> 4 validation rows stored;
#   daemon_pipeline_own_median: the daemon's own figure (status pipeline_s:
#     its stop of the run -> validate's exit).
# The goal (issue 30): under 3 s for a 10 s run.
n=${DAEMON_PIPELINE_BENCH_N:-3}
name=daemon_pipeline_bench
. tests/util/daemon.sh
sh tests/util/simrig.sh "$db" >"$dir/rig.ini"
cat >>"$dir/rig.ini" <<INI
[run]
prism = steel-38
ramp = glass-0.4079
experiment = bench
lambda0_deg = 4.5
[sim]
seed = 2
paced = 1
ramp_length_m = 0
motion_s = 30
[pipeline]
after_run = process, validate
INI
ctl() { $bin acquire "$1" --config "$dir/rig.ini"; }
ms() { echo $(($(date +%s%N) / 1000000)); }
$bin acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
pid=$!
i=0
while [ ! -S "$db.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
: >"$dir/verdict"
: >"$dir/own"
k=0
while [ $k -lt "$n" ]; do
    k=$((k + 1))
    ctl arm >/dev/null || fail "arm"
    i=0
    until ctl status | grep -q 'state=recording'; do
        sleep 0.05; i=$((i + 1)); [ $i -lt 100 ] || fail "no release"
    done
    sleep 10
    run=$(ctl stop | sed -n 's/^ok stopped run=//p')
    t0=$(ms)
    [ -n "$run" ] || fail "stop"
    i=0
    until [ "$(sqlite3 "$db" "SELECT count(*) FROM validation WHERE run_id = $run")" = 4 ]; do
        sleep 0.02; i=$((i + 1)); [ $i -lt 1500 ] || fail "run $run: no verdict in 30 s"
    done
    t1=$(ms)
    echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1000 }' >>"$dir/verdict"
    i=0
    until ctl status | grep -q "pipeline_last=$run:done"; do
        sleep 0.05; i=$((i + 1)); [ $i -lt 200 ] || fail "run $run: pipeline: $(ctl status)"
    done
    ctl status | sed -n 's/.*pipeline_s=\([0-9.]*\).*/\1/p' >>"$dir/own"
    s=$($bin run show "$run" --db "$db" | sed -n 's/^frames: *[0-9]* (\(.*\))/\1/p')
    echo "daemon_pipeline_bench: run $run ($s): verdict stored $(tail -1 "$dir/verdict") s after stop, daemon's own $(tail -1 "$dir/own") s" >&2
done
kill -TERM "$pid"
wait "$pid"
pid=
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.3f %.3f\n", v[int((NR + 1) / 2)], v[NR] }'; }
set -- $(stats "$dir/verdict")
echo "daemon_pipeline_verdict_median: $1 s"
echo "daemon_pipeline_verdict_max: $2 s"
set -- $(stats "$dir/own")
echo "daemon_pipeline_own_median: $1 s"
