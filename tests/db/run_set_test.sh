#!/bin/sh
# tests/db/run_set_test.sh - correcting and deleting runs (issue 17 item
# 4): a run imported with swapped beam heights and signs and without a
# prism is corrected by `run set` without touching its samples (the raw
# export is byte for byte the same), each change is in the history `run
# show` prints (and its --json), the old processing is dropped and the
# corrected run processes to the impacts the simulator put in; a bad
# value changes nothing; `run delete` needs --yes, deletes all the runs
# named or none; `db check` passes after each step.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "run_set_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
check() { $bin db check --db "$db" >/dev/null || fail "db check after $1"; }
wav=fixtures/runs/fig8-steel-22.wav
# heights and signs swapped (the truth: h1 0.0199, sign1 +1), the wrong
# prism (run 1: one whose range takes the file's lambda0 7.2 deg, which
# import checks as run set does) or none (runs 2, 3)
for prism in aluminium-24 "" ""; do
    $bin import "$wav" --ramp glass-0.3702 --h1 0.0116 --h2 0.0199 --sign1 -1 \
        --sign2 1 --ldv-scale 0.025 --full-scale-v 10 --prism "$prism" --force \
        --db "$db" >/dev/null
done
$bin run set 2 --prism steel-22 --db "$db" >/dev/null
$bin run show 2 --db "$db" | grep -qF "prism: (none) -> steel-22" || fail "run 2's prism"
$bin export 1 --csv "$dir/before.csv" --db "$db"
$bin process 1 --db "$db" >/dev/null 2>"$dir/err" || true
# the beams' ratio v1/v2 (1.72) contradicts the notebook's h1/h2 (0.583):
# omega's scale is wrong, so the run is refused with the fix
$bin run show 1 --db "$db" | grep -q "^quality: *refused" || fail "run 1 was not refused"
# the diagnosis names both mistakes and the commands that fix them
grep -qF "the heights look swapped; fix with 'prismlab run set 1 --h1 0.0199 --h2 0.0116'" "$dir/err" ||
    fail "no diagnosis of the heights: $(cat "$dir/err")"
grep -qF "the beam signs look swapped" "$dir/err" || fail "no diagnosis of the signs: $(cat "$dir/err")"
# signs alone swapped: "no motion", and the fix
$bin import "$wav" --prism steel-22 --ramp glass-0.3702 --h1 0.0199 --h2 0.0116 --sign1 -1 \
    --sign2 1 --ldv-scale 0.025 --full-scale-v 10 --force --db "$db" >/dev/null
if $bin process 4 --db "$db" >/dev/null 2>"$dir/err"; then fail "swapped signs processed"; fi
grep -qF "fix with 'prismlab run set 4 --sign1 +1 --sign2 -1'" "$dir/err" ||
    fail "no diagnosis of swapped signs: $(cat "$dir/err")"
$bin run delete 4 --yes --db "$db" >/dev/null

# a bad value changes nothing
if $bin run set 1 --h1 0.0199 --db "$db" 2>"$dir/err"; then fail "equal heights accepted"; fi
grep -q "beam heights h1 = h2 = 0.0199 m" "$dir/err" || fail "equal heights: $(cat "$dir/err")"
if $bin run set 1 --prism no-such-prism --db "$db" 2>"$dir/err"; then fail "unknown prism accepted"; fi
grep -q "no prism named 'no-such-prism'" "$dir/err" || fail "unknown prism: $(cat "$dir/err")"
$bin run show 1 --db "$db" | grep -q "^corrected" && fail "a refused set left history"
$bin run show 1 --db "$db" | grep -q "^quality: *refused" || fail "a refused set dropped the record"

# the correction
$bin run set 1 --prism steel-24 --db "$db" >/dev/null
$bin run set 1 --prism steel-22 --h1 0.0199 --h2 0.0116 --sign1 1 --sign2 -1 \
    --lambda0-deg 7.23 --notes "heights and signs were swapped" --db "$db" > "$dir/out"
grep -q "run 1: 7 fields corrected" "$dir/out" || fail "set: $(cat "$dir/out")"
check "run set"
$bin run show 1 --db "$db" > "$dir/show"
for want in "prism:          steel-22" "h1=0.0199 m sign1=+1" "h2=0.0116 m sign2=-1" \
    "lambda0:        7.2300 deg" "processing:     none" \
    "prism: aluminium-24 -> steel-24" "prism: steel-24 -> steel-22" "h1_m: 0.0116 -> 0.0199" \
    "sign1: -1 -> 1" "h2_m: 0.0199 -> 0.0116" "sign2: 1 -> -1" "lambda0_deg: 7.2 -> 7.23"; do
    grep -qF -- "$want" "$dir/show" || fail "run show lacks '$want': $(cat "$dir/show")"
done
[ "$(grep -c '^corrected' "$dir/show")" = 8 ] || fail "expected 8 corrections: $(cat "$dir/show")"
$bin run show 1 --json --db "$db" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["prism"] == "steel-22" and r["processing"] is None, r
assert [c["field"] for c in r["corrections"]][:2] == ["prism", "prism"], r["corrections"]
assert r["channels"][0]["beam_height_m"] == 0.0199 and r["channels"][1]["beam_sign"] == -1
' || fail "run show --json"
$bin export 1 --csv "$dir/after.csv" --db "$db"
# the samples are untouched: the export differs only in its metadata lines
grep -v '^#' "$dir/before.csv" > "$dir/b"; grep -v '^#' "$dir/after.csv" > "$dir/a"
cmp -s "$dir/a" "$dir/b" || fail "run set changed the samples"
# the corrected run processes to the simulator's 152 impacts
$bin process 1 --db "$db" > "$dir/p" 2>/dev/null
grep -q "impacts=152 " "$dir/p" || fail "corrected run: $(cat "$dir/p")"
$bin run set 1 --h1 0.0199 --db "$db" | grep -q "nothing changed" || fail "a no-op set"
$bin run show 1 --db "$db" | grep -q "^processed_utc" || fail "a no-op set dropped the processing"

# delete
if $bin run delete 2 --db "$db" 2>"$dir/err"; then fail "delete without --yes"; fi
grep -q "add --yes" "$dir/err" || fail "delete without --yes: $(cat "$dir/err")"
if $bin run delete 2 9 --yes --db "$db" 2>"$dir/err"; then fail "delete of a missing run"; fi
grep -q "nothing deleted: no run 9" "$dir/err" || fail "delete 2 9: $(cat "$dir/err")"
$bin run show 2 --db "$db" >/dev/null || fail "run 2 deleted although run 9 was missing"
$bin run delete 2 3 --yes --db "$db" > "$dir/out"
[ "$(grep -c '^deleted run' "$dir/out")" = 2 ] || fail "delete: $(cat "$dir/out")"
check "run delete"
[ "$($bin run list --json --db "$db" | python3 -c 'import json,sys; print([r["id"] for r in json.load(sys.stdin)])')" = "[1]" ] ||
    fail "run list after delete"
$bin run list --db "$db" | head -1 | grep -q "^   id  started_utc" || fail "run list has no header row"
# the catalogue's lists: a header row, and --json
$bin prism list --db "$db" | head -1 | grep -q "^name  *N  *a0_m  *length_m  *mass_kg" || fail "prism list has no header row"
[ "$($bin prism list --json --db "$db" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = \
    "$(grep -vc '^#\|^name' fixtures/catalog/prisms.csv)" ] || fail "prism list --json"
$bin ramp list --json --db "$db" | python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(sys.stdin)}
assert abs(r["glass-0.3702"]["beta_deg"] - 0.3702) < 1e-9, r' || fail "ramp list --json"
echo "run_set_test: ok"
