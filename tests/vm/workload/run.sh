#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench, part workload-vm: the cost of tracing a real workload. In
# Debian's 6.12 kernel under qemu (TCG, 4 vCPUs), lrb-pingpong (pipe
# ping-pong between thread pairs and O_DIRECT reads of the virtio disk)
# runs untraced, traced by lrb (lrb_sample_sched.ko, lrb-record) and traced
# by ftrace (the same four events, trace-cmd record), interleaved over
# several rounds in one boot (tests/vm/workload/10-workload.sh). Prints
# the table and the BENCH lines (tests/vm/workload/report.py).
#
#   tests/vm/workload/run.sh     (scripts/bench.sh workload-vm, make bench-workload)
#
# It runs tests/vm/run.sh (which builds lrb.ko, the sample modules, the
# tools and, from this directory, lrb-pingpong, and puts the host's
# trace-cmd with its libraries in the initramfs) on the scenario
# 10-workload.sh, staged in build/vmworkload/scenarios with
# tests/vm/scenarios/lib.sh, its output in build/vmworkload; the runs come
# back in build/vmworkload/export/10-workload/runs.txt.
#
# The guest's clock is qemu's instruction counter (-icount shift=0: 1 ns
# per instruction, single-threaded TCG), not the host's: on this shared
# 2-core host, wall-clock TCG put the same run anywhere from half to three
# times its median (Documentation/benchmarks.rst). Busy time is then a
# count of the guest's instructions; idle time (sleep=on) still follows
# the host's clock, waiting for the virtio disk for instance.
#
# Environment:
#   LRB_BENCH_WORKLOAD_ROUNDS  rounds of the three configurations (default 9)
#   LRB_BENCH_WORKLOAD_CLOCK   icount (the default, above) or host:
#                              multi-threaded TCG on the host's clock
#   and those of tests/vm/run.sh, whose timeouts are raised here to fit
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
rounds=${LRB_BENCH_WORKLOAD_ROUNDS:-9}
stage=$root/build/vmworkload/scenarios
runs=$root/build/vmworkload/export/10-workload/runs.txt

say() { echo "lrb workload-vm: $*" >&2; }

case ${LRB_BENCH_WORKLOAD_CLOCK:-icount} in
icount) accel=tcg,thread=single qemu_args="-icount shift=0,sleep=on" ;;
host) accel=tcg,thread=multi qemu_args= ;;
*) say "LRB_BENCH_WORKLOAD_CLOCK=$LRB_BENCH_WORKLOAD_CLOCK: give icount or host"; exit 2 ;;
esac
case $rounds in
'' | *[!0-9]* | 0) say "LRB_BENCH_WORKLOAD_ROUNDS=$rounds: give a positive number of rounds"; exit 2 ;;
esac
tracecmd=$(command -v trace-cmd) ||
	{ say "trace-cmd is missing: run scripts/setup.sh --bench"; exit 1; }
rm -rf "$stage"
mkdir -p "$stage"
cp "$root/tests/vm/workload/10-workload.sh" "$root/tests/vm/scenarios/lib.sh" "$stage/"
rm -f "$runs"
# A round took about 25 s here (2 busy host cores): room for 4x.
scen_timeout=${LRB_VM_SCENARIO_TIMEOUT:-$((120 + 120 * rounds))}
say "$rounds rounds; building and booting the VM (tests/vm/run.sh)"
if ! LRB_VM_OUT=$root/build/vmworkload LRB_VM_SCENARIOS_DIR=$stage \
	LRB_VM_CHECK_DIR=$root/tests/vm/workload \
	LRB_VM_PROGRAMS="$tracecmd" \
	LRB_VM_ACCEL=$accel LRB_VM_QEMU_ARGS="$qemu_args" \
	LRB_VM_SCENARIO_TIMEOUT=$scen_timeout \
	LRB_VM_TIMEOUT=${LRB_VM_TIMEOUT:-$((scen_timeout + 300))} \
	LRB_VM_APPEND="${LRB_VM_APPEND:-} lrbbench.rounds=$rounds" \
	"$root/tests/vm/run.sh" >&2; then
	say "the benchmark failed: see the lines above and build/vmworkload/output.log"
	exit 1
fi
python3 "$root/tests/vm/workload/report.py" "$runs" ||
	{ say "no complete round came back from the guest ($runs): see build/vmworkload/output.log"; exit 1; }
