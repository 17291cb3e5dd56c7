#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The soak, in the guest (staged and run by tests/soak/run.sh, make soak):
# lrb.ko and the test client for lrbsoak.duration seconds (kernel command
# line), in 14 phases that alternate discard and overwrite mode, each with
# another consumer: lrb-vmcheck consume by read, splice to a file, splice
# to TCP and mmap, lrb-record by splice, mmap and read (verified by
# lrb-vmcheck trace); lrb-vmcheck snapshot and lrb-record --snapshot.
# Beside them all along, the driver sample's discard and overwrite
# channels (companion.sh): both modes at once. lrb.ko stays loaded. On
# every CPU a kthread writer and a hardirq writer that nests in it; while
# they write, a CPU other than CPU 0 goes offline and back every
# lrbsoak.hotplug seconds. Each phase ends by stopping the writers,
# flushing, draining and checking every record and the exact accounting
# per CPU; its figures go to $LRB_EXPORT/soak.tsv, the run's to soak.meta.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"
. "$(dirname "$0")/soak.sh"
. "$(dirname "$0")/companion.sh"

DURATION=120
HOTPLUG_GAP=3
# shellcheck disable=SC2013 # words are what we want
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbsoak.duration=*) DURATION=${arg#*=} ;;
	lrbsoak.hotplug=*) HOTPLUG_GAP=${arg#*=} ;;
	esac
done
PHASES="discard:read overwrite:snapshot discard:splice-file
	overwrite:record-snapshot discard:splice-tcp overwrite:snapshot
	discard:mmap overwrite:record-snapshot discard:record-splice
	overwrite:snapshot discard:record-mmap overwrite:record-snapshot
	discard:record-read overwrite:snapshot"
NPHASES=$(echo "$PHASES" | wc -w)
PHASE_SECS=$((DURATION / NPHASES))
[ "$PHASE_SECS" -ge 10 ] || PHASE_SECS=10
ONLINE_CPUS=$(cat /sys/devices/system/cpu/online)
HOTPLUG_ERRORS=0

uptime_s() {
	cut -d. -f1 /proc/uptime
}

# during SECONDS COMMAND...: with the CPU hotplug loop running, run
# COMMAND again and again until SECONDS have passed.
during() {
	_end=$(($(uptime_s) + $1))
	shift
	hotplug_start
	while [ "$(uptime_s)" -lt "$_end" ]; do
		"$@"
	done
	hotplug_stop
}

# quiesce: stop the writers, keep their counts, close the open packets.
quiesce() {
	ctl stop
	cp "$DBG/written" "$LOGDIR/written"
	ctl flush
}

# discard_phase CONSUMER: a discard channel consumed from its creation to
# its destruction by lrb-vmcheck consume --via CONSUMER or by lrb-record
# --consumer X for CONSUMER record-X; every record verified, exact
# accounting per CPU.
discard_phase() {
	# shellcheck disable=SC2086 # WRITERS: parameters, split
	load_client mode=discard autostart=0 $WRITERS || return
	case $1 in
	record-*)
		start_bg rec lrb-record "$CHAN" -o "$SOAK/trace" --consumer "${1#record-}"
		wait_for 10 "lrb-record to start" bg_says rec recording || return
		;;
	*)
		start_check consume consume --chan "$CHAN" --via "$1" \
			--out "$SOAK/splice" --timeout $((PHASE_SECS + 600))
		wait_for 30 "the consumer to open its files" \
			grep -q ': consuming ' "$LOGDIR/consume.log" || return
		;;
	esac
	ctl start
	during "$PHASE_SECS" sleep 1
	quiesce
	wait_for 120 "the consumer to drain every CPU after the flush" drained "$STATS"
	stats_copy "$LOGDIR/stats"
	phase_done
	ctl destroy
	case $1 in
	record-*)
		bg_wait rec 300
		check "lrb-record says the channel ended" \
			grep -q 'stopped by end of channel' "$LOGDIR/rec.out"
		verify trace "$SOAK/trace" -- --stats "$LOGDIR/stats"
		LOGS=$LOGDIR/trace.log
		;;
	*)
		wait_check consume 300
		LOGS=$LOGDIR/consume.log
		;;
	esac
	unload_client
}

# snap_vmcheck, snap_record: one flight-recorder snapshot of the running
# writers and its verification, the checker's output kept in snaps.log.
snap_vmcheck() {
	run_check snap snapshot --chan "$CHAN" --count 1
	cat "$LOGDIR/snap.log" >>"$LOGDIR/snaps.log"
	sleep 2
}

snap_record() {
	rm -rf "$SOAK/snap"
	run snap 0 lrb-record "$CHAN" --snapshot -o "$SOAK/snap" --quiet
	verify snap-live "$SOAK/snap" -- --snapshot --live
	cat "$LOGDIR/snap-live.log" >>"$LOGDIR/snaps.log"
	sleep 2
}

# overwrite_phase snapshot|record-snapshot: a flight recorder, snapshots
# taken by lrb-vmcheck snapshot or lrb-record --snapshot while it is
# overwritten (packets gone meanwhile must be counted in lost_packets),
# then a final one after the writers stopped: the whole ring, every
# record intact, ending with each context's last attempt.
overwrite_phase() {
	# shellcheck disable=SC2086 # WRITERS: parameters, split
	load_client mode=overwrite autostart=0 $WRITERS || return
	: >"$LOGDIR/snaps.log"
	ctl start
	if [ "$1" = snapshot ]; then
		during "$PHASE_SECS" snap_vmcheck
		quiesce
		stats_copy "$LOGDIR/stats"
		run_check final snapshot --chan "$CHAN" --final
	else
		during "$PHASE_SECS" snap_record
		quiesce
		stats_copy "$LOGDIR/stats"
		rm -rf "$SOAK/snap"
		run snap 0 lrb-record "$CHAN" --snapshot -o "$SOAK/snap" --quiet
		verify final "$SOAK/snap" -- --snapshot
	fi
	LOGS="$LOGDIR/snaps.log $LOGDIR/final.log"
	phase_done
	unload_client
}

# cleanup: what a phase that failed half-way left behind.
cleanup() {
	[ ! -e "$SOAK/hotplug.on" ] || hotplug_stop
	if client_loaded; then
		rmmod lrb_vm_client || bad "rmmod lrb_vm_client after phase $1 failed"
	fi
	[ ! -e "$LOGDIR/rec.pid" ] || bg_done rec || bg_wait rec 60
	for _name in $CHECKS; do
		check_done "$_name" || wait_check "$_name" 60
	done
	CHECKS=
	rm -rf "$SOAK/trace" "$SOAK/splice" "$SOAK/snap" "$LOGDIR/rec.pid"
}

SOAK_T0=$(uptime_s)
note "$NPHASES phases of ${PHASE_SECS}s of writing ($DURATION s asked), a CPU offline for 1s then ${HOTPLUG_GAP}s online, CPUs $ONLINE_CPUS"
echo "0/$NPHASES" >"$SOAK/phase"
load_lrb || finish
companion_start
progress_loop &
PROGRESS=$!
n=0
for p in $PHASES; do
	n=$((n + 1))
	mode=${p%%:*}
	cons=${p#*:}
	echo "$n/$NPHASES ($mode, $cons)" >"$SOAK/phase"
	echo "vmtest: soak: phase $n/$NPHASES: $mode mode, consumer $cons, ${PHASE_SECS}s of writing"
	fails=$FAIL
	LOGS=
	rm -f "$LOGDIR/written" "$LOGDIR/stats"
	"${mode}_phase" "$cons"
	cleanup "$n"
	# shellcheck disable=SC2086 # LOGS: file names, split
	figures "$n" "$mode" "$cons" "$fails" $LOGS
done
kill "$PROGRESS"
companion_end
unload_lrb
elapsed=$(($(uptime_s) - SOAK_T0))
cycles=$(wc -l <"$SOAK/hotplug.cycles")
check "CPU hotplug cycles happened ($cycles)" test "$cycles" -gt 0
{
	echo "duration_asked_s $DURATION"
	echo "phase_writing_s $PHASE_SECS"
	echo "phases $NPHASES"
	echo "elapsed_s $elapsed"
	echo "hotplug_gap_s $HOTPLUG_GAP"
	echo "hotplug_cycles $cycles"
	echo "hotplug_errors $HOTPLUG_ERRORS"
	echo "cpus $ONLINE_CPUS"
	echo "writers $WRITERS"
} >"$LRB_EXPORT/soak.meta"
echo "vmtest: soak: done in ${elapsed}s, $cycles hotplug cycles"
finish
