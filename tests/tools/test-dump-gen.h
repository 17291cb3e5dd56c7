/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test traces for lrb-dump, written by liblrb as lrb.ko writes them: one
 * stream (one CPU) per call, the events of tests/fuzz/events.h with a
 * controlled clock, drained only every so many records so that a small
 * buffer loses records (discard mode) or packets (overwrite mode). The
 * records that were read are decoded back, independently of lrb-dump,
 * into the list a correct reader must print. Used by test-dump.c and by
 * tests/fuzz/mkcorpus.c; needs liblrb (and liburcu).
 */
#ifndef _LRB_TEST_DUMP_GEN_H
#define _LRB_TEST_DUMP_GEN_H

#include <stdio.h>
#include <stdlib.h>

#include "../../lib/kernel_compat.h"
#include <lrb/lrb.h>
#include <lrb/decode.h>
#include <lrb/metadata.h>
#include "../fuzz/events.h"

/* A record a reader must print. */
struct gen_rec {
	uint32_t seq;
	unsigned int id;
	uint64_t ts;
};

/**
 * struct gen_stream - one stream file and what it holds
 * @data: the packets, back to back (malloc'd)
 * @len: bytes
 * @recs: records read, in order (malloc'd)
 * @nr: how many
 * @discarded: records discarded, as the last packet read counts them (later
 *	losses are only in the buffer's counters)
 * @first_discarded: what the first packet read counts (babeltrace2
 *	reports only the losses after it)
 * @lost_all: records discarded, from the buffer's counters
 * @packets: packets read
 * @first_seq: packet_seq_num of the first packet read
 * @last_seq: of the last
 */
struct gen_stream {
	uint8_t *data;
	size_t len;
	struct gen_rec *recs;
	unsigned long nr;
	unsigned long discarded;
	unsigned long first_discarded;
	unsigned long lost_all;
	unsigned long packets;
	uint64_t first_seq;
	uint64_t last_seq;
};

static uint64_t gen_now;
static unsigned int gen_cpu;
static uint64_t *gen_ts_of;	/* timestamp of record seq */
static unsigned int gen_nr;	/* records written so far */

static inline uint64_t gen_clock(void)
{
	return gen_now;
}

/* The stream's CPU in every packet, as lrb.ko's per-CPU buffers have it. */
static inline void gen_packet_cb(struct lrb_buf *buf,
				 struct lrb_packet_header *h)
{
	(void)buf;
	h->cpu_id = gen_cpu;
}

#define GEN_CONFIG(m, h, bits) {					\
	.mode = m, .alloc = LRB_ALLOC_GLOBAL, .wakeup = LRB_WAKEUP_BY_WRITER, \
	.header = h, .tsc_bits = bits,					\
	.cb = { .clock_read = gen_clock, .packet_begin = gen_packet_cb,	\
		.packet_end = gen_packet_cb },				\
}

static const struct lrb_config gen_compact_discard =
	GEN_CONFIG(LRB_MODE_DISCARD, LRB_HEADER_COMPACT, 27);
static const struct lrb_config gen_large_overwrite =
	GEN_CONFIG(LRB_MODE_OVERWRITE, LRB_HEADER_LARGE, 27);
static const struct lrb_config gen_compact8_discard =
	GEN_CONFIG(LRB_MODE_DISCARD, LRB_HEADER_COMPACT, 8);

/*
 * The metadata of a channel of @cfg, as lrb.ko's metadata file, followed
 * by the test events of tests/fuzz/events.h (which exercise the parser
 * beyond what LRB_EVENT() generates): malloc'd.
 */
static inline char *gen_metadata(const struct lrb_config *cfg, size_t *len)
{
	struct lrb_metadata_attr attr = {
		.clock_freq = FZ_CLOCK_FREQ,
		.clock_offset_s = FZ_CLOCK_OFFSET_S,
		.events = fz_events,
		.nr_events = ARRAY_SIZE(fz_events),
	};
	struct lrb_chan chan = { .cfg = cfg, .stream_id = FZ_STREAM_ID };
	int n = lrb_metadata_format(&chan, &attr, NULL, 0);
	size_t extra = strlen(fz_events_tsdl) + 1;
	char *text = malloc(n + extra + 1);

	if (n < 0 || !text)
		abort();
	lrb_metadata_format(&chan, &attr, text, n + 1);
	snprintf(text + n, extra + 1, "\n%s", fz_events_tsdl);
	*len = n + extra;
	return text;
}

static inline long gen_u16(const u8 *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Payload size as the test knows it (independent of lrb-dump); the
 * payloads are in this CPU's byte order (events.h).
 */
static inline long gen_payload_size(const struct lrb_decoder *dec, u32 id,
				    const u8 *p, unsigned long avail)
{
	unsigned long n;

	(void)dec;
	switch (id) {
	case FZ_EV_SMALL:
		return 12;
	case FZ_EV_BIG:
		return avail < 13 ? -1 : 13 + p[12];
	case FZ_EV_TINY:
		return 1;
	case FZ_EV_VM:
		return avail < 20 ? -1 : 20 + gen_u16(p + 12);
	case FZ_EV_RICH:
		for (n = 20; n < avail && p[n]; n++)
			;
		if (n + 3 > avail)
			return -1;
		n++;
		return n + 2 + 3 * gen_u16(p + n) + 6;
	}
	return -1;
}

static inline uint32_t gen_seq_of(uint64_t ts)
{
	unsigned int lo = 0, hi = gen_nr;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (gen_ts_of[mid] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline void gen_append(struct gen_stream *g, const void *p, size_t n)
{
	g->data = realloc(g->data, g->len + n);
	if (!g->data)
		abort();
	memcpy(g->data + g->len, p, n);
	g->len += n;
}

/* Move every complete packet of @buf to @g, noting its records. */
static inline int gen_drain(struct lrb_chan *chan, struct lrb_buf *buf,
			    struct gen_stream *g)
{
	struct lrb_decoder dec = {
		.header = chan->cfg->header,
		.tsc_bits = chan->cfg->tsc_bits,
		.payload_size = gen_payload_size,
	};
	static u8 data[1 << 16];
	struct lrb_packet_iter it;
	struct lrb_record rec;
	struct lrb_subbuf sb;
	int ret;

	while (!lrb_get_next_subbuf(buf, &sb)) {
		if (sb.packet_size > sizeof(data))
			return -1;
		lrb_subbuf_copy(chan, &sb, 0, data, sb.packet_size);
		gen_append(g, data, sb.packet_size);
		if (lrb_packet_open(&it, &dec, data, sb.packet_size))
			return -1;
		g->discarded = ((struct lrb_packet_header *)data)->events_discarded;
		if (!g->packets++) {
			g->first_seq = sb.seq;
			g->first_discarded = g->discarded;
		}
		g->last_seq = sb.seq;
		while ((ret = lrb_packet_next(&it, &rec)) > 0) {
			struct gen_rec *r;

			g->recs = realloc(g->recs, (g->nr + 1) * sizeof(*r));
			if (!g->recs)
				abort();
			r = &g->recs[g->nr++];
			r->seq = gen_seq_of(rec.timestamp);
			r->id = rec.id;
			r->ts = rec.timestamp;
			if (r->seq >= gen_nr || gen_ts_of[r->seq] != r->ts ||
			    fz_event_of(r->seq) != r->id)
				return -1;
		}
		if (ret < 0 || lrb_put_subbuf(buf, &sb))
			return -1;
	}
	return 0;
}

/*
 * Write @nr records on a one-buffer channel of @cfg for CPU @cpu, the
 * clock starting at @t0 and moving by @step (an extended header now and
 * then), draining every @drain_every records (after closing the packet
 * being filled if @flush: small packets); then flush and drain.
 * The buffer is 4 packets of 4096 bytes. Returns 0, or -1 if liblrb or
 * the decoding back failed.
 */
static inline int gen_stream(const struct lrb_config *cfg, unsigned int cpu,
			     unsigned int nr, unsigned int drain_every,
			     bool flush, uint64_t t0, uint64_t step,
			     struct gen_stream *g)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 4, .nr_cpus = 1,
		.stream_id = FZ_STREAM_ID,
	};
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned int i, id;
	uint8_t payload[128];
	int ret = 0;

	memset(g, 0, sizeof(*g));
	free(gen_ts_of);
	gen_ts_of = calloc(nr + 1, sizeof(*gen_ts_of));
	if (!gen_ts_of || lrb_channel_create(cfg, &attr, &chan))
		return -1;
	gen_nr = 0;
	gen_cpu = cpu;
	gen_now = t0;
	buf = lrb_channel_nth_buf(chan, 0);
	if (lrb_reader_open(buf)) {
		lrb_channel_destroy(chan);
		return -1;
	}
	for (i = 0; i < nr && !ret; i++) {
		/* a jump past 2^28 now and then: extended headers */
		gen_now += i % 97 == 50 ? (1ULL << 28) + 2 * step : step;
		gen_ts_of[i] = gen_now;
		gen_nr = i + 1;
		id = fz_event_of(i);
		lrb_event_write(cfg, chan, id, payload,
				fz_payload(id, i, gen_now, payload));
		if (i % drain_every != drain_every - 1)
			continue;
		if (flush)
			lrb_buf_flush(buf);
		ret = gen_drain(chan, buf, g);
	}
	lrb_buf_flush(buf);
	if (!ret)
		ret = gen_drain(chan, buf, g);
	g->lost_all = lrb_buf_lost(buf);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
	return ret;
}

static inline void gen_free(struct gen_stream *g)
{
	free(g->data);
	free(g->recs);
	memset(g, 0, sizeof(*g));
}

#endif /* _LRB_TEST_DUMP_GEN_H */
