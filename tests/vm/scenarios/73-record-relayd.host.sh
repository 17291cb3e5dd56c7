#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: babeltrace2 and lrb-dump read the trace lttng-relayd wrote;
# every attempt of the sample is an event or a counted loss, per CPU.
. "$(dirname "$0")/host.sh"
check_driver_trace
babeltrace2 "$EXPORT/trace" >"$EXPORT/bt2.out" 2>"$EXPORT/bt2.err"
check_per_cpu "$EXPORT/bt2.out" "$EXPORT/bt2.err"
finish
