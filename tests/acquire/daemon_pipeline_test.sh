#!/bin/sh
# tests/acquire/daemon_pipeline_test.sh - the daemon's after-run pipeline
# ([pipeline] after_run = process, validate) with the rig simulator in real
# time: an armed run is processed and validated by itself (both laws, the
# recorded and the fitted lambda0 stored) and status says so; a run that
# cannot be processed is reported as such and the daemon arms again; with
# no lambda0 in the rig, the simulator's own is taken (a card records none:
# comedi_vm_test.sh).  Then with stand-in programs beside a copy of the
# daemon's: a step that takes 2 s and then crashes (SIGSEGV) blocks
# neither a command nor the next run, is reported with its signal, and
# the run that stopped meanwhile waits its turn; a validate that stores
# one law's result and fails the other's is reported as partial, with its
# error line as the cause, and its run linked as the verdict.
name=daemon_pipeline_test
. tests/util/daemon.sh
libexec=$(dirname "$bin")/../libexec/prismlab
# rig_ini LAMBDA0_LINE: the test's rig, after_run = process, validate
rig_ini() {
    {
        sh tests/util/simrig.sh "$db"
        printf '[run]\nprism = steel-38\nramp = glass-0.4079\nexperiment = rehearsal\n'
        printf '%s\nduration_s = 3\n' "$1"
        printf '[sim]\nseed = 2\npaced = 1\nlambda0_deg = 4.5\n'
        printf '[pipeline]\nafter_run = process, validate\n'
    } >"$dir/rig.ini"
}
ctl() { $bin acquire "$1" --config "$dir/rig.ini"; }
# wait_for PATTERN TENTHS: until the log holds PATTERN
wait_for() {
    i=0
    until grep -q "$1" "$dir/log"; do
        sleep 0.1
        i=$((i + 1))
        [ $i -lt "$2" ] || fail "waited $(($2 / 10)) s for '$1'"
    done
}
wait_socket() {
    i=0
    while [ ! -S "$db.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
rows() { sqlite3 "$db" "SELECT count(*) FROM validation WHERE run_id = $1 $2"; }

rig_ini "lambda0_deg = 4.5"
$bin acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
pid=$!
wait_socket
ctl status | grep -q ' pipeline=idle pipeline_last=-1 verdict_run=-1' ||
    fail "status before any run: $(ctl status)"
grep -q 'fitted from the recorded \[run\] lambda0_deg = 4.5' "$dir/log" ||
    fail "the log does not say how lambda0 is taken"

# 1: armed, ends after 3 s, then processed and validated by itself
ctl arm | grep -q '^ok armed' || fail "arm"
wait_for 'run 1: ended (duration)' 150
wait_for 'run 1: pipeline: done' 100
st=$(ctl status)
echo "$st" | grep -q 'pipeline=idle pipeline_last=1:done pipeline_s=[0-9.]* verdict_run=1' ||
    fail "status after run 1's pipeline: $st"
delay=$(echo "$st" | sed -n 's/.*pipeline_s=\([0-9.]*\).*/\1/p')
$bin run show 1 --db "$db" | grep -q '^processed_utc:' || fail "run 1 was not processed"
[ "$(rows 1 "")" = 4 ] || fail "run 1: $(rows 1 "") validations stored, expected 4"
[ "$(rows 1 "AND fit = 'recorded'")" = 2 ] || fail "run 1: the recorded lambda0 not compared"
l0=$(sqlite3 "$db" "SELECT round(lambda0_rad * 180 / pi(), 2) FROM validation
                    WHERE run_id = 1 AND law = 'line' AND fit = 'fitted'")
[ "$l0" = 4.5 ] || fail "run 1: the line law's fitted lambda0 is $l0 deg, the simulator's 4.5"
grep -q 'run 1: validate: run=1 law=line fit=fitted lambda0=4\.[45][0-9]*+-0\.[0-9]* (1 sd) ' "$dir/log" ||
    fail "the log lacks validate's lines, with +- named (1 sd)"
# the default fit (lambda0, t0 and beta) determines lambda0 (issue 45: the
# daemon's fit of lambda0 and t0 alone read 4.50 +- 30.33 deg)
sqlite3 "$db" "SELECT lambda0_sd_rad * 180 / pi() FROM validation
               WHERE run_id = 1 AND law = 'line' AND fit = 'fitted'" | awk '{ exit !($1 > 0 && $1 < 0.1) }' ||
    fail "run 1: the daemon's fit leaves lambda0 undetermined"
grep -q 'fit_beta=1' <<EOF2 || fail "run 1: the daemon's validation did not fit beta"
$(sqlite3 "$db" "SELECT s.params FROM validation v JOIN simulation s ON s.id = v.simulation_id WHERE v.run_id = 1 AND v.law = 'line' AND v.fit = 'fitted'")
EOF2

# 2: a run of the lead-in alone cannot be processed: said, and the daemon
# records and processes the next run all the same
ctl start | grep -q '^ok recording run=2' || fail "start 2"
sleep 0.3
ctl stop | grep -q '^ok stopped run=2' || fail "stop 2"
wait_for 'run 2: pipeline: process failed (exit status 2)' 100
ctl status | grep -q 'pipeline_last=2:process-failed .*verdict_run=1' ||
    fail "status after run 2's failure: $(ctl status)"
$bin run show 2 --db "$db" | grep -q '^state: *complete' || fail "run 2 is no longer stored"
ctl arm | grep -q '^ok armed' || fail "arm after the failed pipeline"
wait_for 'run 3: pipeline: done' 250
ctl status | grep -q 'verdict_run=3' || fail "status after run 3: $(ctl status)"
kill -TERM "$pid"
wait "$pid" || fail "daemon exit status"
pid=

# no lambda0 in the rig: the simulator records its own, which validate
# starts from and compares
# starts from and compares; [pipeline] fit = lambda0,t0 names the fit
rig_ini ""
printf 'fit = lambda0, gamma\n' >>"$dir/rig.ini"
if $bin acquire daemon --config "$dir/rig.ini" 2>"$dir/err"; then
    fail "a daemon started with [pipeline] fit = lambda0, gamma"
fi
grep -q "rig.ini:[0-9]*: \[pipeline\] fit: 'gamma' is not lambda0, t0 or beta" "$dir/err" ||
    fail "a bad [pipeline] fit: $(cat "$dir/err")"
rig_ini ""
printf 'fit = lambda0,t0\n' >>"$dir/rig.ini"
$bin acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
pid=$!
wait_socket
grep -q 'no \[run\] lambda0_deg: lambda0,t0 fitted from the lambda0 the source records' \
    "$dir/log" || fail "the log does not say where lambda0 comes from, and with which fit"
ctl arm >/dev/null
wait_for 'run 4: pipeline: done' 250
[ "$(rows 4 "")" = 4 ] || fail "run 4: $(rows 4 "") validations stored, expected 4"
l0=$(sqlite3 "$db" "SELECT round(lambda0_rad * 180 / pi(), 1) FROM validation
                    WHERE run_id = 4 AND law = 'line' AND fit = 'fitted'")
[ "$l0" = 4.5 ] || fail "run 4: the line law's fitted lambda0 is $l0 deg, the simulator's 4.5"
sqlite3 "$db" "SELECT s.params FROM validation v JOIN simulation s ON s.id = v.simulation_id
               WHERE v.run_id = 4 AND v.law = 'line' AND v.fit = 'fitted'" | grep -q '^fit_beta=0$' ||
    fail "run 4: [pipeline] fit = lambda0,t0 did not reach validate"
kill -TERM "$pid"
wait "$pid" || fail "daemon exit status"
pid=

# A step that takes 2 s and crashes, beside a copy of the daemon's program
mkdir "$dir/lx"
cp "$libexec/prismlab-acquire" "$dir/lx/"
# without the steps' programs beside it the daemon does not start
rig_ini "lambda0_deg = 4.5"
if "$dir/lx/prismlab-acquire" acquire daemon --config "$dir/rig.ini" 2>"$dir/err"; then
    fail "a daemon started without prismlab-process beside it"
fi
grep -q "after_run: $dir/lx/prismlab-process: No such file" "$dir/err" ||
    fail "no program: $(cat "$dir/err")"
printf '#!/bin/sh\necho "stand-in process of run $2"\nsleep 2\n[ "$2" = 6 ] || kill -SEGV $$\n' \
    >"$dir/lx/prismlab-process"
# validate as when one law's fit fails: the other's result stored, exit 2
printf '#!/bin/sh\necho "prismlab validate: run $2 (plastic law): the fit did not converge" >&2
echo "run=$2 law=line fit=fitted lambda0=4.5000"\nexit 2\n' >"$dir/lx/prismlab-validate"
chmod +x "$dir/lx/prismlab-process" "$dir/lx/prismlab-validate"
rig_ini "lambda0_deg = 4.5"
"$dir/lx/prismlab-acquire" acquire daemon --config "$dir/rig.ini" 2>"$dir/log" &
pid=$!
wait_socket
ctl start | grep -q '^ok recording run=5' || fail "start 5"
sleep 0.3
ctl stop >/dev/null
t0=$(date +%s%N)
ctl start | grep -q '^ok recording run=6' || fail "start 6 while run 5 is processed"
ctl status | grep -q 'state=recording run=6 .* pipeline=process:5' ||
    fail "status while run 5 is processed: $(ctl status)"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 1500 ] || fail "start and status took $ms ms while a step ran"
ctl stop >/dev/null
ctl status | grep -q 'pipeline=process:5 queued=1' || fail "run 6 not queued: $(ctl status)"
wait_for 'run 5: pipeline: process failed (killed by signal 11): stand-in process of run 5' 50
wait_for 'run 6: pipeline: process started' 10
ctl status | grep -q '^ok state=idle .*pipeline=process:6 pipeline_last=5:process-failed' ||
    fail "status after the crash: $(ctl status)"
wait_for 'run 6: pipeline: validate ended with exit status 2 after storing 1 result (partial: prismlab validate: run 6 (plastic law): the fit did not converge)' 50
ctl status | grep -q 'pipeline_last=6:validate-partial .*verdict_run=6' ||
    fail "status after a partial validation: $(ctl status)"
kill -TERM "$pid"
wait "$pid" || fail "daemon exit status after the crashes"
pid=
$bin db check --db "$db" >/dev/null || fail "db check"
echo "daemon_pipeline_test: run 1 processed and validated by itself ${delay} s after its stop" \
     "(4 validations, lambda0 fitted 4.5), a failed process reported and the next run" \
     "processed, the source's lambda0 when the rig has none, a 2 s step answered in ${ms} ms" \
     "and its SIGSEGV reported, the next run queued, a partial validation said so"
