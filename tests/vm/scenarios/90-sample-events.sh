#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The LRB_EVENT() sample in the kernel: lrb_sample_events.ko writes 1000
# records of each of its three events at load; lrb-record records the
# channel until rmmod destroys it; the host side checks every field with
# babeltrace2 (tests/user/sample-events.sh, as for the user-space sample).
. "$(dirname "$0")/lib.sh"

load_lrb || finish
if insmod /lib/lrb/lrb_sample_events.ko count=1000; then
	ok
	lrb-record events -o "$LRB_EXPORT/trace" --quiet \
		2>"$LRB_EXPORT/lrb-record.err" &
	rec=$!
	wait_for 30 "lrb-record to open the cpu files of events" \
		holds_cpu_files "$rec" events
	check "the module wrote every record (dmesg: 0 lost)" \
		sh -c 'dmesg | grep -q "lrb_sample_events: wrote 1000 records of each of 3 events, 0 lost"'
	check "rmmod lrb_sample_events (destroys the channel)" \
		rmmod lrb_sample_events
	check "lrb-record ends at the end of the channel" wait "$rec"
else
	bad "insmod lrb_sample_events failed (see dmesg)"
fi
finish
