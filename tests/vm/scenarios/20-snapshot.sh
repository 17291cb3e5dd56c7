#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Flight recorder: snapshots of an overwrite channel while its writers keep
# overwriting it, then a final snapshot once they are stopped, which must
# end with every context's last record.
. "$(dirname "$0")/lib.sh"

run() {
	load_lrb || return
	load_client mode=overwrite size=64 task_batch=8 \
		task_interval_us=2000 irq_interval_us=1000 irq_batch=1 || return
	# a few laps of the ring first
	sleep 1
	run_check snapshot snapshot --chan "$CHAN" --count 3 --interval-ms 300
	ctl stop
	show_written
	run_check final snapshot --chan "$CHAN" --final
	unload_client
	unload_lrb
}

run
finish
