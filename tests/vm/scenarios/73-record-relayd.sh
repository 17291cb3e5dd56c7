#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record sends the driver sample's trace over TCP (the guest's
# loopback) to lrb-receive, which writes the trace directory; the host
# side reads it with babeltrace2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"

lrb-receive --listen 127.0.0.1:7070 -o "$LRB_EXPORT/trace" --once \
	>"$LRB_EXPORT/lrb-receive.out" 2>&1 &
recv=$!
wait_for 30 "lrb-receive to listen" \
	grep -q listening "$LRB_EXPORT/lrb-receive.out"
record_driver 3 --to 127.0.0.1:7070
check "lrb-receive ends with the recording" wait "$recv"
finish
