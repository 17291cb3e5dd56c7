#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record with mmap records the driver sample; the host
# side reads the trace with babeltrace2 (71-record-mmap.host.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"
record_driver 3 -o "$LRB_EXPORT/trace" --consumer mmap
finish
