#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Files and a mapping of a held packet kept open across the destruction of
# their channel: they drain what is left, then report end of file; lrb.ko
# stays loaded while anything (client, file, mapping) holds it.
. "$(dirname "$0")/lib.sh"

SYNC=$LOGDIR/sync

run() {
	mkdir -p "$SYNC"
	load_lrb || return
	load_client mode=discard max_records=2000 size=64 task_batch=16 \
		task_interval_us=1000 irq_interval_us=1000 irq_batch=2 || return
	start_check destroyed destroyed --chan "$CHAN" --sync "$SYNC" \
		--written "$SYNC/written"
	wait_for 30 "the checker to hold a packet (sync/ready)" \
		test -e "$SYNC/ready" || return
	check "rmmod lrb fails while the client is loaded" \
		sh -c '! rmmod lrb 2>/dev/null'
	wait_for 60 "every CPU's writers to make 2000 attempts" \
		client_reached 2000
	ctl destroy
	check "/dev/lrb/$CHAN removed at destroy" test ! -e "/dev/lrb/$CHAN"
	cat "$DBG/written" >"$SYNC/written"
	check "written says destroyed=1" grep -q '^destroyed=1' "$SYNC/written"
	unload_client
	check "rmmod lrb fails while cpu files are open" \
		sh -c '! rmmod lrb 2>/dev/null'
	touch "$SYNC/go"
	wait_for 60 "the checker to drain and close its files (sync/closed)" \
		test -e "$SYNC/closed"
	check "rmmod lrb fails while mappings of cpu files remain" \
		sh -c '! rmmod lrb 2>/dev/null'
	touch "$SYNC/go2"
	wait_check destroyed 30
	unload_lrb
}

run
finish
