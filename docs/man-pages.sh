#!/bin/sh
# docs/man-pages.sh - one man page per command, docs/man/prismlab-CMD.1, as
# git has git-commit(1) beside git(1).  Each page's NAME, SYNOPSIS,
# DESCRIPTION, OPTIONS and SUBCOMMANDS are written from the command's own
# --help (core/cli.c prints it from the option table the parser reads), so
# they cannot drift from the program; tests/cli/manpage_test.sh fails when
# they differ from what this script makes now.  After changing a command's
# options or help run
#     sh docs/man-pages.sh bin/prismlab
# which rewrites, in every page, only the part between the BEGIN GENERATED
# and END GENERATED marks; the EXAMPLES, SEE ALSO and any prose below the
# END mark are written by hand and kept.  It also rewrites docs/prismlab.1's
# OPTIONS OF EACH COMMAND (docs/man-options.sh).
#     sh docs/man-pages.sh bin/prismlab --print CMD
# prints what the generated part of CMD's page should be (the test's view).
set -eu
bin=${1:-bin/prismlab}
dir=$(dirname "$0")/man
begin='.\" BEGIN GENERATED (docs/man-pages.sh writes this part from --help; edit below END GENERATED)'
end='.\" END GENERATED'

# A --help as man source.  MAIN (optional) is the command's own --help when
# rendering one of its subcommands: what the subcommand's help repeats of it
# (the shared usage, the same paragraphs) is left out.  Text paragraphs and
# lists ("  init    create ...") go to DESCRIPTION, option lines ("  --x",
# continued at column 25) and the headings over them ("set:") to OPTIONS.
render() { # HELP-FILE SECTION-MACRO [MAIN-HELP-FILE]
    awk -v helpfile="$1" -v sect="$2" -v mainfile="${3:-}" '
        function esc(s) {
            gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
            if (s ~ /^[.\047]/) s = "\\&" s
            return s
        }
        function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
        # the usage block (up to the first blank line) and the text paragraphs
        function parse(file, arr,    line, n, u, p, para, inu) {
            n = 0; inu = 1; para = ""
            while ((getline line < file) > 0) {
                arr[++n] = line
                if (inu) { if (line == "") inu = 0; else u = u line "\n"; continue }
                if (line ~ /^[^ ]/) para = para line "\n"
                else { if (para != "") paras[file, para] = 1; para = "" }
            }
            if (para != "") paras[file, para] = 1
            close(file)
            usage[file] = u
            return n
        }
        function item(line, kind,    n, names, help) {
            line = substr(line, 3)
            n = match(line, /  +/)
            if (n) { names = substr(line, 1, n - 1); help = substr(line, n + RLENGTH) }
            else { names = line; help = "" }
            out[kind] = out[kind] ".TP\n.B " esc(names) "\n" (help != "" ? esc(help) "\n" : "")
        }
        BEGIN {
            n = parse(helpfile, L)
            if (mainfile != "") parse(mainfile, M)
            i = 1
            # SYNOPSIS: the usage lines, their alignment kept
            syn = ""
            for (; i <= n && L[i] != ""; i++) {
                s = L[i]
                if (s ~ /^usage: /) s = substr(s, 8)
                else if (s ~ /^       /) s = substr(s, 8)
                else s = trim(s)
                syn = syn esc(s) "\n"
            }
            if (mainfile == "" || usage[helpfile] != usage[mainfile])
                out["syn"] = ".nf\n" syn ".fi\n"
            kind = ""; para = ""
            for (; i <= n; i++) {
                s = L[i]
                if (s == "") { kind = ""; continue }
                if (s ~ /^  -/) { item(s, "opt"); kind = "opt"; continue }
                if (s ~ /^   +[^ ]/ && kind != "") {
                    k = kind == "opt" ? "opt" : "desc"
                    out[k] = out[k] esc(trim(s)) "\n"; continue
                }
                if (s ~ /^[^ ].*:$/ && L[i + 1] ~ /^  -/) {
                    out["opt"] = out["opt"] ".PP\n.I " esc(s) "\n"; kind = ""; continue
                }
                if (s ~ /^  [^ ]/) {
                    item(s, "desc"); kind = "desc-item"; continue
                }
                # a text paragraph: kept whole, or left out when the main
                # help says it already
                if (kind != "text") {
                    para = ""
                    for (j = i; j <= n && L[j] ~ /^[^ ]/ && !(L[j] ~ /:$/ && L[j + 1] ~ /^  -/); j++)
                        para = para L[j] "\n"
                    skip = mainfile != "" && ((mainfile, para) in paras)
                    if (!skip) out["desc"] = out["desc"] (out["desc"] != "" ? ".PP\n" : "")
                    kind = "text"
                }
                if (!skip) out["desc"] = out["desc"] esc(trim(s)) "\n"
            }
            if (mainfile == "") {
                printf ".SH SYNOPSIS\n%s", out["syn"]
                if (out["desc"] != "") printf ".SH DESCRIPTION\n%s", out["desc"]
                if (out["opt"] != "") printf ".SH OPTIONS\n%s", out["opt"]
            } else {
                printf "%s\n", sect
                if (out["syn"] != "") printf "%s", out["syn"]
                if (out["desc"] != "") printf ".PP\n%s", out["desc"]
                if (out["opt"] != "") printf ".PP\nOptions:\n%s", out["opt"]
            }
        }'
}

commands() { "$bin" --help | awk '/^  [a-z]/ { print $1 }'; }

# The generated part of CMD's page, marks included.
generated() { # CMD
    cmd=$1
    tmp=$(mktemp -d)
    "$bin" "$cmd" --help > "$tmp/main" 2>&1
    about=$("$bin" --help | awk -v c="$cmd" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
    upper=$(printf '%s' "$cmd" | tr a-z A-Z)
    printf '%s\n' "$begin"
    printf '.TH PRISMLAB\\-%s 1 "" "prismlab" "prismlab manual"\n' "$(printf '%s' "$upper" | sed 's/-/\\-/g')"
    printf '.SH NAME\nprismlab\\-%s \\- %s\n' "$(printf '%s' "$cmd" | sed 's/-/\\-/g')" "$(printf '%s' "$about" | sed 's/\\/\\e/g; s/-/\\-/g')"
    render "$tmp/main" ""
    # Subcommands with a --help of their own, one subsection each; those
    # with the same help (acquire arm, start, stop, ...) share one.
    subs=$(awk -v c="$cmd" '
        { for (i = 1; i < NF; i++) if ($i == "prismlab" && $(i + 1) == c) {
              w = $(i + 2)
              if (w ~ /^[a-z][a-z|]*$/) { n = split(w, a, "|"); for (k = 1; k <= n; k++) print a[k] }
          } }
        /^$/ { exit }' "$tmp/main")
    first=1
    for sub in $subs; do
        "$bin" "$cmd" "$sub" --help > "$tmp/sub" 2>&1 || true
        cmp -s "$tmp/sub" "$tmp/main" && continue
        seen=
        for f in "$tmp"/done.*; do
            [ -e "$f" ] && cmp -s "$tmp/sub" "$f" && { seen=$f; break; }
        done
        if [ -n "$seen" ]; then
            echo "$sub" >> "$seen.names"
            continue
        fi
        cp "$tmp/sub" "$tmp/done.$sub"
        echo "$sub" > "$tmp/done.$sub.names"
        echo "$sub" >> "$tmp/order"
    done
    if [ -s "$tmp/order" ] 2>/dev/null; then
        echo '.SH SUBCOMMANDS'
        while read -r sub; do
            names=$(awk -v c="$cmd" 'BEGIN { ORS = "" } { print (NR > 1 ? ", " : "prismlab " c " ") $0 }' "$tmp/done.$sub.names")
            render "$tmp/done.$sub" ".SS $(printf '%s' "$names" | sed 's/-/\\-/g')" "$tmp/main"
        done < "$tmp/order"
    fi
    printf '%s\n' "$end"
    rm -rf "$tmp"
}

if [ "${2:-}" = --print ]; then
    generated "$3"
    exit 0
fi
mkdir -p "$dir"
for cmd in $(commands); do
    page=$dir/prismlab-$cmd.1
    new=$page.tmp
    if [ -f "$page" ]; then
        # the marks through the environment: awk -v would read their \"
        MARK=$begin awk '$0 == ENVIRON["MARK"] { exit } { print }' "$page" > "$new"
        generated "$cmd" >> "$new"
        MARK=$end awk 'found { print } $0 == ENVIRON["MARK"] { found = 1 }' "$page" >> "$new"
    else
        # a new command: its hand-written part (EXAMPLES, SEE ALSO) is still
        # to write, and the test says so until it is
        printf '.\\" docs/man/prismlab-%s.1 - generated from --help between the marks; the rest by hand.\n' "$cmd" > "$new"
        generated "$cmd" >> "$new"
    fi
    mv "$new" "$page"
done
sh "$(dirname "$0")/man-options.sh" "$bin" "$(dirname "$0")/prismlab.1"
