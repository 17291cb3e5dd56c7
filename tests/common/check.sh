# SPDX-License-Identifier: GPL-2.0
# The counting of the host-side shell tests, one copy for all of them.
# Source it from the repository's top with CHECK_NAME set:
#
#   check WHAT COMMAND...   runs COMMAND; counts it passed, or failed and
#                           says "NAME: FAIL: WHAT"
#   finish                  prints "NAME: N passed, M failed" (the line
#                           tests/run.sh counts) and exits, non-zero if
#                           anything failed

passed=0
failed=0

check() {
	local what=$1

	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "$CHECK_NAME: FAIL: $what"
	fi
}

finish() {
	echo "$CHECK_NAME: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
