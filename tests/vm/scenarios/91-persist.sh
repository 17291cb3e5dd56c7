#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Persistent flight recorder without a crash (Documentation/persistent.rst),
# in the region the harness reserves (reserve_mem=...:lrb): the driver
# sample writes N records per CPU and context into pk-fr laid out there;
# after rmmod and insmod, lrb.ko recovers them as pk-fr.previous, which
# lrb-record records (the host side checks the trace with babeltrace2:
# every attempt exactly once, nothing discarded). Without a release the
# same run comes back after reloading lrb.ko too and the new run is not
# persistent; after the release the next run lays the region out afresh;
# overwrite_previous=1 takes the region over; a header scribbled over is
# never trusted (log line, fresh layout).
. "$(dirname "$0")/lib.sh"

SD=/lib/lrb/lrb_sample_driver.ko
SDDBG=/sys/kernel/debug/lrb_sample_driver
N=2000
PREV=/dev/lrb/pk-fr.previous
PARAM=/sys/module/lrb/parameters

load_sd() {
	insmod "$SD" name=pk mode=overwrite region=lrb rate=0 max_events=$N \
		switch_timer_us=0
}

# sd_done: every CPU's writers made their N attempts
sd_done() {
	awk -v max=$N '/^cpu[0-9]+ / {
			n++
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2] + 0
			}
			if (v["task"] < max || v["irq"] < max)
				short++
		}
		END { exit !(n > 0 && short == 0) }' "$SDDBG/written"
}

# logged PATTERN: a kernel log line since the last mark matches
logged() {
	dmesg | sed -n "/lrbvm-mark-$MARK/,\$p" | grep -q "$1"
}

MARK=0
mark() {
	MARK=$((MARK + 1))
	echo "lrbvm-mark-$MARK" >/dev/kmsg
}

# run_id: the previous run's id, from its stats
run_id() {
	sed -n 's/^recovery run_id=\([0-9]*\) .*/\1/p' "$PREV/stats"
}

# record_live CONSUMER: lrb-record reads the live persistent pk-fr (its
# pages are the region's: splice hands out copies, mmap maps them)
record_live() {
	LIVE=$1
	lrb-record pk-fr -o "/tmp/live-$1" --consumer "$1" --quiet \
		2>"$LOGDIR/live-$1.err" &
	LIVE_PID=$!
	wait_for 30 "lrb-record --consumer $1 to open pk-fr" \
		holds_cpu_files "$LIVE_PID" pk-fr
}

# check_live: after rmmod, the recorder ended and babeltrace2 reads it
check_live() {
	check "lrb-record --consumer $LIVE of the live persistent channel ends cleanly" \
		wait "$LIVE_PID"
	_n=$(babeltrace2 "/tmp/live-$LIVE" 2>"$LOGDIR/live-bt2.err" |
	     grep -c io_complete)
	check "babeltrace2 reads its trace ($_n events, $TOTAL written)" \
		test "$_n" -gt 0 -a "$_n" -le "$TOTAL"
}

load_lrb || finish
CPUS=$(grep -c '^processor' /proc/cpuinfo)
TOTAL=$((N * 2 * CPUS))

# 1. the region's first use: nothing to recover
mark
check "insmod the driver sample with region=lrb" load_sd
check "first use: the log says the region held no run and is laid out afresh" \
	logged "lrb: region lrb: no previous run to recover (no lrb region (bad magic)): laid out afresh"
check "the flight recorder pk-fr is persistent" \
	grep -q "channel pk-fr mode=overwrite persistent" "$SDDBG/written"
wait_for 120 "the sample's writers to make $N attempts each" sd_done
cp "$SDDBG/written" "$LRB_EXPORT/written"
check "the sample lost nothing" grep -q "^total attempts=$TOTAL lost=0" "$SDDBG/written"
check "rmmod the sample (every packet closed)" rmmod lrb_sample_driver
check "no previous run shown yet" test ! -e "$PREV"

# 2. reload: the run is recovered, the new run waits for the release
mark
check "insmod the sample again" load_sd
check "the log says $TOTAL records were recovered as pk-fr.previous, none dropped" \
	logged "lrb: region lrb: previous run [0-9]* recovered as channel pk-fr.previous: $TOTAL records in [0-9]* packets kept; dropped 0 packets, 0 records, 0 bytes"
check "the log says the region holds a run not released" \
	logged "lrb: region lrb: holds previous run [0-9]*, not released: channel pk-fr cannot use it"
check "the new flight recorder is not persistent" \
	sh -c "! grep -q persistent $SDDBG/written"
for f in cpu0 metadata stats release; do
	check "$PREV/$f exists" test -e "$PREV/$f"
done
check "the release file is write-only" sh -c "! cat $PREV/release 2>/dev/null"
lrb-record pk-fr.previous -o "$LRB_EXPORT/trace" --quiet \
	2>"$LRB_EXPORT/lrb-record.err"
check "lrb-record records pk-fr.previous to its end" test $? -eq 0
cp "$PREV/stats" "$LRB_EXPORT/stats"
check "stats: recovery kept $TOTAL records and dropped none" awk -v want=$TOTAL '
	/^recovery cpu/ {
		for (i = 3; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "records")
				r += kv[2]
			else if (kv[1] ~ /^drop_/ && kv[2] != "0/0/0")
				bad++
		}
	}
	END { exit !(r == want && !bad) }' "$PREV/stats"
check "stats: not released" grep -q "^recovery .* released=0 " "$PREV/stats"
RUN1=$(run_id)

# 3. without a release, the same run comes back, even after lrb.ko reloads
check "rmmod the sample" rmmod lrb_sample_driver
unload_lrb
mark
load_lrb
check "insmod the sample" load_sd
check "the same previous run ($RUN1) is recovered again" \
	test "$(run_id)" = "$RUN1"
check "still not persistent" sh -c "! grep -q persistent $SDDBG/written"

# 4. the release: the next run lays the region out afresh
mark
check "echo 1 > $PREV/release" sh -c "echo 1 >$PREV/release"
check "the log says the run was released" \
	logged "lrb: region lrb: previous run $RUN1 released"
check "stats: released" grep -q "^recovery .* released=1 " "$PREV/stats"
check "the released run stays readable" \
	sh -c "test \$(cat $PREV/cpu0 | wc -c) -gt 0"
check "rmmod the sample" rmmod lrb_sample_driver
mark
check "insmod the sample" load_sd
check "the log says the released region is laid out afresh" \
	logged "lrb: region lrb: no previous run to recover (its previous run was released): laid out afresh"
check "the flight recorder is persistent again" \
	grep -q "channel pk-fr mode=overwrite persistent" "$SDDBG/written"
record_live splice
wait_for 120 "the second run's writers" sd_done

# 5. overwrite_previous=1 takes a region with a run not released
check "rmmod the sample" rmmod lrb_sample_driver
check_live
check "insmod the sample (third run recovered, held)" load_sd
RUN2=$(run_id)
check "a new previous run ($RUN2) replaced the released one ($RUN1)" \
	test -n "$RUN2" -a "$RUN2" != "$RUN1"
check "rmmod the sample" rmmod lrb_sample_driver
echo 1 >"$PARAM/overwrite_previous"
mark
check "insmod the sample with overwrite_previous=1" load_sd
check "the log says the previous run is overwritten" \
	logged "lrb: region lrb: overwriting previous run $RUN2 (overwrite_previous=1)"
check "the flight recorder is persistent" \
	grep -q "channel pk-fr mode=overwrite persistent" "$SDDBG/written"
check "its copy stays readable" test "$(run_id)" = "$RUN2"
echo 0 >"$PARAM/overwrite_previous"
record_live mmap
wait_for 120 "the writers" sd_done
check "rmmod the sample" rmmod lrb_sample_driver
check_live

# 6. a header scribbled over is never trusted
mark
check "scribble over the region's header" \
	sh -c "echo lrb 24 8 >$PARAM/scribble"
check "insmod the sample" load_sd
check "the log says the header is not trusted and the region is laid out afresh" \
	logged "lrb: region lrb: no previous run to recover (region header checksum mismatch (written halfway or corrupt)): laid out afresh"
check "persistent in the fresh layout" \
	grep -q "channel pk-fr mode=overwrite persistent" "$SDDBG/written"
check "rmmod the sample" rmmod lrb_sample_driver
unload_lrb
finish
