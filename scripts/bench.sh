#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: every lrb benchmark, side by side with the anchors, in one
# run; one table on stdout, and Documentation/benchmarks.rst with its
# plots (Documentation/images/bench-*.png) rewritten from the figures.
#
#   scripts/bench.sh [PART...]
#
# Parts, in the order they run (default: all):
#   user         liblrb beside LTTng-UST and a floor loop, 1 and 2 writer
#                threads; liblrb's consumer (tests/bench/user/run.sh)
#   icount       instructions per record of the user-space fast path,
#                under callgrind (tests/bench/icount/check.sh)
#   kernel-uml   lrb beside ftrace's ring buffer in one UML boot, payloads
#                of 8 to 256 bytes (scripts/kunit.sh --bench)
#   kernel-smp   the same with a writer on each of 4 vCPUs and a reader,
#                x86_64 under qemu (TCG: ratios only)
#   consumer-vm  splice, mmap and read draining lrb.ko's per-CPU files in
#                Debian's kernel under qemu (tests/vm/bench/run.sh)
#   workload-vm  a ping-pong workload's slowdown traced by lrb and by
#                ftrace, same events, same VM (tests/vm/workload/run.sh)
#
# Every part prints its figures as "BENCH<tab>section<tab>key<tab>value
# <tab>unit<tab>label" lines; they are gathered in build/bench/results.tsv
# with each part's whole output in build/bench/<part>.log, and
# scripts/bench-report.py turns them into the table and the document,
# which ends with Documentation/benchmarks-analysis.inc (written by hand).
# A part that fails is reported and the others still run; the exit status
# is then non-zero. BENCH_DOC=0 leaves Documentation/ alone.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=$root/build/bench
all_parts=(user icount kernel-uml kernel-smp consumer-vm workload-vm)
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=("${all_parts[@]}")

say() { echo "lrb bench: $*" >&2; }

for p in "${parts[@]}"; do
	case " ${all_parts[*]} " in
	*" $p "*) ;;
	*) say "unknown part '$p': choose among ${all_parts[*]}"; exit 2 ;;
	esac
done

scripts/setup.sh --bench || { say "setup failed (scripts/setup.sh --bench): see above"; exit 1; }
mkdir -p "$out"
results=$out/results.tsv
: >"$results"
failed=()

# part_cmd PART: the command that runs PART and prints its BENCH lines.
part_cmd() {
	case $1 in
	user) echo tests/bench/user/run.sh ;;
	icount) echo tests/bench/icount/check.sh ;;
	kernel-uml) echo scripts/kunit.sh --arch uml --bench lrb_bench.bench_single ;;
	kernel-smp) echo scripts/kunit.sh --arch x86_64 --bench lrb_bench.bench_smp ;;
	consumer-vm) echo tests/vm/bench/run.sh ;;
	workload-vm) echo tests/vm/workload/run.sh ;;
	esac
}

# The KUnit kernels print their figures on the console, kept apart.
part_console() {
	case $1 in
	kernel-uml) echo "$root/build/kunit/uml-bench.console.log" ;;
	kernel-smp) echo "$root/build/kunit/x86_64-bench.console.log" ;;
	esac
}

for p in "${parts[@]}"; do
	read -ra cmd <<<"$(part_cmd "$p")"
	log=$out/$p.log
	say "$p: ${cmd[*]} (log $log)"
	start=$SECONDS
	# Progress lines of the long parts pass through.
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${cmd[@]}" 2>&1 | tee "$log" |
		grep --line-buffered -E '^lrb [a-z-]+: ' | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	src=$log
	console=$(part_console "$p")
	[ -z "$console" ] || src=$console
	n=$(grep -hoE $'BENCH\t.*' "$src" 2>/dev/null | tee -a "$results" | wc -l)
	if [ "$rc" -ne 0 ] || [ "$n" -eq 0 ]; then
		say "$p FAILED (exit $rc, $n figures) after $((SECONDS - start))s; last lines of $log:"
		tail -n 20 "$log" | sed 's/^/    /' >&2
		failed+=("$p")
	else
		say "$p: $n figures in $((SECONDS - start))s"
	fi
done

doc=()
[ "${BENCH_DOC:-1}" = 0 ] || doc=(--doc Documentation/benchmarks.rst --images Documentation/images
				 --analysis Documentation/benchmarks-analysis.inc)
python3 scripts/bench-report.py "$results" --command "make bench${*:+ BENCH_PARTS=\"$*\"}" \
	"${doc[@]}" || failed+=(report)

if [ ${#failed[@]} -gt 0 ]; then
	say "failed: ${failed[*]} (logs in $out)"
	exit 1
fi
