#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what lrb needs to build and test, idempotently, from Debian's
# archive: the compiler, liburcu, and the newest 6.12 kernel headers apt
# offers. Runs as root (or through sudo when it is available).
#
#   scripts/setup.sh [--bench]
#
# --bench also installs what make bench measures lrb against:
# LTTng-UST and its session daemon.
set -euo pipefail

bench=
case ${1:-} in
"") ;;
--bench) bench=1 ;;
*) echo "lrb setup: unknown option '$1' (usage: scripts/setup.sh [--bench])" >&2; exit 2 ;;
esac

# babeltrace2 reads the CTF traces of the tests and make demo, which plots
# with gnuplot; clang and its runtime fuzz lrb-dump (tests/fuzz); valgrind
# counts the fast path's instructions (tests/bench/icount); spin checks the
# protocol's model (tests/model); lttng-tools' lttng-relayd receives
# lrb-record's traces in tests/tools/test-relayd.sh (python3 finds it free
# ports) and in the VM's relayd scenarios.
packages=(build-essential pkg-config liburcu-dev linux-libc-dev sparse rsync
	  linux-source-6.12 xz-utils babeltrace2 gnuplot-nox clang
	  libclang-rt-14-dev valgrind spin lttng-tools python3)
# KUnit (scripts/kunit.sh): a kernel build from linux-source-6.12, kunit.py,
# and qemu for the x86_64 and i386 runs (qboot.rom comes with
# qemu-system-data); Debian's cross compilers and qemu for arm64
# (qemu-system-arm) and s390 (qemu-system-misc). i386 builds with the
# host's gcc -m32. Installed without Recommends: qemu would otherwise pull
# in a desktop.
kunit_packages=(python3 flex bison bc libelf-dev libssl-dev
		qemu-system-x86 qemu-system-data
		gcc-aarch64-linux-gnu qemu-system-arm
		gcc-s390x-linux-gnu qemu-system-misc)
# The VM tests (tests/vm/run.sh): an initramfs made of busybox-static (it
# replaces the host's dynamically linked busybox, same applets) and cpio,
# booted under the same qemu.
kunit_packages+=(busybox-static cpio)
# make vmtest-crash (tests/vm/crash/run.sh) reads where the driver sample
# keeps its sequence counters from the sample's debug information, with gdb.
kunit_packages+=(gdb)
# make bench (scripts/bench.sh): LTTng-UST's tracepoint library and
# headers, lttng-sessiond and the lttng client; procps (ps, pgrep), with
# which tests/bench/user/run.sh makes sure the daemons it started are gone;
# trace-cmd, ftrace's recorder in the VM (tests/vm/workload/run.sh).
bench_packages=(lttng-tools liblttng-ust-dev procps trace-cmd)
# The user build for arm64 and s390x (make test-cross, run under qemu-user
# by tests/run.sh): Debian's multiarch liburcu of those architectures, and
# the cross libc and libgcc. The compilers are GCC's cross compilers,
# which KUnit needs anyway (kunit_packages); Debian 12's conflict with
# gcc-multilib, which lrb does not use (i386 kernels build with -m32, no
# library needed). The Makefile falls back to clang --target with the
# same binutils, libc and libgcc where they are missing.
cross_arches=(arm64 s390x)
cross_packages=(qemu-user-static clang
		binutils-aarch64-linux-gnu libc6-dev-arm64-cross
		libgcc-12-dev-arm64-cross liburcu-dev:arm64
		binutils-s390x-linux-gnu libc6-dev-s390x-cross
		libgcc-12-dev-s390x-cross liburcu-dev:s390x)

say() { echo "lrb setup: $*" >&2; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		say "need root to run: $*"
		say "run this script as root, or install sudo"
		exit 1
	fi
}

apt_updated=
apt_update_once() {
	if [ -z "$apt_updated" ]; then
		say "updating the package lists (apt-get update)"
		as_root apt-get update -qq
		apt_updated=1
	fi
}

# Installed? With several architectures of a package installed (multiarch
# liburcu-dev), dpkg wants the native one named.
native=$(dpkg --print-architecture)
installed() {
	dpkg -s "$1" >/dev/null 2>&1 || dpkg -s "$1:$native" >/dev/null 2>&1
}

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done

# Newest Debian 6.12 generic headers: linux-headers-6.12.N+deb12-amd64.
if ! headers=$(scripts/kdir.sh --package 2>/dev/null); then
	apt_update_once
	headers=$(scripts/kdir.sh --package)
fi
installed "$headers" || missing+=("$headers")

if [ ${#missing[@]} -gt 0 ]; then
	apt_update_once
	say "installing ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Multiarch: the architectures liburcu-dev:<arch> comes from.
foreign=$(dpkg --print-foreign-architectures)
for a in "${cross_arches[@]}"; do
	if ! grep -qx "$a" <<<"$foreign"; then
		say "adding the $a architecture (dpkg --add-architecture $a)"
		as_root dpkg --add-architecture "$a"
		apt_updated=
	fi
done

missing=()
extra=("${kunit_packages[@]}" "${cross_packages[@]}")
[ -z "$bench" ] || extra+=("${bench_packages[@]}")
for p in "${extra[@]}"; do
	installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt_update_once
	say "installing ${missing[*]} (for KUnit, the VM tests, the arm64 and s390x user tests${bench:+ and make bench})"
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
say "ready (kernel headers: $headers)"
