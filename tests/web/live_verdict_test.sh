#!/bin/sh
# tests/web/live_verdict_test.sh - the live page and the daemon's after-run
# pipeline in a real browser (Debian's chromium, playwright-core): a rig
# with [pipeline] after_run = process, validate, the simulator recording a
# 3 s run armed from the page; the page then links to the run
# ("run N: verdict ready", /run/N) and the link opens its page
# (tests/web/live_verdict.mjs).  The verdict is checked in the store too.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
. tests/web/liverig.sh
trap liverig_cleanup EXIT INT TERM
fail() {
    echo "live_verdict_test: $*" >&2
    for f in daemon.log serve.out; do
        [ -f "$dir/$f" ] && { echo "--- $f" >&2; cat "$dir/$f" >&2; }
    done
    exit 1
}
command -v node >/dev/null || fail "node is not installed (make deps)"
[ -d tests/web/node_modules/playwright-core ] || fail "playwright-core is not installed (make deps)"
[ -x /usr/bin/chromium ] || fail "chromium is not installed (make deps)"
db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
rig_ini "$db" 3 "[pipeline]" "after_run = process, validate"
start_daemon "$db" || fail "the daemon did not start"
start_serve "$db" || fail "serve did not start"
timeout 120 node tests/web/live_verdict.mjs "$url" "$token" >"$dir/out" 2>&1 ||
    { cat "$dir/out" >&2; fail "the browser part failed"; }
cat "$dir/out"
n=$(sqlite3 "$db" "SELECT count(*) FROM validation WHERE run_id = 1")
[ "$n" = 4 ] || fail "run 1 has $n validations stored, expected 4"
grep -q 'run 1: pipeline: done' "$dir/daemon.log" || fail "the daemon's log does not end run 1's pipeline"
echo "live_verdict_test: run 1's 4 validations stored; the live page linked to it"
