#!/bin/sh
# tests/db/delete_fulldisk_test.sh - `run delete` on a full disk (issue 31
# D10).  Debian's SQLite is built with SECURE_DELETE, which overwrote every
# page a delete freed with zeros, through the WAL: deleting a 4.8 MB run
# needed 4.8 MB of free disk first, so a full disk could not be freed.
# The store now sets secure_delete = FAST and a delete writes a dozen
# pages: some 50 kB on 4 KiB pages, 200 kB on a new store's 16 KiB.
#  1. (any user) under a 1 MiB file size limit (prlimit --fsize; SIGXFSZ
#     ignored, so a write past it fails as on a full disk) the delete of a
#     4.8 MB run succeeds, db check passes, and the run is gone;
#  2. (root: a 12 MB tmpfs, skipped saying so otherwise) with the disk
#     filled to the last page the delete fails, says that the disk is full
#     and what to do, and changes nothing; with 512 kB freed it succeeds.
set -eu
bin=$(cd "$(dirname "${PRISMLAB_BIN:-bin/prismlab}")" && pwd)/$(basename "${PRISMLAB_BIN:-bin/prismlab}")
dir=$(mktemp -d)
mnt=$dir/small
mkdir "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT INT TERM
fail() { echo "delete_fulldisk_test: $*" >&2; exit 1; }
opts="--h1 0.0199 --h2 0.0116 --ldv-scale 0.025 --sign1 1 --sign2 -1 --full-scale-v 10"
# 2 channels x 16 bit x 10 kHz x 120 s of random samples: 4.8 MB
le() { le_v=$1 le_k=0
    while [ $le_k -lt "$2" ]; do
        printf "\\$(printf %03o $((le_v & 255)))"; le_v=$((le_v >> 8)); le_k=$((le_k + 1))
    done; }
bytes=4800000
{ printf RIFF; le $((36 + bytes)) 4; printf 'WAVEfmt '; le 16 4; le 1 2; le 2 2
  le 10000 4; le 40000 4; le 4 2; le 16 2; printf data; le $bytes 4
  head -c $bytes /dev/urandom; } >"$dir/big.wav"
store() {   # store DB: a store holding the big WAV as run 1
    sh tests/util/catalogdb.sh "$bin" "$1"
    $bin import "$dir/big.wav" $opts --db "$1" >/dev/null
}

# 1. a file size limit
db=$dir/t.db
store "$db"
trap '' XFSZ
set +e
prlimit --fsize=1048576 -- "$bin" run delete 1 --yes --db "$db" >"$dir/out" 2>"$dir/err"
rc=$?
set -e
trap - XFSZ
[ $rc -eq 0 ] || fail "delete under a 1 MiB file size limit: exit $rc: $(cat "$dir/err")"
grep -qx 'deleted run 1' "$dir/out" || fail "delete said: $(cat "$dir/out")"
$bin db check --db "$db" >/dev/null || fail "db check after the delete"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM run; SELECT count(*) FROM chunk')" = "0
0" ] || fail "run 1 is still there"
echo "delete_fulldisk_test: a 4.8 MB run deleted under a 1 MiB file size limit"

# 2. a full tmpfs
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=12m tmpfs "$mnt" 2>/dev/null; then
    echo "delete_fulldisk_test: tmpfs part SKIPPED: cannot mount a tmpfs (needs root)"
    exit 0
fi
db=$mnt/t.db
store "$db"
before=$(sqlite3 "$db" 'SELECT count(*) FROM chunk')
dd if=/dev/zero of="$mnt/fill" bs=4096 2>/dev/null || true   # to the last page
set +e
$bin run delete 1 --yes --db "$db" >/dev/null 2>"$dir/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "delete on a disk with no page free: exit $rc: $(cat "$dir/err")"
grep -q ': the disk is full.*free that much on that disk' "$dir/err" ||
    fail "the error does not say what to do: $(cat "$dir/err")"
truncate -s -524288 "$mnt/fill"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM chunk')" = "$before" ] || fail "the failed delete changed the store"
$bin run delete 1 --yes --db "$db" >"$dir/out" 2>"$dir/err" ||
    fail "delete with 512 kB free: $(cat "$dir/err")"
rm -f "$mnt/fill"
$bin db check --db "$db" >/dev/null || fail "db check on the tmpfs"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM run')" = 0 ] || fail "run 1 is still on the tmpfs"
echo "delete_fulldisk_test: a full disk is refused saying what to do; 512 kB free is enough"
