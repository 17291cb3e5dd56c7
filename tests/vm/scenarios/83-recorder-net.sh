#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --to lrb-receive over the loopback: splice into the sockets,
# then mmap; lrb-receive --once writes the trace directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/recorder.sh"

record_run splice net 2000 size=100 task_batch=32 task_interval_us=0 \
	irq_interval_us=1000 irq_batch=4
record_run mmap net 2000 size=20 subbuf_size=8192 num_subbuf=4 \
	task_batch=64 task_interval_us=0 irq_interval_us=1000 irq_batch=4
finish
