#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo, in the guest: the driver-style sample logs I/O completions on
# every CPU from a kthread and a hardirq timer; lrb-record records the
# channel for DEMO_SECONDS with splice; the trace goes back to the host
# (build/vmtest/export/10-demo), whose side (10-demo.host.sh) reads it.
name=10-demo
rate=5000
seconds=10
# make demo DEMO_RATE=... DEMO_SECONDS=... (on the kernel command line)
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbdemo.rate=*) rate=${arg#*=} ;;
	lrbdemo.seconds=*) seconds=${arg#*=} ;;
	esac
done
passed=0
failed=0

step() {
	if "$@"; then
		passed=$((passed + 1))
	else
		echo "FAIL $name: $*"
		failed=$((failed + 1))
	fi
}

step insmod "$LRB_KO"
step insmod /lib/lrb/lrb_sample_driver.ko name=demo mode=discard \
	rate="$rate" size=40
# Recording ends when the channel is destroyed (the sample's unload) and
# lrb-record has drained it: everything written is recorded or counted.
lrb-record demo -o "$LRB_EXPORT/trace" 2>"$LRB_EXPORT/lrb-record.out" &
pid=$!
sleep "$seconds"
step sh -c 'echo stop >/sys/kernel/debug/lrb_sample_driver/ctl'
cp /sys/kernel/debug/lrb_sample_driver/written "$LRB_EXPORT/written"
cp /dev/lrb/demo/stats "$LRB_EXPORT/stats"
echo "$seconds" >"$LRB_EXPORT/seconds"
step rmmod lrb_sample_driver
step wait "$pid"
step rmmod lrb
echo "vmtest $name: $passed passed, $failed failed"
