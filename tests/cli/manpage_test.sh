#!/bin/sh
# tests/cli/manpage_test.sh - the man page against --help (issue 17 item
# 7): its OPTIONS OF EACH COMMAND section is what docs/man-options.sh
# makes from every command's --help today (every option, with its help);
# every command of 'prismlab --help' and every acquire action has an entry
# under COMMANDS; groff reads the page without a warning.  Each command's
# own page, docs/man/prismlab-CMD.1 (issue 47): its generated part (NAME,
# SYNOPSIS, DESCRIPTION, OPTIONS, SUBCOMMANDS) is what docs/man-pages.sh
# makes from the command's --help today; every command has one; each has
# hand-written EXAMPLES and SEE ALSO; groff reads each without a warning;
# prismlab.1's COMMANDS names each page; the generator run again changes
# no page; make install installs them all.
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
pages=0
for cmd in $("$bin" --help | awk '/^  [a-z]/ { print $1 }'); do
    page=docs/man/prismlab-$cmd.1
    [ -f "$page" ] || fail "'$cmd' has no page $page (run: sh docs/man-pages.sh $bin, then write its EXAMPLES)"
    sh docs/man-pages.sh "$bin" --print "$cmd" > "$dir/want"
    sed -n '/^\.\\" BEGIN GENERATED/,/^\.\\" END GENERATED/p' "$page" > "$dir/have"
    diff "$dir/have" "$dir/want" > "$dir/diff" ||
        fail "$page differs from 'prismlab $cmd --help' (run: sh docs/man-pages.sh $bin):
$(head -20 "$dir/diff")"
    # the hand-written part, after the generated one
    sed '1,/^\.\\" END GENERATED/d' "$page" > "$dir/hand"
    grep -q '^\.SH EXAMPLES' "$dir/hand" || fail "$page has no EXAMPLES"
    [ "$(sed -n '/^\.SH EXAMPLES/,/^\.SH [^E]/p' "$dir/hand" | grep -c '^prismlab\|^\.B prismlab\|^mpirun\|^srun')" -gt 0 ] ||
        fail "$page: EXAMPLES holds no command line"
    grep -q '^\.SH SEE ALSO' "$dir/hand" || fail "$page has no SEE ALSO"
    ename=$(printf '%s' "prismlab-$cmd" | sed 's/-/\\-/g')
    grep -qF ".BR $ename (1)" "$dir/commands" ||
        fail "docs/prismlab.1's COMMANDS does not name prismlab-$cmd(1) (.BR $ename (1))"
    pages=$((pages + 1))
done
# the generator in rewrite mode, on a copy: the pages as they are (the
# hand-written parts kept, the generated ones the same)
mkdir "$dir/copy"
cp -r docs/man docs/man-pages.sh docs/man-options.sh docs/prismlab.1 "$dir/copy/"
sh "$dir/copy/man-pages.sh" "$bin"
diff -r docs/man "$dir/copy/man" > "$dir/diff" && diff docs/prismlab.1 "$dir/copy/prismlab.1" >> "$dir/diff" ||
    fail "sh docs/man-pages.sh $bin changes the pages:
$(head -20 "$dir/diff")"
for page in docs/man/prismlab-*.1; do
    cmd=${page#docs/man/prismlab-}; cmd=${cmd%.1}
    "$bin" --help | grep -q "^  $cmd " || fail "$page: '$cmd' is no command of prismlab --help"
done
if command -v groff >/dev/null; then
    for page in "$man" docs/man/prismlab-*.1; do
        groff -man -z -ww "$page" 2> "$dir/warn" || true
        [ ! -s "$dir/warn" ] || fail "groff: $page: $(head -5 "$dir/warn")"
    done
fi
# make install puts the documents --help points to beside the man page
make -s install DESTDIR="$dir/root" PREFIX=/usr >/dev/null
for f in bin/prismlab libexec/prismlab/prismlab-dimer-mpi share/man/man1/prismlab.1 share/doc/prismlab/README.md \
    share/doc/prismlab/docs/README.md share/doc/prismlab/docs/validation.md \
    share/doc/prismlab/docs/data-model.md share/doc/prismlab/docs/acquire.md \
    share/doc/prismlab/docs/guide.md share/doc/prismlab/docs/measurements.md \
    $(cd docs/man && ls prismlab-*.1 | sed 's,^,share/man/man1/,'); do
    [ -s "$dir/root/usr/$f" ] || fail "make install did not install $f"
done
echo "manpage_test: $options options of $("$bin" --help | awk '/^  [a-z]/' | wc -l) commands, as --help gives them;" \
    "$pages pages prismlab-CMD(1) as --help gives them, each with EXAMPLES"
