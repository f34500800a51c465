#!/bin/sh
# tests/model/sweep/slurm_test.sh - `prismlab sweep` under a real one-node
# Slurm: munged, slurmctld and slurmd from Debian's packages, configured
# for this host in a temporary folder (their own ports, state, spool, munge
# key and socket; nothing of the machine's /etc is used or changed).
#   - `srun -n 2` (PMIx) stores the same rows as one worker; `srun -n 2
#     --mpi=none` (two tasks that would each write alone) is refused;
#   - a rank killed by SIGKILL half-way ends the step (--kill-on-bad-exit);
#     `srun -n 2 ... --resume` computes exactly the missing points;
#   - docs/sweep-job.sh, the batch script for a real cluster, submitted as
#     a 3-task job array run one task at a time (each resumes the sweep),
#     survives its first task's rank being
#     killed: the next task finishes it, and the rows are the serial ones.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=$(mktemp -d /tmp/prismlab-slurm.XXXXXX)
chmod 755 "$dir"
fail() { echo "slurm_test: $*" >&2; [ -f "$dir/slurmctld.log" ] && tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2; exit 1; }
stop() {
    for p in slurmd slurmctld munged; do
        [ -f "$dir/$p.pid" ] && kill "$(cat "$dir/$p.pid")" 2>/dev/null
    done
    sleep 0.5
    for p in slurmd slurmctld munged; do
        [ -f "$dir/$p.pid" ] && kill -9 "$(cat "$dir/$p.pid")" 2>/dev/null
    done
    rm -rf "$dir"
}
trap stop EXIT INT TERM
for t in munged slurmctld slurmd srun sbatch squeue; do
    command -v $t >/dev/null || fail "$t is missing (make deps installs munge and slurm-wlm)"
done
rows() { sqlite3 "$1" "SELECT idx, params, result, ok, hex(series) FROM sweep_point ORDER BY idx"; }
count() { sqlite3 "$1" "SELECT count(*) FROM sweep_point" 2>/dev/null || echo 0; }

# --- a one-node cluster in $dir -------------------------------------------------
mkdir -p "$dir/state" "$dir/spool"
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
munged -f --socket="$dir/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/munged.log" \
    --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" || fail "munged did not start"
host=$(hostname -s)
port=$((20000 + $$ % 20000))
cpus=$(nproc)
cat > "$dir/slurm.conf" <<EOF
ClusterName=prismlabtest
SlurmctldHost=$host
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmix
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
: > "$dir/plugstack.conf"
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "the node did not come up"; sleep 0.2
done

# --- the sweep ---------------------------------------------------------------------
cat > "$dir/s.ini" <<'INI'
[sweep]
name = slurm
model = simulate
[fixed]
a0 = 0.015
mu-s = 10
h1 = 0.0199
h2 = 0.0112
duration = 7
[axis law]
values = line, plastic
[axis N]
values = 5, 10, 20, 40
[axis beta-frac]
log = 0.001, 0.9, 25
[axis lambda0-frac]
linear = 0.05, 0.95, 10
INI
total=2000
for d in serial srun kill array; do $bin db init --db "$dir/$d.db" > /dev/null || fail "db init"; done
$bin sweep "$dir/s.ini" --db "$dir/serial.db" --workers 1 > /dev/null || fail "serial sweep"
rows "$dir/serial.db" > "$dir/serial.rows"

# srun -n 2: the same rows
srun -n 2 --kill-on-bad-exit=1 $bin sweep "$dir/s.ini" --db "$dir/srun.db" > "$dir/out" 2>&1 \
    || fail "srun -n 2: $(cat "$dir/out")"
grep -q "2000/2000 points stored .* by 2 workers" "$dir/out" || fail "srun: $(cat "$dir/out")"
rows "$dir/srun.db" | cmp -s - "$dir/serial.rows" || fail "srun -n 2 stored other rows than one worker"

# srun without MPI would start two sweeps writing alone: refused, nothing stored
srun -n 2 --mpi=none $bin sweep "$dir/s.ini" --db "$dir/kill.db" > "$dir/out" 2>&1 \
    && fail "srun --mpi=none ran"
[ "$(grep -c "srun started 2 tasks without MPI" "$dir/out")" -eq 2 ] || fail "srun --mpi=none: $(cat "$dir/out")"
[ "$(count "$dir/kill.db")" -eq 0 ] || fail "srun --mpi=none stored points"

# kill a rank of an srun step, resume under srun
killrank() {   # $1 database, $2 points to wait for: kills one rank of the running step
    i=0
    while [ "$(count "$1")" -lt "$2" ]; do
        i=$((i + 1)); [ $i -lt 600 ] || fail "no points stored in $1 after 60 s"; sleep 0.1
    done
    pid=$(pgrep -f "^$bin sweep $dir/s.ini --db $1" | tail -1)
    [ -n "$pid" ] || fail "no rank found"
    kill -9 "$pid"
    echo "slurm_test: killed rank pid $pid with $(count "$1") points stored"
}
srun -n 2 --kill-on-bad-exit=1 $bin sweep "$dir/s.ini" --db "$dir/kill.db" > "$dir/out" 2>&1 &
spid=$!
killrank "$dir/kill.db" 200
wait $spid && fail "srun went on after a rank was killed"
before=$(count "$dir/kill.db")
[ "$before" -lt $total ] || fail "the step had finished before the kill"
srun -n 2 --kill-on-bad-exit=1 $bin sweep "$dir/s.ini" --db "$dir/kill.db" --resume > "$dir/out" 2>&1 \
    || fail "srun resume: $(cat "$dir/out")"
grep -q "2000/2000 points stored ($before before, $((total - before)) computed" "$dir/out" \
    || fail "srun resume did not compute exactly the missing points: $(cat "$dir/out")"
rows "$dir/kill.db" | cmp -s - "$dir/serial.rows" || fail "srun killed+resumed rows differ"

# a job array, one task at a time, each resuming: the first task loses a rank
src=${PRISMLAB_SRC:-.}
sed -e 's/--ntasks=64/--ntasks=2/' -e 's/--time=04:00:00/--time=10/' \
    -e "s|--output=prism-phase|--output=$dir/job|" \
    -e "s|prismlab sweep fixtures/sweeps/prism-phase.ini --db \"\$HOME/phase.db\"|$bin sweep $dir/s.ini --db $dir/array.db|" \
    "$src/docs/sweep-job.sh" > "$dir/job.sh"
grep -q "^    $bin sweep $dir/s.ini --db $dir/array.db --resume" "$dir/job.sh" \
    || fail "docs/sweep-job.sh no longer has the srun line this test expects: $(cat "$dir/job.sh")"
job=$(sbatch --parsable --array=0-2%1 "$dir/job.sh") || fail "sbatch"
killrank "$dir/array.db" 200
i=0
while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    i=$((i + 1)); [ $i -lt 1200 ] || fail "job array $job did not finish in 120 s"; sleep 0.1
done
[ "$(count "$dir/array.db")" -eq $total ] || fail "the job array left $(count "$dir/array.db") points"
rows "$dir/array.db" | cmp -s - "$dir/serial.rows" || fail "job array rows differ from serial"
# task 0 was killed, task 1 finished the sweep, task 2 found nothing to do
sessions=$(sqlite3 "$dir/array.db" "SELECT group_concat(workers || ':' || points_before || ':' || points_done || ':' || (finished_utc IS NOT NULL), ' ') FROM sweep_session")
echo "slurm_test: array sessions (ranks:before:done:finished): $sessions"
echo "$sessions" | awk -v t=$total '{
    split($1, a, ":"); split($2, b, ":"); split($3, c, ":");
    if (NF != 3 || a[1] != 2 || a[4] != 0 || b[2] != a[3] || b[2] + b[3] != t || b[4] != 1 ||
        c[2] != t || c[3] != 0 || c[4] != 1) exit 1 }' || fail "array sessions: $sessions"
echo "slurm_test: srun -n 2, srun kill+resume and a 3-task job array: $total identical rows"
