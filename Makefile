# SPDX-License-Identifier: GPL-2.0
#
# lrb top-level Makefile: the user-space library, tests, demo, benchmark
# and the kernel module. The kernel build itself is driven by ./Kbuild.
#
#   make            liblrb (static and shared) and lrb.pc in build/
#   make demo       the main job: record a sample driver in a VM running
#                   Debian's kernel, read the trace with babeltrace2, plot
#   make demo-user  the user-space demo (liblrb)
#   make tools      lrb-record, lrb-dump, lrb-stats
#   make fuzz       the libFuzzer targets (lrb-dump, region recovery, relayd's
#                   answers), FUZZ_SECONDS each (default 600)
#   make check      set up, build and run every test
#   make test-cross the user tests for arm64 and s390x (build/arm64/,
#                   build/s390x/), run under qemu-user by tests/run.sh
#   make bench      lrb beside ftrace's ring buffer and LTTng-UST, kernel
#                   and user space: a table, Documentation/benchmarks.rst
#   make bench-workload  the cost of tracing a workload, lrb beside ftrace,
#                   in a VM (make bench's part workload-vm alone)
#   make icount     the fast path's instructions per record under callgrind,
#                   against tests/bench/icount/reference (ICOUNT_ARGS=
#                   --annotate: where they go; --update: new reference)
#   make module     lrb.ko against linux-headers-6.12 (KDIR= for another)
#   make kunit      KUnit suites in a UML kernel (ARCH=x86_64: qemu, 4 CPUs;
#                   ARCH=arm64: 64 KiB pages, 4 CPUs; ARCH=s390: big-endian,
#                   2 CPUs; ARCH=i386: 32-bit, 2 CPUs)
#   make kunit-debug  KUnit under KASAN + lockdep (UML, x86_64) and KCSAN
#                   + lockdep (x86_64); ARCH= restricts to one arch
#   make vmtest     lrb.ko end to end in Debian's 6.12 kernel under qemu
#                   (4 CPUs): tests/vm/scenarios; SCENARIOS="10 20" picks
#   make vmtest-debug  the same on a KASAN + lockdep + kmemleak kernel
#                   (scripts/debug-kernel.sh, built once); any report fails
#   make vmtest-crash  a persistent flight recorder through panics and a
#                   reset in the VM, recovered after the reboot
#   make fuzz-vm    the syscall fuzzer of lrb.ko's files in the VM for
#                   DURATION (default 10m; CI: DURATION=60s); with
#                   LRB_VM_DEBUG=1 on the debug kernel, with coverage
#   make verify     model-check the reserve/commit/switch/reader protocol
#                   with spin (tests/model)
#   make soak       every consumer and both modes in the VM for DURATION
#                   (default 30m) with CPU hotplug, then exact accounting
#   make install    PREFIX=/usr/local (DESTDIR= honoured)

CC ?= gcc
BUILD := build
PREFIX ?= /usr/local
VERSION := 0.1.0

LIB_SRCS := lib/backend.c lib/channel.c lib/decode.c lib/frontend.c \
	    lib/metadata.c lib/region.c \
	    lib/reader.c lib/port_user.c lib/region_user.c
UNIT_TESTS := unit_api unit_decode unit_ctf unit_event
USER_TESTS := $(UNIT_TESTS) stress kunit_user persist
# The KUnit-form suites (tests/kunit/<name>.c) that also run in user space,
# in kunit_user, through the shim of tests/user/kunit-shim: a new suite
# that runs in both builds is one more name here.
KUNIT_USER_SUITES := api_test account_test alloc_test nesting_test stress_test \
		     wrap_test packet_time_test region_test
KUNIT_SHIM := tests/user/kunit-shim
KUNIT_USER_SRCS := tests/kunit/helpers.c \
		   $(patsubst %,tests/kunit/%.c,$(KUNIT_USER_SUITES)) \
		   $(KUNIT_SHIM)/runner.c $(KUNIT_SHIM)/kernel.c
KUNIT_USER_HEADERS := $(wildcard tests/kunit/*.h $(KUNIT_SHIM)/include/*/*.h)
HEADERS := $(wildcard include/lrb/*.h include/lrb/internal/*.h \
		      include/uapi/lrb/*.h lib/*.h tests/user/*.h tests/common/*.h)

WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
BASE_CFLAGS := -std=gnu11 -g -D_GNU_SOURCE -Iinclude $(WARN) $(CFLAGS)
LIBS := -lurcu-bp -lpthread

# Build variants: release, AddressSanitizer+UBSan, ThreadSanitizer, and
# the release flags cross-built for arm64 (weakly ordered) and s390x
# (big-endian) against Debian's multiarch liburcu, run under qemu-user.
CROSS_ARCHES := arm64 s390x
VARIANTS := rel asan tsan $(CROSS_ARCHES)
CFLAGS_rel := -O2 -fPIC
CROSS_arm64 := aarch64-linux-gnu-
CROSS_s390x := s390x-linux-gnu-
CFLAGS_arm64 := $(CFLAGS_rel)
CFLAGS_s390x := $(CFLAGS_rel)
# GCC's cross compiler if installed, else clang on the same cross binutils,
# libc and libgcc: Debian 12's gcc-<arch>-linux-gnu conflict with
# gcc-multilib, clang does not.
cross_cc = $(if $(shell command -v $(1)gcc 2>/dev/null),$(1)gcc,clang --target=$(1:-=))
CC_arm64 := $(call cross_cc,$(CROSS_arm64))
CC_s390x := $(call cross_cc,$(CROSS_s390x))
# The ASan build also turns the API's debug checks on (LRB_DEBUG).
CFLAGS_asan := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	       -fno-sanitize-recover=all -DLRB_DEBUG
CFLAGS_tsan := -O1 -fsanitize=thread

.PHONY: all lib tools tools-static setup demo demo-user check test-user test-cross fuzz \
	module \
	module-clean bench bench-workload icount \
	kunit kunit-debug vmtest vmtest-debug vmtest-crash fuzz-vm verify soak \
	install clean
all: lib

define variant
$(BUILD)/$(1)/lib/%.o: lib/%.c $(HEADERS)
	@mkdir -p $$(dir $$@)
	$(or $(CC_$(1)),$(CC)) $(BASE_CFLAGS) $(CFLAGS_$(1)) -c $$< -o $$@

$(BUILD)/$(1)/liblrb.a: $(patsubst %.c,$(BUILD)/$(1)/%.o,$(LIB_SRCS))
	@rm -f $$@
	$(if $(CROSS_$(1)),$(CROSS_$(1))ar,$(AR)) rcs $$@ $$^

$(BUILD)/$(1)/tests/%: tests/user/%.c $(BUILD)/$(1)/liblrb.a $(HEADERS)
	@mkdir -p $$(dir $$@)
	$(or $(CC_$(1)),$(CC)) $(BASE_CFLAGS) $(CFLAGS_$(1)) $$< $(BUILD)/$(1)/liblrb.a \
		$(LIBS) -o $$@

# The KUnit-form suites on liblrb: -Wno-sign-compare and
# -Wno-missing-field-initializers as in a kernel build,
# -Wno-format as u64 is unsigned long here and the kernel's %llu fits the
# kernel's u64 (its build checks the formats).
$(BUILD)/$(1)/tests/kunit_user: $(KUNIT_USER_SRCS) $(BUILD)/$(1)/liblrb.a \
				$(HEADERS) $(KUNIT_USER_HEADERS)
	@mkdir -p $$(dir $$@)
	$(or $(CC_$(1)),$(CC)) $(BASE_CFLAGS) $(CFLAGS_$(1)) -Wno-sign-compare -Wno-format \
		-Wno-missing-field-initializers \
		-I$(KUNIT_SHIM)/include $(KUNIT_USER_SRCS) \
		$(BUILD)/$(1)/liblrb.a $(LIBS) -o $$@
endef
$(foreach v,$(VARIANTS),$(eval $(call variant,$(v))))

lib: $(BUILD)/rel/liblrb.a $(BUILD)/rel/liblrb.so $(BUILD)/lrb.pc

$(BUILD)/rel/liblrb.so: $(patsubst %.c,$(BUILD)/rel/%.o,$(LIB_SRCS))
	$(CC) -shared -Wl,-soname,liblrb.so.0 $^ $(LIBS) -o $@

# lrb.pc for PREFIX: make install writes it again for its own PREFIX, so
# that a "make" before "make install PREFIX=..." cannot leave another one.
LRB_PC = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' lrb.pc.in
$(BUILD)/lrb.pc: lrb.pc.in Makefile
	@mkdir -p $(BUILD)
	$(LRB_PC) > $@

setup:
	@scripts/setup.sh

# Programs linked against the release library.
$(BUILD)/rel/%: samples/user/%.c $(BUILD)/rel/liblrb.a $(HEADERS)
	$(CC) $(BASE_CFLAGS) $(CFLAGS_rel) $< $(BUILD)/rel/liblrb.a $(LIBS) -o $@
# The instruction-count driver of tests/bench/icount (make check, make
# icount), with the release flags the reference was taken with; its
# kernel-port rows (kport.c) on the stand-ins of tests/bench/icount/kport
# with the x86_64 kernel's code generation flags (those user space can
# link: not -mcmodel=kernel or the return thunks), hence -no-pie.
ICOUNT_DIR := tests/bench/icount
KPORT_CFLAGS := -D__KERNEL__ -I$(ICOUNT_DIR)/kport -std=gnu11 -g -Iinclude $(WARN) -Wno-sign-compare \
	-O2 -funsigned-char -fno-common -fno-PIE -fno-strict-aliasing -mno-sse \
	-mno-mmx -mno-sse2 -mno-3dnow -mno-avx -fcf-protection=branch \
	-fno-jump-tables -falign-jumps=1 -falign-loops=1 -mno-red-zone \
	-mskip-rax-setup -fno-delete-null-pointer-checks \
	-fno-allow-store-data-races -fstack-protector-strong -fomit-frame-pointer \
	-ftrivial-auto-var-init=zero -falign-functions=16 -fno-strict-overflow
KPORT_OBJ := $(BUILD)/rel/bench-icount-kport.o
$(KPORT_OBJ): $(ICOUNT_DIR)/kport.c $(ICOUNT_DIR)/icount.h \
	      $(wildcard $(ICOUNT_DIR)/kport/*.h $(ICOUNT_DIR)/kport/*/*.h \
			 $(ICOUNT_DIR)/kport/*/*/*.h) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(KPORT_CFLAGS) -c $< -o $@
$(BUILD)/rel/bench-icount: $(ICOUNT_DIR)/icount.c $(ICOUNT_DIR)/icount.h $(KPORT_OBJ) \
			   $(BUILD)/rel/liblrb.a $(HEADERS)
	$(CC) $(BASE_CFLAGS) $(CFLAGS_rel) -no-pie $< $(KPORT_OBJ) $(BUILD)/rel/liblrb.a $(LIBS) -o $@

# make bench's user-space part (tests/bench/user/run.sh): liblrb beside
# LTTng-UST, whose tracepoint provider (tp.c) is linked in.
BENCH_USER_SRCS := $(wildcard tests/bench/user/*.c)
$(BUILD)/rel/bench-user: $(BENCH_USER_SRCS) $(wildcard tests/bench/user/*.h) \
			 $(BUILD)/rel/liblrb.a $(HEADERS)
	$(CC) $(BASE_CFLAGS) $(CFLAGS_rel) -Itests/bench/user $(BENCH_USER_SRCS) \
		$(BUILD)/rel/liblrb.a $(LIBS) -llttng-ust -ldl -o $@

# Tools (tools/<name>/*.c plus tools/common/*.c, on the uapi header and the
# record decoder): build/tools/<name>, and static copies for the VM in
# build/tools-static/<name>.
TOOLS := $(notdir $(wildcard tools/lrb-*))
TOOL_COMMON := $(wildcard tools/common/*.c)
TOOL_HEADERS := $(wildcard tools/common/*.h tools/*/*.h)
TOOL_LIB := lib/decode.c lib/metadata.c lib/region.c
TOOL_CFLAGS := $(BASE_CFLAGS) -O2 -Itools/common

.SECONDEXPANSION:
$(BUILD)/tools/%: $$(wildcard tools/$$*/*.c) $(TOOL_COMMON) $(TOOL_LIB) \
		  $(HEADERS) $(TOOL_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) $(wildcard tools/$*/*.c) $(TOOL_COMMON) $(TOOL_LIB) \
		-lpthread -o $@
$(BUILD)/tools-static/%: $$(wildcard tools/$$*/*.c) $(TOOL_COMMON) $(TOOL_LIB) \
			 $(HEADERS) $(TOOL_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -static $(wildcard tools/$*/*.c) $(TOOL_COMMON) \
		$(TOOL_LIB) -lpthread -o $@

tools: $(addprefix $(BUILD)/tools/,$(TOOLS))
tools-static: $(addprefix $(BUILD)/tools-static/,$(TOOLS))

# The fake cpu files of the tools' host tests (tests/tools/fakecpu.c),
# preloaded into the tools as built.
$(BUILD)/tools-test/fakecpu.so: tests/tools/fakecpu.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 -shared -fPIC $< -ldl -o $@

demo: setup
	@scripts/demo.sh

demo-user: setup
	@$(MAKE) --no-print-directory $(BUILD)/rel/demo
	$(BUILD)/rel/demo $(DEMO_ARGS)

# Every benchmark, one table, Documentation/benchmarks.rst and its plots
# (scripts/bench.sh); BENCH_PARTS="user icount ..." runs some parts only.
bench: setup
	@scripts/bench.sh $(BENCH_PARTS)

# make bench's workload-vm part alone: its table and goal, Documentation/
# left alone.
bench-workload: setup
	@BENCH_DOC=0 scripts/bench.sh workload-vm

icount: setup
	@tests/bench/icount/check.sh $(ICOUNT_ARGS)

test-user: $(foreach v,rel asan,$(addprefix $(BUILD)/$(v)/tests/,$(USER_TESTS))) \
	   $(BUILD)/tsan/tests/stress $(BUILD)/tsan/tests/kunit_user

# The user tests cross-built for arm64 and s390x (tests/run.sh runs them
# under qemu-user), and the tools for s390x: unit_ctf's traces go both
# ways between the little-endian host and a big-endian machine.
test-cross: $(foreach v,$(CROSS_ARCHES),$(addprefix $(BUILD)/$(v)/tests/,$(USER_TESTS))) \
	    $(addprefix $(BUILD)/s390x/tools/,$(TOOLS)) $(BUILD)/tools/lrb-dump
$(BUILD)/s390x/tools/%: $$(wildcard tools/$$*/*.c) $(TOOL_COMMON) $(TOOL_LIB) \
			$(HEADERS) $(TOOL_HEADERS)
	@mkdir -p $(dir $@)
	$(CC_s390x) $(TOOL_CFLAGS) $(wildcard tools/$*/*.c) $(TOOL_COMMON) \
		$(TOOL_LIB) -lpthread -o $@

check: setup
	@$(MAKE) --no-print-directory test-user test-cross
	@tests/run.sh

KDIR ?= $(shell scripts/kdir.sh)
module: $(if $(filter command line,$(origin KDIR)),,setup)
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

module-clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

# KUnit: scripts/kunit.sh builds a kernel from Debian's linux-source-6.12
# with lrb linked in, under ~/.cache/lrb (see Documentation/testing.rst).
# ARCH selects uml (default), x86_64, arm64, s390 or i386 (the last three
# cross-built and run under qemu); kunit-debug without ARCH runs all
# three debug kernels. make's flags are dropped so that the kernel build
# kunit.py starts does not inherit them (nor our ARCH).
KUNIT := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u ARCH scripts/kunit.sh

kunit: setup
	@$(KUNIT) --arch $(or $(ARCH),uml)

kunit-debug: setup
	@rc=0; \
	case "$(ARCH)" in \
	"" | uml | um | x86_64 | x86) ;; \
	*) echo "make kunit-debug: ARCH=$(ARCH) is not supported: use uml or x86_64"; exit 2 ;; \
	esac; \
	case "$(ARCH)" in "" | uml | um) \
		$(KUNIT) --arch uml --debug || rc=1 ;; \
	esac; \
	case "$(ARCH)" in "" | x86_64 | x86) \
		$(KUNIT) --arch x86_64 --debug || rc=1; \
		$(KUNIT) --arch x86_64 --kcsan || rc=1 ;; \
	esac; \
	exit $$rc

# End-to-end tests in a VM: tests/vm/run.sh builds lrb.ko, the test client
# and the checkers, makes an initramfs and boots Debian's kernel image
# (cached under ~/.cache/lrb/vm) under qemu; logs in build/vmtest/.
vmtest: setup
	@KDIR="$(KDIR)" tests/vm/run.sh $(SCENARIOS)

# The same scenarios on the debug kernel: Debian's linux-source-6.12 with
# Debian's config, no modules, plus tests/vm/debug.config (KASAN, lockdep,
# kmemleak, fault injection), built once into ~/.cache/lrb/debug-kernel-*
# by scripts/debug-kernel.sh; a KASAN, lockdep, kmemleak or WARN report
# fails. Logs in build/vmtest-debug/.
vmtest-debug: setup
	@LRB_VM_DEBUG=1 tests/vm/run.sh $(SCENARIOS)

# The crash test of persistent channels (tests/vm/crash/run.sh): the driver
# sample's flight recorder in memory reserved at boot, the guest crashed
# while it writes (panic, panic in hardirq context, reset) and rebooted,
# the previous run recovered and checked; logs in build/vmtest-crash/.
vmtest-crash: setup
	@KDIR="$(KDIR)" tests/vm/crash/run.sh

# The syscall fuzzer (tests/fuzz/vm): lrb-fuzz's workers on the files of a
# channel that is written, destroyed and recreated while CPUs go offline,
# in the VM of make vmtest, for DURATION; logs in build/fuzzvm/. With
# LRB_VM_DEBUG=1, on the debug kernel, with gcov: build/fuzzvm-debug/
# coverage.txt has the lines of kernel-module/ and lib/ reached.
fuzz-vm: setup
	@KDIR="$(KDIR)" tests/fuzz/vm/run.sh $(or $(DURATION),10m)

# The spin model of the write and read protocol (tests/model/lrb.pml):
# every good configuration searched exhaustively, every known-bad variant
# must fail; work files in build/model/.
verify: setup
	@tests/model/verify.sh

# The soak (tests/soak): 14 phases over DURATION of writing, each buffer
# mode and consumer in turn, nested writers on every CPU, a CPU offline for
# 1 s every 4 s; the summary table in build/soak/summary.txt.
soak: setup
	@KDIR="$(KDIR)" tests/soak/run.sh $(or $(DURATION),30m)

# The libFuzzer targets (tests/fuzz/run.sh: lrb-dump's decoding core, the
# recovery of a region file, lrb-record's side of relayd's protocol), each
# for FUZZ_SECONDS (default 600; make check runs 20 s each), or those of
# FUZZ_TARGETS; new inputs kept in build/fuzz/TARGET/corpus.
fuzz: setup
	@tests/fuzz/run.sh $(or $(FUZZ_SECONDS),600) $(FUZZ_TARGETS)

# The user-space build's headers: kernel-only ones (lrb.ko's channels with
# files, the kernel port) stay out of the user prefix.
INSTALL_HEADERS := $(filter-out include/lrb/kchan.h,$(wildcard include/lrb/*.h))
INSTALL_INTERNAL_HEADERS := $(filter-out include/lrb/internal/port_kernel.h, \
				$(wildcard include/lrb/internal/*.h))

install: lib
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/lrb/internal \
		$(DESTDIR)$(PREFIX)/include/uapi/lrb
	install -m 644 $(BUILD)/rel/liblrb.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/rel/liblrb.so \
		$(DESTDIR)$(PREFIX)/lib/liblrb.so.$(VERSION)
	ln -sf liblrb.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/liblrb.so.0
	ln -sf liblrb.so.0 $(DESTDIR)$(PREFIX)/lib/liblrb.so
	install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(PREFIX)/include/lrb/
	install -m 644 $(INSTALL_INTERNAL_HEADERS) \
		$(DESTDIR)$(PREFIX)/include/lrb/internal/
	install -m 644 include/uapi/lrb/*.h $(DESTDIR)$(PREFIX)/include/uapi/lrb/
	$(LRB_PC) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lrb.pc

clean:
	rm -rf $(BUILD)
