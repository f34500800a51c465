#!/bin/sh
# tests/acquire/terminal_test.sh - what a user sees on a terminal (issue
# 17 item 7): `acquire record` ended by the simulated run (no --duration
# reached) once left its "recording: N s" line open, so the result line
# ran into it; and `process` over several runs draws a progress bar that
# must be gone before each result line.  Runs the commands under a real
# pseudo-terminal (script(1)) and reads what it got.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "terminal_test: $*" >&2; exit 1; }
command -v script >/dev/null || { echo "terminal_test: no script(1), skipped"; exit 0; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
sh tests/util/simrig.sh "$db" >"$dir/rig.ini"
cat >>"$dir/rig.ini" <<INI
[run]
prism = steel-38
ramp = glass-0.4079
lambda0_deg = 4.5
duration_s = 60
INI
# the simulated run ends long before 60 s: the line must still be ended
script -qec "$bin acquire record --config $dir/rig.ini" "$dir/rec.tty" >/dev/null 2>&1 ||
    fail "acquire record failed: $(tr '\r' '\n' < "$dir/rec.tty" | tail -3)"
tr -d '\r' < "$dir/rec.tty" | grep -q '^run=' || fail "the result line does not start a line: $(cat -A "$dir/rec.tty" | tail -3)"
grep -q 'recording: ' "$dir/rec.tty" || fail "no progress line on the terminal"
# process over several runs: no result line after a half-drawn bar
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
script -qec "$bin process 2 3 4 --db $db" "$dir/proc.tty" >/dev/null 2>&1 || true
# render the lines as a terminal shows them: '\r' returns to the start,
# ESC[K erases the rest of the line; a result line must show alone
python3 - "$dir/proc.tty" <<'PY' || fail "process: $(cat -A "$dir/proc.tty" | head -8)"
import sys
shown = []
for raw in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n"):
    screen = ""
    for seg in raw.split("\r"):
        if seg.startswith("\x1b[K"):
            screen = seg[3:]
        else:
            screen = seg + screen[len(seg):]
    shown.append(screen)
results = [l for l in shown if "run=" in l]
assert len(results) == 3, shown
assert all(l.startswith("run=") for l in results), results
PY
echo "terminal_test: ok"
