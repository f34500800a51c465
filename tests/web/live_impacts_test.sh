#!/bin/sh
# tests/web/live_impacts_test.sh - the live page shows the physics while
# the prism rolls, in a real browser (Debian's chromium, playwright-core):
# a rig with the simulator in real time (steel-38 on glass-0.4079, a 6 s
# run), its daemon searching for impacts while it records, and `prismlab
# serve --control`; tests/web/live_impacts.mjs arms it from the live page
# and checks that impacts are marked on the omega plot while the run
# records, with their ratio, and that the page's count at the stop is the
# daemon's; then the daemon is restarted with a rig naming no prism, and
# the same page, armed again, clears run 1's physics and says why run 2
# is not searched.  A screenshot goes to $WEB_SHOTS (default
# build/web-shots).
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
shots=${WEB_SHOTS:-build/web-shots}
dir=$(mktemp -d)
. tests/web/liverig.sh
trap liverig_cleanup EXIT INT TERM
fail() { liverig_fail live_impacts_test "$@"; }
need_browser
mkdir -p "$shots"
db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
rig_ini "$db" 6
start_daemon "$db" || fail "the daemon did not start"
start_serve "$db" || fail "serve did not start"
timeout 180 node tests/web/live_impacts.mjs "$url" "$token" "$shots" "$dir/sig" >"$dir/out" 2>&1 &
npid=$!
# the page has seen run 1 through: the daemon again, with no [run] prism
i=0
while [ ! -e "$dir/sig.swap" ] && kill -0 $npid 2>/dev/null && [ $i -lt 1200 ]; do
    sleep 0.1
    i=$((i + 1))
done
if [ -e "$dir/sig.swap" ]; then
    $bin acquire quit --config "$dir/rig.ini" >/dev/null
    wait $dpid || true
    rig_ini "$db" 3 "prism = steel-38" "ramp = glass-0.4079" "lambda0_deg = 4.5" "[run]" "prism ="
    start_daemon "$db" || fail "the second daemon did not start"
    : >"$dir/sig.swapped"
fi
wait $npid || { cat "$dir/out" >&2; fail "the browser part failed"; }
cat "$dir/out"
