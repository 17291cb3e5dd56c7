#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench, user-space part (scripts/bench.sh runs it): liblrb beside
# LTTng-UST and a floor loop in one process, build/rel/bench-user
# (tests/bench/user/main.c). Installs what it needs (scripts/setup.sh
# --bench), starts a private lttng-sessiond --no-kernel, creates a snapshot
# session whose overwrite channel has liblrb's channel geometry and records
# lrb_bench:record, runs the program, takes a snapshot and checks it with
# babeltrace2 (check-trace.sh), and tears the daemon down whatever happens
# (failure, Ctrl-C). The table and BENCH lines reach stdout only once the
# snapshot shows that LTTng-UST recorded the run.
#
#   tests/bench/user/run.sh [--records N] [--rounds N]
#
# Buffers are per user (--buffers-uid, LTTng's default): one ring per CPU
# shared by every thread of the process, as liblrb's per-CPU channel is,
# and they outlive the process, so that the snapshot taken after it exits
# holds its records (per-process buffers are gone by then).
#
# Root's lttng-sessiond is the system-wide one, whose sockets are in
# /var/run/lttng whatever LTTNG_HOME says (and Debian's lttng-tools may
# have started one already), so root runs the daemon, the lttng client and
# the program as nobody, whose daemon lives in the private LTTNG_HOME.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
subbuf_size=65536
num_subbuf=8
records=5000000
rounds=5
session=lrb-bench

say() { echo "lrb bench-user: $*" >&2; }
usage() {
	say "usage: $0 [--records N] [--rounds N]"
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--records | --rounds)
		case ${2:-} in '' | *[!0-9]*) usage ;; esac
		if [ "$1" = --records ]; then records=$2; else rounds=$2; fi
		shift 2
		;;
	*) usage ;;
	esac
done

"$root/scripts/setup.sh" --bench ||
	{ say "installing LTTng-UST and the rest failed (scripts/setup.sh --bench, above)"; exit 1; }
say "building build/rel/bench-user"
make -C "$root" --no-print-directory build/rel/bench-user >&2 ||
	{ say "building build/rel/bench-user failed (above)"; exit 1; }

# A process that exists and is not a zombie.
alive() {
	local st

	st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st#Z}" = "$st" ]
}

tmp=
daemon=
as_user=()
cleanup() {
	local rc=$? kids pid

	trap - EXIT INT TERM
	set +e
	if [ -n "$daemon" ]; then
		say "stopping lttng-sessiond (pid $daemon) and its helpers"
		# its consumer daemon and run-as helper, to be sure they go too
		kids=$(pgrep -P "$daemon")
		timeout 30 "${as_user[@]}" lttng destroy "$session" >/dev/null 2>&1
		kill -TERM "$daemon" 2>/dev/null
		for _ in $(seq 100); do
			alive "$daemon" || break
			sleep 0.1
		done
		for pid in $daemon $kids; do
			if alive "$pid"; then
				say "pid $pid outlived the session daemon's shutdown: killing it"
				kill -KILL "$pid"
			fi
		done
	fi
	[ -z "$tmp" ] || rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lrb-bench-user.XXXXXX")
export LTTNG_HOME=$tmp
if [ "$(id -u)" -eq 0 ]; then
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	chown nobody:nogroup "$tmp"
fi
# nobody may not reach the checkout: it runs a copy
install -m 755 "$root/build/rel/bench-user" "$tmp/bench-user"

lttng_do() {
	"${as_user[@]}" lttng "$@" >/dev/null ||
		{ say "lttng $* failed (above)"; exit 1; }
}

say "starting lttng-sessiond --no-kernel${as_user[*]:+ as nobody} (LTTNG_HOME=$tmp)"
"${as_user[@]}" lttng-sessiond --no-kernel --daemonize ||
	{ say "lttng-sessiond did not start (above)"; exit 1; }
daemon=$(cat "$tmp/.lttng/lttng-sessiond.pid") ||
	{ say "lttng-sessiond left no pid file in $tmp/.lttng: cannot stop it; find it with pgrep -a lttng-sessiond"; exit 1; }
lttng_do create "$session" --snapshot --output="$tmp/snapshot"
lttng_do enable-channel --session="$session" --userspace --buffers-uid \
	--overwrite --subbuf-size="$subbuf_size" --num-subbuf="$num_subbuf" chan
lttng_do enable-event --session="$session" --userspace --channel=chan \
	lrb_bench:record
lttng_do start "$session"

say "running bench-user: $rounds rounds of $records records per thread"
# liblttng-ust's constructor waits this long (ms) for the daemon to enable
# the tracepoint; the program then checks that it is enabled.
LTTNG_UST_REGISTER_TIMEOUT=20000 "${as_user[@]}" "$tmp/bench-user" \
	--records "$records" --rounds "$rounds" \
	--subbuf-size "$subbuf_size" --num-subbuf "$num_subbuf" >"$tmp/table" ||
	{ say "bench-user failed (above)"; exit 1; }

lttng_do snapshot record --session="$session"
if ! "$root/tests/bench/user/check-trace.sh" "$tmp/snapshot" "$records"; then
	say "the figures, not to be trusted for LTTng-UST:"
	grep -v '^BENCH' "$tmp/table" >&2
	exit 1
fi
cat "$tmp/table"
