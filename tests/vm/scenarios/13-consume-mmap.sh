#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Consume through the mapping of each cpu file with GET_NEXT_SUBBUF and
# PUT_SUBBUF; large records (3000 bytes) that cross pages.
. "$(dirname "$0")/lib.sh"

consume_run mmap 500 size=3000 task_batch=8 task_interval_us=0 \
	irq_interval_us=1000 irq_batch=2
finish
