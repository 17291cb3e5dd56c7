#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host-side tests of lrb-record, without lrb.ko (the VM scenarios record
# real channels; tests/tools/test-relayd.sh tests the relayd protocol):
# command lines and exit statuses, and the error messages for a missing
# channel or a file that is not a cpu file. Then, on fake cpu files
# (tests/tools/fakecpu.c: regular files holding the packets a cpu file
# is to deliver), the recordings themselves: every consumer writes the
# bytes delivered, and a trace directory planted by another user
# (nobody, in a world-writable sticky directory, as in /tmp) is refused
# with its name and nothing written through the links in it.
#
#   tests/tools/test-record.sh [BUILD_DIR]    (default build/tools)
#
# With a BUILD_DIR (the s390x build, run under qemu-user), the fake cpu
# files are not used: their library is built for this machine.
# Ends with "test-record: N passed, M failed"; exit status 1 on failure.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
bin=${1:-build/tools}
if [ -z "${1:-}" ]; then
	make --no-print-directory build/tools/lrb-record >/dev/null || {
		echo "test-record: lrb-record did not build (make build/tools/lrb-record)"
		echo "test-record: 0 passed, 1 failed"
		exit 1
	}
fi
record=$(realpath "$bin/lrb-record")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CHECK_NAME=test-record
. tests/common/check.sh

# expect STATUS PATTERN COMMAND...: exit status STATUS, PATTERN on stderr
expect() {
	local status=$1 pattern=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "$* exited $rc, want $status: $(head -c 300 "$tmp/err")" \
		test "$rc" -eq "$status"
	[ -z "$pattern" ] ||
		check "$*: stderr lacks '$pattern': $(head -c 300 "$tmp/err")" \
			grep -q -- "$pattern" "$tmp/err"
}

# --- command lines ---
expect 0 "" "$record" --help
check "lrb-record --help prints the usage" grep -q 'usage: lrb-record' "$tmp/out"
expect 2 "give the CHANNEL" "$record"
expect 2 "one CHANNEL only" "$record" a b
expect 2 "use splice, mmap or read" "$record" c --consumer nope
expect 2 "exclude each other" "$record" c -o d --relayd net://127.0.0.1
expect 2 "want seconds" "$record" c --duration 0
expect 2 "no --duration" "$record" c --snapshot --duration 1
expect 2 "no --consumer" "$record" c --snapshot --consumer read
expect 2 "want a list of CPUs" "$record" c --cpus 2-1
expect 2 "want net://HOST\[:CONTROL_PORT\[:DATA_PORT\]\]" "$record" c --relayd net://127.0.0.1:70000
expect 2 "want net://HOST" "$record" c --relayd net://127.0.0.1:5342:x
expect 2 "a trace path after the address is not supported" "$record" c --relayd net://127.0.0.1/some/path
expect 2 "unknown host 'nosuchhost.invalid'" "$record" c --relayd net://nosuchhost.invalid
expect 2 "add --relayd URL" "$record" c --live
expect 2 "add --relayd URL" "$record" c --session s
expect 2 "want a period in seconds" "$record" c --relayd net://127.0.0.1 --live=0
expect 2 "use --consumer mmap or read" "$record" c --relayd net://[::1]:5342:5343 --consumer splice
expect 2 "not a live session" "$record" c --relayd net://127.0.0.1 --live --snapshot
expect 2 "" "$record" c --bogus
expect 2 "give --max-size too" "$record" c --max-files 3
expect 2 "want bytes > 0" "$record" c --max-size 0
expect 2 "want bytes > 0" "$record" c --max-size 1T
expect 2 "want a number of files" "$record" c --max-size 1M --max-files 0
# every numeric option bounded: a usage error, never a value that wraps
# in a conversion (--live's microseconds in 32 bits, its poll() timeout)
for v in 1e9 3601 0.001 inf nan; do
	expect 2 "want a period in seconds from 0.01 to 3600" \
		"$record" c --relayd net://127.0.0.1 --live=$v
done
for v in 0 1e-9 2e9 inf -1; do
	expect 2 "want seconds from 0.001 to 1e+09" "$record" c --duration $v
done
for v in 0 0.01 2e9; do
	expect 2 "want seconds from 0.1 to 1e+09" "$record" c --rotate-time $v
done
for v in 18446744073709551616 ' 3' -1 0; do
	expect 2 "want a number of files" "$record" c --max-size 1M --max-files "$v"
done
expect 2 "want bytes > 0" "$record" c --max-size 16777216T
expect 2 "want bytes > 0" "$record" c --rotate-size 17179869184G
expect 2 "not with --relayd" "$record" c --rotate-size 1M --relayd net://127.0.0.1
expect 2 "no --max-size, --max-files or --rotate" "$record" c --max-size 64k --snapshot

# --- channel files ---
LRB_DEV_DIR=$tmp/nodev expect 1 "is the channel created" "$record" chan -o "$tmp/t0"
mkdir -p "$tmp/dev/other"
LRB_DEV_DIR=$tmp/dev expect 1 "channels in $tmp/dev: other" "$record" chan -o "$tmp/t0"
mkdir -p "$tmp/dev/chan"
: >"$tmp/dev/chan/metadata"
LRB_DEV_DIR=$tmp/dev expect 1 "has no cpuN file" "$record" chan -o "$tmp/t0"
: >"$tmp/dev/chan/cpu0"
LRB_DEV_DIR=$tmp/dev expect 1 "LRB_IOC_GET_INFO" "$record" chan -o "$tmp/t0"
LRB_DEV_DIR=$tmp/dev expect 1 "has no cpu3" "$record" chan --cpus 3 -o "$tmp/t0"
check "no trace directory made on an error" test ! -e "$tmp/t0"

if [ -n "${1:-}" ]; then
	echo "test-record: fake cpu files not used with $bin (another architecture)"
	finish
fi

# --- recordings of fake cpu files ---
out=$(make --no-print-directory build/tools-test/fakecpu.so 2>&1 >/dev/null)
check "build of fakecpu.so (make build/tools-test/fakecpu.so)${out:+: $out}" \
	test $? -eq 0 -a -z "$out"
[ "$failed" -eq 0 ] || finish
fakecpu=$PWD/build/tools-test/fakecpu.so
dev=$tmp/fake
mkdir -p "$dev/fc"
echo '/* CTF 1.8 */' >"$dev/fc/metadata"
tests/tools/fake-packets.py "$dev/fc/cpu0" 0 '8*4096'
tests/tools/fake-packets.py "$dev/fc/cpu1" 1 '5*4096'
# fake ARGS...: lrb-record on channel fc of $dev
fake() {
	LD_PRELOAD=$fakecpu LRB_DEV_DIR=$dev "$record" fc "$@"
}
for c in splice mmap read; do
	expect 0 "" fake -o "$tmp/rec-$c" --consumer $c -q
	check "--consumer $c: cpu0's bytes recorded" cmp -s "$dev/fc/cpu0" "$tmp/rec-$c/fc_0"
	check "--consumer $c: cpu1's bytes recorded" cmp -s "$dev/fc/cpu1" "$tmp/rec-$c/fc_1"
	check "--consumer $c: 13 packets counted" grep -q '^total *13 *53248 ' "$tmp/out"
done
# --max-files 2: the newest two files of 8 KiB, the oldest removed
expect 0 "" fake -o "$tmp/rec-mf" --max-size 8k --max-files 2 -q
check "--max-files 2: fc_0_0 holds packets 4 and 5" \
	cmp -s "$tmp/rec-mf/fc_0_0" <(tail -c +16385 "$dev/fc/cpu0" | head -c 8192)
check "--max-files 2: fc_0_1 holds packets 6 and 7" \
	cmp -s "$tmp/rec-mf/fc_0_1" <(tail -c 8192 "$dev/fc/cpu0")
check "--max-files 2: two files of cpu0" test ! -e "$tmp/rec-mf/fc_0_2"
# limits hold whatever the stream: after tee() fails the splice consumer
# reads each header out of the pipe, and goes on cutting files
LRB_FAKECPU_TEE_FAIL=3 expect 0 "reading the headers out of the pipe instead" \
	fake -o "$tmp/rec-tee" --max-size 8k --max-files 2 -q
for f in fc_0_0 fc_0_1 fc_1_0 fc_1_1; do
	check "tee() failed: $f as without the failure" cmp -s "$tmp/rec-mf/$f" "$tmp/rec-tee/$f"
done
check "tee() failed: 13 packets counted" grep -q '^total *13 *53248 ' "$tmp/out"
# within_limits DIR MAX N: each file of DIR at most MAX bytes, N files at most
within_limits() {
	test "$(find "$1" -name 'fc_*' -size +"$2"c | wc -l)" -eq 0 &&
		test "$(find "$1" -name 'fc_*' | wc -l)" -le "$3"
}
# a bad header (packet 3 of cpu0): packets no longer framed, the limits
# cannot be held: that CPU stops, its files within them
mv "$dev/fc/cpu0" "$dev/fc/cpu0.good"
tests/tools/fake-packets.py "$dev/fc/cpu0" 0 '3*4096' 4096:badmagic '4*4096'
for c in splice read; do
	expect 1 "cpu0: framing lost: --max-size and --rotate-\* cut files at packet starts" \
		fake -o "$tmp/rec-bad-$c" --consumer $c --max-size 8k --max-files 2 -q
	check "--consumer $c, a bad header: every file within --max-size 8k, 4 files" \
		within_limits "$tmp/rec-bad-$c" 8192 4
done
expect 1 "cpu0: framing lost" fake -o "$tmp/rec-bad-chunks" --consumer read --rotate-size 8k -q
# a packet header split between two read()s (a stream that is not
# lrb.ko's: its reads end on a page or a packet's end)
tests/tools/fake-packets.py "$dev/fc/cpu0" 0 4064 64 4064
expect 1 "cpu0: a packet header is split between two read()s" \
	fake -o "$tmp/rec-split" --consumer read --max-size 4096 -q
check "a header split: every file within --max-size 4096" \
	within_limits "$tmp/rec-split" 4096 9
mv "$dev/fc/cpu0.good" "$dev/fc/cpu0"

# --- trace directories planted by another user ---
# As root only: nobody plants them in a world-writable sticky directory,
# as in /tmp, which a recording of root's may be started in.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "test-record: not root (or no setpriv): the directories planted by another user are not tested"
	finish
fi
chmod 755 "$tmp"
w=$tmp/shared
mkdir -m 1777 "$w"
echo secret >"$tmp/victim"
chmod 600 "$tmp/victim"
mkdir "$tmp/vdir"
# as_nobody COMMAND: run the shell COMMAND as nobody, in $w
as_nobody() {
	(cd "$w" && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$1")
}
# untouched: the victim file and directory are as they were
untouched() {
	echo secret | cmp -s - "$tmp/victim" && test -z "$(ls -A "$tmp/vdir")"
}
as_nobody "mkdir t1 && ln -s $tmp/victim t1/fc_0 && ln -s $tmp/victim t1/metadata"
expect 1 "$w/t1 exists and is owned by uid 65534" fake -o "$w/t1" -q
check "a directory planted by nobody: nothing written through its links" untouched
as_nobody "ln -s $tmp/vdir t2"
expect 1 "$w/t2 is a symbolic link" fake -o "$w/t2" -q
check "a symbolic link planted by nobody: nothing written through it" untouched
mkdir -m 1777 "$w/t3"
as_nobody "ln -s $tmp/victim t3/fc_0"
expect 1 "$w/t3 exists and others may write in it" fake -o "$w/t3" -q
check "a directory of root's that others may write in: nothing written" untouched
# the default name, CHANNEL-YYYYMMDD-HHMMSS, is known ahead: nobody plants
# the names of the next 20 seconds
as_nobody 'now=$(date +%s); for i in $(seq 0 20); do
	d=fc-$(date -d @$((now + i)) +%Y%m%d-%H%M%S)
	mkdir "$d" && ln -s '"$tmp"'/victim "$d/fc_0" || exit 1
done'
cd "$w" || exit 1
expect 1 "exists and is owned by uid 65534" fake -q
cd - >/dev/null || exit 1
check "the default directory name planted by nobody: nothing written through its links" untouched
check "the default directory name: its name given" grep -q "fc-[0-9]\{8\}-[0-9]\{6\} exists" "$tmp/err"
# a directory of one's own, empty, goes
mkdir "$w/t4"
expect 0 "" fake -o "$w/t4" -q
check "an empty directory of one's own takes the trace" cmp -s "$dev/fc/cpu0" "$w/t4/fc_0"
mkdir "$w/t5"
: >"$w/t5/notes"
expect 1 "$w/t5 exists and is not empty" fake -o "$w/t5" -q

finish
