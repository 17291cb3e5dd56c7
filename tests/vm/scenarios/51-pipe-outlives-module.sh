#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Pages spliced into a pipe outlive the cpu file, the channel and lrb.ko:
# lrb.ko unloads while a pipe still holds them, and the pipe's reader then
# gets the packet intact (the pipe's operations are the kernel's, not
# lrb.ko's).
. "$(dirname "$0")/lib.sh"

SYNC=$LOGDIR/sync

run() {
	mkdir -p "$SYNC"
	load_lrb || return
	load_client mode=discard max_records=500 size=64 task_batch=16 \
		task_interval_us=1000 irq_interval_us=1000 irq_batch=2 || return
	wait_for 60 "every CPU's writers to make 500 attempts" \
		client_reached 500
	ctl stop
	start_check pipe pipe-outlive --chan "$CHAN" --sync "$SYNC"
	wait_for 30 "the checker to splice a packet (sync/ready)" \
		test -e "$SYNC/ready" || return
	ctl destroy
	unload_client
	check "rmmod lrb succeeds while a pipe holds spliced pages" rmmod lrb
	touch "$SYNC/go"
	wait_check pipe 30
}

run
finish
