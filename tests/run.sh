#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the lrb test suite: user-space unit and stress tests and the KUnit
# suites on liblrb (release, ASan + UBSan, TSan, and the release build for
# arm64 and s390x under qemu-user, with CTF traces going both ways between
# byte orders), the fast path's instruction counts under callgrind
# (tests/bench/icount), the spin model of the protocol (tests/model), the
# kernel build of the core, the style checks, and the KUnit suites in a UML
# kernel and under qemu in x86_64 (4 CPUs), s390 (big-endian, 2 CPUs),
# arm64 (64 KiB pages, 4 CPUs) and i386 (32-bit, 2 CPUs).
# Every program ends with "N passed, M failed" (KTAP is counted by
# tests/ktap.sh); this sums them and ends the same way. Exit status is
# non-zero if anything failed.
#
# FUZZ_SECONDS sets the fuzzing time of each libFuzzer target (20: lrb-dump,
# region recovery, relayd's answers; make fuzz for more).
# LRB_KUNIT=0 leaves the KUnit kernels out (they take minutes on a fresh
# machine; see Documentation/testing.rst). The debug kernels (KASAN,
# lockdep, KCSAN) are not run here: make kunit-debug. Then lrb.ko runs end
# to end in Debian's 6.12 kernel under qemu with 4 CPUs (tests/vm/run.sh,
# make vmtest), the crash test of persistent channels (make vmtest-crash),
# then 60 s of the syscall fuzzer there (make fuzz-vm); LRB_VM=0 leaves
# them out.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
B=build
STRESS_SECONDS=${STRESS_SECONDS:-10}
SAN_SECONDS=${SAN_SECONDS:-3}
CROSS_SECONDS=${CROSS_SECONDS:-6}
passed=0
failed=0
failed_names=()
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
rm -rf "$B/failed"

# run [--live] NAME COMMAND...: run COMMAND, its output kept aside, and
# print one line for it. --live, for commands that take minutes, also shows
# their progress lines ("lrb kunit: ...", "lrb kernel-tree: ...",
# "lrb vmtest: ...") as they come.
run() {
	local live='' name out rc p f line
	if [ "$1" = --live ]; then
		live=1
		shift
	fi
	name=$1
	out=$log/$1.out
	shift
	if [ -n "$live" ]; then
		echo "$name: running, progress follows"
		"$@" 2>&1 | tee "$out" |
			grep --line-buffered -E '^lrb (kunit|kernel-tree|vmtest): ' | sed -u 's/^/    /'
		rc=${PIPESTATUS[0]}
		printf '%-34s ' "$name"
	else
		printf '%-34s ' "$name"
		"$@" >"$out" 2>&1
		rc=$?
	fi
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	p=$(sed -E 's/.*\b([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.*\b([0-9]+) failed.*/\1/' <<<"$line")
	[ -n "$line" ] || { p=0; f=0; }
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -eq 0 ]; then
		echo "ok ($p checks)"
	else
		echo "FAILED (exit $rc, $p passed, $f failed); last lines:"
		tail -n 30 "$out" | sed 's/^/    /'
		failed_names+=("$name")
		# Keep the whole output: a CI log may show only its tail.
		mkdir -p "$B/failed"
		cp "$out" "$B/failed/${name//[^A-Za-z0-9_.-]/_}.log"
	fi
}

# ktap NAME COMMAND...: run a program that prints KTAP (the KUnit suites
# in user space), show its output, then count it with tests/ktap.sh, the
# reader of scripts/kunit.sh too, which ends with "NAME: N passed, M failed".
ktap() {
	local name=$1 rc
	shift
	"$@" >"$log/ktap.out" 2>&1
	rc=$?
	cat "$log/ktap.out"
	tests/ktap.sh "$name" "$log/ktap.out" || return 1
	return "$rc"
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

for v in rel asan; do
	for t in unit_api unit_decode unit_ctf unit_event persist; do
		run "$t [$v]" $B/$v/tests/$t
	done
done
# The locked path of kernels and libcs without rseq (glibc then registers
# none), and of LRB_RSEQ=0, forced on this machine.
NO_RSEQ="env GLIBC_TUNABLES=glibc.pthread.rseq=0"
run "unit_api [rel, no rseq]" $NO_RSEQ $B/rel/tests/unit_api
run "unit_api [rel, LRB_RSEQ=0]" env LRB_RSEQ=0 $B/rel/tests/unit_api
# The KUnit-form suites of Makefile's KUNIT_USER_SUITES, on liblrb.
for v in rel asan tsan; do
	run "kunit_user [$v]" ktap kunit_user $B/$v/tests/kunit_user
done
for mode in discard overwrite; do
	run "stress $mode ${STRESS_SECONDS}s [rel]" \
		$B/rel/tests/stress --mode $mode --seconds "$STRESS_SECONDS"
	run "stress $mode global [rel]" \
		$B/rel/tests/stress --mode $mode --seconds "$SAN_SECONDS" \
		--alloc global --layout large
	run "stress $mode ${SAN_SECONDS}s [rel, no rseq]" \
		$NO_RSEQ $B/rel/tests/stress --mode $mode \
		--seconds "$SAN_SECONDS"
	run "stress $mode ${SAN_SECONDS}s [asan]" \
		$B/asan/tests/stress --mode $mode --seconds "$SAN_SECONDS"
	run "stress $mode ${SAN_SECONDS}s [tsan]" \
		$B/tsan/tests/stress --mode $mode --seconds "$SAN_SECONDS"
done

# qemu ARCH PROGRAM [ARG...]: a program of the user build for ARCH, under
# qemu-user (its libraries from Debian's multiarch packages).
qemu() {
	local q=qemu-$1-static

	shift
	if ! command -v "$q" >/dev/null; then
		echo "$q not found: run scripts/setup.sh (it installs qemu-user-static)"
		return 1
	fi
	"$q" "$@"
}
# arm64: weakly ordered; s390x: big-endian
for a in arm64:aarch64 s390x:s390x; do
	arch=${a%%:*}
	for t in unit_api unit_decode persist; do
		run "$t [$arch, qemu]" qemu "${a#*:}" $B/$arch/tests/$t
	done
	# the stress cases for 0.5 s each: qemu-user is slow
	run "kunit_user [$arch, qemu]" ktap kunit_user qemu "${a#*:}" \
		-E LRB_KUNIT_stress_ms=500 $B/$arch/tests/kunit_user
	for mode in discard overwrite; do
		run "stress $mode ${CROSS_SECONDS}s [$arch, qemu]" \
			qemu "${a#*:}" $B/$arch/tests/stress --mode $mode \
			--seconds "$CROSS_SECONDS"
	done
done
# Traces across byte orders: written on s390x, read on this host by
# babeltrace2 and lrb-dump; written here, read by lrb-dump on s390x.
run "unit_ctf [arm64, qemu]" qemu aarch64 $B/arm64/tests/unit_ctf
run "unit_ctf [s390x, qemu] read here" \
	qemu s390x $B/s390x/tests/unit_ctf --lrb-dump $B/tools/lrb-dump
run "unit_ctf [rel] read on s390x" \
	$B/rel/tests/unit_ctf --lrb-dump "qemu-s390x-static $B/s390x/tools/lrb-dump"
run "LRB_EVENT() sample [user space, babeltrace2]" tests/user/sample-events.sh
# LRB_EVENT()'s fields written big-endian, printed here by babeltrace2
# and lrb-dump
run "unit_event [s390x, qemu] read here" \
	qemu s390x $B/s390x/tests/unit_event --lrb-dump $B/tools/lrb-dump
run "unit_event [rel] read by lrb-dump" \
	$B/rel/tests/unit_event --lrb-dump $B/tools/lrb-dump
run "vmcheck self-test (host)" make -s -C tests/vm/check O="$PWD/$B" selftest
run "lrb-record (host)" tests/tools/test-record.sh
run "lrb-record to lttng-relayd (host)" tests/tools/test-relayd.sh
# the same tool built for s390x, under qemu-user
mkdir -p "$log/s390x-tools"
printf '#!/bin/sh\nexec qemu-s390x-static %s "$@"\n' \
	"$PWD/$B/s390x/tools/lrb-record" >"$log/s390x-tools/lrb-record"
chmod +x "$log/s390x-tools/lrb-record"
run "lrb-record [s390x]" tests/tools/test-record.sh "$log/s390x-tools"
run "lrb-dump, lrb-stats (host, ASan)" tests/tools/test-dump.sh
run "install (headers, api.rst example)" tests/install/run.sh
run "lrb-dump --recover (host)" tests/tools/test-recover.sh
for t in "dump:lrb-dump" "region:region recovery" "relayd:relayd answers"; do
	run "fuzz ${t#*:} ${FUZZ_SECONDS:-20}s (libFuzzer)" \
		tests/fuzz/run.sh "${FUZZ_SECONDS:-20}" "${t%%:*}"
done
run "icount (callgrind)" tests/bench/icount/check.sh
run "verify (spin model)" tests/model/verify.sh
run "kernel build (W=1, no warnings)" tests/kernel-build.sh
run "style (checkpatch, sparse)" tests/style.sh
if [ "${LRB_KUNIT:-1}" != 0 ]; then
	run --live "kunit uml" scripts/kunit.sh --arch uml
	run --live "kunit x86_64 smp4" scripts/kunit.sh --arch x86_64
	run --live "kunit s390 big-endian smp2" scripts/kunit.sh --arch s390
	run --live "kunit arm64 64k smp4" scripts/kunit.sh --arch arm64
	run --live "kunit i386 smp2" scripts/kunit.sh --arch i386
else
	printf '%-34s %s\n' "kunit" "not run (LRB_KUNIT=0)"
fi
if [ "${LRB_VM:-1}" != 0 ]; then
	run --live "vmtest (qemu, 4 CPUs)" tests/vm/run.sh
	run --live "vmtest-crash (qemu, reboots)" tests/vm/crash/run.sh
	run --live "fuzz-vm 60s (syscall fuzzer)" tests/fuzz/vm/run.sh 60s
	# the README's first command, shorter
	run --live "make demo (qemu, 3 s)" env DEMO_SECONDS=3 scripts/demo.sh
else
	printf '%-34s %s\n' "vmtest" "not run (LRB_VM=0)"
fi

echo
if [ ${#failed_names[@]} -gt 0 ]; then
	# Again at the end, where a truncated CI log still shows it.
	echo "failed: ${failed_names[*]}; their whole output is in $B/failed/"
	for name in "${failed_names[@]}"; do
		echo "--- $name, last lines:"
		tail -n 12 "$B/failed/${name//[^A-Za-z0-9_.-]/_}.log" | sed 's/^/    /'
	done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
