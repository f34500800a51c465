#!/bin/sh
# tests/cli/readme_test.sh - the README as issue 47 asks for it: at most 150
# lines, no dates (a measured figure goes with its date and machine into
# docs/measurements.md, where make bench's figures are kept), the two
# commands a newcomer types exactly as .ci/run relies on, and its pointers
# (the guide, the man pages, docs/README.md, measurements.md) to files that
# exist; docs/README.md's links lead to files that exist.
set -eu
name=readme_test
src=${PRISMLAB_SRC:-.}
fail() { echo "$name: $*" >&2; exit 1; }
readme=$src/README.md
lines=$(wc -l < "$readme")
[ "$lines" -le 150 ] || fail "README.md has $lines lines, more than 150"
dates=$(grep -nE '\b(19|20)[0-9]{2}-[0-9]{2}(-[0-9]{2})?\b|\b(19|20)[0-9]{2}\b|(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* [0-9]' "$readme" || true)
[ -z "$dates" ] || fail "README.md holds dates (move the figure to docs/measurements.md): $dates"
grep -qx '    make demo     # install what is needed, build, run the pipeline on the bundled fixtures' "$readme" ||
    fail "README.md lost its 'make demo' line"
grep -qx '    make check    # install what is needed, build, run every test (plain and under ASan+UBSan)' "$readme" ||
    fail "README.md lost its 'make check' line"
grep -q '^make check$' "$src/.ci/run" || fail ".ci/run no longer runs the README's 'make check'"
for f in docs/guide.md docs/README.md docs/measurements.md docs/man-pages.sh docs/man/prismlab-run.1; do
    grep -qF "${f#docs/man/}" "$readme" || grep -qF "$f" "$readme" || fail "README.md does not point to $f"
    [ -f "$src/$f" ] || fail "README.md points to $f, which does not exist"
done
for link in $(sed -n 's/.*](\([^)#]*\)).*/\1/p' "$src/docs/README.md"); do
    [ -f "$src/docs/$link" ] || fail "docs/README.md links to $link, which does not exist"
done
grep -q 'make bench' "$src/docs/measurements.md" || fail "docs/measurements.md does not say make bench prints its figures"
echo "$name: README.md $lines lines, no dates, its two commands and its pointers in place"
