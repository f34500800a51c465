# tests/util/daemon.sh - what a test that runs the recording daemon needs,
# read with `. tests/util/daemon.sh` after setting name= (the test's name,
# for its messages): bin, a scratch dir removed at exit (the daemon
# killed with it), db (a store with the bundled catalogue), fail() (the
# message, then the daemon's log), and
#   daemon_start CONFIG [SOCKET]  the daemon in the background, its log in
#                                 $dir/log, waiting for its socket
#   daemon_wait TEXT [TENTHS]     until the log holds TEXT (default 10 s)
#   daemon_answers CONFIG         until a daemon answers `status` on the
#                                 rig's socket (a killed daemon leaves its
#                                 socket file behind: its presence says
#                                 nothing), at most 10 s
#   daemon_rig                    $dir/rig.ini: the simulated rig of
#                                 tests/util/simrig.sh rolling steel-38 on
#                                 glass-0.4079 for up to 60 s (seed 2, paced)
#   daemon_until CONFIG TEXT TENTHS WHAT
#                                 until `status` holds TEXT; past TENTHS,
#                                 fail saying WHAT and the last status
# Not a test itself: the Makefile takes only *_test.sh.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() {
    echo "$name: $*" >&2
    if [ -f "$dir/log" ]; then cat "$dir/log" >&2; fi
    exit 1
}
db=$dir/d.db
sh tests/util/catalogdb.sh "$bin" "$db"

daemon_rig() {
    sh tests/util/simrig.sh "$db" >"$dir/rig.ini"
    printf '[run]\nprism = steel-38\nramp = glass-0.4079\nlambda0_deg = 4.5\nduration_s = 60\n' \
        >>"$dir/rig.ini"
    printf '[sim]\nseed = 2\npaced = 1\n' >>"$dir/rig.ini"
}

daemon_start() {
    sock=${2:-$(sed -n 's/^db = //p' "$1").sock}
    $bin acquire daemon --config "$1" ${2:+--socket "$2"} 2>"$dir/log" &
    pid=$!
    i=0
    while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    [ -S "$sock" ] || fail "the daemon did not listen on $sock"
}

daemon_wait() {
    i=0
    until grep -q "$1" "$dir/log"; do
        sleep 0.1; i=$((i + 1)); [ $i -lt "${2:-100}" ] || fail "no '$1' in the log"
    done
}

daemon_answers() {
    i=0
    until $bin acquire status --config "$1" >/dev/null 2>&1; do
        sleep 0.1; i=$((i + 1)); [ $i -lt 100 ] || fail "no daemon answers on $1's socket"
    done
}

daemon_until() {
    i=0
    until $bin acquire status --config "$1" | grep -q "$2"; do
        sleep 0.1; i=$((i + 1))
        [ $i -lt "$3" ] || fail "$4: $($bin acquire status --config "$1")"
    done
}
