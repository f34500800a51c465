#!/bin/sh
# tests/cli/startup_test.sh - which shared libraries each command loads
# (issue 29; docs/layout.md, "Start-up"), from the dynamic loader's own
# account (LD_DEBUG=libs names every library it opens):
#   - bin/prismlab --version and --help load the C library and nothing of
#     the project's libraries;
#   - Open MPI is loaded by `sweep` only when an MPI launcher's environment
#     is there (then bin/prismlab runs prismlab-sweep-mpi), and otherwise
#     only by prismlab-dimer-mpi, which dimer-report execs under one; by no other
#     command's program; libmicrohttpd by serve's only; PLplot not by
#     process;
#   - the sweep program without MPI refuses to run a sweep under a
#     launcher rather than run it alone;
#   - a dispatcher without its programs says which file is missing, exit 2;
#   - the command sees argv as given: `--db F` before the command works.
set -eu
bin=${PRISMLAB_BIN:-bin/prismlab}
libexec=$(dirname "$bin")/../libexec/prismlab
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "startup_test: $*" >&2; exit 1; }

# the libraries the loader opened for a command, one a line
libs() { LD_DEBUG=libs "$@" 2>&1 >/dev/null | sed -n 's/.*find library=\([^ ;]*\).*/\1/p' | sort -u; }
ours='sqlite3|sndfile|fftw3|comedi|gsl|libz\.|nettle|inih|plplot|microhttpd|mpi|csv'

for args in "--version" "--help"; do
    l=$(libs "$bin" $args)
    echo "$l" | grep -q '^libc\.so' || fail "prismlab $args: LD_DEBUG names no libc (got: $l)"
    bad=$(echo "$l" | grep -E "$ours" || true)
    [ -z "$bad" ] || fail "prismlab $args loads $(echo $bad)"
done

l=$(libs "$bin" sweep --help)
echo "$l" | grep -q '^libsqlite3' || fail "sweep --help: no libsqlite3 in the loader's list: $l"
echo "$l" | grep -q 'libmpi' && fail "sweep without a launcher loads Open MPI"
l=$(OMPI_COMM_WORLD_SIZE=1 libs "$bin" sweep --help)
echo "$l" | grep -q '^libmpi\.so' || fail "sweep under mpirun's environment did not load libmpi: $l"
l=$(PMIX_RANK=0 libs "$bin" sweep list --help)
echo "$l" | grep -q '^libmpi\.so' || fail "sweep list under srun's environment did not load libmpi: $l"

n=0
for p in "$libexec"/prismlab-*; do
    name=${p##*/prismlab-}
    needed=$(readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    case $name in
    sweep-mpi | dimer-mpi)
        echo "$needed" | grep -q '^libmpi' || fail "prismlab-$name needs no libmpi" ;;
    *) echo "$needed" | grep -q 'libmpi' && fail "prismlab-$name needs Open MPI" ;;
    esac
    case $name in
    serve) ;;
    *) echo "$needed" | grep -q 'libmicrohttpd' && fail "prismlab-$name needs libmicrohttpd" ;;
    esac
    n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n programs in $libexec"
readelf -d "$libexec/prismlab-process" | grep -q 'libplplot' && fail "prismlab-process needs PLplot"
readelf -d "$libexec/prismlab-process" | grep -q 'libfftw3' || fail "prismlab-process needs no FFTW: the check reads the wrong list"

# every command of --help has its program, and runs through it
for cmd in $("$bin" --help | awk '/^  [a-z]/ { print $1 }'); do
    [ -x "$libexec/prismlab-$cmd" ] || fail "no program for '$cmd' in $libexec"
    "$bin" "$cmd" --help > "$dir/out" || fail "'$cmd --help' failed"
    grep -q "^usage: prismlab $cmd" "$dir/out" || fail "'$cmd --help' printed: $(head -2 "$dir/out")"
done

# the program without MPI under a launcher: refused, not run alone
# (refused before the file is read)
printf '[sweep]\n' > "$dir/s.ini"
"$bin" db init --db "$dir/t.db" > /dev/null
set +e
OMPI_COMM_WORLD_SIZE=2 "$libexec/prismlab-sweep" sweep "$dir/s.ini" --db "$dir/t.db" 2> "$dir/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "prismlab-sweep under a launcher: exit $rc, not 2"
grep -q 'has no MPI' "$dir/err" || fail "prismlab-sweep under a launcher said: $(cat "$dir/err")"

# a dispatcher whose programs are missing
mkdir -p "$dir/bin"
cp "$bin" "$dir/bin/prismlab"
set +e
"$dir/bin/prismlab" db --help > /dev/null 2> "$dir/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a missing program: exit $rc, not 2"
grep -q "cannot run '$dir/bin/../libexec/prismlab/prismlab-db'" "$dir/err" ||
    fail "a missing program: $(cat "$dir/err")"

# the global option before the command reaches the command's program
"$bin" --db "$dir/t.db" run list > "$dir/out" || fail "--db before 'run list' failed"
echo "startup_test: ok ($n programs)"
