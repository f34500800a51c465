#!/bin/sh
# tests/util/simrig.sh - the [daq], [beams] and [store] sections of the
# rig.ini the acquisition tests run the simulated rig with (seed 000's
# beams, 10 kHz), storing into DB:
#   sh tests/util/simrig.sh DB >rig.ini
# Each test then appends its own [run], [sim] and [pipeline] sections.
set -eu
[ $# -eq 1 ] || { echo "usage: simrig.sh DB" >&2; exit 2; }
cat <<EOT
[daq]
source = sim
rate_hz = 10000
[beams]
h1_m = 0.0199
h2_m = 0.0116
sign1 = 1
sign2 = -1
ldv_scale_mps_per_v = 0.025
[store]
db = $1
EOT
