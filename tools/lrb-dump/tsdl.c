// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-dump's metadata parser: the blocks of a TSDL text (trace, env,
 * clock, stream, event) and the typealiases, then the checks that make
 * the result usable by the stream cursor: the packet header and context
 * are exactly struct lrb_packet_header, each stream's event header is one
 * of lrb's two record header layouts (giving the decoder its layout and
 * timestamp bits), and every event's payload is made of types the
 * payload walker knows, with sequence lengths that resolve.
 */
#include "tsdl.h"

#include <stdlib.h>
#include <string.h>

/* A stream or event block as parsed, before the checks. */
struct tsdl_stream {
	bool have_id;
	unsigned long long id;
	const struct dump_type *event_header;
	const struct dump_type *packet_context;
	unsigned int line;
};

struct tsdl_event {
	const char *name;
	bool have_id;
	unsigned long long id;
	bool have_stream;
	unsigned long long stream_id;
	const struct dump_type *fields;
	unsigned int line;
};

struct tsdl_blocks {
	bool have_trace;
	unsigned int trace_line;
	const struct dump_type *packet_header;
	struct tsdl_stream streams[DUMP_MAX_STREAMS];
	unsigned int nr_streams;
	struct tsdl_event *events;
	unsigned long nr_events;
	unsigned long cap_events;
	unsigned long long budget;	/* steps left for the event checks */
};

/* The attribute key at p->cur: "name" or "packet.header". */
static const char *attr_key(struct tsdl *p)
{
	const char *key = tsdl_expect_ident(p, "an attribute name");

	while (tsdl_is_punct(&p->cur, '.')) {
		const char *more;
		size_t a = strlen(key), b;
		char *joined;

		tsdl_next(p);
		more = tsdl_expect_ident(p, "a name after '.'");
		b = strlen(more);
		joined = tsdl_alloc(p, a + b + 2);
		memcpy(joined, key, a);
		joined[a] = '.';
		memcpy(joined + a + 1, more, b + 1);
		key = joined;
	}
	return key;
}

/* A simple value: number (signed if @neg is given), string or identifier. */
struct value {
	enum tok_kind kind;
	bool neg;
	unsigned long long num;
	const char *text;
	unsigned int line;
};

static void parse_value(struct tsdl *p, struct value *v)
{
	char buf[64];

	memset(v, 0, sizeof(*v));
	v->line = p->cur.line;
	if (tsdl_is_punct(&p->cur, '-')) {
		v->neg = true;
		tsdl_next(p);
		if (p->cur.kind != TOK_INT)
			tsdl_fail(p, v->line, "expected a number after '-'");
	}
	v->kind = p->cur.kind;
	if (p->cur.kind == TOK_INT)
		v->num = p->cur.value;
	else if (p->cur.kind == TOK_STRING || p->cur.kind == TOK_IDENT)
		v->text = p->cur.text;
	else
		tsdl_fail(p, v->line, "expected a value, found %s",
			  tsdl_tok_desc(p, buf, sizeof(buf)));
	tsdl_next(p);
}

static unsigned long long value_uint(struct tsdl *p, const struct value *v,
				     const char *key, unsigned long long max)
{
	if (v->kind != TOK_INT || (v->neg && v->num) || v->num > max)
		tsdl_fail(p, v->line, "%s must be a number from 0 to %llu", key,
			  max);
	return v->num;
}

static const char *value_name(struct tsdl *p, const struct value *v,
			      const char *key)
{
	if ((v->kind != TOK_STRING && v->kind != TOK_IDENT) || !v->text[0])
		tsdl_fail(p, v->line, "%s must be a name", key);
	return v->text;
}

/* "= value" or ":= type" after a key, then ';'. Returns the type or NULL. */
static const struct dump_type *attr_rhs(struct tsdl *p, struct value *v)
{
	const struct dump_type *t = NULL;

	if (tsdl_is_punct(&p->cur, TOK_ASSIGN_TYPE)) {
		tsdl_next(p);
		t = tsdl_type_spec(p);
	} else {
		tsdl_expect_punct(p, '=', "'=' or ':=' after an attribute name");
		parse_value(p, v);
	}
	tsdl_expect_punct(p, ';', "';' after an attribute");
	return t;
}

static void need_value(struct tsdl *p, const struct dump_type *t,
		       const char *key, unsigned int line)
{
	if (t)
		tsdl_fail(p, line, "%s takes a value (=), not a type (:=)", key);
}

static const struct dump_type *need_type(struct tsdl *p,
					 const struct dump_type *t,
					 const char *key, unsigned int line)
{
	if (!t)
		tsdl_fail(p, line, "%s takes a type (:=), not a value", key);
	return t;
}

static void fail_unknown(struct tsdl *p, const char *block, const char *key,
			 unsigned int line)
{
	tsdl_fail(p, line, "unknown attribute '%.60s' in the %s block", key,
		  block);
}

static void parse_trace(struct tsdl *p, struct tsdl_blocks *b)
{
	bool major = false, minor = false, order = false;
	unsigned int line = p->cur.line;

	if (b->have_trace)
		tsdl_fail(p, line, "a second trace block");
	b->have_trace = true;
	b->trace_line = line;
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key;
		const struct dump_type *t;
		struct value v;

		line = p->cur.line;
		key = attr_key(p);
		t = attr_rhs(p, &v);
		if (!strcmp(key, "major")) {
			need_value(p, t, key, line);
			if (value_uint(p, &v, key, ~0ULL) != 1)
				tsdl_fail(p, line, "CTF major version %llu: only CTF 1.8 is supported",
					  v.num);
			major = true;
		} else if (!strcmp(key, "minor")) {
			need_value(p, t, key, line);
			if (value_uint(p, &v, key, ~0ULL) != 8)
				tsdl_fail(p, line, "CTF minor version %llu: only CTF 1.8 is supported",
					  v.num);
			minor = true;
		} else if (!strcmp(key, "byte_order")) {
			need_value(p, t, key, line);
			if (v.kind != TOK_IDENT || strcmp(v.text, "le"))
				tsdl_fail(p, line, "byte_order must be le: lrb traces are little-endian");
			order = true;
		} else if (!strcmp(key, "uuid")) {
			need_value(p, t, key, line);
			if (v.kind != TOK_STRING)
				tsdl_fail(p, line, "uuid must be a string");
		} else if (!strcmp(key, "packet.header")) {
			if (b->packet_header)
				tsdl_fail(p, line, "packet.header given twice");
			b->packet_header = need_type(p, t, key, line);
		} else {
			fail_unknown(p, "trace", key, line);
		}
	}
	if (!major || !minor || !order)
		tsdl_fail(p, b->trace_line, "the trace block needs major = 1, minor = 8 and byte_order = le");
}

static void parse_env(struct tsdl *p)
{
	while (!tsdl_is_punct(&p->cur, '}')) {
		unsigned int line = p->cur.line;
		const char *key = attr_key(p);
		struct value v;

		need_value(p, attr_rhs(p, &v), key, line);
	}
}

static void parse_clock(struct tsdl *p)
{
	struct dump_clock c = { .freq = 1000000000 };
	unsigned int line = p->cur.line, start = line, i;

	if (p->nr_clocks == DUMP_MAX_CLOCKS)
		tsdl_fail(p, line, "more than %d clocks", DUMP_MAX_CLOCKS);
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key;
		const struct dump_type *t;
		struct value v;

		line = p->cur.line;
		key = attr_key(p);
		t = attr_rhs(p, &v);
		need_value(p, t, key, line);
		if (!strcmp(key, "name")) {
			c.name = value_name(p, &v, key);
		} else if (!strcmp(key, "freq")) {
			c.freq = value_uint(p, &v, key, ~0ULL);
			if (!c.freq)
				tsdl_fail(p, line, "a clock frequency of 0");
		} else if (!strcmp(key, "offset_s")) {
			if (v.kind != TOK_INT || v.num > (1ULL << 62))
				tsdl_fail(p, line, "offset_s must be a number of seconds");
			c.offset_s = v.neg ? -(long long)v.num : (long long)v.num;
		} else if (!strcmp(key, "offset")) {
			c.offset = value_uint(p, &v, key, ~0ULL);
		} else if (!strcmp(key, "precision")) {
			value_uint(p, &v, key, ~0ULL);
		} else if (!strcmp(key, "absolute")) {
			if (v.kind == TOK_STRING)
				tsdl_fail(p, line, "absolute must be true or false");
		} else if (!strcmp(key, "uuid") || !strcmp(key, "description")) {
			if (v.kind != TOK_STRING)
				tsdl_fail(p, line, "%s must be a string", key);
		} else {
			fail_unknown(p, "clock", key, line);
		}
	}
	if (!c.name)
		tsdl_fail(p, start, "a clock without a name");
	for (i = 0; i < p->nr_clocks; i++)
		if (!strcmp(p->clocks[i]->name, c.name))
			tsdl_fail(p, start, "clock '%.60s' declared twice", c.name);
	p->clocks[p->nr_clocks] = tsdl_alloc(p, sizeof(c));
	*p->clocks[p->nr_clocks++] = c;
}

static void parse_stream(struct tsdl *p, struct tsdl_blocks *b)
{
	struct tsdl_stream *s;
	unsigned int line = p->cur.line;

	if (b->nr_streams == DUMP_MAX_STREAMS)
		tsdl_fail(p, line, "more than %d stream blocks", DUMP_MAX_STREAMS);
	s = &b->streams[b->nr_streams++];
	s->line = line;
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key;
		const struct dump_type *t;
		struct value v;

		line = p->cur.line;
		key = attr_key(p);
		t = attr_rhs(p, &v);
		if (!strcmp(key, "id")) {
			need_value(p, t, key, line);
			if (s->have_id)
				tsdl_fail(p, line, "id given twice");
			s->id = value_uint(p, &v, key, 0xffffffffULL);
			s->have_id = true;
		} else if (!strcmp(key, "event.header")) {
			if (s->event_header)
				tsdl_fail(p, line, "event.header given twice");
			s->event_header = need_type(p, t, key, line);
		} else if (!strcmp(key, "packet.context")) {
			if (s->packet_context)
				tsdl_fail(p, line, "packet.context given twice");
			s->packet_context = need_type(p, t, key, line);
		} else if (!strcmp(key, "event.context")) {
			tsdl_fail(p, line, "event.context is not supported: lrb records have no event context");
		} else {
			fail_unknown(p, "stream", key, line);
		}
	}
}

static void parse_event(struct tsdl *p, struct tsdl_blocks *b)
{
	struct tsdl_event *e;
	unsigned int line = p->cur.line;

	if (b->nr_events == b->cap_events) {
		unsigned long cap = b->cap_events ? 2 * b->cap_events : 64;
		struct tsdl_event *ne = tsdl_alloc(p, cap * sizeof(*ne));

		if (b->nr_events)
			memcpy(ne, b->events, b->nr_events * sizeof(*ne));
		b->events = ne;
		b->cap_events = cap;
	}
	e = &b->events[b->nr_events++];
	e->line = line;
	while (!tsdl_is_punct(&p->cur, '}')) {
		const char *key;
		const struct dump_type *t;
		struct value v;

		line = p->cur.line;
		key = attr_key(p);
		t = attr_rhs(p, &v);
		if (!strcmp(key, "name")) {
			need_value(p, t, key, line);
			if (e->name)
				tsdl_fail(p, line, "name given twice");
			e->name = value_name(p, &v, key);
		} else if (!strcmp(key, "id")) {
			need_value(p, t, key, line);
			if (e->have_id)
				tsdl_fail(p, line, "id given twice");
			e->id = value_uint(p, &v, key, 0xffffffffULL);
			e->have_id = true;
		} else if (!strcmp(key, "stream_id")) {
			need_value(p, t, key, line);
			if (e->have_stream)
				tsdl_fail(p, line, "stream_id given twice");
			e->stream_id = value_uint(p, &v, key, 0xffffffffULL);
			e->have_stream = true;
		} else if (!strcmp(key, "loglevel")) {
			need_value(p, t, key, line);
			if (v.kind != TOK_INT)
				tsdl_fail(p, line, "loglevel must be a number");
		} else if (!strcmp(key, "model.emf.uri")) {
			need_value(p, t, key, line);
			if (v.kind != TOK_STRING)
				tsdl_fail(p, line, "model.emf.uri must be a string");
		} else if (!strcmp(key, "fields")) {
			if (e->fields)
				tsdl_fail(p, line, "fields given twice");
			e->fields = need_type(p, t, key, line);
			if (e->fields->kind != DUMP_STRUCT)
				tsdl_fail(p, line, "fields must be a struct");
		} else if (!strcmp(key, "context")) {
			tsdl_fail(p, line, "event context is not supported: lrb records have no event context");
		} else {
			fail_unknown(p, "event", key, line);
		}
	}
	if (!e->name)
		tsdl_fail(p, e->line, "an event without a name");
	if (!e->have_id)
		tsdl_fail(p, e->line, "event '%.60s' has no id", e->name);
}

static void parse_typealias(struct tsdl *p)
{
	const struct dump_type *t;
	unsigned int line = p->cur.line;

	tsdl_next(p);
	t = tsdl_type_spec(p);
	tsdl_expect_punct(p, TOK_ASSIGN_TYPE, "':=' in a typealias");
	tsdl_alias_add(p, tsdl_alias_words(p, false, NULL), t, line);
	tsdl_expect_punct(p, ';', "';' after a typealias");
}

static void parse_typedef(struct tsdl *p)
{
	const struct dump_type *t;
	unsigned int line = p->cur.line;
	const char *name = NULL;

	tsdl_next(p);
	if (p->cur.kind == TOK_IDENT && !tsdl_is_ident(&p->cur, "integer") &&
	    !tsdl_is_ident(&p->cur, "string") && !tsdl_is_ident(&p->cur, "enum") &&
	    !tsdl_is_ident(&p->cur, "struct") &&
	    !tsdl_is_ident(&p->cur, "variant") &&
	    !tsdl_is_ident(&p->cur, "floating_point")) {
		const char *alias = tsdl_alias_words(p, true, &name);

		t = tsdl_alias_find(p, alias);
		if (!t)
			tsdl_fail(p, line, "unknown type '%.60s'", alias);
	} else {
		t = tsdl_type_spec(p);
		name = tsdl_expect_ident(p, "the name of the typedef");
	}
	t = tsdl_declarator(p, t, &name);
	tsdl_alias_add(p, name, t, line);
	tsdl_expect_punct(p, ';', "';' after a typedef");
}

static void parse_top(struct tsdl *p, struct tsdl_blocks *b)
{
	char buf[64];

	tsdl_next(p);
	while (p->cur.kind != TOK_EOF) {
		const char *kw = p->cur.kind == TOK_IDENT ? p->cur.text : "";

		if (!strcmp(kw, "typealias")) {
			parse_typealias(p);
			continue;
		}
		if (!strcmp(kw, "typedef")) {
			parse_typedef(p);
			continue;
		}
		if (strcmp(kw, "trace") && strcmp(kw, "env") &&
		    strcmp(kw, "clock") && strcmp(kw, "stream") &&
		    strcmp(kw, "event"))
			tsdl_fail(p, p->cur.line, "expected a block (trace, env, clock, stream, event) or a typealias, found %s",
				  tsdl_tok_desc(p, buf, sizeof(buf)));
		tsdl_next(p);
		tsdl_expect_punct(p, '{', "'{' after the block name");
		if (!strcmp(kw, "trace"))
			parse_trace(p, b);
		else if (!strcmp(kw, "env"))
			parse_env(p);
		else if (!strcmp(kw, "clock"))
			parse_clock(p);
		else if (!strcmp(kw, "stream"))
			parse_stream(p, b);
		else
			parse_event(p, b);
		tsdl_next(p);
		tsdl_expect_punct(p, ';', "';' after the block's '}'");
	}
}

/* ------------------------------------------------------------------ */
/* Checks of lrb's layout.                                            */

static unsigned long long align_up(unsigned long long v, unsigned int a)
{
	return (v + a - 1) & ~(unsigned long long)(a - 1);
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

/* An unsigned integer of @size bits, mapped to a clock if @clock. */
static bool is_uint(const struct dump_type *t, unsigned int size, bool clock)
{
	return t->kind == DUMP_INT && !t->sign && t->size == size &&
	       !t->clock == !clock && t->align <= 32;
}

/*
 * The event header must be one of lrb's two layouts (lib/metadata.c):
 * compact: enum id of S bits, timestamp of 32 - S bits, variant v;
 * large: enum id of 32 bits, variant v with the timestamp in "compact".
 * Both extended forms hold a 32-bit id and a 64-bit timestamp.
 */
static void check_event_header(struct tsdl *p, struct dump_stream_class *sc,
			       const struct dump_type *h, unsigned int line)
{
	const struct dump_field *id, *ts, *v, *compact, *ext, *ext_id, *ext_ts;
	const struct dump_clock *clock;
	unsigned long long max;
	unsigned int s, i;

	if (!h || h->kind != DUMP_STRUCT || h->align != 32)
		goto bad;
	id = field(h, "id");
	ts = field(h, "timestamp");
	v = field(h, "v");
	if (!id || !v || h->fields != id || v != &h->fields[h->nr_fields - 1] ||
	    h->nr_fields != (ts ? 3U : 2U) || (ts && ts != &h->fields[1]))
		goto bad;
	s = id->type->size;
	if (id->type->kind != DUMP_ENUM || id->type->sign || s > 32 ||
	    id->type->nr_entries != 2 || id->type->align > 32)
		goto bad;
	max = (1ULL << s) - 1;
	for (i = 0; i < 2; i++) {
		const struct dump_enum_entry *e = &id->type->entries[i];
		bool is_ext = !strcmp(e->label, "extended");

		if (!is_ext && strcmp(e->label, "compact"))
			goto bad;
		if (is_ext ? (e->lo != (long long)max || e->hi != (long long)max) :
			     (e->lo != 0 || e->hi != (long long)max - 1))
			goto bad;
	}
	if (!strcmp(id->type->entries[0].label, id->type->entries[1].label))
		goto bad;
	if (v->type->kind != DUMP_VARIANT || strcmp(v->type->tag, "id") ||
	    v->type->nr_fields != 2)
		goto bad;
	compact = field(v->type, "compact");
	ext = field(v->type, "extended");
	if (!compact || !ext || compact->type->kind != DUMP_STRUCT ||
	    ext->type->kind != DUMP_STRUCT || ext->type->nr_fields != 2 ||
	    ext->type->align > 32 || compact->type->align > 32)
		goto bad;
	ext_id = &ext->type->fields[0];
	ext_ts = &ext->type->fields[1];
	if (strcmp(ext_id->name, "id") || strcmp(ext_ts->name, "timestamp") ||
	    !is_uint(ext_id->type, 32, false) || !is_uint(ext_ts->type, 64, true))
		goto bad;
	clock = ext_ts->type->clock;
	if (ts) {
		/* compact: the timestamp bits right above the id bits */
		if (s < 1 || s > 31 || !is_uint(ts->type, 32 - s, true) ||
		    align_up(s, ts->type->align) != s ||
		    compact->type->nr_fields != 0 || ts->type->clock != clock)
			goto bad;
		sc->header = LRB_HEADER_COMPACT;
		sc->tsc_bits = 32 - s;
	} else {
		const struct dump_field *cts = compact->type->fields;

		if (s != 32 || compact->type->nr_fields != 1 ||
		    strcmp(cts->name, "timestamp") ||
		    !is_uint(cts->type, 32, true) || cts->type->clock != clock)
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

static void build(struct tsdl *p, struct tsdl_blocks *b, struct dump_meta *m)
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

struct dump_meta *dump_meta_parse(const char *text, size_t len, char *err,
				  size_t errlen)
{
	static const char packetized[4] = { 0x57, 0x1d, 0xd1, 0x75 };
	struct tsdl_blocks *blocks;
	struct dump_meta *meta;
	struct tsdl *p;

	if (len >= 4 && !memcmp(text, packetized, 4)) {
		snprintf(err, errlen, "packetized (binary) metadata is not supported: give the plain text TSDL");
		return NULL;
	}
	if (len > DUMP_META_MAX_BYTES) {
		snprintf(err, errlen, "metadata of %zu bytes: more than the %lu supported",
			 len, DUMP_META_MAX_BYTES);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	blocks = calloc(1, sizeof(*blocks));
	if (!p || !blocks) {
		free(p);
		free(blocks);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->text = text;
	p->len = len;
	p->line = 1;
	p->err = err;
	p->errlen = errlen;
	if (setjmp(p->fail)) {
		tsdl_arena_free(p->arena);
		free(p);
		free(blocks);
		return NULL;
	}
	meta = tsdl_alloc(p, sizeof(*meta));
	parse_top(p, blocks);
	build(p, blocks, meta);
	meta->arena = p->arena;
	free(p);
	free(blocks);
	return meta;
}

void dump_meta_free(struct dump_meta *meta)
{
	if (meta)
		tsdl_arena_free(meta->arena);
}

const struct dump_stream_class *dump_meta_stream(const struct dump_meta *meta,
						 unsigned int id)
{
	unsigned int i;

	for (i = 0; i < meta->nr_streams; i++)
		if (meta->streams[i].id == id)
			return &meta->streams[i];
	return NULL;
}

const struct dump_event *dump_meta_event(const struct dump_meta *meta,
					 const struct dump_stream_class *sc,
					 unsigned int id)
{
	unsigned long lo = 0, hi = meta->nr_events;

	while (lo < hi) {
		unsigned long mid = lo + (hi - lo) / 2;
		const struct dump_event *e = &meta->events[mid];

		if (e->stream == sc && e->id == id)
			return e;
		if (e->stream < sc || (e->stream == sc && e->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
