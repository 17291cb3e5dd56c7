#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the build directory of the newest Debian 6.12 amd64 kernel headers
# (or, with --package, the name of their package, as apt offers it).
set -euo pipefail

ver=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
	awk '{print $1}' | sed 's/^linux-headers-//' | sort -V | tail -n 1)
if [ -z "$ver" ]; then
	echo "kdir.sh: apt offers no linux-headers-6.12.*+deb12-amd64;" \
	     "run apt-get update, or pass KDIR=<kernel build dir>" >&2
	exit 1
fi
if [ "${1:-}" = --package ]; then
	echo "linux-headers-$ver"
else
	echo "/usr/src/linux-headers-$ver"
fi
