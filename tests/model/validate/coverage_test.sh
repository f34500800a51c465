#!/bin/sh
# tests/model/validate/coverage_test.sh - the report's verdict and its
# intervals against the truth (issue 17 items 1-2):
#   - over the 17 fixture runs (the rig simulator's, truth known), the
#     true lambda0 against the stated 95 % interval (metrics.csv's
#     lambda0_lo95_deg..lambda0_hi95_deg, line law) with lambda0, t0 and
#     beta fitted, the fit whose intervals say something; the table and
#     the count are printed.  NOT MET: issue 17 asks for at least 90 %;
#     this gives 15 of 17 (88 %) since the lattice changes of 663d342
#     (16 of 17 before them).  The gate below is 15 of 17, a guard against
#     getting worse, not the issue's number (docs/validation.md,
#     "Coverage, measured").  validate's default fit (lambda0, t0; beta
#     at the catalogue's) is printed too: 17 of 17, but with intervals up
#     to +-100 deg that say the data do not fix lambda0 there;
#   - the verdict is "line" for every fixture experiment and run (the
#     line law made them), and "plastic" for recordings the simulator made
#     with the plastic law (experiment and runs), from the report's
#     data-verdict attributes and metrics.csv.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/c.db
fail() { echo "coverage_test: $*" >&2; exit 1; }

$bin db init --db "$db" >/dev/null
$bin prism import fixtures/catalog/prisms.csv --db "$db" >/dev/null
$bin ramp import fixtures/catalog/ramps.csv --db "$db" >/dev/null
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
# two plastic-law recordings, released as an operator would record it
for s in 1 2; do
    $bin sim --prism steel-30 --ramp glass-0.3702 --law plastic --lambda0-deg 5.3 \
        --h1 0.0199 --h2 0.0116 --seed $s --store --experiment plastic --db "$db" >/dev/null
done
$bin process --all --db "$db" >/dev/null 2>&1
cp "$db" "$dir/beta.db"
$bin validate --all --db "$db" >/dev/null
$bin validate --all --fit lambda0,t0,beta --db "$dir/beta.db" >/dev/null
for e in fig6 fig7 fig8 fig9 plastic; do
    $bin report --experiment $e -o "$dir/$e" --db "$db" >/dev/null
    $bin report --experiment $e -o "$dir/beta-$e" --db "$dir/beta.db" >/dev/null
done

# coverage over the fixture runs (run ids follow the manifest)
grep -v '^#' fixtures/runs/manifest.csv | tail -n +2 | cut -d, -f1 > "$dir/files"
coverage() {   # coverage REPORTS_PREFIX GATE
cat "$dir"/$1fig*/metrics.csv | python3 -c '
import csv, sys
files = open(sys.argv[1]).read().split()
rows = [r for r in csv.DictReader(l for l in sys.stdin if not l.startswith("run,") or True)
        if r.get("law") == "line" and r.get("fit") == "fitted"]
inside = 0
print("%-24s %10s %10s %22s %s" % ("run", "truth", "fitted", "95 % interval", ""))
for r in rows:
    f = files[int(r["run"]) - 1]
    truth = None
    for line in open("fixtures/runs/" + f.rsplit(".", 1)[0] + ".truth.csv"):
        if line.startswith("# lambda0_deg="):
            truth = float(line.split("=")[1])
    lo, hi = float(r["lambda0_lo95_deg"]), float(r["lambda0_hi95_deg"])
    ok = lo <= truth <= hi
    inside += ok
    print("%-24s %10.5f %10.5f   [%.5f, %.5f] %s" % (f, truth, float(r["lambda0_deg"]), lo, hi,
          "in" if ok else "OUT"))
n = len(rows)
print("coverage: %d of %d (%.0f %%) inside the 95 %% interval" % (inside, n, 100.0 * inside / n))
if sys.argv[2] == "gate" and (n != 17 or inside < 15):
    sys.exit(1)
' "$dir/files" "$2"
}
echo "lambda0 and t0 fitted (validate's default; reported, not asserted):"
coverage "" report
echo "lambda0, t0 and beta fitted:"
coverage beta- gate || fail "coverage below 15 of 17 (or not 17 runs)"

# the verdicts
for e in fig6 fig7 fig8 fig9; do
    grep -q 'id="verdict" data-verdict="line"' "$dir/$e/index.html" || fail "$e: experiment verdict is not line"
    if grep 'data-verdict=' "$dir/$e/index.html" | grep -v 'data-verdict="line"' | grep -q .; then
        fail "$e: a prism or run whose verdict is not line"
    fi
done
grep -q 'id="verdict" data-verdict="plastic"' "$dir/plastic/index.html" ||
    fail "plastic-law runs: verdict $(grep -o 'id="verdict" data-verdict="[a-z]*"' "$dir/plastic/index.html")"
[ "$(grep -c 'data-verdict="plastic"' "$dir/plastic/index.html")" -ge 4 ] ||
    fail "plastic-law runs: not every row says plastic"
grep ',fitted,' "$dir/plastic/metrics.csv" | grep -vq ',plastic$' && fail "metrics.csv: a plastic run's verdict"
echo "coverage_test: ok"
