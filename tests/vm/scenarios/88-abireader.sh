#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# abireader, a consumer written from Documentation/abi.rst alone, reads a
# channel written on every CPU by task and irq writers, through read() and
# through mmap() and the ioctls, to the end of file after destroy; it checks
# every packet and record and compares its counts with the counters of
# LRB_IOC_GET_COUNTERS and the stats file.
. "$(dirname "$0")/lib.sh"

ABIREADER=${ABIREADER:-/bin/abireader}
MAX=3000
WRITERS="size=64 task_batch=64 task_interval_us=0 irq_interval_us=1000 irq_batch=4"

# abireader_run NAME VIA CLIENT_PARAM...: a fresh client channel consumed by
# "abireader --VIA" on every CPU from before the first record to the end of
# file after destroy.
abireader_run() {
	_name=$1
	_via=$2
	shift 2
	# shellcheck disable=SC2086 # WRITERS: parameters, split
	load_client autostart=0 max_records="$MAX" $WRITERS "$@" || return
	note "abireader --$_via $CHAN ($*)"
	start_program "$_name" "$ABIREADER" "--$_via" "$CHAN"
	if ! wait_for 30 "abireader --$_via to open its files" \
		grep -q '^abireader: consuming ' "$LOGDIR/$_name.log"; then
		sed 's/^/    /' "$LOGDIR/$_name.log"
		kill_check "$_name"
		unload_client
		return
	fi
	ctl start
	wait_for 60 "every CPU's writers to make $MAX attempts" \
		client_reached "$MAX"
	show_written
	show_stats
	ctl destroy
	check "/dev/lrb/$CHAN removed at destroy" test ! -e "/dev/lrb/$CHAN"
	wait_check "$_name" 60 abireader
	unload_client
}

if [ ! -x "$ABIREADER" ]; then
	bad "$ABIREADER is not an executable: the image must provide it"
	finish
fi
load_lrb || finish
abireader_run read read mode=discard
abireader_run mmap mmap mode=discard
# overwrite mode: packets lost to the writers must show as seq_gaps equal
# to lost_packets, and records read + lost_overwrite = records_written
abireader_run owread read mode=overwrite
abireader_run owmmap mmap mode=overwrite
unload_lrb
finish
