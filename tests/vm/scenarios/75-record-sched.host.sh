#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: babeltrace2 reads the tracepoint sample's trace: every record
# the channel committed is an event, losses are reported exactly, and the
# scheduler and interrupt events are all there.
. "$(dirname "$0")/host.sh"
bt2_read "$EXPORT/trace"
written=$(record_sum records_written)
lost=$(( $(record_sum lost_full) + $(record_sum lost_wrap) + $(record_sum lost_big) + $(record_sum lost_nest) ))
check "babeltrace2's events ($BT_EVENTS) = records committed ($written)" \
	test "$BT_EVENTS" -eq "$written"
check "babeltrace2's discarded events ($BT_DISCARDED) = lost ($lost)" \
	test "$BT_DISCARDED" -eq "$lost"
for ev in sched_switch sched_wakeup; do
	check "$ev events recorded" grep -q "^$ev " "$EXPORT/bt2-names.txt"
done
dump_read "$EXPORT/trace"
check "lrb-dump's events ($DUMP_EVENTS) = babeltrace2's ($BT_EVENTS)" \
	test "$DUMP_EVENTS" -eq "$BT_EVENTS"
finish
