#!/bin/sh
# tests/acquire/same_samples_test.sh - runs that hold the same samples are
# named and counted once (issue 45):
#   - the same WAV imported twice (--force): the import names run 2 as
#     holding run 1's samples, run show 2 (and --json) says so, run 1 says
#     nothing; the report lists run 2 and its experiment verdict pools 5
#     blocks (one run's), not 10;
#   - a store of schema 10 (before the samples' hash) holding the two runs:
#     the first open hashes them, and run show names run 2;
#   - the daemon's simulator without [sim] seed: two runs hold different
#     samples (each source names its own seed); with seed = 2 fixed, the
#     second run is named in the daemon's log.
# Before issue 45 nothing named either pair, and the report pooled 10
# blocks.
name=same_samples_test
. tests/util/daemon.sh
{
    sed -n '/^file,/p' fixtures/runs/manifest.csv
    grep '^fig6-steel-30.wav,' fixtures/runs/manifest.csv | sed "s|^|$PWD/fixtures/runs/|"
} >"$dir/m.csv"

$bin import --manifest "$dir/m.csv" --db "$db" >/dev/null 2>"$dir/err1"
grep -q 'same samples' "$dir/err1" && fail "the first import names a copy: $(cat "$dir/err1")"
$bin import --manifest "$dir/m.csv" --force --db "$db" >/dev/null 2>"$dir/err2"
grep -q "run 2 holds the same samples as run 1 (.*fig6-steel-30.wav): not independent evidence" "$dir/err2" ||
    fail "the second import: $(cat "$dir/err2")"
$bin run show 2 --db "$db" >"$dir/show2"
grep -q '^same_samples:   run 2 holds the same samples as run 1 ' "$dir/show2" ||
    fail "run show 2: $(cat "$dir/show2")"
h1=$($bin run show 1 --db "$db" | sed -n 's/^samples_sha256: //p')
h2=$(sed -n 's/^samples_sha256: //p' "$dir/show2")
echo "$h1" | grep -qx '[0-9a-f]\{64\}' || fail "run 1's samples_sha256: '$h1'"
[ "$h1" = "$h2" ] || fail "runs 1 and 2 hashed differently: $h1 / $h2"
$bin run show 1 --db "$db" | grep -q '^same_samples' && fail "run 1, the first, is named a copy"
$bin run show 2 --json --db "$db" | grep -q '"same_samples_as": 1' ||
    fail "run show 2 --json: no same_samples_as"

# the report: named, and pooled once
$bin process 1 2 --db "$db" >/dev/null 2>&1
$bin validate 1 2 --db "$db" >/dev/null 2>&1
$bin report --experiment fig6 --out "$dir/rep" --db "$db" >/dev/null
grep -q '<ul id="same-samples"><li>run 2 holds the same samples as run 1 ' "$dir/rep/index.html" ||
    fail "the report does not name run 2"
row=$(grep -o '<tr><td class="l">experiment</td>.*' "$dir/rep/index.html")
echo "$row" | grep -q '<td>5</td></tr>$' || fail "the experiment's verdict pools: $row"

# a store from before the hash: migrated, the runs hashed, run 2 named
cp "$db" "$dir/old.db"
sqlite3 "$dir/old.db" "DROP INDEX run_samples_sha256; ALTER TABLE run DROP COLUMN samples_sha256;
    ALTER TABLE run DROP COLUMN started_from; ALTER TABLE run DROP COLUMN imported_utc;
    DROP TABLE run_work; DROP TABLE daemon_run; ALTER TABLE run DROP COLUMN cut_first_frame;
    PRAGMA user_version = 10;"
$bin run show 2 --db "$dir/old.db" >"$dir/old2"
grep -q '^same_samples:   run 2 holds the same samples as run 1 ' "$dir/old2" ||
    fail "an old store: run show 2: $(cat "$dir/old2")"
grep -q "^samples_sha256: $h1\$" "$dir/old2" || fail "an old store: the hash differs from the writer's"

# the daemon's simulator: a new seed each run, unless [sim] seed fixes it
daemon_runs() {   # $1: DB, $2: [sim] lines; two runs of 1 s, then quit
    sh tests/util/catalogdb.sh "$bin" "$1"
    { sh tests/util/simrig.sh "$1"
      printf '[run]\nprism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\nduration_s = 1\n'
      printf '[sim]\n%s\n' "$2"; } >"$dir/rig.ini"
    daemon_start "$dir/rig.ini"
    for n in 1 2; do
        $bin acquire start --config "$dir/rig.ini" >/dev/null || fail "start $n"
        daemon_wait "run $n: ended"
    done
    $bin acquire quit --config "$dir/rig.ini" >/dev/null || fail "quit"
    wait "$pid" || fail "the daemon's exit status"
    pid=
}
daemon_runs "$dir/d1.db" "paced = 0"
grep -q 'same samples' "$dir/log" && fail "no seed given, yet: $(grep 'same samples' "$dir/log")"
s1=$($bin run show 1 --db "$dir/d1.db" | sed -n 's/^source: .*seed \([0-9]*\).*/\1/p')
s2=$($bin run show 2 --db "$dir/d1.db" | sed -n 's/^source: .*seed \([0-9]*\).*/\1/p')
[ -n "$s1" ] && [ "$s1" != "$s2" ] || fail "no seed given: the runs' seeds are '$s1' and '$s2'"
[ "$($bin run show 1 --db "$dir/d1.db" | sed -n 's/^samples_sha256: //p')" != \
  "$($bin run show 2 --db "$dir/d1.db" | sed -n 's/^samples_sha256: //p')" ] ||
    fail "no seed given: the two runs hold the same samples"
daemon_runs "$dir/d2.db" "paced = 0
seed = 2"
grep -q 'run 2 holds the same samples as run 1 (rig simulator .*seed 2.*): not independent evidence' "$dir/log" ||
    fail "seed = 2: the daemon does not name run 2: $(cat "$dir/log")"
echo "same_samples_test: ok"
