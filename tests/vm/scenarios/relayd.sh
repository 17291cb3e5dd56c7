# SPDX-License-Identifier: GPL-2.0
# Helpers of the lttng-relayd scenarios (busybox sh, in the guest), sourced
# after lib.sh: Debian's lttng-relayd and babeltrace2 run in the guest (the
# initramfs has them and their libraries, see tests/vm/run.sh), on its
# loopback only; lrb-record sends the driver sample's channel to relayd.
# Not a scenario: executed directly, it does nothing.

case "$0" in
*/relayd.sh | relayd.sh) exit 0 ;;
esac

SAMPLE_DBG=/sys/kernel/debug/lrb_sample_driver
RELAYD_OUT=/tmp/relayd
RELAYD_URL=net://127.0.0.1

relayd_listening() {
	netstat -ltn | grep -q ":$1 "
}

# relayd_start: lttng-relayd, writing into $RELAYD_OUT, listening on the
# default ports (control 5342, data 5343, live 5344); its pid in $RELAYD,
# its log (-v) in $LRB_EXPORT/relayd.log.
relayd_start() {
	# the name relayd files the session under, and viewers ask for
	hostname lrbvm
	rm -rf "$RELAYD_OUT"
	mkdir -p "$RELAYD_OUT"
	note "lttng-relayd -o $RELAYD_OUT -v (background)"
	HOME=/tmp LTTNG_HOME=/tmp lttng-relayd -o "$RELAYD_OUT" -v \
		>"$LRB_EXPORT/relayd.log" 2>&1 &
	RELAYD=$!
	wait_for 30 "lttng-relayd to listen on 5342, 5343 and 5344" \
		sh -c 'netstat -ltn | grep -q ":5342 " &&
		       netstat -ltn | grep -q ":5343 " &&
		       netstat -ltn | grep -q ":5344 "'
}

relayd_stop() {
	kill "$RELAYD" 2>/dev/null
	wait "$RELAYD" 2>/dev/null
}

# sample_load MODE PARAM...: the driver sample writing into channel e2e
# (MODE discard) or e2e-fr (MODE overwrite); $SAMPLE_CHAN is its name.
sample_load() {
	_mode=$1
	shift
	SAMPLE_CHAN=e2e
	[ "$_mode" = discard ] || SAMPLE_CHAN=e2e-fr
	load_lrb || return
	if ! insmod /lib/lrb/lrb_sample_driver.ko name=e2e mode="$_mode" "$@"; then
		bad "insmod lrb_sample_driver mode=$_mode $* failed (see dmesg)"
		return 1
	fi
}

# sample_end: stop the writers, keep their counts ($LRB_EXPORT/written),
# destroy the channel (lrb-record then ends).
sample_end() {
	check "stop the sample" sh -c "echo stop >$SAMPLE_DBG/ctl"
	cp "$SAMPLE_DBG/written" "$LRB_EXPORT/written"
	sed 's/^/    written: /' "$LRB_EXPORT/written"
	check "rmmod lrb_sample_driver (destroys the channel)" \
		rmmod lrb_sample_driver
}

# live_caught_up FILE: a live viewer's output FILE holds a line for every
# event the sample's writers did not lose.
live_caught_up() {
	test "$(wc -l <"$1")" -ge "$(awk '/^total / { split($2, a, "=")
		split($3, l, "="); print a[2] - l[2] }' "$SAMPLE_DBG/written")"
}

# relayd_export: the trace relayd wrote (its stream and metadata files,
# as they are) into $LRB_EXPORT/trace, its index files into
# $LRB_EXPORT/index.
relayd_export() {
	_meta=$(find "$RELAYD_OUT" -name metadata -type f | head -n 1)
	if [ -z "$_meta" ]; then
		bad "no metadata file under $RELAYD_OUT: relayd wrote no trace"
		find "$RELAYD_OUT" | sed 's/^/    /'
		return 1
	fi
	_dir=${_meta%/metadata}
	note "relayd's trace: $_dir"
	# shellcheck disable=SC2012 # shown, not parsed
	ls -la "$_dir" "$_dir/index" 2>&1 | sed 's/^/    /'
	mkdir -p "$LRB_EXPORT/trace" "$LRB_EXPORT/index"
	find "$_dir" -maxdepth 1 -type f -exec cp {} "$LRB_EXPORT/trace/" \;
	[ ! -d "$_dir/index" ] || cp "$_dir"/index/* "$LRB_EXPORT/index/"
}

# relayd_record MODE SECONDS LRB-RECORD-ARGUMENTS...: the sample (MODE,
# $SAMPLE_PARAMS) writes for SECONDS while lrb-record sends its channel to
# relayd until the channel is destroyed; then the trace is exported.
relayd_record() {
	_m=$1
	_secs=$2
	shift 2
	relayd_start || return
	# shellcheck disable=SC2086 # SAMPLE_PARAMS: more parameters, split
	sample_load "$_m" rate=3000 size=40 ${SAMPLE_PARAMS:-} || return
	note "lrb-record $SAMPLE_CHAN --relayd $RELAYD_URL --session $SCEN $*"
	lrb-record "$SAMPLE_CHAN" --relayd "$RELAYD_URL" --session "$SCEN" "$@" \
		>"$LRB_EXPORT/lrb-record.out" 2>"$LRB_EXPORT/lrb-record.err" &
	_rec=$!
	wait_for 30 "lrb-record to open the cpu files of $SAMPLE_CHAN" \
		holds_cpu_files "$_rec" "$SAMPLE_CHAN"
	sleep "$_secs"
	sample_end
	check "lrb-record $* ends at the end of the channel" wait "$_rec"
	sed 's/^/    lrb-record: /' "$LRB_EXPORT/lrb-record.out" \
		"$LRB_EXPORT/lrb-record.err"
	relayd_stop
	relayd_export
}
