#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest side of make vmtest-crash (tests/vm/crash/run.sh): an agent
# that runs, one at a time, the commands tests/vm/crash/driver.py sends on
# the second serial port, on every boot of the guest. It says
# "vmtest-crash: ready" when it waits for a command, and ends each with
# "vmtest-crash: ok CMD" or "vmtest-crash: error CMD: WHY". The driver
# judges; the agent reports what it sees.
#
#   load run|idle   lrb.ko and the driver sample (mode=overwrite
#                   region=lrb); prints lrb's region lines and the
#                   channels. run: also lrb_vm_crash.ko, the counters'
#                   physical addresses, and the writers started, once
#                   stopped to check lrb_vm_crash's view of the counters
#                   against the sample's "written"
#   record NAME     lrb-record driver-fr.previous into /export/NAME/trace,
#                   with its stats and the kernel log
#   release         echo 1 > /dev/lrb/driver-fr.previous/release
#   unload          rmmod the sample
#   sleep N         let the writers write
#   crash-sysrq     echo c > /proc/sysrq-trigger
#   crash-irq       a panic() in a hardirq hrtimer (lrb_vm_crash)
#   corrupt N SEED KINDS  N random bytes of the region overwritten at the
#                   next panic (lrb_vm_crash)
#   reset-me        say so and wait: the host resets the machine
#   export          /export to the host: a tar archive on /dev/vda
#   reboot          reboot -f, the previous run not released
#   done            end: the scenario's report line, then /init powers off

chan=driver-fr
# events per second per CPU and context: 0, as fast as they can, so that
# a crash finds writes in progress on every CPU
rate=0
prev=/dev/lrb/$chan.previous
dbg=/sys/kernel/debug
seq_off=
for arg in $(cat /proc/cmdline); do
	case $arg in
	lrbcrash.seq_off=*) seq_off=${arg#*=} ;;
	esac
done

say() { echo "vmtest-crash: $*"; }

# newlog: the kernel log's lines lrb and the sample printed since the last
# call, as "vmtest-crash: log ..." lines
newlog() {
	seen=$(cat /tmp/log-seen 2>/dev/null || echo 0)
	dmesg >/tmp/log-now
	wc -l </tmp/log-now >/tmp/log-seen
	tail -n +$((seen + 1)) /tmp/log-now |
		grep -E 'lrb: region|lrb_sample_driver|lrb_vm_crash: corrupt' |
		sed 's/^/vmtest-crash: log /'
}

# loaded MODULE: is it?
loaded() { grep -q "^$1 " /proc/modules; }

cmd_load() {
	loaded lrb || insmod "$LRB_KO" || return 1
	# the writers start when all is ready: at rate=0 they slow all else
	if ! loaded lrb_sample_driver; then
		insmod /lib/lrb/lrb_sample_driver.ko mode=overwrite region=lrb \
			rate="$rate" autostart=0 || return 1
	fi
	newlog
	say "channels: $(ls /dev/lrb | tr '\n' ' ')"
	[ "$1" = run ] || return 0
	if ! loaded lrb_vm_crash; then
		addr=$(grep ' lrb_sd_cpus\s*\[lrb_sample_driver\]' /proc/kallsyms | cut -d' ' -f1)
		[ -n "$addr" ] || { say "no lrb_sd_cpus in /proc/kallsyms"; return 1; }
		insmod /lib/lrb/lrb_vm_crash.ko counters=0x"$addr" \
			seq_off="$seq_off" region=lrb || return 1
	fi
	dmesg | sed -n 's/.*lrb_vm_crash: \(cpu[0-9]* seq at phys .*\)/vmtest-crash: \1/p' |
		tail -n "$(grep -c '^processor' /proc/cpuinfo)"
	# lrb_vm_crash reads the counters the sample counts in "written"
	echo start >$dbg/lrb_sample_driver/ctl || return 1
	sleep 1
	echo stop >$dbg/lrb_sample_driver/ctl || return 1
	w=$(sed -n 's/^\(cpu[0-9]*\) attempts=.* task=\([0-9]*\) irq=\([0-9]*\)$/\1 task=\2 irq=\3/p' \
		$dbg/lrb_sample_driver/written)
	s=$(cat $dbg/lrb_vm_crash/seqs)
	echo start >$dbg/lrb_sample_driver/ctl || return 1
	if [ "$w" != "$s" ]; then
		say "seq-check mismatch: written says $(echo "$w" | tr '\n' ' '), lrb_vm_crash reads $(echo "$s" | tr '\n' ' ')"
		return 1
	fi
	say "seq-check ok: $(echo "$s" | tr '\n' ' ')"
}

cmd_record() {
	d=/export/$1
	mkdir -p "$d"
	[ -d "$prev" ] || { say "no $prev"; return 1; }
	cat "$prev/stats" >"$d/stats" || return 1
	timeout 120 lrb-record "$chan.previous" -o "$d/trace" --quiet \
		>"$d/lrb-record.out" 2>&1
	rc=$?
	dmesg >"$d/kernel.log"
	sed 's/^/vmtest-crash: stats /' "$d/stats"
	[ "$rc" -eq 0 ] || { say "lrb-record exit $rc: $(tail -n 3 "$d/lrb-record.out")"; return 1; }
	say "recorded $(du -sk "$d/trace" | cut -f1) KiB"
}

run_cmd() {
	case $1 in
	load) cmd_load "$2" ;;
	record) cmd_record "$2" ;;
	release) echo 1 >"$prev/release" ;;
	unload) rmmod lrb_sample_driver ;;
	sleep) sleep "$2" ;;
	crash-sysrq) echo c >/proc/sysrq-trigger ;;
	crash-irq) echo 1 >$dbg/lrb_vm_crash/panic_irq && sleep 30 ;;
	corrupt) echo "$2 $3 $4" >$dbg/lrb_vm_crash/corrupt && newlog ;;
	reset-me) say "waiting for the reset"; sleep 600 ;;
	export) tar -cf /dev/vda -C /export . && sync && rm -rf /export/* ;;
	reboot) reboot -f ;;
	*) say "unknown command '$1'"; return 1 ;;
	esac
}

while :; do
	say "ready"
	IFS= read -r line </dev/ttyS1 || { say "the host closed the line"; break; }
	# shellcheck disable=SC2086 # words are the arguments
	set -- $line
	[ $# -gt 0 ] || continue
	if [ "$1" = "done" ]; then
		say "ok done"
		break
	fi
	run_cmd "$@" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		say "ok $1"
	else
		say "error $1: exit $rc"
	fi
done
echo "vmtest $LRB_SCENARIO: 1 passed, 0 failed"
