#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The user-space library as a user gets it: make install into a fresh
# prefix, then
#  - every installed header compiles on its own, and all of them together
#    with the fast paths and LRB_EVENT() used, as C (-std=c11 -pedantic) and as C++
#    (-std=c++17 -pedantic), -Wall -Wextra -Werror, with the flags of
#    pkg-config --cflags lrb;
#  - none of the kernel's names (u32, PAGE_SIZE, likely, READ_ONCE...) nor
#    the implementation's old public names (lrb_reserve_slow, the test
#    hooks...) reaches the program: each is defined again by the program,
#    which does not compile if a header declared it;
#  - no kernel-only header (kchan.h, the kernel port) is installed;
#  - the examples of Documentation/api.rst, extracted from it, are built
#    and run with the commands printed there (pkg-config against the
#    prefix), and their accounting lines are checked;
#  - neither the headers nor pkg-config --cflags define a feature macro
#    (_GNU_SOURCE, _LGPL_SOURCE) for the program: strict C11 gets the
#    out-of-line clock.
#
#   tests/install/run.sh
#
# Ends with "install: N passed, M failed"; exit status 1 on failure.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
src=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
fail() {
	echo "install: FAIL: $*"
	failed=$((failed + 1))
}
finish() {
	echo "install: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

PREFIX=$tmp/prefix
if ! out=$(make --no-print-directory -s install PREFIX="$PREFIX" 2>&1); then
	echo "$out"
	fail "make install PREFIX=$PREFIX"
	finish
fi
ok
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
if ! cflags=$(pkg-config --cflags lrb); then
	fail "pkg-config --cflags lrb with PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
	finish
fi

# --- kernel-only headers stay out ------------------------------------------
for h in lrb/kchan.h lrb/internal/port_kernel.h; do
	if [ -e "$PREFIX/include/$h" ]; then
		fail "the kernel-only header $h is installed"
	else
		ok
	fi
done

# --- each header alone ------------------------------------------------------
mapfile -t headers < <(cd "$PREFIX/include" && find . -name '*.h' | sed 's|^\./||' | sort)
[ ${#headers[@]} -ge 8 ] || fail "only ${#headers[@]} headers installed: ${headers[*]}"
C_FLAGS=(-std=c11 -pedantic -Wall -Wextra -Werror)
CXX_FLAGS=(-std=c++17 -pedantic -Wall -Wextra -Werror)
# shellcheck disable=SC2086 # pkg-config's flags are words
for h in "${headers[@]}"; do
	printf '#include <%s>\n' "$h" >"$tmp/one.c"
	if out=$(gcc $cflags "${C_FLAGS[@]}" -c "$tmp/one.c" -o "$tmp/one.o" 2>&1); then
		ok
	else
		echo "$out"
		fail "<$h> alone does not compile as C11"
	fi
	if out=$(g++ $cflags "${CXX_FLAGS[@]}" -x c++ -c "$tmp/one.c" -o "$tmp/one.o" 2>&1); then
		ok
	else
		echo "$out"
		fail "<$h> alone does not compile as C++17"
	fi
done

# --- all of them, the fast paths used, and no leaked name ---------------------
# Macros the kernel (or lrb's user port, before) defines: each must be
# undefined after the headers.
leak_macros=(PAGE_SIZE PAGE_SHIFT likely unlikely BIT READ_ONCE WRITE_ONCE
	     barrier smp_wmb smp_rmb smp_mb EXPORT_SYMBOL EXPORT_SYMBOL_GPL
	     noinline __cold ____cacheline_aligned ARRAY_SIZE min max
	     LRB_TEST_HOOKS LRB_TEST_HOOK LRB_PORT_TEST_HOOKS)
# Types and functions: the program declares each as something else, which
# fails to compile if a header declared it.
leak_idents=(u8 u16 u32 u64 s8 s16 s32 s64 lrb_reserve_slow lrb_write_slow
	     lrb_claim_slow lrb_deliver lrb_nesting_exceeded lrb_nesting
	     lrb_test_hook lrb_port_fail_alloc_after lrb_port_live_allocs
	     lrb_channel_start_at lrb_chan_buf lrb_channel_buf lrb_port_cpu
	     lrb_v_cmpxchg lrb_pos_add lrb_align lrb_header_len)
{
	for h in "${headers[@]}"; do
		printf '#include <%s>\n' "$h"
	done
	for m in "${leak_macros[@]}"; do
		printf '#ifdef %s\n#error "the installed headers define %s"\n#endif\n' "$m" "$m"
	done
	# feature macros are the program's to choose (g++ predefines _GNU_SOURCE)
	printf '#if defined(_LGPL_SOURCE) || (!defined(__cplusplus) && defined(_GNU_SOURCE))\n'
	printf '#error "the installed headers or pkg-config --cflags define a feature macro"\n#endif\n'
	for i in "${leak_idents[@]}"; do
		printf 'char %s[] = "the program'"'"'s own";\n' "$i"
	done
	cat <<'EOF'
static const struct lrb_config cfg = {
	LRB_MODE_DISCARD, LRB_ALLOC_PER_CPU, LRB_WAKEUP_BY_WRITER,
	LRB_HEADER_COMPACT, 27, { lrb_clock_default, NULL, NULL }, false,
};

/* LRB_EVENT() with every kind of field, expanded in C and in C++ */
static const struct lrb_enum_label ops[] = { { "READ", 0 }, { "WRITE", 1 } };
LRB_EVENT(every_kind, 40,
	  LRB_INTEGER(uint64_t, a), LRB_ENUM(uint8_t, op, ops),
	  LRB_FLOAT(double, d), LRB_ARRAY(int16_t, arr, 2),
	  LRB_ARRAY_TEXT(tag, 4), LRB_INTEGER(uint16_t, n),
	  LRB_SEQUENCE(int32_t, seq, n), LRB_SEQUENCE_TEXT(text, n),
	  LRB_STRING(s));
/* and with one field, the common case (variadic macros, -pedantic) */
LRB_EVENT(one, 2, LRB_INTEGER(uint32_t, v));

int main(void)
{
	const struct lrb_event_desc *const events[] = { &lrb_event_every_kind,
							&lrb_event_one };
	struct lrb_metadata_attr meta = { 1000000000, 0, 0, events, 2 };
	struct lrb_chan_attr attr = { 4 * LRB_PAGE_SIZE, 4, 1, 0, NULL,
				      NULL, 0, 0, NULL, 0 };
	const int16_t arr[2] = { -1, 1 };
	const int32_t seq[2] = { 1, 2 };
	struct lrb_chan *chan;
	struct lrb_ctx ctx;
	uint64_t v = 1;
	int ret;

	ret = lrb_channel_create(&cfg, &attr, &chan);
	if (ret)
		return 1;
	if (!lrb_reserve(&cfg, chan, &ctx, 1, sizeof(v))) {
		lrb_write(&ctx, &v, sizeof(v));
		lrb_commit(&cfg, &ctx);
	}
	if (!lrb_reserve(&cfg, chan, &ctx, 1, sizeof(v)) &&
	    lrb_try_discard(&cfg, &ctx))
		lrb_commit(&cfg, &ctx);
	ret = lrb_event_write(&cfg, chan, 1, &v, sizeof(v));
	if (!ret)
		ret = lrb_write_every_kind(&cfg, chan, v, 1, 0.5, arr, "abcd",
					   2, seq, "ab", "s");
	if (!ret)
		ret = lrb_write_one(&cfg, chan, 7);
	if (!ret && lrb_metadata_format(chan, &meta, NULL, 0) <= 0)
		ret = 1;
	lrb_channel_destroy(chan);
	return ret || sizeof(u8) + sizeof(lrb_deliver) == 0;
}
EOF
} >"$tmp/all.c"
libs=$(pkg-config --libs lrb)
# shellcheck disable=SC2086
if out=$(gcc $cflags "${C_FLAGS[@]}" "$tmp/all.c" -o "$tmp/all-c" $libs 2>&1); then
	ok
	if "$tmp/all-c"; then ok; else fail "the C program on every header did not run"; fi
else
	echo "$out"
	fail "every installed header, the fast paths used: not clean C11 (-pedantic -Wall -Wextra -Werror)"
fi
# shellcheck disable=SC2086
if out=$(g++ $cflags "${CXX_FLAGS[@]}" -x c++ "$tmp/all.c" -x none -o "$tmp/all-cxx" $libs 2>&1); then
	ok
	if "$tmp/all-cxx"; then ok; else fail "the C++ program on every header did not run"; fi
else
	echo "$out"
	fail "every installed header, the fast paths used: not clean C++17 (-pedantic -Wall -Wextra -Werror)"
fi

# --- the examples of Documentation/api.rst, as printed there -----------------
# NAME.c: the literal block after "``NAME.c``::", one tab stripped; the
# commands: the "$ " lines of the section holding it, before it; the
# output: the line after "$ ./NAME" there.
doc=$src/Documentation/api.rst
mapfile -t examples < <(sed -n 's/^``\([a-z_]*\)\.c``::$/\1/p' "$doc")
if [ ${#examples[@]} -lt 2 ]; then
	fail "found ${#examples[@]} examples (\`\`NAME.c\`\`::) in $doc, want 2"
	finish
fi
for name in "${examples[@]}"; do
	ex=$tmp/example-$name
	mkdir -p "$ex"
	marker="\`\`$name.c\`\`::"
	awk -v m="$marker" '$0 == m { on = 1; next }
	     on && /^[^\t]/ && NF { exit }
	     on { sub(/^\t/, ""); print }' "$doc" >"$ex/$name.c"
	mapfile -t cmds < <(awk -v m="$marker" '/^[-=]+$/ { n = 0 } $0 == m { exit }
				 /^\t\$ / { sub(/^\t\$ /, ""); c[n++] = $0 }
				 END { for (i = 0; i < n; i++) print c[i] }' "$doc")
	expect=$(awk -v m="$marker" -v run="\\t\$ ./$name" '
		 /^[-=]+$/ { e = "" } $0 == m { print e; exit }
		 prev == run { e = $0; sub(/^\t/, "", e) } { prev = $0 }' "$doc")
	if [ "$(grep -c main "$ex/$name.c")" -lt 1 ] || [ ${#cmds[@]} -lt 2 ] ||
	   [ -z "$expect" ]; then
		fail "no $name.c, build commands or output line found in $doc"
		continue
	fi
	# the output line's shape, with its counts as numbers
	pattern=$(sed -E 's/[0-9]+/[0-9]+/g' <<<"$expect")
	script=$(printf '%s\n' "${cmds[@]}")
	if out=$(cd "$ex" && env -u LD_LIBRARY_PATH PREFIX="$PREFIX" bash -e -c "$script" 2>&1); then
		ok
		if grep -Eqx "$pattern" <<<"$out"; then
			ok
		else
			echo "$out"
			fail "$name.c printed no line like: $expect"
		fi
	else
		echo "$out"
		fail "$name.c of $doc, built and run as printed there:"$'\n'"$script"
	fi
done

finish
