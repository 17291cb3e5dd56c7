#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Instruction counts per record of lrb's fast paths, under callgrind,
# checked against tests/bench/icount/reference: builds
# tests/bench/icount/icount.c with the release flags (the Makefile's rel
# variant) for the user port, and kport.c for the kernel port (the
# kernel_* rows: x86_64 kernel primitives on the stand-in headers of
# tests/bench/icount/kport/, the kernel's code generation flags), runs
# them under valgrind --tool=callgrind and prints, per
# configuration, the count measured, the reference and the change. A count
# more than 10% above its reference fails; one more than 10% below passes
# and asks for the reference to be updated. Ends with "N passed, M failed".
#
#   tests/bench/icount/check.sh             measure and compare (make check)
#   tests/bench/icount/check.sh --update    also write the reference from
#                                           this run (after a real change)
#   tests/bench/icount/check.sh --annotate  also write the profile of
#                                           overwrite_16 to build/bench/icount/
#                                           and print its costliest lines
#
# Valgrind has no rseq, so there the CPU number comes from sched_getcpu()
# (__lrb_port_cpu_slow()) instead of one load: that call is left out of the
# counts (--toggle-collect), so that they stay close to the native path.
# ICOUNT_ANNOTATE=KEY annotates another configuration (kernel_overwrite_16).
set -euo pipefail

cd "$(dirname "$0")/../../.."
here=tests/bench/icount
ref=$here/reference
out=build/bench/icount
prog=build/rel/bench-icount
limit=10
annotated=${ICOUNT_ANNOTATE:-overwrite_16}
top=25

update='' annotate=''
for arg; do
	case $arg in
	--update) update=1 ;;
	--annotate) annotate=1 ;;
	*)
		echo "usage: $0 [--update] [--annotate]" >&2
		exit 2
		;;
	esac
done

if ! command -v valgrind >/dev/null; then
	echo "icount: valgrind is not installed: run scripts/setup.sh (or apt-get install valgrind)" >&2
	exit 1
fi

# The Makefile builds icount.c with the release flags.
mkdir -p "$out"
if ! make --no-print-directory -s "$prog"; then
	echo "icount: building $prog failed (compiler output above); scripts/setup.sh installs the compiler and liburcu" >&2
	exit 1
fi

rm -f "$out"/callgrind.out*
# One dump per configuration, in plain names and line numbers for lines.awk.
valgrind=(valgrind --tool=callgrind --collect-atstart=no
	  --toggle-collect=__lrb_port_cpu_slow
	  --compress-strings=no --compress-pos=no
	  --callgrind-out-file="$out/callgrind.out")
if ! "${valgrind[@]}" "$prog" >"$out/cases.tsv" 2>"$out/valgrind.log"; then
	cat "$out/valgrind.log" >&2
	echo "icount: $prog failed under callgrind (its output is above, and in $out/valgrind.log)" >&2
	exit 1
fi

# The dump of configuration $1 (callgrind names it by the client request).
dump_of() {
	grep -lx "desc: Trigger: Client Request: $1" "$out"/callgrind.out.* | head -n 1 || true
}

passed=0
failed=0
: >"$out/measured"
while IFS=$'\t' read -r key records label; do
	dump=$(dump_of "$key")
	if [ -z "$dump" ]; then
		echo "icount: callgrind wrote no profile for $key: see $out/valgrind.log" >&2
		failed=$((failed + 1))
		continue
	fi
	per=$(awk -v n="$records" '/^totals: / { printf "%.2f", $2 / n }' "$dump")
	echo "$key $per" >>"$out/measured"
	printf 'BENCH\ticount\t%s_ir\t%s\tinstr/rec\t%s\n' "$key" "$per" "$label"
done <"$out/cases.tsv"

toolchain="$(${CC:-cc} --version | head -n 1); $(valgrind --version); liburcu $(dpkg-query -W -f '${Version}\n' liburcu-dev 2>/dev/null | head -n 1 || echo unknown)"
if [ -n "$update" ]; then
	build=$(make --no-print-directory -n -B "$prog" | grep -E "$here/(icount|kport)\.c" | paste -sd ";" | sed "s/;/; /g")
	{
		echo "# Instruction counts per record of lrb's fast paths: callgrind's Ir of"
		echo "# the writing loops of $here/icount.c (user port) and kport.c (kernel"
		echo "# port, kernel_* rows) divided by their records (__lrb_port_cpu_slow()"
		echo "# left out: valgrind has no rseq)."
		echo "# Written by: $here/check.sh --update"
		echo "# date: $(date -u +%F)"
		echo "# toolchain: $toolchain"
		echo "# build: $build"
		echo "# run: ${valgrind[*]} $prog"
		cat "$out/measured"
	} >"$ref"
	echo "icount: reference written to $ref"
fi
ref_toolchain=$(sed -n 's/^# toolchain: //p' "$ref" 2>/dev/null || true)
if [ -n "$ref_toolchain" ] && [ "$ref_toolchain" != "$toolchain" ]; then
	echo "note: the reference was made with: $ref_toolchain"
	echo "      this run uses:                $toolchain"
	echo "      counts move with the compiler and liburcu: if that explains a change, run $here/check.sh --update"
fi

printf '%-14s %10s %10s %9s\n' config measured reference change
while read -r key per; do
	refv=$(awk -v k="$key" '$1 == k { print $2 }' "$ref" 2>/dev/null || true)
	if [ -z "$refv" ]; then
		printf '%-14s %10s %10s %9s  FAIL: no reference; run %s --update\n' \
			"$key" "$per" - - "$here/check.sh"
		failed=$((failed + 1))
		continue
	fi
	read -r change verdict < <(awk -v m="$per" -v r="$refv" -v l="$limit" 'BEGIN {
		c = (m - r) / r * 100
		printf "%+.2f%% %s\n", c, (c > l ? "fail" : (c < -l ? "drop" : "ok")) }')
	printf '%-14s %10s %10s %9s  ' "$key" "$per" "$refv" "$change"
	case $verdict in
	fail)
		echo "FAIL: more than $limit% above the reference; $here/check.sh --annotate shows where the instructions go"
		failed=$((failed + 1))
		;;
	drop)
		echo "ok, but more than $limit% below the reference: if the gain is real, run $here/check.sh --update"
		passed=$((passed + 1))
		;;
	*)
		echo ok
		passed=$((passed + 1))
		;;
	esac
done <"$out/measured"

if [ -n "$annotate" ]; then
	dump=$(dump_of "$annotated")
	annotate_cmd=(callgrind_annotate --inclusive=yes --auto=yes --threshold=100 "$dump")
	"${annotate_cmd[@]}" >"$out/$annotated.annotate"
	records=$(awk -v k="$annotated" '$1 == k { print $2 }' "$out/cases.tsv")
	awk -v records="$records" -v top="$top" -v root="$PWD/" \
		-f "$here/lines.awk" "$dump" \
		>"$out/$annotated.lines"
	echo
	echo "$annotated: the $top costliest source lines, inclusive (calls made from a line count on it)"
	cat "$out/$annotated.lines"
	echo "whole profile: $out/$annotated.annotate (${annotate_cmd[*]})"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
