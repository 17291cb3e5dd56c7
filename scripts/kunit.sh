#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build a kernel with lrb and its KUnit suites built in, boot it and report.
#
#   scripts/kunit.sh [--arch ARCH] [--debug|--kcsan|--bench] [SUITE_GLOB]
#
#   --arch uml      User-Mode Linux, runs natively (default; one CPU)
#   --arch x86_64   runs under qemu with TCG and 4 CPUs (-smp 4)
#   --arch arm64    qemu-system-aarch64 (TCG), 64 KiB pages, 4 CPUs
#   --arch s390     qemu-system-s390x (TCG), big-endian 64-bit, 2 CPUs
#   --arch i386     qemu-system-i386 (TCG), 32-bit x86, 2 CPUs
#   --debug         add tests/kunit/debug.kunitconfig: KASAN, lockdep,
#                   DEBUG_ATOMIC_SLEEP, DEBUG_PREEMPT (uml, x86_64)
#   --kcsan         add tests/kunit/kcsan.kunitconfig: KCSAN, with the
#                   debug checks but without KASAN (x86_64 only)
#   --bench         add tests/kunit/bench.kunitconfig: ftrace's ring buffer
#                   and the lrb_bench suite, which alone runs (make bench)
#   SUITE_GLOB      run only these suites/cases, e.g. 'lrb_api*'
#
# The kernel is Debian's linux-source-6.12 (scripts/kernel-tree.sh). The
# kunitconfig is tests/kunit/.kunitconfig, then the variant's fragments,
# then tests/kunit/<arch>.kunitconfig (UML: no PCI over virtio, which
# warns at boot; the others: SMP, high-resolution timers, arm64's 64 KiB
# pages). arm64 and s390 build with Debian's cross compilers
# (aarch64-linux-gnu-, s390x-linux-gnu-), i386 with the host's gcc -m32;
# kunit.py's own --arch and --cross_compile and its qemu_configs drive
# them. Each
# configuration has its own build directory,
# ~/.cache/lrb/kunit-<arch>-<kernel version>-<hash of config and checkout>,
# so a second run is incremental and two configurations never share one.
# Every run of this script on the machine takes ~/.cache/lrb/kunit.lock, so
# kernel builds never run side by side.
#
# Logs: build/kunit/<name>.log (kunit.py's output, build included) and
# build/kunit/<name>.console.log (the whole kernel console).
#
# Ends with "kunit <arch>[-debug|-kcsan]: N passed, M failed" where N and M
# count KUnit test cases; a failed build, a compiler warning in lrb, a
# crash, a timeout, or a kernel report (KASAN, lockdep, WARNING, BUG,
# KCSAN...) in the console counts as a failure. Exit status is non-zero if
# anything failed.
#
# Environment: LRB_KUNIT_TIMEOUT (seconds for the boot and the tests,
# default 900: TCG is slow), LRB_KUNIT_JOBS (default: nproc).
set -euo pipefail

# Called from make: keep our make's flags and jobserver away from the
# kernel build kunit.py starts.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

root=$(cd "$(dirname "$0")/.." && pwd)
arch=uml
debug=
kcsan=
bench=
filter=

usage() {
	sed -n '3,19s/^# \{0,1\}//p' "$0"
}

say() { echo "lrb kunit: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	--arch)
		[ $# -ge 2 ] || { say "--arch needs uml, x86_64, arm64, s390 or i386"; exit 2; }
		arch=$2
		shift 2
		;;
	--arch=*) arch=${1#--arch=}; shift ;;
	--debug) debug=1; shift ;;
	--kcsan) kcsan=1; shift ;;
	--bench) bench=1; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) say "unknown option '$1'"; usage >&2; exit 2 ;;
	*)
		[ -z "$filter" ] || { say "only one SUITE_GLOB, got '$filter' and '$1'"; exit 2; }
		filter=$1
		shift
		;;
	esac
done

# karch: kunit.py's --arch (a qemu_configs/ name); cpus: qemu's -smp, which
# the console must show brought up; cross: the CROSS_COMPILE prefix and its
# Debian package; qemu: the emulator and its package.
cpus='' cross='' cross_pkg='' qemu='' qemu_pkg=''
case $arch in
uml | um) arch=uml karch=um ;;
x86_64 | x86) arch=x86_64 karch=x86_64 cpus=4 qemu=qemu-system-x86_64 qemu_pkg=qemu-system-x86 ;;
arm64 | aarch64)
	arch=arm64 karch=arm64 cpus=4 qemu=qemu-system-aarch64 qemu_pkg=qemu-system-arm
	cross=aarch64-linux-gnu- cross_pkg=gcc-aarch64-linux-gnu
	;;
s390 | s390x)
	arch=s390 karch=s390 cpus=2 qemu=qemu-system-s390x qemu_pkg=qemu-system-misc
	cross=s390x-linux-gnu- cross_pkg=gcc-s390x-linux-gnu
	;;
# The host's gcc builds 32-bit x86 kernels (-m32 needs no 32-bit libc).
i386 | i686 | x86_32) arch=i386 karch=i386 cpus=2 qemu=qemu-system-i386 qemu_pkg=qemu-system-x86 ;;
*) say "unsupported --arch '$arch': use uml, x86_64, arm64, s390 or i386"; exit 2 ;;
esac

variant=
if [ -n "$debug$bench" ] && [ "$arch" != uml ] && [ "$arch" != x86_64 ]; then
	say "--debug and --bench are set up for uml and x86_64 only, not $arch"
	exit 2
fi
[ -n "$debug" ] && variant=-debug
if [ -n "$kcsan" ]; then
	if [ "$arch" != x86_64 ]; then
		say "KCSAN needs --arch x86_64 (UML 6.12 has no HAVE_ARCH_KCSAN)"
		exit 2
	fi
	variant=-kcsan
fi
if [ -n "$bench" ]; then
	if [ -n "$variant" ]; then
		say "--bench measures a kernel without debug options: drop --debug/--kcsan"
		exit 2
	fi
	variant=-bench
	filter=${filter:-lrb_bench}
fi
name=$arch$variant
timeout=${LRB_KUNIT_TIMEOUT:-900}
jobs=${LRB_KUNIT_JOBS:-$(nproc)}

for tool in python3 make gcc flex bison bc; do
	command -v "$tool" >/dev/null ||
		{ say "$tool is missing: run scripts/setup.sh (or make setup)"; exit 1; }
done
if [ -n "$qemu" ] && ! command -v "$qemu" >/dev/null; then
	say "$qemu is missing: run scripts/setup.sh (package $qemu_pkg)"
	exit 1
fi
if [ -n "$cross" ] && ! command -v "${cross}gcc" >/dev/null; then
	say "${cross}gcc is missing: run scripts/setup.sh (package $cross_pkg)"
	exit 1
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/lrb
mkdir -p "$cache"

# One kunit.sh at a time: builds share two CPUs, and the kernel tree's
# lib/lrb link points at one checkout.
exec 9>"$cache/kunit.lock"
if ! flock -n 9; then
	say "another scripts/kunit.sh holds $cache/kunit.lock; waiting for it to finish"
	flock 9
fi

tree=$("$root/scripts/kernel-tree.sh" 9>&-) ||
	{ say "could not prepare the kernel tree (scripts/kernel-tree.sh failed)"; exit 1; }
version=${tree##*/linux-source-}

# The composed kunitconfig: the base, then the fragments of the variant.
frag=$root/tests/kunit
config=$(
	echo "# scripts/kunit.sh --arch $arch${debug:+ --debug}${kcsan:+ --kcsan}${bench:+ --bench}"
	cat "$frag/.kunitconfig"
	if [ -n "$bench" ]; then
		cat "$frag/bench.kunitconfig"
	elif [ -n "$kcsan" ]; then
		grep -v '^CONFIG_KASAN' "$frag/debug.kunitconfig"
		cat "$frag/kcsan.kunitconfig"
	elif [ -n "$debug" ]; then
		cat "$frag/debug.kunitconfig"
	fi
	cat "$frag/$arch.kunitconfig"
)
# The checkout is part of the key: the tree's lib/lrb follows whichever
# checkout ran last, and make's timestamps cannot tell two checkouts apart.
hash=$(printf '%s\n%s\n%s\n' "$arch" "$root" "$config" | sha256sum | cut -c1-10)
bdir=$cache/kunit-$arch-$version-$hash
mkdir -p "$bdir" "$root/build/kunit"
printf '%s\n' "$config" >"$bdir/lrb.kunitconfig"

log=$root/build/kunit/$name.log
console=$root/build/kunit/$name.console.log
rm -f "$log" "$console" "$bdir/test.log"
touch "$bdir/.lrb-run-start"
# Compile lrb afresh every time (seconds), so its compiler warnings show
# in every run, not only in the run that first built it.
rm -rf "$bdir/lib/lrb"

if [ -f "$bdir/vmlinux" ]; then
	how="incremental build"
else
	how="fresh build, several minutes"
fi
cmd=(python3 tools/testing/kunit/kunit.py run
     --arch="$karch"
     --kunitconfig="$bdir/lrb.kunitconfig"
     --build_dir="$bdir"
     --jobs="$jobs"
     --timeout="$timeout")
desc="UML"
if [ -n "$qemu" ]; then
	# qemu picks TCG by default; say so anyway, /dev/kvm exists on these
	# machines but its guests hang.
	cmd+=(--qemu_args="-accel tcg,thread=multi -smp $cpus")
	desc="$arch under $qemu (TCG, -smp $cpus)"
fi
[ -z "$cross" ] || cmd+=(--cross_compile="$cross")
if [ "$arch" = arm64 ]; then
	# lrb_alloc's largest ring, 32768 sub-buffers of a page, is 2 GiB
	# with 64 KiB pages: more than kunit.py's -m 1024 (the last -m wins).
	cmd+=(--qemu_args="-m 3072")
	desc+=", 64 KiB pages, 3 GiB"
fi
[ -z "$debug" ] || desc+=", KASAN + lockdep"
[ -z "$kcsan" ] || desc+=", KCSAN + lockdep"
[ -z "$bench" ] || desc+=", beside ftrace's ring buffer"
[ -z "$filter" ] || cmd+=("$filter")

say "kunit $name: building linux-source $version for $desc ($how)"
say "  build dir $bdir"
say "  log $log"

# Say something at least once a minute while kunit.py is quiet (it hides
# make's output until the build is over).
heartbeat() {
	local quiet=0 objs
	while sleep 10; do
		if [ -n "$(find "$log" -newermt '-10 seconds' 2>/dev/null)" ]; then
			quiet=0
			continue
		fi
		quiet=$((quiet + 10))
		[ $((quiet % 60)) -eq 0 ] || continue
		objs=$(find "$bdir" -name '*.o' -newer "$bdir/.lrb-run-start" 2>/dev/null | wc -l)
		say "kunit $name: still working, $((SECONDS - start))s so far, $objs objects compiled"
	done
}
start=$SECONDS
heartbeat 9>&- &
hb=$!
trap 'kill "$hb" 2>/dev/null || true' EXIT

rc=0
(cd "$tree" && "${cmd[@]}" 9>&-) 2>&1 | tee "$log" || rc=$?
kill "$hb" 2>/dev/null || true
wait "$hb" 2>/dev/null || true
elapsed=$((SECONDS - start))
[ ! -f "$bdir/test.log" ] || cp "$bdir/test.log" "$console"

plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
# Someone running scripts/kernel-tree.sh by hand from another checkout
# while we built would have swapped the sources under us.
linked=$(readlink "$tree/lib/lrb" || true)
if [ "$linked" != "$root" ]; then
	say "kunit $name: the tree's lib/lrb now points at '$linked', not $root:"
	say "  another checkout relinked it during this run, so what was built may be"
	say "  a mix of both. Run kunit.sh again (by-hand kunit.py runs should hold"
	say "  $cache/kunit.lock: flock $cache/kunit.lock <command>)"
	relinked=1
fi
summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' <<<"$plain" | tail -n 1 || true)
count() {
	local n
	n=$(sed -nE "s/.*[ ,]$1: ([0-9]+).*/\1/p" <<<"$summary")
	echo "${n:-0}"
}
total=$(sed -nE 's/.*Ran ([0-9]+) tests.*/\1/p' <<<"$summary")
passed=$(count passed)
failed=$(($(count failed) + $(count crashed) + $(count errors)))
skipped=$(count skipped)
py_failed=$failed
problem=
# A run that did not get to parsed results: show the end of the log first.
hard=

if [ -n "${relinked:-}" ]; then
	failed=$((failed + 1))
	problem="the kernel tree was relinked to another checkout during the run"
elif [ -z "$summary" ]; then
	failed=$((failed + 1))
	hard=1
	if grep -q 'Not all Kconfig options selected' <<<"$plain"; then
		problem="the kernel configuration failed: an option of $bdir/lrb.kunitconfig is not available for $arch (see 'Missing' in the log)"
	elif grep -q 'Configuring KUnit Kernel' <<<"$plain" &&
	     ! grep -q 'Building KUnit Kernel' <<<"$plain"; then
		problem="the kernel configuration failed"
	elif ! grep -q 'Starting KUnit Kernel' <<<"$plain"; then
		problem="the kernel build failed; if the error is in lrb, fix it and rerun; if the build directory looks damaged, rm -rf $bdir"
	else
		problem="the kernel ran but printed no KUnit results (crash in early boot?); console: $console"
	fi
elif [ "${total:-0}" -eq 0 ]; then
	failed=$((failed + 1))
	hard=1
	problem="no test ran (SUITE_GLOB '${filter}' matched nothing, or CONFIG_LRB_KUNIT_TEST is off)"
elif [ "$failed" -gt 0 ]; then
	problem="$failed test case(s) failed or crashed (listed above); console: $console"
elif [ "$rc" -ne 0 ]; then
	failed=1
	hard=1
	problem="kunit.py exited with status $rc"
fi

# The console's KTAP counted by tests/ktap.sh, the reader of the user-space
# runs of the same suites too, must agree with kunit.py's parser.
if [ -n "$summary" ] && [ -f "$console" ]; then
	ktap=$("$root/tests/ktap.sh" "kunit $name" "$console" 2>/dev/null | tail -n 1 || true)
	kt_p=$(sed -nE 's/.*: ([0-9]+) passed.*/\1/p' <<<"$ktap")
	kt_f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$ktap")
	kt_s=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$ktap")
	if [ "${kt_p:-x}" != "$passed" ] || [ "${kt_f:-x}" != "$py_failed" ] ||
	   [ "${kt_s:-0}" != "$skipped" ]; then
		failed=$((failed + 1))
		problem="${problem:+$problem; }tests/ktap.sh counts '$ktap' in $console, kunit.py $passed passed, $py_failed failed, $skipped skipped: fix tests/ktap.sh (or the KTAP the suites print)"
	fi
fi

if grep -qE 'timed out after [0-9]+ seconds' <<<"$plain"; then
	[ "$failed" -gt 0 ] || failed=1
	hard=1
	problem="${problem:+$problem; }the kernel ran past the ${timeout}s timeout (LRB_KUNIT_TIMEOUT) and was stopped"
fi

if [ -n "$hard" ]; then
	say "kunit $name: last 40 lines of $log:"
	tail -n 40 "$log" | sed 's/^/    /' >&2
fi

# The SMP cases are only worth something if the CPUs are there.
if [ -n "$cpus" ] && [ -n "$summary" ] && [ -f "$console" ] &&
   ! grep -q "smp: Brought up .* $cpus CPUs" "$console"; then
	failed=$((failed + 1))
	problem="${problem:+$problem; }the kernel did not bring up $cpus CPUs (no 'smp: Brought up ... $cpus CPUs' in $console): check CONFIG_SMP in tests/kunit/$arch.kunitconfig"
fi

# Kernel reports: every splat has one header line (BUG: KASAN: ...,
# BUG: KCSAN: ..., WARNING: possible circular locking ..., BUG: sleeping
# function called from invalid context, BUG: soft lockup, WARNING: CPU:...,
# kernel BUG at ..., UBSAN: ..., RCU stalls, panics); count each one.
reports=0
if [ -f "$console" ]; then
	pattern='BUG:|WARNING:|KCSAN:|possible circular locking|inconsistent lock state'
	pattern+='|sleeping function called from invalid context|kernel BUG at'
	pattern+='|general protection fault|UBSAN:|detected stalls|hard LOCKUP'
	pattern+='|blocked for more than|Kernel panic'
	reports=$(grep -cE "$pattern" "$console" || true)
	if [ "$reports" -gt 0 ]; then
		say "kunit $name: $reports kernel report(s) in $console:"
		# The first 5 reports, each up to its end marker or 120 lines
		# (UML's stack traces are long).
		awk -v pat="$pattern" '
			$0 ~ pat { n++; left = 120; if (n <= 5) print "--- report " n ", console line " NR ":" }
			left > 0 && n <= 5 { print; left-- }
			/^=+$|---\[ end trace/ { if (left < 119) left = 0 }
		' "$console" | sed 's/^/    /' >&2
		say "kunit $name: report headers:"
		grep -nE "$pattern" "$console" | head -n 20 | sed 's/^/    /' >&2
		failed=$((failed + reports))
		problem="${problem:+$problem; }$reports kernel report(s) (KASAN, lockdep, KCSAN, BUG or WARNING) in the console"
	fi
fi

# Compiler warnings in lrb's own sources fail the run, as in
# tests/kernel-build.sh.
warnings=$(grep -cE '/lib/lrb/[^:]*:[0-9]+:[0-9]+: (warning|error):' <<<"$plain" || true)
if [ "$warnings" -gt 0 ]; then
	say "kunit $name: $warnings compiler warning(s)/error(s) in lrb:"
	grep -E -A 3 '/lib/lrb/[^:]*:[0-9]+:[0-9]+: (warning|error):' <<<"$plain" |
		sed "s|$tree/lib/lrb/||; s/^/    /" >&2
	# A failed build already counts as one failure.
	if [ -n "$summary" ]; then
		failed=$((failed + warnings))
		problem="${problem:+$problem; }$warnings compiler warning(s) in lrb sources"
	fi
fi

if [ -n "$summary" ] && grep -qE '\[(FAILED|CRASHED)\] ' <<<"$plain"; then
	say "kunit $name: failed test cases:"
	grep -E '\[(FAILED|CRASHED)\] ' <<<"$plain" | grep -v '=====' |
		head -n 30 | sed 's/^/    /' >&2
fi

if [ -n "$problem" ]; then
	say "kunit $name FAILED after ${elapsed}s: $problem"
	say "  logs: $log, $console"
else
	say "kunit $name: done in ${elapsed}s; console in $console"
fi
line="kunit $name: ${passed} passed, ${failed} failed"
[ "$skipped" -eq 0 ] || line+=", $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ]
