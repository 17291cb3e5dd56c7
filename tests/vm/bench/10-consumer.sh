#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, part consumer-vm, in the guest (run by tests/vm/bench/run.sh,
# which puts tests/vm/scenarios/lib.sh beside it): lrb-consumer-bench
# drains rings of 64 x 64 KiB per CPU filled by the test client's task
# writers (1 KiB records) by splice, mmap and read into /dev/null and a
# file on tmpfs; its table and BENCH lines go to $LRB_EXPORT/results.txt,
# back to the host. lrbbench.rounds=N on the kernel command line sets the
# drains per figure (lrb-consumer-bench --rounds; its default otherwise).
. "$(dirname "$0")/lib.sh"

rounds=
# shellcheck disable=SC2013 # words are what we want
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbbench.rounds=*) rounds=${arg#*=} ;;
	esac
done

load_lrb || finish
load_client mode=discard autostart=0 subbuf_size=65536 num_subbuf=64 \
	size=1020 task_batch=64 task_interval_us=0 irq_interval_us=0 || finish
note "lrb-consumer-bench ${rounds:+--rounds $rounds}"
lrb-consumer-bench --chan "$CHAN" ${rounds:+--rounds "$rounds"} --dir "$LOGDIR" \
	--out "$LRB_EXPORT/results.txt" >"$LOGDIR/bench.log" 2>&1
fold "$LOGDIR/bench.log" $?
show_stats
unload_client
unload_lrb
finish
