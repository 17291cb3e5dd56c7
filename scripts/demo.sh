#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the main job, end to end. Boots Debian's 6.12 kernel under
# qemu (tests/vm/run.sh with the scenario tests/vm/demo), where the
# driver-style sample logs I/O completions on every CPU and lrb-record
# records its channel with splice for DEMO_SECONDS; the trace comes back
# to build/demo/trace, babeltrace2 reads it, and a plot of records per CPU
# over time is written beside it.
#
# DEMO_LIVE=1 (make demo DEMO_LIVE=1): the live view instead (the scenario
# tests/vm/demo/20-demo-live): in the guest, lrb-record streams the channel
# to lttng-relayd as a live session and babeltrace2's lttng-live prints the
# events as they come; this terminal shows the first DEMO_LINES of them,
# then the events per CPU and second. The trace comes from relayd's output
# and is checked the same way.
#
#   DEMO_SECONDS   recording time in the guest (default 10)
#   DEMO_RATE      events per second per CPU and context (default 5000;
#                  live: 50, which babeltrace2 under TCG prints as it comes)
#   DEMO_LINES     live: events shown before the per-second lines (20)
set -euo pipefail

cd "$(dirname "$0")/.."
live=${DEMO_LIVE:-}
seconds=${DEMO_SECONDS:-10}
rate=${DEMO_RATE:-$([ -n "$live" ] && echo 50 || echo 5000)}
scenario=10-demo
how="lrb-record (splice)"
if [ -n "$live" ]; then
	scenario=20-demo-live
	how="lrb-record --relayd --live, lttng-relayd and babeltrace2 lttng-live"
fi
out=build/demo
export_dir=build/vmtest/export/$scenario

say() { echo "lrb demo: $*" >&2; }

say "recording the sample driver's channel for ${seconds}s in a VM (4 CPUs, $rate events/s per CPU and context)"
[ -z "$live" ] || say "live: lrb-record streams to lttng-relayd in the VM; babeltrace2 lttng-live shows the events below"
viewer=
if [ -n "$live" ]; then
	# the guest's "lrb live: " lines, as they reach build/vmtest/output.log
	mkdir -p build/vmtest
	: >build/vmtest/output.log
	# (sed's stderr is this script's: 2>/dev/null comes after)
	tail -n 0 -F build/vmtest/output.log \
		> >(sed -un 's/^lrb live: /  live | /p' >&2) 2>/dev/null &
	viewer=$!
fi
rc=0
LRB_VM_SCENARIOS_DIR=tests/vm/demo \
	LRB_VM_APPEND="lrbdemo.rate=$rate lrbdemo.seconds=$seconds lrbdemo.lines=${DEMO_LINES:-20}" \
	tests/vm/run.sh "$scenario" || rc=$?
[ -z "$viewer" ] || kill "$viewer" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
	say "the demo failed: see the lines above and build/vmtest/ (console.log, output.log)"
	exit 1
fi
rm -rf "$out"
mkdir -p "$out"
cp -r "$export_dir/trace" "$out/trace"
cp "$export_dir/records-per-cpu.png" "$out/" 2>/dev/null || true

# written by tests/vm/demo/10-demo.host.sh: events=, discarded=, ...
get() { sed -n "s/^$1=//p" "$export_dir/summary.txt"; }
events=$(get events)
discarded=$(get discarded)
attempts=$(get attempts)
lost=$(get lost)
echo
echo "lrb demo: ${seconds}s of the driver-style sample on 4 CPUs, recorded with $how"
echo
printf '%-6s %12s %10s %8s %10s\n' CPU records MB MB/s lost
while read -r cpu n; do
	bytes=$(cat "$out/trace/"*_"$cpu" 2>/dev/null | wc -c || true)
	lost_cpu=$(awk -v c="cpu$cpu" '$1 == c { for (i = 2; i <= NF; i++)
		if ($i ~ /^lost=/) s += substr($i, 6) } END { print s + 0 }' \
		"$export_dir/written")
	awk -v c="$cpu" -v n="$n" -v b="$bytes" -v s="$seconds" -v l="$lost_cpu" \
		'BEGIN { printf "cpu%-3s %12d %10.1f %8.2f %10d\n", c, n, b / 1e6, b / 1e6 / s, l }'
done <"$export_dir/events-per-cpu.txt"
echo
echo "babeltrace2 read $events events and reported $discarded discarded;"
echo "the sample counted $attempts attempts and $lost losses: written = read + discarded."
echo
echo "The first events, as babeltrace2 prints them (babeltrace2 $out/trace):"
babeltrace2 "$out/trace" 2>/dev/null | head -n 10 || true
echo
echo "trace: $out/trace"
[ ! -f "$out/records-per-cpu.png" ] || echo "plot:  $out/records-per-cpu.png (records per CPU over time)"
