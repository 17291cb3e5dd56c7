#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The syscall fuzzer's scenario, in the guest (staged by tests/fuzz/vm/run.sh
# with tests/vm/scenarios/lib.sh beside it): lrb-fuzz's workers call
# everything on the files of channel "fuzz" while this script, the
# controller, keeps the test client writing on every CPU, destroys and
# recreates the channel every few seconds (debugfs destroy or rmmod, then
# insmod, discard and overwrite in turn, other geometries and timers), and
# takes a CPU other than 0 offline and back every few seconds.
# Kernel command line: lrbfuzz.duration=SECONDS lrbfuzz.seed=S
# lrbfuzz.workers=N (set by run.sh). The checks are lrb-fuzz's (no finding)
# and the kernel-log scan that /init makes after the scenario.
# shellcheck disable=SC2034 # lib.sh runs $VMCHECK
VMCHECK=/bin/lrb-fuzz
. "$(dirname "$0")/lib.sh"
CHAN=fuzz

duration=60
seed=
workers=4
# shellcheck disable=SC2013 # words are what we want
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbfuzz.duration=*) duration=${arg#*=} ;;
	lrbfuzz.seed=*) seed=${arg#*=} ;;
	lrbfuzz.workers=*) workers=${arg#*=} ;;
	esac
done
HANG=60
ncpus=$(grep -c '^processor' /proc/cpuinfo)

# client_up N: the client's channel, its settings from round N.
client_up() {
	case $(($1 % 4)) in
	0) set -- mode=discard subbuf_size=4096 num_subbuf=4 ;;
	1) set -- mode=overwrite subbuf_size=8192 num_subbuf=4 switch_timer_us=20000 ;;
	2) set -- mode=discard subbuf_size=16384 num_subbuf=8 read_timer_us=5000 ;;
	*) set -- mode=overwrite subbuf_size=4096 num_subbuf=8 read_timer_us=3000 switch_timer_us=10000 ;;
	esac
	insmod "$CLIENT_KO" name="$CHAN" size=48 task_batch=16 \
		task_interval_us=500 irq_interval_us=2000 irq_batch=2 "$@" ||
		bad "insmod $CLIENT_KO $* (round $1) failed; see dmesg"
}

# client_down N: destroy the channel, by debugfs then rmmod every other time.
client_down() {
	if [ $(($1 % 2)) -eq 0 ]; then
		echo destroy >"$DBG/ctl" || bad "echo destroy > $DBG/ctl failed (round $1)"
	fi
	rmmod lrb_vm_client || bad "rmmod lrb_vm_client failed (round $1)"
}

# hotplug I: at step I, take cpu k offline or bring it back (k = 1..ncpus-1 in turn).
hotplug() {
	[ "$ncpus" -gt 1 ] || return
	_cpu=$((1 + $1 / 4 % (ncpus - 1)))
	_f=/sys/devices/system/cpu/cpu$_cpu/online
	if [ $(($1 % 4)) -eq 0 ]; then
		echo 0 >"$_f" || bad "cpu$_cpu offline failed (step $1)"
		OFFLINES=$((OFFLINES + 1))
	else
		echo 1 >"$_f" || bad "cpu$_cpu online failed (step $1)"
	fi
}

run() {
	load_lrb || return
	round=0
	client_up $round
	start_check fuzz --chan "$CHAN" --workers "$workers" \
		--duration "$duration" --hang "$HANG" ${seed:+--seed "$seed"}
	OFFLINES=0
	i=0
	t=0
	start=$(date +%s)
	# one step a second or more (TCG is slow), for the fuzz's duration
	while [ "$t" -lt "$duration" ] && ! check_done fuzz; do
		sleep 1
		i=$((i + 1))
		t=$(($(date +%s) - start))
		# a CPU offline for 2 steps every 4
		[ $((i % 2)) -ne 0 ] || hotplug "$i"
		# a new channel every 3 steps; the writers stopped and flushed between
		case $((i % 3)) in
		0)
			client_down $round
			round=$((round + 1))
			client_up $round
			;;
		1) echo flush >"$DBG/ctl" 2>/dev/null ;;
		2) [ $((i % 5)) -ne 0 ] || { echo stop >"$DBG/ctl"; echo start >"$DBG/ctl"; } ;;
		esac
	done
	for _f in /sys/devices/system/cpu/cpu[1-9]*/online; do
		echo 1 >"$_f" || bad "$_f: could not bring the CPU back online"
	done
	note "controller: $round channels destroyed and recreated, $OFFLINES CPU offlines in ${t}s"
	wait_check fuzz $((HANG + 60))
	show_stats
	unload_client
	unload_lrb
}

run
finish
