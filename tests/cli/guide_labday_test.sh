#!/bin/sh
# tests/cli/guide_labday_test.sh - docs/guide.md's lab day works as written
# (issue 47): the rig.ini block and the commands of the block marked
# "# lab-day" are taken from the guide and run in an empty folder with the
# rig simulator, prismlab on PATH.  A newcomer following them must reach a
# verdict: the status loop ends on verdict_run=1, 'run show 1' prints the
# line-impact law (the simulator rolls the prism by it), the report is
# written, and the run page served by the day's 'prismlab serve' shows the
# verdict and lambda0 in a browser (chromium: the page's script fills its
# Validation section in from /api/run/1/answer).  One change to the
# commands: serve listens on a free port (--listen 127.0.0.1:0), not 8080,
# which another program may hold on a shared machine.  The commands run in a process group of their own, ended
# at exit, so the daemon and serve they start in the background go with it.
set -eu
name=guide_labday_test
src=${PRISMLAB_SRC:-.}
bin=${PRISMLAB_BIN:-bin/prismlab}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
guide=$src/docs/guide.md
dir=$(mktemp -d)
lpid=
cleanup() {
    if [ -n "$lpid" ]; then kill -TERM "-$lpid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() {
    echo "$name: $*" >&2
    for f in out err daemon.log; do
        [ -s "$dir/day/$f" ] && { echo "--- $f" >&2; tail -30 "$dir/day/$f" >&2; }
    done
    exit 1
}
[ -f "$guide" ] || fail "no $guide"
# a fenced block of the guide, by its first line's beginning
block() {
    awk -v first="$1" '
        /^```/ { if (inb) { if (take) exit; inb = 0; next } inb = 1; start = 1; next }
        inb && start { start = 0; take = index($0, first) == 1 }
        inb && take { print }' "$guide"
}
mkdir "$dir/day" "$dir/bin"
block '; rig.ini' > "$dir/day/rig.ini"
block '# lab-day' > "$dir/lab-day.sh"
[ -s "$dir/day/rig.ini" ] || fail "the guide has no rig.ini block (one starting '; rig.ini')"
grep -q '^prismlab acquire arm' "$dir/lab-day.sh" || fail "the guide's lab-day block does not arm the daemon"
grep -q '^prismlab serve &$' "$dir/lab-day.sh" || fail "the lab-day block does not start 'prismlab serve &'"
sed -i 's|^prismlab serve &$|prismlab serve --listen 127.0.0.1:0 \&|' "$dir/lab-day.sh"
ln -s "$bin" "$dir/bin/prismlab"

# as written, under a time limit: the simulated run is 8 s in real time
cd "$dir/day"
PATH=$dir/bin:$PATH setsid sh -eu "$dir/lab-day.sh" > out 2> err &
lpid=$!
i=0
while kill -0 "$lpid" 2>/dev/null && [ -n "$(ps -o stat= -p "$lpid" | grep -v Z)" ]; do
    sleep 1
    i=$((i + 1))
    [ $i -lt 300 ] || fail "the lab day did not end in 300 s"
done
rc=0
wait "$lpid" || rc=$?
[ "$rc" = 0 ] || fail "the lab day's commands ended with status $rc"

grep -q 'verdict_run=1' out || fail "the status loop did not print verdict_run=1"
grep -q '^verdict: *line-impact law (t = ' out || fail "run show 1 prints no verdict of the line-impact law: $(grep '^verdict' out)"
grep -q '^lambda0 line: .* +- .* deg (1 sd; 95 %' out || fail "run show 1 prints no lambda0 +- (1 sd)"
grep -Eq '^quality: *(good|degraded)' out || fail "run show 1: the quality is neither good nor degraded: $(grep '^quality' out)"
[ -s report/index.html ] || fail "the report was not written to report/index.html"
url=$(sed -n 's|^prismlab serve: \(http://127\.0\.0\.1:[0-9]*/\).*|\1|p' out)
[ -n "$url" ] || fail "serve printed no address"
# the run page as a browser shows it (Debian's chromium, as the web tests
# use): its Validation section is filled in by the page's script
browse() { # URL OUT
    mkdir -p "$dir/profile"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$dir/profile" \
        --virtual-time-budget=30000 --dump-dom "$1" > "$2" 2> "$2.err" ||
        fail "chromium could not open $1: $(tail -3 "$2.err")"
}
browse "${url}run/1" page.html
grep -q '<th>verdict</th><td><b>line-impact law</b>' page.html ||
    fail "the run page shows no verdict: $(grep -o 'Validation.\{0,300\}' page.html | head -1)"
grep -q 'line law</th><td>[0-9.]* ± [0-9.]* deg (1 sd; 95 %' page.html ||
    fail "the run page shows no lambda0 +- (1 sd) for the line law"
browse "$url" runs.html
grep -Eq 'badge q-(good|degraded)' runs.html || fail "the runs list shows no quality badge for run 1"
echo "$name: the guide's lab day ($(grep -vc "^#" "$dir/lab-day.sh") commands) reached the verdict" \
    "'$(sed -n 's/^verdict: *\(line-impact law\).*/\1/p' out)' in $i s; run show, the report and the run page in chromium show it"
