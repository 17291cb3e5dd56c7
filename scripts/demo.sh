#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the main job, end to end. Boots Debian's 6.12 kernel under
# qemu (tests/vm/run.sh with the scenario tests/vm/demo), where the
# driver-style sample logs I/O completions on every CPU and lrb-record
# records its channel with splice for DEMO_SECONDS; the trace comes back
# to build/demo/trace, babeltrace2 reads it, and a plot of records per CPU
# over time is written beside it.
#
#   DEMO_SECONDS   recording time in the guest (default 10)
#   DEMO_RATE      events per second per CPU and context (default 5000)
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${DEMO_SECONDS:-10}
rate=${DEMO_RATE:-5000}
out=build/demo
export_dir=build/vmtest/export/10-demo

say() { echo "lrb demo: $*" >&2; }

say "recording the sample driver's channel for ${seconds}s in a VM (4 CPUs, $rate events/s per CPU and context)"
if ! LRB_VM_SCENARIOS_DIR=tests/vm/demo \
	LRB_VM_APPEND="lrbdemo.rate=$rate lrbdemo.seconds=$seconds" \
	tests/vm/run.sh; then
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
echo "lrb demo: ${seconds}s of the driver-style sample on 4 CPUs, recorded with lrb-record (splice)"
echo
printf '%-6s %12s %10s %8s %10s\n' CPU records MB MB/s lost
while read -r cpu n; do
	bytes=$(stat -c %s "$out/trace/demo_$cpu" 2>/dev/null || echo 0)
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
