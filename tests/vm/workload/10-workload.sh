#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, part workload-vm, in the guest (run by tests/vm/workload/run.sh,
# which puts tests/vm/scenarios/lib.sh beside it): the cost of tracing a
# real workload. lrb-pingpong (pipe ping-pong between thread pairs, and
# O_DIRECT reads of the virtio disk: context switches, wakeups and device
# interrupts) runs in three configurations, their order rotating round by
# round in this one boot:
#
#   none    nothing traced
#   lrb     lrb_sample_sched.ko's probes on sched_switch, sched_wakeup,
#           irq_handler_entry and irq_handler_exit, recorded by lrb-record
#           (splice) into files on tmpfs
#   ftrace  ftrace's events of the same four tracepoints, recorded by
#           trace-cmd record (splice of per_cpu/cpuN/trace_pipe_raw) into
#           files on tmpfs
#
# Both buffers are 1 MiB per CPU (lrb: 16 x 64 KiB; ftrace: -b 1024). Each
# run appends a line to $LRB_EXPORT/runs.txt:
#
#   RUN round config elapsed_ns events lost bytes ctxt intr user sys idle irq rec
#
# events: records in the trace (lrb: the channel's records_written;
# ftrace: per_cpu/cpuN/stats "read events" + "entries", as trace-cmd
# saved them); lost: records the tracer counted as lost (lrb: lost_*;
# ftrace: overrun + commit overrun + dropped events); bytes: the trace's size; the rest: what proc_stat (below)
# counted during the workload. The host side
# (tests/vm/workload/report.py) turns them into slowdowns.
#
# Kernel command line: lrbbench.rounds=N (default 5), lrbbench.pairs=P,
# lrbbench.messages=M, lrbbench.reads=N (lrb-pingpong's options).
. "$(dirname "$0")/lib.sh"

rounds=5
pairs=8
messages=6000
reads=3000
# shellcheck disable=SC2013 # words are what we want
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbbench.rounds=*) rounds=${arg#*=} ;;
	lrbbench.pairs=*) pairs=${arg#*=} ;;
	lrbbench.messages=*) messages=${arg#*=} ;;
	lrbbench.reads=*) reads=${arg#*=} ;;
	esac
done

TRACING=/sys/kernel/tracing
SS=/sys/kernel/debug/lrb_sample_sched
EVENTS="sched:sched_switch sched:sched_wakeup irq:irq_handler_entry irq:irq_handler_exit"
W=/tmp/workload
RUNS=$LRB_EXPORT/runs.txt
: >"$RUNS"

# proc_stat: "ctxt intr user system idle irq rec" now: context switches,
# interrupts, the CPUs' time (USER_HZ ticks) in user space (with nice), the
# kernel, idle (with iowait) and interrupts (with softirqs), and the time
# the recorder's processes ran (lrb-record or trace-cmd).
proc_stat() {
	_r=0
	for _f in /proc/[0-9]*/stat; do
		# a process may end meanwhile
		{ read -r _st <"$_f"; } 2>/dev/null || continue
		case $_st in
		*" (lrb-record) "* | *" (trace-cmd) "*)
			# utime and stime: fields 14 and 15
			# shellcheck disable=SC2086 # the fields are words
			set -- ${_st#*) }
			shift 11
			_r=$((_r + $1 + $2)) ;;
		esac
	done
	awk -v r="$_r" '
		$1 == "cpu" { u = $2 + $3; s = $4; i = $5 + $6; q = $7 + $8 }
		$1 == "ctxt" { c = $2 }
		$1 == "intr" { n = $2 }
		END { print c, n, u, s, i, q, r }' /proc/stat
}

# workload: run lrb-pingpong (configuration $CONFIG); sets $elapsed, and
# $counts to what proc_stat counted meanwhile.
workload() {
	_s0=$(proc_stat)
	cp /proc/interrupts "$W/interrupts.before.$CONFIG"
	if ! lrb-pingpong --pairs "$pairs" --messages "$messages" \
		--disk /dev/vda --reads "$reads" >"$W/pingpong.out" 2>&1; then
		bad "lrb-pingpong failed: $(cat "$W/pingpong.out")"
		return 1
	fi
	_s1=$(proc_stat)
	cp /proc/interrupts "$W/interrupts.after.$CONFIG"
	# the differences, in the order of proc_stat
	counts=$(echo "$_s0 $_s1" | awk '{ for (i = 1; i <= 7; i++) printf "%d ", $(i + 7) - $i }')
	elapsed=$(sed -n 's/^elapsed_ns=\([0-9]*\) .*/\1/p' "$W/pingpong.out")
	[ -n "$elapsed" ] || { bad "lrb-pingpong printed no elapsed_ns: $(cat "$W/pingpong.out")"; return 1; }
}

# ftrace_off: no ftrace event is left enabled (trace-cmd disables them at
# its end), so that nothing but the configuration under test traces.
ftrace_off() {
	check "no ftrace event enabled before $CONFIG's run (set_event: $(cat "$TRACING/set_event"))" \
		[ -z "$(cat "$TRACING/set_event")" ]
}

run_none() {
	ftrace_off
	workload || return 1
	echo "RUN $ROUND none $elapsed 0 0 0 $counts" >>"$RUNS"
	ok
}

run_lrb() {
	ftrace_off
	if ! insmod /lib/lrb/lrb_sample_sched.ko autostart=0 subbuf_size=65536 num_subbuf=16; then
		bad "insmod lrb_sample_sched failed (see dmesg)"
		return 1
	fi
	lrb-record sched -o "$W/lrb" --quiet >"$W/lrb-record.out" 2>&1 &
	_rec=$!
	wait_for 30 "lrb-record to open the cpu files of sched" \
		holds_cpu_files "$_rec" sched || { kill "$_rec"; rmmod lrb_sample_sched; return 1; }
	echo start >"$SS/ctl" || bad "echo start > $SS/ctl failed"
	workload
	_wl=$?
	echo stop >"$SS/ctl" || bad "echo stop > $SS/ctl failed"
	cat "$SS/written" >"$W/written"
	check "rmmod lrb_sample_sched (destroys the channel)" rmmod lrb_sample_sched
	if ! wait "$_rec"; then
		bad "lrb-record failed: $(cat "$W/lrb-record.out")"
		return 1
	fi
	[ "$_wl" -eq 0 ] || return 1
	# total packets bytes MB/s records_written lost_full lost_wrap lost_big lost_nest lost_packets
	# shellcheck disable=SC2046 # three numbers
	set -- $(awk '$1 == "total" { print $5, $6 + $7 + $8 + $9, $3 }' "$W/lrb-record.out")
	if [ $# -ne 3 ]; then
		bad "no total line in lrb-record's summary: $(cat "$W/lrb-record.out")"
		return 1
	fi
	_ev=$1 _lost=$2 _bytes=$3
	# Every probe hit is a record written or a loss counted.
	_att=$(sed -n 's/^total attempts=\([0-9]*\) lost=.*/\1/p' "$W/written")
	check "lrb: the probes' $_att attempts = $_ev records written + $_lost lost" \
		[ "$_att" = $((_ev + _lost)) ]
	if [ "$ROUND" -eq "$rounds" ]; then
		_n=$(lrb-dump "$W/lrb" | wc -l)
		check "lrb: the trace holds $_ev records (lrb-dump): $_n" [ "$_n" -eq "$_ev" ]
	fi
	echo "RUN $ROUND lrb $elapsed $_ev $_lost $_bytes $counts" >>"$RUNS"
	rm -rf "$W/lrb"
}

# report_stat NAME: the sum over the CPUs of "NAME: N" in the stats that
# trace-cmd saved (per_cpu/cpuN/stats; trace-cmd resets them at its end).
report_stat() {
	awk -v k="$1:" '
		{ v = $NF; $NF = ""; sub(/ $/, "") }
		$0 == k { s += v }
		END { print s + 0 }' "$W/report-stat"
}

ftrace_on() {
	[ "$(cat "$TRACING/tracing_on")" = 1 ] || return 1
	for _e in $EVENTS; do
		[ "$(cat "$TRACING/events/${_e%%:*}/${_e#*:}/enable")" = 1 ] || return 1
	done
}

run_ftrace() {
	_ev_args=
	for _e in $EVENTS; do
		_ev_args="$_ev_args -e $_e"
	done
	# trace-cmd turns tracing_on on once its recorders run and the events
	# are enabled (its "Hit Ctrl^C" sits in a stdio buffer until exit)
	echo 0 >"$TRACING/tracing_on"
	# shellcheck disable=SC2086 # the -e options are words
	trace-cmd record -b 1024 $_ev_args -o "$W/trace.dat" >"$W/trace-cmd.out" 2>&1 &
	_rec=$!
	wait_for 60 "trace-cmd record to start (tracing_on and the events enabled)" \
		ftrace_on || { kill "$_rec"; return 1; }
	workload
	_wl=$?
	kill -INT "$_rec"
	if ! wait "$_rec"; then
		bad "trace-cmd record failed: $(tail -n 20 "$W/trace-cmd.out")"
		return 1
	fi
	[ "$_wl" -eq 0 ] || return 1
	# trace-cmd saved per_cpu/cpuN/stats in trace.dat when the recording
	# stopped, before its recorders drained the last pages: those are
	# "entries" then, and in the file after all.
	if ! trace-cmd report -i "$W/trace.dat" --stat >"$W/report-stat" 2>&1; then
		bad "trace-cmd report --stat failed: $(tail -n 5 "$W/report-stat")"
		return 1
	fi
	_ev=$(($(report_stat "read events") + $(report_stat entries)))
	_lost=$(($(report_stat overrun) + $(report_stat "commit overrun") + $(report_stat "dropped events")))
	# the per-CPU data sizes, uncompressed
	_bytes=$(sed -n 's/.* bytes in size (\([0-9]*\) uncompressed).*/\1/p; s/^ *\([0-9]*\) bytes in size$/\1/p' \
		"$W/trace-cmd.out" | awk '{ s += $1 } END { print s + 0 }')
	if [ "$ROUND" -eq "$rounds" ]; then
		# once: every event is in the file (slow under TCG: 30 s)
		_n=$(trace-cmd report -i "$W/trace.dat" 2>/dev/null |
			grep -cE ': (sched_switch|sched_wakeup|irq_handler_entry|irq_handler_exit):')
		check "ftrace: trace.dat holds $_ev events (read events + entries): $_n" \
			[ "$_n" -eq "$_ev" ]
	fi
	echo "RUN $ROUND ftrace $elapsed $_ev $_lost $_bytes $counts" >>"$RUNS"
	rm -f "$W"/trace.dat*
}

rm -rf "$W"
mkdir -p "$W"
if ! grep -q tracefs /proc/mounts && ! mount -t tracefs nodev "$TRACING"; then
	bad "cannot mount tracefs on $TRACING (CONFIG_TRACING?)"
	finish
fi
load_lrb || finish
for _e in $EVENTS; do
	[ -d "$TRACING/events/${_e%%:*}/${_e#*:}" ] ||
		bad "ftrace has no event $_e ($TRACING/events)"
done
note "$rounds rounds; lrb-pingpong --pairs $pairs --messages $messages --disk /dev/vda --reads $reads"
ROUND=1
while [ "$ROUND" -le "$rounds" ]; do
	case $((ROUND % 3)) in
	1) order="none lrb ftrace" ;;
	2) order="lrb ftrace none" ;;
	0) order="ftrace none lrb" ;;
	esac
	for c in $order; do
		CONFIG=$c
		"run_$c" || bad "round $ROUND, $c failed"
	done
	note "round $ROUND: $(awk -v r="$ROUND" '$2 == r { printf "%s %.2fs ", $3, $4 / 1e9 }' "$RUNS")"
	ROUND=$((ROUND + 1))
done
# the last round's details, for a closer look on the host
cp "$W/written" "$W/trace-cmd.out" "$W/lrb-record.out" \
	"$W"/interrupts.* "$W"/report-* "$LRB_EXPORT/" 2>/dev/null
unload_lrb
finish
