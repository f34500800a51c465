#!/bin/sh
# tests/util/layering.sh - checks the one-way dependency rule between the
# source folders from the compiler's own dependency output.
#
#   sh tests/util/layering.sh scan "CC FLAGS" FILE...   run CC -M on each file
#   sh tests/util/layering.sh check < DEPS               check a make-style list
#
# `make layering` runs the scan over every library .c and .h with the
# build's flags.  Each violation is one line
#   layering: FILE sees HEADER (ROOM may include: ...)
# and the exit status is 1 when there is any.  -M, not -MM: -MM leaves out
# system headers, and sqlite3.h is one of the things the rule is about.
#
# The rule (docs/layout.md), by the folder ("room") of the file:
#   core/**                         core
#   db/**                           core, db, and the only room that may see sqlite3.h
#   acquire/** but acquire/sim/**   core, db, process, acquire
#   acquire/sim/**                  core, db, process, acquire, acquire/sim, model/prism
#   process/**                      core, db, process
#   model/prism/**                  core, model/prism
#   model/seeds/**                  core, model/seeds
#   model/validate/**               core, db, process, model/prism, model/validate
#   web/**                          core, db, acquire, process, model/prism,
#                                   model/validate, web (the browser's view of all)
#   model/sweep/**                  core, db, model/prism, model/seeds, model/sweep
#   commands/** (each command, which composes the rooms below it),
#     prismlab.c, command_main.c, prismlab_dimer_mpi.c, commands.h,
#     tests/**: anything but sqlite3.h
#     outside db/ (tests/** may use SQLite to look into a store)
# A file in a folder with no rule (model/x.c) is itself a violation: a new
# room needs a line here and in docs/layout.md.
set -eu

check() {
    # Joins continuation lines, then one record per rule "target: deps".
    sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' | awk '
    function room(p) {
        sub(/^\.\//, "", p)
        if (p ~ /^\//) return (p ~ /\/sqlite3\.h$/) ? "sqlite3.h" : ""
        if (p ~ /^acquire\/sim\//) return "acquire/sim"
        if (p ~ /^model\/(prism|seeds|validate|sweep)\//) {
            split(p, part, "/"); return "model/" part[2]
        }
        if (p ~ /^(core|db|acquire|process|model|web|commands|tests)\//) {
            split(p, part, "/"); return part[1]
        }
        return "top"
    }
    function allowed(r) {
        if (r == "core") return "core"
        if (r == "db") return "core db sqlite3.h"
        if (r == "acquire") return "core db process acquire"
        if (r == "acquire/sim") return "core db process acquire acquire/sim model/prism"
        if (r == "process") return "core db process"
        if (r == "model/prism") return "core model/prism"
        if (r == "model/seeds") return "core model/seeds"
        if (r == "model/validate") return "core db process model/prism model/validate"
        if (r == "web") return "core db acquire process model/prism model/validate web"
        if (r == "model/sweep") return "core db model/prism model/seeds model/sweep"
        return ""
    }
    function readable(list) {
        gsub(/ /, ", ", list); return list
    }
    /^[^:]+:/ {
        target = $1; sub(/:$/, "", target); sub(/^\.\//, "", target)
        r = room(target)
        files++
        if (r == "tests") next
        top = (r == "commands" || target == "prismlab.c" || target == "command_main.c" ||
               target == "prismlab_dimer_mpi.c" || target == "commands.h")
        ok = top ? "*" : allowed(r)
        if (ok == "") {
            nbad++; msg[nbad] = sprintf("%s is in folder %s, which has no rule " \
                "(tests/util/layering.sh, docs/layout.md)", target, r)
            next
        }
        ndeps[target] = 0
        for (i = 2; i <= NF; i++) {
            d = $i; sub(/^\.\//, "", d)
            dr = room(d)
            if (dr == "" || d == target || seen[target, d]++) continue
            dep[target, ++ndeps[target]] = d
            if (dr == "sqlite3.h" && r != "db")
                why = "only db/ may see SQLite"
            else if (ok != "*" && dr != "sqlite3.h" && index(" " ok " ", " " dr " ") == 0)
                why = sprintf("%s may include: %s", r, readable(ok))
            else
                continue
            bad[target, d] = 1
            nbad++; vt[nbad] = target; vd[nbad] = d; msg[nbad] = why
        }
    }
    # The first header of t, itself allowed there, that brings d in (when
    # that header was scanned too): where the include to change really is.
    function through(t, d,    k, h) {
        for (k = 1; k <= ndeps[t]; k++) {
            h = dep[t, k]
            if (h != d && !bad[t, h] && seen[h, d]) return " through " h
        }
        return ""
    }
    END {
        for (k = 1; k <= nbad; k++)
            if (k in vt)
                printf "layering: %s sees %s%s (%s)\n", vt[k], vd[k], through(vt[k], vd[k]), msg[k]
            else
                printf "layering: %s\n", msg[k]
        if (nbad) { printf "layering: %d violation%s\n", nbad, nbad == 1 ? "" : "s"; exit 1 }
        if (!files) { print "layering: no dependency rules in the input"; exit 1 }
        printf "layering: %d files keep the one-way rule\n", files
    }'
}

scan() {
    cc=$1
    shift
    for f in "$@"; do
        case $f in *.h) lang="-x c-header" ;; *) lang="" ;; esac
        # shellcheck disable=SC2086 # cc and lang are word lists
        $cc $lang -M -MT "$f" "$f" || { echo "layering: cannot preprocess $f" >&2; exit 2; }
    done | check
}

case ${1:-} in
    check) check ;;
    scan) shift; [ $# -ge 2 ] || { echo "usage: $0 scan \"CC FLAGS\" FILE..." >&2; exit 2; }; scan "$@" ;;
    *) echo "usage: $0 scan \"CC FLAGS\" FILE... | $0 check < DEPS" >&2; exit 2 ;;
esac
