#!/bin/sh
# tests/db/crash_store_test.sh - SIGKILL at random moments (issue 31's
# harness, beside tests/acquire/crash_test.sh): CRASH_N times each (10 in
# make check, 50 in make crashtest)
#   - validate: run 1 always has one whole set of four validations: the
#     earlier set (the same simulations) or the new one, one stamp, no
#     simulation left without its validation;
#   - run delete: the run is there whole (its chunks and processing) or
#     gone with everything derived; the other runs are unchanged;
#   - import --manifest of four files: run again after the kill, it passes
#     over what was stored and imports the rest: every file once;
# and db check passes after every kill.  Prints how many kills landed
# mid-way and how many after the commit.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
n=${CRASH_N:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "crash_store_test: $*" >&2; exit 1; }
db=$dir/c.db
rnd() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }   # 0..65535
pause_ms() { [ "$1" -eq 0 ] || sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }
q() { sqlite3 "$db" "$1"; }
# the kills fall uniformly over how long the command took when let run
# (measured here, so the spread holds on a loaded machine too)
ms() { date +%s%N | cut -c1-13; }
spread() { [ "$1" -gt 0 ] && echo $(($(rnd) % ($1 + 1))) || echo 0; }
check() { $bin db check --db "$db" >"$dir/check" 2>&1 || fail "$1: db check: $(cat "$dir/check")"; }

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig6-steel-22.wav --db "$db" >/dev/null
$bin process 1 --db "$db" >/dev/null 2>&1
t=$(ms); $bin validate 1 --db "$db" >/dev/null; t_validate=$(($(ms) - t))

# 1. validate
set_of() { q "SELECT group_concat(simulation_id) FROM (SELECT simulation_id FROM validation
              WHERE run_id = 1 ORDER BY simulation_id)"; }
mid=0 late=0 i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    old=$(set_of)
    $bin validate 1 --db "$db" >/dev/null 2>&1 &
    p=$!
    pause_ms "$(spread $t_validate)"
    kill -9 $p 2>/dev/null || true
    wait $p 2>/dev/null || true
    check "validate $i"
    [ "$(q "SELECT count(*) || ' ' || count(DISTINCT created_utc) FROM validation WHERE run_id = 1")" = "4 1" ] ||
        fail "validate $i: not one whole set: $(q 'SELECT law, fit, created_utc FROM validation')"
    [ "$(q 'SELECT count(*) FROM simulation WHERE id NOT IN (SELECT simulation_id FROM validation)')" -eq 0 ] ||
        fail "validate $i: a simulation without its validation"
    new=$(set_of)
    if [ "$new" = "$old" ]; then
        mid=$((mid + 1))
    else
        late=$((late + 1))
        for s in $(echo "$old" | tr , ' '); do
            case ",$new," in *",$s,"*) fail "validate $i: old and new mixed: $old -> $new";; esac
        done
    fi
done
echo "crash_store_test: validate killed $n times over its ${t_validate} ms: $mid before the commit (the earlier set whole), $late after (the new set whole)"

# 2. run delete, of a run imported and processed for it
le() { le_v=$1 le_k=0
    while [ $le_k -lt "$2" ]; do
        printf "\\$(printf %03o $((le_v & 255)))"; le_v=$((le_v >> 8)); le_k=$((le_k + 1))
    done; }
wav() {   # wav FILE SECONDS: 2 channels, 16 bit, 10 kHz of random samples
    bytes=$(($2 * 40000))
    { printf RIFF; le $((36 + bytes)) 4; printf 'WAVEfmt '; le 16 4; le 1 2; le 2 2
      le 10000 4; le 40000 4; le 4 2; le 16 2; printf data; le $bytes 4
      head -c $bytes /dev/urandom; } >"$1"
}
others() { q "SELECT id, state, n_frames FROM run WHERE id <> $1 ORDER BY id;
              SELECT run_id, first_frame, crc32 FROM chunk WHERE run_id <> $1 ORDER BY run_id, first_frame;
              SELECT run_id, law, fit, created_utc FROM validation WHERE run_id <> $1 ORDER BY 1, 2, 3" | sha256sum; }
t_delete=
mid=0 late=0 i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    if [ -z "$t_delete" ]; then   # once let run, to time it
        id=$($bin import fixtures/runs/fig6-steel-22.wav --force --db "$db" | sed -n 's/^run=\([0-9]*\) .*/\1/p')
        $bin process "$id" --db "$db" >/dev/null 2>&1
        t=$(ms); $bin run delete "$id" --yes --db "$db" >/dev/null; t_delete=$(($(ms) - t))
    fi
    id=$($bin import fixtures/runs/fig6-steel-22.wav --force --db "$db" | sed -n 's/^run=\([0-9]*\) .*/\1/p')
    $bin process "$id" --db "$db" >/dev/null 2>&1
    whole=$(q "SELECT count(*) FROM chunk WHERE run_id = $id")
    s=$(others "$id")
    $bin run delete "$id" --yes --db "$db" >/dev/null 2>&1 &
    p=$!
    pause_ms "$(spread $t_delete)"
    kill -9 $p 2>/dev/null || true
    wait $p 2>/dev/null || true
    check "delete $i"
    [ "$(others "$id")" = "$s" ] || fail "delete $i: another run changed"
    there=$(q "SELECT count(*) FROM run WHERE id = $id")
    if [ "$there" -eq 1 ]; then
        mid=$((mid + 1))
        [ "$(q "SELECT count(*) FROM chunk WHERE run_id = $id")" = "$whole" ] ||
            fail "delete $i: run $id is there without all its chunks"
        $bin run delete "$id" --yes --db "$db" >/dev/null || fail "delete $i: the next delete"
    else
        late=$((late + 1))
    fi
    [ "$(q "SELECT (SELECT count(*) FROM chunk WHERE run_id = $id) + (SELECT count(*) FROM channel WHERE run_id = $id)")" -eq 0 ] ||
        fail "delete $i: run $id gone but its chunks or channels stay"
done
echo "crash_store_test: run delete killed $n times over its ${t_delete} ms: $mid before the commit (the run whole), $late after (all of it gone)"

# 3. import --manifest, killed, then run again
t_manifest=
mid=0 i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    m=$dir/m.csv
    echo "file,format,prism,ramp,h1_m,h2_m,ldv_scale_mps_per_v,sign1,sign2,full_scale_v,lambda0_deg" >"$m"
    for k in 1 2 3 4; do
        wav "$dir/m$k.wav" 30
        echo "m$k.wav,wav,steel-22,glass-0.4079,0.0199,0.0116,0.025,1,-1,10,7.2" >>"$m"
    done
    if [ -z "$t_manifest" ]; then   # once let run, to time it
        t=$(ms); $bin import --manifest "$m" --db "$db" >/dev/null; t_manifest=$(($(ms) - t))
        $bin run delete $(q 'SELECT id FROM run ORDER BY id DESC LIMIT 4') --yes --db "$db" >/dev/null
    fi
    before=$(q 'SELECT count(*) FROM run')
    $bin import --manifest "$m" --db "$db" >/dev/null 2>&1 &
    p=$!
    pause_ms "$(spread $t_manifest)"
    kill -9 $p 2>/dev/null || true
    wait $p 2>/dev/null || true
    check "manifest $i"
    got=$(($(q 'SELECT count(*) FROM run') - before))
    [ "$got" -lt 4 ] && mid=$((mid + 1))
    $bin import --manifest "$m" --db "$db" >"$dir/out" 2>"$dir/err" ||
        fail "manifest $i: resuming after $got of 4: $(cat "$dir/err")"
    [ "$(grep -c 'stored already' "$dir/err" || true)" -eq "$got" ] ||
        fail "manifest $i: $got stored before, skip lines: $(cat "$dir/err")"
    [ "$(q 'SELECT count(*) FROM run')" -eq $((before + 4)) ] ||
        fail "manifest $i: $(($(q 'SELECT count(*) FROM run') - before)) runs for 4 files"
    [ "$(q "SELECT count(*) - count(DISTINCT source_sha256) FROM run WHERE source_sha256 IN
           (SELECT source_sha256 FROM run ORDER BY id DESC LIMIT 4)")" -eq 0 ] ||
        fail "manifest $i: a file imported twice"
done
echo "crash_store_test: import --manifest of 4 files killed $n times over its ${t_manifest} ms ($mid mid-way): resumed, every file once"
check final
echo "crash_store_test: $((3 * n)) SIGKILLs, db check clean"
