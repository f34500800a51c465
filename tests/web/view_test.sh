#!/bin/sh
# tests/web/view_test.sh - the web view's rough edges in a real browser
# (tests/web/view.mjs says what it checks): the fixture database (17 runs
# imported, processed, validated) behind `prismlab serve`, no daemon.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
. tests/web/liverig.sh
trap liverig_cleanup EXIT INT TERM
fail() {
    echo "view_test: $*" >&2
    [ -f "$dir/serve.out" ] && { echo "--- serve.out" >&2; cat "$dir/serve.out" >&2; }
    exit 1
}
command -v node >/dev/null || fail "node is not installed (make deps)"
[ -d tests/web/node_modules/playwright-core ] || fail "playwright-core is not installed (make deps)"
[ -x /usr/bin/chromium ] || fail "chromium is not installed (make deps)"

db=$dir/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
$bin process --all --db "$db" >/dev/null 2>&1
$bin validate --all --db "$db" >/dev/null
start_serve "$db" || fail "serve did not start"
timeout 180 node tests/web/view.mjs "$url" "$dir" >"$dir/view.out" 2>&1 ||
    { cat "$dir/view.out" >&2; fail "the browser test failed"; }
cat "$dir/view.out"
