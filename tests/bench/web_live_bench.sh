#!/bin/sh
# tests/bench/web_live_bench.sh - the live page under load, for make bench:
# a daemon recording the rig simulator at 2 x 10 kHz in real time, prismlab
# serve --control, 4 live pages in Debian's chromium (tests/web/
# live_bench.mjs) for WEB_LIVE_BENCH_S seconds (default 20) of recording
# (WEB_LIVE_BENCH_HZ: another rate a channel):
#   web_live_latency_median, _p95, _max: from the daemon's read of a block
#     to a page's drawing of it, over every block of the 4 pages;
#   daemon_cpu_4_live_clients: the daemon's CPU time over the wall time,
#     % of one core (daemon_bench's daemon_cpu_60s is the same without
#     viewers);
#   web_live_impacts_per_s, web_live_physics_js, web_live_page_busy: the
#     live search's events a page took in, the time its physics.js took
#     (ms a second) and its main thread's busy time (% of the wall), the
#     mean of the 4 pages.
set -eu
secs=${WEB_LIVE_BENCH_S:-20}
rig_rate_hz=${WEB_LIVE_BENCH_HZ:-10000}
bin=bin/prismlab
dir=$(mktemp -d)
. tests/web/liverig.sh
trap liverig_cleanup EXIT INT TERM
db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
rig_ini "$db" $((secs + 6)) "ramp_length_m = 0" "motion_s = $((secs + 8))"
start_daemon "$db"
start_serve "$db"
node tests/web/live_bench.mjs "$url" "$token" "$secs" "$dpid" ||
    { cat "$dir/daemon.log" >&2; exit 1; }
sleep 1
row=$(sqlite3 "$db" "SELECT state || ' ' || coalesce(overrun_frame, -1) || ' ' || n_frames FROM run ORDER BY id DESC LIMIT 1")
echo "web_live_bench: the run recorded meanwhile: $row (state, overrun frame, frames)" >&2
