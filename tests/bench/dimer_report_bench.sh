#!/bin/sh
# tests/bench/dimer_report_bench.sh - `prismlab dimer-report` on every core,
# for make bench.  The whole report with its defaults takes most of an hour
# on two cores (docs/dimer.md, "Where the time goes"), so the bench runs a
# reduced one, the same stages in the same proportions of kind: --quick
# (figure 11 at 25 Hz, A_r 3.9-6.5, 4 starts, 40 cycles, and the 2.5 Hz
# check: 136 runs; the paper's 7 runs) with the three basin maps at 11 x 11
# starts (363 runs of 2 s) and no open choices' maps: 506 simulations.  It
# runs on 1 thread and on one a CPU in turn, DIMER_REPORT_BENCH_REPS times
# each (default 3; the machine is shared, so the best of each):
#   dimer_report_reduced_1thread: the command's wall time on 1 thread, s;
#   dimer_report_reduced_Nthreads: the same on the N CPUs online, s;
#   dimer_report_parallel_efficiency_1toN: T1 / (N TN), %;
#   dimer_report_busy_Nthreads: the command's CPU time over N x its wall
#     time, % (what the machine's other load did not take away);
#   dimer_report_goal_met: 1 when the efficiency is 90 % or more (the
#     goal: the report uses every core), else 0 and a note on stderr
#     saying why.
# The whole figure 11 sweep on every core is model_bench's
# dimer_fig11_sweep.
set -eu
reps=${DIMER_REPORT_BENCH_REPS:-3}
bin=bin/prismlab
n=$(getconf _NPROCESSORS_ONLN)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

now() { date +%s.%N; }
# the children's CPU seconds so far (user + system: the second line of
# times, which must run in this shell, not in a $(...) of its own)
cpu() {
    times > "$dir/times"
    tail -1 "$dir/times" | awk '{ gsub(/s/, ""); split($1, u, "m"); split($2, s, "m");
                                  print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}
# wall and CPU seconds of one report on $1 threads, a line of the file $dir/t$1
one() {
    rm -rf "$dir/r"
    cpu > "$dir/c0"
    w0=$(now)
    $bin dimer-report -o "$dir/r" --quick --basin-n 11 --variant-n 0 --threads "$1" \
        >"$dir/out" 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
    w1=$(now)
    cpu > "$dir/c1"
    c0=$(cat "$dir/c0") c1=$(cat "$dir/c1")
    grep -q "506 simulations on $1 thread" "$dir/out" || { cat "$dir/out" >&2; exit 1; }
    echo "$w0 $w1 $c0 $c1" | awk '{ print $2 - $1, $4 - $3 }' >> "$dir/t$1"
}
i=0
while [ $i -lt "$reps" ]; do
    one 1
    one "$n"
    i=$((i + 1))
done
best() { sort -n "$dir/t$1" | head -1; }
t1=$(best 1 | cut -d' ' -f1)
set -- $(best "$n")
tn=$1 cpu=$2
eff=$(awk -v a="$t1" -v b="$tn" -v n="$n" 'BEGIN { print 100 * a / (n * b) }')
busy=$(awk -v c="$cpu" -v b="$tn" -v n="$n" 'BEGIN { print 100 * c / (n * b) }')
printf 'dimer_report_reduced_1thread: %.2f s\n' "$t1"
printf 'dimer_report_reduced_%dthreads: %.2f s\n' "$n" "$tn"
printf 'dimer_report_parallel_efficiency_1to%d: %.1f %%\n' "$n" "$eff"
printf 'dimer_report_busy_%dthreads: %.1f %%\n' "$n" "$busy"
if awk -v e="$eff" 'BEGIN { exit !(e >= 90) }'; then
    echo "dimer_report_goal_met: 1 bool"
else
    echo "dimer_report_goal_met: 0 bool"
    printf 'dimer_report_bench: goal not met: efficiency %.1f %% < 90 %% on %d threads; the report was busy %.1f %% of the %d cores (the rest went to the machine'"'"'s other load: %s)\n' \
        "$eff" "$n" "$busy" "$n" "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
fi
