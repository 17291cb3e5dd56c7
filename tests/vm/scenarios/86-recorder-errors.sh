#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record's and lrb-receive's errors: usage (status 2), no channel, a
# cpu file taken, a trace directory in use, no receiver (status 1); and
# --duration, with the progress line on a terminal (the console).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

says() {
	grep -q "$2" "$LOGDIR/$1.err"
}

errors() {
	run usage-none 2 lrb-record
	run usage-consumer 2 lrb-record x --consumer nope
	run usage-both 2 lrb-record x -o /tmp/x --to 127.0.0.1:1
	run usage-duration 2 lrb-record x --duration -1
	run usage-cpus 2 lrb-record x --cpus 3-1
	run recv-usage 2 lrb-receive -o /tmp/x
	run recv-addr 2 lrb-receive --listen nohost:99999 -o /tmp/x
	run no-lrb 1 lrb-record "$CHAN" -o /tmp/none
	check "no channel: says what to do" says no-lrb "is the channel created"
	load_lrb || return
	load_client mode=discard size=64 task_batch=8 task_interval_us=2000 \
		irq_interval_us=1000 irq_batch=1 || return
	run no-chan 1 lrb-record nosuch -o /tmp/none
	check "wrong channel: lists the channels" says no-chan "channels in /dev/lrb: $CHAN"
	run no-cpu 1 lrb-record "$CHAN" --cpus 63 -o /tmp/none
	run no-recv 1 lrb-record "$CHAN" --to 127.0.0.1:1
	check "no receiver: says what to do" says no-recv "lrb-receive --listen running"
	d=/tmp/dur
	rm -rf $d $d-2
	# the progress line goes to the console (a terminal): see console.log
	note "lrb-record $CHAN --duration 3 -o $d 2>/dev/ttyS0"
	lrb-record "$CHAN" --duration 3 -o $d >"$LOGDIR/dur.out" 2>/dev/ttyS0 &
	pid=$!
	wait_for 30 "lrb-record --duration 3 to open the cpu files" \
		holds_cpu_files "$pid" "$CHAN"
	run busy 1 lrb-record "$CHAN" -o $d-2
	check "cpu file taken: says so" says busy "another reader"
	wait $pid
	rc=$?
	sed 's/^/    dur: /' "$LOGDIR/dur.out"
	check "--duration 3: exit status $rc" test $rc -eq 0
	check "--duration: stopped by duration" grep -q 'stopped by duration' "$LOGDIR/dur.out"
	check "--duration: json" grep -q '"stopped_by": "duration"' $d/.lrb-record.json
	run exists 1 lrb-record "$CHAN" --duration 1 -o $d
	check "trace directory in use: says so" says exists "holds a trace already"
	verify dur-cpus1 $d -- --snapshot --live
	rm -rf $d-3
	run cpus 0 lrb-record "$CHAN" --duration 1 --cpus 1 -o $d-3 --consumer mmap
	set -- "$d"-3/"$CHAN"_*
	check "--cpus 1: one stream file ($*)" test $# -eq 1
	unload_client
	unload_lrb
}

errors
finish
