#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side of 87-recorder-babeltrace: babeltrace2 reads the trace lrb-record
# wrote in the guest ($EXPORT/trace); per CPU, its events must be the
# records_written of lrb-record's summary (.lrb-record.json) and the
# client's attempts minus its losses, and the events it reports discarded
# the last packet's events_discarded.
set -uo pipefail
name=$(basename "$0" .host.sh)
CHECK_NAME="vmtest $name/host"
# shellcheck source=tests/common/check.sh
. "$LRB_ROOT/tests/common/check.sh"

trace=$EXPORT/trace
json=$trace/.lrb-record.json
if [ ! -f "$trace/metadata" ] || [ ! -f "$json" ]; then
	check "a trace came back from the guest ($trace)" false
	finish
fi
if ! babeltrace2 "$trace" >"$EXPORT/bt.out" 2>"$EXPORT/bt.err"; then
	head -n 20 "$EXPORT/bt.err" | sed 's/^/    /'
	check "babeltrace2 reads $trace (its errors above)" false
	finish
fi
# cpu events discarded, from babeltrace2 ("discarded 1 event", "2 events":
# how many a packet reports depends on how far the reader fell behind)
awk '
	/ cpu_id = / { match($0, /cpu_id = [0-9]+/); ev[substr($0, RSTART + 9, RLENGTH - 9) + 0]++ }
	END { for (c in ev) print c, ev[c] }' "$EXPORT/bt.out" | sort -n >"$EXPORT/bt.events"
awk '
	/Tracer discarded [0-9]+ events? / {
		match($0, /discarded [0-9]+/); n = substr($0, RSTART + 10, RLENGTH - 10) + 0
		match($0, /_[0-9]+"/); c = substr($0, RSTART + 1, RLENGTH - 2) + 0
		d[c] += n
	}
	END { for (c in d) print c, d[c] }' "$EXPORT/bt.err" | sort -n >"$EXPORT/bt.discarded"
# cpu records_written events_discarded lost, from .lrb-record.json
awk '
	/"cpu": / { cpu = $2 + 0; ed[cpu] = 0 }
	/"events_discarded": / { ed[cpu] = $2 + 0 }
	/"counters_end": / { end = 1 }
	end && /"records_written": / { rw[cpu] = $2 + 0 }
	end && /"lost_(full|wrap|big|nest)": / { lost[cpu] += $2 + 0 }
	end && /}/ { end = 0 }
	/"total": / { exit }
	END { for (c in rw) print c, rw[c], ed[c], lost[c] }' "$json" | sort -n >"$EXPORT/json.counts"
# cpu attempts lost, from the client
awk '/^cpu[0-9]+ / {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	print substr($1, 4) + 0, v["task"] + v["irq"], v["lost"] }' \
	"$EXPORT/written" >"$EXPORT/client.counts"

while read -r cpu rw ed lost; do
	events=$(awk -v c="$cpu" '$1 == c { print $2 }' "$EXPORT/bt.events")
	disc=$(awk -v c="$cpu" '$1 == c { print $2 }' "$EXPORT/bt.discarded")
	read -r _ attempts clost < <(awk -v c="$cpu" '$1 == c' "$EXPORT/client.counts")
	echo "$name/host: cpu$cpu: babeltrace2 ${events:-0} events, ${disc:-0} discarded; lrb-record records_written $rw, events_discarded $ed, lost $lost; client attempts $attempts lost $clost"
	check "cpu$cpu: babeltrace2 events ${events:-0} != records_written $rw" \
		test "${events:-0}" -eq "$rw"
	check "cpu$cpu: babeltrace2 events ${events:-0} != client attempts $attempts - lost $clost" \
		test "${events:-0}" -eq $((attempts - clost))
	check "cpu$cpu: babeltrace2 discarded ${disc:-0} != last events_discarded $ed" \
		test "${disc:-0}" -eq "$ed"
	check "cpu$cpu: lost $lost != client's lost $clost" test "$lost" -eq "$clost"
done <"$EXPORT/json.counts"
check "the summary has every CPU" test "$(wc -l <"$EXPORT/json.counts")" -eq \
	"$(wc -l <"$EXPORT/client.counts")"
finish
