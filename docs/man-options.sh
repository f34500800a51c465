#!/bin/sh
# docs/man-options.sh - the man page's OPTIONS OF EACH COMMAND section, from
# each command's own --help (which is generated from the option table the
# parser reads, core/cli.h), so that the man page names every option the
# program takes.  tests/cli/manpage_test.sh fails when the section in
# docs/prismlab.1 differs from what this prints; after changing a
# command's options run
#     sh docs/man-options.sh bin/prismlab docs/prismlab.1
# which rewrites the section in place (between the BEGIN/END OPTIONS marks).
# docs/man-pages.sh, which writes each command's own page, runs this too.
set -eu
bin=${1:-bin/prismlab}
section() {
    printf '%s\n' '.\" BEGIN OPTIONS (docs/man-options.sh writes this section from --help)'
    echo '.SH OPTIONS OF EACH COMMAND'
    printf '%s\n' 'Every option of every command, as its \-\-help gives it.  Where a command' \
        'writes a file, \fB\-\fP is standard output.'
    for cmd in $("$bin" --help | awk '/^  [a-z]/ { print $1 }'); do
        echo ".SS prismlab $cmd"
        "$bin" "$cmd" --help | awk '
            function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); return s }
            /^  -/ {
                line = substr($0, 3)
                # the names and the value (up to two spaces), then the help
                n = match(line, /  +/)
                if (n) { names = substr(line, 1, n - 1); help = substr(line, n + RLENGTH) }
                else { names = line; help = "" }
                printf ".TP\n.B %s\n", esc(names)
                if (help != "") print esc(help)
                inopt = 1
                next
            }
            /^                        [^ ]/ && inopt {
                sub(/^ +/, ""); print esc($0); next
            }
            { inopt = 0 }'
    done
    printf '%s\n' '.\" END OPTIONS'
}
if [ $# -ge 2 ]; then
    man=$2
    tmp=$man.tmp
    awk '/^\.\\" BEGIN OPTIONS/ { exit } { print }' "$man" > "$tmp"
    section >> "$tmp"
    awk 'found { print } /^\.\\" END OPTIONS/ { found = 1 }' "$man" >> "$tmp"
    mv "$tmp" "$man"
else
    section
fi
