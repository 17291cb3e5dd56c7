#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record sends the driver sample's overwrite channel (flight recorder
# mode, a reader that keeps up) to lttng-relayd in the guest, by read();
# the host side reads relayd's trace with babeltrace2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/relayd.sh"

relayd_record overwrite 3 --consumer read
finish
