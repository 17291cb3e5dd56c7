#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo DEMO_LIVE=1, in the guest: lttng-relayd runs here, lrb-record
# streams the driver sample's channel to it as a live session, and
# babeltrace2's lttng-live prints the events as they come. The user's
# terminal gets the first DEMO_LINES of them and then, per second of trace
# time, how many events each CPU wrote ("lrb live: ..." lines, which
# scripts/demo.sh shows); babeltrace2's whole output stays in
# $LRB_EXPORT/bt2.out. The trace relayd wrote goes back to the host, whose
# side (20-demo-live.host.sh) checks its counts against the sample's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/relayd.sh"

rate=50
seconds=10
shown=20
# make demo DEMO_LIVE=1 DEMO_RATE=... DEMO_SECONDS=... DEMO_LINES=...
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbdemo.rate=*) rate=${arg#*=} ;;
	lrbdemo.seconds=*) seconds=${arg#*=} ;;
	lrbdemo.lines=*) shown=${arg#*=} ;;
	esac
done
# packets close, and quiet CPUs are announced, this often (seconds)
LIVE_PERIOD=0.2

# view: babeltrace2's lines on stdin, kept whole in $LRB_EXPORT/bt2.out;
# the first $shown go to the terminal, then one line per second of trace
# time with the events per CPU in that second.
view() {
	tee "$LRB_EXPORT/bt2.out" | awk -v shown="$shown" '
	function second(   c, line) {
		line = sprintf("lrb live: second %d: %d events (", sec - t0, total)
		for (c = 0; c <= maxc; c++)
			line = line sprintf("%scpu%d %d", c ? ", " : "", c, n[c] + 0)
		print line ")"
		fflush()
		split("", n)
		total = 0
	}
	{
		# [1764112345.123456789] with --clock-seconds
		s = int(substr($1, 2))
		if (NR == 1)
			t0 = sec = s
		if (s > sec) {
			second()
			sec = s
		}
		match($0, /cpu_id = [0-9]+/)
		c = substr($0, RSTART + 9, RLENGTH - 9) + 0
		n[c]++
		total++
		if (c > maxc)
			maxc = c
		if (NR <= shown) {
			print "lrb live: " substr($0, 1, 160)
			fflush()
		}
	}
	END {
		if (NR)
			second()
		print "lrb live: the viewer printed " NR " events"
	}'
}

demo() {
	relayd_start || return
	sample_load discard rate="$rate" size=40 autostart=0 || return
	note "lrb-record $SAMPLE_CHAN --relayd $RELAYD_URL --session demo --live=$LIVE_PERIOD (background)"
	lrb-record "$SAMPLE_CHAN" --relayd "$RELAYD_URL" --session demo \
		--live="$LIVE_PERIOD" \
		>"$LRB_EXPORT/lrb-record.out" 2>"$LRB_EXPORT/lrb-record.err" &
	rec=$!
	wait_for 30 "lrb-record to create the live session" \
		grep -q 'live: babeltrace2' "$LRB_EXPORT/lrb-record.err" || return
	url=net://127.0.0.1:5344/host/$(hostname)/demo
	echo "lrb live: babeltrace2 --input-format=lttng-live $url"
	# "end": leave when the session ends
	(babeltrace2 --clock-seconds --input-format=lttng-live "$url" \
		--params='session-not-found-action="end"' \
		2>"$LRB_EXPORT/bt2.err" &
	 echo $! >"$LOGDIR/bt2.pid"
	 wait $!
	 echo $? >"$LOGDIR/bt2.rc") | view &
	viewer=$!
	wait_for 30 "babeltrace2 to attach to the session" \
		grep -q 'Attach session ID' "$LRB_EXPORT/relayd.log" || return
	check "start the sample's writers" sh -c "echo start >$SAMPLE_DBG/ctl"
	sleep "$seconds"
	check "stop the sample's writers" sh -c "echo stop >$SAMPLE_DBG/ctl"
	# babeltrace2 leaves a session relayd says is closed, shown or not:
	# end the session once the viewer has shown every event
	wait_for 60 "the viewer to show every event the sample wrote" \
		live_caught_up "$LRB_EXPORT/bt2.out"
	sample_end
	check "lrb-record ends at the end of the channel" wait "$rec"
	sed 's/^/    lrb-record: /' "$LRB_EXPORT/lrb-record.err"
	if wait_for 60 "babeltrace2 to end with the session" test -f "$LOGDIR/bt2.rc"; then
		check "babeltrace2 ended with status $(cat "$LOGDIR/bt2.rc")" \
			test "$(cat "$LOGDIR/bt2.rc")" = 0
	else
		kill "$(cat "$LOGDIR/bt2.pid")"
	fi
	wait "$viewer"
	relayd_stop
	relayd_export
}

demo
finish
