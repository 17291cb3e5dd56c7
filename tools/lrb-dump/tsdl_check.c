// SPDX-License-Identifier: GPL-2.0
/*
 * The checks that make parsed metadata usable by the stream cursor: the
 * packet header and context are exactly struct lrb_packet_header, each
 * stream's event header is one of lrb's two record header layouts (giving
 * the decoder its layout and timestamp bits), and every event's payload
 * is made of types the payload walker knows, with sequence lengths that
 * resolve and whole bytes when its size is fixed.
 */
#include "tsdl.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long align_up(unsigned long long v, unsigned int a)
{
	return (v + a - 1) & ~(unsigned long long)(a - 1);
}

/* lib/decode.c reads the headers in the trace's byte order, not another. */
static bool trace_order(const struct tsdl *p, const struct dump_type *t)
{
	return t->order == DUMP_ORDER_TRACE ||
	       t->order == (p->big_endian ? DUMP_ORDER_BE : DUMP_ORDER_LE);
}

/* What a field of a fixed layout must be. */
struct want {
	const char *name;
	unsigned int size;
	bool clock;
};

/*
 * @t must be a struct of exactly the fields of @w, unsigned integers at
 * the bit offsets they have in lrb's layout, starting at bit @start.
 * Returns the clock the mapped fields use.
 */
static const struct dump_clock *check_layout(struct tsdl *p,
					     const struct dump_type *t,
					     const struct want *w,
					     unsigned int n,
					     unsigned long long start,
					     unsigned int line,
					     const char *what)
{
	const struct dump_clock *clock = NULL;
	unsigned long long off = start, at;
	unsigned int i;

	if (t->kind != DUMP_STRUCT || t->nr_fields != n ||
	    align_up(start, t->align) != start)
		goto bad;
	for (i = 0; i < n; i++) {
		const struct dump_type *f = t->fields[i].type;

		if (strcmp(t->fields[i].name, w[i].name) ||
		    f->kind != DUMP_INT || f->sign || f->size != w[i].size ||
		    !trace_order(p, f) ||
		    !f->clock != !w[i].clock || (clock && f->clock &&
						 f->clock != clock))
			goto bad;
		if (f->clock)
			clock = f->clock;
		at = align_up(off, f->align);
		if (at != off)
			goto bad;
		off += f->size;
	}
	return clock;
bad:
	tsdl_fail(p, line, "%s is not lrb's (struct lrb_packet_header of uapi/lrb/lrb_abi.h): is this an lrb trace?",
		  what);
}

static const struct want packet_header[] = {
	{ "magic", 32, false }, { "stream_id", 32, false },
};

static const struct want packet_context[] = {
	{ "timestamp_begin", 64, true }, { "timestamp_end", 64, true },
	{ "content_size", 64, false }, { "packet_size", 64, false },
	{ "packet_seq_num", 64, false }, { "events_discarded", 64, false },
	{ "cpu_id", 32, false }, { "header_size", 32, false },
};

static const struct dump_field *field(const struct dump_type *t,
				      const char *name)
{
	unsigned int i;

	for (i = 0; t && i < t->nr_fields; i++)
		if (!strcmp(t->fields[i].name, name))
			return &t->fields[i];
	return NULL;
}

/*
 * An unsigned integer of @size bits in the trace's byte order, mapped to a
 * clock if @clock.
 */
static bool is_uint(const struct tsdl *p, const struct dump_type *t,
		    unsigned int size, bool clock)
{
	return t->kind == DUMP_INT && !t->sign && t->size == size &&
	       !t->clock == !clock && t->align <= 32 && trace_order(p, t);
}

/*
 * The event header must be one of lrb's two layouts (lib/metadata.c):
 * compact: enum id of S bits, timestamp of 32 - S bits, variant v; the id
 * is in the low bits of the 32-bit word, so a big-endian trace declares
 * the timestamp first (CTF packs its bit fields from the top);
 * large: enum id of 32 bits, variant v with the timestamp in "compact".
 * Both extended forms hold a 32-bit id and a 64-bit timestamp. The id one
 * below the extended one is the skip record's ("skip", absent only from a
 * compact header of 1 id bit), whose option ends with the header of the
 * record after it; the decoder passes over skip records by their count of
 * words (lrb_abi.h), so that option's other fields are not checked here.
 */
static void check_event_header(struct tsdl *p, struct dump_stream_class *sc,
			       const struct dump_type *h, unsigned int line)
{
	const struct dump_field *id, *ts, *v, *compact, *ext, *ext_id, *ext_ts;
	const struct dump_field *skip;
	unsigned int nr;
	const struct dump_clock *clock;
	unsigned long long max;
	unsigned int s, i;
	bool ts_first;

	if (!h || h->kind != DUMP_STRUCT || h->align != 32)
		goto bad;
	id = field(h, "id");
	ts = field(h, "timestamp");
	v = field(h, "v");
	ts_first = ts && p->big_endian;
	if (!id || !v || v != &h->fields[h->nr_fields - 1] ||
	    h->nr_fields != (ts ? 3U : 2U))
		goto bad;
	if (ts_first ? ts != h->fields || id != &h->fields[1] :
		       h->fields != id || (ts && ts != &h->fields[1]))
		goto bad;
	s = id->type->size;
	/* compact, skip (if the id has 2 bits or more) and extended */
	nr = s > 1 ? 3 : 2;
	if (id->type->kind != DUMP_ENUM || id->type->sign || s > 32 ||
	    id->type->nr_entries != nr || id->type->align > 32 ||
	    !trace_order(p, id->type))
		goto bad;
	max = (1ULL << s) - 1;
	for (i = 0; i < nr; i++) {
		const struct dump_enum_entry *e = &id->type->entries[i];
		long long lo = i == nr - 1 ? (long long)max :
			       i ? (long long)max - 1 : 0;
		long long hi = i ? lo : (long long)max - nr + 1;
		const char *label = i == nr - 1 ? "extended" :
				    i ? "skip" : "compact";

		if (strcmp(e->label, label) || e->lo != lo || e->hi != hi)
			goto bad;
	}
	if (v->type->kind != DUMP_VARIANT || strcmp(v->type->tag, "id") ||
	    v->type->nr_fields != nr)
		goto bad;
	compact = field(v->type, "compact");
	ext = field(v->type, "extended");
	skip = field(v->type, "skip");
	if (nr == 3 && (!skip || skip->type->kind != DUMP_STRUCT ||
			!skip->type->nr_fields ||
			strcmp(skip->type->fields[skip->type->nr_fields - 1].name, "h") ||
			skip->type->fields[skip->type->nr_fields - 1].type->kind != DUMP_STRUCT))
		goto bad;
	if (!compact || !ext || compact->type->kind != DUMP_STRUCT ||
	    ext->type->kind != DUMP_STRUCT || ext->type->nr_fields != 2 ||
	    ext->type->align > 32 || compact->type->align > 32)
		goto bad;
	ext_id = &ext->type->fields[0];
	ext_ts = &ext->type->fields[1];
	if (strcmp(ext_id->name, "id") || strcmp(ext_ts->name, "timestamp") ||
	    !is_uint(p, ext_id->type, 32, false) ||
	    !is_uint(p, ext_ts->type, 64, true))
		goto bad;
	clock = ext_ts->type->clock;
	if (ts) {
		/* compact: the timestamp bits right above the id bits */
		if (s < 1 || s > 31 || !is_uint(p, ts->type, 32 - s, true) ||
		    (ts_first ? align_up(32 - s, id->type->align) != 32 - s :
				align_up(s, ts->type->align) != s) ||
		    compact->type->nr_fields != 0 || ts->type->clock != clock)
			goto bad;
		sc->header = LRB_HEADER_COMPACT;
		sc->tsc_bits = 32 - s;
	} else {
		const struct dump_field *cts = compact->type->fields;

		if (s != 32 || compact->type->nr_fields != 1 ||
		    strcmp(cts->name, "timestamp") ||
		    !is_uint(p, cts->type, 32, true) || cts->type->clock != clock)
			goto bad;
		sc->header = LRB_HEADER_LARGE;
		sc->tsc_bits = 27;	/* not used by the large layout */
	}
	sc->clock = clock;
	return;
bad:
	tsdl_fail(p, line, "the stream's event.header is not one of lrb's record header layouts (compact or large, as lib/metadata.c writes them)");
}

/* Event payload checks: the scope of the fields visible to a sequence. */
struct scope {
	const struct dump_type *st;
	unsigned int cur;	/* the field being checked */
};

static void check_fields(struct tsdl *p, struct tsdl_blocks *b,
			 const struct tsdl_event *e, const struct dump_type *t,
			 struct scope *sc, unsigned int depth,
			 unsigned int nr_scope)
{
	unsigned int i;
	int d;

	if (!b->budget--)
		tsdl_fail(p, e->line, "event payloads too complex for the size of the metadata");
	switch (t->kind) {
	case DUMP_INT:
	case DUMP_ENUM:
	case DUMP_FLOAT:
	case DUMP_STRING:
		return;
	case DUMP_VARIANT:
		tsdl_fail(p, e->line, "event '%.60s': variants are not supported in payloads",
			  e->name);
	case DUMP_STRUCT:
		nr_scope += t->nr_fields;
		if (nr_scope > DUMP_MAX_SCOPE || depth >= DUMP_MAX_DEPTH)
			tsdl_fail(p, e->line, "event '%.60s': payload nested too deeply",
				  e->name);
		sc[depth].st = t;
		for (i = 0; i < t->nr_fields; i++) {
			sc[depth].cur = i;
			check_fields(p, b, e, t->fields[i].type, sc, depth + 1,
				     nr_scope);
		}
		return;
	case DUMP_ARRAY:
		check_fields(p, b, e, t->elem, sc, depth, nr_scope);
		return;
	case DUMP_SEQUENCE:
		for (d = depth - 1; d >= 0; d--) {
			for (i = 0; i < sc[d].cur; i++) {
				if (!b->budget--)
					tsdl_fail(p, e->line, "event payloads too complex for the size of the metadata");
				if (!strcmp(sc[d].st->fields[i].name, t->length_name))
					break;
			}
			if (i < sc[d].cur)
				break;
		}
		if (d < 0 || sc[d].st->fields[i].type->kind != DUMP_INT ||
		    sc[d].st->fields[i].type->sign)
			tsdl_fail(p, e->line, "event '%.60s': sequence length '%.60s' is not an unsigned integer field declared before the sequence",
				  e->name, t->length_name);
		check_fields(p, b, e, t->elem, sc, depth, nr_scope);
		return;
	}
}

static int event_cmp(const void *a, const void *b)
{
	const struct dump_event *x = a, *y = b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void tsdl_build(struct tsdl *p, struct tsdl_blocks *b, struct dump_meta *m)
{
	struct scope scope[DUMP_MAX_DEPTH + 1];
	const struct dump_clock *clock;
	unsigned long i;
	unsigned int k, j;

	if (!b->have_trace || !b->packet_header)
		tsdl_fail(p, p->line, "no trace block with a packet.header: is this an lrb trace's metadata?");
	check_layout(p, b->packet_header, packet_header, 2, 0, b->trace_line,
		     "the trace's packet.header");
	if (!b->nr_streams)
		tsdl_fail(p, p->line, "no stream block");
	for (k = 0; k < b->nr_streams; k++) {
		struct tsdl_stream *s = &b->streams[k];
		struct dump_stream_class *sc = &m->streams[k];

		if (!s->have_id && b->nr_streams > 1)
			tsdl_fail(p, s->line, "a stream without an id among several");
		for (j = 0; j < k; j++)
			if (m->streams[j].id == s->id)
				tsdl_fail(p, s->line, "stream id %llu declared twice",
					  s->id);
		sc->id = s->id;
		sc->big_endian = p->big_endian;
		if (!s->packet_context)
			tsdl_fail(p, s->line, "a stream without packet.context");
		clock = check_layout(p, s->packet_context, packet_context, 8, 64,
				     s->line, "the stream's packet.context");
		check_event_header(p, sc, s->event_header, s->line);
		if (clock != sc->clock)
			tsdl_fail(p, s->line, "the packet and record timestamps of a stream map to different clocks");
		m->nr_streams++;
	}
	m->clock = m->streams[0].clock;
	m->big_endian = p->big_endian;
	m->nr_events = b->nr_events;
	m->events = tsdl_alloc(p, (b->nr_events + 1) * sizeof(*m->events));
	b->budget = 64ULL * p->len + 4000000;
	for (i = 0; i < b->nr_events; i++) {
		const struct tsdl_event *e = &b->events[i];
		struct dump_event *d = &m->events[i];

		if (!e->have_stream && b->nr_streams > 1)
			tsdl_fail(p, e->line, "event '%.60s' has no stream_id and there are several streams",
				  e->name);
		for (k = 0; k < m->nr_streams; k++)
			if (!e->have_stream || m->streams[k].id == e->stream_id)
				break;
		if (k == m->nr_streams)
			tsdl_fail(p, e->line, "event '%.60s': no stream has id %llu",
				  e->name, e->stream_id);
		d->name = e->name;
		d->id = e->id;
		d->stream = &m->streams[k];
		d->fields = e->fields;
		if (e->fields && e->fields->nodes > DUMP_MAX_NODES)
			tsdl_fail(p, e->line, "event '%.60s': more than %d fields",
				  e->name, DUMP_MAX_NODES);
		if (e->fields)
			check_fields(p, b, e, e->fields, scope, 0, 0);
		/* else a CTF reader looks for a record in the last byte's rest */
		if (e->fields && e->fields->fixed && e->fields->bits % 8)
			tsdl_fail(p, e->line, "event '%.60s': a payload of %llu bits, not whole bytes: pad its fields to a multiple of 8 bits",
				  e->name, e->fields->bits);
	}
	qsort(m->events, m->nr_events, sizeof(*m->events), event_cmp);
	for (i = 1; i < m->nr_events; i++)
		if (!event_cmp(&m->events[i - 1], &m->events[i]))
			tsdl_fail(p, p->line, "events '%.60s' and '%.60s' have the same id %u in stream %u",
				  m->events[i - 1].name, m->events[i].name,
				  m->events[i].id, m->events[i].stream->id);
}

