#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record sends the driver sample's discard channel to lttng-relayd in
# the guest (its loopback), by mmap; the host side reads relayd's trace
# with babeltrace2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/relayd.sh"

relayd_record discard 3 --consumer mmap
finish
