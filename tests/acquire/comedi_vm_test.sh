#!/bin/sh
# tests/acquire/comedi_vm_test.sh - the acquisition against the Linux
# kernel's own comedi test driver, booted under QEMU.
#
# Debian's kernel package (fetched with `apt-get download` into build/vm/
# the first time, unpacked, never installed) provides vmlinuz, comedi.ko
# and comedi_test.ko.  An initramfs holds busybox, those two modules,
# bin/prismlab and the programs of db, acquire, run, process and validate
# with their shared libraries, and tests/acquire/vm/init,
# which records through the real driver (see there).  The database comes
# back base64-encoded on the serial console and is checked here:
#   - the clean run: state complete, exactly RECORD_S x 10 kHz frames, no
#     frame lost, hardware calibration stored, and its samples are the
#     driver's waveforms: channel 0 a 1 V sawtooth of period 0.1 s (a drop
#     every 1000 frames), channel 1 a +-1 V square wave;
#   - the overrun run: state overrun, with the frame where data were lost;
#   - a wrong subdevice and a missing device: one clear line each;
#   - the daemon's after-run pipeline ran prismlab-process on a run from
#     the card as soon as it stopped; the driver's waveforms are no prism,
#     so process refuses it (exit 2, its cause logged), status says
#     process-failed, the daemon exits cleanly and the run stays complete;
#   - db check passes.
# RECORD_S defaults to 60 (issue 5); set it lower to iterate.
set -eu
record_s=${RECORD_S:-60}
bin=${PRISMLAB_BIN:-bin/prismlab}
vm=build/vm   # the kernel and its modules: a cache that worktrees may share
fail() { echo "comedi_vm_test: $*" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 missing (make deps)"
[ -x /bin/busybox ] || fail "/bin/busybox missing (make deps: busybox-static)"
mkdir -p "$vm"
# This run's own files (initramfs, console log, database) go to a folder
# of its own, so that two checks running at once (worktrees sharing the
# cache) cannot overwrite each other's; kept when the test fails.
work=$(mktemp -d build/vm-run.XXXXXX)

# 1. The kernel and its comedi modules, once.
if [ ! -s "$vm/vmlinuz" ] || [ ! -s "$vm/comedi_test.ko" ]; then
    kernel_pkg() {
        apt-cache depends linux-image-amd64 2>/dev/null |
            awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
    }
    pkg=$(kernel_pkg)
    if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
        apt-get update >/dev/null 2>&1 || true   # package lists missing
        pkg=$(kernel_pkg)
    fi
    [ -n "$pkg" ] || fail "cannot tell Debian's current kernel package (apt-get update?)"
    rm -rf "$vm/kernel" "$vm"/*.deb
    (cd "$vm" && apt-get download "$pkg" >/dev/null 2>&1) ||
        fail "apt-get download $pkg failed"
    dpkg -x "$vm"/linux-image-*.deb "$vm/kernel"
    cp "$vm"/kernel/boot/vmlinuz-* "$vm/vmlinuz"
    find "$vm/kernel" -name comedi.ko -exec cp {} "$vm/comedi.ko" \;
    find "$vm/kernel" -name comedi_test.ko -exec cp {} "$vm/comedi_test.ko" \;
    [ -s "$vm/comedi_test.ko" ] || fail "$pkg has no comedi_test.ko"
    rm -rf "$vm/kernel" "$vm"/*.deb
fi

# 2. The initramfs.
root=$work/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/lib" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
cp "$vm/comedi.ko" "$vm/comedi_test.ko" "$root/lib/"
# bin/prismlab and the programs of the commands the guest runs (init),
# where it looks for them: ../libexec/prismlab from its folder
cp "$bin" "$root/bin/prismlab"
mkdir -p "$root/libexec/prismlab"
for cmd in db acquire run process validate prism ramp; do
    cp "$(dirname "$bin")/../libexec/prismlab/prismlab-$cmd" "$root/libexec/prismlab/" ||
        fail "no program for '$cmd' beside $bin (make)"
done
for f in "$bin" "$root"/libexec/prismlab/prismlab-*; do ldd "$f"; done |
    awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
cp tests/acquire/vm/init "$root/init"
cc -O2 -static -o "$root/bin/trickle" tests/acquire/vm/trickle.c || fail "cannot build the VM's slow client"
cc -O2 -static -std=c11 -D_POSIX_C_SOURCE=200809L -I. -o "$root/bin/events" \
    tests/acquire/vm/events.c tests/util/livestream.c || fail "cannot build the VM's event client"
cp fixtures/catalog/prisms.csv fixtures/catalog/ramps.csv "$root/"
chmod +x "$root/init"
echo "$record_s" >"$root/record_s"
rig() {   # rig FILE SUBDEVICE DEVICE BUFFER
    cat >"$root/$1" <<EOF
[daq]
source = comedi
device = $3
subdevice = $2
channels = 0,1
range = 0
aref = ground
rate_hz = 10000
buffer_bytes = $4
EOF
    sh tests/util/simrig.sh --beams-only /tmp/vm.db >>"$root/$1"
}
rig rig.ini 0 /dev/comedi0 0
rig rig-overrun.ini 0 /dev/comedi0 4096
rig rig-badsub.ini 1 /dev/comedi0 0
rig rig-nodev.ini 0 /dev/comedi3 0
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initramfs.gz"

# 3. Boot (no KVM here: TCG), with a time limit.
log=$work/console.log
limit=$((record_s * 4 + 240))
timeout "$limit" qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
    -kernel "$vm/vmlinuz" -initrd "$work/initramfs.gz" \
    -append "console=ttyS0 panic=-1 quiet" >"$log" 2>&1 ||
    fail "the VM did not power off within $limit s (see $log)"
# NULs: the serial console pads under load, and grep then calls the log binary
tr -d '\r\000' <"$log" >"$log.txt"
grep -q 'VM-RESULT record rc=0' "$log.txt" || fail "clean recording failed: $(grep -E 'VM-RESULT|prismlab' "$log.txt" | head -5)"
grep -q 'VM-RESULT overrun rc=2' "$log.txt" || fail "the forced overrun was not reported: $(grep 'VM-RESULT overrun' "$log.txt")"
grep 'VM-RESULT badsub' "$log.txt" | grep -q 'cannot stream input' ||
    fail "wrong subdevice: $(grep 'VM-RESULT badsub' "$log.txt")"
grep 'VM-RESULT nodev' "$log.txt" | grep -q '/dev/comedi3: cannot open' ||
    fail "missing device: $(grep 'VM-RESULT nodev' "$log.txt")"
grep -q 'VM-RESULT check rc=0' "$log.txt" || fail "db check failed in the VM"
slow=$(grep 'VM-RESULT slowclient' "$log.txt" | head -1)
echo "$slow" | grep -q 'state: complete frames: [1-9]' ||
    fail "the daemon lost frames while a client trickled: $slow"
# the old loop stalled for the whole trickle (7.2 s); a status call may
# take what the loaded host makes it take without the slow client, and
# 3 s more, never the trickle's length
worst=$(echo "$slow" | sed -n 's/.*worst_status_cs=\([0-9]*\).*/\1/p')
quiet=$(echo "$slow" | sed -n 's/.*quiet_status_cs=\([0-9]*\).*/\1/p')
[ -n "$worst" ] && [ -n "$quiet" ] && [ "$worst" -le $((quiet + 300)) ] && [ "$worst" -lt 600 ] ||
    fail "status answered slowly while a client trickled: $slow"

pipe=$(grep 'VM-RESULT pipeline ' "$log.txt" | head -1)
prun=$(echo "$pipe" | sed -n 's/.* run=\([0-9]*\) .*/\1/p')
[ -n "$prun" ] || fail "the pipeline's run did not record: $pipe"
echo "$pipe" | grep -q "daemon_rc=0 state=idle pipeline_last=$prun:process-failed " ||
    fail "the pipeline on the card's run: $pipe"
echo "$pipe" | grep -q "run $prun: pipeline: process failed (exit status 2): prismlab process: run $prun: " ||
    fail "the pipeline's failure does not give process's cause: $pipe"
grep -q 'VM-RESULT pipelinelambda0 no \[run\] lambda0_deg: lambda0,t0,beta fitted' "$log.txt" ||
    fail "the daemon did not say how lambda0 is taken: $(grep 'VM-RESULT pipelinelambda0' "$log.txt")"

# The live search on the same run: it ran (start live:true), the stream
# carried its stop event, and like process it found no prism in the
# driver's waveforms: no impact, and process's reason as its finding.
live=$(grep 'VM-RESULT live' "$log.txt" | sed 's/^VM-RESULT //')
echo "$live" | grep -q '^liveevents rc=0 ' || fail "no stop event on the pipeline run's stream: $live"
echo "$live" | grep -q '^liveevents rc=0 impacts=0$' || fail "the live search reported impacts in the driver's waveforms: $live"
echo "$live" | grep -q "^live E {\"event\":\"start\",\"run\":$prun,.*\"live\":true" ||
    fail "the live search did not run on the card's run $prun: $live"
echo "$live" | grep -q "^live E {\"event\":\"stop\",\"run\":$prun,.*\"impacts\":0," ||
    fail "the live search's stop event: $live"
echo "$live" | grep -q "^live E {\"event\":\"finding\",\"run\":$prun,.*\"kind\":\"refused\",.*no motion: the rotary speed never exceeds" ||
    fail "the live search did not say why it found no impact (process: no motion): $live"

# 4. The database, back on the host.
db=$work/vm.db
sed -n '/^VM-BEGIN-DB$/,/^VM-END-DB$/p' "$log.txt" | sed '1d;$d' | base64 -d >"$db"
$bin db check --db "$db" >/dev/null || fail "db check of the VM's database"
show=$($bin run show 1 --db "$db")
echo "$show" | grep -q '^state: *complete' || fail "run 1: $(echo "$show" | grep state)"
frames=$(echo "$show" | sed -n 's/^frames: *\([0-9]*\).*/\1/p')
[ "$frames" -eq $((record_s * 10000)) ] || fail "run 1 holds $frames frames, expected $((record_s * 10000))"
echo "$show" | grep -q 'source: *comedi /dev/comedi0 subdevice 0 (comedi_test)' || fail "run 1 source: $(echo "$show" | grep source)"
echo "$show" | grep -q 'format: *u16' || fail "run 1 format: $(echo "$show" | grep format)"
echo "$show" | grep -q 'cal=hardcal\|cal=linear' || fail "run 1 has no calibration"
$bin export 1 --csv "$work/run1.csv" --db "$db"
grep -v '^#' "$work/run1.csv" | tail -n +2 | awk -F, -v frames="$frames" '
    NR == 1 { prev = $2 }
    {
        if ($2 < min0 || NR == 1) min0 = $2
        if ($2 > max0 || NR == 1) max0 = $2
        if (prev - $2 > 1.0) { if (last) { d = NR - last; s += d; n++ } last = NR }
        prev = $2
        if ($3 > 0.5) hi++; else if ($3 < -0.5) lo++; else mid++
    }
    END {
        per = n ? s / n : 0
        printf "comedi_vm_test: ch0 sawtooth %.4f .. %.4f V, %d periods of %.2f frames; ch1 square %d high, %d low, %d between\n", min0, max0, n, per, hi, lo, mid
        if (n < frames / 1000 - 2 || per < 999 || per > 1001) exit 1
        if (min0 > -0.95 || min0 < -1.05 || max0 < 0.95 || max0 > 1.05) exit 1
        if (hi < frames / 4 || lo < frames / 4 || mid > frames / 1000 + 10) exit 1
    }' || fail "run 1 is not comedi_test's waveform"
$bin run show "$prun" --db "$db" | grep -q '^state: *complete' || fail "the pipeline's run $prun is not complete"
show2=$($bin run show 2 --db "$db")
echo "$show2" | grep -q 'state: *overrun (samples lost from frame [0-9]*)' ||
    fail "run 2: $(echo "$show2" | grep state)"
cost=$(grep -o 'cpu=[0-9.]*% maxrss=[0-9]*kB' "$log.txt" | head -1)
echo "comedi_vm_test: daemon from the card with a client trickling: $(echo "$slow" | sed 's/^VM-RESULT slowclient //')"
echo "comedi_vm_test: the daemon's pipeline on run $prun from the card: $(echo "$pipe" | sed 's/.*pipeline: //')"
echo "$live" | sed 's/^/comedi_vm_test: /'
echo "comedi_vm_test: ${record_s} s through the real comedi_test driver, 0 frames lost; recorder $cost (CPU under QEMU's TCG emulation: an upper bound); overrun detected: $(echo "$show2" | grep state)"
rm -rf "$work"
