#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fuzz the parsers of what other users and machines hand the tools, with
# libFuzzer under AddressSanitizer and UBSan, one target each:
#
#   dump    lrb-dump's decoding core (tools/lrb-dump, but main.c): the
#           metadata (TSDL) parser, the stream cursor, the payload walker,
#           the printer (dump_fuzz.c);
#   region  the recovery of a persistent channel's region file as
#           lrb-dump --recover runs it (lib/region.c's public recovery
#           API, lrb-dump's metadata parser and payload validation, its
#           reading of the packets kept: region_fuzz.c);
#   relayd  lrb-record's side of lttng-relayd's protocol: relayd's answers
#           (tools/lrb-record/relayd.c, the summary: relayd_fuzz.c).
#
#   tests/fuzz/run.sh DURATION [TARGET...]   fuzz each TARGET (default:
#                                  all) for DURATION seconds; 0 only
#                                  replays its seeds (tests/fuzz/corpus/TARGET)
#   tests/fuzz/run.sh --corpus     rewrite the seeds (mkcorpus.c, mkrelayd.py)
#
# New inputs go to build/fuzz/TARGET/corpus (the seeds in the tree stay
# small: a crash found is fixed and its input added to the seeds by hand);
# a crash, leak, timeout or sanitizer report is saved in
# build/fuzz/TARGET/artifacts/ and makes the exit status 1. Ends with
# "fuzz: N passed, M failed", a target each. Needs clang and
# libclang-rt-14-dev.
set -euo pipefail

cd "$(dirname "$0")/../.."
B=build/fuzz
C=tests/fuzz/corpus
TARGETS=(dump region relayd)
say() { echo "lrb fuzz: $*" >&2; }

if [ $# -lt 1 ] || { [ "$1" != --corpus ] && ! [[ $1 =~ ^[0-9]+$ ]]; }; then
	echo "usage: $0 DURATION_SECONDS [${TARGETS[*]}] | --corpus" >&2
	exit 2
fi
mkdir -p "$B"

if [ "$1" = --corpus ]; then
	make -s build/rel/liblrb.a
	cc -std=gnu11 -O1 -g -D_GNU_SOURCE -Iinclude -Wall -Wextra -Wno-unused-parameter \
		tests/fuzz/mkcorpus.c build/rel/liblrb.a -lurcu-bp -lpthread \
		-o "$B/mkcorpus"
	rm -rf "$C/dump" "$C/region" "$C/relayd"
	mkdir -p "$C/dump" "$C/region"
	"$B/mkcorpus" "$C/dump" "$C/region"
	# big-endian seeds: the same traces written on s390x (qemu-user),
	# with their metadata (byte_order = be)
	make -s build/s390x/liblrb.a
	clang --target=s390x-linux-gnu -std=gnu11 -O1 -g -D_GNU_SOURCE -Iinclude \
		tests/fuzz/mkcorpus.c build/s390x/liblrb.a -lurcu-bp -lpthread \
		-o "$B/mkcorpus-s390x"
	rm -rf "$B/be"
	mkdir -p "$B/be"
	qemu-s390x-static "$B/mkcorpus-s390x" "$B/be"
	for f in "$B"/be/meta-*; do
		cp "$f" "$C/dump/be-${f##*/}"
	done
	python3 tests/fuzz/mkrelayd.py "$C/relayd"
	say "seeds rewritten: $(find "$C" -type f | wc -l) files, $(du -sk "$C" | cut -f1) KB"
	exit 0
fi

duration=$1
shift
[ $# -gt 0 ] || set -- "${TARGETS[@]}"
for t in "$@"; do
	[[ " ${TARGETS[*]} " == *" $t "* ]] || {
		echo "$0: no target '$t' (${TARGETS[*]})" >&2
		exit 2
	}
done
if ! command -v clang >/dev/null; then
	say "clang not found: apt-get install clang libclang-rt-14-dev"
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
rt=$(clang -print-runtime-dir 2>/dev/null || true)
if ! ls "$rt"/libclang_rt.fuzzer*.a >/dev/null 2>&1 &&
   ! ls "$(dirname "$(clang -print-libgcc-file-name)")"/libclang_rt.fuzzer*.a >/dev/null 2>&1; then
	say "libFuzzer runtime not found: apt-get install libclang-rt-14-dev"
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi

# lrb-dump's decoding core: every source but main.c
dump_core=()
for f in tools/lrb-dump/*.c; do
	[ "$f" = tools/lrb-dump/main.c ] || dump_core+=("$f")
done
FLAGS=(-std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra
       -Wno-unused-parameter)
# build TARGET: build/fuzz/TARGET/fuzz
build() {
	local out=$B/$1/fuzz
	case $1 in
	dump)
		clang "${FLAGS[@]}" -Itools/lrb-dump tests/fuzz/dump_fuzz.c \
			"${dump_core[@]}" lib/decode.c lib/metadata.c -o "$out" ;;
	region)
		clang "${FLAGS[@]}" -Itools/lrb-dump tests/fuzz/region_fuzz.c \
			"${dump_core[@]}" lib/decode.c lib/metadata.c lib/region.c \
			tools/common/port.c -o "$out" ;;
	relayd)
		# relayd's answers at once: a short reply timeout, no wait
		# between data pending rounds
		clang "${FLAGS[@]}" -Itools/common -Itools/lrb-record \
			-DRLY_REPLY_TIMEOUT_S=2 -DRLY_PENDING_POLL_US=0 \
			tests/fuzz/relayd_fuzz.c tools/lrb-record/relayd.c \
			tools/lrb-record/report.c tools/common/*.c -lpthread -o "$out" ;;
	esac
}
# the largest input of each target: a few packets, a small region
declare -A max_len=([dump]=16384 [region]=65536 [relayd]=8192)
declare -A dict=([dump]=tests/fuzz/tsdl.dict)

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0
failed=0
for t in "$@"; do
	w=$B/$t
	mkdir -p "$w/corpus" "$w/artifacts"
	# one run of a target at a time: they share its binary, corpus and log
	exec 9>"$w/.lock"
	if ! flock -n 9; then
		say "$t: another run.sh is using $w: waiting for it to finish"
		flock 9
	fi
	if ! build "$t"; then
		say "$t: the build failed"
		failed=$((failed + 1))
		continue
	fi
	log=$w/fuzz.log
	set +e
	if [ "$duration" -eq 0 ]; then
		say "$t: replaying the seeds ($C/$t)"
		"$w/fuzz" -runs=0 -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$w/artifacts/" "$C/$t" >"$log" 2>&1
	else
		say "$t: fuzzing for $duration s (log: $log)"
		"$w/fuzz" -max_total_time="$duration" -timeout=10 -rss_limit_mb=2048 \
			-malloc_limit_mb=1024 -max_len="${max_len[$t]}" -print_final_stats=1 \
			${dict[$t]:+-dict=${dict[$t]}} \
			-artifact_prefix="$w/artifacts/" "$w/corpus" "$C/$t" >"$log" 2>&1
	fi
	rc=$?
	set -e
	grep -E '^(#[0-9]+ +(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" |
		sed "s/^/$t: /" >&2 || true
	if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
		say "$t: FAILED (exit $rc): see $log; the input is in $w/artifacts/"
		grep -E 'ERROR|runtime error|SUMMARY|artifact' "$log" | head -20 >&2
		failed=$((failed + 1))
	else
		say "$t: no crash, leak, timeout or sanitizer report"
		passed=$((passed + 1))
	fi
	exec 9>&-
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
