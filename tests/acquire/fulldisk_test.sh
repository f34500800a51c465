#!/bin/sh
# tests/acquire/fulldisk_test.sh - an import that fills the disk: on a
# 3 MB tmpfs holding the database, a 4.8 MB WAV cannot fit.  The import
# must fail with SQLite's "disk is full" named (exit status 2), leave no
# run, keep run 1 byte for byte, pass db check, and the store must take
# the next (small) import.  Needs root to mount the tmpfs (skipped, saying
# so, otherwise).
set -eu
bin=$(cd "$(dirname "${PRISMLAB_BIN:-bin/prismlab}")" && pwd)/$(basename "${PRISMLAB_BIN:-bin/prismlab}")
dir=$(mktemp -d)
mnt=$dir/small
mkdir "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT INT TERM
fail() { echo "fulldisk_test: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=3m tmpfs "$mnt" 2>/dev/null; then
    echo "fulldisk_test: SKIPPED: cannot mount a tmpfs (needs root)"
    exit 0
fi
db=$mnt/t.db
opts="--h1 0.0199 --h2 0.0116 --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10"
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig6-steel-22.wav $opts --db "$db" >/dev/null
run1=$(sqlite3 "$db" 'SELECT hex(data) FROM chunk WHERE run_id = 1 ORDER BY first_frame' | sha256sum)

# 2 channels x 16 bit x 10 kHz x 120 s of random samples: 4.8 MB
le() { le_v=$1 le_k=0
    while [ $le_k -lt "$2" ]; do
        printf "\\$(printf %03o $((le_v & 255)))"; le_v=$((le_v >> 8)); le_k=$((le_k + 1))
    done; }
bytes=4800000
{ printf RIFF; le $((36 + bytes)) 4; printf 'WAVEfmt '; le 16 4; le 1 2; le 2 2
  le 10000 4; le 40000 4; le 4 2; le 16 2; printf data; le $bytes 4
  head -c $bytes /dev/urandom; } >"$dir/big.wav"

set +e
$bin import "$dir/big.wav" $opts --db "$db" >/dev/null 2>"$dir/full"
rc=$?
set -e
[ $rc -eq 2 ] || fail "the import that cannot fit: exit status $rc, expected 2: $(cat "$dir/full")"
grep -qi 'full' "$dir/full" || fail "the error does not say the disk is full: $(cat "$dir/full")"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM run')" -eq 1 ] || fail "a run was left behind"
$bin db check --db "$db" >"$dir/check" 2>&1 || fail "db check: $(cat "$dir/check")"
[ "$(sqlite3 "$db" 'SELECT hex(data) FROM chunk WHERE run_id = 1 ORDER BY first_frame' | sha256sum)" = "$run1" ] ||
    fail "run 1 changed"
$bin import fixtures/runs/fig6-steel-30.wav $opts --db "$db" >/dev/null 2>"$dir/err" ||
    fail "the next import after a full disk: $(cat "$dir/err")"
echo "fulldisk_test: $(head -1 "$dir/full" | cut -c1-160)"
echo "fulldisk_test: full disk refused the 4.8 MB import whole (exit 2), db check clean, run 1 unchanged, next import stored"
