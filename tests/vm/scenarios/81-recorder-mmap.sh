#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record, mmap consumer, into a trace directory; a small ring of
# 8 KiB sub-buffers so that packets complete often.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

record_run mmap 3000 size=64 subbuf_size=8192 num_subbuf=4 \
	task_batch=64 task_interval_us=0 irq_interval_us=1000 irq_batch=4
finish
