#!/bin/sh
# tests/cli/jobs_test.sh - --jobs (issue 46): import --manifest, process
# and validate with 3 jobs (more than this machine's cores, to shake the
# order) leave the store that 1 job leaves, row by row and in row-id
# order (time columns and the transient run_work marks aside), print the
# same stdout and stderr and exit the same.  A run refused by process
# (its heights swapped) is among them: its refusal, its diagnosis and the
# exit status keep their places.  A worker killed mid-run (SIGSEGV from
# here) costs its own run only: the others are stored and printed in
# order, the parent names the run and exits 2, and does not hang.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "jobs_test: $*" >&2; exit 1; }

# Every table but run_work, row by row in rowid order: the rowid first
# (the order commits gave; a WITHOUT ROWID table in its key's order), the
# *_utc columns NULL, a blob as its SHA3.
dump() {
    for t in $(sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'table'
                              AND name <> 'run_work' ORDER BY name"); do
        cols=$(sqlite3 "$1" "SELECT group_concat(CASE WHEN name LIKE '%\\_utc' ESCAPE '\\'
            THEN 'NULL' ELSE 'CASE typeof(\"' || name || '\") WHEN ''blob'' THEN
            hex(sha3(\"' || name || '\")) ELSE quote(\"' || name || '\") END' END, ' || ''|'' || ')
            FROM pragma_table_info('$t')")
        echo "== $t"
        if [ "$(sqlite3 "$1" "SELECT wr FROM pragma_table_list WHERE name = '$t'")" = 1 ]; then
            sqlite3 "$1" "SELECT $cols FROM \"$t\""
        else
            sqlite3 "$1" "SELECT rowid || ':' || $cols FROM \"$t\" ORDER BY rowid"
        fi
    done
}

# same WHAT A B: the two stores' contents are equal
same() {
    dump "$2" >"$dir/dump.a"
    dump "$3" >"$dir/dump.b"
    [ -s "$dir/dump.a" ] || fail "$1: no dump"
    cmp -s "$dir/dump.a" "$dir/dump.b" ||
        fail "$1: the stores differ: $(diff "$dir/dump.a" "$dir/dump.b" | head -20)"
}

# run WHAT JOBS DB ARGS...: the command's stdout, stderr and status in
# $dir/WHAT.JOBS.{out,err,rc}; --db's path is the same for both counts
# (import prints it)
run() {
    what=$1 jobs=$2 db=$3
    shift 3
    cp "$db" "$dir/work.db"
    rc=0
    timeout 600 "$bin" "$@" --jobs "$jobs" --db "$dir/work.db" \
        >"$dir/$what.$jobs.out" 2>"$dir/$what.$jobs.err" || rc=$?
    echo "$rc" >"$dir/$what.$jobs.rc"
    mv "$dir/work.db" "$dir/$what.$jobs.db"
    rm -f "$dir/work.db-wal" "$dir/work.db-shm"
}

# compare WHAT: 1 and 3 jobs alike
compare() {
    for s in out err rc; do
        cmp -s "$dir/$1.1.$s" "$dir/$1.3.$s" ||
            fail "$1: $s differs: $(diff "$dir/$1.1.$s" "$dir/$1.3.$s" | head -20)"
    done
    same "$1" "$dir/$1.1.db" "$dir/$1.3.db"
}

sh tests/util/catalogdb.sh "$bin" "$dir/empty.db"
run import 1 "$dir/empty.db" import --manifest fixtures/runs/manifest.csv
run import 3 "$dir/empty.db" import --manifest fixtures/runs/manifest.csv
[ "$(cat "$dir/import.1.rc")" = 0 ] || fail "import: $(cat "$dir/import.1.err")"
[ "$(grep -c '^run=' "$dir/import.1.out")" -eq 17 ] || fail "import: $(cat "$dir/import.1.out")"
compare import
# the manifest again: every file passed over, in order, on stderr
run import_again 1 "$dir/import.1.db" import --manifest fixtures/runs/manifest.csv
run import_again 3 "$dir/import.1.db" import --manifest fixtures/runs/manifest.csv
[ "$(grep -c 'stored already' "$dir/import_again.1.err")" -eq 17 ] ||
    fail "import again: $(cat "$dir/import_again.1.err")"
compare import_again

# run 3 refused: its heights swapped
db=$dir/import.1.db
h=$(sqlite3 "$db" "SELECT group_concat(beam_height_m, ' ') FROM
    (SELECT beam_height_m FROM channel WHERE run_id = 3 ORDER BY idx)")
set -- $h
"$bin" run set 3 --h1 "$2" --h2 "$1" --db "$db" >/dev/null 2>&1 || fail "run set 3"
run process 1 "$db" process --all
run process 3 "$db" process --all
[ "$(cat "$dir/process.1.rc")" = 2 ] || fail "process: status $(cat "$dir/process.1.rc")"
grep -q '^prismlab process: run 3: ' "$dir/process.1.err" || fail "run 3 not refused"
[ "$(grep -c '^run=' "$dir/process.1.out")" -eq 16 ] || fail "process: $(cat "$dir/process.1.out")"
[ "$(sqlite3 "$dir/process.1.db" "SELECT quality FROM run_quality WHERE run_id = 3")" = refused ] ||
    fail "run 3's refusal not recorded"
compare process
run process_json 1 "$db" process --all --json
run process_json 3 "$db" process --all --json
compare process_json

# validate on the processed store (run 3 fails: not processed)
db=$dir/process.1.db
run validate 1 "$db" validate --all
run validate 3 "$db" validate --all
[ "$(cat "$dir/validate.1.rc")" = 2 ] || fail "validate: status $(cat "$dir/validate.1.rc")"
[ "$(grep -c '^run=' "$dir/validate.1.out")" -eq 64 ] || fail "validate: $(cat "$dir/validate.1.out")"
compare validate

# report (fig8: runs 1-6, run 3 refused): the figures drawn by 3
# workers are the files 1 draws (the times they were written at aside:
# index.html's "Written", a PDF's CreationDate)
for j in 1 3; do
    "$bin" report --experiment fig8 -o "$dir/report.$j" --jobs "$j" --db "$dir/validate.1.db" \
        >"$dir/report.$j.out" 2>&1 || fail "report --jobs $j: $(cat "$dir/report.$j.out")"
done
sed "s|$dir/report.1|R|" "$dir/report.1.out" >"$dir/r1"
sed "s|$dir/report.3|R|" "$dir/report.3.out" >"$dir/r3"
cmp -s "$dir/r1" "$dir/r3" || fail "report's output: $(cat "$dir/r1" "$dir/r3")"
grep -q ': 6 runs, 5 validated, 10 figures$' "$dir/r1" || fail "report: $(cat "$dir/r1")"
for f in "$dir"/report.1/*; do
    g=$dir/report.3/${f##*/}
    [ -f "$g" ] || fail "report --jobs 3 did not write ${f##*/}"
    case $f in
    *.pdf) grep -av CreationDate "$f" >"$dir/a"; grep -av CreationDate "$g" >"$dir/b" ;;
    *.html) grep -v '^<p>Written ' "$f" >"$dir/a"; grep -v '^<p>Written ' "$g" >"$dir/b" ;;
    *) cp "$f" "$dir/a"; cp "$g" "$dir/b" ;;
    esac
    cmp -s "$dir/a" "$dir/b" || fail "report: ${f##*/} differs between 1 and 3 jobs"
done

# a worker killed: its run lost, the rest stored and printed in order
cp "$db" "$dir/kill.db"
"$bin" validate --all --jobs 2 --db "$dir/kill.db" >"$dir/kill.out" 2>"$dir/kill.err" &
pid=$!
victim=
for i in $(seq 1 1200); do
    victim=$(pgrep -P "$pid" | head -1) || true
    [ -n "$victim" ] && break
    sleep 0.05
done
[ -n "$victim" ] || fail "no worker of validate (pid $pid) seen"
kill -SEGV "$victim"
# a parent that hangs is a failure, not a stuck test
for i in $(seq 1 6000); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null && { kill "$pid"; fail "validate hung after its worker died"; }
rc=0
wait "$pid" || rc=$?
[ "$rc" = 2 ] || fail "after a worker was killed: status $rc: $(cat "$dir/kill.err")"
# (an ASan build's worker catches the SIGSEGV and exits 1: said too)
dead=$(sed -n 's/^prismlab validate: run \([0-9]*\): the worker \(died (signal 11)\|ended without a result (exit status 1)\)$/\1/p' "$dir/kill.err")
[ -n "$dead" ] || fail "no word of the dead worker: $(cat "$dir/kill.err")"
[ "$(echo "$dead" | wc -l)" -eq 1 ] || fail "more than one worker died: $dead"
# every other run's lines, in the serial order, as 1 job printed them
grep -v "^run=$dead " "$dir/validate.1.out" >"$dir/expect.out"
cmp -s "$dir/expect.out" "$dir/kill.out" ||
    fail "after run $dead's worker died: $(diff "$dir/expect.out" "$dir/kill.out" | head)"
n=$(sqlite3 "$dir/kill.db" "SELECT count(DISTINCT run_id) FROM validation")
want=$(sqlite3 "$dir/validate.1.db" "SELECT count(DISTINCT run_id) FROM validation
                                     WHERE run_id <> $dead")
[ "$n" -eq "$want" ] || fail "validations stored for $n runs, not $want (all but run $dead's)"
"$bin" db check --db "$dir/kill.db" >/dev/null 2>&1 || fail "db check after the kill"
exit 0
