#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --snapshot takes a flight recorder's contents while its
# writers go on; the host side reads the snapshot with babeltrace2 and
# lrb-dump.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"

load_lrb || finish
if insmod /lib/lrb/lrb_sample_driver.ko name=e2e mode=overwrite rate=3000 \
	size=40 num_subbuf=4; then
	ok
	sleep 3
	check "lrb-record --snapshot" \
		lrb-record e2e-fr --snapshot -o "$LRB_EXPORT/trace" --quiet
	cp "$SAMPLE_DBG/written" "$LRB_EXPORT/written"
	check "rmmod lrb_sample_driver" rmmod lrb_sample_driver
else
	bad "insmod lrb_sample_driver mode=overwrite failed (see dmesg)"
fi
finish
