# SPDX-License-Identifier: GPL-2.0
# Helpers of the lrb-record VM scenarios (busybox sh, in the guest),
# sourced after lib.sh. The tool is /bin/lrb-record; traces are verified
# afterwards from their files by "lrb-vmcheck trace".

case "$0" in
*/recorder.sh | recorder.sh) exit 0 ;;
esac

# start_bg NAME COMMAND...: run COMMAND in the background; its stdout, stderr,
# pid and exit status in $LOGDIR/NAME.{out,err,pid,rc}.
start_bg() {
	_n=$1
	shift
	note "$* (background)"
	rm -f "$LOGDIR/$_n.rc" "$LOGDIR/$_n.pid"
	(
		"$@" >"$LOGDIR/$_n.out" 2>"$LOGDIR/$_n.err" &
		echo $! >"$LOGDIR/$_n.pid"
		wait $!
		echo $? >"$LOGDIR/$_n.rc.tmp"
		mv "$LOGDIR/$_n.rc.tmp" "$LOGDIR/$_n.rc"
	) &
	wait_for 5 "$_n to start" test -s "$LOGDIR/$_n.pid"
}

bg_done() {
	test -e "$LOGDIR/$1.rc"
}

bg_says() {
	grep -q "$2" "$LOGDIR/$1.err" "$LOGDIR/$1.out"
}

# show NAME: its output, indented
show() {
	sed "s/^/    $1: /" "$LOGDIR/$1.out" "$LOGDIR/$1.err"
}

# bg_wait NAME SECONDS [STATUS]: wait for it and check its exit status
# (default 0); a hung one is killed.
bg_wait() {
	if ! wait_for "$2" "$1 to exit" bg_done "$1"; then
		kill "$(cat "$LOGDIR/$1.pid")" 2>/dev/null
		sleep 1
		kill -9 "$(cat "$LOGDIR/$1.pid")" 2>/dev/null
		show "$1"
		return 1
	fi
	show "$1"
	_rc=$(cat "$LOGDIR/$1.rc")
	check "$1 exit status $_rc, want ${3:-0}" test "$_rc" -eq "${3:-0}"
}

# run NAME STATUS COMMAND...: run in the foreground, check the status.
run() {
	_n=$1
	_want=$2
	shift 2
	note "$*"
	"$@" >"$LOGDIR/$_n.out" 2>"$LOGDIR/$_n.err"
	_rc=$?
	show "$_n"
	check "$_n: exit status $_rc, want $_want" test "$_rc" -eq "$_want"
}

stats_copy() {
	cat "/dev/lrb/$CHAN/stats" >"$1"
	sed 's/^/    stats: /' "$1"
}

# verify NAME DIR... [-- OPTIONS]: lrb-vmcheck trace on the directories.
verify() {
	_n=$1
	shift
	_args=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		_args="$_args --dir $1"
		shift
	done
	[ $# -eq 0 ] || shift
	# shellcheck disable=SC2086
	run_check "$_n" trace --chan "$CHAN" $_args "$@"
}

# record_run CONSUMER MAX PARAM...: a discard channel whose writers make
# MAX attempts per CPU and context, recorded by lrb-record into a directory
# from before the first record to the channel's destruction; every packet
# exactly once, exact accounting.
record_run() {
	_c=$1
	_max=$2
	shift 2
	load_lrb || return
	load_client mode=discard autostart=0 max_records="$_max" "$@" || return
	_d=/tmp/trace-$SCEN-$_c
	# the last trace stays (for the scenario to export): /tmp is RAM
	rm -rf /tmp/trace-*
	start_bg rec lrb-record "$CHAN" -o "$_d" --consumer "$_c"
	wait_for 10 "lrb-record to start" bg_says rec recording || return
	ctl start
	wait_for 60 "every CPU's writers to make $_max attempts" \
		client_reached "$_max"
	ctl stop
	show_written
	cp "$DBG/written" "$LOGDIR/written"
	stats_copy "$LOGDIR/stats.stop"
	ctl destroy
	bg_wait rec 60
	check "lrb-record says the channel ended" \
		grep -q 'stopped by end of channel' "$LOGDIR/rec.out"
	# shellcheck disable=SC2012 # shown, not parsed
	ls -la "$_d" | sed 's/^/    /'
	verify "trace-$_c" "$_d" -- --stats "$LOGDIR/stats.stop"
	unload_client
	unload_lrb
}
