#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Allocation failures injected by the kernel (failslab, fail_page_alloc,
# armed per system call through /proc/thread-self/fail-nth): every
# allocation of loading lrb.ko, of creating a channel (loading the client),
# and of opening and using the channel's files fails in turn; then the
# read, splice and mmap consumers run with allocations failing in their
# calls on the cpu files. Each failure must reach the caller as ENOMEM,
# leave nothing behind and lose no record (exact accounting); kmemleak's
# scan after the scenario finds any leak (tests/vm/init). Needs the debug
# kernel (make vmtest-debug): Debian's has no fault injection.
. "$(dirname "$0")/lib.sh"

FI=/sys/kernel/debug

# fault_setup: failslab and fail_page_alloc fail only what fail-nth arms,
# sleeping (GFP_KERNEL) allocations and single pages included, without a
# report each; the kernel's own warning of a failed page allocation is
# expected (/init).
fault_setup() {
	: >/run/vmtest/injects-faults
	for _a in failslab fail_page_alloc; do
		if ! { echo 0 >"$FI/$_a/probability" &&
		       echo N >"$FI/$_a/ignore-gfp-wait" &&
		       echo 0 >"$FI/$_a/verbose"; }; then
			bad "cannot set up $FI/$_a (is debugfs mounted?)"
			return 1
		fi
	done
	if ! echo 0 >"$FI/fail_page_alloc/min-order"; then
		bad "cannot set $FI/fail_page_alloc/min-order to 0"
		return 1
	fi
	ok
}

run() {
	if [ ! -e /proc/self/fail-nth ] || [ ! -d "$FI/failslab" ] ||
	   [ ! -d "$FI/fail_page_alloc" ]; then
		note "skipped: this kernel has no fault injection (FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS); make vmtest-debug runs it"
		return
	fi
	fault_setup || return
	run_check load-lrb fault-load --ko "$LRB_KO"
	load_lrb || return
	run_check load-client fault-load --ko "$CLIENT_KO" --chan "$CHAN" \
		--params "name=$CHAN mode=discard subbuf_size=4096 num_subbuf=4 autostart=0"
	load_client mode=discard max_records=500 size=64 task_batch=64 \
		task_interval_us=0 irq_interval_us=1000 irq_batch=4 || return
	wait_for 60 "every CPU's writers to make 500 attempts" \
		client_reached 500
	ctl stop
	run_check open fault-open --chan "$CHAN"
	unload_client
	unload_lrb
	# shellcheck disable=SC2034 # read by consume_run (lib.sh)
	CONSUME_OPTS="--fail-nth 4"
	for _via in read splice-file mmap; do
		consume_run "$_via" 1000 size=200 task_batch=32 \
			task_interval_us=0 irq_interval_us=1000 irq_batch=4
	done
}

run
finish
