// SPDX-License-Identifier: GPL-2.0
/*
 * lrb persistent channels: the layout of a channel in a caller's region
 * (include/uapi/lrb/lrb_region.h), and the recovery of a previous run's
 * region after a crash (Documentation/design.rst, "Persistent channels").
 *
 * Recovery reads the region as untrusted bytes: every offset and size is
 * checked against the region before it is used, every packet and record
 * header is validated, and what cannot be trusted is dropped and counted.
 * It never writes the region.
 */
#include <lrb/lrb.h>
#include <lrb/region.h>
#include "backend.h"
#include "port.h"

/* Buffers a region may hold: bounds what recovery allocates. */
#define LRB_REGION_MAX_BUFS 4096U
#define LRB_REGION_ALIGN 64UL

static const u64 lrb_fnv_basis = 0xcbf29ce484222325ULL;

static u64 lrb_fnv(u64 h, const void *data, unsigned long len)
{
	const u8 *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static u64 lrb_region_checksum(const struct lrb_region_header *h,
			       const void *base)
{
	u64 sum = lrb_fnv(lrb_fnv_basis, h,
			  offsetof(struct lrb_region_header, checksum));

	return lrb_fnv(sum, (const char *)base + h->metadata_offset,
		       h->metadata_size);
}

static u64 lrb_round_up(u64 x, u64 align)
{
	return (x + align - 1) & ~(align - 1);
}

static unsigned int lrb_log2(u64 x)
{
	unsigned int order = 0;

	while ((1ULL << order) < x)
		order++;
	return order;
}

static bool lrb_pow2(u64 x)
{
	return x && !(x & (x - 1));
}

/*
 * Fill the layout fields of @h from its geometry fields and the metadata
 * size. Return: the bytes the layout spans. The geometry must be valid:
 * then nothing overflows 64 bits.
 */
static u64 lrb_region_place(struct lrb_region_header *h)
{
	u64 words = LRB_REGION_DESC_ARRAYS +
		    (u64)LRB_REGION_NR_DESC_ARRAYS * h->num_subbuf;

	h->header_size = sizeof(*h);
	h->word_size = sizeof(unsigned long);
	h->page_size = PAGE_SIZE;
	h->nr_slots = h->num_subbuf + 1;
	h->metadata_offset = lrb_round_up(sizeof(*h), LRB_REGION_ALIGN);
	h->desc_offset = lrb_round_up(h->metadata_offset + h->metadata_size,
				      LRB_REGION_ALIGN);
	h->desc_size = lrb_round_up(words * sizeof(unsigned long),
				    LRB_REGION_ALIGN);
	h->data_offset = lrb_round_up(h->desc_offset +
					      (u64)h->nr_bufs * h->desc_size,
				      PAGE_SIZE);
	h->buf_data_size = (u64)h->nr_slots * h->subbuf_size;
	return h->data_offset + (u64)h->nr_bufs * h->buf_data_size;
}

/* The geometry of @h is one lrb_channel_create() accepts, for a region. */
static const char *lrb_region_check_geometry(const struct lrb_region_header *h)
{
	if (!lrb_pow2(h->subbuf_size) || h->subbuf_size < LRB_MIN_SUBBUF_SIZE ||
	    h->subbuf_size > LRB_MAX_SUBBUF_SIZE)
		return "bad sub-buffer size";
	if (!lrb_pow2(h->num_subbuf) || h->num_subbuf < 2 ||
	    h->num_subbuf > LRB_MAX_NUM_SUBBUF)
		return "bad sub-buffer count";
	if (lrb_log2(h->subbuf_size) + lrb_log2(h->num_subbuf) >
	    sizeof(long) * 8 - 8)
		return "buffer too large for this machine's positions";
	if (h->mode != LRB_ABI_MODE_OVERWRITE)
		return "not an overwrite channel";
	if (h->alloc > 1 || !h->nr_bufs || h->nr_bufs > LRB_REGION_MAX_BUFS ||
	    (h->alloc == 1 && h->nr_bufs != 1))
		return "bad buffer count";
	if (h->header == LRB_ABI_HEADER_COMPACT) {
		if (h->tsc_bits < 1 || h->tsc_bits > 31)
			return "bad compact header timestamp bits";
	} else if (h->header != LRB_ABI_HEADER_LARGE) {
		return "bad record header layout";
	}
	return NULL;
}

static void lrb_region_geometry(struct lrb_region_header *h,
				const struct lrb_config *cfg,
				const struct lrb_chan_attr *attr,
				unsigned int nr_bufs)
{
	memset(h, 0, sizeof(*h));
	h->magic = LRB_REGION_MAGIC;
	h->version = LRB_REGION_VERSION;
	h->run_id = attr->run_id;
	h->subbuf_size = attr->subbuf_size;
	h->num_subbuf = attr->num_subbuf;
	h->nr_bufs = nr_bufs;
	h->mode = cfg->mode == LRB_MODE_OVERWRITE ? LRB_ABI_MODE_OVERWRITE :
						    LRB_ABI_MODE_DISCARD;
	h->alloc = cfg->alloc == LRB_ALLOC_GLOBAL;
	h->header = cfg->header == LRB_HEADER_LARGE ? LRB_ABI_HEADER_LARGE :
						      LRB_ABI_HEADER_COMPACT;
	h->tsc_bits = cfg->tsc_bits;
	h->stream_id = attr->stream_id;
	h->metadata_size = attr->metadata ? strlen(attr->metadata) : 0;
}

/**
 * lrb_region_size() - bytes a persistent channel needs
 * @cfg: the client's configuration (persistent, overwrite)
 * @attr: the channel's attributes (region and region_size are ignored)
 *
 * Return: the bytes to give as lrb_chan_attr.region_size, or 0 if the
 * configuration or geometry is not one a region can hold.
 */
u64 lrb_region_size(const struct lrb_config *cfg,
		    const struct lrb_chan_attr *attr)
{
	struct lrb_region_header h;
	unsigned int nr_bufs = cfg->alloc == LRB_ALLOC_GLOBAL ? 1 :
								attr->nr_cpus;

	lrb_region_geometry(&h, cfg, attr, nr_bufs);
	if (!cfg->persistent || lrb_region_check_geometry(&h))
		return 0;
	return lrb_region_place(&h);
}
EXPORT_SYMBOL_GPL(lrb_region_size);

/**
 * lrb_region_format() - lay a new channel out in its region
 * @chan: the channel, its geometry set, no buffer allocated yet
 * @attr: its attributes, with the region
 *
 * Zeroes the region and writes its header; the checksum is stored last,
 * so a header written halfway never validates.
 *
 * Return: 0, or -EINVAL if the region is not page aligned, too small, or
 * the channel is not one a region can hold.
 */
int lrb_region_format(struct lrb_chan *chan, const struct lrb_chan_attr *attr)
{
	struct lrb_region_header *h = attr->region;
	struct lrb_region_header tmp;
	u64 need;

	if (((unsigned long)attr->region & (PAGE_SIZE - 1)) ||
	    !chan->cfg->persistent || chan->nr_bufs > LRB_REGION_MAX_BUFS)
		return -EINVAL;
	lrb_region_geometry(&tmp, chan->cfg, attr, chan->nr_bufs);
	if (lrb_region_check_geometry(&tmp))
		return -EINVAL;
	need = lrb_region_place(&tmp);
	if (need > attr->region_size)
		return -EINVAL;
	tmp.region_size = need;
	memset(attr->region, 0, need);
	memcpy(h, &tmp, sizeof(tmp));
	memcpy((char *)attr->region + tmp.metadata_offset, attr->metadata ?: "",
	       tmp.metadata_size);
	/* everything it covers before the checksum that vouches for it */
	smp_wmb();
	WRITE_ONCE(h->checksum, lrb_region_checksum(&tmp, attr->region));
	chan->region = attr->region;
	return 0;
}

/**
 * lrb_region_buf_attach() - point a buffer at its state in the region
 * @buf: a buffer of a channel in a region, its pages array allocated
 *
 * Its commit counts, slot table, commit marks, closing counts and loss
 * counters are the words of its descriptor, its pages the slots of the
 * region.
 */
void lrb_region_buf_attach(struct lrb_buf *buf)
{
	const struct lrb_chan *chan = buf->chan;
	const struct lrb_region_header *h = chan->region;
	unsigned long *desc = (unsigned long *)((char *)chan->region +
						h->desc_offset +
						buf->cpu * h->desc_size);
	char *data = (char *)chan->region + h->data_offset +
		     buf->cpu * h->buf_data_size;
	unsigned long i, nr_pages = h->buf_data_size >> LRB_PAGE_SHIFT;

	buf->region_lost = (union __lrb_v *)desc;
	buf->commit = (union __lrb_v *)(desc + LRB_REGION_DESC_ARRAYS);
	buf->wsb = (struct __lrb_atomic *)(desc + LRB_REGION_DESC_ARRAYS +
					 chan->num_subbuf);
	buf->mark = (union __lrb_v *)(desc + LRB_REGION_DESC_ARRAYS +
				      2 * chan->num_subbuf);
	buf->region_closing = desc + LRB_REGION_DESC_ARRAYS +
			      3 * chan->num_subbuf;
	for (i = 0; i < nr_pages; i++)
		buf->pages[i] = data + i * PAGE_SIZE;
}

/* Recovery. */

/* Geometry of the region being recovered, as a channel's. */
struct lrb_rgeo {
	const u8 *base;
	const struct lrb_region_header *h;
	unsigned int order;
	unsigned int buf_order;
	unsigned long n;
};

/**
 * lrb_region_check() - validate a region's header, not its contents
 * @base: the region, mapped; it is only read
 * @size: bytes mapped at @base
 * @h: receives a copy of the header
 *
 * For a reader that needs the metadata text (at h->metadata_offset, of
 * h->metadata_size bytes, both checked) to build the decoder it gives
 * lrb_region_recover().
 *
 * Return: NULL if the header is valid, else why not.
 */
const char *lrb_region_check(const void *base, unsigned long size,
			     struct lrb_region_header *h)
{
	struct lrb_region_header want;
	const char *why;

	if (size < sizeof(*h))
		return "region smaller than its header";
	memcpy(h, base, sizeof(*h));
	if (h->magic == LRB_REGION_RELEASED)
		return "its previous run was released";
	if (h->magic != LRB_REGION_MAGIC)
		return __builtin_bswap64(h->magic) == LRB_REGION_MAGIC ?
			       "region written in the other byte order" :
			       "no lrb region (bad magic)";
	if (h->version != LRB_REGION_VERSION)
		return "another lrb region layout version";
	if (h->header_size != sizeof(*h) || h->word_size != sizeof(long) ||
	    h->page_size != PAGE_SIZE)
		return "region written by another build (header, word or page size)";
	if (h->region_size > size || h->metadata_offset > h->region_size ||
	    h->metadata_size > h->region_size - h->metadata_offset)
		return "region header out of bounds";
	if (lrb_region_checksum(h, base) != h->checksum)
		return "region header checksum mismatch (written halfway or corrupt)";
	why = lrb_region_check_geometry(h);
	if (why)
		return why;
	/* the layout must be exactly the one this build makes */
	want = *h;
	if (lrb_region_place(&want) != h->region_size ||
	    memcmp(&want, h, sizeof(want)))
		return "region layout does not match its geometry";
	return NULL;
}
EXPORT_SYMBOL_GPL(lrb_region_check);

/**
 * lrb_region_release() - let a region's previous run go
 * @base: the region, holding a layout lrb_region_check() accepts
 *
 * Marks the region released (%LRB_REGION_RELEASED): recovery finds
 * nothing in it any more, and the next channel laid out in it starts
 * afresh. Called once the previous run was read, or is not wanted.
 */
void lrb_region_release(void *base)
{
	struct lrb_region_header *h = base;

	WRITE_ONCE(h->magic, LRB_REGION_RELEASED);
	/* a store that reaches memory before the next crash does */
	smp_wmb();
}
EXPORT_SYMBOL_GPL(lrb_region_release);

static unsigned long lrb_rword(const u8 *desc, unsigned long i)
{
	unsigned long w;

	memcpy(&w, desc + i * sizeof(w), sizeof(w));
	return w;
}

static void lrb_drop(struct lrb_recovery_stats *st, enum lrb_drop_cause cause,
		     u64 packets, u64 records, u64 bytes)
{
	st->drop_packets[cause] += packets;
	st->drop_records[cause] += records;
	st->drop_bytes[cause] += bytes;
}

/*
 * The bytes of an open packet to keep, @done bytes of its lap committed
 * and its commit mark @d bytes in (its slot table entry @w): 0 if none.
 */
static unsigned long lrb_open_prefix(struct lrb_recovery_stats *st,
				     unsigned long w, unsigned long done,
				     unsigned long d, unsigned long sb,
				     bool *cut)
{
	/* delivered, yet incomplete */
	if (w & __LRB_WSB_NOREF || done > sb) {
		lrb_drop(st, LRB_DROP_COMMIT, 1, 0, sb);
		return 0;
	}
	/* only the prefix up to the commit mark has no hole */
	if (d < LRB_PACKET_HEADER_SIZE || d > done) {
		lrb_drop(st, LRB_DROP_UNCOMMITTED, 1, 0, done);
		return 0;
	}
	if (done > d) {
		lrb_drop(st, LRB_DROP_UNCOMMITTED, 0, 0, done - d);
		*cut = true;
	}
	return d;
}

/*
 * Validate the packet of sub-buffer @idx of buffer @b: fill @pk and return
 * true if (some of) it is kept.
 */
static bool lrb_recover_packet(const struct lrb_rgeo *g, unsigned int b,
			       unsigned long idx, const u8 *desc, u8 *used,
			       const struct lrb_decoder *dec,
			       struct lrb_rec_buf *rb, struct lrb_rec_packet *pk)
{
	const struct lrb_region_header *h = g->h;
	struct lrb_recovery_stats *st = &rb->stats;
	unsigned long sb = h->subbuf_size;
	unsigned long w = lrb_rword(desc, LRB_REGION_DESC_ARRAYS + g->n + idx);
	unsigned long cc = lrb_rword(desc, LRB_REGION_DESC_ARRAYS + idx);
	unsigned long mark = lrb_rword(desc,
				       LRB_REGION_DESC_ARRAYS + 2 * g->n + idx);
	unsigned long slot = w & __LRB_SLOT_MASK, tag = w & ~(__LRB_SLOT_MASK | __LRB_WSB_NOREF);
	unsigned long mask = __LRB_POS_MASK >> (g->buf_order - g->order);
	unsigned long p, lap, content, done, end;
	struct lrb_packet_header *ph = &pk->header;
	struct lrb_packet_iter it;
	struct lrb_record rec;
	const u8 *data;
	u64 last_ts;
	int ret;

	if (slot >= h->nr_slots || used[slot]) {
		lrb_drop(st, LRB_DROP_SLOT, 1, 0, sb);
		return false;
	}
	used[slot] = 1;
	/* nothing committed in the lap the slot table names */
	if (!(w & __LRB_WSB_NOREF) &&
	    !((cc - ((tag >> __LRB_WSB_TAG_SHIFT) << g->order)) & mask)) {
		/* never written; or claimed, its old packet being overwritten */
		if (tag)
			lrb_drop(st, LRB_DROP_OPENING, 1, 0, sb);
		return false;
	}
	pk->offset = h->data_offset + b * h->buf_data_size + slot * sb;
	data = g->base + pk->offset;
	if (lrb_packet_header_load(ph, data) != 0 ||
	    ph->header_size != LRB_PACKET_HEADER_SIZE ||
	    ph->stream_id != h->stream_id || ph->cpu_id != b) {
		lrb_drop(st, LRB_DROP_HEADER, 1, 0, sb);
		return false;
	}
	p = (unsigned long)(ph->packet_seq_num << g->order) & __LRB_POS_MASK;
	lap = p >> g->buf_order;
	if (((p >> g->order) & (g->n - 1)) != idx) {
		lrb_drop(st, LRB_DROP_HEADER, 1, 0, sb);
		return false;
	}
	if (lap << __LRB_WSB_TAG_SHIFT != tag) {
		if (w & __LRB_WSB_NOREF)
			lrb_drop(st, LRB_DROP_STALE, 1, 0, sb);
		else if ((lap + 1) << __LRB_WSB_TAG_SHIFT == tag)
			lrb_drop(st, LRB_DROP_OPENING, 1, 0, sb);
		else
			lrb_drop(st, LRB_DROP_HEADER, 1, 0, sb);
		return false;
	}
	done = (cc - (lap << g->order)) & mask;
	pk->cut = false;
	pk->open = done != sb;
	if (!pk->open) {
		content = ph->content_size / 8;
		if (ph->content_size % 8 || content < LRB_PACKET_HEADER_SIZE ||
		    content > sb) {
			lrb_drop(st, LRB_DROP_HEADER, 1, 0, sb);
			return false;
		}
	} else {
		/* with skips, one byte of the lap's first is not counted yet */
		content = lrb_open_prefix(st, w, (done + 1) & ~3UL,
					  __lrb_pos_dist(p, mark), sb, &pk->cut);
		if (!content)
			return false;
	}

	/* every record, as a trace reader will decode it */
	memset(&it, 0, sizeof(it));
	it.dec = dec;
	it.base = data;
	it.content = content;
	it.pos = LRB_PACKET_HEADER_SIZE;
	it.last_ts = ph->timestamp_begin;
	it.header = *ph;
	pk->records = 0;
	pk->dropped_records = 0;
	last_ts = ph->timestamp_begin;
	end = it.pos;
	while ((ret = lrb_packet_next(&it, &rec)) > 0) {
		pk->records++;
		last_ts = rec.timestamp;
		end = it.pos;
	}
	if (ret < 0) {
		lrb_drop(st, LRB_DROP_RECORD, 0, 1, content - end);
		pk->cut = true;
		pk->dropped_records = 1;
	} else if (end != content && !pk->open) {
		/*
		 * Bytes too few for a record after the last one: a closed
		 * packet's content ends with its last record, so its size
		 * is wrong (an open one's commit mark is aligned: padding).
		 */
		lrb_drop(st, LRB_DROP_HEADER, 0, 0, content - end);
		pk->cut = true;
	}
	/* a CTF reader takes any byte after the last record for one */
	content = end;
	pk->last_ts = last_ts;
	if (pk->open) {
		ph->timestamp_end = last_ts;
	} else if (ph->timestamp_end < last_ts) {
		lrb_drop(st, LRB_DROP_ORDER, 1, pk->records, content);
		return false;
	}
	/* the overwrite part of its count, from the writer's same sample */
	pk->overwritten = pk->open ? 0 :
			  lrb_rword(desc, LRB_REGION_DESC_ARRAYS + 3 * g->n + idx);
	pk->content = content;
	pk->size = lrb_round_up(content, PAGE_SIZE);
	if (pk->size > sb)
		pk->size = sb;
	ph->content_size = (u64)content * 8;
	ph->packet_size = (u64)pk->size * 8;
	return true;
}

/*
 * Drop, among the packets @tmp[0..@n) in sequence order (an empty entry
 * is a hole), those whose times do not fit: a packet begins no earlier
 * than the last record of the packet kept before it. One corrupted time
 * must not void the good packets around it, so on a conflict between the
 * last packet kept and the next one, a witness decides which is out of
 * line: the packet after the next (else the one kept before the last). If
 * it too begins before the last packet kept ends, while the next one fits
 * the packet kept before that, the last packet kept is wrong (a
 * timestamp_begin too large, which moves all its records later) and goes;
 * otherwise the next one goes.
 */
static void lrb_recover_fit(struct lrb_recovery_stats *st,
			    struct lrb_rec_packet *tmp, unsigned long n)
{
	struct lrb_rec_packet *pk, *prev = NULL, *before = NULL, *next;
	unsigned long i, j;
	bool bad_prev;

	for (i = 0; i < n; i++) {
		pk = &tmp[i];
		if (!pk->content)
			continue;
		if (prev && pk->header.timestamp_begin < prev->last_ts) {
			for (j = i + 1, next = NULL; j < n && !next; j++)
				if (tmp[j].content)
					next = &tmp[j];
			bad_prev = (!before || pk->header.timestamp_begin >=
						       before->last_ts) &&
				   (next ? next->header.timestamp_begin <
						   prev->last_ts :
					   !!before);
			if (!bad_prev) {
				lrb_drop(st, LRB_DROP_ORDER, 1, pk->records,
					 pk->content);
				pk->content = 0;
				continue;
			}
			lrb_drop(st, LRB_DROP_ORDER, 1, prev->records,
				 prev->content);
			prev->content = 0;
			prev = before;
			before = NULL;
		}
		before = prev;
		prev = pk;
	}
}

/*
 * Split the counts of the closed packets among @tmp[0..@n), in sequence
 * order, into records of overwritten packets (pk->overwritten) and the
 * others: both only grow, so a part above a later closed packet's is
 * corrupt and taken as that one's (a count above the whole, as the whole).
 * Return: the largest split, in *@ow and *@other.
 */
static void lrb_recover_split(struct lrb_rec_packet *tmp, unsigned long n,
			      u64 *ow, u64 *other)
{
	u64 min_ow = ~0ULL, min_other = ~0ULL, d;
	struct lrb_rec_packet *pk;
	unsigned long i;
	bool newest = true;

	*ow = 0;
	*other = 0;
	for (i = n; i-- > 0;) {
		pk = &tmp[i];
		if (!pk->content || pk->open)
			continue;
		d = pk->header.events_discarded;
		if (pk->overwritten > d)
			pk->overwritten = d;
		if (pk->overwritten > min_ow)
			pk->overwritten = min_ow;
		d -= pk->overwritten;
		if (d > min_other)
			d = min_other;
		pk->header.events_discarded = pk->overwritten + d;
		if (newest) {
			*ow = pk->overwritten;
			*other = d;
			newest = false;
		}
		min_ow = pk->overwritten;
		min_other = d;
	}
}

#define LRB_LOST_BIT(i) (1U << LRB_REGION_LOST_##i)

/*
 * The writers' final loss counts, as the descriptor @desc holds them,
 * checked against what the packets kept prove: an overwrite region
 * refuses no record for a full ring; each count is at least what the
 * newest closed packet counted (@ow records of overwritten packets,
 * @other the rest: the region's counters are incremented first); and no
 * more records were overwritten than the packets before the newest one
 * kept (@newest) could hold. A counter that fails is reported untrusted,
 * and the packets' count used instead. Return: the final counts, in *@ow
 * and *@other.
 */
static void lrb_recover_lost(const struct lrb_rgeo *g, const u8 *desc,
			     struct lrb_recovery_stats *st, u64 newest,
			     u64 *ow, u64 *other)
{
	const u32 others = LRB_LOST_BIT(WRAP) | LRB_LOST_BIT(BIG) |
			   LRB_LOST_BIT(NEST);
	u64 max_rec = (g->h->subbuf_size - LRB_PACKET_HEADER_SIZE) /
		      LRB_RECORD_ALIGN;
	u64 sum, limit;

	st->lost_full = lrb_rword(desc, LRB_REGION_LOST_FULL);
	st->lost_wrap = lrb_rword(desc, LRB_REGION_LOST_WRAP);
	st->lost_big = lrb_rword(desc, LRB_REGION_LOST_BIG);
	st->lost_nest = lrb_rword(desc, LRB_REGION_LOST_NEST);
	st->lost_overwrite = lrb_rword(desc, LRB_REGION_LOST_OVERWRITE);
	st->untrusted = 0;
	if (st->lost_full)
		st->untrusted |= LRB_LOST_BIT(FULL);
	sum = st->lost_wrap + st->lost_big;
	if (sum < st->lost_wrap || sum + st->lost_nest < sum ||
	    sum + st->lost_nest < *other)
		st->untrusted |= others;
	else
		*other = sum + st->lost_nest;
	/*
	 * Not a division (no 64-bit divide on 32-bit kernels): a product that
	 * wraps means a sequence number no real run reaches.
	 */
	if (st->lost_overwrite < *ow || newest == ~0ULL ||
	    __builtin_mul_overflow(newest + 1, max_rec, &limit) ||
	    st->lost_overwrite > limit)
		st->untrusted |= LRB_LOST_BIT(OVERWRITE);
	else
		*ow = st->lost_overwrite;
}

/*
 * Put the packets of @rb in sequence order, drop those more than a ring
 * behind the newest or whose times do not fit (lrb_recover_fit()), end
 * each packet no later than the next begins (the newest at its last
 * record: a closed packet's timestamp_end is not otherwise checked), and
 * give each its cumulative discarded count (lrb_recover_split(),
 * lrb_recover_lost()): every record of an overwritten packet is older
 * than the oldest packet kept, so all of them (the final count) come
 * before it; the writers' other losses where the packets' counts put
 * them, up to the final count, which the newest packet carries if open;
 * plus the records recovery dropped up to its end.
 */
static void lrb_recover_order(const struct lrb_rgeo *g, struct lrb_rec_buf *rb,
			      struct lrb_rec_packet *tmp, const u8 *desc)
{
	struct lrb_recovery_stats *st = &rb->stats;
	u64 newest = 0, disc = 0, dropped = 0, age, ow, other, cand;
	struct lrb_rec_packet *pk;
	unsigned int i, n = 0, last = 0;

	for (i = 0; i < rb->nr_packets; i++)
		if (rb->packets[i].header.packet_seq_num > newest)
			newest = rb->packets[i].header.packet_seq_num;
	/* a kept packet has content: an empty entry is a hole */
	memset(tmp, 0, g->n * sizeof(*tmp));
	for (i = 0; i < rb->nr_packets; i++) {
		pk = &rb->packets[i];
		age = newest - pk->header.packet_seq_num;
		if (age >= g->n) {
			lrb_drop(st, LRB_DROP_HEADER, 1, pk->records,
				 pk->content);
			continue;
		}
		tmp[g->n - 1 - age] = *pk;
	}
	lrb_recover_fit(st, tmp, g->n);
	for (i = 0; i < g->n; i++)
		if (tmp[i].content)
			last = i;
	lrb_recover_split(tmp, g->n, &ow, &other);
	lrb_recover_lost(g, desc, st, newest, &ow, &other);
	for (i = 0; i < g->n; i++) {
		pk = &tmp[i];
		if (!pk->content)
			continue;
		/* a packet ends no later than the next one begins */
		if (n && rb->packets[n - 1].header.timestamp_end >
				 pk->header.timestamp_begin)
			rb->packets[n - 1].header.timestamp_end =
				pk->header.timestamp_begin;
		/*
		 * An open packet has no count of its own: the newest one
		 * ends with the writers' final count, an older one (its
		 * writer stopped, others went on) with its successor's,
		 * set below: the records lost while it could not open are
		 * counted by no packet before.
		 */
		cand = 0;
		if (!pk->open)
			cand = ow + pk->header.events_discarded -
			       pk->overwritten;
		else if (i == last)
			cand = ow + other;
		if (cand > disc)
			disc = cand;
		dropped += pk->dropped_records;
		pk->header.events_discarded = disc + dropped;
		st->packets++;
		st->records += pk->records;
		st->bytes += pk->content;
		rb->packets[n++] = *pk;
	}
	rb->nr_packets = n;
	/* the newest: nothing after it vouches for a later end */
	if (n)
		rb->packets[n - 1].header.timestamp_end =
			rb->packets[n - 1].last_ts;
	for (i = n; i > 1; i--)
		if (rb->packets[i - 2].open)
			rb->packets[i - 2].header.events_discarded =
				rb->packets[i - 1].header.events_discarded;
}

static int lrb_recover_buf(const struct lrb_rgeo *g, unsigned int b,
			   const struct lrb_decoder *dec,
			   struct lrb_rec_buf *rb, u8 *used,
			   struct lrb_rec_packet *tmp)
{
	const struct lrb_region_header *h = g->h;
	const u8 *desc = g->base + h->desc_offset + b * h->desc_size;
	unsigned long idx;

	rb->packets = __lrb_port_zalloc(g->n * sizeof(*rb->packets), -1);
	if (!rb->packets)
		return -ENOMEM;
	memset(used, 0, h->nr_slots);
	for (idx = 0; idx < g->n; idx++)
		if (lrb_recover_packet(g, b, idx, desc, used, dec, rb,
				       &rb->packets[rb->nr_packets]))
			rb->nr_packets++;
	lrb_recover_order(g, rb, tmp, desc);
	return 0;
}

/**
 * lrb_recovery_free() - free a recovery
 * @rec: from lrb_region_recover(), or NULL
 */
void lrb_recovery_free(struct lrb_recovery *rec)
{
	unsigned int b;

	if (!rec)
		return;
	if (rec->bufs)
		for (b = 0; b < rec->nr_bufs; b++)
			__lrb_port_free(rec->bufs[b].packets);
	__lrb_port_free(rec->bufs);
	__lrb_port_free(rec);
}
EXPORT_SYMBOL_GPL(lrb_recovery_free);

/**
 * lrb_region_recover() - validate a previous run's region, keep its data
 * @base: the region, mapped; it is only read
 * @size: bytes mapped at @base: nothing past them is read
 * @dec: decoder of the channel's records (its header and tsc_bits are
 *	taken from the region; its payload_size validates each payload)
 * @recp: receives the recovery, to free with lrb_recovery_free()
 * @why: receives, on -ENODATA, why the region holds nothing to recover
 *
 * Return: 0 with the packets kept in (*@recp)->bufs[], what was dropped
 * counted there by cause; -ENODATA if the region holds no valid layout
 * (first use, another layout version or geometry, a header written
 * halfway, random bytes); -ENOMEM.
 */
int lrb_region_recover(const void *base, unsigned long size,
		       const struct lrb_decoder *dec,
		       struct lrb_recovery **recp, const char **why)
{
	struct lrb_rec_packet *tmp = NULL;
	struct lrb_recovery *rec;
	struct lrb_rgeo g;
	u8 *used = NULL;
	unsigned int b;
	int ret = -ENOMEM;

	*recp = NULL;
	rec = __lrb_port_zalloc(sizeof(*rec), -1);
	if (!rec)
		return -ENOMEM;
	*why = lrb_region_check(base, size, &rec->header);
	if (*why) {
		__lrb_port_free(rec);
		return -ENODATA;
	}
	rec->base = base;
	rec->metadata = (const char *)base + rec->header.metadata_offset;
	rec->metadata_size = rec->header.metadata_size;
	rec->nr_bufs = rec->header.nr_bufs;
	rec->dec = *dec;
	rec->dec.header = rec->header.header == LRB_ABI_HEADER_LARGE ?
				  LRB_HEADER_LARGE :
				  LRB_HEADER_COMPACT;
	rec->dec.tsc_bits = rec->header.tsc_bits;
	g.base = base;
	g.h = &rec->header;
	g.order = lrb_log2(rec->header.subbuf_size);
	g.buf_order = g.order + lrb_log2(rec->header.num_subbuf);
	g.n = rec->header.num_subbuf;
	rec->bufs = __lrb_port_zalloc(rec->nr_bufs * sizeof(*rec->bufs), -1);
	used = __lrb_port_zalloc(rec->header.nr_slots, -1);
	tmp = __lrb_port_zalloc(g.n * sizeof(*tmp), -1);
	if (!rec->bufs || !used || !tmp)
		goto out;
	for (b = 0; b < rec->nr_bufs; b++) {
		ret = lrb_recover_buf(&g, b, &rec->dec, &rec->bufs[b], used,
				      tmp);
		if (ret)
			goto out;
	}
	ret = 0;
	*recp = rec;
out:
	__lrb_port_free(tmp);
	__lrb_port_free(used);
	if (ret)
		lrb_recovery_free(rec);
	return ret;
}
EXPORT_SYMBOL_GPL(lrb_region_recover);

/**
 * lrb_recovery_copy() - copy out a recovered packet, as a trace holds it
 * @rec: the recovery
 * @b: buffer index
 * @i: packet index in rec->bufs[@b].packets
 * @dst: destination
 * @len: bytes at @dst: at least the packet's size
 *
 * The packet header is the recovered one (sizes, end time and discarded
 * count as kept), then the records, then zeroes up to the packet size.
 *
 * Return: the bytes written (the packet size), or -EINVAL.
 */
long lrb_recovery_copy(const struct lrb_recovery *rec, unsigned int b,
		       unsigned int i, void *dst, unsigned long len)
{
	const struct lrb_rec_packet *pk;

	if (b >= rec->nr_bufs || i >= rec->bufs[b].nr_packets)
		return -EINVAL;
	pk = &rec->bufs[b].packets[i];
	if (len < pk->size)
		return -EINVAL;
	memcpy(dst, &pk->header, sizeof(pk->header));
	memcpy((char *)dst + sizeof(pk->header),
	       (const char *)rec->base + pk->offset + sizeof(pk->header),
	       pk->content - sizeof(pk->header));
	memset((char *)dst + pk->content, 0, pk->size - pk->content);
	return pk->size;
}
EXPORT_SYMBOL_GPL(lrb_recovery_copy);

static const char *const lrb_drop_names[LRB_DROP_NR] = {
	[LRB_DROP_SLOT] = "slot",
	[LRB_DROP_HEADER] = "header",
	[LRB_DROP_STALE] = "stale",
	[LRB_DROP_OPENING] = "opening",
	[LRB_DROP_COMMIT] = "commit",
	[LRB_DROP_UNCOMMITTED] = "uncommitted",
	[LRB_DROP_RECORD] = "record",
	[LRB_DROP_ORDER] = "order",
};

/**
 * lrb_drop_cause_name() - the name of a cause of recovery drops
 * @cause: the cause
 *
 * The word stats files and tools print for @cause ("slot", "header", ...).
 *
 * Context: any.
 * Return: the name, or "unknown" for a value out of range.
 */
const char *lrb_drop_cause_name(enum lrb_drop_cause cause)
{
	return (unsigned int)cause < LRB_DROP_NR ? lrb_drop_names[cause] :
						   "unknown";
}
EXPORT_SYMBOL_GPL(lrb_drop_cause_name);

static const char *const lrb_lost_names[LRB_REGION_NR_LOST] = {
	[LRB_REGION_LOST_FULL] = "full",
	[LRB_REGION_LOST_WRAP] = "wrap",
	[LRB_REGION_LOST_BIG] = "big",
	[LRB_REGION_LOST_NEST] = "nest",
	[LRB_REGION_LOST_OVERWRITE] = "overwrite",
};

/**
 * lrb_region_lost_name() - the name of a loss counter of a region
 * @i: its index, %LRB_REGION_LOST_FULL to %LRB_REGION_LOST_OVERWRITE (a bit
 *	of lrb_recovery_stats.untrusted)
 *
 * The word stats files and tools print for it ("full", "wrap", ...).
 *
 * Context: any.
 * Return: the name, or "unknown" for a value out of range.
 */
const char *lrb_region_lost_name(unsigned int i)
{
	return i < LRB_REGION_NR_LOST ? lrb_lost_names[i] : "unknown";
}
EXPORT_SYMBOL_GPL(lrb_region_lost_name);
