// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-dump's metadata parser: the blocks of a TSDL text (trace, env,
 * clock, stream, event) and the typealiases; tsdl_check.c then turns
 * them into a struct dump_meta.
 */
#include "tsdl.h"

#include <stdlib.h>
#include <string.h>

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
			if (v.kind != TOK_IDENT ||
			    (strcmp(v.text, "le") && strcmp(v.text, "be")))
				tsdl_fail(p, line, "byte_order must be le or be (the writers' CPU's byte order)");
			p->big_endian = !strcmp(v.text, "be");
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
		tsdl_fail(p, b->trace_line, "the trace block needs major = 1, minor = 8 and byte_order (le or be)");
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
	t = tsdl_declarator(p, t);
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
	tsdl_build(p, blocks, meta);
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
