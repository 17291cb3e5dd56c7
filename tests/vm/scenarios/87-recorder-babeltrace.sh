#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A small trace recorded with lrb-record (splice), with losses, verified
# here; it goes back to the host, where 87-recorder-babeltrace.host.sh reads
# it with babeltrace2 and compares its counts with lrb-record's summary
# and the client's counts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

record_run splice 300 size=64 subbuf_size=8192 num_subbuf=2 \
	task_batch=64 task_interval_us=0 irq_interval_us=1000 irq_batch=4
cp -r "/tmp/trace-$SCEN-splice" "$LRB_EXPORT/trace"
cp "$LOGDIR/stats.stop" "$LRB_EXPORT/stats"
cp "$LOGDIR/written" "$LRB_EXPORT/written"
finish
