#!/bin/sh
# tests/model/validate/report_test.sh - the validation end to end on every fixture
# run, and the report in a real browser:
#   - with lambda0, the release and beta fitted, the line law (which made
#     the data) matches every run to a max relative L_p error < 0.5 % and
#     finds lambda0 within 0.05 deg of the simulator's truth;
#   - the report's files exist, the HTML references only files that exist,
#     every metric in metrics.csv equals the stored one, and the runs' data
#     quality in metrics.csv and summary.md is their record's (good runs
#     as processed; a degraded, a refused and an unassessed one rewritten);
#   - before the runs are processed the report draws its panels without a
#     PLplot warning, saying "no data to draw";
#   - headless Chromium renders index.html from disk with every image
#     loaded and no console error; the screenshot stays in build/.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
db=$dir/r.db
fail() { echo "report_test: $*" >&2; exit 1; }

sh tests/util/catalogdb.sh "$bin" "$db"
$bin import --manifest fixtures/runs/manifest.csv --db "$db" >/dev/null
# Before any run is processed: the figures have no data, and PLplot must
# not be handed a window of equal limits (it printed "*** PLPLOT WARNING
# *** plwind: Invalid window limits" six times); the panel says so.
$bin report --experiment fig8 -o "$dir/unprocessed" --db "$db" >/dev/null 2>"$dir/err" ||
    fail "report before processing: $(cat "$dir/err")"
! grep -q "PLPLOT WARNING" "$dir/err" || fail "PLplot warns on unprocessed runs: $(cat "$dir/err")"
grep -q '&#x6e;&#x6f;&#x20;&#x64;&#x61;&#x74;&#x61;' "$dir/unprocessed/lp.svg" ||
    fail "lp.svg of unprocessed runs does not say 'no data to draw'"
$bin process --all --db "$db" >/dev/null 2>&1
$bin validate --all --fit lambda0,t0,beta --db "$db" >"$dir/val" || fail "validate: $(cat "$dir/val")"

# Numbers to reach, against the truth files (run ids follow the manifest).
id=0
worst=0
grep -v '^#' fixtures/runs/manifest.csv | tail -n +2 | while IFS=, read -r file rest; do
    id=$((id + 1))
    truth=fixtures/runs/${file%.*}.truth.csv
    want=$(sed -n 's/^# lambda0_deg=//p' "$truth")
    line=$(sqlite3 "$db" "SELECT printf('%.6f %.6f', lambda0_rad * 180 / 3.141592653589793, max_rel_err_lp) FROM validation WHERE run_id = $id AND law = 'line' AND fit = 'fitted'")
    [ -n "$line" ] || fail "run $id ($file) has no fitted line-law validation"
    echo "$line $want $file" | awk '{
        dl = $1 - $3; if (dl < 0) dl = -dl;
        printf "report_test: %-24s lambda0 %.4f (truth %.4f, %+.4f)  max rel err %.4f %%\n", $4, $1, $3, $1 - $3, 100 * $2;
        if (dl > 0.05 || $2 >= 0.005) exit 1 }' || fail "$file misses the numbers to reach"
done

out=$dir/report
$bin report --experiment fig8 -o "$out" --db "$db" >/dev/null
# and each run's figure of its impacts' ratios
for f in index.html summary.md metrics.csv lp.svg lp_error.svg omega.svg vp.svg ratio.svg \
         $(sqlite3 "$db" "SELECT 'ratio_run' || r.id || '.svg' FROM run r JOIN experiment e ON e.id = r.experiment_id WHERE e.name = 'fig8'"); do
    [ -s "$out/$f" ] || fail "report file $f missing or empty"
done
grep -o 'src="[^"]*"\|href="[^"]*"' "$out/index.html" | sed 's/^[a-z]*="\(.*\)"$/\1/' | while read -r ref; do
    [ -f "$out/$ref" ] || fail "index.html references $ref, which is not there"
done
grep -q 'SYNTHETIC' "$out/index.html" || fail "synthetic runs are not marked"

# Every metric in metrics.csv is the stored one.
tail -n +2 "$out/metrics.csv" | while IFS=, read -r run syn prism n mat ramp law fit l0 l0sd t0 beta mre rms rest; do
    stored=$(sqlite3 "$db" "SELECT printf('%.6g %.6g', max_rel_err_lp, rms_err_lp) FROM validation WHERE run_id = $run AND law = '$law' AND fit = '$fit'")
    [ "$stored" = "$mre $rms" ] || fail "metrics.csv run $run $law/$fit: '$mre $rms', stored '$stored'"
done
rows=$(tail -n +2 "$out/metrics.csv" | wc -l)
[ "$rows" -eq 24 ] || fail "metrics.csv has $rows rows, expected 6 runs x 2 laws x 2 fits"
# The data quality: metrics.csv's column after verdict is the run's word
# (then lambda0's systematic and total standard errors, appended after
# it), summary.md's last two the word and its faults' kinds, each once, in
# the record's order.
check_quality() {   # check_quality REPORT_DIR
    head -1 "$1/metrics.csv" | grep -q ',verdict,quality,lambda0_sys_deg,lambda0_total_sd_deg$' ||
        fail "metrics.csv: the last columns are not quality and lambda0's sys and total sd"
    tail -n +2 "$1/metrics.csv" | while IFS=, read -r run rest; do
        stored=$(sqlite3 "$db" "SELECT quality FROM run_quality WHERE run_id = $run")
        q=$(echo "$rest" | awk -F, '{ print $(NF - 2) }')
        [ "$q" = "$stored" ] || fail "metrics.csv run $run: quality '$q', stored '$stored'"
    done
    grep '^| [0-9]' "$1/summary.md" | grep -v '\\|' |
    while IFS='|' read -r _ run _ _ _ _ _ _ _ _ q faults _; do
        run=$(echo $run)
        stored=$(sqlite3 "$db" "SELECT quality FROM run_quality WHERE run_id = $run")
        kinds=$(sqlite3 "$db" "SELECT faults FROM run_quality WHERE run_id = $run" |
                awk 'NF && !seen[$1]++ { printf "%s%s", n++ ? ", " : "", $1 }')
        [ "$(echo $q)" = "$stored" ] || fail "summary.md run $run: quality '$q', stored '$stored'"
        [ "$(echo $faults)" = "$kinds" ] || fail "summary.md run $run: faults '$faults', stored '$kinds'"
    done
}
check_quality "$out"
grep -q '| end | good | hum, dropouts, tail_cut |$' "$out/summary.md" ||
    fail "summary.md: no good run with its hum, drop-outs and tail"
# A degraded, a refused and an unassessed run read the same way (the
# fixtures are all good: three records rewritten here).
set -- $(sqlite3 "$db" "SELECT r.id FROM run r JOIN experiment e ON e.id = r.experiment_id WHERE e.name = 'fig8' ORDER BY r.id LIMIT 3")
sqlite3 "$db" "UPDATE run_quality SET quality = 'degraded', faults = 'beam_lost channel=1 from_s=2.1 to_s=2.3' || char(10) || 'dropouts channel=1 count=2 total_s=0.002' || char(10) || 'dropouts channel=2 count=1 total_s=0.001' WHERE run_id = $1;
               UPDATE run_quality SET quality = 'refused', faults = 'refused reason=\"beams a | b\"' WHERE run_id = $2;
               DELETE FROM run_quality WHERE run_id = $3"
$bin report --experiment fig8 -o "$dir/report2" --db "$db" >/dev/null
check_quality "$dir/report2"
grep -q "^| $1 |.* | degraded | beam_lost, dropouts |\$" "$dir/report2/summary.md" || fail "summary.md: the degraded run"
grep -q "^| $2 |.* | refused | beams a \\\\| b |\$" "$dir/report2/summary.md" || fail "summary.md: the refused run's reason"
grep -q "^| $3 |.* | end |  | |\$" "$dir/report2/summary.md" || fail "summary.md: the unassessed run"
grep -q "^$3,.*,[a-z]*,,[^,]*,[^,]*\$" "$dir/report2/metrics.csv" || fail "metrics.csv: the unassessed run's quality is not empty"
# The verdict on each run (the line law made the fixtures) in summary.md,
# both laws' lambda0 as every page writes it: the line law's +- one sd,
# named, with its 95 % interval and its two parts; the plastic fit (its
# interval some 2000 deg wide) reads as not determined, with no +-; the
# page bolds the verdict's law.
se='(parts, 1 sd: stat [0-9.]*, sys [0-9.]*)'
line='line [0-9.]* +- [0-9.]* deg (1 sd; 95 %: [0-9.]* to [0-9.]*)'
plastic='plastic [0-9.]* deg, not determined by this run: the interval spans the whole range, 0 to [0-9.]* deg'
n=$(grep -c "^| [0-9]* | [0-9]* | [a-z]* | line | $line $se; $plastic |" "$out/summary.md" || true)
[ "$n" -eq 6 ] || fail "summary.md: $n of 6 runs with verdict line and both laws' lambda0 (plastic undetermined): $(grep '^| [0-9]' "$out/summary.md")"
line=$(echo "$line" | sed 's/+-/±/')
n=$(grep -o "<b>$line <small class=\"sd\">$se</small></b><br>$plastic" "$out/index.html" | wc -l)
[ "$n" -eq 6 ] || fail "index.html: $n of 6 runs with both laws' lambda0, the verdict's in bold"
# The measured ratio's +- says what it is (issue 33: each +- with its meaning).
grep -q "<i>omega+/omega- meas.</i>: the impacts' ratios averaged with weights 1/s.e.&sup2;, &plusmn; the mean's standard error" "$out/index.html" ||
    fail "index.html: the measured ratio's s.e. is not explained"
# ... and the HTML table shows the fitted line-law error of each run.
sqlite3 "$db" "SELECT printf('%.3f', 100 * max_rel_err_lp) FROM validation v JOIN run r ON r.id = v.run_id JOIN experiment e ON e.id = r.experiment_id WHERE e.name = 'fig8' AND law = 'line' AND fit = 'fitted'" |
while read -r pct; do
    grep -q "<td>$pct</td>" "$out/index.html" || fail "index.html lacks the stored error $pct %"
done

# A real browser.
command -v chromium >/dev/null || fail "chromium is not installed (make deps)"
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-dev-shm-usage"
timeout 120 chromium $flags --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
    --dump-dom "file://$out/index.html" >"$dir/dom.html" 2>"$dir/console.log" || true
figures=$(ls "$out"/*.svg | wc -l)
grep -q "data-images=\"$figures/$figures\"" "$dir/dom.html" ||
    fail "the browser did not load every image: $(grep -o 'data-images="[^"]*"' "$dir/dom.html")"
if grep -i 'CONSOLE' "$dir/console.log" | grep -qi 'error\|uncaught'; then
    fail "console errors: $(grep -i CONSOLE "$dir/console.log")"
fi
mkdir -p build
timeout 120 chromium $flags --window-size=1200,2400 --screenshot=build/report-screenshot.png \
    "file://$out/index.html" >/dev/null 2>&1 || true
[ -s build/report-screenshot.png ] || fail "no screenshot"
echo "report_test: 17 runs validated; fig8 report rendered by Chromium, $figures/$figures images (build/report-screenshot.png)"
