// SPDX-License-Identifier: GPL-2.0
/*
 * lrb concurrency stress test.
 *
 *	stress --mode discard|overwrite --seconds N [--layout compact|large]
 *	       [--alloc percpu|global] [--signals on|off]
 *	       [--clock monotonic|cycles] [--try-discard on|off]
 *
 * Runs every selected variant (clock x layout x alloc, both of each by
 * default; the clocks only on x86, where lrb_clock_cycles() is not
 * CLOCK_MONOTONIC) of the mode for an equal share of N seconds. In each
 * run:
 *
 * - one writer thread per possible CPU, pinned to its CPU; odd threads are
 *   un-pinned every other 10 ms and then also hop to another CPU between
 *   reserve and commit of some records, so that records migrate;
 * - with --signals on, a helper thread sends SIGUSR1 to every writer every
 *   100 us; the handler writes 1 to 3 records and sometimes, holding a
 *   reservation, raises SIGUSR2 (SA_NODEFER), whose handler writes and may
 *   raise SIGUSR2 again, deep enough to hit the nesting limit;
 * - one reader thread per buffer consumes packets (discard: sleeping now
 *   and then so the buffer fills; overwrite: slow, so writers overwrite,
 *   and taking non-consuming snapshots every 50 ms), decodes them and
 *   verifies every record; it keeps some sub-buffers while writers go
 *   round the ring, and checks that none of their bytes changed;
 * - writers discard about 1% of their records: lrb_try_discard() takes
 *   back the last reservation of the buffer, lrb_discard() any other one,
 *   which readers never see (--try-discard off disables this).
 *
 * Every record payload is a struct rec_head (its first u16 is the payload
 * length, which the decoder's payload_size callback returns), a body of
 * 0 to 200 bytes derived from (thread, context, seq) and a checksum. The
 * context is the signal nesting depth of the writer (0: thread), so that
 * the writers of one (thread, context) never overlap in time. Their
 * sequence number only advances when a record is committed, and each
 * record carries the sequence number of the previous record its
 * (thread, context) committed in the same buffer: the reader follows these
 * chains, which proves that nothing in a buffer was lost, duplicated or
 * reordered except whole packets reported lost in overwrite mode. Each
 * record also carries the clock value its reservation took: the decoder
 * must give exactly that timestamp, and in a buffer no record may carry an
 * earlier one than the record before it (the order lrb_clock_cycles()
 * must keep, design.rst "Timestamps in buffer order").
 *
 * At the end the writers stop, the channel is flushed and drained, and the
 * counts of the writers, the readers and the library must agree exactly.
 * The last line is "stress[MODE]: N passed, M failed".
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/kernel_compat.h"
#include "../../lib/test_hooks.h"
#include <lrb/lrb.h>
#include <lrb/decode.h>

#include "../common/stress.h"

#define SUBBUF_SIZE 16384UL
#define NUM_SUBBUF_DISCARD 8UL
#define NUM_SUBBUF_OVERWRITE 4UL
#define STREAM_ID 0x5eed
#define TSC_BITS 27

/* Writer contexts: 0 is the thread, d > 0 a signal handler d levels deep. */
#define MAX_CTX 8
#define NR_IDS 40
#define BODY_MAX 200
#define REC_MAGIC 0x57e5
#define SEQ_NONE (~0ULL)

/* Discard one record in TRY_DISCARD_RATE. */
#define TRY_DISCARD_RATE 100
/* Migrating writers alternate pinned and un-pinned phases this long. */
#define PHASE_MS 10
/* Un-pinned writers hop CPU inside one record in HOP_EVERY. */
#define HOP_EVERY 64
/* A thread tries an oversized record (-EMSGSIZE) once in BIG_EVERY. */
#define BIG_EVERY 4096
#define SIGNAL_PERIOD_NS 100000L
#define SNAPSHOT_PERIOD_NS 50000000ULL
/* Readers stop reading until they see losses, this often, this long. */
#define PAUSE_PERIOD_NS 200000000ULL
#define PAUSE_MAX_NS 300000000ULL
#define MAX_MESSAGES 40
/* Longest a reader holds a sub-buffer waiting for writers to pass it. */
#define HOLD_MAX_NS 20000000ULL

/* --clock: 0 monotonic, 1 cycles, -1 both */
#if defined(__x86_64__) || defined(__i386__)
#define CLOCK_DEFAULT -1
#else
#define CLOCK_DEFAULT 0
#endif

/* write_one() flags */
#define F_HOP 1
#define F_NEST 2

/**
 * struct rec_head - start of every record payload
 * @len: payload bytes, checksum included
 * @magic: %REC_MAGIC
 * @thread: writer thread id
 * @ctx: writer context: signal nesting depth, 0 for the thread
 * @buf: index of the buffer the writer reserved in
 * @seq: sequence number of (thread, ctx)
 * @prev: seq of the previous record of (thread, ctx) in this buffer, or
 *	%SEQ_NONE
 * @pos: buffer position of the record header
 * @tsc: the record's timestamp, as the reservation read it (ctx.tsc)
 *
 * Followed by the body and a u32 FNV-1a checksum of head and body.
 */
struct rec_head {
	u16 len;
	u16 magic;
	u32 thread;
	u32 ctx;
	u32 buf;
	u64 seq;
	u64 prev;
	u64 pos;
	u64 tsc;
};

#define REC_MIN_LEN (sizeof(struct rec_head) + sizeof(u32))
#define REC_MAX_LEN (REC_MIN_LEN + BODY_MAX)


/* The errors before E_OTHER, and the loss counter each one goes to. */
static const char *const err_lost[E_OTHER][2] = {
	[E_NOBUFS] = { "-ENOBUFS", "lost_full" },
	[E_AGAIN] = { "-EAGAIN", "lost_wrap" },
	[E_MSGSIZE] = { "-EMSGSIZE", "lost_big" },
	[E_BUSY] = { "-EBUSY", "lost_nest" },
};

/**
 * struct ctx_stats - what one (thread, context) did; touched only by it
 * @rng: random state
 * @next_seq: sequence number of the next record (advances on commit)
 * @attempted: reservations tried, minus those discarded
 * @ok: records committed
 * @discarded: reservations discarded
 * @skipped: of those, the ones lrb_try_discard() could not take back
 *	(-EBUSY), which lrb_discard() turned into skip records
 * @discard_failed: of those, the ones lrb_discard() refused (left
 *	uncommitted: a failure the main thread reports)
 * @migrated: records committed on another CPU than reserved
 * @fail: failed reservations by error
 * @fail_unattr: failures with no buffer known (ctx.buf not set)
 * @last_in_buf: per buffer, seq of the last record committed there
 * @ok_in_buf: per buffer, records committed there
 * @fail_in_buf: per buffer and error, failed reservations
 */
struct ctx_stats {
	u64 rng;
	u64 next_seq;
	u64 attempted;
	u64 ok;
	u64 discarded;
	u64 skipped;
	u64 discard_failed;
	u64 migrated;
	u64 fail[NR_ERR];
	u64 fail_unattr[NR_ERR];
	u64 *last_in_buf;
	u64 *ok_in_buf;
	u64 *fail_in_buf;
};

struct run;

struct writer {
	struct run *run;
	pthread_t tid;
	unsigned int t;
	int cpu;
	bool migrator;
	bool unpinned;
	int ready;
	int depth;
	int chain;
	int max_depth;
	u64 hops;
	u64 big;
	u64 big_ok;
	u64 bad_buf;
	u64 signals;
	struct ctx_stats st[MAX_CTX];
};

/* Chunked bitmap of the seqs of one (thread, ctx) read, discard mode. */
#define CHUNK_BITS 20
#define MAX_CHUNKS 4096
struct bitmap {
	unsigned long *chunk[MAX_CHUNKS];
};

struct reader {
	struct run *run;
	struct lrb_buf *buf;
	unsigned int b;
	pthread_t tid;
	u8 *copy;
	u8 *copy2;
	u64 rng;
	/* consuming reads: per (thread, ctx) chain state */
	u64 *last_seq;
	u64 *last_epoch;
	u64 *nread;
	u64 epoch;
	bool have_pkt;
	u64 last_pkt;
	u64 last_disc;
	u64 last_ts;
	u64 last_pkt_end;
	u64 packets;
	u64 records;
	u64 ext_records;
	u64 gaps;
	u64 disc_backwards;
	u64 dups;
	u64 bad;
	u64 pauses;
	u64 next_pause;
	u64 next_snapshot;
	u64 snapshots;
	u64 snap_ok;
	u64 snap_eagain;
	u64 snap_nodata;
	u64 snap_records;
	u64 holds;
	u64 hold_timeouts;
};

struct variant {
	const char *name;
	const struct lrb_config *cfg;
	void (*write)(struct writer *w, int d, int flags);
	void (*write_big)(struct writer *w);
};

struct run {
	const struct variant *v;
	const struct lrb_config *cfg;
	bool overwrite;
	bool signals;
	struct lrb_chan *chan;
	unsigned int nbufs;
	unsigned int nwriters;
	struct writer *w;
	struct reader *r;
	struct bitmap **seen;
	struct lrb_decoder dec;
	u64 t0;
	int stop_signals;
	int stop_writers;
	int final;
};

static long checks_passed, checks_failed;
static bool try_discard = true;
static int messages;
static int *cpus;
static int nr_allowed;
static cpu_set_t allowed_set;
static __thread struct writer *tls_w;
static char summary[64][1024];
static int nr_summary;

static void message(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&messages, 1, __ATOMIC_RELAXED) >= MAX_MESSAGES)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* Checks made by the main thread at the end of a run. */
#define CHECK(cond, fmt, ...)						\
	do {								\
		if (cond) {						\
			checks_passed++;				\
		} else {						\
			checks_failed++;				\
			fprintf(stderr, "stress.c:%d: CHECK(%s) failed: " fmt "\n",\
				__LINE__, #cond, ##__VA_ARGS__);	\
		}							\
	} while (0)

#define ULL(x) ((unsigned long long)(x))

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ns(u64 ns)
{
	struct timespec ts = {
		.tv_sec = ns / 1000000000ULL,
		.tv_nsec = ns % 1000000000ULL,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline u32 rec_id(u32 t, u64 seq)
{
	return (u32)((seq + t) % NR_IDS);
}

static void set_affinity_one(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void set_affinity_all(void)
{
	pthread_setaffinity_np(pthread_self(), sizeof(allowed_set),
			       &allowed_set);
}

/* Move the calling thread to another CPU, now (inside a reservation). */
static void hop(struct writer *w)
{
	int cur = (int)__lrb_port_cpu(), target, i;

	if (nr_allowed < 2)
		return;
	for (i = 0; i < 8; i++) {
		target = cpus[stress_rng(&w->st[0].rng) % nr_allowed];
		if (target != cur)
			break;
	}
	if (target == cur)
		return;
	set_affinity_one(target);
	set_affinity_all();
	w->hops++;
}

static void count_fail(struct ctx_stats *st, const struct lrb_ctx *ctx,
		       int ret)
{
	int k = stress_err(ret);

	st->fail[k]++;
	if (ctx->buf)
		st->fail_in_buf[ctx->buf->cpu * NR_ERR + k]++;
	else
		st->fail_unattr[k]++;
}

/*
 * Write one record of context @d of writer @w. Inlined once per variant
 * with a constant @cfg, like a real client's fast path.
 */
static __always_inline void write_one(const struct lrb_config *cfg,
				      struct writer *w, int d, int flags)
{
	struct ctx_stats *st = &w->st[d];
	struct lrb_ctx ctx;
	struct rec_head h;
	u8 body[BODY_MAX];
	u64 seq = st->next_seq, key = stress_key(w->t, d, seq);
	u32 blen = stress_body_len(key, BODY_MAX), csum, i, half;
	unsigned int cpu;
	int ret;

	st->attempted++;
	ctx.buf = NULL;
	cpu = __lrb_port_cpu();
	ret = lrb_reserve(cfg, w->run->chan, &ctx, rec_id(w->t, seq),
			  REC_MIN_LEN + blen);
	if (ret) {
		count_fail(st, &ctx, ret);
		return;
	}
	h.len = REC_MIN_LEN + blen;
	h.magic = REC_MAGIC;
	h.thread = w->t;
	h.ctx = d;
	h.buf = ctx.buf->cpu;
	if (h.buf >= w->run->nbufs) {
		w->bad_buf++;
		h.buf = 0;
	}
	h.seq = seq;
	h.prev = st->last_in_buf[h.buf];
	h.pos = ctx.begin;
	h.tsc = ctx.tsc;
	lrb_write(&ctx, &h, sizeof(h));

	if (flags & F_HOP)
		hop(w);
	if ((flags & F_NEST) &&
	    __atomic_load_n(&w->chain, __ATOMIC_RELAXED) > 0) {
		/* interrupt ourselves while holding the reservation */
		__atomic_sub_fetch(&w->chain, 1, __ATOMIC_RELAXED);
		raise(SIGUSR2);
	}

	for (i = 0; i < blen; i++)
		body[i] = stress_pattern(key, i);
	csum = stress_fnv(stress_fnv(STRESS_FNV_BASIS, &h, sizeof(h)), body, blen);
	half = blen / 2;
	lrb_write(&ctx, body, half);
	lrb_write(&ctx, body + half, blen - half);
	lrb_write(&ctx, &csum, sizeof(csum));

	if (try_discard && stress_rng(&st->rng) % TRY_DISCARD_RATE == 0) {
		/* never written: not an attempt, seq not used */
		st->attempted--;
		st->discarded++;
		if (lrb_try_discard(cfg, &ctx)) {
			st->skipped++;
			/* CHECK() is the main thread's: counted here */
			if (lrb_discard(cfg, &ctx))
				st->discard_failed++;
		}
		return;
	}
	if (__lrb_port_cpu() != cpu)
		st->migrated++;
	lrb_commit(cfg, &ctx);
	st->ok++;
	st->next_seq++;
	st->last_in_buf[h.buf] = seq;
	st->ok_in_buf[h.buf]++;
}

/* A record larger than a sub-buffer: must fail with -EMSGSIZE. */
static __always_inline void write_big(const struct lrb_config *cfg,
				      struct writer *w)
{
	struct ctx_stats *st = &w->st[0];
	struct lrb_ctx ctx;
	int ret;

	w->big++;
	st->attempted++;
	ctx.buf = NULL;
	ret = lrb_reserve(cfg, w->run->chan, &ctx, 1, SUBBUF_SIZE);
	if (!ret) {
		w->big_ok++;
		if (!lrb_try_discard(cfg, &ctx)) {
			st->attempted--;
			return;
		}
		/* cannot take it back: commit garbage, readers will notice */
		lrb_commit(cfg, &ctx);
		st->ok++;
		return;
	}
	count_fail(st, &ctx, ret);
}

#define CONFIG(name, m, a, h, clk)					\
	static const struct lrb_config cfg_##name = {			\
		.mode = LRB_MODE_##m,					\
		.alloc = LRB_ALLOC_##a,					\
		.wakeup = LRB_WAKEUP_BY_WRITER,				\
		.header = LRB_HEADER_##h,				\
		.tsc_bits = TSC_BITS,					\
		.cb = { .clock_read = clk },				\
	};								\
	static void write_##name(struct writer *w, int d, int flags)	\
	{								\
		write_one(&cfg_##name, w, d, flags);			\
	}								\
	static void big_##name(struct writer *w)			\
	{								\
		write_big(&cfg_##name, w);				\
	}

CONFIG(discard_compact_percpu_mono, DISCARD, PER_CPU, COMPACT, lrb_clock_default)
CONFIG(discard_compact_global_mono, DISCARD, GLOBAL, COMPACT, lrb_clock_default)
CONFIG(discard_large_percpu_mono, DISCARD, PER_CPU, LARGE, lrb_clock_default)
CONFIG(discard_large_global_mono, DISCARD, GLOBAL, LARGE, lrb_clock_default)
CONFIG(overwrite_compact_percpu_mono, OVERWRITE, PER_CPU, COMPACT, lrb_clock_default)
CONFIG(overwrite_compact_global_mono, OVERWRITE, GLOBAL, COMPACT, lrb_clock_default)
CONFIG(overwrite_large_percpu_mono, OVERWRITE, PER_CPU, LARGE, lrb_clock_default)
CONFIG(overwrite_large_global_mono, OVERWRITE, GLOBAL, LARGE, lrb_clock_default)
CONFIG(discard_compact_percpu_cycles, DISCARD, PER_CPU, COMPACT, lrb_clock_cycles)
CONFIG(discard_compact_global_cycles, DISCARD, GLOBAL, COMPACT, lrb_clock_cycles)
CONFIG(discard_large_percpu_cycles, DISCARD, PER_CPU, LARGE, lrb_clock_cycles)
CONFIG(discard_large_global_cycles, DISCARD, GLOBAL, LARGE, lrb_clock_cycles)
CONFIG(overwrite_compact_percpu_cycles, OVERWRITE, PER_CPU, COMPACT, lrb_clock_cycles)
CONFIG(overwrite_compact_global_cycles, OVERWRITE, GLOBAL, COMPACT, lrb_clock_cycles)
CONFIG(overwrite_large_percpu_cycles, OVERWRITE, PER_CPU, LARGE, lrb_clock_cycles)
CONFIG(overwrite_large_global_cycles, OVERWRITE, GLOBAL, LARGE, lrb_clock_cycles)

#define V(name, c)							\
	{ #name "_" #c, &cfg_##name##_##c, write_##name##_##c, big_##name##_##c }

#define VARIANT_TABLE(c)						\
	{								\
		{ { V(discard_compact_percpu, c),			\
		    V(discard_compact_global, c) },			\
		  { V(discard_large_percpu, c),				\
		    V(discard_large_global, c) } },			\
		{ { V(overwrite_compact_percpu, c),			\
		    V(overwrite_compact_global, c) },			\
		  { V(overwrite_large_percpu, c),			\
		    V(overwrite_large_global, c) } },			\
	}

/* Indexed [cycles][overwrite][large][global]. */
static const struct variant variants[2][2][2][2] = {
	VARIANT_TABLE(mono),
	VARIANT_TABLE(cycles),
};

/* Signal handlers: write records as context "nesting depth". */
static void on_sigusr1(int sig)
{
	struct writer *w = tls_w;
	int saved = errno, d, n, i;

	(void)sig;
	if (!w)
		return;
	d = __atomic_add_fetch(&w->depth, 1, __ATOMIC_RELAXED);
	w->signals++;
	if (d > w->max_depth)
		w->max_depth = d;
	if (d < MAX_CTX) {
		n = 1 + stress_rng(&w->st[d].rng) % 3;
		for (i = 0; i < n; i++) {
			int flags = 0;

			if (i == 0 && stress_rng(&w->st[d].rng) % 4 == 0) {
				/* SIGUSR2 chain of 1 to 5 nested writers */
				__atomic_store_n(&w->chain, 1 +
						 stress_rng(&w->st[d].rng) % 5,
						 __ATOMIC_RELAXED);
				flags = F_NEST;
			}
			w->run->v->write(w, d, flags);
			__atomic_store_n(&w->chain, 0, __ATOMIC_RELAXED);
		}
	}
	__atomic_sub_fetch(&w->depth, 1, __ATOMIC_RELAXED);
	errno = saved;
}

static void on_sigusr2(int sig)
{
	struct writer *w = tls_w;
	int saved = errno, d;

	(void)sig;
	if (!w)
		return;
	d = __atomic_add_fetch(&w->depth, 1, __ATOMIC_RELAXED);
	if (d > w->max_depth)
		w->max_depth = d;
	if (d < MAX_CTX)
		w->run->v->write(w, d, F_NEST);
	__atomic_sub_fetch(&w->depth, 1, __ATOMIC_RELAXED);
	errno = saved;
}

static void set_signals_blocked(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct run *run = w->run;
	u64 iter;

	lrb_thread_init();
	set_affinity_one(w->cpu);
	tls_w = w;
	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
	set_signals_blocked(false);
	for (iter = 0; !__atomic_load_n(&run->stop_writers, __ATOMIC_RELAXED);
	     iter++) {
		int flags = 0;

		if (w->migrator && !(iter & 255)) {
			bool unpin = (now_ns() - run->t0) /
				     (PHASE_MS * 1000000ULL) & 1;

			if (unpin != w->unpinned) {
				if (unpin)
					set_affinity_all();
				else
					set_affinity_one(w->cpu);
				w->unpinned = unpin;
			}
		}
		if (iter % BIG_EVERY == BIG_EVERY - 1)
			run->v->write_big(w);
		if (w->unpinned && iter % HOP_EVERY == 0)
			flags = F_HOP;
		run->v->write(w, 0, flags);
	}
	set_signals_blocked(true);
	return NULL;
}

static void *signaler_main(void *arg)
{
	struct run *run = arg;
	unsigned int i;

	while (!__atomic_load_n(&run->stop_signals, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < run->nwriters; i++)
			if (__atomic_load_n(&run->w[i].ready, __ATOMIC_ACQUIRE))
				pthread_kill(run->w[i].tid, SIGUSR1);
		sleep_ns(SIGNAL_PERIOD_NS);
	}
	return NULL;
}

/* lrb_decoder.payload_size: the first u16 of the payload. */
static long payload_size(const struct lrb_decoder *dec, u32 id,
			 const u8 *payload, unsigned long avail)
{
	u16 len;

	(void)dec;
	if (id >= NR_IDS || avail < sizeof(len))
		return -EBADMSG;
	memcpy(&len, payload, sizeof(len));
	if (len < REC_MIN_LEN || len > REC_MAX_LEN)
		return -EBADMSG;
	return len;
}

/* Mark seq read; returns true if it already was. */
static bool bitmap_mark(struct bitmap *bm, u64 seq)
{
	unsigned long *c, *n = NULL, bit, old;
	u64 idx = seq >> CHUNK_BITS, off = seq & ((1UL << CHUNK_BITS) - 1);

	c = __atomic_load_n(&bm->chunk[idx], __ATOMIC_ACQUIRE);
	if (!c) {
		n = calloc(1, (1UL << CHUNK_BITS) / 8);
		if (!n) {
			perror("calloc");
			exit(2);
		}
		if (__atomic_compare_exchange_n(&bm->chunk[idx], &c, n, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			c = n;
		else
			free(n);
	}
	bit = 1UL << (off % (8 * sizeof(long)));
	old = __atomic_fetch_or(&c[off / (8 * sizeof(long))], bit,
				__ATOMIC_RELAXED);
	return old & bit;
}

/* Bits set in [0, n) and in total. */
static void bitmap_count(struct bitmap *bm, u64 n, u64 *below, u64 *total)
{
	unsigned long words = (1UL << CHUNK_BITS) / (8 * sizeof(long));
	unsigned long i, j;

	*below = 0;
	*total = 0;
	for (i = 0; i < MAX_CHUNKS; i++) {
		if (!bm->chunk[i])
			continue;
		for (j = 0; j < words; j++) {
			unsigned long x = bm->chunk[i][j];
			u64 base = ((u64)i << CHUNK_BITS) + j * 8 * sizeof(long);
			unsigned int k;

			if (!x)
				continue;
			*total += __builtin_popcountl(x);
			for (k = 0; k < 8 * sizeof(long); k++)
				if ((x >> k & 1) && base + k < n)
					(*below)++;
		}
	}
}

static void reader_bad(struct reader *r, const struct lrb_subbuf *sb,
		       unsigned long off, const char *what,
		       unsigned long long a, unsigned long long b)
{
	r->bad++;
	message("stress[%s] buf %u packet pos %lu seq %llu off %lu: %s (%llu vs %llu)\n",
		r->run->v->name, r->b, sb->pos, ULL(sb->seq), off, what, a, b);
}

/* Verify one record; @consuming reads also follow the chains. */
static void verify_record(struct reader *r, const struct lrb_subbuf *sb,
			  const struct lrb_packet_header *ph,
			  const struct lrb_record *rec, bool consuming)
{
	struct run *run = r->run;
	unsigned long off = rec->offset;
	unsigned long hlen, pad, i;
	struct rec_head h;
	u64 key, k, last;
	u32 csum, blen;

	if (rec->len < REC_MIN_LEN) {
		reader_bad(r, sb, off, "payload too short", rec->len,
			   REC_MIN_LEN);
		return;
	}
	memcpy(&h, rec->payload, sizeof(h));
	if (h.len != rec->len || h.magic != REC_MAGIC ||
	    h.thread >= run->nwriters || h.ctx >= MAX_CTX) {
		reader_bad(r, sb, off, "bad record head (len/magic/thread/ctx)",
			   ((u64)h.magic << 16) | h.len,
			   ((u64)h.thread << 32) | h.ctx);
		return;
	}
	key = stress_key(h.thread, h.ctx, h.seq);
	blen = stress_body_len(key, BODY_MAX);
	if (h.len != REC_MIN_LEN + blen) {
		reader_bad(r, sb, off, "length does not match seq", h.len,
			   REC_MIN_LEN + blen);
		return;
	}
	for (i = 0; i < blen; i++) {
		if (rec->payload[sizeof(h) + i] != stress_pattern(key, i)) {
			reader_bad(r, sb, off, "bad body pattern at byte", i,
				   blen);
			return;
		}
	}
	memcpy(&csum, rec->payload + sizeof(h) + blen, sizeof(csum));
	if (csum != stress_fnv(STRESS_FNV_BASIS, rec->payload, sizeof(h) + blen))
		reader_bad(r, sb, off, "bad checksum", csum, 0);
	if (h.buf != r->b)
		reader_bad(r, sb, off, "record of another buffer", h.buf, r->b);
	if (h.pos != sb->pos + off)
		reader_bad(r, sb, off, "record at a wrong position", h.pos,
			   sb->pos + off);
	if (rec->id != rec_id(h.thread, h.seq))
		reader_bad(r, sb, off, "bad event id", rec->id,
			   rec_id(h.thread, h.seq));
	/* ids from the skip id on take the extended header */
	if (run->cfg->header == LRB_HEADER_COMPACT &&
	    rec->id >= (1U << (32 - TSC_BITS)) - 2 && !rec->extended)
		reader_bad(r, sb, off, "large id in a compact header", rec->id,
			   0);
	if (h.prev != SEQ_NONE && h.prev >= h.seq)
		reader_bad(r, sb, off, "prev not before seq", h.prev, h.seq);
	/* alignment padding is zeroed by commit */
	if (rec->extended)
		hlen = LRB_EXTENDED_HEADER_SIZE;
	else if (run->cfg->header == LRB_HEADER_COMPACT)
		hlen = LRB_COMPACT_HEADER_SIZE;
	else
		hlen = LRB_LARGE_HEADER_SIZE;
	pad = -(hlen + rec->len) & (LRB_RECORD_ALIGN - 1);
	for (i = 0; i < pad; i++)
		if (rec->payload[rec->len + i])
			reader_bad(r, sb, off, "record padding not zero", i,
				   rec->payload[rec->len + i]);
	/* a compact header whose clock went back decodes as a wrap */
	if (rec->timestamp != h.tsc)
		reader_bad(r, sb, off, "timestamp is not the writer's clock value",
			   rec->timestamp, h.tsc);
	if (rec->timestamp > ph->timestamp_end)
		reader_bad(r, sb, off, "record after packet end",
			   rec->timestamp, ph->timestamp_end);
	if (rec->extended)
		r->ext_records++;
	if (!consuming) {
		r->snap_records++;
		return;
	}

	r->records++;
	/* buffer order, across packets and the gaps of lost ones */
	if (h.tsc < r->last_ts)
		reader_bad(r, sb, off, "timestamp before the previous record's in the buffer",
			   h.tsc, r->last_ts);
	r->last_ts = h.tsc;
	k = (u64)h.thread * MAX_CTX + h.ctx;
	last = r->last_seq[k];
	if (r->last_epoch[k] == r->epoch) {
		/* no packet lost since the last record of (thread, ctx) */
		if (h.prev != last)
			reader_bad(r, sb, off, "broken chain: prev != last read",
				   h.prev, last);
	} else if (last != SEQ_NONE && (h.prev == SEQ_NONE || h.prev < last)) {
		reader_bad(r, sb, off, "chain goes back after a packet gap",
			   h.prev, last);
	}
	if (last != SEQ_NONE && h.seq <= last)
		reader_bad(r, sb, off, "seq not increasing in buffer", h.seq,
			   last);
	r->last_seq[k] = h.seq;
	r->last_epoch[k] = r->epoch;
	r->nread[k]++;
	if (run->seen) {
		if (h.seq >= (u64)MAX_CHUNKS << CHUNK_BITS)
			reader_bad(r, sb, off, "seq out of bitmap range", h.seq,
				   0);
		else if (bitmap_mark(run->seen[k], h.seq))
			r->dups++;
	}
}

static void verify_packet(struct reader *r, const struct lrb_subbuf *sb,
			  bool consuming)
{
	struct run *run = r->run;
	struct lrb_chan *chan = run->chan;
	const struct lrb_packet_header *ph;
	struct lrb_packet_iter it;
	struct lrb_record rec;
	unsigned long i, content;
	int ret;

	ret = lrb_subbuf_copy(chan, sb, 0, r->copy, SUBBUF_SIZE);
	if (ret) {
		reader_bad(r, sb, 0, "lrb_subbuf_copy failed", -ret, 0);
		return;
	}
	if (sb->seq != sb->pos / SUBBUF_SIZE)
		reader_bad(r, sb, 0, "sub-buffer seq is not pos / size",
			   sb->seq, sb->pos / SUBBUF_SIZE);
	ret = lrb_packet_open(&it, &run->dec, r->copy, SUBBUF_SIZE);
	if (ret) {
		reader_bad(r, sb, it.error_offset, it.error ? it.error :
			   "lrb_packet_open failed", -ret, 0);
		return;
	}
	ph = &it.header;
	content = ph->content_size / 8;
	if (ph->stream_id != STREAM_ID ||
	    ph->packet_size != __lrb_packet_size(chan, content) * 8 ||
	    sb->packet_size != __lrb_packet_size(chan, content) ||
	    ph->packet_seq_num != sb->seq || content != sb->content_size ||
	    ph->cpu_id != r->b)
		reader_bad(r, sb, 0, "bad packet header (stream/size/seq/cpu)",
			   ph->packet_seq_num, ph->cpu_id);
	if (ph->timestamp_end < ph->timestamp_begin)
		reader_bad(r, sb, 0, "packet ends before it begins",
			   ph->timestamp_end, ph->timestamp_begin);
	for (i = content; i < SUBBUF_SIZE; i++) {
		if (r->copy[i]) {
			reader_bad(r, sb, i, "packet padding not zero",
				   r->copy[i], 0);
			break;
		}
	}
	if (consuming) {
		u64 expect = r->have_pkt ? r->last_pkt + 1 : 0;

		if (sb->seq != expect) {
			if (sb->seq < expect || !run->overwrite)
				reader_bad(r, sb, 0, "packet seq not next",
					   sb->seq, expect);
			if (sb->seq > expect)
				r->gaps += sb->seq - expect;
			r->epoch++;
		}
		r->have_pkt = true;
		r->last_pkt = sb->seq;
		r->packets++;
		if (ph->timestamp_begin < r->last_pkt_end)
			reader_bad(r, sb, 0, "packet begins before previous end",
				   ph->timestamp_begin, r->last_pkt_end);
		r->last_pkt_end = ph->timestamp_end;
		if (ph->events_discarded < r->last_disc) {
			r->disc_backwards++;
			message("stress[%s] buf %u packet %llu: events_discarded %llu < previous packet's %llu\n",
				run->v->name, r->b, ULL(sb->seq),
				ULL(ph->events_discarded), ULL(r->last_disc));
		}
		r->last_disc = ph->events_discarded;
		/* counters only grow: nothing can be counted yet that isn't */
		if (ph->events_discarded > lrb_buf_lost(r->buf))
			reader_bad(r, sb, 0, "events_discarded > lrb_buf_lost()",
				   ph->events_discarded, lrb_buf_lost(r->buf));
	}
	while ((ret = lrb_packet_next(&it, &rec)) == 1)
		verify_record(r, sb, ph, &rec, consuming);
	if (ret < 0)
		reader_bad(r, sb, it.error_offset, it.error, 0, 0);
}

static u64 lost_full(struct lrb_buf *buf)
{
	struct lrb_buf_counters s;

	lrb_buf_stats(buf, &s);
	return s.lost_full;
}

/*
 * Keep holding the sub-buffer just verified (its bytes are in r->copy)
 * until writers have gone round the ring to a random point of its next
 * lap (overwrite mode), or were refused for lack of space (discard mode),
 * then check that not one of its bytes changed: a held sub-buffer belongs
 * to the reader alone.
 */
static void hold_and_recheck(struct reader *r, const struct lrb_subbuf *sb)
{
	unsigned long c, p, target;
	u64 t0 = now_ns(), lost0 = 0;
	unsigned long i;

	target = sb->pos + __lrb_buf_size(r->run->chan) +
		 stress_rng(&r->rng) % SUBBUF_SIZE;
	if (!r->run->overwrite)
		lost0 = lost_full(r->buf);
	r->holds++;
	for (;;) {
		lrb_positions(r->buf, &c, &p);
		if ((long)(p - target) >= 0)
			break;
		if (!r->run->overwrite && lost_full(r->buf) != lost0)
			break;
		if (now_ns() - t0 > HOLD_MAX_NS) {
			r->hold_timeouts++;
			break;
		}
		sleep_ns(20000);
	}
	if (lrb_subbuf_copy(r->run->chan, sb, 0, r->copy2, SUBBUF_SIZE) ||
	    !memcmp(r->copy, r->copy2, SUBBUF_SIZE))
		return;
	for (i = 0; r->copy[i] == r->copy2[i]; i++)
		;
	reader_bad(r, sb, i, "held sub-buffer changed under the reader",
		   r->copy[i], r->copy2[i]);
}

/* Overwrite mode: read every complete sub-buffer without consuming it. */
static void snapshot(struct reader *r)
{
	bool held = false;
	unsigned long c, p, pos, start;
	struct lrb_subbuf sb;
	int ret;

	r->snapshots++;
	lrb_positions(r->buf, &c, &p);
	p &= ~(SUBBUF_SIZE - 1);
	start = p >= SUBBUF_SIZE * NUM_SUBBUF_OVERWRITE ?
			p - SUBBUF_SIZE * NUM_SUBBUF_OVERWRITE : 0;
	if ((long)(c - start) > 0)
		start = c;
	for (pos = start; (long)(p - pos) >= 0; pos += SUBBUF_SIZE) {
		ret = lrb_get_subbuf(r->buf, pos, &sb);
		if (ret == -EAGAIN) {
			r->snap_eagain++;
			continue;
		}
		if (ret == -ENODATA) {
			r->snap_nodata++;
			continue;
		}
		if (ret) {
			sb.pos = pos;
			sb.seq = pos / SUBBUF_SIZE;
			reader_bad(r, &sb, 0, "lrb_get_subbuf failed", -ret, 0);
			continue;
		}
		if (sb.pos != pos || sb.consuming)
			reader_bad(r, &sb, 0, "lrb_get_subbuf returned bad sb",
				   sb.pos, pos);
		verify_packet(r, &sb, false);
		if (!held) {
			/* writers reuse its place meanwhile, not its pages */
			hold_and_recheck(r, &sb);
			held = true;
		}
		lrb_put_subbuf(r->buf, &sb);
		r->snap_ok++;
	}
}

static u64 loss_metric(struct reader *r)
{
	struct lrb_buf_counters s;

	lrb_buf_stats(r->buf, &s);
	return r->run->overwrite ? s.lost_packets : s.lost_full;
}

/* Stop reading until writers lose something (or a timeout). */
static void pause_for_loss(struct reader *r)
{
	u64 base = loss_metric(r), t0 = now_ns();

	r->pauses++;
	while (loss_metric(r) == base && now_ns() - t0 < PAUSE_MAX_NS &&
	       !__atomic_load_n(&r->run->final, __ATOMIC_ACQUIRE))
		sleep_ns(1000000);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct run *run = r->run;
	struct lrb_subbuf sb;
	bool final;
	u64 now;
	int ret;

	set_signals_blocked(true);
	r->next_pause = now_ns() + PAUSE_PERIOD_NS / 4;
	r->next_snapshot = now_ns() + SNAPSHOT_PERIOD_NS;
	for (;;) {
		final = __atomic_load_n(&run->final, __ATOMIC_ACQUIRE);
		ret = lrb_get_next_subbuf(r->buf, &sb);
		if (!ret) {
			if (!sb.consuming)
				reader_bad(r, &sb, 0, "not a consuming sb", 0, 0);
			verify_packet(r, &sb, true);
			if (!final && (run->overwrite ||
				       stress_rng(&r->rng) % 4 == 0))
				hold_and_recheck(r, &sb);
			lrb_put_subbuf(r->buf, &sb);
		} else if (ret != -EAGAIN) {
			sb.pos = 0;
			sb.seq = 0;
			reader_bad(r, &sb, 0, "lrb_get_next_subbuf failed", -ret,
				   0);
		}
		if (final) {
			if (ret)
				break;
			continue;
		}
		now = now_ns();
		if (now >= r->next_pause) {
			pause_for_loss(r);
			r->next_pause = now_ns() + PAUSE_PERIOD_NS;
		}
		if (run->overwrite && now >= r->next_snapshot) {
			snapshot(r);
			r->next_snapshot = now + SNAPSHOT_PERIOD_NS;
		}
		if (ret)
			lrb_wait_readable(r->buf, 2);
		else if (stress_rng(&r->rng) % 8 == 0)
			sleep_ns(stress_rng(&r->rng) % 2000000);
	}
	return NULL;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

static void run_variant(const struct variant *v, double seconds, bool signals)
{
	unsigned int nr_cpus = lrb_possible_cpus(), t, b, d, e, nk;
	struct lrb_chan_attr attr = { 0 };
	u64 tot_attempted = 0, tot_ok = 0, tot_fail[NR_ERR] = { 0 };
	u64 tot_fail_unattr[NR_ERR] = { 0 }, tot_discarded = 0, tot_busy = 0;
	u64 tot_migrated = 0, tot_hops = 0, tot_big = 0, tot_big_ok = 0;
	u64 tot_sig_ok = 0, tot_sig_attempted = 0, tot_signals = 0;
	u64 lost[E_OTHER] = { 0 }, tot_lost_packets = 0, tot_read = 0;
	u64 tot_over = 0;
	u64 tot_packets = 0, tot_gaps = 0, tot_ext = 0, tot_pauses = 0;
	u64 snaps = 0, snap_ok = 0, snap_eagain = 0, snap_nodata = 0;
	u64 snap_records = 0, tot_holds = 0, tot_hold_to = 0;
	unsigned long *pre_produced;
	pthread_t signaler;
	struct run *run;
	int max_depth = 0, ret;

	run = xcalloc(1, sizeof(*run));
	run->v = v;
	run->cfg = v->cfg;
	run->overwrite = v->cfg->mode == LRB_MODE_OVERWRITE;
	run->signals = signals;
	run->dec.header = v->cfg->header;
	run->dec.tsc_bits = TSC_BITS;
	run->dec.payload_size = payload_size;

	attr.subbuf_size = SUBBUF_SIZE;
	attr.num_subbuf = run->overwrite ? NUM_SUBBUF_OVERWRITE :
					   NUM_SUBBUF_DISCARD;
	attr.nr_cpus = nr_cpus;
	attr.stream_id = STREAM_ID;
	ret = lrb_channel_create(v->cfg, &attr, &run->chan);
	CHECK(ret == 0, "%s: lrb_channel_create: %d", v->name, ret);
	if (ret)
		return;
	run->nbufs = v->cfg->alloc == LRB_ALLOC_GLOBAL ? 1 : nr_cpus;
	run->nwriters = nr_cpus;
	nk = run->nwriters * MAX_CTX;
	CHECK(lrb_channel_nth_buf(run->chan, run->nbufs - 1) &&
	      !lrb_channel_nth_buf(run->chan, run->nbufs),
	      "%s: channel has not %u buffers", v->name, run->nbufs);

	run->w = xcalloc(run->nwriters, sizeof(*run->w));
	for (t = 0; t < run->nwriters; t++) {
		struct writer *w = &run->w[t];

		w->run = run;
		w->t = t;
		w->cpu = cpus[t % nr_allowed];
		w->migrator = t & 1;
		for (d = 0; d < MAX_CTX; d++) {
			struct ctx_stats *st = &w->st[d];

			st->rng = stress_mix(t * 131 + d + 1) | 1;
			st->last_in_buf = xcalloc(run->nbufs, sizeof(u64));
			memset(st->last_in_buf, 0xff,
			       run->nbufs * sizeof(u64));
			st->ok_in_buf = xcalloc(run->nbufs, sizeof(u64));
			st->fail_in_buf = xcalloc(run->nbufs * NR_ERR,
						  sizeof(u64));
		}
	}
	if (!run->overwrite) {
		run->seen = xcalloc(nk, sizeof(*run->seen));
		for (t = 0; t < nk; t++)
			run->seen[t] = xcalloc(1, sizeof(struct bitmap));
	}
	run->r = xcalloc(run->nbufs, sizeof(*run->r));
	pre_produced = xcalloc(run->nbufs, sizeof(*pre_produced));
	for (b = 0; b < run->nbufs; b++) {
		struct reader *r = &run->r[b];

		r->run = run;
		r->b = b;
		r->buf = lrb_channel_nth_buf(run->chan, b);
		r->rng = stress_mix(b + 1000) | 1;
		r->copy = xcalloc(1, SUBBUF_SIZE);
		r->copy2 = xcalloc(1, SUBBUF_SIZE);
		r->last_seq = xcalloc(nk, sizeof(u64));
		memset(r->last_seq, 0xff, nk * sizeof(u64));
		r->last_epoch = xcalloc(nk, sizeof(u64));
		r->nread = xcalloc(nk, sizeof(u64));
		ret = lrb_reader_open(r->buf);
		CHECK(ret == 0, "%s: lrb_reader_open(buf %u): %d", v->name, b,
		      ret);
		if (b == 0) {
			ret = lrb_reader_open(r->buf);
			CHECK(ret == -EBUSY, "%s: second reader: %d", v->name,
			      ret);
		}
	}

	run->t0 = now_ns();
	for (b = 0; b < run->nbufs; b++)
		pthread_create(&run->r[b].tid, NULL, reader_main, &run->r[b]);
	for (t = 0; t < run->nwriters; t++)
		pthread_create(&run->w[t].tid, NULL, writer_main, &run->w[t]);
	if (signals)
		pthread_create(&signaler, NULL, signaler_main, run);

	sleep_ns((u64)(seconds * 1e9));

	if (signals) {
		__atomic_store_n(&run->stop_signals, 1, __ATOMIC_RELEASE);
		pthread_join(signaler, NULL);
	}
	__atomic_store_n(&run->stop_writers, 1, __ATOMIC_RELEASE);
	for (t = 0; t < run->nwriters; t++)
		pthread_join(run->w[t].tid, NULL);
	for (b = 0; b < run->nbufs; b++) {
		unsigned long c;

		lrb_positions(run->r[b].buf, &c, &pre_produced[b]);
	}
	lrb_channel_flush(run->chan);
	__atomic_store_n(&run->final, 1, __ATOMIC_RELEASE);
	for (b = 0; b < run->nbufs; b++)
		pthread_join(run->r[b].tid, NULL);

	/* writer totals */
	for (t = 0; t < run->nwriters; t++) {
		struct writer *w = &run->w[t];

		tot_hops += w->hops;
		tot_big += w->big;
		tot_big_ok += w->big_ok;
		CHECK(w->bad_buf == 0,
		      "%s: thread %u: %llu reservations in a buffer out of range",
		      v->name, t, ULL(w->bad_buf));
		tot_signals += w->signals;
		if (w->max_depth > max_depth)
			max_depth = w->max_depth;
		for (d = 0; d < MAX_CTX; d++) {
			struct ctx_stats *st = &w->st[d];
			u64 fails = 0;

			for (e = 0; e < NR_ERR; e++) {
				fails += st->fail[e];
				tot_fail[e] += st->fail[e];
				tot_fail_unattr[e] += st->fail_unattr[e];
			}
			CHECK(st->attempted == st->ok + fails,
			      "%s: thread %u ctx %u: attempted %llu != ok %llu + failed %llu",
			      v->name, t, d, ULL(st->attempted), ULL(st->ok),
			      ULL(fails));
			CHECK(st->next_seq == st->ok || w->big_ok,
			      "%s: thread %u ctx %u: next seq %llu != ok %llu",
			      v->name, t, d, ULL(st->next_seq), ULL(st->ok));
			CHECK(!st->discard_failed,
			      "%s: thread %u ctx %u: lrb_discard() failed %llu times with %d timestamp bits",
			      v->name, t, d, ULL(st->discard_failed), TSC_BITS);
			tot_attempted += st->attempted;
			tot_ok += st->ok;
			tot_discarded += st->discarded;
			tot_busy += st->skipped;
			tot_migrated += st->migrated;
			if (d) {
				tot_sig_ok += st->ok;
				tot_sig_attempted += st->attempted;
			}
		}
	}

	/* per buffer */
	for (b = 0; b < run->nbufs; b++) {
		struct reader *r = &run->r[b];
		u64 written = 0, fail_b[NR_ERR] = { 0 }, buf_lost, npk, trail;
		u64 expect;
		struct lrb_buf_counters s;
		bool flush_closed;

		lrb_buf_stats(r->buf, &s);
		buf_lost = lrb_buf_lost(r->buf);
		lost[E_NOBUFS] += s.lost_full;
		lost[E_AGAIN] += s.lost_wrap;
		lost[E_MSGSIZE] += s.lost_big;
		lost[E_BUSY] += s.lost_nest;
		tot_lost_packets += s.lost_packets;
		tot_read += r->records;
		tot_packets += r->packets;
		tot_ext += r->ext_records;
		tot_pauses += r->pauses;
		tot_holds += r->holds;
		tot_hold_to += r->hold_timeouts;
		snaps += r->snapshots;
		snap_ok += r->snap_ok;
		snap_eagain += r->snap_eagain;
		snap_nodata += r->snap_nodata;
		snap_records += r->snap_records;

		CHECK(r->bad == 0, "%s: buf %u: %llu bad records or packets",
		      v->name, b, ULL(r->bad));
		CHECK(buf_lost == s.lost_full + s.lost_wrap + s.lost_big +
				  s.lost_nest + s.lost_overwrite,
		      "%s: buf %u: lrb_buf_lost %llu != sum of stats", v->name,
		      b, ULL(buf_lost));

		/* positions: all produced packets consumed or lost */
		npk = s.produced / SUBBUF_SIZE;
		CHECK(s.produced % SUBBUF_SIZE == 0 ||
		      s.produced % SUBBUF_SIZE == LRB_PACKET_HEADER_SIZE,
		      "%s: buf %u: produced %llu not at a packet end after flush",
		      v->name, b, ULL(s.produced));
		CHECK(s.consumed == npk * SUBBUF_SIZE,
		      "%s: buf %u: consumed %llu != produced packets %llu",
		      v->name, b, ULL(s.consumed), ULL(npk));
		expect = r->have_pkt ? r->last_pkt + 1 : 0;
		trail = s.consumed / SUBBUF_SIZE > expect ?
				s.consumed / SUBBUF_SIZE - expect : 0;
		if (trail) {
			r->gaps += trail;
			r->epoch++;
		}
		tot_gaps += r->gaps;
		CHECK(r->packets + r->gaps == npk,
		      "%s: buf %u: packets read %llu + lost %llu != produced %llu",
		      v->name, b, ULL(r->packets), ULL(r->gaps), ULL(npk));
		CHECK(r->gaps == s.lost_packets,
		      "%s: buf %u: packet seq gaps %llu != lost_packets %llu",
		      v->name, b, ULL(r->gaps), ULL(s.lost_packets));
		/*
		 * The reader frees a sub-buffer only once it was delivered,
		 * that is fully committed: in discard mode a writer that finds
		 * room can never find the sub-buffer still being committed.
		 */
		if (!run->overwrite)
			CHECK(s.lost_packets == 0 && s.lost_wrap == 0,
			      "%s: buf %u: discard mode lost packets %llu, lost_wrap (-EAGAIN) %llu: a writer failed on a sub-buffer another writer had just opened",
			      v->name, b, ULL(s.lost_packets), ULL(s.lost_wrap));

		/* records */
		for (t = 0; t < run->nwriters; t++) {
			for (d = 0; d < MAX_CTX; d++) {
				struct ctx_stats *st = &run->w[t].st[d];
				u64 k = (u64)t * MAX_CTX + d;

				written += st->ok_in_buf[b];
				for (e = 0; e < NR_ERR; e++)
					fail_b[e] += st->fail_in_buf[b * NR_ERR + e];
				if (!run->overwrite) {
					CHECK(r->nread[k] == st->ok_in_buf[b],
					      "%s: buf %u thread %u ctx %u: read %llu != written %llu",
					      v->name, b, t, d, ULL(r->nread[k]),
					      ULL(st->ok_in_buf[b]));
				} else {
					CHECK(r->nread[k] <= st->ok_in_buf[b],
					      "%s: buf %u thread %u ctx %u: read %llu > written %llu",
					      v->name, b, t, d, ULL(r->nread[k]),
					      ULL(st->ok_in_buf[b]));
				}
				/* the chain read ends where the writer's did */
				if (r->last_epoch[k] == r->epoch)
					CHECK(r->last_seq[k] == st->last_in_buf[b],
					      "%s: buf %u thread %u ctx %u: last read seq %llu != last written %llu",
					      v->name, b, t, d,
					      ULL(r->last_seq[k]),
					      ULL(st->last_in_buf[b]));
			}
		}
		/* exact in both modes: lost_overwrite is 0 in discard mode */
		CHECK(r->records + s.lost_overwrite == written &&
		      s.records_written == written,
		      "%s: buf %u: records read %llu + lost_overwrite %llu != written %llu (counted %llu)",
		      v->name, b, ULL(r->records), ULL(s.lost_overwrite),
		      ULL(written), ULL(s.records_written));
		CHECK(!s.lost_overwrite == !s.lost_packets,
		      "%s: buf %u: lost_overwrite %llu with lost_packets %llu",
		      v->name, b, ULL(s.lost_overwrite), ULL(s.lost_packets));
		tot_over += s.lost_overwrite;
		if (!tot_fail_unattr[E_NOBUFS])
			CHECK(s.lost_full == fail_b[E_NOBUFS],
			      "%s: buf %u: lost_full %llu != -ENOBUFS %llu",
			      v->name, b, ULL(s.lost_full), ULL(fail_b[E_NOBUFS]));
		if (!tot_fail_unattr[E_AGAIN])
			CHECK(s.lost_wrap == fail_b[E_AGAIN],
			      "%s: buf %u: lost_wrap %llu != -EAGAIN %llu",
			      v->name, b, ULL(s.lost_wrap), ULL(fail_b[E_AGAIN]));
		if (!tot_fail_unattr[E_MSGSIZE])
			CHECK(s.lost_big == fail_b[E_MSGSIZE],
			      "%s: buf %u: lost_big %llu != -EMSGSIZE %llu",
			      v->name, b, ULL(s.lost_big), ULL(fail_b[E_MSGSIZE]));

		/* events_discarded of the packets read */
		CHECK(r->disc_backwards == 0,
		      "%s: buf %u: events_discarded went backwards %llu times",
		      v->name, b, ULL(r->disc_backwards));
		flush_closed = pre_produced[b] % SUBBUF_SIZE >
			       LRB_PACKET_HEADER_SIZE;
		if (flush_closed) {
			CHECK(r->have_pkt &&
			      r->last_pkt == pre_produced[b] / SUBBUF_SIZE &&
			      r->last_disc == buf_lost,
			      "%s: buf %u: flushed packet %llu read %d last %llu events_discarded %llu != lost %llu",
			      v->name, b, ULL(pre_produced[b] / SUBBUF_SIZE),
			      r->have_pkt, ULL(r->last_pkt),
			      ULL(r->last_disc), ULL(buf_lost));
		} else {
			CHECK(r->last_disc <= buf_lost,
			      "%s: buf %u: last events_discarded %llu > lost %llu",
			      v->name, b, ULL(r->last_disc), ULL(buf_lost));
		}
	}

	/* totals */
	CHECK(tot_fail[E_OTHER] == 0, "%s: %llu unexpected reserve errors",
	      v->name, ULL(tot_fail[E_OTHER]));
	for (e = 0; e < E_OTHER; e++)
		CHECK(tot_fail[e] == lost[e], "%s: %s %llu != %s %llu",
		      v->name, err_lost[e][0], ULL(tot_fail[e]),
		      err_lost[e][1], ULL(lost[e]));
	CHECK(tot_big_ok == 0 && tot_fail[E_MSGSIZE] == tot_big,
	      "%s: %llu oversized records, %llu accepted, %llu -EMSGSIZE",
	      v->name, ULL(tot_big), ULL(tot_big_ok),
	      ULL(tot_fail[E_MSGSIZE]));
	if (run->overwrite) {
		CHECK(tot_fail[E_NOBUFS] == 0,
		      "%s: overwrite mode returned -ENOBUFS %llu times",
		      v->name, ULL(tot_fail[E_NOBUFS]));
		CHECK(tot_lost_packets > 0, "%s: no packet was overwritten",
		      v->name);
		CHECK(tot_read + tot_over == tot_ok,
		      "%s: read %llu + lost_overwrite %llu != written %llu",
		      v->name, ULL(tot_read), ULL(tot_over), ULL(tot_ok));
	} else {
		CHECK(lost[E_NOBUFS] > 0, "%s: the buffers never filled",
		      v->name);
		CHECK(tot_read == tot_ok, "%s: read %llu != written %llu",
		      v->name, ULL(tot_read), ULL(tot_ok));
	}
	if (signals)
		CHECK(tot_sig_attempted > 0,
		      "%s: no record written by a signal handler", v->name);
	if (nr_allowed >= 2 && run->nwriters >= 2)
		CHECK(tot_migrated > 0,
		      "%s: no record migrated between reserve and commit",
		      v->name);

	/* discard mode: every record committed was read exactly once */
	if (run->seen) {
		u64 dups = 0, missing = 0, extra = 0;

		for (b = 0; b < run->nbufs; b++)
			dups += run->r[b].dups;
		CHECK(dups == 0, "%s: %llu records read twice", v->name,
		      ULL(dups));
		for (t = 0; t < run->nwriters; t++) {
			for (d = 0; d < MAX_CTX; d++) {
				u64 k = (u64)t * MAX_CTX + d, below, total;
				u64 ok = run->w[t].st[d].ok;

				bitmap_count(run->seen[k], ok, &below, &total);
				missing += ok - below;
				extra += total - below;
			}
		}
		CHECK(missing == 0 && extra == 0,
		      "%s: %llu records committed but never read, %llu read but never committed",
		      v->name, ULL(missing), ULL(extra));
	}

	snprintf(summary[nr_summary++], sizeof(summary[0]),
		 "%s: %u writers, %u buffers, %.1f s: attempted %llu, written %llu (%llu in %llu signal handlers, nesting depth %d), read %llu (%llu extended headers), discarded %llu (%llu skip records), migrated %llu (%llu hops)\n"
		 "  failed: -ENOBUFS %llu -EAGAIN %llu -EMSGSIZE %llu -EBUSY %llu; lost: full %llu wrap %llu big %llu nest %llu; packets read %llu, lost %llu (%llu gaps, %llu records); reader pauses %llu, holds %llu (%llu timed out)",
		 v->name, run->nwriters, run->nbufs, seconds,
		 ULL(tot_attempted), ULL(tot_ok), ULL(tot_sig_ok),
		 ULL(tot_signals), max_depth,
		 ULL(tot_read), ULL(tot_ext), ULL(tot_discarded),
		 ULL(tot_busy), ULL(tot_migrated), ULL(tot_hops),
		 ULL(tot_fail[E_NOBUFS]), ULL(tot_fail[E_AGAIN]),
		 ULL(tot_fail[E_MSGSIZE]), ULL(tot_fail[E_BUSY]),
		 ULL(lost[E_NOBUFS]), ULL(lost[E_AGAIN]),
		 ULL(lost[E_MSGSIZE]), ULL(lost[E_BUSY]),
		 ULL(tot_packets), ULL(tot_lost_packets), ULL(tot_gaps),
		 ULL(tot_over), ULL(tot_pauses), ULL(tot_holds), ULL(tot_hold_to));
	if (run->overwrite) {
		size_t n = strlen(summary[nr_summary - 1]);

		snprintf(summary[nr_summary - 1] + n, sizeof(summary[0]) - n,
			 "\n  snapshots %llu: sub-buffers read %llu (%llu records), -EAGAIN %llu, -ENODATA %llu",
			 ULL(snaps), ULL(snap_ok), ULL(snap_records),
			 ULL(snap_eagain), ULL(snap_nodata));
	}

	for (b = 0; b < run->nbufs; b++)
		lrb_reader_close(run->r[b].buf);
	lrb_channel_destroy(run->chan);
	for (b = 0; b < run->nbufs; b++) {
		free(run->r[b].copy);
		free(run->r[b].copy2);
		free(run->r[b].last_seq);
		free(run->r[b].last_epoch);
		free(run->r[b].nread);
	}
	for (t = 0; t < run->nwriters; t++) {
		for (d = 0; d < MAX_CTX; d++) {
			free(run->w[t].st[d].last_in_buf);
			free(run->w[t].st[d].ok_in_buf);
			free(run->w[t].st[d].fail_in_buf);
		}
	}
	if (run->seen) {
		for (t = 0; t < nk; t++) {
			for (e = 0; e < MAX_CHUNKS; e++)
				free(run->seen[t]->chunk[e]);
			free(run->seen[t]);
		}
		free(run->seen);
	}
	free(pre_produced);
	free(run->r);
	free(run->w);
	free(run);
}

static void watchdog(int sig)
{
	static const char msg[] = "stress: timed out, test hung\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static void usage(void)
{
	fprintf(stderr,
		"Usage: stress --mode discard|overwrite --seconds N [--layout compact|large]\n"
		"              [--alloc percpu|global] [--signals on|off] [--clock monotonic|cycles]\n"
		"              [--try-discard on|off]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int mode = -1, layout = -1, alloc = -1, clock = CLOCK_DEFAULT, i, c, l, a, n;
	bool signals = true;
	double seconds = -1, share;
	struct sigaction sa;

	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *arg = i + 1 < argc ? argv[i + 1] :
								 NULL;

		if (!arg)
			usage();
		i++;
		if (!strcmp(opt, "--mode"))
			mode = !strcmp(arg, "discard") ? 0 :
			       !strcmp(arg, "overwrite") ? 1 : -2;
		else if (!strcmp(opt, "--seconds"))
			seconds = atof(arg);
		else if (!strcmp(opt, "--layout"))
			layout = !strcmp(arg, "compact") ? 0 :
				 !strcmp(arg, "large") ? 1 : -2;
		else if (!strcmp(opt, "--alloc"))
			alloc = !strcmp(arg, "percpu") ? 0 :
				!strcmp(arg, "global") ? 1 : -2;
		else if (!strcmp(opt, "--signals"))
			signals = !strcmp(arg, "on") ? true :
				  !strcmp(arg, "off") ? false : (usage(), 0);
		else if (!strcmp(opt, "--try-discard"))
			try_discard = !strcmp(arg, "on") ? true :
				      !strcmp(arg, "off") ? false : (usage(), 0);
		else if (!strcmp(opt, "--clock"))
			clock = !strcmp(arg, "monotonic") ? 0 :
				!strcmp(arg, "cycles") ? 1 : -2;
		else
			usage();
	}
	if (mode < 0 || seconds <= 0 || layout == -2 || alloc == -2 ||
	    clock == -2)
		usage();

	signal(SIGALRM, watchdog);
	alarm((unsigned int)(seconds * 4) + 120);

	if (sched_getaffinity(0, sizeof(allowed_set), &allowed_set)) {
		perror("sched_getaffinity");
		return 2;
	}
	cpus = xcalloc(CPU_SETSIZE, sizeof(*cpus));
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed_set))
			cpus[nr_allowed++] = i;
	if (!nr_allowed)
		return 2;

	/* only writer threads take the signals */
	set_signals_blocked(true);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_sigusr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_sigusr2;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sigaction(SIGUSR2, &sa, NULL);

	n = (clock < 0 ? 2 : 1) * (layout < 0 ? 2 : 1) * (alloc < 0 ? 2 : 1);
	share = seconds / n;
	for (c = 0; c < 2; c++) {
		if (clock >= 0 && c != clock)
			continue;
		for (l = 0; l < 2; l++) {
			if (layout >= 0 && l != layout)
				continue;
			for (a = 0; a < 2; a++) {
				if (alloc >= 0 && a != alloc)
					continue;
				run_variant(&variants[c][mode][l][a], share,
					    signals);
			}
		}
	}

	alarm(0);
	for (i = 0; i < nr_summary; i++)
		printf("%s\n", summary[i]);
	/* every writer and flush that blocked the rseq writers let them go */
	CHECK(uatomic_read(&__lrb_rseq_block) == 0, "rseq block left at %lu",
	      uatomic_read(&__lrb_rseq_block));
	printf("per-CPU writers used %s (%lu blocks of the sequences)\n",
	       __lrb_port_rseq_on() && alloc != 1 ? "restartable sequences" :
						    "locked operations",
	       __lrb_port_rseq_holds());
	/* migrated writers took the locked path, blocking the sequences */
	if (__lrb_port_rseq_on() && alloc != 1 && nr_allowed >= 2)
		CHECK(__lrb_port_rseq_holds() > 0,
		      "writers used restartable sequences, but none migrated");
	else if (!__lrb_port_rseq_on())
		CHECK(__lrb_port_rseq_holds() == 0,
		      "%lu blocks of sequences that were never used",
		      __lrb_port_rseq_holds());
	printf("stress[%s]: %ld passed, %ld failed\n",
	       mode ? "overwrite" : "discard", checks_passed, checks_failed);
	return checks_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
