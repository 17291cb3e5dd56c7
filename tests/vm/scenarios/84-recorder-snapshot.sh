#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --snapshot of a flight recorder: while its writers overwrite
# it, then after they stopped (the whole ring, ending with the last
# records), twice with identical files (a snapshot consumes nothing).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

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
	# and through lrb-receive
	start_bg recv lrb-receive --listen 5556 -o $d-net --once
	wait_for 10 "lrb-receive to listen" bg_says recv listening || return
	run snap-net 0 lrb-record "$CHAN" --snapshot --to 127.0.0.1:5556
	bg_wait recv 20
	for f in "$d"-1/"$CHAN"_*; do
		check "$f: the snapshot sent differs" \
			cmp "$f" "$d-net/${f##*/}"
	done
	unload_client
	unload_lrb
}

snap
finish
