#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# CPU hotplug while consuming by splice(): cpu1 goes offline and back three
# times; its file stays, nothing is lost unaccounted, the accounting of every
# CPU stays exact.
. "$(dirname "$0")/lib.sh"

ONLINE=/sys/devices/system/cpu/cpu1/online

run() {
	if [ ! -w "$ONLINE" ]; then
		bad "$ONLINE is not writable: the VM needs at least 2 CPUs and CONFIG_HOTPLUG_CPU"
		return
	fi
	load_lrb || return
	# writers slow enough to be busy through the whole hotplug loop
	load_client mode=discard autostart=0 max_records=5000 size=64 \
		task_batch=1 task_interval_us=1000 irq_interval_us=1000 \
		irq_batch=1 || return
	start_check consume consume --chan "$CHAN" --via splice-file --timeout 90
	wait_for 30 "the consumer to open its files" \
		grep -q ': consuming ' "$LOGDIR/consume.log" || return
	ctl start
	for i in 1 2 3; do
		check "cpu1 offline (round $i)" sh -c "echo 0 > $ONLINE"
		sleep 1
		check "cpu1 online again (round $i)" sh -c "echo 1 > $ONLINE"
		sleep 1
	done
	check "cpu1 online at the end" grep -q 1 "$ONLINE"
	show_written
	wait_for 60 "every CPU's writers to make 5000 attempts" \
		client_reached 5000
	ctl destroy
	wait_check consume 90
	unload_client
	unload_lrb
}

run
finish
