#!/bin/sh
# tests/core/layering_test.sh - the one-way dependency rule (core <- db <-
# acquire, process, model; commands on top; SQLite only in db/).
#   1. the checker (tests/util/layering.sh) catches a planted violation of
#      every rule from synthetic dependency lists, names file and header,
#      and lets every allowed dependency pass;
#   2. it catches planted violations in real files through the compiler;
#   3. the tree itself keeps the rule (`make layering`).
set -u
checker=tests/util/layering.sh
fails=0
tmp=$(mktemp -d /tmp/prismlab-layering-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "layering_test: $*" >&2; fails=$((fails + 1)); }

# expect_pass DEPS... : each argument is one "file: deps" line
expect_pass() {
    printf '%s\n' "$@" | sh "$checker" check >"$tmp/out" 2>&1 ||
        bad "allowed, but refused: $* -> $(cat "$tmp/out")"
}
# expect_fail WANT DEPS... : refused, with a line containing WANT
expect_fail() {
    want=$1; shift
    if printf '%s\n' "$@" | sh "$checker" check >"$tmp/out" 2>&1; then
        bad "not caught: $*"
    elif ! grep -qF -- "$want" "$tmp/out"; then
        bad "caught, but without '$want': $(cat "$tmp/out")"
    fi
}

# 1. Every rule, one step over the line and the steps inside it.
expect_pass 'core/a.c: core/a.c core/error.h /usr/include/stdio.h'
expect_fail 'core/a.c sees db/store.h' 'core/a.c: core/a.c core/error.h db/store.h'
expect_pass 'db/run.c: db/run.c core/sample.h db/store.h /usr/include/sqlite3.h'
expect_fail 'db/run.c sees acquire/source.h' 'db/run.c: db/run.c acquire/source.h'
expect_fail 'db/run.c sees process/process.h' 'db/run.c: db/run.c process/process.h'
expect_pass 'acquire/record.c: acquire/record.c acquire/source.h db/run.h core/error.h'
expect_fail 'acquire/source.h sees acquire/sim/simrun.h' 'acquire/source.h: acquire/source.h acquire/sim/simrun.h'
expect_fail 'acquire/record.c sees model/prism/prism.h' 'acquire/record.c: acquire/record.c model/prism/prism.h'
expect_pass 'acquire/import.c sees process/releases.h' 'acquire/import.c: acquire/import.c process/releases.h'
expect_fail 'process/releases.c sees acquire/import.h' 'process/releases.c: process/releases.c acquire/import.h'
expect_pass 'acquire/sim/simrun.c: acquire/sim/simrun.c acquire/sim/rigsim.h acquire/source.h model/prism/prism.h db/run.h core/error.h'
expect_fail 'acquire/sim/simrun.c sees model/validate/validate.h' 'acquire/sim/simrun.c: acquire/sim/simrun.c model/validate/validate.h'
expect_fail 'acquire/sim/simrun.c sees model/seeds/dimer.h' 'acquire/sim/simrun.c: acquire/sim/simrun.c model/seeds/dimer.h'
expect_pass 'process/process.c: process/process.c process/spectral.h db/derived.h core/error.h'
expect_fail 'process/process.c sees model/prism/prism.h' 'process/process.c: process/process.c model/prism/prism.h'
expect_fail 'process/process.c sees acquire/source.h' 'process/process.c: process/process.c acquire/source.h'
expect_pass 'model/prism/match.c: model/prism/match.c model/prism/prism.h core/error.h'
expect_fail 'model/prism/match.c sees db/store.h' 'model/prism/match.c: model/prism/match.c db/store.h'
expect_fail 'model/prism/match.c sees model/seeds/body.h' 'model/prism/match.c: model/prism/match.c model/seeds/body.h'
expect_pass 'model/seeds/dimer.c: model/seeds/dimer.c model/seeds/body.h core/plot.h'
expect_fail 'model/seeds/dimer.c sees model/prism/prism.h' 'model/seeds/dimer.c: model/seeds/dimer.c model/prism/prism.h'
expect_pass 'model/validate/report.c: model/validate/report.c model/prism/match.h process/process.h db/validation.h core/plot.h'
expect_fail 'model/validate/report.c sees acquire/source.h' 'model/validate/report.c: model/validate/report.c acquire/source.h'
expect_fail 'model/validate/report.c sees model/seeds/dimer.h' 'model/validate/report.c: model/validate/report.c model/seeds/dimer.h'
expect_pass 'web/server.c: web/server.c web/trace.h model/validate/report.h acquire/daemon.h db/run.h core/error.h'
expect_fail 'web/server.c sees acquire/sim/simrun.h' 'web/server.c: web/server.c acquire/sim/simrun.h'
expect_fail 'web/trace.c sees /usr/include/sqlite3.h (only db/ may see SQLite)' 'web/trace.c: web/trace.c /usr/include/sqlite3.h'
expect_fail 'model/validate/report.c sees web/buf.h' 'model/validate/report.c: model/validate/report.c web/buf.h'
expect_pass 'model/sweep/engine.c: model/sweep/engine.c model/sweep/spec.h model/prism/prism.h model/seeds/dimer.h db/sweep.h core/cli.h'
expect_fail 'model/sweep/spec.c sees process/process.h' 'model/sweep/spec.c: model/sweep/spec.c process/process.h'
expect_fail 'model/sweep/spec.c sees model/validate/setup.h' 'model/sweep/spec.c: model/sweep/spec.c model/validate/setup.h'
# Commands (commands/, each composing the rooms below it) may include
# anything but SQLite; db/ alone sees sqlite3.h.  A command's file in a
# room is held to that room's rule: db/ and process/ never reach up into
# the model.
expect_pass 'commands/cmd_import.c: commands/cmd_import.c model/validate/report.h acquire/sim/simrun.h commands.h' \
            'commands/cmd_db.c: commands/cmd_db.c db/run.h model/validate/answer.h' \
            'prismlab.c: prismlab.c commands.h model/seeds/dimer.h' \
            'db/run.c: db/run.c db/sqlite_private.h /usr/include/sqlite3.h' \
            'tests/cli/cli_test.c: tests/cli/cli_test.c /usr/include/sqlite3.h'
expect_fail 'db/cmd_db.c sees model/validate/answer.h' \
            'db/cmd_db.c: db/cmd_db.c db/run.h model/validate/answer.h'
expect_fail 'process/cmd_process.c sees model/prism/prism.h' \
            'process/cmd_process.c: process/cmd_process.c model/prism/prism.h'
expect_fail 'acquire/import.c sees /usr/include/sqlite3.h (only db/ may see SQLite)' \
            'acquire/import.c: acquire/import.c db/store.h /usr/include/sqlite3.h'
expect_fail 'commands/cmd_export.c sees /usr/include/sqlite3.h' \
            'commands/cmd_export.c: commands/cmd_export.c /usr/include/sqlite3.h'
expect_fail 'prismlab.c sees /usr/include/sqlite3.h' 'prismlab.c: prismlab.c /usr/include/sqlite3.h'
expect_fail 'model/extra.c is in folder model, which has no rule' 'model/extra.c: model/extra.c core/error.h'
# The compiler's own format: continuation lines, "./" prefixes, the
# chain back to the header that does the include; an empty list is no pass.
expect_fail 'acquire/pump.c sees model/prism/prism.h through acquire/source.h' \
    'acquire/source.h: acquire/source.h \' ' ./model/prism/prism.h' \
    'acquire/pump.c: ./acquire/pump.c acquire/pump.h \' ' acquire/source.h \' ' model/prism/prism.h'
expect_fail 'no dependency rules' ''

# 2. Planted in real files, seen through the compiler.
mkdir -p "$tmp/src/core" "$tmp/src/db" "$tmp/src/acquire"
cp core/error.h "$tmp/src/core/"
cp db/store.h db/sqlite_private.h "$tmp/src/db/"
printf '#include "db/store.h"\n' >"$tmp/src/core/planted.c"
printf '#include "db/sqlite_private.h"\n' >"$tmp/src/acquire/leak.c"
printf '#include "db/sqlite_private.h"\n' >"$tmp/src/db/fine.c"
if (cd "$tmp/src" && sh "$OLDPWD/$checker" scan "${CC:-cc} -std=c11 -I." \
        core/planted.c acquire/leak.c db/fine.c db/sqlite_private.h) >"$tmp/out" 2>&1; then
    bad "planted violations not caught: $(cat "$tmp/out")"
else
    grep -q '^layering: core/planted.c sees db/store.h (core may include: core)$' "$tmp/out" ||
        bad "core/planted.c not named: $(cat "$tmp/out")"
    grep -q '^layering: acquire/leak.c sees /.*sqlite3.h through db/sqlite_private.h (only db/ may see SQLite)$' "$tmp/out" ||
        bad "acquire/leak.c not named: $(cat "$tmp/out")"
    grep -q 'db/fine.c' "$tmp/out" && bad "db/fine.c refused: $(cat "$tmp/out")"
    grep -q '^layering: 2 violations$' "$tmp/out" ||
        bad "expected 2 violations (db/store.h in core, sqlite3.h in acquire): $(cat "$tmp/out")"
fi

# 3. The tree itself.
make --no-print-directory -s layering >"$tmp/out" 2>&1 || bad "the tree breaks the rule:
$(cat "$tmp/out")"
cat "$tmp/out"

[ "$fails" -eq 0 ] || { echo "layering_test: $fails failure(s)" >&2; exit 1; }
echo "layering_test: every rule caught when broken; the tree keeps it"
