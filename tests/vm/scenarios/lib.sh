# SPDX-License-Identifier: GPL-2.0
# Helpers of the VM scenarios (busybox sh, in the guest). A scenario sources
# this file, loads lrb.ko ($LRB_KO) and the test client ($CLIENT_KO), runs
# the checker (/bin/lrb-vmcheck, or $VMCHECK), and ends with finish, which
# prints the one line the host counts:
#   vmtest <scenario>: N passed, M failed
# The checker's own output is indented by four spaces so that its
# "vmtest ..." line is not counted twice; its totals are folded in here.
#
# This file is not a scenario: executed directly, it does nothing.

case "$0" in
*/lib.sh | lib.sh) exit 0 ;;
esac

VMCHECK=${VMCHECK:-/bin/lrb-vmcheck}
DBG=${DBG:-/sys/kernel/debug/lrb_vm_client}
CHAN=vmtest
SCEN=$(basename "$0" .sh)
LOGDIR=/tmp/vmtest-$SCEN
PASS=0
FAIL=0
CHECKS=

rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"

ok() {
	PASS=$((PASS + 1))
}

bad() {
	FAIL=$((FAIL + 1))
	echo "FAIL $SCEN: $*"
}

note() {
	echo "$SCEN: $*"
}

# check DESCRIPTION COMMAND...: one pass or fail on COMMAND's status.
check() {
	_desc=$1
	shift
	if "$@"; then
		ok
	else
		bad "$_desc"
	fi
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.1 s until it
# succeeds; a timeout counts as a failure (returns 1).
wait_for() {
	_t=$1
	_what=$2
	shift 2
	_n=$((_t * 10))
	while ! "$@" >/dev/null 2>&1; do
		_n=$((_n - 1))
		if [ "$_n" -le 0 ]; then
			bad "timed out after ${_t}s waiting for $_what"
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# holds_cpu_files PID CHANNEL: process PID has every cpu file of CHANNEL
# open. lrb-record opens them all first: from then on it records the
# channel to its end, and another reader gets EBUSY. After starting a
# recorder in the background, wait for this, not for a time.
holds_cpu_files() {
	_want=0
	for _f in /dev/lrb/"$2"/cpu[0-9]*; do
		[ ! -e "$_f" ] || _want=$((_want + 1))
	done
	_have=0
	for _f in /proc/"$1"/fd/*; do
		case $(readlink "$_f" 2>/dev/null) in
		/dev/lrb/"$2"/cpu[0-9]*) _have=$((_have + 1)) ;;
		esac
	done
	[ "$_want" -gt 0 ] && [ "$_have" -eq "$_want" ]
}

load_lrb() {
	if [ -z "${LRB_KO:-}" ] || [ ! -e "$LRB_KO" ]; then
		bad "LRB_KO='${LRB_KO:-}' is not a file: the harness must set it to lrb.ko's path"
		return 1
	fi
	if ! insmod "$LRB_KO"; then
		bad "insmod $LRB_KO failed (see dmesg)"
		return 1
	fi
	ok
}

# load_client PARAM=VALUE...: the test client with channel $CHAN; waits for
# its files to appear.
load_client() {
	if [ -z "${CLIENT_KO:-}" ] || [ ! -e "$CLIENT_KO" ]; then
		bad "CLIENT_KO='${CLIENT_KO:-}' is not a file: the harness must set it to lrb_vm_client.ko's path"
		return 1
	fi
	if ! insmod "$CLIENT_KO" name="$CHAN" "$@"; then
		bad "insmod $CLIENT_KO $* failed (see dmesg)"
		return 1
	fi
	wait_for 10 "/dev/lrb/$CHAN/cpu0 after loading the client" \
		test -e "/dev/lrb/$CHAN/cpu0" || return 1
	wait_for 10 "$DBG/written" test -r "$DBG/written" || return 1
	ok
}

client_loaded() {
	test -d /sys/module/lrb_vm_client
}

lrb_loaded() {
	test -d /sys/module/lrb
}

unload_client() {
	check "rmmod lrb_vm_client" rmmod lrb_vm_client
}

unload_lrb() {
	check "rmmod lrb (nothing may hold it any more)" rmmod lrb
}

# ctl COMMAND: start, stop, destroy, flush.
ctl() {
	if ! echo "$1" >"$DBG/ctl"; then
		bad "echo $1 > $DBG/ctl failed"
		return 1
	fi
}

# client_reached MAX: every CPU of the client's written file made MAX
# attempts in each of its contexts with a writer (task or irq, as loaded).
client_reached() {
	awk -v max="$1" -v task="${2:-1}" -v irq="${3:-1}" '
		/^cpu[0-9]+ / {
			n++
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2] + 0
			}
			if ((task && v["task"] < max) || (irq && v["irq"] < max))
				short++
		}
		END { exit !(n > 0 && short == 0) }' "$DBG/written"
}

show_written() {
	sed "s/^/    written: /" "$DBG/written"
}

show_stats() {
	grep '^total' "/dev/lrb/$CHAN/stats" | sed "s/^/    stats: /"
}

# fold LOG STATUS [TAG]: show a checker's output and count its result
# here: its last line starting with TAG (a sed pattern, default that of
# lrb-vmcheck's "vmtest NAME"), which must be "TAG: N passed, M failed".
fold() {
	_tag=${3:-'vmtest [^:]*'}
	sed 's/^/    /' "$1"
	_line=$(grep "^$_tag" "$1" | tail -n 1)
	_p=$(echo "$_line" | sed -n "s/^$_tag: \([0-9]*\) passed, \([0-9]*\) failed\$/\1/p")
	_f=$(echo "$_line" | sed -n "s/^$_tag: \([0-9]*\) passed, \([0-9]*\) failed\$/\2/p")
	if [ -z "$_p" ] || [ -z "$_f" ]; then
		bad "checker ($1) gave no result line, exit status $2"
		return
	fi
	PASS=$((PASS + _p))
	FAIL=$((FAIL + _f))
	if [ "${2:-1}" -ne 0 ] && [ "$_f" -eq 0 ]; then
		bad "checker ($1) exited with status $2 without reporting a failure"
	fi
}

# run_check NAME ARGS...: run the checker with ARGS in the foreground.
run_check() {
	_name=$1
	shift
	note "lrb-vmcheck $*"
	"$VMCHECK" "$@" >"$LOGDIR/$_name.log" 2>&1
	fold "$LOGDIR/$_name.log" $?
}

# start_check NAME ARGS...: run the checker with ARGS in the background
# (NAME: letters and digits); wait_check NAME collects it.
start_check() {
	_name=$1
	shift
	note "lrb-vmcheck $* (background)"
	start_program "$_name" "$VMCHECK" "$@"
}

# start_program NAME PROGRAM ARGS...: start_check for another checker
# program; finish() stops it if it is still running at the end.
start_program() {
	_name=$1
	shift
	rm -f "$LOGDIR/$_name.rc" "$LOGDIR/$_name.pid"
	(
		"$@" >"$LOGDIR/$_name.log" 2>&1 &
		echo $! >"$LOGDIR/$_name.pid"
		wait $!
		echo $? >"$LOGDIR/$_name.rc.tmp"
		mv "$LOGDIR/$_name.rc.tmp" "$LOGDIR/$_name.rc"
	) &
	CHECKS="$CHECKS $_name"
}

check_done() {
	test -e "$LOGDIR/$1.rc"
}

# kill_check NAME: stop a background checker that hangs (by its pid only).
kill_check() {
	_pid=$(cat "$LOGDIR/$1.pid" 2>/dev/null)
	[ -n "$_pid" ] || return
	kill "$_pid" 2>/dev/null
	wait_for 3 "checker $1 to exit after SIGTERM" check_done "$1" && return
	kill -9 "$_pid" 2>/dev/null
	wait_for 3 "checker $1 to exit after SIGKILL" check_done "$1"
}

# wait_check NAME SECONDS [TAG]: wait for the background checker NAME to
# exit, and fold its result (TAG: as fold's).
wait_check() {
	if ! wait_for "$2" "checker $1 to finish" check_done "$1"; then
		sed 's/^/    /' "$LOGDIR/$1.log"
		kill_check "$1"
		return
	fi
	fold "$LOGDIR/$1.log" "$(cat "$LOGDIR/$1.rc")" "${3:-}"
}

# consume_run VIA MAX PARAM...: a discard channel whose writers make MAX
# attempts per CPU and context (client PARAMs added), consumed through VIA
# on every CPU from the first record to the end of file after destroy, with
# exact accounting.
# $CONSUME_OPTS, if set, are more options of lrb-vmcheck consume.
consume_run() {
	_via=$1
	_max=$2
	shift 2
	load_lrb || return
	load_client mode=discard autostart=0 max_records="$_max" "$@" || return
	# shellcheck disable=SC2086 # CONSUME_OPTS: options, split
	start_check consume consume --chan "$CHAN" --via "$_via" ${CONSUME_OPTS:-}
	wait_for 30 "the consumer to open its files" \
		grep -q ': consuming ' "$LOGDIR/consume.log" || return
	ctl start
	wait_for 60 "every CPU's writers to make $_max attempts" \
		client_reached "$_max"
	show_written
	show_stats
	ctl destroy
	check "/dev/lrb/$CHAN removed at destroy" test ! -e "/dev/lrb/$CHAN"
	wait_check consume 60
	unload_client
	unload_lrb
}

# finish: leave nothing loaded for the next scenario, print the result.
finish() {
	for _name in $CHECKS; do
		if ! check_done "$_name"; then
			bad "checker $_name still running at the end: killed"
			kill_check "$_name"
		fi
	done
	if client_loaded; then
		rmmod lrb_vm_client || bad "rmmod lrb_vm_client at the end failed"
	fi
	if lrb_loaded; then
		rmmod lrb || bad "rmmod lrb at the end failed: something still holds it"
	fi
	echo "vmtest $SCEN: $PASS passed, $FAIL failed"
	exit 0
}
