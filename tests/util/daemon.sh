# tests/util/daemon.sh - what a test that runs the recording daemon needs,
# read with `. tests/util/daemon.sh` after setting name= (the test's name,
# for its messages): bin, a scratch dir removed at exit (the daemon
# killed with it), db (a store with the bundled catalogue), fail() (the
# message, then the daemon's log), and
#   daemon_start CONFIG [SOCKET]  the daemon in the background, its log in
#                                 $dir/log, waiting for its socket
#   daemon_wait TEXT [TENTHS]     until the log holds TEXT (default 10 s)
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
