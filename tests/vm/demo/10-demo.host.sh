#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo, on the host: babeltrace2 reads the trace the guest recorded
# ($EXPORT/trace); its event and discarded-event counts must match the
# sample's own counts; a plot of records per CPU over time goes beside the
# trace, and a summary for scripts/demo.sh. The live demo's host side
# (20-demo-live.host.sh, a link to this file) does the same with the trace
# lttng-relayd wrote.
set -uo pipefail
name=$(basename "$0" .host.sh)
CHECK_NAME="vmtest $name/host"
# shellcheck source=tests/common/check.sh
. "$LRB_ROOT/tests/common/check.sh"

trace=$EXPORT/trace
if [ ! -f "$trace/metadata" ]; then
	check "a trace came back from the guest ($trace)" false
	finish
fi
# One pass of babeltrace2: per CPU, the events and their timestamps in
# half-second bins (for the plot), the first events, the warnings.
bt_err=$EXPORT/babeltrace2.err
babeltrace2 --clock-cycles "$trace" 2>"$bt_err" |
	awk -v first="$EXPORT/first-events.txt" -v bins="$EXPORT/records-per-cpu.dat" \
	    -v counts="$EXPORT/events-per-cpu.txt" '
	{
		if (NR <= 10)
			print > first
		cyc = substr($1, 2, length($1) - 2) + 0
		if (NR == 1)
			t0 = cyc
		match($0, /cpu_id = [0-9]+/)
		cpu = substr($0, RSTART + 9, RLENGTH - 9) + 0
		n[cpu]++
		b = int((cyc - t0) / 500000000)
		bin[b, cpu]++
		if (b > maxb)
			maxb = b
		if (cpu > maxc)
			maxc = cpu
	}
	END {
		for (c = 0; c <= maxc; c++)
			print c, n[c] + 0 > counts
		for (b = 0; b <= maxb; b++) {
			line = b * 0.5
			for (c = 0; c <= maxc; c++)
				line = line " " (bin[b, c] + 0) * 2
			print line > bins
		}
	}'
bt_rc=${PIPESTATUS[0]}
check "babeltrace2 reads the trace (exit $bt_rc; $bt_err)" test "$bt_rc" -eq 0

events=$(awk '{ s += $2 } END { print s + 0 }' "$EXPORT/events-per-cpu.txt")
discarded=$(sed -n 's/^WARNING: Tracer discarded \([0-9]*\) events\{0,1\} .*/\1/p' "$bt_err" |
	    awk '{ s += $1 } END { print s + 0 }')
attempts=$(awk '/^cpu/ { for (i = 2; i <= NF; i++) if ($i ~ /^attempts=/) s += substr($i, 10) }
		END { print s + 0 }' "$EXPORT/written")
lost=$(awk '/^cpu/ { for (i = 2; i <= NF; i++) if ($i ~ /^lost=/) s += substr($i, 6) }
	    END { print s + 0 }' "$EXPORT/written")
check "events were recorded ($events)" test "$events" -gt 0
check "babeltrace2's events ($events) = the sample's attempts ($attempts) - its losses ($lost)" \
	test "$events" -eq $((attempts - lost))
check "babeltrace2's discarded events ($discarded) = the sample's losses ($lost)" \
	test "$discarded" -eq "$lost"
{
	echo "events=$events"
	echo "discarded=$discarded"
	echo "attempts=$attempts"
	echo "lost=$lost"
} >"$EXPORT/summary.txt"

if command -v gnuplot >/dev/null; then
	ncpu=$(wc -l <"$EXPORT/events-per-cpu.txt")
	plot=""
	for ((c = 0; c < ncpu; c++)); do
		plot+="${plot:+, }'$EXPORT/records-per-cpu.dat' using 1:$((c + 2)) with lines title 'cpu$c'"
	done
	gnuplot -e "set terminal png size 900,500; set output '$EXPORT/records-per-cpu.png';
		set title 'lrb demo: records per CPU'; set xlabel 'seconds';
		set ylabel 'records per second'; set key outside; plot $plot" 2>"$EXPORT/gnuplot.err"
	check "gnuplot wrote records-per-cpu.png" test -s "$EXPORT/records-per-cpu.png"
else
	check "gnuplot is installed (scripts/setup.sh installs gnuplot-nox)" false
fi
finish
