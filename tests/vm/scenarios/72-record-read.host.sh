#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: babeltrace2 and lrb-dump read the recorded trace; every
# attempt of the sample is an event or a counted loss.
. "$(dirname "$0")/host.sh"
check_driver_trace
finish
