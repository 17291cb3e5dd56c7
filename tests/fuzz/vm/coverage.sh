#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The line coverage of lrb.ko under make fuzz-vm, from the gcov counters
# the guest exported (tests/fuzz/vm/90-fuzz.sh, on a kernel with
# CONFIG_GCOV_KERNEL: the debug kernel).
#
#   tests/fuzz/vm/coverage.sh SRC GCDA_ROOT REPORT
#
#   SRC        the copy of the checkout lrb.ko was built in with
#              GCOV_PROFILE=y (build/fuzzvm-debug/src): its .gcno files
#   GCDA_ROOT  where the guest's /sys/kernel/debug/gcov went: the .gcda
#              files under their build paths (GCDA_ROOT/<SRC>/lib/x.gcda)
#   REPORT     the report to write
#
# Counts the executable lines of kernel-module/*.c and lib/*.c built into
# lrb.ko (gcov's "lines"; lib/port_user.c, the user-space port, is not
# built) and those run at least once. Every line not run is listed under
# its function, with the reason that tests/fuzz/vm/unreached.txt gives
# for the lines of the function that match a pattern ("FILE FUNCTION
# /ERE/ REASON"), for the function ("FILE FUNCTION REASON") or for the
# file ("FILE * REASON"), or "no reason recorded".
# Prints the totals and the unreached lines per reason on stdout, and
# "vmtest 90-fuzz/coverage: N passed, M failed": it fails if gcov could
# not read the counters of an object of lrb.ko.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd)
gcda_root=$2
report=$3
reasons=$here/unreached.txt

say() { echo "lrb coverage: $*" >&2; }

command -v gcov >/dev/null || { say "gcov is missing: install gcc (scripts/setup.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0
fail=0
: >"$tmp/lines"
for c in "$src"/kernel-module/*.c "$src"/lib/*.c; do
	rel=${c#"$src"/}
	base=${c##*/}
	base=${base%.c}
	gcno=${c%.c}.gcno
	[ -f "$gcno" ] || continue	# not part of lrb.ko
	gcda=$gcda_root${c%.c}.gcda
	mkdir -p "$tmp/o/$rel"
	cp "$gcno" "$tmp/o/$rel/"
	if [ -f "$gcda" ]; then
		cp "$gcda" "$tmp/o/$rel/"
		pass=$((pass + 1))
	else
		say "no counters for $rel (no $gcda): counted as not run"
		fail=$((fail + 1))
	fi
	# -b: "function NAME called ..." before each function's lines
	if ! (cd "$tmp" && gcov -b -t -o "$tmp/o/$rel" "$c") >"$tmp/gcov.out" 2>"$tmp/gcov.err"; then
		say "gcov failed on $rel:"
		sed 's/^/    /' "$tmp/gcov.err" >&2
		fail=$((fail + 1))
		continue
	fi
	# FILE LINE FUNCTION COUNT SOURCE, for the executable lines of the
	# .c file itself (not the headers whose inline functions it has)
	# (kbuild names lib/ objects kernel-module/../lib/x.c)
	awk -v file="$rel" -v name="$base.c" '
		/^ *-: *0:Source:/ { n = split($0, p, "/"); mine = (p[n] == name); next }
		!mine { next }
		/^function / { fn = $2; next }
		/^(branch|call|unconditional) / { next }
		{
			split($0, f, ":")
			cnt = f[1]; gsub(/ /, "", cnt); sub(/\*$/, "", cnt)
			line = f[2] + 0
			if (cnt == "-" || line == 0)
				next
			text = $0
			sub(/^[^:]*:[^:]*:/, "", text)
			gsub(/\t/, " ", text)
			gsub(/  +/, " ", text)
			if (cnt == "#####" || cnt == "=====")
				cnt = 0
			print file "\t" line "\t" fn "\t" cnt "\t" text
		}' "$tmp/gcov.out" >>"$tmp/lines"
done

awk -F'\t' -v reasons="$reasons" '
	BEGIN {
		# "FILE FUNCTION REASON", or "FILE FUNCTION /ERE/ REASON" for
		# the lines of FUNCTION whose text matches ERE
		while ((getline l < reasons) > 0) {
			if (l ~ /^#/ || l ~ /^[ \t]*$/)
				continue
			split(l, w, " ")
			r = l
			sub(/^[^ ]+ +[^ ]+ +/, "", r)
			if (r ~ /^\//) {
				re = substr(r, 2)
				sub(/\/.*$/, "", re)
				sub(/^\/[^\/]*\/ */, "", r)
				npat++
				pfile[npat] = w[1]; pfn[npat] = w[2]
				pre[npat] = re; pwhy[npat] = r
				continue
			}
			why[w[1] " " w[2]] = r
		}
	}
	function reason(f, fn, text,    i) {
		for (i = 1; i <= npat; i++)
			if (pfile[i] == f && pfn[i] == fn && text ~ pre[i])
				return pwhy[i]
		if ((f " " fn) in why)
			return why[f " " fn]
		return (f " *") in why ? why[f " *"] : ""
	}
	# the same line may be printed for several inlined copies: count it once
	!(($1, $2) in seen) {
		seen[$1, $2] = 1
		order[++n] = $1 SUBSEP $2
		file[n] = $1; line[n] = $2; fn[n] = $3; text[n] = $5
		cnt[$1, $2] = $4 + 0
		next
	}
	{ cnt[$1, $2] += $4 }
	END {
		for (i = 1; i <= n; i++) {
			f = file[i]
			lines[f]++
			total++
			if (cnt[order[i]] > 0) {
				hit[f]++
				reached++
				continue
			}
			r = reason(f, fn[i], text[i])
			if (r == "") {
				r = "no reason recorded: a gap of the fuzzer"
				unexplained++
			}
			if (!(r in rcount))
				rorder[++nr] = r
			rcount[r]++
			miss[r] = miss[r] sprintf("    %s:%d %s:%s\n", f, line[i], fn[i], text[i])
		}
		printf "lrb.ko line coverage under make fuzz-vm (gcov): %d of %d lines reached (%.1f%%)\n", reached, total, total ? 100 * reached / total : 0
		printf "  (the executable lines of kernel-module/*.c and lib/*.c built into lrb.ko;\n"
		printf "   lib/port_user.c is the user-space port, not built)\n\n"
		printf "  %-28s %8s %8s %6s\n", "file", "reached", "lines", "%"
		for (j = 1; j <= n; j++) {
			f = file[j]
			if (f in done)
				continue
			done[f] = 1
			printf "  %-28s %8d %8d %6.1f\n", f, hit[f], lines[f], 100 * hit[f] / lines[f]
		}
		printf "\nunreached lines (%d), by reason (tests/fuzz/vm/unreached.txt); %d with no reason recorded\n", total - reached, unexplained
		for (j = 1; j <= nr; j++) {
			printf "\n  %d lines: %s\n", rcount[rorder[j]], rorder[j]
			printf "%s", miss[rorder[j]]
		}
	}' "$tmp/lines" >"$report"

sed -n '1p' "$report"
awk '/^unreached lines/ { p = 1 } p && /^(unreached|  [0-9]+ lines:)/' "$report"
echo "vmtest 90-fuzz/coverage: $pass passed, $fail failed"
