#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: babeltrace2 prints every record of lrb_sample_events.ko's
# three events with every field as the module wrote it, and lrb-dump
# decodes as many.
. "$(dirname "$0")/host.sh"
check "babeltrace2 prints every field (tests/user/sample-events.sh)" \
	"$LRB_ROOT/tests/user/sample-events.sh" "$EXPORT/trace" 1000
dump_read "$EXPORT/trace"
check "lrb-dump's events ($DUMP_EVENTS) = 3000" test "$DUMP_EVENTS" -eq 3000
finish
