#!/bin/sh
# tests/run-tests.sh - runs the unit tests, then the same tests built with
# AddressSanitizer + UndefinedBehaviorSanitizer, then the script tests, and
# ends with one summary line "check: N passed, N failed".
#
# Usage: sh tests/run-tests.sh "TESTS" "ASAN_TESTS" "SCRIPT_TESTS"
# Each cmocka program reports its own count; a script test counts as one
# test, passed when it exits 0.  Output of each test goes to
# build/test-logs/<name>.log and is shown in full when it fails.
set -u
tests=$1
asan_tests=$2
scripts=$3
top=$(pwd)
logs=$top/build/test-logs
mkdir -p "$logs"
passed=0
failed=0
failed_names=""

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PRISMLAB_SRC="$top"
# Never let a developer's database leak into a test.
unset PRISMLAB_DB

# Seconds since the epoch with milliseconds, and the time since $1: each
# test's line says what it took, so that a slow suite shows where.
now() { date +%s.%N | cut -c1-14; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

run_cmocka() {   # $1 program, $2 prismlab binary for the CLI tests
    name=$(echo "$1" | sed 's|^build/||; s|/|_|g')
    log=$logs/$name.log
    t0=$(now)
    PRISMLAB_BIN="$top/$2" "$top/$1" > "$log" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    p=${p:-0}; f=${f:-0}
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or sanitizer abort
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" -ne 0 ]; then
        failed_names="$failed_names $1"
        echo "FAIL $1 ($p passed, $f failed, $(took "$t0"))"; cat "$log"
    else
        echo "ok   $1 ($p passed, $(took "$t0"))"
    fi
}

for t in $tests; do run_cmocka "$t" bin/prismlab; done
for t in $asan_tests; do run_cmocka "$t" build/asan/bin/prismlab; done
for s in $scripts; do
    name=$(echo "$s" | sed 's|/|_|g')
    log=$logs/$name.log
    t0=$(now)
    if PRISMLAB_BIN="$top/bin/prismlab" sh "$s" > "$log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $s ($(took "$t0"))"
    else
        failed=$((failed + 1)); failed_names="$failed_names $s"
        echo "FAIL $s ($(took "$t0"))"; cat "$log"
    fi
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
