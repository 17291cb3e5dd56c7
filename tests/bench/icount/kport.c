// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel port's fast path for the instruction-count driver: built with
 * __KERNEL__ on the stand-in headers of kport/ (x86_64 kernel primitives,
 * see kport/kport.h) and the x86_64 kernel's code generation flags (the
 * Makefile), so that lrb_event_write() compiles to what lrb.ko runs, and
 * linked into icount.c's program, whose liblrb provides the out-of-line
 * core. The clock is the kernel's rdtsc_ordered() (lfence; rdtsc): the
 * same read as the user rows' lrb_clock_cycles(), so that the two ports
 * compare; local_clock() adds its own instructions to a kernel client.
 */
#include <lrb/lrb.h>

#include "icount.h"

__thread int kport_preempt_count = KPORT_PREEMPT_ENABLED;
__thread int kport_cpu_number;

void kport_preempt_schedule(void)
{
	/* a count that reached 0 was not PREEMPT_ENABLED plus our disable */
	__builtin_trap();
}

static u64 kport_clock(void)
{
	u32 lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return (u64)hi << 32 | lo;
}

#define KPORT_CONFIG(m)							\
	{								\
		.mode = LRB_MODE_##m,					\
		.header = LRB_HEADER_COMPACT,				\
		.tsc_bits = 27,						\
		.wakeup = LRB_WAKEUP_BY_TIMER,				\
		.cb.clock_read = kport_clock,				\
	}

static const struct lrb_config overwrite = KPORT_CONFIG(OVERWRITE);
static const struct lrb_config discard = KPORT_CONFIG(DISCARD);

/* As icount.c's write_batch(), on the kernel port. */
static __always_inline unsigned long write_batch(const struct lrb_config *cfg,
						 struct lrb_chan *chan, u32 len,
						 unsigned long n)
{
	u8 payload[16] = { 1, 2, 3 };
	unsigned long i, failed = 0;

	for (i = 0; i < n; i++) {
		payload[0] = i;
		failed += !!lrb_event_write(cfg, chan, 1, payload, len);
	}
	return failed;
}

static noinline unsigned long kport_overwrite_16(struct lrb_chan *chan,
						 unsigned long n)
{
	return write_batch(&overwrite, chan, 16, n);
}

static noinline unsigned long kport_discard_16(struct lrb_chan *chan,
					       unsigned long n)
{
	return write_batch(&discard, chan, 16, n);
}

const struct icount_case kport_cases[] = {
	{ "kernel_overwrite_16",
	  "kernel port (x86_64 primitives), overwrite, compact header, 16-byte payload",
	  &overwrite, kport_overwrite_16, false },
	{ "kernel_discard_16",
	  "kernel port (x86_64 primitives), discard, compact header, 16-byte payload, reader drains",
	  &discard, kport_discard_16, true },
};

const unsigned int kport_nr_cases = sizeof(kport_cases) / sizeof(kport_cases[0]);
const unsigned long kport_layout[ICOUNT_LAYOUT_LEN] = ICOUNT_LAYOUT(LRB_PAGE_SIZE);

/* The CPU the driver pinned its thread to: smp_processor_id() there. */
void kport_init(unsigned int cpu)
{
	kport_cpu_number = cpu;
}
