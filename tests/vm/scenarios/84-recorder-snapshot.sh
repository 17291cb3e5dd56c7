#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --snapshot of a flight recorder: while its writers overwrite
# it, then after they stopped (the whole ring, ending with the last
# records), twice with identical files (a snapshot consumes nothing), and
# a third time to lttng-relayd, which writes the same files.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"
. "$(dirname "$0")/relayd.sh"

snap() {
	load_lrb || return
	load_client mode=overwrite size=64 task_batch=8 \
		task_interval_us=2000 irq_interval_us=1000 irq_batch=1 || return
	# a few laps of the ring first
	sleep 1
	d=/tmp/snap
	rm -rf $d-*
	run snap-live 0 lrb-record "$CHAN" --snapshot -o $d-live
	verify snap-live $d-live -- --snapshot --live
	ctl stop
	show_written
	run snap-1 0 lrb-record "$CHAN" --snapshot -o $d-1
	run snap-2 0 lrb-record "$CHAN" --snapshot -o $d-2
	verify snap-final $d-1 -- --snapshot
	for f in "$d"-1/"$CHAN"_*; do
		check "$f: the second snapshot differs" \
			cmp "$f" "$d-2/${f##*/}"
	done
	# and through lttng-relayd: the same packets in relayd's files
	relayd_start || return
	run snap-net 0 lrb-record "$CHAN" --snapshot --relayd "$RELAYD_URL"
	relayd_stop
	meta=$(find "$RELAYD_OUT" -name metadata -type f | head -n 1)
	check "relayd wrote the snapshot" test -n "$meta"
	for f in "$d"-1/"$CHAN"_*; do
		check "$f: the snapshot sent differs" \
			cmp "$f" "${meta%/metadata}/${f##*/}"
	done
	unload_client
	unload_lrb
}

snap
finish
