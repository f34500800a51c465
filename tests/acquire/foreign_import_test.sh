#!/bin/sh
# tests/acquire/foreign_import_test.sh - the six foreign recordings
# (fixtures/foreign/: another implementation's model and signal chain, as
# another lab's loggers wrote them) imported from their own notebook as it
# is, into a fresh database built from fixtures/catalog: every run has the
# frames and rate its file holds, and its calibrated samples (prismlab
# export) are the file's own numbers, read here from the file's bytes (the
# WAVs' RIFF chunks with od, the CSV's cells with awk), not through
# prismlab.  The same rows with every reading option stated
# (manifest-explicit.csv) give the same samples; a reading option a
# manifest gets wrong is named with its line and column.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "foreign_import_test: $*" >&2; exit 1; }
src=fixtures/foreign

fresh() {   # fresh DB: a database with the bundled catalogue
    sh tests/util/catalogdb.sh "$bin" "$1"
}

# Unsigned little-endian integer of N bytes at OFFSET of FILE.
uint() {
    od -An -v -t u1 -j "$2" -N "$3" "$1" |
        awk '{ for (i = 1; i <= NF; i++) b[n++] = $i }
             END { v = 0; for (i = n - 1; i >= 0; i--) v = v * 256 + b[i]; printf "%.0f\n", v }'
}

# Walks the RIFF chunks of a WAV: sets fmt_tag (1 PCM, 3 float), channels,
# rate, bits, data (offset of the samples) and data_size.
riff() {
    f=$1 pos=12 size=$(wc -c <"$1")
    data=
    while [ "$pos" -lt "$size" ]; do
        cid=$(dd if="$f" bs=1 skip="$pos" count=4 2>/dev/null)
        len=$(uint "$f" $((pos + 4)) 4)
        if [ "$cid" = "fmt " ]; then
            fmt_tag=$(uint "$f" $((pos + 8)) 2)
            channels=$(uint "$f" $((pos + 10)) 2)
            rate=$(uint "$f" $((pos + 12)) 4)
            bits=$(uint "$f" $((pos + 22)) 2)
        elif [ "$cid" = "data" ]; then
            data=$((pos + 8)) data_size=$len
        fi
        pos=$((pos + 8 + len + len % 2))
    done
    [ -n "$data" ] || fail "$f: no data chunk"
}

# Volts of sample CH of frame K of the WAV just walked (full scale 10 V).
wav_volts() {
    bytes=$((bits / 8))
    at=$((data + (($1 * channels) + $2) * bytes))
    if [ "$fmt_tag" = 3 ]; then
        od -An -v -t f4 -j "$at" -N 4 "$f" | awk '{ printf "%.9g\n", $1 * 10 }'
    else
        uint "$f" "$at" "$bytes" |
            awk -v b="$bits" '{ v = $1; if (v >= 2 ^ (b - 1)) v -= 2 ^ b;
                                printf "%.9g\n", v * 10 / 2 ^ (b - 1) }'
    fi
}

# Field N (from 1) of exported frame K (0-based) of run R's export CSV.
export_cell() { grep -v '^#' "$dir/run$1.csv" | sed -n "$(($2 + 2))p" | cut -d, -f"$3"; }

close() {   # close A B WHAT: |A - B| <= 1e-6 V
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 1e-6 && d >= -1e-6) }' ||
        fail "$3: prismlab has $1, the file $2"
}

db=$dir/foreign.db
fresh "$db"
$bin import --manifest "$src/manifest.csv" --db "$db" >"$dir/out" ||
    fail "the notebook as it is: $(tail -1 "$dir/out")"
grep -q '^imported 6 runs' "$dir/out" || fail "manifest: $(tail -1 "$dir/out")"
$bin db check --db "$db" >/dev/null || fail "db check"

id=0
grep -v '^#' "$src/manifest.csv" | tail -n +2 | while IFS=, read -r file rest; do
    id=$((id + 1))
    $bin export "$id" --csv "$dir/run$id.csv" --db "$db"
    got_frames=$(grep -v '^#' "$dir/run$id.csv" | tail -n +2 | wc -l)
    got_rate=$($bin run show "$id" --db "$db" | sed -n 's/^sample_rate: *\([0-9.]*\) Hz/\1/p')
    case $file in
    *.wav)
        riff "$src/$file"
        frames=$((data_size / (channels * bits / 8)))
        [ "$channels" = 2 ] || fail "$file: $channels channels in the file"
        last=$((frames - 1)) mid=$((frames / 2 + 17))
        for k in 0 1 "$mid" "$last"; do
            for c in 0 1; do
                close "$(export_cell "$id" "$k" $((c + 2)))" "$(wav_volts "$k" "$c")" \
                    "$file frame $k channel $c"
            done
        done
        ;;
    *.csv)
        # zeit_ms;ldv_oben_V;ldv_unten_V;trigger_V with decimal commas
        body=$dir/body
        grep -v '^#' "$src/$file" | tail -n +2 | tr , . >"$body"
        frames=$(wc -l <"$body")
        rate=$(awk -F';' 'NR == 1 { t0 = $1 } END { printf "%.6f\n", (NR - 1) / (($1 - t0) / 1000) }' "$body")
        mid=$((frames / 2 + 17))
        for k in 0 1 "$mid" $((frames - 1)); do
            for c in 0 1; do
                want=$(sed -n "$((k + 1))p" "$body" | cut -d';' -f$((c + 2)))
                close "$(export_cell "$id" "$k" $((c + 2)))" "$want" "$file frame $k channel $c"
            done
        done
        ;;
    esac
    [ "$got_frames" = "$frames" ] || fail "$file: $got_frames frames stored, the file holds $frames"
    awk -v a="$got_rate" -v b="$rate" 'BEGIN { exit !(a == b + 0) }' ||
        fail "$file: stored at $got_rate Hz, the file says $rate Hz"
    echo "$file $frames $rate" >>"$dir/checked"
done
[ "$(wc -l <"$dir/checked")" = 6 ] || fail "checked $(wc -l <"$dir/checked") runs, not 6"

# The same rows with every reading option stated: the same samples.
db2=$dir/explicit.db
fresh "$db2"
$bin import --manifest "$src/manifest-explicit.csv" --db "$db2" >"$dir/out2" ||
    fail "the explicit manifest: $(tail -1 "$dir/out2")"
for id in 1 2 3 4 5 6; do
    $bin export "$id" --csv "$dir/x$id.csv" --db "$db2"
    grep -v '^#' "$dir/x$id.csv" >"$dir/x.body"
    grep -v '^#' "$dir/run$id.csv" >"$dir/r.body"
    cmp -s "$dir/x.body" "$dir/r.body" || fail "run $id: the explicit options give other samples"
done
# A reading option the manifest gets wrong is named with its line and column.
bad_row() {   # bad_row COLUMN VALUE MESSAGE
    head -7 "$src/manifest-explicit.csv" >"$dir/bad.csv"
    echo "$src/foreign-euro-csv-n38.csv,csv,,,,,,,,,,,$1" |
        sed "s|^$src|$(pwd)/$src|" >>"$dir/bad.csv"
    if $bin import --manifest "$dir/bad.csv" --db "$dir/bad.db" 2>"$dir/err" >/dev/null; then
        fail "manifest with $2 accepted"
    fi
    grep -qF "$dir/bad.csv:8: $3" "$dir/err" || fail "$2: $(cat "$dir/err")"
}
bad_row ",;,,,,min," "time_unit min" "column 'time_unit': time unit 'min': expected s, ms or us"
bad_row ",;;,,,,," "delimiter ;;" "column 'delimiter': expected one character or tab, got ';;'"
bad_row "0;1,,,,,," "channels 0;1" "column 'channels': expected file channels from 0 to 1023 as I,J, got '0;1'"
echo "foreign_import_test: 6 foreign runs imported from their notebook as it is (5 WAV: 16-, 24-bit PCM, float, 5-50 kHz; 1 CSV: ';', decimal commas, zeit_ms, a trigger column), frames, rates and samples as in the files; stated options give the same; 3 bad options named"
