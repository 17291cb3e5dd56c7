#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# SIGINT stops lrb-record cleanly: every buffer flushed and drained.
#  A: writers stopped first: after the SIGINT nothing is left in the
#     buffers (consumed == produced) and the trace accounts for every
#     record the client wrote.
#  B: writers running (moderately, then at full speed): a second
#     lrb-record takes over up to the channel's destruction; the two traces
#     together hold every packet exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

# nothing_left STATS: every CPU consumed everything produced
nothing_left() {
	awk '/^cpu/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		      if (v["consumed"] != v["produced"]) bad++ }
	     END { exit bad != 0 }' "$1"
}

stopped_writers() {
	load_lrb || return
	load_client mode=discard autostart=0 max_records=100000 size=64 \
		task_batch=16 task_interval_us=1000 irq_interval_us=1000 \
		irq_batch=2 || return
	d=/tmp/sigint-a
	rm -rf $d
	start_bg reca lrb-record "$CHAN" -o $d --consumer read
	wait_for 10 "lrb-record to start" bg_says reca recording || return
	ctl start
	sleep 2
	ctl stop
	show_written
	# no switch timer: the packets being filled are still open
	stats_copy "$LOGDIR/stats.a"
	kill -INT "$(cat "$LOGDIR/reca.pid")"
	bg_wait reca 30
	check "lrb-record says SIGINT" grep -q 'stopped by SIGINT' \
		"$LOGDIR/reca.out"
	stats_copy "$LOGDIR/stats.a2"
	check "SIGINT: every buffer drained (consumed == produced)" \
		nothing_left "$LOGDIR/stats.a2"
	verify sigint-a $d -- --stats "$LOGDIR/stats.a"
	rm -rf $d
	unload_client
	unload_lrb
}

# running_writers SECONDS CONSUMER1 CONSUMER2 PARAM...: the first
# lrb-record gets SIGINT after SECONDS, the second records for SECONDS
# more before the writers stop
running_writers() {
	secs=$1
	c1=$2
	c2=$3
	shift 3
	load_lrb || return
	load_client mode=discard autostart=0 size=64 "$@" || return
	d=/tmp/sigint-b
	rm -rf $d-1 $d-2
	start_bg recb1 lrb-record "$CHAN" -o $d-1 --consumer "$c1"
	wait_for 10 "lrb-record to start" bg_says recb1 recording || return
	ctl start
	sleep "$secs"
	kill -INT "$(cat "$LOGDIR/recb1.pid")"
	# the drain stops at the flush even if writers go on at full speed
	bg_wait recb1 10
	check "lrb-record says SIGINT" grep -q 'stopped by SIGINT' \
		"$LOGDIR/recb1.out"
	start_bg recb2 lrb-record "$CHAN" -o $d-2 --consumer "$c2"
	wait_for 10 "lrb-record to start" bg_says recb2 recording || return
	sleep "$secs"
	ctl stop
	show_written
	stats_copy "$LOGDIR/stats.b"
	ctl destroy
	bg_wait recb2 30
	verify sigint-b $d-1 $d-2 -- --stats "$LOGDIR/stats.b"
	# the guest's /tmp is RAM
	rm -rf $d-1 $d-2
	unload_client
	unload_lrb
}

stopped_writers
running_writers 2 splice mmap max_records=6000 task_batch=16 \
	task_interval_us=1000 irq_interval_us=1000 irq_batch=2
# writers at full speed, without end (about 50 MB/s: short, /tmp is RAM)
running_writers 0.5 read splice task_batch=64 task_interval_us=0 \
	irq_interval_us=200 irq_batch=8
finish
