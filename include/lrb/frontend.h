/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb write fast paths: reserve, write, commit, try-discard.
 *
 * A writer reserves a slot with one compare-and-swap on the buffer's write
 * position, writes the record into the pages of the slot, and commits by
 * adding the slot's length to the sub-buffer's commit count. The commit
 * that completes a sub-buffer delivers it to readers. Writers never wait
 * and never take a lock; a writer interrupted anywhere by another writer on
 * the same CPU (or, in user space, a signal handler) is unaffected, since
 * each owns the bytes it reserved and commits may complete in any order.
 *
 * Every function takes the client's constant struct lrb_config, so all the
 * tests of its fields below fold away at compile time.
 */
#ifndef _LRB_FRONTEND_H
#define _LRB_FRONTEND_H

#include <lrb/internal/buffer.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct lrb_ctx - one record between reserve and commit
 * @chan: channel written
 * @buf: buffer the slot was reserved in
 * @pages: pages of the sub-buffer holding the slot
 * @prev: write position before the reservation, where a discard returns it
 * @begin: position of the record header
 * @end: position after the payload; the slot extends to the next multiple
 *	of %LRB_RECORD_ALIGN. Not wrapped: 2^%__LRB_POS_BITS for a record that
 *	ends exactly where positions wrap (the write position is then 0)
 * @pos: where the next lrb_write() stores
 * @addr: the address of @pos, while @pos is not on a page boundary
 * @tsc: the record's timestamp
 * @id: event id
 * @len: payload bytes
 * @gen: discard generation of the write position the slot was taken from
 * @idx: index of the sub-buffer holding the slot
 * @k: its index in buf->records (__lrb_records_index())
 *
 * @addr and the last two are what the reservation learnt of the slot's place,
 * carried to the write and the commit so that they never recompute it
 * from the channel's geometry.
 */
struct lrb_ctx {
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	void **pages;
	unsigned long prev;
	unsigned long begin;
	unsigned long end;
	unsigned long pos;
	char *addr;
	uint64_t tsc;
	uint32_t id;
	uint32_t len;
	unsigned long gen;
	unsigned long idx;
	unsigned long k;
};

/*
 * Points of the fast paths where a test runs a nested writer: only the tests
 * that include lib/test_hooks.h (not installed) call anything there.
 */
#ifndef __LRB_TEST_HOOK
static __always_inline void __lrb_no_test_hook(const char *point,
					       struct lrb_ctx *ctx)
{
	(void)point;
	(void)ctx;
}

#define __LRB_TEST_HOOK(point, ctx) __lrb_no_test_hook(#point, ctx)
#endif

int __lrb_reserve_slow(struct lrb_ctx *ctx);
void __lrb_write_slow(const struct lrb_chan *chan, void **pages,
		      unsigned long pos, const void *src, size_t len);
unsigned long __lrb_claim_slow(struct lrb_buf *buf, unsigned long idx,
			       unsigned long lap);
void __lrb_deliver(struct lrb_buf *buf, unsigned long begin);
int __lrb_skip(struct lrb_ctx *ctx);
int __lrb_nesting_exceeded(struct lrb_buf *buf);
int __lrb_bad_cfg(const struct lrb_chan *chan, const char *caller);

/*
 * Debug builds: is @cfg the configuration @chan was created with? A kernel
 * channel with files keeps a copy of it, so the fields are compared.
 */
static __always_inline bool __lrb_cfg_is_chans(const struct lrb_config *cfg,
					       const struct lrb_chan *chan)
{
	const struct lrb_config *c = chan->cfg;

	return cfg == c ||
	       (cfg->mode == c->mode && cfg->alloc == c->alloc &&
		cfg->wakeup == c->wakeup && cfg->header == c->header &&
		cfg->tsc_bits == c->tsc_bits &&
		cfg->cb.clock_read == c->cb.clock_read &&
		cfg->cb.packet_begin == c->cb.packet_begin &&
		cfg->cb.packet_end == c->cb.packet_end);
}

static __always_inline uint32_t __lrb_compact_id_extended(const struct lrb_config *cfg)
{
	return (1U << (32 - cfg->tsc_bits)) - 1;
}

/* The compact id of a skip record; ids from it on take the extended form. */
static __always_inline uint32_t __lrb_compact_id_skip(const struct lrb_config *cfg)
{
	return __lrb_compact_id_extended(cfg) - (cfg->tsc_bits < 31);
}

/* Header bytes for event @id, @delta clock ticks after the last record. */
static __always_inline uint32_t __lrb_header_len(const struct lrb_config *cfg, uint32_t id,
						 uint64_t delta)
{
	if (cfg->header == LRB_HEADER_COMPACT) {
		if (__lrb_likely(id < __lrb_compact_id_skip(cfg) &&
				 !(delta >> cfg->tsc_bits)))
			return LRB_COMPACT_HEADER_SIZE;
	} else if (__lrb_likely(id < LRB_LARGE_ID_SKIP && !(delta >> 32))) {
		return LRB_LARGE_HEADER_SIZE;
	}
	return LRB_EXTENDED_HEADER_SIZE;
}

/* Ring bytes a record takes: header and payload, padded to alignment. */
static __always_inline unsigned long __lrb_slot_len(uint32_t header_len, uint32_t len)
{
	return __lrb_align((unsigned long)header_len + len);
}

static __always_inline char *__lrb_ctx_addr(const struct lrb_ctx *ctx,
					    unsigned long pos)
{
	/* sub-buffers are whole pages, aligned in positions */
	return (char *)ctx->pages[(pos >> LRB_PAGE_SHIFT) & ctx->chan->page_mask] +
	       (pos & (LRB_PAGE_SIZE - 1));
}

/**
 * lrb_write - copy payload bytes into the reserved record
 * @ctx: the reservation
 * @src: bytes to copy
 * @len: how many; all writes of a record add up to the length reserved
 *
 * Copies at the record's write cursor and advances it; a copy that crosses
 * or ends on a page boundary, or starts on one, goes out of line.
 *
 * Context: the reserving writer's, between lrb_reserve() and lrb_commit().
 */
static __always_inline void lrb_write(struct lrb_ctx *ctx, const void *src,
				      size_t len)
{
	/* @pos - 1: a cursor on a boundary has no address in @addr */
	if (__lrb_likely(((ctx->pos - 1) & (LRB_PAGE_SIZE - 1)) + len < LRB_PAGE_SIZE)) {
		memcpy(ctx->addr, src, len);
		ctx->addr += len;
	} else {
		/* by value: @ctx's address never escapes the fast path */
		__lrb_write_slow(ctx->chan, ctx->pages, ctx->pos, src, len);
		if ((ctx->pos + len) & (LRB_PAGE_SIZE - 1))
			ctx->addr = __lrb_ctx_addr(ctx, ctx->pos + len);
	}
	ctx->pos += len;
}

static __always_inline void __lrb_write_record_header(const struct lrb_config *cfg,
						      struct lrb_ctx *ctx,
						      uint32_t header_len)
{
	uint32_t h[4];

	if (cfg->header == LRB_HEADER_COMPACT &&
	    header_len == LRB_COMPACT_HEADER_SIZE) {
		/* 4-byte aligned at the slot's start, so never across a page */
		*(uint32_t *)ctx->addr =
			ctx->id | (uint32_t)ctx->tsc << (32 - cfg->tsc_bits);
		ctx->addr += LRB_COMPACT_HEADER_SIZE;
		ctx->pos += LRB_COMPACT_HEADER_SIZE;
		return;
	}
	if (cfg->header == LRB_HEADER_LARGE &&
	    header_len == LRB_LARGE_HEADER_SIZE) {
		h[0] = ctx->id;
		h[1] = (uint32_t)ctx->tsc;
		lrb_write(ctx, h, LRB_LARGE_HEADER_SIZE);
		return;
	}
	h[0] = cfg->header == LRB_HEADER_COMPACT ? __lrb_compact_id_extended(cfg) :
						   LRB_LARGE_ID_EXTENDED;
	h[1] = ctx->id;
	memcpy(&h[2], &ctx->tsc, sizeof(ctx->tsc));
	lrb_write(ctx, h, LRB_EXTENDED_HEADER_SIZE);
}

/*
 * Overwrite mode: make sure sub-buffer @idx is marked as written in lap
 * @lap before touching its pages, so a reader can no longer swap
 * it out; return its slot. Usually one load and a test.
 */
static __always_inline unsigned long __lrb_claim(struct lrb_buf *buf,
						 unsigned long idx,
						 unsigned long lap)
{
	unsigned long w = __lrb_atomic_read(&buf->wsb[idx]);

	if (__lrb_unlikely((w & ~__LRB_SLOT_MASK) != lap << __LRB_WSB_TAG_SHIFT))
		return __lrb_claim_slow(buf, idx, lap);
	return w & __LRB_SLOT_MASK;
}

/*
 * Record in @ctx where its slot lies, from the channel's geometry (@order:
 * subbuf_order, @nr_order: num_subbuf_order, which the fast path has at
 * hand), point it at the slot's pages and write the record header.
 */
static __always_inline void __lrb_open_record(const struct lrb_config *cfg,
					      struct lrb_ctx *ctx, uint32_t header_len,
					      unsigned int order, unsigned int nr_order)
{
	const struct lrb_chan *chan = ctx->chan;
	unsigned long sb = ctx->begin >> order;
	unsigned long lap = sb >> nr_order;
	unsigned long slot;

	/* loads: cheaper than variable shifts */
	ctx->idx = sb & chan->idx_mask;
	ctx->k = sb & chan->records_mask;
	if (cfg->mode == LRB_MODE_OVERWRITE)
		slot = __lrb_claim(ctx->buf, ctx->idx, lap);
	else
		slot = ctx->idx;
	ctx->pages = __lrb_slot_pages(ctx->chan, ctx->buf, slot);
	ctx->pos = ctx->begin;
	ctx->addr = __lrb_ctx_addr(ctx, ctx->begin);
	__lrb_write_record_header(cfg, ctx, header_len);
}

/* never written: C++17 has neither compound literals nor designated initializers */
static struct lrb_ctx __lrb_ctx_zero;

/*
 * A reservation refused before the slow path is left zeroed (one the slow
 * path refused holds what it left in its copy): so every path out of
 * lrb_reserve() sets all of @ctx, which the compiler's analysis of
 * uninitialized fields needs once @ctx lives in registers (it cannot
 * follow the return value to the caller's test).
 */
static __always_inline int __lrb_reserve_failed(struct lrb_ctx *ctx, int ret)
{
	*ctx = __lrb_ctx_zero;
	return ret;
}

/*
 * __lrb_reserve_slow() on a copy of @ctx: the address of a client's
 * reservation, usually a local of the function that writes the record,
 * never escapes the fast path, so the compiler keeps it in registers
 * across the atomics of reserve and commit. The slow path fills the other
 * fields and leaves these four as they were: taken back from the caller's
 * values, they stay what the compiler knows of them (a constant length
 * folds the commit's padding away).
 */
static __always_inline int __lrb_reserve_slow_copy(struct lrb_ctx *ctx)
{
	struct lrb_ctx c = __lrb_ctx_zero;
	int ret;

	c.chan = ctx->chan;
	c.buf = ctx->buf;
	c.id = ctx->id;
	c.len = ctx->len;
	ret = __lrb_reserve_slow(&c);

	c.chan = ctx->chan;
	c.buf = ctx->buf;
	c.id = ctx->id;
	c.len = ctx->len;
	*ctx = c;
	return ret;
}

/**
 * lrb_reserve - reserve space for one record
 * @cfg: the client's constant configuration
 * @chan: channel to write
 * @ctx: filled with the reservation
 * @id: event id
 * @len: payload bytes, at least 1
 *
 * On success the record header is written, and the caller writes @len
 * payload bytes with lrb_write() and calls lrb_commit() (or lrb_discard()).
 * Until then the caller must not sleep; in the kernel
 * preemption stays disabled.
 *
 * The record header takes %LRB_COMPACT_HEADER_SIZE bytes (compact layout)
 * or %LRB_LARGE_HEADER_SIZE (large) when the id fits and the clock moved
 * less than 2^tsc_bits (compact) or 2^32 (large) ticks since the last
 * record committed in the buffer, else %LRB_EXTENDED_HEADER_SIZE. A
 * buffer's first record is measured against 0, so it takes the extended
 * header with any real clock, as does the first record after a pause of
 * 2^tsc_bits ticks (134 ms of nanoseconds with 27 bits). Payloads start
 * %LRB_RECORD_ALIGN-byte aligned.
 *
 * Context: any context, NMI included (in user space: any thread, signal
 * handlers included); does not sleep. @cfg must be the configuration
 * @chan was created with: a debug build (CONFIG_LRB_DEBUG in the kernel,
 * LRB_DEBUG defined in user space) checks it and fails with -EINVAL,
 * uncounted, and an error message; other builds do not check.
 * Return: 0 on success, or a negative error; every error but -EINVAL is
 * counted in the buffer's loss counters: -EINVAL if @len is 0, -ENOBUFS if
 * the buffer is full (discard mode), -EAGAIN if the sub-buffer to write
 * next is still being committed, -EMSGSIZE if the record does not fit in a
 * sub-buffer, -EBUSY if writers nest more than %LRB_MAX_NESTING deep.
 */
static __always_inline int lrb_reserve(const struct lrb_config *cfg,
				       struct lrb_chan *chan,
				       struct lrb_ctx *ctx, uint32_t id, uint32_t len)
{
	bool per_cpu = __lrb_per_cpu(cfg);
	unsigned long offset, begin, end;
	unsigned int order, nr_order;
	struct lrb_buf *buf;
	uint32_t header_len;
	int ret;

	if (__lrb_unlikely(!len))
		return __lrb_reserve_failed(ctx, -EINVAL);
	if (__LRB_DEBUG && __lrb_unlikely(!__lrb_cfg_is_chans(cfg, chan)))
		return __lrb_reserve_failed(ctx, __lrb_bad_cfg(chan, "lrb_reserve"));
	__lrb_port_writer_begin();
	buf = __lrb_this_cpu_buf(cfg, chan);
	if (__lrb_unlikely(__lrb_port_nesting_inc(buf->cpu, chan->nr_bufs) >
			   LRB_MAX_NESTING)) {
		ret = __lrb_reserve_failed(ctx, __lrb_nesting_exceeded(buf));
		goto fail;
	}
	ctx->chan = chan;
	ctx->buf = buf;
	ctx->id = id;
	ctx->len = len;

	/* the geometry, once: every atomic below reloads what is in memory */
	order = chan->subbuf_order;
	nr_order = chan->num_subbuf_order;
	offset = __lrb_v_read(per_cpu, &buf->offset);
	__LRB_TEST_HOOK(AFTER_READ_POS, ctx);
	/*
	 * The header of @id after a short delta: a constant for a constant
	 * @id. A record that needs the extended header for its delta alone
	 * (the first after a pause) takes the slow path.
	 */
	header_len = __lrb_header_len(cfg, id, 0);
	/*
	 * Positions here keep the discard generation in their top bits:
	 * @begin and @end carry nothing into it when the test below passes.
	 * The slot must not start the sub-buffer (the slow path opens the
	 * packet) and must end inside it, not on its boundary: the byte
	 * before the slot and the one after it lie in the same sub-buffer.
	 * An alignment that carries into the generation (begin wraps to
	 * 0) or a slot that reaches the wrap of positions fails it too. On
	 * 32-bit, begin + len wraps for len near 4 GiB, and could land back
	 * in this sub-buffer: the slow path refuses such a record.
	 */
	begin = __lrb_align(offset);
	if (__lrb_unlikely(((begin - 1) ^ (begin + __lrb_slot_len(header_len, len))) &
			   chan->base_mask ||
			   (sizeof(long) < sizeof(uint64_t) &&
			    len > (1UL << __LRB_MAX_SUBBUF_ORDER))))
		goto slow;
	ctx->tsc = cfg->cb.clock_read();
	if (__lrb_unlikely(__lrb_header_len(cfg, id, ctx->tsc -
					    __lrb_v64_read(per_cpu, &buf->last_tsc)) !=
			   header_len))
		goto slow;
	end = begin + header_len + len;
	if (__lrb_unlikely(__lrb_v_cmpxchg(per_cpu, &buf->offset, offset, end) != offset))
		goto slow;
	ctx->gen = offset & __LRB_OFFSET_GEN_MASK;
	ctx->prev = __lrb_write_pos(offset);
	ctx->begin = __lrb_write_pos(begin);
	/* no carry into the generation, as tested: one mask is enough */
	ctx->end = ctx->begin + header_len + len;
	__LRB_TEST_HOOK(AFTER_CAS, ctx);
	__lrb_open_record(cfg, ctx, header_len, order, nr_order);
	return 0;

slow:
	ret = __lrb_reserve_slow_copy(ctx);
	if (__lrb_likely(!ret))
		return 0;
fail:
	__lrb_port_nesting_dec();
	__lrb_port_writer_end();
	return ret;
}

/**
 * lrb_commit - make a reserved record visible to readers
 * @cfg: the client's constant configuration
 * @ctx: the reservation, its payload written
 *
 * Zeroes the alignment padding after the payload and adds the slot to the
 * sub-buffer's commit count; the commit that completes a sub-buffer
 * delivers it (and, with %LRB_WAKEUP_BY_WRITER, wakes its reader: by
 * irq_work in the kernel, a futex wake in user space).
 *
 * Context: the reserving writer's; does not sleep.
 */
static __always_inline void lrb_commit(const struct lrb_config *cfg,
				       struct lrb_ctx *ctx)
{
	/* slots and record headers are aligned: the payload alone pads */
	unsigned long pad = -(unsigned long)ctx->len & (LRB_RECORD_ALIGN - 1);
	unsigned long slot_end = ctx->end + pad;
	struct lrb_chan *chan = ctx->chan;
	struct lrb_buf *buf = ctx->buf;
	unsigned long cc;

	if (pad)
		memset(__lrb_ctx_addr(ctx, ctx->end), 0, pad);
	/*
	 * Only committed records become the reference for the compact
	 * timestamps of later ones: a discarded reservation never does, and
	 * every value stored here precedes, in buffer order, any writer that
	 * reads it, so the choice of header errs only towards the full form.
	 */
	__lrb_v64_set(__lrb_per_cpu(cfg), &buf->last_tsc, ctx->tsc);
	__lrb_v_inc(__lrb_per_cpu(cfg), &buf->records[ctx->k]);
	/* the record's bytes before the count that publishes them */
	__lrb_smp_wmb();
	__LRB_TEST_HOOK(BEFORE_COMMIT_ADD, ctx);
	cc = __lrb_v_add_return(__lrb_per_cpu(cfg), slot_end - ctx->begin,
				&buf->commit[ctx->idx]);
	if (cfg->persistent)
		__lrb_commit_mark(__lrb_per_cpu(cfg), buf, ctx->begin, cc);
	__LRB_TEST_HOOK(AFTER_COMMIT_ADD, ctx);
	if (__lrb_unlikely(__lrb_commit_ends(chan, cc)))
		__lrb_deliver(buf, ctx->begin);
	__lrb_port_nesting_dec();
	__lrb_port_writer_end();
}

/**
 * lrb_try_discard - take back the last reservation instead of committing
 * @cfg: the client's constant configuration
 * @ctx: the reservation
 *
 * Succeeds only if nothing was reserved in the buffer after @ctx. The
 * position moves back, and its discard generation forward.
 *
 * Context: the reserving writer's; does not sleep.
 * Return: 0 if the reservation is gone (do not commit it), -EBUSY if a
 * later record exists: the caller must commit this one.
 */
static __always_inline int lrb_try_discard(const struct lrb_config *cfg,
					   struct lrb_ctx *ctx)
{
	unsigned long gen = (ctx->gen + __LRB_OFFSET_GEN_ONE) & __LRB_OFFSET_GEN_MASK;
	/* the end is not wrapped, the write position after it is */
	unsigned long offset = (ctx->end & __LRB_POS_MASK) | ctx->gen;

	if (__lrb_v_cmpxchg(__lrb_per_cpu(cfg), &ctx->buf->offset, offset,
			    ctx->prev | gen) != offset)
		return -EBUSY;
	__lrb_port_nesting_dec();
	__lrb_port_writer_end();
	return 0;
}

/**
 * lrb_discard - drop a reservation instead of committing it
 * @cfg: the client's constant configuration
 * @ctx: the reservation
 *
 * The last reservation of the buffer is taken back, as lrb_try_discard()
 * does. Any other becomes a skip record: readers (lrb's decoder, lrb-dump,
 * babeltrace2) pass over it, and it counts neither as a record written nor
 * as one lost. The skipped bytes stay in the packet until it is delivered,
 * when the writer that completes it merges adjacent skip records into one
 * and drops those that end the packet's content.
 *
 * Context: the reserving writer's; does not sleep.
 * Return: 0 if the record is gone (do not commit it); -EBUSY, only for a
 * reservation that is not the last one in a channel with the compact
 * header layout and tsc_bits 31, whose 1-bit ids leave none for a skip
 * record: the caller must then commit it.
 */
static __always_inline int lrb_discard(const struct lrb_config *cfg,
				       struct lrb_ctx *ctx)
{
	__LRB_TEST_HOOK(BEFORE_DISCARD, ctx);
	if (__lrb_likely(!lrb_try_discard(cfg, ctx)))
		return 0;
	if (cfg->header == LRB_HEADER_COMPACT && cfg->tsc_bits == 31)
		return -EBUSY;
	return __lrb_skip(ctx);
}

/**
 * lrb_event_write - reserve, copy and commit one record
 * @cfg: the client's constant configuration
 * @chan: channel to write
 * @id: event id
 * @payload: payload bytes
 * @len: payload length
 *
 * Context: as lrb_reserve().
 * Return: as lrb_reserve().
 */
static __always_inline int lrb_event_write(const struct lrb_config *cfg,
					   struct lrb_chan *chan, uint32_t id,
					   const void *payload, uint32_t len)
{
	struct lrb_ctx ctx __lrb_uninitialized;
	int ret;

	ret = lrb_reserve(cfg, chan, &ctx, id, len);
	if (__lrb_unlikely(ret))
		return ret;
	lrb_write(&ctx, payload, len);
	lrb_commit(cfg, &ctx);
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* _LRB_FRONTEND_H */
