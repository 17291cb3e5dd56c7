#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end tests of lrb.ko in a VM: Debian's 6.12 kernel under qemu
# (TCG, 4 CPUs) running the scenarios of tests/vm/scenarios.
#
#   tests/vm/run.sh [SCENARIO...]      (make vmtest [SCENARIOS="..."])
#   LRB_VM_DEBUG=1 tests/vm/run.sh ... (make vmtest-debug [SCENARIOS=...])
#
#   SCENARIO    a scenario to run, by name (10-consume-read), file name
#               (10-consume-read.sh) or unique prefix (10); default: every
#               tests/vm/scenarios/[0-9]*.sh, in order
#
# Steps, each announced by a line "lrb vmtest: ...":
#  1. the kernel: the version of the newest linux-headers-6.12.*+deb12-amd64
#     (scripts/kdir.sh, or KDIR=/usr/src/linux-headers-<version>); its
#     linux-image package is downloaded once (apt-get download, dpkg -x)
#     into ~/.cache/lrb/vm/<version>/, which keeps vmlinuz, config and
#     virtio_blk.ko (the export disk's driver; the rest is built in);
#  2. lrb.ko, then tests/vm/client (lrb_vm_client.ko) against it, with
#     W=1, in a copy of the checkout (build/vmtest/src, incremental);
#     lrb.ko with LRB_FAILPOINTS=y: its test-only failure points (see
#     kernel-module/kchan.c) do nothing unless a scenario arms them;
#  3. the checkers: make -C tests/vm/check O=build/vmtest/check; every
#     executable it leaves there goes to /bin (they must be static), and
#     so do the tools (make tools-static);
#  4. the initramfs build/vmtest/initramfs.cpio.gz: busybox-static,
#     /lib/lrb/{lrb,lrb_vm_client}.ko, the checkers, the scenario
#     directory as /scenarios, tests/vm/init as /init, and Debian's
#     lttng-relayd and babeltrace2 (with its plugins) with the shared
#     libraries they load, at the host's paths (the relayd scenarios);
#  5. the boot: qemu-system-x86_64 -accel tcg -smp 4 -m 1024, kernel
#     console on the first serial port (build/vmtest/console.log), the
#     guest's results on the second (build/vmtest/output.log).
#
# Every scenario prints "vmtest <scenario>: N passed, M failed"; the guest
# adds "vmtest boot", "vmtest kernel-log-<scenario>" (kernel reports
# during the scenario) and "vmtest: done" (see tests/vm/init). This script
# sums the results. What a scenario leaves in $LRB_EXPORT (/export/<name>)
# comes back in build/vmtest/export/<name>, where <name>.host.sh, if the
# scenario has one, checks it on the host and reports the same way
# ("vmtest <name>/host: ..."). A scenario that does not report, a guest that does not
# reach "vmtest: done", or a failed build counts as failed. The last line
# is "vmtest: N passed, M failed"; the exit status is non-zero on failure.
#
# Another kernel: LRB_VM_KERNEL=<bzImage> with KDIR=<its build directory>
# boots that kernel instead of Debian's (step 1 becomes a check of its
# .config); it must have virtio_blk built in. LRB_VM_DEBUG=1 sets both to
# the debug kernel of scripts/debug-kernel.sh (built once, cached: KASAN,
# lockdep, kmemleak...), and the output directory to build/vmtest-debug.
# On a kernel with KASAN or lockdep, the default timeouts are multiplied
# by $debug_slowdown (see below and Documentation/testing.rst), and
# kasan_multi_shot is on the command line so every KASAN report is printed.
#
# Environment:
#   KDIR                      kernel headers (default: scripts/kdir.sh)
#   LRB_VM_KERNEL             kernel image to boot (with KDIR; see above)
#   LRB_VM_DEBUG              1: boot the debug kernel (see above)
#   LRB_VM_SCENARIOS_DIR      scenario directory (default tests/vm/scenarios);
#                             copied whole to /scenarios in the guest
#   LRB_VM_CHECK_DIR          checkers' directory, built with make -C DIR O=...
#                             (default tests/vm/check); both are for testing
#                             the harness itself
#   LRB_VM_TIMEOUT            seconds for the whole boot (default 1200)
#   LRB_VM_SCENARIO_TIMEOUT   seconds for one scenario (default 240)
#                             (both defaults times the slowdown, above)
#   LRB_VM_TOOLS              the tools to build for the guest (default all)
#   LRB_VM_CPUS, LRB_VM_MEM   qemu -smp and -m (default 4 and 1024)
#   LRB_VM_APPEND             more kernel command line
#   LRB_VM_ACCEL              qemu -accel (default tcg,thread=multi)
#   LRB_VM_QEMU_ARGS          more qemu options (words)
#   LRB_VM_PROGRAMS           more host programs for the guest, with the
#                             shared libraries they load (the benchmarks'
#                             trace-cmd, say)
#   LRB_VM_RESERVE            reserve_mem= of the command line, the memory
#                             of persistent channels (default 16M:4096:lrb)
#   LRB_VM_OUT                output directory (default build/vmtest, or
#                             build/vmtest-debug; the paths above are under it)
set -euo pipefail

# Called from make: keep make's flags away from the kernel builds.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
debug=${LRB_VM_DEBUG:-}
out=${LRB_VM_OUT:-$root/build/vmtest${debug:+-debug}}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lrb/vm
scen_dir=${LRB_VM_SCENARIOS_DIR:-$root/tests/vm/scenarios}
# How much slower the scenarios run on a KASAN + lockdep + kmemleak
# kernel than on Debian's, under TCG: the largest ratio of a scenario's
# "took" in build/vmtest-debug/output.log to build/vmtest/output.log,
# rounded up (Documentation/testing.rst): 3.17 on 2026-11-22
# (75-record-sched, 6 s and 19 s; all 25 scenarios: 124 s and 154 s).
debug_slowdown=4
cpus=${LRB_VM_CPUS:-4}
mem=${LRB_VM_MEM:-1024}

say() { echo "lrb vmtest: $*" >&2; }

# fail MESSAGE...: a step could not be done; nothing was tested.
fail() {
	local line
	for line in "$@"; do
		say "$line"
	done
	echo "vmtest: 0 passed, 1 failed"
	exit 1
}

usage() {
	sed -n '3,10s/^# \{0,1\}//p' "$0"
}

# tail_log FILE [N]: the last N lines of FILE, indented, on stderr.
tail_log() {
	tail -n "${2:-30}" "$1" | sed 's/^/    /' >&2
}

check_tools() {
	local tool
	for tool in qemu-system-x86_64 cpio gzip rsync make gcc strip readelf \
		    apt-get apt-cache dpkg flock timeout tar xz truncate ldd \
		    lttng-relayd babeltrace2; do
		command -v "$tool" >/dev/null ||
			fail "$tool is missing: run scripts/setup.sh (or make setup)"
	done
	busybox=$(command -v busybox || true)
	if [ -z "$busybox" ] || readelf -l "$busybox" | grep 'program interpreter' >/dev/null; then
		fail "no statically linked busybox (${busybox:-none found}): the guest has no C library;" \
		     "install busybox-static: run scripts/setup.sh (or make setup)"
	fi
}

# select_scenarios ARG...: set $scenarios to the names to run, in order.
select_scenarios() {
	local all=() f arg match n
	[ -d "$scen_dir" ] ||
		fail "no scenario directory $scen_dir (LRB_VM_SCENARIOS_DIR)"
	for f in "$scen_dir"/[0-9]*.sh; do
		# <name>.host.sh is the host side of <name>
		case $f in *.host.sh) continue ;; esac
		[ -e "$f" ] || continue
		f=${f##*/}
		all+=("${f%.sh}")
	done
	[ ${#all[@]} -gt 0 ] ||
		fail "no scenario in $scen_dir: scenarios are files named [0-9]*.sh"
	if [ $# -eq 0 ]; then
		scenarios=("${all[@]}")
		return
	fi
	scenarios=()
	for arg in "$@"; do
		arg=${arg##*/}
		arg=${arg%.sh}
		match=()
		for n in "${all[@]}"; do
			if [ "$n" = "$arg" ]; then
				match=("$n")
				break
			fi
			[ "${n#"$arg"}" = "$n" ] || match+=("$n")
		done
		case ${#match[@]} in
		1) scenarios+=("${match[0]}") ;;
		0) fail "no scenario '$arg' in $scen_dir; there are: ${all[*]}" ;;
		*) fail "'$arg' names several scenarios (${match[*]}): give more of the name" ;;
		esac
	done
}

# resolve_kernel: $kdir and $version (6.12.N+deb12-amd64), or with
# LRB_VM_KERNEL (or LRB_VM_DEBUG), that kernel's $image and $kconfig.
resolve_kernel() {
	local line
	if [ -n "$debug" ]; then
		while IFS= read -r line; do
			case $line in
			LRB_VM_KERNEL=*) LRB_VM_KERNEL=${line#*=} ;;
			KDIR=*) KDIR=${line#*=} ;;
			esac
		done < <("$root/scripts/debug-kernel.sh")
		[ -n "${LRB_VM_KERNEL:-}" ] ||
			fail "the debug kernel is not there: scripts/debug-kernel.sh failed (see above)"
	fi
	if [ -n "${LRB_VM_KERNEL:-}" ]; then
		[ -n "${KDIR:-}" ] ||
			fail "LRB_VM_KERNEL=$LRB_VM_KERNEL needs KDIR=<its build directory>:" \
			     "lrb.ko must be built against the kernel that boots"
		[ -f "$LRB_VM_KERNEL" ] ||
			fail "no kernel image $LRB_VM_KERNEL (LRB_VM_KERNEL)"
		[ -f "$KDIR/include/config/kernel.release" ] ||
			fail "KDIR=$KDIR is not a built kernel tree (no include/config/kernel.release):" \
			     "build the kernel there first"
		kdir=$(cd "$KDIR" && pwd)
		image=$LRB_VM_KERNEL
		kconfig=$kdir/.config
		version=$(cat "$kdir/include/config/kernel.release")
		virtio_ko=
		return
	fi
	if [ -n "${KDIR:-}" ]; then
		kdir=$KDIR
	else
		kdir=$("$root/scripts/kdir.sh") ||
			fail "could not find the kernel headers (scripts/kdir.sh failed): run scripts/setup.sh"
	fi
	[ -f "$kdir/Makefile" ] ||
		fail "no kernel headers in $kdir: run scripts/setup.sh (or make setup)"
	kdir=$(cd "$kdir" && pwd)
	version=${kdir##*/linux-headers-}
	case $version in
	*/* | "")
		fail "KDIR=$kdir is not a Debian /usr/src/linux-headers-<version>:" \
		     "the VM boots Debian's linux-image-<version>, which must match" ;;
	esac
}

# fetch_image: Debian's kernel $version in $cache/$version (vmlinuz,
# config and virtio_blk.ko), downloaded and extracted once.
fetch_image() {
	local dir=$cache/$version pkg candidates p tmp start f
	[ -z "${LRB_VM_KERNEL:-}" ] || return 0
	image=$dir/vmlinuz
	kconfig=$dir/config
	virtio_ko=$dir/virtio_blk.ko
	if [ -f "$dir/.done" ] && [ -f "$dir/virtio_blk.ko" ]; then
		say "kernel image $version: cached in $dir"
		return
	fi
	mkdir -p "$cache"
	exec 8>"$cache/download.lock"
	if ! flock -n 8; then
		say "another run is downloading into $cache; waiting for it"
		flock 8
	fi
	if [ -f "$dir/.done" ] && [ -f "$dir/virtio_blk.ko" ]; then
		exec 8>&-
		return
	fi
	# The same kernel comes in two packages: -unsigned and the signed one.
	candidates=("linux-image-$version-unsigned" "linux-image-$version")
	pkg=
	for p in "${candidates[@]}"; do
		if [ -n "$(apt-cache show --no-all-versions "$p" 2>/dev/null)" ]; then
			pkg=$p
			break
		fi
	done
	[ -n "$pkg" ] ||
		fail "apt offers neither ${candidates[*]}:" \
		     "run apt-get update (the headers $version are installed, so the image" \
		     "should be in the same archive), then run this again"
	tmp=$(mktemp -d "$cache/download.XXXXXX")
	say "downloading $pkg (about 100 MB, once; cached in $dir)"
	start=$SECONDS
	if ! (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg") \
		>"$tmp/apt.log" 2>&1; then
		tail_log "$tmp/apt.log" 10
		rm -rf "$tmp"
		fail "apt-get download $pkg failed: run apt-get update and try again"
	fi
	say "extracting $pkg ($((SECONDS - start))s so far)"
	if ! dpkg -x "$tmp"/*.deb "$tmp/x" 2>"$tmp/dpkg.log"; then
		tail_log "$tmp/dpkg.log" 10
		rm -rf "$tmp"
		fail "dpkg -x of $pkg failed (disk full?); see the lines above"
	fi
	if [ ! -f "$tmp/x/boot/vmlinuz-$version" ]; then
		rm -rf "$tmp"
		fail "$pkg has no boot/vmlinuz-$version: is it a kernel image package?"
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$tmp/x/boot/vmlinuz-$version" "$dir/vmlinuz"
	cp "$tmp/x/boot/config-$version" "$dir/config"
	# the export disk's driver (tests/vm/init), the one module we need
	f=$(find "$tmp/x/lib/modules" -name 'virtio_blk.ko*' | head -n 1)
	case $f in
	*.xz) xz -dc "$f" >"$dir/virtio_blk.ko" ;;
	*.ko) cp "$f" "$dir/virtio_blk.ko" ;;
	*) rm -rf "$tmp"
	   fail "$pkg has no virtio_blk module: is it a Debian 6.12 kernel image?" ;;
	esac
	echo "$pkg" >"$dir/package"
	rm -rf "$tmp"
	touch "$dir/.done"
	exec 8>&-
	say "kernel image $version ready in $((SECONDS - start))s: $dir"
}

# check_config: what the guest relies on is built in (virtio_blk too, if
# we have no module of it).
check_config() {
	local opt missing=() opts
	opts=(DEVTMPFS DEBUG_FS HOTPLUG_CPU BLK_DEV_INITRD RD_GZIP SMP
	      SERIAL_8250_CONSOLE TMPFS PROC_FS SYSFS UNIX INET MODULE_UNLOAD)
	[ -n "$virtio_ko" ] || opts+=(VIRTIO_BLK)
	for opt in "${opts[@]}"; do
		grep -q "^CONFIG_$opt=y" "$kconfig" || missing+=("CONFIG_$opt")
	done
	if grep -q '^CONFIG_MODULE_SIG_FORCE=y' "$kconfig"; then
		missing+=("not CONFIG_MODULE_SIG_FORCE")
	fi
	[ ${#missing[@]} -eq 0 ] ||
		fail "the kernel $version lacks what the guest needs built in: ${missing[*]}" \
		     "(see $kconfig): use a kernel that has them (LRB_VM_KERNEL: build them in," \
		     "as tests/vm/debug.config does for the debug kernel)"
}

# kernel_settings: what depends on the kernel's config: the default
# timeouts (times $debug_slowdown on a debug kernel), and -g for the
# modules if the kernel has no debug info (else they have none either,
# and a report in lrb cannot be decoded to lines).
kernel_settings() {
	local slow=1
	if grep -qE '^CONFIG_(KASAN|PROVE_LOCKING)=y' "$kconfig"; then
		slow=$debug_slowdown
		kernel_checks=1
	fi
	kcflags=
	! grep -q '^CONFIG_DEBUG_INFO_NONE=y' "$kconfig" || kcflags=-g
	vm_timeout=${LRB_VM_TIMEOUT:-$((1200 * slow))}
	scen_timeout=${LRB_VM_SCENARIO_TIMEOUT:-$((240 * slow))}
}

# kbuild LOG DIR ARGS...: make -C $kdir M=DIR W=1 [KCFLAGS=$kcflags] ARGS modules.
kbuild() {
	local log=$1 dir=$2
	shift 2
	if ! make -C "$kdir" M="$dir" W=1 ${kcflags:+KCFLAGS="$kcflags"} "$@" modules \
		>"$log" 2>&1; then
		grep -E 'error|warning:|ERROR' "$log" | sed "s|$src/||g" | head -n 30 | sed 's/^/    /' >&2 || true
		say "last lines of $log:"
		tail_log "$log" 15
		return 1
	fi
	if grep -qE 'warning:' "$log"; then
		say "compiler warnings (tests/kernel-build.sh fails on those in lrb):"
		grep -E 'warning:' "$log" | sed "s|$src/||g" | head -n 20 | sed 's/^/    /' >&2 || true
	fi
}

build_modules() {
	local start=$SECONDS stamp
	src=$out/src
	mkdir -p "$src" "$out/modules"
	say "building lrb.ko and lrb_vm_client.ko against $kdir (in $src)"
	# Build products are excluded both ways: never copied from an
	# in-place "make module", never deleted from the copy.
	# By content, not by time: a file put back to an older version is
	# newer than its objects, never older.
	rsync -rlpgoD --checksum --delete --exclude=/build --exclude=/.git \
		--exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.symvers' \
		--exclude=modules.order --exclude='.*.d' --exclude='.tmp_*' \
		"$root/" "$src/"
	kbuild "$out/lrb.build.log" "$src" LRB_FAILPOINTS=y ||
		fail "lrb.ko did not build (log: $out/lrb.build.log); make module shows the same"
	[ -f "$src/kernel-module/lrb.ko" ] ||
		fail "the build made no kernel-module/lrb.ko (log: $out/lrb.build.log)"
	[ -f "$src/tests/vm/client/Kbuild" ] || [ -f "$src/tests/vm/client/Makefile" ] ||
		fail "no tests/vm/client/Kbuild: the VM test client is missing"
	# The client's symbol versions are lrb.ko's, and kbuild does not notice
	# when they change: rebuild the client then.
	stamp=$src/tests/vm/client/built-against.symvers
	if ! cmp -s "$src/Module.symvers" "$stamp"; then
		rm -f "$src"/tests/vm/client/*.o "$src"/tests/vm/client/*.ko \
			"$src"/tests/vm/client/*.mod.c
	fi
	kbuild "$out/client.build.log" "$src/tests/vm/client" \
		KBUILD_EXTRA_SYMBOLS="$src/Module.symvers" ||
		fail "lrb_vm_client.ko did not build against lrb.ko (log: $out/client.build.log)"
	[ -f "$src/tests/vm/client/lrb_vm_client.ko" ] ||
		fail "the client build made no lrb_vm_client.ko (log: $out/client.build.log)"
	cp "$src/Module.symvers" "$stamp"
	rm -f "$out/modules"/*.ko
	cp "$src/kernel-module/lrb.ko" "$src/tests/vm/client/lrb_vm_client.ko" \
		"$src/Module.symvers" "$out/modules/"
	# the sample clients, built with lrb.ko (samples/kernel)
	for f in "$src"/samples/kernel/*.ko; do
		[ ! -f "$f" ] || cp "$f" "$out/modules/"
	done
	say "modules built in $((SECONDS - start))s: $out/modules (with debug info, for decoding oopses)"
}

build_checkers() {
	local start=$SECONDS f dir=${LRB_VM_CHECK_DIR:-$src/tests/vm/check}
	checkers=()
	[ -f "$dir/Makefile" ] ||
		fail "no $dir/Makefile: the checkers are missing"
	say "building the checkers (make -C ${dir#"$src/"} O=$out/check)"
	rm -rf "$out/check" "$out/tools-build/tools-static"
	mkdir -p "$out/check"
	if ! make -C "$dir" O="$out/check" >"$out/check.build.log" 2>&1; then
		say "last lines of $out/check.build.log:"
		tail_log "$out/check.build.log" 20
		fail "the checkers did not build (log: $out/check.build.log)"
	fi
	for f in "$out/check"/*; do
		if [ ! -f "$f" ] || [ ! -x "$f" ]; then
			continue
		fi
		if readelf -l "$f" 2>/dev/null | grep 'program interpreter' >/dev/null; then
			fail "checker ${f##*/} is dynamically linked; the guest has no C library:" \
			     "link it with -static (tests/vm/check/Makefile)"
		fi
		checkers+=("$f")
	done
	[ ${#checkers[@]} -gt 0 ] ||
		fail "make -C tests/vm/check O=$out/check left no executable in $out/check"
	say "checkers built in $((SECONDS - start))s: ${checkers[*]##*/}"
}

# build_tools: the tools (tools/lrb-*), static, for /bin in the guest.
build_tools() {
	local start=$SECONDS f
	tools=()
	compgen -G "$src/tools/lrb-*/*.c" >/dev/null || return 0
	say "building the tools, static (make tools-static)"
	if ! make -C "$src" BUILD="$out/tools-build" ${LRB_VM_TOOLS:+TOOLS="$LRB_VM_TOOLS"} tools-static \
		>"$out/tools.build.log" 2>&1; then
		tail_log "$out/tools.build.log" 20
		fail "the tools did not build (log: $out/tools.build.log); make tools shows the same"
	fi
	for f in "$out/tools-build/tools-static"/*; do
		[ ! -x "$f" ] || tools+=("$f")
	done
	say "tools built in $((SECONDS - start))s: ${tools[*]##*/}"
}

# copy_dynamic DIR FILE...: FILE (a program or a shared object) and the
# shared libraries it loads into DIR, each at its path on the host.
copy_dynamic() {
	local st=$1 f lib
	shift
	for f in "$@"; do
		for lib in "$f" $(ldd "$f" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
			[ -e "$st$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$st$lib"
		done
	done
}

build_initramfs() {
	local start=$SECONDS st=$out/initramfs a f
	say "making the initramfs ($out/initramfs.cpio.gz)"
	rm -rf "$st"
	mkdir -p "$st"/{bin,dev,proc,sys,tmp,root,etc,lib/lrb,usr}
	ln -s bin "$st/sbin"
	ln -s ../bin "$st/usr/bin"
	ln -s ../bin "$st/usr/sbin"
	cp "$busybox" "$st/bin/busybox"
	for a in $("$busybox" --list); do
		[ "$a" = busybox ] || ln -s busybox "$st/bin/$a"
	done
	for f in "$out/modules"/*.ko; do
		strip --strip-debug -o "$st/lib/lrb/${f##*/}" "$f"
	done
	for f in "${checkers[@]}" "${tools[@]}"; do
		cp "$f" "$st/bin/"
	done
	mkdir -p "$st/lib/extra"
	[ -z "$virtio_ko" ] || cp "$virtio_ko" "$st/lib/extra/"
	# -L: a scenario directory may link to helpers of another (tests/vm/demo)
	cp -rL "$scen_dir" "$st/scenarios"
	# the collector and viewer of the relayd scenarios, as Debian ships them
	mkdir -p "$st/var/run" "$st/lib64"
	copy_dynamic "$st" "$(command -v lttng-relayd)" "$(command -v babeltrace2)" \
		/usr/lib/x86_64-linux-gnu/babeltrace2/plugins/*.so
	# shellcheck disable=SC2086 # a list of paths
	[ -z "${LRB_VM_PROGRAMS:-}" ] || copy_dynamic "$st" $LRB_VM_PROGRAMS
	install -m 755 "$root/tests/vm/init" "$st/init"
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$out/initramfs.cpio.gz"
	say "initramfs made in $((SECONDS - start))s, $(du -k "$out/initramfs.cpio.gz" | cut -f1) KiB"
}

# show_progress: read the guest's output (second serial port) on stdin,
# keep it in $out/output.log, and echo its results and notes as they come.
show_progress() {
	local line part='' quiet=0 rc
	: >"$out/output.log"
	while :; do
		if IFS= read -r -t 30 line; then
			line=$part$line
			part=
		else
			rc=$?
			if [ "$rc" -gt 128 ]; then
				part+=$line
				quiet=$((quiet + 30))
				[ $((quiet % 120)) -ne 0 ] ||
					say "still running, $((SECONDS - boot_start))s since the boot began"
				continue
			fi
			line=$part$line
			[ -n "$line" ] || break
			part=
		fi
		quiet=0
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$out/output.log"
		case $line in
		"vmtest: "*) say "  ${line#vmtest: }" ;;
		vmtest\ *:\ *\ passed,\ *\ failed*) say "  ${line#vmtest }" ;;
		esac
	done
}

boot() {
	local append rc qemu_pid
	append="console=ttyS0,115200 panic=-1 oops=panic log_buf_len=4M"
	# TCG's TSC drifts against the HPET: without this the watchdog switches
	# clocks mid-run (sched_clock falls back to jiffies), and the code
	# patching that follows sometimes trips qemu's multi-threaded TCG into
	# an int3 Oops (not an lrb bug). Per-CPU monotonic is all lrb needs.
	append+=" tsc=reliable"
	append+=" lrbvm.timeout=$scen_timeout lrbvm.cpus=$cpus"
	# memory for persistent channels (91-persist; Documentation/persistent.rst)
	append+=" reserve_mem=${LRB_VM_RESERVE:-16M:4096:lrb}"
	[ "$selected" = all ] || append+=" lrbvm.scenarios=$(IFS=,; echo "${scenarios[*]}")"
	# KASAN prints its first report only, unless told otherwise.
	[ -z "${kernel_checks:-}" ] || append+=" kasan_multi_shot"
	append+=" ${LRB_VM_APPEND:-}"
	# shellcheck disable=SC2206 # LRB_VM_QEMU_ARGS is words
	qemu=(qemu-system-x86_64 -accel "${LRB_VM_ACCEL:-tcg,thread=multi}" ${LRB_VM_QEMU_ARGS:-}
	      -smp "$cpus" -m "$mem"
	      -nodefaults -display none -monitor none -no-reboot
	      -kernel "$image" -initrd "$out/initramfs.cpio.gz"
	      -append "$append"
	      -serial "file:$out/console.log" -serial stdio
	      -drive "file=$out/export.img,format=raw,if=virtio")
	printf '%q ' "${qemu[@]}" >"$out/qemu.cmd"
	echo >>"$out/qemu.cmd"
	rm -f "$out/console.log" "$out/output.log" "$out/export.img"
	# the guest's /export comes back as a tar archive on this disk
	truncate -s "${LRB_VM_EXPORT_MB:-1024}M" "$out/export.img"
	# One guest at a time on the machine: -smp 4 under TCG on two cores
	# is already slower than the scenarios' timing checks like.
	mkdir -p "$cache"
	exec 7>"$cache/boot.lock"
	if ! flock -n 7; then
		say "another VM run holds $cache/boot.lock; waiting for it to finish"
		flock 7
	fi
	say "booting $version under qemu (TCG, -smp $cpus, -m $mem), ${#scenarios[@]} scenario(s),"
	say "  timeout ${vm_timeout}s (LRB_VM_TIMEOUT), ${scen_timeout}s per scenario"
	say "  console $out/console.log, results $out/output.log"
	boot_start=$SECONDS
	# qemu writes the guest's results into a fifo that show_progress
	# reads; if this script is stopped, qemu is stopped with it.
	rm -f "$out/results.fifo"
	mkfifo "$out/results.fifo"
	timeout -k 10 "$vm_timeout" "${qemu[@]}" </dev/null >"$out/results.fifo" \
		2>"$out/qemu.log" &
	qemu_pid=$!
	trap 'kill "$qemu_pid" 2>/dev/null || true' EXIT
	trap 'say "interrupted; stopping qemu"; exit 130' INT TERM
	show_progress <"$out/results.fifo"
	rc=0
	wait "$qemu_pid" || rc=$?
	exec 7>&-
	trap - EXIT INT TERM
	rm -f "$out/results.fifo"
	boot_secs=$((SECONDS - boot_start))
	qemu_rc=$rc
}

# early_patch_oops: did the guest die before its first scenario of an int3
# Oops, lrb.ko not loaded? That is qemu's multi-threaded TCG executing a
# stale copy of an instruction the kernel was patching (see boot()), which
# a reboot gets past; lrb's code has not run yet.
early_patch_oops() {
	! grep -q '^vmtest: running ' "$out/output.log" 2>/dev/null &&
		grep -q 'Oops: int3' "$out/console.log" 2>/dev/null &&
		! grep -qE 'Modules linked in:.*\blrb' "$out/console.log"
}

# show_console: the first kernel report of the console log (an Oops, a
# panic...), else its last lines.
show_console() {
	local pattern first
	pattern='BUG:|WARNING:|Oops|general protection|Kernel panic|kernel BUG at'
	pattern+='|soft lockup|hard LOCKUP|detected stalls|blocked for more than'
	first=$(grep -nE "$pattern" "$out/console.log" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
	if [ -n "$first" ]; then
		say "the console's first kernel report (line $first of $out/console.log):"
		sed -n "$((first > 5 ? first - 5 : 1)),$((first + 60))p" "$out/console.log" |
			sed 's/^/    /' >&2 || true
	elif [ -s "$out/console.log" ]; then
		say "last 40 lines of the console ($out/console.log):"
		tail_log "$out/console.log" 40
	else
		say "the console ($out/console.log) is empty: the kernel printed nothing"
	fi
}

# host_checks: unpack what the guest exported into $out/export/<scenario>,
# and run each scenario's host side, <scenario>.host.sh, if it has one:
# it checks the exported files here (babeltrace2, say) and reports like a
# scenario, "vmtest <scenario>/host: N passed, M failed".
host_checks() {
	local name script
	rm -rf "$out/export"
	mkdir -p "$out/export"
	if [ -s "$out/export.img" ] && ! tar -xf "$out/export.img" -C "$out/export" 2>/dev/null; then
		say "the export disk holds no tar archive: the guest exported nothing"
	fi
	for name in "${scenarios[@]}"; do
		script=$scen_dir/$name.host.sh
		[ -f "$script" ] || continue
		say "  host side of $name"
		EXPORT=$out/export/$name LRB_ROOT=$root bash "$script" 2>&1 |
			tee -a "$out/output.log" |
			grep --line-buffered -E '^(vmtest |lrb )' | sed -u 's/^/    /' >&2 || true
	done
	rm -f "$out/export.img"
}

# summarise: add up the guest's results; print the summary; exit.
summarise() {
	local passed=0 failed=0 name p f line problems=() n re
	while IFS= read -r line; do
		p=$(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$line")
		f=$(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
		passed=$((passed + p))
		failed=$((failed + f))
	done < <(grep -E '^vmtest [^ :]+: [0-9]+ passed, [0-9]+ failed' "$out/output.log" || true)

	for name in "${scenarios[@]}"; do
		re="^vmtest $name(/[^:]*)?: [0-9]+ passed, [0-9]+ failed"
		if ! grep -qE "$re" "$out/output.log"; then
			failed=$((failed + 1))
			problems+=("scenario $name did not report")
		fi
	done
	if ! grep -q '^vmtest: done' "$out/output.log"; then
		failed=$((failed + 1))
		if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
			problems+=("the guest ran past ${vm_timeout}s (LRB_VM_TIMEOUT) and was stopped")
		elif grep -q 'Kernel panic' "$out/console.log" 2>/dev/null; then
			problems+=("the guest kernel panicked (oops=panic: an Oops panics)")
		else
			problems+=("the guest stopped before 'vmtest: done' (qemu exit status $qemu_rc)")
		fi
		show_console
		if [ -s "$out/qemu.log" ]; then
			say "qemu said ($out/qemu.log):"
			tail_log "$out/qemu.log" 10
		fi
	fi

	# What each failed scenario printed, and the kernel reports found
	# after it.
	for name in "${scenarios[@]}"; do
		if grep -qE "^vmtest ($name(/[^:]*)?|$name-exit|cleanup-$name): [0-9]+ passed, [1-9][0-9]* failed" \
			"$out/output.log"; then
			say "scenario $name failed; its output (last 40 lines):"
			awk -v n="$name" '
				$0 == "vmtest: running " n { on = 1 }
				on { print }
				on && $0 == "vmtest: " n " took " $NF { exit }
			' "$out/output.log" | tail -n 40 | sed 's/^/    /' >&2 || true
		fi
		if grep -qE "^vmtest kernel-log-$name: [0-9]+ passed, [1-9]" "$out/output.log"; then
			say "kernel reports during $name (first 60 lines; all of them in $out/console.log):"
			awk -v n="$name" '
				$0 == "vmtest: kernel reports during " n ":" { on = 1 }
				$0 ~ "^vmtest kernel-log-" n ":" { exit }
				on { print }
			' "$out/output.log" | head -n 60 | sed 's/^/    /' >&2 || true
		fi
	done
	if grep -qE '^vmtest boot: [0-9]+ passed, [1-9]' "$out/output.log"; then
		problems+=("the guest did not bring up $cpus CPUs")
	fi

	for n in "${problems[@]}"; do
		say "FAILED: $n"
	done
	say "boot and scenarios took ${boot_secs}s; logs in $out (console.log, output.log)"
	echo "vmtest: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

main() {
	local arg try
	for arg in "$@"; do
		case $arg in
		-h | --help) usage; exit 0 ;;
		-*) say "unknown option '$arg'"; usage >&2; exit 2 ;;
		esac
	done
	selected=all
	[ $# -eq 0 ] || selected=some
	mkdir -p "$out"
	check_tools
	select_scenarios "$@"
	resolve_kernel
	fetch_image
	check_config
	kernel_settings
	build_modules
	build_checkers
	build_tools
	build_initramfs
	rm -f "$out"/console.boot[0-9].log "$out"/output.boot[0-9].log
	boot
	for try in 2 3 4; do
		early_patch_oops || break
		cp "$out/console.log" "$out/console.boot$((try - 1)).log"
		cp "$out/output.log" "$out/output.boot$((try - 1)).log"
		say "the guest died of an int3 Oops while booting, before lrb.ko was loaded:"
		say "  qemu's TCG and kernel code patching ($out/console.boot$((try - 1)).log)"
		if [ "$try" -gt 3 ]; then
			say "  three boots died this way: giving up (see Documentation/testing.rst)"
			break
		fi
		say "  boot $try of 3"
		boot
	done
	host_checks
	summarise
}

# Sourced (tests/vm/crash/run.sh), it only defines the steps above.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
