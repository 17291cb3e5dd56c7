#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The soak's summary table, from what the guest exported (soak.tsv and
# soak.meta in OUT/export/10-soak) and the result lines of tests/vm/run.sh
# (OUT/run.log, OUT/output.log). Run by tests/soak/run.sh:
#
#   tests/soak/summary.sh OUT START WALL_SECONDS
#
# One row per buffer mode, consumer and CPU, summed over the phases that
# used them, then totals per mode; the last line is "N passed, M failed"
# (tests/vm/run.sh's count of checks; a missing export is one failure).
set -uo pipefail

out=$1 start=$2 wall=$3
exp=$out/export/10-soak
tsv=$exp/soak.tsv
meta=$exp/soak.meta

m() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$meta" 2>/dev/null; }

echo "lrb soak: started $start, ${wall}s in all (build, boot, phases, checks)"
if [ -s "$meta" ]; then
	echo "writing time asked $(m duration_asked_s)s: $(m phases) phases of $(m phase_writing_s)s," \
		"the phases took $(m elapsed_s)s with their drains and checks"
	echo "CPUs $(m cpus); while writing, a CPU offline for 1s then $(m hotplug_gap_s)s online:" \
		"$(m hotplug_cycles) offline/online cycles, $(m hotplug_errors) failed"
	echo "writers per CPU: a kthread and a hardirq hrtimer nested in it; $(m writers)"
else
	echo "no $meta: the guest did not finish the soak (see $out/output.log)"
fi
echo
if [ -s "$tsv" ]; then
	awk -F '\t' '
		function row(mode, cons, cpu, k) {
			printf "%-9s %-15s %4s %12.0f %12.0f %10.0f %10.0f %14.0f  %s\n", mode,
				cons, cpu, att[k], rd[k], cl[k], ll[k], by[k],
				bad[k] ? "FAILED" : "ok"
		}
		function add(k) {
			att[k] += $5; cl[k] += $6; rd[k] += $7; ll[k] += $8
			by[k] += $9; bad[k] += !$10
		}
		{
			k = $2 SUBSEP $3 SUBSEP $4
			if (!(k in att)) order[n++] = k
			add(k); add($2 SUBSEP "all"); add("all")
			if (!($2 in modes)) { modes[$2] = 1; mlist[nm++] = $2 }
		}
		END {
			printf "%-9s %-15s %4s %12s %12s %10s %10s %14s  %s\n", "mode",
				"consumer", "cpu", "attempts", "read", "lost-rsv",
				"lost-lrb", "bytes", "verdict"
			for (i = 0; i < n; i++) {
				split(order[i], p, SUBSEP)
				row(p[1], p[2], p[3], order[i])
			}
			for (i = 0; i < nm; i++)
				row(mlist[i], "all", "all", mlist[i] SUBSEP "all")
			row("all", "all", "all", "all")
		}' "$tsv"
	cat <<'EOF'

attempts  the client's write attempts (task + irq), per CPU stream
read      records the checker verified: discard, each exactly once; overwrite,
          in the snapshots (a record can be in several)
lost-rsv  reserves that failed (the client's count): discard, records dropped
lost-lrb  lrb's counters: discard, lost_full+wrap+big+nest (= lost-rsv, and
          attempts = read + lost-rsv, checked per CPU); overwrite,
          lost_packets (packets overwritten before a reader took them)
bytes     discard: bytes_read; overwrite: bytes of lrb-record's snapshots
          (lrb-vmcheck snapshot and the sample's final snapshot count none)
sample-*  the driver sample's discard and overwrite channels, written all
          along beside the client's: read = events lrb-dump decoded from
          lrb-record's splice recording and from a final snapshot
EOF
else
	echo "no figures ($tsv missing): the guest exported nothing"
fi
echo
grep -E '^vmtest (10-soak|kernel-log-10-soak|cleanup-10-soak|10-soak-exit): ' \
	"$out/output.log" 2>/dev/null | sed 's/^/guest: /'
res=$(grep -E '^vmtest: [0-9]+ passed, [0-9]+ failed$' "$out/run.log" 2>/dev/null | tail -n 1)
p=$(sed -E 's/^vmtest: ([0-9]+) passed, ([0-9]+) failed$/\1/' <<<"$res")
f=$(sed -E 's/^vmtest: ([0-9]+) passed, ([0-9]+) failed$/\2/' <<<"$res")
if [ -z "$res" ]; then
	p=0 f=1
fi
[ -s "$tsv" ] || f=$((f + 1))
echo "$p passed, $f failed"
