#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: each trace chunk, and the one copied while recording, read
# alone by babeltrace2 and lrb-dump; together every record, once.
. "$(dirname "$0")/host.sh"
trace_check chunks "$EXPORT/trace" "$EXPORT/early"
host_finish
