#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench, part consumer-vm: MB/s drained per CPU from lrb.ko's per-CPU
# files by splice, mmap and read, into /dev/null and a file on tmpfs, in
# Debian's 6.12 kernel under qemu (TCG, 4 vCPUs: the ratios are the result,
# not the absolute figures). Prints the table and the BENCH lines.
#
#   tests/vm/bench/run.sh        (scripts/bench.sh consumer-vm)
#
# It runs tests/vm/run.sh (which builds lrb.ko, the test client and,
# from this directory, lrb-consumer-bench) on the scenario 10-consumer.sh,
# staged in build/vmbench/scenarios with tests/vm/scenarios/lib.sh, its
# output in build/vmbench (LRB_VM_OUT) so that the last make vmtest's logs
# stay; the figures come back in build/vmbench/export/10-consumer/results.txt.
# What is measured and how: tests/vm/bench/main.c.
#
# Environment:
#   LRB_BENCH_ROUNDS   drains of each CPU's 4 MiB ring per figure (default
#                      20: 84 MB per CPU and figure)
#   and those of tests/vm/run.sh, whose timeouts are raised here to fit
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
rounds=${LRB_BENCH_ROUNDS:-20}
stage=$root/build/vmbench/scenarios
results=$root/build/vmbench/export/10-consumer/results.txt

say() { echo "lrb consumer-vm: $*" >&2; }

case $rounds in
'' | *[!0-9]* | 0) say "LRB_BENCH_ROUNDS=$rounds: give a positive number of drains per figure"; exit 2 ;;
esac
rm -rf "$stage"
mkdir -p "$stage"
cp "$root"/tests/vm/bench/[0-9]*.sh "$root/tests/vm/scenarios/lib.sh" "$stage/"
rm -f "$results"
# A round took about 2 s here (4 vCPUs on 2 busy host cores): room for 7.
scen_timeout=${LRB_VM_SCENARIO_TIMEOUT:-$((120 + 15 * rounds))}
say "$rounds drains per figure; building and booting the VM (tests/vm/run.sh)"
if ! LRB_VM_OUT=$root/build/vmbench LRB_VM_SCENARIOS_DIR=$stage \
	LRB_VM_CHECK_DIR=$root/tests/vm/bench \
	LRB_VM_SCENARIO_TIMEOUT=$scen_timeout \
	LRB_VM_TIMEOUT=${LRB_VM_TIMEOUT:-$((scen_timeout + 300))} \
	LRB_VM_APPEND="${LRB_VM_APPEND:-} lrbbench.rounds=$rounds" \
	"$root/tests/vm/run.sh" >&2; then
	say "the benchmark failed: see the lines above and build/vmbench/output.log"
	exit 1
fi
if ! grep -q $'^BENCH\t' "$results" 2>/dev/null; then
	say "no figures came back from the guest ($results): see build/vmbench/output.log"
	exit 1
fi
cat "$results"
