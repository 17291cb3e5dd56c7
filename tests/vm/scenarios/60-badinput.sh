#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Misuse of the per-CPU files (opens, ioctls, splice, mmap, SIGBUS outside
# the held packet), and the stats and metadata files, on a full ring with
# its writers stopped.
. "$(dirname "$0")/lib.sh"

run() {
	load_lrb || return
	load_client mode=discard max_records=3000 size=64 task_batch=64 \
		task_interval_us=0 irq_interval_us=1000 irq_batch=4 || return
	wait_for 60 "every CPU's writers to make 3000 attempts" \
		client_reached 3000
	ctl stop
	check "stats is not writable" sh -c "! echo x 2>/dev/null > /dev/lrb/$CHAN/stats"
	check "metadata is not writable" sh -c "! echo x 2>/dev/null > /dev/lrb/$CHAN/metadata"
	run_check badinput badinput --chan "$CHAN" --cpu 0
	unload_client
	unload_lrb
}

run
finish
