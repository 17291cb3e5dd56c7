// SPDX-License-Identifier: GPL-2.0
/*
 * Persistent channels in files (lib/region.c, lib/region_user.c):
 *
 * - exact: records written into a file-backed channel, the channel left
 *   as a crash leaves it, are all recovered, in order, nothing dropped; a
 *   record reserved and never committed is dropped with exactly the bytes
 *   committed after it;
 * - skips: records discarded after a later one was reserved
 *   (lrb_discard()) are skip records: recovery keeps them in closed
 *   packets, never as records, never as losses; an open packet is kept
 *   up to its commit mark, which stops before the first skip of its lap,
 *   and once its lap completes every record after the skip is kept;
 * - kill: a child process writes from several threads into a file-backed
 *   channel and is SIGKILLed at a random instant, many rounds; the parent
 *   recovers the file and checks every record (payload checksum), that
 *   each thread's records are gap-free except where a counted loss says
 *   otherwise, that only torn states are dropped, and that each thread's
 *   last recovered record is among its last written; every other round
 *   the threads also discard records they hold while others reserve
 *   after them (skip records);
 * - corrupt: the files of killed children with random bytes overwritten at
 *   random offsets (header, metadata, descriptors, packets), recovered from
 *   a read-only mapping between inaccessible pages: never a crash, never a
 *   read outside the region, and every packet kept decodes and every
 *   record kept that no overwritten byte touches is intact;
 * - bad regions: random bytes, a header written halfway, another layout
 *   version, a truncated file are refused with a reason;
 * - scribbled: a packet's content size past its last record, or its
 *   timestamp_end far off, costs those bytes only; an older open packet's
 *   timestamp_begin far off costs that packet only;
 * - discarded: the packets' discarded counts exact (every record of an
 *   overwritten packet before the first packet kept, other losses where
 *   they happened), and loss counters corrupted in the descriptor reported
 *   untrusted.
 *
 * Usage: persist [ROUNDS [TRIALS]] (default 150 kill rounds, 3000 corrupt
 * trials), or persist --leave FILE: one kill round (writers discarding),
 * the file left for tests/tools/test-recover.sh, its records recovered
 * printed
 * (--leave-lossy: a file with losses between its packets, see p_lossy();
 * --leave-untrusted: the same, its overwrite loss counter corrupted;
 * --leave-trailing: a packet's content size 2 bytes too long, see
 * p_trailing()).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "test.h"
#include <lrb/event.h>
#include <lrb/region_file.h>

#define P_ID 1
/* a record ending 2 bytes short of the alignment (p_trailing()) */
#define P_ID_NOTE 2
#define P_THREADS 4
#define P_SUBBUF 4096UL
#define P_NUM_SUBBUF 16UL
#define P_PAGE 4096UL
/* records of a packet: compact header and payload */
#define P_PER_PACKET (P_SUBBUF / (4 + sizeof(struct p_rec)))

struct p_rec {
	u32 thread;
	u32 pad;
	u64 seq;
	u64 sum;
};

/*
 * What the child's threads last committed, for the parent to compare;
 * @discard: the threads also discard records (set by the parent), and
 * count in @skips those that were not the last reservation.
 */
struct p_shared {
	u64 last[P_THREADS];
	int written[P_THREADS];
	int discard;
	int discard_failed;
	u64 skips[P_THREADS];
};

static const struct lrb_config p_global = {
	.mode = LRB_MODE_OVERWRITE,
	.alloc = LRB_ALLOC_GLOBAL,
	.wakeup = LRB_WAKEUP_BY_TIMER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.persistent = true,
	.cb = { .clock_read = lrb_clock_default },
};

static const struct lrb_config p_percpu = {
	.mode = LRB_MODE_OVERWRITE,
	.alloc = LRB_ALLOC_PER_CPU,
	.wakeup = LRB_WAKEUP_BY_TIMER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.persistent = true,
	.cb = { .clock_read = lrb_clock_default },
};

/* refused: a persistent channel is an overwrite channel */
static const struct lrb_config p_discard = {
	.mode = LRB_MODE_DISCARD,
	.alloc = LRB_ALLOC_GLOBAL,
	.wakeup = LRB_WAKEUP_BY_TIMER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.persistent = true,
	.cb = { .clock_read = lrb_clock_default },
};

static char p_path[256];
static char p_meta[8192];

/* The record as the metadata declares it: the layout of struct p_rec. */
LRB_EVENT(rec, P_ID, LRB_INTEGER(uint32_t, thread), LRB_INTEGER(uint32_t, pad),
	  LRB_INTEGER(uint64_t, seq), LRB_INTEGER(uint64_t, sum));
LRB_EVENT(note, P_ID_NOTE, LRB_INTEGER(uint16_t, tag));

/* The CTF metadata the channels keep in their file, for lrb-dump. */
static void p_make_metadata(void)
{
	struct lrb_chan chan = { .cfg = &p_global };
	static const struct lrb_event_desc *const events[] = {
		&lrb_event_rec,
		&lrb_event_note,
	};
	struct lrb_metadata_attr attr = {
		.clock_freq = 1000000000,
		.events = events,
		.nr_events = 2,
	};
	int len = lrb_metadata_format(&chan, &attr, p_meta, sizeof(p_meta));

	if (len <= 0 || len >= (int)sizeof(p_meta)) {
		fprintf(stderr, "persist: metadata does not fit\n");
		exit(1);
	}
}

static u64 p_sum(u32 thread, u64 seq)
{
	u64 z = seq + ((u64)thread << 56) + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static long p_payload_size(const struct lrb_decoder *dec, u32 id,
			   const u8 *payload, unsigned long avail)
{
	(void)dec;
	(void)payload;
	if (id == P_ID_NOTE && avail >= sizeof(u16))
		return sizeof(u16);
	if (id != P_ID || avail < sizeof(struct p_rec))
		return -EINVAL;
	return sizeof(struct p_rec);
}

static const struct lrb_decoder p_dec = {
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.payload_size = p_payload_size,
};

static int p_write(const struct lrb_config *cfg, struct lrb_chan *chan,
		   u32 thread, u64 seq)
{
	struct p_rec r = { .thread = thread, .seq = seq,
			   .sum = p_sum(thread, seq) };

	if (cfg->alloc == LRB_ALLOC_GLOBAL)
		return lrb_event_write(&p_global, chan, P_ID, &r, sizeof(r));
	return lrb_event_write(&p_percpu, chan, P_ID, &r, sizeof(r));
}

/*
 * Reserve a record of @thread to discard: its payload does not check out
 * (p_record_ok()), so a reader that showed it would count a bad record.
 */
static int p_reserve_bad(const struct lrb_config *cfg, struct lrb_chan *chan,
			 struct lrb_ctx *ctx, u32 thread)
{
	struct p_rec r = { .thread = thread, .seq = ~0ULL,
			   .sum = ~p_sum(thread, ~0ULL) };
	int ret = lrb_reserve(cfg, chan, ctx, P_ID, sizeof(r));

	if (!ret)
		lrb_write(ctx, &r, sizeof(r));
	return ret;
}

static struct lrb_chan_attr p_attr(void)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = P_SUBBUF,
		.num_subbuf = P_NUM_SUBBUF,
		.nr_cpus = 2,
		.run_id = (u64)getpid(),
		.metadata = p_meta,
	};

	return attr;
}

/* A record of a recovered packet, checked; returns false if corrupt. */
static bool p_record_ok(const struct lrb_record *rec, struct p_rec *out)
{
	if (rec->len != sizeof(*out))
		return false;
	memcpy(out, rec->payload, sizeof(*out));
	return out->thread < P_THREADS && out->sum == p_sum(out->thread,
							     out->seq);
}

/*
 * Per thread: the last sequence number seen (or -1), the highest, and
 * whether the check allows a jump (a counted loss since).
 */
struct p_order {
	long long last[P_THREADS];
	long long max[P_THREADS];
	unsigned int where[P_THREADS];
	unsigned long gaps_unexplained;
	unsigned long backwards;
	unsigned long bad_records;
	unsigned long undecodable;
	unsigned long bad_packets;
	unsigned long records;
	unsigned long skipped;
};

/*
 * Walk the packets of buffer @b of @rec as a trace reader gets them
 * (lrb_recovery_copy(), then the decoder). @corrupt lists overwritten
 * region offsets (@nr_corrupt): a record touching one need not be intact.
 * @gapless: records of a thread must follow each other where no loss was
 * counted (one buffer holds all of them).
 */
static void p_walk(const struct lrb_recovery *rec, unsigned int b,
		   struct p_order *o, const unsigned long *corrupt,
		   unsigned int nr_corrupt, bool gapless)
{
	const struct lrb_rec_buf *rb = &rec->bufs[b];
	static u8 copy[P_SUBBUF];
	u64 prev_seq = 0, prev_disc = 0, prev_end = 0;
	unsigned int i, c, lossy[P_NUM_SUBBUF];
	bool prev_cut = false;

	/* a thread's records are in order within each buffer */
	for (i = 0; i < P_THREADS; i++)
		o->last[i] = -1;
	for (i = 0; i < rb->nr_packets; i++) {
		const struct lrb_rec_packet *pk = &rb->packets[i];
		struct lrb_packet_iter it;
		struct lrb_record r;
		struct p_rec pr;
		bool touched;
		u64 n = 0;
		long len;
		int ret;

		/*
		 * Losses since the first packet, where they are not known:
		 * a loss counted in a packet's events_discarded happened
		 * before its close, and the writer that lost the record may
		 * write its next one packets later.
		 */
		lossy[i] = (i ? lossy[i - 1] : 0) +
			   (!i || pk->header.packet_seq_num != prev_seq + 1 ||
			    prev_cut ||
			    pk->header.events_discarded != prev_disc);
		len = lrb_recovery_copy(rec, b, i, copy, sizeof(copy));
		if (len != (long)pk->size ||
		    lrb_packet_open(&it, &p_dec, copy, len)) {
			o->bad_packets++;
			continue;
		}
		if (i && (pk->header.events_discarded < prev_disc ||
			  pk->header.timestamp_begin < prev_end ||
			  pk->header.packet_seq_num <= prev_seq))
			o->bad_packets++;
		prev_seq = pk->header.packet_seq_num;
		prev_disc = pk->header.events_discarded;
		prev_end = pk->header.timestamp_end;
		prev_cut = pk->cut;
		while ((ret = lrb_packet_next(&it, &r)) > 0) {
			unsigned long from = pk->offset + r.offset;
			unsigned long to = from + (r.payload - copy -
						   r.offset) + r.len;

			n++;
			o->records++;
			if (r.id == P_ID_NOTE)
				continue;
			touched = false;
			for (c = 0; c < nr_corrupt; c++)
				if (corrupt[c] >= from && corrupt[c] < to)
					touched = true;
			if (!p_record_ok(&r, &pr)) {
				if (!touched)
					o->bad_records++;
				continue;
			}
			if (r.timestamp > pk->header.timestamp_end)
				o->bad_packets++;
			if ((long long)pr.seq <= o->last[pr.thread]) {
				if (!nr_corrupt)
					o->backwards++;
			} else if (gapless && o->last[pr.thread] >= 0 &&
				   (long long)pr.seq != o->last[pr.thread] + 1 &&
				   lossy[i] == (o->where[pr.thread] ?
					   lossy[o->where[pr.thread] - 1] : 0)) {
				o->gaps_unexplained++;
				fprintf(stderr,
					"thread %u: record %llu after %lld (packet %u), in packet %u of %u (seq %llu, discarded %llu, records %llu%s%s), no loss counted\n",
					pr.thread, (unsigned long long)pr.seq,
					o->last[pr.thread], o->where[pr.thread],
					i, rb->nr_packets,
					(unsigned long long)pk->header.packet_seq_num,
					(unsigned long long)pk->header.events_discarded,
					(unsigned long long)pk->records,
					pk->open ? ", open" : "",
					pk->cut ? ", cut" : "");
			}
			o->last[pr.thread] = pr.seq;
			o->where[pr.thread] = i;
			if ((long long)pr.seq > o->max[pr.thread])
				o->max[pr.thread] = pr.seq;
		}
		o->skipped += it.skipped;
		/* a CTF reader takes any byte left in the content for a record */
		if (ret < 0 || n != pk->records || it.pos != it.content)
			o->undecodable++;
	}
}

static void p_order_init(struct p_order *o)
{
	unsigned int t;

	memset(o, 0, sizeof(*o));
	for (t = 0; t < P_THREADS; t++)
		o->last[t] = o->max[t] = -1;
}

static u64 p_drops(const struct lrb_recovery *rec, enum lrb_drop_cause cause,
		   int what)
{
	u64 sum = 0;
	unsigned int b;

	for (b = 0; b < rec->nr_bufs; b++) {
		const struct lrb_recovery_stats *st = &rec->bufs[b].stats;

		sum += what == 0 ? st->drop_packets[cause] :
		       what == 1 ? st->drop_records[cause] :
				   st->drop_bytes[cause];
	}
	return sum;
}

static u64 p_recovered(const struct lrb_recovery *rec)
{
	u64 sum = 0;
	unsigned int b;

	for (b = 0; b < rec->nr_bufs; b++)
		sum += rec->bufs[b].stats.records;
	return sum;
}

/* Records written by one thread, all kept in order, none dropped. */
static void test_exact(void)
{
	struct lrb_chan_attr attr = p_attr();
	struct lrb_recovery *rec;
	struct lrb_chan *chan;
	const char *why = NULL;
	struct lrb_ctx ctx;
	struct p_order o;
	u64 seq, tail_bytes = 0;
	int c;

	CHECK_EQ(lrb_region_file_create(p_path, &p_global, &attr, &chan), 0);
	for (seq = 0; seq < 100; seq++)
		CHECK_EQ(p_write(&p_global, chan, 0, seq), 0);
	/* the file as a crash leaves it: nothing flushed, nothing closed */
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		return;
	CHECK_EQ(p_recovered(rec), 100);
	CHECK_EQ(rec->bufs[0].nr_packets, 1);
	CHECK(rec->bufs[0].packets[0].open);
	for (c = 0; c < LRB_DROP_NR; c++)
		CHECK_EQ(c * 1000000 + p_drops(rec, c, 0) + p_drops(rec, c, 2), c * 1000000);
	p_order_init(&o);
	p_walk(rec, 0, &o, NULL, 0, true);
	CHECK_EQ(o.records, 100);
	CHECK_EQ(o.max[0], 99);
	CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
			 o.undecodable + o.bad_packets, 0);
	CHECK_EQ(rec->metadata_size, strlen(p_meta));
	CHECK(!memcmp(rec->metadata, p_meta, rec->metadata_size));
	CHECK_EQ(rec->header.run_id, (u64)getpid());
	lrb_region_file_release(rec);

	/* round the ring several times: the newest packets, gap-free */
	for (; seq < 3000; seq++)
		CHECK_EQ(p_write(&p_global, chan, 0, seq), 0);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		return;
	CHECK_EQ(rec->bufs[0].nr_packets, P_NUM_SUBBUF);
	for (c = 0; c < LRB_DROP_NR; c++)
		CHECK_EQ(c * 1000000 + p_drops(rec, c, 0) + p_drops(rec, c, 2), c * 1000000);
	p_order_init(&o);
	p_walk(rec, 0, &o, NULL, 0, true);
	CHECK_EQ(o.max[0], 2999);
	/* the 16 packets: 15 complete ones and the open one */
	CHECK(o.records >= (P_NUM_SUBBUF - 1) *
				   ((P_SUBBUF - LRB_PACKET_HEADER_SIZE) /
				    (4 + sizeof(struct p_rec))));
	CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
			 o.undecodable + o.bad_packets, 0);
	CHECK_EQ(o.records, p_recovered(rec));
	lrb_region_file_release(rec);

	/*
	 * A record reserved and never committed (a writer stopped by the
	 * crash), then records committed after it (nested writers): only
	 * those before it are kept, and the bytes after it are counted.
	 */
	CHECK_EQ(lrb_reserve(&p_global, chan, &ctx, P_ID, sizeof(struct p_rec)),
		 0);
	for (c = 0; c < 3; c++) {
		CHECK_EQ(p_write(&p_global, chan, 1, c), 0);
		tail_bytes += 4 + sizeof(struct p_rec);
	}
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (rec) {
		p_order_init(&o);
		p_walk(rec, 0, &o, NULL, 0, true);
		CHECK_EQ(o.max[0], 2999);
		CHECK_EQ(o.max[1], -1);
		CHECK_EQ(p_drops(rec, LRB_DROP_UNCOMMITTED, 2), tail_bytes);
		CHECK_EQ(p_drops(rec, LRB_DROP_UNCOMMITTED, 0), 0);
		CHECK(rec->bufs[0].packets[rec->bufs[0].nr_packets - 1].cut);
		lrb_region_file_release(rec);
	}
	/* committed at last, the hole closes: everything is kept */
	{
		struct p_rec r = { .thread = 2, .seq = 0, .sum = p_sum(2, 0) };

		lrb_write(&ctx, &r, sizeof(r));
		lrb_commit(&p_global, &ctx);
	}
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (rec) {
		p_order_init(&o);
		p_walk(rec, 0, &o, NULL, 0, true);
		CHECK_EQ(o.max[1], 2);
		CHECK_EQ(o.max[2], 0);
		CHECK_EQ(p_drops(rec, LRB_DROP_UNCOMMITTED, 2), 0);
		lrb_region_file_release(rec);
	}
	lrb_region_file_destroy(chan);
}

/* No drop of any cause in @rec. */
static void p_no_drops(const struct lrb_recovery *rec)
{
	int c;

	for (c = 0; c < LRB_DROP_NR; c++)
		CHECK_EQ(c * 1000000 + p_drops(rec, c, 0) + p_drops(rec, c, 1) +
				 p_drops(rec, c, 2),
			 c * 1000000);
}

/*
 * The newest packet of @rec counts as discarded exactly the records of
 * the @written committed that it does not keep (@kept): those of the
 * packets overwritten, no skip record.
 */
static void p_discarded_are(const struct lrb_recovery *rec, u64 written,
			    u64 kept)
{
	const struct lrb_rec_buf *rb = &rec->bufs[0];

	CHECK(rb->nr_packets > 0);
	if (rb->nr_packets)
		CHECK_EQ(rb->packets[rb->nr_packets - 1].header.events_discarded,
			 written - kept);
}

/*
 * Records discarded after a later one was reserved (lrb_discard()): skip
 * records, which recovery neither shows nor counts as lost. Thread 0
 * writes its records in sequence; the discarded ones are thread 1's, whose
 * payloads do not check out.
 */
static void test_skips(void)
{
	struct lrb_chan_attr attr = p_attr();
	struct lrb_recovery *rec;
	struct lrb_chan *chan;
	const char *why = NULL;
	struct lrb_ctx a, b;
	struct p_order o;
	u64 seq = 0, tail = 0;
	unsigned int i;

	CHECK_EQ(lrb_region_file_create(p_path, &p_global, &attr, &chan), 0);
	while (seq < 3000) {
		switch (seq % 16) {
		case 3:		/* one discarded before a record */
			CHECK_EQ(p_reserve_bad(&p_global, chan, &a, 1), 0);
			CHECK_EQ(p_write(&p_global, chan, 0, seq++), 0);
			CHECK_EQ(lrb_discard(&p_global, &a), 0);
			break;
		case 7:		/* two in a row, discarded last first */
			CHECK_EQ(p_reserve_bad(&p_global, chan, &a, 1), 0);
			CHECK_EQ(p_reserve_bad(&p_global, chan, &b, 1), 0);
			CHECK_EQ(p_write(&p_global, chan, 0, seq++), 0);
			CHECK_EQ(lrb_discard(&p_global, &b), 0);
			CHECK_EQ(lrb_discard(&p_global, &a), 0);
			break;
		case 11:	/* a skip, then the last one taken back */
			CHECK_EQ(p_reserve_bad(&p_global, chan, &a, 1), 0);
			CHECK_EQ(p_reserve_bad(&p_global, chan, &b, 1), 0);
			CHECK_EQ(lrb_discard(&p_global, &a), 0);
			CHECK_EQ(lrb_discard(&p_global, &b), 0);
			CHECK_EQ(p_write(&p_global, chan, 0, seq++), 0);
			break;
		default:
			CHECK_EQ(p_write(&p_global, chan, 0, seq++), 0);
		}
	}
	/* every packet closed: their skip records are kept, as skips */
	lrb_channel_flush(chan);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		return;
	p_no_drops(rec);
	p_order_init(&o);
	p_walk(rec, 0, &o, NULL, 0, true);
	p_discarded_are(rec, seq, o.records);
	CHECK_EQ(o.records, p_recovered(rec));
	CHECK_EQ(o.max[0], 2999);
	CHECK_EQ(o.max[1], -1);
	CHECK(o.skipped > 0);
	CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
			 o.undecodable + o.bad_packets, 0);
	lrb_region_file_release(rec);

	/*
	 * An open packet: 10 records, then a record discarded after 3 more
	 * were written (the first skip of the lap), then 5 more. Its commit
	 * mark stops at the reservation of the skipped record: the records
	 * after it are dropped, their bytes and the skip's counted.
	 */
	for (i = 0; i < 10; i++)
		CHECK_EQ(p_write(&p_global, chan, 0, seq++), 0);
	CHECK_EQ(p_reserve_bad(&p_global, chan, &a, 1), 0);
	tail += 4 + sizeof(struct p_rec);
	for (i = 0; i < 8; i++) {
		CHECK_EQ(p_write(&p_global, chan, 2, i), 0);
		tail += 4 + sizeof(struct p_rec);
		if (i == 2)
			CHECK_EQ(lrb_discard(&p_global, &a), 0);
	}
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (rec) {
		const struct lrb_rec_buf *rb = &rec->bufs[0];

		p_order_init(&o);
		p_walk(rec, 0, &o, NULL, 0, true);
		CHECK_EQ(o.max[0], (long long)seq - 1);
		CHECK_EQ(o.max[1], -1);
		CHECK_EQ(o.max[2], -1);
		CHECK_EQ(p_drops(rec, LRB_DROP_UNCOMMITTED, 2), tail);
		CHECK_EQ(p_drops(rec, LRB_DROP_UNCOMMITTED, 0), 0);
		CHECK_EQ(p_drops(rec, LRB_DROP_UNCOMMITTED, 1), 0);
		CHECK(rb->packets[rb->nr_packets - 1].open);
		CHECK(rb->packets[rb->nr_packets - 1].cut);
		CHECK_EQ(rb->packets[rb->nr_packets - 1].records, 10);
		CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
				 o.undecodable + o.bad_packets, 0);
		lrb_region_file_release(rec);
	}
	/* its lap complete, the skip merged: every record is kept */
	lrb_channel_flush(chan);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (rec) {
		p_no_drops(rec);
		p_order_init(&o);
		p_walk(rec, 0, &o, NULL, 0, true);
		p_discarded_are(rec, seq + 8, o.records);
		CHECK_EQ(o.max[0], (long long)seq - 1);
		CHECK_EQ(o.max[1], -1);
		CHECK_EQ(o.max[2], 7);
		CHECK_EQ(o.records, p_recovered(rec));
		CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
				 o.undecodable + o.bad_packets, 0);
		lrb_region_file_release(rec);
	}
	lrb_region_file_destroy(chan);
}

/*
 * Scribble on a closed packet of the file as a crash may: its header field
 * at @field gets @value, plus its content size in bits if @relative (a
 * packet with room for that). Return: the packet's index among those
 * recovered, or -1.
 */
static int p_scribble(unsigned long field, u64 value, bool relative)
{
	const struct lrb_rec_packet *pk;
	struct lrb_recovery *rec;
	const char *why = NULL;
	unsigned long off = 0;
	unsigned int i;
	int fd, ret = -1;
	u64 v = value;

	if (lrb_region_file_recover(p_path, &p_dec, &rec, &why))
		return -1;
	for (i = 0; i < rec->bufs[0].nr_packets && ret < 0; i++) {
		pk = &rec->bufs[0].packets[i];
		v = value + (relative ? pk->content * 8 : 0);
		if (!pk->open &&
		    (!relative || pk->content % LRB_RECORD_ALIGN == 2)) {
			off = pk->offset + field;
			ret = (int)i;
		}
	}
	lrb_region_file_release(rec);
	fd = open(p_path, O_WRONLY);
	if (ret < 0 || fd < 0 ||
	    pwrite(fd, &v, sizeof(v), (off_t)off) != sizeof(v))
		ret = -1;
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * 3000 records into a new file, one packet closed early by a flush after
 * a record that ends 2 bytes short of the alignment, left as a crash
 * leaves it (the channel in *@chanp); then that packet's content_size
 * says 2 bytes more: its last record's padding, which a CTF reader takes
 * for a record.
 * Return: the index of that packet among those recovered, or -1.
 */
static int p_trailing(struct lrb_chan **chanp)
{
	struct lrb_chan_attr attr = p_attr();
	u16 tag = 1;
	u64 seq;

	if (lrb_region_file_create(p_path, &p_global, &attr, chanp))
		return -1;
	for (seq = 0; seq < 3000; seq++) {
		/* a packet closed early after a record of 6 bytes */
		if (seq == 2900) {
			lrb_event_write(&p_global, *chanp, P_ID_NOTE, &tag,
					sizeof(tag));
			lrb_channel_flush(*chanp);
		}
		p_write(&p_global, *chanp, 0, seq);
	}
	return p_scribble(offsetof(struct lrb_packet_header, content_size),
			  2 * 8, true);
}

/*
 * The file recovered again after p_scribble() (which returned @i) hit a
 * closed packet other than the last of the @n recovered before: they are
 * all kept, every record in order.
 * Return: the recovery, for the caller to check further and release, or
 * NULL.
 */
static struct lrb_recovery *p_rescribbled(int i, unsigned int n)
{
	struct lrb_recovery *rec;
	const char *why = NULL;
	struct p_order o;

	CHECK(i >= 0 && i + 1 < (int)n);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (rec && (i < 0 || i + 1 >= (int)n)) {
		lrb_region_file_release(rec);
		rec = NULL;
	}
	if (!rec)
		return NULL;
	CHECK_EQ(rec->bufs[0].nr_packets, n);
	p_order_init(&o);
	p_walk(rec, 0, &o, NULL, 0, true);
	CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
			 o.undecodable + o.bad_packets, 0);
	return rec;
}

/*
 * A closed packet whose content size says 2 bytes past its last record:
 * they are cut and counted, so a CTF reader reads every packet kept; one
 * whose timestamp_end is garbage ends where the next packet begins,
 * instead of voiding the packets after it; one whose events_discarded is
 * garbage counts no more than the next one.
 */
static void test_scribbled(void)
{
	struct lrb_recovery *rec, *good;
	const struct lrb_rec_packet *pk;
	const char *why = NULL;
	struct lrb_chan *chan;
	struct p_order o;
	unsigned int n;
	int i;

	i = p_trailing(&chan);
	CHECK(i >= 0);
	if (i < 0)
		return;
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		return;
	pk = &rec->bufs[0].packets[i];
	CHECK_EQ(pk->header.content_size, (u64)pk->content * 8);
	CHECK(pk->cut);
	CHECK_EQ(p_drops(rec, LRB_DROP_HEADER, 0), 0);
	CHECK_EQ(p_drops(rec, LRB_DROP_HEADER, 1), 0);
	CHECK_EQ(p_drops(rec, LRB_DROP_HEADER, 2), 2);
	p_order_init(&o);
	p_walk(rec, 0, &o, NULL, 0, true);
	CHECK_EQ(o.records, p_recovered(rec));
	CHECK_EQ(o.max[0], 2999);
	CHECK_EQ(o.gaps_unexplained + o.backwards + o.bad_records +
			 o.undecodable + o.bad_packets, 0);
	n = rec->bufs[0].nr_packets;
	CHECK_EQ(rec->bufs[0].packets[n - 1].header.timestamp_end,
		 rec->bufs[0].packets[n - 1].last_ts);
	good = rec;

	/* a timestamp_end far in the future, of the oldest closed packet */
	i = p_scribble(offsetof(struct lrb_packet_header, timestamp_end),
		       3746994903172607939ULL, false);
	rec = p_rescribbled(i, n);
	if (rec) {
		CHECK_EQ(p_recovered(rec), p_recovered(good));
		CHECK_EQ(rec->bufs[0].packets[i].header.timestamp_end,
			 rec->bufs[0].packets[i + 1].header.timestamp_begin);
		CHECK_EQ(p_drops(rec, LRB_DROP_ORDER, 0), 0);
		lrb_region_file_release(rec);
	}

	/* an events_discarded far off, of the same packet */
	i = p_scribble(offsetof(struct lrb_packet_header, events_discarded),
		       0xfd00000000143e4dULL, false);
	rec = p_rescribbled(i, n);
	if (rec) {
		CHECK_EQ(rec->bufs[0].packets[i].header.events_discarded,
			 rec->bufs[0].packets[i + 1].header.events_discarded);
		CHECK_EQ(rec->bufs[0].packets[n - 1].header.events_discarded,
			 good->bufs[0].packets[n - 1].header.events_discarded);
		lrb_region_file_release(rec);
	}
	lrb_region_file_release(good);
	lrb_region_file_destroy(chan);
}

/*
 * An older packet left open (its writer stopped mid-record while nested
 * writers went on), its timestamp_begin then scribbled far into the
 * future, which moves all its records there: recovery drops that packet
 * ("order"), not the good packets after it, which begin before its end.
 */
static void test_begin(void)
{
	struct lrb_chan_attr attr = p_attr();
	struct lrb_recovery *rec, *good;
	const struct lrb_rec_packet *pk;
	const char *why = NULL;
	struct lrb_chan *chan;
	struct lrb_ctx ctx;
	struct p_order o;
	unsigned int i, n, hole = 0;
	u64 seq, ts;
	off_t off;
	int fd;

	CHECK_EQ(lrb_region_file_create(p_path, &p_global, &attr, &chan), 0);
	for (seq = 0; seq < 200; seq++)
		CHECK_EQ(p_write(&p_global, chan, 0, seq), 0);
	CHECK_EQ(lrb_reserve(&p_global, chan, &ctx, P_ID, sizeof(struct p_rec)),
		 0);
	/* a dozen packets after the hole: the ring does not come back to it */
	for (seq = 0; seq < (P_NUM_SUBBUF - 4) * P_PER_PACKET; seq++)
		CHECK_EQ(p_write(&p_global, chan, 1, seq), 0);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &good, &why), 0);
	if (!good)
		goto out;
	n = good->bufs[0].nr_packets;
	for (i = 0; i + 1 < n; i++)
		if (good->bufs[0].packets[i].open)
			hole = i + 1;
	CHECK(hole > 0 && hole + 2 < n);
	if (!hole || hole + 2 >= n)
		goto out_good;
	pk = &good->bufs[0].packets[--hole];
	CHECK(pk->records > 0);
	off = (off_t)(pk->offset +
		      offsetof(struct lrb_packet_header, timestamp_begin));
	fd = open(p_path, O_RDWR);
	CHECK(fd >= 0);
	if (fd < 0)
		goto out_good;
	CHECK_EQ(pread(fd, &ts, sizeof(ts), off), (ssize_t)sizeof(ts));
	ts += 1ULL << 40;
	CHECK_EQ(pwrite(fd, &ts, sizeof(ts), off), (ssize_t)sizeof(ts));
	close(fd);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (rec) {
		CHECK_EQ(rec->bufs[0].nr_packets, n - 1);
		CHECK_EQ(p_drops(rec, LRB_DROP_ORDER, 0), 1);
		CHECK_EQ(p_drops(rec, LRB_DROP_ORDER, 1), pk->records);
		CHECK_EQ(p_recovered(rec) + pk->records, p_recovered(good));
		for (i = hole + 1; i < n && i - 1 < rec->bufs[0].nr_packets; i++)
			CHECK_EQ(rec->bufs[0].packets[i - 1].header.packet_seq_num,
				 good->bufs[0].packets[i].header.packet_seq_num);
		p_order_init(&o);
		p_walk(rec, 0, &o, NULL, 0, true);
		CHECK_EQ(o.max[1], (long long)((P_NUM_SUBBUF - 4) * P_PER_PACKET - 1));
		CHECK_EQ(o.backwards + o.bad_records + o.undecodable +
				 o.bad_packets, 0);
		lrb_region_file_release(rec);
	}
out_good:
	lrb_region_file_release(good);
out:
	{
		struct p_rec r = { .thread = 2, .seq = 0, .sum = p_sum(2, 0) };

		lrb_write(&ctx, &r, sizeof(r));
		lrb_commit(&p_global, &ctx);
	}
	lrb_region_file_destroy(chan);
}

/* Overwrite descriptor word @word of buffer 0 of the file with @value. */
static void p_desc_poke(const struct lrb_recovery *rec, unsigned int word,
			unsigned long value)
{
	off_t off = (off_t)(rec->header.desc_offset + word * sizeof(value));
	int fd = open(p_path, O_WRONLY);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(pwrite(fd, &value, sizeof(value), off), (ssize_t)sizeof(value));
	close(fd);
}

/*
 * The discarded counts of the packets of buffer 0 of @rec: every record
 * of an overwritten packet (@overwritten) before the first, then exactly
 * @step more from packet @at on. Return: @at found and every count right.
 */
static bool p_disc_ok(const struct lrb_recovery *rec, u64 overwritten,
		      unsigned int at, u64 step)
{
	const struct lrb_rec_buf *rb = &rec->bufs[0];
	unsigned int i;
	bool ok = rb->nr_packets > at;

	for (i = 0; i < rb->nr_packets; i++)
		ok &= rb->packets[i].header.events_discarded ==
		      overwritten + (i >= at ? step : 0);
	return ok;
}

/* Index of the packet of buffer 0 of @rec holding record @seq of thread 0. */
static int p_packet_of(const struct lrb_recovery *rec, u64 seq)
{
	static u8 copy[P_SUBBUF];
	struct lrb_packet_iter it;
	struct lrb_record r;
	struct p_rec pr;
	unsigned int i;

	for (i = 0; i < rec->bufs[0].nr_packets; i++) {
		if (lrb_recovery_copy(rec, 0, i, copy, sizeof(copy)) < 0 ||
		    lrb_packet_open(&it, &p_dec, copy,
				    rec->bufs[0].packets[i].size))
			return -1;
		while (lrb_packet_next(&it, &r) > 0)
			if (p_record_ok(&r, &pr) && !pr.thread && pr.seq == seq)
				return (int)i;
	}
	return -1;
}

/*
 * Discarded counts, exact: 3000 records round the ring many times (the
 * records of the packets overwritten are older than any packet kept, so
 * all of them count before the first), with 5 records too big for a
 * packet after record 2499 (lost where it ends). Then the descriptor's
 * loss counters corrupted one at a time: reported untrusted, and the
 * packets' counts used instead.
 */
static void test_discarded(void)
{
	const u32 others = (1U << LRB_REGION_LOST_WRAP) |
			   (1U << LRB_REGION_LOST_BIG) |
			   (1U << LRB_REGION_LOST_NEST);
	static u8 big[P_SUBBUF];
	struct lrb_chan_attr attr = p_attr();
	struct lrb_buf_counters c;
	struct lrb_recovery *rec;
	const char *why = NULL;
	struct lrb_chan *chan;
	u64 seq, ow_closed;
	int at, i;

	CHECK_EQ(lrb_region_file_create(p_path, &p_global, &attr, &chan), 0);
	for (seq = 0; seq < 3000; seq++) {
		if (seq == 2500)
			for (i = 0; i < 5; i++)
				CHECK_EQ(lrb_event_write(&p_global, chan, P_ID,
							 big, sizeof(big)),
					 -EMSGSIZE);
		CHECK_EQ(p_write(&p_global, chan, 0, seq), 0);
	}
	lrb_buf_stats(lrb_channel_nth_buf(chan, 0), &c);
	CHECK_EQ(c.lost_big, 5);
	CHECK(c.lost_overwrite > 0);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		goto out;
	at = p_packet_of(rec, 2499);
	CHECK(at > 0);
	CHECK(p_disc_ok(rec, c.lost_overwrite, at, 5));
	CHECK_EQ(rec->bufs[0].stats.lost_overwrite, c.lost_overwrite);
	CHECK_EQ(rec->bufs[0].stats.lost_big, 5);
	CHECK_EQ(rec->bufs[0].stats.untrusted, 0);
	/* the newest closed packet counts all but the newest one's push */
	ow_closed = rec->bufs[0].packets[rec->bufs[0].nr_packets - 2].overwritten;
	CHECK(ow_closed > 0 && ow_closed < c.lost_overwrite);

	/* more records overwritten than the packets could have held */
	p_desc_poke(rec, LRB_REGION_LOST_OVERWRITE, 1UL << 40);
	lrb_region_file_release(rec);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		goto out;
	CHECK_EQ(rec->bufs[0].stats.untrusted, 1U << LRB_REGION_LOST_OVERWRITE);
	CHECK_EQ(rec->bufs[0].stats.lost_overwrite, 1ULL << 40);
	CHECK(p_disc_ok(rec, ow_closed, at, 5));
	/* fewer than a packet counted */
	p_desc_poke(rec, LRB_REGION_LOST_OVERWRITE, ow_closed - 1);
	lrb_region_file_release(rec);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		goto out;
	CHECK_EQ(rec->bufs[0].stats.untrusted, 1U << LRB_REGION_LOST_OVERWRITE);
	CHECK(p_disc_ok(rec, ow_closed, at, 5));
	p_desc_poke(rec, LRB_REGION_LOST_OVERWRITE, c.lost_overwrite);

	/* fewer records too big than the packets counted */
	p_desc_poke(rec, LRB_REGION_LOST_BIG, 4);
	lrb_region_file_release(rec);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		goto out;
	CHECK_EQ(rec->bufs[0].stats.untrusted, others);
	CHECK(p_disc_ok(rec, c.lost_overwrite, at, 5));
	p_desc_poke(rec, LRB_REGION_LOST_BIG, 5);

	/* a full ring, which an overwrite channel never has */
	p_desc_poke(rec, LRB_REGION_LOST_FULL, 3);
	lrb_region_file_release(rec);
	CHECK_EQ(lrb_region_file_recover(p_path, &p_dec, &rec, &why), 0);
	if (!rec)
		goto out;
	CHECK_EQ(rec->bufs[0].stats.untrusted, 1U << LRB_REGION_LOST_FULL);
	CHECK(p_disc_ok(rec, c.lost_overwrite, at, 5));
	lrb_region_file_release(rec);
out:
	lrb_region_file_destroy(chan);
}

static volatile int p_go;

struct p_thread {
	const struct lrb_config *cfg;
	struct lrb_chan *chan;
	struct p_shared *sh;
	u32 id;
};

static void *p_writer(void *arg)
{
	struct p_thread *t = arg;
	struct lrb_ctx ctx;
	u64 seq;

	lrb_thread_init();
	for (seq = 0;; seq++) {
		/* a record held while other threads reserve after it */
		if (t->sh->discard && seq % 8 == 0 &&
		    !p_reserve_bad(t->cfg, t->chan, &ctx, t->id)) {
			sched_yield();
			/* not the last reservation: lrb_discard() skips it */
			if (lrb_try_discard(t->cfg, &ctx)) {
				if (lrb_discard(t->cfg, &ctx))
					WRITE_ONCE(t->sh->discard_failed, 1);
				WRITE_ONCE(t->sh->skips[t->id],
					   t->sh->skips[t->id] + 1);
			}
		}
		if (!p_write(t->cfg, t->chan, t->id, seq))
			WRITE_ONCE(t->sh->last[t->id], seq);
		if (seq == 200)
			WRITE_ONCE(t->sh->written[t->id], 1);
	}
	return NULL;
}

static void __attribute__((noreturn)) p_child(const struct lrb_config *cfg,
					      struct p_shared *sh)
{
	struct lrb_chan_attr attr = p_attr();
	struct p_thread t[P_THREADS];
	pthread_t tid;
	struct lrb_chan *chan;
	u32 i;

	if (lrb_region_file_create(p_path, cfg, &attr, &chan))
		_exit(1);
	for (i = 0; i < P_THREADS; i++) {
		t[i] = (struct p_thread){ cfg, chan, sh, i };
		if (pthread_create(&tid, NULL, p_writer, &t[i]))
			_exit(1);
	}
	for (;;)
		pause();
}

/* Fork a writer child, let it write, kill it. Returns false on failure. */
static bool p_run_child(const struct lrb_config *cfg, struct p_shared *sh,
			unsigned int delay_us, bool discard)
{
	struct timespec ts = { 0, 100000 };
	int status, i, ready;
	unsigned int waited;
	pid_t pid;

	memset(sh, 0, sizeof(*sh));
	sh->discard = discard;
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid)
		p_child(cfg, sh);
	for (waited = 0; waited < 50000; waited++) {
		for (ready = 0, i = 0; i < P_THREADS; i++)
			ready += READ_ONCE(sh->written[i]);
		if (ready == P_THREADS || waitpid(pid, &status, WNOHANG))
			break;
		nanosleep(&ts, NULL);
	}
	usleep(delay_us);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return false;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	       ready == P_THREADS;
}

struct p_totals {
	u64 records;
	u64 drops[3][LRB_DROP_NR];
	long long max_distance;
	unsigned long rounds;
	unsigned long overwritten;
	unsigned long skipped;
	u64 skips;
	long long recover_ns;
};

static void test_kill(unsigned int rounds, struct p_totals *tot)
{
	struct p_shared *sh;
	unsigned int r, t, b, c, w;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	if (sh == MAP_FAILED)
		return;
	for (r = 0; r < rounds; r++) {
		const struct lrb_config *cfg = r % 4 == 3 ? &p_percpu : &p_global;
		bool discard = r & 1;
		struct lrb_recovery *rec;
		const char *why = NULL;
		struct timespec t0, t1;
		struct p_order o;
		bool ok;
		int ret;

		ok = p_run_child(cfg, sh, (unsigned int)random() % 20000,
				 discard);
		CHECK(ok);
		if (!ok)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = lrb_region_file_recover(p_path, &p_dec, &rec, &why);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		tot->recover_ns += (t1.tv_sec - t0.tv_sec) * 1000000000LL +
				   t1.tv_nsec - t0.tv_nsec;
		if (ret) {
			CHECK(!"kill: recovery refused the file");
			fprintf(stderr, "round %u: %s\n", r, why);
			continue;
		}
		p_order_init(&o);
		for (b = 0; b < rec->nr_bufs; b++)
			p_walk(rec, b, &o, NULL, 0, rec->nr_bufs == 1);
		CHECK_EQ(o.bad_records, 0);
		CHECK_EQ(o.undecodable, 0);
		CHECK_EQ(o.bad_packets, 0);
		CHECK_EQ(o.backwards, 0);
		CHECK_EQ(o.gaps_unexplained, 0);
		CHECK_EQ(o.records, p_recovered(rec));
		CHECK_EQ(sh->discard_failed, 0);
		tot->skipped += o.skipped;
		for (t = 0; t < P_THREADS; t++)
			tot->skips += sh->skips[t];
		/* a crash tears only what was being written */
		for (c = 0; c < LRB_DROP_NR; c++) {
			if (c != LRB_DROP_OPENING && c != LRB_DROP_UNCOMMITTED)
				CHECK_EQ(p_drops(rec, c, 0) + p_drops(rec, c, 2),
					 0);
			for (w = 0; w < 3; w++)
				tot->drops[w][c] += p_drops(rec, c, w);
		}
		for (t = 0; t < P_THREADS; t++) {
			long long last = (long long)sh->last[t];

			/* one more may be committed and not yet published */
			CHECK(o.max[t] <= last + 1);
			/* all of it overwritten by the other threads */
			if (o.max[t] < 0) {
				tot->overwritten++;
				continue;
			}
			/* per CPU, newer ones may be overwritten in another */
			if (rec->nr_bufs > 1)
				continue;
			if (last - o.max[t] > tot->max_distance)
				tot->max_distance = last - o.max[t];
			/*
			 * Later records are only in packets cut at a hole,
			 * one per writer stopped mid-record, or, with skips,
			 * the newest packet's, cut at its lap's first skip.
			 */
			CHECK(last - o.max[t] <=
			      (P_THREADS + discard) * (long long)P_PER_PACKET);
		}
		tot->records += o.records;
		tot->rounds++;
		lrb_region_file_release(rec);
	}
	munmap(sh, sizeof(*sh));
}

/* The region at @img, @size bytes, between two inaccessible pages. */
static u8 *p_guarded(const u8 *img, unsigned long size, void **map)
{
	unsigned long len = size + 2 * P_PAGE;
	u8 *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*map = p;
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + P_PAGE, size, PROT_READ | PROT_WRITE))
		return NULL;
	memcpy(p + P_PAGE, img, size);
	return p + P_PAGE;
}

static u8 *p_read_file(unsigned long *size)
{
	struct stat st;
	u8 *img;
	int fd = open(p_path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	img = malloc(st.st_size);
	if (img && read(fd, img, st.st_size) != st.st_size) {
		free(img);
		img = NULL;
	}
	close(fd);
	*size = st.st_size;
	return img;
}

static void test_corrupt(unsigned int trials, unsigned long *refused)
{
	unsigned long size, corrupt[16], data_off;
	struct p_shared *sh;
	unsigned int t, k, nr, b, w;
	u8 *img = NULL;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	if (sh == MAP_FAILED)
		return;
	for (t = 0; t < trials; t++) {
		const struct lrb_region_header *h;
		struct lrb_recovery *rec;
		const char *why = NULL;
		struct p_order o;
		void *map;
		u8 *reg;
		bool meta_hit = false;
		int ret;

		/* a fresh killed child's file now and then */
		if (t % 200 == 0) {
			free(img);
			CHECK(p_run_child(t % 400 ? &p_percpu : &p_global, sh,
					  (unsigned int)random() % 5000,
					  t % 800 >= 400));
			img = p_read_file(&size);
			CHECK(img != NULL);
			if (!img)
				break;
		}
		h = (const void *)img;
		data_off = h->data_offset;
		reg = p_guarded(img, size, &map);
		CHECK(reg != NULL);
		if (!reg)
			break;
		nr = 1 + (unsigned int)random() % 8;
		for (k = 0; k < nr; k++) {
			/* 1 in 10 in the header and metadata, 2 in the descriptors */
			w = (unsigned int)random() % 10;
			if (!w)
				corrupt[k] = (unsigned long)random() %
					     h->desc_offset;
			else if (w < 3)
				corrupt[k] = h->desc_offset +
					     (unsigned long)random() %
						     (data_off - h->desc_offset);
			else
				corrupt[k] = data_off + (unsigned long)random() %
							     (size - data_off);
			reg[corrupt[k]] ^= (u8)(1 + random() % 255);
			if (corrupt[k] < h->desc_offset)
				meta_hit = true;
		}
		/* recovery only reads */
		mprotect(reg, size, PROT_READ);
		ret = lrb_region_recover(reg, size, &p_dec, &rec, &why);
		if (ret) {
			CHECK_EQ(ret, -ENODATA);
			/* only a header or metadata byte can void the region */
			CHECK(meta_hit);
			(*refused)++;
		} else {
			p_order_init(&o);
			for (b = 0; b < rec->nr_bufs; b++)
				p_walk(rec, b, &o, corrupt, nr, false);
			CHECK_EQ(o.bad_records, 0);
			CHECK_EQ(o.undecodable, 0);
			CHECK_EQ(o.bad_packets, 0);
			lrb_recovery_free(rec);
		}
		munmap(map, size + 2 * P_PAGE);
	}
	free(img);
	munmap(sh, sizeof(*sh));
}

static void p_expect_refused(const u8 *reg, unsigned long size,
			     const char *want)
{
	struct lrb_recovery *rec;
	const char *why = NULL;

	CHECK_EQ(lrb_region_recover(reg, size, &p_dec, &rec, &why), -ENODATA);
	CHECK(rec == NULL);
	CHECK(why && strstr(why, want));
	if (why && !strstr(why, want))
		fprintf(stderr, "refused for \"%s\", not \"%s\"\n", why, want);
}

static void test_bad_regions(void)
{
	struct lrb_chan_attr attr = p_attr();
	struct lrb_region_header *h;
	struct lrb_chan *chan;
	unsigned long size, i;
	void *map;
	u8 *img, *reg;

	CHECK_EQ(lrb_region_file_create(p_path, &p_global, &attr, &chan), 0);
	CHECK_EQ(p_write(&p_global, chan, 0, 0), 0);
	lrb_region_file_destroy(chan);
	img = p_read_file(&size);
	CHECK(img != NULL);
	if (!img)
		return;
	reg = p_guarded(img, size, &map);
	CHECK(reg != NULL);
	if (!reg)
		return;
	h = (void *)reg;
	/* a region too short for what its header says */
	p_expect_refused(reg, size - P_PAGE, "out of bounds");
	p_expect_refused(reg, 16, "smaller than its header");
	/* a header written halfway: the checksum is stored last */
	h->checksum = 0;
	p_expect_refused(reg, size, "checksum");
	memcpy(reg, img, size);
	h->version++;
	p_expect_refused(reg, size, "version");
	memcpy(reg, img, size);
	h->magic = __builtin_bswap64(h->magic);
	p_expect_refused(reg, size, "byte order");
	memcpy(reg, img, size);
	h->subbuf_size *= 2;
	p_expect_refused(reg, size, "checksum");
	for (i = 0; i < size; i++)
		reg[i] = (u8)random();
	p_expect_refused(reg, size, "bad magic");
	memset(reg, 0, size);
	p_expect_refused(reg, size, "bad magic");
	munmap(map, size + 2 * P_PAGE);
	free(img);

	/* what lrb_channel_create() refuses for a region */
	size = lrb_region_size(&p_global, &attr);
	CHECK(size > 0);
	img = aligned_alloc(P_PAGE, size + P_PAGE);
	CHECK(img != NULL);
	if (!img)
		return;
	attr.region = img + 64;
	attr.region_size = size;
	CHECK_EQ(lrb_channel_create(&p_global, &attr, &chan), -EINVAL);
	attr.region = img;
	attr.region_size = size - 1;
	CHECK_EQ(lrb_channel_create(&p_global, &attr, &chan), -EINVAL);
	attr.region_size = size;
	CHECK_EQ(lrb_channel_create(&p_discard, &attr, &chan), -EINVAL);
	attr.region = NULL;
	CHECK_EQ(lrb_channel_create(&p_global, &attr, &chan), -EINVAL);
	attr.region = img;
	CHECK_EQ(lrb_channel_create(&p_global, &attr, &chan), 0);
	lrb_channel_destroy(chan);
	free(img);
}

/*
 * A file with losses between its packets: a record held reserved while
 * the ring goes round to it (the writers lose records meanwhile), then
 * committed, and more records; left as a crash leaves it. The records
 * lost meanwhile, all between packets kept, in *@lost.
 */
static bool p_lossy(u64 *lost)
{
	struct lrb_buf_counters c;
	struct lrb_chan_attr attr = p_attr();
	struct p_rec r = { .thread = 1, .sum = p_sum(1, 0) };
	struct lrb_chan *chan;
	struct lrb_ctx ctx;
	u64 seq;

	if (lrb_region_file_create(p_path, &p_global, &attr, &chan) ||
	    lrb_reserve(&p_global, chan, &ctx, P_ID, sizeof(r)))
		return false;
	for (seq = 0; seq < 3000; seq++)
		p_write(&p_global, chan, 0, seq);
	lrb_write(&ctx, &r, sizeof(r));
	lrb_commit(&p_global, &ctx);
	for (; seq < 4000; seq++)
		p_write(&p_global, chan, 0, seq);
	lrb_buf_stats(lrb_channel_nth_buf(chan, 0), &c);
	*lost = c.lost_wrap;
	return c.lost_wrap > 0;
}

/*
 * Recover the file left at p_path: print what recovery keeps, and
 * @expect: the records lost between its packets as the writers counted
 * them, or -1 if not known.
 */
static int p_report(long long expect)
{
	struct lrb_recovery *rec;
	const char *why = NULL;
	struct p_order o;
	u64 disc = 0;
	unsigned int b;

	if (lrb_region_file_recover(p_path, &p_dec, &rec, &why)) {
		fprintf(stderr, "persist: no file left at %s\n", p_path);
		return 1;
	}
	for (b = 0; b < rec->nr_bufs; b++)
		if (rec->bufs[b].nr_packets)
			disc += rec->bufs[b].packets[rec->bufs[b].nr_packets - 1]
					.header.events_discarded -
				rec->bufs[b].packets[0].header.events_discarded;
	p_order_init(&o);
	for (b = 0; b < rec->nr_bufs; b++)
		p_walk(rec, b, &o, NULL, 0, false);
	printf("records %llu packets %llu discarded %llu expect %lld skipped %lu\n",
	       (unsigned long long)p_recovered(rec),
	       (unsigned long long)rec->bufs[0].stats.packets,
	       (unsigned long long)disc, expect < 0 ? (long long)disc : expect,
	       o.skipped);
	lrb_region_file_release(rec);
	return 0;
}

/*
 * One kill round into @path, its writers discarding records (skip
 * records), or, @lossy, p_lossy() (@untrusted too, its overwrite loss
 * counter then corrupted), left there: print what recovery keeps
 * (skipped: bytes of skip records in the packets kept).
 */
static int p_leave(const char *path, bool lossy, bool untrusted)
{
	struct lrb_recovery *rec;
	const char *why = NULL;
	struct p_shared *sh;
	u64 lost = 0;

	snprintf(p_path, sizeof(p_path), "%s", path);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED ||
	    !(lossy ? p_lossy(&lost) : p_run_child(&p_global, sh, 20000, true))) {
		fprintf(stderr, "persist: no file left at %s\n", path);
		return 1;
	}
	if (untrusted) {
		if (lrb_region_file_recover(p_path, &p_dec, &rec, &why))
			return 1;
		p_desc_poke(rec, LRB_REGION_LOST_OVERWRITE, 1UL << 40);
		lrb_region_file_release(rec);
	}
	return p_report(lossy ? (long long)lost : -1);
}

/* p_trailing() into @path, left there: print what recovery keeps. */
static int p_leave_trailing(const char *path)
{
	struct lrb_chan *chan;

	snprintf(p_path, sizeof(p_path), "%s", path);
	if (p_trailing(&chan) < 0) {
		fprintf(stderr, "persist: no file left at %s\n", path);
		return 1;
	}
	return p_report(-1);
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? atoi(argv[1]) : 150;
	unsigned int trials = argc > 2 ? atoi(argv[2]) : 3000;
	const char *dir = getenv("TMPDIR") ?: "/tmp";
	struct p_totals tot = { 0 };
	unsigned long refused = 0;
	struct timespec t0, t1;
	int c;

	test_main_begin(600);
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	p_make_metadata();
	if (argc == 3 && !strcmp(argv[1], "--leave"))
		return p_leave(argv[2], false, false);
	if (argc == 3 && !strcmp(argv[1], "--leave-lossy"))
		return p_leave(argv[2], true, false);
	if (argc == 3 && !strcmp(argv[1], "--leave-untrusted"))
		return p_leave(argv[2], true, true);
	if (argc == 3 && !strcmp(argv[1], "--leave-trailing"))
		return p_leave_trailing(argv[2]);
	snprintf(p_path, sizeof(p_path), "%s/lrb-persist-%d", dir, getpid());
	TEST_RUN(test_exact);
	TEST_RUN(test_skips);
	TEST_RUN(test_bad_regions);
	TEST_RUN(test_scribbled);
	TEST_RUN(test_begin);
	TEST_RUN(test_discarded);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	test_current = "test_kill";
	test_kill(rounds, &tot);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("kill: %lu rounds, %llu records recovered, last recovered at most %lld behind the last written, %lu threads all overwritten, %llu records discarded as skips, %lu bytes of skip records passed over, %.1f s\n",
	       tot.rounds, (unsigned long long)tot.records, tot.max_distance,
	       tot.overwritten, (unsigned long long)tot.skips, tot.skipped,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	/* the discarding rounds leave skip records in closed packets */
	if (rounds >= 4)
		CHECK(tot.skipped > 0);
	if (tot.rounds)
		printf("kill: recovery (map, validate, decode every record, unmap) took %lld us per file on average\n",
		       tot.recover_ns / 1000 / (long long)tot.rounds);
	for (c = 0; c < LRB_DROP_NR; c++)
		if (tot.drops[0][c] || tot.drops[2][c])
			printf("kill: dropped, cause %d: %llu packets, %llu records, %llu bytes\n",
			       c, (unsigned long long)tot.drops[0][c],
			       (unsigned long long)tot.drops[1][c],
			       (unsigned long long)tot.drops[2][c]);
	test_current = "test_corrupt";
	test_corrupt(trials, &refused);
	printf("corrupt: %u trials, %lu regions refused\n", trials, refused);
	unlink(p_path);
	return test_main_end("persist");
}
