#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Check that an LTTng-UST snapshot taken by tests/bench/user/run.sh holds
# the benchmark's records, read back with babeltrace2: lrb_bench:record
# events whose 16-byte payload is struct bench_payload (bench.h): bytes 0-7
# a little-endian sequence number below RECORDS, bytes 8-15 holding 8 to
# 15; and the last record a writer thread wrote, sequence RECORDS - 1,
# must be there. Prints what it found; exits 1 if anything is missing.
#
#   tests/bench/user/check-trace.sh SNAPSHOT_DIR RECORDS
set -euo pipefail

say() { echo "lrb bench-user: $*" >&2; }

if [ $# -ne 2 ]; then
	say "usage: $0 SNAPSHOT_DIR RECORDS"
	exit 2
fi
dir=$1
records=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
text=$tmp/text

if ! babeltrace2 "$dir" >"$text" 2>"$tmp/err"; then
	say "babeltrace2 cannot read the LTTng-UST snapshot in $dir:"
	sed 's/^/    /' "$tmp/err" >&2
	exit 1
fi

# One line per event: "... lrb_bench:record: { cpu_id = C }, { payload =
# [ [0] = B0, [1] = B1, ... [15] = B15 ] }".
if ! summary=$(awk -v records="$records" '
	/ lrb_bench:record: / {
		n++
		s = $0
		sub(/.*payload = \[ /, "", s)
		gsub(/\[[0-9]+\] = |[] },]/, " ", s)
		nb = split(s, b, " ")
		seq = 0
		for (i = 8; i >= 1; i--)
			seq = seq * 256 + b[i]
		bad = nb != 16 || seq >= records
		for (i = 9; i <= 16; i++)
			bad = bad || b[i] != i - 1
		if (bad) {
			print "unexpected payload: " $0 > "/dev/stderr"
			exit 1
		}
		if (seq > max)
			max = seq
	}
	END {
		if (!n) {
			print "no lrb_bench:record event" > "/dev/stderr"
			exit 1
		}
		if (max != records - 1) {
			printf "the last record written (sequence %.0f) is missing: the highest is %.0f\n",
			       records - 1, max > "/dev/stderr"
			exit 1
		}
		printf "%d lrb_bench:record events, payloads as written, up to sequence %.0f\n",
		       n, max
	}' "$text"); then
	say "the LTTng-UST snapshot in $dir does not hold the benchmark's records (above): LTTng-UST's figures would not be of a recording tracer; see the session daemon's setup in tests/bench/user/run.sh"
	exit 1
fi
say "LTTng-UST snapshot: $summary"
