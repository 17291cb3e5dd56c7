// SPDX-License-Identifier: GPL-2.0
/*
 * lrb packet decoder. Every length is checked against the packet content
 * before it is used, and every field is read with memcpy, so a corrupt or
 * truncated packet yields an error with the offset of the bad bytes, never
 * a read outside the buffer.
 *
 * Writers store fields in their CPU's byte order; the packet magic tells a
 * reader which one, so a trace written on a big-endian machine decodes on
 * a little-endian one and the other way round.
 */
#include <lrb/decode.h>
#include "port.h"

static int lrb_decode_fail(struct lrb_packet_iter *it, unsigned long offset,
			   const char *error)
{
	it->error = error;
	it->error_offset = offset;
	return -EBADMSG;
}

static u32 lrb_get32(const u8 *p, bool swapped)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap32(v) : v;
}

static u64 lrb_get64(const u8 *p, bool swapped)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap64(v) : v;
}

int lrb_packet_header_load(struct lrb_packet_header *h, const void *data)
{
	memcpy(h, data, sizeof(*h));
	if (h->magic == LRB_PACKET_MAGIC)
		return 0;
	if (h->magic != __builtin_bswap32(LRB_PACKET_MAGIC))
		return -EBADMSG;
	h->magic = LRB_PACKET_MAGIC;
	h->stream_id = __builtin_bswap32(h->stream_id);
	h->timestamp_begin = __builtin_bswap64(h->timestamp_begin);
	h->timestamp_end = __builtin_bswap64(h->timestamp_end);
	h->content_size = __builtin_bswap64(h->content_size);
	h->packet_size = __builtin_bswap64(h->packet_size);
	h->packet_seq_num = __builtin_bswap64(h->packet_seq_num);
	h->events_discarded = __builtin_bswap64(h->events_discarded);
	h->cpu_id = __builtin_bswap32(h->cpu_id);
	h->header_size = __builtin_bswap32(h->header_size);
	return 1;
}
EXPORT_SYMBOL_GPL(lrb_packet_header_load);

int lrb_packet_open(struct lrb_packet_iter *it, const struct lrb_decoder *dec,
		    const void *data, unsigned long avail)
{
	const struct lrb_packet_header *ph = &it->header;
	u64 content, packet;
	int order;

	memset(it, 0, sizeof(*it));
	it->dec = dec;
	it->base = data;
	if (!dec->payload_size || (dec->header == LRB_HEADER_COMPACT &&
				   (dec->tsc_bits < 1 || dec->tsc_bits > 31)))
		return -EINVAL;
	if (avail < sizeof(*ph))
		return lrb_decode_fail(it, 0, "packet header truncated");
	order = lrb_packet_header_load(&it->header, data);
	if (order < 0)
		return lrb_decode_fail(it, 0, "bad packet magic");
	it->swapped = order;
	if (ph->header_size != sizeof(*ph))
		return lrb_decode_fail(it,
				       offsetof(struct lrb_packet_header,
						header_size),
				       "unsupported packet header size");
	if (ph->content_size % 8 || ph->packet_size % 8)
		return lrb_decode_fail(it,
				       offsetof(struct lrb_packet_header,
						content_size),
				       "packet sizes are not whole bytes");
	content = ph->content_size / 8;
	packet = ph->packet_size / 8;
	if (content < sizeof(*ph))
		return lrb_decode_fail(it,
				       offsetof(struct lrb_packet_header,
						content_size),
				       "packet content smaller than its header");
	if (content > packet)
		return lrb_decode_fail(it,
				       offsetof(struct lrb_packet_header,
						content_size),
				       "packet content larger than the packet");
	if (packet > avail)
		return lrb_decode_fail(it,
				       offsetof(struct lrb_packet_header,
						packet_size),
				       "packet extends past the end of the data");
	it->content = content;
	it->pos = sizeof(*ph);
	it->last_ts = ph->timestamp_begin;
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_packet_open);

/* Rebuild a clock value from its low @bits bits, as a CTF reader does. */
static u64 lrb_rebuild_ts(u64 last, u64 low, unsigned int bits)
{
	u64 mask = (1ULL << bits) - 1;
	u64 ts = (last & ~mask) | low;

	if (low < (last & mask))
		ts += 1ULL << bits;
	return ts;
}

/* Parse the record header at it->pos into @rec; returns its size or < 0. */
static int lrb_decode_header(struct lrb_packet_iter *it, struct lrb_record *rec)
{
	const struct lrb_decoder *dec = it->dec;
	unsigned long left = it->content - it->pos;
	const u8 *p = it->base + it->pos;
	u32 w = lrb_get32(p, it->swapped);
	u32 ext_id, id_bits = 32 - dec->tsc_bits;

	if (dec->header == LRB_HEADER_COMPACT) {
		ext_id = (1U << id_bits) - 1;
		rec->extended = (w & ext_id) == ext_id;
		if (!rec->extended) {
			rec->id = w & ext_id;
			rec->timestamp = lrb_rebuild_ts(it->last_ts, w >> id_bits,
							dec->tsc_bits);
			return LRB_COMPACT_HEADER_SIZE;
		}
		if (w >> id_bits)
			return lrb_decode_fail(it, it->pos,
					       "extended record header with timestamp bits set");
	} else {
		rec->extended = w == LRB_LARGE_ID_EXTENDED;
		if (!rec->extended) {
			if (left < LRB_LARGE_HEADER_SIZE)
				return lrb_decode_fail(it, it->pos,
						       "record header truncated");
			rec->id = w;
			w = lrb_get32(p + 4, it->swapped);
			rec->timestamp = lrb_rebuild_ts(it->last_ts, w, 32);
			return LRB_LARGE_HEADER_SIZE;
		}
	}
	if (left < LRB_EXTENDED_HEADER_SIZE)
		return lrb_decode_fail(it, it->pos, "record header truncated");
	rec->id = lrb_get32(p + 4, it->swapped);
	rec->timestamp = lrb_get64(p + 8, it->swapped);
	return LRB_EXTENDED_HEADER_SIZE;
}

/* Is the record header word @w a skip record's? */
static bool lrb_is_skip(const struct lrb_decoder *dec, u32 w)
{
	u32 ext_id;

	if (dec->header == LRB_HEADER_LARGE)
		return w == LRB_LARGE_ID_SKIP;
	if (dec->tsc_bits == 31)
		return false;
	ext_id = (1U << (32 - dec->tsc_bits)) - 1;
	return (w & ext_id) == ext_id - 1;
}

/*
 * Bytes of the skip record at it->pos, up to the record it must be
 * followed by; 0 if there is none there, or < 0.
 */
static long lrb_decode_skip(struct lrb_packet_iter *it)
{
	unsigned long left = it->content - it->pos;
	const u8 *p = it->base + it->pos;
	unsigned long units;

	if (!lrb_is_skip(it->dec, lrb_get32(p, it->swapped)))
		return 0;
	if (left < LRB_SKIP_HEADER_SIZE)
		return lrb_decode_fail(it, it->pos, "skip record truncated");
	units = lrb_get32(p + 4, it->swapped);
	left -= LRB_SKIP_HEADER_SIZE;
	if (units > left / 4 || left - units * 4 < LRB_RECORD_ALIGN)
		return lrb_decode_fail(it, it->pos,
				       "skip record not followed by a record in the packet content");
	p += LRB_SKIP_HEADER_SIZE + units * 4;
	if (lrb_is_skip(it->dec, lrb_get32(p, it->swapped)))
		return lrb_decode_fail(it, it->pos,
				       "skip record followed by another skip record");
	return LRB_SKIP_HEADER_SIZE + units * 4;
}

/* Decode the record whose header is at it->pos. */
static int lrb_record_at(struct lrb_packet_iter *it, struct lrb_record *rec)
{
	unsigned long pos = it->pos, header_len, avail;
	const u8 *payload;
	long len;
	int ret;

	ret = lrb_decode_header(it, rec);
	if (ret < 0)
		return ret;
	header_len = ret;
	if (rec->timestamp < it->last_ts)
		return lrb_decode_fail(it, pos, "record timestamp goes backwards");
	payload = it->base + pos + header_len;
	avail = it->content - pos - header_len;
	len = it->dec->payload_size(it->dec, rec->id, payload, avail);
	if (len < 0)
		return lrb_decode_fail(it, pos, "unknown event or bad payload");
	if ((unsigned long)len > avail)
		return lrb_decode_fail(it, pos + header_len,
				       "payload extends past the packet content");
	rec->payload = payload;
	rec->len = len;
	rec->offset = pos;
	it->pos = pos + header_len + len;
	it->last_ts = rec->timestamp;
	return 1;
}

int lrb_packet_next(struct lrb_packet_iter *it, struct lrb_record *rec)
{
	unsigned long pos;
	long skip;
	int ret;

	if (it->pos == it->content)
		return 0;
	/* the content may also end with the last record's padding */
	pos = (it->pos + LRB_RECORD_ALIGN - 1) & ~(LRB_RECORD_ALIGN - 1UL);
	if (pos == it->content)
		return 0;
	if (pos > it->content || it->content - pos < LRB_RECORD_ALIGN)
		return lrb_decode_fail(it, it->pos, "record header truncated");
	it->pos = pos;
	skip = lrb_decode_skip(it);
	if (skip < 0)
		return skip;
	it->pos = pos + skip;
	ret = lrb_record_at(it, rec);
	if (ret < 0) {
		/* a bad record stays with the skip before it */
		it->pos = pos;
		return ret;
	}
	it->skipped += skip;
	return ret;
}
EXPORT_SYMBOL_GPL(lrb_packet_next);
