#!/bin/sh
# tests/db/readonly_store_test.sh - opening the store (issue 17 item 5):
# the reading commands work on a database in a read-only folder (another
# user's, chmod 555), on a read-only file in a writable folder and on a
# read-only bind mount, and write nothing beside it (no -wal, no -shm); a
# writing command there is refused up front naming why, not with SQLite's
# "attempt to write a readonly database" or an SQL statement; only
# `db init` creates a database (a mistyped --db leaves no file, even when
# the import fails); another program's SQLite file is refused and left
# byte for byte as it was; `prismlab --db F run list` works and
# `export --csv -` writes to standard output.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=$(mktemp -d)
chmod 755 "$dir"
trap 'chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
fail() { echo "readonly_store_test: $*" >&2; exit 1; }
store=$dir/lab
mkdir "$store"
db=$store/lab.db
sh tests/util/catalogdb.sh "$bin" "$db"
$bin import fixtures/runs/fig8-steel-22.wav --prism steel-22 --ramp glass-0.3702 \
    --h1 0.0199 --h2 0.0116 --ldv-scale 0.025 --sign1 1 --sign2 -1 \
    --full-scale-v 10 --lambda0-deg 7.2 --db "$db" >/dev/null
# the global option before the command
$bin --db "$db" run list > "$dir/list" || fail "--db before the command refused"
[ -s "$dir/list" ] || fail "run list printed nothing"
listing() { ls -a "$store" | sort | tr '\n' ' '; }
before=$(listing)

# readers: run list, run show, db check, db info, catalogue lists, export
readers() {   # readers AS-USER...: every reading command works, nothing added
    "$@" "$bin" run list --db "$db" > "$dir/out" 2>"$dir/err" || fail "run list: $(cat "$dir/err")"
    "$@" "$bin" run show 1 --db "$db" > "$dir/out" 2>"$dir/err" || fail "run show: $(cat "$dir/err")"
    "$@" "$bin" db check --db "$db" > "$dir/out" 2>"$dir/err" || fail "db check: $(cat "$dir/err")"
    "$@" "$bin" db info --db "$db" > "$dir/out" 2>"$dir/err" || fail "db info: $(cat "$dir/err")"
    grep -q "^run_rows: [1-9]" "$dir/out" || fail "db info: $(cat "$dir/out")"
    "$@" "$bin" prism list --db "$db" > "$dir/out" 2>"$dir/err" || fail "prism list: $(cat "$dir/err")"
    "$@" "$bin" export 1 --csv - --db "$db" > "$dir/out.csv" 2>"$dir/err" || fail "export: $(cat "$dir/err")"
    grep -q "^t_s," "$dir/out.csv" || fail "export --csv - wrote no CSV to stdout"
    [ "$(listing)" = "$before" ] || fail "a reader left files beside the database: $(listing)"
}
writer_refused() {   # writer_refused WHY AS-USER...
    why=$1
    shift
    if "$@" "$bin" experiment add e1 --db "$db" >/dev/null 2>"$dir/err"; then
        fail "experiment add wrote to a read-only store"
    fi
    grep -qF "cannot be written here: $why" "$dir/err" || fail "writer: $(cat "$dir/err")"
    if grep -qi "attempt to write\|INSERT\|readonly database" "$dir/err"; then
        fail "raw SQLite message: $(cat "$dir/err")"
    fi
    [ "$(listing)" = "$before" ] || fail "a refused writer left files: $(listing)"
}

# 1. a read-only bind mount (EROFS: read-only even for root)
if unshare -m true 2>/dev/null; then
    ro=$dir/ro
    mkdir "$ro"
    PRISMLAB_BIN=$bin RO=$ro STORE=$store unshare -m sh -c '
        mount --bind -o ro "$STORE" "$RO" || exit 77
        "$PRISMLAB_BIN" run list --db "$RO/lab.db" > "$RO/../bind.out" 2>&1 || exit 1
        "$PRISMLAB_BIN" export 1 --csv - --db "$RO/lab.db" | grep -q "^t_s," || exit 1
        "$PRISMLAB_BIN" experiment add e1 --db "$RO/lab.db" 2> "$RO/../bind.err" && exit 2
        grep -q "on a read-only disk" "$RO/../bind.err" || exit 3
        exit 0' && rc=0 || rc=$?
    case $rc in
    0) echo "read-only bind mount: readers work, writer refused" ;;
    77) echo "read-only bind mount: mount not permitted here, skipped" ;;
    *) fail "read-only bind mount (step $rc): $(cat "$dir/bind.out" "$dir/bind.err" 2>/dev/null)" ;;
    esac
    [ "$(listing)" = "$before" ] || fail "the bind mount test left files: $(listing)"
fi

# 2. another user on a folder and file they may only read
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as=${RO_USER:-nobody}
    nobody="setpriv --reuid=$as --regid=nogroup --clear-groups"
    chmod 755 "$dir" "$store"
    chmod 644 "$db"
    readers $nobody
    writer_refused "the file is not writable" $nobody
    # 3. a read-only file in a folder they may write
    chmod 777 "$store"
    chmod 444 "$db"
    readers $nobody
    writer_refused "the file is not writable" $nobody
    chmod 755 "$store"
    chmod 644 "$db"
    echo "another user's read-only folder and file: readers work, writer refused"
else
    # as an ordinary user: the folder itself read-only
    chmod 555 "$store"
    readers
    writer_refused "its folder is not writable"
    chmod 755 "$store"
fi

# only db init creates: a mistyped --db leaves no file, even for import
if $bin run list --db "$dir/typo.db" 2>"$dir/err"; then fail "run list made a database"; fi
grep -qF "prismlab db init --db $dir/typo.db" "$dir/err" || fail "no hint: $(cat "$dir/err")"
if $bin import fixtures/runs/fig6-steel-22.wav --db "$dir/typo.db" 2>/dev/null; then
    fail "import into a missing database"
fi
if $bin prism add p --N 5 --a0 0.01 --length 0.1 --material s --mass 1 --db "$dir/typo.db" 2>/dev/null; then
    fail "prism add into a missing database"
fi
[ ! -e "$dir/typo.db" ] || fail "a command other than db init created $dir/typo.db"

# another program's SQLite file: refused, unchanged
sqlite3 "$dir/other.db" "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');"
cp "$dir/other.db" "$dir/other.orig"
for cmd in "run list" "db check" "db init" "prism import fixtures/catalog/prisms.csv"; do
    # shellcheck disable=SC2086
    if $bin $cmd --db "$dir/other.db" 2>"$dir/err"; then fail "$cmd accepted a foreign database"; fi
    grep -q "not a prismlab store" "$dir/err" || fail "$cmd: $(cat "$dir/err")"
    cmp -s "$dir/other.db" "$dir/other.orig" || fail "$cmd changed the foreign database"
done
[ ! -e "$dir/other.db-wal" ] || fail "a -wal was left beside the foreign database"

# '-' is standard output, and no file named '-' appears
(cd "$dir" && $bin export 1 --csv - --db "$db" > stdout.csv)
[ ! -e "$dir/-" ] || fail "export --csv - wrote a file named '-'"
grep -q "^t_s," "$dir/stdout.csv" || fail "export --csv - wrote no CSV"
echo "readonly_store_test: ok"
