#!/bin/sh
# tests/model/sweep/sweep_test.sh - `prismlab sweep` with the real engines:
#   - a sweep file's mistakes are refused naming file, line and what was
#     expected; a stored sweep is not overwritten; --resume refuses a
#     changed file;
#     (on one machine and, said by rank 0, under mpirun);
#   - one worker, two threads and `mpirun --oversubscribe -np 4` store the
#     same rows (params, result, ok, series), byte for byte: the simulate
#     model, the roughplane (tuples, components, flags) and the dimer with
#     series; catalogue names resolved once (1 worker and 3 ranks), a
#     resume after the catalogue changed refused;
#   - the roughplane and dimer sweeps under mpirun with the ASan+UBSan build;
#   - a rank killed by SIGKILL half-way takes the job down; --resume under
#     mpirun computes exactly the points without a row, and the result is
#     again the serial one; list, show and export see it.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=$(mktemp -d)
mpipid=
cleanup() { [ -n "$mpipid" ] && kill -9 "$mpipid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT INT TERM
fail() { echo "sweep_test: $*" >&2; exit 1; }
mpirun_=mpirun
[ "$(id -u)" = 0 ] && mpirun_="mpirun --allow-run-as-root"
init() { $bin db init --db "$1" > /dev/null || fail "db init $1"; }
rows() { sqlite3 "$1" "SELECT idx, params, result, ok, hex(series) FROM sweep_point ORDER BY idx"; }
count() { sqlite3 "$1" "SELECT count(*) FROM sweep_point" 2>/dev/null || echo 0; }

# --- refusals ---------------------------------------------------------------
cat > "$dir/bad1.ini" <<'INI'
[sweep]
name = bad
model = simulate
[fixed]
a0 = 0.015
[axis beta-frac]
linear = 0.1, 0.9
INI
init "$dir/x.db"
$bin sweep "$dir/bad1.ini" --db "$dir/x.db" 2>"$dir/err" && fail "a range of two numbers was taken"
grep -q "bad1.ini:7: linear = FROM, TO, COUNT expected" "$dir/err" || fail "bad range: $(cat "$dir/err")"
printf '[sweep]\nname = bad\nmodel = simulate\n[fixed]\nwidth = 3\n' > "$dir/bad2.ini"
$bin sweep "$dir/bad2.ini" --db "$dir/x.db" 2>"$dir/err" && fail "an unknown parameter was taken"
grep -q "bad2.ini:5: 'width' is not a parameter of prismlab simulate" "$dir/err" || fail "unknown: $(cat "$dir/err")"
printf '[sweep]\nname = bad\nmodel = simulate\n[fixed]\nN = 6\na0 = 0.015\nbeta-deg = 1\nmu-s = 1\nlambda0-deg = 3\nh1 = 0.02\nh2 = 0.01\nduration = x7\n' > "$dir/bad3.ini"
$bin sweep "$dir/bad3.ini" --db "$dir/x.db" 2>"$dir/err" && fail "duration x7 was taken"
grep -q "bad3.ini: option '--duration'" "$dir/err" || fail "bad number: $(cat "$dir/err")"
printf '[sweep]\nname = bad\nmodel = simulate\n[fixed]\nN = 6\na0 = 0.015\nbeta-deg = 1\nmu-s = 1\nlambda0-deg = 3\nh1 = 0.02\nh2 = 0.01\n' > "$dir/bad4.ini"
$bin sweep "$dir/bad4.ini" --db "$dir/x.db" 2>"$dir/err" && fail "a sweep without duration was taken"
grep -q "missing option --duration" "$dir/err" || fail "no duration: $(cat "$dir/err")"

# --- the same rows whatever the workers ------------------------------------------
cat > "$dir/s.ini" <<'INI'
[sweep]
name = map
model = simulate
series = omega, Lp
series-rate = 20
[fixed]
a0 = 0.015
mu-s = 10
h1 = 0.0199
h2 = 0.0112
duration = 7
[axis law]
values = line, plastic
[axis N]
values = 4, 8, 16, 32, 64
[axis beta-frac]
linear = 0.02, 0.98, 25
[axis lambda0-frac]
linear = 0.02, 0.98, 8
INI
total=2000
for d in serial threads mpi kill; do init "$dir/$d.db"; done
$bin sweep "$dir/s.ini" --db "$dir/serial.db" --workers 1 > "$dir/out" || fail "serial: $(cat "$dir/out")"
grep -q "sweep map: 2000/2000 points stored (0 before, 2000 computed" "$dir/out" || fail "serial: $(cat "$dir/out")"
rows "$dir/serial.db" > "$dir/serial.rows"
[ "$(wc -l < "$dir/serial.rows")" -eq $total ] || fail "serial: $(wc -l < "$dir/serial.rows") rows"
# not a map of one answer: every class occurs, and series are stored
for s in end stopped; do
    n=$(sqlite3 "$dir/serial.db" "SELECT count(*) FROM sweep_point WHERE json_extract(result, '$.status') = '$s'")
    [ "$n" -gt 100 ] || fail "only $n points with status $s"
done
n=$(sqlite3 "$dir/serial.db" "SELECT count(*) FROM sweep_point WHERE length(series) > 8 * 2 * 100")
[ "$n" -gt 100 ] || fail "series: only $n points store more than 100 samples"

$bin sweep "$dir/s.ini" --db "$dir/serial.db" 2>"$dir/err" && fail "a stored sweep was run again"
grep -q "sweep 'map' is already in .*2000 of 2000 points stored.*--resume" "$dir/err" || fail "rerun: $(cat "$dir/err")"
# under mpirun too: rank 0 says why, and every rank stops
$mpirun_ --oversubscribe -np 2 $bin sweep "$dir/s.ini" --db "$dir/serial.db" > "$dir/err" 2>&1 \
    && fail "mpirun ran a stored sweep again"
grep -q "prismlab sweep: sweep 'map' is already in" "$dir/err" || fail "mpirun rerun: $(cat "$dir/err")"

$bin sweep "$dir/s.ini" --db "$dir/threads.db" --workers 2 > "$dir/out" || fail "threads: $(cat "$dir/out")"
rows "$dir/threads.db" | cmp -s - "$dir/serial.rows" || fail "two threads stored other rows than one"

$mpirun_ --oversubscribe -np 4 $bin sweep "$dir/s.ini" --db "$dir/mpi.db" > "$dir/out" 2>&1 \
    || fail "mpirun: $(cat "$dir/out")"
grep -q "2000/2000 points stored .* by 4 workers" "$dir/out" || fail "mpirun: $(cat "$dir/out")"
rows "$dir/mpi.db" | cmp -s - "$dir/serial.rows" || fail "mpirun -np 4 stored other rows than one worker"
[ "$(sqlite3 "$dir/mpi.db" "SELECT mode, workers FROM sweep_session")" = "mpi|4" ] || fail "session"

# --- the roughplane and the dimer, with series: the same rows -----------------------
# (compound options as tuples, an axis over a component, a flag; points the
# command refuses stored as rows with ok = 0)
cat > "$dir/slide.ini" <<'INI'
[sweep]
name = slide
model = roughplane
series = t, x, y, theta, omega
series-rate = 20
[fixed]
mu = 0.3
v0 = 1, 0.5
duration = 2
particle = 0.1,0,0 / 0.2,0.05,0
particle = 0.1,0.02,0.03
mass = 0.5
length = 0.2
width = 0.1
masses = 1, 2
[axis body]
values = particle, pair, particles, rod, board
[axis hack]
values = no, yes
[axis omega0]
values = 0, 4
[axis phi-deg]
values = 0, 10, 20
[axis v0.vy]
values = 0, 1
INI
cat > "$dir/dimer.ini" <<'INI'
[sweep]
name = dimer
model = dimer
series = t, y1, y2, x1, theta
series-rate = 200
[fixed]
duration = 0.5
[axis Gamma]
values = 0.5, 0.9, 2.5
[axis es]
linear = 0.3, 0.9, 4
INI
for m in slide dimer; do
    for d in serial threads mpi; do init "$dir/$m-$d.db"; done
    $bin sweep "$dir/$m.ini" --db "$dir/$m-serial.db" --workers 1 > "$dir/out" || fail "$m serial: $(cat "$dir/out")"
    rows "$dir/$m-serial.db" > "$dir/$m.rows"
    $bin sweep "$dir/$m.ini" --db "$dir/$m-threads.db" --workers 2 > "$dir/out" || fail "$m threads: $(cat "$dir/out")"
    rows "$dir/$m-threads.db" | cmp -s - "$dir/$m.rows" || fail "$m: two threads stored other rows than one"
    $mpirun_ --oversubscribe -np 4 $bin sweep "$dir/$m.ini" --db "$dir/$m-mpi.db" > "$dir/out" 2>&1 \
        || fail "$m mpirun: $(cat "$dir/out")"
    rows "$dir/$m-mpi.db" | cmp -s - "$dir/$m.rows" || fail "$m: mpirun -np 4 stored other rows than one worker"
done
q() { sqlite3 "$dir/slide-serial.db" "$1"; }
[ "$(q "SELECT count(*), sum(ok) FROM sweep_point")" = "120|102" ] \
    || fail "slide: $(q "SELECT count(*), sum(ok) FROM sweep_point") points, ok"
# the particle refuses a spin or the decoupled model, in the command's words
[ "$(q "SELECT DISTINCT json_extract(result, '$.error') FROM sweep_point WHERE ok = 0")" \
  = "a particle has no spin: --omega0 and --hack are for the other bodies" ] || fail "slide: refusals"
# every stored point has its 5 series of 2 s x 20 + 1 samples; the failed none
[ "$(q "SELECT count(*) FROM sweep_point WHERE ok = 1 AND length(series) = 5 * 41 * 8")" = 102 ] \
    || fail "slide: series"
[ "$(q "SELECT count(*) FROM sweep_point WHERE ok = 0 AND series IS NOT NULL")" = 0 ] || fail "slide: failed with series"
# one point against the command itself: its last line is the row
line=$($bin roughplane --body particles --particle 0.1,0,0 --particle 0.2,0.05,0 \
    --particle 0.1,0.02,0.03 --mu 0.3 --v0 1,1 --duration 2 --omega0 4 --phi-deg 10)
want=$(echo "$line" | sed 's/t_stop=\([^ ]*\) x=\([^ ]*\) y=\([^ ]*\) theta=\([^ ]*\)/\1 \2 \3 \4/')
got=$(q "SELECT printf('%.9g %.9g %.9g %.9g', json_extract(result, '$.t_stop'), json_extract(result, '$.x'),
    json_extract(result, '$.y'), json_extract(result, '$.theta')) FROM sweep_point
    WHERE json_extract(params, '$.body') = 'particles' AND json_extract(params, '$.hack') = 'no'
    AND json_extract(params, '$.omega0') = 4 AND json_extract(params, '$.phi-deg') = 10
    AND json_extract(params, '$.\"v0.vy\"') = 1")
[ -n "$got" ] || fail "slide: the point was not found"
# the series' samples are integration stops for a body (as --csv): the last
# digits may differ from the command's run without; 9 digits agree
[ "$got" = "$want" ] || fail "slide: the sweep's point '$got' is not the command's '$want'"
# the export names components as the file does, and gives a tuple as JSON
$bin sweep export slide --db "$dir/slide-serial.db" -o "$dir/slide.csv" || fail "slide: export"
head -1 "$dir/slide.csv" | grep -qx "idx,ok,body,hack,omega0,phi-deg,v0.vy,t_stop,x,y,theta,error" \
    || fail "slide: export header $(head -1 "$dir/slide.csv")"
$bin sweep export slide --db "$dir/slide-serial.db" --columns v0,particle | sed -n 3p \
    | grep -qx '1,1,"\[1,1\]","\[\[0.1,0,0\],\[0.2,0.05,0\],\[0.1,0.02,0.03\]\]"' \
    || fail "slide: export of tuples: $($bin sweep export slide --db "$dir/slide-serial.db" --columns v0,particle | sed -n 3p)"
[ "$(sqlite3 "$dir/dimer-serial.db" "SELECT count(*) FROM sweep_point WHERE ok = 1 AND length(series) = 5 * 101 * 8")" = 12 ] \
    || fail "dimer: series"
echo "sweep_test: roughplane (120 points) and dimer (12) with series: 1 worker, 2 threads, 4 ranks identical"

# --- catalogue names: looked up once by the writer, the same rows ------------------
cat > "$dir/cat.ini" <<'INI'
[sweep]
name = cat
model = simulate
[fixed]
prism = steel-22
ramp = glass
h1 = 0.0199
h2 = 0.0112
duration = 3
[axis law]
values = line, plastic
[axis lambda0-frac]
linear = 0.2, 0.8, 4
INI
for d in serial mpi; do
    init "$dir/cat-$d.db"
    $bin prism add steel-22 --N 22 --a0 0.015 --length 0.05 --material steel --mass 0.2 \
        --db "$dir/cat-$d.db" > /dev/null || fail "prism add"
    $bin ramp add glass --beta-deg 0.4 --mu-s 0.6 --mu 0.4 --length 1.2 --material glass \
        --db "$dir/cat-$d.db" > /dev/null || fail "ramp add"
done
$bin sweep "$dir/cat.ini" --db "$dir/cat-serial.db" --workers 1 > "$dir/out" || fail "cat: $(cat "$dir/out")"
rows "$dir/cat-serial.db" > "$dir/cat.rows"
$mpirun_ --oversubscribe -np 3 $bin sweep "$dir/cat.ini" --db "$dir/cat-mpi.db" > "$dir/out" 2>&1 \
    || fail "cat mpirun: $(cat "$dir/out")"
rows "$dir/cat-mpi.db" | cmp -s - "$dir/cat.rows" || fail "cat: mpirun -np 3 stored other rows than one worker"
# the numbers are in every row and in the stored file
sqlite3 "$dir/cat-serial.db" "SELECT params FROM sweep_point WHERE idx = 5" | grep -q \
    '"prism":"steel-22","ramp":"glass",.*"N":22,"a0":0.015,"mass":0.2,"beta-deg":0.4,"mu-s":0.6,"mu":0.4,"ramp-length":1.2,' \
    || fail "cat: params $(sqlite3 "$dir/cat-serial.db" "SELECT params FROM sweep_point WHERE idx = 5")"
$bin sweep show cat --db "$dir/cat-serial.db" | grep -qx "beta-deg = 0.4" || fail "cat: show lacks [catalogue]"
# a point is the command's run of the catalogued prism
l0=$(sqlite3 "$dir/cat-serial.db" "SELECT json_extract(params, '$.lambda0-deg') FROM sweep_point WHERE idx = 5")
want=$($bin simulate --prism steel-22 --ramp glass --db "$dir/cat-serial.db" --h1 0.0199 --h2 0.0112 \
    --duration 3 --law plastic --lambda0-deg "$l0" | tail -1 | sed 's/.*Lp_end=\([^ ]*\) impacts=\([^ ]*\) status=\([^ ]*\).*/\1 \2 \3/')
got=$(sqlite3 "$dir/cat-serial.db" "SELECT printf('%.6f %d %s', json_extract(result, '$.Lp_end'),
    json_extract(result, '$.impacts'), json_extract(result, '$.status')) FROM sweep_point WHERE idx = 5")
[ "$got" = "$want" ] || fail "cat: point 5 '$got' is not the command's '$want'"
# a resume after the catalogue changed would mix two ramps: refused
sqlite3 "$dir/cat-serial.db" "UPDATE ramp SET mu_s = 0.7 WHERE name = 'glass'"
$bin sweep "$dir/cat.ini" --db "$dir/cat-serial.db" --resume 2>"$dir/err" && fail "cat: resume took other numbers"
grep -q "the same catalogue numbers for its prism and ramp" "$dir/err" || fail "cat: $(cat "$dir/err")"
sed 's/ramp = glass/ramp = slate/' "$dir/cat.ini" > "$dir/cat2.ini"
$bin sweep "$dir/cat2.ini" --db "$dir/cat-mpi.db" 2>"$dir/err" && fail "cat: an unknown ramp was taken"
grep -q "cat2.ini: no ramp named 'slate'" "$dir/err" || fail "cat: $(cat "$dir/err")"
echo "sweep_test: catalogue names (8 points): 1 worker and 3 ranks identical, the command's run, resume checks the numbers"

# --- the MPI path under ASan+UBSan ----------------------------------------------------
# make check builds build/asan/bin/prismlab; under mpirun its leak checker
# is given Open MPI's own leftovers to ignore (lsan-openmpi.supp)
src=${PRISMLAB_SRC:-$(cd "$(dirname "$0")/../../.." && pwd)}
asan=${PRISMLAB_ASAN_BIN:-$src/build/asan/bin/prismlab}
if [ -x "$asan" ]; then
    for m in slide dimer; do
        init "$dir/$m-asan.db"
        LSAN_OPTIONS="suppressions=$src/tests/model/sweep/lsan-openmpi.supp:print_suppressions=0:fast_unwind_on_malloc=0" \
        ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        OMPI_MCA_mca_base_component_disable_dlclose=1 \
            $mpirun_ --oversubscribe -np 2 -x LSAN_OPTIONS -x ASAN_OPTIONS -x UBSAN_OPTIONS \
            -x OMPI_MCA_mca_base_component_disable_dlclose "$asan" sweep "$dir/$m.ini" \
            --db "$dir/$m-asan.db" > "$dir/out" 2>&1 || fail "$m under ASan+UBSan and mpirun: $(cat "$dir/out")"
        ! grep -q "Sanitizer\|runtime error" "$dir/out" || fail "$m: sanitizer report: $(cat "$dir/out")"
        rows "$dir/$m-asan.db" | cmp -s - "$dir/$m.rows" || fail "$m: the ASan build under mpirun stored other rows"
    done
    echo "sweep_test: roughplane and dimer under ASan+UBSan by mpirun -np 2: clean, the same rows"
elif [ -n "${PRISMLAB_SRC:-}" ]; then
    fail "no ASan build at $asan (make check builds it)"
else
    echo "sweep_test: no ASan build at $asan: the MPI path under the sanitizers not run"
fi

# --- kill a rank, resume ----------------------------------------------------------
$mpirun_ --oversubscribe -np 4 $bin sweep "$dir/s.ini" --db "$dir/kill.db" > "$dir/out" 2>&1 &
mpipid=$!
i=0
while [ "$(count "$dir/kill.db")" -lt 300 ]; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "no points stored after 30 s"; sleep 0.05
done
rank=$(pgrep -P $mpipid -f "sweep" | sed -n 2p)
[ -n "$rank" ] || fail "no rank of mpirun $mpipid found"
kill -9 "$rank"
wait $mpipid && fail "mpirun went on after a rank was killed"
mpipid=
before=$(count "$dir/kill.db")
echo "sweep_test: killed rank pid $rank; $before of $total points stored"
[ "$before" -lt $total ] || fail "the sweep had finished before the kill"
sqlite3 "$dir/kill.db" "PRAGMA integrity_check" | grep -qx ok || fail "integrity after the kill"
$mpirun_ --oversubscribe -np 4 $bin sweep "$dir/s.ini" --db "$dir/kill.db" --resume > "$dir/out" 2>&1 \
    || fail "resume: $(cat "$dir/out")"
grep -q "2000/2000 points stored ($before before, $((total - before)) computed" "$dir/out" \
    || fail "resume did not compute exactly the missing points: $(cat "$dir/out")"
rows "$dir/kill.db" | cmp -s - "$dir/serial.rows" || fail "killed and resumed rows differ from serial"
[ "$(sqlite3 "$dir/kill.db" "SELECT group_concat(points_before || ':' || points_done) FROM sweep_session")" \
  = "0:$before,$before:$((total - before))" ] || fail "sessions: $(sqlite3 "$dir/kill.db" "SELECT * FROM sweep_session")"

# resume refuses another file under the same name
sed 's/duration = 7/duration = 6/' "$dir/s.ini" > "$dir/s2.ini"
$bin sweep "$dir/s2.ini" --db "$dir/kill.db" --resume 2>"$dir/err" && fail "resume took a changed file"
grep -q "was made from another file" "$dir/err" || fail "changed file: $(cat "$dir/err")"

# --- list, show, export -------------------------------------------------------------
$bin sweep list --db "$dir/kill.db" | grep -q "^map  *simulate  *2000/2000  *0 failed" || fail "list: $($bin sweep list --db "$dir/kill.db")"
$bin sweep list --json --db "$dir/kill.db" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert [(x["name"], x["model"], x["points"], x["stored"], x["failed"]) for x in r] == [("map", "simulate", 2000, 2000, 0)], r
' || fail "list --json: $($bin sweep list --json --db "$dir/kill.db")"
$bin sweep show map --db "$dir/kill.db" | grep -q "^linear = 0.02, 0.98, 25" || fail "show lacks the file"
$bin sweep export map --db "$dir/kill.db" -o "$dir/map.csv"
[ "$(wc -l < "$dir/map.csv")" -eq $((total + 1)) ] || fail "export: $(wc -l < "$dir/map.csv") lines"
head -1 "$dir/map.csv" | grep -qx "idx,ok,law,N,beta-frac,lambda0-frac,beta-deg,lambda0-deg,ratio,t_end,x_end,omega_end,Lp_end,impacts,status,omega_last,omega_settle,rolls,error" \
    || fail "export header: $(head -1 "$dir/map.csv")"
# the export's numbers are the stored doubles
a=$(sed -n 1000p "$dir/map.csv" | cut -d, -f13)
b=$(sqlite3 "$dir/kill.db" "SELECT json_extract(result, '$.Lp_end') = $a FROM sweep_point WHERE idx = 998")
[ "$b" = 1 ] || fail "export Lp_end $a of point 998 is not the stored value"
echo "sweep_test: 1 worker, 2 threads, 4 ranks and kill+resume: $total identical rows"
