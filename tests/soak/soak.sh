# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Helpers of the soak (busybox sh, in the guest), sourced by 10-soak.sh
# after tests/vm/scenarios/lib.sh and recorder.sh, which
# tests/soak/run.sh stages beside it: the background CPU hotplug and
# progress loops, the writers' parameters, and the per-CPU figures of a
# phase appended to $LRB_EXPORT/soak.tsv for the host's summary.
# Not a scenario: executed directly, it does nothing.

case "$0" in
*/soak.sh | soak.sh) exit 0 ;;
esac

SOAK=/tmp/soak
STATS=/dev/lrb/$CHAN/stats
# Nested writers on every CPU: a kthread (task context) and a hardirq
# hrtimer that interrupts it; paced so that a phase's data fits in the
# guest's tmpfs, with a ring small enough to lose records now and then.
# shellcheck disable=SC2034 # used by the scenario that sources this
WRITERS="size=64 task_batch=8 task_interval_us=1000 irq_interval_us=500 irq_batch=2 subbuf_size=4096 num_subbuf=4"

mkdir -p "$SOAK"
: >"$SOAK/hotplug.cycles"
: >"$SOAK/hotplug.errors"
echo "0 0 0" >"$SOAK/done"

# hotplug_loop GAP: while $SOAK/hotplug.on exists, take CPU 1, 2, ... (never
# CPU 0) offline for a second and back online, every GAP seconds; one line
# per cycle in hotplug.cycles, one per failure in hotplug.errors.
hotplug_loop() {
	_ncpu=$(grep -c '^processor' /proc/cpuinfo)
	_c=1
	while [ -e "$SOAK/hotplug.on" ]; do
		_f=/sys/devices/system/cpu/cpu$_c/online
		if echo 0 >"$_f"; then
			sleep 1
			if echo 1 >"$_f"; then
				echo "$_c" >>"$SOAK/hotplug.cycles"
			else
				echo "cpu$_c did not come back online" >>"$SOAK/hotplug.errors"
			fi
		else
			echo "cpu$_c could not be taken offline" >>"$SOAK/hotplug.errors"
		fi
		_c=$((_c % (_ncpu - 1) + 1))
		_n=0
		while [ "$_n" -lt "$1" ] && [ -e "$SOAK/hotplug.on" ]; do
			sleep 1
			_n=$((_n + 1))
		done
	done
	rm -f "$SOAK/hotplug.pid"
}

hotplug_start() {
	: >"$SOAK/hotplug.on"
	hotplug_loop "$HOTPLUG_GAP" &
	echo $! >"$SOAK/hotplug.pid"
}

# hotplug_stop: end the loop (it finishes its cycle: every CPU online) and
# count its failures so far.
hotplug_stop() {
	rm -f "$SOAK/hotplug.on"
	wait_for 30 "the CPU hotplug loop to end" test ! -e "$SOAK/hotplug.pid"
	check "every CPU online after the hotplug loop" \
		test "$(cat /sys/devices/system/cpu/online)" = "$ONLINE_CPUS"
	_e=$(wc -l <"$SOAK/hotplug.errors")
	if [ "$_e" -gt "$HOTPLUG_ERRORS" ]; then
		sed -n "$((HOTPLUG_ERRORS + 1)),\$p" "$SOAK/hotplug.errors" |
			while read -r _l; do echo "FAIL $SCEN: hotplug: $_l"; done
		FAIL=$((FAIL + _e - HOTPLUG_ERRORS))
		HOTPLUG_ERRORS=$_e
	else
		ok
	fi
}

# stats_totals: "records lost_records lost_packets" of the stats file's
# total line, or nothing if the channel is gone.
stats_totals() {
	[ -r "$STATS" ] || return 0
	awk '$1 == "total" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["records_written"], v["lost_full"] + v["lost_wrap"] + \
			v["lost_big"] + v["lost_nest"], v["lost_packets"]
	}' "$STATS" 2>/dev/null
}

# drained STATS: every CPU's consumer has taken all that was produced.
drained() {
	awk '$1 ~ /^cpu/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["produced"] != v["consumed"]) left++
	} END { exit left > 0 }' "$1"
}

# progress_loop: every minute, one line the host shows as it comes.
progress_loop() {
	while :; do
		sleep 60
		# shellcheck disable=SC2046 # three numbers
		set -- $(cat "$SOAK/done") $(stats_totals)
		echo "vmtest: soak: $(($(cut -d. -f1 /proc/uptime) - SOAK_T0))s elapsed," \
			"phase $(cat "$SOAK/phase"), records $(($1 + ${4:-0}))," \
			"lost records $(($2 + ${5:-0})), overwritten packets $(($3 + ${6:-0}))," \
			"hotplug cycles $(wc -l <"$SOAK/hotplug.cycles")"
	done
}

# phase_done: add the channel's final totals to those of earlier phases.
phase_done() {
	# shellcheck disable=SC2046 # three numbers each
	set -- $(cat "$SOAK/done") $(stats_totals)
	[ $# -eq 6 ] || return 0
	echo "$(($1 + $4)) $(($2 + $5)) $(($3 + $6))" >"$SOAK/done"
}

# figures NUM MODE CONSUMER FAILS_BEFORE LOG...: append one line per CPU to
# $LRB_EXPORT/soak.tsv: the client's attempts and failed reserves
# ($LOGDIR/written, copied once the writers stopped), the records (and
# bytes, where the checker prints them) the checker verified in LOG...,
# lrb's loss counters and bytes_read ($LOGDIR/stats, copied after the
# drain), and the phase's verdict.
figures() {
	_num=$1 _mode=$2 _cons=$3 _ok=1
	shift 3
	[ "$FAIL" -eq "$1" ] || _ok=0
	shift
	awk -v num="$_num" -v mode="$_mode" -v cons="$_cons" -v ok="$_ok" '
		function kv(i) { split($i, p, "="); return p[2] + 0 }
		FILENAME ~ /written$/ && $1 ~ /^cpu[0-9]+$/ {
			c = substr($1, 4) + 0; cpus[c] = 1
			att[c] = kv(2) + kv(3); cl[c] = kv(4); next
		}
		FILENAME ~ /stats$/ && $1 ~ /^cpu[0-9]+$/ {
			c = substr($1, 4) + 0
			for (i = 2; i <= NF; i++) { split($i, p, "="); v[p[1]] = p[2] + 0 }
			lost[c] = mode == "overwrite" ? v["lost_packets"] : \
				v["lost_full"] + v["lost_wrap"] + v["lost_big"] + v["lost_nest"]
			bytes[c] = v["bytes_read"]; next
		}
		# the checkers: "cpuN: P packets, [B bytes,] R records" (consume,
		# trace) or "cpuN snapshot K: ... P packets (...), R records"
		/ packets/ && match($0, /cpu[0-9]+[ :]/) {
			c = substr($0, RSTART + 3, RLENGTH - 4) + 0
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^records/) rec[c] += $(i - 1)
				if ($i ~ /^bytes/) sbytes[c] += $(i - 1)
			}
		}
		END {
			for (c in cpus)
				printf "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", num,
					mode, cons, c, att[c], cl[c], rec[c], lost[c],
					mode == "overwrite" ? sbytes[c] : bytes[c], ok
		}' "$LOGDIR/written" "$LOGDIR/stats" "$@" | sort -n -k4 \
		>>"$LRB_EXPORT/soak.tsv"
}
