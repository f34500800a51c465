#!/bin/sh
# tests/cli/manpage_test.sh - the man page against --help (issue 17 item
# 7): its OPTIONS OF EACH COMMAND section is what docs/man-options.sh
# makes from every command's --help today (every option, with its help);
# every command of 'prismlab --help' and every acquire action has an entry
# under COMMANDS; groff reads the page without a warning.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
man=docs/prismlab.1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "manpage_test: $*" >&2; exit 1; }

sh docs/man-options.sh "$bin" > "$dir/want"
sed -n '/^\.\\" BEGIN OPTIONS/,/^\.\\" END OPTIONS/p' "$man" > "$dir/have"
diff "$dir/have" "$dir/want" > "$dir/diff" ||
    fail "docs/prismlab.1 differs from the commands' --help (run: sh docs/man-options.sh $bin $man):
$(head -20 "$dir/diff")"
options=$(grep -c '^\.TP' "$dir/want")
[ "$options" -gt 100 ] || fail "only $options options listed"

sed -n '/^\.SH COMMANDS/,/^\.\\" BEGIN OPTIONS/p' "$man" > "$dir/commands"
for cmd in $("$bin" --help | awk '/^  [a-z]/ { print $1 }'); do
    grep -q "^\.B $cmd\b" "$dir/commands" || fail "COMMANDS has no entry for '$cmd'"
done
for action in record daemon arm start stop status; do
    grep -q "^\.B acquire $action\b" "$dir/commands" || fail "COMMANDS has no entry for 'acquire $action'"
done
if command -v groff >/dev/null; then
    groff -man -z -ww "$man" 2> "$dir/warn" || true
    [ ! -s "$dir/warn" ] || fail "groff: $(head -5 "$dir/warn")"
fi
# make install puts the documents --help points to beside the man page
make -s install DESTDIR="$dir/root" PREFIX=/usr >/dev/null
for f in bin/prismlab libexec/prismlab/prismlab-dimer-mpi share/man/man1/prismlab.1 share/doc/prismlab/README.md \
    share/doc/prismlab/docs/README.md share/doc/prismlab/docs/validation.md \
    share/doc/prismlab/docs/data-model.md share/doc/prismlab/docs/acquire.md; do
    [ -s "$dir/root/usr/$f" ] || fail "make install did not install $f"
done
echo "manpage_test: $options options of $("$bin" --help | awk '/^  [a-z]/' | wc -l) commands, as --help gives them"
