#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A channel whose creation fails after its files are published. lrb.ko's
# test-only parameter fail_publish (tests/vm/run.sh builds lrb.ko with
# LRB_FAILPOINTS=y) makes the client's lrb_kchan_create() fail with ENOMEM
# once a reader waits on cpu0. That reader must get ENODEV (read, splice,
# ioctls) and EPOLLERR | EPOLLHUP, never wait forever; the load fails with
# ENOMEM and leaves no device; the next load of the same name works.
. "$(dirname "$0")/lib.sh"

PARAM=/sys/module/lrb/parameters/fail_publish

run() {
	load_lrb || return
	if [ ! -w "$PARAM" ]; then
		bad "$PARAM is missing: build lrb.ko with LRB_FAILPOINTS=y (tests/vm/run.sh does)"
		unload_lrb
		return
	fi
	check "arm fail_publish for $CHAN" sh -c "printf %s $CHAN > $PARAM"
	run_check created create-failed --chan "$CHAN" --timeout 60 \
		--ko "$CLIENT_KO" --params "name=$CHAN autostart=0"
	check "fail_publish fired once" sh -c "[ -z \"\$(cat $PARAM)\" ]"
	load_client autostart=0 || return
	check "$CHAN is created after the failure" test -e "/dev/lrb/$CHAN/cpu0"
	unload_client
	unload_lrb
}

run
finish
