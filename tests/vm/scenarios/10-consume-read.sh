#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Consume a discard channel by read() on every CPU while task and irq
# writers run flat out, losing records when the reader falls behind; every
# record verified, losses accounted exactly.
. "$(dirname "$0")/lib.sh"

consume_run read 3000 size=64 task_batch=64 task_interval_us=0 \
	irq_interval_us=1000 irq_batch=4
finish
