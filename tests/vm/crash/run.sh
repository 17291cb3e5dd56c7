#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The crash test of persistent channels (make vmtest-crash): Debian's 6.12
# kernel under qemu (TCG, 4 CPUs) with reserve_mem= on its command line,
# the driver sample writing from task and hardirq context on every CPU
# into a persistent flight recorder, and the guest crashed while it
# writes; qemu reboots the same memory and the next boot recovers the
# previous run. Documentation/testing.rst, "make vmtest-crash".
#
#   tests/vm/crash/run.sh
#
# One qemu process, several boots; tests/vm/crash/driver.py runs it: it
# tells the guest's agent (tests/vm/crash/guest/10-agent.sh, on the second
# serial port) what to do on each boot, crashes the guest (a panic, a panic
# in hardirq context, qemu's system_reset through QMP), copies out what
# each recovery boot exported and checks it with babeltrace2
# (tests/vm/crash/check.py). Logs and traces in build/vmtest-crash/.
#
# The build steps are tests/vm/run.sh's (sourced); so is the environment
# (KDIR, LRB_VM_CPUS...), plus LRB_VM_CRASH_SEED (the corruption's seeds;
# default: from the clock, printed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export LRB_VM_OUT=${LRB_VM_OUT:-$(cd "$here/../../.." && pwd)/build/vmtest-crash}
export LRB_VM_SCENARIOS_DIR=$here/guest
export LRB_VM_TOOLS=lrb-record
# shellcheck source=tests/vm/run.sh
source "$here/../run.sh"

# The offsets of the task and irq streams' sequence counters in the
# sample's per-CPU lrb_sd_cpus, from its debug information.
seq_offsets() {
	local ko=$out/modules/lrb_sample_driver.ko o t i
	command -v gdb >/dev/null ||
		fail "gdb is missing: run scripts/setup.sh (it reads the sample's struct layout)"
	o=$(gdb -batch -nx -ex 'print (long)&((struct lrb_sd_cpu *)0)->st[0].seq' \
		-ex 'print (long)&((struct lrb_sd_cpu *)0)->st[1].seq' "$ko" 2>&1) ||
		fail "gdb could not read struct lrb_sd_cpu in $ko: $o"
	t=$(sed -n 's/^\$1 = \([0-9]*\)$/\1/p' <<<"$o")
	i=$(sed -n 's/^\$2 = \([0-9]*\)$/\1/p' <<<"$o")
	[ -n "$t" ] && [ -n "$i" ] ||
		fail "no offsets of lrb_sd_cpus.st[].seq in $ko (gdb said: $o):" \
		     "the sample's writer state changed; update tests/vm/crash/run.sh"
	seq_off=$t,$i
}

build_crash_module() {
	local dir=$src/tests/vm/crash
	kbuild "$out/crash.build.log" "$dir" ||
		fail "lrb_vm_crash.ko did not build (log: $out/crash.build.log)"
	cp "$dir/lrb_vm_crash.ko" "$out/modules/"
}

crash_main() {
	local start=$SECONDS rc=0
	mkdir -p "$out"
	check_tools
	command -v python3 >/dev/null || fail "python3 is missing: run scripts/setup.sh"
	scenarios=(10-agent)
	resolve_kernel
	fetch_image
	check_config
	kernel_settings
	build_modules
	build_crash_module
	seq_offsets
	checkers=()
	build_tools
	build_initramfs
	# One guest at a time on the machine (tests/vm/run.sh).
	mkdir -p "$cache"
	exec 7>"$cache/boot.lock"
	if ! flock -n 7; then
		say "another VM run holds $cache/boot.lock; waiting for it to finish"
		flock 7
	fi
	say "booted runs start: $version under qemu (TCG, -smp $cpus, -m $mem); logs in $out"
	python3 "$here/driver.py" --out "$out" --kernel "$image" \
		--initrd "$out/initramfs.cpio.gz" --cpus "$cpus" --mem "$mem" \
		--seq-off "$seq_off" --timeout "$vm_timeout" \
		--seed "${LRB_VM_CRASH_SEED:-$(date +%s)}" \
		--append "${LRB_VM_APPEND:-}" || rc=$?
	exec 7>&-
	say "took $((SECONDS - start))s"
	return "$rc"
}

crash_main "$@"
