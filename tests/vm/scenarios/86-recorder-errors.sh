#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record's errors: usage (status 2), no channel, a cpu file taken, a
# trace directory in use, no lttng-relayd (status 1), lttng-relayd killed
# while it records (status 1, relayd keeps what it confirmed); and
# --duration, with the progress line on a terminal (the console).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"
. "$(dirname "$0")/relayd.sh"

says() {
	grep -q "$2" "$LOGDIR/$1.err"
}

# relayd_killed: lttng-relayd killed (SIGKILL) while lrb-record sends to
# it: lrb-record says so and exits 1; relayd's stream files hold every
# packet lrb-record says relayd confirmed (said it had written), readable
# by babeltrace2.
relayd_killed() {
	relayd_start || return
	start_bg kill lrb-record "$CHAN" --relayd "$RELAYD_URL" --consumer mmap
	# a CPU's file holds four 16 KiB packets: lrb-record has asked relayd
	# about the first ones after they were written, so some are confirmed
	wait_for 30 "lrb-record to send packets" sh -c \
		"find $RELAYD_OUT -name '${CHAN}_*' -size +63k | grep -q ."
	kill -9 "$RELAYD"
	wait "$RELAYD" 2>/dev/null
	bg_wait kill 30 1
	check "relayd killed: says so" bg_says kill "relayd went away (killed or stopped?)"
	meta=$(find "$RELAYD_OUT" -name metadata -type f | head -n 1)
	t=/tmp/confirmed
	rm -rf $t
	mkdir -p $t
	cp "$meta" $t/
	# "cpuN=PACKETS/BYTES": relayd's files cut to what it confirmed
	for w in $(sed -n 's/.*confirmed packets\/bytes: //p' "$LOGDIR/kill.out"); do
		cpu=${w%%=*}
		bytes=${w#*/}
		f=${meta%/metadata}/${CHAN}_${cpu#cpu}
		check "relayd killed: $f has the $bytes bytes relayd confirmed" \
			test "$(stat -c %s "$f")" -ge "$bytes"
		head -c "$bytes" "$f" >"$t/${f##*/}"
	done
	check "relayd killed: lrb-record reported what relayd confirmed" \
		test -n "$(ls $t/${CHAN}_* 2>/dev/null)"
	babeltrace2 $t >"$LOGDIR/confirmed.out" 2>"$LOGDIR/confirmed.err"
	rc=$?
	sed 's/^/    babeltrace2: /' "$LOGDIR/confirmed.err" | head -n 5
	check "relayd killed: babeltrace2 reads the confirmed packets (status $rc)" \
		test $rc -eq 0
	check "relayd killed: they hold events" \
		test "$(wc -l <"$LOGDIR/confirmed.out")" -gt 0
}

errors() {
	run usage-none 2 lrb-record
	run usage-consumer 2 lrb-record x --consumer nope
	run usage-both 2 lrb-record x -o /tmp/x --relayd net://127.0.0.1
	run usage-duration 2 lrb-record x --duration -1
	run usage-cpus 2 lrb-record x --cpus 3-1
	run no-lrb 1 lrb-record "$CHAN" -o /tmp/none
	check "no channel: says what to do" says no-lrb "is the channel created"
	load_lrb || return
	load_client mode=discard size=64 task_batch=8 task_interval_us=2000 \
		irq_interval_us=1000 irq_batch=1 || return
	run no-chan 1 lrb-record nosuch -o /tmp/none
	check "wrong channel: lists the channels" says no-chan "channels in /dev/lrb: $CHAN"
	run no-cpu 1 lrb-record "$CHAN" --cpus 63 -o /tmp/none
	run no-relayd 1 lrb-record "$CHAN" --relayd net://127.0.0.1:1
	check "no relayd: says what to do" says no-relayd \
		"cannot connect to lttng-relayd's control port at 127.0.0.1:1: Connection refused: is lttng-relayd running there"
	relayd_killed
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
