#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record, splice consumer (the default), into a trace directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

record_run splice 2000 size=200 task_batch=32 task_interval_us=0 \
	irq_interval_us=1000 irq_batch=4
finish
