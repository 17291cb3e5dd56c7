#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host side: what babeltrace2's lttng-live showed in the guest holds every
# attempt of the sample that was not lost, per CPU, and reports the losses.
. "$(dirname "$0")/host.sh"
check "the viewer's output came back" test -s "$EXPORT/bt2.out"
check_per_cpu "$EXPORT/bt2.out" "$EXPORT/bt2.err"
finish
