#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Consume by splice() into a pipe and from there into a TCP socket on
# 127.0.0.1, verified by a receiver per CPU; smallest records (no data) and
# a small ring of 4 sub-buffers of 8 KiB.
. "$(dirname "$0")/lib.sh"

consume_run splice-tcp 4000 size=20 subbuf_size=8192 num_subbuf=4 \
	task_batch=64 task_interval_us=0 irq_interval_us=1000 irq_batch=4
finish
