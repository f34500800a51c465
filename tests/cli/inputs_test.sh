#!/bin/sh
# tests/cli/inputs_test.sh - issue 30 items 3 and 4 from the command line:
# a release angle or beam heights outside the prism refused by run set,
# import and sim, saying the bound; the history's numbers as typed (20,
# not 2e+01); metadata printed as the shortest text that reads back
# (0.0199, not 0.019900000000000001); "'abc' is not a run id"; a missing
# run's error said once; names counted in characters; run ids never
# reused; --json of validate, process, db info and sweep list; a
# simulated series exported (the stored simulation run again).  Each
# check fails on the code before issue 30's fixes.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "inputs_test: $*" >&2; exit 1; }
db=$dir/t.db
sh tests/util/catalogdb.sh "$bin" "$db"
wav=fixtures/runs/fig8-steel-22.wav
imp() { $bin import "$wav" --prism steel-22 --ramp glass-0.3702 --experiment E \
            --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10 --force --db "$db" "$@"; }
# refused: exit status 1 or 2 and the message on stderr
refused() {   # $1 expected text; the command follows
    want=$1; shift
    if "$@" >"$dir/out" 2>"$dir/err"; then fail "accepted: $*"; fi
    grep -qF -- "$want" "$dir/err" || fail "$*: expected '$want', got: $(cat "$dir/err")"
}
imp --h1 0.0199 --h2 0.0116 --lambda0-deg 7.2 >/dev/null

# --- item 3: inputs checked against the prism, early -----------------------
refused "lambda0 = 90 deg: expected a release angle in (0, 8.552) deg for prism 'steel-22' on ramp 'glass-0.3702'" \
    $bin run set 1 --lambda0-deg 90 --db "$db"
refused "beam height h1 = 0.05 m: expected a height in (0, 0.02969) m for prism 'steel-22'" \
    $bin run set 1 --h1 0.05 --db "$db"
refused "beam height h1 = 0 m" $bin run set 1 --h1 0 --db "$db"
# another prism makes the recorded 7.2 deg impossible (steel-38: 5.107)
refused "lambda0 = 7.2 deg: expected a release angle in (0, 5.107) deg for prism 'steel-38'" \
    $bin run set 1 --prism steel-38 --db "$db"
$bin run show 1 --db "$db" | grep -q "^corrected" && fail "a refused set left history"
refused "beam height h2 = 0.031 m: expected a height in (0, 0.02969) m" \
    imp --h1 0.0199 --h2 0.031 --lambda0-deg 7.2
[ "$($bin run list --json --db "$db" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ] ||
    fail "a refused import stored a run"
refused "beam height h1 = 0.05 m: expected a height in (0, 0.02969) m" \
    $bin sim --prism steel-22 --ramp glass-0.3702 --lambda0-deg 7.2 --h1 0.05 --h2 0.0116 \
    --wav "$dir/s.wav" --db "$db"
[ ! -e "$dir/s.wav" ] || fail "sim wrote a file for a beam above the prism"
refused "beam height h1 = 0 m" \
    $bin sim --N 22 --a0 0.015 --beta-deg 0.4 --mu-s 0.12 --lambda0-deg 5 --h1 0 --h2 0.0116 \
    --wav "$dir/s.wav"
# the history's numbers as typed: 20 (was 2e+01)
$bin run set 1 --ldv-scale 20 --db "$db" >/dev/null
$bin run show 1 --db "$db" | grep -qF "ldv_scale_mps_per_v: 0.025 -> 20 " ||
    fail "history: $($bin run show 1 --db "$db" | grep corrected)"
$bin run set 1 --ldv-scale 0.025 --db "$db" >/dev/null
# run ids
refused "prismlab run: 'abc' is not a run id (a number)" $bin run delete abc --yes --db "$db"
refused "'x7' is not a run id (a number)" $bin process x7 --db "$db"
# a missing run: its error once
refused "no run 99" $bin validate 99 --db "$db"
[ "$(grep -c 'no run 99' "$dir/err")" = 1 ] || fail "missing run said $(grep -c 'no run 99' "$dir/err") times"
# names in characters: 40 x u-umlaut is 40 characters (80 bytes)
u40=$(python3 -c 'print("\u00fc" * 40)')
$bin prism add "$u40" --N 22 --a0 0.015 --length 0.05 --material steel --density 7850 \
    --db "$db" >/dev/null || fail "a 40-character name refused"
refused "is 64 characters long: at most 63" \
    $bin experiment add "$(python3 -c 'print("\u00fc" * 64)')" --db "$db"
# and in a catalogue file: 50 x e-acute (100 bytes) taken, 64 x 'x' not
python3 -c 'print("name,n_edges,a0_m,length_m,density_kg_m3,material\n%s,22,0.015,0.05,7850,steel" % ("\u00e9" * 50))' > "$dir/p.csv"
$bin prism import "$dir/p.csv" --db "$db" >/dev/null || fail "a 50-character name in a CSV refused"
python3 -c 'print("name,n_edges,a0_m,length_m,density_kg_m3,material\n%s,22,0.015,0.05,7850,steel" % ("x" * 64))' > "$dir/p.csv"
refused "p.csv:2: prism name 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is 64 characters long: at most 63" \
    $bin prism import "$dir/p.csv" --db "$db"

# --- item 4: identity and formats -----------------------------------------
# shortest round-trip numbers in JSON and in the export's metadata
$bin run show 1 --json --db "$db" > "$dir/show.json"
grep -q '"beam_height_m": 0.0199,' "$dir/show.json" || fail "run show --json: $(cat "$dir/show.json")"
grep -q '"lambda0_deg": 7.2,' "$dir/show.json" || fail "run show --json lambda0: $(cat "$dir/show.json")"
grep -q '0000000' "$dir/show.json" && fail "17 digits in run show --json: $(cat "$dir/show.json")"
$bin export 1 --csv "$dir/e.csv" --db "$db"
head -1 "$dir/e.csv" | grep -qF "h=0.0199,0.0116 " || fail "export metadata: $(head -1 "$dir/e.csv")"
head -1 "$dir/e.csv" | grep -qF "lambda0_deg=7.2" || fail "export lambda0: $(head -1 "$dir/e.csv")"
# ids never reused: delete the newest, the next run gets a new id
imp --h1 0.0199 --h2 0.0116 --lambda0-deg 7.2 | grep -q "^run=2 " || fail "second import is not run 2"
$bin run delete 2 --yes --db "$db" >/dev/null
imp --h1 0.0199 --h2 0.0116 --lambda0-deg 7.2 > "$dir/out"
grep -q "^run=3 " "$dir/out" || fail "deleted run 2's id given again: $(cat "$dir/out")"
# --json of validate, process, db info, sweep list, and in their help
$bin process 3 --json --db "$db" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert len(r) == 1 and r[0]["run"] == 3 and r[0]["impacts"] == 152, r
assert r[0]["quality"] in ("good", "degraded") and isinstance(r[0]["warnings"], list), r
' || fail "process --json"
$bin validate 3 --json --no-fit --db "$db" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert [(x["run"], x["law"], x["fit"]) for x in r] == [(3, "line", "recorded"), (3, "plastic", "recorded")], r
assert r[0]["lambda0_deg"] == 7.2 and r[0]["lambda0_sd_deg"] is None and r[0]["max_rel_err"] < 0.05, r
' || fail "validate --json"
# the simulated series export (run again from the stored parameters):
# L_p at the window's end is the lp_end_simulated validate stored
$bin validate 3 --json --no-fit --law line --db "$db" > "$dir/v.json"
$bin export 3 --series sim-line --csv "$dir/sim.csv" --db "$db" || fail "export --series sim-line"
python3 - "$dir/v.json" "$dir/sim.csv" <<'PY' || fail "simulated series: $(head -3 "$dir/sim.csv")"
import csv, json, sys
v = json.load(open(sys.argv[1]))[0]
lines = open(sys.argv[2]).read().splitlines()
assert lines[0].startswith("# prismlab simulation law=line fit=recorded N=22 ") and "lambda0_deg=7.2 " in lines[0], lines[0]
rows = list(csv.DictReader(lines[1:]))
assert list(rows[0]) == ["t_s", "Lp", "omega_rad_s", "vp1_mps", "vp2_mps"], rows[0]
assert 7000 < len(rows) < 7500, len(rows)
assert abs(float(rows[-1]["Lp"]) - v["lp_end_simulated"]) < 0.05, (rows[-1], v)
assert float(rows[0]["Lp"]) == 0 and float(rows[len(rows) // 2]["omega_rad_s"]) > 1, rows[len(rows) // 2]
PY
refused "run 3 has no fitted simulation of the plastic law: run 'prismlab validate 3' first" \
    $bin export 3 --series sim-plastic --fit fitted --csv "$dir/x.csv" --db "$db"
refused "'abc' is not a run id (a number)" $bin export abc --csv "$dir/x.csv" --db "$db"
$bin db info --json --db "$db" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["schema_version"] == r["latest_schema_version"] >= 6, r
assert r["rows"]["run"] == 2 and r["frames_stored"] == 2 * 87462, r
' || fail "db info --json"
[ "$($bin sweep list --json --db "$db")" = "[]" ] || fail "sweep list --json on no sweeps"
for c in "validate" "process" "db" "sweep list"; do
    $bin $c --help | grep -q -- "--json" || fail "$c --help does not name --json"
done
echo "inputs_test: ok"
