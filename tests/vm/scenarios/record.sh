# SPDX-License-Identifier: GPL-2.0
# The record-and-read scenarios (7x-*.sh): a sample client writes on every
# CPU, lrb-record records its channel into $LRB_EXPORT/trace, and the
# scenario's host side (host.sh) reads the trace with babeltrace2 and
# compares the counts with the client's own (saved next to the trace).
# Sourced after lib.sh. Not a scenario: executed directly, it does nothing.

case "$0" in
*/record.sh | record.sh) exit 0 ;;
esac

SAMPLE_DBG=/sys/kernel/debug/lrb_sample_driver

# record_driver SECONDS LRB-RECORD-ARGUMENTS...: the driver sample (channel
# e2e, discard mode, $SAMPLE_PARAMS added to its parameters) writes for
# SECONDS while lrb-record records it until
# the channel is destroyed (the sample's unload), so that every record is
# in the trace or counted as lost.
record_driver() {
	_secs=$1
	shift
	load_lrb || return
	# shellcheck disable=SC2086 # SAMPLE_PARAMS: more parameters, split
	if ! insmod /lib/lrb/lrb_sample_driver.ko name=e2e mode=discard \
		rate=3000 size=40 ${SAMPLE_PARAMS:-}; then
		bad "insmod lrb_sample_driver failed (see dmesg)"
		return 1
	fi
	lrb-record e2e --quiet "$@" 2>"$LRB_EXPORT/lrb-record.err" &
	_rec=$!
	# SECONDS of writing once it records, however long it takes to start
	wait_for 30 "lrb-record to open the cpu files of e2e" \
		holds_cpu_files "$_rec" e2e
	sleep "$_secs"
	check "stop the sample" sh -c "echo stop >$SAMPLE_DBG/ctl"
	cp "$SAMPLE_DBG/written" "$LRB_EXPORT/written"
	check "rmmod lrb_sample_driver (destroys the channel)" \
		rmmod lrb_sample_driver
	check "lrb-record $* ends at the end of the channel" wait "$_rec"
}
