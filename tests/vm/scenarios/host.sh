# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Helpers of the scenarios' host sides (<scenario>.host.sh, bash, run by
# tests/vm/run.sh after the guest with EXPORT=build/vmtest/export/<name>
# and LRB_ROOT): read the exported trace with babeltrace2 and lrb-dump and
# compare the counts. Counts with tests/common/check.sh's check; ends with
# its finish, which prints the line the host counts:
#   vmtest <scenario>/host: N passed, M failed

HOST_SCEN=$(basename "$0" .host.sh)
CHECK_NAME="vmtest $HOST_SCEN/host"
# shellcheck source=tests/common/check.sh
. "$LRB_ROOT/tests/common/check.sh"

# bt2_read TRACE: babeltrace2 reads TRACE; sets BT_EVENTS (events),
# BT_DISCARDED (discarded events it reported) and BT_LOST_PACKETS, and
# writes the events per name to $EXPORT/bt2-names.txt ("name count").
bt2_read() {
	local err=$EXPORT/babeltrace2.err rc
	babeltrace2 "$1" 2>"$err" |
		awk '{ sub(/:$/, "", $3); n[$3]++ } END { for (e in n) print e, n[e] }' |
		sort >"$EXPORT/bt2-names.txt"
	rc=${PIPESTATUS[0]}
	check "babeltrace2 reads $1 (exit $rc; $err)" test "$rc" -eq 0
	BT_EVENTS=$(awk '{ s += $2 } END { print s + 0 }' "$EXPORT/bt2-names.txt")
	# "discarded 1 event", "discarded 2 events"
	BT_DISCARDED=$(sed -n 's/^WARNING: Tracer discarded \([0-9]*\) events\{0,1\} .*/\1/p' "$err" |
		       awk '{ s += $1 } END { print s + 0 }')
	BT_LOST_PACKETS=$(sed -n 's/^WARNING: Tracer discarded \([0-9]*\) packets\{0,1\} .*/\1/p' "$err" |
			  awk '{ s += $1 } END { print s + 0 }')
}

# dump_read TRACE: lrb-dump decodes TRACE as well; sets DUMP_EVENTS.
dump_read() {
	local dump=$LRB_ROOT/build/tools/lrb-dump rc
	if [ ! -x "$dump" ]; then
		make -s -C "$LRB_ROOT" tools >/dev/null 2>&1
	fi
	"$dump" "$1" >"$EXPORT/lrb-dump.txt" 2>"$EXPORT/lrb-dump.err"
	rc=$?
	check "lrb-dump decodes $1 (exit $rc; $EXPORT/lrb-dump.err)" test "$rc" -eq 0
	# its summary: "lrb-dump: TRACE: F stream files, N events, ..."
	DUMP_EVENTS=$(sed -n 's/.* stream files\{0,1\}, \([0-9]*\) events.*/\1/p' \
		      "$EXPORT/lrb-dump.err" | tail -n 1)
	DUMP_EVENTS=${DUMP_EVENTS:-0}
}

# written_sum KEY: the sum of KEY=<n> over the CPU lines of the sample's
# written file.
written_sum() {
	awk -v k="$1=" '/^cpu/ { for (i = 2; i <= NF; i++)
		if (index($i, k) == 1) s += substr($i, length(k) + 1) }
		END { print s + 0 }' "$EXPORT/written"
}

# record_sum KEY: the sum over CPUs of lrb-record's counters_end.KEY (the
# buffers' counters when it finished), from the trace's .lrb-record.json.
record_sum() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(c["counters_end"][sys.argv[2]] for c in d["cpus"]))' \
		"$EXPORT/trace/.lrb-record.json" "$1"
}

# check_driver_trace: the driver sample's trace holds every attempt that
# was not lost, and babeltrace2 reports the losses exactly.
check_driver_trace() {
	local attempts lost
	bt2_read "$EXPORT/trace"
	attempts=$(written_sum attempts)
	lost=$(written_sum lost)
	check "records were written ($attempts attempts)" test "$attempts" -gt 0
	check "babeltrace2's events ($BT_EVENTS) = attempts ($attempts) - lost ($lost)" \
		test "$BT_EVENTS" -eq $((attempts - lost))
	check "babeltrace2's discarded events ($BT_DISCARDED) = lost ($lost)" \
		test "$BT_DISCARDED" -eq "$lost"
	check "no packet lost ($BT_LOST_PACKETS)" test "$BT_LOST_PACKETS" -eq 0
	dump_read "$EXPORT/trace"
	check "lrb-dump's events ($DUMP_EVENTS) = babeltrace2's ($BT_EVENTS)" \
		test "$DUMP_EVENTS" -eq "$BT_EVENTS"
	trace_check agree "$EXPORT/trace"
}

# trace_check ARGS...: trace-check.py ARGS (lrb-dump against babeltrace2
# event for event; lrb-record's rotation, read file by file or chunk by
# chunk); its checks count as this scenario's.
trace_check() {
	local out p f
	[ -x "$LRB_ROOT/build/tools/lrb-dump" ] ||
		make -s -C "$LRB_ROOT" tools >/dev/null 2>&1
	out=$(python3 "$LRB_ROOT/tests/vm/scenarios/trace-check.py" "$@" 2>&1)
	grep '^FAIL' <<<"$out" | sed "s|^FAIL |$CHECK_NAME: FAIL: |"
	p=$(sed -n 's/^trace-check: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' <<<"$out")
	f=$(sed -n 's/^trace-check: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' <<<"$out")
	if [ -z "$p" ]; then
		echo "$out" | tail -n 20
		check "trace-check.py $1 ran to its end" false
		return
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

# check_per_cpu BT2_OUT BT2_ERR: per CPU, babeltrace2's events (BT2_OUT,
# its cpu_id) are the sample's attempts minus its losses and the events it
# reports discarded (BT2_ERR, by stream file <chan>_<cpu>, or by relayd's
# stream id for lttng-live) are the losses, exactly.
check_per_cpu() {
	local cpu attempts lost ev disc
	awk '/ cpu_id = / { match($0, /cpu_id = [0-9]+/)
		n[substr($0, RSTART + 9, RLENGTH - 9) + 0]++ }
		END { for (c in n) print c, n[c] }' "$1" | sort -n >"$EXPORT/bt2-cpu-events"
	awk '/Tracer discarded [0-9]+ events? / {
		match($0, /discarded [0-9]+/); d = substr($0, RSTART + 10, RLENGTH - 10) + 0
		if (match($0, /_[0-9]+"/)) c = substr($0, RSTART + 1, RLENGTH - 2) + 0
		# lttng-live names streams by relayd id: the metadata is 1, then
		# the CPUs in order (a relayd that had no other session)
		else if (match($0, /"stream-[0-9]+"/)) c = substr($0, RSTART + 8, RLENGTH - 9) - 2
		else c = "?"
		n[c] += d }
		END { for (c in n) print c, n[c] }' "$2" | sort -n >"$EXPORT/bt2-cpu-discarded"
	check "every discarded-events warning names its CPU" \
		sh -c "! grep -q '^?' '$EXPORT/bt2-cpu-discarded'"
	while read -r cpu attempts lost; do
		ev=$(awk -v c="$cpu" '$1 == c { print $2 }' "$EXPORT/bt2-cpu-events")
		disc=$(awk -v c="$cpu" '$1 == c { print $2 }' "$EXPORT/bt2-cpu-discarded")
		echo "$HOST_SCEN/host: cpu$cpu: babeltrace2 ${ev:-0} events, ${disc:-0} discarded; sample attempts $attempts, lost $lost"
		check "cpu$cpu: events ${ev:-0} = attempts $attempts - lost $lost" \
			test "${ev:-0}" -eq $((attempts - lost))
		check "cpu$cpu: discarded ${disc:-0} = lost $lost" \
			test "${disc:-0}" -eq "$lost"
	done < <(awk '/^cpu[0-9]+ / { a = 0; l = 0
		for (i = 2; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "attempts") a = kv[2]; if (kv[1] == "lost") l = kv[2] }
		print substr($1, 4) + 0, a, l }' "$EXPORT/written")
}
