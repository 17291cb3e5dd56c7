#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The soak of lrb.ko: tests/soak/10-soak.sh in Debian's 6.12 kernel under
# qemu (TCG, 4 CPUs) for DURATION, through tests/vm/run.sh, then the
# summary table (tests/soak/summary.sh), also kept in build/soak/summary.txt.
#
#   tests/soak/run.sh [DURATION]       (make soak [DURATION=30m])
#
#   DURATION    writing time: N, Ns, Nm or Nh (default 30m, at least 140s:
#               14 phases of at least 10 s); the run takes longer (the
#               build, the boot, and each phase's drain and checks)
#
# The scenario is staged in build/soak/scenarios with
# tests/vm/scenarios/{lib,recorder}.sh; tests/vm/run.sh's output goes to
# build/soak (LRB_VM_OUT), so that make vmtest's logs stay, and the
# figures come back in build/soak/export/10-soak.
#
# Environment:
#   LRB_SOAK_HOTPLUG   seconds between CPU hotplug cycles (default 3)
#   and those of tests/vm/run.sh; its timeouts follow DURATION here, and
#   the guest gets LRB_VM_MEM=3072 (room in its tmpfs for a phase's data) unless told otherwise
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/soak
stage=$out/scenarios
arg=${1:-30m}

say() { echo "lrb soak: $*" >&2; }

num=${arg%[smh]}
case $num in
'' | *[!0-9]*)
	say "DURATION=$arg: give a number of seconds, minutes or hours (140s, 30m, 2h)"
	exit 2 ;;
esac
case $arg in
*m) secs=$((10#$num * 60)) ;;
*h) secs=$((10#$num * 3600)) ;;
*) secs=$((10#$num)) ;;
esac
if [ "$secs" -lt 140 ]; then
	say "DURATION=$arg: the soak needs at least 140s (14 phases of at least 10 s)"
	exit 2
fi
hotplug=${LRB_SOAK_HOTPLUG:-3}
case $hotplug in
'' | *[!0-9]* | 0) say "LRB_SOAK_HOTPLUG=$hotplug: give a positive number of seconds"; exit 2 ;;
esac

rm -rf "$stage" "$out/export" "$out/summary.txt"
mkdir -p "$stage"
cp "$root/tests/soak/10-soak.sh" "$root/tests/soak/soak.sh" "$root/tests/soak/companion.sh" \
	"$root/tests/vm/scenarios/lib.sh" "$root/tests/vm/scenarios/recorder.sh" "$stage/"
# Each phase's drain and checks took up to 40 s here (TCG on 2 busy host
# cores): allow twice that, and the build before the boot is not counted.
scen_timeout=${LRB_VM_SCENARIO_TIMEOUT:-$((secs + 14 * 80 + 300))}
say "$secs s of writing, a CPU offline for 1 s then ${hotplug} s online in turn; building and booting the VM (tests/vm/run.sh)"
start=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$SECONDS
# The verdict is the summary's last line, from run.sh's own last line
# ("vmtest: N passed, M failed", printed on every path, a failed build
# included), not its exit status: bash reads a script as it runs it, so
# an edit of tests/vm/run.sh in the checkout during a long soak can make
# it exit non-zero after its results are all in.
LRB_VM_OUT=$out LRB_VM_SCENARIOS_DIR=$stage \
	LRB_VM_MEM=${LRB_VM_MEM:-3072} \
	LRB_VM_SCENARIO_TIMEOUT=$scen_timeout \
	LRB_VM_TIMEOUT=${LRB_VM_TIMEOUT:-$((scen_timeout + 300))} \
	LRB_VM_APPEND="${LRB_VM_APPEND:-} lrbsoak.duration=$secs lrbsoak.hotplug=$hotplug" \
	"$root/tests/vm/run.sh" 2>&1 | tee "$out/run.log" >&2 || true
"$root/tests/soak/summary.sh" "$out" "$start" $((SECONDS - t0)) | tee "$out/summary.txt"
if ! tail -n 1 "$out/summary.txt" | grep -qE '^[0-9]+ passed, 0 failed$'; then
	say "the soak failed: see the table above, build/soak/output.log and build/soak/console.log"
	exit 1
fi
