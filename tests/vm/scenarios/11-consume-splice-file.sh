#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Consume by splice() into a pipe and from there into a file per CPU (zero
# copy: pages_spliced must equal the bytes spliced / 4096), readers woken by
# the channel's read timer instead of by writers.
. "$(dirname "$0")/lib.sh"

consume_run splice-file 2000 size=200 task_batch=32 task_interval_us=0 \
	irq_interval_us=1000 irq_batch=4 read_timer_us=20000
finish
