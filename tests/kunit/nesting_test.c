// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: nested writers.
 *
 * Real interrupts: a task-context writer reserves a record and, with
 * preemption disabled but interrupts enabled, waits until an interrupt
 * handler on its CPU (a hardirq hrtimer, a softirq hrtimer or an
 * irq_work) has written records into the same buffer, then writes its
 * payload and commits: both writers' records must be intact, in buffer
 * order, and a sub-buffer the handler closed must be delivered only once
 * the task's record in it is committed.
 *
 * NMI-like nesting at chosen points: this file defines __LRB_TEST_HOOKS, so
 * the fast paths it compiles call __lrb_test_hook() after reading the write
 * position, after the compare-and-swap, before and after the commit add.
 * The hook runs nested writers right there, as an NMI landing on that
 * instruction would: a few records, records that switch sub-buffers,
 * writers nested up to the limit and one more (refused, counted), and
 * writers that go round the whole ring before the interrupted commit
 * delivers its sub-buffer.
 */
#define __LRB_TEST_HOOKS

#include <linux/sort.h>
#ifdef __KERNEL__
#include <linux/hardirq.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/ktime.h>
#endif

#include "lrb_kunit.h"

#define SB4K LRBK_SB4K
/* a packet holds LRBK_SCALE times more records of the same length */
#define MAX_RECS LRBK_LEN(256)
#define PAYLOAD_MAX LRBK_LEN(3072)
#define PREFILL_ID 1
#define OUTER_ID 2
/* NESTED_ID + depth: clear of the convention's special and fixed ids */
#define NESTED_ID 24

/**
 * struct nrec - a record written by a test writer
 * @id: event id
 * @len: payload bytes
 * @seq: sequence number in its payload
 * @ret: what lrb_reserve() returned; 1 if it succeeded and the record was
 *	discarded
 * @depth: nesting depth of its writer (1: the outermost)
 * @ts: its timestamp
 * @begin: its position
 */
struct nrec {
	u32 id;
	u32 len;
	u32 seq;
	int ret;
	int depth;
	u64 ts;
	unsigned long begin;
};

/**
 * struct recs - records written by the writers of one test
 * @cfg: configuration
 * @chan: channel
 * @r: the records, in the order their writers started
 * @n: records in @r
 * @seq: next sequence number
 */
struct recs {
	const struct lrb_config *cfg;
	struct lrb_chan *chan;
	struct nrec r[MAX_RECS];
	int n;
	u32 seq;
};

/*
 * Nested writers discard their records instead of committing them, when
 * set: lrb_discard() rewinds or skips, as their position in the buffer
 * allows.
 */
static bool nested_discard;

/* Payload scratch per nesting depth (writers of one depth never overlap). */
static u8 payloads[LRB_MAX_NESTING + 3][PAYLOAD_MAX];

/*
 * Write one record with the test clock at @ts, as a writer of depth
 * @depth, and note it. Compiled here, so with the test hooks.
 */
static int rec_write(struct recs *rs, int depth, u32 id, u32 len, u64 ts)
{
	u8 *payload = payloads[min(depth, LRB_MAX_NESTING + 2)];
	struct nrec *r;
	struct lrb_ctx ctx;
	int ret;

	if (rs->n >= MAX_RECS)
		return -ENOSPC;
	r = &rs->r[rs->n++];
	r->id = id;
	r->len = len;
	r->seq = rs->seq++;
	r->depth = depth;
	test_fill_payload(payload, id, len, r->seq);
	lrbk_set_clock(ts);
	ret = lrb_reserve(rs->cfg, rs->chan, &ctx, id, len);
	r->ret = ret;
	if (ret)
		return ret;
	lrb_write(&ctx, payload, len);
	r->ts = ctx.tsc;
	r->begin = ctx.begin;
	if (depth > 1 && READ_ONCE(nested_discard)) {
		r->ret = 1;
		return lrb_discard(rs->cfg, &ctx);
	}
	lrb_commit(rs->cfg, &ctx);
	return 0;
}

static int nrec_cmp(const void *a, const void *b)
{
	const struct nrec *x = a, *y = b;

	if (x->begin == y->begin)
		return 0;
	return x->begin < y->begin ? -1 : 1;
}

/* Add the records written to @m, in buffer order. */
static void recs_to_model(struct recs *rs, struct lrbk_model *m)
{
	static struct nrec sorted[MAX_RECS];
	int i, n = 0;

	for (i = 0; i < rs->n; i++)
		if (!rs->r[i].ret)
			sorted[n++] = rs->r[i];
	sort(sorted, n, sizeof(sorted[0]), nrec_cmp, NULL);
	for (i = 0; i < n; i++)
		lrbk_model_add(m, sorted[i].id, sorted[i].len, sorted[i].seq,
			       sorted[i].ts);
	m->seq = rs->seq;
}

static struct nrec *find_depth(struct recs *rs, int depth)
{
	int i;

	for (i = 0; i < rs->n; i++)
		if (rs->r[i].depth == depth)
			return &rs->r[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* NMI-like nesting through the test hooks.                           */

enum plan_action {
	ACT_WRITE,		/* write the records */
	ACT_CONSUME_WRITE,	/* consume one sub-buffer, then write */
};

/**
 * struct plan - what __lrb_test_hook() does while armed
 * @rs: the writers' records
 * @buf: the buffer written
 * @point: the point where nested writers run
 * @from: lowest depth of the writer at @point that makes them run
 * @to: highest such depth
 * @fired: depths at which they ran (bit per depth)
 * @action: what they do
 * @nr: records each firing writes
 * @len: their payload length
 * @ts_base: record k of a firing at depth d gets timestamp
 *	ts_base + 100 * d + k
 * @readable: lrb_buf_readable() after the firing, per depth
 * @consumed_ret: ACT_CONSUME_WRITE: lrb_get_next_subbuf()'s return
 * @consumed_seq: ACT_CONSUME_WRITE: sequence number of the packet taken
 */
struct plan {
	struct recs *rs;
	struct lrb_buf *buf;
	enum __lrb_test_point point;
	int from;
	int to;
	unsigned long fired;
	enum plan_action action;
	int nr;
	u32 len;
	u64 ts_base;
	bool readable[LRB_MAX_NESTING + 2];
	int consumed_ret;
	u64 consumed_seq;
};

static struct plan *armed;

/*
 * Called by the fast paths compiled in this file. Runs with preemption
 * disabled, inside a writer: no KUnit expectation here.
 */
void __lrb_test_hook(enum __lrb_test_point point, struct lrb_ctx *ctx)
{
	struct plan *p = READ_ONCE(armed);
	struct lrb_subbuf sb;
	int depth, k;

	if (!p || point != p->point)
		return;
	depth = this_cpu_read(__lrb_nesting);
	if (depth < p->from || depth > p->to || (p->fired & BIT(depth)))
		return;
	p->fired |= BIT(depth);
	if (p->action == ACT_CONSUME_WRITE) {
		p->consumed_ret = lrb_get_next_subbuf(p->buf, &sb);
		if (!p->consumed_ret) {
			p->consumed_seq = sb.seq;
			p->consumed_ret = lrb_put_subbuf(p->buf, &sb);
		}
	}
	for (k = 0; k < p->nr; k++)
		rec_write(p->rs, depth + 1, NESTED_ID + depth, p->len,
			  p->ts_base + 100 * depth + k);
	p->readable[depth] = lrb_buf_readable(p->buf);
}

/* The outermost writer: one record, with @p armed while it is written. */
static int outer_write(struct plan *p, u32 len, u64 ts)
{
	int ret;

	WRITE_ONCE(armed, p);
	ret = rec_write(p->rs, 1, OUTER_ID, len, ts);
	WRITE_ONCE(armed, NULL);
	return ret;
}

struct point_param {
	const struct lrb_config *cfg;
	enum __lrb_test_point point;
};

static const char * const point_names[] = {
	[__LRB_TEST_AFTER_READ_POS] = "after_read_pos",
	[__LRB_TEST_AFTER_CAS] = "after_cas",
	[__LRB_TEST_BEFORE_COMMIT_ADD] = "before_commit_add",
	[__LRB_TEST_AFTER_COMMIT_ADD] = "after_commit_add",
};

#define NR_POINTS ARRAY_SIZE(point_names)

/* Every configuration at every hook point, filled in as generated. */
static struct point_param point_params[LRBK_NR_VARIANTS * NR_POINTS];

static const void *point_params_gen_params(const void *prev, char *desc)
{
	const struct point_param *pp = prev;
	char cfg[KUNIT_PARAM_DESC_SIZE];
	unsigned int i = pp ? pp - point_params + 1 : 0;

	if (i >= ARRAY_SIZE(point_params))
		return NULL;
	point_params[i].cfg = &lrbk_variants[i / NR_POINTS];
	point_params[i].point = i % NR_POINTS;
	lrbk_cfg_desc(point_params[i].cfg, cfg);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s@%s", cfg,
		 point_names[point_params[i].point]);
	return &point_params[i];
}

/* A test of one config: channel, reader, model, records. */
struct nest_env {
	const struct lrb_config *cfg;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrbk_model *m;
	struct recs *rs;
	struct plan p;
	struct lrbk_drain d;
};

static void env_init(struct kunit *test, struct nest_env *e,
		     const struct lrb_config *cfg, unsigned long num_subbuf,
		     bool skip)
{
	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->chan = lrbk_chan_new(test, cfg, SB4K, num_subbuf);
	e->buf = lrbk_my_buf(cfg, e->chan);
	e->m = lrbk_model_new(test, MAX_RECS, skip);
	e->rs = kunit_kzalloc(test, sizeof(*e->rs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->rs);
	e->rs->cfg = cfg;
	e->rs->chan = e->chan;
	e->p.rs = e->rs;
	e->p.buf = e->buf;
	KUNIT_ASSERT_EQ(test, lrb_reader_open(e->buf), 0);
	lrbk_drain_init(&e->d, test, e->chan, e->buf, e->m);
}

/* Prefill with @n records of @len bytes (in the model), then go on. */
static void env_prefill(struct kunit *test, struct nest_env *e, int n,
			u32 len)
{
	int i, bad = 0;

	lrbk_set_clock(100);
	for (i = 0; i < n; i++)
		if (lrbk_write(e->m, e->cfg, e->chan, PREFILL_ID, len))
			bad++;
	KUNIT_EXPECT_EQ(test, bad, 0);
	e->rs->seq = e->m->seq;
}

/*
 * Three 20-byte records, then a writer at @pp's hook point that nests @nr
 * records of 24 bytes from the timestamp 5000 once, at its first record.
 */
static void env_nest_at(struct kunit *test, struct nest_env *e,
			const struct point_param *pp, int nr)
{
	env_init(test, e, pp->cfg, 4, false);
	env_prefill(test, e, 3, 20);
	e->p.point = pp->point;
	e->p.from = 1;
	e->p.to = 1;
	e->p.nr = nr;
	e->p.len = 24;
	e->p.ts_base = 5000;
}

/* Flush, read everything back and check it against what was written. */
static void env_check_all(struct kunit *test, struct nest_env *e)
{
	recs_to_model(e->rs, e->m);
	lrb_buf_flush(e->buf);
	lrbk_drain_all(&e->d);
	KUNIT_EXPECT_EQ(test, e->m->next, e->m->n);
	lrb_reader_close(e->buf);
}

static unsigned long hdr_len(const struct lrb_config *cfg)
{
	return cfg->header == LRB_HEADER_COMPACT ? LRB_COMPACT_HEADER_SIZE :
						   LRB_LARGE_HEADER_SIZE;
}

/*
 * A few records nested at the point, in the middle of a packet: they go
 * before the interrupted record if it had not taken its slot yet (after
 * reading the position: its compare-and-swap fails and it retries with a
 * new timestamp), after it otherwise; everything reads back intact.
 */
static void hook_nested_records(struct kunit *test)
{
	const struct point_param *pp = test->param_value;
	struct nest_env e;
	struct nrec *o;
	int i, n;

	env_nest_at(test, &e, pp, 3);
	KUNIT_EXPECT_EQ(test, outer_write(&e.p, 40, 1000), 0);
	KUNIT_EXPECT_EQ(test, e.p.fired, BIT(1));
	n = e.rs->n;
	KUNIT_ASSERT_EQ(test, n, 4);
	o = find_depth(e.rs, 1);
	KUNIT_ASSERT_NOT_NULL(test, o);
	for (i = 0; i < n; i++) {
		struct nrec *r = &e.rs->r[i];

		KUNIT_EXPECT_EQ(test, r->ret, 0);
		if (r == o)
			continue;
		KUNIT_EXPECT_EQ(test, r->depth, 2);
		KUNIT_EXPECT_EQ(test, r->ts, 5000 + 100 + (u64)(i - 1));
		if (pp->point == __LRB_TEST_AFTER_READ_POS)
			KUNIT_EXPECT_LT(test, r->begin, o->begin);
		else
			KUNIT_EXPECT_GT(test, r->begin, o->begin);
	}
	/* the retry read the clock again, after the nested records */
	KUNIT_EXPECT_EQ(test, o->ts, pp->point == __LRB_TEST_AFTER_READ_POS ?
			5000ULL + 100 + 2 : 1000ULL);
	lrbk_check_lost(test, e.buf, 0, 0, 0);
	env_check_all(test, &e);
	KUNIT_EXPECT_EQ(test, e.d.records, 3UL + 4);
	KUNIT_EXPECT_EQ(test, e.d.packets, 1UL);
}

/*
 * Nested records that close the interrupted record's packet and fill the
 * next: the closed packet is delivered only once every record in it is
 * committed, so not while the interrupted writer still owns bytes there.
 */
static void hook_nested_switch(struct kunit *test)
{
	const struct point_param *pp = test->param_value;
	bool owns = pp->point == __LRB_TEST_AFTER_CAS ||
		    pp->point == __LRB_TEST_BEFORE_COMMIT_ADD;
	unsigned long s100 = __lrb_slot_len(hdr_len(pp->cfg), 100);
	struct nest_env e;
	struct nrec *o;
	int i, k;

	env_init(test, &e, pp->cfg, 4, false);
	/* leave room for the outer record, not for a nested one */
	k = (SB4K - LRB_PACKET_HEADER_SIZE) / s100 - 2;
	env_prefill(test, &e, k, 100);
	e.p.point = pp->point;
	e.p.from = 1;
	e.p.to = 1;
	e.p.nr = 2;
	e.p.len = LRBK_LEN(3000);
	e.p.ts_base = 7000;
	KUNIT_EXPECT_FALSE(test, lrb_buf_readable(e.buf));
	KUNIT_EXPECT_EQ(test, outer_write(&e.p, 100, 1000), 0);
	KUNIT_EXPECT_EQ(test, e.p.fired, BIT(1));
	KUNIT_ASSERT_EQ(test, e.rs->n, 3);
	o = find_depth(e.rs, 1);
	KUNIT_ASSERT_NOT_NULL(test, o);
	for (i = 0; i < e.rs->n; i++) {
		KUNIT_EXPECT_EQ(test, e.rs->r[i].ret, 0);
		/* each nested record opens a packet of its own */
		if (&e.rs->r[i] != o)
			KUNIT_EXPECT_EQ(test, e.rs->r[i].begin & (SB4K - 1),
					LRB_PACKET_HEADER_SIZE);
	}
	if (pp->point == __LRB_TEST_AFTER_READ_POS)
		KUNIT_EXPECT_GE(test, o->begin, 2 * SB4K);
	else
		KUNIT_EXPECT_LT(test, o->begin, SB4K);
	KUNIT_EXPECT_EQ_MSG(test, e.p.readable[1], !owns,
			    "packet 0 readable after the nested switch");
	KUNIT_EXPECT_TRUE(test, lrb_buf_readable(e.buf));
	lrbk_check_lost(test, e.buf, 0, 0, 0);
	env_check_all(test, &e);
	KUNIT_EXPECT_EQ(test, e.d.records, (unsigned long)k + 3);
	KUNIT_EXPECT_EQ(test, e.d.packets, 3UL);
}

/*
 * Writers nested at the point up to the limit (LRB_MAX_NESTING), and one
 * more, which is refused with -EBUSY and counted in lost_nest. Their
 * records go in the order they took their slots.
 */
static void hook_nesting_limit(struct kunit *test)
{
	const struct point_param *pp = test->param_value;
	bool retry = pp->point == __LRB_TEST_AFTER_READ_POS;
	struct nrec *r[LRB_MAX_NESTING + 2];
	struct lrb_packet_header h;
	struct lrb_subbuf sb;
	struct nest_env e;
	int d;

	env_init(test, &e, pp->cfg, 4, false);
	env_prefill(test, &e, 2, 30);
	e.p.point = pp->point;
	e.p.from = 1;
	e.p.to = LRB_MAX_NESTING;
	e.p.nr = 1;
	e.p.len = 16;
	e.p.ts_base = 9000;
	KUNIT_EXPECT_EQ(test, outer_write(&e.p, 12, 1000), 0);
	KUNIT_EXPECT_EQ(test, e.p.fired, GENMASK(LRB_MAX_NESTING, 1));
	KUNIT_ASSERT_EQ(test, e.rs->n, LRB_MAX_NESTING + 1);
	for (d = 1; d <= LRB_MAX_NESTING + 1; d++) {
		r[d] = find_depth(e.rs, d);
		KUNIT_ASSERT_NOT_NULL(test, r[d]);
		KUNIT_EXPECT_EQ_MSG(test, r[d]->ret,
				    d > LRB_MAX_NESTING ? -EBUSY : 0,
				    "writer at depth %d", d);
	}
	for (d = 1; d <= LRB_MAX_NESTING; d++) {
		/* after reading the position, every writer retried last */
		KUNIT_EXPECT_EQ_MSG(test, r[d]->ts,
				    retry ? 9000ULL + 100 * LRB_MAX_NESTING :
				    d == 1 ? 1000ULL : 9000ULL + 100 * (d - 1),
				    "writer at depth %d", d);
		if (d == 1)
			continue;
		if (retry)
			KUNIT_EXPECT_LT(test, r[d]->begin, r[d - 1]->begin);
		else
			KUNIT_EXPECT_GT(test, r[d]->begin, r[d - 1]->begin);
	}
	lrbk_check_lost(test, e.buf, 0, 0, 1);
	/* the depth is back to 0: a writer is not refused any more */
	KUNIT_EXPECT_EQ(test, this_cpu_read(__lrb_nesting), 0);
	env_check_all(test, &e);
	KUNIT_EXPECT_EQ(test, e.d.records, 2UL + LRB_MAX_NESTING);
	KUNIT_EXPECT_EQ(test, e.d.last_discarded, 1ULL);
	/* a new packet still opens and reads back */
	KUNIT_EXPECT_EQ(test, lrb_reader_open(e.buf), 0);
	KUNIT_EXPECT_EQ(test, lrbk_write(e.m, e.cfg, e.chan, 3, 8), 0);
	lrb_buf_flush(e.buf);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(e.buf, &sb), 0);
	lrb_subbuf_copy(e.chan, &sb, 0, &h, sizeof(h));
	KUNIT_EXPECT_EQ(test, h.events_discarded, 1ULL);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(e.buf, &sb), 0);
	lrb_reader_close(e.buf);
}

/*
 * The commit that completes a sub-buffer is interrupted between its add
 * and the delivery, and the nested writers go round the whole ring (two
 * sub-buffers) into the next lap of that sub-buffer before it delivers.
 * The late delivery must not mark the new lap, still being written, as
 * readable. Overwrite mode pushes the reader past the old lap (one packet
 * lost); in discard mode the nested writer first consumes it, as a reader
 * on another CPU could.
 */
static void late_delivery(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	bool overwrite = cfg->mode == LRB_MODE_OVERWRITE;
	unsigned long hl = hdr_len(cfg), s100 = __lrb_slot_len(hl, 100), k, room;
	unsigned long per = (SB4K - LRB_PACKET_HEADER_SIZE) / s100;
	struct lrb_subbuf sb;
	struct lrb_buf_counters st;
	struct nest_env e;
	struct nrec *o;
	int i;

	env_init(test, &e, cfg, 2, overwrite);
	/* prefill so that the outer record ends exactly on the boundary */
	k = per + 1;
	do {
		k--;
		room = SB4K - LRB_PACKET_HEADER_SIZE - k * s100;
	} while (room < hl + 8);
	env_prefill(test, &e, k, 100);
	e.p.point = __LRB_TEST_AFTER_COMMIT_ADD;
	e.p.from = 1;
	e.p.to = 1;
	e.p.action = overwrite ? ACT_WRITE : ACT_CONSUME_WRITE;
	e.p.nr = per + 5;
	e.p.len = 100;
	e.p.ts_base = 3000;
	KUNIT_EXPECT_EQ(test, outer_write(&e.p, room - hl, 1000), 0);
	o = find_depth(e.rs, 1);
	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_EXPECT_EQ(test, o->begin + room, SB4K);
	KUNIT_EXPECT_EQ(test, e.p.fired, BIT(1));
	for (i = 0; i < e.rs->n; i++)
		KUNIT_EXPECT_EQ(test, e.rs->r[i].ret, 0);
	/* the last 5 nested records are in the next lap of sub-buffer 0 */
	KUNIT_EXPECT_EQ(test, e.rs->r[e.rs->n - 1].begin / SB4K, 2UL);
	if (!overwrite) {
		KUNIT_EXPECT_EQ(test, e.p.consumed_ret, 0);
		KUNIT_EXPECT_EQ(test, e.p.consumed_seq, 0ULL);
	}
	lrb_buf_stats(e.buf, &st);
	KUNIT_EXPECT_EQ(test, st.lost_packets, overwrite ? 1UL : 0UL);
	/* the packet overwritten held the k prefilled and the outer record */
	KUNIT_EXPECT_EQ(test, st.lost_overwrite, overwrite ? k + 1 : 0UL);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(e.buf), st.lost_overwrite);

	/* packet 1 is complete; packet 2 (sub-buffer 0, lap 1) is not */
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(e.buf, 2 * SB4K, &sb), -EAGAIN);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(e.buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.seq, 1ULL);
	e.d.next_seq = overwrite ? 0 : 1;
	recs_to_model(e.rs, e.m);
	if (!overwrite)
		e.m->next = k + 1;
	lrbk_check_packet(&e.d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(e.buf, &sb), 0);
	KUNIT_EXPECT_FALSE_MSG(test, lrb_buf_readable(e.buf),
			       "the next lap was delivered half written");
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(e.buf, &sb), -EAGAIN);
	lrb_buf_flush(e.buf);
	lrbk_drain_all(&e.d);
	KUNIT_EXPECT_EQ(test, e.m->next, e.m->n);
	KUNIT_EXPECT_EQ(test, e.d.packets, 2UL);
	KUNIT_EXPECT_EQ(test, e.d.gaps, overwrite ? 1ULL : 0ULL);
	KUNIT_EXPECT_EQ(test, e.d.records, per + 5);
	lrb_reader_close(e.buf);
}

KUNIT_ARRAY_PARAM(variants, lrbk_variants, lrbk_variant_desc);

#ifdef __KERNEL__
/* ------------------------------------------------------------------ */
/* Real interrupts (the user-space build's are signals: tests/user/stress.c). */

enum irq_source {
	SRC_HARDIRQ_TIMER,
	SRC_SOFTIRQ_TIMER,
	SRC_IRQ_WORK,
	NR_SOURCES,
};

static const char * const source_names[] = {
	[SRC_HARDIRQ_TIMER] = "hrtimer_hard",
	[SRC_SOFTIRQ_TIMER] = "hrtimer_soft",
	[SRC_IRQ_WORK] = "irq_work",
};

/**
 * struct irq_writer - an interrupt handler that writes records
 * @rs: the records
 * @source: what runs the handler
 * @nr: records to write
 * @len: their payload length
 * @timer: hrtimer sources
 * @work: irq_work source
 * @done: the handler has run
 * @context_ok: it ran in the context @source should give
 * @depth: lrb writers on its CPU when it started
 * @cpu: its CPU
 */
struct irq_writer {
	struct recs *rs;
	enum irq_source source;
	int nr;
	u32 len;
	struct hrtimer timer;
	struct irq_work work;
	int done;
	bool context_ok;
	int depth;
	int cpu;
};

static void irq_write(struct irq_writer *w)
{
	int k;

	if (w->source == SRC_SOFTIRQ_TIMER)
		w->context_ok = in_serving_softirq() && !in_hardirq();
	else
		w->context_ok = in_hardirq();
	w->depth = this_cpu_read(__lrb_nesting);
	w->cpu = smp_processor_id();
	for (k = 0; k < w->nr; k++)
		rec_write(w->rs, w->depth + 1, NESTED_ID, w->len, 2000 + k);
	/* the records and results above before done; pairs with the task */
	smp_store_release(&w->done, 1);
}

static enum hrtimer_restart irq_timer_fn(struct hrtimer *t)
{
	irq_write(container_of(t, struct irq_writer, timer));
	return HRTIMER_NORESTART;
}

static void irq_work_fn(struct irq_work *work)
{
	irq_write(container_of(work, struct irq_writer, work));
}

struct irq_param {
	const struct lrb_config *cfg;
	enum irq_source source;
	bool sw;
};

/* Every configuration and source, with and without a switch. */
static struct irq_param irq_params[LRBK_NR_VARIANTS * NR_SOURCES * 2];

static const void *irq_params_gen_params(const void *prev, char *desc)
{
	const struct irq_param *ip = prev;
	char cfg[KUNIT_PARAM_DESC_SIZE];
	unsigned int i = ip ? ip - irq_params + 1 : 0;
	struct irq_param *p = &irq_params[i];

	if (i >= ARRAY_SIZE(irq_params))
		return NULL;
	p->cfg = &lrbk_variants[i / (NR_SOURCES * 2)];
	p->source = i / 2 % NR_SOURCES;
	p->sw = i % 2;
	lrbk_cfg_desc(p->cfg, cfg);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s-%s%s", cfg,
		 source_names[p->source], p->sw ? "-switch" : "");
	return p;
}

/*
 * A task writer between reserve and commit is interrupted by a handler
 * that writes records into the same buffer (and, with "switch", closes
 * the task's packet and opens the next). The task waits for the handler
 * with preemption disabled and interrupts enabled, then finishes its
 * record. Commits complete out of order; the packet is delivered only
 * after the task's commit.
 */
static void irq_nesting(struct kunit *test)
{
	const struct irq_param *ip = test->param_value;
	unsigned long s100 = __lrb_slot_len(hdr_len(ip->cfg), 100), c, p;
	bool readable_before = false, readable_after = false;
	bool timed_out = false;
	struct irq_writer *w;
	struct lrb_ctx ctx;
	struct nest_env e;
	struct nrec *o;
	int k, i, ret;
	u64 deadline;

	env_init(test, &e, ip->cfg, 4, false);
	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->rs = e.rs;
	w->source = ip->source;
	w->len = 100;
	/* room for the task's record and 1 more; "switch" writes 6 */
	k = (SB4K - LRB_PACKET_HEADER_SIZE) / s100 - 2;
	w->nr = ip->sw ? 6 : 1;
	env_prefill(test, &e, k, 100);
	if (ip->source == SRC_IRQ_WORK) {
		w->work = IRQ_WORK_INIT_HARD(irq_work_fn);
	} else {
		hrtimer_init(&w->timer, CLOCK_MONOTONIC,
			     ip->source == SRC_HARDIRQ_TIMER ?
			     HRTIMER_MODE_REL_PINNED_HARD :
			     HRTIMER_MODE_REL_PINNED_SOFT);
		w->timer.function = irq_timer_fn;
	}

	/* the task's record: reserved, then the interrupt */
	o = &e.rs->r[e.rs->n++];
	o->id = OUTER_ID;
	o->len = 100;
	o->seq = e.rs->seq++;
	o->depth = 1;
	test_fill_payload(payloads[0], OUTER_ID, 100, o->seq);
	lrbk_set_clock(1000);
	ret = lrb_reserve(ip->cfg, e.chan, &ctx, OUTER_ID, 100);
	o->ret = ret;
	if (!ret) {
		if (ip->source == SRC_IRQ_WORK)
			irq_work_queue(&w->work);
		else
			hrtimer_start(&w->timer, ns_to_ktime(20000),
				      ip->source == SRC_HARDIRQ_TIMER ?
				      HRTIMER_MODE_REL_PINNED_HARD :
				      HRTIMER_MODE_REL_PINNED_SOFT);
		deadline = ktime_get_ns() + 10ULL * NSEC_PER_SEC;
		/* pairs with the handler's release of done */
		while (!smp_load_acquire(&w->done)) {
			if (ktime_get_ns() > deadline) {
				timed_out = true;
				break;
			}
			cpu_relax();
		}
		readable_before = lrb_buf_readable(e.buf);
		lrb_write(&ctx, payloads[0], 100);
		o->ts = ctx.tsc;
		o->begin = ctx.begin;
		lrb_commit(ip->cfg, &ctx);
		readable_after = lrb_buf_readable(e.buf);
	}
	if (ip->source == SRC_IRQ_WORK)
		irq_work_sync(&w->work);
	else
		hrtimer_cancel(&w->timer);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_FALSE_MSG(test, timed_out,
			       "%s did not run within 10 s",
			       source_names[ip->source]);
	KUNIT_EXPECT_TRUE_MSG(test, w->context_ok, "wrong context for %s",
			      source_names[ip->source]);
	KUNIT_EXPECT_EQ_MSG(test, w->depth, 1,
			    "the handler did not interrupt the reservation");
	KUNIT_EXPECT_EQ(test, w->cpu, (int)raw_smp_processor_id());
	KUNIT_EXPECT_EQ(test, e.rs->n, 1 + w->nr);
	for (i = 1; i < e.rs->n; i++) {
		KUNIT_EXPECT_EQ(test, e.rs->r[i].ret, 0);
		KUNIT_EXPECT_GT(test, e.rs->r[i].begin, o->begin);
		KUNIT_EXPECT_EQ(test, e.rs->r[i].ts, 2000ULL + i - 1);
	}
	KUNIT_EXPECT_EQ(test, o->ts, 1000ULL);
	/* packet 0 holds the task's record: not readable until it commits */
	KUNIT_EXPECT_FALSE_MSG(test, readable_before,
			       "packet delivered before the task committed");
	KUNIT_EXPECT_EQ(test, readable_after, ip->sw);
	lrb_positions(e.buf, &c, &p);
	KUNIT_EXPECT_EQ(test, p / SB4K, ip->sw ? 1UL : 0UL);
	lrbk_check_lost(test, e.buf, 0, 0, 0);
	env_check_all(test, &e);
	KUNIT_EXPECT_EQ(test, e.d.records, (unsigned long)k + 1 + w->nr);
	KUNIT_EXPECT_EQ(test, e.d.packets, ip->sw ? 2UL : 1UL);
}
#endif

/* ------------------------------------------------------------------ */
/* Discards of any reservation (the BPF ring buffer selftests' orders). */

/* The hook points a discarding writer passes. */
static const enum __lrb_test_point discard_points[] = {
	__LRB_TEST_AFTER_READ_POS, __LRB_TEST_AFTER_CAS,
	__LRB_TEST_BEFORE_DISCARD,
};

static const char * const discard_point_names[] = {
	"after_read_pos", "after_cas", "before_discard",
};

/* Every configuration at every point, nested writers committing or not. */
static struct point_param discard_params[LRBK_NR_VARIANTS *
					  ARRAY_SIZE(discard_points) * 2];

static const void *discard_params_gen_params(const void *prev, char *desc)
{
	const struct point_param *pp = prev;
	unsigned int np = ARRAY_SIZE(discard_points);
	unsigned int i = pp ? pp - discard_params + 1 : 0;
	char cfg[KUNIT_PARAM_DESC_SIZE];

	if (i >= ARRAY_SIZE(discard_params))
		return NULL;
	discard_params[i].cfg = &lrbk_variants[i / (2 * np)];
	discard_params[i].point = discard_points[(i / 2) % np];
	lrbk_cfg_desc(discard_params[i].cfg, cfg);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s@%s%s", cfg,
		 discard_point_names[(i / 2) % np],
		 i % 2 ? "+discard" : "");
	return &discard_params[i];
}

/*
 * Reserve A, a nested writer writes B and B' (committed, or discarded in
 * turn), A is discarded: at every point of A's reservation and discard
 * where an NMI could land. A nested
 * writer that reserved before A took its slot leaves A the last
 * reservation, which lrb_discard() takes back; one after A makes A a skip
 * record. Either way the records committed read back exactly, and neither
 * the discarded records nor their bytes count as written or lost.
 */
static void hook_discard(struct kunit *test)
{
	const struct point_param *pp = test->param_value;
	bool discard = (pp - discard_params) % 2;
	struct lrb_buf_counters st;
	struct nest_env e;
	struct nrec *o;
	struct lrb_ctx ctx;
	unsigned long committed = 3;
	int i;

	env_nest_at(test, &e, pp, 2);
	WRITE_ONCE(nested_discard, discard);
	o = &e.rs->r[e.rs->n++];
	o->seq = e.rs->seq++;
	o->depth = 1;
	o->id = OUTER_ID;
	o->len = 40;
	lrbk_set_clock(1000);
	test_fill_payload(payloads[1], OUTER_ID, 40, o->seq);
	WRITE_ONCE(armed, &e.p);
	KUNIT_ASSERT_EQ(test, lrb_reserve(e.cfg, e.chan, &ctx, OUTER_ID, 40), 0);
	lrb_write(&ctx, payloads[1], 40);
	o->begin = ctx.begin;
	o->ret = 1;
	KUNIT_EXPECT_EQ(test, lrb_discard(e.cfg, &ctx), 0);
	WRITE_ONCE(armed, NULL);
	WRITE_ONCE(nested_discard, false);
	KUNIT_EXPECT_EQ(test, e.p.fired, BIT(1));
	for (i = 0; i < e.rs->n; i++)
		if (!e.rs->r[i].ret)
			committed++;
	lrb_buf_stats(e.buf, &st);
	KUNIT_EXPECT_EQ(test, st.records_written, (u64)committed);
	lrbk_check_lost(test, e.buf, 0, 0, 0);
	env_check_all(test, &e);
	KUNIT_EXPECT_EQ(test, e.d.records, committed);
}

/*
 * Three reservations A, B, C on one CPU, finished in every order, each
 * committed or discarded: 48 cases, in record sizes that move the three
 * across packet boundaries, so that skip records also open and end
 * packets. Every committed record reads back, in buffer order, and
 * nothing else does.
 */
static void discard_orders(struct kunit *test)
{
	static const u8 perms[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
		{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	const struct lrb_config *cfg = test->param_value;
	struct lrb_buf_counters st;
	struct lrb_ctx c[3];
	struct nest_env e;
	unsigned long committed = 0, skips = 0;
	unsigned int round, order, mask, k, seq[3];
	u32 id[3], len[3];

	env_init(test, &e, cfg, 8, false);
	lrbk_set_clock(100);
	for (round = 0; round < 3; round++) {
		for (order = 0; order < 6; order++) {
			for (mask = 0; mask < 8; mask++) {
				for (k = 0; k < 3; k++) {
					/* now and then the smallest slot */
					id[k] = (mask + k) % 4 ? 9 + k :
						TEST_ID_FIXED_MIN;
					len[k] = (mask + k) % 4 ?
						 8 + (round * 997 + order * 131 +
						      mask * 37 + k * 301) % 700 : 1;
					lrbk_tick(3);
					KUNIT_ASSERT_EQ(test,
							lrbk_reserve_rec(e.m, cfg, e.chan,
									 &c[k], id[k], len[k]), 0);
					seq[k] = e.m->seq - 1;
				}
				for (k = 0; k < 3; k++) {
					unsigned int w = perms[order][k];

					if (mask & BIT(w)) {
						KUNIT_EXPECT_EQ(test, lrb_discard(cfg, &c[w]), 0);
						/* not the last one left: a skip */
						skips += w < 2 && !(mask & BIT(w + 1)) ? 1 : 0;
					} else {
						lrb_commit(cfg, &c[w]);
					}
				}
				for (k = 0; k < 3; k++) {
					if (mask & BIT(k))
						continue;
					lrbk_model_add(e.m, id[k], len[k], seq[k],
						       c[k].tsc);
					committed++;
				}
				lrbk_drain_all(&e.d);
			}
		}
	}
	lrb_buf_stats(e.buf, &st);
	KUNIT_EXPECT_EQ(test, st.records_written, (u64)committed);
	lrbk_check_lost(test, e.buf, 0, 0, 0);
	lrb_buf_flush(e.buf);
	lrbk_drain_all(&e.d);
	KUNIT_EXPECT_EQ(test, e.m->next, e.m->n);
	KUNIT_EXPECT_EQ(test, e.d.records, committed);
	KUNIT_EXPECT_GT(test, skips, 0UL);
	lrb_reader_close(e.buf);
}

static int lrb_nesting_init(struct kunit *test)
{
	lrbk_pin();
	WRITE_ONCE(armed, NULL);
	return 0;
}

static void lrb_nesting_exit(struct kunit *test)
{
	WRITE_ONCE(armed, NULL);
	WRITE_ONCE(nested_discard, false);
}

static struct kunit_case lrb_nesting_cases[] = {
#ifdef __KERNEL__
	KUNIT_CASE_PARAM(irq_nesting, irq_params_gen_params),
#endif
	KUNIT_CASE_PARAM(hook_nested_records, point_params_gen_params),
	KUNIT_CASE_PARAM(hook_nested_switch, point_params_gen_params),
	KUNIT_CASE_PARAM(hook_nesting_limit, point_params_gen_params),
	KUNIT_CASE_PARAM(late_delivery, variants_gen_params),
	KUNIT_CASE_PARAM(hook_discard, discard_params_gen_params),
	KUNIT_CASE_PARAM(discard_orders, variants_gen_params),
	{}
};

static struct kunit_suite lrb_nesting_suite = {
	.name = "lrb_nesting",
	.init = lrb_nesting_init,
	.exit = lrb_nesting_exit,
	.test_cases = lrb_nesting_cases,
};

kunit_test_suite(lrb_nesting_suite);
