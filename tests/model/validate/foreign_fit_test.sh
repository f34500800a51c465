#!/bin/sh
# tests/model/validate/foreign_fit_test.sh - the release angle's 95 %
# interval against the truth on recordings no one here made (issue 33,
# item 3): the eleven runs of fixtures/foreign and fixtures/foreign2 (an
# independent model through a separately written LDV chain), imported
# through their notebooks' manifests, each started from a lab's rough
# angle (the truth + 0.3 deg, as ../shared/foreign-runs/validate_runs.py
# does), processed, and validated with lambda0, t0 and beta fitted under
# the law that made it.  The interval is the fitted value +- 1.96 sd, the
# scorer's, with sd validate's +-: the total standard error, statistical
# and systematic in quadrature (docs/validation.md, "Systematic terms").
# Gates: at least 90 % covered (measured 11 of 11), the fitted law's rms
# below 0.01 impacts, and every total sd below 0.05 deg (a width a
# reviewer can use; measured 0.0007-0.026).  With the statistical sd
# alone (stat= on the line) 10 of 11: foreign-50k-ring-n30's 5.3013 +-
# 0.0004 for 5.3 is out, and its miss is the one the g term predicts
# (the runs were made with g = 9.81, the model takes 9.80665).  Before
# the fit's second start from the detected release (docs/validation.md,
# "The fit"), the plastic drop-out run read 5.2338 +- 0.0559 deg for 5.06
# (rms 0.008), its release moved 38 ms early along the lambda0-t0
# valley: 9 of 11 with the statistical sd.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "foreign_fit_test: $*" >&2; exit 1; }
db=$dir/f.db
sh tests/util/catalogdb.sh "$bin" "$db"
n=0 covered=0 stat_covered=0
printf '%-30s %-7s %8s %10s %9s %9s %9s %7s\n' run law truth fitted sd stat sys cover
for set in foreign foreign2; do
    # rows: file,format,experiment,prism,ramp,h1,h2,scale,sign1,sign2,fs,lambda0
    tail -n +2 "fixtures/$set/manifest.csv" > "$dir/rows"
    $bin import --manifest "fixtures/$set/manifest.csv" --db "$db" >/dev/null 2>&1 ||
        fail "import of fixtures/$set/manifest.csv failed"
    while IFS=, read -r file _ _ _ _ _ _ _ _ _ _ truth; do
        n=$((n + 1))
        stem=${file%.*}
        law=line
        grep -q '"law": *"plastic"' "fixtures/$set/$stem.truth.json" && law=plastic
        rough=$(awk -v t="$truth" 'BEGIN { printf "%.3f", t + 0.3 }')
        $bin run set "$n" --lambda0-deg "$rough" --db "$db" >/dev/null 2>&1 ||
            fail "run set $n ($stem) failed"
        $bin process "$n" --db "$db" >/dev/null 2>&1 || fail "process $n ($stem) failed"
        $bin validate "$n" --db "$db" --fit lambda0,t0,beta --law "$law" >"$dir/v" 2>&1 ||
            fail "validate $n ($stem): $(cat "$dir/v")"
        line=$(grep "^run=$n law=$law fit=fitted " "$dir/v") || fail "no fitted $law line: $(cat "$dir/v")"
        fit=$(echo "$line" | sed 's/.* lambda0=\([0-9.]*\)+-.*/\1/')
        sd=$(echo "$line" | sed 's/.* lambda0=[0-9.]*+-\([0-9.]*\) .*/\1/')
        rms=$(echo "$line" | sed 's/.* rms=\([0-9.]*\) .*/\1/')
        stat=$(echo "$line" | sed -n 's/.* stat=\([0-9.]*\) sys=.*/\1/p')
        sys=$(echo "$line" | sed -n 's/.* sys=\([0-9.]*\).*/\1/p')
        [ -n "$stat" ] && [ -n "$sys" ] || fail "$stem: no stat= sys= parts: $line"
        # (printed to 4 decimals: within one rounding step of each)
        awk -v s="$sd" -v a="$stat" -v b="$sys" 'BEGIN { d = sqrt(a * a + b * b) - s; if (d < 0) d = -d
            exit !(d <= 1.5e-4) }' || fail "$stem: sd $sd is not stat $stat and sys $sys in quadrature"
        cover=$(awk -v f="$fit" -v s="$sd" -v t="$truth" \
            'BEGIN { d = f - t; if (d < 0) d = -d; print (d <= 1.96 * s) ? "in" : "OUT" }')
        printf '%-30s %-7s %8s %10s %9s %9s %9s %7s\n' "$stem" "$law" "$truth" "$fit" "$sd" "$stat" "$sys" "$cover"
        [ "$cover" = in ] && covered=$((covered + 1))
        awk -v f="$fit" -v s="$stat" -v t="$truth" 'BEGIN { d = f - t; if (d < 0) d = -d
            exit !(d <= 1.96 * s) }' && stat_covered=$((stat_covered + 1))
        awk -v s="$sd" 'BEGIN { exit !(s < 0.05) }' || fail "$stem: total sd $sd deg (0.05 at most)"
        awk -v r="$rms" 'BEGIN { exit !(r < 0.01) }' || fail "$stem: the $law law's rms $rms"
    done < "$dir/rows"
done
echo "lambda0 covered $covered of $n (statistical sd alone: $stat_covered)"
[ "$n" -eq 11 ] || fail "11 runs expected, $n read"
[ $((covered * 10)) -ge $((n * 9)) ] || fail "lambda0 covered $covered of $n (90 % wanted)"
echo "foreign_fit_test: ok"
