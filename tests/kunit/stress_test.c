// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: SMP stress.
 *
 * For a fixed time (stress_ms, a parameter of the lrb_kunit module, per
 * variant) and in each variant (discard and overwrite mode, per-CPU and
 * global buffers):
 *
 * - a writer kthread bound to every online CPU writes records in a loop,
 *   takes about 1% of them back with lrb_try_discard() and now and then
 *   tries one larger than a sub-buffer (-EMSGSIZE);
 * - on every online CPU a softirq hrtimer and a hardirq hrtimer write 1
 *   to 3 records each time they fire, landing at random points of the
 *   task's (and the softirq's) records: real nesting;
 * - a reader kthread drains every buffer, pausing now and then so that
 *   buffers fill, holding some sub-buffers while writers go round the
 *   ring (their bytes must not change), and in overwrite mode taking
 *   snapshots with lrb_get_subbuf().
 *
 * A record carries its writer (CPU, context), the buffer and position it
 * was reserved at, a sequence number per (CPU, context) that advances only
 * when a record is committed, a body derived from those, and a checksum.
 * The reader checks every record and, per buffer and (CPU, context), that
 * sequence numbers follow each other: exactly in discard mode; in
 * overwrite mode with jumps only across packets reported lost.
 *
 * At the end the writers stop, the channel is flushed and drained, and the
 * counts must agree exactly: per buffer (per CPU, for a per-CPU channel)
 * attempted = written + refused, and written = read + lost_overwrite (0 in
 * discard mode); packet sequence gaps = lost_packets in overwrite mode. The verdict depends only
 * on these invariants, never on how much happened; the amounts (records,
 * losses, nested interrupts) are reported with kunit_info().
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hardirq.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "lrb_kunit.h"
#include "../common/stress.h"

static unsigned int stress_ms = 2000;
module_param(stress_ms, uint, 0444);
MODULE_PARM_DESC(stress_ms, "duration of each stress variant, in ms");

#define ST_SUBBUF LRBK_SB16K
#define ST_NUM_DISCARD 8UL
#define ST_NUM_OVERWRITE 4UL
#define ST_BODY_MAX 200
#define ST_MAGIC 0x57e5
#define ST_NR_IDS 29
#define ST_NONE (~0ULL)
#define ST_TRY_DISCARD_RATE 100
#define ST_BIG_EVERY 4096
#define ST_HARD_PERIOD_NS 100000
#define ST_SOFT_PERIOD_NS 150000
#define ST_MAX_MESSAGES 12

/* Writer contexts. */
enum { CTX_TASK, CTX_SOFTIRQ, CTX_HARDIRQ, NR_CTX };

static const char * const ctx_names[] = { "task", "softirq", "hardirq" };

/**
 * struct st_head - start of every record payload
 * @len: payload bytes, checksum included
 * @magic: %ST_MAGIC
 * @cpu: writer's CPU
 * @ctx: writer's context (CTX_*)
 * @buf: index of the buffer the record was reserved in
 * @pad: zero
 * @seq: sequence number of (cpu, ctx)
 * @pos: buffer position of the record header
 *
 * Followed by a body of 0 to %ST_BODY_MAX bytes derived from (cpu, ctx,
 * seq) and a u32 FNV-1a checksum of head and body.
 */
struct st_head {
	u16 len;
	u16 magic;
	u16 cpu;
	u16 ctx;
	u32 buf;
	u32 pad;
	u64 seq;
	u64 pos;
};

#define ST_MIN_LEN (sizeof(struct st_head) + sizeof(u32))
#define ST_MAX_LEN (ST_MIN_LEN + ST_BODY_MAX)

/**
 * struct st_stats - what one (CPU, context) did; touched only by it
 * @rng: random state
 * @next_seq: sequence number of its next record
 * @attempted: reservations tried, minus those taken back
 * @ok: records committed
 * @discarded: reservations taken back by lrb_try_discard()
 * @discard_busy: lrb_try_discard() returned -EBUSY (then committed)
 * @fail: failed reservations, by error
 * @bad_buf: reservations in a buffer other than expected
 * @big: oversized records tried
 * @big_ok: oversized records accepted (a bug)
 * @nested: interrupt writers that found a writer inside a record
 * @ran: it has written (the only field read while it runs, by st_start())
 */
struct st_stats {
	u64 rng;
	u64 next_seq;
	u64 attempted;
	u64 ok;
	u64 discarded;
	u64 discard_busy;
	u64 fail[NR_ERR];
	u64 bad_buf;
	u64 big;
	u64 big_ok;
	u64 nested;
	int ran;
};

struct st_run;

/**
 * struct st_cpu - the writers of one CPU
 * @run: the run
 * @cpu: the CPU
 * @online: it takes part
 * @task: its writer kthread
 * @hard: hardirq timer
 * @soft: softirq timer
 * @started: the kthread has started its timers
 * @st: per context statistics
 */
struct st_cpu {
	struct st_run *run;
	unsigned int cpu;
	bool online;
	struct task_struct *task;
	struct hrtimer hard;
	struct hrtimer soft;
	int started;
	struct st_stats st[NR_CTX];
};

/**
 * struct st_rbuf - the reader's state for one buffer
 * @buf: the buffer
 * @b: its index
 * @have_pkt: a packet was read
 * @last_pkt: sequence number of the last packet read
 * @epoch: increments at every gap in packet sequence numbers
 * @packets: packets read
 * @records: records read
 * @gaps: packets missing between those read
 * @last_ts: timestamp of the last record read
 * @last_pkt_end: timestamp_end of the last packet read
 * @last_disc: events_discarded of the last packet read
 * @last_seq: per (cpu, ctx), seq of the last record read
 * @last_epoch: per (cpu, ctx), epoch of that record
 * @nread: per (cpu, ctx), records read
 */
struct st_rbuf {
	struct lrb_buf *buf;
	unsigned int b;
	bool have_pkt;
	u64 last_pkt;
	u64 epoch;
	u64 packets;
	u64 records;
	u64 gaps;
	u64 last_ts;
	u64 last_pkt_end;
	u64 last_disc;
	u64 *last_seq;
	u64 *last_epoch;
	u64 *nread;
};

struct st_variant {
	const char *name;
	const struct lrb_config *cfg;
	void (*write)(struct st_cpu *c, int ctx);
	void (*write_big)(struct st_cpu *c);
};

/**
 * struct st_run - one stress run
 * @test: the test
 * @v: the variant
 * @chan: the channel
 * @nbufs: its buffers
 * @overwrite: overwrite mode
 * @cpus: per possible CPU
 * @rb: per buffer
 * @dec: record decoder
 * @copy: the packet being checked
 * @copy2: the same, read again after holding it
 * @rng: the reader's random state
 * @stop: writers stop
 * @final: the channel is flushed: the reader drains and exits
 * @reader_done: the reader exited its loop
 * @reader: the reader kthread
 * @bad: records or packets that failed a check
 * @msgs: the first failures, described
 * @nmsgs: failures described
 * @holds: sub-buffers held while writers went on
 * @snapshots: snapshot passes (overwrite mode)
 * @snap_ok: sub-buffers read by snapshots
 * @snap_records: records read by snapshots
 * @pauses: reader pauses
 */
struct st_run {
	struct kunit *test;
	const struct st_variant *v;
	struct lrb_chan *chan;
	unsigned int nbufs;
	bool overwrite;
	struct st_cpu *cpus;
	struct st_rbuf *rb;
	struct lrb_decoder dec;
	u8 *copy;
	u8 *copy2;
	u64 rng;
	int stop;
	int final;
	struct completion reader_done;
	struct task_struct *reader;
	u64 bad;
	char msgs[ST_MAX_MESSAGES][160];
	int nmsgs;
	u64 holds;
	u64 snapshots;
	u64 snap_ok;
	u64 snap_records;
	u64 pauses;
};

static inline u32 st_id(u32 cpu, u32 ctx, u64 seq)
{
	return ((u32)seq + cpu * 3 + ctx) % ST_NR_IDS;
}

/* The buffer CPU @cpu writes. */
static unsigned int st_buf_of(const struct lrb_config *cfg, unsigned int cpu)
{
	return cfg->alloc == LRB_ALLOC_GLOBAL ? 0 : cpu;
}

/*
 * Write one record of context @cx on CPU @c. Inlined once per variant with
 * a constant @cfg, like a client's fast path. Runs in task, softirq or
 * hardirq context.
 */
static __always_inline void st_write_one(const struct lrb_config *cfg,
					 struct st_cpu *c, int cx)
{
	struct st_stats *st = &c->st[cx];
	u64 seq = st->next_seq, key = stress_key(c->cpu, cx, seq);
	u32 blen = stress_body_len(key, ST_BODY_MAX), csum, i, half;
	u8 body[ST_BODY_MAX];
	struct lrb_ctx ctx;
	struct st_head h;
	int ret;

	if (unlikely(!st->attempted++)) {
		/* the first write; pairs with st_ran() */
		smp_store_release(&st->ran, 1);
	}
	ret = lrb_reserve(cfg, c->run->chan, &ctx, st_id(c->cpu, cx, seq),
			  ST_MIN_LEN + blen);
	if (ret) {
		st->fail[stress_err(ret)]++;
		return;
	}
	h.len = ST_MIN_LEN + blen;
	h.magic = ST_MAGIC;
	h.cpu = c->cpu;
	h.ctx = cx;
	h.buf = ctx.buf->cpu;
	h.pad = 0;
	h.seq = seq;
	h.pos = ctx.begin;
	if (h.buf != st_buf_of(cfg, c->cpu))
		st->bad_buf++;
	lrb_write(&ctx, &h, sizeof(h));
	for (i = 0; i < blen; i++)
		body[i] = stress_pattern(key, i);
	csum = stress_fnv(stress_fnv(STRESS_FNV_BASIS, &h, sizeof(h)), body, blen);
	half = blen / 2;
	lrb_write(&ctx, body, half);
	lrb_write(&ctx, body + half, blen - half);
	lrb_write(&ctx, &csum, sizeof(csum));
	if ((u32)stress_rng(&st->rng) % ST_TRY_DISCARD_RATE == 0) {
		if (!lrb_try_discard(cfg, &ctx)) {
			/* never written: not an attempt, seq not used */
			st->attempted--;
			st->discarded++;
			return;
		}
		st->discard_busy++;
	}
	lrb_commit(cfg, &ctx);
	st->ok++;
	st->next_seq++;
}

/* A record larger than a sub-buffer: must fail with -EMSGSIZE. */
static __always_inline void st_write_big(const struct lrb_config *cfg,
					 struct st_cpu *c)
{
	struct st_stats *st = &c->st[CTX_TASK];
	struct lrb_ctx ctx;
	int ret;

	st->big++;
	st->attempted++;
	ret = lrb_reserve(cfg, c->run->chan, &ctx, 1, ST_SUBBUF);
	if (!ret) {
		st->big_ok++;
		if (!lrb_try_discard(cfg, &ctx)) {
			st->attempted--;
			return;
		}
		/* cannot take it back: the reader will notice */
		lrb_commit(cfg, &ctx);
		st->ok++;
		return;
	}
	st->fail[stress_err(ret)]++;
}

/* One clock for all CPUs of a global buffer, strictly increasing. */
static atomic64_t st_global_ticks = ATOMIC64_INIT(1);

static u64 st_global_clock(void)
{
	return atomic64_inc_return(&st_global_ticks);
}

#define ST_VARIANT(name, m, a, h, clk)					\
	static const struct lrb_config st_cfg_##name = {		\
		.mode = LRB_MODE_##m,					\
		.alloc = LRB_ALLOC_##a,					\
		.wakeup = LRB_WAKEUP_BY_WRITER,				\
		.header = LRB_HEADER_##h,				\
		.tsc_bits = 27,						\
		.cb = { .clock_read = clk },				\
	};								\
	static void st_write_##name(struct st_cpu *c, int cx)		\
	{								\
		st_write_one(&st_cfg_##name, c, cx);			\
	}								\
	static void st_big_##name(struct st_cpu *c)			\
	{								\
		st_write_big(&st_cfg_##name, c);			\
	}

ST_VARIANT(discard_percpu_compact, DISCARD, PER_CPU, COMPACT,
	   lrb_clock_default)
ST_VARIANT(discard_global_large, DISCARD, GLOBAL, LARGE, st_global_clock)
ST_VARIANT(overwrite_percpu_compact, OVERWRITE, PER_CPU, COMPACT,
	   lrb_clock_default)
ST_VARIANT(overwrite_global_large, OVERWRITE, GLOBAL, LARGE,
	   st_global_clock)

#define ST_V(name)							\
	{ #name, &st_cfg_##name, st_write_##name, st_big_##name }

static const struct st_variant st_variants[] = {
	ST_V(discard_percpu_compact),
	ST_V(discard_global_large),
	ST_V(overwrite_percpu_compact),
	ST_V(overwrite_global_large),
};

static void st_variant_desc(const struct st_variant *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(st_variants, st_variants, st_variant_desc);

/* Interrupt writers. */
static void st_irq_write(struct st_cpu *c, int cx)
{
	struct st_stats *st = &c->st[cx];
	int n, i;

	if (this_cpu_read(__lrb_nesting))
		st->nested++;
	n = 1 + (u32)stress_rng(&st->rng) % 3;
	for (i = 0; i < n; i++)
		c->run->v->write(c, cx);
}

static enum hrtimer_restart st_hard_fn(struct hrtimer *t)
{
	struct st_cpu *c = container_of(t, struct st_cpu, hard);

	if (READ_ONCE(c->run->stop))
		return HRTIMER_NORESTART;
	st_irq_write(c, CTX_HARDIRQ);
	hrtimer_forward_now(t, ns_to_ktime(ST_HARD_PERIOD_NS));
	return HRTIMER_RESTART;
}

static enum hrtimer_restart st_soft_fn(struct hrtimer *t)
{
	struct st_cpu *c = container_of(t, struct st_cpu, soft);

	if (READ_ONCE(c->run->stop))
		return HRTIMER_NORESTART;
	st_irq_write(c, CTX_SOFTIRQ);
	hrtimer_forward_now(t, ns_to_ktime(ST_SOFT_PERIOD_NS));
	return HRTIMER_RESTART;
}

static int st_writer_fn(void *arg)
{
	struct st_cpu *c = arg;
	struct st_run *run = c->run;
	u64 iter;

	/* bound to its CPU: the timers start there and stay there */
	hrtimer_start(&c->hard, ns_to_ktime(ST_HARD_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_start(&c->soft, ns_to_ktime(ST_SOFT_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_SOFT);
	/* timers armed before started; pairs with st_start() */
	smp_store_release(&c->started, 1);
	for (iter = 0; !READ_ONCE(run->stop); iter++) {
		u64 full = c->st[CTX_TASK].fail[E_NOBUFS];

		if (iter % ST_BIG_EVERY == ST_BIG_EVERY - 1)
			run->v->write_big(c);
		run->v->write(c, CTX_TASK);
		/*
		 * A full buffer: give the reader a chance now and then, if
		 * sleeping takes microseconds rather than a tick.
		 */
		if (c->st[CTX_TASK].fail[E_NOBUFS] != full &&
		    hrtimer_resolution < NSEC_PER_MSEC &&
		    stress_rng(&c->st[CTX_TASK].rng) % 16 == 0)
			usleep_range(10, 50);
		cond_resched();
	}
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* Record a failed check; describe the first few. */
static void st_bad(struct st_run *run, const struct st_rbuf *r,
		   const struct lrb_subbuf *sb, unsigned long off,
		   const char *what, unsigned long long a,
		   unsigned long long b)
{
	run->bad++;
	if (run->nmsgs >= ST_MAX_MESSAGES)
		return;
	snprintf(run->msgs[run->nmsgs++], sizeof(run->msgs[0]),
		 "buf %u packet %llu (pos %lu) offset %lu: %s (%llu vs %llu)",
		 r->b, sb->seq, sb->pos, off, what, a, b);
}

/* lrb_decoder.payload_size: the first u16 of the payload. */
static long st_payload_size(const struct lrb_decoder *dec, u32 id,
			    const u8 *payload, unsigned long avail)
{
	u16 len;

	if (id >= ST_NR_IDS || avail < sizeof(len))
		return -EBADMSG;
	memcpy(&len, payload, sizeof(len));
	if (len < ST_MIN_LEN || len > ST_MAX_LEN)
		return -EBADMSG;
	return len;
}

static void st_verify_record(struct st_run *run, struct st_rbuf *r,
			     const struct lrb_subbuf *sb,
			     const struct lrb_packet_header *ph,
			     const struct lrb_record *rec, bool consuming)
{
	unsigned long off = rec->offset, hlen, pad, i;
	u64 key, k, last;
	struct st_head h;
	u32 csum, blen;

	if (rec->len < ST_MIN_LEN) {
		st_bad(run, r, sb, off, "payload too short", rec->len,
		       ST_MIN_LEN);
		return;
	}
	memcpy(&h, rec->payload, sizeof(h));
	if (h.len != rec->len || h.magic != ST_MAGIC ||
	    h.cpu >= nr_cpu_ids || h.ctx >= NR_CTX) {
		st_bad(run, r, sb, off, "bad record head (len/magic, cpu/ctx)",
		       (u64)h.magic << 16 | h.len, (u64)h.cpu << 16 | h.ctx);
		return;
	}
	key = stress_key(h.cpu, h.ctx, h.seq);
	blen = stress_body_len(key, ST_BODY_MAX);
	if (h.len != ST_MIN_LEN + blen) {
		st_bad(run, r, sb, off, "length does not match seq", h.len,
		       ST_MIN_LEN + blen);
		return;
	}
	for (i = 0; i < blen; i++) {
		if (rec->payload[sizeof(h) + i] != stress_pattern(key, i)) {
			st_bad(run, r, sb, off, "bad body byte", i, blen);
			return;
		}
	}
	memcpy(&csum, rec->payload + sizeof(h) + blen, sizeof(csum));
	if (csum != stress_fnv(STRESS_FNV_BASIS, rec->payload, sizeof(h) + blen))
		st_bad(run, r, sb, off, "bad checksum", csum, 0);
	if (h.buf != r->b || h.pad)
		st_bad(run, r, sb, off, "record of another buffer", h.buf,
		       r->b);
	if (h.pos != sb->pos + off)
		st_bad(run, r, sb, off, "record at a wrong position", h.pos,
		       sb->pos + off);
	if (rec->id != st_id(h.cpu, h.ctx, h.seq))
		st_bad(run, r, sb, off, "bad event id", rec->id,
		       st_id(h.cpu, h.ctx, h.seq));
	if (rec->extended)
		hlen = LRB_EXTENDED_HEADER_SIZE;
	else if (run->v->cfg->header == LRB_HEADER_COMPACT)
		hlen = LRB_COMPACT_HEADER_SIZE;
	else
		hlen = LRB_LARGE_HEADER_SIZE;
	pad = -(hlen + rec->len) & (LRB_RECORD_ALIGN - 1);
	for (i = 0; i < pad; i++)
		if (rec->payload[rec->len + i])
			st_bad(run, r, sb, off, "record padding not zero", i,
			       rec->payload[rec->len + i]);
	if (rec->timestamp > ph->timestamp_end)
		st_bad(run, r, sb, off, "record after its packet's end",
		       rec->timestamp, ph->timestamp_end);
	if (!consuming) {
		run->snap_records++;
		return;
	}

	r->records++;
	if (rec->timestamp < r->last_ts)
		st_bad(run, r, sb, off, "timestamp before the previous record's",
		       rec->timestamp, r->last_ts);
	r->last_ts = rec->timestamp;
	k = (u64)h.cpu * NR_CTX + h.ctx;
	last = r->last_seq[k];
	if (!run->overwrite) {
		/* discard mode: every committed record, in order */
		if (h.seq != (last == ST_NONE ? 0 : last + 1))
			st_bad(run, r, sb, off, "seq of (cpu, ctx) not next",
			       h.seq, last + 1);
	} else if (last != ST_NONE) {
		if (h.seq <= last)
			st_bad(run, r, sb, off, "seq of (cpu, ctx) went back",
			       h.seq, last);
		else if (h.seq != last + 1 && r->last_epoch[k] == r->epoch)
			st_bad(run, r, sb, off,
			       "records of (cpu, ctx) lost inside a packet",
			       h.seq, last + 1);
	}
	r->last_seq[k] = h.seq;
	r->last_epoch[k] = r->epoch;
	r->nread[k]++;
}

static void st_verify_packet(struct st_run *run, struct st_rbuf *r,
			     const struct lrb_subbuf *sb, bool consuming)
{
	struct lrb_chan *chan = run->chan;
	const struct lrb_packet_header *ph;
	struct lrb_packet_iter it;
	struct lrb_record rec;
	unsigned long i, content;
	int ret;

	ret = lrb_subbuf_copy(chan, sb, 0, run->copy, ST_SUBBUF);
	if (ret) {
		st_bad(run, r, sb, 0, "lrb_subbuf_copy failed", -ret, 0);
		return;
	}
	content = sb->content_size;
	if (sb->seq != sb->pos / ST_SUBBUF ||
	    sb->packet_size != __lrb_packet_size(chan, content))
		st_bad(run, r, sb, 0, "sub-buffer seq or size", sb->seq,
		       sb->packet_size);
	ret = lrb_packet_open(&it, &run->dec, run->copy, ST_SUBBUF);
	if (ret) {
		st_bad(run, r, sb, it.error_offset,
		       it.error ? it.error : "lrb_packet_open failed", -ret, 0);
		return;
	}
	ph = &it.header;
	content = ph->content_size / 8;
	if (ph->stream_id != LRBK_STREAM_ID ||
	    ph->packet_size != (u64)sb->packet_size * 8 ||
	    ph->packet_seq_num != sb->seq || content != sb->content_size ||
	    ph->cpu_id != r->b)
		st_bad(run, r, sb, 0, "bad packet header (seq, cpu)",
		       ph->packet_seq_num, ph->cpu_id);
	if (ph->timestamp_end < ph->timestamp_begin)
		st_bad(run, r, sb, 0, "packet ends before it begins",
		       ph->timestamp_end, ph->timestamp_begin);
	for (i = content; i < ST_SUBBUF; i++) {
		if (run->copy[i]) {
			st_bad(run, r, sb, i, "packet padding not zero",
			       run->copy[i], 0);
			break;
		}
	}
	if (consuming) {
		u64 expect = r->have_pkt ? r->last_pkt + 1 : 0;

		if (sb->seq != expect) {
			if (sb->seq < expect || !run->overwrite)
				st_bad(run, r, sb, 0, "packet seq not next",
				       sb->seq, expect);
			if (sb->seq > expect)
				r->gaps += sb->seq - expect;
			r->epoch++;
		}
		r->have_pkt = true;
		r->last_pkt = sb->seq;
		r->packets++;
		if (ph->timestamp_begin < r->last_pkt_end)
			st_bad(run, r, sb, 0, "packet begins before the previous end",
			       ph->timestamp_begin, r->last_pkt_end);
		r->last_pkt_end = ph->timestamp_end;
		if (ph->events_discarded < r->last_disc)
			st_bad(run, r, sb, 0, "events_discarded went back",
			       ph->events_discarded, r->last_disc);
		r->last_disc = ph->events_discarded;
		if (ph->events_discarded > lrb_buf_lost(r->buf))
			st_bad(run, r, sb, 0, "events_discarded > lrb_buf_lost()",
			       ph->events_discarded, lrb_buf_lost(r->buf));
	}
	while ((ret = lrb_packet_next(&it, &rec)) == 1)
		st_verify_record(run, r, sb, ph, &rec, consuming);
	if (ret < 0)
		st_bad(run, r, sb, it.error_offset, it.error, 0, 0);
}

static unsigned long st_lost_full(struct lrb_buf *buf)
{
	struct lrb_buf_counters s;

	lrb_buf_stats(buf, &s);
	return s.lost_full;
}

/*
 * Keep the sub-buffer just verified (its bytes are in run->copy) until
 * writers went round the ring past it (overwrite mode) or were refused
 * for lack of space (discard mode), at most 20 ms; then not one of its
 * bytes may have changed.
 */
static void st_hold(struct st_run *run, struct st_rbuf *r,
		    const struct lrb_subbuf *sb)
{
	unsigned long c, p, target, lost0 = 0, i;
	u64 t0 = ktime_get_ns();

	target = sb->pos + __lrb_buf_size(run->chan) +
		 stress_rng(&run->rng) % ST_SUBBUF;
	if (!run->overwrite)
		lost0 = st_lost_full(r->buf);
	run->holds++;
	for (;;) {
		lrb_positions(r->buf, &c, &p);
		if ((long)(p - target) >= 0)
			break;
		if (!run->overwrite && st_lost_full(r->buf) != lost0)
			break;
		if (ktime_get_ns() - t0 > 20 * NSEC_PER_MSEC ||
		    READ_ONCE(run->stop))
			break;
		usleep_range(20, 50);
	}
	if (lrb_subbuf_copy(run->chan, sb, 0, run->copy2, ST_SUBBUF) ||
	    !memcmp(run->copy, run->copy2, ST_SUBBUF))
		return;
	for (i = 0; run->copy[i] == run->copy2[i]; i++)
		;
	st_bad(run, r, sb, i, "held sub-buffer changed under the reader",
	       run->copy[i], run->copy2[i]);
}

/* Overwrite mode: read every complete sub-buffer without consuming. */
static void st_snapshot(struct st_run *run, struct st_rbuf *r)
{
	unsigned long c, p, pos, start, size = __lrb_buf_size(run->chan);
	struct lrb_subbuf sb;
	bool held = false;
	int ret;

	run->snapshots++;
	lrb_positions(r->buf, &c, &p);
	p &= ~(ST_SUBBUF - 1);
	start = p >= size ? p - size : 0;
	if ((long)(c - start) > 0)
		start = c;
	for (pos = start; (long)(p - pos) >= 0; pos += ST_SUBBUF) {
		ret = lrb_get_subbuf(r->buf, pos, &sb);
		if (ret == -EAGAIN || ret == -ENODATA)
			continue;
		if (ret) {
			sb.pos = pos;
			sb.seq = pos / ST_SUBBUF;
			st_bad(run, r, &sb, 0, "lrb_get_subbuf failed", -ret, 0);
			continue;
		}
		if (sb.pos != pos || sb.consuming)
			st_bad(run, r, &sb, 0, "lrb_get_subbuf gave a bad sb",
			       sb.pos, pos);
		st_verify_packet(run, r, &sb, false);
		if (!held) {
			st_hold(run, r, &sb);
			held = true;
		}
		if (lrb_put_subbuf(r->buf, &sb))
			st_bad(run, r, &sb, 0, "lrb_put_subbuf failed", 0, 0);
		run->snap_ok++;
	}
}

static int st_reader_fn(void *arg)
{
	struct st_run *run = arg;
	u64 next_pause, next_snap, now;
	struct lrb_subbuf sb;
	unsigned int b;
	bool final, any;
	int ret;

	next_pause = ktime_get_ns() + 50 * NSEC_PER_MSEC;
	next_snap = ktime_get_ns() + 30 * NSEC_PER_MSEC;
	for (;;) {
		/* pairs with st_stop(): the flush is done when final is set */
		final = smp_load_acquire(&run->final);
		any = false;
		for (b = 0; b < run->nbufs; b++) {
			struct st_rbuf *r = &run->rb[b];

			ret = lrb_get_next_subbuf(r->buf, &sb);
			if (ret == -EAGAIN)
				continue;
			if (ret) {
				sb.pos = 0;
				sb.seq = 0;
				st_bad(run, r, &sb, 0,
				       "lrb_get_next_subbuf failed", -ret, 0);
				continue;
			}
			any = true;
			if (!sb.consuming)
				st_bad(run, r, &sb, 0, "not consuming", 0, 0);
			st_verify_packet(run, r, &sb, true);
			if (!final && stress_rng(&run->rng) % 8 == 0)
				st_hold(run, r, &sb);
			if (lrb_put_subbuf(r->buf, &sb))
				st_bad(run, r, &sb, 0, "lrb_put_subbuf failed",
				       0, 0);
		}
		if (final) {
			if (!any)
				break;
			continue;
		}
		now = ktime_get_ns();
		if (now >= next_pause) {
			/* let the buffers fill */
			run->pauses++;
			msleep(10 + (u32)stress_rng(&run->rng) % 20);
			next_pause = ktime_get_ns() + 100 * NSEC_PER_MSEC;
		}
		if (run->overwrite && now >= next_snap) {
			for (b = 0; b < run->nbufs; b++)
				st_snapshot(run, &run->rb[b]);
			next_snap = ktime_get_ns() + 30 * NSEC_PER_MSEC;
		}
		if (!any)
			usleep_range(50, 200);
		cond_resched();
	}
	complete(&run->reader_done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static struct st_run *st_setup(struct kunit *test, const struct st_variant *v)
{
	unsigned int nk = nr_cpu_ids * NR_CTX, b, cpu, x;
	struct st_run *run;

	run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, run);
	run->test = test;
	run->v = v;
	run->overwrite = v->cfg->mode == LRB_MODE_OVERWRITE;
	run->dec.header = v->cfg->header;
	run->dec.tsc_bits = v->cfg->tsc_bits;
	run->dec.payload_size = st_payload_size;
	run->rng = 0x9e3779b97f4a7c15ULL;
	init_completion(&run->reader_done);
	run->chan = lrbk_chan_new(test, v->cfg, ST_SUBBUF,
				  run->overwrite ? ST_NUM_OVERWRITE :
						   ST_NUM_DISCARD);
	run->nbufs = v->cfg->alloc == LRB_ALLOC_GLOBAL ? 1 : nr_cpu_ids;
	run->copy = kunit_kzalloc(test, ST_SUBBUF, GFP_KERNEL);
	run->copy2 = kunit_kzalloc(test, ST_SUBBUF, GFP_KERNEL);
	run->cpus = kunit_kcalloc(test, nr_cpu_ids, sizeof(*run->cpus),
				  GFP_KERNEL);
	run->rb = kunit_kcalloc(test, run->nbufs, sizeof(*run->rb), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, run->copy && run->copy2 && run->cpus && run->rb);
	for (b = 0; b < run->nbufs; b++) {
		struct st_rbuf *r = &run->rb[b];

		r->buf = lrb_channel_nth_buf(run->chan, b);
		r->b = b;
		r->last_seq = kunit_kcalloc(test, nk, sizeof(u64), GFP_KERNEL);
		r->last_epoch = kunit_kcalloc(test, nk, sizeof(u64),
					      GFP_KERNEL);
		r->nread = kunit_kcalloc(test, nk, sizeof(u64), GFP_KERNEL);
		KUNIT_ASSERT_TRUE(test, r->last_seq && r->last_epoch &&
				  r->nread);
		memset(r->last_seq, 0xff, nk * sizeof(u64));
		KUNIT_ASSERT_EQ(test, lrb_reader_open(r->buf), 0);
	}
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct st_cpu *c = &run->cpus[cpu];

		c->run = run;
		c->cpu = cpu;
		for (x = 0; x < NR_CTX; x++)
			c->st[x].rng = stress_mix(cpu * 131 + x + 1) | 1;
		hrtimer_init(&c->hard, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		c->hard.function = st_hard_fn;
		hrtimer_init(&c->soft, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_SOFT);
		c->soft.function = st_soft_fn;
	}
	return run;
}

/* Has context @cx of @c written? */
static bool st_ran(struct st_cpu *c, int cx)
{
	/* pairs with the release in st_write_one() */
	return smp_load_acquire(&c->st[cx].ran);
}

/* Start the reader and a writer per online CPU; wait until all run. */
static void st_start(struct kunit *test, struct st_run *run)
{
	unsigned int cpu;
	u64 deadline;
	bool all;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct st_cpu *c = &run->cpus[cpu];

		c->task = kthread_create_on_cpu(st_writer_fn, c, cpu,
						"lrb_stress/%u");
		if (IS_ERR(c->task)) {
			c->task = NULL;
			continue;
		}
		get_task_struct(c->task);
		c->online = true;
	}
	cpus_read_unlock();
	run->reader = kthread_run(st_reader_fn, run, "lrb_stress_rd");
	KUNIT_ASSERT_FALSE(test, IS_ERR(run->reader));
	get_task_struct(run->reader);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (run->cpus[cpu].task)
			wake_up_process(run->cpus[cpu].task);

	/* every writer, and every timer, has run at least once */
	deadline = ktime_get_ns() + 30ULL * NSEC_PER_SEC;
	do {
		usleep_range(1000, 2000);
		all = true;
		for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
			struct st_cpu *c = &run->cpus[cpu];

			if (!c->online)
				continue;
			/* pairs with the release in st_writer_fn() */
			if (!smp_load_acquire(&c->started) ||
			    !st_ran(c, CTX_TASK) || !st_ran(c, CTX_SOFTIRQ) ||
			    !st_ran(c, CTX_HARDIRQ))
				all = false;
		}
	} while (!all && ktime_get_ns() < deadline);
	KUNIT_EXPECT_TRUE_MSG(test, all,
			      "some writer or timer did not run within 30 s");
}

/* Stop the writers and timers, flush, let the reader drain everything. */
static void st_stop(struct kunit *test, struct st_run *run,
		    unsigned long *pre_produced)
{
	unsigned int cpu, b;
	unsigned long c;

	WRITE_ONCE(run->stop, 1);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct st_cpu *sc = &run->cpus[cpu];

		if (sc->task) {
			kthread_stop(sc->task);
			put_task_struct(sc->task);
			sc->task = NULL;
		}
		hrtimer_cancel(&sc->hard);
		hrtimer_cancel(&sc->soft);
	}
	for (b = 0; b < run->nbufs; b++)
		lrb_positions(run->rb[b].buf, &c, &pre_produced[b]);
	lrb_channel_flush(run->chan);
	/* the flush before final; pairs with the reader's acquire */
	smp_store_release(&run->final, 1);
	KUNIT_EXPECT_TRUE_MSG(test,
			      wait_for_completion_timeout(&run->reader_done,
							  120 * HZ),
			      "the reader did not finish draining in 120 s");
	kthread_stop(run->reader);
	put_task_struct(run->reader);
	for (b = 0; b < run->nbufs; b++)
		lrb_reader_close(run->rb[b].buf);
}

/* Per buffer: attempted, written and failed by error, from the writers. */
struct st_wsum {
	u64 attempted;
	u64 ok;
	u64 fail[NR_ERR];
};

static void st_check(struct kunit *test, struct st_run *run,
		     const unsigned long *pre_produced)
{
	const char *name = run->v->name;
	u64 tot_ok = 0, tot_read = 0, tot_att = 0, tot_lost = 0, tot_gaps = 0;
	u64 tot_over = 0;
	u64 tot_nested = 0, tot_disc = 0, tot_big = 0, tot_ctx[NR_CTX] = { 0 };
	u64 tot_packets = 0, tot_fail[NR_ERR] = { 0 };
	unsigned int cpu, b, x, e;
	struct st_wsum *ws;
	int i;

	ws = kunit_kcalloc(test, run->nbufs, sizeof(*ws), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ws);
	for (i = 0; i < run->nmsgs; i++)
		kunit_err(test, "%s: %s", name, run->msgs[i]);
	KUNIT_EXPECT_EQ_MSG(test, run->bad, 0ULL,
			    "%s: records or packets failed checks", name);

	/* writers */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct st_cpu *c = &run->cpus[cpu];
		struct st_wsum *w = &ws[st_buf_of(run->v->cfg, cpu)];

		for (x = 0; x < NR_CTX; x++) {
			struct st_stats *st = &c->st[x];
			u64 fails = 0;

			for (e = 0; e < NR_ERR; e++) {
				fails += st->fail[e];
				w->fail[e] += st->fail[e];
				tot_fail[e] += st->fail[e];
			}
			KUNIT_EXPECT_EQ_MSG(test, st->attempted, st->ok + fails,
					    "%s: cpu %u %s: attempted != written + failed",
					    name, cpu, ctx_names[x]);
			KUNIT_EXPECT_EQ_MSG(test, st->next_seq, st->ok,
					    "%s: cpu %u %s: sequence numbers used != written",
					    name, cpu, ctx_names[x]);
			KUNIT_EXPECT_EQ_MSG(test, st->bad_buf, 0ULL,
					    "%s: cpu %u %s: records in another CPU's buffer",
					    name, cpu, ctx_names[x]);
			KUNIT_EXPECT_EQ_MSG(test, st->big_ok, 0ULL,
					    "%s: cpu %u: oversized records accepted",
					    name, cpu);
			w->attempted += st->attempted;
			w->ok += st->ok;
			tot_ok += st->ok;
			tot_att += st->attempted;
			tot_nested += st->nested;
			tot_disc += st->discarded;
			tot_big += st->big;
			tot_ctx[x] += st->ok;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, tot_fail[E_OTHER], 0ULL,
			    "%s: unexpected reserve errors", name);
	KUNIT_EXPECT_EQ_MSG(test, tot_fail[E_MSGSIZE], tot_big,
			    "%s: oversized records not refused with -EMSGSIZE",
			    name);

	for (b = 0; b < run->nbufs; b++) {
		struct st_rbuf *r = &run->rb[b];
		struct st_wsum *w = &ws[b];
		unsigned long npk, lost, refused;
		struct lrb_buf_counters s;
		u64 expect, trail;

		lrb_buf_stats(r->buf, &s);
		lost = lrb_buf_lost(r->buf);
		refused = lost - s.lost_overwrite;
		tot_read += r->records;
		tot_lost += refused;
		tot_over += s.lost_overwrite;
		tot_packets += r->packets;

		/* positions: all produced packets read or lost */
		npk = s.produced / ST_SUBBUF;
		KUNIT_EXPECT_TRUE_MSG(test, s.produced % ST_SUBBUF == 0 ||
				      s.produced % ST_SUBBUF ==
				      LRB_PACKET_HEADER_SIZE,
				      "%s: buf %u: produced %llu not at a packet end after flush",
				      name, b,
				      (unsigned long long)s.produced);
		KUNIT_EXPECT_EQ_MSG(test, s.consumed, npk * ST_SUBBUF,
				    "%s: buf %u: consumed != produced packets",
				    name, b);
		expect = r->have_pkt ? r->last_pkt + 1 : 0;
		trail = npk > expect ? npk - expect : 0;
		if (trail) {
			r->gaps += trail;
			r->epoch++;
		}
		tot_gaps += r->gaps;
		KUNIT_EXPECT_EQ_MSG(test, r->packets + r->gaps, (u64)npk,
				    "%s: buf %u: packets read + lost != produced",
				    name, b);
		KUNIT_EXPECT_EQ_MSG(test, r->gaps, (u64)s.lost_packets,
				    "%s: buf %u: packet seq gaps != lost_packets",
				    name, b);

		/* records: attempted = written + refused, exactly, per buffer */
		KUNIT_EXPECT_EQ_MSG(test, w->attempted, w->ok + refused,
				    "%s: buf %u: attempted != written + refused",
				    name, b);
		KUNIT_EXPECT_EQ_MSG(test, (u64)s.records_written, w->ok,
				    "%s: buf %u: records counted != written",
				    name, b);
		/* written = read + lost in overwritten packets, exactly */
		KUNIT_EXPECT_EQ_MSG(test, w->ok, r->records + s.lost_overwrite,
				    "%s: buf %u: written != read + lost_overwrite",
				    name, b);
		KUNIT_EXPECT_EQ_MSG(test, !s.lost_overwrite, !s.lost_packets,
				    "%s: buf %u: lost_overwrite without lost_packets or back",
				    name, b);
		KUNIT_EXPECT_EQ_MSG(test, (u64)s.lost_full, w->fail[E_NOBUFS],
				    "%s: buf %u: lost_full != -ENOBUFS", name, b);
		KUNIT_EXPECT_EQ_MSG(test, (u64)s.lost_wrap, w->fail[E_AGAIN],
				    "%s: buf %u: lost_wrap != -EAGAIN", name, b);
		KUNIT_EXPECT_EQ_MSG(test, (u64)s.lost_big, w->fail[E_MSGSIZE],
				    "%s: buf %u: lost_big != -EMSGSIZE", name, b);
		KUNIT_EXPECT_EQ_MSG(test, (u64)s.lost_nest, w->fail[E_BUSY],
				    "%s: buf %u: lost_nest != -EBUSY", name, b);
		if (!run->overwrite) {
			KUNIT_EXPECT_EQ_MSG(test, r->records, w->ok,
					    "%s: buf %u: read != written", name,
					    b);
			KUNIT_EXPECT_EQ_MSG(test, s.lost_packets + s.lost_wrap,
					    0UL,
					    "%s: buf %u: discard mode lost packets or wrapped",
					    name, b);
		} else {
			KUNIT_EXPECT_LE_MSG(test, r->records, w->ok,
					    "%s: buf %u: read > written", name, b);
			KUNIT_EXPECT_EQ_MSG(test, s.lost_full, 0UL,
					    "%s: buf %u: overwrite mode -ENOBUFS",
					    name, b);
		}

		/* per (cpu, ctx): the chain read ends where the writer's did */
		for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
			if (st_buf_of(run->v->cfg, cpu) != b)
				continue;
			for (x = 0; x < NR_CTX; x++) {
				struct st_stats *st = &run->cpus[cpu].st[x];
				u64 k = (u64)cpu * NR_CTX + x;

				if (!run->overwrite) {
					KUNIT_EXPECT_EQ_MSG(test, r->nread[k], st->ok,
							    "%s: cpu %u %s: read != written",
							    name, cpu, ctx_names[x]);
				} else if (r->last_epoch[k] == r->epoch &&
					   st->ok) {
					KUNIT_EXPECT_EQ_MSG(test, r->last_seq[k],
							    st->ok - 1,
							    "%s: cpu %u %s: newest record not read",
							    name, cpu, ctx_names[x]);
				}
			}
		}

		/* the packet closed by the flush reports every loss */
		if (pre_produced[b] % ST_SUBBUF > LRB_PACKET_HEADER_SIZE)
			KUNIT_EXPECT_EQ_MSG(test, r->last_disc, (u64)lost,
					    "%s: buf %u: last events_discarded != lost",
					    name, b);
		else
			KUNIT_EXPECT_LE_MSG(test, r->last_disc, (u64)lost,
					    "%s: buf %u: events_discarded > lost",
					    name, b);
	}
	KUNIT_EXPECT_EQ_MSG(test, tot_att, tot_ok + tot_lost,
			    "%s: attempted != written + refused", name);
	KUNIT_EXPECT_EQ_MSG(test, tot_ok, tot_read + tot_over,
			    "%s: written != read + lost_overwrite", name);

	kunit_info(test,
		   "%s, %u CPUs, %u ms: attempted %llu, written %llu (task %llu, softirq %llu, hardirq %llu; %llu interrupts inside a record), read %llu, try-discarded %llu",
		   name, num_online_cpus(), stress_ms, tot_att, tot_ok,
		   tot_ctx[CTX_TASK], tot_ctx[CTX_SOFTIRQ], tot_ctx[CTX_HARDIRQ],
		   tot_nested, tot_read, tot_disc);
	kunit_info(test,
		   "%s: refused %llu (-ENOBUFS %llu, -EAGAIN %llu, -EMSGSIZE %llu, -EBUSY %llu); packets read %llu, lost %llu with %llu records; reader pauses %llu, holds %llu, snapshots %llu (%llu sub-buffers, %llu records)",
		   name, tot_lost, tot_fail[E_NOBUFS], tot_fail[E_AGAIN],
		   tot_fail[E_MSGSIZE], tot_fail[E_BUSY], tot_packets, tot_gaps,
		   tot_over, run->pauses, run->holds, run->snapshots, run->snap_ok,
		   run->snap_records);
}

/*
 * Writers on every CPU in task, softirq and hardirq context, and a
 * concurrent reader, for stress_ms; then every count must agree.
 */
static void stress(struct kunit *test)
{
	const struct st_variant *v = test->param_value;
	unsigned long *pre_produced;
	struct st_run *run;

	run = st_setup(test, v);
	pre_produced = kunit_kcalloc(test, run->nbufs, sizeof(*pre_produced),
				     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pre_produced);
	st_start(test, run);
	msleep(stress_ms);
	st_stop(test, run, pre_produced);
	st_check(test, run, pre_produced);
}

static struct kunit_case lrb_stress_cases[] = {
	KUNIT_CASE_PARAM_ATTR(stress, st_variants_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite lrb_stress_suite = {
	.name = "lrb_stress",
	.test_cases = lrb_stress_cases,
};

kunit_test_suite(lrb_stress_suite);
