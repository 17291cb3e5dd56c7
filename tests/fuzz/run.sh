#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fuzz lrb-dump's decoding core (tools/lrb-dump, but main.c) with libFuzzer
# under AddressSanitizer and UBSan: tests/fuzz/dump_fuzz.c.
#
#   tests/fuzz/run.sh DURATION     fuzz for DURATION seconds; 0 only replays
#                                  the seed corpus (tests/fuzz/corpus)
#   tests/fuzz/run.sh --corpus     rewrite the seed corpus with mkcorpus.c
#
# New inputs go to build/fuzz/corpus (the seeds in the tree stay small);
# a crash, leak, timeout or sanitizer report is saved in build/fuzz/ and
# makes the exit status 1. Needs clang and libclang-rt-14-dev.
set -euo pipefail

cd "$(dirname "$0")/../.."
B=build/fuzz
say() { echo "lrb fuzz: $*" >&2; }

if [ $# -ne 1 ] || { [ "$1" != --corpus ] && ! [[ $1 =~ ^[0-9]+$ ]]; }; then
	echo "usage: $0 DURATION_SECONDS | --corpus" >&2
	exit 2
fi
mkdir -p "$B/corpus" "$B/artifacts"
# one run at a time: they share the binary, the corpus and the log
exec 9>"$B/.lock"
if ! flock -n 9; then
	say "another run.sh is using $B: waiting for it to finish"
	flock 9
fi

if [ "$1" = --corpus ]; then
	make -s build/rel/liblrb.a
	cc -std=gnu11 -O1 -g -D_GNU_SOURCE -Iinclude -Wall -Wextra -Wno-unused-parameter \
		tests/fuzz/mkcorpus.c build/rel/liblrb.a -lurcu-bp -lpthread \
		-o "$B/mkcorpus"
	rm -rf tests/fuzz/corpus
	mkdir -p tests/fuzz/corpus
	"$B/mkcorpus" tests/fuzz/corpus
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
		cp "$f" "tests/fuzz/corpus/be-${f##*/}"
	done
	say "seed corpus rewritten: $(find tests/fuzz/corpus -type f | wc -l) files, $(du -sk tests/fuzz/corpus | cut -f1) KB"
	exit 0
fi

if ! command -v clang >/dev/null; then
	say "clang not found: apt-get install clang libclang-rt-14-dev"
	exit 1
fi
rt=$(clang -print-runtime-dir 2>/dev/null || true)
if ! ls "$rt"/libclang_rt.fuzzer*.a >/dev/null 2>&1 &&
   ! ls "$(dirname "$(clang -print-libgcc-file-name)")"/libclang_rt.fuzzer*.a >/dev/null 2>&1; then
	say "libFuzzer runtime not found: apt-get install libclang-rt-14-dev"
	exit 1
fi

# lrb-dump's decoding core: every source but main.c
srcs=()
for f in tools/lrb-dump/*.c; do
	[ "$f" = tools/lrb-dump/main.c ] || srcs+=("$f")
done
clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude -Itools/lrb-dump \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter \
	tests/fuzz/dump_fuzz.c "${srcs[@]}" lib/decode.c lib/metadata.c \
	-o "$B/dump_fuzz"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
log=$B/fuzz.log
if [ "$1" -eq 0 ]; then
	say "replaying the seed corpus"
	set +e
	"$B/dump_fuzz" -runs=0 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$B/artifacts/" tests/fuzz/corpus >"$log" 2>&1
	rc=$?
	set -e
else
	say "fuzzing for $1 s (log: $log)"
	set +e
	"$B/dump_fuzz" -max_total_time="$1" -timeout=10 -rss_limit_mb=2048 \
		-malloc_limit_mb=1024 -max_len=16384 -print_final_stats=1 \
		-dict=tests/fuzz/tsdl.dict \
		-artifact_prefix="$B/artifacts/" "$B/corpus" tests/fuzz/corpus \
		>"$log" 2>&1
	rc=$?
	set -e
fi
grep -E '^(#[0-9]+ +(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" >&2 || true
if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
	say "FAILED (exit $rc): see $log; the input is in $B/artifacts/"
	grep -E 'ERROR|runtime error|SUMMARY|artifact' "$log" | head -20 >&2
	echo "dump_fuzz: 0 passed, 1 failed"
	exit 1
fi
say "no crash, leak, timeout or sanitizer report"
echo "dump_fuzz: 1 passed, 0 failed"
