#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: babeltrace2 and lrb-dump read the flight recorder's snapshot
# alike; it holds events, the newest of them close to the last attempt.
. "$(dirname "$0")/host.sh"
bt2_read "$EXPORT/trace"
check "the snapshot holds events ($BT_EVENTS)" test "$BT_EVENTS" -gt 0
dump_read "$EXPORT/trace"
check "lrb-dump's events ($DUMP_EVENTS) = babeltrace2's ($BT_EVENTS)" \
	test "$DUMP_EVENTS" -eq "$BT_EVENTS"
finish
