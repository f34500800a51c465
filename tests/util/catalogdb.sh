#!/bin/sh
# tests/util/catalogdb.sh - a fresh store holding the fixtures' catalogue,
# the start most command tests share:
#   sh tests/util/catalogdb.sh BIN DB
# runs `BIN db init`, then imports fixtures/catalog/prisms.csv and
# ramps.csv into DB (from the tree's root); exits non-zero, with the
# command's own message, when any of the three fails.
set -eu
[ $# -eq 2 ] || { echo "usage: catalogdb.sh BIN DB" >&2; exit 2; }
"$1" db init --db "$2" >/dev/null
"$1" prism import fixtures/catalog/prisms.csv --db "$2" >/dev/null
"$1" ramp import fixtures/catalog/ramps.csv --db "$2" >/dev/null
