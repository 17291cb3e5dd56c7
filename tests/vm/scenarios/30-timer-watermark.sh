#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# When poll() wakes a reader. A writer too slow to fill a packet: the switch
# timer (200 ms) must deliver its records. Then a watermark of 3 packets,
# completed one by one with FLUSH while a slower writer keeps the open
# packet non-empty.
. "$(dirname "$0")/lib.sh"

run() {
	load_lrb || return
	load_client mode=discard size=64 task_batch=1 task_interval_us=50000 \
		irq_interval_us=0 switch_timer_us=200000 || return
	run_check timer timer --chan "$CHAN" --period-us 200000 --duration 3
	unload_client
	load_client mode=discard size=20 task_batch=1 task_interval_us=20000 \
		irq_interval_us=0 || return
	run_check watermark watermark --chan "$CHAN" --cpu 0
	unload_client
	unload_lrb
}

run
finish
