#!/bin/sh
# tests/model/validate/coverage_test.sh - the report's verdict and its
# intervals against the truth (issue 17 items 1-2):
#   - over the 17 fixture runs (the rig simulator's, truth known), the
#     true lambda0 against the stated 95 % interval (metrics.csv's
#     lambda0_lo95_deg..lambda0_hi95_deg, line law) with lambda0, t0 and
#     beta fitted, the fit whose intervals say something; the table, the
#     count and the intervals' mean width are printed, and the issue's
#     number is the gate: at least 90 % (16 of 17; 17 of 17 measured,
#     docs/validation.md, "Coverage, measured").  validate's default fit
#     (lambda0, t0; beta at the catalogue's) is printed too: 17 of 17,
#     but with intervals up to +-100 deg that say the data do not fix
#     lambda0 there;
#   - the same over 20 further recordings the choices were not made on:
#     the fixtures' chain, prisms, ramps and beam heights drawn with
#     seeds 3000-3019, lambda0 at 80-95 % of alpha + beta, beta off the
#     catalogue by up to 0.004 deg, lambda0 recorded up to 0.035 deg off;
#     at least 90 % (18 of 20; 19 of 20 measured: r3005 is one whose
#     release the processing put 0.8 s early, docs/validation.md);
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

sh tests/util/catalogdb.sh "$bin" "$db"
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
width = 0.0
print("%-24s %10s %10s %22s %9s %s" % ("run", "truth", "fitted", "95 % interval", "width", ""))
for r in rows:
    f = files[int(r["run"]) - 1]
    truth = None
    for line in open("fixtures/runs/" + f.rsplit(".", 1)[0] + ".truth.csv"):
        if line.startswith("# lambda0_deg="):
            truth = float(line.split("=")[1])
    lo, hi = float(r["lambda0_lo95_deg"]), float(r["lambda0_hi95_deg"])
    ok = lo <= truth <= hi
    inside += ok
    width += hi - lo
    print("%-24s %10.5f %10.5f   [%.5f, %.5f] %9.5f %s" % (f, truth, float(r["lambda0_deg"]), lo, hi,
          hi - lo, "in" if ok else "OUT"))
n = len(rows)
print("coverage: %d of %d (%.0f %%) inside the 95 %% interval; mean width %.5f deg" %
      (inside, n, 100.0 * inside / n, width / n))
if sys.argv[2] == "gate" and (n != 17 or inside < 16):
    sys.exit(1)
' "$dir/files" "$2"
}
echo "lambda0 and t0 fitted (validate's default; reported, not asserted):"
coverage "" report
echo "lambda0, t0 and beta fitted:"
coverage beta- gate || fail "coverage below 16 of 17 (or not 17 runs)"

# 20 recordings drawn like the fixtures but from other seeds (Python's
# Mersenne Twister: the same draws on every machine)
mkdir "$dir/more"
python3 - "$dir/more" <<'PY' > "$dir/more/plan"
import random, sys
prisms = [("steel-22", 22), ("steel-24", 24), ("steel-30", 30), ("steel-32", 32),
          ("steel-36", 36), ("steel-38", 38), ("aluminium-24", 24), ("aluminium-30", 30)]
ramps = [("glass-0.3702", 0.3702), ("glass-0.4079", 0.4079), ("steel-0.3792", 0.3792)]
beams = [(0.0199, 0.0116), (0.0223, 0.0119)]
for seed in range(3000, 3020):
    r = random.Random(seed)
    (prism, n), (ramp, beta_nom), (h1, h2) = r.choice(prisms), r.choice(ramps), r.choice(beams)
    beta = beta_nom + r.uniform(-0.004, 0.004)
    lam = r.uniform(0.80, 0.95) * (180.0 / n + beta)
    print("%d %s %s %.4f %.4f %.4f %.4f %s %s" % (seed, prism, ramp, beta, beta_nom, lam,
          lam + r.uniform(-0.035, 0.035), h1, h2))
PY
echo "file,format,experiment,prism,ramp,h1_m,h2_m,ldv_scale_mps_per_v,sign1,sign2,full_scale_v,lambda0_deg,synthetic" \
    > "$dir/more/manifest.csv"
while read -r seed prism ramp beta beta_nom lam lam_rec h1 h2; do
    $bin sim --prism "$prism" --ramp "$ramp" --beta-deg "$beta" --nominal-beta-deg "$beta_nom" \
        --lambda0-deg "$lam" --nominal-lambda0-deg "$lam_rec" --h1 "$h1" --h2 "$h2" --seed "$seed" \
        --wav "$dir/more/r$seed.wav" --truth "$dir/more/r$seed.truth.csv" --db "$db" >/dev/null
    echo "r$seed.wav,wav,more,$prism,$ramp,$h1,$h2,0.025,1,-1,10,$lam_rec,1" >> "$dir/more/manifest.csv"
done < "$dir/more/plan"
more=$dir/more.db
sh tests/util/catalogdb.sh "$bin" "$more"
$bin import --manifest "$dir/more/manifest.csv" --db "$more" >/dev/null
$bin process --all --db "$more" >/dev/null 2>&1
$bin validate --all --law line --fit lambda0,t0,beta --db "$more" >/dev/null
$bin report --experiment more -o "$dir/more-report" --db "$more" >/dev/null
echo "lambda0, t0 and beta fitted, 20 further recordings:"
cat "$dir/more-report/metrics.csv" | python3 -c '
import csv, sys
plan = [l.split() for l in open(sys.argv[1])]
rows = [r for r in csv.DictReader(sys.stdin) if r["law"] == "line" and r["fit"] == "fitted"]
inside, width = 0, 0.0
for r in rows:
    seed = plan[int(r["run"]) - 1][0]
    for line in open(sys.argv[2] + "/r" + seed + ".truth.csv"):
        if line.startswith("# lambda0_deg="):
            truth = float(line.split("=")[1])
    lo, hi = float(r["lambda0_lo95_deg"]), float(r["lambda0_hi95_deg"])
    inside += lo <= truth <= hi
    width += hi - lo
    if not lo <= truth <= hi:
        print("  r%s: truth %.5f outside [%.5f, %.5f]" % (seed, truth, lo, hi))
n = len(rows)
print("coverage: %d of %d (%.0f %%) inside the 95 %% interval; mean width %.5f deg" %
      (inside, n, 100.0 * inside / n, width / n))
sys.exit(0 if n == 20 and inside >= 18 else 1)
' "$dir/more/plan" "$dir/more" || fail "coverage of the further recordings below 18 of 20 (or not 20 runs)"

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
# (by the column's name: quality follows it)
python3 - "$dir/plastic/metrics.csv" <<'PY' || fail "metrics.csv: a plastic run's verdict"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["fit"] == "fitted"]
sys.exit(0 if all(r["verdict"] == "plastic" for r in rows) else 1)
PY
echo "coverage_test: ok"
