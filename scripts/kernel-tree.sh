#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of a kernel source tree with lrb linked in as lib/lrb.
#
# The tree is Debian's linux-source-6.12, extracted once into
# ~/.cache/lrb/linux-source-<package version>. Each call points its
# lib/lrb at this checkout, and wires lib/Kconfig and lib/Makefile the
# first time, so KUnit (or any in-tree build) sees CONFIG_LRB.
set -euo pipefail

say() { echo "lrb kernel-tree: $*" >&2; }

root=$(cd "$(dirname "$0")/.." && pwd)
tarball=/usr/src/linux-source-6.12.tar.xz
if [ ! -f "$tarball" ]; then
	say "$tarball is missing: run scripts/setup.sh (package linux-source-6.12)"
	exit 1
fi
version=$(dpkg-query -W -f '${Version}' linux-source-6.12)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lrb
tree=$cache/linux-source-$version

if [ ! -f "$tree/.lrb-extracted" ]; then
	say "extracting $tarball (linux-source $version) into $tree, once"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1
	touch "$tree.tmp/.lrb-extracted"
	mv "$tree.tmp" "$tree"
fi

if ! grep -q 'lib/lrb/Kconfig' "$tree/lib/Kconfig"; then
	printf '\nsource "lib/lrb/Kconfig"\n' >>"$tree/lib/Kconfig"
fi
if ! grep -q 'lrb/' "$tree/lib/Makefile"; then
	printf '\nobj-$(CONFIG_LRB) += lrb/\n' >>"$tree/lib/Makefile"
fi
ln -sfn "$root" "$tree/lib/lrb"
echo "$tree"
