#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the debug kernel of make vmtest-debug, once, and print where it is.
#
#   scripts/debug-kernel.sh
#
# The kernel is Debian's linux-source-6.12 (scripts/kernel-tree.sh),
# configured from Debian's own config (the .config of the matching
# linux-headers-6.12, scripts/kdir.sh) with every module turned off, plus
# tests/vm/debug.config (KASAN, lockdep, kmemleak, fault injection, and
# what the VM needs built in). It is built out of tree in
# ~/.cache/lrb/debug-kernel-<linux-source version>-<hash of both configs>,
# with Module.symvers and modules_prepare done, so that directory is a KDIR
# for out-of-tree modules. A finished build is reused as it is.
#
# Progress goes to stderr (a line a minute while compiling); the build log
# is <build dir>/build.log. On success stdout has two lines for the shell:
#   LRB_VM_KERNEL=<build dir>/arch/x86/boot/bzImage
#   KDIR=<build dir>
# The build runs at nice 19 under its own lock, ~/.cache/lrb/debug-kernel.lock
# (one debug-kernel build at a time), not under scripts/kunit.sh's
# kunit.lock: it takes an hour or more on a busy 2-core machine, and
# holding kunit.lock that long would stall every KUnit run queued behind
# it; at nice 19 it takes only the CPU time they leave. kunit.lock is
# taken only while the shared source tree is extracted or wired for the
# first time (scripts/kernel-tree.sh), which must not race a KUnit run
# doing the same.
#
# Environment: LRB_KERNEL_JOBS (make -j, default: nproc).
set -euo pipefail

# Called from make: keep our make's flags away from the kernel build.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

root=$(cd "$(dirname "$0")/.." && pwd)
fragment=$root/tests/vm/debug.config
jobs=${LRB_KERNEL_JOBS:-$(nproc)}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lrb

say() { echo "lrb debug-kernel: $*" >&2; }

fail() {
	local line
	for line in "$@"; do
		say "$line"
	done
	exit 1
}

for tool in make gcc flex bison bc flock sha256sum; do
	command -v "$tool" >/dev/null ||
		fail "$tool is missing: run scripts/setup.sh (or make setup)"
done
[ -f "$fragment" ] || fail "$fragment is missing: it is part of the checkout"

kdir=$("$root/scripts/kdir.sh") ||
	fail "cannot find Debian's 6.12 headers, whose config is the base (scripts/kdir.sh failed)"
debian_config=$kdir/.config
[ -f "$debian_config" ] ||
	fail "$debian_config is missing: install ${kdir#/usr/src/} (scripts/setup.sh)"

mkdir -p "$cache"
exec 9>"$cache/debug-kernel.lock"
if ! flock -n 9; then
	say "another debug-kernel build holds $cache/debug-kernel.lock; waiting for it to finish"
	flock 9
fi

# An extracted and wired tree is used as it is: calling kernel-tree.sh
# would repoint its lib/lrb at this checkout under a KUnit run of another.
tree=$cache/linux-source-$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null) ||
	fail "linux-source-6.12 is not installed: run scripts/setup.sh"
if [ ! -f "$tree/.lrb-extracted" ] || [ ! -e "$tree/lib/lrb" ]; then
	exec 8>"$cache/kunit.lock"
	if ! flock -n 8; then
		say "a KUnit run holds $cache/kunit.lock; waiting to prepare the shared kernel tree"
		flock 8
	fi
	tree=$("$root/scripts/kernel-tree.sh" 8>&- 9>&-) ||
		fail "could not prepare the kernel tree (scripts/kernel-tree.sh failed)"
	exec 8>&-
fi
version=${tree##*/linux-source-}

# Debian builds about 4000 modules; the guest loads none of them (what it
# needs is built in, or turned on by the fragment), so "=m" becomes "not
# set". Options that built-in code selects stay as Kconfig forces them.
config=$(sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' "$debian_config"
	 cat "$fragment")
hash=$(printf '%s\n' "$config" | sha256sum | cut -c1-10)
bdir=$cache/debug-kernel-$version-$hash
image=$bdir/arch/x86/boot/bzImage

report() {
	say "bzImage: $image"
	say "KDIR:    $bdir"
	echo "LRB_VM_KERNEL=$image"
	echo "KDIR=$bdir"
}

if [ -f "$bdir/.lrb-done" ]; then
	say "debug kernel $version-$hash already built"
	report
	exit 0
fi

mkdir -p "$bdir"
log=$bdir/build.log
printf '%s\n' "$config" >"$bdir/.config"
say "configuring linux-source $version: Debian's config without modules, plus tests/vm/debug.config"
if ! make -C "$tree" O="$bdir" olddefconfig >"$log" 2>&1; then
	tail -n 20 "$log" | sed 's/^/    /' >&2
	fail "make olddefconfig failed (log: $log)"
fi
# Every line of the fragment must have survived: a dependency that
# Kconfig quietly dropped means a check that is not there.
missing=()
while IFS= read -r line; do
	case $line in
	CONFIG_*=* | "# CONFIG_"*" is not set") ;;
	*) continue ;;
	esac
	grep -qxF "$line" "$bdir/.config" || missing+=("$line")
done <"$fragment"
[ ${#missing[@]} -eq 0 ] ||
	fail "Kconfig did not keep these lines of tests/vm/debug.config: ${missing[*]}" \
	     "(their dependencies are off; see $bdir/.config and fix the fragment)"

say "building in $bdir with -j$jobs at nice 19 (log: $log); about 40 minutes on 2 idle cores the first time"
start=$SECONDS
touch "$bdir/.lrb-build-start"
heartbeat() {
	local objs
	while sleep 60; do
		objs=$(find "$bdir" -name '*.o' -newer "$bdir/.lrb-build-start" 2>/dev/null | wc -l)
		say "still building, $((SECONDS - start))s so far, $objs objects compiled"
	done
}
heartbeat 9>&- &
hb=$!
trap 'kill "$hb" 2>/dev/null || true' EXIT
# The default target builds bzImage and the (few) modules; modpost then
# writes Module.symvers, which with modules_prepare makes this a KDIR.
rc=0
nice -n 19 make -C "$tree" O="$bdir" -j"$jobs" all modules_prepare >>"$log" 2>&1 9>&- || rc=$?
kill "$hb" 2>/dev/null || true
wait "$hb" 2>/dev/null || true
trap - EXIT
if [ "$rc" -ne 0 ]; then
	grep -E 'error|Error' "$log" | head -n 20 | sed 's/^/    /' >&2 || true
	fail "the kernel build failed after $((SECONDS - start))s (log: $log);" \
	     "rerun to continue it, or rm -rf $bdir to start afresh"
fi
for f in "$image" "$bdir/Module.symvers" "$bdir/scripts/mod/modpost"; do
	[ -f "$f" ] || fail "the build left no $f (log: $log); rm -rf $bdir and rerun"
done
touch "$bdir/.lrb-done"
say "built in $((SECONDS - start))s, $(find "$bdir" -name '*.o' -newer "$bdir/.lrb-build-start" | wc -l) objects"
report
