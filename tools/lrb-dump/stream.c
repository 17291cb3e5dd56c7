// SPDX-License-Identifier: GPL-2.0
/*
 * The stream cursor: the packets of one stream file, back to back, each
 * validated before its records are decoded (magic, stream id, sizes,
 * header size, sequence numbers, timestamps, discarded count), then its
 * records through lib/decode.c with the payload sizes the metadata gives.
 * Discarded records and lost packets come out as notices where they
 * happen, as babeltrace2 reports them.
 */
#include "dump.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#define HDR_OFF(field) offsetof(struct lrb_packet_header, field)

static int stream_fail(struct dump_stream *s, unsigned long long offset,
		       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int stream_fail(struct dump_stream *s, unsigned long long offset,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->err_offset = offset;
	return -1;
}

static long payload_size(const struct lrb_decoder *dec, u32 id,
			 const u8 *payload, unsigned long avail)
{
	struct dump_stream *s = dec->priv;
	const struct dump_event *ev = dump_meta_event(s->meta, s->sc, id);
	unsigned long off = payload - s->it.base;
	char err[160];
	long len;

	if (!ev) {
		snprintf(s->cb_err, sizeof(s->cb_err),
			 "event id %u is not declared in the metadata for stream %u",
			 id, s->sc->id);
		s->cb_offset = s->it.pos;
		return -1;
	}
	len = dump_payload_size(ev, s->it.base, off, avail, err, sizeof(err),
				&s->cb_offset);
	if (len < 0) {
		snprintf(s->cb_err, sizeof(s->cb_err), "event '%.40s': %s",
			 ev->name, err);
		return -1;
	}
	s->cur_event = ev;
	return len;
}

void dump_stream_init(struct dump_stream *s, const struct dump_meta *meta,
		      const void *data, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->meta = meta;
	s->data = data;
	s->len = len;
}

static void add_notice(struct dump_stream *s, enum dump_item_kind kind,
		       unsigned long long count, unsigned long long from,
		       unsigned long long to, bool approx)
{
	struct dump_item *n = &s->pending[s->nr_pending++];

	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->count = count;
	n->ts = from;
	n->ts_end = to;
	n->approx = approx;
	n->cpu = s->cpu;
	n->offset = s->pos;
	if (kind == DUMP_ITEM_DISCARDED)
		s->discarded += count;
	else
		s->lost_packets += count;
}

/* Validate the packet header at s->pos and start decoding its records. */
static int open_packet(struct dump_stream *s)
{
	unsigned long long left = s->len - s->pos;
	const struct dump_stream_class *sc;
	struct lrb_packet_header h;
	bool big_endian;
	int order;

	if (left < sizeof(h))
		return stream_fail(s, s->pos,
				   "packet header truncated: %llu bytes left, a packet header takes %zu (file cut short?)",
				   left, sizeof(h));
	order = lrb_packet_header_load(&h, s->data + s->pos);
	if (order < 0)
		return stream_fail(s, s->pos,
				   "bad packet magic 0x%08x (expected 0x%08x in either byte order): not an lrb stream, or the previous packet's size is wrong",
				   h.magic, LRB_PACKET_MAGIC);
	big_endian = (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) != order;
	if (big_endian != s->meta->big_endian)
		return stream_fail(s, s->pos,
				   "the packet is %s-endian but the metadata says byte_order = %s: the stream file and the metadata come from different traces",
				   big_endian ? "big" : "little",
				   s->meta->big_endian ? "be" : "le");
	sc = dump_meta_stream(s->meta, h.stream_id);
	if (!sc)
		return stream_fail(s, s->pos + HDR_OFF(stream_id),
				   "stream id %u is not declared in the metadata",
				   h.stream_id);
	if (s->started && sc != s->sc)
		return stream_fail(s, s->pos + HDR_OFF(stream_id),
				   "stream id %u differs from the file's first packet (%u)",
				   h.stream_id, s->sc->id);
	s->sc = sc;
	s->dec.header = sc->header;
	s->dec.tsc_bits = sc->tsc_bits;
	s->dec.payload_size = payload_size;
	s->dec.priv = s;
	if (lrb_packet_open(&s->it, &s->dec, s->data + s->pos, left)) {
		if (s->it.error_offset == HDR_OFF(packet_size))
			return stream_fail(s, s->pos + HDR_OFF(packet_size),
					   "packet_size is %llu bytes, only %llu left in the file: the file was cut short (or the size is corrupt)",
					   (unsigned long long)h.packet_size / 8,
					   left);
		return stream_fail(s, s->pos + s->it.error_offset,
				   "%s (header_size %u, content_size %llu bits, packet_size %llu bits)",
				   s->it.error ? s->it.error : "bad decoder",
				   h.header_size,
				   (unsigned long long)h.content_size,
				   (unsigned long long)h.packet_size);
	}
	if (s->started && h.cpu_id != s->cpu)
		return stream_fail(s, s->pos + HDR_OFF(cpu_id),
				   "cpu_id %u differs from the file's first packet (%u)",
				   h.cpu_id, s->cpu);
	if (h.timestamp_end < h.timestamp_begin)
		return stream_fail(s, s->pos + HDR_OFF(timestamp_end),
				   "timestamp_end %llu is before timestamp_begin %llu",
				   (unsigned long long)h.timestamp_end,
				   (unsigned long long)h.timestamp_begin);
	if (s->started) {
		if (h.packet_seq_num <= s->prev_seq)
			return stream_fail(s, s->pos + HDR_OFF(packet_seq_num),
					   "packet_seq_num %llu after %llu: packets out of order",
					   (unsigned long long)h.packet_seq_num,
					   s->prev_seq);
		if (h.timestamp_begin < s->prev_end)
			return stream_fail(s, s->pos + HDR_OFF(timestamp_begin),
					   "timestamp_begin %llu is before the previous packet's timestamp_end %llu",
					   (unsigned long long)h.timestamp_begin,
					   s->prev_end);
		if (h.events_discarded < s->prev_discarded)
			return stream_fail(s, s->pos + HDR_OFF(events_discarded),
					   "events_discarded %llu is below the previous packet's %llu (it only grows)",
					   (unsigned long long)h.events_discarded,
					   s->prev_discarded);
		if (h.events_discarded > s->prev_discarded)
			add_notice(s, DUMP_ITEM_DISCARDED,
				   h.events_discarded - s->prev_discarded,
				   s->prev_end, h.timestamp_end, false);
		if (h.packet_seq_num > s->prev_seq + 1)
			add_notice(s, DUMP_ITEM_LOST,
				   h.packet_seq_num - s->prev_seq - 1,
				   s->prev_end, h.timestamp_begin, false);
	} else {
		s->cpu = h.cpu_id;
		s->started = true;
		/* counted since the buffer was created: exact from packet 0 */
		if (h.events_discarded)
			add_notice(s, DUMP_ITEM_DISCARDED, h.events_discarded,
				   h.timestamp_begin, h.timestamp_end,
				   h.packet_seq_num != 0);
	}
	s->prev_seq = h.packet_seq_num;
	s->prev_end = h.timestamp_end;
	s->prev_discarded = h.events_discarded;
	s->next = s->pos + h.packet_size / 8;
	s->in_packet = true;
	s->packets++;
	return 0;
}

int dump_stream_next(struct dump_stream *s, struct dump_item *item)
{
	struct lrb_record rec;
	int ret;

	if (s->err[0])
		return -1;
	for (;;) {
		if (s->nr_pending) {
			*item = s->pending[0];
			s->pending[0] = s->pending[1];
			s->nr_pending--;
			return 1;
		}
		if (!s->in_packet) {
			if (s->pos == s->len)
				return 0;
			if (open_packet(s))
				return -1;
			continue;
		}
		s->cb_err[0] = 0;
		s->cur_event = NULL;
		ret = lrb_packet_next(&s->it, &rec);
		if (ret < 0) {
			if (s->cb_err[0])
				return stream_fail(s, s->pos + s->cb_offset, "%s",
						   s->cb_err);
			return stream_fail(s, s->pos + s->it.error_offset, "%s",
					   s->it.error);
		}
		if (!ret) {
			s->in_packet = false;
			s->pos = s->next;
			continue;
		}
		if (rec.timestamp > s->it.header.timestamp_end)
			return stream_fail(s, s->pos + rec.offset,
					   "record timestamp %llu is after the packet's timestamp_end %llu",
					   (unsigned long long)rec.timestamp,
					   (unsigned long long)s->it.header.timestamp_end);
		memset(item, 0, sizeof(*item));
		item->kind = DUMP_ITEM_EVENT;
		item->ts = rec.timestamp;
		item->cpu = s->cpu;
		item->event = s->cur_event;
		item->packet = s->it.base;
		item->payload = rec.payload - s->it.base;
		item->len = rec.len;
		item->avail = s->it.content - item->payload;
		item->offset = s->pos + rec.offset;
		s->events++;
		return 1;
	}
}
