#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The LRB_EVENT() sample's trace through babeltrace2: every record of the
# three events of samples/kernel/lrb_sample_events.h, every field with the
# exact value computed from the record's number, nothing else.
#
#   tests/user/sample-events.sh                 record COUNT=1000 of each
#                                               with build/rel/events
#   tests/user/sample-events.sh TRACE COUNT     check a trace recorded
#                                               elsewhere (lrb_sample_events.ko)
#
# Ends with "N passed, M failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
CHECK_NAME=sample-events
. tests/common/check.sh

if ! command -v babeltrace2 >/dev/null; then
	check "babeltrace2 not found: run scripts/setup.sh (or apt-get install babeltrace2)" false
	finish
fi
tmp=$(mktemp -d /tmp/lrb-sample-events.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 2 ]; then
	trace=$1
	count=$2
else
	trace=$tmp/trace
	count=1000
	check "build/rel/events builds (make build/rel/events)" \
		make -s build/rel/events
	check "events writes $count records of each event into $trace" \
		build/rel/events "$trace" "$count"
fi

# What each record must print: the fields of lrb_sample_events_write().
awk -v n="$count" 'BEGIN {
	split("IDLE BUSY BLOCKED", st, " ")
	for (i = 0; i < n; i++) {
		s = i % 4
		state = s < 3 ? "\"" st[s + 1] "\"" : "<unknown>"
		printf "sample_tick: { seq = %d, delta_ns = %d, state = ( %s : container = %d ) }\n",
			i, i ? -i * 1000003 : 0, state, s
		printf "sample_msg: { seq = %d, text = \"msg %d: \\\"quoted\\\" back\\\\slash caf\303\251\" }\n", i, i
		len = i % 17
		data = ""
		for (j = 0; j < len; j++)
			data = data sprintf("%s [%d] = %d", j ? "," : "", j, (i * 31 + j) % 256)
		printf "sample_blob: { seq = %d, tag = \"blob\", len = %d, data = [%s ] }\n",
			i, len, data
	}
}' | sort >"$tmp/expected"

# What babeltrace2 printed, without timestamps and packet context.
babeltrace2 "$trace" 2>"$tmp/bt2.err" >"$tmp/bt2.out"
rc=$?
check "babeltrace2 reads $trace (exit $rc: $(head -c 300 "$tmp/bt2.err"))" test "$rc" -eq 0
sed -e 's/^\[[^]]*\] ([^)]*) //' -e 's/: { cpu_id = [0-9]*, header_size = [0-9]* }, {/: {/' \
	"$tmp/bt2.out" | sort >"$tmp/printed"
check "babeltrace2 prints $((3 * count)) events ($(wc -l <"$tmp/printed") printed)" \
	test "$(wc -l <"$tmp/printed")" -eq $((3 * count))
check "every field of every record as written (diff expected printed: $(diff "$tmp/expected" "$tmp/printed" | head -3 | tr '\n' ' '))" \
	cmp -s "$tmp/expected" "$tmp/printed"
# Anything babeltrace2 says on stderr is a loss, an error or a warning
# about lrb's metadata.
check "babeltrace2 says nothing on stderr ($(head -c 300 "$tmp/bt2.err"))" \
	test ! -s "$tmp/bt2.err"
finish
