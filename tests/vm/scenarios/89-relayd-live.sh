#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A live session: lrb-record --live sends the driver sample's channel to
# lttng-relayd in the guest while babeltrace2's lttng-live, attached before
# the first event, shows it. lrb-vmcheck live-lag times every event the
# viewer prints against the clock (bound: LIVE_BOUND_US, see
# Documentation/testing.rst). cpu3 goes offline for a while: its stream is
# quiet, and the viewer must keep showing the other CPUs' events in time
# (relayd learns from lrb-record's beacons up to when cpu3 wrote nothing);
# it comes back, then the session ends and babeltrace2 must end with it.
# The host side checks the counts per CPU, exactly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/relayd.sh"

ONLINE=/sys/devices/system/cpu/cpu3/online
# live period 0.2 s: packets close and quiet CPUs are announced this often
LIVE_PERIOD=0.2
LIVE_BOUND_US=3000000

lines() {
	wc -l <"$LRB_EXPORT/bt2.out"
}

live() {
	if [ ! -w "$ONLINE" ]; then
		bad "$ONLINE is not writable: the VM needs 4 CPUs and CONFIG_HOTPLUG_CPU"
		return
	fi
	relayd_start || return
	# 50 events per second per CPU and context: babeltrace2 prints every
	# one under TCG without falling behind
	sample_load discard rate=50 size=40 autostart=0 || return
	note "lrb-record e2e --relayd $RELAYD_URL --session live --live=$LIVE_PERIOD (background)"
	lrb-record e2e --relayd "$RELAYD_URL" --session live --live=$LIVE_PERIOD \
		>"$LRB_EXPORT/lrb-record.out" 2>"$LRB_EXPORT/lrb-record.err" &
	rec=$!
	wait_for 30 "lrb-record to create the live session" \
		grep -q 'live: babeltrace2' "$LRB_EXPORT/lrb-record.err" || return
	url=net://127.0.0.1:5344/host/$(hostname)/live
	note "babeltrace2 --clock-seconds --input-format=lttng-live $url | lrb-vmcheck live-lag (background)"
	# "end": leave when the session ends (by default lttng-live waits for
	# another session of that name)
	start_program lag sh -c "(babeltrace2 --clock-seconds --input-format=lttng-live $url \
		--params='session-not-found-action=\"end\"' \
		2>$LRB_EXPORT/bt2.err; echo \$? >$LOGDIR/bt2.rc) |
		$VMCHECK live-lag --out $LRB_EXPORT/bt2.out --slack-us $LIVE_BOUND_US"
	wait_for 30 "babeltrace2 to attach to the session" \
		grep -q 'Attach session ID' "$LRB_EXPORT/relayd.log" || return
	check "start the sample's writers" sh -c "echo start >$SAMPLE_DBG/ctl"
	sleep 3
	n1=$(lines)
	check "the viewer shows events while every CPU writes ($n1 lines)" test "$n1" -gt 0
	check "cpu3 offline: its stream goes quiet" sh -c "echo 0 >$ONLINE"
	sleep 6
	n2=$(lines)
	check "the viewer kept going while cpu3 was quiet ($n1, then $n2 lines)" \
		test "$n2" -gt $((n1 + 900))
	check "cpu3 online again" sh -c "echo 1 >$ONLINE"
	sleep 2
	check "stop the sample's writers" sh -c "echo stop >$SAMPLE_DBG/ctl"
	# the viewer shows the end before the session ends (babeltrace2
	# leaves a session relayd says is closed, shown or not)
	wait_for 30 "the viewer to show every event" \
		live_caught_up "$LRB_EXPORT/bt2.out"
	sample_end
	check "lrb-record ends at the end of the channel" wait "$rec"
	sed 's/^/    lrb-record: /' "$LRB_EXPORT/lrb-record.out" \
		"$LRB_EXPORT/lrb-record.err"
	wait_check lag 60
	check "babeltrace2 ended with the session, status $(cat "$LOGDIR/bt2.rc" 2>/dev/null)" \
		test "$(cat "$LOGDIR/bt2.rc" 2>/dev/null)" = 0
	sed 's/^/    babeltrace2: /' "$LRB_EXPORT/bt2.err" | head -n 20
	relayd_stop
}

live
finish
