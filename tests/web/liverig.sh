# tests/web/liverig.sh - sourced by the web tests and benches: a rig whose
# source is the simulator in real time, its daemon, and prismlab serve
# --control over its database.  The caller sets bin and dir, then
# `trap liverig_cleanup EXIT INT TERM`.
#   rig_ini DB DURATION_S [SIM LINES...]  writes $dir/rig.ini (at
#                                         $rig_rate_hz, default 10000)
#   start_daemon DB                       daemon in the background: $dpid
#   start_serve DB                        serve in the background: $spid,
#                                         $url, $token
#   liverig_fail TEST MESSAGE...          says why TEST failed, with the
#                                         daemon's and serve's logs; exits 1
#   need_browser                          fails (through the caller's
#                                         fail) without node,
#                                         playwright-core or chromium
dpid=
spid=
# stops what was started and removes $dir
liverig_cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null || true
    [ -n "$dpid" ] && kill "$dpid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$dir"
}

rig_ini() {
    rdb=$1 rdur=$2
    shift 2
    {
        printf '[daq]\nsource = sim\nrate_hz = %s\n' "${rig_rate_hz:-10000}"
        printf '[beams]\nh1_m = 0.0199\nh2_m = 0.0116\nsign1 = 1\nsign2 = -1\nldv_scale_mps_per_v = 0.025\n'
        printf '[store]\ndb = %s\n' "$rdb"
        printf '[run]\nprism = steel-38\nramp = glass-0.4079\nexperiment = live\nlambda0_deg = 4.5\nduration_s = %s\n' "$rdur"
        printf '[sim]\nseed = 2\npaced = 1\n'
        for l in "$@"; do printf '%s\n' "$l"; done
    } >"$dir/rig.ini"
}

start_daemon() {
    $bin acquire daemon --config "$dir/rig.ini" 2>"$dir/daemon.log" &
    dpid=$!
    i=0
    while [ ! -S "$1.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    [ -S "$1.sock" ]
}

start_serve() {
    $bin serve --db "$1" --listen 127.0.0.1:0 --control >"$dir/serve.out" 2>&1 &
    spid=$!
    i=0
    while ! grep -qs 'control token' "$dir/serve.out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    url=$(sed -n 's/^prismlab serve: \(http[^ ]*\) .*/\1/p' "$dir/serve.out")
    token=$(sed -n 's/^prismlab serve: control token \([0-9a-f]*\) .*/\1/p' "$dir/serve.out")
    [ -n "$url" ] && [ -n "$token" ]
}

liverig_fail() {
    ftest=$1
    shift
    echo "$ftest: $*" >&2
    for f in daemon.log serve.out; do
        [ -f "$dir/$f" ] && { echo "--- $f" >&2; cat "$dir/$f" >&2; }
    done
    exit 1
}

need_browser() {
    command -v node >/dev/null || fail "node is not installed (make deps)"
    [ -d tests/web/node_modules/playwright-core ] || fail "playwright-core is not installed (make deps)"
    [ -x /usr/bin/chromium ] || fail "chromium is not installed (make deps)"
}
