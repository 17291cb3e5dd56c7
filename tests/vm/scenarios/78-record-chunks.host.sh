#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: each trace chunk, and the one copied while recording, read
# alone by babeltrace2 and lrb-dump; together every record, once.
. "$(dirname "$0")/host.sh"
trace_check chunks "$EXPORT/time/trace" "$EXPORT/time/early"
trace_check chunks "$EXPORT/size/trace"
finish
