#!/bin/sh
# tests/cli/guide_messages_test.sh - docs/guide.md explains every data-quality
# fault the code can record (issue 47): the kinds db/quality.c puts in words
# (pl_fault_describe) and those process/ and the store write (fault(r,
# "KIND ..."), pl_fault_init(..., "KIND")), each as `KIND` in the guide's
# table of faults; every quality word (good, degraded, suspect, refused) as
# `WORD` in its table of quality; and validation's verdict and flag words
# (model/validate/answer.c) in the guide.  A fault kind added to the code
# without a line in the guide fails here.
set -eu
name=guide_messages_test
src=${PRISMLAB_SRC:-.}
guide=$src/docs/guide.md
fail() { echo "$name: $*" >&2; exit 1; }
[ -f "$guide" ] || fail "no $guide"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

# the guide's tables, by their headings
section() { awk -v h="$1" '/^#/ { on = index($0, h) > 0; next } on' "$guide"; }
section '### Faults' > "$dir/faults"
section '## Data quality' > "$dir/quality"
[ -s "$dir/faults" ] || fail "the guide has no '### Faults' section"

{
    sed -n 's/.*strcmp(k, "\([a-z0-9_]*\)").*/\1/p' "$src/db/quality.c"
    grep -ho 'fault(r, "[a-z0-9_]*' "$src"/process/*.c | sed 's/.*"//'
    grep -rho 'pl_fault_init([^,]*, "[a-z0-9_]*"' "$src"/db "$src"/process "$src"/acquire \
        "$src"/model 2>/dev/null | sed 's/.*"\([a-z0-9_]*\)"/\1/'
} | sort -u > "$dir/kinds"
n=$(grep -c . "$dir/kinds")
[ "$n" -ge 15 ] || fail "only $n fault kinds found in the code: $(tr '\n' ' ' < "$dir/kinds")"
missing=
while read -r kind; do
    grep -q "^| \`$kind\` |" "$dir/faults" || missing="$missing $kind"
done < "$dir/kinds"
[ -z "$missing" ] || fail "fault kinds in the code that docs/guide.md's '### Faults' table does not explain:$missing"

for word in good degraded suspect refused; do
    grep -q "^| \`$word\` |" "$dir/quality" || fail "the quality word '$word' has no row in the guide's '## Data quality'"
done
# the words validation prints, as the code spells them
for w in $(sed -n 's/.*case PL_VERDICT_[A-Z]*: return "\([^"]*\)";.*/\1/p; s/.*default: return "\(none[^"]*\)";.*/\1/p' \
        "$src/model/validate/answer.c" | tr ' ' '~'); do
    w=$(echo "$w" | tr '~' ' ')
    grep -qF "$w" "$guide" || fail "validation's verdict '$w' is not in the guide"
done
for w in "at its bound" "undetermined" "not determined by this run" "does not fit" "neither law fits run"; do
    grep -qF "$w" "$src"/commands/cmd_db.c "$src"/model/validate/*.c ||
        fail "'$w' is no longer in the code: update the test and the guide"
    grep -qF "$w" "$guide" || fail "validation's '$w' is not in the guide"
done
echo "$name: all $n fault kinds of the code, the 4 quality words and validation's words are in docs/guide.md"
