#!/bin/sh
# tests/util/simrig.sh - the rig.ini sections the acquisition tests share:
# the simulated rig at 10 kHz ([daq]), seed 000's beams ([beams]) and the
# store DB ([store]):
#   sh tests/util/simrig.sh [--beams-only] DB >rig.ini
# --beams-only leaves [daq] out, for a test with a card of its own.  Each
# test then appends its own [run], [sim] and [pipeline] sections.
set -eu
daq=1
if [ "${1:-}" = --beams-only ]; then
    daq=0
    shift
fi
[ $# -eq 1 ] || { echo "usage: simrig.sh [--beams-only] DB" >&2; exit 2; }
if [ $daq = 1 ]; then
    printf '[daq]\nsource = sim\nrate_hz = 10000\n'
fi
cat <<EOT
[beams]
h1_m = 0.0199
h2_m = 0.0116
sign1 = 1
sign2 = -1
ldv_scale_mps_per_v = 0.025
[store]
db = $1
EOT
