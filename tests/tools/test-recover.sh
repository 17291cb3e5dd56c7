#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lrb-dump --recover: the file a persistent channel leaves behind when its
# process is SIGKILLed (tests/user/persist --leave) becomes a trace that
# babeltrace2 and lrb-dump read: every record recovery kept and no skip
# record (its writers discard records others reserved after), the discarded
# events its packets count (a last round writes a file with losses between
# its packets: persist --leave-lossy; babeltrace2 must report exactly the
# records the writers lost between them, none of the overwritten ones,
# which are older than the first packet; --leave-untrusted: the same with
# the region's overwrite loss counter corrupted), a packet whose content size says 2
# bytes past its last record (persist --leave-trailing: cut, and counted),
# and refusals with a reason for a file holding no region, random bytes,
# a directory holding a trace already, and (as root) a directory or a
# symbolic link planted by another user (nobody) in a world-writable
# sticky directory, as in /tmp: nothing written through their links.
#
#   tests/tools/test-recover.sh [ROUNDS]    (default 5)
#
# Ends with "test-recover: N passed, M failed"; exit status 1 on failure.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
rounds=${1:-5}
if ! make --no-print-directory build/tools/lrb-dump build/rel/tests/persist \
	>/dev/null; then
	echo "test-recover: the tools did not build (make build/tools/lrb-dump build/rel/tests/persist)"
	echo "test-recover: 0 passed, 1 failed"
	exit 1
fi
dump=build/tools/lrb-dump
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CHECK_NAME=test-recover
. tests/common/check.sh

skipped_all=0
for r in $(seq "$rounds") lossy untrusted trailing; do
	file=$tmp/region.$r
	trace=$tmp/trace.$r
	leave=--leave
	[ "$r" = lossy ] && leave=--leave-lossy
	[ "$r" = untrusted ] && leave=--leave-untrusted
	[ "$r" = trailing ] && leave=--leave-trailing
	# "records R packets P discarded D expect E skipped S", as
	# lib/region.c recovered them (E: as the writers counted them, where
	# known; S: bytes of skip records)
	if ! line=$(build/rel/tests/persist $leave "$file"); then
		check "round $r: a killed writer left a file" false
		continue
	fi
	read -r _ records _ packets _ discarded _ expect _ skipped <<<"$line"
	check "round $r: recovery counts the $expect records the writers lost between packets (got $discarded)" \
		test "$discarded" = "$expect"
	skipped_all=$((skipped_all + skipped))
	check "round $r: lrb-dump --recover" \
		"$dump" --recover "$file" "$trace" 2>"$tmp/recover.err"
	babeltrace2 "$trace" >"$tmp/bt.out" 2>"$tmp/bt.err"
	check "round $r: babeltrace2 reads the trace to its end (exit $?)" test $? = 0
	bt=$(grep -cE ' (rec|note): ' "$tmp/bt.out")
	check "round $r: babeltrace2 reads $records records (got $bt)" \
		test "$bt" = "$records"
	btdisc=$(cat "$tmp/bt.out" "$tmp/bt.err" | grep -o 'Tracer discarded [0-9]* event' |
		 awk '{ n += $3 } END { print n + 0 }')
	check "round $r: babeltrace2 reports $discarded discarded (got $btdisc)" \
		test "$btdisc" = "$discarded"
	"$dump" "$trace" >/dev/null 2>"$tmp/dump.err"
	check "round $r: lrb-dump reads the trace without error (exit $?)" test $? = 0
	ev=$(sed -n 's/.* stream files, \([0-9]*\) events.*/\1/p' "$tmp/dump.err")
	check "round $r: lrb-dump reads $records records (got $ev)" \
		test "$ev" = "$records"
	[ "$r" != lossy ] || check "round $r: losses between packets" test "$discarded" -gt 0
	[ "$r" != untrusted ] || check "round $r: the corrupt counter is named" \
		grep -q 'loss counter overwrite untrusted' "$tmp/recover.err"
	[ "$r" = trailing ] && check "round $r: the 2 bytes cut are counted" \
		grep -q 'dropped (header): 0 packets, 0 records, 2 bytes' "$tmp/recover.err"
	echo "round $r: $records records in $packets packets recovered, $discarded discarded between them, $skipped bytes of skip records"
done
check "skip records in the traces ($skipped_all bytes)" test "$skipped_all" -gt 0

head -c 1048576 /dev/urandom >"$tmp/random"
check "random bytes refused" \
	bash -c "! '$dump' --recover '$tmp/random' '$tmp/t.random' 2>'$tmp/err'"
check "random bytes: the reason given" grep -q 'nothing to recover: no lrb region' "$tmp/err"
: >"$tmp/empty"
check "empty file refused" \
	bash -c "! '$dump' --recover '$tmp/empty' '$tmp/t.empty' 2>/dev/null"
check "a trace directory is not overwritten" \
	bash -c "! '$dump' --recover '$tmp/region.1' '$tmp/trace.1' 2>/dev/null"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "test-recover: not root (or no setpriv): the directories planted by another user are not tested"
	finish
fi
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/shared"
echo secret >"$tmp/victim"
mkdir "$tmp/vdir"
(cd "$tmp/shared" && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
	"mkdir t1 && ln -s $tmp/victim t1/metadata && ln -s $tmp/victim t1/recovered_0 &&
	 ln -s $tmp/vdir t2")
for t in t1 t2; do
	"$dump" --recover "$tmp/region.1" "$tmp/shared/$t" 2>"$tmp/err"
	check "planted $t: refused (exit $?)" test $? = 1
	check "planted $t: named: $(cat "$tmp/err")" grep -q "$tmp/shared/$t" "$tmp/err"
	check "planted $t: nothing written through its links" \
		bash -c "echo secret | cmp -s - '$tmp/victim' && test -z \"\$(ls -A '$tmp/vdir')\""
done

finish
