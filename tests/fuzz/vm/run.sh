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
#   and those of tests/vm/run.sh; its timeouts are raised here to fit.
#   LRB_VM_DEBUG=1 fuzzes the debug kernel (scripts/debug-kernel.sh), with
#   logs in build/fuzzvm-debug.
#
# Coverage: on a kernel with CONFIG_GCOV_KERNEL (the debug kernel has it),
# lrb.ko is built with GCOV_PROFILE=y, the guest exports its counters
# after unloading it, and tests/fuzz/vm/coverage.sh writes the lines of
# kernel-module/ and lib/ reached, and those not reached with their
# reasons, to <logs>/coverage.txt.
#
# Prints the operations per kind (calls, succeeded, refused on purpose,
# failed and why), what the writers wrote, the seed, any finding and the
# coverage; the last line is tests/vm/run.sh's "vmtest: N passed, M
# failed" (the checks: no finding, writers on every CPU, no kernel report,
# coverage counters read); the exit status is non-zero on failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$root/tests/fuzz/vm
out=${LRB_VM_OUT:-$root/build/fuzzvm${LRB_VM_DEBUG:+-debug}}
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

# The kernel's config, to know whether it has gcov: the debug kernel's
# (built first if need be, as tests/vm/run.sh would), or KDIR's, or
# Debian's, which has none.
kconfig=
if [ -n "${LRB_VM_DEBUG:-}" ]; then
	while IFS= read -r line; do
		case $line in
		KDIR=*) kconfig=${line#*=}/.config ;;
		esac
	done < <("$root/scripts/debug-kernel.sh")
	[ -n "$kconfig" ] || { say "scripts/debug-kernel.sh failed (see above)"; exit 1; }
elif [ -n "${LRB_VM_KERNEL:-}" ] && [ -n "${KDIR:-}" ]; then
	kconfig=$KDIR/.config
fi
coverage=
if [ -n "$kconfig" ] && grep -q '^CONFIG_GCOV_KERNEL=y' "$kconfig"; then
	coverage=1
fi

rm -rf "$stage"
mkdir -p "$stage"
cp "$here/90-fuzz.sh" "$root/tests/vm/scenarios/lib.sh" "$stage/"
rm -f "$out/coverage.txt"
if [ -n "$coverage" ]; then
	# kbuild takes GCOV_PROFILE from the environment; objects built
	# without it, or .gcno files of another build, must not stay
	export GCOV_PROFILE=y
	rm -f "$out"/src/kernel-module/*.o "$out"/src/kernel-module/*.gcno \
		"$out"/src/lib/*.o "$out"/src/lib/*.gcno
	# run by tests/vm/run.sh on the host after the guest, EXPORT set
	# shellcheck disable=SC2016 # $EXPORT is the host script's
	printf '#!/bin/bash\nexec %q %q "$EXPORT/gcov" %q\n' "$here/coverage.sh" \
		"$out/src" "$out/coverage.txt" >"$stage/90-fuzz.host.sh"
	say "coverage: the kernel has gcov; lrb.ko is built with GCOV_PROFILE=y"
fi
# the scenario: the fuzz, its watchdog (60 s) and the unloading; the
# debug kernel is about 4 times slower (tests/vm/run.sh, debug_slowdown)
slack=240
[ -z "${LRB_VM_DEBUG:-}" ] || slack=960
scen_timeout=${LRB_VM_SCENARIO_TIMEOUT:-$((secs + slack))}
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
[ ! -f "$out/coverage.txt" ] ||
	say "coverage: $(head -n 1 "$out/coverage.txt" | sed 's/^.*(gcov): //'); report: $out/coverage.txt"
say "took $((SECONDS - start))s; logs: $out/run.log, $out/output.log, $out/console.log"
tail -n 1 "$out/run.log"
exit "$rc"
