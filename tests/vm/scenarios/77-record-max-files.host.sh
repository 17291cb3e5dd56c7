#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: each of the files --max-size/--max-files left, read alone by
# babeltrace2 and lrb-dump; the records left are the newest, gap-free.
. "$(dirname "$0")/host.sh"
for cons in splice read mmap; do
	trace_check files "$EXPORT/$cons/trace" 32768 3
done
finish
