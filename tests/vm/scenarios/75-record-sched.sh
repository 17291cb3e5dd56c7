#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The tracepoint sample records sched_switch, sched_wakeup and interrupt
# events while the guest keeps busy; lrb-record records them until the
# channel is destroyed; the host side reads them with babeltrace2.
. "$(dirname "$0")/lib.sh"

load_lrb || finish
if insmod /lib/lrb/lrb_sample_sched.ko; then
	ok
	lrb-record sched -o "$LRB_EXPORT/trace" --quiet \
		2>"$LRB_EXPORT/lrb-record.err" &
	rec=$!
	wait_for 30 "lrb-record to open the cpu files of sched" \
		holds_cpu_files "$rec" sched
	# context switches, wakeups and interrupts on every CPU
	for i in 1 2 3 4; do
		(n=0; while [ $n -lt 300 ]; do ls / >/dev/null; n=$((n + 1)); done) &
	done
	wait_for 60 "the busy loops" sh -c '! pgrep -f "ls /" >/dev/null'
	sleep 1
	check "rmmod lrb_sample_sched (destroys the channel)" \
		rmmod lrb_sample_sched
	check "lrb-record ends at the end of the channel" wait "$rec"
else
	bad "insmod lrb_sample_sched failed (see dmesg)"
fi
finish
