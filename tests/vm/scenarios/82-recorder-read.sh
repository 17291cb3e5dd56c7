#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record, read consumer, into a trace directory; large records and
# large sub-buffers (64 KiB, several pages per packet).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

record_run read 1500 size=1000 subbuf_size=65536 num_subbuf=4 \
	task_batch=16 task_interval_us=0 irq_interval_us=1000 irq_batch=2
finish
