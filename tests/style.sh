#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel style checks: checkpatch.pl --strict (from Debian's
# linux-source-6.12, extracted once into ~/.cache/lrb) on every kernel and
# core source, and sparse on the kernel build.
set -uo pipefail

cd "$(dirname "$0")/.."
tarball=$(ls /usr/src/linux-source-6.12.tar.xz 2>/dev/null)
if [ -z "$tarball" ]; then
	echo "style: /usr/src/linux-source-6.12.tar.xz missing; run scripts/setup.sh"
	echo "style: 0 passed, 1 failed"
	exit 1
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lrb/checkpatch-$(stat -c %Y "$tarball")
if [ ! -x "$cache/scripts/checkpatch.pl" ] || [ ! -x "$cache/scripts/kernel-doc" ]; then
	echo "style: extracting checkpatch.pl from $tarball" >&2
	mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' '*/scripts/kernel-doc' ||
		exit 1
fi

# lib/kernel_compat.h defines the kernel's own vocabulary (u32, likely,
# smp_wmb, EXPORT_SYMBOL_GPL...) for lib/ in user space, on libc and
# liburcu; checkpatch's advice to use those very names does not apply there.
compat_ignore=PREFER_KERNEL_TYPES,PREFER_DEFINED_ATTRIBUTE_MACRO
compat_ignore+=,COMPLEX_MACRO,MEMORY_BARRIER,EXPORT_SYMBOL,MACRO_ARG_UNUSED
compat_ignore+=,NEW_TYPEDEFS
# The headers installed for user space must not use that vocabulary: they
# spell C's types (uint32_t), shifts for BIT() and __attribute__ for
# __aligned(), and lrb_clock_cycles() reads x86's TSC itself; the user port
# also wraps liburcu's atomics for TSan.
installed_ignore=PREFER_KERNEL_TYPES,BIT_MACRO,PREFER_DEFINED_ATTRIBUTE_MACRO
installed_ignore+=,ARCH_DEFINES
user_port_ignore=$installed_ignore,COMPLEX_MACRO,MACRO_ARG_REUSE
# lrb/event.h generates code from lists of fields, as the kernel's
# include/trace/trace_events.h does: its macros expand to parameter lists,
# declarations and statements, where checkpatch's rules for macros do not
# apply; it serves user space too, so it spells out its attributes and
# ARRAY_SIZE().
event_ignore=$installed_ignore,COMPLEX_MACRO,MACRO_ARG_UNUSED,MACRO_ARG_REUSE
event_ignore+=,MACRO_ARG_PRECEDENCE,MULTISTATEMENT_MACRO_USE_DO_WHILE
event_ignore+=,TRAILING_SEMICOLON,SPACING,CAMELCASE,ARRAY_SIZE

passed=0
failed=0
for f in lib/*.c lib/*.h include/lrb/*.h include/lrb/internal/*.h \
	 include/uapi/lrb/*.h kernel-module/*.c kernel-module/*.h \
	 tests/vm/client/*.c tests/vm/crash/*.c samples/kernel/*.c \
	 samples/kernel/*.h; do
	case $f in
	include/lrb/kchan.h | include/lrb/internal/port_kernel.h) ignore= ;;
	include/lrb/internal/port_user.h) ignore="--ignore $user_port_ignore" ;;
	include/lrb/event.h) ignore="--ignore $event_ignore" ;;
	include/lrb/*) ignore="--ignore $installed_ignore" ;;
	lib/kernel_compat.h) ignore="--ignore $compat_ignore" ;;
	*) ignore= ;;
	esac
	# shellcheck disable=SC2086
	if out=$("$cache/scripts/checkpatch.pl" --strict --no-tree --quiet \
		 --show-types $ignore -f "$f" 2>&1) && [ -z "$out" ]; then
		passed=$((passed + 1))
	else
		echo "$out"
		failed=$((failed + 1))
	fi
done
echo "checkpatch: $passed files clean, $failed with reports"

# kernel-doc: well-formed everywhere, and present on every exported symbol
kdoc_files=(lib/*.c include/lrb/*.h include/lrb/internal/*.h include/uapi/lrb/*.h
	    kernel-module/*.c kernel-module/*.h)
out=$(perl "$cache/scripts/kernel-doc" -none -Wall "${kdoc_files[@]}" 2>&1)
for sym in $(sed -n 's/^EXPORT_SYMBOL_GPL(\(.*\));/\1/p' lib/*.c \
	     kernel-module/*.c); do
	grep -q "^ \* $sym() - " lib/*.c kernel-module/*.c include/lrb/*.h ||
		out+=$'\n'"kernel-doc: exported $sym has no kernel-doc comment"
done
if [ -z "$out" ]; then
	echo "kernel-doc: every exported function documented, no warnings"
	passed=$((passed + 1))
else
	echo "$out"
	failed=$((failed + 1))
fi

if SPARSE=1 tests/kernel-build.sh >/tmp/lrb-sparse.$$ 2>&1; then
	passed=$((passed + 1))
else
	cat /tmp/lrb-sparse.$$
	failed=$((failed + 1))
fi
rm -f /tmp/lrb-sparse.$$
echo "style: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
