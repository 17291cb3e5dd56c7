/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb KUnit: what the suites share (helpers.c).
 *
 * - A test clock the tests set (lrbk_set_clock()), so that every timestamp
 *   and record header form is known in advance.
 * - The eight configurations (discard/overwrite x per-CPU/global x
 *   compact/large) as static const structs, and a KUnit parameter
 *   description for them.
 * - The payload convention of the user-space tests (tests/common/payload.h).
 * - A model of the records written, which the reader matches in order.
 * - A checking reader: every packet taken is copied, its header, padding
 *   and records are verified, records are matched against the model.
 * - Channels destroyed when the test ends, whatever happens.
 *
 * Nothing here may be called with preemption or interrupts disabled:
 * KUnit expectations allocate when they fail.
 */
#ifndef _LRB_KUNIT_H
#define _LRB_KUNIT_H

#include <kunit/test.h>

#include "../../lib/test_hooks.h"
#include <lrb/lrb.h>
#include <lrb/decode.h>

#include "../common/payload.h"

/*
 * A per-CPU channel needs exactly nr_cpu_ids buffers in the kernel; the
 * user port takes any number (a CPU writes buffer cpu % nr_bufs).
 */
#ifdef __KERNEL__
#define LRBK_EXACT_NR_CPUS true
#else
#define LRBK_EXACT_NR_CPUS false
#endif

/*
 * Sizes named as on 4 KiB pages. A sub-buffer is at least a page, so with
 * larger pages (arm64's 64 KiB) the sub-buffers, and the records that
 * fill them, are LRBK_SCALE times larger: each packet still takes as many
 * records as on x86, and the suites count the same.
 */
#define LRBK_SCALE (PAGE_SIZE / 4096)
#define LRBK_SB4K (4096UL * LRBK_SCALE)
#define LRBK_SB16K (16384UL * LRBK_SCALE)
#define LRBK_LEN(n) ((n) * LRBK_SCALE)
#define LRBK_STREAM_ID 7

/* The test clock. */
extern u64 lrbk_now;
u64 lrbk_clock(void);

static inline void lrbk_set_clock(u64 t)
{
	WRITE_ONCE(lrbk_now, t);
}

static inline void lrbk_tick(u64 dt)
{
	WRITE_ONCE(lrbk_now, READ_ONCE(lrbk_now) + dt);
}

#define LRBK_CONFIG(m, a, h)						\
	{								\
		.mode = LRB_MODE_##m,					\
		.alloc = LRB_ALLOC_##a,					\
		.wakeup = LRB_WAKEUP_BY_WRITER,				\
		.header = LRB_HEADER_##h,				\
		.tsc_bits = 27,						\
		.cb = { .clock_read = lrbk_clock },			\
	}

#define LRBK_NR_VARIANTS 8
extern const struct lrb_config lrbk_variants[LRBK_NR_VARIANTS];
void lrbk_cfg_desc(const struct lrb_config *cfg, char *desc);
void lrbk_variant_desc(const struct lrb_config *cfg, char *desc);

/* the largest record of the largest sub-buffer the suites use fits */
#define LRBK_PAYLOAD_MAX LRBK_LEN(65536)

/**
 * struct lrbk_exp - a record the model expects
 * @id: event id
 * @len: payload bytes
 * @seq: sequence number in the payload
 * @ts: timestamp
 */
struct lrbk_exp {
	u32 id;
	u32 len;
	u32 seq;
	u64 ts;
};

/**
 * struct lrbk_model - the records written, in buffer order
 * @test: the test
 * @e: expected records
 * @max: room in @e
 * @n: records in @e
 * @next: next record the reader must find
 * @seq: next sequence number
 * @attempts: writes tried (length > 0)
 * @failed: writes that failed
 * @skip: overwrite mode: records of overwritten packets are never read, so
 *	the reader skips to the record with the sequence number it finds
 * @payload: scratch payload
 */
struct lrbk_model {
	struct kunit *test;
	struct lrbk_exp *e;
	unsigned int max;
	unsigned int n;
	unsigned int next;
	u32 seq;
	unsigned long attempts;
	unsigned long failed;
	bool skip;
	u8 *payload;
};

struct lrbk_model *lrbk_model_new(struct kunit *test, unsigned int max,
				  bool skip);
void lrbk_model_add(struct lrbk_model *m, u32 id, u32 len, u32 seq, u64 ts);
int lrbk_write(struct lrbk_model *m, const struct lrb_config *cfg,
	       struct lrb_chan *chan, u32 id, u32 len);
int lrbk_write_chunked(struct lrbk_model *m, const struct lrb_config *cfg,
		       struct lrb_chan *chan, u32 id, u32 len, u32 chunk);
int lrbk_reserve_rec(struct lrbk_model *m, const struct lrb_config *cfg,
		     struct lrb_chan *chan, struct lrb_ctx *ctx, u32 id,
		     u32 len);

struct lrbk_drain;
typedef void (*lrbk_record_fn)(struct lrbk_drain *d,
			       const struct lrb_subbuf *sb,
			       const struct lrb_record *rec);
typedef void (*lrbk_packet_fn)(struct lrbk_drain *d,
			       const struct lrb_subbuf *sb, const u8 *data);

/**
 * struct lrbk_drain - a checking reader of one buffer
 * @test: the test
 * @chan: channel
 * @buf: buffer read (its reader opened by the caller)
 * @model: records expected, or NULL not to match
 * @data: copy of the packet being checked
 * @packets: packets read
 * @records: records read
 * @page_cross: records that straddle a page boundary
 * @next_seq: expected next packet sequence number
 * @gaps: packets skipped between those read
 * @last_discarded: events_discarded of the last packet read
 * @last_ts: timestamp of the last record read
 * @on_record: optional, called for each record
 * @on_packet: optional, called for each packet after its records
 * @user: for the callbacks
 */
struct lrbk_drain {
	struct kunit *test;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrbk_model *model;
	u8 *data;
	unsigned long packets;
	unsigned long records;
	unsigned long page_cross;
	u64 next_seq;
	u64 gaps;
	u64 last_discarded;
	u64 last_ts;
	lrbk_record_fn on_record;
	lrbk_packet_fn on_packet;
	unsigned long user;
};

void lrbk_drain_init(struct lrbk_drain *d, struct kunit *test,
		     struct lrb_chan *chan, struct lrb_buf *buf,
		     struct lrbk_model *m);
void lrbk_check_packet(struct lrbk_drain *d, const struct lrb_subbuf *sb);
int lrbk_drain_one(struct lrbk_drain *d);
unsigned long lrbk_drain_all(struct lrbk_drain *d);

struct lrb_chan *lrbk_chan_new(struct kunit *test,
			       const struct lrb_config *cfg,
			       unsigned long subbuf_size,
			       unsigned long num_subbuf);
void lrbk_chan_destroy(struct kunit *test, struct lrb_chan *chan);
unsigned int lrbk_pin(void);
struct lrb_buf *lrbk_my_buf(const struct lrb_config *cfg,
			    struct lrb_chan *chan);
void lrbk_check_lost(struct kunit *test, struct lrb_buf *buf,
		     unsigned long full, unsigned long big, unsigned long nest);

#endif /* _LRB_KUNIT_H */
