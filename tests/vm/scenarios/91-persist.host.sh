#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: babeltrace2 reads the run recovered from the persistent region
# (pk-fr.previous, recorded by lrb-record): every attempt of the driver
# sample is there exactly once, nothing discarded, lrb-dump agrees.
. "$(dirname "$0")/host.sh"
check_driver_trace
trace_check complete "$EXPORT/trace"
host_finish
