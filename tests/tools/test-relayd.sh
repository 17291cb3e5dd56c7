#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of lrb-record's lttng-relayd protocol (tools/lrb-record/
# relayd.c) against Debian's unmodified lttng-relayd, without lrb.ko:
# test-relayd.c sends four liblrb-written streams (with losses) as
# lrb-record does, and
#   - relayd's trace is the one sent, byte for byte, and babeltrace2 reads
#     it: events and discarded events as liblrb counted them;
#   - a port nobody listens on, a peer of another protocol version and a
#     peer that hangs up: a clear error, exit status 1;
#   - a host that does not answer (a listener whose accept queue is full
#     drops the SYNs, as a firewall would): the connection is given up
#     after the reply timeout (built as 3 s here; 30 s in lrb-record), not
#     after the kernel's two minutes of SYN retries;
#   - at the end relayd has confirmed writing every packet (its answers to
#     DATA_PENDING);
#   - relayd killed (SIGKILL) mid-recording, its data connection held back
#     by a proxy after 30 packets while their indexes go through: a clear
#     error, exit status 1, none of the held packets counted confirmed,
#     and relayd's files hold every packet it confirmed, byte for byte;
#   - a live session watched by babeltrace2's lttng-live, attached before
#     the first packet: stream 3 goes quiet and sends beacons, as
#     lrb-record does for a CPU that writes nothing; the viewer must show
#     the other streams' events past stream 3's last one meanwhile (it
#     stalls there without the beacons), end with the session, and show
#     per stream exactly the events of relayd's files.
# Then the real lrb-record, on fake cpu files (tests/tools/fakecpu.c), to
# tests/tools/fake-relayd.py, a relayd that answers with the output path
# it is given:
#   - a path of escape sequences and control characters is printed
#     escaped, in the messages and the summary;
#   - a stream whose packet is a header alone, arriving in pieces (read
#     consumer): an error, exit status 1, not an endless loop.
# relayd listens on 127.0.0.1 only, on free ports. Needs lttng-relayd,
# babeltrace2 and python3 (scripts/setup.sh). Ends with "N passed, M
# failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
B=build/tools-test/rel
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

say() { echo "test-relayd: $*"; }
CHECK_NAME=test-relayd
. tests/common/check.sh

for tool in lttng-relayd babeltrace2 python3; do
	command -v $tool >/dev/null || {
		check "$tool not found: run scripts/setup.sh" false
		finish
	}
done
mkdir -p "$B"
# liblrb brings the port layer, which tools/common/port.c stands in for
# in the tools that do not link it.
common=$(ls tools/common/*.c | grep -v '/port\.c$')
# build_sender OUT [CFLAGS...]
build_sender() {
	local o=$1
	shift
	out=$(cc -std=gnu11 -g -D_GNU_SOURCE -Iinclude -Itools/common \
		-Itools/lrb-record -Wall -Wextra -Wno-unused-parameter -Wshadow \
		-Wstrict-prototypes -O2 "$@" tests/tools/test-relayd.c \
		tools/lrb-record/relayd.c $common build/rel/liblrb.a \
		-lurcu-bp -lpthread -o "$o" 2>&1) && [ -z "$out" ]
}
make -s build/rel/liblrb.a >/dev/null && build_sender "$B/test-relayd"
check "build of test-relayd${out:+: $out}" test $? -eq 0
build_sender "$B/test-relayd-3s" -DRLY_REPLY_TIMEOUT_S=3
check "build of test-relayd-3s${out:+: $out}" test $? -eq 0
[ "$failed" -eq 0 ] || finish
sender=$B/test-relayd

# free_ports N: N TCP ports of 127.0.0.1 that nothing listens on now
free_ports() {
	python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# relayd_start DIR: lttng-relayd writing into DIR, on free ports (again
# on others if it could not bind them: another program took one meanwhile);
# sets CTRL, DATA, LIVE (ports), RELAYD. Not a job of this shell: its
# death by SIGKILL is a test step, not a message.
relayd_start() {
	local try i
	for try in 1 2 3; do
		read -r CTRL DATA LIVE < <(free_ports 3)
		mkdir -p "$1"
		(lttng-relayd -v -o "$1" -C "tcp://127.0.0.1:$CTRL" -D "tcp://127.0.0.1:$DATA" \
			-L "tcp://127.0.0.1:$LIVE" >"$1.log" 2>&1 &
		 echo $! >"$1.pid")
		RELAYD=$(cat "$1.pid")
		pids+=("$RELAYD")
		for i in $(seq 100); do
			kill -0 "$RELAYD" 2>/dev/null || break
			python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
				"$DATA" 2>/dev/null && return 0
			sleep 0.1
		done
		kill "$RELAYD" 2>/dev/null
	done
	check "lttng-relayd did not listen on $CTRL/$DATA ($try tries, $i waits): $(head -c 300 "$1.log")" false
	return 1
}

# relayd_stop: SIGTERM (or the signal given), then wait for its end
relayd_stop() {
	kill "${1:--TERM}" "$RELAYD" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$RELAYD" 2>/dev/null || return 0
		sleep 0.1
	done
}

# --- a recording -------------------------------------------------------------
relayd_start "$tmp/r1" || finish
mkdir -p "$tmp/sent"
"$sender" "net://127.0.0.1:$CTRL:$DATA" "$tmp/sent" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "test-relayd exited $rc: $(head -c 300 "$tmp/err")" test $rc -eq 0
relayd_stop
meta=$(find "$tmp/r1" -name metadata -type f)
trace=${meta%/metadata}
check "relayd wrote the trace under its output directory ($trace)" test -n "$meta"
for f in "$tmp"/sent/*; do
	check "relayd's ${f##*/} is the one sent" cmp -s "$f" "$trace/${f##*/}"
done
check "relayd wrote an index per stream" \
	test "$(find "$trace/index" -name 'test_*.idx' | wc -l)" -eq 4
babeltrace2 "$trace" >"$tmp/bt2.out" 2>"$tmp/bt2.err"
check "babeltrace2 reads relayd's trace" test $? -eq 0
records=$(awk '/^stream/ { s += $8 } END { print s }' "$tmp/out")
discarded=$(awk '/^stream/ { s += $10 } END { print s }' "$tmp/out")
events=$(wc -l <"$tmp/bt2.out")
bt_disc=$(sed -n 's/^WARNING: Tracer discarded \([0-9]*\) event.*/\1/p' "$tmp/bt2.err" |
	  awk '{ s += $1 } END { print s + 0 }')
say "sent $records records, $discarded discarded; babeltrace2: $events events, $bt_disc discarded"
check "babeltrace2's events ($events) = records sent ($records)" test "$events" -eq "$records"
check "babeltrace2's discarded ($bt_disc) = discarded ($discarded)" test "$bt_disc" -eq "$discarded"
check "records were lost, so discarded events are tested ($discarded)" test "$discarded" -gt 0
while read -r _ cpu packets bytes; do
	want=$(awk -v c="$cpu" '$1 == "stream" && $2 == c { print $4, $6 }' "$tmp/out")
	check "relayd confirmed writing all of stream $cpu ($packets packets, $bytes bytes; sent: $want)" \
		test "$packets $bytes" = "$want"
done < <(grep '^confirmed' "$tmp/out")

# --- errors ------------------------------------------------------------------
# expect WHAT PATTERN URL: test-relayd fails (1) saying PATTERN
expect() {
	mkdir -p "$tmp/e"
	"$sender" "$3" "$tmp/e" >/dev/null 2>"$tmp/err"
	rc=$?
	check "$1: exit status $rc, want 1" test $rc -eq 1
	check "$1: says '$2': $(head -c 400 "$tmp/err")" grep -q "$2" "$tmp/err"
}
# a port bound but not listening: connections are refused, and no other
# program (nor relayd_start) can take it meanwhile
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0))
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(600)' "$tmp/closed" &
pids+=($!)
for _ in $(seq 50); do
	[ -s "$tmp/closed" ] && break
	sleep 0.1
done
closed=$(cat "$tmp/closed")
expect "nothing listening" "cannot connect to lttng-relayd's control port at 127.0.0.1:$closed: Connection refused" \
	"net://127.0.0.1:$closed"

# fake PORT_FILE REPLY_HEX: a peer that reads a command header and answers
# REPLY_HEX (empty: hangs up)
fake() {
	python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
c, _ = s.accept(); c.recv(32)
if sys.argv[2]: c.sendall(bytes.fromhex(sys.argv[2]))
c.close()' "$1" "$2" &
	pids+=($!)
	for _ in $(seq 50); do
		[ -s "$1" ] && return
		sleep 0.1
	done
}
# a listener whose accept queue is full: the kernel drops further SYNs
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fill = []
for _ in range(3):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    fill.append(c)
time.sleep(0.5)
open(sys.argv[1] + ".tmp", "w").write(str(port))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)' "$tmp/full" &
pids+=($!)
for _ in $(seq 50); do
	[ -s "$tmp/full" ] && break
	sleep 0.1
done
full=$(cat "$tmp/full")
t0=$(date +%s)
timeout 60 "$B/test-relayd-3s" "net://127.0.0.1:$full" "$tmp/e" >/dev/null 2>"$tmp/err"
rc=$?
t1=$(date +%s)
check "no answer: exit status $rc, want 1" test $rc -eq 1
check "no answer: given up after $((t1 - t0)) s, want 3 to 10" \
	test $((t1 - t0)) -ge 2 -a $((t1 - t0)) -le 10
check "no answer: says so: $(head -c 400 "$tmp/err")" grep -q \
	"cannot connect to lttng-relayd's control port at 127.0.0.1:$full: no answer within 3 s" "$tmp/err"
fake "$tmp/p1" 0000000300000000
expect "protocol 3.0" "speaks protocol 3.0; lrb-record speaks 2.13 and needs 2.11 or later" \
	"net://127.0.0.1:$(cat "$tmp/p1")"
fake "$tmp/p2" 0000000200000004
expect "protocol 2.4" "speaks protocol 2.4" "net://127.0.0.1:$(cat "$tmp/p2")"
fake "$tmp/p3" ""
expect "a peer that hangs up" "did not answer the protocol version command" \
	"net://127.0.0.1:$(cat "$tmp/p3")"
relayd_start "$tmp/r2" || finish
expect "data port refused" "cannot connect to lttng-relayd's data port at 127.0.0.1:$closed" \
	"net://127.0.0.1:$CTRL:$closed"
relayd_stop

# --- relayd killed mid-recording -----------------------------------------------
# The data connection goes through a proxy that passes the first 30
# packets (data header and packet, 32 + 4096 bytes each) and then holds
# the rest back: relayd accepts the indexes of the held packets, but they
# are not written, so they must not count as confirmed.
relayd_start "$tmp/r3" || finish
held=30
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept()
u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
n, lim = 0, int(sys.argv[3])
while n < lim:
    b = c.recv(min(65536, lim - n))
    if not b:
        break
    u.sendall(b)
    n += len(b)
time.sleep(600)' "$tmp/proxy" "$DATA" $((held * (32 + 4096))) &
pids+=($!)
for _ in $(seq 50); do
	[ -s "$tmp/proxy" ] && break
	sleep 0.1
done
rm -rf "$tmp/k"
mkdir -p "$tmp/k"
"$sender" "net://127.0.0.1:$CTRL:$(cat "$tmp/proxy")" "$tmp/k" --stop-after 40 \
	>"$tmp/out" 2>"$tmp/err" &
spid=$!
pids+=("$spid")
# on_file: the bytes of relayd's stream files
on_file() {
	find "$tmp/r3" -name 'test_[0-9]*' ! -name '*.idx' -type f -printf '%s\n' |
		awk '{ s += $1 } END { print s + 0 }'
}
for _ in $(seq 300); do
	[ -e "$tmp/k/paused" ] && [ "$(on_file)" -ge $((held * 4096)) ] && break
	sleep 0.1
done
check "relayd killed: 40 packets sent, the $held passed written ($(on_file) bytes)" \
	test -e "$tmp/k/paused" -a "$(on_file)" -eq $((held * 4096))
relayd_stop -KILL
touch "$tmp/k/go"
wait "$spid"
rc=$?
check "relayd killed: exit status $rc, want 1" test $rc -eq 1
check "relayd killed: says so: $(head -c 400 "$tmp/err")" \
	grep -q "relayd went away (killed or stopped?)" "$tmp/err"
trace=$(dirname "$(find "$tmp/r3" -name metadata -type f)")
confirmed=0
sent=0
while read -r _ cpu packets bytes; do
	confirmed=$((confirmed + packets))
	check "relayd killed: cpu$cpu's $packets confirmed packets ($bytes bytes) are in relayd's file" \
		cmp -s -n "$bytes" "$tmp/k/test_$cpu" "$trace/test_$cpu"
	size=$(stat -c %s "$trace/test_$cpu")
	check "relayd killed: cpu$cpu: relayd's file ($size bytes) is the start of the stream" \
		cmp -s -n "$size" "$tmp/k/test_$cpu" "$trace/test_$cpu"
done < <(grep '^confirmed' "$tmp/out")
while read -r _ _ packets _; do
	sent=$((sent + packets))
done < <(grep '^sent' "$tmp/out")
say "relayd killed: $sent packets sent, $confirmed confirmed, $held let through"
check "relayd killed: no held packet confirmed ($confirmed confirmed, $held let through)" \
	test "$confirmed" -le "$held"
check "relayd killed: 40 packets sent before ($sent)" test "$sent" -ge 40

# --- lrb-record itself, on fake cpu files -------------------------------------
out=$(make --no-print-directory build/tools/lrb-record build/tools-test/fakecpu.so 2>&1 >/dev/null)
check "build of lrb-record and fakecpu.so${out:+: $out}" test $? -eq 0 -a -z "$out"
dev=$tmp/dev
mkdir -p "$dev/fc"
echo '/* CTF 1.8 */' >"$dev/fc/metadata"
# fake_relayd NAME PATH: fake-relayd.py answering with PATH; sets FCTRL, FDATA
fake_relayd() {
	python3 tests/tools/fake-relayd.py "$tmp/$1.ports" \
		"$(python3 -c 'import sys; print(sys.argv[1].encode().hex())' "$2")" &
	pids+=($!)
	for _ in $(seq 50); do
		[ -s "$tmp/$1.ports" ] && break
		sleep 0.1
	done
	read -r FCTRL FDATA <"$tmp/$1.ports"
}
# record NAME ARGS...: lrb-record fc ARGS (30 s at most), output in NAME.out/.err
record() {
	local name=$1
	shift
	LD_PRELOAD=$PWD/build/tools-test/fakecpu.so LRB_DEV_DIR=$dev timeout -k 5 30 \
		build/tools/lrb-record fc "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}
tests/tools/fake-packets.py "$dev/fc/cpu0" 0 '3*4096'
tests/tools/fake-packets.py "$dev/fc/cpu1" 1 '2*4096'
evil=$'/srv/\e[2J\e]0;owned\a/evil\nline\\x'
fake_relayd esc "$evil"
record esc --relayd "net://127.0.0.1:$FCTRL:$FDATA"
rc=$?
check "escaped path: exit status $rc: $(head -c 300 "$tmp/esc.err")" test $rc -eq 0
for f in out err; do
	check "escaped path: no escape or control character in lrb-record's std$f" \
		bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <'$tmp/esc.$f')"
	check "escaped path: std$f names it escaped: $(head -c 300 "$tmp/esc.$f")" \
		grep -qF '/srv/\x1b[2J\x1b]0;owned\x07/evil\x0aline\\x' "$tmp/esc.$f"
done
# confirmed means written by relayd, not synced: the summary says so
check "the summary says confirmed packets are in relayd's page cache" \
	grep -q "^(confirmed: written to relayd's files, in its page cache; on its disk once" \
	"$tmp/esc.out"
# a packet of its header alone (64 bytes) after one of 4064 bytes: the
# read consumer's first read() ends 32 bytes into it
tests/tools/fake-packets.py "$dev/fc/cpu0" 0 4064 64 4064
tests/tools/fake-packets.py "$dev/fc/cpu1" 1 4096
fake_relayd hdr /srv/hdr
record hdr --relayd "net://127.0.0.1:$FCTRL:$FDATA" --consumer read
rc=$?
check "header-only packet: exit status $rc, want 1 (124: it looped)" test $rc -eq 1
check "header-only packet: says so: $(head -c 300 "$tmp/hdr.err")" grep -q \
	"cpu0: a packet of the stream says it is 512 bits long (packet_size): an lrb packet is more than its 64-byte header" \
	"$tmp/hdr.err"

# --- live ------------------------------------------------------------------------
# wait_file FILE: until it exists (30 s at most)
wait_file() {
	for _ in $(seq 300); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# per_stream FILE: "CPU EVENTS" lines of babeltrace2's output
per_stream() {
	sed -n 's/.* cpu_id = \([0-9]*\),.*/\1/p' "$1" | sort -n | uniq -c |
		awk '{ print $2, $1 }'
}
relayd_start "$tmp/r4" || finish
rm -rf "$tmp/l"
mkdir -p "$tmp/l"
"$sender" "net://127.0.0.1:$CTRL:$DATA" "$tmp/l" --live >"$tmp/out" 2>"$tmp/err" &
spid=$!
pids+=("$spid")
check "live: the session opens" wait_file "$tmp/l/paused"
(babeltrace2 --clock-cycles --input-format=lttng-live \
	"net://127.0.0.1:$LIVE/host/$(hostname)/test-relayd-live" \
	--params='session-not-found-action="end"' >"$tmp/live.out" 2>"$tmp/live.err"
 echo $? >"$tmp/live.rc") &
for _ in $(seq 300); do
	grep -q 'Attach session ID' "$tmp/r4.log" && break
	sleep 0.1
done
check "live: babeltrace2 attaches" grep -q 'Attach session ID' "$tmp/r4.log"
touch "$tmp/l/go"
# settled: the lines the viewer printed once it has caught up (its output
# the same for a second)
settled() {
	local n last=-1 same=0
	for _ in $(seq 60); do
		n=$(wc -l <"$tmp/live.out")
		if [ "$n" -eq "$last" ]; then
			same=$((same + 1))
			[ $same -lt 2 ] || break
		else
			same=0
		fi
		last=$n
		sleep 0.5
	done
	echo "$last"
}
check "live: two thirds sent, stream 3 quiet since one third" wait_file "$tmp/l/paused2"
shown=$(settled)
touch "$tmp/l/go2"
# the viewer shows the end before the session closes (babeltrace2 leaves
# a closed session, shown or not: lrb-record's linger is best effort)
check "live: everything sent" wait_file "$tmp/l/paused3"
settled >/dev/null
touch "$tmp/l/go3"
wait "$spid"
rc=$?
check "live: test-relayd exited $rc: $(head -c 300 "$tmp/err")" test $rc -eq 0
check "live: babeltrace2 ends with the session" wait_file "$tmp/live.rc"
check "live: babeltrace2's status $(cat "$tmp/live.rc" 2>/dev/null): $(head -c 300 "$tmp/live.err")" \
	test "$(cat "$tmp/live.rc" 2>/dev/null)" = 0
relayd_stop
# stream 3's last event: without beacons the viewer cannot go past it
t3=$(grep 'cpu_id = 3,' "$tmp/live.out" | tail -n 1 | sed 's/^\[0*\([0-9]*\)\].*/\1/')
before=$(awk -v t="${t3:-0}" '{ v = substr($1, 2, length($1) - 2) + 0; if (v <= t) n++ }
	END { print n + 0 }' "$tmp/live.out")
say "live: $shown events shown while stream 3 was quiet, $before up to its last event"
check "live: the viewer went on past the quiet stream ($shown shown, $before up to its last event)" \
	test "$shown" -gt $((before + 100))
trace=$(dirname "$(find "$tmp/r4" -name metadata -type f)")
babeltrace2 "$trace" >"$tmp/files.out" 2>/dev/null
check "live: the viewer showed exactly the events of relayd's files, per stream" \
	test "$(per_stream "$tmp/live.out")" = "$(per_stream "$tmp/files.out")"
finish
