#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host-side tests of lrb-record and lrb-receive, without lrb.ko (the VM
# scenarios record real channels): command lines and exit statuses, the
# error messages for a missing channel or a file that is not a cpu file,
# and lrb-receive against a scripted sender speaking the protocol of
# tools/common/net.h over bash's /dev/tcp: a complete recording, a stream
# cut short, a byte count that does not match, a directory holding a trace
# already, a connection that is not lrb-record's.
#
#   tests/tools/test-record.sh [BUILD_DIR]    (default build/tools)
#
# Ends with "test-record: N passed, M failed"; exit status 1 on failure.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
bin=${1:-build/tools}
if [ -z "${1:-}" ]; then
	make --no-print-directory build/tools/lrb-record \
		build/tools/lrb-receive >/dev/null || {
		echo "test-record: the tools did not build (make build/tools/lrb-record build/tools/lrb-receive)"
		echo "test-record: 0 passed, 1 failed"
		exit 1
	}
fi
record=$bin/lrb-record
receive=$bin/lrb-receive
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0

check() {
	local what=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		echo "FAIL test-record: $what"
		failed=$((failed + 1))
	fi
}

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
expect 2 "exclude each other" "$record" c -o d --to 127.0.0.1:1
expect 2 "want seconds" "$record" c --duration 0
expect 2 "no --duration" "$record" c --snapshot --duration 1
expect 2 "no --consumer" "$record" c --snapshot --consumer read
expect 2 "want a list of CPUs" "$record" c --cpus 2-1
expect 2 "is not HOST:PORT" "$record" c --to 127.0.0.1
expect 2 "" "$record" c --bogus
expect 2 "give --max-size too" "$record" c --max-files 3
expect 2 "want bytes > 0" "$record" c --max-size 0
expect 2 "want bytes > 0" "$record" c --max-size 1T
expect 2 "want a number of files" "$record" c --max-size 1M --max-files 0
expect 2 "want seconds > 0" "$record" c --rotate-time 0
expect 2 "not with --to" "$record" c --rotate-size 1M --to 127.0.0.1:1
expect 2 "no --max-size, --max-files or --rotate" "$record" c --max-size 64k --snapshot
expect 0 "" "$receive" --help
expect 2 "give --listen" "$receive" -o d
expect 2 "give -o DIR" "$receive" --listen 5000
expect 2 "is not \[HOST:\]PORT" "$receive" --listen 70000 -o d
expect 2 "unexpected argument" "$receive" --listen 5000 -o d extra

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

# --- the protocol, little-endian ---
le() {	# le BYTES VALUE: VALUE as BYTES little-endian bytes, printf escapes
	local n=$1 v=$2 i
	for ((i = 0; i < n; i++)); do
		printf '\\x%02x' $(((v >> (8 * i)) & 255))
	done
}
zeros() {
	head -c "$1" /dev/zero
}
hello() {	# hello KIND SESSION CPU NCPU CHANNEL
	printf 'LRBTRACE'
	printf '%b' "$(le 4 1)$(le 4 "$1")$(le 8 "$2")$(le 4 "$3")$(le 4 "$4")$(le 8 8192)"
	printf '%s' "$5"
	zeros $((64 - ${#5} + 24))
}
frame() {	# frame TYPE CPU VALUE LENGTH
	printf '%b' "$(le 4 "$1")$(le 4 "$2")$(le 8 "$3")$(le 8 "$4")"
}
packet() {	# packet CPU SEQ: one lrb packet of 4096 bytes without records
	printf '%b' "$(le 4 0xc1fc1fc1)$(le 4 0)$(le 8 1000)$(le 8 2000)$(le 8 512)"
	printf '%b' "$(le 8 32768)$(le 8 "$2")$(le 8 0)$(le 4 "$1")$(le 4 64)"
	zeros $((4096 - 64))
}
# read_frame FD: "TYPE CPU LENGTH MESSAGE" of the next frame
read_frame() {
	local w
	read -r -a w < <(head -c 24 <&"$1" | od -An -v -w24 -tu4)
	[ ${#w[@]} -eq 6 ] || { echo "none 0 0"; return; }
	echo "${w[0]} ${w[1]} ${w[4]} $(head -c "${w[4]}" <&"$1")"
}

# says FILE PATTERN: wait until FILE has a line with PATTERN (an event of
# a program in the background, not a time); 30 s at most (status 1).
says() {
	local i
	for ((i = 0; i < 300; i++)); do
		grep -qs -- "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

port=$((20000 + $$ % 20000))
# receiver NAME ARGS...: lrb-receive --listen 127.0.0.1:$port in the
# background, output in $tmp/NAME.{out,err}; waits for it to listen.
receiver() {
	local name=$1
	shift
	port=$((port + 1))
	"$receive" --listen "127.0.0.1:$port" "$@" >"$tmp/$name.out" \
		2>"$tmp/$name.err" &
	rpid=$!
	pids+=("$rpid")
	says "$tmp/$name.err" listening && return 0
	echo "FAIL test-record: lrb-receive did not listen on $port: $(cat "$tmp/$name.err")"
	failed=$((failed + 1))
	return 1
}
# receiver_status: its exit status, waiting at most 10 s
receiver_status() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$rpid"
}

meta='/* CTF 1.8 */ trace { major = 1; minor = 8; };'
summary='{ "tool": "lrb-record" }'
# session NAME SESSION_ID NCPU: open the session, send the metadata,
# leave the answer in $ready
session() {
	exec 3<>"/dev/tcp/127.0.0.1/$port"
	{ hello 1 "$2" 0 "$3" vmtest; frame 1 0 0 ${#meta}; printf '%s' "$meta"; } >&3
	ready=$(read_frame 3)
}
# stream SESSION_ID CPU NPACKETS [CUT]: one CPU's connection; CUT: then
# the first CUT bytes of one more packet
stream() {
	local i
	{
		hello 2 "$1" "$2" 0 vmtest
		for ((i = 0; i < $3; i++)); do
			packet "$2" "$i"
		done
		[ -z "${4:-}" ] || packet "$2" "$i" | head -c "$4"
	} >"/dev/tcp/127.0.0.1/$port"
}
# type and status of a frame read by read_frame
status_of() {
	local t c
	read -r t c _ <<<"$1"
	echo "$t $c"
}
# finish CPU:BYTES...: end frames, summary, end; the answer in $result
finish_session() {
	local cb
	{
		for cb in "$@"; do
			frame 3 "${cb%%:*}" "${cb#*:}" 0
		done
		frame 4 0 0 ${#summary}
		printf '%s' "$summary"
		frame 5 0 0 0
	} >&3
	result=$(read_frame 3)
	exec 3>&-
}

# a complete recording: cpu0 with 3 packets, cpu2 with none
if receiver ok -o "$tmp/ok" --once; then
	# first something that is not lrb-record: ignored. Its thread
	# reports it; --once may exit before that thread runs, so wait.
	printf 'GET / HTTP/1.0\r\n\r\n%0120d' 0 >"/dev/tcp/127.0.0.1/$port"
	says "$tmp/ok.err" "not an lrb-record connection"
	session ok 4660 2
	check "session accepted: $ready" test "${ready%% *}" = 2
	stream 4660 0 3
	stream 4660 2 0
	finish_session 0:12288 2:0
	check "recording confirmed: $result" test "$(status_of "$result")" = "6 0"
	receiver_status
	check "lrb-receive --once exits 0" test $? -eq 0
	check "metadata received" test "$(cat "$tmp/ok/metadata")" = "$meta"
	check "summary received" test "$(cat "$tmp/ok/.lrb-record.json")" = "$summary"
	check "cpu0's stream received whole" cmp -s "$tmp/ok/vmtest_0" \
		<(packet 0 0; packet 0 1; packet 0 2)
	check "cpu2's stream is empty" test -f "$tmp/ok/vmtest_2" -a ! -s "$tmp/ok/vmtest_2"
	check "the bad connection was reported" grep -q "not an lrb-record connection" "$tmp/ok.err"
	check "the summary lists cpu0: $(cat "$tmp/ok.out")" \
		grep -qE '^ +0 +3 +12288 ' "$tmp/ok.out"
fi

# a stream cut short inside a packet, and one that is not lrb packets
if receiver cut -o "$tmp/cut" --once; then
	session cut 4661 1
	stream 4661 1 1 2000
	finish_session 1:6096
	check "a stream cut short is reported to the sender: $result" \
		grep -q "cut short" <<<"$result"
	receiver_status
	check "lrb-receive --once exits 1 on a stream cut short" test $? -eq 1
fi
if receiver junk -o "$tmp/junk" --once; then
	session junk 4666 1
	{ hello 2 4666 0 0 vmtest; packet 0 0; zeros 4096; } >"/dev/tcp/127.0.0.1/$port"
	finish_session 0:8192
	check "a stream of something else is reported to the sender: $result" \
		grep -q "packet 1 at byte 4096: not an lrb packet header" <<<"$result"
	receiver_status
	check "lrb-receive --once exits 1 on a bad stream" test $? -eq 1
fi

# fewer bytes than the sender announces
if receiver short -o "$tmp/short" --once; then
	session short 4662 1
	stream 4662 0 1
	finish_session 0:8192
	check "missing bytes are reported to the sender: $result" \
		grep -q "8192 bytes sent, 4096 received" <<<"$result"
	receiver_status
	check "lrb-receive --once exits 1 on missing bytes" test $? -eq 1
fi

# a directory that holds a trace already
mkdir -p "$tmp/used"
: >"$tmp/used/metadata"
if receiver used -o "$tmp/used" --once; then
	session used 4663 1
	check "a used directory is refused: $ready" \
		grep -q "^2 22 .*cannot write a trace to" <<<"$ready"
	exec 3>&-
	receiver_status
	check "lrb-receive --once exits 1 after a refusal" test $? -eq 1
fi

# without --once: one directory per recording, the receiver stays
if receiver many -o "$tmp/many"; then
	for id in 4664 4665; do
		session many "$id" 1
		stream "$id" 0 2
		finish_session 0:8192
		check "recording $id confirmed: $result" test "$(status_of "$result")" = "6 0"
	done
	dirs=("$tmp"/many/vmtest-*)
	check "two trace directories: ${dirs[*]}" test ${#dirs[@]} -eq 2
	check "lrb-receive still runs" kill -0 "$rpid"
	expect 1 "another program" "$receive" --listen "127.0.0.1:$port" -o "$tmp/x"
	kill "$rpid"
fi

echo "test-record: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
