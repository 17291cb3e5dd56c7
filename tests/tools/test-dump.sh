#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of lrb-dump and lrb-stats. Builds, under build/tools-test/:
# lrb-dump and lrb-stats as `make tools` does and again with ASan + UBSan,
# and test-dump.c twice (release and sanitizers, each linking liblrb and
# lrb-dump's decoding core); then runs test-dump against each lrb-dump, and
# checks lrb-stats on a fake /dev/lrb ($LRB_DEV_DIR). Needs babeltrace2
# (scripts/setup.sh installs it). Ends with "N passed, M failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
B=build/tools-test
passed=0
failed=0
export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99

say() { echo "test-dump: $*"; }
ok() { passed=$((passed + 1)); }
fail() { say "FAIL: $*"; failed=$((failed + 1)); }
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if ! command -v babeltrace2 >/dev/null; then
	fail "babeltrace2 not found: run scripts/setup.sh (or apt-get install babeltrace2)"
	finish
fi

# --- build ---------------------------------------------------------------
CFLAGS_COMMON=(-std=gnu11 -g -D_GNU_SOURCE -Iinclude -Itools/common
	       -Itools/lrb-dump -Wall -Wextra -Wno-unused-parameter -Wshadow
	       -Wstrict-prototypes)
# shellcheck disable=SC2054 # the commas are the option's
SAN=(-O1 -fsanitize=address,undefined -fno-sanitize-recover=all
     -fno-omit-frame-pointer)
# lrb-dump's decoding core: every source but main.c
core=()
for f in tools/lrb-dump/*.c; do
	[ "$f" = tools/lrb-dump/main.c ] || core+=("$f")
done
mkdir -p "$B/rel" "$B/asan"
# build WHAT CC ARGS...: warnings fail the release builds (as `make tools`
# would show them), not the sanitizer ones (-O1 warns differently)
build() {
	local what=$1 out
	shift
	if ! out=$("$@" 2>&1); then
		echo "$out"
		fail "build of $what"
		return 1
	fi
	if [ -n "$out" ] && [[ $what != *asan* ]]; then
		echo "$out"
		fail "build of $what: warnings"
		return 1
	fi
	ok
}
make -s build/rel/liblrb.a build/asan/liblrb.a >/dev/null || {
	fail "make build/rel/liblrb.a build/asan/liblrb.a"
	finish
}
for tool in lrb-dump lrb-stats; do
	build "$tool" cc "${CFLAGS_COMMON[@]}" -O2 tools/$tool/*.c \
		tools/common/*.c lib/decode.c lib/metadata.c lib/region.c -lpthread \
		-o "$B/rel/$tool" || finish
	build "$tool (asan)" cc "${CFLAGS_COMMON[@]}" "${SAN[@]}" tools/$tool/*.c \
		tools/common/*.c lib/decode.c lib/metadata.c lib/region.c -lpthread \
		-o "$B/asan/$tool" || finish
done
build test-dump cc "${CFLAGS_COMMON[@]}" -O2 tests/tools/test-dump.c "${core[@]}" \
	build/rel/liblrb.a -lurcu-bp -lpthread -o "$B/rel/test-dump" || finish
build "test-dump (asan)" cc "${CFLAGS_COMMON[@]}" "${SAN[@]}" \
	tests/tools/test-dump.c "${core[@]}" build/asan/liblrb.a -lurcu-bp -lpthread \
	-o "$B/asan/test-dump" || finish

# --- lrb-dump --------------------------------------------------------------
for v in rel asan; do
	out=$("$B/$v/test-dump" "$B/$v/lrb-dump" 2>&1)
	rc=$?
	line=$(grep -E '^test-dump: [0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
	p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	[ -n "$line" ] || { p=0; f=1; }
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -ne 0 ]; then
		echo "$out" | tail -n 40
		say "test-dump [$v]: FAILED (exit $rc)"
	else
		say "test-dump [$v]: $p checks passed"
	fi
done

dev=$(mktemp -d)
trap 'rm -rf "$dev"' EXIT

# --- big-endian traces -----------------------------------------------------
# The fuzzer's big-endian seeds (written on s390x: tests/fuzz/run.sh
# --corpus) as trace directories: lrb-dump must print the values
# babeltrace2 prints, bit fields (CTF packs them from the top bit there)
# and all, and the same number of events.
# fields TEXT: each record's time and scalar fields, as "name=value" words
fields() {
	sed -E 's/ = /=/g; s/[{},]/ /g' |
		grep -oE '^\[[0-9]+\]|\b(seq|ts|temp|flags|lo3|hi5|flag|pad|nvals)=[-0-9a-fA-Fx]+' |
		sed -E 's/^\[0*([0-9])/[\1/' | tr 'A-FX' 'a-fx'
}
for seed in tests/fuzz/corpus/dump/be-meta-*; do
	t=$dev/${seed##*/}
	mkdir -p "$t"
	python3 - "$seed" "$t" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
n = d[1] | d[2] << 8
open(sys.argv[2] + '/metadata', 'wb').write(d[3:3 + n])
open(sys.argv[2] + '/chan_0', 'wb').write(d[3 + n:])
PY
	grep -q 'byte_order = be' "$t/metadata" || fail "$seed: not a big-endian trace"
	for v in rel asan; do
		want=$(babeltrace2 --clock-cycles "$t" 2>&1 | fields)
		got=$("$B/$v/lrb-dump" --clock-cycles "$t" 2>"$dev/err" | fields)
		if [ -n "$want" ] && [ "$got" = "$want" ] &&
		   grep -q "files, 24 events, 0 discarded, 0 packets lost" "$dev/err"; then
			ok
		else
			cat "$dev/err"
			diff <(echo "$want") <(echo "$got") | head -20
			fail "lrb-dump [$v] on $seed: not what babeltrace2 prints"
		fi
	done
done
# the same big-endian packets under metadata that says le: refused, saying why
t=$dev/be-meta-large
sed -i 's/byte_order = be;/byte_order = le;/' "$t/metadata"
for v in rel asan; do
	"$B/$v/lrb-dump" "$t" >/dev/null 2>"$dev/err"
	rc=$?
	if [ $rc -eq 1 ] &&
	   grep -q 'the packet is big-endian but the metadata says byte_order = le' "$dev/err"; then
		ok
	else
		cat "$dev/err"
		fail "lrb-dump [$v]: big-endian packets, le metadata: exit $rc"
	fi
done

# --- usage: every numeric option bounded --------------------------------------
for v in rel asan; do
	for a in "--limit -1" "--limit 18446744073709551616" "--limit x" "--cpu 1024"; do
		# shellcheck disable=SC2086 # the options are words
		"$B/$v/lrb-dump" $a "$dev/be-meta-large" >/dev/null 2>"$dev/err"
		rc=$?
		if [ $rc -eq 2 ] && grep -qE 'expected (a number of events|CPU numbers)' "$dev/err"; then
			ok
		else
			cat "$dev/err"
			fail "lrb-dump [$v] $a: exit $rc, want 2 (usage)"
		fi
	done
done

# --- not a regular file ----------------------------------------------------
# A FIFO or a directory named like a stream file, or a FIFO as the
# metadata, is refused with its name, without opening it: open() of a
# FIFO would wait for a writer.
# refused WHAT CASE ARGS...: lrb-dump ARGS exits 1 within 10 s saying WHAT
refused() {
	local what=$1 case=$2 v rc
	shift 2
	for v in rel asan; do
		timeout 10 "$B/$v/lrb-dump" "$@" >/dev/null 2>"$dev/err"
		rc=$?
		if [ $rc -eq 1 ] && grep -qF "$what" "$dev/err"; then
			ok
		else
			cat "$dev/err"
			fail "lrb-dump [$v]: $case: exit $rc (124: it hung)"
		fi
	done
}
t=$dev/fifo
mkdir -p "$t"
cp "$dev/be-meta-compact27/metadata" "$dev/be-meta-compact27/chan_0" "$t/"
mkfifo "$t/chan_1"
refused "$t/chan_1: a FIFO, not a regular file" "a FIFO stream file" "$t"
rm "$t/chan_1"
mkdir "$t/chan_2"
refused "$t/chan_2: a directory, not a regular file" "a directory stream file" "$t"
rmdir "$t/chan_2"
mv "$t/metadata" "$t/metadata.reg"
mkfifo "$t/metadata"
refused "$t/metadata: not a metadata file" "a FIFO metadata" "$t"

# --- lrb-stats -------------------------------------------------------------
export LRB_DEV_DIR=$dev
mkdir -p "$dev/demo"
counters() { # cpu/total label, then 12 values
	local label=$1
	shift
	printf '%s records_written=%s lost_full=%s lost_wrap=%s lost_big=%s lost_nest=%s lost_packets=%s produced=%s consumed=%s packets_read=%s bytes_read=%s pages_spliced=%s lost_overwrite=%s\n' \
		"$label" "$@"
}
{
	counters cpu0 1000 5 0 1 0 0 2000000 1500000 12 1500000 366 0
	counters cpu1 500 0 0 0 0 3 1000000 1000000 8 1000000 244 90
	counters total 1500 5 0 1 0 3 3000000 2500000 20 2500000 610 90
} >"$dev/demo/stats"
for v in rel asan; do
	s=$B/$v/lrb-stats
	out=$("$s" demo 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^ *0 +1000 +5 +0 +1 +0 +0 +2\.00 +1\.50 +12 +1\.50 +366 *$' <<<"$out" &&
	   grep -qE '^ *total +1500 +5 +0 +1 +0 +3 +3\.00 +2\.50 +20 +2\.50 +610 *$' <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v]: table (exit $rc)"
	fi
	# a previous run's channel: its recovery lines are not counters
	mkdir -p "$dev/demo.previous"
	{
		cat "$dev/demo/stats"
		echo "recovery run_id=7 region=lrb bufs=2 released=0 time_us=90"
		echo "recovery cpu0 packets=3 records=1000 bytes=9000 lost_full=5 drop_slot=0/0/0"
	} >"$dev/demo.previous/stats"
	out=$("$s" demo.previous 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^ *total +1500 +5 ' <<<"$out" &&
	   ! grep -q recovery <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v]: a previous run's stats (exit $rc)"
	fi
	out=$("$s" --json demo 2>&1)
	if grep -q '"records_written": 1500' <<<"$out" && grep -q '"cpu": 1' <<<"$out" &&
	   grep -q '"lost_overwrite": 90' <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v] --json"
	fi
	out=$("$s" nosuch 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'nosuch' <<<"$out" && grep -q 'demo' <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v]: missing channel (exit $rc)"
	fi
	out=$(timeout 10 "$s" demo --watch 0.2 --count 2 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ "$(grep -c '^ *total' <<<"$out")" -eq 2 ] &&
	   grep -q 'per second' <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v] --watch (exit $rc)"
	fi
	mkdir -p "$dev/broken" "$dev/nostats"
	echo garbage >"$dev/broken/stats"
	out=$("$s" broken 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'not a stats line' <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v]: bad stats file (exit $rc)"
	fi
	out=$("$s" nostats 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'nostats/stats: No such file' <<<"$out"; then
		ok
	else
		echo "$out"
		fail "lrb-stats [$v]: channel without stats (exit $rc)"
	fi
	out=$("$s" --bogus 2>&1)
	if [ $? -eq 2 ]; then
		ok
	else
		fail "lrb-stats [$v]: usage error exit status"
	fi
	# every numeric option bounded: a usage error
	for a in "--watch 1e5" "--watch 0.001" "--watch nan" "--watch 1 --count 0" \
		 "--watch 1 --count 18446744073709551616" "--watch 1 --count -1"; do
		# shellcheck disable=SC2086 # the options are words
		"$s" $a demo >/dev/null 2>"$dev/err"
		rc=$?
		if [ $rc -eq 2 ] && grep -qE 'expected (seconds from 0.01 to 86400|a number of refreshes)' "$dev/err"; then
			ok
		else
			cat "$dev/err"
			fail "lrb-stats [$v] $a: exit $rc, want 2 (usage)"
		fi
	done
	if grep -qE 'Sanitizer|runtime error' <<<"$out"; then
		fail "lrb-stats [$v]: sanitizer report"
	fi
done
finish
