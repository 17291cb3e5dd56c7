#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build lrb.ko from a copy of the tree against the 6.12 headers with W=1;
# any compiler warning fails. With C=2, sparse checks every file too.
set -uo pipefail

cd "$(dirname "$0")/.."
kdir=${KDIR:-$(scripts/kdir.sh)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rsync -a --exclude build --exclude .git ./ "$tmp/"
out=$tmp/build.log
make -C "$kdir" M="$tmp" W=1 ${SPARSE:+C=2 CHECK=sparse} modules >"$out" 2>&1
rc=$?
warnings=$(grep -cE 'warning:|error:' "$out")
grep -E 'warning:|error:' "$out" | sed "s|$tmp/||g"
if [ $rc -ne 0 ] || [ "$warnings" -ne 0 ] || [ ! -f "$tmp/kernel-module/lrb.ko" ]; then
	tail -n 20 "$out" | sed "s|$tmp/||g"
	echo "kernel build: 0 passed, 1 failed"
	exit 1
fi
echo "kernel build: lrb.ko built against $kdir with W=1${SPARSE:+ and sparse}, no warnings"
echo "kernel build: 1 passed, 0 failed"
