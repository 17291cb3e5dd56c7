/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What icount.c (the user port) and kport.c (the kernel port, on the
 * stand-ins of kport/) share: the measured configurations, and the layout
 * of the structures both fast paths touch.
 */
#ifndef _LRB_ICOUNT_H
#define _LRB_ICOUNT_H

#include <lrb/lrb.h>

/**
 * struct icount_case - one measured configuration
 * @key: dump name, and the BENCH key without its "_ir" suffix
 * @label: what it measures
 * @cfg: its configuration (for channel creation)
 * @batch: its specialised writing loop
 * @drain: read the buffer empty between batches (discard mode)
 */
struct icount_case {
	const char *key;
	const char *label;
	const struct lrb_config *cfg;
	unsigned long (*batch)(struct lrb_chan *chan, unsigned long n);
	bool drain;
};

/*
 * Offsets and sizes of what the fast paths and the out-of-line core share,
 * as one translation unit sees them: the two ports must agree on them.
 */
#define ICOUNT_LAYOUT(x)						\
	{								\
		offsetof(struct lrb_buf, offset),			\
		offsetof(struct lrb_buf, last_tsc),			\
		offsetof(struct lrb_buf, commit),			\
		offsetof(struct lrb_buf, records),			\
		offsetof(struct lrb_buf, wsb),				\
		offsetof(struct lrb_buf, mark),				\
		offsetof(struct lrb_buf, pages),			\
		offsetof(struct lrb_buf, chan),				\
		offsetof(struct lrb_buf, lost_nest),			\
		offsetof(struct lrb_chan, subbuf_order),		\
		offsetof(struct lrb_chan, num_subbuf_order),		\
		offsetof(struct lrb_chan, pages_per_subbuf),		\
		offsetof(struct lrb_chan, end_mask),			\
		sizeof(union __lrb_v),					\
		sizeof(union __lrb_v64),				\
		sizeof(struct __lrb_atomic),				\
		sizeof(struct lrb_ctx),					\
		x							\
	}
#define ICOUNT_LAYOUT_LEN 18

extern const struct icount_case kport_cases[];
extern const unsigned int kport_nr_cases;
extern const unsigned long kport_layout[ICOUNT_LAYOUT_LEN];
void kport_init(unsigned int cpu);

#endif /* _LRB_ICOUNT_H */
