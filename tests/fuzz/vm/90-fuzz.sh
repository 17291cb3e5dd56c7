#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The syscall fuzzer's scenario, in the guest (staged by tests/fuzz/vm/run.sh
# with tests/vm/scenarios/lib.sh beside it): lrb-fuzz's workers call
# everything on the files of channel "fuzz" while this script, the
# controller, keeps the test client writing at full rate on every CPU, from
# a kthread (task context) and a hard hrtimer (hardirq context), with the
# switch timer on; destroys and recreates the channel every 10 steps
# (debugfs destroy or rmmod, then insmod, discard and overwrite in turn,
# other geometries, switch and read timers); and takes a CPU other than 0
# offline and back every few steps. The kernel's fair deadline server is
# turned off first: see fair_server_off.
# Kernel command line: lrbfuzz.duration=SECONDS lrbfuzz.seed=S
# lrbfuzz.workers=N (set by run.sh). The checks are lrb-fuzz's (no finding),
# that every CPU's task and irq writers wrote, and the kernel-log scan that
# /init makes after the scenario. On a kernel with gcov (the debug
# kernel), lrb.ko's coverage counters go to the host in
# $LRB_EXPORT/gcov, once lrb.ko is unloaded.
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
ROUND=10
ncpus=$(grep -c '^processor' /proc/cpuinfo)

# client_up N: the client's channel, its settings from round N. The task
# writers write a batch of records and yield (cond_resched) without
# sleeping: as fast as their CPU lets them; the irq writers write a batch
# every 500 us. The switch timer runs in every round. The records are
# small, or span pages, or are too big for some sub-buffers (lost_big),
# in a cycle of 3 against the 4 channel settings; the small ones (60
# bytes and a 4-byte header, after the 64-byte packet header) end
# exactly on every sub-buffer boundary, which closes a packet without
# padding. The batches shrink as records grow, so that a timer tick (the
# client fills each record's bytes one by one) stays well under its
# period.
client_up() {
	case $(($1 % 3)) in
	0) _size=60 _task=64 _irq=16 ;;
	1) _size=700 _task=32 _irq=4 ;;
	*) _size=9000 _task=8 _irq=1 ;;
	esac
	case $(($1 % 4)) in
	0) set -- mode=discard subbuf_size=4096 num_subbuf=4 switch_timer_us=4000 ;;
	1) set -- mode=overwrite subbuf_size=8192 num_subbuf=4 switch_timer_us=20000 ;;
	2) set -- mode=discard subbuf_size=16384 num_subbuf=8 read_timer_us=5000 switch_timer_us=10000 ;;
	*) set -- mode=overwrite subbuf_size=4096 num_subbuf=8 read_timer_us=3000 switch_timer_us=4000 ;;
	esac
	insmod "$CLIENT_KO" name="$CHAN" size=$_size task_batch=$_task \
		task_interval_us=0 irq_interval_us=500 irq_batch=$_irq "$@" ||
		bad "insmod $CLIENT_KO size=$_size $* (round $1) failed; see dmesg"
}

# client_down N: stop the writers, keep what they wrote, destroy the
# channel: by debugfs then rmmod every other time, by rmmod alone else.
client_down() {
	echo stop >"$DBG/ctl" || bad "echo stop > $DBG/ctl failed (round $1)"
	cat "$DBG/written" >>"$LOGDIR/written.all"
	grep '^total' "/dev/lrb/$CHAN/stats" >>"$LOGDIR/stats.all"
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

# The writers' attempts per CPU and context, and the channels' records,
# summed over the rounds; every CPU's task and irq writers must have
# written.
writer_totals() {
	awk -v chans="$1" '
		$1 ~ /^cpu[0-9]+$/ {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				n[$1 "," kv[1]] += kv[2]
				all[kv[1]] += kv[2]
			}
			k = substr($1, 4) + 1
			if (k > ncpu)
				ncpu = k
		}
		END {
			short = ""
			printf "writers: %d task + %d irq attempts in %d channels, %d lost\n", all["task"], all["irq"], chans, all["lost"]
			for (k = 0; k < ncpu; k++) {
				c = "cpu" k
				printf "  %s: task %d irq %d lost %d\n", c, n[c ",task"], n[c ",irq"], n[c ",lost"]
				if (n[c ",task"] == 0 || n[c ",irq"] == 0)
					short = short " " c
			}
			if (short != "")
				printf "no writes from task or irq context on%s\n", short
			exit short != ""
		}' "$LOGDIR/written.all"
}

channel_totals() {
	awk '{
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			n[kv[1]] += kv[2]
		}
	}
	END {
		printf "channels: %d records written, lost: %d full %d wrap %d big %d nest %d packets; %d packets read, %d bytes read, %d pages spliced (before each destroy)\n", n["records_written"], n["lost_full"], n["lost_wrap"], n["lost_big"], n["lost_nest"], n["lost_packets"], n["packets_read"], n["bytes_read"], n["pages_spliced"]
	}' "$LOGDIR/stats.all"
}

# fair_server_off: no fair deadline server on any CPU. Debian's 6.12
# counts the server in the runqueue's nr_running (inc_dl_tasks(); fixed
# upstream by 52d15521eb75, "sched/deadline: Don't count nr_running for
# dl_server proxy tasks", which 6.12.117 lacks): when the server's timer
# enqueues it on a CPU going offline, sched_cpu_dying() warns "Dying CPU
# not properly vacated!" with one task too many counted and none listed,
# and lockdep reports the printing under the runqueue lock. Our full-rate
# writers and CPU hotplug make that likely in a 10-minute run, with or
# without lrb.ko loaded; with the server's runtime 0 it never starts. No
# task here is real-time, so nothing needs the server.
fair_server_off() {
	for _f in /sys/kernel/debug/sched/fair_server/cpu*/runtime; do
		[ -e "$_f" ] || return 0
		echo 0 >"$_f" || bad "echo 0 > $_f failed: the fair server stays on"
	done
}

# export_gcov: lrb.ko's gcov counters, kept by the kernel after the
# unload (gcov_persist), to $LRB_EXPORT/gcov/<the build's path>.
export_gcov() {
	_g=/sys/kernel/debug/gcov
	[ -d "$_g" ] || return 0
	_n=0
	find "$_g" -name '*.gcda' >"$LOGDIR/gcda.list"
	while IFS= read -r _f; do
		_to=$LRB_EXPORT/gcov${_f#"$_g"}
		mkdir -p "${_to%/*}"
		# debugfs sizes are 0: copy by reading, not by tar
		cat "$_f" >"$_to" || bad "could not copy $_f"
		_n=$((_n + 1))
	done <"$LOGDIR/gcda.list"
	check "gcov counters of lrb.ko found ($_n files)" test "$_n" -gt 0
}

run() {
	fair_server_off
	load_lrb || return
	: >"$LOGDIR/written.all"
	: >"$LOGDIR/stats.all"
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
		# a new channel every $ROUND steps; a flush, a stop and
		# start of the writers in between
		case $((i % ROUND)) in
		0)
			client_down $round
			round=$((round + 1))
			client_up $round
			;;
		3) echo flush >"$DBG/ctl" 2>/dev/null ;;
		7) echo stop >"$DBG/ctl" && echo start >"$DBG/ctl" ;;
		esac
	done
	for _f in /sys/devices/system/cpu/cpu[1-9]*/online; do
		echo 1 >"$_f" || bad "$_f: could not bring the CPU back online"
	done
	note "controller: $round channels destroyed and recreated, $OFFLINES CPU offlines in ${t}s"
	wait_check fuzz $((HANG + 60))
	client_down $round
	channel_totals | sed "s/^/$SCEN: /"
	writer_totals $((round + 1)) >"$LOGDIR/writers.txt"
	check "every CPU's task and irq writers wrote" test $? -eq 0
	sed "s/^/$SCEN: /" "$LOGDIR/writers.txt"
	unload_lrb
	export_gcov
}

run
finish
