# SPDX-License-Identifier: GPL-2.0
# The costliest source lines of a callgrind profile, inclusive: a line's
# own instructions plus those of the calls made from it, per record, with
# the source text. Reads a profile written with --compress-strings=no and
# --compress-pos=no; tests/bench/icount/check.sh --annotate runs it:
#
#   awk -v records=N -v top=25 -v root="$PWD/" -f lines.awk callgrind.out.N
#
# root, if given, is taken off the front of the file names shown.
#
# Inlined code counts on its own lines (fi=/fe= name their file), so the
# fast path shows line by line. Lines holding nearly the whole total are
# the frames around the measured loop (main, the batch calls) and are left
# out.

/^fl=/ { fl = substr($0, 4); file = fl; next }
/^fn=/ { file = fl; next }
/^f[ie]=/ { file = substr($0, 4); next }
/^totals: / { total = $2; next }
# a cost line "line Ir"; after calls=, the call's inclusive cost
/^[0-9]+ [0-9]+$/ { cost[file ":" $1] += $2; next }

END {
	for (k in cost)
		if (cost[k] >= 0.99 * total)
			delete cost[k]
	printf "%9s %6s  %s\n", "instr/rec", "%", "source line"
	for (i = 0; i < top; i++) {
		best = ""
		for (k in cost)
			if (best == "" || cost[k] > cost[best])
				best = k
		if (best == "")
			break
		n = split(best, at, ":")
		path = substr(best, 1, length(best) - length(at[n]) - 1)
		src = ""
		cmd = "sed -n " at[n] "p '" path "' 2>/dev/null"
		cmd | getline src
		close(cmd)
		gsub(/^[ \t]+/, "", src)
		shown = best
		if (root != "" && index(shown, root) == 1)
			shown = substr(shown, length(root) + 1)
		printf "%9.2f %6.2f  %s  %s\n", cost[best] / records,
		       100 * cost[best] / total, shown, src
		delete cost[best]
	}
}
