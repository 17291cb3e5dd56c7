#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --rotate-time 0.7 (splice) and --rotate-size 1M (read) record
# the driver sample into trace chunks as lttng rotate lays them out
# (DIR/archives/BEGIN-END-ID). While the first still records, its first
# finished chunk is copied aside ($LRB_EXPORT/time/early): the host side
# (78-record-chunks.host.sh) reads it and every chunk alone with
# babeltrace2 and checks that together they hold every record once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"

# early_copy DIR: once DIR/archives has a chunk, copy it to
# $LRB_EXPORT/early, and say whether lrb-record was still running after
early_copy() {
	_n=300
	while [ "$_n" -gt 0 ]; do
		for _c in "$1"/archives/*; do
			[ -d "$_c" ] && break
		done
		[ -d "$_c" ] && break
		sleep 0.1
		_n=$((_n - 1))
	done
	[ -d "$_c" ] || return
	mkdir -p "$LRB_EXPORT/time/early"
	cp -r "$_c" "$LRB_EXPORT/time/early/"
	if pidof lrb-record >/dev/null; then
		basename "$_c" >"$LRB_EXPORT/time/early.running"
	fi
}
early_copy "$LRB_EXPORT/time/trace" &
_early=$!
record_driver 4 -o "$LRB_EXPORT/time/trace" --rotate-time 0.7
wait "$_early"
check "a finished chunk was copied while lrb-record ran" \
	test -s "$LRB_EXPORT/time/early.running"
mv "$LRB_EXPORT/written" "$LRB_EXPORT/lrb-record.err" "$LRB_EXPORT/time/"
check "rmmod lrb after the first recording" rmmod lrb
record_driver 4 -o "$LRB_EXPORT/size/trace" --consumer read --rotate-size 1M
mv "$LRB_EXPORT/written" "$LRB_EXPORT/lrb-record.err" "$LRB_EXPORT/size/"
finish
