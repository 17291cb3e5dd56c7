#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The driver sample flat out into a tiny ring, recorded by read(): most
# records are lost, also while no packet is open (the switch timer closed
# the last one); the host side checks that babeltrace2 still reports
# every loss, through the empty packet lrb.ko closes at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"
SAMPLE_PARAMS="rate=0 subbuf_size=4096 num_subbuf=2 switch_timer_us=20000" \
	record_driver 2 -o "$LRB_EXPORT/trace" --consumer read
finish
