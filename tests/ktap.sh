#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Count the results of KTAP output (Documentation/dev-tools/ktap.rst), the
# one reader of both builds' test results: the kernel's KUnit console
# (scripts/kunit.sh) and the user-space runs of the same suites
# (build/<variant>/tests/kunit_user, tests/run.sh).
#
#   tests/ktap.sh NAME [FILE]      (standard input without FILE)
#
# Counts test cases as kunit.py does: the results that have no subtests,
# so each parameter of a parameterized case is one. Text before the first
# version line is skipped, and the column where that line starts is taken
# off every line (a console's timestamps). "# SKIP" results are skipped,
# not passed. Top-level tests that the plan announces but that never
# report (a crash, a timeout) count as failed.
#
# Prints "NAME: N passed, M failed[, K skipped]"; the exit status is
# non-zero if anything failed or no result was found.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 NAME [FILE]" >&2
	exit 2
fi
name=$1
file=${2:--}

awk -v name="$name" '
	!started {
		i = index($0, "KTAP version 1")
		if (!i)
			i = index($0, "TAP version 14")
		if (!i)
			next
		cut = i - 1
		started = 1
	}
	{
		line = substr($0, cut + 1)
		sub(/\r$/, "", line)
	}
	# the top-level plan: 1..N at column 0, once
	line ~ /^1\.\.[0-9]+/ && planned == "" {
		planned = substr(line, 4) + 0
		next
	}
	line ~ /^ *(not )?ok [0-9]+/ {
		indent = match(line, /[^ ]/) - 1
		if (indent == 0)
			top++
		# a result with results deeper than it just before is a parent
		leaf = last == "" || last <= indent
		last = indent
		if (!leaf)
			next
		if (line ~ /#[ \t]*[Ss][Kk][Ii][Pp]/)
			skipped++
		else if (line ~ /^ *not ok/)
			failed++
		else
			passed++
	}
	END {
		if (!started)
			print name ": no KTAP output" > "/dev/stderr"
		if (planned != "" && top < planned) {
			printf "%s: %d of %d top-level tests never reported\n",
			       name, planned - top, planned > "/dev/stderr"
			failed += planned - top
		}
		if (!started || passed + failed + skipped == 0)
			failed++
		printf "%s: %d passed, %d failed", name, passed, failed
		if (skipped)
			printf ", %d skipped", skipped
		printf "\n"
		exit failed ? 1 : 0
	}
' "$file"
