#!/bin/sh
# tests/bench/jobs_bench.sh - --jobs (issue 46), for make bench: process
# --all and validate --all on the 17 fixture runs, and import --manifest
# of them, at 1, 2, 4, ... jobs up to this machine's CPUs (and the CPU
# count itself), each from the same store.  For each count:
#   <cmd>_all_jobs_<N>_s: the wall time;
#   <cmd>_all_jobs_<N>_speedup: 1 job's wall time over this one's;
#   <cmd>_all_jobs_<N>_cores_busy: (user + sys CPU time) / wall.
# The goal (issue 46): process and validate keep >= 1.6 cores of 2 busy.
# A loaded machine (other work running) says less; the load is printed.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
cpus=$(getconf _NPROCESSORS_ONLN)
counts=1
j=2
while [ "$j" -lt "$cpus" ]; do counts="$counts $j"; j=$((j * 2)); done
[ "$cpus" -gt 1 ] && counts="$counts $cpus"
echo "jobs_bench_cpus: $cpus"
echo "jobs_bench_load_1min: $(cut -d' ' -f1 /proc/loadavg)"

# measure NAME JOBS DB ARGS...: one command on a copy of DB
measure() {
    name=$1 jobs=$2 db=$3
    shift 3
    cp "$db" "$dir/w.db"
    rm -f "$dir/w.db-wal" "$dir/w.db-shm"
    /usr/bin/time -f "%e %U %S" -o "$dir/time" "$bin" "$@" --jobs "$jobs" \
        --db "$dir/w.db" >/dev/null 2>"$dir/err" ||
        { echo "jobs_bench: $name --jobs $jobs failed: $(tail -3 "$dir/err")" >&2; exit 1; }
    set -- $(tail -1 "$dir/time")
    wall=$1 cpu=$(echo "$2 $3" | awk '{ print $1 + $2 }')
    [ "$jobs" = 1 ] && echo "$wall" >"$dir/$name.serial"
    serial=$(cat "$dir/$name.serial")
    echo "${name}_all_jobs_${jobs}_s: $wall s"
    awk -v s="$serial" -v w="$wall" -v c="$cpu" -v n="$name" -v j="$jobs" 'BEGIN {
        if (w <= 0) w = 0.01
        printf "%s_all_jobs_%s_speedup: %.2f x\n", n, j, s / w
        printf "%s_all_jobs_%s_cores_busy: %.2f\n", n, j, c / w }'
}

sh tests/util/catalogdb.sh "$bin" "$dir/empty.db"
for j in $counts; do
    measure import "$j" "$dir/empty.db" import --manifest fixtures/runs/manifest.csv
done
$bin import --manifest fixtures/runs/manifest.csv --jobs 1 --db "$dir/empty.db" >/dev/null
for j in $counts; do measure process "$j" "$dir/empty.db" process --all; done
$bin process --all --jobs 1 --db "$dir/empty.db" >/dev/null 2>&1
for j in $counts; do measure validate "$j" "$dir/empty.db" validate --all; done
