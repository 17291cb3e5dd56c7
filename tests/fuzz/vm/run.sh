#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The syscall fuzzer of lrb.ko's files, in the VM (make fuzz-vm): stages
# the scenario 90-fuzz.sh with tests/vm/scenarios/lib.sh in
# build/fuzzvm/scenarios and runs it through tests/vm/run.sh, which builds
# lrb.ko, the test client and, from this directory, lrb-fuzz, boots the
# guest and scans the kernel log after the scenario. Its environment goes
# through to tests/vm/run.sh unchanged (KDIR, the kernel to boot...).
#
#   tests/fuzz/vm/run.sh [DURATION]      (make fuzz-vm DURATION=10m)
#
#   DURATION   how long the workers run: 600, 90s, 10m (default 10m)
#
# Environment:
#   LRB_FUZZ_SEED      the seed (default: chosen by lrb-fuzz and printed)
#   LRB_FUZZ_WORKERS   worker processes (default 4)
#   and those of tests/vm/run.sh; its timeouts are raised here to fit
#
# Prints the operations per kind (calls, succeeded, refused on purpose,
# failed and why), what the writers wrote, the seed and any finding; the
# last line is tests/vm/run.sh's "vmtest: N passed, M failed" (the checks:
# no finding, writers on every CPU, no kernel report); the exit status is
# non-zero on failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$root/tests/fuzz/vm
out=${LRB_VM_OUT:-$root/build/fuzzvm}
stage=$out/scenarios
arg=${1:-${DURATION:-10m}}
workers=${LRB_FUZZ_WORKERS:-4}

say() { echo "lrb fuzz-vm: $*" >&2; }

case $arg in
*[!0-9smh]* | '' | [smh]*)
	say "DURATION=$arg: give seconds (600, 600s), minutes (10m) or hours (1h)"
	exit 2 ;;
*h) secs=$((${arg%h} * 3600)) ;;
*m) secs=$((${arg%m} * 60)) ;;
*s) secs=${arg%s} ;;
*) secs=$arg ;;
esac
case ${LRB_FUZZ_SEED:-0} in
*[!0-9]*) say "LRB_FUZZ_SEED=$LRB_FUZZ_SEED: give a decimal number"; exit 2 ;;
esac
case $workers in
'' | *[!0-9]* | 0) say "LRB_FUZZ_WORKERS=$workers: give a positive number"; exit 2 ;;
esac

rm -rf "$stage"
mkdir -p "$stage"
cp "$here/90-fuzz.sh" "$root/tests/vm/scenarios/lib.sh" "$stage/"
# the scenario: the fuzz, its watchdog (60 s) and the unloading
scen_timeout=${LRB_VM_SCENARIO_TIMEOUT:-$((secs + 240))}
say "fuzzing for ${secs}s with $workers workers; building and booting the VM (tests/vm/run.sh)"
start=$SECONDS
rc=0
LRB_VM_OUT=$out LRB_VM_SCENARIOS_DIR=$stage LRB_VM_CHECK_DIR=$here \
	LRB_VM_SCENARIO_TIMEOUT=$scen_timeout \
	LRB_VM_TIMEOUT=${LRB_VM_TIMEOUT:-$((scen_timeout + 600))} \
	LRB_VM_APPEND="${LRB_VM_APPEND:-} lrbfuzz.duration=$secs lrbfuzz.workers=$workers${LRB_FUZZ_SEED:+ lrbfuzz.seed=$LRB_FUZZ_SEED}" \
	"$root/tests/vm/run.sh" >"$out/run.log" 2>&1 || rc=$?
# what the fuzzer printed: seed, findings and the operations per kind
[ ! -f "$out/output.log" ] || sed -n 's/^    /  /p' "$out/output.log" >&2
# and the controller's: channels, CPU offlines, what the writers wrote
grep -E '^FAIL |^90-fuzz: (controller|channels|writers|  cpu)' "$out/output.log" 2>/dev/null |
	sed 's/^/  /' >&2 || true
if [ "$rc" -ne 0 ]; then
	say "failed; the last lines of tests/vm/run.sh ($out/run.log):"
	grep -E '^lrb vmtest: (FAILED|scenario|kernel reports|the console)|^    ' "$out/run.log" |
		tail -n 80 >&2 || true
fi
say "took $((SECONDS - start))s; logs: $out/run.log, $out/output.log, $out/console.log"
tail -n 1 "$out/run.log"
exit "$rc"
