# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# The soak's companion channels (busybox sh, in the guest), sourced by
# 10-soak.sh after soak.sh: the driver sample (samples/kernel) in mode
# "both" logs every completion, from a kthread and a hardirq timer per
# CPU, to a discard channel (soak) and a flight recorder (soak-fr) for the
# whole soak, beside the test client's channel of each phase, so that
# both buffer modes always run at once. lrb-record records soak by splice
# from its creation to its destruction; at the end lrb-dump decodes that
# trace and a snapshot of soak-fr, and per CPU: events + the sample's lost
# = its attempts, lrb-dump's discarded = lost = lrb's loss counters, and
# lrb's records_written = attempts - lost in both channels.
# Not a scenario: executed directly, it does nothing.

case "$0" in
*/companion.sh | companion.sh) exit 0 ;;
esac

SD_DBG=/sys/kernel/debug/lrb_sample_driver
# slow enough that the whole soak's trace fits in the guest's tmpfs
SD_PARAMS="rate=100 size=40"

companion_start() {
	# shellcheck disable=SC2086 # SD_PARAMS: parameters, split
	check "insmod lrb_sample_driver name=soak mode=both $SD_PARAMS" \
		insmod /lib/lrb/lrb_sample_driver.ko name=soak mode=both $SD_PARAMS ||
		return
	start_bg crec lrb-record soak -o "$SOAK/companion"
	wait_for 30 "lrb-record to start recording soak" bg_says crec recording
}

# dump NAME DIR: lrb-dump validates every packet and record of the trace
# DIR; its summary (per CPU: events, discarded) in $LOGDIR/NAME.err.
dump() {
	lrb-dump "$2" >/dev/null 2>"$LOGDIR/$1.err"
	_rc=$?
	check "lrb-dump $2: exit status $_rc" test "$_rc" -eq 0
	sed "s/^/    $1: /" "$LOGDIR/$1.err"
}

# companion_end: stop the sample, take its counts, flush and drain the
# discard channel, snapshot the flight recorder, unload the sample (the
# end of soak's recording), decode both and check the accounting per
# CPU; figures as phase 0 in soak.tsv.
companion_end() {
	check "stop the driver sample" sh -c "echo stop >$SD_DBG/ctl"
	cp "$SD_DBG/written" "$LOGDIR/sd.written"
	check "flush the driver sample" sh -c "echo flush >$SD_DBG/ctl"
	wait_for 120 "lrb-record to drain soak after the flush" \
		drained /dev/lrb/soak/stats
	cp /dev/lrb/soak/stats "$LOGDIR/sd.stats"
	cp /dev/lrb/soak-fr/stats "$LOGDIR/sd-fr.stats"
	run sdsnap 0 lrb-record soak-fr --snapshot -o "$SOAK/companion-fr" --quiet
	check "rmmod lrb_sample_driver (destroys its channels)" rmmod lrb_sample_driver
	bg_wait crec 300
	dump sddump "$SOAK/companion"
	dump sdfrdump "$SOAK/companion-fr"
	awk -v out="$LRB_EXPORT/soak.tsv" '
		function kv(s, k,   i, p) {
			for (i = 2; i <= NF; i++) { split($i, p, "="); if (p[1] == k) return p[2] + 0 }
			return 0
		}
		FILENAME ~ /sd.written$/ && $1 == "channel" { ch = $2 ~ /-fr$/ ? "o" : "d"; next }
		FILENAME ~ /sd.written$/ && $1 ~ /^cpu/ {
			c = substr($1, 4) + 0; cpus[c] = 1
			att[c] = kv($0, "attempts"); lost[ch, c] = kv($0, "lost"); next
		}
		FILENAME ~ /stats$/ && $1 ~ /^cpu/ {
			ch = FILENAME ~ /sd-fr.stats$/ ? "o" : "d"; c = substr($1, 4) + 0
			wr[ch, c] = kv($0, "records_written")
			ll[ch, c] = kv($0, "lost_full") + kv($0, "lost_wrap") + kv($0, "lost_big") + kv($0, "lost_nest")
			lp[ch, c] = kv($0, "lost_packets"); by[ch, c] = kv($0, "bytes_read"); next
		}
		# lrb-dump: "  cpu N (file): E events in P packets, D discarded, L packets lost"
		$1 == "cpu" && $5 == "events" {
			ch = FILENAME ~ /sdfrdump.err$/ ? "o" : "d"; c = $2 + 0
			ev[ch, c] = $4; disc[ch, c] = $9; next
		}
		function bad(msg) { print "MISMATCH " msg; nbad++ }
		END {
			for (c in cpus) {
				b0 = nbad
				if (ev["d", c] + lost["d", c] != att[c])
					bad("soak cpu" c ": events " ev["d", c] " + lost " lost["d", c] " != attempts " att[c])
				if (disc["d", c] != lost["d", c])
					bad("soak cpu" c ": lrb-dump discarded " disc["d", c] " != lost " lost["d", c])
				if (ll["d", c] != lost["d", c] || ll["o", c] != lost["o", c])
					bad("cpu" c ": lrb lost " ll["d", c] "/" ll["o", c] " != the sample lost " lost["d", c] "/" lost["o", c])
				if (wr["d", c] + lost["d", c] != att[c] || wr["o", c] + lost["o", c] != att[c])
					bad("cpu" c ": records_written " wr["d", c] "/" wr["o", c] " + lost != attempts " att[c])
				printf "0\tdiscard\tsample-splice\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", c, att[c],
					lost["d", c], ev["d", c], ll["d", c], by["d", c], nbad == b0 >>out
				printf "0\toverwrite\tsample-snapshot\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", c, att[c],
					lost["o", c], ev["o", c], lp["o", c], 0, nbad == b0 >>out
				checked++
			}
			print "CHECKED " checked
		}' "$LOGDIR/sd.written" "$LOGDIR/sd.stats" "$LOGDIR/sd-fr.stats" \
		"$LOGDIR/sddump.err" "$LOGDIR/sdfrdump.err" >"$LOGDIR/sd.check"
	sed 's/^/    companion: /' "$LOGDIR/sd.check"
	check "the companion channels' accounting, every CPU" \
		sh -c "grep -q '^CHECKED [1-9]' '$LOGDIR/sd.check' && ! grep -q MISMATCH '$LOGDIR/sd.check'"
	check "the flight recorder's snapshot holds events" \
		grep -qE '^  cpu 0 .*: [1-9][0-9]* events' "$LOGDIR/sdfrdump.err"
	rm -rf "$SOAK/companion" "$SOAK/companion-fr"
}
