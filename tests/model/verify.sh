#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Model-check lrb's reserve/commit/switch/reader protocol with spin
# (tests/model/lrb.pml; Documentation/design.rst, "The spin model").
#
#   tests/model/verify.sh [-j JOBS]      (make verify)
#
# JOBS searches run at once: by default as many as there are CPUs and
# 2 GB of available memory (the largest search takes 1.6 GB).
#
# Every good configuration is searched exhaustively: "safety" runs check
# the assertions and that no state is stuck (deadlock), "livelock" runs
# look for cycles in which no writer makes progress. Together the good
# safety runs must reach every statement they compile ("unreached" in
# spin's report). Every known-bad variant must fail, and on the check that the
# bug breaks. One line per run; the last line is "N passed, M failed".
# Work files and spin's reports go to build/model/.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
model=$PWD/tests/model/lrb.pml
out=$PWD/build/model
mem_gb=$(awk '/^MemAvailable:/ { print int($2 / 2097152) }' /proc/meminfo 2>/dev/null)
jobs=$(nproc 2>/dev/null || echo 1)
[ -z "$mem_gb" ] || [ "$mem_gb" -ge "$jobs" ] || jobs=$mem_gb
[ "$jobs" -ge 1 ] || jobs=1
case ${1:-} in
"") ;;
-j) jobs=${2:-} ;;
*) echo "verify: unknown option '$1' (usage: tests/model/verify.sh [-j JOBS])" >&2; exit 2 ;;
esac
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
	echo "verify: -j '$jobs': give the number of searches to run at once, 1 or more" >&2
	exit 2
fi

for tool in spin gcc; do
	if ! command -v $tool >/dev/null; then
		echo "verify: $tool is not installed: run scripts/setup.sh (Debian packages spin, gcc)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

# name|kind|spin flags|for bad variants: the checks the bug must break
#   kind: safety (assertions, deadlock), livelock (non-progress cycles),
#   bad (a safety search that must fail), bad-livelock (a livelock search
#   that must fail); a bad run names the assertions, "invalid end state"
#   (a deadlock) or "non-progress cycle" it must fail on
runs=(
	"discard, task + interrupt|safety||"
	"discard, task + interrupt|livelock||"
	"overwrite, task + interrupt|safety|-DOVERWRITE -DNFLUSH=0|"
	"overwrite, task + interrupt|livelock|-DOVERWRITE -DNFLUSH=0|"
	"overwrite, flush, snapshot reader|safety|-DOVERWRITE -DNI=1 -DSNAPSHOT|"
	"overwrite, flush, snapshot reader|livelock|-DOVERWRITE -DNI=1 -DSNAPSHOT|"
	"discard, task + interrupt + CPU 1|safety|-DREMOTE -DNT=1 -DNI=1 -DNR=1 -DNFLUSH=0 -DDISCARDERS=1|"
	"skips of two writers, clock from 0|safety|-DREMOTE -DNT=1 -DNI=1 -DNR=1 -DNFLUSH=0 -DDISCARDERS=5 -DCLOCK0|"
	"discard, task + CPU 1, timer flush|safety|-DREMOTE -DNT=1 -DNI=0 -DNR=1 -DDISCARDERS=3|"
	"discard, task + CPU 1, timer flush|livelock|-DREMOTE -DNT=1 -DNI=0 -DNR=1 -DDISCARDERS=3|"
	"overwrite, task + CPU 1|safety|-DOVERWRITE -DREMOTE -DNT=1 -DNI=0 -DNR=2 -DNFLUSH=0 -DDISCARDERS=1|"
	"overwrite, task + CPU 1|livelock|-DOVERWRITE -DREMOTE -DNT=1 -DNI=0 -DNR=2 -DNFLUSH=0 -DDISCARDERS=1|"
	"nested writers need no generation|safety|-DBAD_NO_GEN|"
	"BAD_COMMIT_EARLY discard|bad|-DBAD_COMMIT_EARLY|packet_of_this_lap|records_complete|writer_owns_pages"
	"BAD_COMMIT_EARLY overwrite|bad|-DOVERWRITE -DNFLUSH=0 -DBAD_COMMIT_EARLY|packet_of_this_lap|records_complete|writer_owns_pages"
	"BAD_NO_SWAP|bad|-DOVERWRITE -DNFLUSH=0 -DBAD_NO_SWAP|writer_owns_pages"
	"BAD_NO_GEN, CPU 1|bad|-DREMOTE -DNT=1 -DNI=1 -DNR=1 -DNFLUSH=0 -DDISCARDERS=1 -DBAD_NO_GEN|ts_in_buffer_order"
	"BAD_NO_LAP_TAG|bad|-DOVERWRITE -DNFLUSH=0 -DBAD_NO_LAP_TAG|packet_of_this_lap|records_complete|writer_owns_pages"
	"BAD_NO_WRAP_CHECK|bad|-DOVERWRITE -DNFLUSH=0 -DBAD_NO_WRAP_CHECK|writer_owns_pages|packet_of_this_lap|records_complete"
	"BAD_NO_FULL_CHECK|bad|-DBAD_NO_FULL_CHECK|writer_owns_pages"
	"BAD_WRITER_WAITS|bad-livelock|-DBAD_WRITER_WAITS|non-progress cycle"
	"BAD_WRITER_BLOCKS|bad|-DBAD_WRITER_BLOCKS|invalid end state"
	"BAD_SKIP_NO_HOLD discard|bad|-DBAD_SKIP_NO_HOLD|skips_merged|skip_list_exact"
	"BAD_SKIP_NO_HOLD overwrite|bad|-DOVERWRITE -DNFLUSH=0 -DBAD_SKIP_NO_HOLD|skips_merged|skip_list_exact"
	"BAD_SKIP_LATE_MERGE|bad|-DBAD_SKIP_LATE_MERGE|skips_merged|skips_cover_exactly|writer_owns_pages"
	"BAD_SKIP_HOLD_EACH, CPU 1|bad|-DREMOTE -DNT=1 -DNI=1 -DNR=1 -DNFLUSH=0 -DDISCARDERS=5 -DCLOCK0 -DBAD_SKIP_HOLD_EACH|accounting_exact|loss_as_documented"
)

# run_one I: search run I in $out/I/ and leave its one-line verdict ("ok
# ..." or "FAILED ...") in $out/I/verdict, written last.
run_one() {
	local v
	mkdir -p "$out/$1"
	v=$(cd "$out/$1" && search "$1")
	echo "${v:-FAILED ${runs[$1]%%|*}: no verdict, see $out/$1/}" >"$out/$1/verdict.tmp"
	mv "$out/$1/verdict.tmp" "$out/$1/verdict"
}

# search I, in its directory: print the verdict of run I
search() {
	local i=$1 name kind flags expect dir=$PWD cflags pflags t0 t1 states errs
	local msg stats
	IFS='|' read -r name kind flags expect <<<"${runs[$i]}"
	case $kind in
	livelock | bad-livelock) cflags=-DNP pflags=-l ;;
	*) cflags=-DSAFETY pflags= ;;
	esac
	# shellcheck disable=SC2086
	if ! spin -a $flags "$model" >spin.out 2>&1 ||
	   ! gcc -O2 $cflags -DCOLLAPSE -o pan pan.c >gcc.out 2>&1; then
		echo "FAILED $name ($kind): spin or gcc failed, see $dir/"
		return
	fi
	t0=$(date +%s%N)
	# -m: search depth; a search cut by it is not exhaustive (checked below)
	# shellcheck disable=SC2086
	./pan -m200000 -w26 $pflags >pan.out 2>&1
	t1=$(date +%s%N)
	[ "$cflags" = -DNP ] || ./pan -d >states.out 2>&1
	states=$(sed -nE 's/^ *([0-9.e+]+) states, stored.*/\1/p' pan.out)
	errs=$(sed -nE 's/.*errors: ([0-9]+)$/\1/p' pan.out)
	msg=$(grep -m1 -E '^pan:1: ' pan.out | sed -E 's/^pan:1: //; s/ \(at depth [0-9]+\)//')
	stats=$(awk -v s="$states" -v t=$((t1 - t0)) \
		'BEGIN { printf "%d states, %.1f s", s, t / 1e9 }')
	if [ -z "$errs" ]; then
		echo "FAILED $name ($kind): pan did not finish, see $dir/pan.out"
	elif [ "${kind#bad}" != "$kind" ]; then
		if [ "$errs" -gt 0 ] &&
		   grep -qE "(violated ($expect)|^($expect))\$" <<<"$msg"; then
			echo "ok     $name fails as it must: $msg ($stats)"
		elif [ "$errs" -gt 0 ]; then
			echo "FAILED $name fails, but not on $expect: $msg"
		else
			echo "FAILED $name passes: the model misses this bug ($stats)"
		fi
	elif [ "$errs" -ne 0 ]; then
		echo "FAILED $name ($kind): $msg; replay: cd $dir && spin -t -k lrb.pml.trail -p -g $flags $model"
	elif grep -q 'max search depth too small' pan.out; then
		echo "FAILED $name ($kind): search cut at depth 200000, not exhaustive"
	else
		echo "ok     $name ($kind): $stats, no error"
	fi
}

# Statement lines of the model that no good safety run reached: from each
# run's state tables (pan -d) and its unreached report.
uncovered() {
	local i kind
	for i in "${!runs[@]}"; do
		IFS='|' read -r _ kind _ <<<"${runs[$i]}"
		[ "$kind" = safety ] || continue
		awk '
			FILENAME ~ /states.out$/ && /^proctype / { proc = $2 }
			FILENAME ~ /states.out$/ && /^\tstate / &&
			match($0, /lrb\.pml:[0-9]+/) {
				lines[proc " " $2] = lines[proc " " $2] " " \
					substr($0, RSTART + 8, RLENGTH - 8)
			}
			FILENAME ~ /pan.out$/ && /^unreached in proctype / { proc = $4 }
			FILENAME ~ /pan.out$/ && match($0, /lrb\.pml:[0-9]+, state [0-9]+,/) {
				match($0, /state [0-9]+/)
				dead[proc " " substr($0, RSTART + 6, RLENGTH - 6)] = 1
			}
			END {
				for (k in lines) {
					n = split(lines[k], l, " ")
					for (j = 1; j <= n; j++)
						print (k in dead ? "unreached " : "reached ") l[j]
				}
			}' "$out/$i/states.out" "$out/$i/pan.out"
	done | awk '
		{ seen[$2] = 1; if ($1 == "reached") hit[$2] = 1 }
		END { for (l in seen) if (!(l in hit)) print l }' | sort -n
}

rm -rf "$out"
mkdir -p "$out"
echo "verify: ${#runs[@]} spin runs, $jobs at a time; work files in build/model/"
start=$SECONDS
pids=()
next_print=0
print_done() {
	while [ "$next_print" -lt "${#pids[@]}" ] &&
	      [ -f "$out/$next_print/verdict" ]; do
		cat "$out/$next_print/verdict"
		next_print=$((next_print + 1))
	done
}
for i in "${!runs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
		print_done
	done
	run_one "$i" &
	pids+=($!)
done
# until every run has its verdict, or no run is left to wait for (a run
# that died without one is counted as failed below)
while [ "$next_print" -lt "${#pids[@]}" ]; do
	wait -n
	st=$?
	print_done
	if [ "$st" -eq 127 ]; then
		while [ "$next_print" -lt "${#pids[@]}" ]; do
			[ -f "$out/$next_print/verdict" ] ||
				echo "FAILED ${runs[$next_print]%%|*}: no verdict, see $out/$next_print/" |
				tee "$out/$next_print/verdict"
			next_print=$((next_print + 1))
		done
	fi
done

passed=$(grep -l '^ok' "$out"/*/verdict | wc -l)
failed=$(grep -l '^FAILED' "$out"/*/verdict | wc -l)
lines=$(uncovered)
if [ -z "$lines" ]; then
	echo "ok     coverage: the good runs reach every statement of lrb.pml"
	passed=$((passed + 1))
else
	echo "FAILED coverage: no good run reaches these lines of lrb.pml:"
	while read -r l; do
		printf '         %4d: %s\n' "$l" "$(sed -n "${l}p" "$model" | sed 's/^[[:space:]]*//')"
	done <<<"$lines"
	failed=$((failed + 1))
fi
echo "verify: $((SECONDS - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
