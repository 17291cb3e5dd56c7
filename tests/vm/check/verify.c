// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-vmcheck verifier: every packet header field, every record of the
 * test client (tests/vm/vm_record.h) byte for byte, the order of records
 * per (cpu, ctx), and at the end of a consumed stream the exact accounting
 * of lost records against the client's attempts and lrb's counters.
 *
 * Errors are counted per category and CPU and only the first few of each
 * are printed, so a broken stream does not flood the VM console; each
 * category then counts as one check (vc_stream_report()).
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VC_PRINT_MAX 5

const char *const vc_cat_name[VC_NR_CAT] = {
	[VC_FRAMING] = "stream framing",
	[VC_HEADER] = "packet headers",
	[VC_PKTSEQ] = "packet_seq_num",
	[VC_TIME] = "timestamps",
	[VC_DISC] = "events_discarded",
	[VC_RECORD] = "record layout and fields",
	[VC_DATA] = "record data and checksums",
	[VC_ORDER] = "record order per (cpu, ctx)",
	[VC_PAD] = "zero padding after content",
	[VC_ACC_GAPS] = "seq gaps == client's lost",
	[VC_ACC_LOST] = "client's lost == lost_full+lost_wrap+lost_big+lost_nest",
	[VC_ACC_DISC] = "last events_discarded == lost",
	[VC_ACC_TOTAL] = "received + lost == client's attempts",
	[VC_ACC_WRITTEN] = "records_written == received",
	[VC_ACC_READ] = "packets_read and bytes_read == delivered",
	[VC_ACC_POS] = "positions: all produced was consumed",
	[VC_ACC_SPLICE] = "pages_spliced == bytes spliced / page size",
};

static u32 vc_get32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static u64 vc_get64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

void vc_stream_init(struct vc_stream *s, unsigned int cpu,
		    const struct vc_geom *g)
{
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	s->g = *g;
}

void vc_err(struct vc_stream *s, enum vc_cat cat, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	s->errors[cat]++;
	if (vc_quiet || s->printed[cat] > VC_PRINT_MAX)
		return;
	if (s->printed[cat]++ == VC_PRINT_MAX) {
		vc_info("cpu%u: %s: further errors not shown", s->cpu,
			vc_cat_name[cat]);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vc_info("cpu%u: %s: %s", s->cpu, vc_cat_name[cat], msg);
}

u64 vc_stream_errors(const struct vc_stream *s)
{
	u64 n = 0;
	int i;

	for (i = 0; i < VC_NR_CAT; i++)
		n += s->errors[i];
	return n;
}

void vc_stream_report(struct vc_stream *s, bool accounting)
{
	int i, n = accounting ? VC_NR_CAT : VC_NR_VERIFY;

	for (i = 0; i < n; i++)
		vc_check(!s->errors[i],
			 "cpu%u: %s: %llu errors (%llu packets, %llu records)",
			 s->cpu, vc_cat_name[i], (ull)s->errors[i],
			 (ull)s->packets, (ull)s->records);
}

/* Rebuild a clock value from its low @bits bits, as a CTF reader does. */
static u64 vc_rebuild_ts(u64 last, u64 low, unsigned int bits)
{
	u64 mask = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
	u64 ts = (last & ~mask) | low;

	if (low < (last & mask))
		ts += mask + 1;
	return ts;
}

/*
 * Decode the record header at @pos: returns its size with @id and @ts set,
 * or 0 after reporting an error.
 */
static unsigned int vc_record_header(struct vc_stream *s, const u8 *p,
				     u64 pos, u64 content, u64 last_ts,
				     u64 where, u32 *id, u64 *ts)
{
	const struct vc_layout *l = &vc_layout;
	u32 w = vc_get32(p + pos);
	u32 ext = l->large ? LRB_LARGE_ID_EXTENDED :
			     (1U << (32 - l->tsc_bits)) - 1;
	unsigned int hl;

	if (!l->large && (w & ext) != ext) {
		*id = w & ext;
		*ts = vc_rebuild_ts(last_ts, w >> (32 - l->tsc_bits),
				    l->tsc_bits);
		return LRB_COMPACT_HEADER_SIZE;
	}
	if (l->large && w != ext) {
		if (content - pos < LRB_LARGE_HEADER_SIZE)
			goto truncated;
		*id = w;
		*ts = vc_rebuild_ts(last_ts, vc_get32(p + pos + 4), 32);
		return LRB_LARGE_HEADER_SIZE;
	}
	if (!l->large && w >> (32 - l->tsc_bits)) {
		vc_err(s, VC_RECORD,
		       "packet at %llu offset %llu: extended header 0x%08x has timestamp bits set",
		       (ull)where, (ull)pos, w);
		return 0;
	}
	hl = LRB_EXTENDED_HEADER_SIZE;
	if (content - pos < hl)
		goto truncated;
	*id = vc_get32(p + pos + 4);
	*ts = vc_get64(p + pos + 8);
	if (*ts < last_ts)
		vc_err(s, VC_TIME,
		       "packet at %llu offset %llu: extended record timestamp %llu < previous %llu",
		       (ull)where, (ull)pos, (ull)*ts, (ull)last_ts);
	return hl;
truncated:
	vc_err(s, VC_RECORD,
	       "packet at %llu offset %llu: record header truncated by content end %llu",
	       (ull)where, (ull)pos, (ull)content);
	return 0;
}

/* The fixed fields and data of one test record, and its place in order. */
static void vc_check_record(struct vc_stream *s, const u8 *pl,
			    const struct lrb_vm_record *r, u64 where, u64 pos)
{
	const u8 *data = pl + sizeof(*r);
	u32 i, bad = r->data_len;
	int ctx = r->ctx;

	if (r->cpu != s->cpu)
		vc_err(s, VC_RECORD,
		       "packet at %llu offset %llu: record seq %llu says cpu %u",
		       (ull)where, (ull)pos, (ull)r->seq, r->cpu);
	if (r->ctx >= LRB_VM_NR_CTX || r->zero)
		vc_err(s, VC_RECORD,
		       "packet at %llu offset %llu: record seq %llu has ctx %u zero %u",
		       (ull)where, (ull)pos, (ull)r->seq, r->ctx, r->zero);
	if (s->g.data_len >= 0 && r->data_len != s->g.data_len)
		vc_err(s, VC_RECORD,
		       "packet at %llu offset %llu: record seq %llu data_len %u, client writes %ld",
		       (ull)where, (ull)pos, (ull)r->seq, r->data_len,
		       s->g.data_len);
	for (i = 0; i < r->data_len; i++)
		if (data[i] != lrb_vm_data_byte(r->seq, r->cpu, r->ctx, i)) {
			bad = i;
			break;
		}
	if (bad != r->data_len)
		vc_err(s, VC_DATA,
		       "packet at %llu offset %llu: record seq %llu ctx %u data byte %u is 0x%02x, want 0x%02x",
		       (ull)where, (ull)pos, (ull)r->seq, r->ctx, bad,
		       data[bad],
		       lrb_vm_data_byte(r->seq, r->cpu, r->ctx, bad));
	else if (lrb_vm_csum(data, r->data_len, r->seq) != r->csum)
		vc_err(s, VC_DATA,
		       "packet at %llu offset %llu: record seq %llu ctx %u csum 0x%08x, data sums to 0x%08x",
		       (ull)where, (ull)pos, (ull)r->seq, r->ctx, r->csum,
		       lrb_vm_csum(data, r->data_len, r->seq));
	if (ctx >= LRB_VM_NR_CTX)
		return;
	if (s->have_seq[ctx] && r->seq <= s->last_seq[ctx]) {
		vc_err(s, VC_ORDER,
		       "packet at %llu offset %llu: ctx %d seq %llu after seq %llu",
		       (ull)where, (ull)pos, ctx, (ull)r->seq,
		       (ull)s->last_seq[ctx]);
	} else {
		/* from creation, the first record missing counts as lost */
		if (s->desync[ctx])
			s->desync[ctx] = false;
		else if (s->have_seq[ctx] || s->g.exact_seq)
			s->gaps[ctx] += r->seq - (s->have_seq[ctx] ?
						  s->last_seq[ctx] + 1 : 0);
		s->last_seq[ctx] = r->seq;
		s->have_seq[ctx] = true;
	}
	s->received[ctx]++;
}

static void vc_verify_records(struct vc_stream *s, const u8 *p, u64 content,
			      u64 where)
{
	struct vc_packet *c = &s->cur;
	u64 pos = VC_HEADER_SIZE, last_ts = c->h.timestamp_begin;

	while (pos < content) {
		struct lrb_vm_record r;
		unsigned int hl;
		u64 plen, slot, ts;
		u32 id;

		if (pos % LRB_RECORD_ALIGN || content - pos < 4) {
			vc_err(s, VC_RECORD,
			       "packet at %llu offset %llu: record header truncated by content end %llu",
			       (ull)where, (ull)pos, (ull)content);
			goto lost_sync;
		}
		hl = vc_record_header(s, p, pos, content, last_ts, where, &id,
				      &ts);
		if (!hl)
			goto lost_sync;
		if (id != LRB_VM_EVENT_ID) {
			vc_err(s, VC_RECORD,
			       "packet at %llu offset %llu: event id %u, want %u",
			       (ull)where, (ull)pos, id, LRB_VM_EVENT_ID);
			goto lost_sync;
		}
		if (content - pos - hl < sizeof(r)) {
			vc_err(s, VC_RECORD,
			       "packet at %llu offset %llu: payload truncated by content end %llu",
			       (ull)where, (ull)pos, (ull)content);
			goto lost_sync;
		}
		memcpy(&r, p + pos + hl, sizeof(r));
		plen = sizeof(r) + r.data_len;
		slot = (hl + plen + LRB_RECORD_ALIGN - 1) &
		       ~(u64)(LRB_RECORD_ALIGN - 1);
		if (slot > content - pos) {
			vc_err(s, VC_RECORD,
			       "packet at %llu offset %llu: record seq %llu of %llu bytes (data_len %u) runs past content end %llu",
			       (ull)where, (ull)pos, (ull)r.seq,
			       (ull)(hl + plen), r.data_len, (ull)content);
			goto lost_sync;
		}
		vc_check_record(s, p + pos + hl, &r, where, pos);
		if (!c->records)
			c->first_ts = ts;
		else if (ts - c->last_ts > c->max_gap)
			c->max_gap = ts - c->last_ts;
		c->last_ts = ts;
		c->records++;
		s->records++;
		last_ts = ts;
		pos += slot;
	}
	if (c->records && c->last_ts > c->h.timestamp_end)
		vc_err(s, VC_TIME,
		       "packet at %llu: last record timestamp %llu > timestamp_end %llu",
		       (ull)where, (ull)c->last_ts, (ull)c->h.timestamp_end);
	else if (c->records && c->h.timestamp_end - c->last_ts > c->max_gap)
		c->max_gap = c->h.timestamp_end - c->last_ts;
	return;
lost_sync:
	/*
	 * The rest of the packet is not decoded: the records skipped are
	 * not lost ones, so the next seq of each context starts afresh.
	 */
	s->desync[0] = true;
	s->desync[1] = true;
}

void vc_verify_packet(struct vc_stream *s, const u8 *p, u64 len, u64 where)
{
	struct vc_packet *c = &s->cur;
	struct lrb_packet_header *h = &c->h;
	u64 content, psize, i, lost;
	bool sane = true;
	u32 hash = 2166136261U;

	memset(c, 0, sizeof(*c));
	if (len < VC_HEADER_SIZE) {
		vc_err(s, VC_FRAMING, "packet at %llu: only %llu bytes",
		       (ull)where, (ull)len);
		return;
	}
	memcpy(h, p, sizeof(*h));
	for (i = 0; i < len; i++)
		hash = (hash ^ p[i]) * 16777619U;
	c->hash = hash;
	content = h->content_size / 8;
	psize = h->packet_size / 8;
	if (h->magic != LRB_PACKET_MAGIC) {
		vc_err(s, VC_HEADER, "packet at %llu: magic 0x%08x, want 0x%08x",
		       (ull)where, h->magic, LRB_PACKET_MAGIC);
		sane = false;
	}
	if (h->cpu_id != s->cpu)
		vc_err(s, VC_HEADER, "packet at %llu: cpu_id %u in the file of cpu%u",
		       (ull)where, h->cpu_id, s->cpu);
	if (h->header_size != VC_HEADER_SIZE) {
		vc_err(s, VC_HEADER, "packet at %llu: header_size %u, want %zu",
		       (ull)where, h->header_size, VC_HEADER_SIZE);
		sane = false;
	}
	if (h->stream_id != s->g.stream_id)
		vc_err(s, VC_HEADER, "packet at %llu: stream_id %u, channel has %u",
		       (ull)where, h->stream_id, s->g.stream_id);
	if (h->content_size % 8 || h->packet_size % 8 ||
	    content < VC_HEADER_SIZE || content > psize) {
		vc_err(s, VC_HEADER,
		       "packet at %llu: content_size %llu bits, packet_size %llu bits: want whole bytes, header <= content <= packet",
		       (ull)where, (ull)h->content_size, (ull)h->packet_size);
		sane = false;
	}
	if (psize != len) {
		vc_err(s, VC_HEADER,
		       "packet at %llu: packet_size %llu bytes but %llu delivered",
		       (ull)where, (ull)psize, (ull)len);
		sane = false;
	} else if (psize % VC_PAGE || psize > s->g.subbuf_size ||
		   (content <= psize &&
		    psize != ((content + VC_PAGE - 1) & ~(VC_PAGE - 1)))) {
		vc_err(s, VC_HEADER,
		       "packet at %llu: packet_size %llu bytes for content %llu: want content rounded up to a page, at most subbuf_size %llu",
		       (ull)where, (ull)psize, (ull)content,
		       (ull)s->g.subbuf_size);
	}
	if (h->timestamp_end < h->timestamp_begin)
		vc_err(s, VC_TIME, "packet at %llu: timestamp_end %llu < timestamp_begin %llu",
		       (ull)where, (ull)h->timestamp_end,
		       (ull)h->timestamp_begin);
	if (s->have_pkt) {
		const struct lrb_packet_header *l = &s->last;

		if (s->g.exact_seq && h->packet_seq_num != l->packet_seq_num + 1)
			vc_err(s, VC_PKTSEQ,
			       "packet at %llu: packet_seq_num %llu after %llu, want +1",
			       (ull)where, (ull)h->packet_seq_num,
			       (ull)l->packet_seq_num);
		else if (h->packet_seq_num <= l->packet_seq_num)
			vc_err(s, VC_PKTSEQ,
			       "packet at %llu: packet_seq_num %llu after %llu, want increasing",
			       (ull)where, (ull)h->packet_seq_num,
			       (ull)l->packet_seq_num);
		else
			s->lost_packets += h->packet_seq_num -
					   l->packet_seq_num - 1;
		if (h->timestamp_begin < l->timestamp_end)
			vc_err(s, VC_TIME,
			       "packet at %llu: timestamp_begin %llu < timestamp_end %llu of the previous packet",
			       (ull)where, (ull)h->timestamp_begin,
			       (ull)l->timestamp_end);
		if (h->events_discarded < l->events_discarded)
			vc_err(s, VC_DISC,
			       "packet at %llu: events_discarded %llu < %llu of the previous packet",
			       (ull)where, (ull)h->events_discarded,
			       (ull)l->events_discarded);
	} else if (s->g.exact_seq && h->packet_seq_num) {
		vc_err(s, VC_PKTSEQ,
		       "first packet has packet_seq_num %llu, want 0 (nothing was consumed before)",
		       (ull)h->packet_seq_num);
	}
	if (sane) {
		vc_verify_records(s, p, content, where);
		for (i = content; i < len; i++)
			if (p[i])
				break;
		if (i < len)
			vc_err(s, VC_PAD,
			       "packet at %llu: byte %llu after content %llu is 0x%02x",
			       (ull)where, (ull)i, (ull)content, p[i]);
	}
	/*
	 * Records missing from the seq streams so far were lost before this
	 * packet was closed, so its cumulative count covers them.
	 */
	lost = s->gaps[0] + s->gaps[1];
	if (s->g.exact_seq && h->events_discarded < lost)
		vc_err(s, VC_DISC,
		       "packet at %llu: events_discarded %llu < %llu records already missing from the seq streams",
		       (ull)where, (ull)h->events_discarded, (ull)lost);
	s->last = *h;
	s->have_pkt = true;
	s->packets++;
	s->bytes += len;
}

void vc_account(struct vc_stream *s, const struct vc_acct *a)
{
	const struct lrb_buf_counters *c = &a->cnt;
	u64 attempts[LRB_VM_NR_CTX] = { a->cl.task, a->cl.irq };
	u64 tail = 0, gaps = 0, lrb_lost, received, ed;
	int ctx;

	if (!a->cl.valid) {
		vc_err(s, VC_ACC_GAPS, "no line for cpu%u in the client's written file",
		       s->cpu);
		return;
	}
	received = s->received[0] + s->received[1];
	for (ctx = 0; ctx < LRB_VM_NR_CTX; ctx++) {
		u64 next = s->have_seq[ctx] ? s->last_seq[ctx] + 1 : 0;

		if (next > attempts[ctx])
			vc_err(s, VC_ACC_GAPS,
			       "ctx %d: received seq %llu but the client made only %llu attempts",
			       ctx, (ull)s->last_seq[ctx], (ull)attempts[ctx]);
		else
			tail += attempts[ctx] - next;
		gaps += s->gaps[ctx];
	}
	if (gaps + tail != a->cl.lost)
		vc_err(s, VC_ACC_GAPS,
		       "%llu records missing from the seq streams (%llu + %llu between, %llu + %llu at the end), client lost %llu",
		       (ull)(gaps + tail), (ull)s->gaps[0], (ull)s->gaps[1],
		       (ull)(attempts[0] - (s->have_seq[0] ? s->last_seq[0] + 1 : 0)),
		       (ull)(attempts[1] - (s->have_seq[1] ? s->last_seq[1] + 1 : 0)),
		       (ull)a->cl.lost);
	lrb_lost = c->lost_full + c->lost_wrap + c->lost_big + c->lost_nest;
	if (lrb_lost != a->cl.lost)
		vc_err(s, VC_ACC_LOST,
		       "client lost %llu, lrb counts %llu (full %llu wrap %llu big %llu nest %llu)",
		       (ull)a->cl.lost, (ull)lrb_lost, (ull)c->lost_full,
		       (ull)c->lost_wrap, (ull)c->lost_big, (ull)c->lost_nest);
	/*
	 * The last packet counts every loss before its close. Losses after
	 * it (ring full, no packet opened again) are in no packet header:
	 * they are among the records missing at the end of the streams.
	 */
	ed = s->have_pkt ? s->last.events_discarded : 0;
	if (ed > lrb_lost || ed + tail < lrb_lost)
		vc_err(s, VC_ACC_DISC,
		       "last packet's events_discarded %llu, lost %llu, of which at most %llu after the last record received",
		       (ull)ed, (ull)lrb_lost, (ull)tail);
	if (received + a->cl.lost != a->cl.task + a->cl.irq)
		vc_err(s, VC_ACC_TOTAL,
		       "received %llu + lost %llu != attempts %llu (task %llu + irq %llu)",
		       (ull)received, (ull)a->cl.lost,
		       (ull)(a->cl.task + a->cl.irq), (ull)a->cl.task,
		       (ull)a->cl.irq);
	if (c->records_written != received)
		vc_err(s, VC_ACC_WRITTEN, "records_written %llu, received %llu",
		       (ull)c->records_written, (ull)received);
	if (c->packets_read != s->packets || c->bytes_read != s->bytes)
		vc_err(s, VC_ACC_READ,
		       "packets_read %llu bytes_read %llu, delivered %llu packets of %llu bytes",
		       (ull)c->packets_read, (ull)c->bytes_read,
		       (ull)s->packets, (ull)s->bytes);
	if (a->pos.consumed != a->pos.produced ||
	    c->consumed != c->produced || c->consumed != a->pos.consumed ||
	    c->lost_packets || c->lost_overwrite ||
	    (s->have_pkt &&
	     c->consumed != (s->last.packet_seq_num + 1) * s->g.subbuf_size))
		vc_err(s, VC_ACC_POS,
		       "consumed %llu produced %llu (positions %llu %llu), lost_packets %llu (%llu records), last packet %llu of %llu bytes",
		       (ull)c->consumed, (ull)c->produced,
		       (ull)a->pos.consumed, (ull)a->pos.produced,
		       (ull)c->lost_packets, (ull)c->lost_overwrite,
		       (ull)(s->have_pkt ? s->last.packet_seq_num : 0),
		       (ull)s->g.subbuf_size);
	if (a->spliced < 0 ? c->pages_spliced != 0 :
	    a->spliced % VC_PAGE ||
	    c->pages_spliced != (u64)a->spliced / VC_PAGE)
		vc_err(s, VC_ACC_SPLICE,
		       "pages_spliced %llu, bytes spliced %lld",
		       (ull)c->pages_spliced, a->spliced);
}

int vc_framer_init(struct vc_framer *f, u64 subbuf_size)
{
	memset(f, 0, sizeof(*f));
	f->buf = malloc(subbuf_size);
	f->need = VC_HEADER_SIZE;
	return f->buf ? 0 : -1;
}

void vc_framer_free(struct vc_framer *f)
{
	free(f->buf);
	f->buf = NULL;
}

u8 *vc_framer_space(struct vc_framer *f, u64 *len)
{
	if (f->broken) {
		/* keep draining into the buffer, nothing is verified */
		f->have = 0;
		*len = VC_PAGE;
		return f->buf;
	}
	*len = f->need - f->have;
	return f->buf + f->have;
}

void vc_framer_commit(struct vc_framer *f, struct vc_stream *s, u64 n)
{
	struct lrb_packet_header h;
	u64 size;

	if (f->broken)
		return;
	f->have += n;
	if (f->have < f->need)
		return;
	if (f->need == VC_HEADER_SIZE) {
		memcpy(&h, f->buf, sizeof(h));
		size = h.packet_size / 8;
		if (h.packet_size % 8 || size < VC_PAGE || size % VC_PAGE ||
		    size > s->g.subbuf_size) {
			vc_err(s, VC_FRAMING,
			       "packet at stream offset %llu: packet_size %llu bits (magic 0x%08x): cannot find the next packet, rest of the stream not verified",
			       (ull)f->off, (ull)h.packet_size, h.magic);
			f->broken = true;
			return;
		}
		f->need = size;
		return;
	}
	vc_verify_packet(s, f->buf, f->need, f->off);
	f->off += f->need;
	f->have = 0;
	f->need = VC_HEADER_SIZE;
}

void vc_framer_end(struct vc_framer *f, struct vc_stream *s)
{
	if (!f->broken && f->have)
		vc_err(s, VC_FRAMING,
		       "stream ends %llu bytes into a packet at offset %llu (of %llu bytes)",
		       (ull)f->have, (ull)f->off,
		       (ull)(f->need == VC_HEADER_SIZE ? 0 : f->need));
}

ssize_t vc_framer_read(struct vc_framer *f, struct vc_stream *s, int fd)
{
	u64 len;
	u8 *p = vc_framer_space(f, &len);
	ssize_t n = read(fd, p, len);

	if (n > 0)
		vc_framer_commit(f, s, n);
	return n;
}

int vc_verify_file(struct vc_stream *s, const char *path)
{
	struct vc_framer f;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		vc_err(s, VC_FRAMING, "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (vc_framer_init(&f, s->g.subbuf_size)) {
		close(fd);
		return -1;
	}
	while ((n = vc_framer_read(&f, s, fd)) > 0)
		;
	if (n < 0)
		vc_err(s, VC_FRAMING, "read %s: %s", path, strerror(errno));
	else
		vc_framer_end(&f, s);
	vc_framer_free(&f);
	close(fd);
	return n < 0 ? -1 : 0;
}
