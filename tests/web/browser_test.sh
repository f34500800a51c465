#!/bin/sh
# tests/web/browser_test.sh - prismlab serve in a real browser, end to end:
# the fixture database (17 runs imported, processed, validated), a daemon
# recording from the rig simulator in real time on the same database, and
# `prismlab serve --control` over both; tests/web/browser.mjs drives
# Debian's chromium through the four pages (see its comment).  Then, on
# the daemon's side: the run recorded while 4 live pages streamed is
# complete, with no overrun (the daemon's no-loss promise), its frames
# tile without a gap (db check), and the daemon's log shows no loss.
# Screenshots go to $WEB_SHOTS (default build/web-shots; docs/figures for
# docs/web.md).
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
shots=${WEB_SHOTS:-build/web-shots}
dir=$(mktemp -d)
. tests/web/liverig.sh
trap liverig_cleanup EXIT INT TERM
fail() {
    echo "browser_test: $*" >&2
    for f in daemon.log serve.out; do
        [ -f "$dir/$f" ] && { echo "--- $f" >&2; cat "$dir/$f" >&2; }
    done
    exit 1
}
command -v node >/dev/null || fail "node is not installed (make deps)"
[ -d tests/web/node_modules/playwright-core ] || fail "playwright-core is not installed (make deps)"
[ -x /usr/bin/chromium ] || fail "chromium is not installed (make deps)"
mkdir -p "$shots"

db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
$bin process --all --db "$db" >/dev/null 2>&1
$bin validate --all --fit lambda0,t0,beta --db "$db" >/dev/null
fixture_runs=$(sqlite3 "$db" "SELECT count(*) FROM run")
# run 2 as processing records a run whose impacts and omega disagree
# (issue 44): the run page must show it suspect, with the fault in words
sqlite3 "$db" "UPDATE run_quality SET quality = 'suspect', faults = 'lattice_mismatch \
q_first=1.0000 q_last=0.9094 t_first_s=1.127 t_last_s=4.555 q_se=0.013 omega41_rad_s=4.6209 \
lattice_rad_s=8.0335' WHERE run_id = 2"

rig_ini "$db" 6
start_daemon "$db" || fail "the daemon did not start"
start_serve "$db" || fail "serve did not start"

timeout 240 node tests/web/browser.mjs "$url" "$token" "$shots" >"$dir/browser.out" 2>&1 ||
    { cat "$dir/browser.out" >&2; fail "the browser test failed"; }
cat "$dir/browser.out"
grep -q "^browser: runs page lists $fixture_runs runs" "$dir/browser.out" ||
    fail "the runs page did not list the $fixture_runs fixture runs"

# The daemon's side of the 4 live pages: the last run (started by a page's
# button) is complete, no overrun, frames without a gap, nothing lost.
last=$(sqlite3 "$db" "SELECT max(id) FROM run")
row=$(sqlite3 "$db" "SELECT state || ' ' || coalesce(overrun_frame, -1) || ' ' || n_frames FROM run WHERE id = $last")
set -- $row
[ "$1" = complete ] || fail "run $last (4 live pages) ended '$1'"
[ "$2" = -1 ] || fail "run $last (4 live pages): overrun at frame $2"
[ "$3" -ge 40000 ] || fail "run $last (4 live pages): only $3 frames"
grep -q "run $last: ended ([a-z ]*): $3 frames$" "$dir/daemon.log" ||
    fail "the daemon's log does not end run $last with its $3 frames and no loss"
$bin db check --db "$db" >/dev/null || fail "db check after the live runs"
echo "browser_test: run $last recorded while 4 live pages streamed: complete, $3 frames, no overrun; db check ok"
kill "$spid"
wait "$spid" 2>/dev/null || true
spid=
grep -q 'prismlab serve: stopped' "$dir/serve.out" || fail "serve did not stop cleanly on SIGTERM"
